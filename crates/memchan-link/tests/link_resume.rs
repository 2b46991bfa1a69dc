//! A link going on over a new connection (`Link::take_held` / `Link::resume`), what a
//! rail switch moves a node's replay memory with: real links on both ends of loopback
//! TCP connections. The first peer receives ten frames and releases four, then dies;
//! the node's link resumes against a second peer, which must receive exactly the six
//! unreleased frames, under their seqs and in order, then the node's next frame, all
//! under the new connection's keys. Waits poll the links, bounded by a hang guard only.

use memchan_link::link::{Handler, Held, Link, LinkConfig};
use memchan_link::wire::{Decoder, Key, Kind, LinkKeys};
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

const HANG_GUARD: Duration = Duration::from_secs(30);

fn keys(nonce: u8) -> LinkKeys {
    Key::from_secret(b"link resume tests").link(&[nonce; 16], &[nonce + 1; 16])
}

/// (node end, hub end) of a fresh connection; the node end resumes `held`, the hub
/// end expects the node's frames from `expect`.
fn pair(k: &LinkKeys, held: Held, expect: u64) -> (Link, Link) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let a = TcpStream::connect(l.local_addr().unwrap()).unwrap();
    let (b, _) = l.accept().unwrap();
    let cfg = LinkConfig {
        retransmit_timeout: Duration::from_millis(50),
        ..LinkConfig::default()
    };
    let node = Link::resume(
        a,
        k.to_hub.clone(),
        Decoder::new(Some(k.to_node.clone())),
        cfg.clone(),
        held,
        1,
    )
    .unwrap();
    let hub = Link::resume(
        b,
        k.to_node.clone(),
        Decoder::new(Some(k.to_hub.clone())),
        cfg,
        Held::default(),
        expect,
    )
    .unwrap();
    (node, hub)
}

#[derive(Default)]
struct Got(Vec<(u64, Kind, Vec<u8>)>);

impl Handler for Got {
    fn frame(&mut self, _link: &Link, seq: u64, kind: Kind, payload: &[u8]) {
        self.0.push((seq, kind, payload.to_vec()));
    }
}

/// Runs both ends until `done`.
fn until(
    node: &Link,
    hub: &Link,
    at_node: &mut Got,
    at_hub: &mut Got,
    done: impl Fn(&Got, &Got) -> bool,
) {
    let start = Instant::now();
    while !done(at_node, at_hub) {
        assert!(start.elapsed() < HANG_GUARD, "hang guard");
        for (l, g) in [(node, &mut *at_node), (hub, &mut *at_hub)] {
            if l.wait(None, Duration::from_millis(5)) {
                l.receive(g).unwrap();
            }
            l.tick();
        }
    }
}

fn payload(i: u64) -> Vec<u8> {
    format!("write {i}").into_bytes()
}

#[test]
fn a_resumed_link_sends_exactly_the_unreleased_frames_under_their_seqs() {
    let (mut at_node, mut at_hub) = (Got::default(), Got::default());
    let (n1, h1) = pair(&keys(1), Held::default(), 1);
    for i in 1..=10 {
        assert_eq!(n1.send(Kind::Data, &[&payload(i)]).unwrap(), i);
    }
    until(&n1, &h1, &mut at_node, &mut at_hub, |_, h| h.0.len() == 10);
    h1.release(4);
    h1.send_release(true);
    until(&n1, &h1, &mut at_node, &mut at_hub, |_, _| {
        n1.peer_released() == 4
    });
    h1.shutdown();
    let held = n1.take_held();
    assert_eq!(held.seqs(), (5..=10).collect::<Vec<_>>());
    assert_eq!((held.first(), held.next_seq()), (5, 11));
    assert!(n1.is_down());

    // The standby's end, under other keys, expects seq 5 first.
    let (mut at_node, mut at_hub) = (Got::default(), Got::default());
    let (n2, h2) = pair(&keys(7), held, 5);
    assert_eq!(n2.send(Kind::Data, &[&payload(11)]).unwrap(), 11);
    // The hub's frames to the node start at 1 on the new connection.
    h2.send(Kind::Deliver, &[b"down"]).unwrap();
    until(&n2, &h2, &mut at_node, &mut at_hub, |n, h| {
        h.0.len() >= 7 && !n.0.is_empty()
    });
    let want: Vec<_> = (5..=11).map(|i| (i, Kind::Data, payload(i))).collect();
    assert_eq!(at_hub.0, want);
    assert_eq!(at_node.0, vec![(1, Kind::Deliver, b"down".to_vec())]);
    h2.release(11);
    h2.send_release(true);
    until(&n2, &h2, &mut at_node, &mut at_hub, |_, _| {
        n2.peer_released() == 11
    });
    assert_eq!(n2.replay_bytes(), 0);
    let (c, h) = (n2.counters(), h2.counters());
    assert_eq!(c.mac_failures + h.mac_failures + h.duplicates, 0);
}
