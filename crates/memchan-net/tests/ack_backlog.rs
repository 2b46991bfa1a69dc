//! "Backlogs are not failures": an `ack()` waits as long as its destinations keep
//! releasing, however long the backlog takes to drain, and fails (typed, naming the
//! wait) only once a connected destination released nothing for the failure timeout.
//!
//! The receiver is a raw node link driven by the test: it heartbeats (so the hub never
//! isolates it) and reads (and so releases) its deliveries either a window at a time with a
//! pause between (a slow receiver) or never again (a stuck one). Nothing asserts how fast anything is: the
//! slow case counts releases, each one a pause after the last, that happened while the
//! ack waited; deadlines are hang guards only.

#[allow(dead_code)]
mod common;
use memchan_core::{Dest, Error, NodeId, TxAttrs};
use memchan_hub::{Hub, HubConfig};
use memchan_link::link::{Handler, Link, LinkConfig};
use memchan_link::proto::{Op, SegInfo};
use memchan_link::wire::{Key, Kind};
use memchan_net::node::Node;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{mpsc, Arc};
use std::time::{Duration, Instant};

/// The no-progress bound of this test's cluster (the hub's and the node's failure
/// timeout): small, so that a backlog clearly outlasts it.
const FAILURE: Duration = Duration::from_millis(500);
/// The slow receiver's pause between two releases (well inside `FAILURE`).
const STEP: Duration = Duration::from_millis(25);
/// Writes in the backlog: a few per `STEP`, so draining them takes several `FAILURE`s.
const WRITES: usize = 200;
const HANG_GUARD: Duration = Duration::from_secs(60);

struct Receiver {
    released_during_ack: Arc<AtomicU64>,
    acking: Arc<AtomicBool>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Drop for Receiver {
    fn drop(&mut self) {
        self.stop.store(true, Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

struct Seqs(VecDeque<u64>, Vec<Vec<u8>>);
impl Handler for Seqs {
    fn frame(&mut self, _l: &Link, seq: u64, kind: Kind, p: &[u8]) {
        self.0.push_back(seq);
        if kind == Kind::Response {
            self.1.push(p.to_vec());
        }
    }
}

/// A hub, a node A with segment "s", and a raw receiver B that maps "s" rx and then
/// reads (so releases) what the hub's window let through every `STEP` (`slow`) or
/// never reads again (stuck), heartbeating throughout.
fn cluster(slow: bool) -> (Hub, Node, Receiver) {
    let key = Key::from_secret(b"backlog");
    let h = Hub::start(HubConfig {
        key: key.clone(),
        keyed: true,
        heartbeat: Duration::from_millis(50),
        failure_timeout: FAILURE,
        // A window of two frames, one delivery each (no batches): the slow receiver
        // gets at most a few deliveries per read, so the backlog drains in many small
        // steps.
        link: LinkConfig {
            window_frames: 2,
            batch_bytes: 0,
            ..LinkConfig::default()
        },
        ..HubConfig::default()
    })
    .unwrap();
    let addr = h.local_addr().to_string();
    let a = Node::join(
        "backlog",
        common::node_cfg(&addr, &key, Duration::from_millis(50), FAILURE),
    )
    .unwrap();
    a.segment("s", 1 << 16, 0o666).unwrap();
    let link_cfg = LinkConfig {
        peer_releases_on_receive: false,
        ..LinkConfig::default()
    };
    let host = if slow { "slow" } else { "stuck" };
    let (b, _) = common::raw_join(&addr, &key, "backlog", host, 0, link_cfg);
    // Setup: answers are released at once.
    let mut seqs = Seqs(VecDeque::new(), Vec::new());
    let mut ask = |op: Op, id: u32| {
        seqs.1.clear();
        b.send(Kind::Request, &[&op.put(id)]).unwrap();
        let t0 = Instant::now();
        while seqs.1.is_empty() {
            assert!(t0.elapsed() < HANG_GUARD, "no answer to {id}");
            b.wait(None, Duration::from_millis(20));
            b.receive(&mut seqs).unwrap();
            b.send_control(Kind::Heartbeat, &[]);
        }
        let (_, status, body) = memchan_link::proto::get_response(&seqs.1[0]).unwrap();
        assert_eq!(status, 0);
        body.to_vec()
    };
    let info = SegInfo::get(&ask(
        Op::SegOpen {
            create: false,
            size: 0,
            mode: 0,
            flags: 0,
            name: "s".into(),
        },
        1,
    ))
    .unwrap();
    ask(
        Op::MapRx {
            seg: info.seg,
            gen: info.gen,
        },
        2,
    );
    if let Some(&last) = seqs.0.back() {
        b.release(last);
        b.send_release(true);
    }
    seqs.0.clear();
    let released_during_ack = Arc::new(AtomicU64::new(0));
    let acking = Arc::new(AtomicBool::new(false));
    let stop = Arc::new(AtomicBool::new(false));
    let (r2, a2, s2) = (released_during_ack.clone(), acking.clone(), stop.clone());
    let thread = std::thread::spawn(move || {
        let mut last_read = Instant::now();
        while !s2.load(Relaxed) {
            // A node applies on receipt: reading is releasing (the hub's frames to a
            // node are released by the link's receive acknowledgement).
            if slow && last_read.elapsed() >= STEP {
                seqs.0.clear();
                if b.receive(&mut seqs).is_err() {
                    return;
                }
                b.send_release(true);
                last_read = Instant::now();
                if !seqs.0.is_empty() && a2.load(Relaxed) {
                    r2.fetch_add(1, Relaxed);
                }
            }
            b.send_control(Kind::Heartbeat, &[]);
            b.tick();
            std::thread::sleep(Duration::from_millis(5));
        }
        b.shutdown();
    });
    let r = Receiver {
        released_during_ack,
        acking,
        stop,
        thread: Some(thread),
    };
    (h, a, r)
}

/// Writes `WRITES` packets from A to B, then acks in a thread; the ack's result, or a
/// failure of the hang guard.
fn backlog_then_ack(a: Node, r: &Receiver) -> (Node, memchan_core::Result<()>) {
    let tx = a
        .segment("s", 1 << 16, 0o666)
        .unwrap()
        .map_tx(Dest::Node(NodeId(1)), TxAttrs::default())
        .unwrap();
    for i in 0..WRITES {
        tx.write(i * 8, &(i as u64).to_le_bytes()).unwrap();
    }
    r.acking.store(true, Relaxed);
    let (send, recv) = mpsc::channel();
    std::thread::spawn(move || {
        let res = a.ack();
        let _ = send.send((a, res));
    });
    recv.recv_timeout(HANG_GUARD).expect("ack hung")
}

#[test]
fn an_ack_outlives_the_failure_timeout_while_a_slow_receiver_drains() {
    let (h, a, r) = cluster(true);
    let (a, res) = backlog_then_ack(a, &r);
    let during = r.released_during_ack.load(Relaxed);
    println!("ack: {res:?} after {during} releases {STEP:?} apart (failure timeout {FAILURE:?})");
    res.expect("a draining backlog is not a failure");
    // Each release came at least `STEP` after the one before, so the ack waited at
    // least `during * STEP`: twice the no-progress bound and more.
    let outlived = (FAILURE.as_millis() * 2 / STEP.as_millis()) as u64;
    assert!(
        during >= outlived,
        "only {during} releases during the ack: the backlog was not behind it"
    );
    assert_eq!(h.status().isolations, 0, "nobody was isolated");
    drop(a);
}

#[test]
fn an_ack_fails_typed_when_a_connected_receiver_releases_nothing() {
    let (h, a, r) = cluster(false);
    let (a, res) = backlog_then_ack(a, &r);
    println!("ack: {res:?}");
    match res {
        Err(Error::Timeout(d, what)) => {
            assert_eq!(d, FAILURE, "the no-progress bound is the failure timeout");
            assert!(what.contains("release"), "{what}");
        }
        other => panic!("expected a typed no-progress timeout, got {other:?}"),
    }
    // The receiver was slow, not dead: it is still a member, and A still works.
    assert_eq!(
        h.status().isolations,
        0,
        "B heartbeated, so it stays a member"
    );
    assert_eq!(a.members().len(), 2);
    drop(a);
    drop(r);
}

/// An ack covers this node's own writes: a node that sent nothing since its last
/// answered ack (here: nothing at all) is answered without the hub, so another node's
/// backlog at a stuck receiver does not hold it (the hub's ack waits for every link).
#[test]
fn an_ack_with_nothing_sent_is_not_held_by_another_nodes_backlog() {
    let (h, a, r) = cluster(false);
    let addr = h.local_addr().to_string();
    let key = Key::from_secret(b"backlog");
    let c = Node::join(
        "backlog",
        common::node_cfg(&addr, &key, Duration::from_millis(50), FAILURE),
    )
    .unwrap();
    let (a, res) = backlog_then_ack(a, &r);
    assert!(
        matches!(res, Err(Error::Timeout(..))),
        "A's backlog is stuck at B: {res:?}"
    );
    c.ack().expect("C sent nothing: its ack waits for no one");
    // A write after it is covered by the next ack, which asks the hub again: B holds
    // it like A's, so that ack fails the same typed way.
    let tx = c
        .segment("s", 1 << 16, 0o666)
        .unwrap()
        .map_tx(Dest::Node(NodeId(1)), TxAttrs::default())
        .unwrap();
    tx.write_u64(0, 7).unwrap();
    assert!(
        matches!(c.ack(), Err(Error::Timeout(..))),
        "C's write to the stuck B is not acknowledged"
    );
    drop((a, c));
    drop(r);
}
