//! The hub checks every request itself: a node that skips the library's checks (here
//! a raw link speaking the protocol, claiming uid 1234) gets the same typed refusals
//! from the hub as the library gives, and changes nothing.

#[allow(dead_code)]
mod common;
use memchan_core::validate::MAX_SEGMENTS;
use memchan_core::NodeSet;
use memchan_net::hub::{Hub, HubConfig};
use memchan_net::link::{Handler, Link};
use memchan_net::node::Node;
use memchan_net::proto::{code, get_response, Op, SegInfo};
use memchan_net::wire::{Get, Key, Kind};
use std::time::{Duration, Instant};

struct Answers(Vec<Vec<u8>>);

impl Handler for Answers {
    fn frame(&mut self, _l: &Link, _s: u64, kind: Kind, p: &[u8]) {
        if kind == Kind::Response {
            self.0.push(p.to_vec());
        }
    }
}

/// A raw node: a link to the hub, no library checks.
struct Raw(Link);

impl Raw {
    fn join(addr: &str, key: &Key, uid: u32) -> Raw {
        Raw(common::raw_join(
            addr,
            key,
            "checks",
            "raw",
            uid,
            Default::default(),
        ))
    }

    /// Sends `op`, returns (status, body) of the answer.
    fn ask(&self, op: Op) -> (u8, Vec<u8>) {
        let mut ans = Answers(Vec::new());
        self.0.send(Kind::Request, &[&op.put(7)]).unwrap();
        let deadline = Instant::now() + Duration::from_secs(30);
        while ans.0.is_empty() {
            assert!(Instant::now() < deadline, "no answer to {op:?}");
            self.0.wait(None, Duration::from_millis(50), true);
            self.0.receive(&mut ans).unwrap();
        }
        let (_, status, body) = get_response(&ans.0[0]).unwrap();
        (status, body.to_vec())
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
    let hub = Hub::start(HubConfig {
        key: key.clone(),
        keyed: true,
        ..HubConfig::default()
    })
    .unwrap();
    let addr = hub.local_addr().to_string();
    // A real node (uid 0 here) owns a private segment.
    let owner = Node::join(
        "checks",
        common::node_cfg(
            &addr,
            &key,
            Duration::from_millis(100),
            Duration::from_millis(800),
        ),
    )
    .unwrap();
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
    assert_eq!(raw.ask(Op::Barrier { group: 99 }).0, code::UNKNOWN_GROUP);
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
                (status, body.as_slice()),
                (code::TABLE_FULL, &b"segment"[..])
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
