//! The global clock (docs/spec.md, Semantics 10) on every transport, and across hosts whose
//! clocks really differ (each host's node in a time namespace of its own).
//!
//! A reading `X` with bound `bX` says the cluster's time at the moment of the call was
//! within `X ± bX`. Two readings of one moment on two nodes therefore differ by at
//! most the sum of their bounds, and a reading taken after another (one node saw the
//! other's write first) can be earlier by at most that sum. The test makes one event
//! per round, a broadcast write that every node waits for, and brackets each node's
//! view of it with readings it takes just before its last look that missed the write
//! and just after the look that saw it. The event happened, at every node, after the
//! writer's reading before the write and before the writer's reading once every
//! node answered (on one host: once the write returned, since it is applied at every
//! destination by then), so every bracket must overlap the writer's within the sum
//! of the bounds. A node whose clock were off by more than its bound in either
//! direction breaks one side. Nothing here bounds wall-clock time or a speed.

use memchan::{Cluster, Config, Dest, Error, GlobalTime, HubSpec, RxAttrs, TxAttrs};
use memchan_hub::{Hub, HubConfig};
use memchan_testkit::harness::{field, mono_ns, unique_cluster, Transport, Worker};
use memchan_testkit::on_every_transport;
use std::time::{Duration, Instant};

/// Events per test.
const ROUNDS: u64 = 20;

/// Polls until this node's clock is synchronised (at once on one host; through a hub
/// after a few of its time packets), with a hang guard.
fn synced(c: &Cluster) -> GlobalTime {
    let start = Instant::now();
    loop {
        match c.global_time() {
            Ok(t) => return t,
            Err(Error::ClockNotSynchronised { .. })
                if start.elapsed() < Duration::from_secs(60) =>
            {
                std::thread::sleep(Duration::from_millis(5))
            }
            Err(e) => panic!("global_time: {e}"),
        }
    }
}

/// Worker: `cluster k n rounds`. Node `k` of `n`; `k` 0 writes each round's event
/// (word 0 = round) and waits for every answer (word `8k` = round); the others wait
/// for the event and answer. Prints its readings around each.
pub fn worker(a: &[String]) {
    let name = &a[0];
    let k: usize = a[1].parse().unwrap();
    let n: usize = a[2].parse().unwrap();
    let rounds: u64 = a[3].parse().unwrap();
    let c = Cluster::join(name).unwrap();
    c.wait_for_members(n, Duration::from_secs(60)).unwrap();
    let seg = c.segment("clock", 4096, 0o600).unwrap();
    let rx = seg
        .map_rx_with(RxAttrs {
            notify: true,
            ..RxAttrs::default()
        })
        .unwrap();
    let tx = seg.map_tx(Dest::Broadcast, TxAttrs::default()).unwrap();
    let first = synced(&c);
    // This process's own monotonic clock beside the cluster's: across time namespaces
    // they differ by the namespace's offset, which the clock must have taken out.
    println!(
        "SYNCED k={k} local={} global={} bound={}",
        mono_ns(),
        first.ns,
        first.bound_ns
    );
    c.barrier().unwrap();
    let gt = || c.global_time().unwrap();
    let wait = || {
        rx.wait(Some(Duration::from_millis(50))).unwrap();
    };
    for r in 1..=rounds {
        if k == 0 {
            let s0 = gt();
            tx.write_u64(0, r).unwrap();
            let s1 = gt();
            while !(1..n).all(|j| rx.load_u64(8 * j).unwrap() == r) {
                wait();
            }
            let e = gt();
            println!(
                "SEND r={r} s0={} bs0={} s1={} bs1={} e={} be={}",
                s0.ns, s0.bound_ns, s1.ns, s1.bound_ns, e.ns, e.bound_ns
            );
        } else {
            // `before` is read before each look; the look that missed the write was
            // after the last such reading, the look that saw it before `after`.
            let mut missed: Option<GlobalTime> = None;
            let after = loop {
                let before = gt();
                if rx.load_u64(0).unwrap() == r {
                    break gt();
                }
                missed = Some(before);
                wait();
            };
            tx.write_u64(8 * k, r).unwrap();
            let (a, ba) = missed.map_or((0, 0), |m| (m.ns, m.bound_ns));
            println!(
                "RECV k={k} r={r} missed={} a={a} ba={ba} c={} bc={}",
                u8::from(missed.is_some()),
                after.ns,
                after.bound_ns
            );
        }
    }
    c.barrier().unwrap();
    println!("DONE k={k}");
}

/// Reads every worker's lines and checks each round's brackets (see the module doc);
/// `applied_on_return`: the write is applied everywhere when it returns (one host).
fn check(ws: &mut [Worker], n: usize, applied_on_return: bool) {
    let t = Duration::from_secs(120);
    let mut send = Vec::new();
    let mut recv = vec![Vec::new(); n];
    for (k, w) in ws.iter_mut().enumerate() {
        for _ in 1..=ROUNDS {
            let line = w.expect_line(if k == 0 { "SEND" } else { "RECV" }, t);
            if k == 0 {
                send.push(line);
            } else {
                recv[k].push(line);
            }
        }
        w.expect_line("DONE", t);
    }
    // Each leaves the cluster itself (a killed last node would leave its files).
    for w in ws.iter_mut() {
        w.finish(t);
    }
    let mut bad = Vec::new();
    let (mut max_bound, mut max_gap) = (0u64, 0i64);
    for r in 0..ROUNDS as usize {
        let s = &send[r];
        let (s0, bs0) = (field(s, "s0") as i128, field(s, "bs0") as i128);
        let (s1, bs1) = (field(s, "s1") as i128, field(s, "bs1") as i128);
        let (e, be) = (field(s, "e") as i128, field(s, "be") as i128);
        // The latest moment the event can have reached a node.
        let (w, bw) = if applied_on_return {
            (s1, bs1)
        } else {
            (e, be)
        };
        for (k, lines) in recv.iter().enumerate().skip(1) {
            let l = &lines[r];
            let (c, bc) = (field(l, "c") as i128, field(l, "bc") as i128);
            max_bound = max_bound.max(bc as u64).max(bs0 as u64);
            max_gap = max_gap.max((c - s0) as i64);
            // Node k saw the write after the writer's reading before it.
            if c + bc + bs0 < s0 {
                bad.push(format!(
                    "round {r} node {k}: saw the event before it was written: {l} / {s}"
                ));
            }
            // The writer's last reading came after node k's reading.
            if c > e + be + bc {
                bad.push(format!(
                    "round {r} node {k}: read after the writer's end: {l} / {s}"
                ));
            }
            // Node k's look that missed the write came before the write reached it.
            if field(l, "missed") == 1 {
                let (a, ba) = (field(l, "a") as i128, field(l, "ba") as i128);
                if a > w + bw + ba {
                    bad.push(format!(
                        "round {r} node {k}: missed the event after it had landed: {l} / {s}"
                    ));
                }
            }
        }
    }
    println!(
        "global clock: {} rounds x {} nodes, largest bound {max_bound} ns, largest event-to-notice gap {max_gap} ns",
        ROUNDS,
        n - 1
    );
    assert!(
        bad.is_empty(),
        "readings outside their bounds:\n{}",
        bad.join("\n")
    );
}

fn global_clock_brackets_one_event_on_every_node(t: &Transport) {
    let name = unique_cluster("clock");
    let n = 4;
    let mut ws: Vec<Worker> = (0..n)
        .map(|k| {
            let args = [
                name.clone(),
                k.to_string(),
                n.to_string(),
                ROUNDS.to_string(),
            ];
            t.spawn("clock", &args)
        })
        .collect();
    for w in &mut ws {
        let l = w.expect_line("SYNCED", Duration::from_secs(60));
        assert!(field(&l, "bound") > 0, "a measured bound is never 0: {l}");
    }
    check(&mut ws, n, !t.is_hub());
}
on_every_transport!(global_clock_brackets_one_event_on_every_node);

/// Bad input: the clock asked before it is synchronised is a typed error, on a hub
/// whose clock is off (deterministically never synchronised); on one host the clock
/// is synchronised from the join on; through a working hub it becomes so.
#[test]
fn global_clock_not_synchronised_is_a_typed_error() {
    let off = Hub::start(HubConfig {
        clock_period: None,
        ..HubConfig::default()
    })
    .unwrap();
    let cfg = Config::default().with_hub(HubSpec::connect(off.local_addr().to_string()));
    let c = Cluster::join_with(&unique_cluster("clockoff"), cfg).unwrap();
    for _ in 0..3 {
        match c.global_time() {
            Err(Error::ClockNotSynchronised {
                time_packets: 0,
                probes: 0,
                ..
            }) => {}
            other => panic!("expected ClockNotSynchronised, got {other:?}"),
        }
        // Round trips through the hub: nothing it sends makes a sample.
        c.ack().unwrap();
        c.barrier().unwrap();
    }
    let e = c.global_time().unwrap_err();
    assert_eq!(e.code(), 30);
    assert!(e.to_string().contains("not synchronised"), "{e}");
    // `memchan status` shows no bound for it.
    assert_eq!(off.status().members[0].clock_bound_ns, None);
    drop(c);

    let shm = Transport::Shm.join(&unique_cluster("clockshm")).unwrap();
    let g = shm.global_time().expect("one host: synchronised at once");
    assert!(g.bound_ns > 0);

    let hub = Transport::hub_timed(Default::default());
    let name = unique_cluster("clockon");
    let c = hub.join(&name).unwrap();
    let g = synced(&c);
    assert!(g.bound_ns > 0);
    // Its next probe (one per heartbeat) reports its bound to the hub's status.
    let start = Instant::now();
    let shown = loop {
        if let Some(b) = hub.status(&name).members[0].clock_bound_ns {
            break b;
        }
        assert!(
            start.elapsed() < Duration::from_secs(60),
            "no bound in the status"
        );
        std::thread::sleep(Duration::from_millis(5));
    };
    assert!(shown > 0);
    // Readings move forward (within their bounds) once synchronised.
    let h = c.global_time().unwrap();
    assert!(h.ns + h.bound_ns + g.bound_ns >= g.ns, "{g:?} then {h:?}");
}

/// Across hosts: three host namespaces (one node each) whose monotonic clocks are set
/// apart by time namespaces (+1000 s, +7 s, +250 s), a hub in its own namespace. Each
/// node's global time must have the offset taken out (its local clock and the
/// cluster's differ by about it), and every event's brackets must hold.
#[test]
fn multihost_global_clock_agrees_across_time_namespaces() {
    use memchan_testkit::netns::Topology;
    let _one = super::multihost::serial();
    let topo = Topology::new("clock", 3);
    let (_hub, port) = super::multihost::start_hub(&topo, 100, 3000, &[], false);
    let name = unique_cluster("mhclock");
    let offsets_s = [1000u64, 7, 250];
    let n = 3;
    let mut ws: Vec<Worker> = (0..n)
        .map(|k| {
            let off = offsets_s[k].to_string();
            let cmd = topo.command(
                &topo.hosts[k].ns,
                "unshare",
                &["--time", "--monotonic", &off],
            );
            let args = [
                name.clone(),
                k.to_string(),
                n.to_string(),
                ROUNDS.to_string(),
            ];
            let env = [("MEMCHAN_HUB", super::multihost::hub_addr(&topo, k, port))];
            Worker::spawn_wrapped(cmd, "clock", &args, &env)
        })
        .collect();
    for (k, w) in ws.iter_mut().enumerate() {
        let l = w.expect_line("SYNCED", Duration::from_secs(60));
        let (local, global) = (field(&l, "local") as i128, field(&l, "global") as i128);
        // The hub runs without an offset: the node's local clock is ahead of the
        // cluster's by its namespace's offset (within a second: the two were read a
        // moment apart).
        let ahead = local - global;
        let want = offsets_s[k] as i128 * 1_000_000_000;
        assert!(
            (ahead - want).abs() < 1_000_000_000,
            "node {k}: local - global = {ahead} ns, namespace offset {want} ns: {l}"
        );
        println!(
            "node {k}: offset {} s taken out, first bound {} ns",
            offsets_s[k],
            field(&l, "bound")
        );
    }
    check(&mut ws, n, false);
}
