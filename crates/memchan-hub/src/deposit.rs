//! The hub's side of deposit operations (`proto::deposit`): a `Deposit` frame is
//! checked and routed as a `Data` packet is (generation, every element inside the
//! segment, the sender's right to write), ordered under the same lock, and forwarded
//! unchanged as a `DepositDeliver` to every destination that receives the segment.
//! Conditional writes are remembered until each destination's outcome comes back, so
//! an `Outcome` is forwarded to its origin only from a node that really had that
//! conditional write to answer: no member can forge another's outcome.

pub(crate) mod conds;

use crate::state::{Shared, Sink, State};
use memchan_core::deposit::Outcome;
use memchan_core::{NodeId, NodeSet};
use memchan_link::proto::{self, deposit as wire_op, deposit::Op};
use memchan_link::wire::Kind;
use std::time::Instant;

/// How many failure timeouts a destination may take to answer a conditional write
/// before the hub reports it lost (whether it applied is then unknown, which is what
/// `Outcome::Lost` says): a destination that never answers holds no sender for ever.
const DUE_TIMEOUTS: u32 = 4;

/// Applies `op` at `base` to a lock segment's copy, as every destination applies it.
fn shadow(sh: &mut [u8], op: &Op<'_>, base: u64) {
    let word = |sh: &mut [u8]| {
        let b = base as usize;
        let mut w = [0u8; 8];
        w.copy_from_slice(&sh[b..b + 8]);
        u64::from_ne_bytes(w)
    };
    let put = |sh: &mut [u8], v: u64| {
        let b = base as usize;
        sh[b..b + 8].copy_from_slice(&v.to_ne_bytes());
    };
    match *op {
        Op::Signal { add: false, value } => put(sh, value),
        Op::Signal { add: true, value } => {
            let v = word(sh).wrapping_add(value);
            put(sh, v)
        }
        Op::Cond { expected, new, .. } => {
            if word(sh) == expected {
                put(sh, new)
            }
        }
        _ => {
            for (o, d) in op.elements(base) {
                sh[o..o + d.len()].copy_from_slice(d);
            }
        }
    }
}

impl Shared {
    /// Orders one deposit operation; returns how many deliveries went over links.
    pub(super) fn deposit(
        &self,
        st: &mut State,
        n: NodeId,
        seq: u64,
        head: &[u8],
        body: &[u8],
    ) -> u32 {
        let parsed = proto::get_data_split(head, body).and_then(|d| Ok((Op::get(d.data)?, d)));
        let (op, d) = match parsed {
            Ok(p) => p,
            Err(e) => {
                tracing::warn!(node = n.0, error = %e, "malformed deposit dropped");
                return 0;
            }
        };
        let Some(to) = self.route(st, n, &d, |size| op.check(d.offset, size)) else {
            return 0;
        };
        if let Some(Some(seg)) = st.segs.get_mut(d.seg as usize) {
            if let Some(sh) = seg.shadow.as_mut() {
                shadow(sh, &op, d.offset);
            }
        }
        if let Op::Cond { token, .. } = op {
            if to.is_empty() {
                // Nobody to answer: the origin is told at once.
                st.send(n, Kind::Outcome, &[&wire_op::done(token)]);
            } else if let Some(given_up) = st.conds.open(n.0, token, to) {
                Self::give_up(st, given_up);
            }
        }
        let head = proto::deliver_head(n.0, d.seg, d.gen, d.offset, 0);
        // Numbered as a packet is, so that a standby that orders it again after a
        // switch does not have it applied twice.
        let rail = self.rail_place(st, seq);
        let mut outstanding = 0;
        for t in to.iter() {
            let sent = match &rail {
                Some(r) => st.send(t, Kind::RailDeposit, &[r, &head, d.data]),
                None => st.send(t, Kind::DepositDeliver, &[&head, d.data]),
            };
            if let Some(ds) = sent {
                if let Some(Some(p)) = st.ports.get_mut(t.index()) {
                    p.owed.push_back((ds, n.0, seq));
                    outstanding += 1;
                }
            }
        }
        if matches!(op, Op::Cond { .. }) {
            // A node in this process applied it in `send`, and kept its outcome.
            let mut outs = Vec::new();
            for t in to.iter() {
                if let Some(Some(p)) = st.ports.get(t.index()) {
                    if let Sink::Local(lp) = &p.sink {
                        outs.extend(lp.take_outcomes().into_iter().map(|o| (t, o)));
                    }
                }
            }
            for (t, o) in outs {
                self.outcome(st, t, &o);
            }
        }
        outstanding
    }

    /// A conditional write's outcome from destination `from`: forwarded to its origin
    /// if `from` owed it one, followed by the last report once every destination has
    /// answered. A node reports only what it did (applied, held, disabled).
    pub(super) fn outcome(&self, st: &mut State, from: NodeId, payload: &[u8]) {
        let (origin, token, o) = match wire_op::get_outcome(payload) {
            Ok((o, t, Some(x @ (Outcome::Applied | Outcome::Held(_) | Outcome::Disabled)))) => {
                (o, t, x)
            }
            Ok(_) => {
                tracing::warn!(node = from.0, "an outcome only the hub reports dropped");
                return;
            }
            Err(e) => {
                tracing::warn!(node = from.0, error = %e, "malformed outcome dropped");
                return;
            }
        };
        match st.conds.settle(origin, token, from) {
            None => tracing::debug!(
                node = from.0,
                origin,
                token,
                "outcome owed to nobody dropped"
            ),
            Some(complete) => {
                Self::report(st, origin, token, from, o);
                if complete {
                    st.send(NodeId(origin), Kind::Outcome, &[&wire_op::done(token)]);
                }
            }
        }
    }

    /// Reports every destination of a conditional write that did not answer lost,
    /// then the last report.
    fn give_up(st: &State, (origin, token, left): (u16, u64, NodeSet)) {
        for d in left.iter() {
            Self::report(st, origin, token, d, Outcome::Lost);
        }
        st.send(NodeId(origin), Kind::Outcome, &[&wire_op::done(token)]);
    }

    /// Gives up conditional writes unanswered for [`DUE_TIMEOUTS`] failure timeouts
    /// (the timer calls it once a heartbeat).
    pub(super) fn expire_conds(&self, st: &mut State) {
        let Some(before) = Instant::now().checked_sub(self.cfg.failure_timeout * DUE_TIMEOUTS)
        else {
            return;
        };
        for e in st.conds.expire(before) {
            Self::give_up(st, e);
        }
    }

    fn report(st: &State, origin: u16, token: u64, from: NodeId, o: Outcome) {
        let body = wire_op::outcome(from.0, token, o);
        st.send(NodeId(origin), Kind::Outcome, &[&body]);
    }

    /// Node `n` left or was isolated: the conditional writes it had yet to answer
    /// report it lost.
    pub(super) fn conds_gone(&self, st: &mut State, n: NodeId) {
        for (origin, token, complete) in st.conds.gone(n) {
            Self::report(st, origin, token, n, Outcome::Lost);
            if complete {
                st.send(NodeId(origin), Kind::Outcome, &[&wire_op::done(token)]);
            }
        }
    }
}
