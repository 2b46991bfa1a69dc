//! A joined node's link progress, on its state (`state.rs`): the service thread of
//! a remote node (reads the link, ticks, heartbeats, watches the hub's liveness), the
//! reading of the link by application threads while they wait (`Shared::progress`),
//! the dispatch of what the hub sends (deliveries, responses, events, isolation,
//! remote accesses to serve: `rma/serve.rs`, deposits: `service/deposit.rs`, a rail
//! switch: `rail_switch.rs`), and sending up the link (`Shared::send`). A node in the
//! hub's process (virtual hub) has no service thread: the hub hands it its frames
//! through a `LocalSlot`.

mod deposit;

use crate::state::{answer, Shared, Up, ALIVE};
use memchan_core::{validate, Error, EventKind, MembershipEvent, NodeId, Result};
use memchan_hub::LocalPort;
use memchan_link::link::{Handler, Link, LinkError};
use memchan_link::proto::clock;
use memchan_link::proto::{self, event_kind};
use memchan_link::wire::{Get, Kind};
use std::sync::atomic::Ordering;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// Holds frames for a local node until it exists, then forwards.
#[derive(Default)]
pub(crate) struct LocalSlot {
    node: std::sync::OnceLock<Arc<Shared>>,
    pending: Mutex<Vec<(Kind, Vec<u8>)>>,
}

impl LocalSlot {
    pub(crate) fn set(&self, sh: Arc<Shared>) {
        let mut p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
        for (k, f) in p.drain(..) {
            sh.on_frame(k, &f);
        }
        let _ = self.node.set(sh);
    }
}

impl LocalPort for LocalSlot {
    fn frame(&self, kind: Kind, parts: &[&[u8]]) {
        match self.node.get() {
            Some(sh) => sh.on_parts(kind, parts),
            None => {
                let mut p = self.pending.lock().unwrap_or_else(|e| e.into_inner());
                match self.node.get() {
                    Some(sh) => sh.on_parts(kind, parts),
                    None => p.push((kind, parts.concat())),
                }
            }
        }
    }

    fn isolated(&self, epoch: u64, why: &str) {
        if let Some(sh) = self.node.get() {
            sh.set_isolated(epoch, why);
        }
    }

    fn take_outcomes(&self) -> Vec<Vec<u8>> {
        self.node
            .get()
            .map(|sh| sh.outcomes.take_pending())
            .unwrap_or_default()
    }
    fn rma(&self, serve: &[u8]) -> Option<Vec<u8>> {
        crate::rma::serve::serve(self.node.get()?, serve)
    }
}

struct NodeHandler<'a>(&'a Shared);

impl Handler for NodeHandler<'_> {
    fn frame(&mut self, link: &Link, seq: u64, kind: Kind, payload: &[u8]) {
        if kind == Kind::RailDeliver || kind == Kind::RailDeposit {
            self.0.rail_deliver(link, kind, payload);
        } else {
            self.0.on_frame(kind, payload);
        }
        link.release(seq);
    }

    fn control(&mut self, _link: &Link, kind: Kind, payload: &[u8]) {
        if kind == Kind::RailMark {
            if let Ok(mark) = Get::new(payload, "release mark").u64() {
                self.0.rail_lock().released_upto(mark);
            }
            return;
        }
        if kind == Kind::Isolated {
            let mut g = Get::new(payload, "isolation");
            let epoch = g.u64().unwrap_or(0);
            let why = g.str().unwrap_or_default();
            self.0.set_isolated(epoch, &why);
        }
    }
}

/// The link's timer period while frames are unconfirmed (retransmission, releases
/// owed, a NAK out).
const TICK: Duration = Duration::from_millis(10);

impl Shared {
    /// The service thread of a remote node: reads the link, ticks, heartbeats, watches
    /// the hub's liveness.
    pub(crate) fn service(self: Arc<Self>, heartbeat: Duration, timeout: Duration) {
        let mut last_hb = Instant::now() - heartbeat;
        let mut last_tick = Instant::now();
        while !self.stop.load(Ordering::Acquire) {
            // Fetched each turn: a rail switch replaces it.
            let Some(link) = self.link() else { return };
            // While the application waits for data it reads the link itself (see
            // `RxMapping::wait`); this thread then only ticks, deaf to frames until
            // the last such reader leaves (`Reading` calls `Link::listen`).
            let away = || self.app_reading.away();
            self.settle_listen();
            // An idle link has nothing to time before the next heartbeat, and a frame
            // that arrives wakes this thread: sleeping to the heartbeat instead of
            // ticking took an idle node from over 100 wake-ups a second (a tick each
            // 10 ms) to ~35 (measured), most of what it costs its host. Not within a
            // second of a spinning wait, which leaves this thread deaf until its next
            // turn (`Reading::spinning`).
            // An application thread that reads meanwhile answers the hub's asks for
            // releases itself (an ask names the frame its ack waits for).
            let idle = link.idle() && !self.app_reading.spun_within(Duration::from_secs(1));
            let slice = if idle {
                heartbeat
                    .saturating_sub(last_hb.elapsed())
                    .clamp(TICK, heartbeat.max(TICK))
            } else {
                TICK
            };
            if link.serve_wait(slice, away) {
                if let Err(e) = link.receive(&mut NodeHandler(&self)) {
                    if self.health.load(Ordering::Acquire) == ALIVE
                        && !self.stop.load(Ordering::Acquire)
                    {
                        let why = match e {
                            LinkError::Closed => "the hub closed the link".to_string(),
                            e => format!("hub link failed: {e}"),
                        };
                        if self.link_failed(&link, why) {
                            continue;
                        }
                    }
                    // Wakes writers waiting for replay memory.
                    link.shutdown();
                    return;
                }
                self.flush_rma_answers();
                // What woke an idle link is most often one frame (the hub's time
                // packet): its release goes now, not from a timer 10 ms on, which
                // would be a second wake-up for it.
                if idle {
                    link.send_release(true);
                }
            }
            if last_tick.elapsed() >= TICK {
                last_tick = Instant::now();
                link.tick();
                if let Some(silent) = link.silent_past(timeout) {
                    let why = format!("the hub was silent for {} ms", silent.as_millis());
                    if self.link_failed(&link, why) {
                        continue;
                    }
                    link.shutdown();
                    return;
                }
            }
            if last_hb.elapsed() >= heartbeat {
                last_hb = Instant::now();
                link.send_control(Kind::Heartbeat, &proto::heartbeat(&link.counters()));
                let bound = self.clock.global_time().ok().map(|t| t.bound_ns);
                link.send_control(Kind::TimeProbe, &clock::probe(clock::mono_ns(), bound));
            }
        }
    }

    /// Reads what arrived for this node in the calling thread, waiting up to `slice`
    /// (zero: just looks) for it or for the wake-up eventfd.
    pub(crate) fn progress(&self, slice: Duration) {
        use std::os::fd::AsFd;
        match &self.up {
            Up::Link(_) => {
                let Some(l) = self.link() else { return };
                // With links from other hosts' nodes, the wait is on them too (their
                // poll set holds the wake-up descriptor as well): the frame that
                // wakes this thread is read by it, not handed over by another.
                let direct = self.direct.get().filter(|d| d.has_inbound());
                let readable = if slice.is_zero() {
                    true
                } else {
                    let extra = direct.map_or(self.wake.as_fd(), |d| d.poll_set());
                    l.wait(Some(extra), slice)
                };
                if let Some(d) = direct {
                    d.read_inbound(self);
                }
                if readable {
                    if let Err(e) = l.receive(&mut NodeHandler(self)) {
                        if !self.stop.load(Ordering::Acquire) {
                            self.link_failed(&l, format!("hub link failed: {e}"));
                        }
                    }
                    self.flush_rma_answers();
                    // When asked (an ack waits on them) or a batch is due; stragglers
                    // go on the service thread's tick.
                    l.send_release(false);
                }
                l.heartbeat_if_quiet(self.heartbeat);
            }
            Up::Local(h) => h.progress(Some(self.wake.as_fd()), slice),
        }
        // Only a thread that blocked drains the wake-up: a busy-polling thread that
        // just wrote it for a blocked one would otherwise take it back before the
        // blocked one's poll looked (it then slept on to the end of its slice).
        // Drain first, then clear: a wake skipped in between is covered by this
        // thread's own re-check, and the flag never stays set over an empty eventfd.
        // In a host domain the descriptor is a FIFO the host's other nodes write to
        // as well, without the flag: drained whenever a blocked thread woke.
        if !slice.is_zero() && (self.wake_pending.load(Ordering::SeqCst) || self.domain.is_some()) {
            let mut buf = [0u8; 64];
            if rustix::io::read(&self.wake, &mut buf).is_ok() {
                self.wake_pending.store(false, Ordering::SeqCst);
            }
        }
    }

    /// Applies a delivered packet to this node's rx mapping of the segment, if any.
    pub(crate) fn deliver(&self, d: &proto::Deliver<'_>) {
        let map = self.rx.read().unwrap_or_else(|e| e.into_inner());
        if let Some(m) = map.get(&d.seg) {
            if m.gen != d.gen {
                return;
            }
            let woke = if d.flags & proto::FLAG_QUIET != 0 && d.flags & proto::FLAG_RECORD == 0 {
                m.apply_quiet(d.offset as usize, d.data);
                false
            } else if d.flags & proto::FLAG_RECORD != 0 {
                if !proto::record_ok(d.offset, d.data) {
                    return; // malformed: dropped whole
                }
                // The body, then the word.
                let body = m.apply(d.offset as usize + 8, &d.data[8..]);
                m.apply(d.offset as usize, &d.data[..8]) || body
            } else {
                m.apply(d.offset as usize, d.data)
            };
            // SeqCst pairs with the waiter's announce-then-check (Dekker): either it
            // sees the new notify count or we see it reading and wake it.
            if woke {
                self.wake_other_readers();
            }
        }
    }

    /// A Deliver or DepositDeliver (`kind` `RailDeliver` or `RailDeposit`) numbered
    /// for dual rail, read from `link`: applied unless this node applied it already
    /// (ordered again after a switch of hubs), and recorded. A conditional write
    /// applied before the switch is answered again from its kept outcome.
    fn rail_deliver(&self, link: &Link, kind: Kind, payload: &[u8]) {
        let Ok((oseq, gseq, deliver)) = memchan_link::rail::get_rail_deliver(payload) else {
            tracing::warn!(node = self.me.0, "malformed rail deliver dropped");
            return;
        };
        let Ok(d) = proto::get_deliver(deliver) else {
            tracing::warn!(node = self.me.0, "malformed rail deliver dropped");
            return;
        };
        let mut rail = self.rail_lock();
        // A frame of a link a rail switch left (read before the switch shut it, and
        // handled after): the switch reported what was applied without it, so it
        // must not be applied now; the standby orders it again.
        let current = self.link().is_some_and(|l| std::ptr::eq(&*l, link));
        if !current || rail.is_applied(d.origin, oseq) {
            drop(rail);
            if current && kind == Kind::RailDeposit {
                self.answer_again(deliver);
            }
            return;
        }
        let e = memchan_link::rail::Entry {
            origin: d.origin,
            oseq,
            gseq,
        };
        // Recorded first: a packet out of the hub's order is not applied either.
        if let Err(e) = rail.record(e) {
            tracing::warn!(node = self.me.0, error = %e, "rail deliver out of order dropped");
            return;
        }
        drop(rail);
        if kind == Kind::RailDeposit {
            self.deposit_deliver(deliver);
        } else {
            self.deliver(&d);
        }
    }

    /// A frame handed over by the hub in this process, in pieces (a Deliver's header
    /// and data are not joined).
    fn on_parts(&self, kind: Kind, parts: &[&[u8]]) {
        match parts {
            [head, data] if kind == Kind::Deliver && head.len() == proto::DELIVER_HEAD => {
                if let Ok(d) = proto::get_deliver(head) {
                    self.deliver(&proto::Deliver { data, ..d });
                }
            }
            _ => self.on_frame(kind, &parts.concat()),
        }
    }

    /// A frame from the hub, in its order.
    fn on_frame(&self, kind: Kind, payload: &[u8]) {
        match kind {
            Kind::Time => self.clock.on_time(payload, clock::mono_ns()),
            Kind::Deliver => {
                if let Ok(d) = proto::get_deliver(payload) {
                    self.deliver(&d);
                }
            }
            Kind::RailPlan => self.rail_plan(payload),
            Kind::DepositDeliver => self.deposit_deliver(payload),
            Kind::DirectExpect => {
                if let (Some(d), Ok(e)) = (self.direct.get(), proto::DirectExpect::get(payload)) {
                    d.expect(e);
                }
            }
            Kind::Outcome => {
                self.outcomes.record(payload);
                self.wake_other_readers();
            }
            Kind::Response => match proto::get_response(payload) {
                Ok((proto::NO_REQUEST, status, body)) => {
                    // The hub refused a packet of ours (the library checks write
                    // permission before it sends; after a rail switch, a standby
                    // that never learnt the segment): the next `ack` fails with it.
                    if let Err(e) = answer(status, body.to_vec()) {
                        tracing::warn!(node = self.me.0, error = %e, "the hub refused a packet");
                        self.lock().refused.get_or_insert((status, body.to_vec()));
                    }
                }
                Ok((id, status, body)) => {
                    if self.lock().answered(id, status, body) {
                        self.wake_other_readers();
                    }
                }
                Err(_) => {}
            },
            Kind::RmaServe => {
                // Answered once the link is no longer being read (`RmaState::queue`).
                if let Some(done) = crate::rma::serve::serve(self, payload) {
                    self.rma.queue(done);
                }
            }
            Kind::Event => {
                if let Ok(proto::Event {
                    epoch,
                    node,
                    inc,
                    kind: k,
                    members,
                    domain,
                }) = proto::get_event(payload)
                {
                    let kind = match k {
                        event_kind::JOINED => EventKind::Joined,
                        event_kind::LEFT => EventKind::Left,
                        _ => EventKind::Failed,
                    };
                    if kind == EventKind::Joined && node != self.me {
                        // Ids are reused: a joiner's packets are not the ones of the
                        // node that had its id before.
                        self.rail_lock().new_origin(node.0);
                        self.outcomes.new_origin(node.0);
                    }
                    if let Some(d) = self.direct.get().filter(|_| node != self.me) {
                        d.forget(node);
                    }
                    let mut st = self.lock();
                    st.members = members;
                    if node != self.me {
                        // A join in this node's domain adds a neighbour; any other
                        // event of the node ends it (its id may come back elsewhere).
                        if kind == EventKind::Joined
                            && domain != proto::NO_DOMAIN
                            && domain == self.domain_id
                        {
                            st.neighbours.insert(node);
                        } else {
                            st.neighbours.remove(node);
                        }
                    }
                    self.view.fetch_add(1, Ordering::Release);
                    // Under the state lock, as `map_rx` sets a new mapping's fences.
                    if (self.domain.is_some() || self.direct.get().is_some()) && node != self.me {
                        let fence = kind != EventKind::Joined;
                        for m in self.rx.read().unwrap_or_else(|e| e.into_inner()).values() {
                            m.set_fenced(node, fence);
                        }
                    }
                    st.epoch = st.epoch.max(epoch);
                    if node == self.me && inc == self.inc {
                        // Our own join: events are reported from the join on.
                        return;
                    }
                    if st.events.len() >= validate::EVENT_RING {
                        // The same bound as one host's ring: the reader skips the oldest.
                        st.events.pop_front();
                    }
                    st.events.push_back(MembershipEvent {
                        epoch,
                        node,
                        incarnation: inc,
                        kind,
                    });
                    drop(st);
                    self.cv.notify_all();
                    // A node that left removed its files itself.
                    if kind == EventKind::Failed {
                        if let Some(d) = &self.domain {
                            d.sweep_node(node);
                        }
                    }
                }
            }
            _ => {}
        }
    }

    /// Sends the remote-access answers queued while the link was read.
    fn flush_rma_answers(&self) {
        for done in self.rma.take_replies() {
            if let Err(e) = self.send(Kind::RmaDone, &[&done]) {
                tracing::warn!(node = self.me.0, error = %e, "could not answer a remote access");
            }
        }
    }

    /// The sticky rule (`tx.rs`): before a store into (or a load from) node `n`'s
    /// memory on this host, an ack covering every earlier frame of this node through
    /// the hub that may reach `n`. A node that left meanwhile is no reason to fail
    /// (`AckIncomplete`): the access is for `n` alone.
    pub(crate) fn settle(&self, n: NodeId) -> Result<()> {
        let need = self
            .hazard_any
            .load(Ordering::SeqCst)
            .max(self.hazard_to[n.index()].load(Ordering::SeqCst));
        if need <= self.acked.load(Ordering::SeqCst) {
            return Ok(());
        }
        let sent = self.sent.load(Ordering::SeqCst);
        match self.request(proto::Op::Ack) {
            Ok(_) | Err(Error::AckIncomplete(_)) => {
                self.acked.fetch_max(sent, Ordering::SeqCst);
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    pub(crate) fn send(&self, kind: Kind, parts: &[&[u8]]) -> Result<()> {
        self.send_to(None, kind, parts)
    }

    /// [`send`](Self::send) of a frame that reaches node `to` alone (`None`: any
    /// node), for the sticky rule (`Shared::hazard_any`).
    pub(crate) fn send_to(&self, to: Option<NodeId>, kind: Kind, parts: &[&[u8]]) -> Result<()> {
        self.check()?;
        // Never ahead of what this node sent the same node on a direct link.
        if let Some(d) = self.direct.get() {
            d.drain(to, self.failure_timeout)?;
        }
        if kind != Kind::Request {
            // Counted before it is queued: an ack that reads the count after this
            // frame was queued may cover it, one that reads it before does not skip.
            let n = self.sent.fetch_add(1, Ordering::SeqCst) + 1;
            if self.domain.is_some() || self.direct.get().is_some() {
                match to {
                    Some(to) => self.hazard_to[to.index()].fetch_max(n, Ordering::SeqCst),
                    None => self.hazard_any.fetch_max(n, Ordering::SeqCst),
                };
            }
        }
        match &self.up {
            Up::Link(_) => loop {
                let Some(l) = self.link() else {
                    return self.check();
                };
                match self.send_on(&l, kind, parts) {
                    // Not queued on a link a switch replaced: goes on the new one.
                    Err(None) => continue,
                    Err(Some(e)) => return Err(e),
                    Ok(()) => {
                        self.settle_listen();
                        return Ok(());
                    }
                }
            },
            Up::Local(h) => {
                h.submit_local(self.me, self.inc, kind, parts)
                    .map_err(|d| Error::Timeout(d, "a destination to release (back-pressure)"))?;
                self.settle_listen();
                self.check()
            }
        }
    }

    /// Sends on `l`; `Err(None)` if `l` failed and a rail switch replaced it.
    fn send_on(
        &self,
        l: &Arc<Link>,
        kind: Kind,
        parts: &[&[u8]],
    ) -> std::result::Result<(), Option<Error>> {
        match l.send(kind, parts) {
            Ok(_) => {
                if l.window_full() {
                    // Read the acks here (see `Hub::submit_local`).
                    self.progress(Duration::ZERO);
                }
                Ok(())
            }
            Err(LinkError::Stalled(d)) => {
                self.check().map_err(Some)?;
                // Nothing was sent: the write fails, the link lives on.
                Err(Some(Error::Timeout(
                    d,
                    "replay memory (the hub holds back this sender)",
                )))
            }
            Err(e) => {
                // An isolation notice may wait unread behind the closed link.
                let _ = l.receive(&mut NodeHandler(self));
                self.check().map_err(Some)?;
                let why = format!("cannot send to the hub: {e}");
                if self.link_failed(l, why.clone()) {
                    return Err(None);
                }
                Err(Some(self.check().err().unwrap_or(Error::HubLost(why))))
            }
        }
    }
}
