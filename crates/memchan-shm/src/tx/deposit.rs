//! Strided and indexed deposit, put with signal and conditional write on one host.
//!
//! Direct deposit (one other node, no local copy): every element is a packet applied
//! with [`Target::apply_quiet`], in order, by this thread's stores (so in order at the
//! destination, as for any direct deposit), with one notify after the last element;
//! a signal or conditional write is one atomic access on the destination's word
//! ([`Target::word_op`]: a swap, fetch-add or compare-and-swap). Ordered mappings
//! (broadcast, multicast, local copy): every element is an ordered packet, and a word
//! operation one ordered packet journaled with its op code (`Order::ordered_word`),
//! so a survivor finishes it as the same operation.

use super::{packets, TxMapping};
use crate::rx::{Target, WordOp};
use memchan_core::deposit::{self, CondResult, Outcome, Shape, SignalOp};
use memchan_core::sync::{fence, Ordering};
use memchan_core::{Error, Result};

impl TxMapping {
    /// The direct-deposit destination, re-resolved if the segment's rx set moved.
    #[inline(always)]
    fn direct_target(&self) -> Result<Target> {
        // SAFETY: `rx_gen` points into the control block, mapped while `inner` lives.
        let gen = unsafe { (*self.rx_gen).load(Ordering::Acquire) };
        if gen != self.seen_gen.get() {
            self.refresh_direct(gen)?;
        }
        Ok(self.target.get())
    }

    fn check_tx(&self) -> Result<()> {
        if !self.attrs.transmit_enable {
            return Err(Error::TransmitDisabled {
                segment: self.seg.name.clone(),
            });
        }
        Ok(())
    }

    /// Sends `(target offset, bytes)` elements, each one packet (split at pages like
    /// any write), in order.
    fn send_elements<'a>(&self, elems: impl Iterator<Item = (usize, &'a [u8])>) -> Result<()> {
        let page = 1usize << self.page_shift;
        if self.direct {
            let t = self.direct_target()?;
            if t.is_none() {
                return Ok(()); // the destination does not map the segment rx: dropped
            }
            let mut notify = false;
            for (off, bytes) in elems {
                if (off ^ (off + bytes.len() - 1)) < page {
                    // SAFETY: the shape was checked against the segment size; `targets`
                    // holds the destination's mapping.
                    notify |= unsafe { t.apply_quiet(self.page_shift, off, bytes) };
                } else {
                    for (o, chunk) in packets(off, bytes, page) {
                        // SAFETY: as above, per packet.
                        notify |= unsafe { t.apply_quiet(self.page_shift, o, chunk) };
                    }
                }
            }
            if notify {
                t.post();
            }
        } else {
            for (off, bytes) in elems {
                self.send_ordered(off, bytes)?;
            }
        }
        if self.attrs.ack_request {
            fence(Ordering::SeqCst);
        }
        Ok(())
    }

    /// Strided deposit: see `memchan_core::transport::TxOps::put_strided`.
    pub fn put_strided(&self, shape: &Shape, src: &[u8]) -> Result<()> {
        deposit::check_strided(&self.seg.name, self.size, shape, src.len())?;
        self.check_tx()?;
        if shape.count == 0 {
            return Ok(());
        }
        if self.direct && shape.elem == 8 && (shape.offset | shape.dst_stride).is_multiple_of(8) {
            let t = self.direct_target()?;
            if t.is_none() {
                return Ok(());
            }
            // SAFETY: `check_strided` bounded every element by the segment and the
            // source, and they are 8-aligned in the segment; `targets` holds the map.
            let notify = unsafe {
                t.store_strided(
                    self.page_shift,
                    shape.offset,
                    shape.dst_stride,
                    src.as_ptr(),
                    shape.src_stride,
                    shape.count,
                )
            };
            if notify {
                t.post();
            }
            if self.attrs.ack_request {
                fence(Ordering::SeqCst);
            }
            return Ok(());
        }
        let e = shape.elem;
        self.send_elements(shape.elements().map(|(d, s)| (d, &src[s..s + e])))
    }

    /// Direct deposit of 8-byte elements at 8-aligned offsets ([`Target::store_words`]).
    fn send_words(&self, words: impl Iterator<Item = (usize, u64)>) -> Result<()> {
        let t = self.direct_target()?;
        if t.is_none() {
            return Ok(());
        }
        // SAFETY: the caller's offsets are checked and aligned; `targets` holds the
        // destination's mapping.
        if unsafe { t.store_words(self.page_shift, words) } {
            t.post();
        }
        if self.attrs.ack_request {
            fence(Ordering::SeqCst);
        }
        Ok(())
    }

    /// Indexed deposit: see `memchan_core::transport::TxOps::put_indexed`.
    pub fn put_indexed(&self, elem: usize, offsets: &[usize], src: &[u8]) -> Result<()> {
        deposit::check_indexed(&self.seg.name, self.size, elem, offsets, src.len())?;
        self.check_tx()?;
        if offsets.is_empty() {
            return Ok(());
        }
        if self.direct && elem == 8 && offsets.iter().all(|o| o.is_multiple_of(8)) {
            // SAFETY: `check_indexed` made `src` exactly 8 bytes per offset.
            let words = offsets
                .iter()
                .enumerate()
                .map(|(i, &o)| (o, unsafe { word_at(src, 8 * i) }));
            return self.send_words(words);
        }
        self.send_elements(offsets.iter().copied().zip(src.chunks_exact(elem)))
    }

    /// One word operation at every destination: each one's word before (`None`:
    /// receive disabled there).
    fn word(&self, offset: usize, op: WordOp) -> Result<Vec<(memchan_core::NodeId, Option<u64>)>> {
        let out = if self.direct {
            let t = self.direct_target()?;
            if t.is_none() {
                return Ok(Vec::new());
            }
            let dest = self
                .dests
                .iter()
                .next()
                .expect("a direct deposit has its destination");
            // SAFETY: the word was checked (aligned, inside the segment); `targets`
            // holds the destination's mapping.
            vec![(dest, unsafe { t.word_op(self.page_shift, offset, op) })]
        } else {
            self.may_send()?;
            let mut targets = self.targets.borrow_mut();
            self.inner
                .order()
                .ordered_word(&self.seg, &self.dests, &mut targets, offset, op)?
        };
        if self.attrs.ack_request {
            fence(Ordering::SeqCst);
        }
        Ok(out)
    }

    /// Put with signal: see `memchan_core::transport::TxOps::put_signal`.
    pub fn put_signal(
        &self,
        offset: usize,
        data: &[u8],
        signal: usize,
        op: SignalOp,
        value: u64,
    ) -> Result<()> {
        deposit::check_word(&self.seg.name, self.size, signal, 8)?;
        self.check(offset, data.len(), false)?;
        if !data.is_empty() {
            self.send(offset, data)?;
        }
        let op = match op {
            SignalOp::Set => WordOp::Set(value),
            SignalOp::Add => WordOp::Add(value),
        };
        self.word(signal, op).map(drop)
    }

    /// Conditional write: see `memchan_core::transport::TxOps::write_if_u64`. On one
    /// host the compare-and-swap runs in this thread on the destination's word, so the
    /// outcome is known when it returns.
    pub fn write_if_u64(&self, offset: usize, expected: u64, new: u64) -> Result<Vec<CondResult>> {
        deposit::check_word(&self.seg.name, self.size, offset, 8)?;
        self.check_tx()?;
        let out = self.word(offset, WordOp::Cas { expected, new })?;
        Ok(out
            .into_iter()
            .map(|(node, old)| CondResult {
                node,
                outcome: match old {
                    None => Outcome::Disabled,
                    Some(v) if v == expected => Outcome::Applied,
                    Some(v) => Outcome::Held(v),
                },
            })
            .collect())
    }
}

/// The 8 bytes of `src` at `at`.
///
/// # Safety
/// `at + 8 <= src.len()`.
#[inline(always)]
unsafe fn word_at(src: &[u8], at: usize) -> u64 {
    debug_assert!(at + 8 <= src.len());
    // SAFETY: in bounds (caller); an unaligned read of the caller's bytes.
    unsafe { (src.as_ptr().add(at) as *const u64).read_unaligned() }
}
