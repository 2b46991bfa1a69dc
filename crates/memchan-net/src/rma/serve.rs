//! Serving remote reads and atomics at the target: an `RmaServe` the hub forwarded
//! is checked again and executed on this node's receive memory by the thread that
//! reads the link (or by the hub's own thread for a node in its process); the
//! `RmaDone` answer goes back under the hub's token. A request that came on a direct
//! link ([`serve_direct`]) is checked as the hub checks one and answered on the
//! link. The origin side is `rma.rs`.

use crate::rx::RxMem;
use crate::state::Shared;
use memchan_core::rma;
use memchan_core::NodeId;
use memchan_link::proto::reply::Refusal;
use memchan_link::proto::rma::{done_payload, Request, Serve, What};
use memchan_link::proto::{self, code};
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// Serves an `RmaServe` from this node's receive memory; the `RmaDone` payload to
/// send back. What the hub sent is checked again here: bounds, alignment, that this
/// node maps the segment (at that generation), that every page allows remote access.
///
/// An atomic is applied once per asker: its answer is kept ([`Answered`]) and a
/// request that comes again gets the kept answer. Gets are served again (a later
/// read is as good an answer as the lost one).
pub(crate) fn serve(sh: &Shared, payload: &[u8]) -> Option<Vec<u8>> {
    let s = match Serve::get(payload) {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!(node = sh.me.0, error = %e, "malformed remote access dropped");
            return None;
        }
    };
    let mut answered = matches!(s.what, What::Atomic(..))
        .then(|| sh.rma.answered.lock().unwrap_or_else(|e| e.into_inner()));
    if let Some((status, body)) = answered.as_ref().and_then(|a| a.get(s.asker)) {
        return Some(done_payload(s.token, status, body));
    }
    let (status, body) = match mapped(sh, s.seg, s.gen) {
        None => refused(&Refusal::NotMapped(sh.me)),
        Some(m) => execute(&m, sh.me, s.offset, s.what),
    };
    let done = done_payload(s.token, status, &body);
    if let Some(a) = answered.as_mut() {
        a.keep(s.asker, status, body);
    }
    Some(done)
}

/// Serves a remote read or atomic that node `from` (joined as `caller`, as the hub
/// vouched) asked of this node on their direct link: checked as the hub checks one
/// (this node the target, the segment mapped here at that generation, `from` not
/// fenced off, its right to read, or to read and write for an atomic) and as
/// [`serve`] checks one. The `Response` payload to send back; `None` for a request
/// dropped unanswered (malformed, or from a node fenced off, whose waits end as it
/// fails).
pub(crate) fn serve_direct(
    sh: &Shared,
    from: NodeId,
    caller: (u32, u32),
    payload: &[u8],
) -> Option<Vec<u8>> {
    let r = Request::get(payload).ok()?;
    if r.req == proto::NO_REQUEST {
        return None;
    }
    let answer = |(status, body): (u8, Vec<u8>)| Some(proto::response(r.req, status, &body));
    if r.target != sh.me {
        return answer(refused(&Refusal::Invalid {
            what: "request".into(),
            why: "a remote access of another node on a direct link".into(),
        }));
    }
    let Some(m) = mapped(sh, r.seg, r.gen) else {
        return answer(refused(&Refusal::NotMapped(sh.me)));
    };
    if m.fenced(from) {
        return None;
    }
    let (name, uid, gid, mode) = &m.owner;
    let (want, op) = r.what.right();
    if let Err(e) = memchan_core::perm::check(caller, (*uid, *gid, *mode), want, name, op) {
        return answer(refused(&Refusal::of(&e)));
    }
    answer(execute(&m, sh.me, r.offset, r.what))
}

/// This node's receive memory of segment `seg` at generation `gen`, if it maps it.
fn mapped(sh: &Shared, seg: u32, gen: u32) -> Option<std::sync::Arc<RxMem>> {
    sh.rx
        .read()
        .unwrap_or_else(|e| e.into_inner())
        .get(&seg)
        .filter(|m| m.gen == gen)
        .cloned()
}

/// A refusal as a served answer's status and body.
fn refused(r: &Refusal) -> (u8, Vec<u8>) {
    (r.code(), r.put())
}

fn execute(m: &RxMem, me: NodeId, offset: u64, what: What) -> (u8, Vec<u8>) {
    if !what.fits(offset, m.size) {
        return refused(&Refusal::Invalid {
            what: "request".into(),
            why: "remote access out of range".into(),
        });
    }
    let offset = offset as usize;
    let allowed = rma::pages_allow(m.page, offset, what.bytes(), |p| {
        m.pct(p).load(Ordering::Acquire)
    });
    if let Err(at) = allowed {
        return refused(&Refusal::RemoteReadOff {
            node: me,
            offset: at as u64,
        });
    }
    match what {
        What::Get(len) => {
            let mut buf = vec![0; len as usize];
            // SAFETY: in bounds (`fits`); the link thread stores into it only through
            // atomics, the owner's CPU atomics are atomics too.
            unsafe { memchan_core::packet::load(m.base.add(offset), &mut buf) };
            std::sync::atomic::fence(Ordering::Acquire);
            (code::OK, buf)
        }
        What::Atomic(8, op) => {
            // SAFETY: in bounds and 8-aligned (`fits`; the base is page-aligned);
            // everything that touches receive memory does so atomically.
            let w = unsafe { &*(m.base.add(offset) as *const AtomicU64) };
            (code::OK, rma::apply_u64(w, op).to_le_bytes().to_vec())
        }
        What::Atomic(_, op) => {
            // SAFETY: as above, 4-aligned.
            let w = unsafe { &*(m.base.add(offset) as *const AtomicU32) };
            (
                code::OK,
                u64::from(rma::apply_u32(w, op)).to_le_bytes().to_vec(),
            )
        }
    }
}
