//! Strided and indexed deposit, put with signal and `wait_until`, conditional write:
//! they land whole and in order, with real processes on every transport; racing
//! conditional writes have exactly one winner; bad shapes and words give typed errors.

use memchan::{
    Cluster, Cmp, Config, Dest, Error, NodeId, Outcome, PageSize, RxAttrs, Shape, SignalOp, TxAttrs,
};
use memchan_testkit::harness::{field, unique_cluster, Transport, Worker};
use memchan_testkit::on_every_transport;
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(60);

/// The strided region: `STRIDED_N` words, 5 words apart, from offset 0 (40 KiB,
/// across pages).
const STRIDED_N: usize = 1024;
const STRIDE: usize = 40;
/// The indexed region: `INDEXED_N` words at 48 KiB + a permutation of 64-byte slots.
const INDEXED_N: usize = 256;
const INDEXED_AT: usize = 48 * 1024;
const DEPOSIT_SEG: usize = 64 * 1024;

fn indexed_offsets() -> Vec<usize> {
    (0..INDEXED_N)
        .map(|i| INDEXED_AT + (i * 37) % INDEXED_N * 64)
        .collect()
}

fn words(v: u64, n: usize) -> Vec<u8> {
    (0..n).flat_map(|_| v.to_ne_bytes()).collect()
}

/// Worker: `cluster rounds` — each round r writes r into every element of the
/// strided and the indexed region of node 0.
pub fn strided_worker(a: &[String]) {
    let (name, rounds) = (&a[0], a[1].parse::<u64>().unwrap());
    let c = Cluster::join(name).unwrap();
    c.wait_for_members(2, WAIT).unwrap();
    let seg = c.segment("dep", DEPOSIT_SEG, 0o600).unwrap();
    let tx = seg
        .map_tx(Dest::Node(NodeId(0)), TxAttrs::default())
        .unwrap();
    c.barrier().unwrap(); // node 0 maps rx first
    let offsets = indexed_offsets();
    let shape = Shape {
        elem: 8,
        count: STRIDED_N,
        src_stride: 8,
        dst_stride: STRIDE,
        offset: 0,
    };
    for r in 1..=rounds {
        tx.put_strided(&shape, &words(r, STRIDED_N)).unwrap();
        tx.put_indexed(8, &offsets, &words(r, INDEXED_N)).unwrap();
    }
    c.ack().unwrap();
    println!("DONE");
    c.barrier().unwrap();
}

/// Reads `offs` from last to first: as elements land in order and rounds grow, each
/// element read later (an earlier one) holds at least what the one before held.
/// Returns the violations and the first element's value.
fn scan_backwards(rx: &memchan::RxMapping, offs: &[usize]) -> (u64, u64) {
    let (mut bad, mut prev) = (0, 0);
    for &o in offs.iter().rev() {
        let v = rx.load_u64(o).unwrap();
        if v < prev {
            bad += 1;
        }
        prev = v;
    }
    (bad, prev)
}

fn strided_and_indexed_elements_land_in_order(t: &Transport) {
    let name = unique_cluster("strided");
    // Enough rounds that the reader catches rounds half-applied (a reversed apply
    // order fails this test on both transports).
    let rounds = if t.is_hub() { 4000 } else { 20_000u64 };
    let c = t.join(&name).unwrap();
    assert_eq!(c.node_id(), NodeId(0));
    let rx = c
        .segment("dep", DEPOSIT_SEG, 0o600)
        .unwrap()
        .map_rx()
        .unwrap();
    let mut w = t.spawn("dep-strided", &[name.clone(), rounds.to_string()]);
    c.wait_for_members(2, WAIT).unwrap();
    c.barrier().unwrap();
    let strided: Vec<usize> = (0..STRIDED_N).map(|i| i * STRIDE).collect();
    let indexed = indexed_offsets();
    let (mut bad, mut scans) = (0, 0u64);
    let deadline = Instant::now() + WAIT;
    loop {
        let (b1, _) = scan_backwards(&rx, &strided);
        let (b2, first) = scan_backwards(&rx, &indexed);
        bad += b1 + b2;
        scans += 1;
        // The indexed list's first element of the last round is the last to move
        // but one: once its last element holds `rounds`, everything does.
        if rx.load_u64(*indexed.last().unwrap()).unwrap() == rounds && first == rounds {
            break;
        }
        assert!(Instant::now() < deadline, "the last round never landed");
        // The hub's and the node's threads share the two cores with this loop.
        std::thread::yield_now();
    }
    assert_eq!(bad, 0, "elements seen out of order in {scans} scans");
    for &o in strided.iter().chain(&indexed) {
        assert_eq!(rx.load_u64(o).unwrap(), rounds, "element at {o}");
    }
    // Bytes between the strided elements were never written.
    assert_eq!(rx.load_u64(8).unwrap(), 0);
    assert_eq!(rx.load_u64(INDEXED_AT + 8).unwrap(), 0);
    w.expect_line("DONE", WAIT);
    c.barrier().unwrap();
    w.finish(Duration::from_secs(10));
}
on_every_transport!(strided_and_indexed_elements_land_in_order);

/// Bytes of each round's block in the signal test (not a divisor of the page, so
/// blocks cross pages).
const BLOCK: usize = 600;
const SIGNAL_ROUNDS: usize = 200;

fn block(r: usize) -> Vec<u8> {
    (0..BLOCK).map(|i| (r * 7 + i) as u8).collect()
}

/// Worker: `cluster` — puts block r at its slot of node 0's segment with a signal add
/// of 1, for every round.
pub fn signal_worker(a: &[String]) {
    let c = Cluster::join(&a[0]).unwrap();
    c.wait_for_members(2, WAIT).unwrap();
    let seg = c.segment("sig", 128 * 1024, 0o600).unwrap();
    let tx = seg
        .map_tx(Dest::Node(NodeId(0)), TxAttrs::default())
        .unwrap();
    c.barrier().unwrap();
    for r in 1..=SIGNAL_ROUNDS {
        tx.put_signal(64 + (r - 1) * BLOCK, &block(r), 0, SignalOp::Add, 1)
            .unwrap();
    }
    c.barrier().unwrap();
}

fn a_reader_woken_by_the_signal_reads_the_whole_put(t: &Transport) {
    let name = unique_cluster("signal");
    let c = t.join(&name).unwrap();
    let rx = c
        .segment("sig", 128 * 1024, 0o600)
        .unwrap()
        .map_rx()
        .unwrap();
    let mut w = t.spawn("dep-signal", std::slice::from_ref(&name));
    c.wait_for_members(2, WAIT).unwrap();
    c.barrier().unwrap();
    let mut torn = Vec::new();
    let mut buf = vec![0u8; BLOCK];
    for r in 1..=SIGNAL_ROUNDS as u64 {
        let v = rx
            .wait_until_u64(0, Cmp::Ge, r, Some(WAIT))
            .unwrap()
            .expect("the signal never came");
        assert!(v >= r);
        let r = r as usize;
        rx.read(64 + (r - 1) * BLOCK, &mut buf).unwrap();
        if buf != block(r) {
            torn.push(r);
        }
    }
    assert!(
        torn.is_empty(),
        "rounds whose data was incomplete: {torn:?}"
    );
    assert_eq!(rx.load_u64(0).unwrap(), SIGNAL_ROUNDS as u64);
    // Nothing more comes: a bounded wait ends without the condition.
    assert_eq!(
        rx.wait_until_u64(
            0,
            Cmp::Gt,
            SIGNAL_ROUNDS as u64,
            Some(Duration::from_millis(30))
        )
        .unwrap(),
        None
    );
    c.barrier().unwrap();
    w.finish(Duration::from_secs(10));
}
on_every_transport!(a_reader_woken_by_the_signal_reads_the_whole_put);

const COND_ROUNDS: usize = 64;
const COND_WORKERS: usize = 3;

/// Worker: `cluster` — every round, after a barrier, tries to claim word r of node 0
/// (0 -> its id + 1); reports the rounds it won as a bit mask, and how many of its
/// lost rounds reported another writer's value.
pub fn cond_worker(a: &[String]) {
    let c = Cluster::join(&a[0]).unwrap();
    c.wait_for_members(COND_WORKERS + 1, WAIT).unwrap();
    let seg = c.segment("cond", 4096, 0o600).unwrap();
    let tx = seg
        .map_tx(Dest::Node(NodeId(0)), TxAttrs::default())
        .unwrap();
    let mine = u64::from(c.node_id().0) + 1;
    c.barrier().unwrap();
    let (mut won, mut held_other, mut odd) = (0u64, 0, 0);
    for r in 0..COND_ROUNDS {
        c.barrier().unwrap();
        match tx.write_if_u64(8 * r, 0, mine).unwrap().as_slice() {
            [res] if res.node == NodeId(0) => match res.outcome {
                Outcome::Applied => won |= 1 << r,
                Outcome::Held(v) if v != 0 && v != mine => held_other += 1,
                _ => odd += 1,
            },
            _ => odd += 1,
        }
    }
    println!(
        "DONE id={} won={won} held_other={held_other} odd={odd}",
        c.node_id().0
    );
    c.barrier().unwrap();
}

fn racing_conditional_writes_have_exactly_one_winner(t: &Transport) {
    let name = unique_cluster("cond");
    let c = t.join(&name).unwrap();
    let rx = c.segment("cond", 4096, 0o600).unwrap().map_rx().unwrap();
    let mut ws: Vec<Worker> = (0..COND_WORKERS)
        .map(|_| t.spawn("dep-cond", std::slice::from_ref(&name)))
        .collect();
    c.wait_for_members(COND_WORKERS + 1, WAIT).unwrap();
    c.barrier().unwrap();
    for _ in 0..COND_ROUNDS {
        c.barrier().unwrap();
    }
    let mut winner = [0u64; COND_ROUNDS];
    for w in &mut ws {
        let line = w.expect_line("DONE", WAIT);
        assert_eq!(field(&line, "odd"), 0, "{line}");
        let (id, won) = (field(&line, "id"), field(&line, "won"));
        assert_eq!(
            field(&line, "held_other") + u64::from(won.count_ones()),
            COND_ROUNDS as u64,
            "{line}"
        );
        for (r, slot) in winner.iter_mut().enumerate() {
            if won & (1 << r) != 0 {
                assert_eq!(*slot, 0, "round {r} won twice");
                *slot = id + 1;
            }
        }
    }
    for (r, &v) in winner.iter().enumerate() {
        assert_ne!(v, 0, "round {r} won by nobody");
        assert_eq!(
            rx.load_u64(8 * r).unwrap(),
            v,
            "round {r}: the winner's value"
        );
    }
    c.barrier().unwrap();
    for w in &mut ws {
        w.finish(Duration::from_secs(10));
    }
}
on_every_transport!(racing_conditional_writes_have_exactly_one_winner);

/// A conditional write's place in the ordering rules: after this sender's earlier
/// writes (it sees them, and returning means they landed), evaluated per destination
/// of a broadcast; a disabled page reports it.
fn conditional_write_follows_the_ordering_rules(t: &Transport) {
    let name = unique_cluster("cond-order");
    let a = t.join(&name).unwrap();
    let b = t.join(&name).unwrap();
    let c = t.join(&name).unwrap();
    for n in [&a, &b, &c] {
        n.wait_for_members(3, WAIT).unwrap();
    }
    let rb = b.segment("o", 8192, 0o600).unwrap().map_rx().unwrap();
    let rc = c.segment("o", 8192, 0o600).unwrap().map_rx().unwrap();
    let seg = a.segment("o", 8192, 0o600).unwrap();
    let to_b = seg
        .map_tx(Dest::Node(b.node_id()), TxAttrs::default())
        .unwrap();
    // Rule 1: the write before it is what it compares against, and once it returns
    // the earlier writes have landed (no ack in between).
    to_b.write(100, b"earlier").unwrap();
    to_b.write_u64(0, 5).unwrap();
    let r = to_b.write_if_u64(0, 5, 6).unwrap();
    assert_eq!(r.len(), 1);
    assert_eq!((r[0].node, r[0].outcome), (b.node_id(), Outcome::Applied));
    assert_eq!(rb.load_u64(0).unwrap(), 6);
    let mut got = [0u8; 7];
    rb.read(100, &mut got).unwrap();
    assert_eq!(&got, b"earlier");
    // A broadcast is evaluated at each destination: b holds 6, c holds 0.
    let all = seg.map_tx(Dest::Broadcast, TxAttrs::default()).unwrap();
    let r = all.write_if_u64(0, 0, 9).unwrap();
    let mut want = vec![
        (b.node_id(), Outcome::Held(6)),
        (c.node_id(), Outcome::Applied),
    ];
    want.sort_by_key(|x| x.0);
    let got: Vec<_> = r.iter().map(|x| (x.node, x.outcome)).collect();
    assert_eq!(got, want);
    assert_eq!((rb.load_u64(0).unwrap(), rc.load_u64(0).unwrap()), (6, 9));
    // Receive disabled on c's page: nothing written there, and c says so.
    rc.set_attrs(
        0,
        4096,
        RxAttrs {
            receive_enable: false,
            ..RxAttrs::default()
        },
    )
    .unwrap();
    let r = all.write_if_u64(0, 9, 10).unwrap();
    let got: Vec<_> = r.iter().map(|x| (x.node, x.outcome)).collect();
    let mut want = vec![
        (b.node_id(), Outcome::Held(6)),
        (c.node_id(), Outcome::Disabled),
    ];
    want.sort_by_key(|x| x.0);
    assert_eq!(got, want);
    assert_eq!(rc.load_u64(0).unwrap(), 9);
    // A signal set and add land as one word each, and wake a waiter at once.
    all.put_signal(4096, b"x", 4104, SignalOp::Set, 40).unwrap();
    all.put_signal(4096, b"y", 4104, SignalOp::Add, 2).unwrap();
    assert_eq!(
        rb.wait_until_u64(4104, Cmp::Eq, 42, Some(WAIT)).unwrap(),
        Some(42)
    );
    assert_eq!(rb.load_u8(4096).unwrap(), b'y');
}
on_every_transport!(conditional_write_follows_the_ordering_rules);

fn bad_deposits_are_refused_with_typed_errors_and_send_nothing(t: &Transport) {
    let name = unique_cluster("dep-bad");
    let a = t.join(&name).unwrap();
    let b = t.join(&name).unwrap();
    b.wait_for_members(2, WAIT).unwrap();
    let rx = b.segment("x", 4096, 0o600).unwrap().map_rx().unwrap();
    let mut tx = a
        .segment("x", 4096, 0o600)
        .unwrap()
        .map_tx(Dest::Node(b.node_id()), TxAttrs::default())
        .unwrap();
    let s = Shape {
        elem: 8,
        count: 4,
        src_stride: 8,
        dst_stride: 8,
        offset: 0,
    };
    let src = words(7, 4);
    let bad_shape = |r: memchan::Result<()>| matches!(r, Err(Error::BadShape { .. }));
    // Strides whose arithmetic overflows, a zero element, a short source.
    assert!(bad_shape(tx.put_strided(
        &Shape {
            dst_stride: usize::MAX / 2,
            ..s
        },
        &src
    )));
    assert!(bad_shape(tx.put_strided(
        &Shape {
            src_stride: usize::MAX,
            ..s
        },
        &src
    )));
    assert!(bad_shape(tx.put_strided(
        &Shape {
            offset: usize::MAX - 4,
            ..s
        },
        &src
    )));
    assert!(bad_shape(tx.put_strided(&Shape { elem: 0, ..s }, &src)));
    assert!(bad_shape(tx.put_strided(
        &Shape {
            src_stride: 16,
            ..s
        },
        &src
    )));
    assert!(bad_shape(tx.put_indexed(8, &[0, 8], &src)));
    // The last element past the segment; an index out of range, named.
    assert!(matches!(
        tx.put_strided(
            &Shape {
                dst_stride: 1363,
                ..s
            },
            &src
        ),
        Err(Error::OutOfBounds { offset: 4089, .. })
    ));
    assert!(matches!(
        tx.put_indexed(8, &[0, 8, 4092, 16], &src),
        Err(Error::OutOfBounds { offset: 4092, .. })
    ));
    assert!(matches!(
        tx.put_indexed(8, &[usize::MAX, 0, 8, 16], &src),
        Err(Error::OutOfBounds { .. })
    ));
    // Unaligned signal and conditional words; a signal word past the end.
    assert!(matches!(
        tx.put_signal(0, b"data", 12, SignalOp::Set, 1),
        Err(Error::Unaligned {
            offset: 12,
            size: 8,
            ..
        })
    ));
    assert!(matches!(
        tx.put_signal(0, b"data", 4096, SignalOp::Add, 1),
        Err(Error::OutOfBounds { .. })
    ));
    assert!(matches!(
        tx.write_if_u64(4, 0, 1),
        Err(Error::Unaligned { .. })
    ));
    assert!(matches!(
        tx.write_if_u64(4096, 0, 1),
        Err(Error::OutOfBounds { .. })
    ));
    assert!(matches!(
        rx.wait_until_u64(3, Cmp::Eq, 0, Some(Duration::ZERO)),
        Err(Error::Unaligned { .. })
    ));
    assert!(matches!(
        rx.wait_until_u64(4096, Cmp::Eq, 0, Some(Duration::ZERO)),
        Err(Error::OutOfBounds { .. })
    ));
    tx.set_transmit_enable(false);
    assert!(matches!(
        tx.put_strided(&s, &src),
        Err(Error::TransmitDisabled { .. })
    ));
    assert!(matches!(
        tx.write_if_u64(0, 0, 1),
        Err(Error::TransmitDisabled { .. })
    ));
    tx.set_transmit_enable(true);
    // None of it sent a byte.
    a.ack().unwrap();
    let mut all = vec![0u8; 4096];
    rx.read(0, &mut all).unwrap();
    assert!(all.iter().all(|&x| x == 0), "a refused deposit wrote");
    // Good ones after the bad: an empty shape is nothing; the real one lands.
    tx.put_strided(&Shape { count: 0, ..s }, &[]).unwrap();
    tx.put_strided(
        &Shape {
            dst_stride: 1360,
            offset: 0,
            count: 3,
            ..s
        },
        &src[..24],
    )
    .unwrap();
    a.ack().unwrap();
    assert_eq!(rx.load_u64(2720).unwrap(), 7);
}
on_every_transport!(bad_deposits_are_refused_with_typed_errors_and_send_nothing);

fn deposits_work_on_8_kib_pages(t: &Transport) {
    let name = unique_cluster("dep-8k");
    let eight = Config::default().with_page_size(PageSize::K8);
    let a = t.join_with(&name, eight.clone()).unwrap();
    let b = t.join_with(&name, eight).unwrap();
    assert_eq!(a.page_size(), 8192);
    b.wait_for_members(2, WAIT).unwrap();
    let rx = b.segment("p", 3 * 8192, 0o600).unwrap().map_rx().unwrap();
    for dest in [Dest::Node(b.node_id()), Dest::Broadcast] {
        let tx = a
            .segment("p", 3 * 8192, 0o600)
            .unwrap()
            .map_tx(dest, TxAttrs::default())
            .unwrap();
        // 24-byte elements around the first page boundary: one straddles it.
        let src: Vec<u8> = (0..96u8).collect();
        let shape = Shape {
            elem: 24,
            count: 4,
            src_stride: 24,
            dst_stride: 32,
            offset: 8192 - 40,
        };
        tx.put_strided(&shape, &src).unwrap();
        tx.put_indexed(8, &[24576 - 8, 24576 - 16, 8], &src[..24])
            .unwrap();
        let big = vec![0xabu8; 9000]; // across the second boundary
        tx.put_signal(16384 - 4000, &big, 16, SignalOp::Add, 1)
            .unwrap();
        let sig = rx
            .wait_until_u64(16, Cmp::Ge, 1, Some(WAIT))
            .unwrap()
            .unwrap();
        let mut got = vec![0u8; 9000];
        rx.read(16384 - 4000, &mut got).unwrap();
        assert_eq!(got, big);
        for (i, (off, src_at)) in shape.elements().enumerate() {
            let mut e = [0u8; 24];
            rx.read(off, &mut e).unwrap();
            assert_eq!(&e[..], &src[src_at..src_at + 24], "element {i}");
        }
        assert_eq!(
            rx.load_u64(24576 - 8).unwrap(),
            u64::from_ne_bytes(src[..8].try_into().unwrap())
        );
        assert_eq!(
            rx.load_u64(24576 - 16).unwrap(),
            u64::from_ne_bytes(src[8..16].try_into().unwrap())
        );
        let r = tx.write_if_u64(8192 + 512, 0, sig).unwrap();
        assert_eq!(r[0].outcome, Outcome::Applied, "{dest:?}");
        assert_eq!(rx.load_u64(8192 + 512).unwrap(), sig);
        let r = tx.write_if_u64(8192 + 512, 0, 99).unwrap();
        assert_eq!(r[0].outcome, Outcome::Held(sig));
        // Put back for the next destination kind.
        tx.write_u64(8192 + 512, 0).unwrap();
    }
}
on_every_transport!(deposits_work_on_8_kib_pages);

/// Worker: `cluster` — maps segment `lost` rx, says `READY node=<id>`, and idles until
/// killed.
pub fn idle_worker(a: &[String]) {
    let c = Cluster::join(&a[0]).unwrap();
    let _rx = c.segment("lost", 4096, 0o600).unwrap().map_rx().unwrap();
    println!("READY node={}", c.node_id().0);
    loop {
        std::thread::park();
    }
}

/// Recoverable messaging's case: the destination hangs with a conditional write to
/// it in flight. Across hosts its outcome is reported lost once the hub isolates it
/// (the sender never hangs on it); on one host the sender applies the write into the
/// hung node's memory itself, so it is applied (or, if the node was already
/// isolated, there is no destination left).
fn a_conditional_write_to_a_hung_destination_ends(t: &Transport) {
    let name = unique_cluster("cond-lost");
    let cfg = Config::default()
        .with_heartbeat(Duration::from_millis(50))
        .with_failure_timeout(Duration::from_millis(300));
    let a = t.join_with(&name, cfg).unwrap();
    let mut victim = t.spawn("dep-idle", std::slice::from_ref(&name));
    let v = NodeId(field(&victim.expect_line("READY", WAIT), "node") as u16);
    let tx = a
        .segment("lost", 4096, 0o600)
        .unwrap()
        .map_tx(Dest::Node(v), TxAttrs::default())
        .unwrap();
    assert_eq!(
        tx.write_if_u64(0, 0, 1).unwrap()[0].outcome,
        Outcome::Applied
    );
    victim.stop();
    let r = tx.write_if_u64(0, 1, 2).unwrap();
    let got: Vec<_> = r.iter().map(|x| (x.node, x.outcome)).collect();
    if t.is_hub() {
        assert_eq!(got, vec![(v, Outcome::Lost)]);
    } else {
        assert!(
            got.is_empty() || got == vec![(v, Outcome::Applied)],
            "{got:?}"
        );
    }
    victim.kill9();
}
on_every_transport!(
    a_conditional_write_to_a_hung_destination_ends,
    memchan_testkit::harness::Timing {
        heartbeat: std::time::Duration::from_millis(50),
        failure_timeout: std::time::Duration::from_millis(300),
    }
);
