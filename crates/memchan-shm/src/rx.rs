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
//!  0        8         12        16       24        28        64               H
//!  +--------+---------+---------+--------+---------+---------+----------------+------------+
//!  | magic  | notify  | notify  | pages  | retired | reserved| page control   | data pages |
//!  |        | seq u32 | waiters |  u64   |   u32   |         | table, 1 byte  |  (segment  |
//!  |        |         |   u32   |        |         |         | per page       |   size)    |
//!  +--------+---------+---------+--------+---------+---------+----------------+------------+
//!  H = 64 + pages rounded up to a page, so data is page-aligned.
//!  page control byte: bit 0 receive enable, bit 1 notify on receive, bit 2 remote read.
//!  retired: 1 once its owner unmapped it (the name may then be taken by a new
//!  object of the same segment, node and incarnation, see `Order::lookup`).
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
    pub retired: AtomicU32,
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
        // SAFETY: the mapping starts with an `RxHeader` (page-aligned, 28 bytes of
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
        // SAFETY: the page index is within the page control table (caller's bound).
        let bits = unsafe { (*self.pct.add(offset >> page_shift)).load(Ordering::Relaxed) };
        if bits & RX_ENABLE == 0 {
            return;
        }
        // Whatever the sender wrote before this packet is visible to a reader that sees
        // any of its bytes with Acquire (the packet store's accesses are Relaxed).
        fence(Ordering::Release);
        // SAFETY: in bounds by the caller's contract; memchan reaches receive memory
        // only through atomics (this store, the owner's loads).
        unsafe { packet::store(self.data.add(offset), data) };
        if bits & RX_NOTIFY != 0 {
            // SAFETY: the header lives as long as the mapping.
            let h = unsafe { &*self.hdr };
            Notify::new(&h.notify_seq, &h.notify_waiters).post(&SharedFutex);
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
