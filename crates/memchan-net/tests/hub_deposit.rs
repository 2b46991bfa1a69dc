//! The hub checks deposit frames as it checks Data, and forwards a conditional write's
//! outcome only from a destination that owed it: a raw node (a link speaking the
//! protocol past the library, claiming another uid) can neither write what it may
//! not, nor reach outside a segment with a stride or an index, nor forge outcomes.

#[allow(dead_code)]
mod common;
use common::{read_until, seg_info, Frames};
use memchan_core::deposit::Outcome;
use memchan_core::{Dest, NodeId};
use memchan_hub::Hub;
use memchan_link::link::Link;
use memchan_link::proto::deposit::{self as dep, Op as DepOp};
use memchan_link::proto::{self, code, get_response, Op, SegInfo};
use memchan_link::wire::{Key, Kind};
use memchan_net::node::Node;
use std::time::{Duration, Instant};

fn setup(tag: &str) -> (Hub, Key, String, Node) {
    let key = Key::from_secret(tag.as_bytes());
    let (hub, addr) = common::keyed_hub(&key, |_| ());
    let owner = Node::join("deposit", common::node_cfg_std(&addr, &key)).unwrap();
    (hub, key, addr, owner)
}

/// A raw node of uid 65534 in the deposit cluster.
fn raw_node(addr: &str, key: &Key) -> Link {
    common::raw_join(addr, key, "deposit", "raw", 65534, Default::default()).0
}

/// The member of `hub` beside `owner`, once both are in.
fn the_raw_node(hub: &Hub, owner: &Node) -> NodeId {
    owner.wait_for_members(2, Duration::from_secs(30)).unwrap();
    hub.status()
        .members
        .iter()
        .map(|m| NodeId(m.node))
        .find(|&n| n != owner.id())
        .expect("the raw node")
}

#[test]
fn hostile_deposits_are_refused_or_dropped_and_change_nothing() {
    let (_hub, key, addr, owner) = setup("deposit-hostile");
    let private = owner.segment("private", 4096, 0o600).unwrap();
    let public = owner.segment("public", 4096, 0o666).unwrap();
    let (private_rx, public_rx) = (private.map_rx().unwrap(), public.map_rx().unwrap());
    let raw = raw_node(&addr, &key);
    let (p, q) = (seg_info(&raw, "private"), seg_info(&raw, "public"));
    let to = Dest::Node(owner.id());
    let eight: Vec<u8> = [0xAB; 64].to_vec();
    let send = |seg: &SegInfo, at: u64, op: &[&[u8]]| {
        let head = proto::data_head(seg.seg, seg.gen, at, to, 0);
        let mut parts: Vec<&[u8]> = vec![&head];
        parts.extend_from_slice(op);
        raw.send(Kind::Deposit, &parts).unwrap();
    };
    // Not its segment to write: refused by name.
    send(&p, 0, &[&dep::strided_head(8, 8, 8), &eight]);
    // Past the end with a stride, with an overflowing stride, with an index; an
    // unaligned and an out-of-range word; counts that do not match the bytes.
    send(&q, 0, &[&dep::strided_head(8, 8, 600), &eight]);
    send(&q, 8, &[&dep::strided_head(8, 8, u64::MAX / 4), &eight]);
    let offs: Vec<u8> = [0u64, 4090].iter().flat_map(|o| o.to_le_bytes()).collect();
    send(&q, 0, &[&dep::indexed_head(8, 2), &offs, &eight[..16]]);
    send(&q, 4, &[&dep::signal(false, 1)]);
    send(&q, 4096, &[&dep::cond(1, 0, 1)]);
    send(&q, 0, &[&dep::strided_head(8, 9, 8), &eight]);
    send(&q, 0, &[&[9u8]]);
    // One it may send, then an ack: what the hub ordered before reached the owner.
    send(&q, 16, &[&dep::strided_head(8, 2, 24), &[7u8; 16]]);
    raw.send(Kind::Request, &[&Op::Ack.put(7)]).unwrap();
    let mut f = Frames(Vec::new());
    let acked = |f: &Frames| {
        f.0.iter()
            .any(|(k, p)| *k == Kind::Response && get_response(p).unwrap().0 == 7)
    };
    read_until(&raw, &mut f, acked);
    let refusals: Vec<_> =
        f.0.iter()
            .filter(|(k, _)| *k == Kind::Response)
            .map(|(_, p)| get_response(p).unwrap())
            .filter(|r| r.0 == proto::NO_REQUEST)
            .collect();
    assert_eq!(refusals.len(), 1, "{refusals:?}");
    assert_eq!(refusals[0].1, code::PERMISSION_DENIED);
    let word = u64::from_ne_bytes([7; 8]);
    for off in (0..4096).step_by(8) {
        assert_eq!(private_rx.load_u64(off).unwrap(), 0, "private {off}");
        let want = if off == 16 || off == 40 { word } else { 0 };
        assert_eq!(public_rx.load_u64(off).unwrap(), want, "public {off}");
    }
}

#[test]
fn outcomes_reach_their_origin_only_from_a_destination_that_owed_them() {
    let (hub, key, addr, owner) = setup("deposit-outcome");
    let seg = owner.segment("box", 4096, 0o666).unwrap();
    let raw = raw_node(&addr, &key);
    common::raw_map_rx(&raw, "box");
    let them = the_raw_node(&hub, &owner);
    let tx = seg.map_tx(Dest::Node(them), Default::default()).unwrap();
    std::thread::scope(|s| {
        let asked = s.spawn(move || tx.write_if_u64(8, 0, 1));
        let mut f = Frames(Vec::new());
        read_until(&raw, &mut f, |f| {
            f.0.iter().any(|(k, _)| *k == Kind::DepositDeliver)
        });
        let (_, p) =
            f.0.iter()
                .find(|(k, _)| *k == Kind::DepositDeliver)
                .unwrap();
        let proto::Deliver {
            origin, data: body, ..
        } = proto::get_deliver(p).unwrap();
        let Ok(DepOp::Cond { token, .. }) = DepOp::get(body) else {
            panic!("not a conditional write");
        };
        let forge = |b: Vec<u8>| raw.send(Kind::Outcome, &[&b]).unwrap();
        // Reports only the hub makes, a token it was never sent, then its real answer
        // and an answer too many.
        forge(dep::done(token));
        forge(dep::outcome(origin, token, Outcome::Lost));
        forge(dep::outcome(origin, token + 1, Outcome::Held(99)));
        forge(dep::outcome(origin, token, Outcome::Held(5)));
        forge(dep::outcome(origin, token, Outcome::Applied));
        let got = asked.join().unwrap().unwrap();
        let got: Vec<_> = got.iter().map(|r| (r.node, r.outcome)).collect();
        assert_eq!(got, vec![(them, Outcome::Held(5))]);
    });
    // The origin is told of a destination that leaves before it reports: lost.
    let tx = seg.map_tx(Dest::Node(them), Default::default()).unwrap();
    let next = std::thread::scope(|s| {
        let asked = s.spawn(move || tx.write_if_u64(8, 0, 2));
        let mut f = Frames(Vec::new());
        read_until(&raw, &mut f, |f| {
            f.0.iter().any(|(k, _)| *k == Kind::DepositDeliver)
        });
        raw.shutdown();
        asked.join().unwrap()
    });
    let got: Vec<_> = next.unwrap().iter().map(|r| (r.node, r.outcome)).collect();
    assert_eq!(got, vec![(them, Outcome::Lost)]);
    assert_eq!(hub.status().members.len(), 1);
}

#[test]
fn a_destination_that_never_answers_is_given_up_as_lost() {
    let key = Key::from_secret(b"deposit-silent");
    let (hub, addr) = common::keyed_hub(&key, |c| {
        c.heartbeat = Duration::from_millis(50);
        c.failure_timeout = Duration::from_millis(300);
    });
    let owner = Node::join(
        "deposit",
        common::node_cfg(
            &addr,
            &key,
            Duration::from_millis(50),
            Duration::from_millis(300),
        ),
    )
    .unwrap();
    let seg = owner.segment("box", 4096, 0o666).unwrap();
    let raw = raw_node(&addr, &key);
    // Waits for the answer: a write sent before the hub knows the mapping is lost at once.
    common::raw_map_rx(&raw, "box");
    let them = the_raw_node(&hub, &owner);
    let tx = seg.map_tx(Dest::Node(them), Default::default()).unwrap();
    let got = std::thread::scope(|s| {
        let asked = s.spawn(move || tx.write_if_u64(0, 0, 1));
        // The raw node stays alive (it reads and heartbeats) but never answers.
        let mut f = Frames(Vec::new());
        let deadline = Instant::now() + Duration::from_secs(60);
        while !asked.is_finished() {
            assert!(Instant::now() < deadline, "the sender was never told");
            raw.wait(None, Duration::from_millis(20));
            raw.receive(&mut f).unwrap();
            raw.heartbeat_if_quiet(Duration::from_millis(20));
        }
        assert!(f.0.iter().any(|(k, _)| *k == Kind::DepositDeliver));
        asked.join().unwrap().unwrap()
    });
    let got: Vec<_> = got.iter().map(|r| (r.node, r.outcome)).collect();
    assert_eq!(got, vec![(them, Outcome::Lost)]);
    assert_eq!(hub.status().members.len(), 2, "given up, not isolated");
}

#[test]
fn deposits_through_a_virtual_hub_both_ways() {
    use memchan_core::deposit::{Cmp, Shape, SignalOp};
    use memchan_core::TxAttrs;
    use memchan_net::node::HubSpec;
    let key = Key::from_secret(b"deposit-virtual");
    let mut c = common::node_cfg_std("127.0.0.1:0", &key);
    c.hub = HubSpec::Host("127.0.0.1:0".into());
    let a = Node::join("virt", c).expect("a hosts the hub");
    let addr = a.hosted_hub().unwrap().local_addr().to_string();
    let b = Node::join("virt", common::node_cfg_std(&addr, &key)).unwrap();
    a.wait_for_members(2, Duration::from_secs(5)).unwrap();
    b.wait_for_members(2, Duration::from_secs(5)).unwrap();
    let (sa, sb) = (
        a.segment("v", 4096, 0o600).unwrap(),
        b.segment("v", 4096, 0o600).unwrap(),
    );
    let (rx_a, rx_b) = (sa.map_rx().unwrap(), sb.map_rx().unwrap());
    // The hub's own node to the remote one, and back, and to both with local copy.
    let a_to_b = sa.map_tx(Dest::Node(b.id()), TxAttrs::default()).unwrap();
    let b_to_a = sb.map_tx(Dest::Node(a.id()), TxAttrs::default()).unwrap();
    let shape = Shape {
        elem: 8,
        count: 3,
        src_stride: 8,
        dst_stride: 16,
        offset: 64,
    };
    a_to_b.put_strided(&shape, &[5u8; 24]).unwrap();
    a_to_b.put_signal(512, b"xy", 0, SignalOp::Add, 3).unwrap();
    assert_eq!(
        rx_b.wait_until_u64(0, Cmp::Eq, 3, Some(Duration::from_secs(10)))
            .unwrap(),
        Some(3)
    );
    assert_eq!(rx_b.load_u64(96).unwrap(), u64::from_ne_bytes([5; 8]));
    let r = b_to_a.write_if_u64(8, 0, 4).unwrap();
    assert_eq!((r[0].node, r[0].outcome), (a.id(), Outcome::Applied));
    assert_eq!(rx_a.load_u64(8).unwrap(), 4);
    let all = sa
        .map_tx(
            Dest::Broadcast,
            TxAttrs {
                local_copy: true,
                ..TxAttrs::default()
            },
        )
        .unwrap();
    let r = all.write_if_u64(8, 4, 6).unwrap();
    let got: Vec<_> = r.iter().map(|x| (x.node, x.outcome)).collect();
    let mut want = vec![(a.id(), Outcome::Applied), (b.id(), Outcome::Held(0))];
    want.sort_by_key(|x| x.0);
    assert_eq!(got, want);
}
