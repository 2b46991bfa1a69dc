//! The transmit path. A write to a tx mapping is either a **direct deposit** (one
//! destination on this host, no local copy: a bounds check and a store into the
//! destination's receive memory, no system call, no lock) or an **ordered packet**
//! (broadcast, multicast, or local copy: it passes the point of global order, which
//! applies it at every destination before the next ordered packet; see `order.rs`).
//!
//! Why this keeps both ordering rules: a sender's stores reach memory in program order
//! (x86-64 TSO, and Release stores elsewhere), and a sender applies its ordered packets
//! itself, so every destination sees its packets in the order sent (rule 1). Packets
//! that reach two or more destinations are exactly the ordered ones, and those are
//! applied one at a time under the order point, so every destination sees them in one
//! order (rule 2). A direct deposit has a single destination and no local copy, so rule
//! 2 constrains it against nothing.

mod deposit;

use crate::local::SegRef;
use crate::node::Inner;
use crate::order::Targets;
use crate::rx::Target;
use memchan_core::sync::{fence, AtomicU64, Ordering};
use memchan_core::{Dest, Error, NodeId, NodeSet, Result, TxAttrs, MAX_NODES};
use std::cell::{Cell, RefCell};
use std::sync::Arc;

/// A transmit window onto a segment: writes land in the destination's rx mappings.
///
/// Not `Sync`: a tx mapping belongs to one thread at a time (like a mapped page of
/// the adapter); make one per thread.
pub struct TxMapping {
    inner: Arc<Inner>,
    seg: SegRef,
    dest: Dest,
    attrs: TxAttrs,
    /// The packet destinations (with or without self), fixed at map time.
    dests: NodeSet,
    /// Direct deposit: one other node, no local copy.
    direct: bool,
    page_shift: u32,
    /// The segment entry's `rx_gen` word and this node's slot, resolved once.
    rx_gen: *const AtomicU64,
    alive: *const AtomicU64,
    /// Copies of `inner.local.incarnation` and `seg.size`, next to the other hot fields.
    incarnation: u64,
    size: usize,
    /// `rx_gen` when `target` was resolved.
    seen_gen: Cell<u64>,
    /// The destination, or a null target when it does not map the segment rx.
    target: Cell<Target>,
    targets: RefCell<Targets>,
}

// SAFETY: the raw pointers point into the control block and receive memory that
// `inner` and `targets.keep` keep mapped; they move with the mapping.
unsafe impl Send for TxMapping {}

impl TxMapping {
    pub(crate) fn new(inner: Arc<Inner>, seg: SegRef, dest: Dest, attrs: TxAttrs) -> Result<Self> {
        inner.check_perm(&seg, 2, "map_tx")?;
        let mut dests = match dest {
            Dest::Node(n) if !inner.is_member(n) => return Err(Error::UnknownNode(n)),
            Dest::Node(n) => [n].into_iter().collect(),
            Dest::Group(g) => inner.group_members(g)?,
            Dest::Broadcast => NodeSet([u64::MAX; MAX_NODES / 64]),
        };
        // A sender is among its own destinations only with local copy (or when it
        // names itself point-to-point).
        if attrs.local_copy || dest == Dest::Node(inner.local.me) {
            dests.insert(inner.local.me);
        } else {
            dests.remove(inner.local.me);
        }
        let direct = matches!(dest, Dest::Node(n) if n != inner.local.me) && !attrs.local_copy;
        let rx_gen = &inner.local.ctl().segs[seg.idx as usize].rx_gen as *const AtomicU64;
        let alive = inner.local.alive_word() as *const AtomicU64;
        Ok(TxMapping {
            page_shift: inner.local.page.bytes().trailing_zeros(),
            incarnation: inner.local.incarnation,
            size: seg.size,
            inner,
            seg,
            dest,
            attrs,
            dests,
            direct,
            rx_gen,
            alive,
            seen_gen: Cell::new(u64::MAX),
            target: Cell::new(Target::NONE),
            targets: RefCell::new(Targets::new()),
        })
    }

    /// Segment size in bytes.
    pub fn len(&self) -> usize {
        self.seg.size
    }

    /// Whether the segment is empty (never: segments have at least one page).
    pub fn is_empty(&self) -> bool {
        self.seg.size == 0
    }

    /// The destination.
    pub fn dest(&self) -> Dest {
        self.dest
    }

    /// The attributes.
    pub fn attrs(&self) -> TxAttrs {
        self.attrs
    }

    /// Turns transmit enable on or off.
    pub fn set_transmit_enable(&mut self, on: bool) {
        self.attrs.transmit_enable = on;
    }

    /// The node that sends.
    pub fn node(&self) -> NodeId {
        self.inner.local.me
    }

    #[inline(always)]
    fn check(&self, offset: usize, len: usize, atomic: bool) -> Result<()> {
        let in_bounds = offset.checked_add(len).is_some_and(|end| end <= self.size);
        let aligned = !atomic || offset.is_multiple_of(len);
        if !(self.attrs.transmit_enable && in_bounds && aligned) {
            return Err(self.refusal(offset, len, in_bounds));
        }
        Ok(())
    }

    #[cold]
    #[inline(never)]
    fn refusal(&self, offset: usize, len: usize, in_bounds: bool) -> Error {
        let segment = self.seg.name.clone();
        if !self.attrs.transmit_enable {
            Error::TransmitDisabled { segment }
        } else if !in_bounds {
            Error::OutOfBounds {
                segment,
                offset,
                len,
                size: self.seg.size,
            }
        } else {
            Error::Unaligned {
                segment,
                offset,
                size: len,
            }
        }
    }

    /// Writes an aligned 8-byte word atomically.
    #[inline(always)]
    pub fn write_u64(&self, offset: usize, v: u64) -> Result<()> {
        self.check(offset, 8, true)?;
        self.send(offset, &v.to_ne_bytes())
    }

    /// Writes an aligned 4-byte word atomically.
    #[inline(always)]
    pub fn write_u32(&self, offset: usize, v: u32) -> Result<()> {
        self.check(offset, 4, true)?;
        self.send(offset, &v.to_ne_bytes())
    }

    /// Writes an aligned 2-byte word atomically.
    #[inline(always)]
    pub fn write_u16(&self, offset: usize, v: u16) -> Result<()> {
        self.check(offset, 2, true)?;
        self.send(offset, &v.to_ne_bytes())
    }

    /// Writes one byte.
    #[inline(always)]
    pub fn write_u8(&self, offset: usize, v: u8) -> Result<()> {
        self.check(offset, 1, true)?;
        self.send(offset, &[v])
    }

    /// Writes byte `v` at `offset` at every destination, without the point of global
    /// order when nothing it orders overlaps the write (`Order::unordered`), else as
    /// an ordered packet. Only for writes whose place in the global order does not
    /// matter: a lock slot's clear (`lock.rs`).
    pub(crate) fn write_u8_unordered(&self, offset: usize, v: u8) -> Result<()> {
        if !self.direct && self.bypass(offset, v)? {
            return Ok(());
        }
        self.write_u8(offset, v)
    }

    /// The write of [`write_u8_unordered`](Self::write_u8_unordered) without the
    /// order point, if it can be made so: whether it was.
    pub(crate) fn bypass(&self, offset: usize, v: u8) -> Result<bool> {
        self.check(offset, 1, true)?;
        self.may_send()?;
        let mut targets = self.targets.borrow_mut();
        let order = self.inner.order();
        order.unordered(&self.seg, &self.dests, &mut targets, offset, &[v])
    }

    /// Writes `data` at `offset`, split into packets at page boundaries; each packet is
    /// applied whole, in order.
    #[inline(always)]
    pub fn write(&self, offset: usize, data: &[u8]) -> Result<()> {
        self.check(offset, data.len(), false)?;
        if data.is_empty() {
            return Ok(());
        }
        self.send(offset, data)
    }

    /// [`write`](Self::write) without the notify of a direct deposit (the contract's
    /// `write_no_notify`): the record's publishing write that follows posts it. An
    /// ordered packet is applied as by `write`.
    #[inline(always)]
    pub fn write_no_notify(&self, offset: usize, data: &[u8]) -> Result<()> {
        self.check(offset, data.len(), false)?;
        if data.is_empty() {
            return Ok(());
        }
        if !self.direct {
            self.send_ordered(offset, data)?;
        } else if offset.is_multiple_of(8) && data.len().is_multiple_of(8) {
            // Whole words (the message layer's acknowledgement word): a store each,
            // the page's control byte read once per page, no length logic.
            if self.resolve()? {
                let src = data.as_ptr().cast::<u64>();
                let words = (0..data.len() / 8).map(|k| {
                    // SAFETY: word `k` of `data` is in it (read unaligned).
                    (offset + 8 * k, unsafe { src.add(k).read_unaligned() })
                });
                // SAFETY: `check` bounded the words by the segment, each 8-aligned;
                // `targets` holds the destination's map.
                unsafe { self.target.get().store_words(self.page_shift, words) };
            }
        } else {
            self.deposit_with(offset, data, false)?;
        }
        if self.attrs.ack_request {
            fence(Ordering::SeqCst);
        }
        Ok(())
    }

    /// A record in one call (the contract's `write_record`): `body` at `offset`
    /// without notify, then the 8-byte word `word` at `publish`, notifying. Both
    /// ranges are checked before anything is written; a direct deposit resolves its
    /// destination once for the two.
    #[inline(always)]
    pub fn write_record(
        &self,
        offset: usize,
        body: &[u8],
        publish: usize,
        word: u64,
    ) -> Result<()> {
        // Both checks at once; the error from the checks one by one.
        let fits = offset
            .checked_add(body.len())
            .is_some_and(|end| end <= self.size)
            && publish.is_multiple_of(8)
            && publish.checked_add(8).is_some_and(|end| end <= self.size);
        if !(self.attrs.transmit_enable && fits) {
            self.check(offset, body.len(), false)?;
            self.check(publish, 8, true)?;
        }
        if self.direct {
            if self.resolve()? && !self.record_in_page(offset, body, publish, word) {
                if !body.is_empty() {
                    self.deposit_resolved(offset, body, false);
                }
                self.deposit_resolved(publish, &word.to_ne_bytes(), true);
            }
            if self.attrs.ack_request {
                fence(Ordering::SeqCst);
            }
            return Ok(());
        }
        // Ordered: the two writes as they are (both ranges are checked above).
        self.write_no_notify(offset, body)?;
        self.write_u64(publish, word)
    }

    /// The direct deposit of a record of whole words in one page (the message
    /// layer's slot) with one look at the page's control byte: whether it was written
    /// so (`check` bounded both ranges and aligned `publish`; `resolve` found the
    /// destination).
    #[inline(always)]
    fn record_in_page(&self, offset: usize, body: &[u8], publish: usize, word: u64) -> bool {
        let page = publish >> self.page_shift;
        let fits = body.is_empty()
            || (offset >> self.page_shift == page
                && (offset + body.len() - 1) >> self.page_shift == page
                && offset.is_multiple_of(8)
                && body.len().is_multiple_of(8));
        if !fits {
            return false;
        }
        let t = self.target.get();
        // SAFETY: as the conditions above and `check` require.
        match unsafe { t.store_record(self.page_shift, offset, body, publish, word) } {
            Some(notify) => {
                if notify {
                    t.post();
                }
                true
            }
            None => false,
        }
    }

    #[inline(always)]
    fn send(&self, offset: usize, data: &[u8]) -> Result<()> {
        if self.direct {
            self.deposit(offset, data)?;
        } else {
            self.send_ordered(offset, data)?;
        }
        if self.attrs.ack_request {
            fence(Ordering::SeqCst);
        }
        Ok(())
    }

    /// Direct deposit: the store into the destination's receive memory.
    #[inline(always)]
    fn deposit(&self, offset: usize, data: &[u8]) -> Result<()> {
        self.deposit_with(offset, data, true)
    }

    /// Direct deposit, posting the page's notify only with `notify`.
    #[inline(always)]
    fn deposit_with(&self, offset: usize, data: &[u8], notify: bool) -> Result<()> {
        if self.resolve()? {
            self.deposit_resolved(offset, data, notify);
        }
        Ok(())
    }

    /// Brings the destination up to date with the segment's `rx_gen`: whether it
    /// maps the segment rx (if not, direct deposits to it are dropped).
    #[inline(always)]
    fn resolve(&self) -> Result<bool> {
        // SAFETY: `rx_gen` points into the control block, mapped while `inner` lives.
        let gen = unsafe { (*self.rx_gen).load(Ordering::Acquire) };
        if gen != self.seen_gen.get() {
            self.refresh_direct(gen)?;
        }
        Ok(!self.target.get().is_none())
    }

    /// The stores of a direct deposit to the resolved destination (`resolve` said it
    /// maps the segment; `check` bounded the range by the segment).
    #[inline(always)]
    fn deposit_resolved(&self, offset: usize, data: &[u8], notify: bool) {
        let t = self.target.get();
        let last = offset + data.len() - 1;
        if (offset ^ last) < 1 << self.page_shift {
            // SAFETY: `check` bounded the write by the segment; `targets` holds the map.
            if unsafe { t.apply_quiet(self.page_shift, offset, data) } && notify {
                t.post();
            }
            return;
        }
        let mut pos = 0;
        while pos < data.len() {
            // SAFETY: as above, for the rest of the write.
            let (n, post) = unsafe { t.apply_run(self.page_shift, offset + pos, &data[pos..]) };
            // A page's waiter is woken once its page landed, not after the whole write
            // (as `apply` does).
            if post && notify {
                t.post();
            }
            pos += n;
        }
    }

    /// Whether this node may still send: its slot carries its incarnation.
    fn may_send(&self) -> Result<()> {
        if self.attrs.transmit_under_error
            // SAFETY: `alive` points into the control block, mapped while `inner` lives.
            || unsafe { (*self.alive).load(Ordering::Relaxed) } == self.incarnation
        {
            Ok(())
        } else {
            self.inner.local.not_alive()
        }
    }

    /// Re-resolves the destination. Isolating or removing any node moves every
    /// segment's `rx_gen`, so this is also where direct deposit checks that this
    /// node may still send: the store itself pays for one compare.
    #[cold]
    #[inline(never)]
    fn refresh_direct(&self, gen: u64) -> Result<()> {
        self.may_send()?;
        let mut targets = self.targets.borrow_mut();
        targets.refresh(self.inner.order(), &self.seg, &self.dests)?;
        self.target.set(targets.first());
        self.seen_gen.set(gen);
        Ok(())
    }

    #[inline(never)]
    fn send_ordered(&self, offset: usize, data: &[u8]) -> Result<()> {
        self.may_send()?;
        let mut targets = self.targets.borrow_mut();
        for (off, chunk) in packets(offset, data, 1 << self.page_shift) {
            self.inner
                .order()
                .ordered_packet(&self.seg, &self.dests, &mut targets, off, chunk)?;
        }
        Ok(())
    }
}

/// Splits a write into packets that never cross a page boundary.
fn packets(offset: usize, data: &[u8], page: usize) -> impl Iterator<Item = (usize, &[u8])> {
    let mut pos = 0;
    std::iter::from_fn(move || {
        if pos >= data.len() {
            return None;
        }
        let off = offset + pos;
        let room = page - off % page;
        let n = room.min(data.len() - pos);
        let item = (off, &data[pos..pos + n]);
        pos += n;
        Some(item)
    })
}

#[cfg(test)]
mod tests {
    use super::packets;

    #[test]
    fn packets_split_at_pages() {
        let data = vec![7u8; 10000];
        let p: Vec<_> = packets(4000, &data, 4096)
            .map(|(o, c)| (o, c.len()))
            .collect();
        assert_eq!(
            p,
            vec![(4000, 96), (4096, 4096), (8192, 4096), (12288, 1712)]
        );
        assert_eq!(packets(0, &[], 4096).count(), 0);
    }
}
