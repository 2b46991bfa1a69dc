//! Remote reads and atomics: [`Rma`], the non-blocking get it starts ([`Pending`])
//! and a node's memory mapped into this process ([`PeerMemory`]).

use crate::flavor::RmaFlavor;
use memchan_core::rma::AtomicOp;
use memchan_core::transport::RmaOps;
use memchan_core::{NodeId, Result};

/// Remote reads and atomics on other nodes' copies of one segment (docs/spec.md, Semantics
/// 8; OpenSHMEM's get and atomics): one handle addresses every node, by [`NodeId`].
/// The target's application takes no part: on one host the caller loads from (or runs
/// the atomic on) the target's receive memory, which it maps; across hosts the
/// target's link side answers from its receive memory, through the hub.
///
/// A node opens its memory to this page by page, with the rx attribute
/// [`RxAttrs::remote_read`](crate::RxAttrs::remote_read) (default off): elsewhere
/// every operation is refused with [`Error::RemoteReadOff`](crate::Error::RemoteReadOff).
/// Atomics need the same attribute (they read the word). Like a tx mapping the handle
/// belongs to one thread at a time (it is `Send`, not `Sync`): it keeps each target's
/// mapping resolved, so on one host an 8-byte get is a bounds check, one compare and
/// one load. Why a handle and not methods on [`Segment`](crate::Segment): that cache
/// needs no lock only while one thread owns it.
///
/// Ordering: a get or atomic to node N comes after every earlier write of this node
/// that reaches N, on every transport; an atomic on a word is atomic against every
/// other atomic on it, from any node and from N's own CPU atomics on its rx mapping.
///
/// ```
/// use memchan::{Cluster, Config, RxAttrs};
/// let name = format!("doc-rma-{}", std::process::id());
/// let cfg = Config::default().without_hub();
/// let a = Cluster::join_with(&name, cfg.clone())?;
/// let b = Cluster::join_with(&name, cfg)?;
/// let open = RxAttrs { remote_read: true, ..RxAttrs::default() };
/// let _rx = b.segment("counters", 4096, 0o600)?.map_rx_with(open)?;
/// let rma = a.segment("counters", 4096, 0o600)?.rma()?;
/// assert_eq!(rma.fetch_add_u64(b.node_id(), 0, 5)?, 0); // runs on b's memory
/// assert_eq!(rma.get_u64(b.node_id(), 0)?, 5);          // b did nothing
/// assert_eq!(rma.compare_swap_u64(b.node_id(), 0, 5, 9)?, 5);
/// let pending = rma.get_nbi(b.node_id(), 0, 8)?;
/// a.ack()?;                                             // completes the get
/// assert_eq!(pending.take()?, 9u64.to_ne_bytes());
/// # Ok::<(), memchan::Error>(())
/// ```
pub struct Rma {
    pub(crate) rma: RmaFlavor,
}

/// The named atomics of [`Rma`] for one width: each is [`Rma::atomic_u64`] /
/// [`Rma::atomic_u32`] with one [`AtomicOp`].
macro_rules! named_atomics {
    ($via:ident, $t:ty: $($(#[$doc:meta])* $name:ident($($arg:ident),*) => $op:expr;)*) => {
        $(
            $(#[$doc])*
            ///
            /// # Errors
            /// As [`atomic_u64`](Self::atomic_u64).
            #[inline(always)]
            pub fn $name(&self, node: NodeId, offset: usize $(, $arg: $t)*) -> Result<$t> {
                self.$via(node, offset, $op)
            }
        )*
    };
}

impl Rma {
    /// Copies `buf.len()` bytes at `offset` of `node`'s copy of the segment. Each
    /// aligned word is read atomically; a longer get is no snapshot.
    ///
    /// # Errors
    /// `OutOfBounds`; `PermissionDenied` (op `get`) without read permission;
    /// `UnknownNode` for a node that is not a live member (or failed meanwhile);
    /// `NotMapped` if it does not map the segment rx; `RemoteReadOff` for a page
    /// without its `remote_read` attribute; `Isolated`, `HubLost`.
    pub fn get(&self, node: NodeId, offset: usize, buf: &mut [u8]) -> Result<()> {
        each!(RmaFlavor, &self.rma, r => RmaOps::get(r, node, offset, buf))
    }
    /// The aligned 8-byte word at `offset` of `node`'s copy, read atomically
    /// (OpenSHMEM `shmem_g`).
    ///
    /// # Errors
    /// As [`get`](Self::get), and `Unaligned`.
    #[inline(always)]
    pub fn get_u64(&self, node: NodeId, offset: usize) -> Result<u64> {
        hot!(RmaFlavor, &self.rma, r => RmaOps::get_u64(r, node, offset))
    }
    /// The aligned 4-byte word at `offset` of `node`'s copy, read atomically.
    ///
    /// # Errors
    /// As [`get_u64`](Self::get_u64).
    #[inline(always)]
    pub fn get_u32(&self, node: NodeId, offset: usize) -> Result<u32> {
        hot!(RmaFlavor, &self.rma, r => RmaOps::get_u32(r, node, offset))
    }
    /// Starts a get of `len` bytes (OpenSHMEM `get_nbi`): the node's next
    /// [`Cluster::ack`](crate::Cluster::ack) completes it, then [`Pending::take`]
    /// returns the bytes (it waits itself if no ack came between).
    ///
    /// # Errors
    /// `OutOfBounds`, `PermissionDenied`, `Isolated`, `HubLost` here; the target's
    /// refusals from `take`.
    pub fn get_nbi(&self, node: NodeId, offset: usize, len: usize) -> Result<Pending> {
        each!(RmaFlavor, &self.rma, r => RmaOps::get_nbi(r, node, offset, len)).map(Pending)
    }
    /// Runs `op` on the aligned 8-byte word at `offset` of `node`'s copy, where it
    /// lives; returns the value before.
    ///
    /// # Errors
    /// `OutOfBounds`, `Unaligned`; `PermissionDenied` (op `atomic`) without read and
    /// write permission; `UnknownNode`, `NotMapped`, `RemoteReadOff`, `Isolated`,
    /// `HubLost`.
    #[inline(always)]
    pub fn atomic_u64(&self, node: NodeId, offset: usize, op: AtomicOp) -> Result<u64> {
        hot!(RmaFlavor, &self.rma, r => RmaOps::atomic_u64(r, node, offset, op))
    }
    /// As [`atomic_u64`](Self::atomic_u64) on an aligned 4-byte word.
    ///
    /// # Errors
    /// As `atomic_u64`.
    #[inline(always)]
    pub fn atomic_u32(&self, node: NodeId, offset: usize, op: AtomicOp) -> Result<u32> {
        hot!(RmaFlavor, &self.rma, r => RmaOps::atomic_u32(r, node, offset, op))
    }

    /// `node`'s copy of the whole segment as memory this process loads from and
    /// stores to itself (OpenSHMEM's `shmem_ptr`), mapped while the [`PeerMemory`]
    /// lives. Rights and every page's `remote_read` are checked now, once; see
    /// [`PeerMemory`] for what its accesses skip.
    ///
    /// # Errors
    /// `Unsupported` where nodes do not share memory (through a hub, a node outside
    /// this node's host domain);
    /// `PermissionDenied` (op `atomic`) without read and write permission;
    /// `UnknownNode`, `NotMapped`, `RemoteReadOff`, `Isolated`.
    pub fn peer_memory(&self, node: NodeId) -> Result<PeerMemory> {
        each!(RmaFlavor, &self.rma, r => RmaOps::peer_memory(r, node)).map(PeerMemory)
    }

    /// Whether this node shares memory with another node `node`, so that
    /// [`peer_memory`](Self::peer_memory) can give access to it: every node on one
    /// host; through a hub, a node of this node's host domain that maps the segment.
    /// Maps nothing.
    pub fn shares_memory_with(&self, node: NodeId) -> bool {
        each!(RmaFlavor, &self.rma, r => RmaOps::shares_memory_with(r, node))
    }

    named_atomics!(atomic_u64, u64:
        /// Atomic read of the word (`shmem_atomic_fetch`).
        fetch_u64() => AtomicOp::Fetch;
        /// Stores `v`, returning the old value (`shmem_atomic_set` drops it).
        set_u64(v) => AtomicOp::Set(v);
        /// Adds `v` (wrapping), returning the old value (`shmem_atomic_add` drops it).
        add_u64(v) => AtomicOp::Add(v);
        /// Adds `v` (wrapping), returning the old value (`shmem_atomic_fetch_add`).
        fetch_add_u64(v) => AtomicOp::FetchAdd(v);
        /// Stores `v`, returning the old value (`shmem_atomic_swap`).
        swap_u64(v) => AtomicOp::Swap(v);
        /// Stores `new` if the word holds `expected`; returns the old value: it
        /// swapped iff that equals `expected` (`shmem_atomic_compare_swap`).
        compare_swap_u64(expected, new) => AtomicOp::CompareSwap { expected, new };
        /// Bitwise and, returning the old value.
        fetch_and_u64(v) => AtomicOp::FetchAnd(v);
        /// Bitwise or, returning the old value.
        fetch_or_u64(v) => AtomicOp::FetchOr(v);
        /// Bitwise xor, returning the old value.
        fetch_xor_u64(v) => AtomicOp::FetchXor(v);
    );

    named_atomics!(atomic_u32, u32:
        /// Atomic read of the 4-byte word.
        fetch_u32() => AtomicOp::Fetch;
        /// Stores `v`, returning the old value.
        set_u32(v) => AtomicOp::Set(v.into());
        /// Adds `v` (wrapping), returning the old value.
        add_u32(v) => AtomicOp::Add(v.into());
        /// Adds `v` (wrapping), returning the old value.
        fetch_add_u32(v) => AtomicOp::FetchAdd(v.into());
        /// Stores `v`, returning the old value.
        swap_u32(v) => AtomicOp::Swap(v.into());
        /// Stores `new` if the word holds `expected`; returns the old value.
        compare_swap_u32(expected, new) => AtomicOp::CompareSwap { expected: expected.into(), new: new.into() };
        /// Bitwise and, returning the old value.
        fetch_and_u32(v) => AtomicOp::FetchAnd(v.into());
        /// Bitwise or, returning the old value.
        fetch_or_u32(v) => AtomicOp::FetchOr(v.into());
        /// Bitwise xor, returning the old value.
        fetch_xor_u32(v) => AtomicOp::FetchXor(v.into());
    );
}

/// A non-blocking get under way (OpenSHMEM's `get_nbi`), from [`Rma::get_nbi`]: the
/// node's [`Cluster::ack`](crate::Cluster::ack) returns once it (and every other get
/// under way) has completed, after which [`take`](Pending::take) returns at once.
/// Dropping it abandons the bytes. (The transports' constructors stay behind the
/// contract.)
#[derive(Debug)]
pub struct Pending(memchan_core::rma::Pending);

impl Pending {
    /// The bytes read (waiting for them if no `ack()` came between).
    ///
    /// # Errors
    /// As the blocking get: `RemoteReadOff`, `NotMapped`, `UnknownNode` (the target
    /// failed), `PermissionDenied`, `HubLost`, `Isolated`.
    pub fn take(self) -> Result<Vec<u8>> {
        self.0.take()
    }
}

/// A node's copy of a whole segment as memory this process loads from and stores to
/// itself (OpenSHMEM's `shmem_ptr`), from [`Rma::peer_memory`]: offered only where
/// nodes share memory (one host). It keeps the mapping while it lives, whatever the
/// node does meanwhile.
///
/// The rights and the pages' `remote_read` attribute are checked once, when it is
/// made. A load or store through it is the caller's own CPU access: none of the
/// checks memchan makes per operation (the target's later page attributes, receive
/// enable, notify, remap, liveness), no atomicity beyond the access's own, and the
/// caller's stores are ordered as its CPU orders them (an `ack` fences them).
#[derive(Debug)]
pub struct PeerMemory(memchan_core::rma::PeerMemory);

impl PeerMemory {
    /// The segment's offset 0 in the node's copy.
    pub fn as_ptr(&self) -> *mut u8 {
        self.0.as_ptr()
    }

    /// The segment's size.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Never true: a segment has at least one page.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }
}
