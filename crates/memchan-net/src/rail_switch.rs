//! Dual rail, the node's side of a switch (`memchan_link::rail` has the design, `memchan-hub`'s `standby.rs`
//! the standby hub's side). When the link to the active hub fails for good (it
//! closed, or the hub stayed silent past the failure timeout) and a standby is
//! configured, the thread that saw it moves the link: it takes the frames the old hub
//! had not released ([`Link::take_held`]), reports what this node applied of the old
//! order, joins the standby in the resume role and resumes the link there under the
//! same seqs ([`Link::resume_announced`], the `RailResume` first). The application
//! sees nothing: a write waiting on the old link goes on the new one, a thread
//! reading goes on reading. The standby's `RailPlan` then renumbers this node's
//! history ([`memchan_link::rail::Applied::rebase`]) before any packet it orders again.
//!
//! One switch per node: a failure of the standby is `HubLost`, as with one rail. The
//! global clock follows the standby's time packets from the switch on.

use crate::state::{Shared, Standby, Up, ALIVE};
use memchan_link::handshake::{self, HandshakeError};
use memchan_link::link::Link;
use memchan_link::proto::ROLE_RESUME;
use memchan_link::rail::{PlanNotice, RailError, Resume};
use memchan_link::wire::Kind;
use std::sync::atomic::Ordering;
use std::sync::Arc;

/// Why a switch to the standby failed (the node then counts the hub as lost).
#[derive(Debug, thiserror::Error)]
enum SwitchError {
    /// The node's hub is in its own process: there is no link to move.
    #[error("no link to move")]
    NoLink,
    /// The node's report does not encode.
    #[error(transparent)]
    Report(#[from] RailError),
    /// The standby could not be joined.
    #[error(transparent)]
    Handshake(#[from] HandshakeError),
    /// The joined socket could not be set up as a link.
    #[error("cannot set up the link: {0}")]
    Link(#[source] std::io::Error),
}

impl Shared {
    /// The link `failed` failed for `why`: switches to the standby if there is one
    /// and this node has not switched yet (then `true`: go on with the new link), or
    /// counts the hub as lost (`false`). A thread that comes after another switched
    /// away from `failed` gets `true` at once.
    pub(crate) fn link_failed(&self, failed: &Arc<Link>, why: String) -> bool {
        let Some(standby) = &self.standby else {
            self.set_lost(why);
            return false;
        };
        let mut switched = self.switched.lock().unwrap_or_else(|e| e.into_inner());
        if self.link().is_some_and(|l| !Arc::ptr_eq(&l, failed)) {
            return true;
        }
        if *switched
            || self.stop.load(Ordering::Acquire)
            || self.health.load(Ordering::Acquire) != ALIVE
        {
            drop(switched);
            self.set_lost(why);
            return false;
        }
        *switched = true;
        tracing::warn!(node = self.me.0, reason = %why, standby = %standby.addr, "active hub lost: switching rails");
        match self.switch(standby, failed) {
            Ok(()) => {
                tracing::info!(node = self.me.0, standby = %standby.addr, "link resumed at the standby hub");
                true
            }
            Err(e) => {
                drop(switched);
                self.set_lost(format!("{why}; the standby hub {}: {e}", standby.addr));
                false
            }
        }
    }

    fn switch(&self, standby: &Standby, old: &Arc<Link>) -> Result<(), SwitchError> {
        let Up::Link(cell) = &self.up else {
            return Err(SwitchError::NoLink);
        };
        // Held across the move: nothing is applied between the report and the new
        // link (a frame of the old link handled late is dropped, see `rail_deliver`).
        let rail = self.rail_lock();
        let held = old.take_held();
        self.rma.forget_replies();
        // Packets and deposits alike are numbered in the hub's order.
        let mut packets = held.seqs_of(Kind::Data);
        packets.extend(held.seqs_of(Kind::Deposit));
        packets.sort_unstable();
        let report = rail.report(self.me.0, packets);
        let (rx, locks) = {
            let map = self.rx.read().unwrap_or_else(|e| e.into_inner());
            let rx = map.iter().map(|(&seg, m)| (seg, m.gen)).collect();
            let locks = map
                .iter()
                .filter(|(_, m)| m.lock_page)
                .map(|(&seg, m)| (seg, m.gen, m.bids()))
                .collect();
            (rx, locks)
        };
        let barriers = self
            .barrier_numbers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
            .map(|(&scope, &number)| (scope, number))
            .collect();
        let resume = Resume {
            node: self.me.0,
            inc: self.inc,
            first_seq: held.first(),
            rx,
            barriers,
            locks,
            report,
        }
        .encode()?;
        let mut join = standby.join.clone();
        join.role = ROLE_RESUME;
        let (sock, key, dec) = handshake::connect(&standby.addr, &standby.key, join)?;
        sock.set_read_timeout(None).map_err(SwitchError::Link)?;
        let link = Link::resume_announced(
            sock,
            key,
            dec,
            standby.link.clone(),
            held,
            1,
            Some((Kind::RailResume, &resume)),
        )
        .map_err(SwitchError::Link)?;
        *cell.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(link);
        drop(rail);
        Ok(())
    }

    /// Whether this node moved to the standby hub.
    pub(crate) fn rail_switched(&self) -> bool {
        *self.switched.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The standby's `RailPlan`: this node's history in its numbering, the epoch and
    /// members after the switch.
    pub(crate) fn rail_plan(&self, payload: &[u8]) {
        let notice = match PlanNotice::decode(payload) {
            Ok(n) => n,
            Err(e) => {
                self.set_lost(format!("the standby hub sent a malformed plan: {e}"));
                return;
            }
        };
        if let Err(e) = self
            .rail_lock()
            .rebase(&notice.renumbered, notice.next_gseq)
        {
            self.set_lost(format!("the standby hub broke its plan: {e}"));
            return;
        }
        self.adopt_members(notice.epoch, notice.members);
    }
}
