//! `write_no_notify`: a record's body written without notify, then published with a
//! notifying `write_u64` (or both in one `write_record`, every other record). The
//! body lands and is in place whenever the publish is seen; the publish wakes a
//! reader blocked in `wait`; on one host the body alone posts no notify; a
//! `write_record` with a bad range writes nothing.

use memchan::{Dest, Error, NodeId, RxAttrs, TxAttrs};
use memchan_testkit::harness::{unique_cluster, Transport};
use memchan_testkit::on_every_transport;
use std::time::Duration;

const WAIT: Duration = Duration::from_secs(60);
/// Body words of a record (a 64-byte slot: the publish word, then seven).
const BODY: usize = 7;
/// Where the lone unpublished body goes.
const LONE: usize = 2048;
/// Where the refused records would go.
const BAD: usize = 3072;

fn body(v: u64) -> Vec<u8> {
    (0..BODY).flat_map(|_| v.to_le_bytes()).collect()
}

/// Worker: `cluster rounds` — publishes records 1..=rounds to node 0, then (after
/// a barrier) one body without a publish, acknowledged, and a barrier.
pub fn worker(a: &[String]) {
    let (name, rounds) = (&a[0], a[1].parse::<u64>().unwrap());
    let c = memchan::Cluster::join(name).unwrap();
    c.wait_for_members(2, WAIT).unwrap();
    let seg = c.segment("nn", 4096, 0o600).unwrap();
    let tx = seg
        .map_tx(Dest::Node(NodeId(0)), TxAttrs::default())
        .unwrap();
    c.barrier().unwrap(); // node 0 has mapped rx
    for r in 1..=rounds {
        // Record r: the body, then the publish (two calls, or one `write_record`).
        // The reader reads at its own pace: every word only grows.
        if r % 2 == 0 {
            tx.write_record(8, &body(r), 0, r).unwrap();
        } else {
            tx.write_no_notify(8, &body(r)).unwrap();
            tx.write_u64(0, r).unwrap();
        }
    }
    c.barrier().unwrap(); // node 0 saw every record
    c.barrier().unwrap(); // and consumed their wake-ups
    tx.write_no_notify(LONE, &body(u64::MAX)).unwrap();
    c.ack().unwrap();
    c.barrier().unwrap();
    c.barrier().unwrap();
}

fn write_no_notify_lands_before_the_publish_that_wakes_the_reader(t: &Transport) {
    let name = unique_cluster("no-notify");
    let c = t.join(&name).unwrap();
    assert_eq!(c.node_id(), NodeId(0));
    let seg = c.segment("nn", 4096, 0o600).unwrap();
    let rx = seg
        .map_rx_with(RxAttrs {
            notify: true,
            ..RxAttrs::default()
        })
        .unwrap();
    let rounds = 2000u64;
    let mut w = t.spawn("no-notify", &[name.clone(), rounds.to_string()]);
    c.wait_for_members(2, WAIT).unwrap();
    // Bad input first: the bounds are checked as for `write`.
    let tx = seg
        .map_tx(Dest::Node(NodeId(1)), TxAttrs::default())
        .unwrap();
    assert!(matches!(
        tx.write_no_notify(4090, &[0; 8]),
        Err(Error::OutOfBounds { .. })
    ));
    // A record with a bad publish word or body writes neither (checked below in this
    // node's own copy, once everything else has landed).
    let own = seg
        .map_tx(Dest::Node(NodeId(0)), TxAttrs::default())
        .unwrap();
    assert!(matches!(
        own.write_record(BAD, &[0xAB; 8], BAD + 12, 1),
        Err(Error::Unaligned { .. })
    ));
    assert!(matches!(
        own.write_record(BAD, &[0xAB; 8], 4096, 1),
        Err(Error::OutOfBounds { .. })
    ));
    assert!(matches!(
        own.write_record(4092, &[0xAB; 8], BAD, 1),
        Err(Error::OutOfBounds { .. })
    ));
    c.barrier().unwrap();
    let mut seen = 0;
    while seen < rounds {
        // Blocked, not spinning: only a notify wakes this reader.
        assert!(
            rx.wait(Some(WAIT)).unwrap(),
            "no wake-up after record {seen}"
        );
        let pubd = rx.load_u64(0).unwrap();
        assert!(pubd >= seen, "the publish word went back");
        for k in 0..BODY {
            let v = rx.load_u64(8 + 8 * k).unwrap();
            assert!(v >= pubd, "record {pubd} published before its body ({v})");
        }
        seen = pubd;
    }
    // Every publish has landed (it was seen), but the last one's post may come after
    // the reader saw the word: once the worker is at the barrier it has posted every
    // record, so the wake-ups still pending are taken after it (taken before it, one
    // arriving late failed the check below now and then), and before the worker
    // writes the lone body (the next barrier).
    c.barrier().unwrap();
    while rx.wait(Some(Duration::ZERO)).unwrap() {}
    c.barrier().unwrap();
    c.barrier().unwrap(); // the lone body landed (the worker's ack)
    for k in 0..BODY {
        assert_eq!(rx.load_u64(LONE + 8 * k).unwrap(), u64::MAX);
    }
    if matches!(t, Transport::Shm) {
        // A direct deposit without notify woke nobody.
        assert!(!rx.wait(Some(Duration::ZERO)).unwrap());
    }
    // A good record to this node itself lands; the refused ones beside it did not.
    own.write_record(BAD + 16, &[0xCD; 8], BAD + 24, 5).unwrap();
    c.ack().unwrap();
    assert_eq!(rx.load_u64(BAD + 24).unwrap(), 5);
    assert_eq!(
        rx.load_u64(BAD + 16).unwrap(),
        u64::from_ne_bytes([0xCD; 8])
    );
    for k in 0..2 {
        assert_eq!(
            rx.load_u64(BAD + 8 * k).unwrap(),
            0,
            "a refused record wrote"
        );
    }
    c.barrier().unwrap();
    w.finish(WAIT);
}
on_every_transport!(write_no_notify_lands_before_the_publish_that_wakes_the_reader);
