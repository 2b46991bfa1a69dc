//! The one order: a node's reliable frames as the hub handles them, under its lock
//! (a standby taking over holds them until its plan). A `Data` packet is checked
//! against the segment's owner and mode, its destination expanded (node, group or
//! broadcast, the sender itself for a local copy) and one `Deliver` queued per
//! destination link before the next packet is looked at; numbered for a standby on
//! a dual rail (`rail_place`).

use crate::members::release_done;
use crate::state::{Shared, State};
use memchan_core::{Dest, NodeId, NodeSet};
use memchan_link::proto;
use memchan_link::proto::reply::Refusal;
use memchan_link::rail;
use memchan_link::wire::Kind;
use std::time::Instant;

impl Shared {
    /// A reliable frame from `n` (seq 0: a local node, which needs no release).
    pub(crate) fn frame(&self, st: &mut State, n: NodeId, seq: u64, kind: Kind, payload: &[u8]) {
        if let Some(sb) = st.standby.as_mut().filter(|s| s.holding()) {
            // A standby taking over: held until the plan orders them.
            sb.hold(n, seq, kind, payload);
            self.check_takeover(st);
            return;
        }
        if let Some(Some(p)) = st.ports.get_mut(n.index()) {
            p.handled += 1;
        }
        let numbered = st.gseq;
        let outstanding = match kind {
            Kind::Data if payload.len() >= proto::DATA_HEAD => {
                let (head, body) = payload.split_at(proto::DATA_HEAD);
                self.data(st, n, seq, head, body)
            }
            Kind::Deposit if payload.len() >= proto::DATA_HEAD => {
                let (head, body) = payload.split_at(proto::DATA_HEAD);
                self.deposit(st, n, seq, head, body)
            }
            Kind::Outcome => {
                self.outcome(st, n, payload);
                0
            }
            Kind::Request => {
                self.request(st, n, payload);
                0
            }
            Kind::RmaRequest => {
                self.rma_request(st, n, payload);
                0
            }
            Kind::RmaDone => {
                self.rma_done(st, n, payload);
                0
            }
            k => {
                tracing::warn!(
                    node = n.0,
                    kind = ?k,
                    "ignored a frame only the hub sends"
                );
                0
            }
        };
        if seq != 0 {
            if let Some(Some(p)) = st.ports.get_mut(n.index()) {
                let gseq = if st.gseq != numbered { st.gseq } else { 0 };
                p.inflight.push_back((seq, outstanding, gseq));
                release_done(p);
            }
            self.settle(st, n);
        }
    }

    /// Orders one packet; returns how many deliveries went over links.
    pub(crate) fn data(
        &self,
        st: &mut State,
        n: NodeId,
        seq: u64,
        head: &[u8],
        body: &[u8],
    ) -> u32 {
        let d = match proto::get_data_split(head, body) {
            Ok(d) => d,
            Err(e) => {
                tracing::warn!(node = n.0, error = %e, "malformed packet dropped");
                return 0;
            }
        };
        let record = d.flags & proto::FLAG_RECORD;
        let passed = d.flags & (proto::FLAG_RECORD | proto::FLAG_QUIET);
        if record != 0 && !proto::record_ok(d.offset, d.data) {
            tracing::warn!(node = n.0, "malformed record dropped");
            return 0;
        }
        let end = (d.offset as usize).checked_add(d.data.len());
        let Some(to) = self.route(st, n, &d, |size| end.is_some_and(|e| e <= size)) else {
            return 0;
        };
        let Some(Some(seg)) = st.segs.get_mut(d.seg as usize) else {
            return 0;
        };
        if let Some(sh) = seg.shadow.as_mut() {
            sh[d.offset as usize..d.offset as usize + d.data.len()].copy_from_slice(d.data);
        }
        let head = proto::deliver_head(n.0, d.seg, d.gen, d.offset, passed);
        let rail = self.rail_place(st, seq);
        let mut outstanding = 0;
        for t in to.iter() {
            let sent = match &rail {
                Some(r) => st.send(t, Kind::RailDeliver, &[r, &head, d.data]),
                None => st.send(t, Kind::Deliver, &[&head, d.data]),
            };
            if let Some(ds) = sent {
                if let Some(Some(p)) = st.ports.get_mut(t.index()) {
                    p.owed.push_back((ds, n.0, seq));
                    outstanding += 1;
                }
            }
        }
        outstanding
    }

    /// Dual rail: the next place in the hub's order for a remote sender's packet or
    /// deposit of seq `seq`, as its `RailDeliver` / `RailDeposit` head (`None`
    /// without a rail, and for a local node's, which has no seq to be known by and
    /// goes down with the hub anyway).
    pub(crate) fn rail_place(&self, st: &mut State, seq: u64) -> Option<[u8; rail::RAIL_HEAD]> {
        (self.cfg.rail && seq != 0).then(|| {
            st.gseq += 1;
            rail::rail_head(seq, st.gseq)
        })
    }

    /// The destinations of `n`'s packet `d` that receive its segment, once its
    /// generation, its range (`fits` the segment's size) and `n`'s right to write
    /// are checked; `None` (a refusal answered where due) if any fails.
    pub(crate) fn route(
        &self,
        st: &mut State,
        n: NodeId,
        d: &proto::Data<'_>,
        fits: impl FnOnce(usize) -> bool,
    ) -> Option<NodeSet> {
        let members = match d.dest {
            Dest::Broadcast => st.members(),
            _ => NodeSet::EMPTY,
        };
        let Some(Some(me)) = st.ports.get(n.index()) else {
            return None;
        };
        let caller = (me.uid, me.gid);
        let known = matches!(st.segs.get(d.seg as usize), Some(Some(s)) if s.gen == d.gen);
        if !known && self.cfg.standby_of.is_some() {
            // A standby that took over with a stale copy (the active dropped it from
            // its mirror set): the write fails the writer's next ack, never lost
            // silently.
            if let Some(suppressed) = st.frame_log.admit(Instant::now()) {
                tracing::warn!(
                    node = n.0,
                    seg = d.seg,
                    gen = d.gen,
                    suppressed,
                    "packet for a segment this standby never learnt refused"
                );
            }
            let what = format!(
                "#{} generation {}, which the standby hub that took over never learnt",
                d.seg, d.gen
            );
            st.refuse_with(n, proto::NO_REQUEST, &Refusal::UnknownSegment(what));
            return None;
        }
        let groups = &st.groups;
        let Some(Some(seg)) = st.segs.get_mut(d.seg as usize) else {
            return None;
        };
        if seg.gen != d.gen || !fits(seg.size) {
            // A stale generation (segment freed) or a hostile offset: touch nothing.
            return None;
        }
        // Write permission, from the uid and gid the node joined with: the library
        // checks it at `map_tx`, a node that skips the library is checked here.
        let perm =
            memchan_core::perm::check(caller, (seg.uid, seg.gid, seg.mode), 2, &seg.name, "map_tx");
        if let Err(e) = perm {
            if let Some(suppressed) = st.frame_log.admit(Instant::now()) {
                tracing::warn!(node = n.0, error = %e, suppressed, "packet refused");
            }
            st.refuse(n, proto::NO_REQUEST, &e);
            return None;
        }
        let mut to = match d.dest {
            Dest::Node(t) => {
                let mut s = NodeSet::EMPTY;
                s.insert(t);
                s
            }
            Dest::Group(g) => match groups.get(g.index()) {
                Some((_, m)) => *m,
                None => return None,
            },
            Dest::Broadcast => members,
        };
        if d.flags & proto::FLAG_LOCAL_COPY != 0 {
            to.insert(n);
        } else if d.dest != Dest::Node(n) {
            to.remove(n);
        }
        // Only members receive: an isolated node leaves every rx set.
        Some(to.intersect(&seg.rx))
    }
}
