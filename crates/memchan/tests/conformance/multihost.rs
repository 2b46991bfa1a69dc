//! Multi-host conformance (run as root): three host namespaces and a hub namespace
//! joined by veth pairs (`memchan_testkit::netns::Topology`), the hub and a
//! fault-injecting relay run as worker processes in the hub namespace, nodes as worker
//! processes in the hosts.
//!
//! ```text
//!   host 0  (2 nodes) --veth--+
//!   host 1  (2 nodes) --veth--+-- hub ns: [relay] -> hub     (status queried from here)
//!   host 2  (2 nodes) --veth--+
//! ```
//!
//! - **Ordering under faults** (docs/spec.md, Semantics 2 and 12): 6 nodes, 2 per host, send
//!   102,000 writes while the links lose packets (nftables), or the relay corrupts,
//!   duplicates, reorders, drops or delays frames; the randomized checker finds no
//!   violation and no lost, duplicated or corrupt write, and the hub's counters (both
//!   ends of every link) and the relay's prove the fault was hit. The nodes run with the
//!   default link settings: the send window (4 MiB, 256 frames) bounds what one bad
//!   frame costs, and the retransmit timeout backs off while a slow path drains.
//! - **Failure detection across hosts** (semantics 7): kill -9, SIGSTOP, link down, and
//!   the hub itself killed; each is seen, its time printed against its bound and
//!   asserted only as a hang guard (`HANG_FACTOR`).
//! - **Who may join** (docs/spec.md, "What bad input gets"): a wrong key, garbage, another
//!   protocol version are refused by name while a running cluster keeps working.
//!
//! The tests of this module run one at a time (they time failure detection, which a
//! neighbour saturating both cores would blur); each cleans up its namespaces and
//! processes on every path (`Topology` and `Worker` drops).

use crate::ordering;
use memchan::{Cluster, Config, Dest, Error, EventKind, MembershipEvent, TxAttrs};
use memchan_core::status::{ClusterStatus, LinkCounters};
use memchan_hub::{Hub, HubConfig};
use memchan_link::proto::reply::JoinRefusal;
use memchan_link::wire::{self, Decoder, Key, Kind, Received};
use memchan_net::query_status;
use memchan_testkit::harness::{field, mono_ns, unique_cluster, Worker};
use memchan_testkit::netns::{in_ns, Topology};
use memchan_testkit::relay::{Relay, RelayConfig, RelayCounters};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::mpsc::RecvTimeoutError;
use std::sync::{Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Heartbeat and failure timeout of the hub in the failure-detection tests.
const HB_MS: u64 = 50;
const FT_MS: u64 = 400;
/// Detection times are liveness checks here, not performance claims: a shared,
/// oversubscribed CI machine can deschedule a hub, a node or this test past any bound
/// without anything being wrong. So the tests check that the failure (or the hub's
/// loss) is seen at all, print how long it took next to its bound, and fail only past
/// this many times the bound: a hang guard (as in `membership.rs`).
const HANG_FACTOR: f64 = 10.0;
/// Writes per node in the ordering tests: 6 x 17,000 = 102,000.
const NODES: u16 = 6;
const WRITES: u64 = 17_000;

// ---------------------------------------------------------------------------------
// Worker roles.

/// Role `hub`: `listen heartbeat_ms failure_timeout_ms`; the key from
/// `MEMCHAN_KEY_FILE` (none: open). Prints `LISTENING addr`, serves until killed.
pub fn hub_worker(a: &[String]) {
    let key_file = std::env::var_os("MEMCHAN_KEY_FILE")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from);
    let secret = memchan_net::node::read_key(key_file.as_deref()).unwrap();
    let (key, keyed) = match secret {
        Some(s) => (Key::from_secret(&s), true),
        None => (Key::open(), false),
    };
    let hub = Hub::start(HubConfig {
        listen: a[0].clone(),
        key,
        keyed,
        heartbeat: Duration::from_millis(a[1].parse().unwrap()),
        failure_timeout: Duration::from_millis(a[2].parse().unwrap()),
        ..HubConfig::default()
    })
    .unwrap();
    println!("LISTENING {}", hub.local_addr());
    loop {
        std::thread::sleep(Duration::from_secs(1));
    }
}

static RELAY_STOP: AtomicBool = AtomicBool::new(false);

extern "C" fn relay_on_signal(_: libc::c_int) {
    RELAY_STOP.store(true, Ordering::SeqCst);
}

/// Role `relay`: `listen to drop corrupt dup reorder delay_us seed` (the library relay).
/// Prints `LISTENING addr`; on SIGTERM prints `RELAYSTATS {json}` and exits.
pub fn relay_worker(a: &[String]) {
    let handler: extern "C" fn(libc::c_int) = relay_on_signal;
    // SAFETY: the handler only stores to an atomic, which is async-signal-safe.
    unsafe { libc::signal(libc::SIGTERM, handler as libc::sighandler_t) };
    let p = |i: usize| a[i].parse::<f64>().unwrap();
    let relay = Relay::bind(RelayConfig {
        drop: p(2),
        corrupt: p(3),
        dup: p(4),
        reorder: p(5),
        delay_us: a[6].parse().unwrap(),
        seed: a[7].parse().unwrap(),
        ..RelayConfig::new(&a[0], &a[1])
    })
    .unwrap();
    println!("LISTENING {}", relay.local_addr());
    relay.run(&RELAY_STOP);
    println!("RELAYSTATS {}", relay.stats().snapshot().json());
    // The forwarding threads end with the process.
    std::process::exit(0);
}

fn kind_of(e: &Error) -> &'static str {
    match e {
        Error::Isolated { .. } => "Isolated",
        Error::HubLost(_) => "HubLost",
        Error::Timeout(..) => "Timeout",
        Error::AckIncomplete(_) => "AckIncomplete",
        Error::HubRefused { .. } => "HubRefused",
        _ => "Other",
    }
}

/// Waits until the file `dir/name` exists (the test's "go").
fn wait_go(dir: &str, name: &str) {
    let p = Path::new(dir).join(name);
    let deadline = Instant::now() + Duration::from_secs(120);
    while !p.exists() {
        assert!(Instant::now() < deadline, "{} never appeared", p.display());
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn next_failed(c: &Cluster) -> MembershipEvent {
    loop {
        let e = c
            .next_event(Some(Duration::from_secs(60)))
            .expect("a membership event within 60 s");
        if e.kind == EventKind::Failed {
            return e;
        }
    }
}

/// Failed events that arrive within 300 ms (after the one expected).
fn drain_failed(c: &Cluster) -> usize {
    std::iter::from_fn(|| c.next_event(Some(Duration::from_millis(300))))
        .filter(|e| e.kind == EventKind::Failed)
        .count()
}

fn print_failed(c: &Cluster, e: &MembershipEvent, start_epoch: u64, extra: &str) {
    println!(
        "FAILED node={} epoch={} start_epoch={start_epoch} at={} members={} {extra}",
        e.node.0,
        e.epoch,
        mono_ns(),
        c.members().len()
    );
}

/// Role `mh`: `cluster mode nodes dir [extra…]`, one node of a multi-host test. With
/// `nodes > 0` it waits for that many members and a barrier before its mode starts;
/// `dir` holds the go-files the test creates.
pub fn node_worker(a: &[String]) {
    let (name, mode, nodes, dir) = (&a[0], a[1].as_str(), a[2].parse::<usize>().unwrap(), &a[3]);
    let mut cfg = Config::default();
    match mode {
        // Its own silence bound for the hub: long, so what it learns after the link
        // is back comes from the hub, not from its own timer.
        "lockholder" => cfg.failure_timeout = Duration::from_millis(a[4].parse().unwrap()),
        // A small replay memory: writes to a node that does not release block soon.
        "blockedwriter" => cfg.replay_limit = 64 << 10,
        _ => {}
    }
    let c = match Cluster::join_with(name, cfg) {
        Ok(c) => c,
        Err(e) if mode == "joinonly" => {
            println!("JOINERR kind={} msg={e}", kind_of(&e));
            return;
        }
        Err(e) => panic!("join: {e}"),
    };
    if mode == "joinonly" {
        println!("JOINED node={}", c.node_id().0);
        return;
    }
    let seg = |n: &str| c.segment(n, 4096, 0o600).unwrap();
    // Receive memory first, then the barrier: every mapping exists before any write.
    let rx = match mode {
        "observe" => Some(seg("h").map_rx().unwrap()),
        "sink" => Some(seg("d").map_rx().unwrap()),
        "acker" => Some(seg("a").map_rx().unwrap()),
        _ => None,
    };
    let lock = matches!(mode, "lockholder" | "lockwait").then(|| c.lock("L").unwrap());
    if nodes > 0 {
        c.wait_for_members(nodes, Duration::from_secs(60)).unwrap();
        c.barrier().unwrap();
    }
    let start_epoch = c.epoch();
    println!(
        "JOINED node={} incarnation={} epoch={start_epoch}",
        c.node_id().0,
        c.incarnation()
    );
    match mode {
        "idle" | "sink" => loop {
            std::thread::sleep(Duration::from_secs(1));
        },
        "watch" => {
            let e = next_failed(&c);
            print_failed(&c, &e, start_epoch, "");
            c.barrier().unwrap(); // every survivor has reported
            println!("AFTER failed={}", drain_failed(&c));
        }
        "observe" => {
            let rx = rx.unwrap();
            let e = next_failed(&c);
            let v = rx.load_u64(0).unwrap();
            print_failed(&c, &e, start_epoch, &format!("value={v}"));
            wait_go(dir, "final");
            println!("FINAL value={}", rx.load_u64(0).unwrap());
            c.barrier().unwrap();
            println!("AFTER failed={}", drain_failed(&c));
        }
        "writer" => {
            // Broadcasts a counter to the observers; each write is acknowledged, so
            // every value up to `after` was applied everywhere.
            let tx = seg("h")
                .map_tx(Dest::Broadcast, TxAttrs::default())
                .unwrap();
            let mut after = 0u64;
            for i in 1u64.. {
                let (op, r) = match tx.write_u64(0, i) {
                    Ok(()) => ("ack", c.ack()),
                    Err(e) => ("write", Err(e)),
                };
                if let Err(e) = r {
                    println!(
                        "ERROR after={after} op={op} kind={} at={} msg={e}",
                        kind_of(&e),
                        mono_ns()
                    );
                    return;
                }
                after = i;
                if i == 100 {
                    println!("WRITING");
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        "lockholder" => {
            let lock = lock.unwrap();
            let _held = lock.acquire().unwrap();
            println!("HELD at={}", mono_ns());
            loop {
                if let Err(e) = c.ack() {
                    println!("ERROR kind={} at={} msg={e}", kind_of(&e), mono_ns());
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        "lockwait" => {
            let lock = lock.unwrap();
            wait_go(dir, "lock");
            assert!(
                lock.try_acquire().unwrap().is_none(),
                "the lock is free while its holder holds it"
            );
            println!("BLOCKED");
            std::thread::scope(|s| {
                s.spawn(move || {
                    let g = lock.acquire().unwrap();
                    println!("ACQUIRED at={}", mono_ns());
                    g.release().unwrap();
                });
                let e = next_failed(&c);
                print_failed(&c, &e, start_epoch, "");
            });
            c.barrier().unwrap();
            println!("AFTER failed={}", drain_failed(&c));
        }
        "acker" => {
            // One write to the stopped sink, then an ack that cannot complete.
            let _rx = rx;
            wait_go(dir, "go");
            let tx = seg("d")
                .map_tx(Dest::Broadcast, TxAttrs::default())
                .unwrap();
            tx.write_u64(0, 1).unwrap();
            println!("ACKING");
            let r = c.ack();
            report("ack", r.err());
        }
        "eventer" => {
            wait_go(dir, "go");
            // The joins of nodes that joined after this one are queued events: taken
            // first, so that the wait below is for what the hub's death brings (it
            // returned at once, before the kill, when the sink joined last).
            while c.next_event(Some(Duration::ZERO)).is_some() {}
            println!("WAITING");
            let e = c.next_event(Some(Duration::from_secs(20)));
            println!("EVENT got={:?} at={}", e.map(|e| e.kind), mono_ns());
            // What the next operation says.
            report("event", c.ack().err());
        }
        "blockedwriter" => {
            wait_go(dir, "go");
            let tx = seg("d")
                .map_tx(Dest::Broadcast, TxAttrs::default())
                .unwrap();
            let count = AtomicU64::new(0);
            let done = AtomicBool::new(false);
            std::thread::scope(|s| {
                s.spawn(|| {
                    // Says BLOCKED once the writes stop moving for 300 ms.
                    let mut last = (0, Instant::now());
                    while !done.load(Ordering::Acquire) {
                        let n = count.load(Ordering::Acquire);
                        if n != last.0 {
                            last = (n, Instant::now());
                        } else if n > 0 && last.1.elapsed() > Duration::from_millis(300) {
                            println!("BLOCKED count={n}");
                            return;
                        }
                        std::thread::sleep(Duration::from_millis(10));
                    }
                });
                for i in 1u64.. {
                    if let Err(e) = tx.write_u64(8 * (i as usize % 512), i) {
                        done.store(true, Ordering::Release);
                        report("write", Some(e));
                        return;
                    }
                    count.store(i, Ordering::Release);
                }
            });
        }
        "freewriter" => {
            wait_go(dir, "go");
            let tx = seg("a")
                .map_tx(Dest::Broadcast, TxAttrs::default())
                .unwrap();
            for i in 1u64.. {
                if let Err(e) = tx.write_u64(0, i) {
                    report("write", Some(e));
                    return;
                }
                if i == 1000 {
                    println!("WRITING");
                }
                if i % 64 == 0 {
                    std::thread::sleep(Duration::from_millis(1));
                }
            }
        }
        "pinger" => {
            // A counter, broadcast every millisecond, until the cluster refuses.
            let tx = seg("ping")
                .map_tx(Dest::Broadcast, TxAttrs::default())
                .unwrap();
            for i in 1u64.. {
                if let Err(e) = tx.write_u64(0, i) {
                    println!("ERROR kind={} msg={e}", kind_of(&e));
                    return;
                }
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        other => panic!("unknown mh mode {other}"),
    }
}

/// `RESULT op=… kind=… at=… msg=…` (kind `none` if the operation succeeded).
fn report(op: &str, e: Option<Error>) {
    match e {
        Some(e) => println!(
            "RESULT op={op} kind={} at={} msg={e}",
            kind_of(&e),
            mono_ns()
        ),
        None => println!("RESULT op={op} kind=none at={}", mono_ns()),
    }
}

// ---------------------------------------------------------------------------------
// Test-side helpers.

/// One multi-host test at a time (see the module doc).
pub(crate) fn serial() -> MutexGuard<'static, ()> {
    static SERIAL: Mutex<()> = Mutex::new(());
    SERIAL.lock().unwrap_or_else(|p| p.into_inner())
}

/// A scratch directory (logs, go-files, key files), removed on drop.
pub(crate) struct TempDir(pub(crate) PathBuf);

impl TempDir {
    pub(crate) fn new(tag: &str) -> TempDir {
        let p = std::env::temp_dir().join(unique_cluster(tag));
        std::fs::create_dir_all(&p).unwrap();
        TempDir(p)
    }
    fn path(&self) -> String {
        self.0.display().to_string()
    }
    pub(crate) fn go(&self, name: &str) {
        std::fs::write(self.0.join(name), b"").unwrap();
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The port in `LISTENING a.b.c.d:port`.
pub(crate) fn port_of(line: &str) -> u16 {
    line.rsplit(':')
        .next()
        .and_then(|p| p.trim().parse().ok())
        .unwrap_or_else(|| panic!("no port in `{line}`"))
}

/// A hub worker in the hub namespace, listening on every address of it; its port.
pub(crate) fn start_hub(
    topo: &Topology,
    hb_ms: u64,
    ft_ms: u64,
    env: &[(&str, String)],
    capture: bool,
) -> (Worker, u16) {
    let args = [
        "0.0.0.0:0".to_string(),
        hb_ms.to_string(),
        ft_ms.to_string(),
    ];
    let mut w = if capture {
        Worker::spawn_in_capturing(&topo.hub_ns, "hub", &args, env)
    } else {
        topo.worker(&topo.hub_ns, "hub", &args, env)
    };
    let port = port_of(&w.expect_line("LISTENING", Duration::from_secs(30)));
    (w, port)
}

/// The hub address host `h` uses.
pub(crate) fn hub_addr(topo: &Topology, h: usize, port: u16) -> String {
    format!("{}:{port}", topo.hosts[h].hub_addr)
}

/// The hub's status, asked from inside the hub namespace.
fn status(topo: &Topology, port: u16, key: &Key) -> ClusterStatus {
    let (addr, key) = (format!("127.0.0.1:{port}"), key.clone());
    in_ns(&topo.hub_ns, move || query_status(&addr, &key))
        .unwrap_or_else(|e| panic!("hub status: {e}"))
}

/// A status whose node-side counters are fresh: every member sent a heartbeat after
/// the first look (its counters as of now, not of the run's middle).
fn settled_status(topo: &Topology, port: u16, key: &Key) -> ClusterStatus {
    let first = status(topo, port, key);
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let s = status(topo, port, key);
        let fresh = s.members.iter().all(|m| {
            first
                .members
                .iter()
                .find(|f| (f.node, f.incarnation) == (m.node, m.incarnation))
                .is_none_or(|f| m.node_side.frames_tx > f.node_side.frames_tx)
        });
        if fresh {
            return s;
        }
        assert!(
            Instant::now() < deadline,
            "no fresh heartbeat from every member in 15 s"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn add(sum: &mut LinkCounters, c: &LinkCounters) {
    sum.frames_tx += c.frames_tx;
    sum.frames_rx += c.frames_rx;
    sum.bytes_tx += c.bytes_tx;
    sum.bytes_rx += c.bytes_rx;
    sum.crc_failures += c.crc_failures;
    sum.retransmits += c.retransmits;
    sum.discards += c.discards;
    sum.duplicates += c.duplicates;
    sum.replays += c.replays;
    sum.naks += c.naks;
    sum.backpressure_waits += c.backpressure_waits;
    sum.mac_failures += c.mac_failures;
    sum.tcp_retransmits += c.tcp_retransmits;
}

fn show(c: &LinkCounters) -> String {
    c.fields()
        .iter()
        .filter(|(n, _, _)| !n.starts_with("bytes"))
        .map(|(n, _, v)| format!("{n}={v}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// TCP retransmitted segments of every namespace of the topology.
fn ns_retrans(topo: &Topology) -> u64 {
    let hosts: u64 = topo
        .hosts
        .iter()
        .map(|h| topo.tcp_retrans_segs(&h.ns))
        .sum();
    hosts + topo.tcp_retrans_segs(&topo.hub_ns)
}

/// Waits for `prefix` from every worker, whichever comes first; a worker that exits
/// first fails the test at once (its peers would wait for it forever).
fn wait_all(ws: &mut [Worker], prefix: &str, timeout: Duration) -> Result<Vec<String>, String> {
    let deadline = Instant::now() + timeout;
    let mut got: Vec<Option<String>> = vec![None; ws.len()];
    while got.iter().any(Option::is_none) {
        if Instant::now() >= deadline {
            return Err(format!(
                "no `{prefix}` within {timeout:?} from workers {:?}",
                (0..ws.len())
                    .filter(|&i| got[i].is_none())
                    .map(|i| ws[i].pid())
                    .collect::<Vec<_>>()
            ));
        }
        for (w, g) in ws.iter_mut().zip(got.iter_mut()) {
            if g.is_none() {
                match w.poll_line(prefix, Duration::from_millis(20)) {
                    Ok(l) => *g = Some(l),
                    Err(RecvTimeoutError::Timeout) => {}
                    Err(RecvTimeoutError::Disconnected) => {
                        let status = w.child.wait().map(|s| s.to_string());
                        return Err(format!(
                            "worker {} exited before printing `{prefix}` ({status:?})",
                            w.pid()
                        ));
                    }
                }
            }
        }
    }
    Ok(got.into_iter().map(Option::unwrap).collect())
}

/// Sends `sig` to a worker.
fn signal(w: &Worker, sig: libc::c_int) {
    // SAFETY: kill(2) on our own child's PID.
    assert_eq!(unsafe { libc::kill(w.pid() as libc::pid_t, sig) }, 0);
}

/// `at` of a worker line relative to `t0` (both CLOCK_MONOTONIC ns), in ms.
fn ms_since(line: &str, t0: u64) -> f64 {
    (field(line, "at") as i128 - t0 as i128) as f64 / 1e6
}

/// The text after `msg=` (error messages contain spaces).
fn msg(line: &str) -> &str {
    line.split_once("msg=").map_or("", |(_, m)| m)
}

/// The value of `key=` as a word (not a number).
fn word<'a>(line: &'a str, key: &str) -> &'a str {
    line.split_whitespace()
        .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
        .unwrap_or_else(|| panic!("no `{key}` in `{line}`"))
}

// ---------------------------------------------------------------------------------
// 1. Ordering under faults.

/// Faults the relay injects.
#[derive(Clone, Copy, Default)]
struct RelayFaults {
    drop: f64,
    corrupt: f64,
    dup: f64,
    reorder: f64,
    delay_us: u64,
}

enum Fault {
    /// nftables drops this percentage of the packets on every hub-side veth.
    Nft(u32),
    /// The nodes reach the hub through a relay injecting these faults.
    Relay(RelayFaults),
}

/// What a run under a fault left as evidence.
struct Evidence {
    /// Hub ends of all links, summed.
    hub: LinkCounters,
    /// Node ends (from their last heartbeats), summed.
    node: LinkCounters,
    /// Both.
    total: LinkCounters,
    relay: Option<RelayCounters>,
    /// TCP retransmitted segments of all namespaces during the run.
    ns_tcp_retrans: u64,
}

/// 6 nodes, 2 per host, 102,000 writes under `fault`; checks the ordering rules and
/// returns the counters for the caller's fault-specific assertions.
fn ordering_under(tag: &str, seed: u64, fault: Fault) -> Evidence {
    let _one = serial();
    let t0 = Instant::now();
    let topo = Topology::new(tag, 3);
    let dir = TempDir::new(tag);
    let name = unique_cluster(tag);
    // Failure detection is not what these tests are about: under packet loss TCP's
    // retransmission backoff can stall a healthy link for more than the default
    // 800 ms, and so can a loaded two-core machine under a storm of link-level
    // retransmissions. A failure timeout of 3 s (hub and nodes) keeps healthy nodes
    // members.
    let ft_ms = 3000;
    let (_hub, port) = start_hub(&topo, 100, ft_ms, &[], false);
    let mut relay = None;
    let mut to_port = port;
    match &fault {
        Fault::Nft(percent) => topo.nft_drop(&topo.hub_ns, "vb*", *percent),
        Fault::Relay(f) => {
            let args: Vec<String> = vec![
                "0.0.0.0:0".into(),
                format!("127.0.0.1:{port}"),
                f.drop.to_string(),
                f.corrupt.to_string(),
                f.dup.to_string(),
                f.reorder.to_string(),
                f.delay_us.to_string(),
                seed.to_string(),
            ];
            let mut w = topo.worker(&topo.hub_ns, "relay", &args, &[]);
            to_port = port_of(&w.expect_line("LISTENING", Duration::from_secs(30)));
            relay = Some(w);
        }
    }
    let retrans_before = ns_retrans(&topo);
    let ft = format!("ft={ft_ms}");
    let args = ordering::worker_args(&name, NODES, WRITES, seed, &dir.0, &["hold", &ft]);
    let mut ws: Vec<Worker> = (0..usize::from(NODES))
        .map(|i| {
            let h = i % 3;
            let env = [("MEMCHAN_HUB", hub_addr(&topo, h, to_port))];
            topo.worker(&topo.hosts[h].ns, "order", &args, &env)
        })
        .collect();
    let done = match wait_all(&mut ws, "DONE", Duration::from_secs(120)) {
        Ok(lines) => lines,
        Err(why) => {
            // What the links went through, for the failure report.
            let st = status(&topo, port, &Key::open());
            for m in &st.members {
                println!(
                    "[{tag}] node {} ({}) heard {} ms ago\n  hub side:  {}\n  node side: {}",
                    m.node,
                    m.addr,
                    m.last_heard_ms,
                    show(&m.hub_side),
                    show(&m.node_side)
                );
            }
            if let Some(w) = &mut relay {
                signal(w, libc::SIGTERM);
                if let Some(l) = w.try_expect_line("RELAYSTATS", Duration::from_secs(10)) {
                    println!("[{tag}] relay {l}");
                }
            }
            panic!("[{tag}] {why} after {:.1} s", t0.elapsed().as_secs_f64());
        }
    };
    let seen: Vec<u64> = done.iter().map(|l| field(l, "observations")).collect();
    let ran = t0.elapsed();
    // Counters before anyone leaves (a member's counters leave with it).
    let st = settled_status(&topo, port, &Key::open());
    let ns_tcp_retrans = ns_retrans(&topo) - retrans_before;
    if matches!(fault, Fault::Nft(_)) {
        topo.nft_clear(&topo.hub_ns);
    }
    dir.go(ordering::GO_FILE);
    for w in &mut ws {
        w.finish(Duration::from_secs(60));
    }
    let relay = relay.map(|mut w| {
        signal(&w, libc::SIGTERM);
        let line = w.expect_line("RELAYSTATS", Duration::from_secs(30));
        w.finish(Duration::from_secs(30));
        RelayCounters::from_json(&line).unwrap_or_else(|| panic!("relay stats `{line}`"))
    });
    let report = ordering::check_run(NODES, WRITES, seed, &dir.0);

    let (mut hub, mut node, mut total) = Default::default();
    for m in &st.members {
        add(&mut hub, &m.hub_side);
        add(&mut node, &m.node_side);
    }
    add(&mut total, &hub);
    add(&mut total, &node);
    println!("[{tag}] {report}");
    println!(
        "[{tag}] all writes applied everywhere after {:.1} s; {} members, links from {:?}",
        ran.as_secs_f64(),
        st.members.len(),
        st.members
            .iter()
            .map(|m| m.addr.as_str())
            .collect::<Vec<_>>()
    );
    println!("[{tag}] hub side:  {}", show(&hub));
    println!("[{tag}] node side: {}", show(&node));
    println!("[{tag}] sum:       {}", show(&total));
    println!("[{tag}] TCP RetransSegs of the namespaces during the run: {ns_tcp_retrans}");
    if let Some(r) = &relay {
        println!("[{tag}] {}", r.summary());
    }
    println!("[{tag}] observations per receiver: {seen:?}");
    assert_eq!(st.members.len(), usize::from(NODES), "members at the end");
    if matches!(fault, Fault::Nft(_)) {
        // Without a relay the hub sees where each link comes from: 2 nodes per host.
        for h in &topo.hosts {
            let here = st
                .members
                .iter()
                .filter(|m| m.addr.starts_with(&format!("{}:", h.addr)));
            assert_eq!(here.count(), 2, "nodes on {}", h.ns);
        }
    }
    assert!(report.writes_checked >= 100_000, "{report}");
    assert_eq!(report.writes_checked, u64::from(NODES) * WRITES);
    assert_eq!(report.receivers_checked, usize::from(NODES));
    report.assert_ok();
    assert!(
        seen.iter().all(|&n| n > 1000),
        "observations per receiver: {seen:?}"
    );
    // MACs never fail on an honest path; a relay fault is always a CRC failure.
    assert_eq!(total.mac_failures, 0);
    // Frame counters reach the wire in order: only a relay that duplicates or
    // reorders frames makes a counter arrive that is not above the last one.
    let copies = matches!(fault, Fault::Relay(f) if f.dup > 0.0 || f.reorder > 0.0);
    if !copies {
        assert_eq!(total.replays, 0, "counters out of order on the wire");
    }
    if let Some(r) = &relay {
        assert_eq!(r.connections, u64::from(NODES), "{r:?}");
        assert_eq!(r.passthrough, 0, "a stream lost its framing: {r:?}");
    }
    Evidence {
        hub,
        node,
        total,
        relay,
        ns_tcp_retrans,
    }
}

#[test]
fn multihost_ordering_holds_under_nftables_packet_loss() {
    let ev = ordering_under("ordnft", 0x5EED_1001, Fault::Nft(3));
    // TCP recovered the lost segments: its retransmissions, as the links saw them
    // (tcpi_total_retrans on both ends) and as the namespaces counted them.
    assert!(
        ev.total.tcp_retransmits > 0,
        "no TCP retransmission on the links"
    );
    assert!(ev.ns_tcp_retrans > 0, "no TCP retransmission in the netns");
    // TCP hides the loss from the link protocol: nothing reaches it damaged.
    assert_eq!(ev.total.crc_failures, 0);
}

#[test]
fn multihost_ordering_holds_under_relay_corruption() {
    let faults = RelayFaults {
        corrupt: 0.01,
        ..Default::default()
    };
    let ev = ordering_under("ordcrc", 0x5EED_1002, Fault::Relay(faults));
    let r = ev.relay.unwrap();
    assert!(r.corrupted > 0, "{r:?}");
    assert!(ev.total.crc_failures > 0, "no CRC failure counted");
    // Every corrupted frame is caught (a frame damaged twice, by a retransmission
    // racing it, still counts once per arrival).
    assert!(
        ev.total.crc_failures <= r.corrupted,
        "more CRC failures ({}) than frames corrupted ({})",
        ev.total.crc_failures,
        r.corrupted
    );
    assert!(ev.total.retransmits > 0, "corrupt frames were not resent");
    assert!(
        ev.hub.crc_failures > 0 && ev.node.crc_failures > 0,
        "both ways"
    );
}

#[test]
fn multihost_ordering_holds_under_relay_duplication() {
    let faults = RelayFaults {
        dup: 0.02,
        ..Default::default()
    };
    let ev = ordering_under("orddup", 0x5EED_1003, Fault::Relay(faults));
    let r = ev.relay.unwrap();
    assert!(r.duplicated > 0, "{r:?}");
    // A copy carries the counter of the frame it copies: refused as a replay.
    assert!(ev.total.replays > 0, "no duplicate refused");
    assert!(ev.hub.replays > 0 && ev.node.replays > 0, "both ways");
}

#[test]
fn multihost_ordering_holds_under_relay_reordering() {
    let faults = RelayFaults {
        reorder: 0.02,
        ..Default::default()
    };
    let ev = ordering_under("ordreo", 0x5EED_1004, Fault::Relay(faults));
    let r = ev.relay.unwrap();
    assert!(r.reordered > 0, "{r:?}");
    assert!(
        ev.total.discards + ev.total.retransmits > 0,
        "reordering left no trace"
    );
    assert!(ev.total.discards > 0, "no frame arrived ahead of its turn");
    // The held-back frame arrives after one with a higher counter: refused.
    assert!(ev.total.replays > 0, "no late frame refused as replayed");
}

#[test]
fn multihost_ordering_holds_under_relay_drops() {
    let faults = RelayFaults {
        drop: 0.01,
        ..Default::default()
    };
    let ev = ordering_under("orddrop", 0x5EED_1005, Fault::Relay(faults));
    let r = ev.relay.unwrap();
    assert!(r.dropped > 0, "{r:?}");
    assert!(
        ev.total.discards + ev.total.retransmits > 0,
        "drops left no trace"
    );
    assert!(ev.total.retransmits > 0, "dropped frames were not resent");
}

#[test]
fn multihost_ordering_holds_under_relay_delay_with_jitter() {
    let faults = RelayFaults {
        delay_us: 50,
        ..Default::default()
    };
    let ev = ordering_under("orddelay", 0x5EED_1006, Fault::Relay(faults));
    let r = ev.relay.unwrap();
    // Every frame but the handshake's three per connection (Hello, Join, Welcome).
    assert!(r.delayed > 0, "{r:?}");
    assert_eq!(r.delayed, r.frames - 3 * r.connections, "{r:?}");
    // A delay alone damages nothing.
    assert_eq!(ev.total.crc_failures, 0);
}

// ---------------------------------------------------------------------------------
// 2. Failure detection across hosts.

/// The bound on detecting a failed node: the hub's failure timeout plus one heartbeat.
/// Printed next to each measured time; asserted only as a hang guard, times
/// [`HANG_FACTOR`].
fn detect_bound_ms() -> f64 {
    (FT_MS + HB_MS) as f64
}

/// Fails the test if `took` (ms) passed the hang guard of a detection bounded by
/// `bound_ms`: it was seen, but so late that something hangs.
fn assert_within_hang_guard(what: &str, took: f64, bound_ms: f64) {
    assert!(
        took < bound_ms * HANG_FACTOR,
        "{what} after {took:.1} ms: past the hang guard of {HANG_FACTOR} x the \
         {bound_ms:.0} ms bound"
    );
}

fn mh_args(name: &str, mode: &str, nodes: usize, dir: &TempDir, extra: &[&str]) -> Vec<String> {
    let mut a = vec![name.to_string(), mode.into(), nodes.to_string(), dir.path()];
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

fn hub_env(topo: &Topology, h: usize, port: u16) -> [(&'static str, String); 1] {
    [("MEMCHAN_HUB", hub_addr(topo, h, port))]
}

#[test]
fn multihost_killed_node_is_detected_and_seen_by_survivors_on_other_hosts() {
    let _one = serial();
    let topo = Topology::new("fdkill", 3);
    let dir = TempDir::new("fdkill");
    let name = unique_cluster("fdkill");
    let (_hub, port) = start_hub(&topo, HB_MS, FT_MS, &[], false);
    let spawn = |h: usize, mode: &str| {
        let args = mh_args(&name, mode, 3, &dir, &[]);
        topo.worker(&topo.hosts[h].ns, "mh", &args, &hub_env(&topo, h, port))
    };
    let mut survivors = [spawn(0, "watch"), spawn(1, "watch")];
    let mut victim = spawn(2, "idle");
    let v = victim.expect_line("JOINED", Duration::from_secs(60));
    for s in &mut survivors {
        s.expect_line("JOINED", Duration::from_secs(60));
    }
    let killed_at = mono_ns();
    victim.kill9();
    let mut epochs = Vec::new();
    for (i, s) in survivors.iter_mut().enumerate() {
        let line = s.expect_line("FAILED", Duration::from_secs(10));
        let took = ms_since(&line, killed_at);
        println!(
            "[fdkill] host {i} saw the failure {took:.1} ms after kill -9 (bound {:.0} ms): \
             {line}",
            detect_bound_ms()
        );
        assert_eq!(field(&line, "node"), field(&v, "node"), "{line}");
        assert!(
            field(&line, "epoch") > field(&line, "start_epoch"),
            "{line}"
        );
        assert_eq!(field(&line, "members"), 2, "{line}");
        assert_within_hang_guard("detected", took, detect_bound_ms());
        epochs.push(field(&line, "epoch"));
    }
    for s in &mut survivors {
        let line = s.expect_line("AFTER", Duration::from_secs(10));
        assert_eq!(
            field(&line, "failed"),
            0,
            "more than one Failed event: {line}"
        );
        s.finish(Duration::from_secs(10));
    }
    assert_eq!(epochs[0], epochs[1], "one isolation, one epoch");
    let st = status(&topo, port, &Key::open());
    println!(
        "[fdkill] hub: epoch={} isolations={} members={}",
        st.epoch,
        st.isolations,
        st.members.len()
    );
    assert_eq!(st.isolations, 1);
}

#[test]
fn multihost_stopped_node_is_isolated_and_nothing_it_writes_later_lands() {
    let _one = serial();
    let topo = Topology::new("fdstop", 3);
    let dir = TempDir::new("fdstop");
    let name = unique_cluster("fdstop");
    let (_hub, port) = start_hub(&topo, HB_MS, FT_MS, &[], false);
    let spawn = |h: usize, mode: &str| {
        let args = mh_args(&name, mode, 3, &dir, &[]);
        topo.worker(&topo.hosts[h].ns, "mh", &args, &hub_env(&topo, h, port))
    };
    let mut observers = [spawn(0, "observe"), spawn(1, "observe")];
    let mut victim = spawn(2, "writer");
    let v = victim.expect_line("JOINED", Duration::from_secs(60));
    for o in &mut observers {
        o.expect_line("JOINED", Duration::from_secs(60));
    }
    victim.expect_line("WRITING", Duration::from_secs(30));
    // Let it write on a little, so the stop lands anywhere in its write-ack loop.
    std::thread::sleep(Duration::from_millis(
        5 + u64::from(std::process::id() % 25),
    ));
    let stopped_at = mono_ns();
    victim.stop();
    let mut values = Vec::new();
    for (i, o) in observers.iter_mut().enumerate() {
        let line = o.expect_line("FAILED", Duration::from_secs(10));
        let took = ms_since(&line, stopped_at);
        println!(
            "[fdstop] host {i} saw the failure {took:.1} ms after SIGSTOP (bound {:.0} ms): \
             {line}",
            detect_bound_ms()
        );
        assert_eq!(field(&line, "node"), field(&v, "node"), "{line}");
        assert!(
            field(&line, "epoch") > field(&line, "start_epoch"),
            "{line}"
        );
        assert_within_hang_guard("isolated", took, detect_bound_ms());
        values.push(field(&line, "value"));
    }
    // Both observers hold the same prefix of the victim's writes.
    assert_eq!(values[0], values[1], "observers disagree at the isolation");
    let at_isolation = values[0];
    assert!(at_isolation >= 100, "the victim was writing");
    let resumed_at = mono_ns();
    victim.resume();
    let line = victim.expect_line("ERROR", Duration::from_secs(10));
    println!(
        "[fdstop] victim after SIGCONT ({:.1} ms): {line}",
        ms_since(&line, resumed_at)
    );
    let kind = word(&line, "kind");
    assert!(
        matches!(kind, "Isolated" | "HubLost"),
        "not a clear error: {line}"
    );
    // Every write+ack it completed was applied; the one that failed was the first
    // operation after the isolation point (at most its write landed, before it).
    let after = field(&line, "after");
    assert!(
        after <= at_isolation && at_isolation <= after + 1,
        "acknowledged {after}, applied {at_isolation}: {line}"
    );
    victim.finish(Duration::from_secs(10));
    dir.go("final");
    for o in &mut observers {
        let line = o.expect_line("FINAL", Duration::from_secs(10));
        assert_eq!(
            field(&line, "value"),
            at_isolation,
            "a write landed after the isolation: {line}"
        );
        let line = o.expect_line("AFTER", Duration::from_secs(10));
        assert_eq!(field(&line, "failed"), 0, "{line}");
        o.finish(Duration::from_secs(10));
    }
}

#[test]
fn multihost_link_down_isolates_the_host_releases_its_lock_and_it_rejoins() {
    let _one = serial();
    let topo = Topology::new("fdlink", 3);
    let dir = TempDir::new("fdlink");
    let name = unique_cluster("fdlink");
    let (_hub, port) = start_hub(&topo, HB_MS, FT_MS, &[], false);
    let spawn = |h: usize, mode: &str, nodes: usize, extra: &[&str]| {
        let args = mh_args(&name, mode, nodes, &dir, extra);
        topo.worker(&topo.hosts[h].ns, "mh", &args, &hub_env(&topo, h, port))
    };
    let mut waiter = spawn(0, "lockwait", 3, &[]);
    let mut watcher = spawn(1, "watch", 3, &[]);
    // The holder's own bound on hub silence is long: what it learns once its link is
    // back comes from the cluster.
    let mut holder = spawn(2, "lockholder", 3, &["10000"]);
    let old = holder.expect_line("JOINED", Duration::from_secs(60));
    waiter.expect_line("JOINED", Duration::from_secs(60));
    watcher.expect_line("JOINED", Duration::from_secs(60));
    holder.expect_line("HELD", Duration::from_secs(30));
    dir.go("lock");
    waiter.expect_line("BLOCKED", Duration::from_secs(30));

    let down_at = mono_ns();
    topo.link_down(2);
    // The waiter prints these two in either order.
    let got = waiter.expect_lines(&["ACQUIRED", "FAILED"], Duration::from_secs(10));
    let took = ms_since(&got[0], down_at);
    println!(
        "[fdlink] host 0 acquired the lock {took:.1} ms after the link went down \
         (bound {:.0} ms)",
        detect_bound_ms()
    );
    assert_within_hang_guard("lock released", took, detect_bound_ms());
    let failed = [
        got[1].clone(),
        watcher.expect_line("FAILED", Duration::from_secs(10)),
    ];
    for (i, line) in failed.iter().enumerate() {
        let took = ms_since(line, down_at);
        println!(
            "[fdlink] host {i} saw the failure {took:.1} ms after link down \
             (bound {:.0} ms): {line}",
            detect_bound_ms()
        );
        assert_eq!(field(line, "node"), field(&old, "node"), "{line}");
        assert!(field(line, "epoch") > field(line, "start_epoch"), "{line}");
        assert_within_hang_guard("isolated", took, detect_bound_ms());
    }
    for w in [&mut waiter, &mut watcher] {
        let line = w.expect_line("AFTER", Duration::from_secs(10));
        assert_eq!(field(&line, "failed"), 0, "{line}");
        w.finish(Duration::from_secs(10));
    }

    let up_at = mono_ns();
    topo.link_up(2);
    let line = holder.expect_line("ERROR", Duration::from_secs(20));
    println!(
        "[fdlink] old node's error {:.1} ms after link up: {line}",
        ms_since(&line, up_at)
    );
    assert!(
        matches!(word(&line, "kind"), "Isolated" | "HubLost"),
        "not a clear error: {line}"
    );
    holder.finish(Duration::from_secs(10));

    // A new process on host 2 joins again, as a new incarnation.
    let mut again = spawn(2, "idle", 0, &[]);
    let new = again.expect_line("JOINED", Duration::from_secs(30));
    println!("[fdlink] old: {old}\n[fdlink] new: {new}");
    assert!(
        field(&new, "incarnation") > field(&old, "incarnation"),
        "{old} / {new}"
    );
    assert!(field(&new, "epoch") > field(&old, "epoch"));
    let st = status(&topo, port, &Key::open());
    println!(
        "[fdlink] hub: epoch={} isolations={} members={:?}",
        st.epoch,
        st.isolations,
        st.members
            .iter()
            .map(|m| (m.node, m.incarnation, m.addr.as_str()))
            .collect::<Vec<_>>()
    );
    assert_eq!(st.isolations, 1);
    assert!(st
        .members
        .iter()
        .any(|m| m.incarnation == field(&new, "incarnation")));
    assert!(st
        .members
        .iter()
        .all(|m| m.incarnation != field(&old, "incarnation")));
}

/// The hub killed: A blocked in `ack()`, B in `next_event`, C in a write held back by
/// a full replay memory, E writing freely. D (the destination that holds A's ack and
/// C's writes back) is SIGSTOPped first. Every one must get `HubLost`; how long it
/// took is printed and bounded only by the hang guard.
fn hub_killed(tag: &str, modes: &[(usize, &'static str)]) -> Vec<(&'static str, String, f64)> {
    let _one = serial();
    let topo = Topology::new(tag, 3);
    let dir = TempDir::new(tag);
    let name = unique_cluster(tag);
    // A long hub failure timeout: the stopped sink must stay a member (holding the ack
    // and the writes back) until the hub dies.
    let (mut hub, port) = start_hub(&topo, HB_MS, 30_000, &[], false);
    let nodes = modes.len() + 1;
    let spawn = |h: usize, mode: &str| {
        let args = mh_args(&name, mode, nodes, &dir, &[]);
        topo.worker(&topo.hosts[h].ns, "mh", &args, &hub_env(&topo, h, port))
    };
    let mut sink = spawn(2, "sink");
    let mut ws: Vec<(&str, Worker)> = modes.iter().map(|&(h, m)| (m, spawn(h, m))).collect();
    sink.expect_line("JOINED", Duration::from_secs(60));
    for (_, w) in &mut ws {
        w.expect_line("JOINED", Duration::from_secs(60));
    }
    sink.stop();
    dir.go("go");
    for (m, w) in &mut ws {
        let ready = match *m {
            "acker" => "ACKING",
            "eventer" => "WAITING",
            "blockedwriter" => "BLOCKED",
            "freewriter" => "WRITING",
            other => panic!("mode {other}"),
        };
        w.expect_line(ready, Duration::from_secs(30));
    }
    // Let the ack reach the hub and wait there.
    std::thread::sleep(Duration::from_millis(100));
    let killed_at = mono_ns();
    hub.kill9();
    let mut out = Vec::new();
    // The hang guard: a node still blocked this long after the kill never learns.
    let wait = Duration::from_secs_f64(hub_lost_bound_ms() * HANG_FACTOR / 1e3);
    for (m, w) in &mut ws {
        let line = w.try_expect_line("RESULT", wait).unwrap_or_else(|| {
            panic!("{m}: still blocked {wait:?} after the hub was killed (no error)")
        });
        let took = ms_since(&line, killed_at);
        println!(
            "[{tag}] {m}: {took:.1} ms after kill -9 of the hub (bound {:.0} ms): {line}",
            hub_lost_bound_ms()
        );
        out.push((*m, line, took));
    }
    for (_, w) in &mut ws {
        w.finish(Duration::from_secs(10));
    }
    out
}

/// The node's own bound on hub silence (`Config::default().failure_timeout`). A killed
/// hub's sockets are closed by the kernel, so it is usually far quicker. Printed next
/// to each measured time; asserted only as a hang guard, times [`HANG_FACTOR`].
fn hub_lost_bound_ms() -> f64 {
    Config::default().failure_timeout.as_millis() as f64
}

#[test]
fn multihost_killed_hub_gives_every_node_hub_lost_in_ack_and_write() {
    let got = hub_killed("fdhub", &[(0, "acker"), (1, "freewriter")]);
    for (m, line, took) in &got {
        assert_eq!(word(line, "kind"), "HubLost", "{m}: {line}");
        assert_within_hang_guard(&format!("{m}: HubLost"), *took, hub_lost_bound_ms());
        assert!(!msg(line).is_empty(), "{m}: the error names no reason");
    }
}

#[test]
fn multihost_killed_hub_wakes_a_node_blocked_in_next_event() {
    let got = hub_killed("fdhubev", &[(1, "eventer")]);
    for (m, line, took) in &got {
        assert_eq!(word(line, "kind"), "HubLost", "{m}: {line}");
        assert_within_hang_guard(&format!("{m}: HubLost"), *took, hub_lost_bound_ms());
    }
}

#[test]
fn multihost_killed_hub_wakes_a_write_blocked_by_back_pressure() {
    let got = hub_killed("fdhubbp", &[(1, "blockedwriter")]);
    for (m, line, took) in &got {
        assert_eq!(word(line, "kind"), "HubLost", "{m}: {line}");
        assert_within_hang_guard(&format!("{m}: HubLost"), *took, hub_lost_bound_ms());
    }
}

// ---------------------------------------------------------------------------------
// 3. Who may join.

/// Reads a refused raw client's whole answer: the hub's Hello, then its Refuse.
fn refusal(mut sock: std::net::TcpStream) -> String {
    sock.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut bytes = Vec::new();
    sock.read_to_end(&mut bytes)
        .expect("the hub closes a refused connection");
    let mut d = Decoder::new(None);
    d.push(&bytes);
    let mut why = None;
    while let Some(r) = d.next_frame().expect("the hub's frames decode") {
        if let Received::Refused(w) = r {
            let r = JoinRefusal::get(&w).expect("a refusal of this build");
            why = Some(r.to_string());
        }
    }
    why.unwrap_or_else(|| panic!("no Refuse frame in the hub's answer ({bytes:?})"))
}

#[test]
fn multihost_wrong_key_garbage_and_other_versions_are_refused_while_the_cluster_runs() {
    let _one = serial();
    let topo = Topology::new("joinref", 3);
    let dir = TempDir::new("joinref");
    let name = unique_cluster("joinref");
    let good = dir.0.join("good.key");
    let bad = dir.0.join("bad.key");
    std::fs::write(&good, format!("good secret {}\n", std::process::id())).unwrap();
    std::fs::write(&bad, "some other secret\n").unwrap();
    let key = Key::from_secret(std::fs::read_to_string(&good).unwrap().trim().as_bytes());
    let (mut hub, port) = start_hub(
        &topo,
        100,
        800,
        &[("MEMCHAN_KEY_FILE", good.display().to_string())],
        true,
    );
    let env = |h: usize, key_file: &Path| {
        [
            ("MEMCHAN_HUB", hub_addr(&topo, h, port)),
            ("MEMCHAN_KEY_FILE", key_file.display().to_string()),
        ]
    };

    // The running cluster: a pinger on host 0 broadcasts a counter every ms; this
    // process is a node on host 1 and watches it arrive.
    let mut pinger = topo.worker(
        &topo.hosts[0].ns,
        "mh",
        &mh_args(&name, "pinger", 0, &dir, &[]),
        &env(0, &good),
    );
    pinger.expect_line("JOINED", Duration::from_secs(30));
    let (cname, addr, kf) = (name.clone(), hub_addr(&topo, 1, port), good.clone());
    let me = in_ns(&topo.hosts[1].ns, move || {
        let cfg = Config::default()
            .with_hub(memchan::HubSpec::connect(addr))
            .with_key_file(kf);
        Cluster::join_with(&cname, cfg)
    })
    .expect("this process joins from host 1");
    let rx = me.segment("ping", 4096, 0o600).unwrap().map_rx().unwrap();
    let advancing = |what: &str| {
        let v0 = rx.load_u64(0).unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let v = rx.load_u64(0).unwrap();
            if v > v0 {
                println!("[joinref] cluster running {what}: counter {v0} -> {v}");
                return v;
            }
            assert!(Instant::now() < deadline, "writes stopped landing {what}");
            std::thread::sleep(Duration::from_millis(2));
        }
    };
    advancing("before");
    let refused0 = status(&topo, port, &key).refused;
    let from = &topo.hosts[2].addr;

    // (a) A node with the wrong key file.
    let mut wrong = topo.worker(
        &topo.hosts[2].ns,
        "mh",
        &mh_args(&name, "joinonly", 0, &dir, &[]),
        &env(2, &bad),
    );
    let line = wrong.expect_line("JOIN", Duration::from_secs(30));
    println!("[joinref] wrong key: {line}");
    assert!(line.starts_with("ERR "), "a wrong key joined: {line}");
    assert_eq!(word(&line, "kind"), "HubRefused", "{line}");
    assert!(msg(&line).contains("key"), "the error names no key: {line}");
    wrong.finish(Duration::from_secs(10));
    let log = hub.expect_stderr(&format!("refused peer={from}:"), Duration::from_secs(10));
    println!("[joinref] hub log: {log}");
    assert!(log.contains("key"), "{log}");
    advancing("after the wrong key");

    // (b) Garbage.
    let hub_sa: std::net::SocketAddr = hub_addr(&topo, 2, port).parse().unwrap();
    let mut sock = topo
        .connect(&topo.hosts[2].ns, hub_sa, Duration::from_secs(5))
        .expect("connect from host 2");
    sock.write_all(b"GET / HTTP/1.1\r\nHost: memchan\r\n\r\n")
        .unwrap();
    let why = refusal(sock);
    println!("[joinref] garbage refused: {why}");
    assert!(why.contains("magic"), "{why}");
    let log = hub.expect_stderr(&format!("refused peer={from}:"), Duration::from_secs(10));
    println!("[joinref] hub log: {log}");
    assert!(log.contains("magic"), "{log}");
    advancing("after garbage");

    // (c) A join frame of another protocol version (only bytes 4..6 patched: the
    // CRC no longer matches either, and the version must be what the hub names).
    let mut sock = topo
        .connect(&topo.hosts[2].ns, hub_sa, Duration::from_secs(5))
        .expect("connect from host 2");
    let join = memchan_link::proto::Join {
        hub_nonce: [0; 16],
        node_nonce: [1; 16],
        role: memchan_link::proto::ROLE_NODE,
        page_size: 0,
        pid: std::process::id(),
        uid: 0,
        gid: 0,
        cluster: name.clone(),
        host: "future".into(),
        domain: memchan_link::proto::NO_DOMAIN,
    };
    let mut frame = Vec::new();
    wire::encode(
        &mut frame,
        &key.join(&[0; 16]),
        1,
        Kind::Join,
        0,
        0,
        &[&join.put()],
    );
    let other = wire::VERSION + 1;
    frame[4..6].copy_from_slice(&other.to_le_bytes());
    sock.write_all(&frame).unwrap();
    let why = refusal(sock);
    println!("[joinref] version {other} refused: {why}");
    assert!(
        why.contains("version") && why.contains(&other.to_string()),
        "{why}"
    );
    let log = hub.expect_stderr(&format!("refused peer={from}:"), Duration::from_secs(10));
    println!("[joinref] hub log: {log}");
    assert!(log.contains("version"), "{log}");
    advancing("after another version");

    let st = status(&topo, port, &key);
    println!(
        "[joinref] hub: refused {} -> {}, joins={}, members={}",
        refused0,
        st.refused,
        st.joins,
        st.members.len()
    );
    assert_eq!(st.refused, refused0 + 3);
    assert_eq!(st.members.len(), 2, "the cluster lost a member");
    let last = advancing("at the end");
    assert!(last > 0);
    drop(rx);
    me.leave();
}
