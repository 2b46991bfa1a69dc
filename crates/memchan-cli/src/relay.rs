//! `memchan relay`: a fault-injecting TCP relay for testing memchan links.
//!
//! It sits between a node and the hub, splits each direction's byte stream into link
//! frames (`memchan_net::wire`) and, per frame and independently per direction, drops,
//! corrupts, duplicates, reorders or delays it. The handshake frames (Hello, Join,
//! Refuse, Welcome) always pass unchanged, so a link can always be set up and the
//! faults hit only what the link protocol is meant to recover from. A stream that stops
//! parsing as frames is passed through raw from then on.
//!
//! Threads: the main thread accepts (non-blocking, polled, so a SIGTERM/SIGINT flag is
//! seen) and writes the stats file every 200 ms; every connection gets two forwarding
//! threads with blocking IO. When either side closes or fails, both sockets are shut
//! down, so the relay never keeps a half-dead connection.

use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Args;
use memchan_net::wire::{self, Kind};

/// How long a reordered frame waits for a next frame before it is sent anyway.
const REORDER_WAIT: Duration = Duration::from_millis(20);
/// Stats-file period.
const STATS_PERIOD: Duration = Duration::from_millis(200);
/// Accept-poll period (how quickly a signal is noticed).
const POLL: Duration = Duration::from_millis(5);
/// First byte index a corruption may touch: magic, version, kind, flags and length
/// (bytes 0..12) are left alone so the framing survives.
const CORRUPT_FROM: usize = 12;

/// Options of `memchan relay`.
#[derive(Debug, Clone, Args)]
pub struct RelayArgs {
    /// Address to accept connections on (e.g. 127.0.0.1:7100; port 0 picks one).
    /// The bound address is printed on stdout as `listening ADDR`.
    #[arg(long, value_name = "ADDR")]
    pub listen: String,

    /// Address to forward each accepted connection to (the hub).
    #[arg(long, value_name = "ADDR")]
    pub to: String,

    /// Probability (0..1) that a frame is dropped (not forwarded).
    #[arg(long, value_name = "P", default_value_t = 0.0, value_parser = probability)]
    pub drop: f64,

    /// Probability (0..1) that one random bit of a frame is flipped, at a byte index in
    /// [12, frame length): the header's magic, version, kind, flags and length are
    /// never touched, so the framing survives and the receiver sees a CRC failure.
    #[arg(long, value_name = "P", default_value_t = 0.0, value_parser = probability)]
    pub corrupt: f64,

    /// Probability (0..1) that a frame is forwarded twice.
    #[arg(long, value_name = "P", default_value_t = 0.0, value_parser = probability)]
    pub dup: f64,

    /// Probability (0..1) that a frame is held back and sent right after the next
    /// frame of its direction (or after 20 ms if none comes).
    #[arg(long, value_name = "P", default_value_t = 0.0, value_parser = probability)]
    pub reorder: f64,

    /// Delay every faultable frame by this many microseconds ± 50% jitter (the
    /// direction's later frames wait behind it, so order is kept).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub delay_us: u64,

    /// Seed of the fault generator (each connection and direction derives its own).
    #[arg(long, value_name = "S", default_value_t = 1)]
    pub seed: u64,

    /// Write the counters as one JSON object to PATH every 200 ms and at exit
    /// (written to a temporary file and renamed, so readers never see half of it).
    #[arg(long, value_name = "PATH")]
    pub stats_file: Option<PathBuf>,
}

fn probability(s: &str) -> std::result::Result<f64, String> {
    let p: f64 = s.parse().map_err(|e| format!("{e}"))?;
    if (0.0..=1.0).contains(&p) {
        Ok(p)
    } else {
        Err(format!("{p} is not a probability in 0..1"))
    }
}

/// The relay's counters, shared by every connection.
#[derive(Default)]
struct Stats {
    /// Accepted connections.
    connections: AtomicU64,
    /// Accepted connections whose connection to `--to` failed.
    connect_failed: AtomicU64,
    /// Frames parsed, both directions, handshake frames included.
    frames: AtomicU64,
    dropped: AtomicU64,
    corrupted: AtomicU64,
    duplicated: AtomicU64,
    reordered: AtomicU64,
    delayed: AtomicU64,
    /// Directions that stopped parsing as frames and were passed through raw.
    passthrough: AtomicU64,
}

impl Stats {
    fn json(&self) -> serde_json::Value {
        let g = |a: &AtomicU64| a.load(Ordering::Relaxed);
        serde_json::json!({
            "connections": g(&self.connections),
            "connect_failed": g(&self.connect_failed),
            "frames": g(&self.frames),
            "dropped": g(&self.dropped),
            "corrupted": g(&self.corrupted),
            "duplicated": g(&self.duplicated),
            "reordered": g(&self.reordered),
            "delayed": g(&self.delayed),
            "passthrough": g(&self.passthrough),
        })
    }

    fn summary(&self) -> String {
        let g = |a: &AtomicU64| a.load(Ordering::Relaxed);
        format!(
            "relay: {} connections ({} connect failures), {} frames: {} dropped, {} corrupted, \
             {} duplicated, {} reordered, {} delayed; {} directions passed through raw",
            g(&self.connections),
            g(&self.connect_failed),
            g(&self.frames),
            g(&self.dropped),
            g(&self.corrupted),
            g(&self.duplicated),
            g(&self.reordered),
            g(&self.delayed),
            g(&self.passthrough),
        )
    }
}

fn write_stats(path: &Path, stats: &Stats) -> Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let mut body = serde_json::to_vec(&stats.json()).expect("json");
    body.push(b'\n');
    std::fs::write(&tmp, body).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path)
        .with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))
}

/// Set by SIGTERM/SIGINT.
static STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    // An atomic store is async-signal-safe; nothing else happens here.
    STOP.store(true, Ordering::SeqCst);
}

/// xorshift64* seeded through splitmix64 (never zero).
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        let mut z = seed.wrapping_add(0x9e37_79b9_7f4a_7c15);
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        Rng(if z == 0 { 0x2545_f491_4f6c_dd1d } else { z })
    }
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    /// Uniform in [0, 1).
    fn unit(&mut self) -> f64 {
        (self.next() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// True with probability `p`.
    fn chance(&mut self, p: f64) -> bool {
        p > 0.0 && self.unit() < p
    }
    /// Uniform in [lo, hi).
    fn below(&mut self, lo: usize, hi: usize) -> usize {
        lo + (self.next() % (hi - lo) as u64) as usize
    }
}

/// The fault settings shared by every direction.
#[derive(Debug, Clone, Copy)]
struct Faults {
    drop: f64,
    corrupt: f64,
    dup: f64,
    reorder: f64,
    delay_us: u64,
}

/// Runs `memchan relay` until SIGTERM or SIGINT.
pub fn run(args: RelayArgs) -> Result<()> {
    let handler: extern "C" fn(libc::c_int) = on_signal;
    // SAFETY: `on_signal` only stores to an atomic, which is async-signal-safe.
    unsafe {
        libc::signal(libc::SIGTERM, handler as libc::sighandler_t);
        libc::signal(libc::SIGINT, handler as libc::sighandler_t);
    }
    let listener =
        TcpListener::bind(&args.listen).with_context(|| format!("binding {}", args.listen))?;
    listener
        .set_nonblocking(true)
        .context("non-blocking listener")?;
    let local = listener.local_addr().context("local address")?;
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "listening {local}")?;
        out.flush()?;
    }
    let faults = Faults {
        drop: args.drop,
        corrupt: args.corrupt,
        dup: args.dup,
        reorder: args.reorder,
        delay_us: args.delay_us,
    };
    let stats = Arc::new(Stats::default());
    let mut next_stats = Instant::now();
    let mut conn_no: u64 = 0;
    while !STOP.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((client, _)) => {
                conn_no += 1;
                stats.connections.fetch_add(1, Ordering::Relaxed);
                let to = args.to.clone();
                let stats = stats.clone();
                let seed = args.seed ^ conn_no.wrapping_mul(0x9e37_79b9_7f4a_7c15);
                std::thread::spawn(move || connection(client, &to, faults, seed, stats));
            }
            Err(e) if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted => {
                std::thread::sleep(POLL)
            }
            Err(e) => {
                eprintln!("relay: accept: {e}");
                std::thread::sleep(POLL)
            }
        }
        if let Some(path) = &args.stats_file {
            if Instant::now() >= next_stats {
                if let Err(e) = write_stats(path, &stats) {
                    eprintln!("relay: {e:#}");
                }
                next_stats = Instant::now() + STATS_PERIOD;
            }
        }
    }
    if let Some(path) = &args.stats_file {
        write_stats(path, &stats)?;
    }
    eprintln!("{}", stats.summary());
    // The forwarding threads die with the process, which closes every socket.
    Ok(())
}

/// One accepted connection: connect to `to`, then forward both ways.
fn connection(client: TcpStream, to: &str, faults: Faults, seed: u64, stats: Arc<Stats>) {
    let server = match TcpStream::connect(to) {
        Ok(s) => s,
        Err(e) => {
            stats.connect_failed.fetch_add(1, Ordering::Relaxed);
            eprintln!("relay: connecting to {to}: {e}");
            let _ = client.shutdown(Shutdown::Both);
            return;
        }
    };
    let setup = || -> std::io::Result<[TcpStream; 4]> {
        client.set_nonblocking(false)?;
        client.set_nodelay(true)?;
        server.set_nodelay(true)?;
        Ok([
            client.try_clone()?,
            server.try_clone()?,
            server.try_clone()?,
            client.try_clone()?,
        ])
    };
    let [c_read, s_write, s_read, c_write] = match setup() {
        Ok(s) => s,
        Err(e) => {
            eprintln!("relay: setting up a connection: {e}");
            let _ = client.shutdown(Shutdown::Both);
            let _ = server.shutdown(Shutdown::Both);
            return;
        }
    };
    let up = {
        let stats = stats.clone();
        std::thread::spawn(move || {
            Direction::new(faults, seed ^ 1, stats).run(c_read, s_write);
        })
    };
    Direction::new(faults, seed ^ 2, stats).run(s_read, c_write);
    let _ = up.join();
}

/// A frame held back by a reorder, with the copies to send and when to give up waiting.
struct Held {
    bytes: Vec<u8>,
    copies: usize,
    until: Instant,
}

/// One direction of one connection.
struct Direction {
    faults: Faults,
    rng: Rng,
    stats: Arc<Stats>,
    held: Option<Held>,
    /// Bytes to write, flushed after each read and before a delay.
    out: Vec<u8>,
}

impl Direction {
    fn new(faults: Faults, seed: u64, stats: Arc<Stats>) -> Direction {
        Direction {
            faults,
            rng: Rng::new(seed),
            stats,
            held: None,
            out: Vec::with_capacity(64 * 1024),
        }
    }

    /// Forwards `src` to `dst` until either fails or closes, then shuts both down.
    fn run(mut self, mut src: TcpStream, mut dst: TcpStream) {
        if let Err(e) = self.forward(&mut src, &mut dst) {
            if !matches!(
                e.kind(),
                ErrorKind::BrokenPipe | ErrorKind::ConnectionReset | ErrorKind::NotConnected
            ) {
                eprintln!("relay: {e}");
            }
        }
        // Closes the whole connection: the other direction's blocking read returns 0
        // and its writes fail, so it ends too.
        let _ = src.shutdown(Shutdown::Both);
        let _ = dst.shutdown(Shutdown::Both);
    }

    fn forward(&mut self, src: &mut TcpStream, dst: &mut TcpStream) -> std::io::Result<()> {
        let mut buf: Vec<u8> = Vec::with_capacity(256 * 1024);
        let mut chunk = vec![0u8; 64 * 1024];
        let mut timeout: Option<Duration> = None;
        loop {
            // A held frame bounds how long we read: after REORDER_WAIT it goes anyway.
            let want = match &self.held {
                None => None,
                Some(h) => {
                    let left = h.until.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        self.release_held();
                        self.flush(dst)?;
                        None
                    } else {
                        Some(left)
                    }
                }
            };
            if want != timeout {
                src.set_read_timeout(want)?;
                timeout = want;
            }
            let n = match src.read(&mut chunk) {
                Ok(0) => {
                    // Orderly close: what was held still goes out before we shut down.
                    self.release_held();
                    return self.flush(dst);
                }
                Ok(n) => n,
                Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::TimedOut) => {
                    continue;
                }
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => return Err(e),
            };
            buf.extend_from_slice(&chunk[..n]);
            let mut pos = 0;
            let mut raw = false;
            loop {
                match wire::parse_header(&buf[pos..]) {
                    Ok(None) => break,
                    Ok(Some(h)) => {
                        let total = wire::HEADER + h.len + wire::MAC;
                        if buf.len() - pos < total {
                            break;
                        }
                        self.frame(&buf[pos..pos + total], dst)?;
                        pos += total;
                    }
                    Err(_) => {
                        raw = true;
                        break;
                    }
                }
            }
            if raw {
                self.stats.passthrough.fetch_add(1, Ordering::Relaxed);
                self.release_held();
                self.out.extend_from_slice(&buf[pos..]);
                self.flush(dst)?;
                if timeout.is_some() {
                    src.set_read_timeout(None)?;
                }
                return passthrough(src, dst);
            }
            buf.drain(..pos);
            self.flush(dst)?;
        }
    }

    /// Applies the faults to one complete frame, queueing what is to be sent.
    fn frame(&mut self, frame: &[u8], dst: &mut TcpStream) -> std::io::Result<()> {
        self.stats.frames.fetch_add(1, Ordering::Relaxed);
        let kind = frame[6];
        let handshake = [Kind::Hello, Kind::Join, Kind::Refuse, Kind::Welcome]
            .iter()
            .any(|k| *k as u8 == kind);
        if handshake {
            self.out.extend_from_slice(frame);
            self.release_held();
            return Ok(());
        }
        let f = self.faults;
        // Every roll is drawn for every frame, so one fault's setting does not shift
        // the others' sequence.
        let drop = self.rng.chance(f.drop);
        let corrupt = self.rng.chance(f.corrupt);
        let dup = self.rng.chance(f.dup);
        let reorder = self.rng.chance(f.reorder);
        let at = self.rng.below(CORRUPT_FROM, frame.len());
        let bit = self.rng.next() % 8;
        let jitter = self.rng.unit();
        if drop {
            self.stats.dropped.fetch_add(1, Ordering::Relaxed);
            return Ok(());
        }
        if f.delay_us > 0 {
            self.stats.delayed.fetch_add(1, Ordering::Relaxed);
            // delay ± 50%: uniform in [0.5, 1.5) × delay.
            let us = (f.delay_us as f64 * (0.5 + jitter)) as u64;
            self.flush(dst)?;
            std::thread::sleep(Duration::from_micros(us));
        }
        let mut bytes = frame.to_vec();
        if corrupt {
            self.stats.corrupted.fetch_add(1, Ordering::Relaxed);
            bytes[at] ^= 1 << bit;
        }
        let copies = if dup {
            self.stats.duplicated.fetch_add(1, Ordering::Relaxed);
            2
        } else {
            1
        };
        if reorder && self.held.is_none() {
            self.stats.reordered.fetch_add(1, Ordering::Relaxed);
            self.held = Some(Held {
                bytes,
                copies,
                until: Instant::now() + REORDER_WAIT,
            });
            return Ok(());
        }
        for _ in 0..copies {
            self.out.extend_from_slice(&bytes);
        }
        self.release_held();
        Ok(())
    }

    /// Queues the held frame (if any) after whatever is queued.
    fn release_held(&mut self) {
        if let Some(h) = self.held.take() {
            for _ in 0..h.copies {
                self.out.extend_from_slice(&h.bytes);
            }
        }
    }

    fn flush(&mut self, dst: &mut TcpStream) -> std::io::Result<()> {
        if !self.out.is_empty() {
            dst.write_all(&self.out)?;
            self.out.clear();
        }
        Ok(())
    }
}

/// Copies raw bytes until either side closes.
fn passthrough(src: &mut TcpStream, dst: &mut TcpStream) -> std::io::Result<()> {
    let mut chunk = vec![0u8; 64 * 1024];
    loop {
        match src.read(&mut chunk) {
            Ok(0) => return Ok(()),
            Ok(n) => dst.write_all(&chunk[..n])?,
            Err(e) if e.kind() == ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rng_is_deterministic_and_bounded() {
        let mut a = Rng::new(0);
        let mut b = Rng::new(0);
        for _ in 0..1000 {
            let x = a.unit();
            assert_eq!(x, b.unit());
            assert!((0.0..1.0).contains(&x));
            let i = a.below(12, 50);
            assert_eq!(i, b.below(12, 50));
            assert!((12..50).contains(&i));
        }
        assert!(!Rng::new(5).chance(0.0));
        assert!(Rng::new(5).chance(1.0));
    }

    #[test]
    fn probabilities_are_checked() {
        assert_eq!(probability("0.25"), Ok(0.25));
        assert!(probability("1.5").is_err());
        assert!(probability("-0.1").is_err());
        assert!(probability("x").is_err());
    }
}
