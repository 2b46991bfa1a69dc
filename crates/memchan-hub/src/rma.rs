//! The hub's part of remote reads and atomics (the node side is `memchan-net`'s
//! `rma.rs`, the payloads `memchan_link::proto::rma`): it checks each request
//! (segment and generation, bounds, the origin's rights from the uid and gid it
//! joined with, a target that is a member and maps the segment rx), forwards it to
//! the target under a token of its own, and routes the target's answer back as the
//! `Response` to the origin's request. Only the node a token was sent to may answer
//! it, once. A target that leaves or fails is answered for (`UnknownNode`), so an
//! origin never waits on a node that is gone.

pub(crate) mod table;

use crate::state::{Port, Shared, Sink, State};
use memchan_core::{Error, NodeId};
use memchan_link::proto::reply::Refusal;
use memchan_link::proto::rma::{get_done, Asker, Request, Serve};
use memchan_link::wire::Kind;
use std::time::Instant;
use table::Entry;

impl Shared {
    /// A `RmaRequest` from `n`.
    pub(super) fn rma_request(&self, st: &mut State, n: NodeId, payload: &[u8]) {
        let r = match Request::get(payload) {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(node = n.0, error = %e, "malformed remote access dropped");
                return;
            }
        };
        let Some(Some(me)) = st.ports.get(n.index()) else {
            return;
        };
        let (uid, gid, inc) = (me.uid, me.gid, me.inc);
        let Some(Some(s)) = st
            .segs
            .get(r.seg as usize)
            .filter(|s| s.as_ref().is_some_and(|s| s.gen == r.gen))
        else {
            return st.refuse_with(n, r.req, &Refusal::SegmentFreed(String::new()));
        };
        if !r.what.fits(r.offset, s.size) {
            let e = Error::Invalid {
                what: "request",
                why: format!(
                    "remote access of {} bytes at {} of segment `{}`",
                    r.what.bytes(),
                    r.offset,
                    s.name
                ),
            };
            return st.refuse(n, r.req, &e);
        }
        let (want, op) = r.what.right();
        let perm = memchan_core::perm::check((uid, gid), (s.uid, s.gid, s.mode), want, &s.name, op);
        if let Err(e) = perm {
            return st.refuse(n, r.req, &e);
        }
        let target_inc = match st.ports.get(r.target.index()) {
            Some(Some(p)) => p.inc,
            _ => return st.refuse(n, r.req, &Error::UnknownNode(r.target)),
        };
        if !s.rx.contains(r.target) {
            return st.refuse_with(n, r.req, &Refusal::NotMapped(r.target));
        }
        let token = st.rma.next;
        st.rma.next = st.rma.next.wrapping_add(1);
        let serve = Serve {
            token,
            asker: Asker {
                node: n,
                inc,
                req: r.req,
            },
            seg: r.seg,
            gen: r.gen,
            offset: r.offset,
            what: r.what,
        }
        .put();
        if let Some(Some(Port {
            sink: Sink::Local(lp),
            ..
        })) = st.ports.get(r.target.index())
        {
            // The hub's own node answers at once, from this thread.
            let done = lp.rma(&serve);
            return self.rma_answer(st, n, r.req, r.target, done.as_deref());
        }
        let Some(seq) = st.send(r.target, Kind::RmaServe, &[&serve]) else {
            return st.refuse(n, r.req, &Error::UnknownNode(r.target));
        };
        st.rma.open.insert(
            token,
            Entry {
                target: r.target,
                target_inc,
                origin: n,
                origin_inc: inc,
                req: r.req,
                seq,
                received: None,
            },
        );
    }

    /// Answers `RMA_STALLED` for requests whose target received them and stayed
    /// silent on them for the failure timeout (its link alive: a target that goes is
    /// answered by `rma_forget`). Called by the timer.
    pub(super) fn rma_expire(&self, st: &mut State) {
        if st.rma.open.is_empty() {
            return;
        }
        let now = Instant::now();
        let timeout = self.cfg.failure_timeout;
        let mut stalled = Vec::new();
        for (&token, e) in st.rma.open.iter_mut() {
            let Some(Some(Port {
                sink: Sink::Remote(l),
                ..
            })) = st.ports.get(e.target.index())
            else {
                continue;
            };
            match e.received {
                None if l.peer_released() >= e.seq => e.received = Some(now),
                None => l.request_release(e.seq),
                Some(t) if now.duration_since(t) > timeout => stalled.push(token),
                Some(_) => {}
            }
        }
        for token in stalled {
            let e = st.rma.open.remove(&token).expect("listed");
            tracing::warn!(
                node = e.target.0,
                "a remote access target received a request and did not answer it"
            );
            if st.alive(e.origin, e.origin_inc) {
                let r = Refusal::RmaStalled {
                    waited_ms: timeout.as_millis() as u64,
                };
                st.refuse_with(e.origin, e.req, &r);
            }
        }
    }

    /// A `RmaDone` from `n`: the answer to a token sent to `n`, routed to its origin.
    pub(super) fn rma_done(&self, st: &mut State, n: NodeId, payload: &[u8]) {
        let token = match get_done(payload) {
            Ok((token, ..)) => token,
            Err(e) => {
                tracing::warn!(node = n.0, error = %e, "malformed remote access answer dropped");
                return;
            }
        };
        let inc = st
            .ports
            .get(n.index())
            .and_then(|p| p.as_ref())
            .map(|p| p.inc);
        let mine = st
            .rma
            .open
            .get(&token)
            .is_some_and(|e| e.target == n && Some(e.target_inc) == inc);
        if !mine {
            // Dropped, harmless. After a rail switch a target's link resends the
            // answers the lost hub had not released: expected, so not a warning.
            tracing::debug!(
                node = n.0,
                token,
                "answer to a remote access never sent to it"
            );
            return;
        }
        let e = st.rma.open.remove(&token).expect("checked");
        if st.alive(e.origin, e.origin_inc) {
            self.rma_answer(st, e.origin, e.req, n, Some(payload));
        }
    }

    /// Answers `origin`'s request `req` with a target's `RmaDone` payload (`None`:
    /// the target could not answer).
    fn rma_answer(
        &self,
        st: &mut State,
        origin: NodeId,
        req: u32,
        target: NodeId,
        done: Option<&[u8]>,
    ) {
        match done.map(get_done) {
            Some(Ok((_, status, body))) => st.respond(origin, req, status, body),
            _ => st.refuse(origin, req, &Error::UnknownNode(target)),
        }
    }

    /// `n` left or failed: requests waiting for it are answered `UnknownNode`, its own
    /// are forgotten.
    pub(super) fn rma_forget(&self, st: &mut State, n: NodeId) {
        let gone: Vec<u64> = st
            .rma
            .open
            .iter()
            .filter(|(_, e)| e.target == n || e.origin == n)
            .map(|(t, _)| *t)
            .collect();
        for t in gone {
            let e = st.rma.open.remove(&t).expect("listed");
            if e.target == n && st.alive(e.origin, e.origin_inc) {
                st.refuse(e.origin, e.req, &Error::UnknownNode(n));
            }
        }
    }
}
