//! Membership on one host: join and leave with node ids and epochs; a killed node is
//! detected within the bound, isolated, and every survivor sees one event for it.

use memchan::{Cluster, Config, EventKind};
use memchan_testkit::harness::{field, mono_ns, unique_cluster, Transport, Worker};
use memchan_testkit::on_every_transport;
use std::time::Duration;

/// Detection times are liveness checks here, not performance claims: a shared,
/// oversubscribed CI machine can deschedule the failure detector past docs/spec.md's bound
/// without anything being wrong. So the tests check that detection happens, print how
/// long it took, and fail only past this many times docs/spec.md's bound: a hang guard.
const HANG_FACTOR: u32 = 10;
/// Hang guard of a wait for a worker's line or an event (not a speed claim).
const WAIT: Duration = Duration::from_secs(60);

/// Worker: `cluster nodes mode` — mode `wait` reports failure events with the time it
/// saw them; mode `idle` just stays a member.
pub fn worker(a: &[String]) {
    let (name, nodes, mode) = (&a[0], a[1].parse::<usize>().unwrap(), a[2].as_str());
    let c = Cluster::join(name).unwrap();
    c.wait_for_members(nodes, Duration::from_secs(20)).unwrap();
    println!(
        "JOINED node={} incarnation={}",
        c.node_id().0,
        c.incarnation()
    );
    if mode == "idle" {
        loop {
            std::thread::sleep(Duration::from_secs(1));
        }
    }
    if mode == "lockholder" {
        let lock = c.lock("L").unwrap();
        let _held = lock.acquire().unwrap();
        println!("HELD");
        loop {
            std::thread::sleep(Duration::from_secs(1));
        }
    }
    if mode == "broadcaster" {
        // Page-sized broadcasts, back to back: most of its time is spent holding the
        // point of global order.
        let seg = c.segment("bc", 64 * 4096, 0o600).unwrap();
        let _rx = seg.map_rx().unwrap();
        let tx = seg
            .map_tx(memchan::Dest::Broadcast, Default::default())
            .unwrap();
        let page = vec![0xabu8; 4096];
        println!("BROADCASTING");
        for i in 0usize.. {
            if let Err(e) = tx.write((i % 64) * 4096, &page) {
                println!("REFUSED {e}");
                return;
            }
        }
    }
    if mode == "writer" {
        // Writes a counter into node 0's rx until the cluster refuses it.
        let tx = c
            .segment("h", 4096, 0o600)
            .unwrap()
            .map_tx(memchan::Dest::Node(memchan::NodeId(0)), Default::default())
            .unwrap();
        for i in 1.. {
            match tx.write_u64(0, i) {
                Ok(()) => std::thread::sleep(Duration::from_millis(1)),
                Err(memchan::Error::Isolated { .. }) => {
                    println!("ISOLATED after={}", i - 1);
                    return;
                }
                Err(e) => panic!("unexpected error {e}"),
            }
        }
    }
    let start_epoch = c.epoch();
    loop {
        let e = c
            .next_event(Some(Duration::from_secs(30)))
            .expect("an event");
        if e.kind == EventKind::Failed {
            println!(
                "FAILED node={} epoch={} start_epoch={start_epoch} at={} members={}",
                e.node.0,
                e.epoch,
                mono_ns(),
                c.members().len()
            );
            c.barrier().unwrap(); // stay a member until every survivor has reported
            return;
        }
    }
}

fn join_and_leave_give_ids_epochs_and_events(t: &Transport) {
    let name = unique_cluster("members");
    let a = t.join(&name).unwrap();
    let e0 = a.epoch();
    let b = t.join(&name).unwrap();
    assert_ne!(a.node_id(), b.node_id());
    assert!(b.epoch() > e0);
    let joined = a.next_event(Some(Duration::from_secs(1))).unwrap();
    assert_eq!((joined.kind, joined.node), (EventKind::Joined, b.node_id()));
    assert_eq!(a.members(), vec![a.node_id(), b.node_id()]);
    let (b_id, b_inc) = (b.node_id(), b.incarnation());
    b.leave();
    let left = a.next_event(Some(Duration::from_secs(1))).unwrap();
    assert_eq!((left.kind, left.node), (EventKind::Left, b_id));
    assert!(left.epoch > joined.epoch);
    assert_eq!(a.members(), vec![a.node_id()]);
    // Rejoining reuses the free id with a new incarnation.
    let b2 = t.join(&name).unwrap();
    assert_eq!(b2.node_id(), b_id);
    assert!(b2.incarnation() > b_inc);
    // Through a hub the event reaches `a` a moment after `b2` is welcomed.
    assert!(a.next_event(Some(Duration::from_secs(2))).is_some());
}
on_every_transport!(join_and_leave_give_ids_epochs_and_events);

fn killed_node_is_detected_within_bound_and_seen_by_all(t: &Transport) {
    let name = unique_cluster("kill");
    let mut victim = t.spawn("member", &[name.clone(), "4".into(), "idle".into()]);
    let mut survivors: Vec<Worker> = (0..3)
        .map(|_| t.spawn("member", &[name.clone(), "4".into(), "wait".into()]))
        .collect();
    let v = victim.expect_line("JOINED", Duration::from_secs(30));
    for s in &mut survivors {
        s.expect_line("JOINED", Duration::from_secs(30));
    }
    let victim_id = field(&v, "node");
    std::thread::sleep(Duration::from_millis(200));
    let killed_at = mono_ns();
    victim.kill9();
    let mut epochs = Vec::new();
    for s in &mut survivors {
        let line = s.expect_line("FAILED", Duration::from_secs(1) * HANG_FACTOR);
        assert_eq!(field(&line, "node"), victim_id, "{line}");
        assert!(
            field(&line, "epoch") > field(&line, "start_epoch"),
            "{line}"
        );
        assert_eq!(field(&line, "members"), 3, "{line}");
        let took = Duration::from_nanos(field(&line, "at") - killed_at);
        // Default bound: a dead process is seen within one heartbeat (150 ms), a
        // silent one within 0.97 s; both under the 1 s promised. Here only detected
        // at all, within the hang guard (see HANG_FACTOR).
        println!("detected after {took:?} (SPEC: under 1 s)");
        assert!(
            took < Duration::from_secs(1) * HANG_FACTOR,
            "detected after {took:?}"
        );
        epochs.push(field(&line, "epoch"));
        s.finish(Duration::from_secs(10));
    }
    // One isolation, one epoch: every survivor saw the same event.
    assert!(epochs.windows(2).all(|w| w[0] == w[1]), "{epochs:?}");
}
on_every_transport!(killed_node_is_detected_within_bound_and_seen_by_all);

fn hung_node_is_isolated_by_heartbeat_timeout(t: &Transport) {
    // SIGSTOP: the process exists but is silent; the heartbeat timeout isolates it,
    // and its next write gets `Isolated`. Through a hub nothing it writes after that
    // lands; on one host one write in flight across the stop still can (below).
    let name = unique_cluster("hung");
    let cfg = Config::default()
        .with_heartbeat(Duration::from_millis(50))
        .with_failure_timeout(Duration::from_millis(300));
    let a = t.join_with(&name, cfg).unwrap();
    let rx = a.segment("h", 4096, 0o600).unwrap().map_rx().unwrap();
    let mut victim = t.spawn("member", &[name.clone(), "2".into(), "writer".into()]);
    let v = victim.expect_line("JOINED", Duration::from_secs(30));
    let _ = a.next_event(Some(Duration::from_secs(1))); // its join
    while rx.load_u64(0).unwrap() < 10 {
        std::thread::sleep(Duration::from_millis(1)); // it is writing
    }
    victim.stop();
    let stopped_at = std::time::Instant::now();
    // Bound: the failure timeout plus a heartbeat, plus as much again for the
    // detector's own tick; only a hang guard here (see HANG_FACTOR).
    let bound = Duration::from_millis(300 + 50 + 300);
    let e = a
        .next_event(Some(bound * HANG_FACTOR))
        .expect("failure event");
    assert_eq!(
        (e.kind, u64::from(e.node.0)),
        (EventKind::Failed, field(&v, "node"))
    );
    let took = stopped_at.elapsed();
    println!("isolated after {took:?} (bound {bound:?})");
    assert!(took < bound * HANG_FACTOR, "isolated after {took:?}");
    assert_eq!(a.members(), vec![a.node_id()]);
    let at_isolation = rx.load_u64(0).unwrap();
    victim.resume();
    let line = victim.expect_line("ISOLATED", Duration::from_secs(10));
    let after = field(&line, "after");
    let last = rx.load_u64(0).unwrap();
    if t.is_hub() {
        // Through a hub a write returns once queued on the link: the last ones queued
        // before the stop were never ordered, and never applied. The hub orders every
        // write, so nothing the node sends lands after its isolation.
        assert!(after >= at_isolation, "{line}");
        assert_eq!(last, at_isolation, "a write landed after isolation");
    } else {
        // On one host isolation is cooperative (review 4c63486, risk R2): `deposit`
        // checks `rx_gen` and then stores, so a write stopped between the two lands
        // when the process resumes, after the `Failed` event. Not asserted until that
        // gap is closed. What does hold: nothing is lost or half-done (the last write
        // the node saw succeed is the value there), and the gap is at most the one
        // write in flight across the stop.
        assert_eq!(last, after, "{line}");
        assert!(
            last <= at_isolation + 1,
            "{line}: at isolation {at_isolation}"
        );
    }
    victim.finish(Duration::from_secs(10));
}
on_every_transport!(
    hung_node_is_isolated_by_heartbeat_timeout,
    memchan_testkit::harness::Timing {
        heartbeat: std::time::Duration::from_millis(50),
        failure_timeout: std::time::Duration::from_millis(300),
    }
);

#[test]
fn node_hung_while_holding_the_order_point_does_not_stall_the_cluster() {
    // The victim broadcasts page after page and is stopped, most likely inside the
    // point of global order. The survivor must still get its own ordered writes
    // through after the failure bound, and the victim is either killed (it held the
    // point: its packet was finished for it) or refused on resume (it did not).
    let name = unique_cluster("hungholder");
    let cfg = Config::default()
        .with_heartbeat(Duration::from_millis(50))
        .with_failure_timeout(Duration::from_millis(300));
    let a = Cluster::join_with(&name, cfg).unwrap();
    let mut victim = Worker::spawn("member", &[name.clone(), "2".into(), "broadcaster".into()]);
    victim.expect_line("BROADCASTING", Duration::from_secs(30));
    let seg = a.segment("bc", 64 * 4096, 0o600).unwrap();
    let rx = seg.map_rx().unwrap();
    let attrs = memchan::TxAttrs {
        local_copy: true,
        ..Default::default()
    };
    let tx = seg.map_tx(memchan::Dest::Broadcast, attrs).unwrap();
    std::thread::sleep(Duration::from_millis(50));
    victim.stop();
    let t0 = std::time::Instant::now();
    for i in 1..=1000u64 {
        tx.write_u64(8, i).unwrap(); // ordered: passes the order point
    }
    assert_eq!(rx.load_u64(8).unwrap(), 1000);
    // A stalled order point would hang the loop above for good; the time it took is
    // information (failure timeout, take-over, then 1000 writes: well under 3 s on an
    // idle machine), bounded only as a hang guard (see HANG_FACTOR).
    let took = t0.elapsed();
    println!("1000 ordered writes past the hung holder in {took:?}");
    assert!(
        took < Duration::from_secs(3) * HANG_FACTOR,
        "stalled {took:?}"
    );
    let failed = std::iter::from_fn(|| a.next_event(Some(Duration::from_secs(5))))
        .find(|e| e.kind == EventKind::Failed);
    assert!(failed.is_some(), "no failure event");
    victim.resume(); // a no-op if the cluster killed it
    let status = loop {
        if let Some(s) = victim.child.try_wait().unwrap() {
            break Some(s);
        }
        if t0.elapsed() > Duration::from_secs(10) {
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    let killed = match status {
        // Killed by the survivor that took the order point over.
        Some(s) if !s.success() => true,
        // Not holding it: resumed, refused with a typed error, exited cleanly.
        Some(_) => false,
        None => panic!("the isolated broadcaster neither died nor stopped sending"),
    };
    println!("victim held the order point when stopped (killed): {killed}");
    // Every page the survivor sees is whole: the victim's last packet was finished or
    // never started, never left half-applied.
    let mut page = vec![0u8; 4096];
    for p in 1..64 {
        rx.read(p * 4096, &mut page).unwrap();
        assert!(
            page.iter().all(|&b| b == page[0]),
            "page {p} is half-applied"
        );
    }
}

#[test]
fn a_joiner_reaps_a_dead_lock_holder_and_frees_its_lock() {
    // The survivor's heartbeat is 10 s, so it has not noticed the killed holder when a
    // new node joins: the joiner finds the dead process and must release its lock in
    // every copy of the lock page, or the lock stays held forever.
    let name = unique_cluster("reap");
    let slow = Config::default()
        .with_heartbeat(Duration::from_secs(10))
        .with_failure_timeout(Duration::from_secs(20));
    let a = Cluster::join_with(&name, slow).unwrap();
    let lock = a.lock("L").unwrap();
    let mut holder = Worker::spawn("member", &[name.clone(), "2".into(), "lockholder".into()]);
    holder.expect_line("HELD", Duration::from_secs(30));
    assert!(lock.try_acquire().unwrap().is_none(), "the worker holds it");
    holder.kill9();
    let _joiner = Cluster::join(&name).unwrap();
    // The joiner reaps dead members inside `join`, before it returns (and `kill9` has
    // waited for the holder), so the lock is free now. No polling: a poll long enough
    // to ride out a busy machine would also outlast the survivor's own heartbeat,
    // which would free the lock without the joiner's help.
    let g = lock
        .try_acquire()
        .unwrap()
        .expect("the dead holder's lock was not released by the joiner");
    g.release().unwrap();
    let failed = std::iter::from_fn(|| a.next_event(Some(Duration::ZERO)))
        .any(|e| e.kind == EventKind::Failed);
    assert!(failed, "the reaped node's failure was announced");
}

/// The names in /dev/shm of cluster `name` that belong to node `id` (its receive
/// memory and, in a host domain, its wake-up FIFO): `….n<id>` or `….n<id>.<more>`.
fn files_of(name: &str, id: u64) -> Vec<String> {
    let mark = format!(".n{id}");
    std::fs::read_dir("/dev/shm")
        .expect("/dev/shm")
        .filter_map(|e| e.ok()?.file_name().into_string().ok())
        .filter(|f| f.starts_with(&format!("memchan.{name}.")))
        .filter(|f| {
            f.match_indices(&mark).any(|(at, m)| {
                let rest = &f[at + m.len()..];
                rest.is_empty() || rest.starts_with('.')
            })
        })
        .collect()
}

/// A killed node leaves no memory behind in /dev/shm once its failure is seen: the
/// survivors of its host (or of its host domain) remove what it cannot any more.
fn a_killed_nodes_memory_leaves_dev_shm(t: &Transport) {
    let name = unique_cluster("leftover");
    let c = t.join(&name).unwrap();
    let seg = c.segment("data", c.page_size(), 0o600).unwrap();
    let _rx = seg.map_rx().unwrap();
    // Two workers: through a hub with host domains the second shares this node's
    // domain (they alternate), and is the one killed.
    let mut other = t.spawn("rma-peer", std::slice::from_ref(&name));
    other.expect_line("READY", WAIT);
    let mut victim = t.spawn("rma-peer", std::slice::from_ref(&name));
    let id = field(&victim.expect_line("READY", WAIT), "node");
    let had = files_of(&name, id);
    if matches!(t, Transport::Hub(_)) {
        assert!(
            had.is_empty(),
            "a hub node outside any domain keeps its memory private: {had:?}"
        );
    } else {
        assert!(!had.is_empty(), "no files of node {id} found to watch");
    }
    victim.kill9();
    loop {
        match c.next_event(Some(WAIT)) {
            Some(e) if u64::from(e.node.0) == id && e.kind == EventKind::Failed => break,
            Some(_) => {}
            None => panic!("no failure event for the killed node"),
        }
    }
    let deadline = std::time::Instant::now() + WAIT;
    let mut left = files_of(&name, id);
    while !left.is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(10));
        left = files_of(&name, id);
    }
    assert!(
        left.is_empty(),
        "left behind by killed node {id}: {left:?} (it had {had:?})"
    );
    other.kill9();
}
on_every_transport!(a_killed_nodes_memory_leaves_dev_shm);
