//! The application's view of this node's receive memory for a segment of a hub
//! cluster ([`RxMapping`]): atomic loads, `read`, the pages' attributes,
//! receive-side remap (`remap_page`: a page's packets land on another page, as on one
//! host) and `wait` for a write to a notify page. The memory itself, which the thread
//! reading the link writes, is `rx.rs`; `mapping/wait_until.rs` waits on a word of it.

mod wait_until;

use crate::rx::RxMem;
use crate::state::{Reading, Shared};
use memchan_core::{Error, Result, RxAttrs};
use memchan_link::proto::Op;
use memchan_link::wire::Kind;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// This node's receive memory for a segment of a hub cluster.
pub struct RxMapping {
    pub(crate) sh: Arc<Shared>,
    name: String,
    seg: u32,
    mem: Arc<RxMem>,
    seen: std::cell::Cell<u32>,
}

impl Drop for RxMapping {
    fn drop(&mut self) {
        self.sh
            .rx
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&self.seg);
        if self.sh.check().is_ok() {
            let op = Op::UnmapRx {
                seg: self.seg,
                gen: self.mem.gen,
            };
            let _ = self.sh.send(Kind::Request, &[&op.put(0)]);
        }
    }
}

impl RxMapping {
    /// The mapping of `mem`, registered for segment `seg` in `sh`.
    pub(crate) fn new(sh: Arc<Shared>, name: String, seg: u32, mem: Arc<RxMem>) -> RxMapping {
        let seen = mem.notify().0.load(Ordering::Acquire);
        RxMapping {
            sh,
            name,
            seg,
            mem,
            seen: std::cell::Cell::new(seen),
        }
    }

    /// Size in bytes.
    pub fn len(&self) -> usize {
        self.mem.size
    }
    /// Never empty.
    pub fn is_empty(&self) -> bool {
        self.mem.size == 0
    }
    /// Segment name.
    pub fn name(&self) -> &str {
        &self.name
    }
    /// Start of the receive memory (read through atomics only).
    pub fn as_ptr(&self) -> *const u8 {
        self.mem.base
    }

    fn check(&self, offset: usize, len: usize, atomic: bool) -> Result<()> {
        if offset.checked_add(len).is_none_or(|e| e > self.mem.size) {
            return Err(Error::OutOfBounds {
                segment: self.name.clone(),
                offset,
                len,
                size: self.mem.size,
            });
        }
        if atomic && !offset.is_multiple_of(len) {
            return Err(Error::Unaligned {
                segment: self.name.clone(),
                offset,
                size: len,
            });
        }
        Ok(())
    }

    /// Atomic 8-byte load.
    pub fn load_u64(&self, offset: usize) -> Result<u64> {
        self.check(offset, 8, true)?;
        // SAFETY: in bounds and 8-aligned (checked; the base is page-aligned).
        Ok(unsafe { &*(self.mem.base.add(offset) as *const AtomicU64) }.load(Ordering::Acquire))
    }
    /// Atomic 4-byte load.
    pub fn load_u32(&self, offset: usize) -> Result<u32> {
        self.check(offset, 4, true)?;
        // SAFETY: in bounds and 4-aligned (checked).
        Ok(unsafe { &*(self.mem.base.add(offset) as *const AtomicU32) }.load(Ordering::Acquire))
    }
    /// Atomic 2-byte load.
    pub fn load_u16(&self, offset: usize) -> Result<u16> {
        self.check(offset, 2, true)?;
        // SAFETY: in bounds and 2-aligned (checked).
        Ok(
            unsafe { &*(self.mem.base.add(offset) as *const std::sync::atomic::AtomicU16) }
                .load(Ordering::Acquire),
        )
    }
    /// 1-byte load.
    pub fn load_u8(&self, offset: usize) -> Result<u8> {
        self.check(offset, 1, true)?;
        Ok(self.mem.byte(offset).load(Ordering::Acquire))
    }
    /// Copies `buf.len()` bytes from `offset` (an Acquire read, as on one host).
    pub fn read(&self, offset: usize, buf: &mut [u8]) -> Result<()> {
        self.check(offset, buf.len(), false)?;
        // SAFETY: in bounds (checked); the link thread stores into it only through
        // atomics (`RxMem::apply`).
        unsafe { memchan_core::packet::load(self.mem.base.add(offset), buf) };
        std::sync::atomic::fence(Ordering::Acquire);
        Ok(())
    }
    /// Sets the rx attributes of the pages covering `offset..offset+len`.
    pub fn set_attrs(&self, offset: usize, len: usize, attrs: RxAttrs) -> Result<()> {
        self.check(offset, len, false)?;
        let p = self.mem.page;
        for page in offset / p..(offset + len).div_ceil(p) {
            self.mem.set_page_attrs(page, attrs);
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
        let ps = self.mem.page;
        for p in [page, to] {
            self.check(p.saturating_mul(ps), ps, false)?;
        }
        self.mem.remap_page(page, to);
        Ok(())
    }
    /// The attributes of the page holding `offset`.
    pub fn attrs(&self, offset: usize) -> Result<RxAttrs> {
        self.check(offset, 1, false)?;
        let b = self.mem.pct(offset / self.mem.page).load(Ordering::Acquire);
        Ok(RxAttrs::from_bits(b))
    }

    /// Blocks until a write lands on a notify page of this mapping (`Ok(true)`), or
    /// `timeout` passes (`Ok(false)`). The waiting thread reads the link itself, so
    /// the frame it waits for wakes it directly (as a blocking `recv` would).
    pub fn wait(&self, timeout: Option<Duration>) -> Result<bool> {
        self.wait_with(timeout, false)
    }

    /// Like [`wait`](Self::wait), but busy-polls the link in the calling thread.
    pub fn wait_spin(&self, timeout: Option<Duration>) -> Result<bool> {
        self.wait_with(timeout, true)
    }

    fn wait_with(&self, timeout: Option<Duration>, spin: bool) -> Result<bool> {
        let deadline = timeout.map(|t| Instant::now() + t);
        let _reading = if spin {
            Reading::spinning(&self.sh)
        } else {
            Reading::new(&self.sh)
        };
        // A blocked waiter tells the host's other nodes to wake it (`domain.rs`).
        let _announced = (!spin).then(|| Announced::new(self.mem.notify().1));
        let mut spins = 0u32;
        loop {
            let v = self.mem.notify().0.load(Ordering::SeqCst);
            if v != self.seen.get() {
                self.seen.set(v);
                self.sh.check()?;
                return Ok(true);
            }
            spins = spins.wrapping_add(1);
            if !spin || spins.is_multiple_of(256) {
                self.sh.check()?;
                if deadline.is_some_and(|d| Instant::now() >= d) {
                    return Ok(false);
                }
            }
            let slice = if spin {
                Duration::ZERO
            } else {
                let left = deadline.map_or(Duration::from_millis(100), |d| {
                    d.saturating_duration_since(Instant::now())
                });
                left.min(Duration::from_millis(100))
            };
            self.sh.progress(slice);
            if spin {
                std::hint::spin_loop();
            }
        }
    }
}

/// A blocked waiter counted in its receive memory's header for the time it waits.
struct Announced<'a>(&'a AtomicU32);

impl<'a> Announced<'a> {
    fn new(waiters: &'a AtomicU32) -> Announced<'a> {
        // SeqCst, before the waiter's check of the notify count: Dekker's pair with a
        // sender's bump-then-look (`domain::Peer::post`).
        waiters.fetch_add(1, Ordering::SeqCst);
        Announced(waiters)
    }
}

impl Drop for Announced<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}
