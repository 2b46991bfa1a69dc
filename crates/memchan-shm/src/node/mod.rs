//! A joined node's control plane: join and leave here; the control-plane lock in
//! `plane`, segments and rx attachment in `segment`, groups in `group`, membership
//! events and the isolation of a failed node in `membership`, the barrier in
//! `barrier`. Who the node is lives in `local.rs`;
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

use crate::clock::now_ns;
use crate::control::{
    duo, load_name, load_set, node_state, seg_state, store_name, store_set, Control, NodeSlot,
    BARRIER_SCOPES, MAGIC, MAX_SEGMENTS, VERSION,
};
use crate::futex::SharedFutex;
use crate::local::{stall_bound, Local, Params, SegRef, STALL_CAP};
use crate::order::{Order, Pidfds, Targets, Views};
use crate::perm::SegPerm;
use crate::rx::RxObject;
use crate::shm::{Open, ShmMap};
use memchan_core::barrier as bar;
use memchan_core::event::SlotMiss;
use memchan_core::membership::{depart, Cause, Departed};
use memchan_core::notify::{Futex, Notify};
use memchan_core::sync::Ordering;
use memchan_core::{
    validate, Config, Error, GroupId, NodeId, NodeSet, PageSize, Result, MAX_NODES,
};
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64};
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use memchan_core::{EventKind, MembershipEvent};

use plane::{lock_plane, plane_notify, unlock_plane, PlaneGuard, PlaneMutex, PLANE};

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
    /// [`bar::word`]; rounds 0 after a join or a barrier without rounds, else 1): kept here
    /// rather than read back from its barrier word, because a load of the line a
    /// peer spins on, just before the store to it, costs a second cache-line
    /// transfer on the barrier's critical path. Its tag goes out with the next
    /// arrival before that barrier's plan is looked up (`Inner::barrier`).
    bar_last: [AtomicU64; BARRIER_SCOPES],
    /// The peer of the last barrier per scope if it had two nodes (id + 1; 0 = it
    /// had not): that barrier's early arrival goes to their [`DuoLine`] too.
    duo_last: [AtomicU32; BARRIER_SCOPES],
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
        let timing = cfg
            .clone()
            .with_heartbeat(Duration::from_nanos(h.heartbeat_ns.load(Ordering::Acquire)))
            .with_failure_timeout(Duration::from_nanos(
                h.failure_timeout_ns.load(Ordering::Acquire),
            ));
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
                let top = bar::level(members.iter().map(|o| {
                    bar::word::number(c.nodes[o.index()].barrier[scope].load(Ordering::Acquire))
                }));
                s.barrier[scope].store(bar::word::joiner(top), Ordering::Relaxed);
                inner.bar_last[scope].store(bar::word::joiner(top), Ordering::Relaxed);
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
        plane::take(&self.local, &self.plane)
    }

    /// This node's side of the point of global order.
    pub(crate) fn order(&self) -> Order<'_> {
        Order::new(&self.local, &self.views, &self.pidfds)
    }

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
            // Its own release, while the order point still takes its writes: the
            // departure's step that clears a failed node's locks skips a leaver.
            self.release_locks_of(me);
            if g.is_some() {
                let gone = Departed {
                    node: me,
                    incarnation: inc,
                    cause: Cause::Left,
                };
                depart(&mut membership::Cleanup(self), &gone);
            } else {
                // Without the plane only by the words it alone writes: the rx sets, the
                // members bitmap and the event ring may be a joiner's under the flock.
                self.unlink_rx_of(me, inc);
                s.incarnation.store(0, Ordering::Release);
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

    /// The failure-detection timing of the cluster (set by its first node, read and
    /// validated by this one when it joined).
    pub(crate) fn timing(&self) -> (Duration, Duration) {
        (self.local.heartbeat, self.local.failure_timeout)
    }
}

mod barrier;
mod group;
mod membership;
mod plane;
mod segment;
#[cfg(test)]
mod tests;
