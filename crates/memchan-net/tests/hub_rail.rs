//! A hub numbering its order for dual rail (`HubConfig::rail`), with real nodes over
//! loopback: every packet of a remote sender gets one place (the same at every node
//! that applies it), nodes record what they applied and report their held packets,
//! the reports of a running cluster plan without contradiction, and the hub's release
//! mark frees the nodes' histories once everything was released. Waits poll, bounded
//! by a hang guard only.

use memchan_core::{Dest, TxAttrs};
use memchan_link::rail::{plan, Report};
use memchan_link::wire::Key;
use memchan_net::node::Node;
use std::time::{Duration, Instant};

#[allow(dead_code)]
mod common;

const HANG_GUARD: Duration = Duration::from_secs(30);
const WRITES: u64 = 300;

fn nodes(rail: bool, tag: &[u8]) -> (memchan_hub::Hub, Vec<Node>) {
    let key = Key::from_secret(tag);
    let (hub, addr) = common::keyed_hub(&key, |c| {
        c.heartbeat = Duration::from_millis(50);
        c.rail = rail;
    });
    let cfg = || {
        common::node_cfg(
            &addr,
            &key,
            Duration::from_millis(50),
            Duration::from_secs(5),
        )
    };
    let ns: Vec<Node> = (0..3).map(|_| Node::join("rail", cfg()).unwrap()).collect();
    ns[0].wait_for_members(3, HANG_GUARD).unwrap();
    (hub, ns)
}

/// Every node writes `WRITES` words to its own range, broadcast with local copy.
fn write_all(ns: &[Node], mid: impl FnOnce()) {
    let attrs = TxAttrs {
        local_copy: true,
        ..TxAttrs::default()
    };
    // One thread maps every rx (answered by the hub) before any write.
    let txs: Vec<_> = ns
        .iter()
        .map(|n| {
            let s = n.segment("r", 64 << 10, 0o600).unwrap();
            (
                s.map_rx().unwrap(),
                s.map_tx(Dest::Broadcast, attrs).unwrap(),
            )
        })
        .collect();
    let mut mid = Some(mid);
    for i in 0..WRITES {
        for (k, (_, tx)) in txs.iter().enumerate() {
            tx.write_u64((k * WRITES as usize + i as usize) * 8, i + 1)
                .unwrap();
        }
        if i == WRITES / 2 {
            mid.take().unwrap()();
        }
    }
    for n in ns {
        n.ack().unwrap();
    }
    for (rx, _) in &txs {
        for k in 0..ns.len() {
            let last = (k + 1) * WRITES as usize - 1;
            assert_eq!(rx.load_u64(last * 8).unwrap(), WRITES);
        }
    }
}

#[test]
fn a_rail_hub_numbers_each_packet_once_and_its_mark_frees_the_histories() {
    let (_hub, ns) = nodes(true, b"rail numbering");
    write_all(&ns, || {
        // Reports of a running cluster, taken one after another: they agree on
        // every place they share, and plan.
        let reports: Vec<Report> = ns.iter().map(|n| n.rail_report()).collect();
        let p = plan(&reports).expect("mid-run reports plan");
        let held: usize = reports.iter().map(|r| r.unreleased.len()).sum();
        assert_eq!(p.order.len(), held);
    });
    let total = WRITES * ns.len() as u64;
    let start = Instant::now();
    let reports = loop {
        let r: Vec<Report> = ns.iter().map(|n| n.rail_report()).collect();
        // Every node applied every packet (local copy included) at the same places
        // 1..=total; the mark passed all of them and the senders hold nothing.
        if r.iter()
            .all(|r| r.applied == total && r.history.is_empty() && r.unreleased.is_empty())
        {
            break r;
        }
        assert!(start.elapsed() < HANG_GUARD, "never settled: {r:?}");
        std::thread::sleep(Duration::from_millis(10));
    };
    for r in &reports {
        assert_eq!(r.marks, reports[0].marks, "nodes disagree on the last seqs");
        assert_eq!(r.marks.len(), ns.len());
        assert!(r.released >= total - 1);
    }
    let p = plan(&reports).unwrap();
    assert!(p.order.is_empty());
    assert_eq!(p.next_gseq, total + 1);
}

#[test]
fn without_rail_nothing_is_numbered() {
    let (_hub, ns) = nodes(false, b"rail off");
    write_all(&ns, || {});
    for n in &ns {
        let r = n.rail_report();
        assert_eq!((r.applied, r.history.len(), r.marks.len()), (0, 0, 0));
    }
}
