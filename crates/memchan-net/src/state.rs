//! A joined node's state, which its `Node` and every segment, mapping, lock and
//! remote access of it share ([`Shared`]): what the hub last told it ([`State`]), the
//! way up to the hub ([`Up`]), its health, its receive memory, its bookkeeping of
//! conditional writes, remote accesses and the dual rail, and the application
//! threads that read the link themselves while they wait ([`Reading`]).
//!
//! The modules above it act on it: `service.rs` (the service thread and the dispatch
//! of what the hub sends), `rail_switch.rs`, `rma.rs`, `rx.rs`, `tx.rs`, `node.rs`.
//! It imports none of them: what it holds by value lives in leaves (`rx.rs`,
//! `rma/table.rs`, `outcomes.rs`, `clock.rs`).

use crate::clock::NodeClock;
use crate::domain::Domain;
use crate::outcomes::Outcomes;
use crate::recent::Recent;
use crate::rma::table::RmaState;
use crate::rx::RxMem;
use memchan_core::{Error, MembershipEvent, NodeId, NodeSet, PageSize, Result};
use memchan_hub::Hub;
use memchan_link::link::{Link, LinkConfig, Readers};
use memchan_link::proto::reply;
use memchan_link::proto::{self, Join};
use memchan_link::wire::Key;
use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, Ordering};
use std::sync::{Arc, Condvar, Mutex, MutexGuard, RwLock};
use std::time::Duration;

pub(crate) const ALIVE: u8 = 0;
const ISOLATED: u8 = 1;
const LOST: u8 = 2;

/// Abandoned requests remembered (see `State::abandoned`).
pub(crate) const ABANDONED: usize = 64;

impl State {
    /// What a node knows as it joins: the members and epoch of its welcome.
    fn new(members: NodeSet, neighbours: NodeSet, epoch: u64) -> State {
        State {
            members,
            neighbours,
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
    /// The members in this node's host domain, as the hub tells them (the Welcome,
    /// then each join's event): the only nodes whose receive memory a sender looks
    /// for in `/dev/shm` (`domain::Near`).
    pub(crate) neighbours: NodeSet,
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
    pub(crate) cv: Condvar,
    pub(crate) rx: RwLock<HashMap<u32, Arc<RxMem>>>,
    pub(crate) next_req: AtomicU32,
    /// Frames other than requests this node sent (writes, deposits, remote
    /// operations), and how many of them the last answered ack covered: an ack with
    /// nothing sent since is answered without the hub (a barrier is then one round
    /// trip, not two).
    pub(crate) sent: AtomicU64,
    pub(crate) acked: AtomicU64,
    /// This node's host domain (`domain.rs`; `None`: every write through the hub).
    pub(crate) domain: Option<Domain>,
    /// Its digest as this node joined with it (`proto::NO_DOMAIN` without one).
    pub(crate) domain_id: proto::DomainId,
    /// Counts changes of the members this node knows: a sender's view of a
    /// destination on its host is checked again when it moved.
    pub(crate) view: AtomicU64,
    /// The sticky rule (`tx.rs`): the value of `sent` at this node's last frame
    /// through the hub that may reach any node (`hazard_any`), or node `n` point to
    /// point (`hazard_to[n]`). A store into a node on this host waits for an ack that
    /// covers both, so it never overtakes an earlier write still on its way there.
    pub(crate) hazard_any: AtomicU64,
    pub(crate) hazard_to: Box<[AtomicU64]>,
    pub(crate) stop: AtomicBool,
    /// Application threads inside a wait, reading the link (or the hosted hub's links)
    /// themselves.
    pub(crate) app_reading: Readers,
    /// Wakes such a thread when another thread applied a notify write for it.
    pub(crate) wake: rustix::fd::OwnedFd,
    /// Heartbeat period.
    pub(crate) heartbeat: Duration,
    /// `wake` was written and not yet drained (one syscall per wake-up, not per write).
    pub(crate) wake_pending: AtomicBool,
    /// The global clock's estimate, fed by the hub's `Time` frames.
    pub(crate) clock: NodeClock,
    /// Conditional writes' outcomes, both ways (`outcomes.rs`).
    pub(crate) outcomes: Outcomes,
    /// Remote reads and atomics: gets under way, answers to send (`rma.rs`).
    pub(crate) rma: RmaState,
    /// What this node applied of a dual-rail hub's numbered order (`memchan_link::rail`).
    pub(crate) rail: Mutex<memchan_link::rail::Applied>,
    /// The standby hub to move to when the active one is lost (`rail_switch.rs`), and
    /// whether this node moved already (one switch: a lost standby is `HubLost`).
    pub(crate) standby: Option<Standby>,
    pub(crate) switched: Mutex<bool>,
    /// Per barrier scope, this node's arrivals since it joined (`Op::Barrier`).
    pub(crate) barrier_numbers: Mutex<std::collections::HashMap<u16, u64>>,
    /// Direct links to and from nodes of other hosts (`direct.rs`), once started.
    pub(crate) direct: std::sync::OnceLock<Arc<crate::direct::Directs>>,
    /// Silence after which a peer counts as failed.
    pub(crate) failure_timeout: Duration,
}

thread_local! {
    /// This thread is inside a wait: what it applies it sees itself, no wake-up needed.
    static IN_WAIT: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

/// Where a node goes when its active hub is lost.
#[derive(Debug, Clone)]
pub(crate) struct Standby {
    /// The standby hub's address.
    pub(crate) addr: String,
    pub(crate) key: Key,
    /// The node's join (its role is changed to resume).
    pub(crate) join: Join,
    pub(crate) link: LinkConfig,
}

impl Shared {
    pub(crate) fn new(
        name: &str,
        join: &Join,
        w: &proto::Welcome,
        up: Up,
        standby: Option<Standby>,
        host_domain: Option<&str>,
        failure_timeout: Duration,
    ) -> Result<Shared> {
        let page = PageSize::from_bytes(w.page_size as usize).ok_or_else(|| Error::Invalid {
            what: "page size from the hub",
            why: format!("{} bytes", w.page_size),
        })?;
        let mut domain = host_domain.map(|label| Domain::new(name, w.instance, label));
        let wake = match domain.as_ref().map(|d| d.make_wake(w.node)) {
            Some(Ok(fifo)) => {
                domain.as_ref().expect("made above").sweep_others();
                fifo
            }
            other => {
                if let Some(Err(e)) = other {
                    // No /dev/shm to share (a container without one): the node
                    // works, its writes all go through the hub.
                    tracing::warn!(error = %e, "no host domain: every write goes through the hub");
                    domain = None;
                }
                rustix::event::eventfd(
                    0,
                    rustix::event::EventfdFlags::NONBLOCK | rustix::event::EventfdFlags::CLOEXEC,
                )
                .map_err(|e| Error::os("create the wake-up eventfd", e))?
            }
        };
        Ok(Shared {
            cluster: name.to_string(),
            me: w.node,
            inc: w.incarnation,
            page,
            uid: join.uid,
            gid: join.gid,
            up,
            health: AtomicU8::new(ALIVE),
            st: Mutex::new(State::new(w.members, w.neighbours, w.epoch)),
            cv: Condvar::new(),
            rx: RwLock::new(HashMap::new()),
            next_req: AtomicU32::new(1),
            sent: AtomicU64::new(0),
            acked: AtomicU64::new(0),
            domain_id: if domain.is_some() {
                join.domain
            } else {
                proto::NO_DOMAIN
            },
            domain,
            view: AtomicU64::new(0),
            hazard_any: AtomicU64::new(0),
            hazard_to: (0..memchan_core::MAX_NODES)
                .map(|_| AtomicU64::new(0))
                .collect(),
            stop: AtomicBool::new(false),
            app_reading: Readers::default(),
            wake,
            wake_pending: AtomicBool::new(false),
            outcomes: Outcomes::default(),
            heartbeat: Duration::from_millis(u64::from(w.heartbeat_ms.max(1))),
            clock: NodeClock::new(),
            rma: RmaState::default(),
            rail: Mutex::new(memchan_link::rail::Applied::default()),
            standby,
            switched: Mutex::new(false),
            barrier_numbers: Mutex::default(),
            direct: std::sync::OnceLock::new(),
            failure_timeout,
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

    pub(crate) fn set_isolated(&self, epoch: u64, why: &str) {
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
        self.view.fetch_add(1, Ordering::Release);
        st.epoch = st.epoch.max(epoch);
        drop(st);
        self.cv.notify_all();
    }

    /// Wakes threads waiting in `RxMapping::wait`: they find the node no longer alive.
    fn wake_readers(&self) {
        for m in self.rx.read().unwrap_or_else(|e| e.into_inner()).values() {
            m.notify().0.fetch_add(1, Ordering::SeqCst);
        }
        self.wake_pending.store(true, Ordering::SeqCst);
        let _ = rustix::io::write(&self.wake, &1u64.to_ne_bytes());
    }

    pub(crate) fn rail_lock(&self) -> MutexGuard<'_, memchan_link::rail::Applied> {
        self.rail.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Wakes the application threads reading the link (in a wait or a request) other
    /// than this one: what this thread just handled may be what they wait for. SeqCst
    /// pairs with a reader's announce-then-check (Dekker): either it sees the change
    /// or we see it reading and wake it. A lone waiter handling its own frames costs
    /// nothing here.
    pub(crate) fn wake_other_readers(&self) {
        let me = u32::from(IN_WAIT.get());
        if self.app_reading.count() > me && !self.wake_pending.swap(true, Ordering::SeqCst) {
            let _ = rustix::io::write(&self.wake, &1u64.to_ne_bytes());
        }
    }

    /// The service thread listens for frames on the current link unless the
    /// application reads it (`Link::listen`); after a rail switch it sets the new
    /// link's interest itself.
    pub(crate) fn service_listens(&self) {
        if let Up::Link(_) = &self.up {
            if let Some(l) = self.link() {
                l.listen(|| self.app_reading.away());
            }
            if let Some(d) = self.direct.get() {
                d.listen(|| self.app_reading.away());
            }
        }
    }

    /// Makes the service thread (or the hosted hub's link readers) listen again if a
    /// spinning wait left them deaf (see `Reading::spinning`).
    pub(crate) fn settle_listen(&self) {
        self.app_reading.settle(|| self.service_listens());
        if let Up::Local(h) = &self.up {
            h.settle_listen();
        }
    }
}

impl Drop for Shared {
    fn drop(&mut self) {
        if let Some(d) = &self.domain {
            d.remove_wake(self.me);
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
    /// turn (within 10 ms, or a heartbeat for the first spinning wait after a second
    /// of an idle link; the hub's beat tick for a hosted hub). That takes an
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
        let mut st = State::new(NodeSet::EMPTY, NodeSet::EMPTY, 0);
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
