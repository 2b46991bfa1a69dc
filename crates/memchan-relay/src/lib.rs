//! A fault-injecting TCP relay for testing memchan links (`memchan relay`, and test
//! workers that need one inside a network namespace).
//!
//! It sits between a node and the hub, splits each direction's byte stream into link
//! frames ([`wire`]) and, per frame and independently per direction, drops, corrupts,
//! duplicates, reorders or delays it. The handshake frames (Hello, Join, Refuse,
//! Welcome) always pass unchanged, so a link can always be set up and the faults hit
//! only what the link protocol is meant to recover from. A stream that stops parsing as
//! frames is passed through raw from then on.
//!
//! Threads: the thread calling [`Relay::run`] accepts (non-blocking, polled, so the
//! stop flag is seen within a few ms); every connection gets two forwarding threads
//! with blocking IO. When either side closes or fails, both sockets are shut down, so
//! the relay never keeps a half-dead connection.
//!
//! A crate of its own, apart from the test kit, so that the shipped `memchan` binary
//! (`memchan relay`) carries the relay and no test tooling. Only `std`, memchan-net's
//! frame parser and serde (for the counters): the relay must be runnable from any
//! process, a test worker included (the test kit re-exports it as
//! `memchan_testkit::relay`).
//!
//! ```no_run
//! use memchan_relay::{Relay, RelayConfig};
//! use std::sync::atomic::AtomicBool;
//! let relay = Relay::bind(RelayConfig {
//!     corrupt: 0.01,
//!     ..RelayConfig::new("127.0.0.1:0", "127.0.0.1:7100")
//! })?;
//! println!("listening {}", relay.local_addr());
//! let stop = AtomicBool::new(false);
//! relay.run(&stop); // until `stop` is set
//! eprintln!("{}", relay.stats().snapshot().summary());
//! # Ok::<(), std::io::Error>(())
//! ```

use memchan_link::wire::{self, Kind};
use serde::{Deserialize, Serialize};
use std::io::{ErrorKind, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// How long a reordered frame waits for a next frame before it is sent anyway.
pub const REORDER_WAIT: Duration = Duration::from_millis(20);
/// Accept-poll period (how quickly the stop flag is noticed).
const POLL: Duration = Duration::from_millis(5);
/// First byte index a corruption may touch: magic, version, kind, flags and length
/// (bytes 0..12) are left alone so the framing survives.
pub const CORRUPT_FROM: usize = 12;

/// What a relay does: where it listens, where it forwards, and the faults it injects.
#[derive(Debug, Clone, PartialEq)]
pub struct RelayConfig {
    /// Address to accept connections on (port 0 picks one).
    pub listen: String,
    /// Address to forward each accepted connection to (the hub).
    pub to: String,
    /// Probability (0..1) that a frame is dropped (not forwarded).
    pub drop: f64,
    /// Probability (0..1) that one random bit of a frame is flipped, at a byte index in
    /// [12, frame length): the framing survives and the receiver sees a CRC failure.
    pub corrupt: f64,
    /// Probability (0..1) that a frame is forwarded twice.
    pub dup: f64,
    /// Probability (0..1) that a frame is held back and sent right after the next frame
    /// of its direction (or after [`REORDER_WAIT`] if none comes).
    pub reorder: f64,
    /// Delay every faultable frame by this many microseconds ± 50% jitter after it
    /// arrived, like a long wire: frames in flight overlap, and order is kept.
    pub delay_us: u64,
    /// Seed of the fault generator (each connection and direction derives its own).
    pub seed: u64,
}

impl RelayConfig {
    /// A relay from `listen` to `to` that injects no faults (seed 1).
    pub fn new(listen: &str, to: &str) -> RelayConfig {
        RelayConfig {
            listen: listen.to_string(),
            to: to.to_string(),
            drop: 0.0,
            corrupt: 0.0,
            dup: 0.0,
            reorder: 0.0,
            delay_us: 0,
            seed: 1,
        }
    }

    /// `Err` naming the first probability outside 0..1.
    ///
    /// # Errors
    /// The first fault whose probability is not in 0..=1.
    pub fn validate(&self) -> Result<(), BadFault> {
        for (fault, p) in [
            ("drop", self.drop),
            ("corrupt", self.corrupt),
            ("dup", self.dup),
            ("reorder", self.reorder),
        ] {
            check_probability(p).map_err(|NotAProbability(p)| BadFault { fault, p })?;
        }
        Ok(())
    }

    fn faults(&self) -> Faults {
        Faults {
            drop: self.drop,
            corrupt: self.corrupt,
            dup: self.dup,
            reorder: self.reorder,
            delay_us: self.delay_us,
        }
    }
}

/// A value given as a probability that is not one (outside 0..=1, or NaN).
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[error("{0} is not a probability in 0..1")]
pub struct NotAProbability(pub f64);

/// A [`RelayConfig`] fault whose probability is not one.
#[derive(Debug, Clone, Copy, PartialEq, thiserror::Error)]
#[error("{fault}: {p} is not a probability in 0..1")]
pub struct BadFault {
    /// The fault's name (`drop`, `corrupt`, `dup`, `reorder`).
    pub fault: &'static str,
    pub p: f64,
}

/// `Ok(p)` if `p` is a probability (0..=1).
///
/// # Errors
/// [`NotAProbability`] otherwise.
pub fn check_probability(p: f64) -> Result<f64, NotAProbability> {
    if (0.0..=1.0).contains(&p) {
        Ok(p)
    } else {
        Err(NotAProbability(p))
    }
}

/// The relay's live counters, shared by every connection. Every field only grows.
#[derive(Debug, Default)]
pub struct RelayStats {
    connections: AtomicU64,
    connect_failed: AtomicU64,
    frames: AtomicU64,
    dropped: AtomicU64,
    corrupted: AtomicU64,
    duplicated: AtomicU64,
    reordered: AtomicU64,
    delayed: AtomicU64,
    passthrough: AtomicU64,
}

/// A copy of [`RelayStats`] at one moment. Its JSON form (serde, the field names as
/// keys, in declaration order) is what `memchan relay --stats-file` writes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct RelayCounters {
    /// Accepted connections.
    pub connections: u64,
    /// Accepted connections whose connection to the target failed.
    pub connect_failed: u64,
    /// Frames parsed, both directions, handshake frames included.
    pub frames: u64,
    /// Frames dropped.
    pub dropped: u64,
    /// Frames with one bit flipped.
    pub corrupted: u64,
    /// Frames sent twice.
    pub duplicated: u64,
    /// Frames held back behind the next one.
    pub reordered: u64,
    /// Frames delayed.
    pub delayed: u64,
    /// Directions that stopped parsing as frames and were passed through raw.
    pub passthrough: u64,
}

impl RelayStats {
    /// The counters now.
    pub fn snapshot(&self) -> RelayCounters {
        let g = |a: &AtomicU64| a.load(Ordering::Relaxed);
        RelayCounters {
            connections: g(&self.connections),
            connect_failed: g(&self.connect_failed),
            frames: g(&self.frames),
            dropped: g(&self.dropped),
            corrupted: g(&self.corrupted),
            duplicated: g(&self.duplicated),
            reordered: g(&self.reordered),
            delayed: g(&self.delayed),
            passthrough: g(&self.passthrough),
        }
    }
}

fn bump(a: &AtomicU64) {
    a.fetch_add(1, Ordering::Relaxed);
}

impl RelayCounters {
    /// One JSON object, `{"connections":1,"connect_failed":0,…}`, on one line.
    pub fn json(&self) -> String {
        serde_json::to_string(self).expect("a struct of integers always serialises")
    }

    /// Parses what [`json`](Self::json) writes (unknown keys are ignored, missing ones
    /// are 0); `None` if it is not such an object.
    pub fn from_json(s: &str) -> Option<RelayCounters> {
        serde_json::from_str(s).ok()
    }

    /// The one-line summary `memchan relay` prints at exit.
    pub fn summary(&self) -> String {
        format!(
            "relay: {} connections ({} connect failures), {} frames: {} dropped, {} corrupted, \
             {} duplicated, {} reordered, {} delayed; {} directions passed through raw",
            self.connections,
            self.connect_failed,
            self.frames,
            self.dropped,
            self.corrupted,
            self.duplicated,
            self.reordered,
            self.delayed,
            self.passthrough,
        )
    }
}

/// Writes `c` as JSON (plus a newline) to `path` through a temporary file and a
/// rename, so readers never see half of it.
pub fn write_stats_file(path: &Path, c: &RelayCounters) -> std::io::Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(format!(".tmp{}", std::process::id()));
    let tmp = PathBuf::from(tmp);
    let mut body = c.json();
    body.push('\n');
    std::fs::write(&tmp, body).map_err(|e| annotate(e, &format!("writing {}", tmp.display())))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        annotate(
            e,
            &format!("renaming {} to {}", tmp.display(), path.display()),
        )
    })
}

fn annotate(e: std::io::Error, what: &str) -> std::io::Error {
    std::io::Error::new(e.kind(), format!("{what}: {e}"))
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

/// A bound relay: [`run`](Relay::run) serves it.
pub struct Relay {
    listener: TcpListener,
    cfg: RelayConfig,
    local: SocketAddr,
    stats: Arc<RelayStats>,
}

impl Relay {
    /// Checks `cfg` and binds `cfg.listen`.
    pub fn bind(cfg: RelayConfig) -> std::io::Result<Relay> {
        cfg.validate()
            .map_err(|e| std::io::Error::new(ErrorKind::InvalidInput, e))?;
        let listener = TcpListener::bind(&cfg.listen)
            .map_err(|e| annotate(e, &format!("binding {}", cfg.listen)))?;
        listener.set_nonblocking(true)?;
        let local = listener.local_addr()?;
        Ok(Relay {
            listener,
            cfg,
            local,
            stats: Arc::new(RelayStats::default()),
        })
    }

    /// The address it accepts on.
    pub fn local_addr(&self) -> SocketAddr {
        self.local
    }

    /// Its counters (live: they keep growing while connections forward).
    pub fn stats(&self) -> Arc<RelayStats> {
        self.stats.clone()
    }

    /// Accepts and forwards until `stop` is set. Connections already accepted keep
    /// forwarding on their own threads (they end with their sockets, or the process).
    pub fn run(&self, stop: &AtomicBool) {
        let faults = self.cfg.faults();
        let mut conn_no: u64 = 0;
        while !stop.load(Ordering::SeqCst) {
            match self.listener.accept() {
                Ok((client, _)) => {
                    conn_no += 1;
                    bump(&self.stats.connections);
                    let to = self.cfg.to.clone();
                    let stats = self.stats.clone();
                    let seed = self.cfg.seed ^ conn_no.wrapping_mul(0x9e37_79b9_7f4a_7c15);
                    let spawned = std::thread::Builder::new()
                        .name("memchan-relay-conn".into())
                        .spawn(move || connection(client, &to, faults, seed, stats));
                    if let Err(e) = spawned {
                        tracing::error!(error = %e, "cannot start a connection thread");
                    }
                }
                Err(e)
                    if e.kind() == ErrorKind::WouldBlock || e.kind() == ErrorKind::Interrupted =>
                {
                    std::thread::sleep(POLL)
                }
                Err(e) => {
                    tracing::warn!(error = %e, "accept failed");
                    std::thread::sleep(POLL)
                }
            }
        }
    }
}

/// Binds `cfg.listen` and relays until `stop` is set, counting into `stats`.
pub fn run_relay(
    cfg: RelayConfig,
    stop: &AtomicBool,
    stats: Arc<RelayStats>,
) -> std::io::Result<()> {
    let mut relay = Relay::bind(cfg)?;
    relay.stats = stats;
    relay.run(stop);
    Ok(())
}

/// One accepted connection: connect to `to`, then forward both ways.
fn connection(client: TcpStream, to: &str, faults: Faults, seed: u64, stats: Arc<RelayStats>) {
    let server = match TcpStream::connect(to) {
        Ok(s) => s,
        Err(e) => {
            bump(&stats.connect_failed);
            tracing::warn!(%to, error = %e, "cannot connect");
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
            tracing::warn!(error = %e, "cannot set up a connection");
            let _ = client.shutdown(Shutdown::Both);
            let _ = server.shutdown(Shutdown::Both);
            return;
        }
    };
    let up = {
        let stats = stats.clone();
        std::thread::Builder::new()
            .name("memchan-relay-up".into())
            .spawn(move || Direction::new(faults, seed ^ 1, stats).run(c_read, s_write))
    };
    let up = match up {
        Ok(t) => t,
        Err(e) => {
            tracing::error!(error = %e, "cannot start a forwarding thread");
            let _ = client.shutdown(Shutdown::Both);
            let _ = server.shutdown(Shutdown::Both);
            return;
        }
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
    stats: Arc<RelayStats>,
    held: Option<Held>,
    /// Bytes to write, flushed after each read and before a delay.
    out: Vec<u8>,
    /// When the last read returned (the arrival time of the frames it completed).
    read_at: Instant,
    /// When the previous delayed frame was due (frames keep their order).
    last_due: Instant,
}

impl Direction {
    fn new(faults: Faults, seed: u64, stats: Arc<RelayStats>) -> Direction {
        Direction {
            faults,
            rng: Rng::new(seed),
            stats,
            held: None,
            out: Vec::with_capacity(64 * 1024),
            read_at: Instant::now(),
            last_due: Instant::now(),
        }
    }

    /// Forwards `src` to `dst` until either fails or closes, then shuts both down.
    fn run(mut self, mut src: TcpStream, mut dst: TcpStream) {
        if let Err(e) = self.forward(&mut src, &mut dst) {
            if !matches!(
                e.kind(),
                ErrorKind::BrokenPipe | ErrorKind::ConnectionReset | ErrorKind::NotConnected
            ) {
                tracing::warn!(error = %e, "forwarding failed");
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
            self.read_at = Instant::now();
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
                bump(&self.stats.passthrough);
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
        bump(&self.stats.frames);
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
            bump(&self.stats.dropped);
            return Ok(());
        }
        if f.delay_us > 0 {
            bump(&self.stats.delayed);
            // A slow wire, not a slow relay: each frame leaves delay ± 50% (uniform in
            // [0.5, 1.5) × delay) after it arrived, and never before the one ahead of it.
            let us = (f.delay_us as f64 * (0.5 + jitter)) as u64;
            let due = (self.read_at + Duration::from_micros(us)).max(self.last_due);
            self.last_due = due;
            let now = Instant::now();
            if due > now {
                self.flush(dst)?;
                std::thread::sleep(due - now);
            }
        }
        let mut bytes = frame.to_vec();
        if corrupt {
            bump(&self.stats.corrupted);
            bytes[at] ^= 1 << bit;
        }
        let copies = if dup {
            bump(&self.stats.duplicated);
            2
        } else {
            1
        };
        if reorder && self.held.is_none() {
            bump(&self.stats.reordered);
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
        assert_eq!(check_probability(0.25), Ok(0.25));
        assert!(check_probability(1.5).is_err());
        assert!(check_probability(-0.1).is_err());
        assert!(check_probability(f64::NAN).is_err());
        let mut cfg = RelayConfig::new("127.0.0.1:0", "127.0.0.1:1");
        assert!(cfg.validate().is_ok());
        cfg.dup = 2.0;
        let e = cfg.validate().unwrap_err();
        assert_eq!(
            e,
            BadFault {
                fault: "dup",
                p: 2.0
            }
        );
        assert_eq!(e.to_string(), "dup: 2 is not a probability in 0..1");
        assert!(Relay::bind(cfg).is_err());
    }

    #[test]
    fn counters_roundtrip_through_json() {
        let c = RelayCounters {
            connections: 3,
            frames: 100,
            corrupted: 7,
            passthrough: 1,
            ..Default::default()
        };
        let j = c.json();
        assert!(
            j.starts_with("{\"connections\":3,\"connect_failed\":0,"),
            "{j}"
        );
        assert_eq!(RelayCounters::from_json(&j), Some(c));
        assert_eq!(RelayCounters::from_json("not json"), None);
        assert!(c.summary().contains("7 corrupted"));
    }

    #[test]
    fn relays_frames_and_counts_faults_in_process() {
        let hub = TcpListener::bind("127.0.0.1:0").unwrap();
        let relay = Relay::bind(RelayConfig {
            dup: 1.0,
            ..RelayConfig::new("127.0.0.1:0", &hub.local_addr().unwrap().to_string())
        })
        .unwrap();
        let addr = relay.local_addr();
        let stats = relay.stats();
        let stop = Arc::new(AtomicBool::new(false));
        let s = stop.clone();
        let t = std::thread::spawn(move || relay.run(&s));
        let mut node = TcpStream::connect(addr).unwrap();
        let (mut hub_side, _) = hub.accept().unwrap();
        let key = wire::Key::from_secret(b"relay unit test");
        let mut up = Vec::new();
        wire::encode(
            &mut up,
            &key.join(&[0; 16]),
            1,
            Kind::Join,
            0,
            0,
            &[b"join"],
        );
        let to_hub = key.link(&[0; 16], &[1; 16]).to_hub;
        wire::encode(&mut up, &to_hub, 1, Kind::Data, 1, 0, &[b"data"]);
        node.write_all(&up).unwrap();
        let join_len = wire::HEADER + 4 + wire::MAC;
        let want = up.len() + (up.len() - join_len);
        let mut got = vec![0u8; want];
        hub_side
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        hub_side.read_exact(&mut got).unwrap();
        assert_eq!(&got[..up.len()], &up[..]);
        assert_eq!(&got[up.len()..], &up[join_len..]);
        stop.store(true, Ordering::SeqCst);
        t.join().unwrap();
        let c = stats.snapshot();
        assert_eq!((c.connections, c.frames, c.duplicated), (1, 2, 1), "{c:?}");
    }
}
