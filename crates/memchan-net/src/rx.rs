//! This node's receive memory for a segment of a hub cluster: the one-host
//! transport's receive object (`memchan_shm::domain::RxMemory`: data pages, a page
//! control byte and a remap entry per page, a notify pair), named in `/dev/shm` when
//! the node is in a host domain (`domain.rs`: the host's other nodes store into it)
//! and a private memfd otherwise. The thread reading the link writes it
//! ([`RxMem::apply`], deposit operations with [`RxMem::apply_op`]) in the hub's order
//! with atomic stores; the application reads it (`mapping.rs`'s `RxMapping`) with
//! atomic loads. A leaf: it knows nothing of the node that holds it.

use memchan_core::{PageSize, Result, RxAttrs};
use memchan_link::proto::deposit::Op;
use memchan_shm::domain::{RxMemory, WordOp};
use std::sync::atomic::{AtomicU32, AtomicU8, Ordering};

/// Receive memory: page-aligned, written by the link thread (and, in a host domain,
/// by the host's other nodes) with atomic stores and read by the application with
/// atomic loads.
pub(crate) struct RxMem {
    pub(crate) gen: u32,
    pub(crate) size: usize,
    pub(crate) page: usize,
    pub(crate) base: *mut u8,
    mem: RxMemory,
    /// Its name in `/dev/shm` (`None`: private), removed on drop.
    name: Option<String>,
    /// A cluster lock's page: its bids go to a standby hub at a rail switch.
    pub(crate) lock_page: bool,
    /// The segment's name, owner uid and gid, and mode: what a direct link's
    /// sender's right to write is checked against.
    pub(crate) owner: (String, u32, u32, u32),
}

// SAFETY: `base` points into `mem`'s mapping, which lives as long as `self`, and is
// only accessed through atomics.
unsafe impl Send for RxMem {}
// SAFETY: as above: concurrent access goes through atomic loads and stores only.
unsafe impl Sync for RxMem {}

impl RxMem {
    /// Receive memory for a `size`-byte segment of generation `gen`, every page with
    /// `attrs`: named `name` with the segment's `mode` and group `gid` (a host
    /// domain's), or private (`name` `None`).
    pub(crate) fn new(
        gen: u32,
        size: usize,
        page: PageSize,
        attrs: RxAttrs,
        shared: Option<(String, u32, u32)>,
    ) -> Result<RxMem> {
        let (mem, name) = match shared {
            Some((name, mode, gid)) => (
                RxMemory::create(&name, page, size, mode, gid, attrs)?,
                Some(name),
            ),
            None => (RxMemory::private(page, size, attrs)?, None),
        };
        Ok(RxMem {
            gen,
            size,
            page: page.bytes(),
            base: mem.data(),
            mem,
            name,
            lock_page: false,
            owner: (String::new(), 0, 0, 0),
        })
    }

    /// The page control byte of page `page` (bit 0 receive enable, 1 notify, 2 remote
    /// read, 7 remapped).
    pub(crate) fn pct(&self, page: usize) -> &AtomicU8 {
        self.mem.page_control(page)
    }

    /// Sets page `page`'s attributes, keeping its remap.
    pub(crate) fn set_page_attrs(&self, page: usize, attrs: RxAttrs) {
        self.mem.set_page_attrs(page, attrs);
    }

    /// Receive-side remap of page `page` to page `to` (both checked by the caller).
    pub(crate) fn remap_page(&self, page: usize, to: usize) {
        self.mem.remap_page(page, to);
    }

    /// The count of packets landed on notify pages, which waiters compare, and the
    /// count of waiters asleep that the host's other nodes must wake (`domain.rs`).
    pub(crate) fn notify(&self) -> (&AtomicU32, &AtomicU32) {
        self.mem.notify_words()
    }

    /// Fences sender `node` off this memory (`on`: it failed or left; off: its id
    /// joined anew): a node of this host that finds itself fenced stores no more and
    /// goes through the hub, which refuses what an isolated node sends.
    pub(crate) fn set_fenced(&self, node: memchan_core::NodeId, on: bool) {
        self.mem.set_fenced(node, on);
    }

    /// Whether `node` is fenced off (not a member: failed, left, not joined yet).
    pub(crate) fn fenced(&self, node: memchan_core::NodeId) -> bool {
        self.mem.fenced(node)
    }

    /// The bid bytes of a lock page (one per node, from offset 0), as applied here.
    pub(crate) fn bids(&self) -> Vec<u8> {
        (0..self.size.min(memchan_core::MAX_NODES))
            .map(|i| self.byte(i).load(Ordering::Acquire))
            .collect()
    }

    pub(super) fn byte(&self, i: usize) -> &AtomicU8 {
        assert!(i < self.size);
        // SAFETY: `i` is inside the data pages (checked).
        unsafe { &*(self.base.add(i) as *const AtomicU8) }
    }

    /// Applies one delivered packet (dropped if it reaches past the segment); whether
    /// it landed on a notify page (the notify count is then bumped).
    pub(crate) fn apply(&self, offset: usize, data: &[u8]) -> bool {
        let notify = self.mem.apply(offset, data);
        if notify {
            // SeqCst: half of the Dekker pair with a waiter (see `Shared::deliver`).
            self.notify().0.fetch_add(1, Ordering::SeqCst);
        }
        notify
    }

    /// Applies one delivered packet that wakes no waiter (`proto::FLAG_QUIET`).
    pub(crate) fn apply_quiet(&self, offset: usize, data: &[u8]) {
        self.mem.apply(offset, data);
    }
}

impl Drop for RxMem {
    fn drop(&mut self) {
        self.mem.retire();
        if let Some(name) = &self.name {
            RxMemory::unlink(name);
        }
    }
}

impl RxMem {
    /// Applies a delivered deposit operation at `base`: whether a waiter may need a
    /// wake-up, and a word operation's word before (`None`: not applied, receive
    /// disabled or out of range). Elements go one by one in order, each as a packet;
    /// a word operation is one atomic access and always counts as a notify (it exists
    /// to be waited on).
    pub(crate) fn apply_op(&self, op: &Op<'_>, base: u64) -> (bool, Option<u64>) {
        if !op.check(base, self.size) {
            return (false, None);
        }
        let (old, notify) = match *op {
            Op::Strided { .. } | Op::Indexed { .. } => {
                let mut notify = false;
                for (o, d) in op.elements(base) {
                    notify |= self.apply(o, d);
                }
                return (notify, None);
            }
            Op::Signal { add, value } => (
                self.mem.word_op(
                    base as usize,
                    if add {
                        WordOp::Add(value)
                    } else {
                        WordOp::Set(value)
                    },
                ),
                true,
            ),
            Op::Cond { expected, new, .. } => (
                self.mem
                    .word_op(base as usize, WordOp::Cas { expected, new }),
                true,
            ),
        };
        if old.is_some() && notify {
            // SeqCst: half of the Dekker pair with a waiter (see `Shared::deliver`).
            self.notify().0.fetch_add(1, Ordering::SeqCst);
        }
        (old.is_some(), old)
    }
}
