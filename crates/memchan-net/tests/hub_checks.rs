//! The hub checks every request and every packet itself: a node that skips the
//! library's checks (here a raw link speaking the protocol, claiming another uid) gets
//! the same typed refusals from the hub as the library gives, and changes nothing.

#[allow(dead_code)]
mod common;
use memchan_core::validate::MAX_SEGMENTS;
use memchan_core::NodeSet;
use memchan_link::link::Link;
use memchan_link::proto::reply::{Refusal, Table};
use memchan_link::proto::{code, get_response, Op, SegInfo};
use memchan_link::wire::{Get, Key, Kind};
use memchan_net::node::Node;

/// A raw node: a link to the hub, no library checks.
struct Raw(Link);

impl Raw {
    fn join(addr: &str, key: &Key, uid: u32) -> Raw {
        Raw(common::raw_join(addr, key, "checks", "raw", uid, Default::default()).0)
    }

    /// Sends `op`, returns (status, body) of the answer.
    fn ask(&self, op: Op) -> (u8, Vec<u8>) {
        common::ask(&self.0, op, 7)
    }

    /// Asks and expects `INVALID` naming `what`.
    fn invalid(&self, op: Op, what: &str) {
        let (status, body) = self.ask(op);
        assert_eq!(status, code::INVALID);
        assert_eq!(Get::new(&body, "what").str().unwrap(), what);
    }
}

fn open(name: &str, size: u64, mode: u32, flags: u8) -> Op {
    Op::SegOpen {
        create: true,
        size,
        mode,
        flags,
        name: name.into(),
    }
}

#[test]
fn the_hub_refuses_bad_requests_a_node_did_not_check() {
    let key = Key::from_secret(b"checks");
    let (_hub, addr) = common::keyed_hub(&key, |_| ());
    // A real node (uid 0 here) owns a private segment.
    let owner = Node::join("checks", common::node_cfg_std(&addr, &key)).unwrap();
    let private = owner.segment("private", 4096, 0o600).unwrap();
    let raw = Raw::join(&addr, &key, 1234);

    raw.invalid(open("../../etc/passwd", 4096, 0o600, 0), "segment name");
    raw.invalid(open(&"x".repeat(65), 4096, 0o600, 0), "segment name");
    raw.invalid(open("_lock.fake", 4096, 0o600, 0), "segment name");
    raw.invalid(open("plain", 4096, 0o666, 1), "lock name");
    raw.invalid(open("s", 0, 0o600, 0), "segment size");
    raw.invalid(open("s", (1 << 34) + 1, 0o600, 0), "segment size");
    raw.invalid(open("s", 4096, 0o1777, 0), "segment mode");
    raw.invalid(
        Op::GroupCreate {
            name: "g".into(),
            members: NodeSet::EMPTY,
        },
        "group members",
    );
    let stranger: NodeSet = [memchan_core::NodeId(200)].into_iter().collect();
    let (status, body) = raw.ask(Op::GroupCreate {
        name: "g".into(),
        members: stranger,
    });
    assert_eq!(
        (status, Get::new(&body, "node").u16().unwrap()),
        (code::UNKNOWN_NODE, 200)
    );
    assert_eq!(
        raw.ask(Op::Barrier {
            group: 99,
            number: 1,
        })
        .0,
        code::UNKNOWN_GROUP
    );
    assert_eq!(raw.ask(Op::GroupCheck { group: 5 }).0, code::UNKNOWN_GROUP);

    // Permissions rest on the uid the node joined with, checked by the hub.
    let (status, body) = raw.ask(Op::SegOpen {
        create: false,
        size: 0,
        mode: 0,
        flags: 0,
        name: "private".into(),
    });
    assert_eq!(status, code::OK);
    let info = SegInfo::get(&body).unwrap();
    let denied = |op: Op| {
        let (status, body) = raw.ask(op);
        assert_eq!(status, code::PERMISSION_DENIED);
        let mut g = Get::new(&body, "permission");
        let owner_uid = g.u32().unwrap();
        let (_gid, _mode, caller) = (g.u32().unwrap(), g.u32().unwrap(), g.u32().unwrap());
        assert_eq!((owner_uid, caller), (0, 1234));
    };
    denied(Op::MapRx {
        seg: info.seg,
        gen: info.gen,
    });
    denied(Op::SegFree {
        seg: info.seg,
        gen: info.gen,
    });

    // The segment table's limit is the library's (one is `private`).
    let mut made = 1;
    loop {
        let (status, body) = raw.ask(open(&format!("t{made}"), 4096, 0o600, 0));
        if status != code::OK {
            assert_eq!(
                Refusal::get(status, &body),
                Ok(Refusal::TableFull(Table::Segment))
            );
            break;
        }
        made += 1;
        assert!(made <= MAX_SEGMENTS);
    }
    assert_eq!(made, MAX_SEGMENTS);
    // Nothing the refusals did touched the owner's segment.
    private.free().unwrap();
}

#[test]
fn the_hub_delivers_no_packet_its_sender_may_not_write() {
    use memchan_core::Dest;
    use memchan_link::proto::{self, NO_REQUEST};
    let key = Key::from_secret(b"writes");
    let (hub, addr) = common::keyed_hub(&key, |_| ());
    // The receiver (uid 0) maps a private segment and one anyone may write.
    let owner = Node::join("checks", common::node_cfg_std(&addr, &key)).unwrap();
    let private = owner.segment("private", 4096, 0o600).unwrap();
    let public = owner.segment("public", 4096, 0o666).unwrap();
    let private_rx = private.map_rx().unwrap();
    let public_rx = public.map_rx().unwrap();
    // A node of another uid, past the library (which would refuse its map_tx).
    let raw = Raw::join(&addr, &key, 65534);
    let info = |name: &str| common::seg_info(&raw.0, name);
    let (p, q) = (info("private"), info("public"));
    let to_owner = Dest::Node(owner.id());
    for (dest, flags) in [(to_owner, 0), (Dest::Broadcast, proto::FLAG_LOCAL_COPY)] {
        let head = proto::data_head(p.seg, p.gen, 0, dest, flags);
        raw.0.send(Kind::Data, &[&head, &[0xAB; 64]]).unwrap();
    }
    // A packet it may write, then an ack: what the hub ordered before them reached the
    // receiver by the time the ack is answered.
    let head = proto::data_head(q.seg, q.gen, 8, to_owner, 0);
    raw.0
        .send(Kind::Data, &[&head, &7u64.to_le_bytes()])
        .unwrap();
    raw.0.send(Kind::Request, &[&Op::Ack.put(7)]).unwrap();
    let mut f = common::Frames(Vec::new());
    common::read_until(&raw.0, &mut f, |f| {
        f.0.iter()
            .any(|(k, r)| *k == Kind::Response && get_response(r).unwrap().0 == 7)
    });
    let ans: Vec<&Vec<u8>> =
        f.0.iter()
            .filter(|(k, _)| *k == Kind::Response)
            .map(|(_, r)| r)
            .collect();
    // Each forbidden packet was refused by name, typed as the library's map_tx refusal.
    let refusals: Vec<_> = ans
        .iter()
        .map(|r| get_response(r).unwrap())
        .filter(|r| r.0 == NO_REQUEST)
        .collect();
    assert_eq!(refusals.len(), 2, "{refusals:?}");
    for (_, status, body) in refusals {
        assert_eq!(status, code::PERMISSION_DENIED);
        let mut g = Get::new(body, "permission");
        let (owner_uid, _gid, mode, caller) = (
            g.u32().unwrap(),
            g.u32().unwrap(),
            g.u32().unwrap(),
            g.u32().unwrap(),
        );
        assert_eq!((owner_uid, mode, caller), (0, 0o600, 65534));
        assert_eq!(g.str().unwrap(), "map_tx");
        assert_eq!(g.str().unwrap(), "private");
    }
    assert_eq!(get_response(ans.last().unwrap()).unwrap().1, code::OK);
    // The permitted packet arrived; the forbidden ones did not, anywhere in the page.
    assert_eq!(public_rx.load_u64(8).unwrap(), 7);
    for off in (0..4096).step_by(8) {
        assert_eq!(private_rx.load_u64(off).unwrap(), 0, "offset {off}");
    }
    assert_eq!(
        hub.status().members.len(),
        2,
        "the sender was refused, not isolated"
    );
}

/// A record packet (`FLAG_RECORD`: the published word, then the body, in one frame)
/// lands whole; one whose word is not 8-aligned, or that has no body after its word,
/// is dropped whole by the hub, and the sender stays a member.
#[test]
fn a_record_packet_lands_whole_and_a_malformed_one_is_dropped() {
    use memchan_core::Dest;
    use memchan_link::proto;
    let key = Key::from_secret(b"records");
    let (hub, addr) = common::keyed_hub(&key, |_| ());
    let owner = Node::join("checks", common::node_cfg_std(&addr, &key)).unwrap();
    let seg = owner.segment("rec", 4096, 0o666).unwrap();
    let rx = seg.map_rx().unwrap();
    let raw = Raw::join(&addr, &key, 0);
    let q = common::seg_info(&raw.0, "rec");
    let to_owner = Dest::Node(owner.id());
    let record = |offset: u64, data: &[u8]| {
        let head = proto::data_head(q.seg, q.gen, offset, to_owner, proto::FLAG_RECORD);
        raw.0.send(Kind::Data, &[&head, data]).unwrap();
    };
    let mut good = 5u64.to_le_bytes().to_vec();
    good.extend_from_slice(&[0x11; 16]);
    record(64, &good);
    record(100, &good); // the word not 8-aligned
    record(128, &6u64.to_le_bytes()); // no body
    raw.0.send(Kind::Request, &[&Op::Ack.put(9)]).unwrap();
    let mut f = common::Frames(Vec::new());
    common::read_until(&raw.0, &mut f, |f| {
        f.0.iter()
            .any(|(k, r)| *k == Kind::Response && get_response(r).unwrap().0 == 9)
    });
    assert_eq!(rx.load_u64(64).unwrap(), 5, "the record's word");
    assert_eq!(
        [72, 80].map(|o| rx.load_u64(o).unwrap()),
        [0x1111_1111_1111_1111; 2],
        "the record's body"
    );
    for off in (96..144).step_by(8) {
        assert_eq!(
            rx.load_u64(off).unwrap(),
            0,
            "offset {off}: a malformed record"
        );
    }
    assert_eq!(
        hub.status().members.len(),
        2,
        "the sender is still a member"
    );
}
