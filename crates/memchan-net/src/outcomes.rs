//! The outcomes of conditional writes, both ways: the results this node's own
//! conditional writes are waiting for (by token, until the hub's last report on
//! each), the outcomes this node owes a hub in its own process, and (dual rail) the
//! outcomes it sent, kept to answer a write ordered again after a switch. A leaf: the
//! service thread (`service/deposit.rs`) and the writers (`tx/deposit.rs`) use it.

use crate::recent::Recent;
use memchan_core::deposit::CondResult;
use memchan_core::NodeId;
use memchan_link::proto;
use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// Outcomes of conditional writes: those of this node's own (by token) as they come
/// back, until the hub's last report on it, and, for a node in the hub's process,
/// those it owes, until the hub takes them.
#[derive(Default)]
pub(crate) struct Outcomes {
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

impl Outcomes {
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
    pub(crate) fn record(&self, payload: &[u8]) {
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

    pub(crate) fn kept(&self) -> std::sync::MutexGuard<'_, HashMap<u16, KeptOutcomes>> {
        self.kept.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn keep(&self, origin: u16, token: u64, body: &[u8]) {
        self.kept()
            .entry(origin)
            .or_insert_with(|| Recent::new(KEPT_OUTCOMES))
            .push((token, body.to_vec()));
    }

    /// A new incarnation of `origin` joined: its tokens start again.
    pub(crate) fn new_origin(&self, origin: u16) {
        self.kept().remove(&origin);
    }

    /// Keeps an outcome for the hub in this process to take (`take_pending`).
    pub(crate) fn push_pending(&self, body: Vec<u8>) {
        self.pending
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(body);
    }

    pub(crate) fn take_pending(&self) -> Vec<Vec<u8>> {
        std::mem::take(&mut *self.pending.lock().unwrap_or_else(|e| e.into_inner()))
    }
}
