//! memchan: a software cluster interconnect that gives processes on one host or many a
//! **cluster-wide virtual shared memory by address-space mapping**, in the line of DEC
//! MEMORY CHANNEL.
//!
//! A process [joins](Cluster::join) a named cluster and becomes a node. Segments are
//! named ranges of the cluster's address space. A node maps a segment **rx** (local
//! memory that receives every write addressed to it, read with plain loads) and/or
//! **tx** towards a destination (one node, a multicast group, or broadcast). A write
//! to a tx mapping lands in every destination's rx mapping, with MEMORY CHANNEL's
//! ordering rules: each destination sees a sender's writes in the order sent, and
//! writes reaching several destinations arrive in one order at all of them.
//!
//! ```
//! use memchan::{Cluster, Dest, TxAttrs};
//! let name = format!("doc-{}", std::process::id());
//! let a = Cluster::join(&name)?;            // normally one node per process
//! let b = Cluster::join(&name)?;
//! let rx = b.segment("inbox", 4096, 0o600)?.map_rx()?;
//! let tx = a.segment("inbox", 4096, 0o600)?.map_tx(Dest::Node(b.node_id()), TxAttrs::default())?;
//! tx.write_u64(0, 7)?;                      // a store into b's memory: no system call
//! a.ack()?;                                 // applied at every destination
//! assert_eq!(rx.load_u64(0)?, 7);
//! # Ok::<(), memchan::Error>(())
//! ```
//!
//! On one host the transport is shared memory (`memchan-shm`): no daemon, no system
//! call on the data path. Across hosts, nodes join through a **hub** (`memchan hub
//! --listen HOST:PORT`, or one node hosting it in-process: the virtual hub of a
//! two-node cluster), over TCP links with CRC32C, a keyed MAC and retransmission
//! (`memchan-net`). [`Config::hub`] or the environment chooses:
//!
//! | variable | meaning |
//! |---|---|
//! | `MEMCHAN_HUB=HOST:PORT` | join through the hub there |
//! | `MEMCHAN_HUB_HOST=HOST:PORT` | host the hub in this process, listening there |
//! | `MEMCHAN_KEY_FILE=PATH` | the cluster key (its bytes); without one anyone who reaches the hub may join |
//!
//! See `ARCHITECTURE.md` for the layers.

pub use memchan_core::deposit::{Cmp, CondResult, Outcome, Shape, SignalOp};
/// How memchan waits: the named idle strategies and their tuned numbers, for layers
/// above the contract (the message layer, the C API) to wait the same way.
pub use memchan_core::idle;
pub use memchan_core::rma::AtomicOp;
pub use memchan_core::transport::{Caps, WAIT_UNTIL_RECHECK};
pub use memchan_core::validate::{
    CLUSTER_NAME_LEN, EVENT_RING, MAX_SEGMENTS, MAX_SEGMENT_SIZE, NAME_LEN,
};
pub use memchan_core::{
    Config, Dest, Error, EventKind, GlobalTime, GroupId, HubListError, HubSpec, MembershipEvent,
    NodeId, NodeSet, PageSize, Result, RxAttrs, SegOwner, TxAttrs, MAX_GROUPS, MAX_NODES,
};

use memchan_core::transport::{GuardOps, LockOps, RmaOps, RxOps, SegmentOps, Transport, TxOps};
use std::time::Duration;

/// The transports behind the public types, one line each: the variant, the type that
/// implements `memchan_core::transport::Transport`, and when a join picks it (the
/// first line whose condition holds). The first line's data path is inlined; the
/// others' runs out of line, so the one-host store stays a few instructions. Adding a
/// transport is one implementation of the contract and one line here.
macro_rules! flavors {
    ($d:tt; $hot:ident($hot_t:ty) if $hot_when:expr, $($v:ident($t:ty) if $when:expr),* $(,)?) => {
        enum NodeFlavor { $hot($hot_t), $($v($t)),* }
        enum SegFlavor { $hot(<$hot_t as Transport>::Segment), $($v(<$t as Transport>::Segment)),* }
        enum TxFlavor { $hot(<$hot_t as Transport>::Tx), $($v(<$t as Transport>::Tx)),* }
        enum RxFlavor { $hot(<$hot_t as Transport>::Rx), $($v(<$t as Transport>::Rx)),* }
        enum LockFlavor { $hot(<$hot_t as Transport>::Lock), $($v(<$t as Transport>::Lock)),* }
        enum RmaFlavor {
            $hot(<<$hot_t as Transport>::Segment as SegmentOps>::Rma),
            $($v(<<$t as Transport>::Segment as SegmentOps>::Rma)),*
        }
        enum GuardFlavor<'a> {
            $hot(<<$hot_t as Transport>::Lock as LockOps>::Guard<'a>),
            $($v(<<$t as Transport>::Lock as LockOps>::Guard<'a>)),*
        }

        /// `$e` with `$b` bound to whichever transport's value `$x` holds.
        macro_rules! each {
            ($d f:ident, $d x:expr, $d b:ident => $d e:expr) => {
                match $d x { $d f::$hot($d b) => $d e, $($d f::$v($d b) => $d e),* }
            };
        }

        /// As `each!`, the first transport inline and the others out of line.
        macro_rules! hot {
            ($d f:ident, $d x:expr, $d b:ident => $d e:expr) => {
                match $d x { $d f::$hot($d b) => $d e, $($d f::$v($d b) => cold(|| $d e)),* }
            };
        }

        /// `$e` of whichever transport `$x` holds, wrapped in the same variant of `$to`.
        macro_rules! wrap {
            ($d f:ident => $d to:ident, $d x:expr, $d b:ident => $d e:expr) => {
                match $d x { $d f::$hot($d b) => $d to::$hot($d e), $($d f::$v($d b) => $d to::$v($d e)),* }
            };
        }

        /// As `wrap!` for an `Option`.
        macro_rules! wrap_some {
            ($d f:ident => $d to:ident, $d x:expr, $d b:ident => $d e:expr) => {
                match $d x { $d f::$hot($d b) => $d e.map($d to::$hot), $($d f::$v($d b) => $d e.map($d to::$v)),* }
            };
        }

        fn join_flavor(name: &str, cfg: &Config) -> Result<NodeFlavor> {
            let picks = |f: fn(&Config) -> bool| f(cfg);
            if picks($hot_when) {
                return Ok(NodeFlavor::$hot(<$hot_t as Transport>::join(name, cfg)?));
            }
            $(if picks($when) {
                return Ok(NodeFlavor::$v(<$t as Transport>::join(name, cfg)?));
            })*
            Err(Error::Unsupported("no transport serves this configuration"))
        }

        impl NodeFlavor {
            fn transport_name(&self) -> &'static str {
                match self {
                    NodeFlavor::$hot(_) => <$hot_t as Transport>::NAME,
                    $(NodeFlavor::$v(_) => <$t as Transport>::NAME),*
                }
            }
        }
    };
}

flavors!($;
    Shm(memchan_shm::Node) if |c| c.hub.is_none(),
    Hub(memchan_net::node::Node) if |c| c.hub.is_some(),
);

/// Runs `f` out of line (the other transports' writes, beside the inlined one-host store).
#[cold]
#[inline(never)]
fn cold<T>(f: impl FnOnce() -> T) -> T {
    f()
}

/// This process's membership in a cluster: the handle for segments, groups, ack,
/// barrier, locks and membership. Leaves the cluster on drop.
pub struct Cluster {
    node: NodeFlavor,
}

impl Cluster {
    /// Joins the cluster `name` with default settings (from the environment: on this
    /// host, or through the hub `MEMCHAN_HUB` names), creating it if needed.
    ///
    /// # Errors
    /// As [`join_with`](Self::join_with).
    pub fn join(name: &str) -> Result<Cluster> {
        Self::join_with(name, Config::default())
    }

    /// Joins with explicit settings (page size, heartbeat, failure timeout, hub).
    ///
    /// ```
    /// use memchan::{Cluster, Config, PageSize};
    /// let cfg = Config::default().without_hub().with_page_size(PageSize::K8);
    /// let c = Cluster::join_with(&format!("doc8k-{}", std::process::id()), cfg)?;
    /// assert_eq!(c.page_size(), 8192);
    /// # Ok::<(), memchan::Error>(())
    /// ```
    ///
    /// # Errors
    /// `Invalid` for a bad cluster name or `Config` value (checked once, by the
    /// transport's join, with [`Config::validate`]: a zero heartbeat, a failure timeout under twice the
    /// heartbeat, ...); `VersionMismatch`, `PageSizeMismatch`, `TableFull("node")`;
    /// through a hub `HubRefused` naming why.
    pub fn join_with(name: &str, cfg: Config) -> Result<Cluster> {
        // The transport's join checks `name` and `cfg` (the contract's one place).
        Ok(Cluster {
            node: join_flavor(name, &cfg)?,
        })
    }

    /// The transport this node joined through: `"shm"` (shared memory, this host) or
    /// `"hub"`.
    pub fn transport(&self) -> &'static str {
        self.node.transport_name()
    }

    /// What the transport offers ([`Caps`]); an operation it does not offer returns
    /// [`Error::Unsupported`].
    pub fn caps(&self) -> Caps {
        each!(NodeFlavor, &self.node, n => n.caps())
    }

    /// This node's id, `0..256`.
    pub fn node_id(&self) -> NodeId {
        each!(NodeFlavor, &self.node, n => n.node_id())
    }

    /// This node's incarnation (new on every join).
    pub fn incarnation(&self) -> u64 {
        each!(NodeFlavor, &self.node, n => n.incarnation())
    }

    /// The cluster's name.
    pub fn name(&self) -> &str {
        each!(NodeFlavor, &self.node, n => n.cluster())
    }

    /// The cluster's page size in bytes.
    pub fn page_size(&self) -> usize {
        each!(NodeFlavor, &self.node, n => n.page_size())
    }

    /// The live members.
    pub fn members(&self) -> Vec<NodeId> {
        each!(NodeFlavor, &self.node, n => n.members().iter().collect())
    }

    /// The membership epoch: it grows with every join, leave and failure.
    pub fn epoch(&self) -> u64 {
        each!(NodeFlavor, &self.node, n => n.epoch())
    }

    /// The next membership event (from this node's join on), waiting up to `timeout`
    /// (`None`: forever). Every node sees the same events in the same order. The last
    /// [`EVENT_RING`] events are kept for a reader; one further behind skips to the
    /// oldest kept, on every transport.
    pub fn next_event(&self, timeout: Option<Duration>) -> Option<MembershipEvent> {
        each!(NodeFlavor, &self.node, n => n.next_event(timeout))
    }

    /// Waits until at least `n` nodes are members.
    ///
    /// # Errors
    /// `Timeout`; `Isolated` or `HubLost` if this node can no longer take part.
    pub fn wait_for_members(&self, n: usize, timeout: Duration) -> Result<()> {
        each!(NodeFlavor, &self.node, x => x.wait_for_members(n, timeout))
    }

    /// Finds the segment `name`, or creates it with `size` bytes (rounded up to whole
    /// pages), owned by this process's uid/gid with permission bits `mode`.
    ///
    /// # Errors
    /// `Invalid` for a name that is not 1..=64 characters of `[A-Za-z0-9._-]` or starts
    /// with `_` (memchan's own), a size of 0 or over 16 GiB, a mode beyond `0o777`;
    /// `SegmentSizeMismatch` if it exists with another size; `TableFull("segment")`
    /// past [`MAX_SEGMENTS`].
    pub fn segment(&self, name: &str, size: usize, mode: u32) -> Result<Segment> {
        Ok(Segment {
            seg: wrap!(NodeFlavor => SegFlavor, &self.node, n => n.segment(name, size, mode)?),
        })
    }

    /// Opens an existing segment.
    ///
    /// # Errors
    /// [`Error::UnknownSegment`] if there is none; `Invalid` for a bad name.
    pub fn open_segment(&self, name: &str) -> Result<Segment> {
        Ok(Segment {
            seg: wrap!(NodeFlavor => SegFlavor, &self.node, n => n.open_segment(name)?),
        })
    }

    /// Creates a multicast group of `members` (or finds it if it exists with the same
    /// members).
    ///
    /// # Errors
    /// `Invalid` for a bad name or an empty member list, or if the group exists with
    /// other members; `UnknownNode` for an id that is not a live member (whatever its
    /// value); `TableFull("group")` past [`MAX_GROUPS`].
    pub fn create_group(&self, name: &str, members: &[NodeId]) -> Result<GroupId> {
        each!(NodeFlavor, &self.node, n => n.create_group(name, members))
    }

    /// Looks up a multicast group.
    ///
    /// # Errors
    /// `UnknownGroup`.
    pub fn group(&self, name: &str) -> Result<GroupId> {
        each!(NodeFlavor, &self.node, n => n.group(name))
    }

    /// Returns once every earlier write of this node has been applied at every
    /// destination (OpenSHMEM's `quiet`).
    ///
    /// # Errors
    /// `AckIncomplete` naming the nodes that did not acknowledge; `Isolated`; `HubLost`.
    pub fn ack(&self) -> Result<()> {
        each!(NodeFlavor, &self.node, n => n.ack())
    }

    /// Waits until every live member has reached this barrier; earlier writes of each
    /// are applied everywhere before anyone passes. A node that joins while a barrier
    /// is under way is not part of it: its first `barrier` is the next one.
    ///
    /// # Errors
    /// `Isolated`; `HubLost`.
    pub fn barrier(&self) -> Result<()> {
        each!(NodeFlavor, &self.node, n => n.barrier())
    }

    /// Barrier over the live members of a group, of which this node must be one.
    ///
    /// # Errors
    /// `UnknownGroup` for a group that does not exist; `Invalid` (`"group barrier"`)
    /// if this node is not a member.
    pub fn barrier_group(&self, g: GroupId) -> Result<()> {
        each!(NodeFlavor, &self.node, n => n.barrier_group(g))
    }

    /// The cluster lock `name` (created on first use). At most one node holds it; a
    /// holder that dies is released by the cluster.
    ///
    /// # Errors
    /// `Invalid` (`"lock name"`) for a name that is not 1..=58 characters of
    /// `[A-Za-z0-9._-]`; `TableFull("segment")` (each lock uses a segment).
    pub fn lock(&self, name: &str) -> Result<Lock> {
        Ok(Lock {
            lock: wrap!(NodeFlavor => LockFlavor, &self.node, n => n.lock(name)?),
        })
    }

    /// The cluster's global clock (seed 000's): a time every node reads alike, with
    /// its accuracy bound, measured at run time: the cluster's time at the moment of
    /// the call lies within `ns ± bound_ns`, so two nodes' readings of one moment
    /// differ by at most the sum of their bounds. On one host it is the host's
    /// monotonic clock (the invariant TSC), the bound the measured spread between
    /// cores plus a read's cost; through a hub it is the hub's clock, estimated from
    /// its time packets, the bound from the fastest packets each way (about half a
    /// round trip), the drift and a read's cost.
    ///
    /// ```
    /// use memchan::Cluster;
    /// let c = Cluster::join(&format!("doc-clock-{}", std::process::id()))?;
    /// let a = c.global_time()?;
    /// let b = c.global_time()?;
    /// assert!(b.ns >= a.ns && a.bound_ns > 0);
    /// # Ok::<(), memchan::Error>(())
    /// ```
    ///
    /// # Errors
    /// [`Error::ClockNotSynchronised`] through a hub until this node received enough
    /// of its time packets (a few clock periods, half a heartbeat each, after the
    /// join); on one host `Timeout` if a CPU never ran the one-time measurement.
    pub fn global_time(&self) -> Result<GlobalTime> {
        each!(NodeFlavor, &self.node, n => n.global_time())
    }

    /// The address of the hub this node hosts in its process (virtual hub, started
    /// with [`HubSpec::Host`]): the other node connects there.
    ///
    /// # Errors
    /// [`Error::Unsupported`] on a node that hosts no hub.
    pub fn hosted_hub_addr(&self) -> Result<std::net::SocketAddr> {
        each!(NodeFlavor, &self.node, n => n.hosted_hub_addr())
    }

    /// Leaves the cluster now.
    pub fn leave(self) {
        each!(NodeFlavor, self.node, n => n.leave())
    }
}

/// A named segment of the cluster's address space.
pub struct Segment {
    seg: SegFlavor,
}

impl Segment {
    /// The segment's name.
    pub fn name(&self) -> &str {
        each!(SegFlavor, &self.seg, s => s.name())
    }
    /// Size in bytes (whole pages).
    pub fn size(&self) -> usize {
        each!(SegFlavor, &self.seg, s => s.size())
    }
    /// Who created it (uid), its group and mode: on one host those of its permission
    /// object, through a hub those the hub recorded. Any member may create a segment
    /// under a name first (SECURITY.md): check the owner of a segment opened by name
    /// before trusting it with data.
    pub fn owner(&self) -> SegOwner {
        each!(SegFlavor, &self.seg, s => s.owner())
    }
    /// Maps it rx: local memory that receives every write addressed to it.
    ///
    /// # Errors
    /// As [`map_rx_with`](Self::map_rx_with).
    pub fn map_rx(&self) -> Result<RxMapping> {
        self.map_rx_with(RxAttrs::default())
    }
    /// Maps it rx with page attributes (receive enable, notify on receive).
    ///
    /// # Errors
    /// `PermissionDenied` (op `map_rx`) without read permission; `Invalid`
    /// (`"rx mapping"`) if this node maps it rx already; `SegmentFreed`.
    pub fn map_rx_with(&self, attrs: RxAttrs) -> Result<RxMapping> {
        Ok(RxMapping {
            rx: wrap!(SegFlavor => RxFlavor, &self.seg, s => s.map_rx_with(attrs)?),
        })
    }
    /// Maps it tx towards `dest`.
    ///
    /// # Errors
    /// `PermissionDenied` (op `map_tx`) without write permission; `UnknownNode` for a
    /// node that is not a live member; `UnknownGroup` for a group that does not exist.
    pub fn map_tx(&self, dest: Dest, attrs: TxAttrs) -> Result<TxMapping> {
        Ok(TxMapping {
            tx: wrap!(SegFlavor => TxFlavor, &self.seg, s => s.map_tx(dest, attrs)?),
        })
    }
    /// A handle for remote reads and atomics on any node's copy of the segment
    /// ([`Rma`]). Which of them the caller may do (read permission for gets; read and
    /// write for atomics) is settled here, once, as `map_tx` settles write.
    ///
    /// # Errors
    /// `Isolated`, `HubLost`, `SegmentFreed`.
    pub fn rma(&self) -> Result<Rma> {
        Ok(Rma {
            rma: wrap!(SegFlavor => RmaFlavor, &self.seg, s => s.rma()?),
        })
    }
    /// Frees the segment: its owner (or root) only; every mapping of it stops working.
    ///
    /// # Errors
    /// `PermissionDenied` (op `free`) for anyone else; `SegmentFreed` if it is gone.
    pub fn free(self) -> Result<()> {
        each!(SegFlavor, self.seg, s => s.free())
    }
}

/// A transmit window: writes land in the destination's rx mappings. Each write is
/// checked (bounds, alignment, transmit enable) before anything is sent: a refused
/// write deposits nothing. A write longer than 8 bytes is applied page by page: each
/// page lands whole, in the one order; another sender's packets may fall between the
/// pages of one write, on every transport.
pub struct TxMapping {
    tx: TxFlavor,
}

impl TxMapping {
    /// Size in bytes.
    pub fn len(&self) -> usize {
        each!(TxFlavor, &self.tx, t => TxOps::len(t))
    }
    /// Never empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Destination.
    pub fn dest(&self) -> Dest {
        each!(TxFlavor, &self.tx, t => TxOps::dest(t))
    }
    /// Attributes.
    pub fn attrs(&self) -> TxAttrs {
        each!(TxFlavor, &self.tx, t => TxOps::attrs(t))
    }
    /// Turns transmit enable on or off.
    pub fn set_transmit_enable(&mut self, on: bool) {
        each!(TxFlavor, &mut self.tx, t => TxOps::set_transmit_enable(t, on))
    }
    /// Atomic 8-byte write.
    ///
    /// # Errors
    /// `OutOfBounds`, `Unaligned`, `TransmitDisabled`, `Isolated`, `SegmentFreed`,
    /// `HubLost`.
    #[inline(always)]
    pub fn write_u64(&self, offset: usize, v: u64) -> Result<()> {
        hot!(TxFlavor, &self.tx, t => TxOps::write_u64(t, offset, v))
    }
    /// Atomic 4-byte write.
    ///
    /// # Errors
    /// As [`write_u64`](Self::write_u64).
    #[inline(always)]
    pub fn write_u32(&self, offset: usize, v: u32) -> Result<()> {
        hot!(TxFlavor, &self.tx, t => TxOps::write_u32(t, offset, v))
    }
    /// Atomic 2-byte write.
    ///
    /// # Errors
    /// As [`write_u64`](Self::write_u64).
    #[inline(always)]
    pub fn write_u16(&self, offset: usize, v: u16) -> Result<()> {
        hot!(TxFlavor, &self.tx, t => TxOps::write_u16(t, offset, v))
    }
    /// 1-byte write.
    ///
    /// # Errors
    /// As [`write_u64`](Self::write_u64).
    #[inline(always)]
    pub fn write_u8(&self, offset: usize, v: u8) -> Result<()> {
        hot!(TxFlavor, &self.tx, t => TxOps::write_u8(t, offset, v))
    }
    /// Writes `data` at `offset` (applied page by page, see the type's doc).
    ///
    /// # Errors
    /// As [`write_u64`](Self::write_u64), less `Unaligned`.
    #[inline(always)]
    pub fn write(&self, offset: usize, data: &[u8]) -> Result<()> {
        hot!(TxFlavor, &self.tx, t => TxOps::write(t, offset, data))
    }
    /// As [`write`](Self::write), but the destination need not post notify on
    /// receive for it, even on a notify page: write a record's body this way and
    /// publish its last word with [`write_u64`](Self::write_u64), and a reader blocked
    /// in [`RxMapping::wait`] is woken once, after the whole record landed. Order and
    /// atomicity as `write`. A direct deposit on one host posts none; other paths
    /// (broadcast, local copy, across hosts) may still notify.
    ///
    /// # Errors
    /// As [`write`](Self::write).
    #[inline(always)]
    pub fn write_no_notify(&self, offset: usize, data: &[u8]) -> Result<()> {
        hot!(TxFlavor, &self.tx, t => TxOps::write_no_notify(t, offset, data))
    }
    /// A record in one call: `body` at `offset` as by
    /// [`write_no_notify`](Self::write_no_notify), then the aligned 8-byte `word` at
    /// `publish` as by [`write_u64`](Self::write_u64). A reader that sees the word
    /// sees the whole body, and a reader blocked in [`RxMapping::wait`] on a notify
    /// page is woken once the record landed. Both ranges are checked first: a bad
    /// one writes nothing. On one host it costs less than the two calls (the
    /// destination is resolved once): the message layer publishes each slot this
    /// way.
    ///
    /// ```
    /// # use memchan::{Cluster, Dest, RxAttrs, TxAttrs};
    /// # let c = Cluster::join(&format!("doc-record-{}", std::process::id()))?;
    /// let seg = c.segment("records", 4096, 0o600)?;
    /// let rx = seg.map_rx_with(RxAttrs { notify: true, ..RxAttrs::default() })?;
    /// let tx = seg.map_tx(Dest::Node(c.node_id()), TxAttrs::default())?;
    /// // A 16-byte body after its 8-byte sequence word.
    /// tx.write_record(8, &[7u8; 16], 0, 1)?;
    /// assert_eq!(rx.load_u64(0)?, 1);
    /// assert_eq!(rx.load_u64(16)?, u64::from_ne_bytes([7; 8]));
    /// // An unaligned publish word: an error, and the body was not written either.
    /// assert!(tx.write_record(1024, &[9u8; 8], 4, 2).is_err());
    /// assert_eq!(rx.load_u64(1024)?, 0);
    /// # Ok::<(), memchan::Error>(())
    /// ```
    ///
    /// # Errors
    /// As [`write`](Self::write) for the body and [`write_u64`](Self::write_u64) for
    /// the word.
    #[inline(always)]
    pub fn write_record(
        &self,
        offset: usize,
        body: &[u8],
        publish: usize,
        word: u64,
    ) -> Result<()> {
        hot!(TxFlavor, &self.tx, t => TxOps::write_record(t, offset, body, publish, word))
    }
    /// Strided deposit (the T3D case of seed 002): `shape.count` elements of
    /// `shape.elem` bytes, element `i` read from `src[i * shape.src_stride..]` and
    /// written at `shape.offset + i * shape.dst_stride` (strides in bytes). Each
    /// element is one packet in this sender's order, as if written by one
    /// [`write`](Self::write) each (an aligned 1/2/4/8-byte element atomically): no
    /// reader ever sees an element before the ones ahead of it. Across hosts the
    /// elements travel packed, as few frames as the wire allows, and are applied
    /// one by one at each destination.
    ///
    /// ```
    /// use memchan::{Cluster, Dest, Shape, TxAttrs};
    /// let name = format!("doc-strided-{}", std::process::id());
    /// let (a, b) = (Cluster::join(&name)?, Cluster::join(&name)?);
    /// let rx = b.segment("m", 4096, 0o600)?.map_rx()?;
    /// let tx = a.segment("m", 4096, 0o600)?.map_tx(Dest::Node(b.node_id()), TxAttrs::default())?;
    /// // A column of a 4x4 matrix of u64: four words, 32 bytes apart.
    /// let col: Vec<u8> = [1u64, 2, 3, 4].iter().flat_map(|v| v.to_ne_bytes()).collect();
    /// let shape = Shape { elem: 8, count: 4, src_stride: 8, dst_stride: 32, offset: 8 };
    /// tx.put_strided(&shape, &col)?;
    /// a.ack()?;
    /// assert_eq!(rx.load_u64(8 + 3 * 32)?, 4);
    /// # Ok::<(), memchan::Error>(())
    /// ```
    ///
    /// # Errors
    /// Checked before anything is sent: `BadShape` (element size 0 or over 64 KiB, a
    /// stride whose arithmetic overflows, `src` too short), `OutOfBounds` (the last
    /// element past the segment); then as [`write`](Self::write).
    pub fn put_strided(&self, shape: &Shape, src: &[u8]) -> Result<()> {
        hot!(TxFlavor, &self.tx, t => TxOps::put_strided(t, shape, src))
    }
    /// Indexed deposit: element `i` (`src[i * elem..][..elem]`) written at
    /// `offsets[i]`, with the ordering of [`put_strided`](Self::put_strided).
    ///
    /// ```
    /// use memchan::{Cluster, Dest, TxAttrs};
    /// let name = format!("doc-indexed-{}", std::process::id());
    /// let (a, b) = (Cluster::join(&name)?, Cluster::join(&name)?);
    /// let rx = b.segment("m", 4096, 0o600)?.map_rx()?;
    /// let tx = a.segment("m", 4096, 0o600)?.map_tx(Dest::Node(b.node_id()), TxAttrs::default())?;
    /// tx.put_indexed(4, &[400, 12, 2000], &[1, 0, 0, 0, 2, 0, 0, 0, 3, 0, 0, 0])?;
    /// a.ack()?;
    /// assert_eq!((rx.load_u32(400)?, rx.load_u32(12)?, rx.load_u32(2000)?), (1, 2, 3));
    /// // An offset past the segment is named, and nothing is sent.
    /// assert!(matches!(tx.put_indexed(4, &[0, 4096], &[0; 8]), Err(memchan::Error::OutOfBounds { offset: 4096, .. })));
    /// # Ok::<(), memchan::Error>(())
    /// ```
    ///
    /// # Errors
    /// `BadShape` (element size, `src.len() != offsets.len() * elem`), `OutOfBounds`
    /// naming the first offset past the segment; then as [`write`](Self::write).
    pub fn put_indexed(&self, elem: usize, offsets: &[usize], src: &[u8]) -> Result<()> {
        hot!(TxFlavor, &self.tx, t => TxOps::put_indexed(t, elem, offsets, src))
    }
    /// Put with signal (OpenSHMEM 1.5 `shmem_put_signal`): writes `data` at `offset`,
    /// then sets the 8-byte word at `signal` to `value` ([`SignalOp::Set`]) or adds
    /// `value` to it atomically at each destination ([`SignalOp::Add`]). The signal is
    /// one packet after the data, so every destination applies it after the data: a
    /// reader that [`RxMapping::wait_until_u64`] saw the signal reads the data whole.
    ///
    /// ```
    /// use memchan::{Cluster, Cmp, Dest, SignalOp, TxAttrs};
    /// use std::time::Duration;
    /// let name = format!("doc-signal-{}", std::process::id());
    /// let (a, b) = (Cluster::join(&name)?, Cluster::join(&name)?);
    /// let rx = b.segment("m", 4096, 0o600)?.map_rx()?;
    /// let tx = a.segment("m", 4096, 0o600)?.map_tx(Dest::Node(b.node_id()), TxAttrs::default())?;
    /// tx.put_signal(64, b"payload", 0, SignalOp::Add, 1)?;
    /// assert_eq!(rx.wait_until_u64(0, Cmp::Ge, 1, Some(Duration::from_secs(10)))?, Some(1));
    /// let mut got = [0u8; 7];
    /// rx.read(64, &mut got)?;
    /// assert_eq!(&got, b"payload");
    /// # Ok::<(), memchan::Error>(())
    /// ```
    ///
    /// # Errors
    /// `Unaligned` / `OutOfBounds` for the signal word (checked before the data is
    /// sent), and as [`write`](Self::write).
    pub fn put_signal(
        &self,
        offset: usize,
        data: &[u8],
        signal: usize,
        op: SignalOp,
        value: u64,
    ) -> Result<()> {
        hot!(TxFlavor, &self.tx, t => TxOps::put_signal(t, offset, data, signal, op, value))
    }
    /// Conditional write (MEMORY CHANNEL 2): at each destination, the 8-byte word at
    /// `offset` becomes `new` only if it holds `expected`; returns each destination's
    /// [`Outcome`], carried back by its acknowledgement (no second round trip).
    ///
    /// Its place in the ordering rules: one packet in this sender's order and, for
    /// broadcast, multicast or local copy, in the global order, evaluated at each
    /// destination against the word as the writes before it in that order left it. It
    /// returns once every destination reported, each after it applied this mapping's
    /// earlier writes, so it acknowledges those too. Destinations that do not map the
    /// segment rx report nothing; one that failed before it reported is
    /// [`Outcome::Lost`] (across hosts only: on one host the sender does the
    /// compare-and-swap itself).
    ///
    /// Recoverable messaging: a sender claims a mailbox slot with one conditional
    /// write; the outcome says at once whether the receiver had emptied it, so a lost
    /// or refused message is known without a reply from the receiver's application.
    ///
    /// ```
    /// use memchan::{Cluster, Dest, Outcome, TxAttrs};
    /// let name = format!("doc-cond-{}", std::process::id());
    /// let (a, b) = (Cluster::join(&name)?, Cluster::join(&name)?);
    /// let rx = b.segment("box", 4096, 0o600)?.map_rx()?;
    /// let tx = a.segment("box", 4096, 0o600)?.map_tx(Dest::Node(b.node_id()), TxAttrs::default())?;
    /// const EMPTY: u64 = 0;
    /// // Message 1 goes in: the slot was empty.
    /// let r = tx.write_if_u64(0, EMPTY, 1)?;
    /// assert_eq!((r[0].node, r[0].outcome), (b.node_id(), Outcome::Applied));
    /// // Message 2 is refused, and the sender learns the slot still holds message 1.
    /// assert_eq!(tx.write_if_u64(0, EMPTY, 2)?[0].outcome, Outcome::Held(1));
    /// assert_eq!(rx.load_u64(0)?, 1);
    /// # Ok::<(), memchan::Error>(())
    /// ```
    ///
    /// # Errors
    /// `Unaligned`, `OutOfBounds`, and as [`write`](Self::write).
    pub fn write_if_u64(&self, offset: usize, expected: u64, new: u64) -> Result<Vec<CondResult>> {
        each!(TxFlavor, &self.tx, t => TxOps::write_if_u64(t, offset, expected, new))
    }
}

/// This node's receive memory for a segment.
pub struct RxMapping {
    rx: RxFlavor,
}

impl RxMapping {
    /// Size in bytes.
    pub fn len(&self) -> usize {
        each!(RxFlavor, &self.rx, r => RxOps::len(r))
    }
    /// Never empty.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Segment name.
    pub fn name(&self) -> &str {
        each!(RxFlavor, &self.rx, r => RxOps::name(r))
    }
    /// Start of the receive memory (written concurrently: read it through atomics).
    pub fn as_ptr(&self) -> *const u8 {
        each!(RxFlavor, &self.rx, r => RxOps::as_ptr(r))
    }
    /// Atomic 8-byte load.
    ///
    /// # Errors
    /// `OutOfBounds`, `Unaligned`.
    #[inline(always)]
    pub fn load_u64(&self, offset: usize) -> Result<u64> {
        each!(RxFlavor, &self.rx, r => RxOps::load_u64(r, offset))
    }
    /// Atomic 4-byte load.
    ///
    /// # Errors
    /// `OutOfBounds`, `Unaligned`.
    #[inline(always)]
    pub fn load_u32(&self, offset: usize) -> Result<u32> {
        each!(RxFlavor, &self.rx, r => RxOps::load_u32(r, offset))
    }
    /// Atomic 2-byte load.
    ///
    /// # Errors
    /// `OutOfBounds`, `Unaligned`.
    #[inline(always)]
    pub fn load_u16(&self, offset: usize) -> Result<u16> {
        each!(RxFlavor, &self.rx, r => RxOps::load_u16(r, offset))
    }
    /// 1-byte load.
    ///
    /// # Errors
    /// `OutOfBounds`.
    #[inline(always)]
    pub fn load_u8(&self, offset: usize) -> Result<u8> {
        each!(RxFlavor, &self.rx, r => RxOps::load_u8(r, offset))
    }
    /// Copies bytes out.
    ///
    /// # Errors
    /// `OutOfBounds`.
    pub fn read(&self, offset: usize, buf: &mut [u8]) -> Result<()> {
        each!(RxFlavor, &self.rx, r => RxOps::read(r, offset, buf))
    }
    /// Sets the attributes of the pages covering `offset..offset+len`.
    ///
    /// # Errors
    /// `OutOfBounds`.
    pub fn set_attrs(&self, offset: usize, len: usize, attrs: RxAttrs) -> Result<()> {
        each!(RxFlavor, &self.rx, r => RxOps::set_attrs(r, offset, len, attrs))
    }
    /// The attributes of the page holding `offset`.
    ///
    /// # Errors
    /// `OutOfBounds`.
    pub fn attrs(&self, offset: usize) -> Result<RxAttrs> {
        each!(RxFlavor, &self.rx, r => RxOps::attrs(r, offset))
    }
    /// Receive-side remap (seed 000's MEMORY CHANNEL 2): the writes addressed to page
    /// `page` of this mapping land on page `to` of it from now on, at the same place
    /// within the page and with page `page`'s attributes, without the senders knowing
    /// (`to == page` undoes it). It holds for every packet applied after it returns;
    /// a packet being applied at that moment may land at either place, so remap at a
    /// point the senders' writes are ordered against (an `ack` or a barrier). Loads
    /// read where they are addressed. Pages are the cluster's (4 or 8 KiB).
    ///
    /// ```
    /// use memchan::{Cluster, Dest, TxAttrs};
    /// let name = format!("doc-remap-{}", std::process::id());
    /// let (a, b) = (Cluster::join(&name)?, Cluster::join(&name)?);
    /// let page = b.page_size();
    /// let rx = b.segment("frames", 3 * page, 0o600)?.map_rx()?;
    /// let tx = a.segment("frames", 3 * page, 0o600)?.map_tx(Dest::Node(b.node_id()), TxAttrs::default())?;
    /// rx.remap_page(0, 2)?;                     // page 0's writes now fill page 2
    /// tx.write_u64(8, 5)?;
    /// a.ack()?;
    /// assert_eq!((rx.load_u64(8)?, rx.load_u64(2 * page + 8)?), (0, 5));
    /// # Ok::<(), memchan::Error>(())
    /// ```
    ///
    /// # Errors
    /// `OutOfBounds` for a page past the segment.
    pub fn remap_page(&self, page: usize, to: usize) -> Result<()> {
        each!(RxFlavor, &self.rx, r => RxOps::remap_page(r, page, to))
    }
    /// Blocks, without a busy core, until a write lands on a notify page (`Ok(true)`)
    /// or `timeout` passes (`Ok(false)`).
    ///
    /// # Errors
    /// `Isolated` or `HubLost` where the transport can tell.
    pub fn wait(&self, timeout: Option<Duration>) -> Result<bool> {
        each!(RxFlavor, &self.rx, r => RxOps::wait(r, timeout))
    }
    /// Like [`wait`](Self::wait) but busy-polling, on every transport: lower latency,
    /// one busy core (through a hub it reads the link itself, in the calling thread).
    ///
    /// # Errors
    /// As [`wait`](Self::wait).
    pub fn wait_spin(&self, timeout: Option<Duration>) -> Result<bool> {
        each!(RxFlavor, &self.rx, r => RxOps::wait_spin(r, timeout))
    }
    /// Blocks, without a busy core (a short spin, then asleep on notify), until the
    /// aligned 8-byte word at `offset` satisfies `word <cmp> value` (OpenSHMEM's
    /// `shmem_wait_until` / `shmem_signal_wait_until`); returns the word, or `None` when
    /// `timeout` passes first. Woken by signal updates ([`TxMapping::put_signal`]),
    /// conditional writes and writes to notify pages; a plain write to a page without
    /// notify is seen within [`WAIT_UNTIL_RECHECK`] at the latest.
    ///
    /// # Errors
    /// `OutOfBounds`, `Unaligned`, and as [`wait`](Self::wait).
    pub fn wait_until_u64(
        &self,
        offset: usize,
        cmp: Cmp,
        value: u64,
        timeout: Option<Duration>,
    ) -> Result<Option<u64>> {
        each!(RxFlavor, &self.rx, r => RxOps::wait_until_u64(r, offset, cmp, value, timeout))
    }
}

/// A named cluster lock.
pub struct Lock {
    lock: LockFlavor,
}

/// Holds a [`Lock`] until dropped.
pub struct LockGuard<'a> {
    guard: GuardFlavor<'a>,
}

impl Lock {
    /// Waits for the lock.
    ///
    /// # Errors
    /// `Isolated`; `HubLost`.
    pub fn acquire(&self) -> Result<LockGuard<'_>> {
        Ok(LockGuard {
            guard: wrap!(LockFlavor => GuardFlavor, &self.lock, l => LockOps::acquire(l)?),
        })
    }
    /// Tries once; `None` if another node holds or bids.
    ///
    /// # Errors
    /// `Isolated`; `HubLost`.
    pub fn try_acquire(&self) -> Result<Option<LockGuard<'_>>> {
        let guard =
            wrap_some!(LockFlavor => GuardFlavor, &self.lock, l => LockOps::try_acquire(l)?);
        Ok(guard.map(|guard| LockGuard { guard }))
    }
}

impl LockGuard<'_> {
    /// Releases now, reporting errors (drop releases too, ignoring them). It returns
    /// once the release is in the global order (this node's copy of the lock page
    /// shows it), on every transport.
    ///
    /// # Errors
    /// `Isolated` (the cluster already cleared this node's slot); `HubLost`.
    pub fn release(self) -> Result<()> {
        each!(GuardFlavor, self.guard, g => GuardOps::release(g))
    }
}

/// Remote reads and atomics on other nodes' copies of one segment (docs/spec.md, Semantics
/// 8; OpenSHMEM's get and atomics): one handle addresses every node, by [`NodeId`].
/// The target's application takes no part: on one host the caller loads from (or runs
/// the atomic on) the target's receive memory, which it maps; across hosts the
/// target's link side answers from its receive memory, through the hub.
///
/// A node opens its memory to this page by page, with the rx attribute
/// [`RxAttrs::remote_read`] (default off): elsewhere every operation is refused with
/// [`Error::RemoteReadOff`]. Atomics need the same attribute (they read the word).
/// Like a tx mapping the handle belongs to one thread at a time (it is `Send`, not
/// `Sync`): it keeps each target's mapping resolved, so on one host an 8-byte get is
/// a bounds check, one compare and one load. Why a handle and not methods on
/// [`Segment`]: that cache needs no lock only while one thread owns it.
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
    rma: RmaFlavor,
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
    /// [`Cluster::ack`] completes it, then [`Pending::take`] returns the bytes (it
    /// waits itself if no ack came between).
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
    /// `Unsupported` where nodes do not share memory (through a hub);
    /// `PermissionDenied` (op `atomic`) without read and write permission;
    /// `UnknownNode`, `NotMapped`, `RemoteReadOff`, `Isolated`.
    pub fn peer_memory(&self, node: NodeId) -> Result<PeerMemory> {
        each!(RmaFlavor, &self.rma, r => RmaOps::peer_memory(r, node)).map(PeerMemory)
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

/// The README's Rust examples, compiled and run as doc-tests (its other blocks are
/// tagged with their language, so rustdoc leaves them alone).
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
mod readme {}

/// The Rust guide's and the hub guide's examples, compiled and run as doc-tests.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/guide/rust.md")]
mod guide_rust {}

#[cfg(doctest)]
#[doc = include_str!("../../../docs/guide/hub.md")]
mod guide_hub {}

/// A non-blocking get under way (OpenSHMEM's `get_nbi`), from [`Rma::get_nbi`]: the
/// node's [`Cluster::ack`] returns once it (and every other get under way) has
/// completed, after which [`take`](Pending::take) returns at once. Dropping it
/// abandons the bytes. (The transports' constructors stay behind the contract.)
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
