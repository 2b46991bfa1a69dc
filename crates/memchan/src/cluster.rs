//! [`Cluster`]: this process's membership in a cluster, the handle for segments,
//! groups, ack, barrier, locks, membership and the global clock.

use crate::flavor::{join_flavor, LockFlavor, NodeFlavor, SegFlavor, TransportKind};
use crate::lock::Lock;
use crate::segment::Segment;
use memchan_core::transport::{Caps, HubOps, Transport};
use memchan_core::{Config, Error, GlobalTime, GroupId, MembershipEvent, NodeId, Result};
use std::time::Duration;

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

    /// The transport this node joined through: [`TransportKind::SharedMemory`] (this
    /// host) or [`TransportKind::Hub`]; it displays as `shm` or `hub`.
    pub fn transport(&self) -> TransportKind {
        self.node.kind()
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
    /// [`EVENT_RING`](crate::EVENT_RING) events are kept for a reader; one further
    /// behind skips to the oldest kept, on every transport.
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
    /// past [`MAX_SEGMENTS`](crate::MAX_SEGMENTS).
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
    /// value); `TableFull("group")` past [`MAX_GROUPS`](crate::MAX_GROUPS).
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
    /// with [`HubSpec::Host`](crate::HubSpec::Host)): the other node connects there.
    /// Only the hub transport has it (its extension of the contract,
    /// `memchan_core::transport::HubOps`).
    ///
    /// # Errors
    /// [`Error::Unsupported`] on a node that hosts no hub: one on another transport,
    /// or one that joined a hub elsewhere.
    pub fn hosted_hub_addr(&self) -> Result<std::net::SocketAddr> {
        match &self.node {
            NodeFlavor::Hub(n) => n.hosted_hub_addr(),
            _ => Err(Error::Unsupported("a hosted hub")),
        }
    }

    /// Leaves the cluster now.
    pub fn leave(self) {
        each!(NodeFlavor, self.node, n => n.leave())
    }
}
