//! A joined node's control plane: join, leave, segments, groups, membership events,
//! barrier, and the isolation of a failed node. Who the node is lives in `local.rs`;
//! the point of global order, which the control plane enters to change rx sets and to
//! release a dead node's locks, in `order.rs` (this module calls it, never the data
//! path in `tx.rs`).
//!
//! Control-plane changes hold the control block's `flock` (and an in-process mutex,
//! since `flock` does not exclude threads sharing one open file). The data path never
//! takes either.

use crate::control::{
    load_name, load_set, node_state, seg_state, store_name, store_set, Control, MAGIC,
    MAX_SEGMENTS, VERSION,
};
use crate::futex::SharedFutex;
use crate::local::{Local, SegRef};
use crate::order::{Order, Pidfds, Targets, Views};
use crate::rx::RxObject;
use crate::shm::{Open, ShmMap};
use memchan_core::notify::{Futex, Notify};
use memchan_core::sync::{fence, Ordering};
use memchan_core::{
    validate, Config, Error, GroupId, NodeId, NodeSet, PageSize, Result, MAX_NODES,
};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

pub use memchan_core::{EventKind, MembershipEvent};

/// A joined node, shared by its segments and mappings.
pub(crate) struct Inner {
    /// Who this node is, and its mapping of the control block.
    pub local: Local,
    /// The in-process half of the control-plane lock (see [`PlaneGuard`]).
    plane: Mutex<()>,
    /// Other nodes' receive memory mapped here, for the order point and tx mappings.
    views: Views,
    /// Verified pidfds of the other members (filled by the service thread).
    pub pidfds: Pidfds,
    /// Set on leave: tells the service thread to stop.
    pub stop: AtomicBool,
}

/// Holds the control plane: in-process mutex plus the control file's flock.
pub(crate) struct PlaneGuard<'a> {
    inner: &'a Inner,
    _m: MutexGuard<'a, ()>,
}

impl Drop for PlaneGuard<'_> {
    fn drop(&mut self) {
        let _ = rustix::fs::flock(
            self.inner.local.ctl_map().fd(),
            rustix::fs::FlockOperation::Unlock,
        );
    }
}

/// CLOCK_MONOTONIC in ns: shared by every process on the host, so heartbeats compare.
pub(crate) fn now_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// Whether process `pid` exists. EPERM (another user's process) means it does.
pub(crate) fn pid_alive(pid: u32) -> bool {
    match rustix::process::Pid::from_raw(pid as i32) {
        Some(p) => !matches!(
            rustix::process::test_kill_process(p),
            Err(rustix::io::Errno::SRCH)
        ),
        None => false,
    }
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

impl Inner {
    /// Joins (creating if needed) the cluster `name`.
    pub(crate) fn join(name: &str, cfg: &Config) -> Result<Arc<Inner>> {
        validate::cluster_name(name)?;
        cfg.validate()?;
        let file = crate::local::ctl_name(name);
        let len = std::mem::size_of::<Control>();
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
            rustix::fs::flock(ctl.fd(), rustix::fs::FlockOperation::LockExclusive)
                .map_err(|e| Error::os("flock control block", e))?;
            let linked = rustix::fs::fstat(ctl.fd())
                .map(|st| st.st_nlink > 0)
                .unwrap_or(false);
            if !linked || ctl.len() < len {
                // The last node removed this cluster between our open and our lock.
                let _ = rustix::fs::flock(ctl.fd(), rustix::fs::FlockOperation::Unlock);
                std::thread::sleep(Duration::from_millis(1));
                continue;
            }
            return Self::join_locked(name, ctl, cfg);
        }
        Err(Error::Invalid {
            what: "cluster",
            why: format!("could not open the control block of `{name}`"),
        })
    }

    fn join_locked(name: &str, ctl: ShmMap, cfg: &Config) -> Result<Arc<Inner>> {
        let unlock = |ctl: &ShmMap| {
            let _ = rustix::fs::flock(ctl.fd(), rustix::fs::FlockOperation::Unlock);
        };
        // SAFETY: the mapping is at least size_of::<Control>() bytes (checked by the
        // caller), page-aligned, and `Control` is only atomics; it lives in `ctl`.
        let c: &Control = unsafe { &*(ctl.ptr() as *const Control) };
        let h = &c.header;
        let page = if h.magic.load(Ordering::Acquire) == 0 {
            let page = cfg.page_size.unwrap_or_default();
            // We hold the flock and the magic is 0: the magic's Release store below
            // publishes these to every later joiner.
            h.version.store(VERSION, Ordering::Relaxed);
            h.page_size.store(page.bytes() as u32, Ordering::Relaxed);
            h.heartbeat_ns
                .store(cfg.heartbeat.as_nanos() as u64, Ordering::Relaxed);
            h.failure_timeout_ns
                .store(cfg.failure_timeout.as_nanos() as u64, Ordering::Relaxed);
            h.created_ns.store(now_ns(), Ordering::Relaxed);
            h.magic.store(MAGIC, Ordering::Release);
            page
        } else {
            let version = h.version.load(Ordering::Relaxed);
            if h.magic.load(Ordering::Acquire) != MAGIC || version != VERSION {
                unlock(&ctl);
                return Err(Error::VersionMismatch {
                    cluster: name.to_string(),
                    found: version,
                    expected: VERSION,
                });
            }
            let existing = h.page_size.load(Ordering::Relaxed) as usize;
            if let Some(want) = cfg.page_size {
                if want.bytes() != existing {
                    unlock(&ctl);
                    return Err(Error::PageSizeMismatch {
                        cluster: name.to_string(),
                        existing,
                        requested: want.bytes(),
                    });
                }
            }
            PageSize::from_bytes(existing).ok_or_else(|| Error::VersionMismatch {
                cluster: name.to_string(),
                found: version,
                expected: VERSION,
            })?
        };
        let uid = rustix::process::geteuid().as_raw();
        let gid = rustix::process::getegid().as_raw();
        let Some(slot_idx) = c
            .nodes
            .iter()
            .position(|s| s.state.load(Ordering::Acquire) == node_state::FREE)
        else {
            unlock(&ctl);
            return Err(Error::TableFull("node"));
        };
        let incarnation = h.incarnations.fetch_add(1, Ordering::AcqRel) + 1;
        let inner = Arc::new(Inner {
            local: Local::new(
                name.to_string(),
                ctl,
                NodeId(slot_idx as u16),
                incarnation,
                page,
                uid,
                gid,
            ),
            plane: Mutex::new(()),
            views: Views::new(),
            pidfds: Pidfds::new(),
            stop: AtomicBool::new(false),
        });
        {
            let s = &c.nodes[slot_idx];
            s.pid.store(std::process::id(), Ordering::Relaxed);
            s.uid.store(uid, Ordering::Relaxed);
            s.gid.store(gid, Ordering::Relaxed);
            s.incarnation.store(incarnation, Ordering::Relaxed);
            s.heartbeat_ns.store(now_ns(), Ordering::Relaxed);
            s.isolated_epoch.store(0, Ordering::Relaxed);
            // Start barrier counts level with the live members so the next barrier
            // lines up with theirs.
            for scope in 0..s.barrier.len() {
                let top = c
                    .nodes
                    .iter()
                    .filter(|o| o.state.load(Ordering::Acquire) == node_state::ALIVE)
                    .map(|o| o.barrier[scope].load(Ordering::Acquire))
                    .max()
                    .unwrap_or(0);
                s.barrier[scope].store(top, Ordering::Relaxed);
            }
            s.state.store(node_state::ALIVE, Ordering::Release);
            inner.set_member(inner.local.me, true);
            // Dead nodes nobody has cleaned up yet (the survivors have not looked, or
            // the whole cluster crashed) are reaped now that this node is alive: the
            // ordered writes that release their locks are sent as this node.
            for n in 0..MAX_NODES {
                let o = &c.nodes[n];
                if o.state.load(Ordering::Acquire) == node_state::ALIVE
                    && !pid_alive(o.pid.load(Ordering::Relaxed))
                {
                    let inc = o.incarnation.load(Ordering::Relaxed);
                    if inner.mark_failed(NodeId(n as u16)) {
                        inner.order().recover(NodeId(n as u16));
                        inner.cleanup_failed(NodeId(n as u16), inc);
                    }
                }
            }
            let epoch = inner.push_event(inner.local.me, incarnation, EventKind::Joined);
            s.joined_epoch.store(epoch, Ordering::Relaxed);
        }
        unlock(inner.local.ctl_map());
        Ok(inner)
    }

    pub(crate) fn plane(&self) -> PlaneGuard<'_> {
        let m = self.plane.lock().unwrap_or_else(|p| p.into_inner());
        loop {
            match rustix::fs::flock(
                self.local.ctl_map().fd(),
                rustix::fs::FlockOperation::LockExclusive,
            ) {
                Ok(()) => break,
                Err(rustix::io::Errno::INTR) => continue,
                // Only a bad descriptor or a kernel out of lock records gets here.
                Err(e) => panic!(
                    "flock on the control block of `{}`: {e}",
                    self.local.cluster
                ),
            }
        }
        PlaneGuard { inner: self, _m: m }
    }

    /// This node's side of the point of global order.
    pub(crate) fn order(&self) -> Order<'_> {
        Order::new(&self.local, &self.views, &self.pidfds)
    }

    /// Live members.
    pub(crate) fn members(&self) -> NodeSet {
        load_set(&self.local.ctl().header.members)
    }

    pub(crate) fn is_member(&self, n: NodeId) -> bool {
        n.index() < MAX_NODES
            && self.local.ctl().nodes[n.index()]
                .state
                .load(Ordering::Acquire)
                == node_state::ALIVE
    }

    fn push_event(&self, node: NodeId, incarnation: u64, kind: EventKind) -> u64 {
        let c = self.local.ctl();
        let epoch = c.header.epoch.fetch_add(1, Ordering::AcqRel) + 1;
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
        ring.head.store(head + 1, Ordering::Release);
        Notify::new(&c.header.event_seq, &c.header.event_waiters).post(&SharedFutex);
        epoch
    }

    /// Number of membership events written so far (a cursor for [`next_event`]).
    pub(crate) fn event_head(&self) -> u64 {
        self.local.ctl().events.head.load(Ordering::Acquire)
    }

    /// The event at `cursor`, waiting up to `timeout` for it. Events older than the ring
    /// are skipped (the cursor moves to the oldest kept).
    pub(crate) fn next_event(
        &self,
        cursor: &mut u64,
        timeout: Option<Duration>,
    ) -> Option<MembershipEvent> {
        let c = self.local.ctl();
        let ring = &c.events;
        let notify = Notify::new(&c.header.event_seq, &c.header.event_waiters);
        let deadline = timeout.map(|t| std::time::Instant::now() + t);
        loop {
            let seen = notify.current();
            let head = ring.head.load(Ordering::Acquire);
            let n = ring.events.len() as u64;
            if head > *cursor {
                *cursor = (*cursor).max(head.saturating_sub(n));
                let at = *cursor;
                *cursor += 1;
                match ring.events[(at % n) as usize].read(at) {
                    Some(ev) => return Some(ev),
                    // Event `at` was published (head passed it) and is gone: overwritten
                    // by a later one (or forged). Skip it, as the ring skips every event
                    // older than it keeps; never wait on the slot, whose writer may have
                    // died half-way.
                    None => continue,
                }
            }
            let left = match deadline {
                Some(d) => {
                    let l = d.saturating_duration_since(std::time::Instant::now());
                    if l.is_zero() {
                        return None;
                    }
                    Some(l)
                }
                None => None,
            };
            notify.wait(seen, left, &SharedFutex);
        }
    }

    /// Declares `node` (incarnation `inc`) failed and isolates it, unless another
    /// survivor already did. Returns whether this call did it.
    pub(crate) fn declare_failed(&self, node: NodeId, inc: u64) -> bool {
        if self.local.ctl().nodes[node.index()]
            .incarnation
            .load(Ordering::Acquire)
            != inc
            || !self.mark_failed(node)
        {
            return false;
        }
        // Finish its ordered packet before taking the plane: a plane holder may be
        // queued behind it at the order point.
        self.order().recover(node);
        let _g = self.plane();
        self.cleanup_failed(node, inc);
        true
    }

    /// ALIVE -> FAILED; true for the one caller that made the change.
    fn mark_failed(&self, node: NodeId) -> bool {
        self.local.ctl().nodes[node.index()]
            .state
            .compare_exchange(
                node_state::ALIVE,
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

    /// Removes `node` from every segment's rx set and deletes its receive memory.
    /// Every segment's `rx_gen` moves, also where `node` mapped nothing: that is how
    /// the node's own direct-deposit path learns, at its next write, to re-check
    /// whether it may still send (see `TxMapping::deposit`).
    fn drop_rx_everywhere(&self, node: NodeId, inc: u64) {
        let c = self.local.ctl();
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

    /// Writes 0 into `node`'s bid slot of every cluster lock, so a lock it held is free.
    ///
    /// Not while `node` still holds the order point (a failed holder whose death could
    /// not be confirmed, see `Order::recover`): each release is an ordered write that
    /// would wait for the point until it times out, here on the service thread, which
    /// stamps no heartbeat meanwhile. Its locks then stay set.
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
            if let Some(segref) = self.local.seg_by_index(i as u32, gen) {
                let dests = load_set(&seg.rx_set);
                let mut targets = Targets::new();
                let _ =
                    self.order()
                        .ordered_packet(&segref, &dests, &mut targets, node.index(), &[0]);
            }
        }
    }

    fn release_barrier_waiters(&self) {
        let h = &self.local.ctl().header;
        Notify::new(&h.barrier_seq, &h.barrier_waiters).post(&SharedFutex);
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
        let _g = self.plane();
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
                    .seg_by_index(i as u32, gen)
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
        let gen = e.generation.fetch_add(1, Ordering::AcqRel) + 1;
        store_name(&e.name, name);
        e.size
            .store(self.local.page.round_up(size) as u64, Ordering::Relaxed);
        e.mode.store(mode, Ordering::Relaxed);
        e.uid.store(self.local.uid, Ordering::Relaxed);
        e.gid.store(self.local.gid, Ordering::Relaxed);
        e.flags.store(flags, Ordering::Relaxed);
        store_set(&e.rx_set, &NodeSet::EMPTY);
        e.rx_gen.fetch_add(1, Ordering::AcqRel);
        e.state.store(seg_state::LIVE, Ordering::Release);
        Ok(self
            .local
            .seg_by_index(i as u32, gen)
            .expect("just created"))
    }

    /// Checks the caller's permission (`want`: 4 read, 2 write) on a segment.
    pub(crate) fn check_perm(&self, seg: &SegRef, want: u32, op: &'static str) -> Result<()> {
        let e = &self.local.ctl().segs[seg.idx as usize];
        let (uid, gid, mode) = (
            e.uid.load(Ordering::Relaxed),
            e.gid.load(Ordering::Relaxed),
            e.mode.load(Ordering::Relaxed),
        );
        memchan_core::perm::check(
            (self.local.uid, self.local.gid),
            (uid, gid, mode),
            want,
            &seg.name,
            op,
        )
    }

    /// Frees a segment: only its owner (or root) may.
    pub(crate) fn free_segment(&self, seg: &SegRef) -> Result<()> {
        let _g = self.plane();
        let e = &self.local.ctl().segs[seg.idx as usize];
        if self.local.seg_by_index(seg.idx, seg.generation).is_none() {
            return Err(Error::SegmentFreed {
                segment: seg.name.clone(),
            });
        }
        let owner = e.uid.load(Ordering::Relaxed);
        if self.local.uid != 0 && self.local.uid != owner {
            return Err(Error::PermissionDenied {
                segment: seg.name.clone(),
                op: "free",
                uid: owner,
                gid: e.gid.load(Ordering::Relaxed),
                mode: e.mode.load(Ordering::Relaxed),
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
        Ok(())
    }

    /// Adds this node to the segment's rx set (under the order point, so no ordered
    /// packet is half-delivered across the change). For lock pages the new copy starts
    /// as a copy of an existing one, so a late bidder sees the current holder.
    pub(crate) fn attach_rx(&self, seg: &SegRef, obj: &RxObject) -> Result<()> {
        let _g = self.plane();
        let c = self.local.ctl();
        let e = &c.segs[seg.idx as usize];
        if self.local.seg_by_index(seg.idx, seg.generation).is_none() {
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
        self.order().enter()?;
        if e.flags.load(Ordering::Relaxed) & seg_state::FLAG_LOCK != 0 {
            if let Some(src) = set
                .iter()
                .find_map(|n| self.order().view(seg, n).ok().flatten())
            {
                // Through a private buffer: both sides are receive memory, which other
                // processes reach (the copy runs under the order point, so no ordered
                // write changes it meanwhile).
                let mut page = vec![0u8; seg.size];
                // SAFETY: `src` maps `seg.size` bytes and is reached only through atomics.
                unsafe { memchan_core::packet::load(src.data(), &mut page) };
                // SAFETY: as above, for `obj`.
                unsafe { memchan_core::packet::store(obj.data(), &page) };
            }
        }
        set.insert(self.local.me);
        store_set(&e.rx_set, &set);
        e.rx_gen.fetch_add(1, Ordering::AcqRel);
        self.order().leave();
        Ok(())
    }

    /// Removes this node from the segment's rx set and deletes its receive memory.
    pub(crate) fn detach_rx(&self, seg: &SegRef) {
        let _g = self.plane();
        let e = &self.local.ctl().segs[seg.idx as usize];
        if self.local.seg_by_index(seg.idx, seg.generation).is_some() {
            let mut set = load_set(&e.rx_set);
            set.remove(self.local.me);
            store_set(&e.rx_set, &set);
            e.rx_gen.fetch_add(1, Ordering::AcqRel);
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
        let _g = self.plane();
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
        let _g = self.plane();
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
    pub(crate) fn barrier(&self, scope: usize, group: Option<NodeSet>) -> Result<()> {
        self.local.check_alive()?;
        let c = self.local.ctl();
        let h = &c.header;
        let mine = &c.nodes[self.local.me.index()].barrier[scope];
        let target = mine.load(Ordering::Relaxed) + 1;
        // Release: every earlier write of this node is visible to whoever sees the
        // arrival (on one host each write is applied when it returns).
        mine.store(target, Ordering::Release);
        // Wake sleepers only; spinning peers see the store itself. Store, fence, load
        // on both sides: either we see a waiter, or it sees our arrival below.
        fence(Ordering::SeqCst);
        if h.barrier_waiters.load(Ordering::SeqCst) != 0 {
            h.barrier_seq.fetch_add(1, Ordering::SeqCst);
            SharedFutex.wake(&h.barrier_seq);
        }
        let arrived = || {
            let mut scope_set = load_set(&h.members);
            if let Some(g) = group {
                scope_set = scope_set.intersect(&g);
            }
            scope_set.remove(self.local.me);
            scope_set
                .iter()
                .all(|n| c.nodes[n.index()].barrier[scope].load(Ordering::Acquire) >= target)
        };
        let mut spins = 0u32;
        loop {
            if arrived() {
                return Ok(());
            }
            spins += 1;
            if spins.is_multiple_of(64) {
                self.local.check_alive()?;
            }
            if spins < 4000 {
                std::hint::spin_loop();
                continue;
            }
            let seen = h.barrier_seq.load(Ordering::SeqCst);
            h.barrier_waiters.fetch_add(1, Ordering::SeqCst);
            fence(Ordering::SeqCst);
            if !arrived() {
                // The timeout only bounds how late a membership change is noticed.
                SharedFutex.wait(&h.barrier_seq, seen, Some(Duration::from_millis(50)));
            }
            h.barrier_waiters.fetch_sub(1, Ordering::SeqCst);
        }
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
    pub(crate) fn leave(&self) {
        self.stop.store(true, Ordering::Release);
        let g = self.plane();
        let c = self.local.ctl();
        let s = &c.nodes[self.local.me.index()];
        if s.incarnation.load(Ordering::Acquire) == self.local.incarnation
            && s.state.load(Ordering::Acquire) == node_state::ALIVE
        {
            self.release_locks_of(self.local.me);
            self.drop_rx_everywhere(self.local.me, self.local.incarnation);
            s.incarnation.store(0, Ordering::Release);
            self.set_member(self.local.me, false);
            self.push_event(self.local.me, self.local.incarnation, EventKind::Left);
            s.state.store(node_state::FREE, Ordering::Release);
        }
        // A member whose process is gone (killed before anyone noticed) does not keep
        // the cluster's shared memory alive.
        let anyone = c.nodes.iter().any(|n| {
            n.state.load(Ordering::Acquire) != node_state::FREE
                && pid_alive(n.pid.load(Ordering::Relaxed))
        });
        if !anyone {
            for (i, e) in c.segs.iter().enumerate() {
                if e.state.load(Ordering::Acquire) == seg_state::LIVE {
                    let gen = e.generation.load(Ordering::Acquire);
                    for n in load_set(&e.rx_set).iter() {
                        let inc = c.nodes[n.index()].incarnation.load(Ordering::Acquire);
                        ShmMap::unlink(&self.local.rx_name(i as u32, gen, n, inc));
                    }
                }
            }
            ShmMap::unlink(&crate::local::ctl_name(&self.local.cluster));
        }
        drop(g);
    }

    /// Waits until at least `n` nodes are members, asleep between membership events
    /// (every join, leave and failure posts the event notify pair).
    pub(crate) fn wait_for_members(&self, n: usize, timeout: Duration) -> Result<()> {
        let c = self.local.ctl();
        let notify = Notify::new(&c.header.event_seq, &c.header.event_waiters);
        let deadline = std::time::Instant::now() + timeout;
        loop {
            let seen = notify.current();
            self.local.check_alive()?;
            if self.members().len() >= n {
                return Ok(());
            }
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return Err(Error::Timeout(timeout, "cluster members"));
            }
            notify.wait(seen, Some(left), &SharedFutex);
        }
    }

    /// Header fields for status and tests.
    pub(crate) fn epoch(&self) -> u64 {
        self.local.ctl().header.epoch.load(Ordering::Acquire)
    }

    /// The failure-detection timing of the cluster (set by its first node).
    pub(crate) fn timing(&self) -> (Duration, Duration) {
        let h = &self.local.ctl().header;
        (
            Duration::from_nanos(h.heartbeat_ns.load(Ordering::Relaxed)),
            Duration::from_nanos(h.failure_timeout_ns.load(Ordering::Relaxed)),
        )
    }
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
