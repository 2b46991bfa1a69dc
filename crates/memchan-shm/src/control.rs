//! The control block: the one shared-memory object per cluster that holds the node
//! table, the segment and group tables, the order point, its journal, the membership
//! event ring and the barrier and notify words. Found by name
//! (`/dev/shm/memchan.<cluster>.ctl`), offsets only, never pointers.
//!
//! # Layout
//!
//! ```text
//!  +--------------------------+  0
//!  | Header (magic, version,  |     magic "MEMCHAN\0", version, page size,
//!  |  page size, epoch, ...)  |     timing, epoch, incarnation counter
//!  +--------------------------+
//!  | OrderLine                |     the point of global order (own cache line)
//!  +--------------------------+
//!  | NodeSlot  x MAX_NODES    |     state, pid, incarnation, heartbeat, barriers
//!  +--------------------------+
//!  | SegEntry  x MAX_SEGMENTS |     name, size, rx set, generation
//!  +--------------------------+
//!  | GroupEntry x MAX_GROUPS  |     name, member set
//!  +--------------------------+
//!  | EventRing                |     membership events, newest EVENTS kept
//!  +--------------------------+
//!  | DuoLine x BARRIER_SCOPES |     a 2-node barrier's two words, one line
//!  +--------------------------+
//! ```
//!
//! Every field is an atomic: any member can write any word at any time, so every
//! value read here is validated before use, and nothing here decides what a member
//! may do: a segment's owner and mode are its permission object's (`perm.rs`), and
//! the order point holder's packet in flight is journaled in its own journal object
//! (`record.rs`), not here. Names and tables are changed only while holding the
//! control file's `flock`. The cluster's parameters (version, page size, heartbeat,
//! failure timeout) are written once by the first node, before `magic`, and each
//! joiner reads, validates and keeps its own copy (`Local`): a later change of those
//! words has no effect on a joined node.

use memchan_core::event::EventSlot;
use memchan_core::sync::{AtomicU32, AtomicU64};
use memchan_core::{MAX_GROUPS, MAX_NODES};

/// "MEMCHAN\0" little-endian.
pub(crate) const MAGIC: u64 = u64::from_le_bytes(*b"MEMCHAN\0");
/// Bumped whenever any shared layout changes (8: receive memory's remap table; 9: the
/// flat barrier word of a crowded host, lock clears outside the order point; 10: a
/// node's barrier words on their own cache line; 11: the 2-node barrier's shared
/// line per scope).
pub(crate) const VERSION: u32 = 11;
/// Segments per cluster.
pub(crate) const MAX_SEGMENTS: usize = memchan_core::validate::MAX_SEGMENTS;
/// Membership events kept in the ring.
pub(crate) const EVENTS: usize = memchan_core::validate::EVENT_RING;
/// Longest segment, group and cluster name in bytes.
pub(crate) const NAME_LEN: usize = memchan_core::validate::NAME_LEN;
/// Largest packet: one 8 KiB page.
pub(crate) const MAX_PACKET: usize = 8192;
/// Barrier scopes: the whole cluster, then one per group.
pub(crate) const BARRIER_SCOPES: usize = 1 + MAX_GROUPS;

/// Node slot states.
pub(crate) mod node_state {
    pub const FREE: u32 = 0;
    pub const ALIVE: u32 = 1;
    /// Declared failed; a survivor is cleaning up after it.
    pub const FAILED: u32 = 2;
}

/// Segment entry states and flags.
pub(crate) mod seg_state {
    pub const FREE: u32 = 0;
    pub const LIVE: u32 = 1;
    /// The segment is a cluster lock page: the failure detector clears a dead node's slot.
    pub const FLAG_LOCK: u32 = 1;
}

/// `version`, `page_size`, `heartbeat_ns` and `failure_timeout_ns` are written once, by
/// the creator, before its Release store of `magic`; a joiner loads `magic` with
/// Acquire first. They are atomics all the same: other processes map the block while
/// it is created, and a shared `&Control` must not cover plain fields that can change.
#[repr(C, align(64))]
pub(crate) struct Header {
    pub magic: AtomicU64,
    pub version: AtomicU32,
    pub page_size: AtomicU32,
    pub heartbeat_ns: AtomicU64,
    pub failure_timeout_ns: AtomicU64,
    /// Membership epoch: bumped on every join, leave and failure.
    pub epoch: AtomicU64,
    /// Source of node incarnations (never reused); also the count of joins.
    pub incarnations: AtomicU64,
    /// Nodes declared failed and isolated since the cluster was created.
    pub isolations: AtomicU64,
    /// CLOCK_MONOTONIC ns when the cluster was created (status: uptime).
    pub created_ns: AtomicU64,
    /// Notify pair for membership events.
    pub event_seq: AtomicU32,
    pub event_waiters: AtomicU32,
    /// Notify pair for the control file's `flock`: posted by every release, so a
    /// waiter sleeps instead of polling (`node::plane::lock_plane`).
    pub plane_seq: AtomicU32,
    pub plane_waiters: AtomicU32,
    /// The live members (a bitmap of node ids), changed under the flock with `epoch`.
    pub members: [AtomicU64; MAX_NODES / 64],
}

/// The order point's word (`memchan_core::order`), alone on its cache line.
#[repr(C, align(64))]
pub(crate) struct OrderLine {
    pub word: AtomicU64,
}

#[repr(C, align(64))]
pub(crate) struct NodeSlot {
    pub state: AtomicU32,
    pub pid: AtomicU32,
    pub incarnation: AtomicU64,
    /// CLOCK_MONOTONIC ns of the last heartbeat.
    pub heartbeat_ns: AtomicU64,
    /// Epoch at which the node was isolated, 0 if it is not.
    pub isolated_epoch: AtomicU64,
    pub uid: AtomicU32,
    pub gid: AtomicU32,
    /// Epoch of its join (status).
    pub joined_epoch: AtomicU64,
    /// Notify pair for this node's barrier words: posted when it publishes one that
    /// a peer sleeps on (`node::Inner::barrier`).
    pub bar_seq: AtomicU32,
    pub bar_waiters: AtomicU32,
    /// Barrier word per scope (`memchan_core::barrier::word`), from a cache line of
    /// their own: peers spin on them, and the heartbeat and the slot's other words
    /// must not move that line away from its writer between barriers.
    pub barrier: BarrierWords,
}

/// A node's barrier words, cache-line aligned (see [`NodeSlot::barrier`]).
#[repr(C, align(64))]
pub(crate) struct BarrierWords(pub [AtomicU64; BARRIER_SCOPES]);

impl std::ops::Deref for BarrierWords {
    type Target = [AtomicU64; BARRIER_SCOPES];
    fn deref(&self) -> &Self::Target {
        &self.0
    }
}

/// The two arrival words of a 2-node barrier, side by side on one cache line per
/// scope: slot 0 is the lower node id's, slot 1 the higher's. With a word per node on
/// lines of their own, the second node to arrive fetches the first's line and the
/// first then fetches the second's; on one shared line the second's store fetches
/// the first's arrival with it, one transfer instead of two before one of them
/// passes (slow-state probe: 165 ns against 243 ns a barrier). A copy only: each node
/// still publishes its own [`NodeSlot::barrier`] word, which every fallback reads,
/// and a duo word that does not match (another pair, a stale word) only slows the
/// wait down to that path. Cleared at every join under the flock, so a word a node
/// left behind is never taken for a new node's of the same id.
#[repr(C, align(64))]
pub(crate) struct DuoLine(pub [AtomicU64; 2]);

/// A [`DuoLine`] word: `1 << 63 | number << 24 | id << 16 | tag`, with the low 39
/// bits of the barrier number, the writer's node id and the rank set's tag (as
/// `memchan_core::barrier::word`); 0 is no word.
pub(crate) mod duo {
    const NUMBER_MASK: u64 = (1 << 39) - 1;
    const VALID: u64 = 1 << 63;

    pub fn pack(number: u64, id: usize, tag: u64) -> u64 {
        VALID | (number & NUMBER_MASK) << 24 | (id as u64 & 0xff) << 16 | (tag & 0xffff)
    }

    /// Slot of node `me` on the line it shares with `peer`.
    pub fn slot(me: usize, peer: usize) -> usize {
        usize::from(me > peer)
    }

    /// `w` shows that node `id`, with rank-set tag `tag`, arrived at barrier `t`: its
    /// word of `t`, or of `t + 1` (in a 2-node barrier a node passes `t` only once
    /// both arrived, so a word of the next barrier shows `t`'s arrival too).
    pub fn arrived(w: u64, id: usize, tag: u64, t: u64) -> bool {
        let who = pack(0, id, tag);
        let n = (w >> 24) & NUMBER_MASK;
        w & !(NUMBER_MASK << 24) == who
            && (n == t & NUMBER_MASK || n == t.wrapping_add(1) & NUMBER_MASK)
    }
}

#[repr(C, align(64))]
pub(crate) struct SegEntry {
    pub state: AtomicU32,
    /// Bumped on every create and free, part of the rx object names.
    pub generation: AtomicU32,
    pub flags: AtomicU32,
    /// Unused; an atomic like every word of the block.
    pub _pad: AtomicU32,
    pub size: AtomicU64,
    /// Nodes that map the segment rx.
    pub rx_set: [AtomicU64; MAX_NODES / 64],
    /// Bumped whenever `rx_set` or the entry changes, so tx mappings refresh.
    pub rx_gen: AtomicU64,
    pub name: [AtomicU8x8; NAME_LEN / 8],
}

#[repr(C, align(64))]
pub(crate) struct GroupEntry {
    pub state: AtomicU32,
    /// Unused; an atomic like every word of the block.
    pub _pad: AtomicU32,
    pub members: [AtomicU64; MAX_NODES / 64],
    pub name: [AtomicU8x8; NAME_LEN / 8],
}

/// Eight name bytes in one word (names are written under the flock, read under it).
pub(crate) type AtomicU8x8 = AtomicU64;

/// The membership events, newest [`EVENTS`]: event `i` in slot `i % EVENTS`, a
/// seqlock (`memchan_core::event::EventSlot`), written under the flock.
#[repr(C, align(64))]
pub(crate) struct EventRing {
    /// Number of events ever written.
    pub head: AtomicU64,
    pub events: [EventSlot; EVENTS],
}

/// The whole control block.
#[repr(C, align(64))]
pub(crate) struct Control {
    pub header: Header,
    pub order: OrderLine,
    pub nodes: [NodeSlot; MAX_NODES],
    pub segs: [SegEntry; MAX_SEGMENTS],
    pub groups: [GroupEntry; MAX_GROUPS],
    pub events: EventRing,
    pub duos: [DuoLine; BARRIER_SCOPES],
}

/// Stores `name` (≤ NAME_LEN bytes) into name words.
pub(crate) fn store_name(words: &[AtomicU64; NAME_LEN / 8], name: &str) {
    let mut buf = [0u8; NAME_LEN];
    buf[..name.len()].copy_from_slice(name.as_bytes());
    for (w, chunk) in words.iter().zip(buf.chunks_exact(8)) {
        w.store(
            u64::from_le_bytes(chunk.try_into().expect("8 bytes")),
            memchan_core::sync::Ordering::Relaxed,
        );
    }
}

/// Reads a name stored by [`store_name`].
pub(crate) fn load_name(words: &[AtomicU64; NAME_LEN / 8]) -> String {
    let mut buf = Vec::with_capacity(NAME_LEN);
    for w in words {
        buf.extend_from_slice(&w.load(memchan_core::sync::Ordering::Relaxed).to_le_bytes());
    }
    let end = buf.iter().position(|&b| b == 0).unwrap_or(buf.len());
    String::from_utf8_lossy(&buf[..end]).into_owned()
}

/// Reads a node-set bitmap.
pub(crate) fn load_set(words: &[AtomicU64; MAX_NODES / 64]) -> memchan_core::NodeSet {
    let mut s = memchan_core::NodeSet::EMPTY;
    for (o, w) in s.0.iter_mut().zip(words.iter()) {
        *o = w.load(memchan_core::sync::Ordering::Acquire);
    }
    s
}

/// Stores a node-set bitmap.
pub(crate) fn store_set(words: &[AtomicU64; MAX_NODES / 64], set: &memchan_core::NodeSet) {
    for (w, v) in words.iter().zip(set.0.iter()) {
        w.store(*v, memchan_core::sync::Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_block_fits_and_aligns() {
        assert_eq!(std::mem::align_of::<Control>(), 64);
        assert_eq!(std::mem::size_of::<OrderLine>(), 64);
        // The whole block is a few hundred KiB; keep it well under a 2 MiB huge page.
        assert!(std::mem::size_of::<Control>() < 2 << 20);
    }

    #[test]
    fn a_duo_word_shows_only_its_writers_arrival() {
        let w = duo::pack(41, 7, 0xbeef);
        assert!(duo::arrived(w, 7, 0xbeef, 41));
        assert!(
            duo::arrived(w, 7, 0xbeef, 40),
            "the next barrier's word shows this one"
        );
        assert!(
            !duo::arrived(w, 7, 0xbeef, 42),
            "a word behind is not an arrival"
        );
        assert!(!duo::arrived(w, 7, 0xbeef, 39));
        assert!(!duo::arrived(w, 6, 0xbeef, 41), "another node's word");
        assert!(!duo::arrived(w, 7, 0xbeee, 41), "another rank set's word");
        assert!(!duo::arrived(0, 0, 0, 0), "a cleared word");
        let top = (1u64 << 39) - 1;
        assert!(duo::arrived(duo::pack(0, 3, 1), 3, 1, top), "numbers wrap");
        assert_eq!((duo::slot(3, 9), duo::slot(9, 3)), (0, 1));
    }

    #[test]
    fn names_roundtrip() {
        let words: [AtomicU64; NAME_LEN / 8] = Default::default();
        store_name(&words, "segment-α");
        assert_eq!(load_name(&words), "segment-α");
    }

    /// A published event whose slot no longer holds it (overwritten by a writer that
    /// died before moving `head`, or forged) is skipped; the reader neither spins on
    /// the slot for ever (as it did) nor returns a mix. The next real event still
    /// arrives.
    #[test]
    fn a_reader_skips_an_event_its_slot_no_longer_holds() {
        use memchan_core::sync::Ordering;
        use memchan_core::transport::Transport;
        use memchan_core::{Config, EventKind, MembershipEvent, NodeId};
        let name = format!("ring-{}", std::process::id());
        let a = crate::Node::join(&name, &Config::default()).unwrap();
        let inner = a.inner.clone();
        let ring = &inner.local.ctl().events;
        let last = ring.head.load(Ordering::Acquire) - 1;
        let forged = MembershipEvent {
            epoch: 7,
            node: NodeId(9),
            incarnation: 7,
            kind: EventKind::Left,
        };
        ring.events[last as usize % EVENTS].write(last + EVENTS as u64, &forged);
        // Hang guard: the read runs in a thread that must answer within a minute.
        let (tx, rx) = std::sync::mpsc::channel();
        let reader = inner.clone();
        std::thread::spawn(move || {
            let mut cursor = last;
            let got = reader.next_event(&mut cursor, Some(std::time::Duration::ZERO));
            let _ = tx.send((got, cursor));
        });
        let (got, cursor) = rx
            .recv_timeout(std::time::Duration::from_secs(60))
            .expect("next_event spun on a slot that no longer holds the event");
        assert_eq!(got, None, "the forged event was returned");
        assert_eq!(cursor, last + 1, "the event was not skipped");
        let b = crate::Node::join(&name, &Config::default()).unwrap();
        let mut cursor = last + 1;
        let ev = inner.next_event(&mut cursor, Some(std::time::Duration::from_secs(60)));
        assert_eq!(
            ev.map(|e| (e.node, e.kind)),
            Some((b.inner.local.me, EventKind::Joined))
        );
    }
}
