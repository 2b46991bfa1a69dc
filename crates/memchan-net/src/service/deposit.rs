//! A node's side of deposit operations: applying a `DepositDeliver` in the hub's
//! order (elements one by one with the packet store, a word operation as one atomic
//! access), answering a conditional write with its `Outcome` before the frame is
//! released, and keeping the outcomes of this node's own conditional writes until the
//! hub's last report on each.

use super::{Shared, Up};
use crate::proto::{self, deposit::Op};
use crate::wire::Kind;
use memchan_core::deposit::{CondResult, Outcome};
use memchan_core::NodeId;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Outcomes of conditional writes: those of this node's own (by token) as they come
/// back, until the hub's last report on it, and, for a node in the hub's process,
/// those it owes, until the hub takes them.
#[derive(Default)]
pub(crate) struct Deposits {
    next: AtomicU64,
    /// Per open token: the outcomes so far, and whether the hub said that was all.
    results: Mutex<HashMap<u64, (Vec<CondResult>, bool)>>,
    pending: Mutex<Vec<Vec<u8>>>,
}

impl Deposits {
    fn results(&self) -> std::sync::MutexGuard<'_, HashMap<u64, (Vec<CondResult>, bool)>> {
        self.results.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A new token, its outcomes collected from now on.
    pub(crate) fn open(&self) -> u64 {
        let token = self.next.fetch_add(1, Ordering::Relaxed);
        self.results().insert(token, (Vec::new(), false));
        token
    }

    /// The outcomes of `token` (by node) once the hub's last report came, and the
    /// token is forgotten; `None` before.
    pub(crate) fn take_if_done(&self, token: u64) -> Option<Vec<CondResult>> {
        let mut m = self.results();
        if !m.get(&token).is_some_and(|(_, done)| *done) {
            return None;
        }
        let (mut r, _) = m.remove(&token)?;
        r.sort_by_key(|c| c.node);
        Some(r)
    }

    /// Forgets `token` (its write failed, or the waiter gave up).
    pub(crate) fn close(&self, token: u64) {
        self.results().remove(&token);
    }

    /// An `Outcome` from the hub: kept if its token is open (the hub forwards only
    /// outcomes a destination owed, and reports a failed one lost).
    pub(super) fn record(&self, payload: &[u8]) {
        if let Ok((from, token, outcome)) = proto::deposit::get_outcome(payload) {
            if let Some((v, done)) = self.results().get_mut(&token) {
                match outcome {
                    Some(outcome) => v.push(CondResult {
                        node: NodeId(from),
                        outcome,
                    }),
                    None => *done = true,
                }
            }
        }
    }

    pub(crate) fn take_pending(&self) -> Vec<Vec<u8>> {
        std::mem::take(&mut *self.pending.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl Shared {
    /// Applies a deposit operation delivered by the hub.
    pub(super) fn deposit_deliver(&self, payload: &[u8]) {
        let Ok((origin, seg, gen, base, body)) = proto::get_deliver(payload) else {
            return;
        };
        let Ok(op) = Op::get(body) else {
            tracing::warn!(node = self.me.0, "malformed deposit from the hub dropped");
            return;
        };
        let (wake, old) = {
            let map = self.rx.read().unwrap_or_else(|e| e.into_inner());
            match map.get(&seg).filter(|m| m.gen == gen) {
                Some(m) => m.apply_op(&op, base),
                None => (false, None),
            }
        };
        if wake {
            self.wake_other_readers();
        }
        if let Op::Cond {
            token, expected, ..
        } = op
        {
            let outcome = match old {
                None => Outcome::Disabled,
                Some(v) if v == expected => Outcome::Applied,
                Some(v) => Outcome::Held(v),
            };
            let body = proto::deposit::outcome(origin, token, outcome);
            match &self.up {
                // Sent before the caller releases the frame (`NodeHandler::frame`).
                Up::Link(_) => {
                    let sent = self.link().map(|l| l.send(Kind::Outcome, &[&body]));
                    if let Some(Err(e)) = sent {
                        tracing::warn!(node = self.me.0, error = %e, "outcome not sent");
                    }
                }
                // The hub called us under its lock: it takes the outcome after.
                Up::Local(_) => self
                    .deposits
                    .pending
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push(body),
            }
        }
    }
}
