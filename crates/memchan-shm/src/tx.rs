//! The transmit path. A write to a tx mapping is either a **direct deposit** (one
//! destination on this host, no local copy: a bounds check and a store into the
//! destination's receive memory, no system call, no lock) or an **ordered packet**
//! (broadcast, multicast, or local copy: it passes the point of global order, which
//! applies it at every destination before the next ordered packet).
//!
//! Why this keeps both ordering rules: a sender's stores reach memory in program order
//! (x86-64 TSO, and Release stores elsewhere), and a sender applies its ordered packets
//! itself, so every destination sees its packets in the order sent (rule 1). Packets
//! that reach two or more destinations are exactly the ordered ones, and those are
//! applied one at a time under the order point, so every destination sees them in one
//! order (rule 2). A direct deposit has a single destination and no local copy, so rule
//! 2 constrains it against nothing.

use crate::control::{journal_state, load_set, node_state, store_set, MAX_PACKET};
use crate::futex::SharedFutex;
use crate::node::{Inner, SegRef};
use crate::rx::RxObject;
use memchan_core::notify::Notify;
use memchan_core::sync::{fence, AtomicU16, AtomicU32, AtomicU64, AtomicU8, Ordering};
use memchan_core::{Dest, Error, NodeId, NodeSet, PageSize, Result, RxAttrs, TxAttrs};
use std::cell::{Cell, RefCell};
use std::sync::Arc;

/// Applies one packet (never crossing a page) to one destination's receive memory,
/// honouring its page control byte. Aligned 1/2/4/8-byte packets are single atomic
/// stores, so no reader sees them torn.
#[inline]
pub(crate) fn apply(view: &RxObject, page: PageSize, offset: usize, data: &[u8]) {
    let pct = RxAttrs::from_bits(view.pct(offset / page.bytes()).load(Ordering::Relaxed));
    if !pct.receive_enable {
        return;
    }
    // SAFETY: callers checked `offset + data.len() <= size` of the segment, and the
    // receive memory has `size` data bytes.
    unsafe { store(view.data().add(offset), data) };
    if pct.notify {
        let h = view.header();
        Notify::new(&h.notify_seq, &h.notify_waiters).post(&SharedFutex);
    }
}

/// Stores `data` at `dst`: atomically when it is an aligned word, else as a copy
/// followed by a store fence (large copies may use non-temporal stores, which are not
/// ordered with later stores without one).
///
/// # Safety
/// `dst..dst + data.len()` must be writable memory of one mapping.
#[inline]
pub(crate) unsafe fn store(dst: *mut u8, data: &[u8]) {
    let aligned = (dst as usize).is_multiple_of(data.len().max(1));
    match (data.len(), aligned) {
        // SAFETY (all four arms): `dst` is aligned for the type (checked above) and in
        // bounds (caller); shared memory words are only ever accessed atomically.
        (8, true) => unsafe {
            (*(dst as *const AtomicU64)).store(
                u64::from_ne_bytes(data.try_into().expect("8")),
                Ordering::Release,
            )
        },
        (4, true) => unsafe {
            (*(dst as *const AtomicU32)).store(
                u32::from_ne_bytes(data.try_into().expect("4")),
                Ordering::Release,
            )
        },
        (2, true) => unsafe {
            (*(dst as *const AtomicU16)).store(
                u16::from_ne_bytes(data.try_into().expect("2")),
                Ordering::Release,
            )
        },
        (1, _) => unsafe { (*(dst as *const AtomicU8)).store(data[0], Ordering::Release) },
        _ => {
            fence(Ordering::Release);
            // SAFETY: caller guarantees the destination range; `data` is a separate
            // private buffer, so the ranges do not overlap.
            unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), dst, data.len()) };
            if data.len() >= 4096 {
                fence(Ordering::SeqCst);
            }
        }
    }
}

/// Sends one ordered packet (≤ one page, not crossing a page) to `dests` as node
/// `inner.me`, through the point of global order. Journaled first, so a survivor can
/// finish it if this process dies half-way.
pub(crate) fn ordered_packet(
    inner: &Inner,
    seg: &SegRef,
    dests: NodeSet,
    offset: usize,
    data: &[u8],
) -> Result<()> {
    debug_assert!(data.len() <= MAX_PACKET);
    let me = u32::from(inner.me.0);
    inner.enter_order();
    let ctl = inner.ctl();
    // Under the order point: who is alive and who maps the segment is now fixed.
    let e = &ctl.segs[seg.idx as usize];
    if e.generation.load(Ordering::Acquire) != seg.generation {
        inner.order_point().leave(me);
        return Err(Error::SegmentFreed {
            segment: seg.name.clone(),
        });
    }
    let live: NodeSet = dests
        .intersect(&load_set(&e.rx_set))
        .iter()
        .filter(|n| ctl.nodes[n.index()].state.load(Ordering::Acquire) == node_state::ALIVE)
        .collect();
    let j = &ctl.journal;
    j.seg.store(seg.idx, Ordering::Relaxed);
    j.seg_gen.store(seg.generation, Ordering::Relaxed);
    j.offset.store(offset as u64, Ordering::Relaxed);
    j.len.store(data.len() as u32, Ordering::Relaxed);
    store_set(&j.dests, &live);
    j.progress.store(0, Ordering::Relaxed);
    // SAFETY: the journal payload has MAX_PACKET bytes ≥ data.len(); only the order
    // point holder writes it, and readers read it after the Release below.
    unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), j.data.as_ptr() as *mut u8, data.len()) };
    j.state.store(journal_state::APPLYING, Ordering::Release);
    let mut result = Ok(());
    for (i, d) in live.iter().enumerate() {
        match inner.view(seg, d) {
            Ok(Some(view)) => apply(&view, inner.page, offset, data),
            Ok(None) => {}
            Err(err) => result = Err(err),
        }
        j.progress.store(i as u32 + 1, Ordering::Release);
    }
    j.state.store(journal_state::IDLE, Ordering::Release);
    if !inner.order_point().leave(me) {
        // We were declared failed while applying and a survivor finished the packet.
        inner.check_alive()?;
    }
    result
}

/// The cached destination of a direct-deposit mapping.
struct Direct {
    /// `rx_gen` of the segment when `data` was looked up.
    gen: Cell<u64>,
    data: Cell<*mut u8>,
    view: RefCell<Option<Arc<RxObject>>>,
}

/// A transmit window onto a segment: writes land in the destination's rx mappings.
///
/// Not `Sync`: a tx mapping belongs to one thread at a time (like a mapped page of
/// the adapter); make one per thread.
pub struct TxMapping {
    inner: Arc<Inner>,
    seg: SegRef,
    dest: Dest,
    attrs: TxAttrs,
    direct: Option<Direct>,
}

// SAFETY: the raw pointer in `Direct` points into an `RxObject` that `view` keeps
// mapped; moving the mapping to another thread moves that `Arc` along with it.
unsafe impl Send for TxMapping {}

impl TxMapping {
    pub(crate) fn new(inner: Arc<Inner>, seg: SegRef, dest: Dest, attrs: TxAttrs) -> Result<Self> {
        inner.check_perm(&seg, 2, "map_tx")?;
        match dest {
            Dest::Node(n) if !inner.is_member(n) => return Err(Error::UnknownNode(n)),
            Dest::Group(g) => {
                inner.group_members(g)?;
            }
            _ => {}
        }
        let direct = match dest {
            Dest::Node(n) if !attrs.local_copy && n != inner.me => Some(Direct {
                gen: Cell::new(u64::MAX),
                data: Cell::new(std::ptr::null_mut()),
                view: RefCell::new(None),
            }),
            _ => None,
        };
        Ok(TxMapping {
            inner,
            seg,
            dest,
            attrs,
            direct,
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

    #[inline]
    fn check(&self, offset: usize, len: usize, atomic: bool) -> Result<()> {
        if !self.attrs.transmit_enable {
            return Err(Error::TransmitDisabled {
                segment: self.seg.name.clone(),
            });
        }
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
        if !self.attrs.transmit_under_error {
            self.inner.check_alive()?;
        }
        Ok(())
    }

    /// Writes an aligned 8-byte word atomically.
    #[inline]
    pub fn write_u64(&self, offset: usize, v: u64) -> Result<()> {
        self.check(offset, 8, true)?;
        self.send(offset, &v.to_ne_bytes())
    }

    /// Writes an aligned 4-byte word atomically.
    #[inline]
    pub fn write_u32(&self, offset: usize, v: u32) -> Result<()> {
        self.check(offset, 4, true)?;
        self.send(offset, &v.to_ne_bytes())
    }

    /// Writes an aligned 2-byte word atomically.
    #[inline]
    pub fn write_u16(&self, offset: usize, v: u16) -> Result<()> {
        self.check(offset, 2, true)?;
        self.send(offset, &v.to_ne_bytes())
    }

    /// Writes one byte.
    #[inline]
    pub fn write_u8(&self, offset: usize, v: u8) -> Result<()> {
        self.check(offset, 1, true)?;
        self.send(offset, &[v])
    }

    /// Writes `data` at `offset`, split into packets at page boundaries; each packet is
    /// applied whole, in order.
    #[inline]
    pub fn write(&self, offset: usize, data: &[u8]) -> Result<()> {
        self.check(offset, data.len(), false)?;
        if data.is_empty() {
            return Ok(());
        }
        self.send(offset, data)
    }

    #[inline]
    fn send(&self, offset: usize, data: &[u8]) -> Result<()> {
        match &self.direct {
            Some(d) => self.deposit(d, offset, data)?,
            None => self.send_ordered(offset, data)?,
        }
        if self.attrs.ack_request {
            fence(Ordering::SeqCst);
        }
        Ok(())
    }

    /// Direct deposit: the store into the destination's receive memory.
    #[inline]
    fn deposit(&self, d: &Direct, offset: usize, data: &[u8]) -> Result<()> {
        let gen = self.inner.ctl().segs[self.seg.idx as usize]
            .rx_gen
            .load(Ordering::Acquire);
        if gen != d.gen.get() {
            self.refresh(d, gen)?;
        }
        let dst = d.data.get();
        if dst.is_null() {
            return Ok(()); // the destination does not map the segment rx: dropped
        }
        let view = d.view.borrow();
        let view = view.as_ref().expect("non-null data has a view");
        let page = self.inner.page.bytes();
        if data.len() <= page && offset / page == (offset + data.len() - 1) / page {
            apply(view, self.inner.page, offset, data);
        } else {
            for (off, chunk) in packets(offset, data, page) {
                apply(view, self.inner.page, off, chunk);
            }
        }
        Ok(())
    }

    #[cold]
    fn refresh(&self, d: &Direct, gen: u64) -> Result<()> {
        if self
            .inner
            .seg_by_index(self.seg.idx, self.seg.generation)
            .is_none()
        {
            return Err(Error::SegmentFreed {
                segment: self.seg.name.clone(),
            });
        }
        let Dest::Node(n) = self.dest else {
            unreachable!("direct deposit has one node")
        };
        let view = self.inner.view(&self.seg, n)?;
        d.data
            .set(view.as_ref().map_or(std::ptr::null_mut(), |v| v.data()));
        *d.view.borrow_mut() = view;
        d.gen.set(gen);
        Ok(())
    }

    fn destinations(&self) -> Result<NodeSet> {
        let mut set = match self.dest {
            Dest::Node(n) => [n].into_iter().collect(),
            Dest::Group(g) => self.inner.group_members(g)?,
            Dest::Broadcast => {
                let mut all = NodeSet::EMPTY;
                all.0 = [u64::MAX; 4];
                all
            }
        };
        // A sender is among its own destinations only with local copy (or when it
        // names itself point-to-point).
        if self.attrs.local_copy || self.dest == Dest::Node(self.inner.me) {
            set.insert(self.inner.me);
        } else {
            set.remove(self.inner.me);
        }
        Ok(set)
    }

    fn send_ordered(&self, offset: usize, data: &[u8]) -> Result<()> {
        let dests = self.destinations()?;
        for (off, chunk) in packets(offset, data, self.inner.page.bytes()) {
            ordered_packet(&self.inner, &self.seg, dests, off, chunk)?;
        }
        Ok(())
    }

    /// The node that sends.
    pub fn node(&self) -> NodeId {
        self.inner.me
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
