//! Receive memory: one shared-memory object per (segment, node) that receives every
//! write addressed to the segment at that node. Senders on the same host map it and
//! store into it directly (direct deposit); the owner reads it with plain loads.
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

use crate::shm::{Open, ShmMap};
use memchan_core::sync::{AtomicU32, AtomicU64, AtomicU8, Ordering};
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
    /// with `attrs`.
    pub(crate) fn create(
        name: &str,
        page: PageSize,
        size: usize,
        mode: u32,
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
