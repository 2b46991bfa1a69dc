//! Membership at the hub: releases credited back to their senders as destinations
//! release (`settle`, `credit`), and a node's removal (it left, or was isolated: its
//! link closed, failed a MAC or stayed silent), with its lock slots cleared, its
//! deliveries and requests forgotten and the survivors told (`remove`).

use crate::{Port, Shared, Sink, State, HUB_ORIGIN};
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
        if let Some(Some(p)) = st.ports.get_mut(n.index()) {
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
        if !st.acks.is_empty() {
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
        self.remove(st, n, inc, event_kind::FAILED, why);
    }

    pub(crate) fn remove(&self, st: &mut State, n: NodeId, inc: u64, kind: u8, why: &str) {
        let Some(p) = st.ports[n.index()].take() else {
            return;
        };
        if let Some(sb) = st.standby.as_mut() {
            sb.forget(n);
        }
        self.refresh_links(st);
        st.epoch += 1;
        let epoch = st.epoch;
        match &p.sink {
            Sink::Remote(l) => {
                if kind == event_kind::FAILED {
                    let body = Put::new().u64(epoch).str(why).0;
                    l.send_control(Kind::Isolated, &body);
                }
                l.shutdown();
            }
            Sink::Local(lp) => {
                if kind == event_kind::FAILED {
                    lp.isolated(epoch, why);
                }
            }
        }
        // Deliveries it will never release no longer hold their senders back.
        let credited: Vec<_> = p
            .owed
            .iter()
            .filter(|e| e.1 != HUB_ORIGIN)
            .map(|e| (e.1, e.2))
            .collect();
        self.credit(st, &credited);
        self.conds_gone(st, n);
        let mut clear = Vec::new();
        for (i, s) in st.segs.iter_mut().enumerate() {
            if let Some(s) = s {
                s.rx.remove(n);
                if s.shadow
                    .as_ref()
                    .is_some_and(|sh| sh.get(n.index()) == Some(&1))
                {
                    clear.push(i);
                }
            }
        }
        for seg in clear {
            st.hub_write(seg, n.index(), &[0]);
        }
        st.event(n, inc, kind);
        self.rma_forget(st, n);
        st.barrier_waits.retain(|w| w.node != n);
        for counts in st
            .barrier_counts
            .values_mut()
            .chain(st.barrier_seen.values_mut())
        {
            counts[n.index()] = 0;
        }
        self.check_barriers(st);
        self.check_acks(st);
        self.replicate(st);
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
