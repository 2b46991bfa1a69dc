//! Dual rail across network namespaces (issue 12 point 8): two hosts, two rails (an
//! active hub with `--rail` in one hub namespace, its standby in a second one, each
//! with a veth pair to every host), 4 ordering workers joined with
//! `MEMCHAN_HUB=ACTIVE,STANDBY`. While they run the randomized ordering workload, the
//! active rail fails: its hub is SIGKILLed, or every link of its namespace goes down
//! (the hub keeps running, cut off). Every node must move to the standby on its own:
//! every worker finishes without an error (each operation unwraps), and the checker
//! finds no write lost, duplicated, corrupted or reordered across the switch. The
//! standby reports that it took over with every node; its copy of the tables is taken
//! after the cluster was set up (a copy is at most a heartbeat old by design).

use crate::multihost::{port_of, serial, TempDir};
use crate::ordering;
use memchan::{AtomicOp, Cluster, Config, Dest, Outcome, RxAttrs, SignalOp, TxAttrs};
use memchan_core::status::ClusterStatus;
use memchan_hub::{Hub, HubConfig};
use memchan_link::wire::Key;
use memchan_net::query_status;
use memchan_testkit::harness::{unique_cluster, Worker};
use memchan_testkit::netns::{in_ns, Topology};
use std::time::{Duration, Instant};

const NODES: u16 = 4;
const WRITES: u64 = 15_000;
const HB_MS: u64 = 50;
/// Hubs' and nodes' failure timeout: a node silent this long is lost (the rail-down
/// case is detected by it).
const FT_MS: u64 = 1000;
/// Liveness bound of every wait: not a performance claim.
const HANG_GUARD: Duration = Duration::from_secs(120);

/// Role `railhub`: `listen heartbeat_ms failure_timeout_ms (rail | standby=ADDR)`, an
/// open cluster. Prints `LISTENING addr`, serves until killed.
pub fn hub_worker(a: &[String]) {
    let hub = Hub::start(HubConfig {
        listen: a[0].clone(),
        heartbeat: Duration::from_millis(a[1].parse().unwrap()),
        failure_timeout: Duration::from_millis(a[2].parse().unwrap()),
        rail: a[3] == "rail",
        standby_of: a[3].strip_prefix("standby=").map(String::from),
        ..HubConfig::default()
    })
    .unwrap();
    println!("LISTENING {}", hub.local_addr());
    loop {
        std::thread::sleep(Duration::from_secs(1));
    }
}

fn status_in(ns: &str, port: u16) -> ClusterStatus {
    let addr = format!("127.0.0.1:{port}");
    in_ns(ns, move || query_status(&addr, &Key::open()))
        .unwrap_or_else(|e| panic!("status of the hub in {ns}: {e}"))
}

fn poll(what: &str, mut ok: impl FnMut() -> bool) {
    let t0 = Instant::now();
    while !ok() {
        assert!(t0.elapsed() < HANG_GUARD, "hang guard: {what}");
        std::thread::sleep(Duration::from_millis(5));
    }
}

enum Fault {
    KillHub,
    RailDown,
}

/// Two rails between 2 hosts: the active hub (numbering its order) in the first hub
/// namespace, its standby in a second one with veths to each host, both open clusters
/// with this file's heartbeat and failure timeout.
struct Rails {
    topo: Topology,
    rail2: String,
    active: Worker,
    standby: Worker,
    port_a: u16,
    port_b: u16,
}

impl Rails {
    fn start(tag: &str) -> Rails {
        let mut topo = Topology::new(tag, 2);
        let rail2 = topo.add_second_rail();
        let hub_args = |mode: String| {
            vec![
                "0.0.0.0:0".to_string(),
                HB_MS.to_string(),
                FT_MS.to_string(),
                mode,
            ]
        };
        let mut active = topo.worker(&topo.hub_ns, "railhub", &hub_args("rail".into()), &[]);
        let port_a = port_of(&active.expect_line("LISTENING", HANG_GUARD));
        let standby_of = format!("standby=10.203.0.1:{port_a}");
        let mut standby = topo.worker(&rail2, "railhub", &hub_args(standby_of), &[]);
        let port_b = port_of(&standby.expect_line("LISTENING", HANG_GUARD));
        Rails {
            topo,
            rail2,
            active,
            standby,
            port_a,
            port_b,
        }
    }

    /// `MEMCHAN_HUB` for a node on host `h`: both rails as it reaches them.
    fn hubs(&self, h: usize) -> String {
        let active = format!("{}:{}", self.topo.hosts[h].hub_addr, self.port_a);
        format!("{active},{}", self.topo.rail2_addr(h, self.port_b))
    }

    /// `NODES` workers of `role`, alternately on the two hosts, joined with both rails.
    fn workers(&self, role: &str, args: &[String]) -> Vec<Worker> {
        (0..usize::from(NODES))
            .map(|i| {
                let h = i % 2;
                let ns = &self.topo.hosts[h].ns;
                self.topo
                    .worker(ns, role, args, &[("MEMCHAN_HUB", self.hubs(h))])
            })
            .collect()
    }

    fn active_status(&self) -> ClusterStatus {
        status_in(&self.topo.hub_ns, self.port_a)
    }

    fn standby_rail(&self) -> memchan_core::status::RailStatus {
        status_in(&self.rail2, self.port_b)
            .rail
            .expect("a standby's rail status")
    }

    /// Waits until every node is a member mapping segment `seg` rx at the active hub,
    /// then until the standby has copied the tables since.
    fn set_up(&self, seg: &str) {
        poll("the segment mapped by every node", || {
            let st = self.active_status();
            st.members.len() == usize::from(NODES)
                && st
                    .segments
                    .iter()
                    .any(|s| s.name == seg && s.rx.len() == usize::from(NODES))
        });
        let set_up = Instant::now();
        poll("the standby's copy of the tables", || {
            let r = self.standby_rail();
            assert_eq!(r.role, "standby", "{r:?}");
            r.mirrored_ms_ago
                .is_some_and(|ms| u128::from(ms) < set_up.elapsed().as_millis())
        });
    }

    /// Frames the active hub received from its members so far.
    fn frames(&self) -> u64 {
        self.active_status()
            .members
            .iter()
            .map(|m| m.hub_side.frames_rx)
            .sum()
    }
}

fn switch_under_ordering(tag: &str, seed: u64, fault: Fault) {
    let _one = serial();
    let mut rails = Rails::start(tag);
    let dir = TempDir::new(tag);
    let name = unique_cluster(tag);
    let ft = format!("ft={FT_MS}");
    // The default replay memory: a busy cluster's switch reorders tens of thousands
    // of held packets (the standby does it a slice at a time, `hub/standby.rs`).
    let args = ordering::worker_args(&name, NODES, WRITES, seed, &dir.0, &["hold", &ft]);
    let mut ws = rails.workers("order", &args);
    rails.set_up("ord");
    // Writes under way: a quarter of them reached the active hub.
    let total = u64::from(NODES) * WRITES;
    poll("writes under way", || rails.frames() > total / 4);
    let at_fault = rails.frames();
    match fault {
        Fault::KillHub => rails.active.kill9(),
        Fault::RailDown => rails.topo.first_rail_down(),
    }
    println!("[{tag}] active rail failed with {at_fault} frames of {total} writes at its hub");
    assert!(
        at_fault < total,
        "the writes were over before the fault: nothing to switch"
    );

    for i in 0..ws.len() {
        let done = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            ws[i].expect_line("DONE", HANG_GUARD)
        }));
        if let Err(e) = done {
            // Where the workers still running are (a stuck one shows where).
            for w in &ws {
                println!("[{tag}] worker {}:\n{}", w.pid(), w.stacks());
            }
            // What the standby knew when a worker failed (a node once never reached
            // the last barrier after a switch: who it waited for shows here).
            let st = in_ns(&rails.rail2, {
                let addr = format!("127.0.0.1:{}", rails.port_b);
                move || query_status(&addr, &Key::open())
            });
            println!("[{tag}] the standby when a worker failed: {st:#?}");
            std::panic::resume_unwind(e);
        }
    }
    let st = status_in(&rails.rail2, rails.port_b);
    let r = st.rail.clone().expect("the standby's rail status");
    println!("[{tag}] standby after the switch: {r:?}");
    assert_eq!(r.role, "took over", "{r:?}");
    assert_eq!(r.resumed, (0..NODES).collect::<Vec<_>>());
    assert_eq!(st.members.len(), usize::from(NODES));
    dir.go(ordering::GO_FILE);
    for w in &mut ws {
        w.finish(HANG_GUARD);
    }
    let report = ordering::check_run(NODES, WRITES, seed, &dir.0);
    println!("[{tag}] {report}");
    assert_eq!(report.writes_checked, total);
    assert_eq!(report.receivers_checked, usize::from(NODES));
    report.assert_ok();
    if let Fault::RailDown = fault {
        rails.active.kill9();
    }
    rails.standby.kill9();
}

#[test]
fn rail_switch_on_a_killed_hub_loses_duplicates_and_reorders_nothing() {
    switch_under_ordering("rkill", 0x5EED_2001, Fault::KillHub);
}

#[test]
fn rail_switch_on_the_active_rail_going_down_loses_duplicates_and_reorders_nothing() {
    switch_under_ordering("rdown", 0x5EED_2002, Fault::RailDown);
}

/// A node that loses only its own link to the active hub must not split the cluster:
/// the standby, which still reaches the active, refuses its resume (the node gets an
/// error, and the active isolates it as with one rail), and the other node goes on
/// with the active hub.
#[test]
fn rail_standby_refuses_a_node_that_lost_only_its_own_link() {
    let _one = serial();
    let mut rails = Rails::start("rone");
    let name = unique_cluster("rone");
    let join = |h: usize| {
        let hubs = rails.hubs(h);
        let name = name.clone();
        in_ns(&rails.topo.hosts[h].ns, move || {
            let cfg = Config::default()
                .with_hub(memchan::HubSpec::parse_rails(&hubs).expect("two rails"))
                .with_failure_timeout(Duration::from_millis(FT_MS))
                .with_heartbeat(Duration::from_millis(HB_MS));
            Cluster::join_with(&name, cfg)
        })
        .expect("join")
    };
    let (lone, other) = (join(0), join(1));
    other.wait_for_members(2, HANG_GUARD).unwrap();
    let set_up = Instant::now();
    poll("the standby's copy of the tables", || {
        let r = rails.standby_rail();
        r.mirrored_ms_ago
            .is_some_and(|ms| u128::from(ms) < set_up.elapsed().as_millis())
    });
    rails.topo.link_down(0);
    // The lone node finds the active hub silent, tries the standby, is refused.
    let t0 = Instant::now();
    let err = loop {
        if let Err(e) = lone.ack() {
            break e;
        }
        assert!(
            t0.elapsed() < HANG_GUARD,
            "the lone node never saw its loss"
        );
        std::thread::sleep(Duration::from_millis(20));
    };
    println!("[rone] the lone node: {err}");
    assert!(
        err.to_string().contains("still answers"),
        "not the standby's refusal: {err}"
    );
    // The other node goes on with the active hub, which isolates the lone one (an ack
    // under way meanwhile would name it: `AckIncomplete`).
    poll("the active hub isolates the lone node", || {
        rails.active_status().members.len() == 1
    });
    let seg = other.segment("s", 4096, 0o600).unwrap();
    let rx = seg.map_rx().unwrap();
    let tx = seg
        .map_tx(
            Dest::Broadcast,
            TxAttrs {
                local_copy: true,
                ..TxAttrs::default()
            },
        )
        .unwrap();
    tx.write_u64(0, 7).unwrap();
    other.ack().unwrap();
    assert_eq!(rx.load_u64(0).unwrap(), 7);
    let r = rails.standby_rail();
    assert_eq!(r.role, "standby", "{r:?}");
    assert!(r.resumed.is_empty(), "{r:?}");
    drop(lone);
    drop(other);
    rails.active.kill9();
    rails.standby.kill9();
}

/// Role `railcount`: `cluster nodes ops out_dir ft_ms (atomic|signal|cond|request|lock|barrier)`. Maps the
/// segment `count` rx with remote reads, then adds 1 to word 0 of the lowest member's
/// copy `ops` times: with `atomic` as a remote fetch-add (the values it got go to
/// `out_dir/countN`), with `signal` as a put-with-signal deposit (the put writes the
/// op's number into the node's own word `1 + N`, the signal adds 1 to word 0), then
/// an `ack`; with `cond` as a remote fetch and a conditional write of one more,
/// again while another node's came first; with `request` as `ops` group checks (a
/// `map_tx` to a group each), then one add of `ops`; with `lock` as a remote fetch and a remote set of one more, under the
/// cluster lock; with `barrier` as `ops` barriers, barrier k after writing k into its
/// word at every other node and checked against theirs after it (then it adds `ops`
/// to word 0 at once and clears its word). Prints `DONE`, holds until `out_dir/go`, and after a barrier prints
/// `COUNT v LAST w`: word 0 and its own word as remote fetches read them.
pub fn count_worker(a: &[String]) {
    let (name, nodes, ops, out) = (
        &a[0],
        a[1].parse::<usize>().unwrap(),
        a[2].parse::<u64>().unwrap(),
        std::path::Path::new(&a[3]),
    );
    let cfg = Config::default().with_failure_timeout(Duration::from_millis(a[4].parse().unwrap()));
    let mode = a[5].as_str();
    let c = Cluster::join_with(name, cfg).unwrap();
    c.wait_for_members(nodes, Duration::from_secs(30)).unwrap();
    let me = c.node_id();
    let seg = c.segment("count", 4096, 0o600).unwrap();
    let open = RxAttrs {
        remote_read: true,
        ..RxAttrs::default()
    };
    let rx = seg.map_rx_with(open).unwrap();
    c.barrier().unwrap(); // every copy exists before any operation
    let target = c.members().into_iter().min().unwrap();
    let rma = seg.rma().unwrap();
    let word = |n: memchan::NodeId| 8 * (1 + usize::from(n.0));
    let own = word(me);
    if mode == "signal" {
        let tx = seg.map_tx(Dest::Node(target), TxAttrs::default()).unwrap();
        for k in 0..ops {
            tx.put_signal(own, &k.to_le_bytes(), 0, SignalOp::Add, 1)
                .unwrap_or_else(|e| panic!("node {}: put_signal {k}: {e}", me.0));
        }
        c.ack().unwrap();
    } else if mode == "cond" {
        // Word 0 counts by conditional writes: fetch it, then write one more if it
        // still holds that. A write applied at the switch must still report Applied:
        // one reported Lost (and so tried again) would add twice.
        let tx = seg.map_tx(Dest::Node(target), TxAttrs::default()).unwrap();
        let mut k = 0;
        while k < ops {
            let v = rma.atomic_u64(target, 0, AtomicOp::Fetch).unwrap();
            let r = tx
                .write_if_u64(0, v, v + 1)
                .unwrap_or_else(|e| panic!("node {}: conditional write {k}: {e}", me.0));
            match r.as_slice() {
                [one] if one.outcome == Outcome::Applied => k += 1,
                [one] if matches!(one.outcome, Outcome::Held(_)) => {}
                other => panic!("node {}: conditional write {k}: {other:?}", me.0),
            }
        }
    } else if mode == "request" {
        // Requests back to back (a group check each, as `map_tx` to a group makes):
        // one is nearly always in flight when the hub goes. Word 0 counts them after.
        let all: Vec<_> = c.members().into_iter().collect();
        let g = c.create_group("railcount", &all).unwrap();
        for k in 0..ops {
            seg.map_tx(Dest::Group(g), TxAttrs::default())
                .unwrap_or_else(|e| panic!("node {}: map_tx to a group {k}: {e}", me.0));
        }
        rma.atomic_u64(target, 0, AtomicOp::Add(ops)).unwrap();
    } else if mode == "lock" {
        // Word 0 is read and written back plus one under the cluster lock, by two
        // remote accesses: an add lost or doubled means two holders at once.
        let lock = c.lock("railcount").unwrap();
        for k in 0..ops {
            let held = lock
                .acquire()
                .unwrap_or_else(|e| panic!("node {}: lock {k}: {e}", me.0));
            let v = rma.atomic_u64(target, 0, AtomicOp::Fetch).unwrap();
            rma.atomic_u64(target, 0, AtomicOp::Set(v + 1)).unwrap();
            drop(held);
        }
    } else if mode == "barrier" {
        // Barrier k: each node writes k into its word at every other node first, so
        // a barrier passed before some node arrived shows as a word behind k.
        let tx = seg.map_tx(Dest::Broadcast, TxAttrs::default()).unwrap();
        let others: Vec<_> = c.members().into_iter().filter(|&n| n != me).collect();
        for k in 1..=ops {
            tx.write_u64(own, k).unwrap();
            c.barrier()
                .unwrap_or_else(|e| panic!("node {}: barrier {k}: {e}", me.0));
            for &n in &others {
                let v = rx.load_u64(word(n)).unwrap();
                assert!(
                    v >= k,
                    "node {}: barrier {k} passed with node {} at {v}",
                    me.0,
                    n.0
                );
            }
        }
        // Word 0 of the lowest member counts the barriers passed. The words are
        // cleared once every node checked the last barrier.
        rma.atomic_u64(target, 0, AtomicOp::Add(ops)).unwrap();
        c.barrier().unwrap();
        tx.write_u64(own, 0).unwrap();
        c.ack().unwrap();
    } else {
        let mut got = String::new();
        for k in 0..ops {
            let v = rma
                .atomic_u64(target, 0, AtomicOp::FetchAdd(1))
                .unwrap_or_else(|e| panic!("node {}: fetch-add {k}: {e}", me.0));
            got.push_str(&format!("{v}\n"));
        }
        std::fs::write(out.join(format!("count{}", me.0)), got).unwrap();
    }
    println!("DONE node={}", me.0);
    let go = out.join(ordering::GO_FILE);
    let t0 = Instant::now();
    while !go.exists() {
        assert!(t0.elapsed() < HANG_GUARD, "never released");
        std::thread::sleep(Duration::from_millis(10));
    }
    c.barrier().unwrap();
    let fetch = |at| rma.atomic_u64(target, at, AtomicOp::Fetch).unwrap();
    println!("COUNT {} LAST {}", fetch(0), fetch(own));
    c.barrier().unwrap();
}

/// Operations that add 1 to one word of the lowest member's copy, in flight while
/// the active hub is SIGKILLed: 4 nodes on 2 hosts, 3,000 operations each (1,000 lock rounds). Every one must be
/// applied exactly once: no error, and the word ends at the number of operations (one
/// applied twice leaves it too high, one lost too low). Remote fetch-adds must also
/// return each number below it once; a put with signal's put must leave each node's
/// last value.
fn switch_under_counting(tag: &str, mode: &str, fault: Fault) {
    // A lock round is several round trips through the hub: beside two busy loops
    // 4 x 3,000 of them took about 120 s, the hang guard (5 s on an idle machine).
    let ops: u64 = if mode == "lock" { 1000 } else { 3000 };
    let _one = serial();
    let mut rails = Rails::start(tag);
    let dir = TempDir::new(tag);
    let name = unique_cluster(tag);
    let args = vec![
        name.clone(),
        NODES.to_string(),
        ops.to_string(),
        dir.0.display().to_string(),
        FT_MS.to_string(),
        mode.to_string(),
    ];
    let mut ws = rails.workers("railcount", &args);
    rails.set_up("count");
    // At least one frame per operation of the three nodes remote to the word (a
    // fetch-add is two: the request and the target's answer).
    let base = rails.frames();
    poll("operations under way", || rails.frames() - base > ops / 2);
    match fault {
        Fault::KillHub => rails.active.kill9(),
        Fault::RailDown => rails.topo.first_rail_down(),
    }
    for w in &mut ws {
        w.expect_line("DONE", HANG_GUARD);
    }
    // A node whose operations were over before the fault switches once it notices
    // the loss (within the failure timeout): the takeover may still be under way.
    let mut r = rails.standby_rail();
    poll("the standby's takeover", || {
        r = rails.standby_rail();
        !matches!(r.role.as_str(), "standby" | "gathering" | "replaying")
    });
    println!("[{tag}] standby after the switch: {r:?}");
    assert_eq!(r.role, "took over", "{r:?}");
    let total = u64::from(NODES) * ops;
    if mode == "atomic" {
        let mut got: Vec<u64> = (0..NODES)
            .flat_map(|n| {
                let text = std::fs::read_to_string(dir.0.join(format!("count{n}")))
                    .unwrap_or_else(|e| panic!("node {n}'s values: {e}"));
                text.lines()
                    .map(|l| l.parse::<u64>().unwrap())
                    .collect::<Vec<_>>()
            })
            .collect();
        got.sort_unstable();
        let wrong: Vec<(u64, u64)> = got
            .iter()
            .copied()
            .zip(0..)
            .filter(|(v, i)| v != i)
            .take(5)
            .collect();
        assert!(
            wrong.is_empty() && got.len() as u64 == total,
            "{} values for {total} adds; first (value, expected) that differ: {wrong:?}",
            got.len()
        );
    }
    dir.go(ordering::GO_FILE);
    for w in &mut ws {
        let line = w.expect_line("COUNT", HANG_GUARD);
        let last = if mode == "signal" { ops - 1 } else { 0 };
        assert_eq!(
            line,
            format!("{total} LAST {last}"),
            "[{tag}] the word after every operation, and the node's own word"
        );
    }
    for w in &mut ws {
        w.finish(HANG_GUARD);
    }
    if let Fault::RailDown = fault {
        rails.active.kill9();
    }
    rails.standby.kill9();
}

/// Remote fetch-adds through a switch: before the target kept its answers, the word
/// ended at 12,032 of 12,000 (some adds applied twice).
#[test]
fn rail_switch_applies_every_remote_atomic_exactly_once() {
    switch_under_counting("ratom", "atomic", Fault::KillHub);
}

/// Puts with signal (deposits) through a switch.
#[test]
fn rail_switch_applies_every_put_with_signal_exactly_once() {
    switch_under_counting("rsig", "signal", Fault::KillHub);
}

/// The cluster lock through a switch: one holder at a time (a read-then-write of one
/// more under it loses no add).
#[test]
fn rail_switch_keeps_the_lock_exclusive() {
    switch_under_counting("rlock", "lock", Fault::KillHub);
}

/// Conditional writes through a switch: each reports what it did once (before the
/// target kept its outcomes, one applied just before the switch reported `Lost`).
#[test]
fn rail_switch_reports_every_conditional_write() {
    switch_under_counting("rcond", "cond", Fault::KillHub);
}

/// Requests through a switch: each is answered, one in flight when the hub died
/// included (the node's link sends it again to the standby unless the lost hub
/// released it, and a request released before it is answered, an ack or a barrier,
/// is asked again).
#[test]
fn rail_switch_answers_every_request() {
    switch_under_counting("rreq", "request", Fault::KillHub);
}

/// The same through the active rail going down: frames the hub sent after it went
/// are lost, a request's answer among them.
#[test]
fn rail_switch_on_the_rail_going_down_answers_every_request() {
    switch_under_counting("rreqd", "request", Fault::RailDown);
}

/// Barriers through the active rail going down (its hub lives on, unreachable: the
/// nodes notice by its silence, and the standby's copy of the tables is as old as
/// its last receipt): every node passes every barrier, none early. (A node once never
/// arrived at a barrier after such a switch, in the ordering test.)
#[test]
fn rail_switch_on_the_rail_going_down_keeps_every_barrier() {
    switch_under_counting("rbard", "barrier", Fault::RailDown);
}

/// Barriers through a switch: every node passes every barrier, none before every node
/// arrived.
#[test]
fn rail_switch_keeps_every_barrier() {
    switch_under_counting("rbar", "barrier", Fault::KillHub);
}
