//! A node's side of deposit operations: applying a `DepositDeliver` in the hub's
//! order (elements one by one with the packet store, a word operation as one atomic
//! access), answering a conditional write with its `Outcome` before the frame is
//! released, and keeping the outcomes of this node's own conditional writes until the
//! hub's last report on each.

use super::{Shared, Up};
use crate::proto::{self, deposit::Op};
use crate::recent::Recent;
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
    /// With a standby hub: the outcomes this node sent for others' conditional
    /// writes, the last [`KEPT_OUTCOMES`] per origin by token, so that one the
    /// standby orders again after a switch (applied here before it, its outcome lost
    /// with the hub) is answered again rather than left to time out as `Lost`.
    kept: Mutex<HashMap<u16, KeptOutcomes>>,
}

/// An origin's kept outcomes: (token, the `Outcome` frame's body).
type KeptOutcomes = Recent<(u64, Vec<u8>)>;

/// Outcomes kept per origin (see `Deposits::kept`): an origin waits for each
/// conditional write before its next from that thread, so few are in flight at once.
const KEPT_OUTCOMES: usize = 64;

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
    /// outcomes a destination owed, and reports a failed one lost), once per
    /// destination (after a switch a destination may answer again what the lost hub
    /// forwarded already).
    pub(super) fn record(&self, payload: &[u8]) {
        if let Ok((from, token, outcome)) = proto::deposit::get_outcome(payload) {
            if let Some((v, done)) = self.results().get_mut(&token) {
                match outcome {
                    Some(_) if v.iter().any(|c| c.node.0 == from) => {}
                    Some(outcome) => v.push(CondResult {
                        node: NodeId(from),
                        outcome,
                    }),
                    None => *done = true,
                }
            }
        }
    }

    fn kept(&self) -> std::sync::MutexGuard<'_, HashMap<u16, KeptOutcomes>> {
        self.kept.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn keep(&self, origin: u16, token: u64, body: &[u8]) {
        self.kept()
            .entry(origin)
            .or_insert_with(|| Recent::new(KEPT_OUTCOMES))
            .push((token, body.to_vec()));
    }

    /// A new incarnation of `origin` joined: its tokens start again.
    pub(super) fn new_origin(&self, origin: u16) {
        self.kept().remove(&origin);
    }

    pub(crate) fn take_pending(&self) -> Vec<Vec<u8>> {
        std::mem::take(&mut *self.pending.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl Shared {
    /// A deposit the standby ordered again after a switch that this node applied
    /// before it: a conditional write's kept outcome is sent again (the first went
    /// to the lost hub, or its forward to the origin did).
    pub(super) fn answer_again(&self, payload: &[u8]) {
        let Ok(proto::Deliver {
            origin, data: body, ..
        }) = proto::get_deliver(payload)
        else {
            return;
        };
        let Ok(Op::Cond { token, .. }) = Op::get(body) else {
            return;
        };
        let again = self
            .deposits
            .kept()
            .get(&origin)
            .and_then(|q| q.find(|(t, _)| *t == token).map(|(_, b)| b.clone()));
        match (again, self.link()) {
            (Some(b), Some(l)) => {
                if let Err(e) = l.send(Kind::Outcome, &[&b]) {
                    tracing::warn!(node = self.me.0, error = %e, "outcome not sent again");
                }
            }
            (None, _) => tracing::warn!(
                node = self.me.0,
                origin,
                token,
                "a conditional write ordered again has no kept outcome: its origin gets Lost"
            ),
            (Some(_), None) => {}
        }
    }

    /// Applies a deposit operation delivered by the hub.
    pub(super) fn deposit_deliver(&self, payload: &[u8]) {
        let Ok(proto::Deliver {
            origin,
            seg,
            gen,
            offset: base,
            data: body,
            ..
        }) = proto::get_deliver(payload)
        else {
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
            if self.standby.is_some() {
                self.deposits.keep(origin, token, &body);
            }
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
