//! A node's side of deposit operations: applying a `DepositDeliver` in the hub's
//! order (elements one by one with the packet store, a word operation as one atomic
//! access), and answering a conditional write with its `Outcome` before the frame is
//! released (the outcomes are kept in `outcomes.rs`).

use crate::state::{Shared, Up};
use memchan_core::deposit::Outcome;
use memchan_link::proto::{self, deposit::Op};
use memchan_link::wire::Kind;

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
            .outcomes
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
                self.outcomes.keep(origin, token, &body);
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
                Up::Local(_) => self.outcomes.push_pending(body),
            }
        }
    }
}
