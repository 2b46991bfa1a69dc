//! Host domains: nodes of a hub cluster that share this host's memory (and name the
//! same domain) store point-to-point writes into each other's receive memory; what
//! reaches another domain or several nodes goes through the hub, and the ordering
//! rules hold across the two paths.

use memchan_core::rma::AtomicOp;
use memchan_core::{Dest, NodeId, RxAttrs, TxAttrs};
use memchan_hub::Hub;
use memchan_link::wire::Key;
use memchan_net::node::{NetConfig, Node};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

#[allow(dead_code)]
mod common;

const SEG: usize = 1 << 16;

fn hub(key: &Key) -> Hub {
    common::keyed_hub(key, |c| {
        c.heartbeat = Duration::from_millis(50);
        c.failure_timeout = Duration::from_millis(2000);
    })
    .0
}

/// A node of `cluster` at `hub` in host domain `domain`.
fn node(hub: &Hub, key: &Key, cluster: &str, domain: &str) -> Node {
    let cfg = NetConfig {
        host_domain: Some(domain.to_string()),
        direct: true,
        ..common::node_cfg(
            &hub.local_addr().to_string(),
            key,
            Duration::from_millis(50),
            Duration::from_millis(2000),
        )
    };
    Node::join(cluster, cfg).expect("join")
}

/// A keyed hub and two nodes of `cluster` in host domain `x`, both seeing both.
fn pair(cluster: &str) -> (Hub, Node, Node) {
    let key = Key::from_secret(cluster.as_bytes());
    let h = hub(&key);
    let a = node(&h, &key, cluster, "x");
    let b = node(&h, &key, cluster, "x");
    b.wait_for_members(2, Duration::from_secs(10)).unwrap();
    (h, a, b)
}

/// Frames the hub received from node `n` so far.
fn frames_from(hub: &Hub, n: NodeId) -> u64 {
    let st = hub.status();
    let m = st.members.iter().find(|m| m.node == n.0).expect("a member");
    m.hub_side.frames_rx
}

/// A write to a node of the same domain is a store; one to another domain goes on a
/// direct link between the two nodes (the hub sees none of it), or, with direct links
/// off, through the hub (a frame each).
#[test]
fn a_write_within_a_domain_is_a_store_and_one_to_another_domain_a_direct_frame() {
    writes_within_and_across_domains(true);
}

#[test]
fn a_write_to_another_domain_without_direct_links_is_a_frame_to_the_hub() {
    writes_within_and_across_domains(false);
}

fn writes_within_and_across_domains(direct: bool) {
    let key = Key::from_secret(b"domains");
    let h = hub(&key);
    let cluster = if direct { "dom-store" } else { "dom-store-hub" };
    let node = |domain: &str| {
        let cfg = NetConfig {
            host_domain: Some(domain.to_string()),
            direct,
            ..common::node_cfg(
                &h.local_addr().to_string(),
                &key,
                Duration::from_millis(50),
                Duration::from_millis(2000),
            )
        };
        Node::join(cluster, cfg).expect("join")
    };
    let a = node("x");
    let b = node("x");
    let c = node("y");
    c.wait_for_members(3, Duration::from_secs(10)).unwrap();
    let rb = b.segment("s", SEG, 0o600).unwrap().map_rx().unwrap();
    let rc = c.segment("s", SEG, 0o600).unwrap().map_rx().unwrap();
    let seg = a.segment("s", SEG, 0o600).unwrap();
    let to_b = seg.map_tx(Dest::Node(b.id()), TxAttrs::default()).unwrap();
    let to_c = seg.map_tx(Dest::Node(c.id()), TxAttrs::default()).unwrap();
    const N: u64 = 500;

    let before = frames_from(&h, a.id());
    for i in 1..=N {
        to_b.write_u64(64, i).unwrap();
    }
    a.ack().unwrap();
    // Visible at once: it is in b's memory, with no frame to wait for.
    assert_eq!(rb.load_u64(64).unwrap(), N);
    let same = frames_from(&h, a.id()) - before;
    // Heartbeats only (a frame per write would be at least N).
    assert!(same < N / 2, "{same} frames reached the hub for {N} stores");

    if direct {
        // The first write opens the link (and goes through the hub meanwhile).
        to_c.write_u64(64, 0).unwrap();
        let t0 = std::time::Instant::now();
        while !a.direct_links().contains(&c.id()) {
            assert!(
                t0.elapsed() < Duration::from_secs(30),
                "no direct link opened"
            );
            std::thread::sleep(Duration::from_millis(5));
        }
        a.ack().unwrap();
    }
    let before = frames_from(&h, a.id());
    for i in 1..=N {
        to_c.write_u64(64, i).unwrap();
    }
    a.ack().unwrap();
    assert_eq!(rc.load_u64(64).unwrap(), N);
    let other = frames_from(&h, a.id()) - before;
    if direct {
        // The link's opening (a request) and the ack, not the writes.
        assert!(
            other < N / 2,
            "{other} frames reached the hub for {N} direct writes"
        );
    } else {
        assert!(
            other >= N,
            "only {other} frames for {N} writes to another domain"
        );
    }
}

/// Waits until `n` sees exactly the members `want`.
fn sees(n: &Node, want: &[&Node]) {
    let want: memchan_core::NodeSet = want.iter().map(|m| m.id()).collect();
    let t0 = std::time::Instant::now();
    while n.members() != want {
        assert!(
            t0.elapsed() < Duration::from_secs(10),
            "node {} sees {:?}, not {want:?}",
            n.id().0,
            n.members()
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

/// The hub tells each node which members share its domain: a joiner in its Welcome,
/// the others in the join's event; a node that leaves stops being one, and its id
/// reused in another domain is not one.
#[test]
fn each_node_knows_the_members_of_its_domain_as_they_join_and_leave() {
    let key = Key::from_secret(b"neighbours");
    let h = hub(&key);
    let cluster = "dom-neighbours";
    let a = node(&h, &key, cluster, "x");
    let c = node(&h, &key, cluster, "y");
    let b = node(&h, &key, cluster, "x");
    sees(&a, &[&a, &b, &c]);
    sees(&c, &[&a, &b, &c]);
    // b learnt a from its Welcome; a learnt b from b's join event.
    assert_eq!(b.neighbours(), vec![a.id()]);
    assert_eq!(a.neighbours(), vec![b.id()]);
    assert_eq!(c.neighbours(), vec![]);
    let gone = b.id();
    b.leave();
    sees(&a, &[&a, &c]);
    assert_eq!(a.neighbours(), vec![]);
    let d = node(&h, &key, cluster, "y");
    assert_eq!(d.id(), gone, "the hub reuses the free id");
    sees(&a, &[&a, &c, &d]);
    sees(&c, &[&a, &c, &d]);
    assert_eq!(a.neighbours(), vec![]);
    assert_eq!(c.neighbours(), vec![d.id()]);
    assert_eq!(d.neighbours(), vec![c.id()]);
}

#[test]
fn a_store_never_overtakes_an_earlier_write_through_the_hub() {
    // Rule 1 across the two paths: a broadcast (through the hub) and then a store
    // into a node of the sender's domain reach that node in that order.
    let (_h, a, b) = pair("dom-sticky");
    let rb = b.segment("s", SEG, 0o600).unwrap().map_rx().unwrap();
    let seg = a.segment("s", SEG, 0o600).unwrap();
    let all = seg.map_tx(Dest::Broadcast, TxAttrs::default()).unwrap();
    let to_b = seg.map_tx(Dest::Node(b.id()), TxAttrs::default()).unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let reader = {
        let done = done.clone();
        std::thread::spawn(move || {
            let mut checked = 0u64;
            while !done.load(Ordering::Acquire) {
                let stored = rb.load_u64(8).unwrap();
                let broadcast = rb.load_u64(0).unwrap();
                assert!(
                    broadcast >= stored,
                    "store {stored} visible before broadcast {stored} (the broadcast word held {broadcast})"
                );
                checked += 1;
            }
            (checked, rb.load_u64(0).unwrap(), rb.load_u64(8).unwrap())
        })
    };
    const N: u64 = 2000;
    for i in 1..=N {
        all.write_u64(0, i).unwrap();
        to_b.write_u64(8, i).unwrap();
    }
    a.ack().unwrap();
    done.store(true, Ordering::Release);
    let (checked, w, v) = reader.join().expect("the reader found the order kept");
    assert!(checked > 0);
    assert_eq!((w, v), (N, N));
    drop(b);
}

/// Page attributes open to remote reads and atomics.
fn open() -> RxAttrs {
    RxAttrs {
        remote_read: true,
        ..RxAttrs::default()
    }
}

#[test]
fn remote_reads_and_atomics_within_a_domain_are_loads_and_atomics() {
    let key = Key::from_secret(b"rma");
    let h = hub(&key);
    let a = node(&h, &key, "dom-rma", "x");
    let b = node(&h, &key, "dom-rma", "x");
    let c = node(&h, &key, "dom-rma", "y");
    c.wait_for_members(3, Duration::from_secs(10)).unwrap();
    let rb = b
        .segment("s", SEG, 0o600)
        .unwrap()
        .map_rx_with(open())
        .unwrap();
    let rc = c
        .segment("s", SEG, 0o600)
        .unwrap()
        .map_rx_with(open())
        .unwrap();
    let rma = a.segment("s", SEG, 0o600).unwrap().rma().unwrap();
    const N: u64 = 300;

    for (target, rx, far) in [(b.id(), &rb, false), (c.id(), &rc, true)] {
        let before = frames_from(&h, a.id());
        for i in 0..N {
            assert_eq!(
                rma.atomic_u64(target, 64, AtomicOp::FetchAdd(1)).unwrap(),
                i
            );
            assert_eq!(rma.get_u64(target, 64).unwrap(), i + 1);
        }
        let mut buf = [0u8; 16];
        rma.get(target, 60, &mut buf).unwrap();
        assert_eq!(buf[4..12], (N).to_ne_bytes());
        let nbi = rma.get_nbi(target, 64, 8).unwrap();
        a.ack().unwrap();
        assert_eq!(nbi.take().unwrap(), N.to_ne_bytes());
        assert_eq!(rx.load_u64(64).unwrap(), N);
        let frames = frames_from(&h, a.id()) - before;
        if far {
            // On the direct link to the other domain's node once the first access
            // opened it: the hub reads a few frames, heartbeats among them.
            assert!(
                a.direct_links().contains(&target),
                "no direct link to {target}"
            );
            assert!(
                frames < N / 2,
                "{frames} frames reached the hub for {N} atomics and gets on a direct link"
            );
        } else {
            // Heartbeats only (a frame per access would be at least 2N).
            assert!(
                frames < N / 2,
                "{frames} frames reached the hub for {} accesses in the domain",
                2 * N
            );
        }
    }

    // Page 1 of b's copy closed to remote access: refused by name, nothing changed.
    let page = 4096;
    rb.set_attrs(page, page, RxAttrs::default()).unwrap();
    let r = rma.atomic_u64(b.id(), page + 8, AtomicOp::Set(9));
    assert!(
        matches!(r, Err(memchan_core::Error::RemoteReadOff { node, offset, .. }) if node == b.id() && offset == page + 8),
        "{r:?}"
    );
    let mut buf = [0u8; 16];
    let r = rma.get(b.id(), page - 8, &mut buf);
    assert!(
        matches!(r, Err(memchan_core::Error::RemoteReadOff { offset, .. }) if offset == page),
        "{r:?}"
    );
    assert_eq!(rb.load_u64(page + 8).unwrap(), 0);

    // Load/store access to b's copy (every page open again); a node of another
    // domain has none to give.
    assert!(matches!(
        rma.peer_memory(b.id()),
        Err(memchan_core::Error::RemoteReadOff { .. })
    ));
    rb.set_attrs(page, page, open()).unwrap();
    let mem = rma.peer_memory(b.id()).unwrap();
    assert_eq!(mem.len(), SEG);
    // SAFETY: offset 64 of a SEG-byte mapping, 8-aligned, mapped while `mem` lives.
    let w = unsafe { &*(mem.as_ptr().add(64) as *const std::sync::atomic::AtomicU64) };
    assert_eq!(w.load(Ordering::Acquire), N);
    w.store(5, Ordering::Release);
    assert_eq!(rb.load_u64(64).unwrap(), 5);
    assert!(matches!(
        rma.peer_memory(c.id()),
        Err(memchan_core::Error::Unsupported(_))
    ));
    // What `SHMEM_TEAM_SHARED` is made of: b yes; c (another domain) and a (itself) no.
    assert!(rma.shares_memory_with(b.id()));
    assert!(!rma.shares_memory_with(c.id()));
    assert!(!rma.shares_memory_with(a.id()));
}

#[test]
fn a_read_within_a_domain_sees_an_earlier_write_through_the_hub() {
    // The sticky rule for reads: a get from a node of the sender's domain, after a
    // broadcast (through the hub) that reaches it, returns what the broadcast wrote.
    let (h, a, b) = pair("dom-sticky-read");
    let _rb = b
        .segment("s", SEG, 0o600)
        .unwrap()
        .map_rx_with(open())
        .unwrap();
    let seg = a.segment("s", SEG, 0o600).unwrap();
    let all = seg.map_tx(Dest::Broadcast, TxAttrs::default()).unwrap();
    let rma = seg.rma().unwrap();
    let before = frames_from(&h, a.id());
    const N: u64 = 2000;
    for i in 1..=N {
        all.write_u64(0, i).unwrap();
        assert_eq!(
            rma.get_u64(b.id(), 0).unwrap(),
            i,
            "a get overtook broadcast {i}"
        );
    }
    // The gets were loads: the hub saw the broadcasts and their acks, no requests of
    // remote access (which would be a third frame per round).
    let frames = frames_from(&h, a.id()) - before;
    assert!(frames < 2 * N + N / 2, "{frames} frames for {N} rounds");
}

#[test]
fn a_blocked_waiter_wakes_for_a_store_into_its_notify_page() {
    let (_h, a, b) = pair("dom-wake");
    let rb = b
        .segment("s", SEG, 0o600)
        .unwrap()
        .map_rx_with(RxAttrs {
            notify: true,
            ..RxAttrs::default()
        })
        .unwrap();
    let to_b = a
        .segment("s", SEG, 0o600)
        .unwrap()
        .map_tx(Dest::Node(b.id()), TxAttrs::default())
        .unwrap();
    let writer = std::thread::spawn(move || {
        for i in 1..=20u64 {
            to_b.write_u64(0, i).unwrap();
            std::thread::yield_now();
        }
        a
    });
    let mut last = 0;
    while last < 20 {
        assert!(
            rb.wait(Some(Duration::from_secs(20))).unwrap(),
            "no wake-up"
        );
        last = rb.load_u64(0).unwrap();
    }
    drop(writer.join().unwrap());
}

#[test]
fn a_destination_that_maps_its_memory_again_receives_the_stores() {
    let (_h, a, b) = pair("dom-again");
    let sb = b.segment("s", SEG, 0o600).unwrap();
    let to_b = a
        .segment("s", SEG, 0o600)
        .unwrap()
        .map_tx(Dest::Node(b.id()), TxAttrs::default())
        .unwrap();
    let first = sb.map_rx().unwrap();
    to_b.write_u64(0, 1).unwrap();
    assert_eq!(first.load_u64(0).unwrap(), 1);
    drop(first);
    let second = sb.map_rx().unwrap();
    to_b.write_u64(0, 2).unwrap();
    a.ack().unwrap();
    // The sender's view of the first mapping was retired: the store lands in the new
    // one (or went through the hub while it looked again).
    assert_eq!(second.load_u64(0).unwrap(), 2);
}

#[test]
fn two_clusters_of_one_name_on_one_host_never_share_memory() {
    let key = Key::from_secret(b"twins");
    let (h1, h2) = (hub(&key), hub(&key));
    let a1 = node(&h1, &key, "dom-twins", "x");
    let b1 = node(&h1, &key, "dom-twins", "x");
    let a2 = node(&h2, &key, "dom-twins", "x");
    let b2 = node(&h2, &key, "dom-twins", "x");
    // The same ids in both clusters, the same segment: only the hubs differ.
    assert_eq!((a1.id(), b1.id()), (a2.id(), b2.id()));
    let r1 = b1.segment("s", SEG, 0o600).unwrap().map_rx().unwrap();
    let r2 = b2.segment("s", SEG, 0o600).unwrap().map_rx().unwrap();
    let t1 = a1
        .segment("s", SEG, 0o600)
        .unwrap()
        .map_tx(Dest::Node(b1.id()), TxAttrs::default())
        .unwrap();
    t1.write_u64(0, 7).unwrap();
    a1.ack().unwrap();
    assert_eq!(r1.load_u64(0).unwrap(), 7);
    assert_eq!(
        r2.load_u64(0).unwrap(),
        0,
        "a write crossed into the other cluster"
    );
    drop((a2, b2));
}

/// A TCP proxy that forwards both ways until [`Proxy::cut`], then swallows everything
/// and keeps the connections open: the node behind it does not learn that the hub
/// isolated it.
struct Proxy {
    addr: String,
    cut: Arc<AtomicBool>,
}

impl Proxy {
    fn to(target: String) -> Proxy {
        use std::io::{Read, Write};
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = l.local_addr().unwrap().to_string();
        let cut = Arc::new(AtomicBool::new(false));
        let c = cut.clone();
        std::thread::spawn(move || {
            for down in l.incoming().flatten() {
                let up = std::net::TcpStream::connect(&target).unwrap();
                for (mut from, mut to) in [
                    (down.try_clone().unwrap(), up.try_clone().unwrap()),
                    (up, down.try_clone().unwrap()),
                ] {
                    let c = c.clone();
                    std::thread::spawn(move || {
                        let mut buf = [0u8; 65536];
                        while let Ok(n) = from.read(&mut buf) {
                            if n == 0 {
                                break;
                            }
                            if !c.load(Ordering::Acquire) && to.write_all(&buf[..n]).is_err() {
                                break;
                            }
                        }
                    });
                }
            }
        });
        Proxy { addr, cut }
    }

    fn cut(&self) {
        self.cut.store(true, Ordering::Release);
    }
}

#[test]
fn a_node_failed_by_the_hub_stores_nothing_more_into_its_hosts_nodes() {
    // The sender's link is cut without its knowing: the hub isolates it after its
    // failure timeout, while the sender's own (long) one has not run out. The node it
    // stores into hears of the failure and fences it off its receive memory: the
    // sender's later writes take the hub's path, which refuses them.
    let key = Key::from_secret(b"fence");
    let h = hub(&key);
    let a = node(&h, &key, "dom-fence", "x");
    let proxy = Proxy::to(h.local_addr().to_string());
    let v = Node::join(
        "dom-fence",
        NetConfig {
            host_domain: Some("x".into()),
            direct: true,
            ..common::node_cfg(
                &proxy.addr,
                &key,
                Duration::from_millis(50),
                Duration::from_secs(60),
            )
        },
    )
    .expect("the victim joins through the proxy");
    a.wait_for_members(2, Duration::from_secs(10)).unwrap();
    let rx = a.segment("s", SEG, 0o600).unwrap().map_rx().unwrap();
    let tx = v
        .segment("s", SEG, 0o600)
        .unwrap()
        .map_tx(Dest::Node(a.id()), TxAttrs::default())
        .unwrap();
    tx.write_u64(0, 1).unwrap();
    assert_eq!(rx.load_u64(0).unwrap(), 1, "a store");
    proxy.cut();
    let failed = loop {
        let e = a
            .next_event(Some(Duration::from_secs(60)))
            .expect("the hub fails the silent victim");
        if e.kind == memchan_core::EventKind::Failed {
            break e;
        }
    };
    assert_eq!(failed.node, v.id());
    // The victim has not heard: its writes still return, and none lands.
    for i in 2..100u64 {
        let _ = tx.write_u64(0, i);
    }
    assert_eq!(rx.load_u64(0).unwrap(), 1, "a failed node's store landed");
    drop(tx);
    drop(v);
}

#[test]
fn a_joining_node_removes_what_gone_nodes_of_other_runs_left() {
    use rustix::fs::{FileType, Mode, OFlags, CWD};
    // Two nodes of an earlier run, by the names a domain gives them: node 1's process
    // is gone (nobody reads its FIFO), node 2's lives (this test holds its FIFO open
    // to read, as its owner would).
    let prefix = format!("memchan.sweep-{}.h00000000deadbeef.x", std::process::id());
    let file = |n: &str| format!("/dev/shm/{prefix}.{n}");
    // Made in the order a node makes them, so that another test's node, whose join
    // sweeps every other domain, sees them as this test means them: node 2's FIFO
    // goes into place already open for reading (as `Domain::make_wake` does), and
    // node 1's last, so that a sweep that sees it unread sees its memory too.
    let fifo = |n: &str| {
        rustix::fs::mknodat(CWD, n, FileType::Fifo, Mode::from_raw_mode(0o600), 0).unwrap();
    };
    let making = file("making");
    fifo(&making);
    let _reader = rustix::fs::open(
        making.as_str(),
        OFlags::RDWR | OFlags::NONBLOCK | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .unwrap();
    std::fs::rename(&making, file("n2.wake")).unwrap();
    for n in ["s0.g1.n1", "s3.g2.n1", "s0.g1.n2", "s0.g1.n11"] {
        std::fs::write(file(n), b"memory").unwrap();
    }
    fifo(&file("n1.wake"));
    let exists = |n: &str| std::path::Path::new(&file(n)).exists();

    let key = Key::from_secret(b"sweep");
    let h = hub(&key);
    let _a = node(&h, &key, "dom-sweep", "x");
    for gone in ["n1.wake", "s0.g1.n1", "s3.g2.n1"] {
        assert!(!exists(gone), "{gone} of a gone node is still there");
    }
    // A live node's files, and a file of another node id, stay.
    for kept in ["n2.wake", "s0.g1.n2", "s0.g1.n11"] {
        assert!(exists(kept), "{kept} was removed");
        let _ = std::fs::remove_file(file(kept));
    }
}

#[test]
fn handles_share_one_mapping_of_each_destination() {
    // A tx mapping or remote-access handle per thread (the C API's) must not map,
    // populate and lock the destination's whole memory once each.
    let (_h, a, b) = pair("dom-share");
    let _rb = b
        .segment("s", SEG, 0o600)
        .unwrap()
        .map_rx_with(open())
        .unwrap();
    let seg = a.segment("s", SEG, 0o600).unwrap();
    let txs: Vec<_> = (0..4)
        .map(|_| seg.map_tx(Dest::Node(b.id()), TxAttrs::default()).unwrap())
        .collect();
    let rmas: Vec<_> = (0..4).map(|_| seg.rma().unwrap()).collect();
    for (i, (tx, rma)) in txs.iter().zip(&rmas).enumerate() {
        tx.write_u64(0, i as u64 + 1).unwrap();
        assert_eq!(rma.get_u64(b.id(), 0).unwrap(), i as u64 + 1);
    }
    // b's receive memory: its own mapping, and a's one view of it.
    let of_b = format!(".x.s0.g1.n{}", b.id().0);
    let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
    let n = maps
        .lines()
        .filter(|l| l.contains("memchan.dom-share.h") && l.ends_with(&of_b))
        .count();
    assert_eq!(n, 2, "mappings of b's receive memory:\n{maps}");
}
