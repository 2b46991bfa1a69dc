//! Receive memory: one shared-memory object per (segment, node) that receives every
//! write addressed to the segment at that node. Senders on the same host map it and
//! store into it directly (direct deposit); the owner reads it. Both sides reach it
//! only through atomics: single words, or `memchan_core::packet` for byte ranges.
//! [`Target`] is the writers' side: how one packet is applied to it (page control
//! byte, store, notify), the same for direct deposit (`tx.rs`) and ordered packets
//! (`order.rs`).
//!
//! # Layout
//!
//! ```text
//!  0        8         12        16       24          64               H
//!  +--------+---------+---------+--------+-----------+----------------+------------+
//!  | magic  | notify  | notify  | pages  |  reserved | page control   | data pages |
//!  |        | seq u32 | waiters |  u64   |           | table, 1 byte  |  (segment  |
//!  |        |         |   u32   |        |           | per page       |   size)    |
//!  +--------+---------+---------+--------+-----------+----------------+------------+
//!  H = 64 + pages rounded up to a page, so data is page-aligned.
//!  page control byte: bit 0 receive enable, bit 1 notify on receive.
//! ```

use crate::futex::SharedFutex;
use crate::shm::{Open, ShmMap};
use memchan_core::notify::Notify;
use memchan_core::packet;
use memchan_core::sync::{fence, AtomicU32, AtomicU64, AtomicU8, Ordering};
use memchan_core::{Error, PageSize, Result, RxAttrs};

const RX_MAGIC: u64 = u64::from_le_bytes(*b"MCRXMEM\0");

#[repr(C)]
pub(crate) struct RxHeader {
    pub magic: AtomicU64,
    pub notify_seq: AtomicU32,
    pub notify_waiters: AtomicU32,
    pub pages: AtomicU64,
}

/// One node's receive memory for one segment, mapped in this process.
pub(crate) struct RxObject {
    map: ShmMap,
    data_off: usize,
}

impl RxObject {
    fn header_len(page: PageSize, size: usize) -> usize {
        page.round_up(64 + size / page.bytes())
    }

    /// Creates the receive memory named `name` for a `size`-byte segment, every page
    /// with `attrs`, with the segment's `mode` and, if this process is in it, the
    /// segment's group `gid`: a sender of that group can then open it to write, and
    /// a sender that checks this file's group (`Order::view`) sees the reader's right.
    pub(crate) fn create(
        name: &str,
        page: PageSize,
        size: usize,
        mode: u32,
        gid: u32,
        attrs: RxAttrs,
    ) -> Result<RxObject> {
        let data_off = Self::header_len(page, size);
        ShmMap::unlink(name); // a leftover of a crashed incarnation
        let map = ShmMap::open(
            name,
            Open::Create {
                len: data_off + size,
                mode,
            },
        )?;
        // The kernel allows it only to a member of that group (or root); otherwise the
        // file keeps this process's group, and the right it shows is the uid's alone.
        let _ = rustix::fs::fchown(map.fd(), None, Some(rustix::fs::Gid::from_raw(gid)));
        let rx = RxObject { map, data_off };
        let h = rx.header();
        h.pages
            .store((size / page.bytes()) as u64, Ordering::Relaxed);
        for p in 0..size / page.bytes() {
            rx.pct(p).store(attrs.bits(), Ordering::Relaxed);
        }
        h.magic.store(RX_MAGIC, Ordering::Release);
        Ok(rx)
    }

    /// Maps another node's receive memory.
    pub(crate) fn open(name: &str, page: PageSize, size: usize) -> Result<RxObject> {
        let map = ShmMap::open(name, Open::Existing)?;
        let data_off = Self::header_len(page, size);
        if map.len() < data_off + size {
            return Err(Error::Invalid {
                what: "receive memory",
                why: format!(
                    "{name} is {} bytes, expected {}",
                    map.len(),
                    data_off + size
                ),
            });
        }
        let rx = RxObject { map, data_off };
        if rx.header().magic.load(Ordering::Acquire) != RX_MAGIC {
            return Err(Error::Invalid {
                what: "receive memory",
                why: format!("{name} has no memchan header"),
            });
        }
        Ok(rx)
    }

    /// The owner and group of the object (`fstat`): who made this receive memory.
    pub(crate) fn owner(&self) -> Result<(u32, u32)> {
        let st =
            rustix::fs::fstat(self.map.fd()).map_err(|e| Error::os("fstat receive memory", e))?;
        Ok((st.st_uid, st.st_gid))
    }

    pub(crate) fn header(&self) -> &RxHeader {
        // SAFETY: the mapping starts with an `RxHeader` (page-aligned, 24 bytes of
        // atomics), lives as long as `self`, and is only accessed through atomics.
        unsafe { &*(self.map.ptr() as *const RxHeader) }
    }

    /// The page control byte of data page `page`.
    pub(crate) fn pct(&self, page: usize) -> &AtomicU8 {
        debug_assert!(64 + page < self.data_off);
        // SAFETY: bytes 64..data_off hold one control byte per page (see `header_len`),
        // in bounds of the mapping; accessed only atomically.
        unsafe { &*(self.map.ptr().add(64 + page) as *const AtomicU8) }
    }

    /// Start of the data pages.
    pub(crate) fn data(&self) -> *mut u8 {
        // SAFETY: `data_off + size` ≤ mapping length, checked on open and create.
        unsafe { self.map.ptr().add(self.data_off) }
    }
}

/// A destination's receive memory, resolved to raw pointers for the data path. The
/// `Arc<RxObject>` that keeps it mapped is held next to it (see `Targets`).
#[derive(Clone, Copy)]
pub(crate) struct Target {
    data: *mut u8,
    pct: *const AtomicU8,
    hdr: *const RxHeader,
}

impl Target {
    /// No destination: writes to it are dropped.
    pub(crate) const NONE: Target = Target {
        data: std::ptr::null_mut(),
        pct: std::ptr::null(),
        hdr: std::ptr::null(),
    };

    /// `obj`'s receive memory; valid while `obj` is held.
    pub(crate) fn of(obj: &RxObject) -> Target {
        Target {
            data: obj.data(),
            pct: obj.pct(0),
            hdr: obj.header(),
        }
    }

    /// Whether this is [`Target::NONE`].
    pub(crate) fn is_none(self) -> bool {
        self.data.is_null()
    }

    /// Applies one packet (never crossing a page) honouring the destination's page
    /// control byte: dropped when receive is disabled, notify posted when asked.
    ///
    /// # Safety
    /// `offset + data.len()` must be within the segment this target maps, and the
    /// mapping must still be held.
    #[inline(always)]
    pub(crate) unsafe fn apply(self, page_shift: u32, offset: usize, data: &[u8]) {
        // SAFETY: the caller's contract is this one's.
        if unsafe { self.apply_quiet(page_shift, offset, data) } {
            self.post();
        }
    }

    /// [`apply`](Self::apply) without the notify: whether the page asks for one. A
    /// strided write posts once, after its last element (`tx/deposit.rs`).
    ///
    /// # Safety
    /// As [`apply`](Self::apply).
    #[inline(always)]
    pub(crate) unsafe fn apply_quiet(self, page_shift: u32, offset: usize, data: &[u8]) -> bool {
        // SAFETY: the page index is within the page control table (caller's bound).
        let bits = unsafe { (*self.pct.add(offset >> page_shift)).load(Ordering::Relaxed) };
        if bits & RX_ENABLE == 0 {
            return false;
        }
        // Whatever the sender wrote before this packet is visible to a reader that sees
        // any of its bytes with Acquire (the packet store's accesses are Relaxed).
        fence(Ordering::Release);
        // SAFETY: in bounds by the caller's contract; memchan reaches receive memory
        // only through atomics (this store, the owner's loads).
        unsafe { packet::store(self.data.add(offset), data) };
        bits & RX_NOTIFY != 0
    }

    /// Stores 8-byte words at 8-aligned offsets, in order, each as a packet (a Release
    /// fence, then one atomic store) honouring its page's receive enable, read once per
    /// page run; whether a notify page was written. The fast path of strided and
    /// indexed deposit of 8-byte elements.
    ///
    /// # Safety
    /// Every offset 8-aligned with `offset + 8` within the segment; the mapping held.
    #[inline(always)]
    pub(crate) unsafe fn store_words(
        self,
        page_shift: u32,
        words: impl Iterator<Item = (usize, u64)>,
    ) -> bool {
        let (mut page, mut bits, mut notify) = (usize::MAX, 0u8, false);
        for (off, w) in words {
            if off >> page_shift != page {
                page = off >> page_shift;
                // SAFETY: the page index is within the table (caller's bound).
                bits = unsafe { (*self.pct.add(page)).load(Ordering::Relaxed) };
                notify |= bits & (RX_ENABLE | RX_NOTIFY) == RX_ENABLE | RX_NOTIFY;
            }
            if bits & RX_ENABLE != 0 {
                // Each element is a packet: a reader that sees it with Acquire sees
                // the elements before it.
                fence(Ordering::Release);
                // SAFETY: aligned and in bounds (caller); reached only through atomics.
                unsafe { (*(self.data.add(off) as *const AtomicU64)).store(w, Ordering::Relaxed) };
            }
        }
        notify
    }

    /// [`store_words`](Self::store_words) for a strided shape of 8-byte elements:
    /// `count` words from `src` (`src_stride` bytes apart) to `offset + i *
    /// dst_stride`, a page run at a time (one page control byte read per run), four
    /// elements a turn (LLVM does not unroll atomic stores, see `packet.rs`).
    ///
    /// # Safety
    /// `offset` and `dst_stride` 8-aligned, every element within the segment, the
    /// `count` source words within `src`'s allocation; the mapping held.
    #[inline(always)]
    pub(crate) unsafe fn store_strided(
        self,
        page_shift: u32,
        offset: usize,
        dst_stride: usize,
        src: *const u8,
        src_stride: usize,
        count: usize,
    ) -> bool {
        let (mut i, mut off, mut notify) = (0, offset, false);
        while i < count {
            let page = off >> page_shift;
            // Elements from `off` on that start on this page (all, for stride 0).
            let room = ((page + 1) << page_shift) - off;
            let run = match dst_stride {
                0 => count - i,
                d => room.div_ceil(d).min(count - i),
            };
            // SAFETY: the page index is within the table (caller's bound).
            let bits = unsafe { (*self.pct.add(page)).load(Ordering::Relaxed) };
            if bits & RX_ENABLE != 0 {
                notify |= bits & RX_NOTIFY != 0;
                // SAFETY: elements i..i + run are inside the segment and the source
                // (caller); each store is one packet after a Release fence.
                unsafe {
                    let (mut d, mut s) = (self.data.add(off), src.add(i * src_stride));
                    let store = |d: *mut u8, s: *const u8| {
                        fence(Ordering::Release);
                        AtomicU64::from_ptr(d as *mut u64)
                            .store((s as *const u64).read_unaligned(), Ordering::Relaxed);
                    };
                    let mut k = 0;
                    while k + 4 <= run {
                        store(d, s);
                        store(d.add(dst_stride), s.add(src_stride));
                        store(d.add(2 * dst_stride), s.add(2 * src_stride));
                        store(d.add(3 * dst_stride), s.add(3 * src_stride));
                        d = d.add(4 * dst_stride);
                        s = s.add(4 * src_stride);
                        k += 4;
                    }
                    while k < run {
                        store(d, s);
                        d = d.add(dst_stride);
                        s = s.add(src_stride);
                        k += 1;
                    }
                }
            }
            i += run;
            off += run * dst_stride;
        }
        notify
    }

    /// Posts on the destination's notify pair.
    pub(crate) fn post(self) {
        // SAFETY: the header lives as long as the mapping (the caller holds it).
        let h = unsafe { &*self.hdr };
        Notify::new(&h.notify_seq, &h.notify_waiters).post(&SharedFutex);
    }

    /// Applies a word operation (signal update or conditional write) to the 8-byte
    /// word at `offset` as one atomic access, then posts notify whatever the page's
    /// notify bit (these exist to be waited on). The word's value before, or `None`
    /// if the page's receive enable is off (nothing written).
    ///
    /// # Safety
    /// `offset` 8-aligned and `offset + 8` within the segment; the mapping held.
    pub(crate) unsafe fn word_op(self, page_shift: u32, offset: usize, op: WordOp) -> Option<u64> {
        // SAFETY: the page index is within the page control table (caller's bound).
        let bits = unsafe { (*self.pct.add(offset >> page_shift)).load(Ordering::Relaxed) };
        if bits & RX_ENABLE == 0 {
            return None;
        }
        // SAFETY: aligned and in bounds (caller); receive memory is reached only
        // through atomics.
        let w = unsafe { &*(self.data.add(offset) as *const AtomicU64) };
        let old = match op {
            // Release: the data of the put before it is visible to whoever sees it.
            WordOp::Set(v) => w.swap(v, Ordering::AcqRel),
            WordOp::Add(v) => w.fetch_add(v, Ordering::AcqRel),
            WordOp::Cas { expected, new } => {
                match w.compare_exchange(expected, new, Ordering::AcqRel, Ordering::Acquire) {
                    Ok(v) | Err(v) => v,
                }
            }
        };
        self.post();
        Some(old)
    }
}

/// An atomic update of one 8-byte word of receive memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum WordOp {
    /// Signal set.
    Set(u64),
    /// Signal add (wrapping).
    Add(u64),
    /// Conditional write.
    Cas {
        /// The value the word must hold.
        expected: u64,
        /// Its value after.
        new: u64,
    },
}

impl WordOp {
    /// The journal's op code and payload (`record.rs`): 1 set, 2 add, 3 compare.
    pub(crate) fn encode(self) -> (u32, [u8; 16], usize) {
        let mut b = [0u8; 16];
        let (code, a, c, len) = match self {
            WordOp::Set(v) => (1, v, 0, 8),
            WordOp::Add(v) => (2, v, 0, 8),
            WordOp::Cas { expected, new } => (3, expected, new, 16),
        };
        b[..8].copy_from_slice(&a.to_ne_bytes());
        b[8..].copy_from_slice(&c.to_ne_bytes());
        (code, b, len)
    }

    /// The inverse of [`encode`](Self::encode); `None` for a record that is not one.
    pub(crate) fn decode(code: u32, payload: &[u8]) -> Option<WordOp> {
        let word = |i: usize| {
            payload
                .get(i * 8..i * 8 + 8)
                .map(|b| u64::from_ne_bytes(b.try_into().unwrap_or_default()))
        };
        match (code, payload.len()) {
            (1, 8) => Some(WordOp::Set(word(0)?)),
            (2, 8) => Some(WordOp::Add(word(0)?)),
            (3, 16) => Some(WordOp::Cas {
                expected: word(0)?,
                new: word(1)?,
            }),
            _ => None,
        }
    }
}

const RX_ENABLE: u8 = 1;
const RX_NOTIFY: u8 = 2;

/// Applies one packet to one destination's receive memory (used by recovery, off
/// the data path).
pub(crate) fn apply(view: &RxObject, page: PageSize, offset: usize, data: &[u8]) {
    // SAFETY: callers checked the range against the segment; `view` is held.
    unsafe { Target::of(view).apply(page.bytes().trailing_zeros(), offset, data) }
}
