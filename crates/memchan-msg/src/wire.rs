//! The message layer's memory layout and slot format: what one node writes into
//! another's receive memory. Every word here is written by another process (or host)
//! and is validated by the reader before use.
//!
//! One segment per communicator; every member maps it rx and maps it tx towards every
//! member. Node `s`'s part of node `r`'s copy (written only by `s`):
//!
//! ```text
//! control area (notify pages), per writer s:   bulk area (plain pages), per writer s:
//!   ring: K slots of 64 bytes (s -> r)            C chunks of `chunk` bytes (s -> r)
//!   credit line: [slots of r consumed by s,
//!                 chunks of r consumed by s,
//!                 asleep: s sleeps waiting for r's acknowledgement]
//! ```
//!
//! A slot: word 0 the sequence (written last: the publish), words 1..=6 the body
//! (header, up to 40 payload bytes), word 7 the **ack word**: the cookie of a
//! synchronous message of `r`'s that `s` matched, written by `s` into the slot it
//! publishes next, before publishing it, so that the acknowledgement and `s`'s next
//! message share one cache line (the receiver polls that slot anyway). Written with
//! its own store; the body and sequence writes leave it alone. (Measured against an
//! ack word in a line of its own, 32 slots on, in an interleaved ping-pong: zero-copy
//! 8-byte latency rose from postal + 5-8 ns to postal + 20-25 ns.)

use crate::config::CommConfig;

/// One slot: one cache line.
pub(crate) const SLOT: usize = 64;
/// Payload bytes inline in a slot (the eager limit).
pub const EAGER_MAX: usize = 40;
/// Offset of the ack word in a slot.
pub(crate) const ACK_WORD: usize = 56;
/// Body words (header and payload) a slot holds: words 1..=6.
const BODY_WORDS: usize = 6;
/// Longest segment name a clear-to-send can carry (memchan's `NAME_LEN`).
pub(crate) const NAME_MAX: usize = 64;

/// Slot kinds (byte 0 of word 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub(crate) enum Kind {
    /// A small message, payload inline.
    Eager = 1,
    /// A buffered (full postal) message whose body follows in `Frag`s.
    Hdr = 2,
    /// A synchronous (zero-copy mode) message's request to send.
    Rts = 3,
    /// A piece of a body in the next bulk chunk: cookie, length.
    Frag = 4,
    /// Receiver to sender: matched; cookie, target (bulk or rx), offset, name length,
    /// the name's first 8 bytes.
    Cts = 5,
    /// Continuation of a clear-to-send's segment name.
    Name = 6,
    /// Receiver to sender: a synchronous eager message was matched; cookie (when the
    /// next slot's ack word holds another acknowledgement already, or the ring is full).
    Ack = 7,
    /// Sender to receiver: the body was deposited into the rx buffer; cookie, length.
    Fin = 8,
}

impl Kind {
    pub(crate) fn from_u8(b: u8) -> Option<Kind> {
        Some(match b {
            1 => Kind::Eager,
            2 => Kind::Hdr,
            3 => Kind::Rts,
            4 => Kind::Frag,
            5 => Kind::Cts,
            6 => Kind::Name,
            7 => Kind::Ack,
            8 => Kind::Fin,
            _ => return None,
        })
    }
}

/// Flag: the sender waits for the receive (synchronous send).
pub(crate) const F_SYNC: u8 = 1;

/// A slot's words 1..=6 (word 0, the sequence, is written last, separately; word 7,
/// the ack word, by its own store).
#[derive(Clone, Copy, Default)]
pub(crate) struct Body {
    pub w: [u64; BODY_WORDS],
}

impl Body {
    pub(crate) fn new(kind: Kind, flags: u8, ilen: u8, tag: u32) -> Body {
        let mut b = Body::default();
        b.w[0] = u64::from(kind as u8)
            | (u64::from(flags) << 8)
            | (u64::from(ilen) << 16)
            | (u64::from(tag) << 32);
        b
    }
    pub(crate) fn kind(&self) -> Option<Kind> {
        Kind::from_u8(self.w[0] as u8)
    }
    pub(crate) fn flags(&self) -> u8 {
        (self.w[0] >> 8) as u8
    }
    pub(crate) fn ilen(&self) -> usize {
        usize::from((self.w[0] >> 16) as u8)
    }
    pub(crate) fn tag(&self) -> u32 {
        (self.w[0] >> 32) as u32
    }
    /// Payload word `i` (0..5).
    pub(crate) fn p(&self, i: usize) -> u64 {
        self.w[1 + i]
    }
    pub(crate) fn set_p(&mut self, i: usize, v: u64) {
        self.w[1 + i] = v;
    }
    /// Puts `data` (at most [`EAGER_MAX`] bytes) into the payload words, word by
    /// word: whole words as one load each, a short tail byte by byte (a copy of a
    /// length unknown at compile time would call `memcpy`, on the latency path).
    #[inline(always)]
    pub(crate) fn set_bytes(&mut self, data: &[u8]) {
        let data = &data[..data.len().min(EAGER_MAX)];
        let mut words = data.chunks_exact(8);
        for (i, c) in words.by_ref().enumerate() {
            self.w[1 + i] = u64::from_le_bytes(c.try_into().expect("8 bytes"));
        }
        let tail = words.remainder();
        if !tail.is_empty() {
            let mut w = 0u64;
            for (k, &byte) in tail.iter().enumerate() {
                w |= u64::from(byte) << (8 * k);
            }
            self.w[1 + data.len() / 8] = w;
        }
    }
    /// Copies the payload's first `out.len()` bytes (at most [`EAGER_MAX`]) into
    /// `out`, as [`set_bytes`](Self::set_bytes) reads them.
    #[inline(always)]
    pub(crate) fn copy_bytes(&self, out: &mut [u8]) {
        let n = out.len().min(EAGER_MAX);
        let mut words = out[..n].chunks_exact_mut(8);
        for (i, c) in words.by_ref().enumerate() {
            c.copy_from_slice(&self.w[1 + i].to_le_bytes());
        }
        let tail = words.into_remainder();
        if !tail.is_empty() {
            let w = self.w[1 + n / 8];
            for (k, byte) in tail.iter_mut().enumerate() {
                *byte = (w >> (8 * k)) as u8;
            }
        }
    }
    pub(crate) fn bytes(&self) -> [u8; EAGER_MAX] {
        let mut raw = [0u8; EAGER_MAX];
        for (i, c) in raw.chunks_exact_mut(8).enumerate() {
            c.copy_from_slice(&self.w[1 + i].to_le_bytes());
        }
        raw
    }
    /// Words 1.. of the slot in use: the header and, for an eager slot, only the
    /// payload words its length covers (writer and reader agree on it).
    pub(crate) fn words(&self) -> usize {
        self.words_within(EAGER_MAX)
    }
    /// [`words`](Self::words), reading an inline payload only as far as `cap` bytes
    /// (a receive with less room refuses a longer one anyway).
    #[inline(always)]
    pub(crate) fn words_within(&self, cap: usize) -> usize {
        match self.kind() {
            Some(Kind::Eager) | Some(Kind::Name) => {
                1 + self.ilen().min(cap).min(EAGER_MAX).div_ceil(8)
            }
            _ => BODY_WORDS,
        }
    }
    /// The words in use ([`words`](Self::words)) as the bytes the writer stores: in
    /// memory order, as the reader loads them back (one word each). A view, not a
    /// copy: a copy by wider moves than the 8-byte stores that built the body
    /// stalls the store path (no store-to-load forwarding).
    pub(crate) fn used_bytes(&self) -> &[u8] {
        self.first_words(self.words())
    }
    /// The first `n` words (at most 6) as bytes, as [`used_bytes`](Self::used_bytes):
    /// for a writer that knows the count (an eager slot's: 1 + payload words).
    #[inline(always)]
    pub(crate) fn first_words(&self, n: usize) -> &[u8] {
        let w = &self.w[..n];
        // SAFETY: initialized `u64`s are valid bytes, `u8` needs no alignment, and
        // the length is exactly that of `w`, borrowed for the result's lifetime.
        unsafe { std::slice::from_raw_parts(w.as_ptr().cast::<u8>(), 8 * w.len()) }
    }
}

/// Where things are in the communicator's segment.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Layout {
    pub slots: usize,
    pub chunk: usize,
    pub chunks: usize,
    /// Bytes of one writer's control part (ring + credit line).
    ctl_part: usize,
    /// Start of the bulk area (page aligned).
    pub bulk_start: usize,
    pub size: usize,
}

impl Layout {
    pub(crate) fn new(cfg: &CommConfig, page: usize) -> Layout {
        let ctl_part = cfg.ring_slots * SLOT + SLOT;
        let bulk_start = (cfg.max_nodes * ctl_part).div_ceil(page) * page;
        let size = bulk_start + cfg.max_nodes * cfg.chunks * cfg.chunk_size;
        Layout {
            slots: cfg.ring_slots,
            chunk: cfg.chunk_size,
            chunks: cfg.chunks,
            ctl_part,
            bulk_start,
            size,
        }
    }
    /// Slot `seq - 1` (mod K) of writer `w`'s ring.
    pub(crate) fn slot(&self, w: usize, seq: u64) -> usize {
        // `slots` is a power of two (`Comm::new` checks): a mask, not a division, on
        // the polling path.
        w * self.ctl_part + ((seq - 1) as usize & (self.slots - 1)) * SLOT
    }
    /// Writer `w`'s credit line: word 0 slots consumed, word 1 chunks consumed.
    pub(crate) fn credit(&self, w: usize) -> usize {
        w * self.ctl_part + self.slots * SLOT
    }
    /// Writer `w`'s asleep word (word 2 of its credit line): non-zero while `w`
    /// sleeps waiting for an acknowledgement from this node.
    pub(crate) fn asleep(&self, w: usize) -> usize {
        self.credit(w) + 16
    }
    /// Chunk number `n` (mod C) of writer `w`'s bulk area.
    pub(crate) fn chunk_at(&self, w: usize, n: u64) -> usize {
        self.bulk_start + (w * self.chunks + (n as usize % self.chunks)) * self.chunk
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_slot_reads_back_what_was_written() {
        let mut b = Body::new(Kind::Eager, F_SYNC, 13, 0x7fff_fffe);
        b.set_bytes(b"hello, world!");
        assert_eq!(b.kind(), Some(Kind::Eager));
        assert_eq!((b.flags(), b.ilen(), b.tag()), (F_SYNC, 13, 0x7fff_fffe));
        assert_eq!(&b.bytes()[..13], b"hello, world!");
        let mut out = [0u8; 13];
        b.copy_bytes(&mut out);
        assert_eq!(&out, b"hello, world!");
        // Header and two payload words cover 13 bytes; a fragment uses them all.
        assert_eq!(b.words(), 3);
        assert_eq!(Body::new(Kind::Frag, 0, 0, 0).words(), 6);
        // A hostile length cannot make the reader read past the body (into the ack
        // word or the next slot).
        assert_eq!(Body::new(Kind::Eager, 0, 255, 0).words(), 6);
        assert_eq!(
            8 + 8 * Body::new(Kind::Eager, 0, EAGER_MAX as u8, 0).words(),
            ACK_WORD
        );
        assert_eq!(Kind::from_u8(0), None);
        assert_eq!(Kind::from_u8(9), None);
    }

    #[test]
    fn every_eager_length_reads_back_and_stays_in_its_words() {
        let data: Vec<u8> = (1..=EAGER_MAX as u8).collect();
        for len in 0..=EAGER_MAX {
            let mut b = Body::new(Kind::Eager, 0, len as u8, 7);
            b.set_bytes(&data[..len]);
            let mut out = vec![0u8; len];
            b.copy_bytes(&mut out);
            assert_eq!(out, &data[..len], "length {len}");
            // The writer stores the words the reader loads, no more.
            assert_eq!(b.used_bytes().len(), 8 * b.words(), "length {len}");
            assert_eq!(&b.bytes()[..len], &data[..len], "length {len}");
            // Bytes past the length are zero: nothing of the caller's beyond it travels.
            assert!(b.bytes()[len..].iter().all(|&x| x == 0), "length {len}");
        }
    }

    #[test]
    fn layout_keeps_writers_apart() {
        let cfg = CommConfig::default();
        let l = Layout::new(&cfg, 4096);
        // Each writer's ring and credit line lie before the next writer's ring.
        assert!(l.credit(0) + SLOT <= l.slot(1, 1));
        assert_eq!(l.slot(0, 1), l.slot(0, 1 + cfg.ring_slots as u64));
        assert!(l.slot(cfg.max_nodes - 1, cfg.ring_slots as u64) + SLOT <= l.bulk_start);
        assert_eq!(l.bulk_start % 4096, 0);
        let last = l.chunk_at(cfg.max_nodes - 1, cfg.chunks as u64 - 1);
        assert_eq!(last + cfg.chunk_size, l.size);
    }
}
