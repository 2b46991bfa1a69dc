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

pub use memchan_core::{
    Dest, Error, EventKind, GroupId, MembershipEvent, NodeId, NodeSet, PageSize, Result, RxAttrs,
    TxAttrs,
};

use memchan_net::node as net;
use std::time::Duration;

/// Where a node's hub is (see [`Config::hub`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Hub {
    /// Join through the hub listening at `HOST:PORT` (`memchan hub --listen`).
    Connect(String),
    /// Host the hub in this process, listening at `HOST:PORT`: the virtual hub of a
    /// two-node cluster, whose other node connects here. The cluster ends with this node.
    Host(String),
}

/// How a node joins. [`Config::default`] reads `MEMCHAN_HUB`, `MEMCHAN_HUB_HOST` and
/// `MEMCHAN_KEY_FILE` (see the crate doc).
#[derive(Debug, Clone)]
pub struct Config {
    /// Page size; `None` accepts the cluster's (4 KiB for a new cluster).
    pub page_size: Option<PageSize>,
    /// Heartbeat period.
    pub heartbeat: Duration,
    /// A node (or hub) silent this long is declared failed.
    pub failure_timeout: Duration,
    /// `None`: this host only, over shared memory. `Some`: through a hub.
    pub hub: Option<Hub>,
    /// File holding the cluster key (hub transport).
    pub key_file: Option<std::path::PathBuf>,
    /// Bytes of unreleased packets a node may hold before writes wait (hub transport).
    pub replay_limit: usize,
}

impl Default for Config {
    fn default() -> Self {
        let env = |k: &str| std::env::var(k).ok().filter(|v| !v.is_empty());
        let hub = env("MEMCHAN_HUB")
            .map(Hub::Connect)
            .or_else(|| env("MEMCHAN_HUB_HOST").map(Hub::Host));
        Config {
            page_size: None,
            heartbeat: Duration::from_millis(100),
            failure_timeout: Duration::from_millis(800),
            hub,
            key_file: env("MEMCHAN_KEY_FILE").map(Into::into),
            replay_limit: memchan_net::link::LinkConfig::default().replay_limit,
        }
    }
}

impl Config {
    /// This config with the hub at `addr`.
    pub fn with_hub(mut self, hub: Hub) -> Config {
        self.hub = Some(hub);
        self
    }
}

/// Reads the cluster key named by a config (`None`: an open cluster).
pub fn read_key(path: Option<&std::path::Path>) -> Result<Option<Vec<u8>>> {
    let Some(path) = path else { return Ok(None) };
    let bytes = std::fs::read(path)
        .map_err(|e| Error::os(format!("read the cluster key file {}", path.display()), e))?;
    if bytes.trim_ascii().is_empty() {
        return Err(Error::Invalid {
            what: "cluster key file",
            why: format!("{} is empty", path.display()),
        });
    }
    Ok(Some(bytes.trim_ascii().to_vec()))
}

enum Node {
    Shm(memchan_shm::Node),
    Net(net::Node),
}

/// Calls the same method on whichever transport `$x` holds.
macro_rules! both {
    ($x:expr, $v:ident => $e:expr) => {
        match $x {
            Node::Shm($v) => $e,
            Node::Net($v) => $e,
        }
    };
}

/// This process's membership in a cluster: the handle for segments, groups, ack,
/// barrier, locks and membership. Leaves the cluster on drop.
pub struct Cluster {
    node: Node,
}

impl Cluster {
    /// Joins the cluster `name` with default settings (from the environment: on this
    /// host, or through the hub `MEMCHAN_HUB` names), creating it if needed.
    pub fn join(name: &str) -> Result<Cluster> {
        Self::join_with(name, Config::default())
    }

    /// Joins with explicit settings (page size, heartbeat, failure timeout, hub).
    ///
    /// ```
    /// use memchan::{Cluster, Config, PageSize};
    /// let cfg = Config { page_size: Some(PageSize::K8), hub: None, ..Config::default() };
    /// let c = Cluster::join_with(&format!("doc8k-{}", std::process::id()), cfg)?;
    /// assert_eq!(c.page_size(), 8192);
    /// # Ok::<(), memchan::Error>(())
    /// ```
    pub fn join_with(name: &str, cfg: Config) -> Result<Cluster> {
        let node = match &cfg.hub {
            None => Node::Shm(memchan_shm::Node::join(
                name,
                memchan_shm::Config {
                    page_size: cfg.page_size,
                    heartbeat: cfg.heartbeat,
                    failure_timeout: cfg.failure_timeout,
                },
            )?),
            Some(hub) => {
                let secret = read_key(cfg.key_file.as_deref())?;
                let key = secret.as_deref().map_or_else(
                    memchan_net::wire::Key::open,
                    memchan_net::wire::Key::from_secret,
                );
                Node::Net(net::Node::join(
                    name,
                    net::NetConfig {
                        hub: match hub {
                            Hub::Connect(a) => net::HubSpec::Connect(a.clone()),
                            Hub::Host(a) => net::HubSpec::Host(a.clone()),
                        },
                        key,
                        keyed: secret.is_some(),
                        page_size: cfg.page_size,
                        heartbeat: cfg.heartbeat,
                        failure_timeout: cfg.failure_timeout,
                        link: memchan_net::link::LinkConfig {
                            replay_limit: cfg.replay_limit,
                            ..Default::default()
                        },
                    },
                )?)
            }
        };
        Ok(Cluster { node })
    }

    /// Whether this node joined through a hub (else: shared memory on this host).
    pub fn is_hub_transport(&self) -> bool {
        matches!(self.node, Node::Net(_))
    }

    /// This node's id, `0..256`.
    pub fn node_id(&self) -> NodeId {
        both!(&self.node, n => n.id())
    }

    /// This node's incarnation (new on every join).
    pub fn incarnation(&self) -> u64 {
        both!(&self.node, n => n.incarnation())
    }

    /// The cluster's name.
    pub fn name(&self) -> &str {
        both!(&self.node, n => n.cluster())
    }

    /// The cluster's page size in bytes.
    pub fn page_size(&self) -> usize {
        both!(&self.node, n => n.page_size())
    }

    /// The live members.
    pub fn members(&self) -> Vec<NodeId> {
        both!(&self.node, n => n.members().iter().collect())
    }

    /// The membership epoch: it grows with every join, leave and failure.
    pub fn epoch(&self) -> u64 {
        both!(&self.node, n => n.epoch())
    }

    /// The next membership event (from this node's join on), waiting up to `timeout`
    /// (`None`: forever). Every node sees the same events in the same order.
    pub fn next_event(&self, timeout: Option<Duration>) -> Option<MembershipEvent> {
        both!(&self.node, n => n.next_event(timeout))
    }

    /// Waits until at least `n` nodes are members.
    pub fn wait_for_members(&self, n: usize, timeout: Duration) -> Result<()> {
        both!(&self.node, x => x.wait_for_members(n, timeout))
    }

    /// Finds the segment `name`, or creates it with `size` bytes (rounded up to whole
    /// pages), owned by this process's uid/gid with permission bits `mode`.
    pub fn segment(&self, name: &str, size: usize, mode: u32) -> Result<Segment> {
        Ok(match &self.node {
            Node::Shm(n) => Segment::Shm(n.segment(name, size, mode)?),
            Node::Net(n) => Segment::Net(n.segment(name, size, mode)?),
        })
    }

    /// Opens an existing segment; [`Error::UnknownSegment`] if there is none.
    pub fn open_segment(&self, name: &str) -> Result<Segment> {
        Ok(match &self.node {
            Node::Shm(n) => Segment::Shm(n.open_segment(name)?),
            Node::Net(n) => Segment::Net(n.open_segment(name)?),
        })
    }

    /// Creates a multicast group of `members` (or finds it if it exists with the same
    /// members).
    pub fn create_group(&self, name: &str, members: &[NodeId]) -> Result<GroupId> {
        both!(&self.node, n => n.create_group(name, members))
    }

    /// Looks up a multicast group.
    pub fn group(&self, name: &str) -> Result<GroupId> {
        both!(&self.node, n => n.group(name))
    }

    /// Returns once every earlier write of this node has been applied at every
    /// destination (OpenSHMEM's `quiet`).
    pub fn ack(&self) -> Result<()> {
        both!(&self.node, n => n.ack())
    }

    /// Waits until every live member has reached this barrier; earlier writes of each
    /// are applied everywhere before anyone passes.
    pub fn barrier(&self) -> Result<()> {
        both!(&self.node, n => n.barrier())
    }

    /// Barrier over the live members of a group.
    pub fn barrier_group(&self, g: GroupId) -> Result<()> {
        both!(&self.node, n => n.barrier_group(g))
    }

    /// The cluster lock `name` (created on first use). At most one node holds it; a
    /// holder that dies is released by the cluster.
    pub fn lock(&self, name: &str) -> Result<Lock> {
        Ok(match &self.node {
            Node::Shm(n) => Lock::Shm(n.lock(name)?),
            Node::Net(n) => Lock::Net(n.lock(name)?),
        })
    }

    /// The hub this node hosts in its process (virtual hub), for status and tests.
    pub fn hosted_hub(&self) -> Option<&memchan_net::hub::Hub> {
        match &self.node {
            Node::Net(n) => n.hosted_hub(),
            Node::Shm(_) => None,
        }
    }

    /// Leaves the cluster now.
    pub fn leave(self) {
        match self.node {
            Node::Shm(n) => n.leave(),
            Node::Net(n) => n.leave(),
        }
    }
}

/// A named segment of the cluster's address space.
pub enum Segment {
    /// On this host's shared memory.
    #[doc(hidden)]
    Shm(memchan_shm::Segment),
    /// Through a hub.
    #[doc(hidden)]
    Net(net::Segment),
}

macro_rules! each {
    ($t:ident, $x:expr, $v:ident => $e:expr) => {
        match $x {
            $t::Shm($v) => $e,
            $t::Net($v) => $e,
        }
    };
}

impl Segment {
    /// The segment's name.
    pub fn name(&self) -> &str {
        each!(Segment, self, s => s.name())
    }
    /// Size in bytes (whole pages).
    pub fn size(&self) -> usize {
        each!(Segment, self, s => s.size())
    }
    /// Maps it rx: local memory that receives every write addressed to it.
    pub fn map_rx(&self) -> Result<RxMapping> {
        self.map_rx_with(RxAttrs::default())
    }
    /// Maps it rx with page attributes (receive enable, notify on receive).
    pub fn map_rx_with(&self, attrs: RxAttrs) -> Result<RxMapping> {
        Ok(match self {
            Segment::Shm(s) => RxMapping::Shm(s.map_rx_with(attrs)?),
            Segment::Net(s) => RxMapping::Net(s.map_rx_with(attrs)?),
        })
    }
    /// Maps it tx towards `dest`.
    pub fn map_tx(&self, dest: Dest, attrs: TxAttrs) -> Result<TxMapping> {
        Ok(match self {
            Segment::Shm(s) => TxMapping::Shm(s.map_tx(dest, attrs)?),
            Segment::Net(s) => TxMapping::Net(s.map_tx(dest, attrs)?),
        })
    }
    /// Frees the segment (owner only).
    pub fn free(self) -> Result<()> {
        each!(Segment, self, s => s.free())
    }
}

/// A transmit window: writes land in the destination's rx mappings.
pub enum TxMapping {
    /// On this host's shared memory.
    #[doc(hidden)]
    Shm(memchan_shm::TxMapping),
    /// Through a hub.
    #[doc(hidden)]
    Net(net::TxMapping),
}

impl TxMapping {
    /// Size in bytes.
    pub fn len(&self) -> usize {
        each!(TxMapping, self, t => t.len())
    }
    /// Never empty.
    pub fn is_empty(&self) -> bool {
        each!(TxMapping, self, t => t.is_empty())
    }
    /// Destination.
    pub fn dest(&self) -> Dest {
        each!(TxMapping, self, t => t.dest())
    }
    /// Attributes.
    pub fn attrs(&self) -> TxAttrs {
        each!(TxMapping, self, t => t.attrs())
    }
    /// Turns transmit enable on or off.
    pub fn set_transmit_enable(&mut self, on: bool) {
        each!(TxMapping, self, t => t.set_transmit_enable(on))
    }
    /// Atomic 8-byte write.
    #[inline(always)]
    pub fn write_u64(&self, offset: usize, v: u64) -> Result<()> {
        match self {
            TxMapping::Shm(t) => t.write_u64(offset, v),
            // Out of line: the one-host store stays a few instructions.
            TxMapping::Net(t) => cold(|| t.write_u64(offset, v)),
        }
    }
    /// Atomic 4-byte write.
    #[inline(always)]
    pub fn write_u32(&self, offset: usize, v: u32) -> Result<()> {
        match self {
            TxMapping::Shm(t) => t.write_u32(offset, v),
            // Out of line: the one-host store stays a few instructions.
            TxMapping::Net(t) => cold(|| t.write_u32(offset, v)),
        }
    }
    /// Atomic 2-byte write.
    #[inline(always)]
    pub fn write_u16(&self, offset: usize, v: u16) -> Result<()> {
        match self {
            TxMapping::Shm(t) => t.write_u16(offset, v),
            // Out of line: the one-host store stays a few instructions.
            TxMapping::Net(t) => cold(|| t.write_u16(offset, v)),
        }
    }
    /// 1-byte write.
    #[inline(always)]
    pub fn write_u8(&self, offset: usize, v: u8) -> Result<()> {
        match self {
            TxMapping::Shm(t) => t.write_u8(offset, v),
            // Out of line: the one-host store stays a few instructions.
            TxMapping::Net(t) => cold(|| t.write_u8(offset, v)),
        }
    }
    /// Writes `data` at `offset` (split into packets, each applied whole).
    #[inline(always)]
    pub fn write(&self, offset: usize, data: &[u8]) -> Result<()> {
        match self {
            TxMapping::Shm(t) => t.write(offset, data),
            // Out of line: the one-host store stays a few instructions.
            TxMapping::Net(t) => cold(|| t.write(offset, data)),
        }
    }
}

/// Runs `f` out of line (the hub transport's writes, beside the inlined one-host store).
#[cold]
#[inline(never)]
fn cold<T>(f: impl FnOnce() -> T) -> T {
    f()
}

/// This node's receive memory for a segment.
pub enum RxMapping {
    /// On this host's shared memory.
    #[doc(hidden)]
    Shm(memchan_shm::RxMapping),
    /// Through a hub.
    #[doc(hidden)]
    Net(net::RxMapping),
}

impl RxMapping {
    /// Size in bytes.
    pub fn len(&self) -> usize {
        each!(RxMapping, self, r => r.len())
    }
    /// Never empty.
    pub fn is_empty(&self) -> bool {
        each!(RxMapping, self, r => r.is_empty())
    }
    /// Segment name.
    pub fn name(&self) -> &str {
        each!(RxMapping, self, r => r.name())
    }
    /// Start of the receive memory (written concurrently: read it through atomics).
    pub fn as_ptr(&self) -> *const u8 {
        each!(RxMapping, self, r => r.as_ptr())
    }
    /// Atomic 8-byte load.
    #[inline(always)]
    pub fn load_u64(&self, offset: usize) -> Result<u64> {
        each!(RxMapping, self, r => r.load_u64(offset))
    }
    /// Atomic 4-byte load.
    #[inline(always)]
    pub fn load_u32(&self, offset: usize) -> Result<u32> {
        each!(RxMapping, self, r => r.load_u32(offset))
    }
    /// Atomic 2-byte load.
    #[inline(always)]
    pub fn load_u16(&self, offset: usize) -> Result<u16> {
        each!(RxMapping, self, r => r.load_u16(offset))
    }
    /// 1-byte load.
    #[inline(always)]
    pub fn load_u8(&self, offset: usize) -> Result<u8> {
        each!(RxMapping, self, r => r.load_u8(offset))
    }
    /// Copies bytes out.
    pub fn read(&self, offset: usize, buf: &mut [u8]) -> Result<()> {
        each!(RxMapping, self, r => r.read(offset, buf))
    }
    /// Sets the attributes of the pages covering `offset..offset+len`.
    pub fn set_attrs(&self, offset: usize, len: usize, attrs: RxAttrs) -> Result<()> {
        each!(RxMapping, self, r => r.set_attrs(offset, len, attrs))
    }
    /// The attributes of the page holding `offset`.
    pub fn attrs(&self, offset: usize) -> Result<RxAttrs> {
        each!(RxMapping, self, r => r.attrs(offset))
    }
    /// Blocks until a write lands on a notify page (`Ok(true)`) or `timeout` passes.
    pub fn wait(&self, timeout: Option<Duration>) -> Result<bool> {
        each!(RxMapping, self, r => r.wait(timeout))
    }
    /// Like [`wait`](Self::wait) but busy-polling (through a hub: the link itself, in
    /// the calling thread).
    pub fn wait_spin(&self, timeout: Option<Duration>) -> Result<bool> {
        match self {
            RxMapping::Shm(r) => r.wait(timeout),
            RxMapping::Net(r) => r.wait_spin(timeout),
        }
    }
}

/// A named cluster lock.
pub enum Lock {
    /// On this host's shared memory.
    #[doc(hidden)]
    Shm(memchan_shm::Lock),
    /// Through a hub.
    #[doc(hidden)]
    Net(net::Lock),
}

/// Holds a [`Lock`] until dropped.
pub enum LockGuard<'a> {
    /// On this host's shared memory.
    #[doc(hidden)]
    Shm(memchan_shm::LockGuard<'a>),
    /// Through a hub.
    #[doc(hidden)]
    Net(net::LockGuard<'a>),
}

impl Lock {
    /// Waits for the lock.
    pub fn acquire(&self) -> Result<LockGuard<'_>> {
        Ok(match self {
            Lock::Shm(l) => LockGuard::Shm(l.acquire()?),
            Lock::Net(l) => LockGuard::Net(l.acquire()?),
        })
    }
    /// Tries once; `None` if another node holds or bids.
    pub fn try_acquire(&self) -> Result<Option<LockGuard<'_>>> {
        Ok(match self {
            Lock::Shm(l) => l.try_acquire()?.map(LockGuard::Shm),
            Lock::Net(l) => l.try_acquire()?.map(LockGuard::Net),
        })
    }
}

impl LockGuard<'_> {
    /// Releases now, reporting errors (drop releases too, ignoring them).
    pub fn release(self) -> Result<()> {
        each!(LockGuard, self, g => g.release())
    }
}
