//! The hub's gate, for connections that do not join: caps per source and in all,
//! refusals at once and by name, a join frame longer than the limit refused from its
//! header, the oldest pending connection making room, and a node that joins while
//! strangers fill the gate. Several hosts are played by loopback source addresses.

#[allow(dead_code)]
mod common;
use memchan_hub::{Hub, HubConfig, MAX_JOIN};
use memchan_link::handshake::{read_frame, HandshakeError};
use memchan_link::proto::reply::JoinRefusal;
use memchan_link::wire::{self, Decoder, Key, Kind};
use memchan_net::node::Node;
use std::io::Write;
use std::net::{Ipv4Addr, SocketAddr, TcpStream};
use std::time::{Duration, Instant};

/// Bounds every wait of this file (a hang guard, not a speed claim).
const WAIT: Duration = Duration::from_secs(30);

/// A connection that never joins.
struct Stranger {
    sock: TcpStream,
    dec: Decoder,
}

impl Stranger {
    fn open(from: Ipv4Addr, hub: SocketAddr) -> Stranger {
        Stranger {
            sock: common::connect_from(from, hub),
            dec: Decoder::new(None),
        }
    }

    /// The hub's next frame: `Ok` for its hello, `Err(reason)` for a refusal.
    fn next(&mut self) -> Result<(), JoinRefusal> {
        match read_frame(&mut self.sock, &mut self.dec, Instant::now() + WAIT) {
            Ok((h, _)) if h.kind == Kind::Hello => Ok(()),
            Ok((h, _)) => panic!("the hub sent a {:?} to a stranger", h.kind),
            Err(HandshakeError::Refused(why)) => Err(why),
            Err(e) => panic!("no hello and no refusal: {e}"),
        }
    }
}

fn src(i: u8) -> Ipv4Addr {
    Ipv4Addr::new(127, 0, 1, i)
}

fn hub(key: &Key, max: usize, per_source: usize) -> Hub {
    Hub::start(HubConfig {
        key: key.clone(),
        keyed: true,
        max_pending: max,
        max_pending_per_source: per_source,
        ..HubConfig::default()
    })
    .unwrap()
}

#[test]
fn the_gate_caps_pending_connections_and_a_node_still_joins() {
    let key = Key::from_secret(b"gate");
    let h = hub(&key, 6, 3);
    let addr = h.local_addr();

    // Per source: the fourth connection from one address is refused at once, by name.
    let mut held: Vec<Stranger> = Vec::new();
    for _ in 0..3 {
        let mut s = Stranger::open(src(1), addr);
        s.next().expect("a hello");
        held.push(s);
    }
    let why = Stranger::open(src(1), addr).next().unwrap_err();
    let busy = |why: &str| JoinRefusal::Busy(why.into());
    assert_eq!(why, busy("3 handshakes pending from 127.0.1.1"));

    // In all: six pending fill the gate.
    for _ in 0..3 {
        let mut s = Stranger::open(src(2), addr);
        s.next().expect("a hello");
        held.push(s);
    }
    // A seventh is refused at once while the oldest waited less than EVICT_AFTER; once
    // it waited longer, a newcomer takes its place and the oldest is told why.
    let mut tries = 0u32;
    let deadline = Instant::now() + WAIT;
    let newcomer = loop {
        tries += 1;
        let mut s = Stranger::open(src(10 + (tries % 200) as u8), addr);
        match s.next() {
            Ok(()) => break s,
            Err(why) => assert_eq!(why, busy("6 handshakes pending")),
        }
        assert!(Instant::now() < deadline, "no newcomer ever got in");
        std::thread::sleep(Duration::from_millis(20));
    };
    let why = held[0].next().unwrap_err();
    assert_eq!(why, busy("evicted, the oldest of 6 pending handshakes"));
    held.remove(0);
    held.push(newcomer);

    // A node joins while strangers fill the gate: it is told the hub is busy, tries
    // again, and gets in as soon as the oldest stranger may be displaced.
    let node = Node::join(
        "gate",
        common::node_cfg(
            &addr.to_string(),
            &key,
            Duration::from_millis(100),
            Duration::from_secs(2),
        ),
    )
    .expect("a node joins past strangers");
    node.ack().unwrap();
    assert_eq!(h.status().members.len(), 1);
    assert!(h.status().refused >= 3, "{}", h.status().refused);
}

#[test]
fn a_join_frame_over_the_limit_is_refused_from_its_header() {
    let key = Key::from_secret(b"gate");
    let h = hub(&key, 8, 8);
    let mut s = Stranger::open(src(1), h.local_addr());
    s.next().expect("a hello");
    // A header announcing one byte more than a join may have, and no payload: the hub
    // does not wait for (or buffer) the payload.
    let mut frame = Vec::new();
    wire::encode(
        &mut frame,
        &key.join(&[0; 16]),
        1,
        Kind::Join,
        0,
        0,
        &[&vec![0u8; MAX_JOIN + 1]],
    );
    s.sock.write_all(&frame[..wire::HEADER]).unwrap();
    let why = s.next().unwrap_err();
    assert_eq!(
        why,
        JoinRefusal::Handshake(format!(
            "a handshake frame of {} bytes exceeds the {MAX_JOIN}-byte limit",
            MAX_JOIN + 1
        ))
    );
    assert_eq!(h.status().refused, 1);
}
