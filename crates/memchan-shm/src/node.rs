//! A joined node's control plane: join, leave, segments, groups, membership events,
//! barrier, and the isolation of a failed node. Who the node is lives in `local.rs`;
//! the point of global order, which the control plane enters to change rx sets and to
//! release a dead node's locks, in `order.rs` (this module calls it, never the data
//! path in `tx.rs`).
//!
//! Control-plane changes hold the control block's `flock` (and an in-process lock,
//! since `flock` does not exclude threads sharing one open file). The data path never
//! takes either. Every wait here on another party is bounded: the `flock`, a barrier's
//! missing members and the order point give `Error::Stalled` after
//! [`stall_bound`](crate::local::stall_bound) (25 failure timeouts, at least 1 s)
//! without progress.

use crate::control::{
    bar, duo, load_name, load_set, node_state, seg_state, store_name, store_set, Control, NodeSlot,
    BARRIER_SCOPES, MAGIC, MAX_SEGMENTS, VERSION,
};
use crate::futex::SharedFutex;
use crate::local::{stall_bound, Local, Params, SegRef, STALL_CAP};
use crate::order::{Order, Pidfds, Targets, Views};
use crate::perm::SegPerm;
use crate::rx::RxObject;
use crate::shm::{Open, ShmMap};
use memchan_core::event::SlotMiss;
use memchan_core::notify::{Futex, Notify};
use memchan_core::sync::Ordering;
use memchan_core::{
    validate, Config, Error, GroupId, NodeId, NodeSet, PageSize, Result, MAX_NODES,
};
use rustix::fd::AsFd;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64};
use std::sync::{Arc, Condvar, Mutex};
use std::time::{Duration, Instant};

pub use memchan_core::{EventKind, MembershipEvent};

/// What [`Error::Stalled`] names when the control file's `flock` is not released.
const PLANE: &str = "the control block's lock (flock)";

/// A joined node, shared by its segments and mappings.
pub(crate) struct Inner {
    /// Who this node is, and its mapping of the control block.
    pub local: Local,
    /// The in-process half of the control-plane lock (see [`PlaneGuard`]).
    plane: PlaneMutex,
    /// Other nodes' receive memory mapped here, for the order point and tx mappings.
    views: Views,
    /// What this node's service thread found behind each other member's pid.
    pub pidfds: Pidfds,
    /// Set once the node has left: tells the service threads to stop.
    pub stop: AtomicBool,
    /// The arrival word of the last barrier this node arrived at, per scope (see
    /// [`bar`]; rounds 0 after a join or a barrier without rounds, else 1): kept here
    /// rather than read back from its barrier word, because a load of the line a
    /// peer spins on, just before the store to it, costs a second cache-line
    /// transfer on the barrier's critical path. Its tag goes out with the next
    /// arrival before that barrier's plan is looked up (`Inner::barrier`).
    bar_last: [AtomicU64; BARRIER_SCOPES],
    /// The peer of the last barrier per scope if it had two nodes (id + 1; 0 = it
    /// had not): that barrier's early arrival goes to their [`DuoLine`] too.
    duo_last: [AtomicU32; BARRIER_SCOPES],
}

/// The in-process half of the control-plane lock: `flock` does not exclude threads
/// that share one open file. A flag and a condvar rather than a `Mutex<()>`, so that
/// waiting for it is bounded like waiting for the `flock`.
struct PlaneMutex {
    held: Mutex<bool>,
    freed: Condvar,
}

impl PlaneMutex {
    fn new() -> PlaneMutex {
        PlaneMutex {
            held: Mutex::new(false),
            freed: Condvar::new(),
        }
    }

    /// Takes it by `deadline`; false if another thread held it all along.
    fn lock(&self, deadline: Instant) -> bool {
        let mut held = self.held.lock().unwrap_or_else(|p| p.into_inner());
        while *held {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return false;
            }
            held = self
                .freed
                .wait_timeout(held, left)
                .unwrap_or_else(|p| p.into_inner())
                .0;
        }
        *held = true;
        true
    }

    fn unlock(&self) {
        *self.held.lock().unwrap_or_else(|p| p.into_inner()) = false;
        self.freed.notify_one();
    }
}

/// Holds the control plane: the in-process lock plus the control file's flock.
pub(crate) struct PlaneGuard<'a> {
    inner: &'a Inner,
}

impl Drop for PlaneGuard<'_> {
    fn drop(&mut self) {
        let local = &self.inner.local;
        unlock_plane(local.ctl_map().fd(), Some(plane_notify(local.ctl())));
        self.inner.plane.unlock();
    }
}

/// The header's notify pair that every release of the `flock` posts.
fn plane_notify(c: &Control) -> Notify<'_> {
    Notify::new(&c.header.plane_seq, &c.header.plane_waiters)
}

/// Takes the control file's `flock` by `deadline`; `Ok(false)` if it was not released
/// in time.
///
/// `flock` has no timeout, so this tries without blocking and sleeps on the header's
/// plane notify pair (`notify`), which every release posts ([`unlock_plane`]): a
/// waiter wakes when the lock is released, not on a polling period. Each sleep is cut
/// to `slice` so that a holder that never posts (another member holding the `flock`
/// of a read-only descriptor, a process that died holding it) costs latency and, after
/// `deadline`, a typed error, never a hang. `notify` is `None` only while the block's
/// header may not be this version's (a joiner before it checked), whose words must not
/// be written; the wait then sleeps one slice at a time.
fn lock_plane(
    fd: impl AsFd,
    notify: Option<Notify<'_>>,
    slice: Duration,
    deadline: Instant,
) -> Result<bool> {
    loop {
        let seen = notify.map(|n| n.current());
        match rustix::fs::flock(&fd, rustix::fs::FlockOperation::NonBlockingLockExclusive) {
            Ok(()) => return Ok(true),
            Err(rustix::io::Errno::WOULDBLOCK | rustix::io::Errno::INTR) => {}
            // Only a bad descriptor or a kernel out of lock records gets here.
            Err(e) => return Err(Error::os("flock control block", e)),
        }
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(false);
        }
        let nap = left.min(slice);
        match (notify, seen) {
            (Some(n), Some(seen)) => {
                n.wait(seen, Some(nap), &SharedFutex);
            }
            _ => std::thread::sleep(nap),
        }
    }
}

/// Releases the control file's `flock` and wakes its waiters.
fn unlock_plane(fd: impl AsFd, notify: Option<Notify<'_>>) {
    let _ = rustix::fs::flock(&fd, rustix::fs::FlockOperation::Unlock);
    if let Some(n) = notify {
        n.post(&SharedFutex);
    }
}

/// CLOCK_MONOTONIC in ns: shared by every process on the host, so heartbeats compare.
pub(crate) fn now_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// A pid word read from the control block as a process id: `None` for 0 and for
/// values no pid can take (a negative `pid_t` would name a process group).
pub(crate) fn pid_of(raw: u32) -> Option<rustix::process::Pid> {
    i32::try_from(raw)
        .ok()
        .filter(|&p| p > 0)
        .and_then(rustix::process::Pid::from_raw)
}

/// The errno of an `Error::Os`.
fn errno(e: &Error) -> Option<rustix::io::Errno> {
    match e {
        Error::Os { source, .. } => source
            .raw_os_error()
            .map(rustix::io::Errno::from_raw_os_error),
        _ => None,
    }
}

/// The typed refusal of an existing control block this node must not trust.
fn refused(cluster: &str, why: String) -> Error {
    Error::Invalid {
        what: "control block",
        why: format!("/dev/shm/memchan.{cluster}.ctl {why}; refusing to join `{cluster}`"),
    }
}

/// Whether an existing control block may be trusted: a regular file, owned by this
/// process's effective uid or by root (a root process trusts only root's), with no
/// permission bits beyond `allowed` (the joiner's `Config::shm_mode`). Whoever can
/// write the block controls the cluster, so a block pre-created by another user
/// (squatting) or opened wider than this node agreed to is refused.
fn check_control(fd: &rustix::fd::OwnedFd, cluster: &str, allowed: u32) -> Result<()> {
    let st = rustix::fs::fstat(fd).map_err(|e| Error::os("fstat control block", e))?;
    if rustix::fs::FileType::from_raw_mode(st.st_mode) != rustix::fs::FileType::RegularFile {
        return Err(refused(cluster, "is not a regular file".into()));
    }
    let me = rustix::process::geteuid().as_raw();
    if st.st_uid != me && st.st_uid != 0 {
        return Err(refused(
            cluster,
            format!(
                "is owned by uid {}, not by this uid ({me}) or root (squatted?)",
                st.st_uid
            ),
        ));
    }
    let extra = st.st_mode & 0o7777 & !allowed;
    if extra != 0 {
        return Err(refused(
            cluster,
            format!(
                "has mode {:o}, wider than this node's shm_mode {allowed:o}",
                st.st_mode & 0o7777
            ),
        ));
    }
    Ok(())
}

/// The control block in `ctl`, if the mapping holds a whole one.
fn control_of(ctl: &ShmMap) -> Option<&Control> {
    // SAFETY: the mapping is at least size_of::<Control>() bytes (checked), page-aligned,
    // lives as long as the borrow of `ctl`, and `Control` is only atomics.
    (ctl.len() >= std::mem::size_of::<Control>())
        .then(|| unsafe { &*(ctl.ptr() as *const Control) })
}

/// The plane notify pair of `ctl`, if it maps a control block of this version (a
/// joiner must not write words of a block it has not checked).
fn plane_notify_checked(ctl: &ShmMap) -> Option<Notify<'_>> {
    control_of(ctl)
        .filter(|c| {
            c.header.magic.load(Ordering::Acquire) == MAGIC
                && c.header.version.load(Ordering::Acquire) == VERSION
        })
        .map(plane_notify)
}

impl Inner {
    /// Joins (creating if needed) the cluster `name`.
    ///
    /// Bounded: the control file's `flock` is waited for at most
    /// [`stall_bound`] of the joiner's own failure timeout (`Error::Stalled`), and a
    /// block being created or removed meanwhile is retried at most 200 times.
    pub(crate) fn join(name: &str, cfg: &Config) -> Result<Arc<Inner>> {
        validate::cluster_name(name)?;
        cfg.validate()?;
        // Before this node publishes a barrier word (see `Owed`).
        crate::asym::register();
        let file = crate::local::ctl_name(name);
        let len = std::mem::size_of::<Control>();
        let bound = stall_bound(cfg.failure_timeout);
        let deadline = Instant::now() + bound;
        for _attempt in 0..200 {
            let create = || Open::Create {
                len,
                mode: cfg.shm_mode,
            };
            let ctl = match ShmMap::open_fd(&file, &create()) {
                Ok(fd) => ShmMap::map_opened(fd, &file, create())?,
                Err(e) if errno(&e) == Some(rustix::io::Errno::EXIST) => {
                    let fd = match ShmMap::open_fd(&file, &Open::Existing) {
                        Ok(fd) => fd,
                        // Just removed by its last node: create it afresh.
                        Err(e) if errno(&e) == Some(rustix::io::Errno::NOENT) => continue,
                        Err(e) if errno(&e) == Some(rustix::io::Errno::LOOP) => {
                            return Err(refused(name, "is a symbolic link (squatted?)".into()))
                        }
                        Err(e) if errno(&e) == Some(rustix::io::Errno::ACCESS) => {
                            return Err(refused(
                                name,
                                "is another user's and not shared with this uid".into(),
                            ))
                        }
                        Err(e) => return Err(e),
                    };
                    check_control(&fd, name, cfg.shm_mode)?;
                    match ShmMap::map_opened(fd, &file, Open::Existing) {
                        Ok(m) => m,
                        // Its creator has not sized it yet.
                        Err(_) => {
                            std::thread::sleep(Duration::from_millis(1));
                            continue;
                        }
                    }
                }
                Err(e) => return Err(e),
            };
            if !lock_plane(
                ctl.fd(),
                plane_notify_checked(&ctl),
                cfg.heartbeat,
                deadline,
            )? {
                return Err(Error::Stalled {
                    cluster: name.to_string(),
                    what: PLANE,
                    waited: bound,
                    nodes: Vec::new(),
                });
            }
            let linked = rustix::fs::fstat(ctl.fd())
                .map(|st| st.st_nlink > 0)
                .unwrap_or(false);
            if !linked || ctl.len() < len {
                // The last node removed this cluster between our open and our lock.
                unlock_plane(ctl.fd(), plane_notify_checked(&ctl));
                std::thread::sleep(Duration::from_millis(1));
                continue;
            }
            let inner = Self::join_locked(name, ctl, cfg, deadline)?;
            tracing::debug!(
                cluster = name,
                node = inner.local.me.0,
                incarnation = inner.local.incarnation,
                "joined"
            );
            return Ok(inner);
        }
        Err(Error::Invalid {
            what: "cluster",
            why: format!("could not open the control block of `{name}`"),
        })
    }

    /// The cluster's parameters from a control block this node did not create, checked
    /// as this node's own `Config` is (`Config::validate`): whoever can write the block
    /// can write them, and they size every wait and the failure detector.
    fn read_params(name: &str, c: &Control, cfg: &Config) -> Result<Params> {
        let h = &c.header;
        let version = h.version.load(Ordering::Acquire);
        if h.magic.load(Ordering::Acquire) != MAGIC || version != VERSION {
            return Err(Error::VersionMismatch {
                cluster: name.to_string(),
                found: version,
                expected: VERSION,
            });
        }
        let existing = h.page_size.load(Ordering::Acquire) as usize;
        let page = PageSize::from_bytes(existing)
            .ok_or_else(|| refused(name, format!("holds page size {existing}")))?;
        if let Some(want) = cfg.page_size {
            if want != page {
                return Err(Error::PageSizeMismatch {
                    cluster: name.to_string(),
                    existing,
                    requested: want.bytes(),
                });
            }
        }
        let timing = Config {
            heartbeat: Duration::from_nanos(h.heartbeat_ns.load(Ordering::Acquire)),
            failure_timeout: Duration::from_nanos(h.failure_timeout_ns.load(Ordering::Acquire)),
            ..cfg.clone()
        };
        timing.validate().map_err(|e| {
            refused(
                name,
                format!("holds cluster parameters memchan refuses: {e}"),
            )
        })?;
        Ok(Params {
            page,
            heartbeat: timing.heartbeat,
            failure_timeout: timing.failure_timeout,
        })
    }

    /// The rest of a join, holding the control file's `flock` (released here, on every
    /// path). Dead members found here are reaped until `deadline`; any left over are
    /// the service thread's.
    fn join_locked(name: &str, ctl: ShmMap, cfg: &Config, deadline: Instant) -> Result<Arc<Inner>> {
        if control_of(&ctl).is_none() {
            unlock_plane(ctl.fd(), None);
            return Err(refused(name, "is too short".into()));
        }
        // SAFETY: the mapping holds a whole `Control` (checked just above), page-aligned
        // and only atomics; the reference outlives the move of `ctl` into `Local` below
        // because moving the handle does not move the mapping, which the returned
        // `Inner` keeps (on the error paths before the move, `ctl` is still held).
        let c: &Control = unsafe { &*(ctl.ptr() as *const Control) };
        let h = &c.header;
        let params = if h.magic.load(Ordering::Acquire) == 0 {
            let page = cfg.page_size.unwrap_or_default();
            // We hold the flock and the magic is 0, so no joiner reads these yet; the
            // magic store below publishes them.
            h.version.store(VERSION, Ordering::Relaxed);
            h.page_size.store(page.bytes() as u32, Ordering::Relaxed);
            h.heartbeat_ns
                .store(cfg.heartbeat.as_nanos() as u64, Ordering::Relaxed);
            h.failure_timeout_ns
                .store(cfg.failure_timeout.as_nanos() as u64, Ordering::Relaxed);
            h.created_ns.store(now_ns(), Ordering::Relaxed);
            h.magic.store(MAGIC, Ordering::Release);
            Params {
                page,
                heartbeat: cfg.heartbeat,
                failure_timeout: cfg.failure_timeout,
            }
        } else {
            match Self::read_params(name, c, cfg) {
                Ok(p) => p,
                Err(e) => {
                    unlock_plane(ctl.fd(), plane_notify_checked(&ctl));
                    return Err(e);
                }
            }
        };
        let uid = rustix::process::geteuid().as_raw();
        let gid = rustix::process::getegid().as_raw();
        let Some(slot_idx) = c
            .nodes
            .iter()
            .position(|s| s.state.load(Ordering::Acquire) == node_state::FREE)
        else {
            unlock_plane(ctl.fd(), Some(plane_notify(c)));
            return Err(Error::TableFull("node"));
        };
        let incarnation = h
            .incarnations
            .fetch_add(1, Ordering::AcqRel)
            .wrapping_add(1)
            .max(1);
        let me = NodeId(slot_idx as u16);
        let presence = match ShmMap::memfd(&crate::local::presence_name(name, me, incarnation)) {
            Ok(p) => p,
            Err(e) => {
                unlock_plane(ctl.fd(), Some(plane_notify(c)));
                return Err(e);
            }
        };
        // Members of other uids open it to test the lock: the cluster's read bits.
        let live = match crate::presence::PresenceLock::take(
            &crate::local::live_name(name, me, incarnation),
            (cfg.shm_mode & 0o444) | 0o600,
        ) {
            Ok(l) => l,
            Err(e) => {
                unlock_plane(ctl.fd(), Some(plane_notify(c)));
                return Err(e);
            }
        };
        let inner = Arc::new(Inner {
            local: Local::new(
                name.to_string(),
                ctl,
                (presence, live),
                me,
                incarnation,
                params,
                uid,
            ),
            plane: PlaneMutex::new(),
            views: Views::new(),
            pidfds: Pidfds::new(),
            stop: AtomicBool::new(false),
            bar_last: std::array::from_fn(|_| AtomicU64::new(0)),
            duo_last: std::array::from_fn(|_| AtomicU32::new(0)),
        });
        {
            let s = &c.nodes[slot_idx];
            s.pid.store(std::process::id(), Ordering::Relaxed);
            s.uid.store(uid, Ordering::Relaxed);
            s.gid.store(gid, Ordering::Relaxed);
            s.incarnation.store(incarnation, Ordering::Relaxed);
            s.heartbeat_ns.store(now_ns(), Ordering::Relaxed);
            s.isolated_epoch.store(0, Ordering::Relaxed);
            // Start barrier numbers level with the live members so the next barrier
            // lines up with theirs; rounds 0 marks the joiner as not part of a barrier
            // under way (its peers fall back to the all-arrived check, which it meets).
            let members = inner.members();
            for scope in 0..s.barrier.len() {
                let top = members
                    .iter()
                    .map(|o| bar::number(c.nodes[o.index()].barrier[scope].load(Ordering::Acquire)))
                    .max()
                    .unwrap_or(0);
                s.barrier[scope].store(bar::pack(top, 0, 0), Ordering::Relaxed);
                inner.bar_last[scope].store(bar::pack(top, 0, 0), Ordering::Relaxed);
            }
            // A word a node of this id left behind would show this node's arrival.
            for w in c.duos.iter().flat_map(|d| &d.0) {
                w.store(0, Ordering::Relaxed);
            }
            s.state.store(node_state::ALIVE, Ordering::Release);
            inner.set_member(inner.local.me, true);
            // Dead nodes nobody has cleaned up yet (the survivors have not looked, or
            // the whole cluster crashed) are reaped now that this node is alive: the
            // ordered writes that release their locks are sent as this node. Until
            // `deadline` only: what is left is the service thread's.
            for n in 0..MAX_NODES {
                if Instant::now() >= deadline {
                    break;
                }
                let o = &c.nodes[n];
                let inc = o.incarnation.load(Ordering::Relaxed);
                // Gone by the kernel (its presence lock), not by its pid word.
                if o.state.load(Ordering::Acquire) == node_state::ALIVE
                    && inner.local.vacant(NodeId(n as u16), inc)
                    && inner.mark_failed(NodeId(n as u16), node_state::ALIVE)
                {
                    inner.order().recover(NodeId(n as u16));
                    inner.cleanup_failed(NodeId(n as u16), inc);
                }
            }
            let epoch = inner.push_event(inner.local.me, incarnation, EventKind::Joined);
            s.joined_epoch.store(epoch, Ordering::Relaxed);
            inner.local.joined_epoch.store(epoch, Ordering::Relaxed);
        }
        unlock_plane(inner.local.ctl_map().fd(), Some(plane_notify(c)));
        Ok(inner)
    }

    /// Takes the control plane, waiting at most [`Local::stall_bound`] for it
    /// (`Error::Stalled` naming the cluster otherwise).
    pub(crate) fn plane(&self) -> Result<PlaneGuard<'_>> {
        let bound = self.local.stall_bound();
        let deadline = Instant::now() + bound;
        if !self.plane.lock(deadline) {
            return Err(self.local.stalled(PLANE, bound, Vec::new()));
        }
        let notify = plane_notify(self.local.ctl());
        match lock_plane(
            self.local.ctl_map().fd(),
            Some(notify),
            self.local.heartbeat,
            deadline,
        ) {
            Ok(true) => Ok(PlaneGuard { inner: self }),
            Ok(false) => {
                self.plane.unlock();
                Err(self.local.stalled(PLANE, bound, Vec::new()))
            }
            Err(e) => {
                self.plane.unlock();
                Err(e)
            }
        }
    }

    /// This node's side of the point of global order.
    pub(crate) fn order(&self) -> Order<'_> {
        Order::new(&self.local, &self.views, &self.pidfds)
    }

    /// Live members: the header's members bitmap, less any node whose slot is not
    /// ALIVE (a bit another member set for a free slot, a node being declared failed).
    pub(crate) fn members(&self) -> NodeSet {
        let c = self.local.ctl();
        let mut live = NodeSet::EMPTY;
        for n in load_set(&c.header.members).iter() {
            if c.nodes[n.index()].state.load(Ordering::Acquire) == node_state::ALIVE {
                live.insert(n);
            }
        }
        live
    }

    pub(crate) fn is_member(&self, n: NodeId) -> bool {
        n.index() < MAX_NODES
            && self.local.ctl().nodes[n.index()]
                .state
                .load(Ordering::Acquire)
                == node_state::ALIVE
    }

    /// Writes a membership event (under the flock). The ring is a seqlock per event:
    /// `seq` is 0 while the event is written and its index + 1 once it is complete.
    /// Epoch and head are words any member can write, so they wrap, never overflow.
    fn push_event(&self, node: NodeId, incarnation: u64, kind: EventKind) -> u64 {
        let c = self.local.ctl();
        let epoch = c
            .header
            .epoch
            .fetch_add(1, Ordering::AcqRel)
            .wrapping_add(1);
        let ring = &c.events;
        let head = ring.head.load(Ordering::Relaxed);
        ring.events[(head % ring.events.len() as u64) as usize].write(
            head,
            &MembershipEvent {
                epoch,
                node,
                incarnation,
                kind,
            },
        );
        ring.head.store(head.wrapping_add(1), Ordering::Release);
        Notify::new(&c.header.event_seq, &c.header.event_waiters).post(&SharedFutex);
        epoch
    }

    /// Number of membership events written so far (a cursor for [`next_event`]).
    pub(crate) fn event_head(&self) -> u64 {
        self.local.ctl().events.head.load(Ordering::Acquire)
    }

    /// The event at `cursor`, waiting up to `timeout` for it. Events older than the ring
    /// are skipped (the cursor moves to the oldest kept).
    ///
    /// Each slot is a seqlock (`memchan_core::event::EventSlot`), so an event is read
    /// whole or not at all. Every word of the ring can be another member's: a head
    /// that moved back is followed (the cursor drops to it), an event with a node id or
    /// kind memchan never writes is skipped, and so is a published event whose slot no
    /// longer holds it (never waited on: its writer may have died half-way). Each sleep
    /// is cut to one heartbeat, so a forged waiter count costs latency, not the event.
    pub(crate) fn next_event(
        &self,
        cursor: &mut u64,
        timeout: Option<Duration>,
    ) -> Option<MembershipEvent> {
        let c = self.local.ctl();
        let ring = &c.events;
        let notify = Notify::new(&c.header.event_seq, &c.header.event_waiters);
        let deadline = timeout.map(|t| Instant::now() + t);
        let n = ring.events.len() as u64;
        let mut first = true;
        loop {
            // Also between skipped events: a member that keeps writing the ring must
            // not hold a bounded wait past its timeout.
            if !first && deadline.is_some_and(|d| Instant::now() >= d) {
                return None;
            }
            first = false;
            let seen = notify.current();
            let head = ring.head.load(Ordering::Acquire);
            if head < *cursor {
                *cursor = head;
            }
            if head > *cursor {
                *cursor = (*cursor).max(head.saturating_sub(n));
                let at = *cursor;
                *cursor = at.wrapping_add(1);
                match ring.events[(at % n) as usize].read(at) {
                    Ok(ev) => return Some(ev),
                    // Event `at` was published (head passed it) and its slot no longer
                    // holds it: overwritten by a later one (or forged). Skip it, as the
                    // ring skips every event older than it keeps; never wait on the
                    // slot, whose writer may have died half-way.
                    Err(SlotMiss::NotHeld) => continue,
                    Err(SlotMiss::Forged) => {
                        tracing::warn!(
                            cluster = %self.local.cluster,
                            event = at,
                            "skipped a membership event memchan never writes"
                        );
                        continue;
                    }
                }
            }
            let slice = self.local.heartbeat;
            let left = match deadline {
                Some(d) => {
                    let l = d.saturating_duration_since(Instant::now());
                    if l.is_zero() {
                        return None;
                    }
                    l.min(slice)
                }
                None => slice,
            };
            notify.wait(seen, Some(left), &SharedFutex);
        }
    }

    /// Declares `node` (incarnation `inc`) failed and isolates it, unless another
    /// survivor already did.
    pub(crate) fn declare_failed(&self, node: NodeId, inc: u64) {
        if self.local.ctl().nodes[node.index()]
            .incarnation
            .load(Ordering::Acquire)
            == inc
            && self.mark_failed(node, node_state::ALIVE)
        {
            self.finish_failed(node, inc);
        }
    }

    /// Takes over a slot left in a state that is neither FREE nor ALIVE for long (a
    /// survivor that died or gave up half-way through a cleanup, or a word another
    /// member wrote): marks it FAILED (from `state`) and cleans it up.
    pub(crate) fn reap_stuck(&self, node: NodeId, state: u32, inc: u64) {
        let slot = &self.local.ctl().nodes[node.index()];
        if slot.incarnation.load(Ordering::Acquire) == inc
            && (state == node_state::FAILED || self.mark_failed(node, state))
        {
            self.finish_failed(node, inc);
        }
    }

    /// The rest of an isolation after the slot was marked FAILED: finish its ordered
    /// packet (before taking the plane: a plane holder may be queued behind it at the
    /// order point), then clean it up under the plane if it still is that FAILED
    /// incarnation (another survivor may have been first). If the plane cannot be had
    /// (`Error::Stalled`) the slot stays FAILED, out of `members()`, and the service
    /// threads of the cluster retry ([`reap_stuck`](Self::reap_stuck)).
    fn finish_failed(&self, node: NodeId, inc: u64) {
        self.order().recover(node);
        match self.plane() {
            Ok(_g) => {
                let slot = &self.local.ctl().nodes[node.index()];
                if slot.state.load(Ordering::Acquire) == node_state::FAILED
                    && slot.incarnation.load(Ordering::Acquire) == inc
                {
                    self.cleanup_failed(node, inc);
                }
            }
            Err(e) => tracing::warn!(
                cluster = %self.local.cluster,
                node = node.0,
                error = %e,
                "could not clean up a failed node; it stays FAILED until a retry"
            ),
        }
    }

    /// `from` -> FAILED; true for the one caller that made the change.
    fn mark_failed(&self, node: NodeId, from: u32) -> bool {
        self.local.ctl().nodes[node.index()]
            .state
            .compare_exchange(
                from,
                node_state::FAILED,
                Ordering::AcqRel,
                Ordering::Relaxed,
            )
            .is_ok()
    }

    /// Isolates a failed node completely, then tells everyone: a survivor that sees
    /// the event can rely on nothing more of the node landing.
    fn cleanup_failed(&self, node: NodeId, inc: u64) {
        let c = self.local.ctl();
        // From here the node's own data path refuses to send (see `check_alive`), and
        // the rx_gen move in drop_rx_everywhere makes its direct deposits re-check.
        c.nodes[node.index()]
            .incarnation
            .store(0, Ordering::Release);
        self.set_member(node, false);
        self.drop_rx_everywhere(node, inc);
        self.release_locks_of(node);
        c.header.isolations.fetch_add(1, Ordering::Relaxed);
        let epoch = self.push_event(node, inc, EventKind::Failed);
        c.nodes[node.index()]
            .isolated_epoch
            .store(epoch, Ordering::Release);
        self.release_barrier_waiters();
        c.nodes[node.index()]
            .state
            .store(node_state::FREE, Ordering::Release);
    }

    /// Removes `node` from every segment's rx set and deletes its receive memory, and
    /// its journal object, the last of its files (after `Order::recover` read it).
    /// Every segment's `rx_gen` moves, also where `node` mapped nothing: that is how
    /// the node's own direct-deposit path learns, at its next write, to re-check
    /// whether it may still send (see `TxMapping::deposit`).
    fn drop_rx_everywhere(&self, node: NodeId, inc: u64) {
        let c = self.local.ctl();
        ShmMap::unlink(&crate::local::journal_name(&self.local.cluster, node, inc));
        // Only once its process is gone: an isolated node that lives on (hung, of
        // another uid) must still show as live to a recovery of the order point it
        // may hold. Its own end removes the file otherwise (`PresenceLock`), or the
        // cluster's last node does.
        if node != self.local.me && self.local.vacant(node, inc) {
            ShmMap::unlink(&crate::local::live_name(&self.local.cluster, node, inc));
        }
        for (i, seg) in c.segs.iter().enumerate() {
            if seg.state.load(Ordering::Acquire) != seg_state::LIVE {
                continue;
            }
            let mut set = load_set(&seg.rx_set);
            if set.contains(node) {
                set.remove(node);
                store_set(&seg.rx_set, &set);
            }
            seg.rx_gen.fetch_add(1, Ordering::AcqRel);
            let gen = seg.generation.load(Ordering::Acquire);
            ShmMap::unlink(&self.local.rx_name(i as u32, gen, node, inc));
        }
    }

    /// Deletes `node`'s receive memory of every live segment, leaving the rx sets alone.
    fn unlink_rx_of(&self, node: NodeId, inc: u64) {
        for (i, seg) in self.local.ctl().segs.iter().enumerate() {
            if seg.state.load(Ordering::Acquire) == seg_state::LIVE {
                let gen = seg.generation.load(Ordering::Acquire);
                ShmMap::unlink(&self.local.rx_name(i as u32, gen, node, inc));
            }
        }
    }

    /// Writes 0 into `node`'s bid slot of every cluster lock, so a lock it held is free.
    ///
    /// Not while `node` still holds the order point (a failed holder whose death could
    /// not be confirmed, see `Order::recover`): each release is an ordered write that
    /// would wait for the point until it times out. Its locks then stay set; so do
    /// the rest when one release gives `Error::Stalled` (the others would wait as long).
    fn release_locks_of(&self, node: NodeId) {
        let c = self.local.ctl();
        if self.order().holder() == Some(u32::from(node.0)) {
            tracing::warn!(
                cluster = %self.local.cluster,
                node = node.0,
                "a failed node still holds the order point; its locks are not released"
            );
            return;
        }
        for i in 0..MAX_SEGMENTS {
            let seg = &c.segs[i];
            if seg.state.load(Ordering::Acquire) != seg_state::LIVE
                || seg.flags.load(Ordering::Acquire) & seg_state::FLAG_LOCK == 0
            {
                continue;
            }
            let gen = seg.generation.load(Ordering::Acquire);
            if let Ok(Some(segref)) = self.local.seg_by_index(i as u32, gen) {
                let dests = load_set(&seg.rx_set);
                let mut targets = Targets::new();
                if let Err(e @ Error::Stalled { .. }) =
                    self.order()
                        .ordered_packet(&segref, &dests, &mut targets, node.index(), &[0])
                {
                    tracing::warn!(
                        cluster = %self.local.cluster,
                        node = node.0,
                        error = %e,
                        "could not release the locks of a node"
                    );
                    return;
                }
            }
        }
    }

    /// Wakes every barrier sleeper (on every node's pair): they re-check membership.
    fn release_barrier_waiters(&self) {
        for s in &self.local.ctl().nodes {
            if s.bar_waiters.load(Ordering::SeqCst) != 0 {
                Notify::new(&s.bar_seq, &s.bar_waiters).post(&SharedFutex);
            }
        }
    }

    // ---- segments ------------------------------------------------------------------

    /// Finds or creates a segment (create-or-open by name).
    pub(crate) fn segment(
        &self,
        name: &str,
        size: usize,
        mode: u32,
        flags: u32,
        create: bool,
    ) -> Result<SegRef> {
        validate::stored_segment_name(name, flags & seg_state::FLAG_LOCK != 0)?;
        if create {
            validate::segment_size(size as u64)?;
            validate::mode(mode)?;
        }
        let _g = self.plane()?;
        self.local.check_alive()?;
        let c = self.local.ctl();
        for (i, e) in c.segs.iter().enumerate() {
            if e.state.load(Ordering::Acquire) == seg_state::LIVE && load_name(&e.name) == name {
                let existing = e.size.load(Ordering::Acquire) as usize;
                if create && self.local.page.round_up(size) != existing {
                    return Err(Error::SegmentSizeMismatch {
                        segment: name.to_string(),
                        existing,
                        requested: size,
                    });
                }
                let gen = e.generation.load(Ordering::Acquire);
                return self
                    .local
                    .seg_by_index(i as u32, gen)?
                    .ok_or_else(|| Error::UnknownSegment(name.into()));
            }
        }
        if !create {
            return Err(Error::UnknownSegment(name.to_string()));
        }
        let Some(i) = c
            .segs
            .iter()
            .position(|e| e.state.load(Ordering::Acquire) == seg_state::FREE)
        else {
            return Err(Error::TableFull("segment"));
        };
        let e = &c.segs[i];
        let gen = e.generation.fetch_add(1, Ordering::AcqRel).wrapping_add(1);
        // The segment's owner and mode are its permission object's, made before the
        // entry goes LIVE so that whoever finds the entry finds the object.
        let perm = Arc::new(SegPerm::create(
            &crate::local::perm_name(&self.local.cluster, i as u32, gen),
            mode,
        )?);
        store_name(&e.name, name);
        let size = self.local.page.round_up(size);
        e.size.store(size as u64, Ordering::Relaxed);
        e.flags.store(flags, Ordering::Relaxed);
        store_set(&e.rx_set, &NodeSet::EMPTY);
        e.rx_gen.fetch_add(1, Ordering::AcqRel);
        e.state.store(seg_state::LIVE, Ordering::Release);
        Ok(SegRef {
            idx: i as u32,
            generation: gen,
            size,
            name: name.to_string(),
            perm,
        })
    }

    /// Checks the caller's permission (`want`: 4 read, 2 write) on a segment: the
    /// kernel's answer to opening its permission object with that access.
    pub(crate) fn check_perm(&self, seg: &SegRef, want: u32, op: &'static str) -> Result<()> {
        // An isolated node maps nothing (on 4c63486 its map_rx returned Ok).
        self.local.check_alive()?;
        seg.perm.access(want, &seg.name, op, self.local.uid)
    }

    /// Frees a segment: only the owner of its permission object (or root) may.
    pub(crate) fn free_segment(&self, seg: &SegRef) -> Result<()> {
        let _g = self.plane()?;
        let e = &self.local.ctl().segs[seg.idx as usize];
        if !self.local.seg_live(seg.idx, seg.generation) {
            return Err(Error::SegmentFreed {
                segment: seg.name.clone(),
            });
        }
        let p = &seg.perm;
        if self.local.uid != 0 && self.local.uid != p.uid {
            return Err(Error::PermissionDenied {
                segment: seg.name.clone(),
                op: "free",
                uid: p.uid,
                gid: p.gid,
                mode: p.mode,
                caller_uid: self.local.uid,
            });
        }
        let c = self.local.ctl();
        for n in load_set(&e.rx_set).iter() {
            let inc = c.nodes[n.index()].incarnation.load(Ordering::Acquire);
            ShmMap::unlink(&self.local.rx_name(seg.idx, seg.generation, n, inc));
        }
        store_set(&e.rx_set, &NodeSet::EMPTY);
        e.state.store(seg_state::FREE, Ordering::Release);
        e.generation.fetch_add(1, Ordering::AcqRel);
        e.rx_gen.fetch_add(1, Ordering::AcqRel);
        // Handles still held keep the object open; its name goes with the segment.
        ShmMap::unlink(p.name());
        Ok(())
    }

    /// Adds this node to the segment's rx set (under the order point, so no ordered
    /// packet is half-delivered across the change). For lock pages the new copy starts
    /// as a copy of an existing one, so a late bidder sees the current holder.
    pub(crate) fn attach_rx(&self, seg: &SegRef, obj: &RxObject) -> Result<()> {
        let _g = self.plane()?;
        let c = self.local.ctl();
        let e = &c.segs[seg.idx as usize];
        if !self.local.seg_live(seg.idx, seg.generation) {
            return Err(Error::SegmentFreed {
                segment: seg.name.clone(),
            });
        }
        let mut set = load_set(&e.rx_set);
        if set.contains(self.local.me) {
            return Err(Error::Invalid {
                what: "rx mapping",
                why: format!("segment `{}` is already mapped rx by this node", seg.name),
            });
        }
        // The copy's source is mapped before the order point is entered (no mmap under
        // it: every ordered writer of the host would wait); the rx set it is taken from
        // changes only under the plane, which this node holds.
        let src = (e.flags.load(Ordering::Relaxed) & seg_state::FLAG_LOCK != 0)
            .then(|| {
                set.iter()
                    .find_map(|n| self.order().view(seg, n).ok().flatten())
            })
            .flatten();
        self.order().enter()?;
        // Under the point, as for an ordered packet: an isolated node joins no rx set.
        if let Err(e) = self.local.check_alive() {
            self.order().leave();
            return Err(e);
        }
        if let Some(src) = src {
            // Through a private buffer: both sides are receive memory, which other
            // processes reach (the copy runs under the order point, so no ordered
            // write changes it meanwhile).
            let mut page = vec![0u8; seg.size];
            // SAFETY: `src` maps `seg.size` bytes and is reached only through atomics.
            unsafe { memchan_core::packet::load(src.data(), &mut page) };
            // SAFETY: as above, for `obj`.
            unsafe { memchan_core::packet::store(obj.data(), &page) };
        }
        set.insert(self.local.me);
        store_set(&e.rx_set, &set);
        e.rx_gen.fetch_add(1, Ordering::AcqRel);
        self.order().leave();
        Ok(())
    }

    /// Removes this node from the segment's rx set and deletes its receive memory.
    ///
    /// Without the plane (`Error::Stalled`, logged) the rx set keeps this node, whose
    /// receive memory is gone: senders find no object under its name and skip it.
    pub(crate) fn detach_rx(&self, seg: &SegRef) {
        match self.plane() {
            Ok(_g) => {
                let e = &self.local.ctl().segs[seg.idx as usize];
                if self.local.seg_live(seg.idx, seg.generation) {
                    let mut set = load_set(&e.rx_set);
                    set.remove(self.local.me);
                    store_set(&e.rx_set, &set);
                    e.rx_gen.fetch_add(1, Ordering::AcqRel);
                }
            }
            Err(e) => tracing::warn!(
                cluster = %self.local.cluster,
                segment = %seg.name,
                error = %e,
                "unmapped rx without the control plane"
            ),
        }
        ShmMap::unlink(&self.local.rx_name(
            seg.idx,
            seg.generation,
            self.local.me,
            self.local.incarnation,
        ));
    }

    // ---- groups --------------------------------------------------------------------

    /// Creates a multicast group (or returns it if it exists with the same members).
    pub(crate) fn create_group(&self, name: &str, members: &[NodeId]) -> Result<GroupId> {
        validate::group_name(name)?;
        let members = &validate::group_members(members, &self.members())?;
        let _g = self.plane()?;
        let c = self.local.ctl();
        for (i, g) in c.groups.iter().enumerate() {
            if g.state.load(Ordering::Acquire) == 1 && load_name(&g.name) == name {
                if load_set(&g.members) != *members {
                    return Err(Error::Invalid {
                        what: "group",
                        why: format!("`{name}` exists with other members"),
                    });
                }
                return Ok(GroupId(i as u16));
            }
        }
        let Some(i) = c
            .groups
            .iter()
            .position(|g| g.state.load(Ordering::Acquire) == 0)
        else {
            return Err(Error::TableFull("group"));
        };
        let g = &c.groups[i];
        store_name(&g.name, name);
        store_set(&g.members, members);
        g.state.store(1, Ordering::Release);
        Ok(GroupId(i as u16))
    }

    /// Looks a group up by name.
    pub(crate) fn group(&self, name: &str) -> Result<GroupId> {
        let _g = self.plane()?;
        self.local
            .ctl()
            .groups
            .iter()
            .position(|g| g.state.load(Ordering::Acquire) == 1 && load_name(&g.name) == name)
            .map(|i| GroupId(i as u16))
            .ok_or_else(|| Error::UnknownGroup(name.to_string()))
    }

    /// A group's member set.
    pub(crate) fn group_members(&self, g: GroupId) -> Result<NodeSet> {
        validate::group_id(g)?;
        let e = self
            .local
            .ctl()
            .groups
            .get(g.index())
            .filter(|e| e.state.load(Ordering::Acquire) == 1)
            .ok_or_else(|| validate::unknown_group(g))?;
        Ok(load_set(&e.members))
    }

    // ---- barrier -------------------------------------------------------------------

    /// Barrier over the live members of `scope` (0 = cluster, 1 + g = group g).
    ///
    /// A dissemination barrier: O(log n) rounds in which each node writes only its own
    /// word (`control::bar`) and waits on one peer's. The ranks are the scope's members
    /// in the members bitmap when the node arrives, sorted by id; in round k rank r
    /// waits for rank (r - 2^k) mod n to have done round k - 1. After round k a node
    /// knows that the 2^(k+1) - 1 ranks before it arrived, so after ceil(log2 n)
    /// rounds it knows all did. That knowledge passes only between nodes that took the
    /// same rank set (same tag): a peer whose word shows another set, a joiner's word
    /// (rounds 0: it is not part of this barrier), a peer already in a later barrier
    /// (it finished this one, or is a joiner that moved on) in a round after the
    /// first (the first needs only its arrival, which a later number shows), a peer
    /// no longer alive, a members bitmap that changed, or a wait that went to sleep,
    /// all fall back to the check that is always sufficient and never depends on the
    /// ranks: every current member of the scope has arrived (its number has reached
    /// ours). So membership changes cost speed, never correctness, and a failed node
    /// cannot hang it.
    ///
    /// Bounded: members that neither arrive nor fail (a live process that never calls
    /// the barrier, or a slot no process stands behind that no service thread could
    /// prove empty) hold it up for at most [`Local::stall_bound`] (25 failure
    /// timeouts, at least 1 s) after the last progress (a member arriving, joining or
    /// leaving the scope, or a missing member's application threads using CPU), with
    /// arrivals extending it to at most [`STALL_CAP`] bounds in all; it then fails with
    /// `Error::Stalled` naming them. This node's arrival stays counted: a
    /// late member passes this barrier at once, and the next one lines up again.
    pub(crate) fn barrier(&self, scope: usize, group: Option<NodeSet>) -> Result<()> {
        self.local.check_alive()?;
        let c = self.local.ctl();
        let me = self.local.me;
        let last = self.bar_last[scope].load(Ordering::Relaxed);
        let t = bar::next(bar::number(last));
        // Wakes owed to peers asleep on our words, settled before any wait of ours
        // sleeps and when this barrier ends, on every path (`Drop`).
        let mut owed = Owed::new(&c.nodes[me.index()]);
        // The arrival goes out first, with the last barrier's tag: the word after
        // which a 2-node barrier's peer passes is then on its way before the members
        // are read and the plan looked up, not after (~10 ns of the ~20 a barrier's
        // own work takes). It claims only that this node reached `t`, true whatever
        // rank set the plan takes; a peer that took another set sees another tag and
        // falls back, and the word goes out again below if the plan's tag differs.
        // Release: every earlier write of this node is visible to whoever sees the
        // arrival (on one host each write is applied when it returns).
        let early = bar::rounds(last) == 1;
        let duo_last = self.duo_last[scope].load(Ordering::Relaxed);
        if early {
            if let Some(peer) = duo_last.checked_sub(1) {
                duo_publish(c, scope, me, peer as usize, t, bar::tag(last));
            }
            owed.publish(scope, bar::pack(t, bar::tag(last), 1));
        }
        let bitmap = load_set(&c.header.members);
        let mut ranks = match group {
            Some(g) => bitmap.intersect(&g),
            None => bitmap,
        };
        ranks.insert(me);
        let plan = Plan::head(me, &bitmap, &ranks);
        let tag = u64::from(plan.tag);
        let mut stall = Stall::new();
        if plan.crowd && yield_ok() {
            // More nodes than cores: a round costs a context switch, not a cache-line
            // transfer, so every node waits for all arrivals at once, yielding (`FLAT`
            // tells a peer that took the dissemination that none of its rounds will
            // follow). Beside a task that does not yield (`HOGGED`) the dissemination's
            // sleeps do better than one sleep per missing member.
            self.bar_last[scope].store(bar::pack(t, tag, 0), Ordering::Relaxed);
            owed.publish(scope, bar::pack(t, tag, bar::FLAT));
            return self.wait_all_arrived(scope, group, t, &mut stall, &mut owed);
        }
        let arrival = bar::pack(t, tag, 1);
        self.bar_last[scope].store(arrival, Ordering::Relaxed);
        let rounds = u32::from(plan.rounds);
        // Two nodes: their arrivals meet on one line as well (`DuoLine`).
        let duo = if rounds == 1 { Plan::src(0) } else { None };
        let duo_now = duo.map_or(0, |p| p.index() as u32 + 1);
        self.duo_last[scope].store(duo_now, Ordering::Relaxed);
        if !early || bar::tag(last) != tag || duo_last != duo_now {
            if let Some(peer) = duo {
                duo_publish(c, scope, me, peer.index(), t, tag);
            }
            owed.publish(scope, arrival);
        }
        for k in 0..rounds {
            // Always there: `head` just cached this thread's plan.
            let Some(src) = Plan::src(k) else {
                self.wait_all_arrived(scope, group, t, &mut stall, &mut owed)?;
                break;
            };
            let want = RoundWait {
                src,
                scope,
                t,
                tag,
                need: u64::from(k) + 1,
                bitmap,
                duo: duo.map(|p| &c.duos[scope].0[duo::slot(p.index(), me.index())]),
            };
            match self.wait_round(&want, group, &mut stall, &mut owed)? {
                Round::Done => {
                    // The last round's word is waited on by nobody.
                    if k + 1 < rounds {
                        owed.publish(scope, bar::pack(t, tag, u64::from(k) + 2));
                    }
                }
                Round::AllArrived => break,
                Round::Fallback => {
                    self.wait_all_arrived(scope, group, t, &mut stall, &mut owed)?;
                    break;
                }
            }
        }
        Ok(())
    }

    /// One dissemination round: waits for `want.src` to have done round `need - 1`.
    fn wait_round(
        &self,
        want: &RoundWait<'_>,
        group: Option<NodeSet>,
        stall: &mut Stall,
        owed: &mut Owed,
    ) -> Result<Round> {
        let c = self.local.ctl();
        let s = &c.nodes[want.src.index()];
        let word = &s.barrier[want.scope];
        // Some(done) once the source's word decides the round, None while it is behind.
        let look = || {
            let w = word.load(Ordering::Acquire);
            let num = bar::number(w);
            if num == want.t {
                let rounds = bar::rounds(w);
                if bar::tag(w) != want.tag || rounds == 0 || rounds == bar::FLAT {
                    return Some(Round::Fallback);
                }
                if rounds >= want.need {
                    return Some(Round::Done);
                }
                None
            } else if bar::reached(num, want.t) {
                // Past `t`: it arrived at `t`, all round 0 needs (the all-arrived
                // check counts it so too). Common in a 2-node loop, where the peer
                // passes one transfer after our arrival and may arrive at the next
                // barrier before this look sees the word of `t`.
                Some(if want.need == 1 {
                    Round::Done
                } else {
                    Round::Fallback
                })
            } else {
                None
            }
        };
        // The peer is gone or being declared failed, or the membership changed.
        let changed = || {
            s.state.load(Ordering::Acquire) != node_state::ALIVE
                || load_set(&c.header.members) != want.bitmap
        };
        // A 2-node barrier spins on the peer's word on the shared line (`DuoLine`); it
        // shows only an arrival, and the peer's own word is looked at before a sleep.
        let quick = || match want.duo {
            Some(d) => duo::arrived(
                d.load(Ordering::Acquire),
                want.src.index(),
                want.tag,
                want.t,
            )
            .then_some(Round::Done),
            None => look(),
        };
        let mut spins = 0u32;
        loop {
            if let Some(done) = quick() {
                return Ok(done);
            }
            spins = spins.saturating_add(1);
            if spins.is_multiple_of(64) {
                self.local.check_alive()?;
                if changed() {
                    return Ok(Round::Fallback);
                }
            }
            if spins < SPINS {
                // A pause between looks: on this VM's cores (AMD EPYC) the 2-node
                // barrier took 68-72 ns without one, 48-63 with (alternating
                // windows; the loop's speculative loads are thrown away when the
                // line moves).
                std::hint::spin_loop();
                continue;
            }
            // Asleep or about to be: the all-arrived check is due (it is what ends a
            // barrier whose ranks disagree), and so is the stall bound.
            let missing = self.missing(want.scope, group, want.t);
            if missing.is_empty() {
                return Ok(Round::AllArrived);
            }
            stall.check(&self.local, missing, |m| self.cpu_of(m))?;
            owed.settle();
            let seen = s.bar_seq.load(Ordering::SeqCst);
            s.bar_waiters.fetch_add(1, Ordering::SeqCst);
            crate::asym::heavy();
            let now = look();
            if now.is_none() {
                // The timeout bounds how late a membership change, or a word whose
                // wake-up another member swallowed (a forged waiter count), is noticed.
                SharedFutex.wait(&s.bar_seq, seen, Some(SLEEP));
            }
            s.bar_waiters.fetch_sub(1, Ordering::SeqCst);
            if let Some(done) = now {
                return Ok(done);
            }
            if changed() {
                return Ok(Round::Fallback);
            }
        }
    }

    /// Waits until every current member of the scope has arrived at `t`: the
    /// dissemination's fallback, and the whole wait of a crowded host (more members
    /// than online cores, see [`crowded`]).
    ///
    /// Arrival within a barrier only grows, so after one full look
    /// ([`missing`](Self::missing)) only the members still missing are looked at
    /// again, and dropped once they arrive, fail or leave (a joiner starts level, so it
    /// is never missing from a barrier under way). While nodes arrive, a crowded host
    /// waits by `sched_yield`, for at most [`YIELD_FOR`] since the last arrival: a
    /// spinning waiter would take the core from the nodes it waits for, and a sleeper
    /// costs its waker a futex wake and a context switch per arrival it waits on
    /// (64 nodes on 2 cores: ~85 us per barrier yielding, ~0.9 ms sleeping). Not while
    /// a task that does not yield shares the cores ([`HOGGED`]): each yield would
    /// hand it a time slice (beside two busy loops: ~12 ms yielding, ~2 ms sleeping).
    /// Otherwise it spins [`SPINS`] times. Then it sleeps on the first missing
    /// member's notify pair, whose arrival wakes it.
    fn wait_all_arrived(
        &self,
        scope: usize,
        group: Option<NodeSet>,
        t: u64,
        stall: &mut Stall,
        owed: &mut Owed,
    ) -> Result<()> {
        let c = self.local.ctl();
        let crowd = crowded(load_set(&c.header.members).len());
        let mut missing = self.missing(scope, group, t);
        let mut spins = 0u32;
        // The last change in who is missing: the yield phase runs from there.
        let mut moved: Option<Instant> = None;
        let mut hogs = 0u32;
        loop {
            let before = missing;
            let bitmap = load_set(&c.header.members);
            for n in before.iter() {
                let s = &c.nodes[n.index()];
                let w = s.barrier[scope].load(Ordering::Acquire);
                if bar::reached(bar::number(w), t)
                    || s.state.load(Ordering::Acquire) != node_state::ALIVE
                    || !bitmap.contains(n)
                {
                    missing.remove(n);
                }
            }
            let Some(first) = missing.iter().next() else {
                return Ok(());
            };
            spins = spins.saturating_add(1);
            if spins.is_multiple_of(64) {
                self.local.check_alive()?;
            }
            if crowd {
                if missing != before {
                    moved = None;
                }
                let since = *moved.get_or_insert_with(Instant::now);
                if since.elapsed() < YIELD_FOR && yield_ok() {
                    let before = Instant::now();
                    std::thread::yield_now();
                    if before.elapsed() > HOGGED {
                        // Not at the first: a descheduled vCPU looks the same once.
                        hogs += 1;
                        if hogs == HOGS {
                            hogged();
                        }
                    }
                    continue;
                }
            } else if spins < SPINS {
                std::hint::spin_loop();
                continue;
            }
            stall.check(&self.local, missing, |m| self.cpu_of(m))?;
            owed.settle();
            // Sleep on the first missing member's pair: its arrival wakes us.
            let s = &c.nodes[first.index()];
            let seen = s.bar_seq.load(Ordering::SeqCst);
            s.bar_waiters.fetch_add(1, Ordering::SeqCst);
            crate::asym::heavy();
            if !bar::reached(bar::number(s.barrier[scope].load(Ordering::SeqCst)), t) {
                SharedFutex.wait(&s.bar_seq, seen, Some(SLEEP));
            }
            s.bar_waiters.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// The CPU time the verified processes behind `nodes` used so far (for the
    /// barrier's stall bound).
    fn cpu_of(&self, nodes: &NodeSet) -> u64 {
        let c = self.local.ctl();
        nodes
            .iter()
            .filter_map(|n| {
                let inc = c.nodes[n.index()].incarnation.load(Ordering::Acquire);
                self.pidfds.cpu_ticks(n.index(), inc)
            })
            .sum()
    }

    /// Live members of the scope, other than this node, that have not arrived at `t`.
    /// A joiner starts level with the members (`join`), so it is never missing from a
    /// barrier under way when it joined.
    fn missing(&self, scope: usize, group: Option<NodeSet>, t: u64) -> NodeSet {
        let c = self.local.ctl();
        let mut set = self.members();
        if let Some(g) = group {
            set = set.intersect(&g);
        }
        set.remove(self.local.me);
        let mut missing = NodeSet::EMPTY;
        for n in set.iter() {
            let w = c.nodes[n.index()].barrier[scope].load(Ordering::Acquire);
            if !bar::reached(bar::number(w), t) {
                missing.insert(n);
            }
        }
        missing
    }

    /// Adds or removes `n` in the members bitmap (under the flock).
    fn set_member(&self, n: NodeId, member: bool) {
        let words = &self.local.ctl().header.members;
        let mut set = load_set(words);
        if member {
            set.insert(n);
        } else {
            set.remove(n);
        }
        store_set(words, &set);
    }

    // ---- leaving -------------------------------------------------------------------

    /// Leaves the cluster; the last node out removes the cluster's shared memory.
    ///
    /// Bounded: the plane is waited for at most [`Local::stall_bound`], and so is the
    /// order point for the release of this node's locks (the releases stop at the
    /// first `Error::Stalled`). Without the plane the node still leaves by the words
    /// it alone writes: it releases its locks, unlinks its receive memory and frees its
    /// slot (so `members()` drops it), but leaves the shared tables, the event ring and
    /// the cluster's files alone, since a joiner may hold the `flock`.
    pub(crate) fn leave(&self) {
        let g = self
            .plane()
            .map_err(|e| {
                tracing::warn!(
                    cluster = %self.local.cluster,
                    node = self.local.me.0,
                    error = %e,
                    "leaving without the control plane"
                )
            })
            .ok();
        let c = self.local.ctl();
        let (me, inc) = (self.local.me, self.local.incarnation);
        let s = &c.nodes[me.index()];
        // Puts back an incarnation word another member zeroed, so the node leaves as
        // itself (survivors see Left, not Failed); from here on a zeroed word is ours.
        let alive = self.local.check_alive().is_ok();
        self.local.leaving.store(true, Ordering::SeqCst);
        if alive
            && s.incarnation.load(Ordering::Acquire) == inc
            && s.state.load(Ordering::Acquire) == node_state::ALIVE
        {
            self.release_locks_of(me);
            if g.is_some() {
                self.drop_rx_everywhere(me, inc);
            } else {
                self.unlink_rx_of(me, inc);
            }
            s.incarnation.store(0, Ordering::Release);
            if g.is_some() {
                self.set_member(me, false);
                self.push_event(me, inc, EventKind::Left);
            }
            s.state.store(node_state::FREE, Ordering::Release);
        }
        if g.is_none() {
            return;
        }
        // A member whose process is gone (killed before anyone noticed) does not keep
        // the cluster's shared memory alive.
        let anyone = c.nodes.iter().enumerate().any(|(i, n)| {
            i != me.index()
                && n.state.load(Ordering::Acquire) != node_state::FREE
                && !self
                    .local
                    .vacant(NodeId(i as u16), n.incarnation.load(Ordering::Acquire))
        });
        if !anyone {
            for (i, e) in c.segs.iter().enumerate() {
                if e.state.load(Ordering::Acquire) == seg_state::LIVE {
                    let gen = e.generation.load(Ordering::Acquire);
                    for n in load_set(&e.rx_set).iter() {
                        let inc = c.nodes[n.index()].incarnation.load(Ordering::Acquire);
                        ShmMap::unlink(&self.local.rx_name(i as u32, gen, n, inc));
                    }
                    let cluster = &self.local.cluster;
                    ShmMap::unlink(&crate::local::perm_name(cluster, i as u32, gen));
                }
            }
            // Journal objects of nodes that died with no one left to clean up.
            for (n, s) in c.nodes.iter().enumerate() {
                if s.state.load(Ordering::Acquire) != node_state::FREE {
                    let inc = s.incarnation.load(Ordering::Acquire);
                    let node = NodeId(n as u16);
                    ShmMap::unlink(&crate::local::journal_name(&self.local.cluster, node, inc));
                }
            }
            // Presence locks of nodes that ended after they were cleaned up.
            let prefix = format!("memchan.{}.n", self.local.cluster);
            for e in std::fs::read_dir("/dev/shm")
                .into_iter()
                .flatten()
                .flatten()
            {
                let f = e.file_name().to_string_lossy().into_owned();
                if f.starts_with(&prefix) && f.ends_with(".live") && crate::presence::vacant(&f) {
                    ShmMap::unlink(&f);
                }
            }
            ShmMap::unlink(&crate::local::ctl_name(&self.local.cluster));
        }
        drop(g);
    }

    /// Waits until at least `n` nodes are members, asleep between membership events
    /// (every join, leave and failure posts the event notify pair; each sleep is cut to
    /// one heartbeat, so a wake-up another member swallowed costs latency only).
    pub(crate) fn wait_for_members(&self, n: usize, timeout: Duration) -> Result<()> {
        let c = self.local.ctl();
        let notify = Notify::new(&c.header.event_seq, &c.header.event_waiters);
        let deadline = Instant::now() + timeout;
        loop {
            let seen = notify.current();
            self.local.check_alive()?;
            if self.members().len() >= n {
                return Ok(());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Error::Timeout(timeout, "cluster members"));
            }
            notify.wait(seen, Some(left.min(self.local.heartbeat)), &SharedFutex);
        }
    }

    /// Header fields for status and tests.
    pub(crate) fn epoch(&self) -> u64 {
        self.local.ctl().header.epoch.load(Ordering::Acquire)
    }

    /// The failure-detection timing of the cluster (set by its first node, read and
    /// validated by this one when it joined).
    pub(crate) fn timing(&self) -> (Duration, Duration) {
        (self.local.heartbeat, self.local.failure_timeout)
    }
}

/// Spins before a barrier wait sleeps: short, since with more nodes than cores a
/// spinning waiter takes the core from the node it waits for (8 nodes on 2 cores: a
/// barrier took 570 us with 4000 spins, 100 us with 500).
const SPINS: u32 = 756;
/// How long a waiter on a crowded host goes on yielding after the last arrival it
/// saw, before it sleeps: longer than a barrier of 64 nodes on 2 cores takes while
/// all arrive (a few hundred microseconds), short enough that a late member costs
/// little CPU.
const YIELD_FOR: Duration = Duration::from_millis(2);

/// A yield that gave the core away for longer than this met a task that does not
/// yield (a busy loop beside the cluster): every further yield would hand it a whole
/// time slice, where a sleeper, once woken, preempts it.
const HOGGED: Duration = Duration::from_micros(500);
/// Yields of one wait that must meet such a task before the process stops yielding.
const HOGS: u32 = 2;
/// How long this process waits asleep, not yielding, after a yield met such a task.
const HOG_PAUSE: Duration = Duration::from_secs(10);

/// The monotonic time (ns since [`hog_epoch`]) before which this process does not
/// yield in a barrier wait; 0 at first.
static NO_YIELD_UNTIL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

fn hog_epoch() -> Instant {
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// Whether barrier waits of this process may yield now (see [`HOGGED`]).
fn yield_ok() -> bool {
    let until = NO_YIELD_UNTIL.load(std::sync::atomic::Ordering::Relaxed);
    until == 0 || hog_epoch().elapsed().as_nanos() as u64 >= until
}

/// Yields met a task that does not yield: sleep instead for [`HOG_PAUSE`].
fn hogged() {
    let until = (hog_epoch().elapsed() + HOG_PAUSE).as_nanos() as u64;
    NO_YIELD_UNTIL.store(until, std::sync::atomic::Ordering::Relaxed);
}

/// Whether a cluster of `members` nodes (all on this host) has more nodes than the
/// host has online cores: its barrier waits yield the core instead of spinning.
fn crowded(members: usize) -> bool {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    let cores = *CORES.get_or_init(|| {
        // SAFETY: sysconf has no memory preconditions.
        let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
        usize::try_from(n).unwrap_or(1).max(1)
    });
    members > cores
}

/// Longest barrier sleep: bounds how late a change nobody woke us for is noticed.
const SLEEP: Duration = Duration::from_millis(50);

/// This node's side of its barrier notify pair during one barrier: publishes its
/// barrier words and wakes the peers asleep on them.
///
/// A waiter increments the pair's waiter count, then looks at the word it waits on
/// (`wait_round`, `wait_all_arrived`); a publisher stores the word, then reads the
/// count: either we see the waiter and wake it, or it sees the word. Each side needs
/// a full barrier between its write and its read. On the publisher's side that
/// barrier would wait, on every barrier word, until the word's store has left the
/// core: a cross-core transfer on the critical path (a 2-node barrier cost about two
/// one-way latencies instead of one). So, in a process registered for `membarrier`
/// (`asym.rs`), the publisher has only a compiler fence and the waiter, about to
/// sleep, pays with `membarrier`. Otherwise the publisher's barrier is a
/// read-modify-write of the count, owed until this node's own wait goes to sleep or
/// the barrier ends ([`settle`](Self::settle), also on drop): the count's changes are
/// one total order, so either our RMW sees the waiter's increment, or the increment
/// reads from our RMW (a release after the word's store) and the waiter sees the
/// word. A waiter that registers meanwhile is woken at most one spin phase
/// (`SPINS`) late, and a barrier is never left with a wake-up owed.
struct Owed<'a> {
    slot: &'a NodeSlot,
    /// A word was published whose waiters are neither woken nor settled.
    pending: bool,
}

impl<'a> Owed<'a> {
    fn new(slot: &'a NodeSlot) -> Self {
        Owed {
            slot,
            pending: false,
        }
    }

    /// Publishes `w` as this node's barrier word of `scope`.
    fn publish(&mut self, scope: usize, w: u64) {
        let s = self.slot;
        s.barrier[scope].store(w, Ordering::Release);
        std::sync::atomic::compiler_fence(Ordering::SeqCst);
        if s.bar_waiters.load(Ordering::Relaxed) != 0 {
            self.wake();
        } else {
            self.pending = !crate::asym::registered();
        }
    }

    /// Settles what [`publish`](Self::publish) left owed: the waiter count read by a
    /// read-modify-write, and a wake if anyone waits.
    fn settle(&mut self) {
        if self.pending && self.slot.bar_waiters.fetch_add(0, Ordering::SeqCst) != 0 {
            self.wake();
        }
        self.pending = false;
    }

    /// Moves the sequence (a read-modify-write after the word's store: a waiter that
    /// reads the new sequence sees the word, one that read the old one does not
    /// sleep on it) and wakes the sleepers.
    fn wake(&mut self) {
        self.slot.bar_seq.fetch_add(1, Ordering::SeqCst);
        SharedFutex.wake(&self.slot.bar_seq);
        self.pending = false;
    }
}

impl Drop for Owed<'_> {
    fn drop(&mut self) {
        self.settle();
    }
}

/// How a dissemination round ended.
enum Round {
    /// The source did the round before: go on.
    Done,
    /// Every member has arrived: the barrier is over.
    AllArrived,
    /// The ranks cannot be trusted: wait for every member to arrive.
    Fallback,
}

/// What one round waits for.
struct RoundWait<'a> {
    src: NodeId,
    scope: usize,
    t: u64,
    tag: u64,
    need: u64,
    /// The members bitmap the ranks were taken from.
    bitmap: NodeSet,
    /// A 2-node barrier's peer word on their shared line.
    duo: Option<&'a memchan_core::sync::AtomicU64>,
}

/// Stores this node's arrival at `t` on the line it shares with `peer` (`DuoLine`),
/// before its own word: the peer spins on this one. Release, as the own word.
fn duo_publish(c: &Control, scope: usize, me: NodeId, peer: usize, t: u64, tag: u64) {
    c.duos[scope].0[duo::slot(me.index(), peer)]
        .store(duo::pack(t, me.index(), tag), Ordering::Release);
}

/// The barrier's stall bound: progress is a change in who is missing, or a missing
/// member's process at work (its CPU time grew: a member slow to reach the barrier is
/// not a failure, as through a hub, where its writes and requests count). The clocks
/// (start, last progress) start at the first slow wait, off the fast path.
struct Stall {
    clock: Option<(Instant, Instant)>,
    last: NodeSet,
    /// The missing members' CPU time when last looked at, once a bound passed.
    cpu: Option<u64>,
}

impl Stall {
    fn new() -> Self {
        Stall {
            clock: None,
            last: NodeSet::EMPTY,
            cpu: None,
        }
    }

    /// `cpu`: the missing members' CPU time so far (verified processes only).
    fn check(
        &mut self,
        local: &Local,
        missing: NodeSet,
        cpu: impl FnOnce(&NodeSet) -> u64,
    ) -> Result<()> {
        let bound = local.stall_bound();
        let (start, since) = *self.clock.get_or_insert_with(|| {
            let now = Instant::now();
            (now, now)
        });
        if missing != self.last {
            self.last = missing;
            self.cpu = None;
            self.clock = Some((start, Instant::now()));
            if start.elapsed() > bound * STALL_CAP {
                // Arrivals are words another member can fake: they extend the wait
                // only so far.
                return Err(local.stalled(
                    "barrier arrivals",
                    bound * STALL_CAP,
                    missing.iter().collect(),
                ));
            }
        } else if since.elapsed() > bound {
            // The kernel's count, not a word of the control block: a busy member
            // holds the barrier as long as it works, as it would in MPI.
            let now = cpu(&missing);
            let t = Instant::now();
            match self.cpu.replace(now) {
                // The first look only takes the count: the next comes a quarter bound
                // later, so an idle member is named after 1.25 bounds.
                None => self.clock = Some((start, t.checked_sub(bound * 3 / 4).unwrap_or(t))),
                Some(c) if c != now => self.clock = Some((start, t)),
                Some(_) => {
                    return Err(local.stalled("barrier arrivals", bound, missing.iter().collect()))
                }
            }
        }
        Ok(())
    }
}

/// What a barrier derives from its rank set: the tag, the dissemination's rounds
/// and each round's source, and whether the host is crowded. Kept per thread for
/// the last (node, members, ranks) seen, since it changes only with membership and
/// costs more than the rest of a barrier's own work (bit counts without `popcnt`
/// in the baseline x86-64 target, the tag's hash). It stays in the thread's cache:
/// a barrier takes its [`Head`] (two registers) and the round sources one at a
/// time: copying the whole plan out through memory stalled on store forwarding
/// (a 2-node barrier loop alone in one process: 25 -> 10 ns with the own-word
/// change of `Inner::bar_last`).
struct Plan {
    me: NodeId,
    bitmap: NodeSet,
    ranks: NodeSet,
    head: Head,
    /// The source of round k (ranks r - 2^k mod n), for the rounds there are.
    src: [NodeId; 8],
}

/// The part of a [`Plan`] a barrier needs at once: small enough to come back from
/// the thread-local cache in a register.
#[derive(Clone, Copy)]
struct Head {
    tag: u16,
    rounds: u8,
    crowd: bool,
}

thread_local! {
    static PLAN: std::cell::RefCell<Option<Plan>> = const { std::cell::RefCell::new(None) };
}

impl Plan {
    /// The head of the plan of `me` with the cluster's `bitmap` and rank set `ranks`
    /// (which holds `me`), computing and caching the plan when the key changed.
    #[inline(always)]
    fn head(me: NodeId, bitmap: &NodeSet, ranks: &NodeSet) -> Head {
        // Word by word: a vector compare of sets just stored word by word stalls on
        // store forwarding for longer than the rest of a barrier's own work.
        let same = |a: &NodeSet, b: &NodeSet| {
            a.0.iter()
                .zip(b.0.iter())
                .fold(0u64, |d, (x, y)| d | (std::hint::black_box(*x) ^ *y))
                == 0
        };
        let hit = PLAN.with_borrow(|p| match p {
            Some(p) if p.me == me && same(&p.bitmap, bitmap) && same(&p.ranks, ranks) => {
                Some(p.head)
            }
            _ => None,
        });
        if let Some(h) = hit {
            return h;
        }
        Self::compute(me, bitmap, ranks)
    }

    /// The source of round `k` of the plan [`head`](Self::head) last returned on
    /// this thread.
    #[inline(always)]
    fn src(k: u32) -> Option<NodeId> {
        PLAN.with_borrow(|p| p.as_ref().and_then(|p| p.src.get(k as usize).copied()))
    }

    #[cold]
    #[inline(never)]
    fn compute(me: NodeId, bitmap: &NodeSet, ranks: &NodeSet) -> Head {
        let n = ranks.len();
        let r = rank_of(ranks, me);
        let rounds = usize::BITS - (n - 1).leading_zeros();
        let mut src = [me; 8];
        for (k, s) in src.iter_mut().enumerate().take(rounds as usize) {
            *s = nth(ranks, (r + n - (1usize << k) % n) % n);
        }
        let head = Head {
            // 16 bits by construction; at most 8 rounds (256 nodes).
            tag: bar::tag_of(ranks) as u16,
            rounds: rounds as u8,
            crowd: crowded(bitmap.len()),
        };
        PLAN.with_borrow_mut(|c| {
            *c = Some(Plan {
                me,
                bitmap: *bitmap,
                ranks: *ranks,
                head,
                src,
            })
        });
        head
    }
}

/// The rank of `n` in `set` (members below it).
fn rank_of(set: &NodeSet, n: NodeId) -> usize {
    let (w, b) = (n.index() / 64, n.index() % 64);
    let below: usize = set.0[..w].iter().map(|x| x.count_ones() as usize).sum();
    below + (set.0[w] & ((1u64 << b) - 1)).count_ones() as usize
}

/// The member of `set` at rank `i` (`i < set.len()`).
fn nth(set: &NodeSet, mut i: usize) -> NodeId {
    for (w, &bits) in set.0.iter().enumerate() {
        let c = bits.count_ones() as usize;
        if i < c {
            let mut rest = bits;
            for _ in 0..i {
                rest &= rest - 1;
            }
            return NodeId((w * 64) as u16 + rest.trailing_zeros() as u16);
        }
        i -= c;
    }
    unreachable!("rank below the set's size")
}

#[cfg(test)]
mod tests {
    use crate::Node;
    use memchan_core::transport::Transport;
    use memchan_core::{Config, Error};
    use std::os::unix::fs::{MetadataExt, PermissionsExt};

    fn cluster(tag: &str) -> String {
        format!("ctl-{tag}-{}", std::process::id())
    }

    fn ctl_path(name: &str) -> String {
        format!("/dev/shm/memchan.{name}.ctl")
    }

    #[test]
    fn an_isolated_node_cannot_map_a_segment() {
        // Defect 10 of the 4c63486 probe: an isolated node's map_rx returned Ok.
        let name = cluster("isomap");
        let a = Node::join(&name, &Config::default()).unwrap();
        let b = Node::join(&name, &Config::default()).unwrap();
        use memchan_core::transport::SegmentOps;
        let seg = b.segment("s", 4096, 0o600).unwrap();
        a.inner
            .declare_failed(b.node_id(), b.inner.local.incarnation);
        assert!(!a.members().contains(b.node_id()));
        assert!(
            matches!(
                seg.map_rx_with(memchan_core::RxAttrs::default()),
                Err(Error::Isolated { .. })
            ),
            "map_rx of an isolated node"
        );
        assert!(matches!(
            seg.map_tx(
                memchan_core::Dest::Broadcast,
                memchan_core::TxAttrs::default()
            ),
            Err(Error::Isolated { .. })
        ));
        assert!(matches!(
            b.segment("t", 4096, 0o600),
            Err(Error::Isolated { .. })
        ));
    }

    fn refused(r: memchan_core::Result<Node>, why: &str) {
        match r {
            Err(Error::Invalid {
                what: "control block",
                why: w,
            }) => assert!(w.contains(why), "{w}"),
            Err(e) => panic!("expected a refused control block ({why}), got {e}"),
            Ok(_) => panic!("joined through a control block that must be refused ({why})"),
        }
    }

    #[test]
    fn a_new_cluster_and_its_lock_pages_are_owner_only() {
        let name = cluster("mode");
        let a = Node::join(&name, &Config::default()).unwrap();
        let _lock = a.lock("L").unwrap();
        let mut seen = 0;
        for e in std::fs::read_dir("/dev/shm").unwrap() {
            let e = e.unwrap();
            if e.file_name()
                .to_string_lossy()
                .starts_with(&format!("memchan.{name}."))
            {
                let mode = e.metadata().unwrap().permissions().mode() & 0o7777;
                assert_eq!(mode, 0o600, "{:?}", e.file_name());
                seen += 1;
            }
        }
        assert!(
            seen >= 2,
            "control block and the lock page's receive memory"
        );
    }

    #[test]
    fn a_symlinked_control_block_is_refused_and_its_target_untouched() {
        let name = cluster("link");
        let target = std::env::temp_dir().join(format!("memchan-link-target-{name}"));
        std::fs::write(&target, vec![0u8; 1 << 20]).unwrap();
        std::os::unix::fs::symlink(&target, ctl_path(&name)).unwrap();
        let r = Node::join(&name, &Config::default());
        let _ = std::fs::remove_file(ctl_path(&name));
        refused(r, "symbolic link");
        let after = std::fs::read(&target).unwrap();
        let _ = std::fs::remove_file(&target);
        assert!(
            after.iter().all(|&b| b == 0),
            "the link's target was written"
        );
    }

    #[test]
    fn a_control_block_squatted_by_another_uid_is_refused() {
        // Root-only: fails loudly rather than passing without having run.
        assert_eq!(
            rustix::process::geteuid().as_raw(),
            0,
            "needs root to chown the squatted file"
        );
        let name = cluster("squat");
        let path = ctl_path(&name);
        std::fs::write(&path, vec![0u8; 1 << 20]).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
        std::os::unix::fs::chown(&path, Some(65534), Some(65534)).unwrap();
        let r = Node::join(&name, &Config::default());
        let after = std::fs::read(&path).unwrap();
        let owner = std::fs::metadata(&path).unwrap().uid();
        let _ = std::fs::remove_file(&path);
        refused(r, "owned by uid 65534");
        assert_eq!(owner, 65534);
        assert!(
            after.iter().all(|&b| b == 0),
            "the squatted file was written"
        );
    }

    #[test]
    fn a_control_block_wider_than_agreed_is_refused() {
        let name = cluster("wide");
        let shared = Config {
            shm_mode: 0o666,
            ..Config::default()
        };
        let a = Node::join(&name, &shared).unwrap();
        let mode = std::fs::metadata(ctl_path(&name)).unwrap().mode() & 0o7777;
        assert_eq!(mode, 0o666);
        refused(Node::join(&name, &Config::default()), "wider");
        let b = Node::join(&name, &shared).unwrap();
        assert_ne!(a.node_id(), b.node_id());
    }

    #[test]
    fn another_uid_cannot_open_a_default_control_block() {
        // Root-only: fails loudly rather than passing without having run.
        assert_eq!(
            rustix::process::geteuid().as_raw(),
            0,
            "needs root to run a child as uid 65534"
        );
        use std::os::unix::process::CommandExt;
        let name = cluster("dac");
        let _a = Node::join(&name, &Config::default()).unwrap();
        // What attacks b1-c6 start with: open the control block for writing.
        let status = std::process::Command::new("sh")
            .arg("-c")
            .arg(format!("exec 3<>{}", ctl_path(&name)))
            .uid(65534)
            .gid(65534)
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
        assert!(!status.success(), "uid 65534 opened the control block");
    }
}
