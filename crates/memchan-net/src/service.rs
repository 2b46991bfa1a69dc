//! A joined node's link progress: the state its handles share (`Shared`), the
//! service thread of a remote node (reads the link, ticks, heartbeats, watches the
//! hub's liveness), application threads that read the link themselves while they wait
//! (`Reading`, `Shared::progress`), the dispatch of what the hub sends (deliveries,
//! responses, events, isolation), and sending up the link (`Shared::send`). A node in
//! the hub's process (virtual hub) has no service thread: the hub hands it its frames
//! through a `LocalSlot`.

use crate::clock::{self, NodeClock};
use crate::recent::Recent;
mod deposit;

pub(crate) use deposit::Deposits;

use crate::hub::{Hub, LocalPort};
use crate::link::{Handler, Link, LinkError, Readers};
use crate::proto::reply;
use crate::proto::{self, event_kind, Join};
use crate::rx::RxMem;
use crate::wire::{Get, Kind};
use memchan_core::{
    validate, Error, EventKind, MembershipEvent, NodeId, NodeSet, PageSize, Result,
};
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock};
use std::time::{Duration, Instant};

pub(crate) const ALIVE: u8 = 0;
const ISOLATED: u8 = 1;
const LOST: u8 = 2;

/// Abandoned requests remembered (see `State::abandoned`).
pub(crate) const ABANDONED: usize = 64;

impl State {
    /// What a node knows as it joins: the members and epoch of its welcome.
    fn new(members: NodeSet, epoch: u64) -> State {
        State {
            members,
            epoch,
            events: VecDeque::new(),
            responses: HashMap::new(),
            abandoned: Recent::new(ABANDONED),
            refused: None,
            lost: String::new(),
            isolated_epoch: 0,
        }
    }

    /// The waiter for request `id` stopped waiting: its answer, if it comes, is not
    /// wanted.
    pub(crate) fn abandon(&mut self, id: u32) {
        if self.responses.remove(&id).is_none() {
            self.abandoned.push(id);
        }
    }

    /// The hub's answer to request `id`: kept for its waiter (true), or dropped if
    /// the waiter stopped waiting.
    pub(crate) fn answered(&mut self, id: u32, status: u8, body: &[u8]) -> bool {
        if self.abandoned.take(|&a| a == id).is_some() {
            return false;
        }
        self.responses.insert(id, (status, body.to_vec()));
        true
    }
}

/// What the hub last told this node, and the answers its requests wait for.
pub(crate) struct State {
    pub(crate) members: NodeSet,
    pub(crate) epoch: u64,
    pub(crate) events: VecDeque<MembershipEvent>,
    pub(crate) responses: HashMap<u32, (u8, Vec<u8>)>,
    /// Requests whose waiter stopped waiting (timed out, or asked again under a new
    /// id after a rail switch), the last [`ABANDONED`]: an answer that comes for one
    /// later is dropped instead of kept for ever in `responses`.
    pub(crate) abandoned: Recent<u32>,
    /// The first packet of ours the hub refused since the last `ack`, which fails
    /// with it (a write fails loudly, never lost silently).
    pub(crate) refused: Option<(u8, Vec<u8>)>,
    lost: String,
    isolated_epoch: u64,
}

/// The way up to the hub: a link (replaced once if the cluster switches rails), or
/// the hub in this process (virtual hub).
pub(crate) enum Up {
    Link(RwLock<Arc<Link>>),
    Local(Arc<Hub>),
}

/// A joined node, shared by its `Node` and every segment, mapping and lock of it.
pub(crate) struct Shared {
    pub(crate) cluster: String,
    pub(crate) me: NodeId,
    pub(crate) inc: u64,
    pub(crate) page: PageSize,
    pub(crate) uid: u32,
    pub(crate) gid: u32,
    pub(crate) up: Up,
    pub(crate) health: AtomicU8,
    st: Mutex<State>,
    cv: Condvar,
    pub(crate) rx: RwLock<HashMap<u32, Arc<RxMem>>>,
    pub(crate) next_req: AtomicU32,
    /// Frames other than requests this node sent (writes, deposits, remote
    /// operations), and how many of them the last answered ack covered: an ack with
    /// nothing sent since is answered without the hub (a barrier is then one round
    /// trip, not two).
    pub(crate) sent: AtomicU64,
    pub(crate) acked: AtomicU64,
    pub(crate) stop: AtomicBool,
    /// Application threads inside a wait, reading the link (or the hosted hub's links)
    /// themselves.
    app_reading: Readers,
    /// Wakes such a thread when another thread applied a notify write for it.
    wake: rustix::fd::OwnedFd,
    /// Heartbeat period.
    heartbeat: Duration,
    /// `wake` was written and not yet drained (one syscall per wake-up, not per write).
    wake_pending: AtomicBool,
    /// The global clock's estimate, fed by the hub's `Time` frames.
    pub(crate) clock: NodeClock,
    /// Conditional writes' outcomes, both ways (`service/deposit.rs`).
    pub(crate) deposits: Deposits,
    /// Remote reads and atomics: gets under way, answers to send (`rma.rs`).
    pub(crate) rma: crate::rma::RmaState,
    /// What this node applied of a dual-rail hub's numbered order (`rail.rs`).
    pub(crate) rail: Mutex<crate::rail::Applied>,
    /// The standby hub to move to when the active one is lost (`rail_switch.rs`), and
    /// whether this node moved already (one switch: a lost standby is `HubLost`).
    pub(crate) standby: Option<crate::rail_switch::Standby>,
    pub(crate) switched: Mutex<bool>,
    /// Per barrier scope, this node's arrivals since it joined (`Op::Barrier`).
    pub(crate) barrier_numbers: Mutex<std::collections::HashMap<u16, u64>>,
}

thread_local! {
    /// This thread is inside a wait: what it applies it sees itself, no wake-up needed.
    static IN_WAIT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

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
            .map(|sh| sh.deposits.take_pending())
            .unwrap_or_default()
    }
    fn rma(&self, serve: &[u8]) -> Option<Vec<u8>> {
        crate::rma::serve(self.node.get()?, serve)
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

impl Shared {
    pub(crate) fn new(
        name: &str,
        join: &Join,
        w: &proto::Welcome,
        up: Up,
        standby: Option<crate::rail_switch::Standby>,
    ) -> Result<Shared> {
        let page = PageSize::from_bytes(w.page_size as usize).ok_or_else(|| Error::Invalid {
            what: "page size from the hub",
            why: format!("{} bytes", w.page_size),
        })?;
        Ok(Shared {
            cluster: name.to_string(),
            me: w.node,
            inc: w.incarnation,
            page,
            uid: join.uid,
            gid: join.gid,
            up,
            health: AtomicU8::new(ALIVE),
            st: Mutex::new(State::new(w.members, w.epoch)),
            cv: Condvar::new(),
            rx: RwLock::new(HashMap::new()),
            next_req: AtomicU32::new(1),
            sent: AtomicU64::new(0),
            acked: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            app_reading: Readers::default(),
            wake: rustix::event::eventfd(
                0,
                rustix::event::EventfdFlags::NONBLOCK | rustix::event::EventfdFlags::CLOEXEC,
            )
            .map_err(|e| Error::os("create the wake-up eventfd", e))?,
            wake_pending: AtomicBool::new(false),
            deposits: Deposits::default(),
            heartbeat: Duration::from_millis(u64::from(w.heartbeat_ms.max(1))),
            clock: NodeClock::new(),
            rma: crate::rma::RmaState::default(),
            rail: Mutex::new(crate::rail::Applied::default()),
            standby,
            switched: Mutex::new(false),
            barrier_numbers: Mutex::default(),
        })
    }

    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.st.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn wait<'a>(&self, st: MutexGuard<'a, State>, t: Duration) -> MutexGuard<'a, State> {
        self.cv
            .wait_timeout(st, t.min(Duration::from_millis(100)))
            .unwrap_or_else(|e| e.into_inner())
            .0
    }

    /// `Ok` while the node may send.
    pub(crate) fn check(&self) -> Result<()> {
        match self.health.load(Ordering::Acquire) {
            ALIVE => Ok(()),
            ISOLATED => Err(Error::Isolated {
                node: self.me,
                epoch: self.lock().isolated_epoch,
            }),
            _ => Err(Error::HubLost(self.lock().lost.clone())),
        }
    }

    fn set_isolated(&self, epoch: u64, why: &str) {
        {
            let mut st = self.lock();
            st.isolated_epoch = epoch;
            st.lost = format!("isolated at epoch {epoch}: {why}");
        }
        self.health.store(ISOLATED, Ordering::Release);
        self.cv.notify_all();
        self.wake_readers();
    }

    /// The link to the hub (`None`: the hub is in this process).
    pub(crate) fn link(&self) -> Option<Arc<Link>> {
        match &self.up {
            Up::Link(l) => Some(l.read().unwrap_or_else(|e| e.into_inner()).clone()),
            Up::Local(_) => None,
        }
    }

    pub(crate) fn set_lost(&self, why: String) {
        if let Some(l) = self.link() {
            l.shutdown();
        }
        {
            // The first cause is the one reported: the shutdown above makes every
            // other thread's read of the link fail too ("the peer closed the link"),
            // which used to overwrite the reason (a standby silent past the failure
            // timeout read as a standby that closed the link).
            let mut st = self.lock();
            if self
                .health
                .compare_exchange(ALIVE, LOST, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                st.lost = why;
            }
        }
        self.cv.notify_all();
        self.wake_readers();
    }

    /// The epoch and members a standby hub that took over says (dual rail).
    pub(crate) fn adopt_members(&self, epoch: u64, members: NodeSet) {
        let mut st = self.lock();
        st.members = members;
        st.epoch = st.epoch.max(epoch);
        drop(st);
        self.cv.notify_all();
    }

    /// Wakes threads waiting in `RxMapping::wait`: they find the node no longer alive.
    fn wake_readers(&self) {
        for m in self.rx.read().unwrap_or_else(|e| e.into_inner()).values() {
            m.notify.fetch_add(1, Ordering::SeqCst);
        }
        self.wake_pending.store(true, Ordering::SeqCst);
        let _ = rustix::io::write(&self.wake, &1u64.to_ne_bytes());
    }

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
            if link.serve_wait(Duration::from_millis(10), away) {
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
                self.rma.flush(&self);
            }
            if last_tick.elapsed() >= Duration::from_millis(10) {
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
                let readable = if slice.is_zero() {
                    true
                } else {
                    l.wait(Some(self.wake.as_fd()), slice)
                };
                if readable {
                    if let Err(e) = l.receive(&mut NodeHandler(self)) {
                        if !self.stop.load(Ordering::Acquire) {
                            self.link_failed(&l, format!("hub link failed: {e}"));
                        }
                    }
                    self.rma.flush(self);
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
        if !slice.is_zero() && self.wake_pending.load(Ordering::SeqCst) {
            let mut buf = [0u8; 8];
            if rustix::io::read(&self.wake, &mut buf).is_ok() {
                self.wake_pending.store(false, Ordering::SeqCst);
            }
        }
    }

    /// The service thread listens for frames on the current link unless the
    /// application reads it (`Link::listen`); after a rail switch it sets the new
    /// link's interest itself.
    fn service_listens(&self) {
        if let Up::Link(_) = &self.up {
            if let Some(l) = self.link() {
                l.listen(|| self.app_reading.away());
            }
        }
    }

    /// Makes the service thread (or the hosted hub's link readers) listen again if a
    /// spinning wait left them deaf (see `Reading::spinning`).
    fn settle_listen(&self) {
        self.app_reading.settle(|| self.service_listens());
        if let Up::Local(h) = &self.up {
            h.settle_listen();
        }
    }

    /// Applies a delivered packet to this node's rx mapping of the segment, if any.
    fn deliver(&self, d: &proto::Deliver<'_>) {
        let map = self.rx.read().unwrap_or_else(|e| e.into_inner());
        if let Some(m) = map.get(&d.seg) {
            if m.gen != d.gen {
                return;
            }
            let woke = if d.flags & proto::FLAG_RECORD != 0 {
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

    pub(crate) fn rail_lock(&self) -> MutexGuard<'_, crate::rail::Applied> {
        self.rail.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A Deliver or DepositDeliver (`kind` `RailDeliver` or `RailDeposit`) numbered
    /// for dual rail, read from `link`: applied unless this node applied it already
    /// (ordered again after a switch of hubs), and recorded. A conditional write
    /// applied before the switch is answered again from its kept outcome.
    fn rail_deliver(&self, link: &Link, kind: Kind, payload: &[u8]) {
        let Ok((oseq, gseq, deliver)) = crate::rail::get_rail_deliver(payload) else {
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
        let e = crate::rail::Entry {
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

    /// Wakes the application threads reading the link (in a wait or a request) other
    /// than this one: what this thread just handled may be what they wait for. SeqCst
    /// pairs with a reader's announce-then-check (Dekker): either it sees the change
    /// or we see it reading and wake it. A lone waiter handling its own frames costs
    /// nothing here.
    fn wake_other_readers(&self) {
        let me = u32::from(IN_WAIT.get());
        if self.app_reading.count() > me && !self.wake_pending.swap(true, Ordering::SeqCst) {
            let _ = rustix::io::write(&self.wake, &1u64.to_ne_bytes());
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
            Kind::Outcome => {
                self.deposits.record(payload);
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
                if let Some(done) = crate::rma::serve(self, payload) {
                    self.rma.queue(done);
                }
            }
            Kind::Event => {
                if let Ok((epoch, node, inc, k, members)) = proto::get_event(payload) {
                    let kind = match k {
                        event_kind::JOINED => EventKind::Joined,
                        event_kind::LEFT => EventKind::Left,
                        _ => EventKind::Failed,
                    };
                    if kind == EventKind::Joined && node != self.me {
                        // Ids are reused: a joiner's packets are not the ones of the
                        // node that had its id before.
                        self.rail_lock().new_origin(node.0);
                        self.deposits.new_origin(node.0);
                    }
                    let mut st = self.lock();
                    st.members = members;
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
                }
            }
            _ => {}
        }
    }

    pub(crate) fn send(&self, kind: Kind, parts: &[&[u8]]) -> Result<()> {
        self.check()?;
        if kind != Kind::Request {
            // Counted before it is queued: an ack that reads the count after this
            // frame was queued may cover it, one that reads it before does not skip.
            self.sent.fetch_add(1, Ordering::SeqCst);
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

/// The hub's answer to a request: its body, or the hub's refusal as an [`Error`].
pub(crate) fn answer(status: u8, body: Vec<u8>) -> Result<Vec<u8>> {
    reply::answer(status, body)
        .map_err(garbled)?
        .map_err(reply::Refusal::into_error)
}

/// An answer of the hub's that does not decode (not this build's protocol).
pub(crate) fn garbled(e: impl std::fmt::Display) -> Error {
    Error::HubLost(format!("the hub sent a malformed answer: {e}"))
}

/// Marks an application thread as reading for the duration of a wait.
pub(crate) struct Reading<'a> {
    sh: &'a Shared,
    spinning: bool,
}

impl<'a> Reading<'a> {
    pub(crate) fn new(sh: &'a Shared) -> Reading<'a> {
        Self::enter(sh, false)
    }

    /// A busy-polling wait's: when the last reader leaves, the service thread (or the
    /// hosted hub's link readers) is not made to listen at once but after this node's
    /// next send (after the frame is out, while the peer works on it), at the next
    /// wait's start (which would make it deaf again), or at the service thread's next
    /// turn (within 10 ms; the hub's beat tick for a hosted hub). That takes an
    /// `epoll_ctl` off the path from a frame's arrival to the reply a spinning thread
    /// sends; a frame that arrives after such a wait, with no send or wait after it,
    /// is read up to that turn late.
    pub(crate) fn spinning(sh: &'a Shared) -> Reading<'a> {
        Self::enter(sh, true)
    }

    fn enter(sh: &'a Shared, spinning: bool) -> Reading<'a> {
        IN_WAIT.set(true);
        // The first reader makes the service thread deaf to frames: they wake this
        // thread alone. (Already deaf if a spinning wait left it so.)
        sh.app_reading.enter(|| sh.service_listens());
        if let Up::Local(h) = &sh.up {
            h.begin_progress();
        }
        Reading { sh, spinning }
    }
}

impl Drop for Reading<'_> {
    fn drop(&mut self) {
        let sh = self.sh;
        if let Up::Local(h) = &sh.up {
            h.end_progress(self.spinning);
        }
        // The last reader gone, the service thread reads again: at once, or owed.
        sh.app_reading.leave(self.spinning, || sh.service_listens());
        IN_WAIT.set(false);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_to_an_abandoned_request_is_not_kept() {
        let mut st = State::new(NodeSet::EMPTY, 0);
        // Abandoned before its answer came (a timeout, a request asked again).
        st.abandon(7);
        assert!(!st.answered(7, 0, b"late"));
        assert!(st.responses.is_empty() && st.abandoned.is_empty());
        // Abandoned after it came: the kept answer goes, nothing is remembered.
        assert!(st.answered(8, 0, b"on time"));
        st.abandon(8);
        assert!(st.responses.is_empty() && st.abandoned.is_empty());
        // A waited-for answer is kept; the memory of abandoned ids is bounded.
        assert!(st.answered(9, 0, b"x"));
        assert_eq!(st.responses.get(&9), Some(&(0, b"x".to_vec())));
        for id in 100..100 + 2 * ABANDONED as u32 {
            st.abandon(id);
        }
        assert_eq!(st.abandoned.len(), ABANDONED);
    }
}
