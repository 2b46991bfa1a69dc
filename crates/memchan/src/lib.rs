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
//! call on the data path. See `ARCHITECTURE.md` for the layers.

pub use memchan_core::{Dest, Error, GroupId, NodeId, NodeSet, PageSize, Result, RxAttrs, TxAttrs};
pub use memchan_shm::{
    Config, EventKind, Lock, LockGuard, MembershipEvent, RxMapping, Segment, TxMapping,
};

use std::time::Duration;

/// This process's membership in a cluster: the handle for segments, groups, ack,
/// barrier, locks and membership. Leaves the cluster on drop.
pub struct Cluster {
    node: memchan_shm::Node,
}

impl Cluster {
    /// Joins the cluster `name` on this host with default settings (4 KiB pages for a
    /// new cluster, failure detection within 1 s), creating it if needed.
    pub fn join(name: &str) -> Result<Cluster> {
        Self::join_with(name, Config::default())
    }

    /// Joins with explicit settings (page size, heartbeat, failure timeout).
    ///
    /// ```
    /// use memchan::{Cluster, Config, PageSize};
    /// let cfg = Config { page_size: Some(PageSize::K8), ..Config::default() };
    /// let c = Cluster::join_with(&format!("doc8k-{}", std::process::id()), cfg)?;
    /// assert_eq!(c.page_size(), 8192);
    /// # Ok::<(), memchan::Error>(())
    /// ```
    pub fn join_with(name: &str, cfg: Config) -> Result<Cluster> {
        Ok(Cluster {
            node: memchan_shm::Node::join(name, cfg)?,
        })
    }

    /// This node's id, `0..256`.
    pub fn node_id(&self) -> NodeId {
        self.node.id()
    }

    /// This node's incarnation (new on every join).
    pub fn incarnation(&self) -> u64 {
        self.node.incarnation()
    }

    /// The cluster's name.
    pub fn name(&self) -> &str {
        self.node.cluster()
    }

    /// The cluster's page size in bytes.
    pub fn page_size(&self) -> usize {
        self.node.page_size()
    }

    /// The live members.
    pub fn members(&self) -> Vec<NodeId> {
        self.node.members().iter().collect()
    }

    /// The membership epoch: it grows with every join, leave and failure.
    pub fn epoch(&self) -> u64 {
        self.node.epoch()
    }

    /// The next membership event (from this node's join on), waiting up to `timeout`
    /// (`None`: forever). Every node sees the same events in the same order.
    pub fn next_event(&self, timeout: Option<Duration>) -> Option<MembershipEvent> {
        self.node.next_event(timeout)
    }

    /// Waits until at least `n` nodes are members.
    pub fn wait_for_members(&self, n: usize, timeout: Duration) -> Result<()> {
        self.node.wait_for_members(n, timeout)
    }

    /// Finds the segment `name`, or creates it with `size` bytes (rounded up to whole
    /// pages), owned by this process's uid/gid with permission bits `mode`.
    pub fn segment(&self, name: &str, size: usize, mode: u32) -> Result<Segment> {
        self.node.segment(name, size, mode)
    }

    /// Opens an existing segment; [`Error::UnknownSegment`] if there is none.
    pub fn open_segment(&self, name: &str) -> Result<Segment> {
        self.node.open_segment(name)
    }

    /// Creates a multicast group of `members` (or finds it if it exists with the same
    /// members).
    pub fn create_group(&self, name: &str, members: &[NodeId]) -> Result<GroupId> {
        self.node.create_group(name, members)
    }

    /// Looks up a multicast group.
    pub fn group(&self, name: &str) -> Result<GroupId> {
        self.node.group(name)
    }

    /// Returns once every earlier write of this node has been applied at every
    /// destination (OpenSHMEM's `quiet`).
    pub fn ack(&self) -> Result<()> {
        self.node.ack()
    }

    /// Waits until every live member has reached this barrier; earlier writes of each
    /// are applied everywhere before anyone passes.
    pub fn barrier(&self) -> Result<()> {
        self.node.barrier()
    }

    /// Barrier over the live members of a group.
    pub fn barrier_group(&self, g: GroupId) -> Result<()> {
        self.node.barrier_group(g)
    }

    /// The cluster lock `name` (created on first use). At most one node holds it; a
    /// holder that dies is released by the cluster.
    pub fn lock(&self, name: &str) -> Result<Lock> {
        self.node.lock(name)
    }

    /// Leaves the cluster now.
    pub fn leave(self) {
        self.node.leave()
    }
}
