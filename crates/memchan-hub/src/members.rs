//! Membership at the hub: releases credited back to their senders as destinations
//! release (`settle`, `credit`), and a node's removal (it left, or was isolated: its
//! link closed, failed a MAC or stayed silent): the departure of
//! `memchan_core::membership` placed on the hub's tables and frames ([`Removal`]),
//! with its deliveries and requests forgotten.

use crate::state::{Port, Shared, Sink, State, HUB_ORIGIN};
use memchan_core::membership::{depart, Cause, Departed, Departure};
use memchan_core::NodeId;
use memchan_link::proto::event_kind;
use memchan_link::wire::{Kind, Put};

impl Shared {
    /// Moves releases forward after `n` released deliveries: its owed deliveries are
    /// credited to their origins, whose links then release in order.
    pub(crate) fn settle(&self, st: &mut State, n: NodeId) {
        let released = match st.ports.get(n.index()) {
            Some(Some(Port {
                sink: Sink::Remote(l),
                ..
            })) => l.peer_released(),
            _ => return,
        };
        // Reused between calls: this runs for nearly every frame a node sends.
        let mut credited = std::mem::take(&mut st.credited);
        let mut moved = false;
        if let Some(Some(p)) = st.ports.get_mut(n.index()) {
            moved = released > p.acks_seen;
            p.acks_seen = released;
            while let Some(&(ds, origin, oseq)) = p.owed.front() {
                if ds > released {
                    break;
                }
                p.owed.pop_front();
                if origin != HUB_ORIGIN {
                    credited.push((origin, oseq));
                }
            }
        }
        self.credit(st, &credited);
        credited.clear();
        st.credited = credited;
        // The waits of every pending ack are looked at only when this release moved
        // (per frame they cost a scan of up to 64 acks x 63 destinations, which was
        // a tenth of a flooded hub's time); the timer looks at them all every tick.
        if moved && !st.acks.is_empty() {
            self.check_acks(st);
        }
    }

    pub(crate) fn credit(&self, st: &mut State, credited: &[(u16, u64)]) {
        for &(origin, oseq) in credited {
            if let Some(Some(p)) = st.ports.get_mut(origin as usize) {
                if let Some(&(front, _, _)) = p.inflight.front() {
                    if let Some(e) = p.inflight.get_mut(oseq.wrapping_sub(front) as usize) {
                        e.1 = e.1.saturating_sub(1);
                    }
                }
            }
        }
        // After all decrements, so each origin releases as far as it can at once.
        for &(origin, _) in credited {
            if let Some(Some(p)) = st.ports.get_mut(origin as usize) {
                release_done(p);
            }
        }
    }

    /// Isolates a failed node (see the module doc).
    pub(crate) fn isolate(&self, st: &mut State, n: NodeId, inc: u64, why: &str) {
        if !st.alive(n, inc) {
            return;
        }
        st.isolations += 1;
        tracing::warn!(node = n.0, incarnation = inc, reason = %why, "isolated");
        self.remove(st, n, inc, Cause::Failed, why);
    }

    /// Removes `n` (incarnation `inc`), which left or failed (`why`), if it is a
    /// member, and copies the tables to the standbys.
    pub(crate) fn remove(&self, st: &mut State, n: NodeId, inc: u64, cause: Cause, why: &str) {
        if st.ports[n.index()].is_none() {
            return;
        }
        let gone = Departed {
            node: n,
            incarnation: inc,
            cause,
        };
        depart(
            &mut Removal {
                sh: self,
                st,
                port: None,
                why,
            },
            &gone,
        );
        self.replicate(st);
    }
}

/// A departure's steps on the hub's tables, under the hub lock.
struct Removal<'a> {
    sh: &'a Shared,
    st: &'a mut State,
    /// The departed node's port, once expelled: its link is closed last.
    port: Option<Port>,
    why: &'a str,
}

impl Departure for Removal<'_> {
    fn expel(&mut self, d: &Departed) {
        let (sh, st, n) = (self.sh, &mut *self.st, d.node);
        let Some(p) = st.ports[n.index()].take() else {
            return;
        };
        if let Some(sb) = st.standby.as_mut() {
            sb.forget(n);
        }
        sh.refresh_links(st);
        // Deliveries it will never release no longer hold their senders back.
        let credited: Vec<_> = p
            .owed
            .iter()
            .filter(|e| e.1 != HUB_ORIGIN)
            .map(|e| (e.1, e.2))
            .collect();
        sh.credit(st, &credited);
        sh.conds_gone(st, n);
        self.port = Some(p);
    }

    fn drop_rx(&mut self, d: &Departed) {
        for s in self.st.segs.iter_mut().flatten() {
            s.rx.remove(d.node);
        }
    }

    fn clear_locks(&mut self, d: &Departed) {
        let i = d.node.index();
        let held: Vec<usize> = (self.st.segs.iter().enumerate())
            .filter(|(_, s)| {
                s.as_ref()
                    .and_then(|s| s.shadow.as_ref())
                    .is_some_and(|sh| sh.get(i) == Some(&1))
            })
            .map(|(seg, _)| seg)
            .collect();
        // Packets the hub orders itself, to every node that maps the lock page.
        for seg in held {
            self.st.hub_write(seg, i, &[0]);
        }
    }

    fn announce(&mut self, d: &Departed) -> u64 {
        let kind = match d.cause {
            Cause::Left => event_kind::LEFT,
            Cause::Failed => event_kind::FAILED,
        };
        self.st.epoch += 1;
        self.st.event(d.node, d.incarnation, kind);
        self.st.epoch
    }

    fn dismiss(&mut self, d: &Departed, epoch: u64) {
        let failed = d.cause == Cause::Failed;
        match self.port.as_ref().map(|p| &p.sink) {
            Some(Sink::Remote(l)) => {
                if failed {
                    let body = Put::new().u64(epoch).str(self.why).0;
                    l.send_control(Kind::Isolated, &body);
                }
                l.shutdown();
            }
            Some(Sink::Local(lp)) if failed => lp.isolated(epoch, self.why),
            _ => {}
        }
    }

    fn release_waiters(&mut self, d: &Departed) {
        let (sh, st, n) = (self.sh, &mut *self.st, d.node);
        sh.rma_forget(st, n);
        st.barrier_waits.retain(|w| w.node != n);
        for counts in st
            .barrier_counts
            .values_mut()
            .chain(st.barrier_seen.values_mut())
        {
            counts[n.index()] = 0;
        }
        sh.check_barriers(st);
        sh.check_acks(st);
    }
}

/// Releases the node's frames that are done, in order, up to the first one whose
/// deliveries are still outstanding.
pub(crate) fn release_done(p: &mut Port) {
    let mut upto = None;
    while let Some(&(seq, 0, _)) = p.inflight.front() {
        p.inflight.pop_front();
        upto = Some(seq);
    }
    if let (Some(seq), Sink::Remote(l)) = (upto, &p.sink) {
        l.release(seq);
        l.send_release(false);
    }
}
