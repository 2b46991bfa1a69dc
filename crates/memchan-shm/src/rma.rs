//! Remote reads and atomics on one host (`memchan_core::transport::RmaOps`): the caller
//! maps the target node's receive memory (read-only if it may only read the segment)
//! and loads from it, or runs the atomic on it, itself. The target's application and
//! its threads take no part.
//!
//! The handle caches each target's mapping as raw pointers, keyed by the segment's
//! `rx_gen` (which moves whenever a node maps or unmaps the segment rx, fails or
//! leaves), so an 8-byte get is a bounds check, one compare of that word, the target
//! page's control byte and one atomic load. Only a moved `rx_gen` re-resolves the
//! target: alive, in the segment's rx set, its receive memory opened by name.
//!
//! Rights are the kernel's: `Segment::rma` asks the segment's permission object for
//! read and for read-write once (as `map_tx` asks for write), and the target's receive
//! memory is opened with the access those allow. The page attribute `remote_read` is
//! in the target's page control table, read on every operation.

use crate::control::{load_set, node_state};
use crate::local::SegRef;
use crate::node::Inner;
use crate::rx::RxObject;
use memchan_core::rma::{self, AtomicOp, PeerMemory, Pending};
use memchan_core::sync::{fence, AtomicU64, AtomicU8, Ordering};
use memchan_core::{Error, NodeId, Result, MAX_NODES};
use std::cell::{Cell, RefCell};
use std::sync::atomic::{AtomicU32 as WordU32, AtomicU64 as WordU64};
use std::sync::Arc;

/// A target's receive memory as the data path uses it.
#[derive(Clone, Copy)]
struct View {
    /// `rx_gen` when it was resolved; `u64::MAX`: never.
    gen: u64,
    data: *mut u8,
    pct: *const AtomicU8,
}

const UNRESOLVED: View = View {
    gen: u64::MAX,
    data: std::ptr::null_mut(),
    pct: std::ptr::null(),
};

/// Remote reads and atomics on every node's copy of one segment (one thread at a
/// time, like a tx mapping: the cache takes no lock).
pub struct Rma {
    inner: Arc<Inner>,
    seg: SegRef,
    size: usize,
    page_shift: u32,
    /// The segment entry's `rx_gen` word, resolved once.
    rx_gen: *const AtomicU64,
    may_read: bool,
    may_write: bool,
    views: Box<[Cell<View>]>,
    /// Keeps every cached view's receive memory mapped.
    keep: RefCell<Vec<Option<Arc<RxObject>>>>,
}

// SAFETY: the raw pointers point into the control block (kept mapped by `inner`) and
// into receive memory kept mapped by `keep`; both move with the handle, which is not
// `Sync` (the cells are its private cache).
unsafe impl Send for Rma {}

impl Rma {
    pub(crate) fn new(inner: Arc<Inner>, seg: SegRef) -> Result<Rma> {
        inner.local.check_alive()?;
        let granted = |want, op| match seg.perm.access(want, &seg.name, op, inner.local.uid) {
            Ok(()) => Ok(true),
            Err(Error::PermissionDenied { .. }) => Ok(false),
            Err(e) => Err(e),
        };
        let may_read = granted(4, "get")?;
        let may_write = may_read && granted(6, "atomic")?;
        let rx_gen = &inner.local.ctl().segs[seg.idx as usize].rx_gen as *const AtomicU64;
        Ok(Rma {
            size: seg.size,
            page_shift: inner.local.page.bytes().trailing_zeros(),
            rx_gen,
            may_read,
            may_write,
            views: (0..MAX_NODES).map(|_| Cell::new(UNRESOLVED)).collect(),
            keep: RefCell::new(vec![None; MAX_NODES]),
            inner,
            seg,
        })
    }

    #[cold]
    #[inline(never)]
    fn denied(&self, op: &'static str) -> Error {
        let p = &self.seg.perm;
        Error::PermissionDenied {
            segment: self.seg.name.clone(),
            op,
            uid: p.uid,
            gid: p.gid,
            mode: p.mode,
            caller_uid: self.inner.local.uid,
        }
    }

    /// `node`'s receive memory, from the cache while the segment's `rx_gen` stands.
    #[inline(always)]
    fn view(&self, node: NodeId) -> Result<View> {
        let Some(cell) = self.views.get(node.index()) else {
            return Err(Error::UnknownNode(node));
        };
        let v = cell.get();
        // SAFETY: `rx_gen` points into the control block, mapped while `inner` lives.
        let gen = unsafe { (*self.rx_gen).load(Ordering::Acquire) };
        if v.gen == gen {
            return Ok(v);
        }
        self.resolve(node, gen)
    }

    /// Maps `node`'s receive memory after the segment's rx set (or the membership)
    /// moved: `UnknownNode` for a node that is not alive, `NotMapped` for one that does
    /// not map the segment rx.
    #[cold]
    #[inline(never)]
    fn resolve(&self, node: NodeId, gen: u64) -> Result<View> {
        let local = &self.inner.local;
        local.check_alive()?;
        let mut keep = self.keep.borrow_mut();
        self.views[node.index()].set(UNRESOLVED);
        keep[node.index()] = None;
        if !local.seg_live(self.seg.idx, self.seg.generation) {
            return Err(Error::SegmentFreed {
                segment: self.seg.name.clone(),
            });
        }
        let c = local.ctl();
        let slot = &c.nodes[node.index()];
        if slot.state.load(Ordering::Acquire) != node_state::ALIVE {
            return Err(Error::UnknownNode(node));
        }
        let not_mapped = || Error::NotMapped {
            segment: self.seg.name.clone(),
            node,
        };
        if !load_set(&c.segs[self.seg.idx as usize].rx_set).contains(node) {
            return Err(not_mapped());
        }
        if self.may_write {
            // A handle that may write shares the node's one mapping of each
            // destination (the order point's views, admitted as a sender's are), so
            // that many handles of one process (one per thread in the C API) do not
            // each map, populate and lock the whole of every target's memory again.
            let Some(obj) = self.inner.order().view(&self.seg, node)? else {
                return Err(not_mapped());
            };
            return Ok(self.keep_view(&mut keep, node, gen, obj));
        }
        let inc = slot.incarnation.load(Ordering::Acquire);
        let name = local.rx_name(self.seg.idx, self.seg.generation, node, inc);
        let obj = match RxObject::open_as(&name, local.page, self.size, false) {
            Ok(o) => Arc::new(o),
            // Removed between the check and the open: it just unmapped or died.
            Err(Error::Os { source, .. })
                if source.raw_os_error() == Some(rustix::io::Errno::NOENT.raw_os_error()) =>
            {
                return Err(not_mapped())
            }
            // The receive memory's own mode or group refuses what the segment allows
            // (its owner is not in the segment's group): the kernel's answer.
            Err(Error::Os { source, .. })
                if source.raw_os_error() == Some(rustix::io::Errno::ACCESS.raw_os_error()) =>
            {
                return Err(self.denied("get"))
            }
            Err(e) => return Err(e),
        };
        Ok(self.keep_view(&mut keep, node, gen, obj))
    }

    /// Caches `obj` as `node`'s view at `gen`, kept mapped by `keep`.
    fn keep_view(
        &self,
        keep: &mut [Option<Arc<RxObject>>],
        node: NodeId,
        gen: u64,
        obj: Arc<RxObject>,
    ) -> View {
        let v = View {
            gen,
            data: obj.data(),
            pct: obj.pct(0),
        };
        keep[node.index()] = Some(obj);
        self.views[node.index()].set(v);
        v
    }

    /// The view of `node` for `len` bytes at `offset`, every page of which allows
    /// remote access.
    #[inline(always)]
    fn open(&self, node: NodeId, offset: usize, len: usize) -> Result<View> {
        let v = self.view(node)?;
        let allowed = rma::pages_allow(1 << self.page_shift, offset, len, |p| {
            // SAFETY: `p` is a page of the segment (the range was bounds-checked), so
            // within the target's page control table, mapped while `keep` holds it.
            unsafe { (*v.pct.add(p)).load(Ordering::Acquire) }
        });
        match allowed {
            Ok(()) => Ok(v),
            Err(at) => Err(rma::remote_read_off(&self.seg.name, node, at)),
        }
    }

    /// Copies `buf.len()` bytes of `node`'s copy at `offset`.
    pub fn get(&self, node: NodeId, offset: usize, buf: &mut [u8]) -> Result<()> {
        rma::check(&self.seg.name, self.size, offset, buf.len(), false)?;
        if !self.may_read {
            return Err(self.denied("get"));
        }
        if buf.is_empty() {
            return Ok(());
        }
        let v = self.open(node, offset, buf.len())?;
        // SAFETY: in bounds of the target's receive memory (checked against the
        // segment size, which `RxObject::open_as` checked the object holds); writers
        // store into it only through atomics.
        unsafe { memchan_core::packet::load(v.data.add(offset), buf) };
        fence(Ordering::Acquire);
        Ok(())
    }

    /// An aligned 8-byte word of `node`'s copy: one atomic load from its memory.
    #[inline(always)]
    pub fn get_u64(&self, node: NodeId, offset: usize) -> Result<u64> {
        let w = self.word::<8>(node, offset, false)?;
        // SAFETY: in bounds and 8-aligned (the data pages are page-aligned), mapped
        // while `keep` holds it; memory other processes use, reached atomically.
        Ok(unsafe { (*(w as *const WordU64)).load(std::sync::atomic::Ordering::Acquire) })
    }

    /// An aligned 4-byte word of `node`'s copy.
    #[inline(always)]
    pub fn get_u32(&self, node: NodeId, offset: usize) -> Result<u32> {
        let w = self.word::<4>(node, offset, false)?;
        // SAFETY: as in `get_u64`, 4-aligned.
        Ok(unsafe { (*(w as *const WordU32)).load(std::sync::atomic::Ordering::Acquire) })
    }

    /// A non-blocking get: on one host it is done when issued.
    pub fn get_nbi(&self, node: NodeId, offset: usize, len: usize) -> Result<Pending> {
        rma::check(&self.seg.name, self.size, offset, len, false)?;
        if !self.may_read {
            return Err(self.denied("get"));
        }
        let mut buf = vec![0; len];
        Ok(Pending::ready(
            self.get(node, offset, &mut buf).map(|()| buf),
        ))
    }

    /// Runs `op` on the aligned 8-byte word: a locked instruction on the target's
    /// shared mapping, atomic against every other process's atomics on it.
    #[inline(always)]
    pub fn atomic_u64(&self, node: NodeId, offset: usize, op: AtomicOp) -> Result<u64> {
        let w = self.word::<8>(node, offset, true)?;
        // SAFETY: in bounds, 8-aligned, mapped read-write (`may_write`) while `keep`
        // holds it; every process reaches the word only through atomics.
        Ok(rma::apply_u64(unsafe { &*(w as *const WordU64) }, op))
    }

    /// As [`atomic_u64`](Self::atomic_u64) on a 4-byte word.
    #[inline(always)]
    pub fn atomic_u32(&self, node: NodeId, offset: usize, op: AtomicOp) -> Result<u32> {
        let w = self.word::<4>(node, offset, true)?;
        // SAFETY: as in `atomic_u64`, 4-aligned.
        Ok(rma::apply_u32(unsafe { &*(w as *const WordU32) }, op))
    }

    /// `node`'s copy of the whole segment for this process's own loads and stores:
    /// the rights of an atomic and `remote_read` on every page, checked now; the
    /// receive memory stays mapped while the returned handle lives, apart from this
    /// handle's cache (which drops a view when `rx_gen` moves).
    pub fn peer_memory(&self, node: NodeId) -> Result<PeerMemory> {
        if !self.may_write {
            return Err(self.denied("atomic"));
        }
        let v = self.open(node, 0, self.size)?;
        let keep = self.keep.borrow()[node.index()]
            .clone()
            .expect("`open` keeps the view it returns");
        // SAFETY: `v.data` is the receive memory's data, `size` bytes mapped read-write
        // (`may_write`) by the object `keep` holds.
        Ok(unsafe { PeerMemory::new(v.data, self.size, keep) })
    }

    /// The address of the `N`-byte word at `offset` of `node`'s copy, after every
    /// check of an atomic access (`atomic`: read and write rights).
    #[inline(always)]
    fn word<const N: usize>(&self, node: NodeId, offset: usize, atomic: bool) -> Result<*mut u8> {
        rma::check(&self.seg.name, self.size, offset, N, true)?;
        let allowed = if atomic {
            self.may_write
        } else {
            self.may_read
        };
        if !allowed {
            return Err(self.denied(if atomic { "atomic" } else { "get" }));
        }
        let v = self.open(node, offset, N)?;
        // SAFETY: `offset + N <= size` (checked), inside the target's data pages.
        Ok(unsafe { v.data.add(offset) })
    }
}

#[cfg(test)]
mod tests {
    use crate::Node;
    use memchan_core::transport::{SegmentOps, Transport};
    use memchan_core::{Config, RxAttrs};

    /// Many handles of one node on a segment map each target's receive memory once
    /// (the node's views), not once per handle: with a handle per thread (the C
    /// API's), every thread mapped, populated and locked every target's whole
    /// memory again, which made multithreaded programs with large heaps crawl.
    #[test]
    fn handles_share_one_mapping_of_each_target() {
        let name = format!("rma-share-{}", std::process::id());
        let a = Node::join(&name, &Config::default()).unwrap();
        let b = Node::join(&name, &Config::default()).unwrap();
        let open = RxAttrs {
            remote_read: true,
            ..RxAttrs::default()
        };
        let _rx = b
            .segment("s", 1 << 20, 0o600)
            .unwrap()
            .map_rx_with(open)
            .unwrap();
        let seg = a.segment("s", 1 << 20, 0o600).unwrap();
        let handles: Vec<_> = (0..8).map(|_| seg.rma().unwrap()).collect();
        for h in &handles {
            let mut buf = [0u8; 8];
            h.get(b.node_id(), 0, &mut buf).unwrap();
        }
        // b's receive memory: its own mapping, and a's one view of it.
        let mark = format!("memchan.{name}.s");
        let of_b = format!(".n{}.i", b.node_id().0);
        let maps = std::fs::read_to_string("/proc/self/maps").unwrap();
        let n = maps
            .lines()
            .filter(|l| l.contains(&mark) && l.contains(&of_b))
            .count();
        assert_eq!(n, 2, "mappings of b's receive memory:\n{maps}");
    }
}
