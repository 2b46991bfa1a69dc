//! The packet rings inside the one segment every `memchan ip` node maps rx.
//!
//! ```text
//!  segment (each node's copy is its receive memory), one slot per sender node id:
//!  slot s = [ header page | unicast ring from s | broadcast ring from s ]
//!
//!  header page of slot s in node d's copy, written by s (words, 8 bytes each):
//!    START     s's unicast start seq (low 32) and broadcast start seq (high 32)
//!    BSTART    where d starts reading s's broadcast ring (absolute byte position)
//!    INC       s's incarnation            } the hello: PEER written last; d starts
//!    PEER      the incarnation of d it is for } reading s's rings when PEER == d's own
//!    FORMAT    s's record format (`FORMAT_VERSION`): d neither reads nor writes
//!              rings of a peer of another format (another build)
//!    DOORBELL  bumped to wake d: a full ring's sender wants credits; multicast
//!    MC_GEN, MC_LIST  s's multicast groups (see `crate::mcast`)
//!    CREDIT    bytes s consumed of d's unicast ring in s's copy (tagged, see below)
//!    BCREDIT   bytes s consumed of d's broadcast ring (absolute position, tagged)
//!
//!  record at a 64-byte aligned ring position:
//!    [ word: len << 32 | seq ][ len bytes: virtio_net_hdr, IP packet ][ pad to 64 ]
//!    the 10-byte virtio_net_hdr is the TUN device's (checksum offload: a TCP
//!    segment travels with its checksum not yet computed, as on a veth, and the
//!    receiving kernel takes it so); the receiver copies it out and checks it
//!    (`tun::vnet_hdr_ok`) before its kernel gets that copy.
//!    seq counts records from the start seq (never 0); the word is written after
//!    the packet, so a reader that sees the seq it expects has the whole packet
//!    (a sender's writes reach a destination in the order sent). len = WRAP: the
//!    rest of the ring is skipped.
//!
//!  every page of a slot posts notify; a body is written with `write_no_notify`,
//!  so the record's word (its last write) wakes the reader, once.
//! ```
//!
//! A unicast record is written into the destination's copy only (`Dest::Node`); a
//! broadcast record, through one `Dest::Broadcast` mapping, into every node's copy at
//! the same place. Credits carry the low 16 bits of the writer's unicast start seq
//! of the session they belong to, so a credit left over from an earlier incarnation
//! of a peer is never taken for a new one.

/// Header word offsets inside a slot.
pub const START: usize = 0;
pub const BSTART: usize = 8;
pub const INC: usize = 16;
pub const PEER: usize = 24;
pub const FORMAT: usize = 32;
pub const DOORBELL: usize = 64;
pub const CREDIT: usize = 128;
pub const BCREDIT: usize = 136;

/// The record format this build writes and reads (1: a virtio_net_hdr before
/// every packet; before it, 0 was never written).
pub const FORMAT_VERSION: u64 = 1;

/// Record alignment, and the size of its header word.
pub const ALIGN: usize = 64;
pub const WORD: usize = 8;
/// The `len` of a wrap marker.
pub const WRAP: u32 = u32::MAX;

/// Bytes a record of a `len`-byte packet occupies.
pub fn rec_len(len: usize) -> usize {
    (WORD + len).div_ceil(ALIGN) * ALIGN
}

/// The seq after `s` (0 is skipped: zeroed memory never matches).
pub fn next_seq(s: u32) -> u32 {
    match s.wrapping_add(1) {
        0 => 1,
        n => n,
    }
}

/// A record's header word.
pub fn word(seq: u32, len: u32) -> u64 {
    (u64::from(len) << 32) | u64::from(seq)
}

/// A credit word: `pos` (under 2^48) tagged with a session's start seq.
pub fn credit_word(pos: u64, start: u32) -> u64 {
    (pos & ((1 << 48) - 1)) | (u64::from(start as u16) << 48)
}

/// The position in a credit word if its tag is the session's, else `None`.
pub fn credit_pos(w: u64, start: u32) -> Option<u64> {
    ((w >> 48) as u16 == start as u16).then_some(w & ((1 << 48) - 1))
}

/// Where everything sits in the segment.
#[derive(Debug, Clone, Copy)]
pub struct Layout {
    /// The cluster's page size: the header's size.
    pub page: usize,
    /// Unicast ring bytes per sender.
    pub ring: usize,
    /// Broadcast ring bytes per sender.
    pub bring: usize,
    /// Slots (node ids `0..slots`).
    pub slots: usize,
}

impl Layout {
    pub fn slot_size(&self) -> usize {
        self.page + self.ring + self.bring
    }
    pub fn segment_size(&self) -> usize {
        self.slots * self.slot_size()
    }
    /// Start of slot `s`'s header.
    pub fn hdr(&self, s: usize) -> usize {
        s * self.slot_size()
    }
    /// Start of slot `s`'s unicast ring.
    pub fn uni(&self, s: usize) -> usize {
        self.hdr(s) + self.page
    }
    /// Start of slot `s`'s broadcast ring.
    pub fn bcast(&self, s: usize) -> usize {
        self.uni(s) + self.ring
    }
}

/// What a write of records needs: an 8-byte atomic write and a byte write, at
/// absolute segment offsets. `memchan::TxMapping` in the node; a plain buffer in
/// the unit tests.
pub trait Sink {
    fn put_u64(&self, off: usize, v: u64) -> memchan::Result<()>;
    fn put(&self, off: usize, data: &[u8]) -> memchan::Result<()>;
    /// A record: `data` at `off + WORD`, then the word `v` at `off`.
    fn put_record(&self, off: usize, data: &[u8], v: u64) -> memchan::Result<()> {
        self.put(off + WORD, data)?;
        self.put_u64(off, v)
    }
}

impl Sink for memchan::TxMapping {
    fn put_u64(&self, off: usize, v: u64) -> memchan::Result<()> {
        self.write_u64(off, v)
    }
    /// A record's body: no notify (its word, written next, posts it).
    fn put(&self, off: usize, data: &[u8]) -> memchan::Result<()> {
        self.write_no_notify(off, data)
    }
    /// One call: through a hub a small record is one frame.
    fn put_record(&self, off: usize, data: &[u8], v: u64) -> memchan::Result<()> {
        self.write_record(off + WORD, data, off, v)
    }
}

/// What reading records needs: an 8-byte atomic load.
pub trait Source {
    fn get_u64(&self, off: usize) -> memchan::Result<u64>;
}

impl Source for memchan::RxMapping {
    fn get_u64(&self, off: usize) -> memchan::Result<u64> {
        self.load_u64(off)
    }
}

/// The writing end of one ring: its next position (absolute, in bytes) and seq.
#[derive(Debug, Clone, Copy)]
pub struct Writer {
    pub head: u64,
    pub seq: u32,
}

impl Writer {
    /// Bytes `len` more bytes of packet take at the current head (a wrap included).
    pub fn need(&self, size: usize, len: usize) -> u64 {
        let pos = (self.head % size as u64) as usize;
        let rec = rec_len(len);
        if pos + rec > size {
            (size - pos + rec) as u64
        } else {
            rec as u64
        }
    }

    /// Writes `pkt` as the next record of the ring at `base` (`size` bytes). The
    /// caller checked the room (`need` against the reader's credit).
    pub fn push(
        &mut self,
        tx: &impl Sink,
        base: usize,
        size: usize,
        pkt: &[u8],
    ) -> memchan::Result<()> {
        let mut pos = (self.head % size as u64) as usize;
        let rec = rec_len(pkt.len());
        if pos + rec > size {
            tx.put_u64(base + pos, word(self.seq, WRAP))?;
            self.head += (size - pos) as u64;
            self.seq = next_seq(self.seq);
            pos = 0;
        }
        tx.put_record(base + pos, pkt, word(self.seq, pkt.len() as u32))?;
        self.head += rec as u64;
        self.seq = next_seq(self.seq);
        Ok(())
    }
}

/// The reading end of one ring.
#[derive(Debug, Clone, Copy)]
pub struct Reader {
    pub pos: u64,
    pub seq: u32,
}

/// The next record, as [`Reader::peek`] sees it.
#[derive(Debug, PartialEq, Eq)]
pub enum Next {
    /// Nothing new.
    Empty,
    /// A packet of `len` bytes at segment offset `off`; `advance` once used.
    Packet { off: usize, len: usize },
    /// The sender wrote something no honest sender writes (named).
    Bad(&'static str),
}

impl Reader {
    /// Looks at the next record of the ring at `base` (`size` bytes), packets at
    /// most `max_len` bytes, stepping over wrap markers. Every word is checked
    /// before use: the sender may be hostile.
    pub fn peek(&mut self, rx: &impl Source, base: usize, size: usize, max_len: usize) -> Next {
        for _ in 0..2 {
            let p = (self.pos % size as u64) as usize;
            if !p.is_multiple_of(ALIGN) {
                return Next::Bad("a ring position off the record alignment");
            }
            let Ok(w) = rx.get_u64(base + p) else {
                return Next::Bad("a record word out of the ring");
            };
            if w as u32 != self.seq {
                return Next::Empty;
            }
            let len = (w >> 32) as u32;
            if len == WRAP {
                self.pos += (size - p) as u64;
                self.seq = next_seq(self.seq);
                continue;
            }
            let len = len as usize;
            if len == 0 || len > max_len || p + rec_len(len) > size {
                return Next::Bad("a record length past the ring or the MTU");
            }
            return Next::Packet {
                off: base + p + WORD,
                len,
            };
        }
        Next::Bad("two wrap markers in a row")
    }

    /// Steps past the packet `peek` returned.
    pub fn advance(&mut self, len: usize) {
        self.pos += rec_len(len) as u64;
        self.seq = next_seq(self.seq);
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::cell::RefCell;

    /// Receive memory as a plain vector, for the ring tests here and in `mcast`.
    pub(crate) struct Mem(pub(crate) RefCell<Vec<u8>>);
    impl Sink for Mem {
        fn put_u64(&self, off: usize, v: u64) -> memchan::Result<()> {
            self.0.borrow_mut()[off..off + 8].copy_from_slice(&v.to_le_bytes());
            Ok(())
        }
        fn put(&self, off: usize, data: &[u8]) -> memchan::Result<()> {
            self.0.borrow_mut()[off..off + data.len()].copy_from_slice(data);
            Ok(())
        }
    }
    impl Source for Mem {
        fn get_u64(&self, off: usize) -> memchan::Result<u64> {
            let m = self.0.borrow();
            let b = m
                .get(off..off + 8)
                .ok_or(memchan::Error::Unsupported("oob"))?;
            Ok(u64::from_le_bytes(b.try_into().unwrap()))
        }
    }

    #[test]
    fn records_wrap_and_arrive_in_order_intact() {
        let (base, size) = (64, 1024);
        let m = Mem(RefCell::new(vec![0; base + size]));
        let mut w = Writer {
            head: 0,
            seq: u32::MAX - 2,
        };
        let mut r = Reader { pos: 0, seq: w.seq };
        assert_eq!(r.peek(&m, base, size, 500), Next::Empty);
        for i in 0..40usize {
            let pkt: Vec<u8> = (0..(i * 37) % 400 + 1).map(|b| (b + i) as u8).collect();
            // One record in flight: the room is always there.
            assert!(w.need(size, pkt.len()) <= size as u64);
            w.push(&m, base, size, &pkt).unwrap();
            let Next::Packet { off, len } = r.peek(&m, base, size, 500) else {
                panic!("record {i} missing")
            };
            assert_eq!(&m.0.borrow()[off..off + len], &pkt[..], "record {i}");
            r.advance(len);
            assert_eq!((r.pos, r.seq), (w.head, w.seq));
            assert_eq!(r.peek(&m, base, size, 500), Next::Empty);
        }
    }

    #[test]
    fn hostile_records_are_named_not_followed() {
        let (base, size) = (0, 1024);
        let m = Mem(RefCell::new(vec![0; size]));
        let mut r = Reader { pos: 0, seq: 7 };
        m.put_u64(0, word(7, 2000)).unwrap();
        assert!(matches!(r.peek(&m, base, size, 500), Next::Bad(_)));
        m.put_u64(0, word(7, 1020)).unwrap(); // fits the MTU, not the ring's end
        assert!(matches!(r.peek(&m, base, size, 4000), Next::Bad(_)));
        m.put_u64(0, word(7, 0)).unwrap();
        assert!(matches!(r.peek(&m, base, size, 500), Next::Bad(_)));
        let mut r = Reader { pos: 12, seq: 7 };
        assert!(matches!(r.peek(&m, base, size, 500), Next::Bad(_)));
    }

    #[test]
    fn credits_of_another_session_are_ignored() {
        let w = credit_word(4096, 0xdead_beef);
        assert_eq!(credit_pos(w, 0xdead_beef), Some(4096));
        assert_eq!(credit_pos(w, 0xdead_beee), None);
        assert_eq!(credit_pos(0, 0x1234_0001), None);
    }
}
