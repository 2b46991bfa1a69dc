//! The decided behaviour of the transport contract (`memchan_core::transport`), on
//! every transport: the bad input of the 4c63486 findings gets one typed error each,
//! membership events are bounded the same way, `wait_spin` busy-polls, a node that
//! joins during a barrier is not part of it, and overlapping multi-page broadcasts end
//! the same at every destination.

use memchan::{Config, Dest, Error, GroupId, NodeId, RxAttrs, TransportKind, TxAttrs, EVENT_RING};
use memchan_testkit::harness::{thread_cpu, unique_cluster, Transport};
use memchan_testkit::on_every_transport;
use std::time::{Duration, Instant};

fn is_invalid(r: Result<impl Sized, Error>, what: &str) -> bool {
    matches!(r, Err(Error::Invalid { what: w, .. }) if w == what)
}

fn bad_input_from_the_findings_gets_one_typed_error(t: &Transport) {
    let name = unique_cluster("contract-bad");
    let a = t.join(&name).unwrap();
    let b = t.join(&name).unwrap();
    let rx = b.segment("s", 4096, 0o600).unwrap().map_rx().unwrap();
    let seg = a.segment("s", 4096, 0o600).unwrap();
    let tx = seg
        .map_tx(Dest::Node(b.node_id()), TxAttrs::default())
        .unwrap();
    tx.write_u64(0, 7).unwrap();
    a.ack().unwrap();

    // Sizes, names, modes: the same `Invalid` naming the argument on every transport.
    for size in [0, 1 << 62, usize::MAX, usize::MAX - 4095, (1 << 34) + 1] {
        assert!(
            is_invalid(a.segment("big", size, 0o600), "segment size"),
            "{size}"
        );
    }
    for bad in [
        "x".repeat(65),
        "../../etc/passwd".into(),
        String::new(),
        "_own".into(),
    ] {
        assert!(
            is_invalid(a.segment(&bad, 4096, 0o600), "segment name"),
            "{bad}"
        );
        assert!(is_invalid(a.open_segment(&bad), "segment name"), "{bad}");
    }
    assert!(is_invalid(a.segment("m", 4096, 0o1777), "segment mode"));
    assert!(is_invalid(a.lock(&"l".repeat(59)), "lock name"));
    assert!(is_invalid(a.lock("a/b"), "lock name"));
    for bad in ["c".repeat(49), "a/b".into(), String::new()] {
        assert!(is_invalid(t.join(&bad), "cluster name"), "{bad}");
    }
    let zero_hb = Config::default().with_heartbeat(Duration::ZERO);
    assert!(is_invalid(t.join_with(&name, zero_hb), "heartbeat"));
    let zero_to = Config::default().with_failure_timeout(Duration::ZERO);
    assert!(is_invalid(t.join_with(&name, zero_to), "failure timeout"));

    // Offsets and alignment.
    assert!(matches!(
        tx.write_u64(4096, 1),
        Err(Error::OutOfBounds { .. })
    ));
    assert!(matches!(
        tx.write_u64(usize::MAX - 3, 1),
        Err(Error::OutOfBounds { .. })
    ));
    assert!(matches!(
        tx.write(4090, &[0; 16]),
        Err(Error::OutOfBounds { .. })
    ));
    assert!(matches!(
        tx.write(usize::MAX, &[1]),
        Err(Error::OutOfBounds { .. })
    ));
    assert!(matches!(tx.write_u64(4, 1), Err(Error::Unaligned { .. })));
    assert!(matches!(
        rx.read(4090, &mut [0; 16]),
        Err(Error::OutOfBounds { .. })
    ));
    assert!(matches!(
        rx.set_attrs(4000, 200, RxAttrs::default()),
        Err(Error::OutOfBounds { .. })
    ));

    // Node and group ids: never a panic, whatever the value.
    for n in [300, 999, 250, u16::MAX] {
        let id = NodeId(n);
        assert!(
            matches!(seg.map_tx(Dest::Node(id), TxAttrs::default()), Err(Error::UnknownNode(x)) if x == id),
            "{n}"
        );
        assert!(
            matches!(a.create_group("g", &[a.node_id(), id]), Err(Error::UnknownNode(x)) if x == id),
            "{n}"
        );
    }
    assert!(is_invalid(a.create_group("g", &[]), "group members"));
    assert!(is_invalid(
        a.create_group("bad/name", &[a.node_id()]),
        "group name"
    ));
    for g in [5, 31, 99, 40000, u16::MAX - 1] {
        let dest = Dest::Group(GroupId(g));
        assert!(
            matches!(
                seg.map_tx(dest, TxAttrs::default()),
                Err(Error::UnknownGroup(_))
            ),
            "{g}"
        );
        assert!(
            matches!(a.barrier_group(GroupId(g)), Err(Error::UnknownGroup(_))),
            "{g}"
        );
    }
    let only_b = a.create_group("only-b", &[b.node_id()]).unwrap();
    assert!(is_invalid(a.barrier_group(only_b), "group barrier"));
    assert!(matches!(a.hosted_hub_addr(), Err(Error::Unsupported(_))));
    // The transport joined is the one asked for, named as before the enum.
    let (kind, shown) = match t {
        Transport::Shm => (TransportKind::SharedMemory, "shm"),
        Transport::Hub(_) | Transport::Domains(..) => (TransportKind::Hub, "hub"),
    };
    assert_eq!(
        (a.transport(), a.transport().to_string()),
        (kind, shown.into())
    );

    // Another page size than the cluster's: the same typed error on every transport.
    let eight = Config::default().with_page_size(memchan::PageSize::K8);
    assert!(
        matches!(
            t.join_with(&name, eight),
            Err(Error::PageSizeMismatch {
                existing: 4096,
                requested: 8192,
                ..
            })
        ),
        "page size"
    );

    // Table limits: the 33rd group and the 257th segment (one is `s`) are refused,
    // the same everywhere.
    for g in 1..memchan::MAX_GROUPS {
        a.create_group(&format!("g{g}"), &[a.node_id()]).unwrap();
    }
    assert!(matches!(
        a.create_group("one-too-many", &[a.node_id()]),
        Err(Error::TableFull("group"))
    ));
    let mut made = 1;
    let full = loop {
        match a.segment(&format!("t{made}"), 4096, 0o600) {
            Ok(_) => made += 1,
            Err(e) => break e,
        }
        assert!(
            made <= memchan::MAX_SEGMENTS,
            "more than MAX_SEGMENTS segments"
        );
    };
    assert!(matches!(full, Error::TableFull("segment")), "{full}");
    assert_eq!(made, memchan::MAX_SEGMENTS);

    // Nothing the refusals did changed the data.
    assert_eq!(rx.load_u64(0).unwrap(), 7);
}
on_every_transport!(bad_input_from_the_findings_gets_one_typed_error);

fn membership_events_keep_the_last_event_ring(t: &Transport) {
    let name = unique_cluster("contract-events");
    let a = t.join(&name).unwrap();
    // 2 events per round (a join and a leave): the reader falls behind the ring.
    let rounds = EVENT_RING / 2 + 8;
    let mut final_epoch = 0;
    for _ in 0..rounds {
        let b = t.join(&name).unwrap();
        final_epoch = b.epoch() + 1; // its leave
        b.leave();
    }
    let deadline = Instant::now() + Duration::from_secs(60);
    while a.epoch() < final_epoch {
        assert!(Instant::now() < deadline, "a never saw epoch {final_epoch}");
        std::thread::sleep(Duration::from_millis(1));
    }
    let mut seen = Vec::new();
    while let Some(e) = a.next_event(Some(Duration::ZERO)) {
        seen.push(e);
    }
    assert_eq!(
        seen.len(),
        EVENT_RING,
        "the reader gets the newest EVENT_RING events"
    );
    let last = seen.last().unwrap();
    assert_eq!(
        (last.kind, last.epoch),
        (memchan::EventKind::Left, final_epoch)
    );
    assert!(seen.windows(2).all(|w| w[0].epoch < w[1].epoch), "in order");
}
on_every_transport!(membership_events_keep_the_last_event_ring);

fn wait_spin_busy_polls_and_wakes(t: &Transport) {
    let name = unique_cluster("contract-spin");
    let a = t.join(&name).unwrap();
    let b = t.join(&name).unwrap();
    let notify = RxAttrs {
        notify: true,
        ..RxAttrs::default()
    };
    let rx = b
        .segment("bell", 4096, 0o600)
        .unwrap()
        .map_rx_with(notify)
        .unwrap();
    let tx = a
        .segment("bell", 4096, 0o600)
        .unwrap()
        .map_tx(Dest::Node(b.node_id()), TxAttrs::default())
        .unwrap();
    // Nothing written: it times out, and it spent the time on a core (a blocking wait
    // would have slept through it).
    let wall = Duration::from_millis(200);
    let cpu0 = thread_cpu();
    assert!(!rx.wait_spin(Some(wall)).unwrap());
    let cpu = thread_cpu() - cpu0;
    assert!(
        cpu >= wall / 10,
        "wait_spin slept instead of polling: {cpu:?} on a core"
    );
    let waiter = std::thread::spawn(move || {
        let woke = rx.wait_spin(Some(Duration::from_secs(30))).unwrap();
        (woke, rx.load_u64(0).unwrap())
    });
    tx.write_u64(0, 1).unwrap();
    assert_eq!(
        waiter.join().unwrap(),
        (true, 1),
        "the write woke the spinning waiter"
    );
}
on_every_transport!(wait_spin_busy_polls_and_wakes);

fn overlapping_multi_page_broadcasts_end_the_same_everywhere(t: &Transport) {
    // Two senders broadcast 3-page writes over the same pages at once. The page is
    // the unit of application: every page ends whole (one sender's fill), and every
    // destination ends with the same contents (one global order).
    let name = unique_cluster("contract-pages");
    let nodes: Vec<_> = (0..4).map(|_| t.join(&name).unwrap()).collect();
    let page = nodes[0].page_size();
    let size = 8 * page;
    let rxs: Vec<_> = nodes
        .iter()
        .map(|n| n.segment("wide", size, 0o600).unwrap().map_rx().unwrap())
        .collect();
    std::thread::scope(|s| {
        for (k, n) in nodes[..2].iter().enumerate() {
            s.spawn(move || {
                let attrs = TxAttrs {
                    local_copy: true,
                    ..TxAttrs::default()
                };
                let tx = n
                    .segment("wide", size, 0o600)
                    .unwrap()
                    .map_tx(Dest::Broadcast, attrs)
                    .unwrap();
                for i in 0..200usize {
                    let fill = (1 + k + 2 * (i % 100)) as u8;
                    let at = (i % 6) * page;
                    tx.write(at, &vec![fill; 3 * page]).unwrap();
                }
                n.ack().unwrap();
            });
        }
    });
    let mut first = vec![0u8; size];
    rxs[0].read(0, &mut first).unwrap();
    for p in first.chunks(page) {
        assert!(p.iter().all(|&b| b == p[0]), "a page was torn");
    }
    for rx in &rxs[1..] {
        let mut other = vec![0u8; size];
        rx.read(0, &mut other).unwrap();
        assert!(other == first, "two destinations ended differently");
    }
}
on_every_transport!(overlapping_multi_page_broadcasts_end_the_same_everywhere);

/// Polls the status of `name` until `node`'s barrier count is `n` (hang guard only).
fn barriers_reach(t: &Transport, name: &str, node: NodeId, n: u64) {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        let st = t.status(name);
        let count = st
            .members
            .iter()
            .find(|m| m.node == node.0)
            .map(|m| m.barriers);
        if count == Some(n) {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{node} never reached {n} barriers: {st:?}"
        );
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn a_node_joining_during_a_barrier_is_not_part_of_it(t: &Transport) {
    let name = unique_cluster("contract-barrier-join");
    let a = t.join(&name).unwrap();
    let b = t.join(&name).unwrap();
    std::thread::scope(|s| {
        let first = s.spawn(|| a.barrier());
        // a is inside the barrier (its arrival counted), b is not yet.
        barriers_reach(t, &name, a.node_id(), 1);
        let c = t.join(&name).unwrap();
        // c starts level with the members already arrived: not part of this barrier.
        barriers_reach(t, &name, c.node_id(), 1);
        b.barrier().unwrap();
        first.join().unwrap().unwrap();
        // Its first barrier is the next one, which all three pass together.
        let others: Vec<_> = [&a, &b].map(|n| s.spawn(move || n.barrier())).into();
        c.barrier().unwrap();
        for o in others {
            o.join().unwrap().unwrap();
        }
    });
}
on_every_transport!(a_node_joining_during_a_barrier_is_not_part_of_it);
