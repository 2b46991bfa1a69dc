//! Message passing across real processes, on every transport: a randomized exchange
//! (several senders, wildcards, both modes, sizes across the eager limit and the bulk
//! chunk) checked for once, intact and MPI order (also through a faulty relay, and
//! between network namespaces under nftables packet loss); truncation keeps the message; a peer
//! that leaves completes pending operations with `PeerGone`; a synchronous ping-pong
//! whose waits sleep at once (acknowledgements in ack words and in `Ack` slots).

use memchan::Cluster;
use memchan_msg::{Comm, CommConfig, MsgError, Request, ANY_SOURCE, ANY_TAG, EAGER_MAX};
use memchan_testkit::harness::{args, log_to_stderr, unique_cluster, Timing, Transport};
use memchan_testkit::on_every_transport;
use std::time::Duration;

const NODES: usize = 5;
const PER_NODE: usize = 120;
const ZC_SEG: usize = 1 << 20;
/// A generous failure timeout: these tests do not time failure detection (a peer
/// leaves explicitly), and a loaded CI machine must not isolate a busy worker.
const TIMING: Timing = Timing {
    heartbeat: Duration::from_millis(100),
    failure_timeout: Duration::from_secs(5),
};

/// Worker entry: the tests re-execute this binary with `MEMCHAN_ROLE` set.
#[test]
#[ignore = "entry point for worker processes"]
fn worker() {
    log_to_stderr();
    std::thread::spawn(|| {
        std::thread::sleep(Duration::from_secs(300));
        eprintln!("worker watchdog: still running after 300 s, exiting");
        std::process::exit(3);
    });
    let a = args();
    match std::env::var("MEMCHAN_ROLE")
        .expect("MEMCHAN_ROLE")
        .as_str()
    {
        "exchange" => exchange_worker(&a),
        "gone" => gone_worker(&a),
        "syncpp" => sync_pingpong_worker(&a),
        other => panic!("unknown role {other}"),
    }
}

/// One message of the schedule every node derives from the seed.
#[derive(Clone, Copy, Debug)]
struct Msg {
    src: u32,
    k: u32,
    dest: u32,
    tag: u32,
    len: usize,
    sync: bool,
}

fn schedule(seed: u64, nodes: u32) -> Vec<Msg> {
    let mut out = Vec::new();
    for src in 0..nodes {
        let mut rng = fastrand::Rng::with_seed(seed ^ (u64::from(src) << 32));
        for k in 0..PER_NODE as u32 {
            let dest = (src + 1 + rng.u32(0..nodes - 1)) % nodes;
            let len = match rng.u8(0..4) {
                0 => rng.usize(8..=EAGER_MAX),
                1 => rng.usize(EAGER_MAX + 1..5000),
                2 => rng.usize(60_000..70_000),
                _ => rng.usize(100_000..200_000),
            };
            out.push(Msg {
                src,
                k,
                dest,
                tag: rng.u32(0..3),
                len,
                sync: rng.bool(),
            });
        }
    }
    out
}

fn byte(m: &Msg, i: usize) -> u8 {
    (i as u32)
        .wrapping_mul(31)
        .wrapping_add(m.k * 7 + m.src * 13) as u8
}

fn payload(m: &Msg) -> Vec<u8> {
    let mut v: Vec<u8> = (0..m.len).map(|i| byte(m, i)).collect();
    v[..4].copy_from_slice(&m.k.to_le_bytes());
    v[4..8].copy_from_slice(&m.src.to_le_bytes());
    v
}

/// Worker: `cluster seed` — sends its part of the schedule (postal or synchronous,
/// non-blocking), receives everything addressed to it with random wildcard patterns
/// (blocking, non-blocking and into an rx mapping) and checks each message.
fn exchange_worker(a: &[String]) {
    let (name, seed) = (&a[0], a[1].parse::<u64>().unwrap());
    // A third argument: the hub (or relay) to join through, with the tests' failure
    // timeout (a link recovering lost segments must not get a busy node isolated).
    let cfg = memchan::Config::default()
        .with_heartbeat(TIMING.heartbeat)
        .with_failure_timeout(TIMING.failure_timeout);
    let cfg = match a.get(2) {
        Some(hub) => cfg.with_hub(memchan::HubSpec::connect(hub.as_str())),
        None => cfg.without_hub(),
    };
    let c = Cluster::join_with(name, cfg).unwrap();
    c.wait_for_members(NODES, Duration::from_secs(30)).unwrap();
    let me = c.node_id().0 as u32;
    let zc = c.segment(&format!("zc{me}"), ZC_SEG, 0o600).unwrap();
    let zrx = zc.map_rx().unwrap();
    let cfg = CommConfig {
        ring_slots: 16,
        chunks: 2,
        ..CommConfig::default()
    };
    let mut comm = Comm::new(&c, "x", cfg).unwrap();
    let all = schedule(seed, NODES as u32);
    let mut sends: Vec<Request> = Vec::new();
    for m in all.iter().filter(|m| m.src == me) {
        // Some small buffered ones by blocking send (its eager path writes the slot
        // at once when nothing is queued before it and the ring has room).
        if !m.sync && m.len <= EAGER_MAX && m.k % 2 == 1 {
            comm.send(m.dest, m.tag, &payload(m)).unwrap();
            continue;
        }
        let r = if m.sync {
            comm.issend(m.dest, m.tag, payload(m))
        } else {
            comm.isend(m.dest, m.tag, payload(m))
        };
        sends.push(r.unwrap());
    }
    let mut rng = fastrand::Rng::with_seed(seed ^ 0xabcd ^ u64::from(me));
    let mut pending: Vec<Msg> = all.iter().filter(|m| m.dest == me).copied().collect();
    let total = pending.len();
    let mut truncations = 0;
    while !pending.is_empty() {
        // A pattern that some pending message matches, so the receive completes.
        let pick = pending[rng.usize(0..pending.len())];
        let src = if rng.bool() { ANY_SOURCE } else { pick.src };
        let tag = if rng.bool() { ANY_TAG } else { pick.tag };
        // With one source named, the message due is its first pending one the pattern
        // matches (MPI's non-overtaking rule); with any source, the first of some source.
        let matches =
            |m: &Msg| (src == ANY_SOURCE || m.src == src) && (tag == ANY_TAG || m.tag == tag);
        let due = *pending
            .iter()
            .filter(|m| matches(m))
            .min_by_key(|m| (m.src, m.k))
            .unwrap();
        let exact = src != ANY_SOURCE;
        let (status, data) = match rng.u8(0..5) {
            // Too small first (only when the due message is certain: one source),
            // then again with room: it must not be lost.
            0 if exact && due.len > 8 => {
                let mut small = vec![0u8; due.len - 1];
                match comm.recv(src, due.tag, &mut small) {
                    Err(MsgError::Truncated { node, len, .. }) => {
                        assert_eq!((node, len), (due.src, due.len));
                        truncations += 1;
                    }
                    other => panic!("expected Truncated, got {other:?}"),
                }
                let mut buf = vec![0u8; 200_000];
                let s = comm.recv(src, due.tag, &mut buf).unwrap();
                buf.truncate(s.len);
                (s, buf)
            }
            1 => {
                let s = comm.recv_rx(src, tag, &zrx, 4096, 200_000).unwrap();
                let mut buf = vec![0u8; s.len];
                zrx.read(4096, &mut buf).unwrap();
                (s, buf)
            }
            2 => {
                let r = comm.irecv(src, tag, vec![0u8; 200_000]).unwrap();
                let done = loop {
                    if let Some(done) = comm.test(r).unwrap() {
                        break done;
                    }
                };
                let s = done.result.unwrap();
                let mut buf = done.buf;
                buf.truncate(s.len);
                (s, buf)
            }
            3 => {
                let mut buf = vec![0u8; 200_000];
                let s = comm.recv(src, tag, &mut buf).unwrap();
                buf.truncate(s.len);
                (s, buf)
            }
            _ => {
                // The caller's memory, as a C API passes it.
                let mut buf = vec![0u8; 200_000];
                // SAFETY: `buf` is neither moved nor touched until `wait` returns.
                let r = unsafe { comm.irecv_ptr(src, tag, buf.as_mut_ptr(), buf.len()) }.unwrap();
                let s = comm.wait(r).result.unwrap();
                buf.truncate(s.len);
                (s, buf)
            }
        };
        let k = u32::from_le_bytes(data[..4].try_into().unwrap());
        let from = u32::from_le_bytes(data[4..8].try_into().unwrap());
        let at = pending
            .iter()
            .position(|m| m.src == from && m.k == k)
            .unwrap_or_else(|| panic!("node {from} message {k}: not expected here, or twice"));
        let m = pending.remove(at);
        assert_eq!(
            (status.source, status.tag, status.len),
            (m.src, m.tag, m.len),
            "envelope of {m:?}"
        );
        assert!(data == payload(&m), "{m:?} arrived damaged");
        let earlier = pending
            .iter()
            .find(|e| e.src == m.src && e.k < m.k && matches(e));
        assert!(
            earlier.is_none(),
            "pattern ({src}, {tag}) got {m:?} but {earlier:?} was sent earlier"
        );
        assert!(src == ANY_SOURCE || m.src == src, "{m:?} for source {src}");
        assert!(tag == ANY_TAG || m.tag == tag, "{m:?} for tag {tag}");
    }
    for done in comm.wait_all(&sends).unwrap() {
        done.result.unwrap();
    }
    comm.finish().unwrap();
    println!("done received={total} truncations={truncations}");
    c.barrier().unwrap();
}

fn random_exchange_arrives_once_intact_in_order(t: &Transport) {
    let name = unique_cluster("mp");
    let seed = fastrand::u64(..);
    eprintln!("seed {seed}");
    let ws: Vec<_> = (0..NODES)
        .map(|_| t.spawn("exchange", &[name.clone(), seed.to_string()]))
        .collect();
    check_exchange(ws, seed);
}
on_every_transport!(random_exchange_arrives_once_intact_in_order, crate::TIMING);

/// The same exchange through a hub whose links pass a relay that drops, corrupts,
/// duplicates and reorders frames: the links' recovery leaves the message layer
/// nothing to notice.
#[test]
fn random_exchange_through_a_faulty_relay() {
    use memchan_testkit::relay::{Relay, RelayConfig};
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::sync::Arc;
    let hub = Transport::hub_timed(TIMING);
    let Transport::Hub(h) = &hub else {
        unreachable!("hub_timed gives a hub")
    };
    let seed = fastrand::u64(..);
    eprintln!("seed {seed}");
    let relay = Relay::bind(RelayConfig {
        drop: 0.01,
        corrupt: 0.01,
        dup: 0.01,
        reorder: 0.01,
        seed,
        ..RelayConfig::new("127.0.0.1:0", &h.local_addr().to_string())
    })
    .unwrap();
    let addr = relay.local_addr().to_string();
    let stats = relay.stats();
    let stop = Arc::new(AtomicBool::new(false));
    let runner = {
        let stop = stop.clone();
        std::thread::spawn(move || relay.run(&stop))
    };
    let name = unique_cluster("mprelay");
    let ws: Vec<_> = (0..NODES)
        .map(|_| {
            memchan_testkit::harness::Worker::spawn(
                "exchange",
                &[name.clone(), seed.to_string(), addr.clone()],
            )
        })
        .collect();
    check_exchange(ws, seed);
    let c = stats.snapshot();
    eprintln!("relay: {}", c.summary());
    assert!(
        c.dropped > 0 && c.corrupted > 0 && c.duplicated > 0 && c.reordered > 0,
        "every fault was hit: {}",
        c.summary()
    );
    stop.store(true, Ordering::SeqCst);
    runner.join().unwrap();
}

/// The same exchange between network namespaces: the nodes on two hosts, the hub in
/// a third namespace between them, nftables dropping 3% of the packets on the hub's
/// veths (its counters say they dropped some). TCP recovers the segments; every
/// message still arrives once, intact and in MPI's order.
#[test]
fn random_exchange_between_network_namespaces_under_packet_loss() {
    use memchan_testkit::netns::{in_ns, Topology};
    let topo = Topology::new("mpx", 2);
    let hub = in_ns(&topo.hub_ns, || {
        memchan_hub::Hub::start(memchan_hub::HubConfig {
            listen: "0.0.0.0:0".into(),
            heartbeat: TIMING.heartbeat,
            failure_timeout: TIMING.failure_timeout,
            ..Default::default()
        })
        .expect("a hub in the hub namespace")
    });
    let port = hub.local_addr().port();
    topo.nft_drop(&topo.hub_ns, "vb*", 3);
    let seed = fastrand::u64(..);
    eprintln!("seed {seed}");
    let name = unique_cluster("mpns");
    let ws: Vec<_> = (0..NODES)
        .map(|i| {
            let h = &topo.hosts[i % topo.hosts.len()];
            let at = format!("{}:{port}", h.hub_addr);
            topo.worker(
                &h.ns,
                "exchange",
                &[name.clone(), seed.to_string(), at],
                &[],
            )
        })
        .collect();
    check_exchange(ws, seed);
    let dropped = topo.nft_dropped(&topo.hub_ns);
    eprintln!("nftables dropped {dropped} packets");
    assert!(
        dropped > 0,
        "nftables dropped nothing: the loss was not felt"
    );
    topo.nft_clear(&topo.hub_ns);
    drop(hub);
}

/// Waits for every exchange worker's count and exit.
fn check_exchange(mut ws: Vec<memchan_testkit::harness::Worker>, seed: u64) {
    let expected = schedule(seed, NODES as u32);
    let mut got = 0;
    for w in &mut ws {
        let line = w.expect_line("done", Duration::from_secs(240));
        got += memchan_testkit::harness::field(&line, "received");
    }
    assert_eq!(got as usize, expected.len());
    for w in &mut ws {
        w.finish(Duration::from_secs(30));
    }
}

/// Worker: `cluster role` — node "stay" posts a receive from the other node and a
/// synchronous send to it, then waits for both; "leave" joins the communicator and
/// leaves the cluster.
fn gone_worker(a: &[String]) {
    let c = Cluster::join(&a[0]).unwrap();
    c.wait_for_members(2, Duration::from_secs(30)).unwrap();
    let me = c.node_id().0 as u32;
    let mut comm = Comm::new(&c, "g", CommConfig::default()).unwrap();
    let other = comm.ranks().into_iter().find(|&r| r != me).unwrap();
    if a[1] == "leave" {
        // Leave only once the other node has this one in its communicator.
        let mut b = [0u8; 8];
        comm.recv(other, 0, &mut b).unwrap();
        drop(comm);
        c.leave();
        return;
    }
    comm.send(other, 0, b"hello").unwrap();
    let r = comm.irecv(other, 1, vec![0; 16]).unwrap();
    let s = comm.issend(other, 1, vec![7; 1000]).unwrap();
    println!("posted");
    let done = comm.wait_all(&[r, s]).unwrap();
    for d in done {
        assert!(
            matches!(d.result, Err(MsgError::PeerGone(n)) if n == other),
            "{:?}",
            d.result
        );
    }
    // And a new operation on it is refused at once.
    assert!(matches!(
        comm.isend(other, 1, vec![1]),
        Err(MsgError::PeerGone(_))
    ));
    println!("gone ok");
}

fn a_peer_that_leaves_fails_pending_operations(t: &Transport) {
    let name = unique_cluster("mpgone");
    let mut stay = t.spawn("gone", &[name.clone(), "stay".into()]);
    let mut leave = t.spawn("gone", &[name.clone(), "leave".into()]);
    stay.expect_line("gone ok", Duration::from_secs(120));
    stay.finish(Duration::from_secs(30));
    leave.finish(Duration::from_secs(30));
}
on_every_transport!(a_peer_that_leaves_fails_pending_operations, crate::TIMING);

const SYNC_ROUNDS: u32 = 300;

/// The bytes of round `r`'s message `i` (1..=EAGER_MAX long).
fn sync_payload(r: u32, i: u32) -> Vec<u8> {
    let len = 1 + (r as usize * 7 + i as usize) % EAGER_MAX;
    (0..len).map(|k| (k as u32 ^ r ^ (i << 5)) as u8).collect()
}

/// Worker: `cluster role` — a ping-pong of small synchronous messages with a spin of
/// one idle poll, so that waits sleep (and announce it) at once. "ping" sends one
/// blocking synchronous message a round, two non-blocking ones every third round
/// (the second one's acknowledgement finds the ack word taken: an `Ack` slot), a
/// postal one every fourth; "pong" receives them and answers with a blocking
/// synchronous message, or a postal one every other round. Lengths 1..=40 bytes.
fn sync_pingpong_worker(a: &[String]) {
    let c = Cluster::join(&a[0]).unwrap();
    c.wait_for_members(2, Duration::from_secs(30)).unwrap();
    let me = c.node_id().0 as u32;
    let cfg = CommConfig {
        spin: 1,
        ring_slots: 8,
        ..CommConfig::default()
    };
    let mut comm = Comm::new(&c, "s", cfg).unwrap();
    let other = comm.ranks().into_iter().find(|&r| r != me).unwrap();
    let ping = a[1] == "ping";
    let mut buf = [0u8; EAGER_MAX];
    for r in 0..SYNC_ROUNDS {
        let two = r % 3 == 2;
        if ping {
            if two {
                let s1 = comm.issend(other, 1, sync_payload(r, 1)).unwrap();
                let s2 = comm.issend(other, 2, sync_payload(r, 2)).unwrap();
                for d in comm.wait_all(&[s1, s2]).unwrap() {
                    d.result.unwrap();
                }
            } else if r % 4 == 1 {
                comm.send(other, 1, &sync_payload(r, 1)).unwrap();
            } else {
                comm.ssend(other, 1, &sync_payload(r, 1)).unwrap();
            }
            let s = comm.recv(other, 3, &mut buf).unwrap();
            assert_eq!(&buf[..s.len], &sync_payload(r, 3)[..], "round {r} answer");
        } else {
            for i in if two { 1..=2 } else { 1..=1 } {
                let s = comm.recv(other, i, &mut buf).unwrap();
                assert_eq!((s.source, s.tag), (other, i));
                assert_eq!(
                    &buf[..s.len],
                    &sync_payload(r, i)[..],
                    "round {r} message {i}"
                );
            }
            if r % 2 == 0 {
                comm.send(other, 3, &sync_payload(r, 3)).unwrap();
            } else {
                comm.ssend(other, 3, &sync_payload(r, 3)).unwrap();
            }
        }
    }
    comm.finish().unwrap();
    println!("done rounds={SYNC_ROUNDS}");
    c.barrier().unwrap();
}

fn synchronous_and_postal_pingpong_with_sleeping_waits(t: &Transport) {
    let name = unique_cluster("mpsync");
    let mut ws: Vec<_> = ["pong", "ping"]
        .iter()
        .map(|role| t.spawn("syncpp", &[name.clone(), role.to_string()]))
        .collect();
    for w in &mut ws {
        let line = w.expect_line("done", Duration::from_secs(240));
        assert_eq!(
            memchan_testkit::harness::field(&line, "rounds"),
            u64::from(SYNC_ROUNDS)
        );
    }
    for w in &mut ws {
        w.finish(Duration::from_secs(30));
    }
}
on_every_transport!(
    synchronous_and_postal_pingpong_with_sleeping_waits,
    crate::TIMING
);
