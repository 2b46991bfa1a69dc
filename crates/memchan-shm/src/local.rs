//! This node's place in its cluster: the control block mapped in this process, the
//! node's id, incarnation and effective uid there, and the cluster's parameters (page
//! size, heartbeat, failure timeout) as validated at join and kept here; with the reads
//! every layer makes of them (may this node still send, which segment is at a table
//! index, what its receive memory, permission objects and journal objects are called,
//! how long to wait for another party), and this node's own journal object.
//!
//! A leaf: the control plane (`node.rs`), the point of global order (`order.rs`) and
//! the data path (`tx.rs`, `mapping.rs`) all read it, and it calls none of them (only
//! the leaves `perm.rs` and `record.rs`, whose objects it holds).

use crate::control::{load_name, node_state, seg_state, Control};
use crate::perm::SegPerm;
use crate::record::JournalObject;
use crate::shm::ShmMap;
use memchan_core::sync::{AtomicU64, Ordering};
use memchan_core::{validate, Error, NodeId, PageSize, Result};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

/// Identifies one live segment (index + generation) for the data path, with its
/// permission object held open (who owns it and what others may do: `perm.rs`).
#[derive(Debug, Clone)]
pub(crate) struct SegRef {
    pub idx: u32,
    pub generation: u32,
    pub size: usize,
    pub name: String,
    pub perm: Arc<SegPerm>,
}

/// The shared-memory name of cluster `cluster`'s control block (under `/dev/shm`).
pub(crate) fn ctl_name(cluster: &str) -> String {
    format!("memchan.{cluster}.ctl")
}

/// The shared-memory name of the receive memory of `node` (incarnation `inc`) for
/// segment `seg` at generation `gen` of cluster `cluster`.
pub(crate) fn rx_name(cluster: &str, seg: u32, gen: u32, node: NodeId, inc: u64) -> String {
    format!("memchan.{cluster}.s{seg}.g{gen}.n{}.i{inc}", node.0)
}

/// The shared-memory name of the permission object of segment `seg` at generation
/// `gen` of cluster `cluster` (`perm.rs`).
pub(crate) fn perm_name(cluster: &str, seg: u32, gen: u32) -> String {
    format!("memchan.{cluster}.s{seg}.g{gen}.perm")
}

/// The shared-memory name of the journal object of `node` (incarnation `inc`) of
/// cluster `cluster` (`record.rs`).
pub(crate) fn journal_name(cluster: &str, node: NodeId, inc: u64) -> String {
    format!("memchan.{cluster}.n{}.i{inc}.journal", node.0)
}

/// The cluster's parameters as a node read and validated them when it joined; the
/// header words they came from are never read again.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Params {
    pub page: PageSize,
    pub heartbeat: Duration,
    pub failure_timeout: Duration,
}

/// How many failure timeouts a node waits for another party (the holder of the
/// control file's `flock` or of the order point, a barrier's missing members) to make
/// progress before it gives up with `Error::Stalled`.
pub(crate) const STALL_TIMEOUTS: u32 = 25;
/// The least of that bound, so that a tiny failure timeout on a busy machine does not
/// turn a descheduled holder into an error.
pub(crate) const MIN_STALL: Duration = Duration::from_secs(1);

/// A wait that keeps seeing progress (a busy order point, barrier members arriving one
/// by one) still ends after this many stall bounds in all: progress is words another
/// member can fake.
pub(crate) const STALL_CAP: u32 = 4;

/// The stall bound for a cluster with failure timeout `ft` (see [`STALL_TIMEOUTS`]).
pub(crate) fn stall_bound(ft: Duration) -> Duration {
    ft.saturating_mul(STALL_TIMEOUTS).max(MIN_STALL)
}

/// The name of node `node`'s (incarnation `inc`) presence lock (`presence.rs`).
pub(crate) fn live_name(cluster: &str, node: NodeId, inc: u64) -> String {
    format!("memchan.{cluster}.n{}.i{inc}.live", node.0)
}

/// The name of the memfd that node `node` (incarnation `inc`) of cluster `cluster`
/// keeps mapped as its presence mark (see `ShmMap::memfd`).
pub(crate) fn presence_name(cluster: &str, node: NodeId, inc: u64) -> String {
    format!("memchan.{cluster}.n{}.i{inc}", node.0)
}

/// A joined node's identity and its mapping of the control block.
pub(crate) struct Local {
    pub cluster: String,
    ctl: ShmMap,
    /// This node's presence mark, kept mapped for its lifetime.
    _presence: ShmMap,
    /// This node's presence lock, held for its lifetime.
    _live: crate::presence::PresenceLock,
    pub me: NodeId,
    pub incarnation: u64,
    pub page: PageSize,
    pub heartbeat: Duration,
    pub failure_timeout: Duration,
    pub uid: u32,
    /// The epoch of this node's join (0 until its Joined event is out).
    pub joined_epoch: AtomicU64,
    /// Set when this node starts to leave: from then on a zeroed incarnation word is
    /// its own doing, not another member's (see [`check_alive`](Self::check_alive)).
    pub leaving: AtomicBool,
    /// Times this node put back its own incarnation word after another member zeroed it.
    pub repaired: std::sync::atomic::AtomicU64,
    /// Journal records this node's recoveries discarded as impossible or unauthorised
    /// (`Order::recover`).
    pub discarded: std::sync::atomic::AtomicU64,
    /// Destinations this node refused to deliver to: their receive memory belongs to a
    /// uid that may not read the segment (`Order::view`).
    pub denied: std::sync::atomic::AtomicU64,
    /// Receive memory this node mapped while it held the order point (`Order::lookup`):
    /// only an ordered packet whose rx sets kept changing does (`MAP_TRIES`).
    pub maps_held: std::sync::atomic::AtomicU64,
    /// This node's journal object, made on its first ordered packet (`Local::journal`).
    journal: OnceLock<JournalObject>,
    journal_made: Mutex<()>,
}

impl Local {
    /// `ctl` must map a whole, initialised `Control` (as `Inner::join` checks).
    pub(crate) fn new(
        cluster: String,
        ctl: ShmMap,
        (presence, live): (ShmMap, crate::presence::PresenceLock),
        me: NodeId,
        incarnation: u64,
        params: Params,
        uid: u32,
    ) -> Local {
        assert!(ctl.len() >= std::mem::size_of::<Control>());
        Local {
            cluster,
            ctl,
            _presence: presence,
            _live: live,
            me,
            incarnation,
            page: params.page,
            heartbeat: params.heartbeat,
            failure_timeout: params.failure_timeout,
            uid,
            joined_epoch: AtomicU64::new(0),
            leaving: AtomicBool::new(false),
            repaired: std::sync::atomic::AtomicU64::new(0),
            discarded: std::sync::atomic::AtomicU64::new(0),
            denied: std::sync::atomic::AtomicU64::new(0),
            maps_held: std::sync::atomic::AtomicU64::new(0),
            journal: OnceLock::new(),
            journal_made: Mutex::new(()),
        }
    }

    /// How long this node waits for another party before `Error::Stalled`.
    /// Whether no process holds member `node`'s (incarnation `inc`) presence lock: it
    /// is gone, whatever its slot's words say (`presence::vacant`).
    pub(crate) fn vacant(&self, node: NodeId, inc: u64) -> bool {
        crate::presence::vacant(&live_name(&self.cluster, node, inc))
    }

    pub(crate) fn stall_bound(&self) -> Duration {
        stall_bound(self.failure_timeout)
    }

    /// The typed error of a wait on `what` that made no progress for `waited`.
    pub(crate) fn stalled(
        &self,
        what: &'static str,
        waited: Duration,
        nodes: Vec<NodeId>,
    ) -> Error {
        Error::Stalled {
            cluster: self.cluster.clone(),
            what,
            waited,
            nodes,
        }
    }

    /// This node's journal object, created on first use (not under the order point:
    /// creating it maps memory).
    #[inline]
    pub(crate) fn journal(&self) -> Result<&JournalObject> {
        if let Some(j) = self.journal.get() {
            return Ok(j);
        }
        // One creator: a second `create` would remove the first one's object.
        let _g = self.journal_made.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(j) = self.journal.get() {
            return Ok(j);
        }
        let j = JournalObject::create(&journal_name(&self.cluster, self.me, self.incarnation))?;
        Ok(self.journal.get_or_init(|| j))
    }

    /// The control block.
    pub(crate) fn ctl(&self) -> &Control {
        // SAFETY: `join` checked the mapping holds a whole `Control`; it lives as long
        // as `self`; every field is an atomic or a header field fixed before `magic`.
        unsafe { &*(self.ctl.ptr() as *const Control) }
    }

    /// The control block's mapping (its descriptor carries the control plane's flock).
    pub(crate) fn ctl_map(&self) -> &ShmMap {
        &self.ctl
    }

    /// Whether this node may still send: its slot still carries its incarnation (a
    /// failed or departed node's slot is zeroed, a reused one carries another).
    #[inline(always)]
    pub(crate) fn check_alive(&self) -> Result<()> {
        let s = &self.ctl().nodes[self.me.index()];
        if s.incarnation.load(Ordering::Relaxed) == self.incarnation {
            Ok(())
        } else {
            self.not_alive()
        }
    }

    /// The slow half of [`check_alive`](Self::check_alive): isolated, or a slot that
    /// another member overwrote.
    ///
    /// No memchan path leaves a node's slot ALIVE with incarnation 0: an isolation marks
    /// the slot FAILED before it zeroes the word, and a leave zeroes its own. So a
    /// zeroed word under ALIVE is another member's write, not an isolation; the node
    /// puts its incarnation back (by CAS, and gives it back to an isolation that began
    /// meanwhile) and moves every segment's `rx_gen`, so senders that skipped it while
    /// the word was zero resolve it again.
    #[cold]
    #[inline(never)]
    pub(crate) fn not_alive(&self) -> Result<()> {
        let c = self.ctl();
        let s = &c.nodes[self.me.index()];
        let mine = || {
            !self.leaving.load(Ordering::SeqCst)
                && s.state.load(Ordering::SeqCst) == node_state::ALIVE
        };
        if mine()
            && s.incarnation
                .compare_exchange(0, self.incarnation, Ordering::SeqCst, Ordering::SeqCst)
                .is_ok()
        {
            // Checked again: a leave (which zeroes the word itself) or an isolation may
            // have begun between the first check and the CAS.
            if mine() {
                self.repaired
                    .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                tracing::warn!(
                    cluster = %self.cluster,
                    node = self.me.0,
                    "another member zeroed this node's incarnation word; put it back"
                );
                for e in &c.segs {
                    e.rx_gen.fetch_add(1, Ordering::AcqRel);
                }
                return Ok(());
            }
            // Leaving or declared failed meanwhile: the word is theirs to zero.
            let _ = s.incarnation.compare_exchange(
                self.incarnation,
                0,
                Ordering::SeqCst,
                Ordering::SeqCst,
            );
        }
        Err(self.isolated())
    }

    /// This node's incarnation word, for the data path's liveness check.
    pub(crate) fn alive_word(&self) -> &AtomicU64 {
        &self.ctl().nodes[self.me.index()].incarnation
    }

    /// Why this node may not send: `Isolated` with the epoch of its isolation, when the
    /// slot records one this node can believe (after its own join, not after the
    /// cluster's current epoch; 0 while a survivor's isolation is still under way);
    /// otherwise the slot was overwritten by another member, and the error says so
    /// (`Invalid`, `"control block"`) instead of quoting a nonsense epoch.
    #[cold]
    #[inline(never)]
    pub(crate) fn isolated(&self) -> Error {
        let c = self.ctl();
        let s = &c.nodes[self.me.index()];
        let at = s.isolated_epoch.load(Ordering::Acquire);
        let now = c.header.epoch.load(Ordering::Acquire);
        let joined = self.joined_epoch.load(Ordering::Relaxed);
        // Every join, leave and failure moves the epoch by one: billions since this
        // node joined is a forged word, not history.
        let plausible = |e: u64| e >= joined && e <= now && now - joined < 1 << 32;
        if self.leaving.load(Ordering::Acquire) || (at == 0 && plausible(now)) {
            return Error::Isolated {
                node: self.me,
                epoch: now,
            };
        }
        if at != 0 && plausible(at) {
            return Error::Isolated {
                node: self.me,
                epoch: at,
            };
        }
        Error::Invalid {
            what: "control block",
            why: format!(
                "{}'s slot in cluster `{}` no longer carries its incarnation {} (it holds {}, \
                 state {}) and records no isolation this node can believe (isolated at \
                 epoch {at}, cluster epoch {now}, joined at {joined}): another member \
                 overwrote it; this node can no longer send, rejoin",
                self.me,
                self.cluster,
                self.incarnation,
                s.incarnation.load(Ordering::Relaxed),
                s.state.load(Ordering::Relaxed),
            ),
        }
    }

    /// The name of the receive memory of `node` (incarnation `inc`) for segment `seg`
    /// at generation `gen`.
    pub(crate) fn rx_name(&self, seg: u32, gen: u32, node: NodeId, inc: u64) -> String {
        rx_name(&self.cluster, seg, gen, node, inc)
    }

    /// Whether the segment at `idx` (< `MAX_SEGMENTS`) is live at generation `gen`.
    pub(crate) fn seg_live(&self, idx: u32, gen: u32) -> bool {
        let e = &self.ctl().segs[idx as usize];
        e.state.load(Ordering::Acquire) == seg_state::LIVE
            && e.generation.load(Ordering::Acquire) == gen
    }

    /// The segment at `idx` (< `MAX_SEGMENTS`) if it is still generation `gen` and its
    /// entry is one memchan could have written (a size of whole pages within the
    /// segment limit: every size below sizes and reaches receive memory), with its
    /// permission object opened; an error if that object cannot be opened.
    pub(crate) fn seg_by_index(&self, idx: u32, gen: u32) -> Result<Option<SegRef>> {
        if !self.seg_live(idx, gen) {
            return Ok(None);
        }
        let e = &self.ctl().segs[idx as usize];
        let size = e.size.load(Ordering::Acquire);
        if validate::segment_size(size).is_err() || !size.is_multiple_of(self.page.bytes() as u64) {
            tracing::warn!(
                cluster = %self.cluster,
                segment = idx,
                size,
                "ignoring a segment entry whose size memchan never writes"
            );
            return Ok(None);
        }
        let perm = Arc::new(SegPerm::open(&perm_name(&self.cluster, idx, gen))?);
        Ok(Some(SegRef {
            idx,
            generation: gen,
            size: size as usize,
            name: load_name(&e.name),
            perm,
        }))
    }
}
