//! This node's receive memory for a segment of a hub cluster: process-private memory
//! (an anonymous mapping, locked if the limit allows) with a page control byte per
//! page, written by the thread that reads the link ([`RxMem::apply`], deposit
//! operations with [`RxMem::apply_op`]) in the hub's order with atomic stores, and
//! read by the application (`mapping.rs`'s `RxMapping`) with atomic loads. A leaf: it
//! knows nothing of the node that holds it.

use memchan_core::{Error, Result, RxAttrs};
use memchan_link::proto::deposit::Op;
use std::sync::atomic::{AtomicU32, AtomicU64, AtomicU8, Ordering};

/// Receive memory: page-aligned, locked if the limit allows, written by the link
/// thread with atomic stores and read by the application with atomic loads.
pub(crate) struct RxMem {
    pub(crate) gen: u32,
    pub(crate) size: usize,
    pub(crate) page: usize,
    pub(crate) base: *mut u8,
    pub(super) map_len: usize,
    pub(crate) pct: Vec<AtomicU8>,
    /// Receive-side remap: the page each page's packets land on while its page
    /// control byte has `REMAPPED`.
    pub(super) remap: Vec<AtomicU32>,
    /// Count of packets landed on notify pages; waiters compare it (see `deliver`).
    pub(crate) notify: AtomicU32,
    /// A cluster lock's page: its bids go to a standby hub at a rail switch.
    pub(crate) lock_page: bool,
}

// SAFETY: the mapping is only accessed through atomics; `base` stays valid until drop.
unsafe impl Send for RxMem {}
// SAFETY: as above: concurrent access goes through atomic loads and stores only.
unsafe impl Sync for RxMem {}

impl RxMem {
    pub(crate) fn new(gen: u32, size: usize, page: usize, attrs: RxAttrs) -> Result<RxMem> {
        use rustix::mm::{mmap_anonymous, MapFlags, ProtFlags};
        let map_len = size.div_ceil(page) * page;
        // Shared, though no other process maps it: a shared mapping's pages can be
        // mapped a second time in this process (`mremap` with old size 0), which is how
        // libmemchan makes a C program's static data symmetric.
        // SAFETY: a fresh anonymous mapping; no existing memory is affected.
        let base = unsafe {
            mmap_anonymous(
                std::ptr::null_mut(),
                map_len,
                ProtFlags::READ | ProtFlags::WRITE,
                MapFlags::SHARED,
            )
        }
        .map_err(|e| Error::os("map rx memory", e))?
        .cast::<u8>();
        // Resident if the memlock limit allows; the mapping works either way.
        // SAFETY: `base..base+map_len` is the mapping just made.
        let _ = unsafe { rustix::mm::mlock(base.cast(), map_len) };
        Ok(RxMem {
            gen,
            size,
            page,
            base,
            map_len,
            pct: (0..map_len / page)
                .map(|_| AtomicU8::new(attrs.bits()))
                .collect(),
            remap: (0..map_len / page)
                .map(|p| AtomicU32::new(p as u32))
                .collect(),
            notify: AtomicU32::new(0),
            lock_page: false,
        })
    }

    /// The bid bytes of a lock page (one per node, from offset 0), as applied here.
    pub(crate) fn bids(&self) -> Vec<u8> {
        (0..self.size.min(memchan_core::MAX_NODES))
            .map(|i| self.byte(i).load(Ordering::Acquire))
            .collect()
    }

    pub(super) fn byte(&self, i: usize) -> &AtomicU8 {
        debug_assert!(i < self.map_len);
        // SAFETY: `i` is inside the mapping (callers check bounds).
        unsafe { &*(self.base.add(i) as *const AtomicU8) }
    }

    /// Applies one delivered packet (dropped if it reaches past the segment); whether
    /// it landed on a notify page.
    pub(crate) fn apply(&self, offset: usize, data: &[u8]) -> bool {
        if offset.checked_add(data.len()).is_none_or(|e| e > self.size) || data.is_empty() {
            return false;
        }
        let (first, last) = (offset / self.page, (offset + data.len() - 1) / self.page);
        let mut notify = false;
        for page in first..=last {
            let bits = self.pct[page].load(Ordering::Acquire);
            if bits & 1 == 0 {
                continue;
            }
            notify |= bits & 2 != 0;
            let lo = (page * self.page).max(offset);
            let hi = ((page + 1) * self.page).min(offset + data.len());
            // Where the page's bytes land: the same place in the page it is remapped
            // to (every entry is a page of this memory: `remap_page` checks).
            let at = if bits & REMAPPED != 0 {
                let to = self.remap[page].load(Ordering::Acquire) as usize;
                to * self.page + (lo - page * self.page)
            } else {
                lo
            };
            // Whatever was applied before this packet is visible to a reader that sees
            // any of its bytes with Acquire (the packet store's accesses are Relaxed).
            std::sync::atomic::fence(Ordering::Release);
            // SAFETY: `lo..hi` is inside one page of the segment (checked above), and
            // so is `at..at + (hi - lo)` (the same span of another page of it), so
            // inside the mapping; the application reads it only through atomics.
            unsafe {
                memchan_core::packet::store(self.base.add(at), &data[lo - offset..hi - offset])
            };
        }
        if notify {
            // SeqCst: half of the Dekker pair with a waiter (see `Shared::deliver`).
            self.notify.fetch_add(1, Ordering::SeqCst);
        }
        notify
    }
}

/// A page control byte's remapped bit: not an attribute of `RxAttrs` (set by
/// `remap_page` only, kept by `set_attrs`), as on one host.
pub(super) const REMAPPED: u8 = 1 << 7;

impl Drop for RxMem {
    fn drop(&mut self) {
        // SAFETY: the mapping made in `new`; nothing refers to it any more (last Arc).
        let _ = unsafe { rustix::mm::munmap(self.base.cast(), self.map_len) };
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
                self.word(base as usize, |w| {
                    if add {
                        w.fetch_add(value, Ordering::AcqRel)
                    } else {
                        w.swap(value, Ordering::AcqRel)
                    }
                }),
                true,
            ),
            Op::Cond { expected, new, .. } => (
                self.word(base as usize, |w| {
                    match w.compare_exchange(expected, new, Ordering::AcqRel, Ordering::Acquire) {
                        Ok(v) | Err(v) => v,
                    }
                }),
                true,
            ),
        };
        if old.is_some() && notify {
            // SeqCst: half of the Dekker pair with a waiter (see `Shared::deliver`).
            self.notify.fetch_add(1, Ordering::SeqCst);
        }
        (old.is_some(), old)
    }

    /// `f` on the word at `offset` (checked: 8-aligned, inside), unless its page's
    /// receive enable is off.
    fn word(&self, offset: usize, f: impl FnOnce(&AtomicU64) -> u64) -> Option<u64> {
        if self.pct[offset / self.page].load(Ordering::Acquire) & 1 == 0 {
            return None;
        }
        // SAFETY: 8-aligned and inside the segment (`Op::check`), so inside the
        // mapping, whose base is page-aligned; reached only through atomics.
        Some(f(unsafe { &*(self.base.add(offset) as *const AtomicU64) }))
    }
}
