//! A node's side of deposit operations: applying a `DepositDeliver` in the hub's
//! order (elements one by one with the packet store, a word operation as one atomic
//! access), answering a conditional write with its `Outcome` before the frame is
//! released (so the outcome reaches the hub before the release that completes the
//! sender's ack), and keeping the outcomes of this node's own conditional writes.

use super::{Shared, Up};
use crate::proto::{self, deposit::Op};
use crate::wire::Kind;
use memchan_core::deposit::{CondResult, Outcome};
use memchan_core::NodeId;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Outcomes of conditional writes: those of this node's own (by token) as they come
/// back, and, for a node in the hub's process, those it owes, until the hub takes
/// them.
#[derive(Default)]
pub(crate) struct Deposits {
    next: AtomicU64,
    results: Mutex<HashMap<u64, Vec<CondResult>>>,
    pending: Mutex<Vec<Vec<u8>>>,
}

impl Deposits {
    /// A new token, its outcomes collected from now on.
    pub(crate) fn open(&self) -> u64 {
        let token = self.next.fetch_add(1, Ordering::Relaxed);
        self.results
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(token, Vec::new());
        token
    }

    /// The outcomes collected for `token`, which is forgotten.
    pub(crate) fn close(&self, token: u64) -> Vec<CondResult> {
        let mut r = self
            .results
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&token)
            .unwrap_or_default();
        r.sort_by_key(|c| c.node);
        r
    }

    /// An `Outcome` from the hub: kept if its token is open (the hub forwards only
    /// outcomes a destination owed).
    pub(super) fn record(&self, payload: &[u8]) {
        if let Ok((from, token, outcome)) = proto::deposit::get_outcome(payload) {
            if let Some(v) = self
                .results
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .get_mut(&token)
            {
                v.push(CondResult {
                    node: NodeId(from),
                    outcome,
                });
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
                Up::Link(l) => {
                    if let Err(e) = l.send(Kind::Outcome, &[&body]) {
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
