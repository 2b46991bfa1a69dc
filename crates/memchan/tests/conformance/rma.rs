//! Remote read and remote atomics (docs/spec.md, Semantics 8, issue 12 points 1 and 3) on
//! every transport, with real processes: a get returns the target's own copy without
//! the target taking part, only where its pages allow remote read and the caller may
//! read; atomics hammered from several processes and threads, mixed with the owner's
//! own CPU atomics, lose nothing and a compare-and-swap admits one holder at a time;
//! 8 KiB pages; every bad input gets its typed error.

use memchan::{Cluster, Config, Dest, Error, EventKind, NodeId, PageSize, RxAttrs, TxAttrs};
use memchan_testkit::harness::{field, unique_cluster, Transport, Worker};
use memchan_testkit::on_every_transport;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(60);

fn open() -> RxAttrs {
    RxAttrs {
        remote_read: true,
        ..RxAttrs::default()
    }
}

/// Worker: `cluster` — maps `data` (3 pages) rx, remote read on pages 0 and 2 only,
/// writes its own copy (through a tx mapping to itself), says READY and then only
/// sleeps: every get is served without it.
pub fn target_worker(a: &[String]) {
    let c = Cluster::join(&a[0]).unwrap();
    let seg = c.open_segment("data").unwrap();
    let page = c.page_size();
    let rx = seg.map_rx_with(open()).unwrap();
    rx.set_attrs(page, page, RxAttrs::default()).unwrap();
    let me = c.node_id();
    let tx = seg.map_tx(Dest::Node(me), TxAttrs::default()).unwrap();
    let pattern: Vec<u8> = (0..3 * page)
        .map(|i| (i * 7 + usize::from(me.0)) as u8)
        .collect();
    tx.write(0, &pattern).unwrap();
    tx.write_u64(16, 0xfeed_0000 + u64::from(me.0)).unwrap();
    c.ack().unwrap();
    println!("READY node={}", me.0);
    loop {
        std::thread::sleep(Duration::from_secs(1));
    }
}

fn expected(page: usize, node: NodeId) -> Vec<u8> {
    let mut p: Vec<u8> = (0..3 * page)
        .map(|i| (i * 7 + usize::from(node.0)) as u8)
        .collect();
    p[16..24].copy_from_slice(&(0xfeed_0000 + u64::from(node.0)).to_ne_bytes());
    p
}

fn get_reads_the_targets_copy_only_where_allowed(t: &Transport) {
    let name = unique_cluster("rma-get");
    let a = t.join(&name).unwrap();
    let page = a.page_size();
    let seg = a.segment("data", 3 * page, 0o600).unwrap();
    let mut w = t.spawn("rma-target", std::slice::from_ref(&name));
    let target = NodeId(field(&w.expect_line("READY", WAIT), "node") as u16);
    let rma = seg.rma().unwrap();
    let want = expected(page, target);

    // The target's copy, word and bytes, served without it.
    assert_eq!(
        rma.get_u64(target, 16).unwrap(),
        0xfeed_0000 + u64::from(target.0)
    );
    assert_eq!(
        rma.get_u32(target, 16).unwrap(),
        u32::from_ne_bytes(want[16..20].try_into().unwrap())
    );
    let mut buf = vec![0u8; page];
    rma.get(target, 0, &mut buf).unwrap();
    assert_eq!(buf, want[..page]);
    rma.get(target, 2 * page + 5, &mut buf[..100]).unwrap();
    assert_eq!(buf[..100], want[2 * page + 5..2 * page + 105]);
    // Non-blocking, completed by the ack.
    let p1 = rma.get_nbi(target, 8, 64).unwrap();
    let p2 = rma.get_nbi(target, 2 * page, page).unwrap();
    a.ack().unwrap();
    assert_eq!(p1.take().unwrap(), want[8..72]);
    assert_eq!(p2.take().unwrap(), want[2 * page..]);

    // Page 1 does not allow remote read: every operation touching it is refused,
    // naming the first offset refused.
    let off = |r: Result<(), Error>| match r {
        Err(Error::RemoteReadOff { node, offset, .. }) if node == target => offset,
        other => panic!("expected RemoteReadOff, got {other:?}"),
    };
    assert_eq!(off(rma.get(target, page + 8, &mut [0; 8])), page + 8);
    assert_eq!(off(rma.get(target, page - 8, &mut [0; 16])), page);
    assert_eq!(off(rma.get_u64(target, page).map(drop)), page);
    assert_eq!(off(rma.fetch_add_u64(target, page, 1).map(drop)), page);
    assert_eq!(
        off(rma.get_nbi(target, page, 8).unwrap().take().map(drop)),
        page
    );

    // Bad input, checked before anything is sent.
    let size = 3 * page;
    assert!(matches!(
        rma.get(target, size - 4, &mut [0; 8]),
        Err(Error::OutOfBounds { .. })
    ));
    assert!(matches!(
        rma.get_u64(target, usize::MAX - 3),
        Err(Error::OutOfBounds { .. })
    ));
    assert!(matches!(
        rma.get_nbi(target, size, 1),
        Err(Error::OutOfBounds { .. })
    ));
    assert!(matches!(
        rma.get_u64(target, 4),
        Err(Error::Unaligned { .. })
    ));
    assert!(matches!(
        rma.get_u32(target, 2),
        Err(Error::Unaligned { .. })
    ));
    assert!(matches!(
        rma.swap_u64(target, 12, 1),
        Err(Error::Unaligned { .. })
    ));
    assert!(matches!(
        rma.fetch_add_u32(target, size, 1),
        Err(Error::OutOfBounds { .. })
    ));
    for n in [300u16, 250, u16::MAX] {
        assert!(
            matches!(rma.get_u64(NodeId(n), 0), Err(Error::UnknownNode(x)) if x == NodeId(n)),
            "{n}"
        );
    }
    // A member that does not map the segment rx (this node) has no copy.
    let me = a.node_id();
    assert!(matches!(rma.get_u64(me, 0), Err(Error::NotMapped { node, .. }) if node == me));
    assert!(matches!(rma.fetch_u64(me, 0), Err(Error::NotMapped { .. })));
    // Nothing above changed the target's copy.
    rma.get(target, 0, &mut buf).unwrap();
    assert_eq!(buf, want[..page]);

    // A target that dies: once the cluster has declared it failed, a typed error.
    w.kill9();
    loop {
        match a.next_event(Some(WAIT)) {
            Some(e) if e.node == target && e.kind == EventKind::Failed => break,
            Some(_) => {}
            None => panic!("no event for the killed target"),
        }
    }
    let r = rma.get_u64(target, 16);
    assert!(
        matches!(r, Err(Error::UnknownNode(x)) if x == target),
        "{r:?}"
    );
    assert!(matches!(
        rma.fetch_add_u64(target, 0, 1),
        Err(Error::UnknownNode(_))
    ));
}

on_every_transport!(get_reads_the_targets_copy_only_where_allowed);

/// Worker: `cluster target base threads adds sections` — `threads` threads, each
/// with its own handle, fetch-add 1 `adds` times on the word at `base` (and add 1 to
/// the 4-byte word at `base + 8` every fourth time), and enter a critical section
/// guarded by a compare-and-swap lock on `base + 16` `sections` times; inside, a
/// non-atomic read-modify-write of `base + 24` (get, then set), which loses
/// increments unless the lock excludes every other holder.
pub fn hammer_worker(a: &[String]) {
    let target = NodeId(a[1].parse().unwrap());
    let [base, threads, adds, sections]: [u64; 4] =
        std::array::from_fn(|i| a[2 + i].parse().unwrap());
    let base = base as usize;
    let c = Cluster::join(&a[0]).unwrap();
    let seg = c.open_segment("words").unwrap();
    let me = u64::from(c.node_id().0);
    println!("READY node={me}");
    std::thread::scope(|s| {
        for th in 0..threads {
            let seg = &seg;
            s.spawn(move || {
                let rma = seg.rma().unwrap();
                let tag = (me << 8) | (th + 1);
                for i in 0..adds.max(sections) {
                    if i < adds {
                        rma.fetch_add_u64(target, base, 1).unwrap();
                        if i % 4 == 0 {
                            rma.add_u32(target, base + 8, 1).unwrap();
                        }
                    }
                    if i < sections {
                        while rma.compare_swap_u64(target, base + 16, 0, tag).unwrap() != 0 {
                            std::hint::spin_loop();
                        }
                        let v = rma.get_u64(target, base + 24).unwrap();
                        rma.set_u64(target, base + 24, v + 1).unwrap();
                        // Still ours: nobody else got in meanwhile.
                        assert_eq!(rma.swap_u64(target, base + 16, 0).unwrap(), tag);
                    }
                }
                rma.fetch_or_u64(target, base + 32, 1 << ((me % 16) * 4 + th))
                    .unwrap();
                rma.fetch_xor_u64(target, base + 40, 0b1010).unwrap();
                rma.fetch_xor_u64(target, base + 40, 0b1010).unwrap();
            });
        }
    });
    c.ack().unwrap();
    println!("DONE node={me}");
}

fn atomics_from_many_processes_and_the_owner_lose_nothing(t: &Transport) {
    // 8 KiB pages: the words sit on page 1; page 0 stays closed to remote access.
    let name = unique_cluster("rma-atomic");
    let cfg = Config::default().with_page_size(PageSize::K8);
    let owner = t.join_with(&name, cfg).unwrap();
    assert_eq!(owner.page_size(), 8192);
    let seg = owner.segment("words", 2 * 8192, 0o600).unwrap();
    let rx = seg.map_rx_with(open()).unwrap();
    rx.set_attrs(0, 8192, RxAttrs::default()).unwrap();
    let base = 8192usize;
    // The hub serves each atomic in a round trip: fewer of them there.
    let (workers, threads, adds, sections) = if t.is_hub() {
        (2u64, 2u64, 300u64, 60u64)
    } else {
        (2, 2, 20_000, 2_000)
    };
    let mut ws: Vec<Worker> = (0..workers)
        .map(|_| {
            let args: Vec<String> = [
                name.clone(),
                owner.node_id().0.to_string(),
                base.to_string(),
                threads.to_string(),
                adds.to_string(),
                sections.to_string(),
            ]
            .into();
            t.spawn("rma-hammer", &args)
        })
        .collect();
    let nodes: Vec<u64> = ws
        .iter_mut()
        .map(|w| field(&w.expect_line("READY", WAIT), "node"))
        .collect();
    // The owner's own CPU atomics on the same words, meanwhile.
    // SAFETY: `base` is 8-aligned and inside the rx mapping, which `rx` keeps mapped;
    // every party reaches these words only through atomics.
    let word = |off: usize| unsafe { &*(rx.as_ptr().add(off) as *const AtomicU64) };
    let owner_adds = adds / 2;
    for _ in 0..owner_adds {
        word(base).fetch_add(1, Ordering::SeqCst);
    }
    for w in &mut ws {
        w.expect_line("DONE", WAIT);
        w.finish(WAIT);
    }
    let all = workers * threads;
    assert_eq!(
        rx.load_u64(base).unwrap(),
        all * adds + owner_adds,
        "fetch-add"
    );
    assert_eq!(
        u64::from(rx.load_u32(base + 8).unwrap()),
        all * adds.div_ceil(4),
        "add_u32"
    );
    assert_eq!(rx.load_u64(base + 16).unwrap(), 0, "lock word released");
    assert_eq!(
        rx.load_u64(base + 24).unwrap(),
        all * sections,
        "CAS exclusivity"
    );
    let bits = nodes
        .iter()
        .flat_map(|n| (0..threads).map(move |th| 1u64 << ((n % 16) * 4 + th)))
        .fold(0, |a, b| a | b);
    assert_eq!(rx.load_u64(base + 32).unwrap(), bits, "fetch-or");
    assert_eq!(rx.load_u64(base + 40).unwrap(), 0, "fetch-xor twice");
    // The owner may address itself, and sees the same word; page 0 is closed.
    let rma = seg.rma().unwrap();
    let me = owner.node_id();
    assert_eq!(rma.get_u64(me, base).unwrap(), all * adds + owner_adds);
    assert!(matches!(
        rma.get(me, base - 8, &mut [0; 16]),
        Err(Error::RemoteReadOff { offset, .. }) if offset == base - 8
    ));
}

on_every_transport!(atomics_from_many_processes_and_the_owner_lose_nothing);

/// Worker: `cluster target` — runs as uid 65534 and tries node `target`'s copies of
/// `secret` (0o600) and `readable` (0o644), both open to remote read.
pub fn uid_worker(a: &[String]) {
    // SAFETY: plain setgid/setuid calls in a single-threaded worker before any other
    // work; dropping root is the point of the test.
    unsafe {
        assert_eq!(libc::setgid(65534), 0);
        assert_eq!(libc::setuid(65534), 0);
    }
    let target = NodeId(a[1].parse().unwrap());
    let c = Cluster::join_with(&a[0], shared()).unwrap();
    let denied = |r: Result<u64, Error>, want: &str| matches!(r, Err(Error::PermissionDenied { op, .. }) if op == want);
    let secret = c.open_segment("secret").unwrap().rma().unwrap();
    let readable = c.open_segment("readable").unwrap().rma().unwrap();
    // Load/store access needs what an atomic needs (where a transport offers it).
    let no_ptr = |r: Result<memchan::PeerMemory, Error>| match r {
        Err(Error::Unsupported(_)) => true,
        r => denied(r.map(|_| 0), "atomic"),
    };
    println!(
        "UID secret_get_denied={} secret_atomic_denied={} readable_get={} readable_atomic_denied={} readable_ptr_refused={}",
        denied(secret.get_u64(target, 0), "get") as u8,
        denied(secret.fetch_add_u64(target, 0, 1), "atomic") as u8,
        readable.get_u64(target, 0).unwrap(),
        denied(readable.fetch_add_u64(target, 0, 1), "atomic") as u8,
        no_ptr(readable.peer_memory(target)) as u8,
    );
}

/// A one-host cluster other uids may join (see `sync_ops::shared`).
fn shared() -> Config {
    Config::default().with_shm_mode(0o666)
}

fn remote_access_needs_the_segments_permissions(t: &Transport) {
    let name = unique_cluster("rma-perm");
    let c = t.join_with(&name, shared()).unwrap();
    let me = c.node_id();
    let mut keep = Vec::new();
    for (seg, mode) in [("secret", 0o600), ("readable", 0o644)] {
        let s = c.segment(seg, 4096, mode).unwrap();
        let rx = s.map_rx_with(open()).unwrap();
        let tx = s.map_tx(Dest::Node(me), TxAttrs::default()).unwrap();
        tx.write_u64(0, 41).unwrap();
        keep.push((rx, tx));
    }
    c.ack().unwrap();
    let mut w = t.spawn("rma-uid", &[name, me.0.to_string()]);
    let line = w.expect_line("UID", WAIT);
    assert_eq!(field(&line, "secret_get_denied"), 1, "{line}");
    assert_eq!(field(&line, "secret_atomic_denied"), 1, "{line}");
    assert_eq!(field(&line, "readable_get"), 41, "{line}");
    assert_eq!(field(&line, "readable_atomic_denied"), 1, "{line}");
    assert_eq!(field(&line, "readable_ptr_refused"), 1, "{line}");
    w.finish(WAIT);
    // Nothing changed.
    assert_eq!(keep[0].0.load_u64(0).unwrap(), 41);
    assert_eq!(keep[1].0.load_u64(0).unwrap(), 41);
}

on_every_transport!(remote_access_needs_the_segments_permissions);

/// Worker: `cluster adds dir` — the owner of `words` across hosts: maps it rx (page 1
/// open to remote access), says READY, adds 1 to the word at 4096 `adds` times with
/// its own CPU atomics while the others hammer it through the hub, and once the file
/// `dir/done` exists prints the words.
pub fn owner_worker(a: &[String]) {
    let adds: u64 = a[1].parse().unwrap();
    let c = Cluster::join(&a[0]).unwrap();
    let seg = c.segment("words", 8192, 0o600).unwrap();
    let rx = seg.map_rx_with(open()).unwrap();
    rx.set_attrs(0, 4096, RxAttrs::default()).unwrap();
    println!("READY node={}", c.node_id().0);
    // SAFETY: 4096 is 8-aligned and inside the rx mapping, which `rx` keeps mapped;
    // every party reaches the word only through atomics.
    let word = unsafe { &*(rx.as_ptr().add(4096) as *const AtomicU64) };
    for _ in 0..adds {
        word.fetch_add(1, Ordering::SeqCst);
    }
    let done = std::path::Path::new(&a[2]).join("done");
    let deadline = std::time::Instant::now() + WAIT;
    while !done.exists() {
        assert!(std::time::Instant::now() < deadline, "no done file");
        std::thread::sleep(Duration::from_millis(5));
    }
    let w = |o: usize| rx.load_u64(4096 + o).unwrap();
    println!(
        "RESULT add={} add32={} lock={} section={} or={} xor={}",
        w(0),
        rx.load_u32(4096 + 8).unwrap(),
        w(16),
        w(24),
        w(32),
        w(40)
    );
}

/// Across hosts (root: network namespaces): an owner on host 0, hammering processes
/// on host 0 and host 1, all through a hub in its own namespace; the atomics run on
/// the owner's receive memory (never a copy), interleaved with its CPU atomics.
#[test]
fn multihost_atomics_run_where_the_word_lives() {
    use memchan_testkit::netns::Topology;
    let topo = Topology::new("rma", 2);
    let dir = std::env::temp_dir().join(unique_cluster("rma-mh"));
    std::fs::create_dir_all(&dir).unwrap();
    let name = unique_cluster("rma-mh");
    let hub_args = ["0.0.0.0:0".to_string(), "100".into(), "800".into()];
    let mut hub = topo.worker(&topo.hub_ns, "hub", &hub_args, &[]);
    let line = hub.expect_line("LISTENING", WAIT);
    let port: u16 = line.rsplit(':').next().unwrap().trim().parse().unwrap();
    let env = |h: usize| [("MEMCHAN_HUB", format!("{}:{port}", topo.hosts[h].hub_addr))];
    let (threads, adds, sections, owner_adds) = (2u64, 200u64, 40u64, 5000u64);
    let mut owner = topo.worker(
        &topo.hosts[0].ns,
        "rma-owner",
        &[
            name.clone(),
            owner_adds.to_string(),
            dir.display().to_string(),
        ],
        &env(0),
    );
    let target = field(&owner.expect_line("READY", WAIT), "node");
    let mut ws: Vec<Worker> = (0..2)
        .map(|h| {
            let args: Vec<String> = [
                name.clone(),
                target.to_string(),
                "4096".into(),
                threads.to_string(),
                adds.to_string(),
                sections.to_string(),
            ]
            .into();
            topo.worker(&topo.hosts[h].ns, "rma-hammer", &args, &env(h))
        })
        .collect();
    let nodes: Vec<u64> = ws
        .iter_mut()
        .map(|w| field(&w.expect_line("READY", WAIT), "node"))
        .collect();
    for w in &mut ws {
        w.expect_line("DONE", WAIT);
        w.finish(WAIT);
    }
    std::fs::write(dir.join("done"), b"").unwrap();
    let line = owner.expect_line("RESULT", WAIT);
    let _ = std::fs::remove_dir_all(&dir);
    let all = 2 * threads;
    assert_eq!(field(&line, "add"), all * adds + owner_adds, "{line}");
    assert_eq!(field(&line, "add32"), all * adds.div_ceil(4), "{line}");
    assert_eq!(field(&line, "lock"), 0, "{line}");
    assert_eq!(field(&line, "section"), all * sections, "{line}");
    let bits = nodes
        .iter()
        .flat_map(|n| (0..threads).map(move |th| 1u64 << ((n % 16) * 4 + th)))
        .fold(0, |a, b| a | b);
    assert_eq!(field(&line, "or"), bits, "{line}");
    assert_eq!(field(&line, "xor"), 0, "{line}");
    owner.finish(WAIT);
}

/// The virtual hub: a node hosting the hub in its process is served by the hub at once
/// (no link), as a target and as an origin, beside a node connected over TCP.
#[test]
fn a_virtual_hubs_own_node_serves_and_asks() {
    use memchan::HubSpec;
    let name = unique_cluster("rma-vhub");
    let host = Config::default().with_hub(HubSpec::Host("127.0.0.1:0".into()));
    let a = Cluster::join_with(&name, host).unwrap();
    let addr = a.hosted_hub_addr().unwrap().to_string();
    let b = Cluster::join_with(&name, Config::default().with_hub(HubSpec::connect(addr))).unwrap();
    let seg_a = a.segment("w", 4096, 0o600).unwrap();
    let seg_b = b.open_segment("w").unwrap();
    let rx_a = seg_a.map_rx_with(open()).unwrap();
    let rx_b = seg_b.map_rx_with(open()).unwrap();
    let (ra, rb) = (seg_a.rma().unwrap(), seg_b.rma().unwrap());
    let (na, nb) = (a.node_id(), b.node_id());
    std::thread::scope(|s| {
        let t = s.spawn(|| {
            let r = seg_b.rma().unwrap();
            for _ in 0..500 {
                r.fetch_add_u64(na, 0, 1).unwrap();
            }
        });
        for _ in 0..500 {
            rb.fetch_add_u64(na, 0, 1).unwrap(); // remote origin, the hub's own target
            ra.fetch_add_u64(na, 0, 1).unwrap(); // the hub's own node on itself
            ra.fetch_add_u64(nb, 8, 1).unwrap(); // the hub's own node on a remote target
        }
        t.join().unwrap();
    });
    assert_eq!(rx_a.load_u64(0).unwrap(), 1500);
    assert_eq!(rx_b.load_u64(8).unwrap(), 500);
    assert_eq!(rb.get_u64(na, 0).unwrap(), 1500);
    assert_eq!(ra.compare_swap_u64(nb, 8, 500, 7).unwrap(), 500);
    let p = ra.get_nbi(nb, 8, 8).unwrap();
    a.ack().unwrap();
    assert_eq!(p.take().unwrap(), 7u64.to_ne_bytes());
    rx_a.set_attrs(0, 4096, RxAttrs::default()).unwrap();
    assert!(matches!(
        rb.get_u64(na, 0),
        Err(Error::RemoteReadOff { .. })
    ));
    drop(b);
}

/// A target that unmaps the segment and maps it again is read at its new receive
/// memory (the handle's cached view of the old one is not used), and between the two
/// it is `NotMapped`.
fn a_target_mapped_again_is_read_at_its_new_memory(t: &Transport) {
    let name = unique_cluster("rma-again");
    let a = t.join(&name).unwrap();
    let b = t.join(&name).unwrap();
    let seg_b = b.segment("r", 4096, 0o600).unwrap();
    let rma = a.segment("r", 4096, 0o600).unwrap().rma().unwrap();
    let own = seg_b
        .map_tx(Dest::Node(b.node_id()), TxAttrs::default())
        .unwrap();
    let nb = b.node_id();
    for round in 1..=3u64 {
        let rx = seg_b.map_rx_with(open()).unwrap();
        own.write_u64(0, round).unwrap();
        b.ack().unwrap();
        assert_eq!(rma.get_u64(nb, 0).unwrap(), round, "round {round}");
        assert_eq!(
            rma.fetch_add_u64(nb, 8, 1).unwrap(),
            0,
            "fresh memory, round {round}"
        );
        drop(rx);
        assert!(
            matches!(rma.get_u64(nb, 0), Err(Error::NotMapped { node, .. }) if node == nb),
            "round {round}"
        );
    }
}

on_every_transport!(a_target_mapped_again_is_read_at_its_new_memory);
