//! The rx mapping handle: this node's receive memory for a segment, read with plain
//! (atomic) loads, with blocking waits for notify-on-receive pages.

mod wait_until;

use crate::futex::SharedFutex;
use crate::local::SegRef;
use crate::node::Inner;
use crate::rx::RxObject;
use memchan_core::notify::Notify;
use memchan_core::packet;
use memchan_core::sync::{fence, AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering};
use memchan_core::{Error, Result, RxAttrs};
use std::cell::Cell;
use std::sync::Arc;
use std::time::Duration;

/// This node's receive memory for one segment: every write addressed to the segment
/// at this node lands here. Unmapped (and removed from the segment's rx set) on drop.
pub struct RxMapping {
    inner: Arc<Inner>,
    seg: SegRef,
    obj: Arc<RxObject>,
    seen: Cell<u32>,
}

// SAFETY: `RxObject` is a shared mapping accessed only through atomics (words and
// `memchan_core::packet`); the
// `Cell` is this handle's private wait cursor, and `RxMapping` is not `Sync`.
unsafe impl Send for RxMapping {}

impl RxMapping {
    pub(crate) fn new(inner: Arc<Inner>, seg: SegRef, attrs: RxAttrs) -> Result<RxMapping> {
        inner.check_perm(&seg, 4, "map_rx")?;
        let name = inner.local.rx_name(
            seg.idx,
            seg.generation,
            inner.local.me,
            inner.local.incarnation,
        );
        let obj = Arc::new(RxObject::create(
            &name,
            inner.local.page,
            seg.size,
            seg.perm.mode | 0o600,
            seg.perm.gid,
            attrs,
        )?);
        if let Err(e) = inner.attach_rx(&seg, &obj) {
            crate::shm::ShmMap::unlink(&name);
            return Err(e);
        }
        let seen = Notify::new(&obj.header().notify_seq, &obj.header().notify_waiters).current();
        Ok(RxMapping {
            inner,
            seg,
            obj,
            seen: Cell::new(seen),
        })
    }

    /// Segment size in bytes.
    pub fn len(&self) -> usize {
        self.seg.size
    }

    /// Whether the mapping is empty (never: segments have at least one page).
    pub fn is_empty(&self) -> bool {
        self.seg.size == 0
    }

    /// The segment's name.
    pub fn name(&self) -> &str {
        &self.seg.name
    }

    /// Start of the receive memory. Other processes write it concurrently: read it
    /// through atomics, or after a flag read with Acquire, never as a `&[u8]` that must
    /// not change.
    pub fn as_ptr(&self) -> *const u8 {
        self.obj.data()
    }

    fn check(&self, offset: usize, len: usize, atomic: bool) -> Result<*const u8> {
        if offset
            .checked_add(len)
            .is_none_or(|end| end > self.seg.size)
        {
            return Err(Error::OutOfBounds {
                segment: self.seg.name.clone(),
                offset,
                len,
                size: self.seg.size,
            });
        }
        if atomic && !offset.is_multiple_of(len) {
            return Err(Error::Unaligned {
                segment: self.seg.name.clone(),
                offset,
                size: len,
            });
        }
        // SAFETY: in bounds, checked above.
        Ok(unsafe { self.obj.data().add(offset) })
    }

    /// Loads an aligned 8-byte word (Acquire: writes the sender made before it are
    /// visible after it).
    #[inline]
    pub fn load_u64(&self, offset: usize) -> Result<u64> {
        let p = self.check(offset, 8, true)?;
        // SAFETY: aligned, in bounds, shared words are accessed atomically.
        Ok(unsafe { (*(p as *const AtomicU64)).load(Ordering::Acquire) })
    }

    /// Loads an aligned 4-byte word.
    #[inline]
    pub fn load_u32(&self, offset: usize) -> Result<u32> {
        let p = self.check(offset, 4, true)?;
        // SAFETY: as in `load_u64`.
        Ok(unsafe { (*(p as *const AtomicU32)).load(Ordering::Acquire) })
    }

    /// Loads an aligned 2-byte word.
    #[inline]
    pub fn load_u16(&self, offset: usize) -> Result<u16> {
        let p = self.check(offset, 2, true)?;
        // SAFETY: as in `load_u64`.
        Ok(unsafe { (*(p as *const AtomicU16)).load(Ordering::Acquire) })
    }

    /// Loads one byte.
    #[inline]
    pub fn load_u8(&self, offset: usize) -> Result<u8> {
        let p = self.check(offset, 1, true)?;
        // SAFETY: as in `load_u64`.
        Ok(unsafe { (*(p as *const AtomicU8)).load(Ordering::Acquire) })
    }

    /// Copies `buf.len()` bytes from `offset` into `buf` (an Acquire read: writes the
    /// sender made before the bytes read are visible after it).
    pub fn read(&self, offset: usize, buf: &mut [u8]) -> Result<()> {
        let p = self.check(offset, buf.len(), false)?;
        // SAFETY: in bounds of the mapping, which `self.obj` holds; senders store into
        // it only through atomics (`memchan_core::packet`).
        unsafe { packet::load(p, buf) };
        fence(Ordering::Acquire);
        Ok(())
    }

    /// Sets the receive attributes of the pages covering `offset..offset + len`.
    pub fn set_attrs(&self, offset: usize, len: usize, attrs: RxAttrs) -> Result<()> {
        self.check(offset, len, false)?;
        let page = self.inner.local.page.bytes();
        for p in offset / page..(offset + len).div_ceil(page) {
            self.obj.set_page_attrs(p, attrs);
        }
        Ok(())
    }

    /// Receive-side remap: the packets addressed to page `page` of this mapping land on
    /// page `to` of it from now on (`to == page` undoes it), without the senders
    /// knowing.
    ///
    /// # Errors
    /// `OutOfBounds` for a page past the segment.
    pub fn remap_page(&self, page: usize, to: usize) -> Result<()> {
        let ps = self.inner.local.page.bytes();
        for p in [page, to] {
            self.check(p.saturating_mul(ps), ps, false)?;
        }
        self.obj.remap_page(page, to);
        Ok(())
    }

    /// The receive attributes of the page holding `offset`.
    pub fn attrs(&self, offset: usize) -> Result<RxAttrs> {
        self.check(offset, 1, false)?;
        let b = self
            .obj
            .pct(offset / self.inner.local.page.bytes())
            .load(Ordering::Acquire);
        Ok(RxAttrs::from_bits(b))
    }

    /// Blocks, without spinning, until a write lands on a notify-on-receive page of this
    /// mapping after the previous `wait` returned (or the mapping was made). Returns
    /// false on timeout.
    pub fn wait(&self, timeout: Option<Duration>) -> Result<bool> {
        let h = self.obj.header();
        let n = Notify::new(&h.notify_seq, &h.notify_waiters);
        match n.wait(self.seen.get(), timeout, &SharedFutex) {
            Some(now) => {
                self.seen.set(now);
                Ok(true)
            }
            None => Ok(false),
        }
    }

    /// As [`wait`](Self::wait), but busy-polling the notify counter: no futex, one
    /// busy core. Returns false on timeout.
    pub fn wait_spin(&self, timeout: Option<Duration>) -> Result<bool> {
        let h = self.obj.header();
        let n = Notify::new(&h.notify_seq, &h.notify_waiters);
        let deadline = timeout.map(|t| std::time::Instant::now() + t);
        let mut spins = 0u32;
        loop {
            let now = n.current();
            if now != self.seen.get() {
                self.seen.set(now);
                return Ok(true);
            }
            spins = spins.wrapping_add(1);
            if spins.is_multiple_of(1024) {
                self.inner.local.check_alive()?;
                if deadline.is_some_and(|d| std::time::Instant::now() >= d) {
                    return Ok(false);
                }
            }
            std::hint::spin_loop();
        }
    }
}

impl Drop for RxMapping {
    fn drop(&mut self) {
        // Before the rx set changes: a sender that sees the change (`rx_gen`, AcqRel)
        // sees this too, and does not keep delivering here after a new map.
        self.obj.retire();
        self.inner.detach_rx(&self.seg);
    }
}
