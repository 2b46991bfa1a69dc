//! This node's place in its cluster: the control block mapped in this process, the
//! node's id, incarnation, uid and gid there, and the cluster's page size; with the
//! reads every layer makes of them (may this node still send, which segment is at a
//! table index, what its receive memory is called).
//!
//! A leaf: the control plane (`node.rs`), the point of global order (`order.rs`) and
//! the data path (`tx.rs`, `rxmap.rs`) all read it, and it calls none of them.

use crate::control::{load_name, seg_state, Control};
use crate::shm::ShmMap;
use memchan_core::sync::{AtomicU64, Ordering};
use memchan_core::{Error, NodeId, PageSize, Result};

/// Identifies one live segment (index + generation) for the data path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SegRef {
    pub idx: u32,
    pub generation: u32,
    pub size: usize,
    pub name: String,
    pub mode: u32,
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

/// A joined node's identity and its mapping of the control block.
pub(crate) struct Local {
    pub cluster: String,
    ctl: ShmMap,
    pub me: NodeId,
    pub incarnation: u64,
    pub page: PageSize,
    pub uid: u32,
    pub gid: u32,
    /// Journal records this node's recoveries discarded as impossible (`Order::recover`).
    pub discarded: std::sync::atomic::AtomicU64,
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
        gid: u32,
    ) -> Local {
        assert!(ctl.len() >= std::mem::size_of::<Control>());
        Local {
            cluster,
            ctl,
            me,
            incarnation,
            page,
            uid,
            gid,
            discarded: std::sync::atomic::AtomicU64::new(0),
        }
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

    /// The segment at `idx` if it is still generation `gen`.
    pub(crate) fn seg_by_index(&self, idx: u32, gen: u32) -> Option<SegRef> {
        let e = &self.ctl().segs[idx as usize];
        if e.state.load(Ordering::Acquire) != seg_state::LIVE
            || e.generation.load(Ordering::Acquire) != gen
        {
            return None;
        }
        Some(SegRef {
            idx,
            generation: gen,
            size: e.size.load(Ordering::Acquire) as usize,
            name: load_name(&e.name),
            mode: e.mode.load(Ordering::Relaxed),
        })
    }
}
