//! This node's place in its cluster: the control block mapped in this process, the
//! node's id, incarnation and effective uid there, and the cluster's page size; with the
//! reads every layer makes of them (may this node still send, which segment is at a
//! table index, what its receive memory, permission objects and journal objects are
//! called), and this node's own journal object.
//!
//! A leaf: the control plane (`node.rs`), the point of global order (`order.rs`) and
//! the data path (`tx.rs`, `rxmap.rs`) all read it, and it calls none of them (only
//! the leaves `perm.rs` and `record.rs`, whose objects it holds).

use crate::control::{load_name, seg_state, Control};
use crate::perm::SegPerm;
use crate::record::JournalObject;
use crate::shm::ShmMap;
use memchan_core::sync::{AtomicU64, Ordering};
use memchan_core::{Error, NodeId, PageSize, Result};
use std::sync::{Arc, Mutex, OnceLock};

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

/// A joined node's identity and its mapping of the control block.
pub(crate) struct Local {
    pub cluster: String,
    ctl: ShmMap,
    pub me: NodeId,
    pub incarnation: u64,
    pub page: PageSize,
    pub uid: u32,
    /// Journal records this node's recoveries discarded as impossible or unauthorised
    /// (`Order::recover`).
    pub discarded: std::sync::atomic::AtomicU64,
    /// Destinations this node refused to deliver to: their receive memory belongs to a
    /// uid that may not read the segment (`Order::view`).
    pub denied: std::sync::atomic::AtomicU64,
    /// This node's journal object, made on its first ordered packet (`Local::journal`).
    journal: OnceLock<JournalObject>,
    journal_made: Mutex<()>,
}

impl Local {
    /// `ctl` must map a whole, initialised `Control` (as `Inner::join` checks).
    pub(crate) fn new(
        cluster: String,
        ctl: ShmMap,
        me: NodeId,
        incarnation: u64,
        page: PageSize,
        uid: u32,
    ) -> Local {
        assert!(ctl.len() >= std::mem::size_of::<Control>());
        Local {
            cluster,
            ctl,
            me,
            incarnation,
            page,
            uid,
            discarded: std::sync::atomic::AtomicU64::new(0),
            denied: std::sync::atomic::AtomicU64::new(0),
            journal: OnceLock::new(),
            journal_made: Mutex::new(()),
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
            Err(self.isolated())
        }
    }

    /// This node's incarnation word, for the data path's liveness check.
    pub(crate) fn alive_word(&self) -> &AtomicU64 {
        &self.ctl().nodes[self.me.index()].incarnation
    }

    #[cold]
    #[inline(never)]
    pub(crate) fn isolated(&self) -> Error {
        let s = &self.ctl().nodes[self.me.index()];
        Error::Isolated {
            node: self.me,
            epoch: s
                .isolated_epoch
                .load(Ordering::Relaxed)
                .max(self.ctl().header.epoch.load(Ordering::Relaxed)),
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

    /// The segment at `idx` (< `MAX_SEGMENTS`) if it is still generation `gen`, with
    /// its permission object opened; an error if that object cannot be opened.
    pub(crate) fn seg_by_index(&self, idx: u32, gen: u32) -> Result<Option<SegRef>> {
        if !self.seg_live(idx, gen) {
            return Ok(None);
        }
        let e = &self.ctl().segs[idx as usize];
        let perm = Arc::new(SegPerm::open(&perm_name(&self.cluster, idx, gen))?);
        Ok(Some(SegRef {
            idx,
            generation: gen,
            size: e.size.load(Ordering::Acquire) as usize,
            name: load_name(&e.name),
            perm,
        }))
    }
}
