//! Multicast IP (224.0.0.0/4) through memchan groups.
//!
//! - **Who listens**: each node reads the IPv4 groups its kernel joined on the TUN
//!   interface from `/proc/net/igmp` (what `IP_ADD_MEMBERSHIP` and IGMP joins leave
//!   there; robust whichever program joined and however) and publishes the list in
//!   its header page of every peer's copy ([`MC_GEN`], [`MC_LIST`]: a seqlock, the
//!   generation word written odd before the list and even after it). 224.0.0.1
//!   (all hosts) is left out: it goes through the broadcast ring.
//! - **Groups**: memchan groups are fixed at creation, so an IP group's receivers
//!   map to the memchan group of exactly that node set (the nodes whose lists hold
//!   the address): [`set_name`] names it and its segment after the set, and every
//!   node computes the same name. The sender creates (or finds) the group, a member
//!   creates (or finds) the segment and maps it rx; the sender writes each packet
//!   once through a `Dest::Group` mapping and the hub (or the one-host transport)
//!   lands it in the members' copies only. A non-member's memory never sees it.
//! - **Rings** ([`McLayout`]): one per sender in each set's segment. Records as in
//!   [`crate::ring`], but tagged with their own position instead of a seq, and the
//!   sender publishes its head ([`MC_HEAD`]) after each record: a member that maps
//!   late, or a sender that restarts, resynchronises at the published head. No
//!   credits: like IP multicast itself the ring is lossy; a reader that falls a ring
//!   behind skips to the head (counted), and each packet is copied out and checked
//!   not overrun before the kernel gets it.
//! - When no group can be had (the cluster's 32 groups are taken, a name collides),
//!   the packet goes through the broadcast ring instead, and the kernels of nodes
//!   that did not join drop it (counted as `mc_fallback`).

use std::net::Ipv4Addr;

use crate::ring::{rec_len, word, Sink, Source, ALIGN, WORD, WRAP};

/// Header word (main segment, sender's slot): the list's generation (low 32 bits,
/// odd while it is being rewritten) and its length (high 32 bits).
pub const MC_GEN: usize = 256;
/// Header words after [`MC_GEN`]: the addresses, two per word (low half first).
pub const MC_LIST: usize = 264;
/// The most groups one node publishes (the rest are not served, with a warning).
pub const MAX_MC: usize = 64;

/// The all-hosts group: every node is in it, so it goes through the broadcast ring.
pub const ALL_HOSTS: Ipv4Addr = Ipv4Addr::new(224, 0, 0, 1);

/// Header word (multicast segment, sender's slot): the sender's head.
pub const MC_HEAD: usize = 0;
/// Heads at or past this are not followed.
const HEAD_LIMIT: u64 = 1 << 48;

/// The IPv4 groups joined on interface `ifname`, from the text of
/// `/proc/net/igmp`: sorted, without [`ALL_HOSTS`], at most [`MAX_MC`].
pub fn joined_groups(igmp: &str, ifname: &str) -> Vec<Ipv4Addr> {
    let mut on_if = false;
    let mut out = Vec::new();
    for line in igmp.lines().skip(1) {
        if line.starts_with(char::is_whitespace) {
            // "\t\t\t\t010000E0     1 0:00000000\t\t0": the address as the kernel
            // prints a network-order word in hex.
            let Some(hex) = line.split_whitespace().next() else {
                continue;
            };
            if let (true, Ok(v)) = (on_if, u32::from_str_radix(hex, 16)) {
                let a = Ipv4Addr::from(u32::from_be(v));
                if a.is_multicast() && a != ALL_HOSTS {
                    out.push(a);
                }
            }
        } else {
            // "5\tmcip0     :     2      V3"
            on_if = line
                .split_once(':')
                .and_then(|(l, _)| l.split_whitespace().nth(1))
                == Some(ifname);
        }
    }
    out.sort_unstable();
    out.dedup();
    out.truncate(MAX_MC);
    out
}

/// Writes `list` (at most [`MAX_MC`]) as the seqlock at [`MC_GEN`] of slot `hdr`,
/// generation `gen` (even, > 0).
pub fn publish(sink: &impl Sink, hdr: usize, gen: u32, list: &[Ipv4Addr]) -> memchan::Result<()> {
    debug_assert!(gen.is_multiple_of(2) && gen > 0 && list.len() <= MAX_MC);
    sink.put_u64(hdr + MC_GEN, u64::from(gen.wrapping_sub(1)))?;
    for (i, pair) in list.chunks(2).enumerate() {
        let lo = u64::from(u32::from(pair[0]));
        let hi = pair.get(1).map_or(0, |a| u64::from(u32::from(*a)));
        sink.put_u64(hdr + MC_LIST + 8 * i, lo | (hi << 32))?;
    }
    sink.put_u64(hdr + MC_GEN, ((list.len() as u64) << 32) | u64::from(gen))
}

/// What [`read_list`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum ListRead {
    /// Nothing published, or the generation `seen` again, or a rewrite under way.
    Unchanged,
    /// A new list (generation word, addresses).
    New(u64, Vec<Ipv4Addr>),
    /// A list no honest node writes (named).
    Bad(&'static str),
}

/// Reads the list in slot `hdr` if its generation word is not `seen`. Every word is
/// checked: the peer may be hostile.
pub fn read_list(src: &impl Source, hdr: usize, seen: u64) -> ListRead {
    let Ok(g1) = src.get_u64(hdr + MC_GEN) else {
        return ListRead::Bad("a list past the segment");
    };
    if g1 == seen || g1 == 0 || g1 & 1 == 1 {
        return ListRead::Unchanged;
    }
    let n = (g1 >> 32) as usize;
    if n > MAX_MC {
        return ListRead::Bad("a multicast list longer than 64");
    }
    let mut out = Vec::with_capacity(n);
    for i in 0..n.div_ceil(2) {
        let Ok(w) = src.get_u64(hdr + MC_LIST + 8 * i) else {
            return ListRead::Bad("a list past the segment");
        };
        out.push(Ipv4Addr::from(w as u32));
        if out.len() < n {
            out.push(Ipv4Addr::from((w >> 32) as u32));
        }
    }
    if src.get_u64(hdr + MC_GEN).ok() != Some(g1) {
        return ListRead::Unchanged;
    }
    if out.iter().any(|a| !a.is_multicast()) {
        return ListRead::Bad("a non-multicast address in a multicast list");
    }
    ListRead::New(g1, out)
}

/// The name of the group (and of its segment) for node set `set` (sorted ids):
/// `{segment}.mc.` and a hash of the set. Every node computes the same one; two sets
/// with one hash are told apart when the group is found with other members.
pub fn set_name(segment: &str, set: &[u16]) -> String {
    let mut h = 0xcbf2_9ce4_8422_2325u64;
    for id in set {
        for b in id.to_le_bytes() {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    format!("{segment}.mc.{h:016x}")
}

/// A multicast segment: one slot per sender, `[ header page | ring ]`.
#[derive(Debug, Clone, Copy)]
pub struct McLayout {
    pub page: usize,
    pub ring: usize,
    pub slots: usize,
}

impl McLayout {
    pub fn segment_size(&self) -> usize {
        self.slots * (self.page + self.ring)
    }
    pub fn hdr(&self, s: usize) -> usize {
        s * (self.page + self.ring)
    }
    pub fn ring_at(&self, s: usize) -> usize {
        self.hdr(s) + self.page
    }
}

/// Where one sender's ring sits in a multicast segment: its first byte, its size,
/// and its head word.
#[derive(Debug, Clone, Copy)]
pub struct McRing {
    pub base: usize,
    pub size: usize,
    pub head_at: usize,
}

impl McLayout {
    /// Sender `s`'s ring.
    pub fn ring_of(&self, s: usize) -> McRing {
        McRing {
            base: self.ring_at(s),
            size: self.ring,
            head_at: self.hdr(s) + MC_HEAD,
        }
    }
}

/// A record's tag: its absolute position in 64-byte units (a record of an earlier
/// lap, or zeroed memory, has another).
fn tag(pos: u64) -> u32 {
    (pos / ALIGN as u64) as u32
}

/// The writing end of a sender's ring in one multicast segment.
#[derive(Debug, Clone, Copy, Default)]
pub struct McWriter {
    pub head: u64,
}

impl McWriter {
    /// Writes `pkt` as the next record of `ring`, then publishes the head.
    pub fn push(&mut self, tx: &impl Sink, ring: McRing, pkt: &[u8]) -> memchan::Result<()> {
        let McRing {
            base,
            size,
            head_at,
        } = ring;
        let mut pos = (self.head % size as u64) as usize;
        let rec = rec_len(pkt.len());
        if pos + rec > size {
            tx.put_u64(base + pos, word(tag(self.head), WRAP))?;
            self.head += (size - pos) as u64;
            pos = 0;
        }
        // The record in one call (one frame through a hub), then the head.
        tx.put_record(base + pos, pkt, word(tag(self.head), pkt.len() as u32))?;
        self.head += rec as u64;
        tx.put_u64(head_at, self.head)
    }
}

/// What [`McReader::next`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum McNext {
    /// Nothing new.
    Empty,
    /// A packet of `len` bytes, copied into the caller's buffer.
    Packet(usize),
    /// Records were lost (overrun, a restarted sender, or words no honest sender
    /// writes): the reader skipped to the head.
    Skipped,
}

/// The reading end of one sender's ring in a multicast segment: `None` until the
/// first head is seen (it starts there).
#[derive(Debug, Clone, Copy, Default)]
pub struct McReader {
    pub pos: Option<u64>,
}

impl McReader {
    /// The next packet of `ring` (packets at most `max_len` bytes), copied into
    /// `buf` by `copy(offset, buf)`.
    pub fn next<S: Source>(
        &mut self,
        src: &S,
        copy: impl Fn(usize, &mut [u8]) -> memchan::Result<()>,
        ring: McRing,
        max_len: usize,
        buf: &mut [u8],
    ) -> McNext {
        let McRing {
            base,
            size,
            head_at,
        } = ring;
        let Ok(head) = src.get_u64(head_at) else {
            return McNext::Empty;
        };
        // No honest head is unaligned or near the end of u64 (2^48 bytes is years of
        // traffic); such a head is not followed, and positions never overflow.
        if !head.is_multiple_of(ALIGN as u64) || head >= HEAD_LIMIT {
            return McNext::Empty;
        }
        let Some(mut pos) = self.pos else {
            self.pos = Some(head);
            return McNext::Empty;
        };
        // Room a writer may be filling past its published head: one record, and the
        // end of the ring a wrap skips.
        let slack = 2 * rec_len(max_len) as u64;
        let skip = |me: &mut Self| {
            me.pos = Some(head);
            McNext::Skipped
        };
        for _ in 0..2 {
            if pos == head {
                self.pos = Some(pos);
                return McNext::Empty;
            }
            if pos > head || head - pos + slack > size as u64 {
                return skip(self);
            }
            let p = (pos % size as u64) as usize;
            let Ok(w) = src.get_u64(base + p) else {
                return skip(self);
            };
            if w as u32 != tag(pos) {
                return skip(self);
            }
            let len = (w >> 32) as u32;
            if len == WRAP {
                pos += (size - p) as u64;
                continue;
            }
            let len = len as usize;
            let rec = rec_len(len);
            if len == 0 || len > max_len || len > buf.len() || p + rec > size {
                return skip(self);
            }
            if pos + rec as u64 > head || copy(base + p + WORD, &mut buf[..len]).is_err() {
                return skip(self);
            }
            // The copy is whole if the writer did not come round meanwhile.
            let now = src.get_u64(head_at).unwrap_or(u64::MAX);
            if now < head || now - pos + slack > size as u64 {
                self.pos = Some(now);
                return McNext::Skipped;
            }
            self.pos = Some(pos + rec as u64);
            return McNext::Packet(len);
        }
        skip(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ring::tests::Mem;
    use std::cell::RefCell;

    impl Mem {
        fn copy(&self, off: usize, buf: &mut [u8]) -> memchan::Result<()> {
            buf.copy_from_slice(&self.0.borrow()[off..off + buf.len()]);
            Ok(())
        }
    }

    const IGMP: &str = "Idx\tDevice    : Count Querier\tGroup    Users Timer\tReporter
1\tlo        :     1      V3
\t\t\t\t010000E0     1 0:00000000\t\t0
4\tmcip0     :     3      V3
\t\t\t\t070707EF     1 0:00000000\t\t0
\t\t\t\tFB0000E0     1 0:00000000\t\t0
\t\t\t\t010000E0     1 0:00000000\t\t0
5\tmcip01    :     2      V3
\t\t\t\t080808EF     1 0:00000000\t\t0
";

    #[test]
    fn joined_groups_are_read_per_interface() {
        let g = joined_groups(IGMP, "mcip0");
        assert_eq!(
            g,
            vec![Ipv4Addr::new(224, 0, 0, 251), Ipv4Addr::new(239, 7, 7, 7)]
        );
        assert_eq!(
            joined_groups(IGMP, "mcip01"),
            vec![Ipv4Addr::new(239, 8, 8, 8)]
        );
        assert!(joined_groups(IGMP, "lo").is_empty()); // only all-hosts
        assert!(joined_groups("", "mcip0").is_empty());
    }

    #[test]
    fn lists_round_trip_and_hostile_ones_are_named() {
        let m = Mem(RefCell::new(vec![0; 4096]));
        assert_eq!(read_list(&m, 0, 0), ListRead::Unchanged);
        let l = vec![
            Ipv4Addr::new(239, 1, 1, 1),
            Ipv4Addr::new(239, 1, 1, 2),
            Ipv4Addr::new(224, 0, 0, 251),
        ];
        publish(&m, 0, 2, &l).unwrap();
        let ListRead::New(g, got) = read_list(&m, 0, 0) else {
            panic!("no list")
        };
        assert_eq!(got, l);
        assert_eq!(read_list(&m, 0, g), ListRead::Unchanged);
        publish(&m, 0, 4, &[]).unwrap();
        assert!(matches!(read_list(&m, 0, g), ListRead::New(_, v) if v.is_empty()));
        // Mid-rewrite (odd generation): not read.
        m.put_u64(MC_GEN, 5).unwrap();
        assert_eq!(read_list(&m, 0, g), ListRead::Unchanged);
        m.put_u64(MC_GEN, (1000 << 32) | 6).unwrap();
        assert!(matches!(read_list(&m, 0, 0), ListRead::Bad(_)));
        m.put_u64(MC_LIST, u64::from(u32::from(Ipv4Addr::new(10, 0, 0, 1))))
            .unwrap();
        m.put_u64(MC_GEN, (1 << 32) | 8).unwrap();
        assert!(matches!(read_list(&m, 0, 0), ListRead::Bad(_)));
    }

    #[test]
    fn set_names_differ_per_set_and_fit_a_segment_name() {
        let a = set_name("memchan-ip", &[0, 1]);
        assert_eq!(a, set_name("memchan-ip", &[0, 1]));
        assert_ne!(a, set_name("memchan-ip", &[0, 2]));
        assert_ne!(a, set_name("memchan-ip", &[0, 1, 2]));
        assert!(a.len() <= memchan::NAME_LEN, "{a}");
        assert!(a
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b".-_".contains(&b)));
    }

    #[test]
    fn a_late_reader_starts_at_the_head_and_an_overrun_one_skips() {
        let (base, size, max) = (64, 2048, 200);
        let ring = McRing {
            base,
            size,
            head_at: 0,
        };
        let m = Mem(RefCell::new(vec![0; base + size]));
        let mut w = McWriter { head: 0 };
        let mut r = McReader::default();
        let mut buf = vec![0; 256];
        let next =
            |r: &mut McReader, buf: &mut [u8]| r.next(&m, |o, b| m.copy(o, b), ring, max, buf);
        w.push(&m, ring, &[1; 100]).unwrap();
        // Starts at the head it first sees: the record before is not its.
        assert_eq!(next(&mut r, &mut buf), McNext::Empty);
        assert_eq!(next(&mut r, &mut buf), McNext::Empty);
        for i in 0..60u8 {
            let pkt = vec![i; 20 + usize::from(i) * 3];
            w.push(&m, ring, &pkt).unwrap();
            assert_eq!(next(&mut r, &mut buf), McNext::Packet(pkt.len()), "{i}");
            assert_eq!(&buf[..pkt.len()], &pkt[..]);
            assert_eq!(next(&mut r, &mut buf), McNext::Empty);
        }
        // A ring behind: skipped to the head, then in step again.
        for _ in 0..40 {
            w.push(&m, ring, &[9; 150]).unwrap();
        }
        assert_eq!(next(&mut r, &mut buf), McNext::Skipped);
        w.push(&m, ring, &[7; 30]).unwrap();
        assert_eq!(next(&mut r, &mut buf), McNext::Packet(30));
        // A restarted sender (head back at 0): skipped, then read.
        let mut w2 = McWriter { head: 0 };
        w2.push(&m, ring, &[5; 10]).unwrap();
        assert_eq!(next(&mut r, &mut buf), McNext::Skipped);
        w2.push(&m, ring, &[6; 10]).unwrap();
        assert_eq!(next(&mut r, &mut buf), McNext::Packet(10));
        assert_eq!(buf[0], 6);
        // A hostile length: skipped, never read past the ring.
        let p = (w2.head % size as u64) as usize;
        m.put_u64(base + p, word(tag(w2.head), 5000)).unwrap();
        m.put_u64(ring.head_at, w2.head + 128).unwrap();
        assert_eq!(next(&mut r, &mut buf), McNext::Skipped);
        // A head near the end of u64: not followed (no overflow, nothing read).
        m.put_u64(ring.head_at, u64::MAX - 63).unwrap();
        assert_eq!(next(&mut r, &mut buf), McNext::Empty);
        let mut fresh = McReader::default();
        assert_eq!(next(&mut fresh, &mut buf), McNext::Empty);
        assert_eq!(fresh.pos, None);
    }
}
