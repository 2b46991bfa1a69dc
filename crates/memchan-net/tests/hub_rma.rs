//! Remote reads and atomics against nodes that do not play by the rules (raw links
//! speaking the protocol, past the library's checks): the hub refuses a request the
//! sender may not make or that reaches out of range, drops garbage, lets no node answer
//! a request it was not sent, and answers for a target that goes; the origin gets a
//! typed error each time, and the hub keeps serving.

#[allow(dead_code)]
mod common;
use memchan_core::rma::AtomicOp;
use memchan_core::{NodeId, RxAttrs};
use memchan_link::link::{Handler, Link, LinkConfig};
use memchan_link::proto::rma::{done_payload, Request, What};
use memchan_link::proto::{code, get_response, Op, SegInfo};
use memchan_link::wire::{Get, Key, Kind};
use memchan_net::node::Node;
use std::time::{Duration, Instant};

struct Frames(Vec<(Kind, Vec<u8>)>);

impl Handler for Frames {
    fn frame(&mut self, l: &Link, s: u64, kind: Kind, p: &[u8]) {
        // Received (as a node's link side releases what it handled).
        l.release(s);
        self.0.push((kind, p.to_vec()));
    }
}

/// A raw node: its link and its id.
struct Raw {
    link: Link,
    id: NodeId,
    seen: Frames,
}

impl Raw {
    fn join(addr: &str, key: &Key, uid: u32) -> Raw {
        let (link, id) = common::raw_join(addr, key, "rma", "raw", uid, LinkConfig::default());
        Raw {
            link,
            id,
            seen: Frames(Vec::new()),
        }
    }

    /// Reads until a frame of `kind` matching `f` arrives; returns its payload.
    fn expect(&mut self, kind: Kind, f: impl Fn(&[u8]) -> bool) -> Vec<u8> {
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(i) = self.seen.0.iter().position(|(k, p)| *k == kind && f(p)) {
                return self.seen.0.remove(i).1;
            }
            assert!(Instant::now() < deadline, "no {kind:?} frame");
            self.link.wait(None, Duration::from_millis(20));
            self.link.receive(&mut self.seen).unwrap();
        }
    }

    /// The answer (status, body) to request `id`.
    fn answer(&mut self, id: u32) -> (u8, Vec<u8>) {
        let r = self.expect(Kind::Response, |p| get_response(p).unwrap().0 == id);
        let (_, status, body) = get_response(&r).unwrap();
        (status, body.to_vec())
    }
}

#[test]
fn the_hub_routes_remote_access_only_as_it_should() {
    let key = Key::from_secret(b"rma");
    let (_hub, addr) = common::keyed_hub(&key, |c| c.failure_timeout = Duration::from_millis(800));
    let cfg = || common::node_cfg_std(&addr, &key);
    // The owner (uid 0) opens its page of a private segment to remote access.
    let owner = Node::join("rma", cfg()).unwrap();
    let seg = owner.segment("w", 4096, 0o600).unwrap();
    let open = RxAttrs {
        remote_read: true,
        ..RxAttrs::default()
    };
    let rx = seg.map_rx_with(open).unwrap();
    let mut stranger = Raw::join(&addr, &key, 1234);
    stranger
        .link
        .send(
            Kind::Request,
            &[&Op::SegOpen {
                create: false,
                size: 0,
                mode: 0,
                flags: 0,
                name: "w".into(),
            }
            .put(1)],
        )
        .unwrap();
    let (status, body) = stranger.answer(1);
    assert_eq!(status, code::OK);
    let info = SegInfo::get(&body).unwrap();
    let req = |req, target: NodeId, offset, what| Request {
        req,
        seg: info.seg,
        gen: info.gen,
        target,
        offset,
        what,
    };

    // Garbage is dropped; a request out of range is refused before the rights; one the
    // sender may not make is refused by name.
    stranger
        .link
        .send(Kind::RmaRequest, &[b"\x01\x02\x03"])
        .unwrap();
    let out = req(2, owner.id(), 4090, What::Get(8));
    stranger.link.send(Kind::RmaRequest, &[&out.put()]).unwrap();
    assert_eq!(stranger.answer(2).0, code::INVALID);
    let get = req(3, owner.id(), 0, What::Get(8));
    stranger.link.send(Kind::RmaRequest, &[&get.put()]).unwrap();
    let (status, body) = stranger.answer(3);
    assert_eq!(status, code::PERMISSION_DENIED);
    let mut g = Get::new(&body, "permission");
    for _ in 0..4 {
        g.u32().unwrap();
    }
    assert_eq!(g.str().unwrap(), "get");

    // A target on a raw link (uid 0, it may read) that maps the segment.
    let mut target = Raw::join(&addr, &key, 0);
    let map = Op::MapRx {
        seg: info.seg,
        gen: info.gen,
    };
    target.link.send(Kind::Request, &[&map.put(1)]).unwrap();
    assert_eq!(target.answer(1).0, code::OK);
    let tid = target.id;

    std::thread::scope(|s| {
        let rma = seg.rma().unwrap();
        let asked = s.spawn(move || rma.get_u64(tid, 0));
        let serve = target.expect(Kind::RmaServe, |_| true);
        let token = Get::new(&serve, "token").u64().unwrap();
        // Another node answers that token, then tokens it guesses: ignored.
        for t in [token, 0, 1, 2, token + 1] {
            let forged = done_payload(t, code::OK, &666u64.to_ne_bytes());
            stranger.link.send(Kind::RmaDone, &[&forged]).unwrap();
        }
        // The target answers with the wrong length: a typed error, not a value.
        target
            .link
            .send(Kind::RmaDone, &[&done_payload(token, code::OK, &[1, 2, 3])])
            .unwrap();
        match asked.join().unwrap() {
            Err(memchan_core::Error::Invalid { what, .. }) => {
                assert_eq!(what, "remote access answer")
            }
            other => panic!("expected Invalid, got {other:?}"),
        }
        // Answering the same token again reaches nobody.
        target
            .link
            .send(Kind::RmaDone, &[&done_payload(token, code::OK, &[0; 8])])
            .unwrap();
    });

    // A target that received a request and never answers it, its link alive: after
    // the failure timeout the hub answers for it.
    std::thread::scope(|s| {
        let rma = seg.rma().unwrap();
        let asked = s.spawn(move || rma.get_u64(tid, 0));
        target.expect(Kind::RmaServe, |_| true);
        while !asked.is_finished() {
            for raw in [&mut target, &mut stranger] {
                raw.link.wait(None, Duration::from_millis(10));
                raw.link.receive(&mut raw.seen).unwrap();
                raw.link.heartbeat_if_quiet(Duration::from_millis(50));
            }
        }
        match asked.join().unwrap() {
            Err(memchan_core::Error::Timeout(d, _)) => assert_eq!(d, Duration::from_millis(800)),
            other => panic!("expected Timeout, got {other:?}"),
        }
    });

    // A target that goes while a request waits for it: the hub answers UnknownNode.
    std::thread::scope(|s| {
        let rma = seg.rma().unwrap();
        let asked = s.spawn(move || rma.atomic_u64(tid, 0, AtomicOp::FetchAdd(1)));
        target.expect(Kind::RmaServe, |_| true);
        target.link.shutdown();
        drop(target);
        match asked.join().unwrap() {
            Err(memchan_core::Error::UnknownNode(n)) => assert_eq!(n, tid),
            other => panic!("expected UnknownNode, got {other:?}"),
        }
    });

    // The hub kept serving: the owner's own copy through remote access, and the
    // stranger's next request is still answered.
    let rma = seg.rma().unwrap();
    assert_eq!(
        rma.atomic_u64(owner.id(), 0, AtomicOp::FetchAdd(5))
            .unwrap(),
        0
    );
    assert_eq!(rx.load_u64(0).unwrap(), 5);
    let again = req(4, owner.id(), 0, What::Get(8));
    stranger
        .link
        .send(Kind::RmaRequest, &[&again.put()])
        .unwrap();
    assert_eq!(stranger.answer(4).0, code::PERMISSION_DENIED);
}
