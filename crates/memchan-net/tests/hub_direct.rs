//! Direct links between nodes of different hosts (`direct.rs`): a point-to-point
//! write goes one hop, and rule 1 holds across the direct path and the hub's.
//! Two host domains on loopback stand for two hosts (nodes of different domains
//! share no memory).

#[allow(dead_code)]
mod common;
use memchan_core::{Dest, TxAttrs};
use memchan_link::wire::Key;
use memchan_net::node::{NetConfig, Node};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

const HANG_GUARD: Duration = Duration::from_secs(60);

fn node(addr: &str, key: &Key, cluster: &str, domain: &str) -> Node {
    let cfg = NetConfig {
        host_domain: Some(domain.to_string()),
        ..common::node_cfg_std(addr, key)
    };
    Node::join(cluster, cfg).expect("join")
}

/// A keyed hub and two nodes of `cluster`, each its own host domain, both seeing
/// both.
fn two_hosts(cluster: &str) -> (memchan_hub::Hub, Node, Node) {
    let key = Key::from_secret(cluster.as_bytes());
    let (hub, addr) = common::keyed_hub(&key, |_| {});
    let a = node(&addr, &key, cluster, "ha");
    let b = node(&addr, &key, cluster, "hb");
    b.wait_for_members(2, HANG_GUARD).unwrap();
    a.wait_for_members(2, HANG_GUARD).unwrap();
    (hub, a, b)
}

/// Waits until `a` writes to `b` on a direct link (the first write opens it).
fn direct_up(a: &Node, b: &Node) {
    let t0 = Instant::now();
    while !a.direct_links().contains(&b.id()) {
        assert!(t0.elapsed() < HANG_GUARD, "no direct link opened");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// One sender alternates point-to-point writes to B (its direct link after each ack,
/// the hub's path after a broadcast) and broadcasts (the hub), each a number one
/// above the last; B, reading the two words in both orders while they come, never
/// sees a write without every earlier one.
#[test]
fn a_senders_writes_stay_in_order_across_its_direct_link_and_the_hub() {
    const N: u64 = 2000;
    let (_hub, a, b) = two_hosts("direct-order");
    let rb = b.segment("s", 4096, 0o600).unwrap().map_rx().unwrap();
    let seg = a.segment("s", 4096, 0o600).unwrap();
    let p2p = seg.map_tx(Dest::Node(b.id()), TxAttrs::default()).unwrap();
    let all = seg.map_tx(Dest::Broadcast, TxAttrs::default()).unwrap();
    p2p.write_u64(16, 1).unwrap();
    direct_up(&a, &b);
    a.ack().unwrap();
    let done = &AtomicBool::new(false);
    let rb = std::thread::scope(|s| {
        let check = s.spawn(move || {
            let mut checks = 0u64;
            while !done.load(Ordering::Acquire) || checks == 0 {
                // Point to point (odd numbers) first: every broadcast before it is in.
                let p = rb.load_u64(0).unwrap();
                let q = rb.load_u64(8).unwrap();
                assert!(
                    p == 0 || q + 1 >= p,
                    "direct write {p} before broadcast {}",
                    p - 1
                );
                // Broadcast (even) first: every direct write before it is in.
                let q = rb.load_u64(8).unwrap();
                let p = rb.load_u64(0).unwrap();
                assert!(
                    q == 0 || p + 1 >= q,
                    "broadcast {q} before direct write {}",
                    q - 1
                );
                checks += 1;
            }
            (checks, rb)
        });
        for i in 1..=N {
            p2p.write_u64(0, 2 * i - 1).unwrap();
            all.write_u64(8, 2 * i).unwrap();
            if i % 4 == 0 {
                // Point-to-point writes follow the hub's path until an ack (the
                // sticky path), then take the direct link again.
                a.ack().unwrap();
            }
        }
        a.ack().unwrap();
        done.store(true, Ordering::Release);
        let (checks, rb) = check.join().unwrap();
        assert!(checks > 0);
        rb
    });
    assert_eq!(rb.load_u64(0).unwrap(), 2 * N - 1);
    assert_eq!(rb.load_u64(8).unwrap(), 2 * N);
    assert!(
        a.direct_links().contains(&b.id()),
        "the writes went on the direct link"
    );
}

/// The destination leaves: its direct link ends, the sender's later writes go through
/// the hub (which drops them: no destination), and acks still answer.
#[test]
fn a_destination_that_leaves_ends_its_direct_link_and_nothing_hangs() {
    let (_hub, a, b) = two_hosts("direct-leave");
    let rb = b.segment("s", 4096, 0o600).unwrap().map_rx().unwrap();
    let p2p = a
        .segment("s", 4096, 0o600)
        .unwrap()
        .map_tx(Dest::Node(b.id()), TxAttrs::default())
        .unwrap();
    p2p.write_u64(0, 1).unwrap();
    direct_up(&a, &b);
    p2p.write_u64(0, 2).unwrap();
    a.ack().unwrap();
    assert_eq!(rb.load_u64(0).unwrap(), 2);
    let gone = b.id();
    drop(rb);
    b.leave();
    let t0 = Instant::now();
    while a.direct_links().contains(&gone) {
        assert!(
            t0.elapsed() < HANG_GUARD,
            "the direct link outlived its destination"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let _ = p2p.write_u64(0, 3);
    // Nothing is owed by a node that left: the ack answers (or names it).
    match a.ack() {
        Ok(()) | Err(memchan_core::Error::AckIncomplete(_)) => {}
        Err(e) => panic!("ack after the destination left: {e}"),
    }
}

/// `write_no_notify` wakes no waiter across hosts, on the direct link and through the
/// hub: a waiter on a notify page sleeps through quiet writes (all landed: acked)
/// and wakes for the one loud write after them. (Without it, message-layer nodes that
/// tell each other "asleep" woke each other for ever.)
fn quiet_writes_wake_no_waiter(direct: bool, cluster: &str) {
    const LOUD: usize = 512;
    let (_hub, a, b) = two_hosts(cluster);
    let notify = memchan_core::RxAttrs {
        notify: true,
        ..Default::default()
    };
    let rb = b
        .segment("q", 4096, 0o600)
        .unwrap()
        .map_rx_with(notify)
        .unwrap();
    let seg = a.segment("q", 4096, 0o600).unwrap();
    let dest = if direct {
        Dest::Node(b.id())
    } else {
        Dest::Broadcast
    };
    let tx = seg.map_tx(dest, TxAttrs::default()).unwrap();
    tx.write_u64(LOUD + 8, 1).unwrap();
    if direct {
        direct_up(&a, &b);
    }
    a.ack().unwrap();
    let ready = &AtomicBool::new(false);
    std::thread::scope(|s| {
        let waiter = s.spawn(move || {
            // What the set-up's write counted is taken in before the wait.
            rb.wait(Some(Duration::ZERO)).unwrap();
            ready.store(true, Ordering::Release);
            assert!(rb.wait(Some(HANG_GUARD)).unwrap(), "never woken");
            assert_eq!(
                rb.load_u64(LOUD).unwrap(),
                1,
                "woken before the loud write landed: a quiet write notified"
            );
            for i in 0..32 {
                assert_eq!(rb.load_u64(i * 8).unwrap(), i as u64 + 100);
            }
        });
        while !ready.load(Ordering::Acquire) {
            std::thread::yield_now();
        }
        for i in 0..32u64 {
            tx.write_no_notify(i as usize * 8, &(i + 100).to_le_bytes())
                .unwrap();
        }
        a.ack().unwrap();
        tx.write_u64(LOUD, 1).unwrap();
        waiter.join().unwrap();
    });
    assert_eq!(a.direct_links().contains(&b.id()), direct);
}

#[test]
fn quiet_writes_wake_no_waiter_on_a_direct_link() {
    quiet_writes_wake_no_waiter(true, "direct-quiet");
}

#[test]
fn quiet_writes_wake_no_waiter_through_the_hub() {
    quiet_writes_wake_no_waiter(false, "hub-quiet");
}

/// The link A opened carries B's writes to A as well: one TCP connection for the
/// pair (an answer rides the stream of the question), B's writes in order and all
/// applied at A.
#[test]
fn a_pairs_writes_both_ways_share_the_link_the_first_writer_opened() {
    const N: u64 = 500;
    let (_hub, a, b) = two_hosts("direct-pair");
    let ra = a.segment("p", 4096, 0o600).unwrap().map_rx().unwrap();
    let rb = b.segment("p", 4096, 0o600).unwrap().map_rx().unwrap();
    let ta = a
        .segment("p", 4096, 0o600)
        .unwrap()
        .map_tx(Dest::Node(b.id()), TxAttrs::default())
        .unwrap();
    let tb = b
        .segment("p", 4096, 0o600)
        .unwrap()
        .map_tx(Dest::Node(a.id()), TxAttrs::default())
        .unwrap();
    ta.write_u64(0, 1).unwrap();
    direct_up(&a, &b);
    a.ack().unwrap();
    assert_eq!(rb.load_u64(0).unwrap(), 1);
    // B's writes to A: on A's link, without a handshake of their own.
    direct_up(&b, &a);
    for i in 1..=N {
        tb.write_u64(8, i).unwrap();
        tb.write_u64(16, i).unwrap();
    }
    b.ack().unwrap();
    assert_eq!(ra.load_u64(8).unwrap(), N);
    assert_eq!(ra.load_u64(16).unwrap(), N);
    assert_eq!(a.direct_connections(), 1, "A has a second connection");
    assert_eq!(b.direct_connections(), 1, "B opened a link of its own");
}

/// Frames the hub has read from node `n` so far.
fn hub_frames_from(hub: &memchan_hub::Hub, n: memchan_core::NodeId) -> u64 {
    hub.status()
        .members
        .iter()
        .find(|m| m.node == n.0)
        .map_or(0, |m| m.hub_side.frames_rx)
}

/// Remote reads and atomics of another host's node go on the pair's link once it is
/// up (the hub reads almost nothing from the origin meanwhile): each read sees the
/// writes sent before it, each atomic lands once.
#[test]
fn remote_reads_and_atomics_ride_the_direct_link_behind_the_writes() {
    const N: u64 = 200;
    let (hub, a, b) = two_hosts("direct-rma");
    let open = memchan_core::RxAttrs {
        remote_read: true,
        ..Default::default()
    };
    let rb = b
        .segment("r", 4096, 0o600)
        .unwrap()
        .map_rx_with(open)
        .unwrap();
    let seg = a.segment("r", 4096, 0o600).unwrap();
    let tx = seg.map_tx(Dest::Node(b.id()), TxAttrs::default()).unwrap();
    let rma = seg.rma().unwrap();
    tx.write_u64(0, 1).unwrap();
    direct_up(&a, &b);
    a.ack().unwrap();
    let before = hub_frames_from(&hub, a.id());
    for i in 1..=N {
        tx.write_u64(0, i).unwrap();
        assert_eq!(
            rma.get_u64(b.id(), 0).unwrap(),
            i,
            "a read overtook a write"
        );
        assert_eq!(
            rma.atomic_u64(b.id(), 8, memchan_core::rma::AtomicOp::FetchAdd(1))
                .unwrap(),
            i - 1
        );
    }
    assert_eq!(rb.load_u64(8).unwrap(), N);
    let through_hub = hub_frames_from(&hub, a.id()) - before;
    // The hub path would be 2N requests and N packets; heartbeats and time probes
    // are what the hub may read meanwhile.
    assert!(
        through_hub < N / 2,
        "{through_hub} frames reached the hub from the origin"
    );
}
