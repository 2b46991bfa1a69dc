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
//!  0        8         12        16       24        32        64             R               H
//!  +--------+---------+---------+--------+---------+---------+--------------+---------------+------------+
//!  | magic  | notify  | notify  | pages  | retired | fenced: | page control | remap table:  | data pages |
//!  |        | seq u32 | waiters |  u64   |   u32   | 256 bits| table, 1 byte| u32 per page  |  (segment  |
//!  |        |         |   u32   |        | (+ pad) | by node | per page     | (target page) |   size)    |
//!  +--------+---------+---------+--------+---------+---------+--------------+---------------+------------+
//!  R = 64 + pages rounded up to 4; H = R + 4 x pages rounded up to a page, so data is
//!  page-aligned.
//!  page control byte: bit 0 receive enable, bit 1 notify on receive, bit 2 remote read,
//!  bit 7 remapped
//!  (the page's packets land at the page its remap entry names: receive-side remap).
//!  retired: 1 once its owner unmapped it (the name may then be taken by a new
//!  object of the same segment, node and incarnation, see `Order::lookup`).
//!  fenced: a host domain's (`domain.rs`): the senders this owner knows failed or
//!  gone, which must not store into it any more (zero on one host).
//! ```
//!
//! **Receive-side remap** (seed 000's MEMORY CHANNEL 2): the owner redirects the
//! packets addressed to one page of its receive memory to another page of it
//! ([`RxObject::remap_page`]); senders apply through the table without knowing. A
//! sender that maps this object could rewrite the table, so the entry is checked
//! against the page count on every use: it can only send a packet to another page
//! of the same segment, which its write permission reaches anyway. The remapped bit
//! sits in the byte `apply` loads already, so an unremapped page costs nothing more.

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
    pub retired: AtomicU32,
    pub fenced: [AtomicU64; 4],
}

/// One node's receive memory for one segment, mapped in this process.
pub(crate) struct RxObject {
    map: ShmMap,
    data_off: usize,
    /// Data pages, from the segment's size (never from the header, which another
    /// member can write).
    pages: usize,
}

impl RxObject {
    fn header_len(page: PageSize, size: usize) -> usize {
        let pages = size / page.bytes();
        page.round_up(Self::remap_off(pages) + 4 * pages)
    }

    /// Where the remap table starts, for `pages` pages.
    fn remap_off(pages: usize) -> usize {
        (64 + pages).next_multiple_of(4)
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
        Ok(Self::init(map, data_off, page, size, attrs))
    }

    /// Receive memory for a `size`-byte segment, every page with `attrs`, that no
    /// other process can open: a memfd (what a node outside any host domain receives
    /// into, `domain.rs`).
    pub(crate) fn create_private(page: PageSize, size: usize, attrs: RxAttrs) -> Result<RxObject> {
        let data_off = Self::header_len(page, size);
        let map = ShmMap::memfd_sized(
            "memchan-rx",
            data_off + size,
            rustix::mm::ProtFlags::READ | rustix::mm::ProtFlags::WRITE,
        )?;
        Ok(Self::init(map, data_off, page, size, attrs))
    }

    /// A new object's header, page control and remap tables, then its magic.
    fn init(map: ShmMap, data_off: usize, page: PageSize, size: usize, attrs: RxAttrs) -> RxObject {
        let rx = RxObject {
            map,
            data_off,
            pages: size / page.bytes(),
        };
        let h = rx.header();
        h.pages
            .store((size / page.bytes()) as u64, Ordering::Relaxed);
        for p in 0..size / page.bytes() {
            rx.pct(p).store(attrs.bits(), Ordering::Relaxed);
            rx.remap(p).store(p as u32, Ordering::Relaxed);
        }
        h.magic.store(RX_MAGIC, Ordering::Release);
        rx
    }

    /// Maps another node's receive memory.
    pub(crate) fn open(name: &str, page: PageSize, size: usize) -> Result<RxObject> {
        Self::open_as(name, page, size, true)
    }

    /// Maps another node's receive memory, read-write or read-only (a remote reader
    /// that may not write the segment: `rma.rs`).
    pub(crate) fn open_as(
        name: &str,
        page: PageSize,
        size: usize,
        writable: bool,
    ) -> Result<RxObject> {
        let how = if writable {
            Open::Existing
        } else {
            Open::ReadOnly
        };
        let map = ShmMap::open(name, how)?;
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
        let rx = RxObject {
            map,
            data_off,
            pages: size / page.bytes(),
        };
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
        // SAFETY: the mapping starts with an `RxHeader` (page-aligned, 64 bytes of
        // atomics), lives as long as `self`, and is only accessed through atomics.
        unsafe { &*(self.map.ptr() as *const RxHeader) }
    }

    /// Marks this receive memory unmapped by its owner, before the owner leaves the
    /// segment's rx set: a sender that finds it retired in its cache maps the name
    /// again (the owner may have mapped the segment anew under the same name).
    pub(crate) fn retire(&self) {
        self.header().retired.store(1, Ordering::Release);
    }

    /// Whether [`retire`](Self::retire) was called (by the owner, or by a member that
    /// may write it: then a sender only maps it again).
    pub(crate) fn retired(&self) -> bool {
        self.header().retired.load(Ordering::Acquire) != 0
    }

    /// The page control byte of data page `page`.
    pub(crate) fn pct(&self, page: usize) -> &AtomicU8 {
        debug_assert!(64 + page < self.data_off);
        // SAFETY: bytes 64..data_off hold one control byte per page (see `header_len`),
        // in bounds of the mapping; accessed only atomically.
        unsafe { &*(self.map.ptr().add(64 + page) as *const AtomicU8) }
    }

    /// The remap entry of data page `page` (the page its packets land on when the
    /// page control byte's remapped bit is set).
    pub(crate) fn remap(&self, page: usize) -> &AtomicU32 {
        debug_assert!(page < self.pages);
        let off = Self::remap_off(self.pages) + 4 * page;
        // SAFETY: the remap table lies between the page control table and the data
        // (see `header_len`), 4-aligned, one entry per page; accessed only atomically.
        unsafe { &*(self.map.ptr().add(off) as *const AtomicU32) }
    }

    /// Sets the attributes of data page `page`, keeping its remapped bit.
    pub(crate) fn set_page_attrs(&self, page: usize, attrs: RxAttrs) {
        let _ = self
            .pct(page)
            .fetch_update(Ordering::Release, Ordering::Relaxed, |b| {
                Some(attrs.bits() | (b & RX_REMAPPED))
            });
    }

    /// Receive-side remap: packets addressed to data page `page` land on page `to`
    /// from now on (`to == page`: where they are addressed again). The caller checked
    /// both against the page count.
    pub(crate) fn remap_page(&self, page: usize, to: usize) {
        // Entry first, then the bit (Release): a sender that sees the bit and reads
        // the entry with Acquire finds this entry or a later one.
        self.remap(page).store(to as u32, Ordering::Release);
        let _ = self
            .pct(page)
            .fetch_update(Ordering::Release, Ordering::Relaxed, |b| {
                Some(if to == page {
                    b & !RX_REMAPPED
                } else {
                    b | RX_REMAPPED
                })
            });
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
    /// The page control table: 64 bytes past the header, and the remap table follows
    /// it (`RxObject::remap_off`), so one pointer reaches all three.
    pct: *const AtomicU8,
    /// The data pages (from the segment's size: remap entries are checked against it).
    pages: u32,
}

impl Target {
    /// No destination: writes to it are dropped.
    pub(crate) const NONE: Target = Target {
        data: std::ptr::null_mut(),
        pct: std::ptr::null(),
        pages: 0,
    };

    /// `obj`'s receive memory; valid while `obj` is held.
    pub(crate) fn of(obj: &RxObject) -> Target {
        Target {
            data: obj.data(),
            pct: obj.pct(0),
            // A segment has at most 16 GiB / 4 KiB = 4 Mi pages.
            pages: obj.pages as u32,
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
        let mut at = offset;
        if bits & RX_REMAPPED != 0 {
            at = self.remapped(page_shift, offset);
        }
        // Whatever the sender wrote before this packet is visible to a reader that sees
        // any of its bytes with Acquire (the packet store's accesses are Relaxed).
        fence(Ordering::Release);
        // SAFETY: in bounds by the caller's contract (`remapped` keeps it so); memchan
        // reaches receive memory only through atomics (this store, the owner's loads).
        unsafe { packet::store(self.data.add(at), data) };
        bits & RX_NOTIFY != 0
    }

    /// A record within one page, all whole words: the 8-byte words of `body` at
    /// `offset`, then `word` at `publish`, under one read of the page's control byte
    /// (both land or, receive disabled, neither). Whether the page asks for a notify,
    /// or `None` when the page is remapped (nothing written: the caller takes the
    /// general path). The message layer's slot: a store per word, no length logic.
    ///
    /// # Safety
    /// `offset` and `publish` 8-aligned, `body.len()` a multiple of 8, both ranges
    /// within the segment this target maps and in one page; the mapping held.
    #[inline(always)]
    pub(crate) unsafe fn store_record(
        self,
        page_shift: u32,
        offset: usize,
        body: &[u8],
        publish: usize,
        word: u64,
    ) -> Option<bool> {
        // SAFETY: the page index is within the page control table (caller's bound).
        let bits = unsafe { (*self.pct.add(publish >> page_shift)).load(Ordering::Relaxed) };
        if bits & RX_REMAPPED != 0 {
            return None;
        }
        if bits & RX_ENABLE == 0 {
            return Some(false);
        }
        // As `apply_quiet`: what the sender wrote before is visible to a reader that
        // sees any of these words with Acquire; the body before the published word.
        fence(Ordering::Release);
        let src = body.as_ptr().cast::<u64>();
        for k in 0..body.len() / 8 {
            // SAFETY: word `k` of `body` is in it (read unaligned); its destination
            // is 8-aligned and in bounds (caller's contract), and receive memory is
            // reached only through atomics.
            unsafe {
                let v = src.add(k).read_unaligned();
                AtomicU64::from_ptr(self.data.add(offset + 8 * k).cast())
                    .store(v, Ordering::Relaxed);
            }
        }
        fence(Ordering::Release);
        // SAFETY: as above, for the published word.
        unsafe { AtomicU64::from_ptr(self.data.add(publish).cast()) }
            .store(word, Ordering::Relaxed);
        Some(bits & RX_NOTIFY != 0)
    }

    /// The first stores of a write of `data` at `offset` that spans pages: as
    /// [`apply_quiet`](Self::apply_quiet) on the part in `offset`'s page, extended over
    /// the following pages while each has the same receive bits, enabled, not
    /// remapped and not notifying (a notify page's waiter is woken once its own page
    /// landed). One store per run: a 1 MiB put of 4 KiB pages paid the copy's set-up
    /// and a page's bits 256 times. The bytes taken, and whether a notify page was
    /// written.
    ///
    /// # Safety
    /// As [`apply`](Self::apply), for the whole of `data`.
    #[inline(always)]
    pub(crate) unsafe fn apply_run(
        self,
        page_shift: u32,
        offset: usize,
        data: &[u8],
    ) -> (usize, bool) {
        let page = offset >> page_shift;
        let end = offset + data.len();
        let mut stop = ((page + 1) << page_shift).min(end);
        // SAFETY: the page index is within the page control table (caller's bound).
        let bits = unsafe { (*self.pct.add(page)).load(Ordering::Relaxed) };
        if bits & (RX_ENABLE | RX_NOTIFY | RX_REMAPPED) == RX_ENABLE {
            while stop < end {
                // SAFETY: `stop < end`, so its page is within the table (caller's bound).
                let next = unsafe { (*self.pct.add(stop >> page_shift)).load(Ordering::Relaxed) };
                if next != bits {
                    break;
                }
                stop = (stop + (1 << page_shift)).min(end);
            }
        }
        let n = stop - offset;
        // SAFETY: the caller's contract, for a prefix of `data` whose pages all have
        // `bits` (or the part in `offset`'s page).
        (n, unsafe {
            self.apply_quiet(page_shift, offset, &data[..n])
        })
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
                let at = if bits & RX_REMAPPED != 0 {
                    self.remapped(page_shift, off)
                } else {
                    off
                };
                // Each element is a packet: a reader that sees it with Acquire sees
                // the elements before it.
                fence(Ordering::Release);
                // SAFETY: aligned and in bounds (caller; `remapped` keeps it so);
                // reached only through atomics.
                unsafe { (*(self.data.add(at) as *const AtomicU64)).store(w, Ordering::Relaxed) };
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
                // A run lies within one page, so a remapped page moves it whole.
                let at = if bits & RX_REMAPPED != 0 {
                    self.remapped(page_shift, off)
                } else {
                    off
                };
                // SAFETY: elements i..i + run are inside the segment (caller; `remapped`
                // keeps the run inside its target page) and the source (caller); each
                // store is one packet after a Release fence.
                unsafe {
                    let (mut d, mut s) = (self.data.add(at), src.add(i * src_stride));
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

    /// Where a packet at `offset` of a remapped page lands: the same place in the
    /// page its remap entry names, if that is a page of this memory; else where it is
    /// addressed (an entry another member scribbled stays inside the segment).
    #[cold]
    fn remapped(self, page_shift: u32, offset: usize) -> usize {
        let page = offset >> page_shift;
        let pages = self.pages as usize;
        if page >= pages {
            return offset;
        }
        // SAFETY: the remap table starts `remap_off(pages)` bytes into the object (64
        // before the page control table), 4-aligned, `pages` entries; `page` < `pages`;
        // the mapping is held.
        let to = unsafe {
            let table = self
                .pct
                .cast::<u8>()
                .sub(64)
                .add(RxObject::remap_off(pages));
            (*(table as *const AtomicU32).add(page)).load(Ordering::Acquire)
        } as usize;
        if to >= pages {
            return offset;
        }
        (to << page_shift) | (offset & ((1 << page_shift) - 1))
    }

    /// Posts on the destination's notify pair.
    pub(crate) fn post(self) {
        // SAFETY: the header starts 64 bytes before the page control table and lives
        // as long as the mapping (the caller holds it).
        let h = unsafe { &*(self.pct.cast::<u8>().sub(64) as *const RxHeader) };
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
        // SAFETY: the caller's contract is this one's.
        let old = unsafe { self.word_op_quiet(page_shift, offset, op) };
        if old.is_some() {
            self.post();
        }
        old
    }

    /// [`word_op`](Self::word_op) without the notify (the caller posts it).
    ///
    /// # Safety
    /// As [`word_op`](Self::word_op).
    pub(crate) unsafe fn word_op_quiet(
        self,
        page_shift: u32,
        offset: usize,
        op: WordOp,
    ) -> Option<u64> {
        // SAFETY: the page index is within the page control table (caller's bound).
        let bits = unsafe { (*self.pct.add(offset >> page_shift)).load(Ordering::Relaxed) };
        if bits & RX_ENABLE == 0 {
            return None;
        }
        let at = if bits & RX_REMAPPED != 0 {
            self.remapped(page_shift, offset)
        } else {
            offset
        };
        // SAFETY: aligned and in bounds (caller; `remapped` keeps it so); receive
        // memory is reached only through atomics.
        let w = unsafe { &*(self.data.add(at) as *const AtomicU64) };
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
/// Not an attribute of `RxAttrs`: set by `remap_page` only, kept by `set_attrs`.
const RX_REMAPPED: u8 = 1 << 7;

/// Applies one packet to one destination's receive memory (used by recovery, off
/// the data path).
pub(crate) fn apply(view: &RxObject, page: PageSize, offset: usize, data: &[u8]) {
    // SAFETY: callers checked the range against the segment; `view` is held.
    unsafe { Target::of(view).apply(page.bytes().trailing_zeros(), offset, data) }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Receive-side remap as a sender applies it, and a remap table another member
    /// scribbled: a packet lands on the page the entry names if that is a page of the
    /// segment, else where it is addressed; never outside.
    #[test]
    fn remap_moves_packets_within_the_segment_only() {
        let page = PageSize::K4;
        let ps = page.bytes();
        let name = format!("memchan.unit-remap-{}", std::process::id());
        let rx = RxObject::create(&name, page, 3 * ps, 0o600, 0, RxAttrs::default()).unwrap();
        ShmMap::unlink(&name);
        let shift = ps.trailing_zeros();
        let at = |off: usize| {
            let mut b = [0u8; 8];
            // SAFETY: in bounds of the 3-page data; nothing else writes it.
            unsafe { packet::load(rx.data().add(off), &mut b) };
            u64::from_le_bytes(b)
        };
        let put = |off: usize, v: u64| {
            // SAFETY: `off + 8` is within the segment; `rx` is held.
            unsafe { Target::of(&rx).apply(shift, off, &v.to_le_bytes()) }
        };
        rx.remap_page(0, 2);
        put(16, 1);
        assert_eq!((at(16), at(2 * ps + 16)), (0, 1));
        rx.set_page_attrs(0, RxAttrs::default());
        put(24, 2);
        assert_eq!(at(2 * ps + 24), 2, "set_attrs keeps the remap");
        rx.remap_page(0, 0);
        put(16, 3);
        assert_eq!(at(16), 3, "undone");
        // Scribbled: the bit set by hand and entries past the segment.
        rx.pct(1).fetch_or(RX_REMAPPED, Ordering::Relaxed);
        for bad in [3u32, 4096, u32::MAX] {
            rx.remap(1).store(bad, Ordering::Relaxed);
            put(ps + 8, u64::from(bad));
            assert_eq!(at(ps + 8), u64::from(bad), "entry {bad}: where addressed");
        }
        rx.remap(1).store(2, Ordering::Relaxed);
        put(ps + 32, 9);
        assert_eq!((at(ps + 32), at(2 * ps + 32)), (0, 9));
        // A header page count another member rewrote changes nothing.
        rx.header().pages.store(u64::MAX, Ordering::Relaxed);
        put(ps + 40, 10);
        assert_eq!(at(2 * ps + 40), 10);
    }
}
