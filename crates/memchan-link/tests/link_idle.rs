//! `Link::idle`: what lets a node's service thread sleep to its next heartbeat instead
//! of ticking. Real links on both ends of a loopback TCP connection: a link with a
//! frame not yet confirmed, or with a release or an ack owed to its peer, is not idle;
//! once both ends have read and answered, both are. Waits poll the links, bounded by a
//! hang guard only.

use memchan_link::link::{Handler, Held, Link, LinkConfig};
use memchan_link::wire::{Decoder, Key, Kind, LinkKeys};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

const HANG_GUARD: Duration = Duration::from_secs(30);

fn keys() -> LinkKeys {
    Key::from_secret(b"link idle tests").link(&[3; 16], &[4; 16])
}

/// (node end, hub end) of a fresh connection.
fn pair() -> (Link, Link) {
    let k = keys();
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
    let (b, _) = l.accept().unwrap();
    let cfg = LinkConfig::default();
    let end = |s, tx: &_, rx: &_| {
        Link::resume(
            s,
            Clone::clone(tx),
            Decoder::new(Some(Clone::clone(rx))),
            cfg.clone(),
            Held::default(),
            1,
        )
        .unwrap()
    };
    (end(a, &k.to_hub, &k.to_node), end(b, &k.to_node, &k.to_hub))
}

#[derive(Default)]
struct Count(usize);

impl Handler for Count {
    fn frame(&mut self, _link: &Link, _seq: u64, _kind: Kind, _payload: &[u8]) {
        self.0 += 1;
    }
}

/// Reads what arrived at `l` (up to 5 ms for it), then ticks it.
fn turn(l: &Link, got: &mut Count) {
    if l.wait(None, Duration::from_millis(5)) {
        l.receive(got).unwrap();
    }
    l.tick();
}

/// Runs `step` until it returns true, under the hang guard.
fn until(what: &str, mut step: impl FnMut() -> bool) {
    let start = Instant::now();
    while !step() {
        assert!(start.elapsed() < HANG_GUARD, "{what}: hang guard");
    }
}

#[test]
fn a_link_is_idle_only_with_nothing_unconfirmed_or_owed_either_way() {
    let (node, hub) = pair();
    let (mut at_node, mut at_hub) = (Count::default(), Count::default());
    assert!(node.idle() && hub.idle(), "a fresh link owes nothing");

    // A frame written and not yet confirmed: its sender must keep a timer.
    node.send(Kind::Data, &[b"one"]).unwrap();
    assert!(!node.idle(), "a frame in flight");

    // The hub reads it: until it tells the node (its tick's release), it owes the ack.
    until("the hub reads the frame", || {
        if hub.wait(None, Duration::from_millis(5)) {
            hub.receive(&mut at_hub).unwrap();
        }
        at_hub.0 == 1
    });
    assert!(!hub.idle(), "an ack owed to the node");

    // Both read and tick until both are idle: the ack went out and came in.
    until("both ends settle", || {
        turn(&hub, &mut at_hub);
        turn(&node, &mut at_node);
        node.idle() && hub.idle()
    });

    // The hub's application finishes with the frame: a release owed, then told.
    hub.release(1);
    assert!(!hub.idle(), "a release owed to the node");
    hub.send_release(true);
    assert!(hub.idle(), "the release was sent");
    until("the node hears the release", || {
        turn(&node, &mut at_node);
        node.peer_released() == 1
    });
    assert!(node.idle());
    assert_eq!(at_node.0, 0, "the hub sent no frame of its own");
}
