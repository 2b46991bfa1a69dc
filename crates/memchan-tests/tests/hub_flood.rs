//! The real `memchan hub` under connections that never join: idle ones (2,000 at a
//! time, opened again in rounds as the hub closes them) and slow drips (50 sending a
//! join's bytes one at a time), from many loopback addresses, while two nodes of this
//! test process keep doing write + ack through it with the cluster key.
//!
//! `the_hub_holds_a_flood_of_strangers_in_bounded_threads_and_memory` asserts what
//! must hold (no error for the pair, no thread per connection, memory back where it
//! was, every refusal counted and logged or counted as left out of the log);
//! `hub_p99_under_attack_report` (ignored; scripts/slow-checks.sh runs it) measures
//! the pair's p99 write + ack quiet and under the attack, and prints whether the
//! target (within 2x) is met.

#[allow(dead_code)]
mod common;
use common::{join, Proc, TempFile};

use std::io::{ErrorKind, Read, Write};
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Condvar, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use memchan::{Cluster, Dest, TxAttrs};
use memchan_link::wire::{self, Key, Kind};

/// Idle connections per round, and slow drips, as the target names them.
const IDLE: usize = 2000;
const DRIPS: usize = 50;
/// Idle connections come from this many addresses each (over the hub's per-source
/// cap of 32, so that cap is exercised too).
const PER_ADDRESS: usize = 50;
/// Hang guard of every wait here (not a speed claim).
const HANG: Duration = Duration::from_secs(120);

/// A TCP connection to `to` from the loopback address `from`.
fn connect_from(from: Ipv4Addr, to: SocketAddr) -> std::io::Result<TcpStream> {
    use rustix::net::{bind, connect, socket, AddressFamily, SocketType};
    let fd = socket(AddressFamily::INET, SocketType::STREAM, None)?;
    bind(&fd, &SocketAddrV4::new(from, 0))?;
    connect(&fd, &to)?;
    Ok(TcpStream::from(fd))
}

/// A field of /proc/<pid>/status (the number before any unit: kB for memory).
fn proc_status(pid: u32, field: &str) -> u64 {
    let text = std::fs::read_to_string(format!("/proc/{pid}/status")).expect("proc status");
    text.lines()
        .find_map(|l| l.strip_prefix(field)?.strip_prefix(':'))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or_else(|| panic!("no {field} in /proc/{pid}/status"))
}

/// Makes room for the attack's descriptors in this process (the hub only holds the
/// pending ones). Returns how many idle connections a round may open.
fn raise_fd_limit() -> usize {
    use rustix::process::{getrlimit, setrlimit, Resource, Rlimit};
    let lim = getrlimit(Resource::Nofile);
    let hard = lim.maximum.unwrap_or(u64::MAX);
    let _ = setrlimit(
        Resource::Nofile,
        Rlimit {
            current: Some(hard),
            maximum: lim.maximum,
        },
    );
    let soft = getrlimit(Resource::Nofile).current.unwrap_or(u64::MAX);
    // Room for the drips, the nodes and the test harness.
    IDLE.min(soft.saturating_sub(256) as usize)
}

/// Counts events and wakes whoever paces itself by them.
#[derive(Default)]
struct Ticks {
    n: Mutex<u64>,
    cv: Condvar,
}

impl Ticks {
    fn tick(&self) {
        *self.n.lock().unwrap() += 1;
        self.cv.notify_all();
    }

    /// Waits (up to `slice`) for a tick after `seen`; returns the count.
    fn wait_past(&self, seen: u64, slice: Duration) -> u64 {
        let g = self.n.lock().unwrap();
        *self
            .cv
            .wait_timeout_while(g, slice, |n| *n <= seen)
            .unwrap()
            .0
    }
}

/// How the drips send their next byte.
#[derive(Clone)]
enum Pace {
    /// One byte per connection every `every` ticks (the test: no clock).
    Ticks(Arc<Ticks>, u64),
    /// One byte per connection a second (the report: the probe's slow drip).
    Second,
}

/// The strangers: idle rounds on one thread, drips on another.
struct Attack {
    stop: Arc<AtomicBool>,
    /// Connections opened (every one ends in one refusal at the hub).
    opened: Arc<AtomicU64>,
    /// Idle rounds finished (every connection of the round closed by the hub).
    rounds: Arc<AtomicU64>,
    idle: Option<JoinHandle<()>>,
    drips: Option<JoinHandle<()>>,
}

impl Attack {
    /// Starts `idle` idle connections a round (until `max_rounds` or stopped) and
    /// `DRIPS` drips paced by `pace`.
    fn start(hub: SocketAddr, idle: usize, max_rounds: u64, pace: Pace) -> Attack {
        let stop = Arc::new(AtomicBool::new(false));
        let opened = Arc::new(AtomicU64::new(0));
        let rounds = Arc::new(AtomicU64::new(0));
        let (s, o, r) = (stop.clone(), opened.clone(), rounds.clone());
        let idle = std::thread::spawn(move || {
            while !s.load(SeqCst) && r.load(SeqCst) < max_rounds {
                idle_round(hub, idle, &o);
                r.fetch_add(1, SeqCst);
            }
        });
        let (s, o) = (stop.clone(), opened.clone());
        let drips = std::thread::spawn(move || drip(hub, &s, &o, pace));
        Attack {
            stop,
            opened,
            rounds,
            idle: Some(idle),
            drips: Some(drips),
        }
    }

    /// Stops opening connections and closes the drips; the idle round under way ends
    /// when the hub has closed its connections.
    fn stop(&mut self) {
        self.stop.store(true, SeqCst);
        for t in [self.idle.take(), self.drips.take()].into_iter().flatten() {
            t.join().expect("attack thread");
        }
    }
}

/// Opens `n` connections from `n / PER_ADDRESS` addresses, says nothing, and waits
/// until the hub has closed each one (at once over a cap, else at its handshake
/// deadline).
fn idle_round(hub: SocketAddr, n: usize, opened: &AtomicU64) {
    let mut socks = Vec::with_capacity(n);
    for i in 0..n {
        let from = Ipv4Addr::new(127, 0, 2, 1 + (i / PER_ADDRESS) as u8);
        let s = connect_from(from, hub).expect("connect an idle stranger");
        opened.fetch_add(1, SeqCst);
        socks.push(s);
    }
    let mut buf = [0u8; 256];
    for mut s in socks {
        s.set_read_timeout(Some(HANG)).unwrap();
        loop {
            match s.read(&mut buf) {
                Ok(0) => break,
                Ok(_) => {}
                Err(e) if e.kind() == ErrorKind::ConnectionReset => break,
                Err(e) => panic!("the hub did not close an idle connection: {e}"),
            }
        }
    }
}

/// `DRIPS` connections sending a join (of a wrong key, 4000 bytes) a byte at a time;
/// one the hub closed (timed out, evicted or refused) is opened again.
fn drip(hub: SocketAddr, stop: &AtomicBool, opened: &AtomicU64, pace: Pace) {
    let mut frame = Vec::new();
    let wrong = Key::from_secret(b"not the cluster key");
    wire::encode(
        &mut frame,
        &wrong.join(&[0; 16]),
        1,
        Kind::Join,
        0,
        0,
        &[&[0u8; 4000]],
    );
    let open = |i: usize| {
        let from = Ipv4Addr::new(127, 0, 3, 1 + i as u8);
        let s = connect_from(from, hub).expect("connect a drip");
        opened.fetch_add(1, SeqCst);
        (s, 0usize)
    };
    let mut conns: Vec<_> = (0..DRIPS).map(open).collect();
    let mut seen = 0;
    while !stop.load(SeqCst) {
        match &pace {
            Pace::Ticks(t, every) => {
                let now = t.wait_past(seen, Duration::from_millis(100));
                if now < seen + every {
                    continue;
                }
                seen = now;
            }
            Pace::Second => std::thread::sleep(Duration::from_secs(1)),
        }
        for (i, c) in conns.iter_mut().enumerate() {
            let sent = c.1 < frame.len() && c.0.write(&frame[c.1..c.1 + 1]).is_ok();
            if sent {
                c.1 += 1;
            } else {
                *c = open(i);
            }
        }
    }
}

/// The legitimate pair: `a` writes to `b` through the hub.
struct Pair {
    a: Cluster,
    b: Cluster,
    tx: memchan::TxMapping,
    rx: memchan::RxMapping,
    n: u64,
}

impl Pair {
    fn join(cluster: &str, hub: &str, key: &std::path::Path) -> Pair {
        let a = join(cluster, hub, key);
        let b = join(cluster, hub, key);
        a.wait_for_members(2, HANG).unwrap();
        let rx = b.segment("inbox", 4096, 0o600).unwrap().map_rx().unwrap();
        let tx = a
            .segment("inbox", 4096, 0o600)
            .unwrap()
            .map_tx(Dest::Node(b.node_id()), TxAttrs::default())
            .unwrap();
        Pair { a, b, tx, rx, n: 0 }
    }

    /// One 8-byte write and its ack; the ack means `b` has it.
    fn op(&mut self) {
        self.n += 1;
        let off = 8 * (self.n as usize % 512);
        self.tx.write_u64(off, self.n).expect("write");
        self.a.ack().expect("ack");
        assert_eq!(self.rx.load_u64(off).unwrap(), self.n);
    }

    fn leave(self) {
        drop((self.tx, self.rx));
        self.a.leave();
        self.b.leave();
    }
}

/// The hub's `refused` counter, asked through its port.
fn refused(addr: &str, key: &Key) -> u64 {
    memchan_net::query_status(addr, key)
        .expect("status")
        .refused
}

/// Refusals the hub's log accounts for: lines logged, plus lines it says it left out.
fn logged_refusals(stderr: &str) -> (u64, u64) {
    let mut lines = 0;
    let mut left_out = 0;
    for l in stderr.lines() {
        let Some(n) = l
            .rsplit_once(" suppressed=")
            .and_then(|(_, n)| n.parse::<u64>().ok())
        else {
            continue;
        };
        if l.contains(" refused ") {
            lines += 1;
        }
        left_out += n;
    }
    (lines, left_out)
}

const SECRET: &str = "flood secret\n";

fn start_hub(key: &TempFile) -> (Proc, String) {
    let mut hub = Proc::spawn(&[
        "hub",
        "--listen",
        "127.0.0.1:0",
        "--key-file",
        key.0.to_str().unwrap(),
    ]);
    let addr = hub.expect_line("listening");
    (hub, addr)
}

#[test]
fn the_hub_holds_a_flood_of_strangers_in_bounded_threads_and_memory() {
    let idle = raise_fd_limit();
    let key_file = TempFile::new("flood-key", SECRET);
    let key = Key::from_secret(SECRET.trim().as_bytes());
    let (hub, addr) = start_hub(&key_file);
    let pid = hub.child.id();
    let mut pair = Pair::join(&format!("flood-{}", std::process::id()), &addr, &key_file.0);
    for _ in 0..200 {
        pair.op();
    }
    let threads = proc_status(pid, "Threads");
    let rss = proc_status(pid, "VmRSS");

    let ticks = Arc::new(Ticks::default());
    let sock: SocketAddr = addr.parse().unwrap();
    let mut attack = Attack::start(sock, idle, 2, Pace::Ticks(ticks.clone(), 4));
    let (mut max_threads, mut max_rss) = (threads, rss);
    // The pair works on until both idle rounds are over: each round's pending strangers
    // stay to their handshake deadline, so the pair runs through those too.
    while attack.rounds.load(SeqCst) < 2 {
        pair.op();
        ticks.tick();
        if pair.n.is_multiple_of(8) {
            max_threads = max_threads.max(proc_status(pid, "Threads"));
            max_rss = max_rss.max(proc_status(pid, "VmRSS"));
        }
    }
    attack.stop();
    let opened = attack.opened.load(SeqCst);
    // Every stranger ends in exactly one refusal; wait until the hub counted them all
    // (the drips just closed are the last).
    let deadline = Instant::now() + HANG;
    let count = loop {
        let n = refused(&addr, &key);
        if n >= opened {
            break n;
        }
        assert!(
            Instant::now() < deadline,
            "{n} of {opened} strangers counted"
        );
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(count, opened, "a stranger counted twice");
    // The pair still works, and the hub let go of what the strangers cost.
    for _ in 0..50 {
        pair.op();
    }
    let rss_after = proc_status(pid, "VmRSS");
    eprintln!(
        "hub under {opened} strangers: threads {threads} (max {max_threads}), \
         VmRSS {rss} kB before, max {max_rss} kB, {rss_after} kB after; \
         pair ops {}",
        pair.n
    );
    assert_eq!(
        max_threads, threads,
        "the hub's threads grew with strangers"
    );
    assert!(
        max_rss <= rss + 16 * 1024,
        "pending strangers cost the hub {} kB",
        max_rss - rss
    );
    assert!(
        rss_after <= rss + 4 * 1024,
        "the hub kept {} kB after the strangers left",
        rss_after - rss
    );
    // Every refusal is in the log: as a line, or in a count of lines left out (the last
    // such count comes once its second is over).
    let deadline = Instant::now() + HANG;
    loop {
        let (lines, left_out) = logged_refusals(&hub.stderr());
        if lines + left_out >= count {
            assert_eq!(lines + left_out, count);
            assert!(left_out > 0 && lines < count / 4, "{lines} lines logged");
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{lines} + {left_out} of {count} logged"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
    pair.leave();
    hub.terminate();
}

fn p99(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[(v.len() * 99 / 100).min(v.len() - 1)]
}

fn median(v: &[Duration]) -> Duration {
    let mut v = v.to_vec();
    v.sort();
    v[v.len() / 2]
}

/// Not a test: measures the pair's write + ack p99 quiet and under 2,000 idle (in
/// rounds, opened again as the hub closes them) and 50 one-byte-a-second drips, and
/// prints whether it stays within 2x (the hardening issue's target). Paced like the
/// probe's (a write + ack every 5 ms). Quiet and attacked phases alternate, three of
/// each, so that a change of the machine's speed during the run (a shared VM moves
/// between states for seconds) falls on both sides alike.
#[test]
#[ignore = "a measurement, run by scripts/slow-checks.sh"]
fn hub_p99_under_attack_report() {
    const PHASES: usize = 3;
    const PHASE: Duration = Duration::from_secs(4);
    let idle = raise_fd_limit();
    let key_file = TempFile::new("p99-key", SECRET);
    let (hub, addr) = start_hub(&key_file);
    let pid = hub.child.id();
    let mut pair = Pair::join(&format!("p99-{}", std::process::id()), &addr, &key_file.0);
    let phase = |pair: &mut Pair, run: Duration, lat: &mut Vec<Duration>| {
        let end = Instant::now() + run;
        while Instant::now() < end {
            let t = Instant::now();
            pair.op();
            lat.push(t.elapsed());
            std::thread::sleep(Duration::from_millis(5));
        }
    };
    phase(&mut pair, Duration::from_secs(1), &mut Vec::new());
    let rss0 = proc_status(pid, "VmRSS");
    let sock: SocketAddr = addr.parse().unwrap();
    let (mut quiet, mut attacked) = (Vec::new(), Vec::new());
    let (mut threads, mut hwm, mut opened) = (0, 0, 0);
    for _ in 0..PHASES {
        phase(&mut pair, PHASE, &mut quiet);
        let mut attack = Attack::start(sock, idle, u64::MAX, Pace::Second);
        phase(&mut pair, PHASE, &mut attacked);
        threads = threads.max(proc_status(pid, "Threads"));
        hwm = hwm.max(proc_status(pid, "VmHWM"));
        // Returns once the hub has closed the idle round under way (at its handshake
        // deadline); not measured.
        attack.stop();
        opened += attack.opened.load(SeqCst);
    }
    let (q, a) = (p99(quiet.clone()), p99(attacked.clone()));
    let ratio = a.as_secs_f64() / q.as_secs_f64();
    println!(
        "hub p99 write+ack: quiet {} us (median {} us, {} ops), under {idle} idle + \
         {DRIPS} drip connections {} us (median {} us, {} ops, {opened} strangers \
         opened), {ratio:.2}x: {} (target: within 2x); {PHASES} quiet and {PHASES} \
         attacked phases of {PHASE:?}, alternated; hub threads {threads}, VmRSS {} kB \
         quiet, VmHWM {hwm} kB",
        q.as_micros(),
        median(&quiet).as_micros(),
        quiet.len(),
        a.as_micros(),
        median(&attacked).as_micros(),
        attacked.len(),
        if ratio <= 2.0 { "met" } else { "NOT MET" },
        rss0,
    );
    pair.leave();
    hub.terminate();
}
