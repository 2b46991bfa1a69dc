//! Receive memory for the nodes of a multi-host cluster that share this host (a **host
//! domain**, see `memchan-net`): the same object, layout and apply rules as this
//! transport's own receive memory (`rx.rs`), behind a small safe API, so that a node
//! of the hub transport receives its own packets into it and a node of the same host
//! stores into it directly.
//!
//! ```
//! use memchan_shm::domain::RxMemory;
//! use memchan_core::{PageSize, RxAttrs};
//! let name = format!("memchan.doc-domain-{}", std::process::id());
//! let mine = RxMemory::create(&name, PageSize::K4, 8192, 0o600, 0, RxAttrs::default())?;
//! let theirs = RxMemory::open(&name, PageSize::K4, 8192)?; // another process's view
//! RxMemory::unlink(&name);
//! assert!(!theirs.apply(4096 + 8, &7u64.to_le_bytes())); // not a notify page
//! assert_eq!(mine.load_u64(4096 + 8), Some(7));
//! # Ok::<(), memchan_core::Error>(())
//! ```
//!
//! Every write is bounds-checked against the size the opener gave (never against the
//! header, which every process that maps the object can write); the page control
//! bytes and remap entries are read as `rx.rs`'s senders read them.

use crate::rx::{RxObject, Target, WordOp as RxWordOp};
use crate::shm::ShmMap;
use memchan_core::sync::{AtomicU32, AtomicU8, Ordering};
use memchan_core::{NodeId, PageSize, Result, RxAttrs};
// A remote atomic's word: `memchan_core::rma` runs its operations on std's atomics.
use std::sync::atomic::{AtomicU32 as WordU32, AtomicU64 as WordU64};

/// One node's receive memory for one segment, mapped in this process: its owner's
/// ([`create`](Self::create), [`private`](Self::private)) or a sender's
/// ([`open`](Self::open)).
pub struct RxMemory {
    obj: RxObject,
    target: Target,
    page_shift: u32,
    size: usize,
}

// SAFETY: `target` points into `obj`'s mapping, which moves with it and is reached
// only through atomics.
unsafe impl Send for RxMemory {}
// SAFETY: as above: concurrent access goes through atomic loads and stores only.
unsafe impl Sync for RxMemory {}

/// An atomic update of one 8-byte word of receive memory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WordOp {
    /// Stores the value.
    Set(u64),
    /// Adds the value (wrapping).
    Add(u64),
    /// Stores `new` if the word holds `expected`.
    Cas {
        /// The value the word must hold.
        expected: u64,
        /// Its value after.
        new: u64,
    },
}

impl RxMemory {
    fn of(obj: RxObject, page: PageSize, size: usize) -> RxMemory {
        RxMemory {
            target: Target::of(&obj),
            obj,
            page_shift: page.bytes().trailing_zeros(),
            size,
        }
    }

    /// Creates the receive memory `name` under `/dev/shm` for a `size`-byte segment
    /// (a whole number of `page`s), every page with `attrs`, with the segment's
    /// `mode` and group `gid` (the kernel then lets exactly the segment's writers open
    /// it to write). A leftover of the same name (an earlier holder of the name that
    /// did not unmap it) is marked retired first, so that a sender still holding it
    /// maps the name again.
    ///
    /// # Errors
    /// `Os` when the object cannot be made.
    pub fn create(
        name: &str,
        page: PageSize,
        size: usize,
        mode: u32,
        gid: u32,
        attrs: RxAttrs,
    ) -> Result<RxMemory> {
        if let Ok(old) = RxObject::open(name, page, size) {
            old.retire();
        }
        Ok(Self::of(
            RxObject::create(name, page, size, mode, gid, attrs)?,
            page,
            size,
        ))
    }

    /// Receive memory that no other process can open (a memfd).
    ///
    /// # Errors
    /// `Os` when the memory cannot be made.
    pub fn private(page: PageSize, size: usize, attrs: RxAttrs) -> Result<RxMemory> {
        Ok(Self::of(
            RxObject::create_private(page, size, attrs)?,
            page,
            size,
        ))
    }

    /// Maps another node's receive memory `name` of a `size`-byte segment to write.
    ///
    /// # Errors
    /// `Os` when it does not exist or may not be opened to write (the kernel checks
    /// the segment's mode); `Invalid` when it is too short or has no memchan header.
    pub fn open(name: &str, page: PageSize, size: usize) -> Result<RxMemory> {
        Ok(Self::of(RxObject::open(name, page, size)?, page, size))
    }

    /// Removes the name `name` from `/dev/shm`; mappings stay valid.
    pub fn unlink(name: &str) {
        ShmMap::unlink(name);
    }

    /// The segment's size in bytes.
    pub fn size(&self) -> usize {
        self.size
    }

    /// The start of the data pages (reached through atomics only).
    pub fn data(&self) -> *mut u8 {
        self.obj.data()
    }

    /// The page control byte of page `page` (receive enable, notify, remote read and
    /// remapped bits).
    ///
    /// # Panics
    /// When `page` is past the segment.
    pub fn page_control(&self, page: usize) -> &AtomicU8 {
        assert!(
            page < self.size >> self.page_shift,
            "page {page} past the segment"
        );
        self.obj.pct(page)
    }

    /// Sets page `page`'s attributes, keeping its remapped bit.
    ///
    /// # Panics
    /// When `page` is past the segment.
    pub fn set_page_attrs(&self, page: usize, attrs: RxAttrs) {
        assert!(
            page < self.size >> self.page_shift,
            "page {page} past the segment"
        );
        self.obj.set_page_attrs(page, attrs);
    }

    /// Receive-side remap: packets addressed to page `page` land on page `to`.
    ///
    /// # Panics
    /// When either page is past the segment.
    pub fn remap_page(&self, page: usize, to: usize) {
        let pages = self.size >> self.page_shift;
        assert!(page < pages && to < pages, "page past the segment");
        self.obj.remap_page(page, to);
    }

    /// The notify pair: writes that landed on notify pages, and readers asleep (or
    /// about to be) waiting for one (`memchan_core::notify`).
    pub fn notify_words(&self) -> (&AtomicU32, &AtomicU32) {
        let h = self.obj.header();
        (&h.notify_seq, &h.notify_waiters)
    }

    /// Marks the memory unmapped by its owner: a sender that holds it maps the name
    /// again.
    pub fn retire(&self) {
        self.obj.retire();
    }

    /// Whether its owner retired it.
    pub fn retired(&self) -> bool {
        self.obj.retired()
    }

    /// The owner's fence against sender `node` (`on`: a node it knows failed or gone,
    /// which must store into it no more; off again when the id joins anew). A word
    /// every process that maps the memory can write: a sender that finds itself
    /// fenced only takes the longer path.
    pub fn set_fenced(&self, node: NodeId, on: bool) {
        let (w, bit) = (node.index() / 64, 1u64 << (node.index() % 64));
        let word = &self.obj.header().fenced[w];
        if on {
            word.fetch_or(bit, Ordering::SeqCst);
        } else {
            word.fetch_and(!bit, Ordering::SeqCst);
        }
    }

    /// Whether the owner fenced sender `node` ([`set_fenced`](Self::set_fenced)).
    pub fn fenced(&self, node: NodeId) -> bool {
        let (w, bit) = (node.index() / 64, 1u64 << (node.index() % 64));
        self.obj.header().fenced[w].load(Ordering::SeqCst) & bit != 0
    }

    /// The 8-byte word at `offset` (`None`: unaligned or past the segment).
    pub fn load_u64(&self, offset: usize) -> Option<u64> {
        self.word_u64(offset).map(|w| w.load(Ordering::Acquire))
    }

    /// Whether a remote access to `offset..offset + len` may run: inside the segment
    /// and every page with the `remote_read` attribute (`Err`: the first offset that
    /// has not it, or `offset` itself when the range leaves the segment).
    pub fn remote_access(&self, offset: usize, len: usize) -> std::result::Result<(), usize> {
        if offset.checked_add(len).is_none_or(|e| e > self.size) {
            return Err(offset);
        }
        memchan_core::rma::pages_allow(1 << self.page_shift, offset, len, |p| {
            self.obj.pct(p).load(Ordering::Acquire)
        })
    }

    /// Copies `buf.len()` bytes at `offset` with atomic loads, as a remote read does
    /// (`false`: past the segment, nothing read). The page attributes are the
    /// caller's to check ([`remote_access`](Self::remote_access)).
    pub fn load(&self, offset: usize, buf: &mut [u8]) -> bool {
        if offset.checked_add(buf.len()).is_none_or(|e| e > self.size) {
            return false;
        }
        // SAFETY: inside the data pages (checked), mapped while `self.obj` lives;
        // every writer of receive memory stores atomically.
        unsafe { memchan_core::packet::load(self.data().add(offset), buf) };
        memchan_core::sync::fence(Ordering::Acquire);
        true
    }

    /// The aligned 8-byte word at `offset`, for a remote atomic (`None`: unaligned
    /// or past the segment).
    pub fn word_u64(&self, offset: usize) -> Option<&WordU64> {
        if !offset.is_multiple_of(8) || offset.checked_add(8).is_none_or(|e| e > self.size) {
            return None;
        }
        // SAFETY: aligned (the data pages are page-aligned) and inside them (checked),
        // mapped while `self` lives; reached only through atomics.
        Some(unsafe { &*(self.data().add(offset) as *const WordU64) })
    }

    /// As [`word_u64`](Self::word_u64) for the aligned 4-byte word at `offset`.
    pub fn word_u32(&self, offset: usize) -> Option<&WordU32> {
        if !offset.is_multiple_of(4) || offset.checked_add(4).is_none_or(|e| e > self.size) {
            return None;
        }
        // SAFETY: as in `word_u64`, 4-aligned.
        Some(unsafe { &*(self.data().add(offset) as *const WordU32) })
    }

    /// Applies a packet of `data` at `offset`, page by page as the page control bytes
    /// say (dropped whole if it reaches past the segment or is empty); whether it
    /// landed on a notify page. The caller posts the notify (its own way of waking).
    pub fn apply(&self, offset: usize, data: &[u8]) -> bool {
        if data.is_empty() || offset.checked_add(data.len()).is_none_or(|e| e > self.size) {
            return false;
        }
        let (mut at, mut notify) = (0, false);
        while at < data.len() {
            // SAFETY: `offset + at .. offset + data.len()` is inside the segment
            // (checked above) and `self.obj` keeps the mapping.
            let (n, woke) = unsafe {
                self.target
                    .apply_run(self.page_shift, offset + at, &data[at..])
            };
            notify |= woke;
            at += n;
        }
        notify
    }

    /// A record: `body` at `offset`, then the 8-byte `word` at `publish`, so that a
    /// reader that sees the word sees the body; whether a notify page was written
    /// (`None`: out of the segment or unaligned, nothing written).
    pub fn apply_record(
        &self,
        offset: usize,
        body: &[u8],
        publish: usize,
        word: u64,
    ) -> Option<bool> {
        let inside = |o: usize, l: usize| o.checked_add(l).is_some_and(|e| e <= self.size);
        if !inside(offset, body.len()) || !inside(publish, 8) || !publish.is_multiple_of(8) {
            return None;
        }
        let page = |o: usize| o >> self.page_shift;
        if offset.is_multiple_of(8)
            && body.len().is_multiple_of(8)
            && !body.is_empty()
            && page(offset) == page(publish)
            && page(offset + body.len() - 1) == page(publish)
        {
            // SAFETY: aligned, whole words, inside the segment and in one page
            // (checked); `self.obj` keeps the mapping.
            if let Some(n) = unsafe {
                self.target
                    .store_record(self.page_shift, offset, body, publish, word)
            } {
                return Some(n);
            }
        }
        let body = self.apply(offset, body);
        Some(self.apply(publish, &word.to_le_bytes()) | body)
    }

    /// Applies `op` to the 8-byte word at `offset` as one atomic access: the word's
    /// value before, or `None` when it is unaligned, past the segment, or on a page
    /// whose receive is disabled (nothing written). A word operation always asks for
    /// a notify (the caller posts it).
    pub fn word_op(&self, offset: usize, op: WordOp) -> Option<u64> {
        if !offset.is_multiple_of(8) || offset.checked_add(8).is_none_or(|e| e > self.size) {
            return None;
        }
        let op = match op {
            WordOp::Set(v) => RxWordOp::Set(v),
            WordOp::Add(v) => RxWordOp::Add(v),
            WordOp::Cas { expected, new } => RxWordOp::Cas { expected, new },
        };
        // SAFETY: aligned and inside the segment (checked); the mapping is held.
        unsafe { self.target.word_op_quiet(self.page_shift, offset, op) }
    }
}
