//! The transport contract: what every transport (shared memory on one host, the hub
//! between hosts, and any later one) offers, as traits the public `memchan` crate is
//! written against once. Nothing here does I/O.
//!
//! A transport is a [`Transport`] (a joined node) with associated segment, tx
//! mapping, rx mapping and lock types. The data path ([`TxOps`], [`RxOps`]) is called
//! through the concrete types, so it is monomorphised: the one-host store stays a few
//! instructions. An operation a transport does not offer returns
//! [`Error::Unsupported`], and [`Transport::caps`] says beforehand what it offers
//! (as libfabric's capability bits do).
//!
//! The behaviour both transports must show is written down on each method and checked
//! by the conformance suite (`crates/memchan/tests/conformance`), which runs the same
//! tests on every transport.

use crate::attr::{Dest, RxAttrs, TxAttrs};
use crate::clock::GlobalTime;
use crate::config::Config;
use crate::deposit::{Cmp, CondResult, Shape, SignalOp};
use crate::error::{Error, Result};
use crate::event::MembershipEvent;
use crate::names::{GroupId, NodeId, NodeSet};
use crate::rma::{AtomicOp, PeerMemory, Pending};
use std::time::Duration;

/// What a transport offers, as bits (see the constants).
///
/// ```
/// use memchan_core::transport::Caps;
/// let c = Caps::ORDERED | Caps::NOTIFY;
/// assert!(c.contains(Caps::NOTIFY) && !c.contains(Caps::DIRECT_DEPOSIT));
/// assert_eq!(c.names(), vec!["ordered", "notify"]);
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Hash)]
pub struct Caps(u32);

impl Caps {
    /// A point-to-point write is a store into the destination's memory (no system
    /// call, no daemon).
    pub const DIRECT_DEPOSIT: Caps = Caps(1);
    /// Broadcast, multicast and local copy in one global order (MEMORY CHANNEL's
    /// rules 1 and 2).
    pub const ORDERED: Caps = Caps(1 << 1);
    /// Notify on receive: `RxOps::wait` blocks without a busy core.
    pub const NOTIFY: Caps = Caps(1 << 2);
    /// The links repair loss, corruption and duplication themselves (CRC, go-back-N).
    pub const RELIABLE_LINKS: Caps = Caps(1 << 3);
    /// The cluster can be hosted by one of its nodes (virtual hub).
    pub const HOSTED_HUB: Caps = Caps(1 << 4);
    /// Remote read (`RmaOps::get`), served without the target application.
    pub const GET: Caps = Caps(1 << 8);
    /// Remote atomics on 4- and 8-byte words (`RmaOps::atomic_u64`), executed where
    /// the word lives.
    pub const ATOMICS: Caps = Caps(1 << 9);
    /// Two rails with fail-over. The hub transport runs dual rail when joined with a
    /// standby hub (`HubSpec::Connect`'s `standby`, docs/guide/hub.md), but no
    /// transport reports this bit yet.
    pub const RAILS: Caps = Caps(1 << 10);

    const NAMES: [(Caps, &'static str); 8] = [
        (Caps::DIRECT_DEPOSIT, "direct-deposit"),
        (Caps::ORDERED, "ordered"),
        (Caps::NOTIFY, "notify"),
        (Caps::RELIABLE_LINKS, "reliable-links"),
        (Caps::HOSTED_HUB, "hosted-hub"),
        (Caps::GET, "get"),
        (Caps::ATOMICS, "atomics"),
        (Caps::RAILS, "rails"),
    ];

    /// Whether every bit of `other` is set here.
    pub fn contains(self, other: Caps) -> bool {
        self.0 & other.0 == other.0
    }

    /// The names of the bits set, in a fixed order.
    pub fn names(self) -> Vec<&'static str> {
        Self::NAMES
            .iter()
            .filter(|(c, _)| self.contains(*c))
            .map(|(_, n)| *n)
            .collect()
    }
}

impl std::ops::BitOr for Caps {
    type Output = Caps;
    fn bitor(self, o: Caps) -> Caps {
        Caps(self.0 | o.0)
    }
}

/// A node joined to a cluster through one transport: the control plane.
///
/// Decided behaviour every implementation keeps (checked by the conformance suite):
/// - arguments are checked by [`crate::validate`] before anything changes, with the
///   same typed error on every transport, and no argument makes a call panic;
/// - membership events are kept for the reader up to [`crate::validate::EVENT_RING`];
///   a reader further behind skips to the oldest kept;
/// - a node that joins while a barrier is under way is not part of that barrier; its
///   first `barrier` call is the next one;
/// - the page is the unit a write larger than 8 bytes is applied in: each page of it
///   lands whole and in the one order, pages of one write may have another sender's
///   packets between them.
pub trait Transport: Sized + Send + Sync + 'static {
    /// A segment handle.
    type Segment: SegmentOps<Tx = Self::Tx, Rx = Self::Rx>;
    /// A tx mapping: the write path.
    type Tx: TxOps;
    /// An rx mapping: the read path.
    type Rx: RxOps;
    /// A cluster lock.
    type Lock: LockOps;

    /// The transport's name (`shm`, `hub`), for status and errors.
    const NAME: &'static str;

    /// Joins (creating if needed) the cluster `name`, after checking `name`
    /// ([`crate::validate::cluster_name`]) and `cfg` ([`Config::validate`]) before
    /// anything else: the one place either is checked.
    ///
    /// # Errors
    /// A bad cluster name, a version or page-size mismatch, a full node table, or the
    /// transport's own refusals (`HubRefused`, `Os`).
    fn join(name: &str, cfg: &Config) -> Result<Self>;
    /// What this transport offers.
    fn caps(&self) -> Caps;
    /// This node's id.
    fn node_id(&self) -> NodeId;
    /// This node's incarnation (new on every join).
    fn incarnation(&self) -> u64;
    /// The cluster's name.
    fn cluster(&self) -> &str;
    /// The cluster's page size in bytes.
    fn page_size(&self) -> usize;
    /// The live members.
    fn members(&self) -> NodeSet;
    /// The membership epoch.
    fn epoch(&self) -> u64;
    /// The next membership event after this node's join, waiting up to `timeout`.
    fn next_event(&self, timeout: Option<Duration>) -> Option<MembershipEvent>;
    /// Waits until at least `n` nodes are members.
    ///
    /// # Errors
    /// `Timeout`, or this node's isolation.
    fn wait_for_members(&self, n: usize, timeout: Duration) -> Result<()>;
    /// Finds or creates a segment.
    ///
    /// # Errors
    /// A bad name, size or mode (`Invalid`), another size (`SegmentSizeMismatch`), a
    /// full table (`TableFull`).
    fn segment(&self, name: &str, size: usize, mode: u32) -> Result<Self::Segment>;
    /// Opens an existing segment.
    ///
    /// # Errors
    /// `UnknownSegment`, or a bad name.
    fn open_segment(&self, name: &str) -> Result<Self::Segment>;
    /// Creates (or finds, with the same members) a multicast group.
    ///
    /// # Errors
    /// A bad name, no members (`Invalid`), a non-member (`UnknownNode`), a full table.
    fn create_group(&self, name: &str, members: &[NodeId]) -> Result<GroupId>;
    /// Looks a group up by name.
    ///
    /// # Errors
    /// `UnknownGroup`.
    fn group(&self, name: &str) -> Result<GroupId>;
    /// Returns once every earlier write of this node is applied at every destination.
    ///
    /// # Errors
    /// `AckIncomplete` naming the nodes that did not acknowledge, `Isolated`, `HubLost`.
    fn ack(&self) -> Result<()>;
    /// Barrier over the live members.
    ///
    /// # Errors
    /// `Isolated`, `HubLost`.
    fn barrier(&self) -> Result<()>;
    /// Barrier over the live members of group `g`, of which this node must be one.
    ///
    /// # Errors
    /// `UnknownGroup`, `Invalid` (`"group barrier"`: not a member).
    fn barrier_group(&self, g: GroupId) -> Result<()>;
    /// The cluster lock `name`.
    ///
    /// # Errors
    /// A bad lock name (`Invalid`), a full segment table.
    fn lock(&self, name: &str) -> Result<Self::Lock>;
    /// The cluster's global clock (docs/spec.md, Semantics 10): a time every node reads alike,
    /// with its accuracy bound measured at run time (`crate::clock`). Two readings of
    /// one moment on any two nodes differ by at most the sum of their bounds.
    ///
    /// # Errors
    /// `ClockNotSynchronised` before this node's clock is synchronised (through a
    /// hub, until its first time packets and an echoed probe arrived).
    fn global_time(&self) -> Result<GlobalTime>;
    /// Leaves the cluster now (dropping the node does too).
    fn leave(self);
}

/// What only a node of the hub transport offers, outside the generic contract:
/// generic code never sees it, and the facade reaches it only on a node that joined
/// through a hub (libfabric's provider-specific ops, in the same spirit).
pub trait HubOps: Transport {
    /// The address of the hub this node hosts in its process (virtual hub).
    ///
    /// # Errors
    /// `Unsupported` where the node joined a hub elsewhere.
    fn hosted_hub_addr(&self) -> Result<std::net::SocketAddr>;
}

/// A named segment.
pub trait SegmentOps: Send + Sync {
    /// Its tx mapping type.
    type Tx: TxOps;
    /// Its rx mapping type.
    type Rx: RxOps;
    /// Its remote-access handle type.
    type Rma: RmaOps;
    /// The segment's name.
    fn name(&self) -> &str;
    /// Size in bytes (whole pages).
    fn size(&self) -> usize;
    /// Who owns it (its creator's uid), its group and mode: see [`crate::SegOwner`].
    fn owner(&self) -> crate::SegOwner;
    /// Maps it rx with `attrs` on every page.
    ///
    /// # Errors
    /// `PermissionDenied` (read), `Invalid` (`"rx mapping"`: this node maps it rx
    /// already), `SegmentFreed`.
    fn map_rx_with(&self, attrs: RxAttrs) -> Result<Self::Rx>;
    /// Maps it tx towards `dest`.
    ///
    /// # Errors
    /// `PermissionDenied` (write), `UnknownNode`, `UnknownGroup`, `Isolated`.
    fn map_tx(&self, dest: Dest, attrs: TxAttrs) -> Result<Self::Tx>;
    /// Frees the segment: its owner (or root) only.
    ///
    /// # Errors
    /// `PermissionDenied` (op `free`) for anyone else, `SegmentFreed`.
    fn free(self) -> Result<()>;
    /// A handle for remote reads and atomics on any node's copy of the segment
    /// ([`RmaOps`]). The caller's rights are checked here, once, as `map_tx` checks
    /// write: each operation then refuses what they do not cover.
    ///
    /// # Errors
    /// `Isolated`, `HubLost`, `SegmentFreed`; the kernel's own refusal (`Os`) where
    /// the permission object cannot be opened.
    fn rma(&self) -> Result<Self::Rma>;
}

/// Remote memory access to other nodes' receive memory (docs/spec.md, Semantics 8; seed
/// 000's remote read; OpenSHMEM's get and atomics). One handle addresses every node's
/// copy of one segment; like a tx mapping it belongs to one thread at a time (it
/// caches each target's mapping without a lock).
///
/// Decided behaviour every implementation keeps (checked by `conformance/rma.rs`):
/// - **Served without the target application.** One host: the caller loads from (or
///   runs the atomic on) the target's receive memory, which it maps. Across hosts:
///   the target node's link side answers from its receive memory; the hub routes the
///   request and the answer. The target application never calls anything.
/// - **Only where allowed.** Every page an operation touches must have the target's
///   rx attribute `remote_read` (default off): `RemoteReadOff` otherwise. Atomics
///   need the same attribute (they read the word too); no further attribute. The
///   caller needs read permission on the segment for a get (`PermissionDenied`, op
///   `get`) and read and write for an atomic (op `atomic`), checked against kernel
///   facts on one host and by the hub across hosts.
/// - **Bad input**, checked in this order, before anything is sent: `OutOfBounds`,
///   `Unaligned` (4- and 8-byte words only), `UnknownNode` (not a member, or failed
///   while the request was under way), `NotMapped` (a member that does not map the
///   segment rx). No call waits longer than the transport's failure bounds: across
///   hosts a target that fails gives `UnknownNode`, one that received the request and
///   does not answer it for the failure timeout gives `Timeout`.
/// - **Atomicity.** An atomic on a word is one indivisible step against every other
///   atomic on that word from any node and from the owner's CPU atomics on its rx
///   mapping: it runs where the word lives (on one host, a locked instruction on the
///   shared mapping; across hosts, on the target's receive memory by its link side),
///   never on a copy. A 4- or 8-byte get of an aligned word is one atomic load.
/// - **Ordering.** A get or atomic from node A to node N takes its place after every
///   earlier write of A that reaches N (single-sender rule: it travels the path A's
///   writes to N take, and one host applies writes before the call that made them
///   returns), so it sees them; it returns (blocking forms) once done at N. Writes of
///   other senders are seen in N's order of application: a get returns N's copy as
///   it was at one moment. A non-blocking get completes at the latest by the next
///   `Transport::ack` (OpenSHMEM `quiet`). A longer get is no snapshot (as OpenSHMEM's
///   is not): each aligned word is read atomically, but a write landing meanwhile
///   may be seen in part.
pub trait RmaOps: Send {
    /// Copies `buf.len()` bytes at `offset` of `node`'s copy of the segment.
    ///
    /// # Errors
    /// `OutOfBounds`, `PermissionDenied`, `UnknownNode`, `NotMapped`, `RemoteReadOff`,
    /// `Isolated`, `HubLost`.
    fn get(&self, node: NodeId, offset: usize, buf: &mut [u8]) -> Result<()>;
    /// An aligned 8-byte word of `node`'s copy, read atomically.
    ///
    /// # Errors
    /// As [`get`](Self::get), and `Unaligned`.
    fn get_u64(&self, node: NodeId, offset: usize) -> Result<u64>;
    /// An aligned 4-byte word of `node`'s copy, read atomically.
    ///
    /// # Errors
    /// As [`get_u64`](Self::get_u64).
    fn get_u32(&self, node: NodeId, offset: usize) -> Result<u32>;
    /// Starts a get of `len` bytes; completed by `Transport::ack` or by
    /// [`Pending::take`]. Argument errors are returned here, the target's refusals by
    /// `take`.
    ///
    /// # Errors
    /// `OutOfBounds`, `PermissionDenied`, `Isolated`, `HubLost`.
    fn get_nbi(&self, node: NodeId, offset: usize, len: usize) -> Result<Pending>;
    /// Runs `op` on the aligned 8-byte word at `offset` of `node`'s copy; returns the
    /// old value.
    ///
    /// # Errors
    /// As [`get_u64`](Self::get_u64) (`PermissionDenied` with op `atomic`).
    fn atomic_u64(&self, node: NodeId, offset: usize, op: AtomicOp) -> Result<u64>;
    /// As [`atomic_u64`](Self::atomic_u64) on a 4-byte word.
    ///
    /// # Errors
    /// As `atomic_u64`.
    fn atomic_u32(&self, node: NodeId, offset: usize, op: AtomicOp) -> Result<u32>;
    /// `node`'s copy of the whole segment as memory this process loads from and
    /// stores to ([`PeerMemory`]). Only where nodes share memory: a transport whose
    /// nodes do not (across hosts) keeps this default.
    ///
    /// # Errors
    /// `Unsupported` there; else `PermissionDenied` (op `atomic`) without read and
    /// write permission, `UnknownNode`, `NotMapped`, `RemoteReadOff` for a page
    /// without `remote_read`, `Isolated`.
    fn peer_memory(&self, node: NodeId) -> Result<PeerMemory> {
        let _ = node;
        Err(Error::Unsupported(
            "load/store access to another node's memory",
        ))
    }
    /// Whether this node shares memory with another node `node` (one host; a host
    /// domain whose `node` maps the segment now), so that
    /// [`peer_memory`](Self::peer_memory) can give access to it: OpenSHMEM's
    /// `SHMEM_TEAM_SHARED`. A cheap test, mapping nothing; this default: never.
    fn shares_memory_with(&self, node: NodeId) -> bool {
        let _ = node;
        false
    }
}

/// The write path of a tx mapping.
pub trait TxOps: Send {
    /// Size in bytes.
    fn len(&self) -> usize;
    /// Never true: a segment has at least one page.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Destination.
    fn dest(&self) -> Dest;
    /// Attributes.
    fn attrs(&self) -> TxAttrs;
    /// Turns transmit enable on or off.
    fn set_transmit_enable(&mut self, on: bool);
    /// Atomic 8-byte write.
    ///
    /// # Errors
    /// `OutOfBounds`, `Unaligned`, `TransmitDisabled`, `Isolated`, `SegmentFreed`.
    fn write_u64(&self, offset: usize, v: u64) -> Result<()>;
    /// Atomic 4-byte write (errors as [`write_u64`](Self::write_u64)).
    ///
    /// # Errors
    /// As `write_u64`.
    fn write_u32(&self, offset: usize, v: u32) -> Result<()>;
    /// Atomic 2-byte write.
    ///
    /// # Errors
    /// As `write_u64`.
    fn write_u16(&self, offset: usize, v: u16) -> Result<()>;
    /// 1-byte write.
    ///
    /// # Errors
    /// As `write_u64`.
    fn write_u8(&self, offset: usize, v: u8) -> Result<()>;
    /// Writes `data` at `offset`, applied page by page.
    ///
    /// # Errors
    /// As `write_u64`, less `Unaligned`.
    fn write(&self, offset: usize, data: &[u8]) -> Result<()>;
    /// As [`write`](Self::write), but the destination need not post notify on receive
    /// for it, even on a notify page: for the body of a record whose last word is then
    /// published with a notifying write (`write_u64`), so that a blocked reader is
    /// woken once per record, after the whole record landed. It keeps the sender's
    /// order with its other writes; aligned 8-byte words are stored atomically, as by
    /// `write`. Neither a direct deposit on one host nor a hub cluster's packet (flagged
    /// quiet) posts one; the shared-memory transport's ordered packets may.
    ///
    /// # Errors
    /// As `write`.
    fn write_no_notify(&self, offset: usize, data: &[u8]) -> Result<()>;
    /// A record in one call: `body` at `offset` as by
    /// [`write_no_notify`](Self::write_no_notify), then the aligned 8-byte `word` at
    /// `publish` as by [`write_u64`](Self::write_u64) (notifying): a reader that sees
    /// the word sees the body. Both ranges are checked before anything is written, so
    /// a bad one writes nothing. (On one host the destination is resolved once for
    /// the two: the message layer's slot costs one call.)
    ///
    /// # Errors
    /// As `write` for the body, as `write_u64` for the word.
    fn write_record(&self, offset: usize, body: &[u8], publish: usize, word: u64) -> Result<()>;
    /// Strided deposit (`crate::deposit`): element `i` of `shape` from `src`, each
    /// element one packet in the sender's order, as if written one `write` each (an
    /// aligned 1/2/4/8-byte element atomically), so no reader sees element `i` before
    /// element `i - 1`. The whole shape is checked before anything is sent.
    ///
    /// # Errors
    /// `BadShape`, `OutOfBounds`, and as `write`.
    fn put_strided(&self, shape: &Shape, src: &[u8]) -> Result<()>;
    /// Indexed deposit: element `i` (`src[i * elem..][..elem]`) at `offsets[i]`, with
    /// the ordering of [`put_strided`](Self::put_strided).
    ///
    /// # Errors
    /// `BadShape`, `OutOfBounds` (naming the first bad offset), and as `write`.
    fn put_indexed(&self, elem: usize, offsets: &[usize], src: &[u8]) -> Result<()>;
    /// Put with signal (OpenSHMEM 1.5 `put_signal`): `write(offset, data)`, then the
    /// 8-byte signal word at `signal` set to or atomically increased by `value`, one
    /// packet after the data's: every destination applies the signal after the data,
    /// so a reader whose `wait_until` saw the signal reads the data whole. A signal
    /// update wakes `wait` and `wait_until` readers whatever the page's notify bit.
    ///
    /// # Errors
    /// `Unaligned` / `OutOfBounds` for the signal word, and as `write`.
    fn put_signal(
        &self,
        offset: usize,
        data: &[u8],
        signal: usize,
        op: SignalOp,
        value: u64,
    ) -> Result<()>;
    /// Conditional write (seed 000): at each destination the 8-byte word at `offset`
    /// becomes `new` only if it holds `expected` (a compare-and-swap there), and the
    /// outcome comes back with the acknowledgement, one per destination that maps the
    /// segment rx (`Outcome::Lost` for one that failed before it reported). It is one
    /// packet in the sender's order and, for several destinations, in the global
    /// order, evaluated at each destination where it lands in that order; it returns
    /// once every destination reported, and a destination reports after it applied
    /// this mapping's earlier writes. Like a signal it wakes waiters.
    ///
    /// # Errors
    /// `Unaligned`, `OutOfBounds`, and as `write`.
    fn write_if_u64(&self, offset: usize, expected: u64, new: u64) -> Result<Vec<CondResult>>;
}

/// The read path of an rx mapping.
pub trait RxOps: Send {
    /// Size in bytes.
    fn len(&self) -> usize;
    /// Never true: a segment has at least one page.
    fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Segment name.
    fn name(&self) -> &str;
    /// Start of the receive memory (written concurrently: read it through atomics).
    fn as_ptr(&self) -> *const u8;
    /// Atomic 8-byte load.
    ///
    /// # Errors
    /// `OutOfBounds`, `Unaligned`.
    fn load_u64(&self, offset: usize) -> Result<u64>;
    /// Atomic 4-byte load.
    ///
    /// # Errors
    /// `OutOfBounds`, `Unaligned`.
    fn load_u32(&self, offset: usize) -> Result<u32>;
    /// Atomic 2-byte load.
    ///
    /// # Errors
    /// `OutOfBounds`, `Unaligned`.
    fn load_u16(&self, offset: usize) -> Result<u16>;
    /// 1-byte load.
    ///
    /// # Errors
    /// `OutOfBounds`.
    fn load_u8(&self, offset: usize) -> Result<u8>;
    /// Copies bytes out.
    ///
    /// # Errors
    /// `OutOfBounds`.
    fn read(&self, offset: usize, buf: &mut [u8]) -> Result<()>;
    /// Sets the attributes of the pages covering `offset..offset+len`.
    ///
    /// # Errors
    /// `OutOfBounds`.
    fn set_attrs(&self, offset: usize, len: usize, attrs: RxAttrs) -> Result<()>;
    /// The attributes of the page holding `offset`.
    ///
    /// # Errors
    /// `OutOfBounds`.
    fn attrs(&self, offset: usize) -> Result<RxAttrs>;
    /// Receive-side remap (seed 000): the packets addressed to page `page` land on page
    /// `to` of this receive memory from now on (`to == page` undoes it), at the same
    /// place within the page, with the page's own attributes; senders do not know.
    /// It holds for every packet applied after it returns (a packet being applied at
    /// that moment may land at either place: an `ack` or barrier with the senders
    /// marks the cut). Loads read where they are addressed.
    ///
    /// # Errors
    /// `OutOfBounds` for a page past the segment.
    fn remap_page(&self, page: usize, to: usize) -> Result<()>;
    /// Blocks, without a busy core, until a write lands on a notify page (`Ok(true)`)
    /// or `timeout` passes (`Ok(false)`).
    ///
    /// # Errors
    /// `HubLost`, `Isolated` where the transport can tell.
    fn wait(&self, timeout: Option<Duration>) -> Result<bool>;
    /// As [`wait`](Self::wait), busy-polling: lower latency, one busy core.
    ///
    /// # Errors
    /// As `wait`.
    fn wait_spin(&self, timeout: Option<Duration>) -> Result<bool>;
    /// Blocks, without a busy core (a short spin, then asleep on notify), until the
    /// aligned 8-byte word at `offset` satisfies `word <cmp> value`, and returns the
    /// word (`None` when `timeout` passes first). Woken by signal updates, conditional
    /// writes and writes to notify pages; a plain write to a page without notify is
    /// seen within [`WAIT_UNTIL_RECHECK`] at the latest.
    ///
    /// # Errors
    /// `OutOfBounds`, `Unaligned`, and as `wait`.
    fn wait_until_u64(
        &self,
        offset: usize,
        cmp: Cmp,
        value: u64,
        timeout: Option<Duration>,
    ) -> Result<Option<u64>>;
}

/// How long a `wait_until` sleeps at most before it looks at its word again, for words
/// changed by plain writes to pages without notify (which post no wake-up).
pub const WAIT_UNTIL_RECHECK: Duration = Duration::from_millis(10);

/// How long a `wait_until` may sleep next: until `deadline`, but at most
/// [`WAIT_UNTIL_RECHECK`]; `None` once the deadline has passed.
pub fn wait_until_slice(deadline: Option<std::time::Instant>) -> Option<Duration> {
    match deadline {
        Some(d) => {
            let left = d.saturating_duration_since(std::time::Instant::now());
            (!left.is_zero()).then(|| left.min(WAIT_UNTIL_RECHECK))
        }
        None => Some(WAIT_UNTIL_RECHECK),
    }
}

/// A cluster lock (seed 000's bid lock; `crate::bidlock`).
pub trait LockOps: Send {
    /// Holds the lock until dropped or released.
    type Guard<'a>: GuardOps
    where
        Self: 'a;
    /// Waits for the lock.
    ///
    /// # Errors
    /// `Isolated`, `HubLost`.
    fn acquire(&self) -> Result<Self::Guard<'_>>;
    /// Tries once; `None` if another node holds or bids.
    ///
    /// # Errors
    /// `Isolated`, `HubLost`.
    fn try_acquire(&self) -> Result<Option<Self::Guard<'_>>>;
}

/// A held lock.
pub trait GuardOps {
    /// Releases now: returns once the release is in the global order (this node's own
    /// copy of the lock page shows it), so every node's next bid sees it free.
    ///
    /// # Errors
    /// `Isolated` (the cluster already cleared this node's slot), `HubLost`.
    fn release(self) -> Result<()>;
}

/// Implements [`TxOps`], [`RxOps`], [`LockOps`] and [`GuardOps`] for a transport's
/// types by calling their inherent methods of the same names (the data path stays
/// inlined: `#[inline(always)]` on each). One macro, so the transports do not each
/// write the same forwarding.
#[macro_export]
macro_rules! ops_from_inherent {
    (tx: $tx:ty, rx: $rx:ty, lock: $lock:ty, guard: $guard:ident) => {
        impl $crate::transport::TxOps for $tx {
            fn len(&self) -> usize {
                <$tx>::len(self)
            }
            fn dest(&self) -> $crate::Dest {
                <$tx>::dest(self)
            }
            fn attrs(&self) -> $crate::TxAttrs {
                <$tx>::attrs(self)
            }
            fn set_transmit_enable(&mut self, on: bool) {
                <$tx>::set_transmit_enable(self, on)
            }
            #[inline(always)]
            fn write_u64(&self, o: usize, v: u64) -> $crate::Result<()> {
                <$tx>::write_u64(self, o, v)
            }
            #[inline(always)]
            fn write_u32(&self, o: usize, v: u32) -> $crate::Result<()> {
                <$tx>::write_u32(self, o, v)
            }
            #[inline(always)]
            fn write_u16(&self, o: usize, v: u16) -> $crate::Result<()> {
                <$tx>::write_u16(self, o, v)
            }
            #[inline(always)]
            fn write_u8(&self, o: usize, v: u8) -> $crate::Result<()> {
                <$tx>::write_u8(self, o, v)
            }
            #[inline(always)]
            fn write(&self, o: usize, d: &[u8]) -> $crate::Result<()> {
                <$tx>::write(self, o, d)
            }
            #[inline(always)]
            fn write_no_notify(&self, o: usize, d: &[u8]) -> $crate::Result<()> {
                <$tx>::write_no_notify(self, o, d)
            }
            #[inline(always)]
            fn write_record(&self, o: usize, b: &[u8], p: usize, w: u64) -> $crate::Result<()> {
                <$tx>::write_record(self, o, b, p, w)
            }
            fn put_strided(&self, s: &$crate::deposit::Shape, d: &[u8]) -> $crate::Result<()> {
                <$tx>::put_strided(self, s, d)
            }
            fn put_indexed(&self, e: usize, o: &[usize], d: &[u8]) -> $crate::Result<()> {
                <$tx>::put_indexed(self, e, o, d)
            }
            fn put_signal(
                &self,
                o: usize,
                d: &[u8],
                s: usize,
                op: $crate::deposit::SignalOp,
                v: u64,
            ) -> $crate::Result<()> {
                <$tx>::put_signal(self, o, d, s, op, v)
            }
            fn write_if_u64(
                &self,
                o: usize,
                e: u64,
                n: u64,
            ) -> $crate::Result<Vec<$crate::deposit::CondResult>> {
                <$tx>::write_if_u64(self, o, e, n)
            }
        }
        impl $crate::transport::RxOps for $rx {
            fn len(&self) -> usize {
                <$rx>::len(self)
            }
            fn name(&self) -> &str {
                <$rx>::name(self)
            }
            fn as_ptr(&self) -> *const u8 {
                <$rx>::as_ptr(self)
            }
            #[inline(always)]
            fn load_u64(&self, o: usize) -> $crate::Result<u64> {
                <$rx>::load_u64(self, o)
            }
            #[inline(always)]
            fn load_u32(&self, o: usize) -> $crate::Result<u32> {
                <$rx>::load_u32(self, o)
            }
            #[inline(always)]
            fn load_u16(&self, o: usize) -> $crate::Result<u16> {
                <$rx>::load_u16(self, o)
            }
            #[inline(always)]
            fn load_u8(&self, o: usize) -> $crate::Result<u8> {
                <$rx>::load_u8(self, o)
            }
            fn read(&self, o: usize, b: &mut [u8]) -> $crate::Result<()> {
                <$rx>::read(self, o, b)
            }
            fn set_attrs(&self, o: usize, l: usize, a: $crate::RxAttrs) -> $crate::Result<()> {
                <$rx>::set_attrs(self, o, l, a)
            }
            fn attrs(&self, o: usize) -> $crate::Result<$crate::RxAttrs> {
                <$rx>::attrs(self, o)
            }
            fn remap_page(&self, p: usize, to: usize) -> $crate::Result<()> {
                <$rx>::remap_page(self, p, to)
            }
            fn wait(&self, t: Option<std::time::Duration>) -> $crate::Result<bool> {
                <$rx>::wait(self, t)
            }
            fn wait_spin(&self, t: Option<std::time::Duration>) -> $crate::Result<bool> {
                <$rx>::wait_spin(self, t)
            }
            fn wait_until_u64(
                &self,
                o: usize,
                c: $crate::deposit::Cmp,
                v: u64,
                t: Option<std::time::Duration>,
            ) -> $crate::Result<Option<u64>> {
                <$rx>::wait_until_u64(self, o, c, v, t)
            }
        }
        impl $crate::transport::LockOps for $lock {
            type Guard<'a> = $guard<'a>;
            fn acquire(&self) -> $crate::Result<$guard<'_>> {
                <$lock>::acquire(self)
            }
            fn try_acquire(&self) -> $crate::Result<Option<$guard<'_>>> {
                <$lock>::try_acquire(self)
            }
        }
        impl $crate::transport::GuardOps for $guard<'_> {
            fn release(self) -> $crate::Result<()> {
                $guard::release(self)
            }
        }
    };
}
