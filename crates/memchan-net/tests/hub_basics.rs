//! The hub transport in one process over loopback TCP: joins, writes in order, ack,
//! lock, barrier, membership events, and the handshake's refusals.

use memchan_core::{Dest, EventKind, RxAttrs, TxAttrs};
use memchan_hub::{Hub, HubConfig};
use memchan_link::link::LinkConfig;
use memchan_link::wire::Key;
use memchan_net::node::{HubSpec, NetConfig, Node};
use std::time::Duration;

#[allow(dead_code)]
mod common;

fn cfg(addr: &str, key: &Key) -> NetConfig {
    common::node_cfg(
        addr,
        key,
        Duration::from_millis(50),
        Duration::from_millis(600),
    )
}

/// Two nodes of `cluster`: the first hosts the hub (a virtual hub), the second joins
/// it; both see each other.
fn virtual_pair(cluster: &str, key: &Key) -> (Node, Node) {
    let mut c = cfg("127.0.0.1:0", key);
    c.hub = HubSpec::Host("127.0.0.1:0".into());
    let host = Node::join(cluster, c).expect("hosts the hub");
    let addr = host.hosted_hub().unwrap().local_addr().to_string();
    let other = Node::join(cluster, cfg(&addr, key)).expect("joins the hosted hub");
    host.wait_for_members(2, Duration::from_secs(5)).unwrap();
    other.wait_for_members(2, Duration::from_secs(5)).unwrap();
    (host, other)
}

fn hub(key: &Key) -> Hub {
    let (hub, _) = common::keyed_hub(key, |c| {
        c.heartbeat = Duration::from_millis(50);
        c.failure_timeout = Duration::from_millis(600);
    });
    hub
}

#[test]
fn writes_arrive_in_order_and_ack_covers_them() {
    let key = Key::from_secret(b"basics");
    let h = hub(&key);
    let addr = h.local_addr().to_string();
    let a = Node::join("basics", cfg(&addr, &key)).expect("a joins");
    let b = Node::join("basics", cfg(&addr, &key)).expect("b joins");
    assert_ne!(a.id(), b.id());
    b.wait_for_members(2, Duration::from_secs(5)).unwrap();
    let rx = b.segment("s", 1 << 20, 0o600).unwrap().map_rx().unwrap();
    let tx = a
        .segment("s", 1 << 20, 0o600)
        .unwrap()
        .map_tx(Dest::Node(b.id()), TxAttrs::default())
        .unwrap();
    for i in 0..1000u64 {
        tx.write_u64(0, i).unwrap();
    }
    let big: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
    tx.write(8, &big).unwrap();
    a.ack().unwrap();
    assert_eq!(rx.load_u64(0).unwrap(), 999);
    let mut back = vec![0; big.len()];
    rx.read(8, &mut back).unwrap();
    assert!(back == big, "large write arrived intact");
}

#[test]
fn virtual_hub_two_nodes_notify_and_local_copy() {
    let (a, b) = virtual_pair("virt", &Key::from_secret(b"virtual"));
    let seg_a = a.segment("v", 4096, 0o600).unwrap();
    let rx_a = seg_a.map_rx().unwrap();
    let rx_b = b
        .segment("v", 4096, 0o600)
        .unwrap()
        .map_rx_with(RxAttrs {
            receive_enable: true,
            notify: true,
            remote_read: false,
        })
        .unwrap();
    let tx = seg_a
        .map_tx(
            Dest::Broadcast,
            TxAttrs {
                local_copy: true,
                ..TxAttrs::default()
            },
        )
        .unwrap();
    tx.write_u64(16, 42).unwrap();
    assert!(rx_b.wait(Some(Duration::from_secs(5))).unwrap());
    assert_eq!(rx_b.load_u64(16).unwrap(), 42);
    a.ack().unwrap();
    assert_eq!(rx_a.load_u64(16).unwrap(), 42, "local copy");
    // And the other way, through the hosted hub.
    let txb = b
        .segment("v", 4096, 0o600)
        .unwrap()
        .map_tx(Dest::Node(a.id()), TxAttrs::default())
        .unwrap();
    txb.write_u32(40, 7).unwrap();
    b.ack().unwrap();
    assert_eq!(rx_a.load_u32(40).unwrap(), 7);
}

#[test]
fn lock_barrier_and_failure_event() {
    let key = Key::from_secret(b"lock");
    let h = hub(&key);
    let addr = h.local_addr().to_string();
    let a = Node::join("lk", cfg(&addr, &key)).unwrap();
    let b = Node::join("lk", cfg(&addr, &key)).unwrap();
    a.wait_for_members(2, Duration::from_secs(5)).unwrap();
    let la = a.lock("m").unwrap();
    let lb = b.lock("m").unwrap();
    let g = la.acquire().unwrap();
    assert!(lb.try_acquire().unwrap().is_none(), "held by a");
    drop(g);
    let g = lb.acquire().unwrap();
    g.release().unwrap();
    std::thread::scope(|s| {
        s.spawn(|| a.barrier().unwrap());
        b.barrier().unwrap();
    });
    // b holds the lock and leaves: a can take it; a sees the Left event.
    let g = lb.acquire().unwrap();
    std::mem::forget(g);
    let (bid, binc) = (b.id(), b.incarnation());
    drop(lb);
    drop(b);
    let mut saw = false;
    while let Some(e) = a.next_event(Some(Duration::from_secs(3))) {
        if e.node == bid && e.incarnation == binc && e.kind == EventKind::Left {
            saw = true;
            break;
        }
    }
    assert!(saw, "a sees b leave");
    let g = la.acquire().expect("lock released with its leaving holder");
    drop(g);
}

#[test]
fn wrong_key_is_refused_and_the_hub_keeps_serving() {
    let key = Key::from_secret(b"right");
    let h = hub(&key);
    let addr = h.local_addr().to_string();
    let good = Node::join("k", cfg(&addr, &key)).unwrap();
    let err = Node::join("k", cfg(&addr, &Key::from_secret(b"wrong")))
        .err()
        .expect("refused");
    let msg = err.to_string();
    assert!(msg.contains("wrong cluster key"), "{msg}");
    assert_eq!(h.status().refused, 1);
    let other = Node::join("k", cfg(&addr, &key)).unwrap();
    good.wait_for_members(2, Duration::from_secs(5)).unwrap();
    drop(other);
}

/// What a peer without the cluster key can see does not let it join: a node's Join
/// recorded on one connection and replayed on another fails there (its MAC is bound
/// to the first connection's hub nonce), and so does a Join that echoes the right
/// nonce under the open key or under another cluster's key. Each is refused by name;
/// the hub keeps serving.
#[test]
fn recorded_or_unkeyed_joins_are_refused() {
    use memchan_link::handshake::{read_frame, HandshakeError, STEP};
    use memchan_link::proto::reply::JoinRefusal;
    use memchan_link::proto::{Join, ROLE_NODE};
    use memchan_link::wire::{encode, Decoder, Kind};
    use std::io::Write;
    use std::time::Instant;
    let key = Key::from_secret(b"recorded");
    let h = hub(&key);
    let addr = h.local_addr();
    // Connects and reads the Hello: the socket, its decoder and the hub's nonce.
    let hello = || {
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        let mut d = Decoder::new(None);
        let (hd, p) = read_frame(&mut s, &mut d, Instant::now() + STEP).expect("hello");
        assert_eq!(hd.kind, Kind::Hello);
        let nonce: [u8; 16] = p[..16].try_into().unwrap();
        (s, d, nonce)
    };
    let join_frame = |under: &memchan_link::wire::FrameKey, hub_nonce: [u8; 16]| {
        let join = Join {
            hub_nonce,
            node_nonce: [7; 16],
            role: ROLE_NODE,
            page_size: 0,
            pid: std::process::id(),
            uid: 0,
            gid: 0,
            cluster: "recorded".into(),
            host: "somewhere".into(),
            domain: memchan_link::proto::NO_DOMAIN,
        };
        let mut f = Vec::new();
        encode(&mut f, under, 1, Kind::Join, 0, 0, &[&join.put()]);
        f
    };
    let refusal = |mut s: std::net::TcpStream, mut d: Decoder, frame: &[u8]| {
        s.write_all(frame).unwrap();
        match read_frame(&mut s, &mut d, Instant::now() + STEP) {
            Err(HandshakeError::Refused(why)) => why,
            other => panic!("not refused: {other:?}"),
        }
    };
    // A legitimate Join, made for the first connection (as a recording would hold it).
    let (_first, _, n1) = hello();
    let recorded = join_frame(&key.join(&n1), n1);
    let (s, d, n2) = hello();
    assert_ne!(n1, n2, "hub nonces repeat");
    assert_eq!(refusal(s, d, &recorded), JoinRefusal::WrongKey);
    // The right nonce, without the key.
    for wrong in [Key::open(), Key::from_secret(b"another cluster")] {
        let (s, d, n) = hello();
        let why = refusal(s, d, &join_frame(&wrong.join(&n), n));
        assert_eq!(why, JoinRefusal::WrongKey);
    }
    assert_eq!(h.status().refused, 3);
    assert_eq!(h.status().joins, 0);
    let node = Node::join("recorded", cfg(&addr.to_string(), &key)).unwrap();
    node.ack().unwrap();
    assert_eq!(h.status().joins, 1);
}

#[test]
fn garbage_and_another_protocol_version_are_refused_by_name() {
    use memchan_link::proto::reply::JoinRefusal;
    use memchan_link::wire::{Decoder, Received};
    use std::io::{Read, Write};
    let key = Key::from_secret(b"hostile");
    let h = hub(&key);
    let addr = h.local_addr();
    let member = Node::join("hostile", cfg(&addr.to_string(), &key)).unwrap();
    let reply = |bytes: &[u8]| {
        let mut s = std::net::TcpStream::connect(addr).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        s.write_all(bytes).unwrap();
        let mut all = Vec::new();
        let _ = s.read_to_end(&mut all);
        // The Hello, then the Refuse.
        let mut d = Decoder::new(None);
        d.push(&all);
        let mut why = None;
        while let Some(r) = d.next_frame().expect("the hub's frames decode") {
            if let Received::Refused(p) = r {
                why = Some(JoinRefusal::get(&p).expect("a refusal of this build"));
            }
        }
        why.unwrap_or_else(|| panic!("no refusal in {all:?}"))
    };
    let garbage = reply(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n------------------");
    assert!(matches!(garbage, JoinRefusal::NotANode(_)), "{garbage}");
    assert!(garbage.to_string().contains("not a memchan"), "{garbage}");
    let mut frame = Vec::new();
    memchan_link::wire::encode(
        &mut frame,
        &key.join(&[0; 16]),
        1,
        memchan_link::wire::Kind::Join,
        0,
        0,
        &[b"x"],
    );
    frame[4] = 99; // protocol version 99
    let why = reply(&frame);
    assert!(
        matches!(why, JoinRefusal::Version { theirs: 99, .. }),
        "{why}"
    );
    assert!(why.to_string().contains("protocol version 99"), "{why}");
    assert_eq!(h.status().refused, 2);
    // The member was never touched and still works.
    member.ack().unwrap();
    assert_eq!(h.status().members.len(), 1);
}

#[test]
fn a_stuck_receiver_holds_the_sender_back_within_its_replay_memory() {
    use memchan_link::wire::Kind;
    let key = Key::from_secret(b"bp");
    let (h, addr) = common::keyed_hub(&key, |c| {
        c.heartbeat = Duration::from_millis(50);
        c.failure_timeout = Duration::from_secs(2);
    });
    let limit = 512 * 1024;
    let mut ca = cfg(&addr, &key);
    ca.link.replay_limit = limit;
    let a = Node::join("bp", ca).unwrap();
    a.segment("bp", 1 << 20, 0o666).unwrap();
    // B: a real node link that maps the segment rx and then never reads again, while a
    // thread keeps it alive with heartbeats (a slow receiver, not a dead one).
    let b = std::sync::Arc::new(
        common::raw_join(&addr, &key, "bp", "stuck", 0, LinkConfig::default()).0,
    );
    assert_eq!(common::raw_map_rx(&b, "bp"), 0);
    let stop = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (b2, stop2) = (b.clone(), stop.clone());
    let beat = std::thread::spawn(move || {
        while !stop2.load(std::sync::atomic::Ordering::Relaxed) {
            b2.send_control(Kind::Heartbeat, &[]);
            b2.tick();
            std::thread::sleep(Duration::from_millis(20));
        }
    });
    let tx = a
        .segment("bp", 1 << 20, 0o666)
        .unwrap()
        .map_tx(Dest::Node(memchan_core::NodeId(1)), TxAttrs::default())
        .unwrap();
    const CHUNK: usize = 64 * 1024;
    const CHUNKS: usize = 2000;
    let sent = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let sent2 = sent.clone();
    let writer = std::thread::spawn(move || {
        let chunk = vec![7u8; CHUNK];
        for i in 0..CHUNKS {
            if tx.write((i % 16) * chunk.len(), &chunk).is_err() {
                break;
            }
            sent2.fetch_add(chunk.len() as u64, std::sync::atomic::Ordering::Relaxed);
        }
    });
    let sent_now = || sent.load(std::sync::atomic::Ordering::Relaxed);
    // Hang guards only: each wait below ends as soon as its event is seen, and fails
    // the test only if the event never comes.
    let hang_guard = Duration::from_secs(60);
    let a_side = || {
        h.status()
            .members
            .into_iter()
            .find(|m| m.node == 0)
            .expect("A is a member")
    };
    // A's sender ran out of replay memory and waits: A's own count of back-pressure
    // waits, as its heartbeats report it to the hub.
    let t0 = std::time::Instant::now();
    let mut a_st = a_side();
    while a_st.node_side.backpressure_waits == 0 {
        assert!(
            t0.elapsed() < hang_guard,
            "A never waited for replay memory: {a_st:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
        a_st = a_side();
    }
    // Progress stopped: while the hub provably kept serving A's link (it read ten more
    // of A's heartbeats and wrote ten more frames to A), the writer did not complete
    // another write. Counted in the link's own frames, so a descheduled machine only
    // makes this take longer; it cannot make it pass or fail wrongly.
    let stuck_at = sent_now();
    let (rx0, tx0) = (a_st.hub_side.frames_rx, a_st.hub_side.frames_tx);
    let t0 = std::time::Instant::now();
    loop {
        let st = a_side();
        if st.hub_side.frames_rx >= rx0 + 10 && st.hub_side.frames_tx >= tx0 + 10 {
            a_st = st;
            break;
        }
        assert!(
            t0.elapsed() < hang_guard,
            "the hub stopped serving A: {st:?}"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let later = sent_now();
    println!("sent {stuck_at} bytes before back-pressure; hub sees {a_st:?}");
    assert_eq!(stuck_at, later, "the writer kept going: {a_st:?}");
    // What left A is bounded by A's replay memory plus what the sockets and the hub
    // buffer on the way.
    assert!(stuck_at < 64 << 20, "{stuck_at} bytes left A");
    // B dies (stops heartbeating): the hub isolates it and A is released.
    stop.store(true, std::sync::atomic::Ordering::Relaxed);
    beat.join().unwrap();
    let t0 = std::time::Instant::now();
    while sent_now() == later {
        assert!(t0.elapsed() < hang_guard, "A was never released");
        std::thread::sleep(Duration::from_millis(10));
    }
    writer.join().unwrap();
    // Its packets to the departed node are dropped and released at once: every one
    // of the writer's writes succeeded (a stalled one fails after the link's
    // back-pressure timeout and ends the writer early).
    assert_eq!(
        sent_now(),
        (CHUNK * CHUNKS) as u64,
        "released after isolation"
    );
    assert!(h.status().isolations >= 1);
    drop(b);
}

/// Thread X busy-polls the link waiting on segment "x", so it reads nearly every frame
/// that arrives; this thread blocks waiting on segment "y". A write to "y" that X reads
/// must still wake this thread (X's delivery wakes the other reading threads), not
/// leave it asleep in its poll.
///
/// What is asserted is that every write wakes the waiter: each `wait` returns `Ok(true)`
/// with the write there, the writer waiting for the waiter before its next write, so
/// every write needs a wake of its own. Deadlines are hang guards only. `wait` polls in
/// slices of at most 100 ms, so a wake that X fails to hand over costs the rest of the
/// slice (about 80 ms after each write here), not a hang, and how fast the waiter wakes
/// is not asserted (CI shares two busy cores): the latencies are printed, where a
/// missed hand-over shows as ~80 ms each. A time-free check of the hand-over needs a
/// wake-up counter in `memchan-net`'s node (there is none to read today).
#[test]
fn a_waiter_wakes_when_another_waiting_thread_reads_its_write() {
    use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
    use std::time::Instant;
    // Hang guard for each wait: far past any slice, only a lost wake-up comes near it.
    const HANG_GUARD: Duration = Duration::from_secs(60);
    let key = Key::from_secret(b"waiters");
    let h = hub(&key);
    let addr = h.local_addr().to_string();
    let a = Node::join("wt", cfg(&addr, &key)).unwrap();
    let b = Node::join("wt", cfg(&addr, &key)).unwrap();
    b.wait_for_members(2, Duration::from_secs(5)).unwrap();
    let notify = RxAttrs {
        receive_enable: true,
        notify: true,
        remote_read: false,
    };
    let rx_y = b
        .segment("y", 4096, 0o600)
        .unwrap()
        .map_rx_with(notify)
        .unwrap();
    let tx_y = a
        .segment("y", 4096, 0o600)
        .unwrap()
        .map_tx(Dest::Node(b.id()), TxAttrs::default())
        .unwrap();
    let stop = AtomicBool::new(false);
    // Stops X however this thread leaves the scope (a failed assertion included), so a
    // failure fails the test instead of leaving X spinning.
    struct StopOnDrop<'a>(&'a AtomicBool);
    impl Drop for StopOnDrop<'_> {
        fn drop(&mut self) {
            self.0.store(true, Ordering::Relaxed);
        }
    }
    // The last value the waiter saw: the writer writes the next one only after it.
    let seen = AtomicU64::new(0);
    let (sent_tx, sent_rx) = std::sync::mpsc::channel::<Instant>();
    let mut late = Vec::new();
    std::thread::scope(|s| {
        s.spawn(|| {
            let rx_x = b
                .segment("x", 4096, 0o600)
                .unwrap()
                .map_rx_with(notify)
                .unwrap();
            while !stop.load(Ordering::Relaxed) {
                rx_x.wait_spin(Some(Duration::from_millis(5))).unwrap();
            }
        });
        // A tx mapping belongs to one thread: this one's.
        let (tx_y, seen) = (tx_y, &seen);
        s.spawn(move || {
            for i in 1..=9u64 {
                let t0 = Instant::now();
                while seen.load(Ordering::Acquire) < i - 1 {
                    assert!(t0.elapsed() < HANG_GUARD, "the waiter never saw {}", i - 1);
                    std::thread::sleep(Duration::from_millis(1));
                }
                // Lets the waiter block in its poll again (scenario, not a bound).
                std::thread::sleep(Duration::from_millis(20));
                let t = Instant::now();
                tx_y.write_u64(0, i).unwrap();
                sent_tx.send(t).unwrap();
            }
        });
        let _stop_x = StopOnDrop(&stop);
        for i in 1..=9u64 {
            while rx_y.load_u64(0).unwrap() < i {
                assert!(
                    rx_y.wait(Some(HANG_GUARD)).unwrap(),
                    "write {i} never woke the waiter"
                );
            }
            let woke = Instant::now();
            assert_eq!(
                rx_y.load_u64(0).unwrap(),
                i,
                "the writer waits for the waiter"
            );
            seen.store(i, Ordering::Release);
            late.push(woke - sent_rx.recv().unwrap());
        }
    });
    late.sort();
    println!(
        "wake-up after a write another thread read: median {:?} of {late:?} \
         (~80 ms each would mean the wake was not handed over)",
        late[late.len() / 2]
    );
}

/// While the application waits for data it reads the link itself, and the node's
/// service thread sleeps on without listening for frames: a ping-pong of 1,000
/// rounds, one node in `wait`, the other in `wait_spin`, wakes neither node's service
/// thread once per message (an eventfd poked at every wait's end did: a context switch
/// per message that tripled the cross-host busy-poll latency). Counted by the nodes
/// themselves (`reader_wakeups`, in their heartbeats); a frame that lands between two
/// waits may still wake it, hence the margin of half the messages.
#[test]
fn a_node_waiting_for_data_does_not_wake_its_service_thread_per_message() {
    const ROUNDS: u64 = 1000;
    let hang_guard = Duration::from_secs(60);
    let key = Key::from_secret(b"deaf");
    let h = hub(&key);
    let addr = h.local_addr().to_string();
    // The hub's links: what the service threads read (no direct links).
    let through_hub = || NetConfig {
        direct: false,
        ..cfg(&addr, &key)
    };
    let a = Node::join("deaf", through_hub()).unwrap();
    let b = Node::join("deaf", through_hub()).unwrap();
    b.wait_for_members(2, Duration::from_secs(5)).unwrap();
    a.wait_for_members(2, Duration::from_secs(5)).unwrap();
    let notify = RxAttrs {
        receive_enable: true,
        notify: true,
        remote_read: false,
    };
    let rx_a = a
        .segment("pp", 4096, 0o600)
        .unwrap()
        .map_rx_with(notify)
        .unwrap();
    let to_b = a
        .segment("pp", 4096, 0o600)
        .unwrap()
        .map_tx(Dest::Node(b.id()), TxAttrs::default())
        .unwrap();
    let woken = |node: memchan_core::NodeId| {
        h.status()
            .members
            .into_iter()
            .find(|m| m.node == node.0)
            .expect("a member")
            .node_side
    };
    let before = (woken(a.id()).reader_wakeups, woken(b.id()).reader_wakeups);
    let (ready_tx, ready) = std::sync::mpsc::channel();
    std::thread::scope(|s| {
        s.spawn(|| {
            // B's mappings are its thread's own (a mapping is used from one thread).
            let rx_b = b
                .segment("pp", 4096, 0o600)
                .unwrap()
                .map_rx_with(notify)
                .unwrap();
            let to_a = b
                .segment("pp", 4096, 0o600)
                .unwrap()
                .map_tx(Dest::Node(a.id()), TxAttrs::default())
                .unwrap();
            ready_tx.send(()).unwrap();
            for i in 1..=ROUNDS {
                while rx_b.load_u64(0).unwrap() < i {
                    assert!(rx_b.wait(Some(hang_guard)).unwrap(), "ping {i} never came");
                }
                to_a.write_u64(0, i).unwrap();
            }
        });
        ready.recv().unwrap();
        for i in 1..=ROUNDS {
            to_b.write_u64(0, i).unwrap();
            while rx_a.load_u64(0).unwrap() < i {
                assert!(
                    rx_a.wait_spin(Some(hang_guard)).unwrap(),
                    "pong {i} never came"
                );
            }
        }
    });
    // The heartbeats after the ping-pong carry every frame of it.
    let t0 = std::time::Instant::now();
    for (node, was) in [(a.id(), before.0), (b.id(), before.1)] {
        let mut c = woken(node);
        while c.frames_rx < ROUNDS {
            assert!(
                t0.elapsed() < hang_guard,
                "no heartbeat after the ping-pong: {c:?}"
            );
            std::thread::sleep(Duration::from_millis(10));
            c = woken(node);
        }
        let wakes = c.reader_wakeups - was;
        println!(
            "node {}: {wakes} service-thread wake-ups for {ROUNDS} messages received",
            node.0
        );
        assert!(
            wakes <= ROUNDS / 2,
            "node {}'s service thread woke {wakes} times for {ROUNDS} messages it did not read",
            node.0
        );
    }
}

/// A spinning wait leaves its node's service thread (or, on the node hosting the
/// hub, the links' readers) deaf until the node's next send or wait or the thread's
/// next turn (`Reading::spinning`). A node that does neither after such a wait and
/// only polls its memory still sees the next write: nothing stays deaf for good. On a
/// node that connects to a hub and on one that hosts it.
#[test]
fn after_a_spinning_wait_a_node_that_only_polls_still_receives() {
    let hang_guard = Duration::from_secs(60);
    let (host, other) = virtual_pair("owed", &Key::from_secret(b"owed"));
    let notify = RxAttrs {
        receive_enable: true,
        notify: true,
        remote_read: false,
    };
    for (reader, writer) in [(&other, &host), (&host, &other)] {
        let name = format!("owed{}", reader.id().0);
        let rx = reader
            .segment(&name, 4096, 0o600)
            .unwrap()
            .map_rx_with(notify)
            .unwrap();
        let tx = writer
            .segment(&name, 4096, 0o600)
            .unwrap()
            .map_tx(Dest::Node(reader.id()), TxAttrs::default())
            .unwrap();
        tx.write_u64(0, 1).unwrap();
        while rx.load_u64(0).unwrap() < 1 {
            assert!(
                rx.wait_spin(Some(hang_guard)).unwrap(),
                "the first write never came"
            );
        }
        tx.write_u64(0, 2).unwrap();
        let t0 = std::time::Instant::now();
        while rx.load_u64(0).unwrap() < 2 {
            assert!(
                t0.elapsed() < hang_guard,
                "node {} never read the write after its spinning wait",
                reader.id().0
            );
            std::thread::yield_now();
        }
    }
}

/// A node that leaves is no destination any more: an ack under way as it leaves
/// does not fail naming it (`AckIncomplete` names nodes that failed before releasing
/// what they were sent). Before the hub dropped a leaver from the acks waiting for
/// its releases, an ack that had asked it for them as it left failed (seen in CI:
/// the RMA hammer's workers leaving one after the other). A race, tried many times.
#[test]
fn an_ack_under_way_while_a_destination_leaves_does_not_name_it() {
    const ROUNDS: u64 = 200;
    let key = Key::from_secret(b"leaver");
    let h = hub(&key);
    let addr = h.local_addr().to_string();
    let a = Node::join("leaver", cfg(&addr, &key)).unwrap();
    let tx = a
        .segment("l", 4096, 0o600)
        .unwrap()
        .map_tx(Dest::Broadcast, TxAttrs::default())
        .unwrap();
    for round in 0..ROUNDS {
        let b = Node::join("leaver", cfg(&addr, &key)).unwrap();
        let rx = b.segment("l", 4096, 0o600).unwrap().map_rx().unwrap();
        // Deliveries to B that it releases in batches: some unreleased as it leaves.
        for i in 0..8 {
            tx.write_u64(8 * i, round).unwrap();
        }
        std::thread::scope(|s| {
            s.spawn(move || {
                drop(rx);
                b.leave();
            });
            let r = a.ack();
            assert!(
                r.is_ok(),
                "round {round}: an ack beside a leaving node: {r:?}"
            );
        });
    }
}

/// Work that holds the hub lock past the failure timeout (a standby's takeover
/// orders again every held packet under it) isolates nobody and loses no node:
/// the heartbeats never wait for the lock, and a node's frames waiting unread
/// in its socket are not silence.
#[test]
fn the_hub_lock_held_past_the_failure_timeout_silences_no_one() {
    let (heartbeat, failure) = (Duration::from_millis(50), Duration::from_millis(400));
    let key = Key::from_secret(b"busy hub");
    let hub = Hub::start(HubConfig {
        key: key.clone(),
        keyed: true,
        heartbeat,
        failure_timeout: failure,
        ..HubConfig::default()
    })
    .expect("start the hub");
    let cfg = NetConfig {
        hub: HubSpec::connect(hub.local_addr().to_string()),
        key,
        keyed: true,
        page_size: None,
        heartbeat,
        failure_timeout: failure,
        link: LinkConfig::default(),
        host_domain: None,
        direct: true,
    };
    let a = Node::join("busy", cfg.clone()).expect("a joins");
    let b = Node::join("busy", cfg).expect("b joins");
    a.wait_for_members(2, Duration::from_secs(10))
        .expect("both members");
    {
        // The stimulus, not a wait for an outcome: the hub busy for three
        // failure timeouts.
        memchan_hub::testing::hold_lock(&hub, failure * 3);
    }
    std::thread::scope(|s| {
        s.spawn(|| a.barrier().expect("a is alive after the busy spell"));
        b.barrier().expect("b is alive after the busy spell");
    });
    a.ack().expect("a's link still carries requests");
    assert_eq!(hub.status().isolations, 0, "nobody was isolated");
    assert_eq!(a.members().iter().count(), 2);
}
