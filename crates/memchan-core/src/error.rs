//! The one error type of memchan: every case names the problem and what was asked.

use crate::names::NodeId;

/// Result with memchan's [`Error`].
pub type Result<T> = std::result::Result<T, Error>;

/// Everything memchan can refuse or fail at. Bad input never changes memory: a write
/// that returns an error has deposited nothing.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// A write or read reaches past the end of its segment.
    #[error(
        "offset {offset} + length {len} is past the end of segment `{segment}` ({size} bytes)"
    )]
    OutOfBounds {
        /// Segment name.
        segment: String,
        /// Requested offset.
        offset: usize,
        /// Requested length.
        len: usize,
        /// Segment size.
        size: usize,
    },
    /// An atomic (1/2/4/8-byte) access at an offset not aligned to its size.
    #[error("unaligned {size}-byte atomic access at offset {offset} of segment `{segment}`")]
    Unaligned {
        /// Segment name.
        segment: String,
        /// Requested offset.
        offset: usize,
        /// Access size.
        size: usize,
    },
    /// A write through a tx mapping whose transmit enable is off.
    #[error("transmit is disabled on this tx mapping of segment `{segment}`")]
    TransmitDisabled {
        /// Segment name.
        segment: String,
    },
    /// The node was isolated by the cluster (declared failed) and may not send.
    #[error("{node} was isolated by the cluster at epoch {epoch}; rejoin to send again")]
    Isolated {
        /// This node.
        node: NodeId,
        /// Epoch of the isolation.
        epoch: u64,
    },
    /// The segment was freed after this mapping was made.
    #[error("segment `{segment}` was freed; its mappings are no longer valid")]
    SegmentFreed {
        /// Segment name.
        segment: String,
    },
    /// The caller's uid/gid may not do this under the segment's mode.
    #[error("permission denied: {op} on segment `{segment}` (owner {uid}:{gid}, mode {mode:o}) by uid {caller_uid}")]
    PermissionDenied {
        /// Segment name.
        segment: String,
        /// `map_rx` (read), `map_tx` (write), `free`, `get` (read: a remote read) or
        /// `atomic` (read and write: a remote atomic).
        op: &'static str,
        /// Owner uid.
        uid: u32,
        /// Owner gid.
        gid: u32,
        /// Mode bits.
        mode: u32,
        /// Caller's effective uid.
        caller_uid: u32,
    },
    /// No segment of that name exists in the cluster.
    #[error("unknown segment `{0}`")]
    UnknownSegment(String),
    /// A segment of that name exists with another size.
    #[error("segment `{segment}` exists with {existing} bytes, not {requested}")]
    SegmentSizeMismatch {
        /// Segment name.
        segment: String,
        /// Size it has.
        existing: usize,
        /// Size asked for.
        requested: usize,
    },
    /// The node is not a member of the cluster.
    #[error("unknown {0}: not a member of the cluster")]
    UnknownNode(NodeId),
    /// No multicast group of that name or id exists.
    #[error("unknown group `{0}`")]
    UnknownGroup(String),
    /// A name or size that memchan cannot accept.
    #[error("invalid {what}: {why}")]
    Invalid {
        /// What was invalid (cluster name, segment size, ...).
        what: &'static str,
        /// Why.
        why: String,
    },
    /// A fixed table (nodes, segments, groups) is full.
    #[error("the cluster's {0} table is full")]
    TableFull(&'static str),
    /// The cluster's shared state was written by another protocol version.
    #[error("cluster `{cluster}` speaks protocol version {found}, this library speaks {expected}")]
    VersionMismatch {
        /// Cluster name.
        cluster: String,
        /// Version found.
        found: u32,
        /// Version of this library.
        expected: u32,
    },
    /// The cluster runs with another page size than the one asked for.
    #[error("cluster `{cluster}` uses {existing}-byte pages, not {requested}")]
    PageSizeMismatch {
        /// Cluster name.
        cluster: String,
        /// Page size it has.
        existing: usize,
        /// Page size asked for.
        requested: usize,
    },
    /// An acknowledge did not complete: these nodes did not acknowledge in time.
    #[error("acknowledge incomplete: {0:?} did not acknowledge")]
    AckIncomplete(Vec<NodeId>),
    /// A wait ran out of time.
    #[error("timed out after {0:?} waiting for {1}")]
    Timeout(std::time::Duration, &'static str),
    /// The hub could not be joined: unreachable, another protocol version, a wrong
    /// cluster key, or it refused the join.
    #[error("cannot join through hub {addr}: {why}")]
    HubRefused {
        /// The hub's address.
        addr: String,
        /// What went wrong.
        why: String,
    },
    /// The link to the hub is gone (the hub died, or the link stayed silent past the
    /// failure timeout): nothing more can be sent or received. Rejoin when a hub is back.
    #[error("lost the hub: {0}")]
    HubLost(String),
    /// The transport this node joined through does not offer the operation (see
    /// `Caps`: what each transport offers).
    #[error("{0} is not offered by this transport")]
    Unsupported(&'static str),
    /// Another party held up a wait of this node past memchan's bound (a multiple of
    /// the cluster's failure timeout, see each operation): the control block's lock
    /// (`flock`), the order point, or a barrier whose `nodes` neither arrived nor
    /// failed. Nothing was changed by the call; it may be retried.
    #[error("cluster `{cluster}`: {what} made no progress for {waited:?}{}", named(.nodes))]
    Stalled {
        /// Cluster name.
        cluster: String,
        /// What this node waited for.
        what: &'static str,
        /// How long it waited without progress.
        waited: std::time::Duration,
        /// The nodes it waited for (the barrier's missing members, the order point's
        /// holder); empty when no node can be named (a `flock` holder).
        nodes: Vec<NodeId>,
    },
    /// A strided or indexed write whose shape cannot be sent: an element size of 0
    /// or over one packet, a count or stride whose arithmetic overflows, or a source
    /// buffer too short for it (`memchan_core::deposit`). Nothing was sent.
    #[error("bad deposit shape on segment `{segment}`: {why}")]
    BadShape {
        /// Segment name.
        segment: String,
        /// What is wrong with the shape.
        why: String,
    },
    /// A remote read or atomic reached a page whose receive attributes at the
    /// target do not include `remote_read` (`RxAttrs::remote_read`): the target has
    /// not opened that page to remote access. Nothing was read or changed.
    #[error("{node} does not allow remote access to the page at offset {offset} of segment `{segment}` (remote_read is off)")]
    RemoteReadOff {
        /// Segment name.
        segment: String,
        /// The target node.
        node: NodeId,
        /// The offset asked for.
        offset: usize,
    },
    /// A remote read or atomic addressed a node that is a member but does not map the
    /// segment rx: it has no copy to read or update.
    #[error("{node} does not map segment `{segment}` rx: it holds no copy to read or update")]
    NotMapped {
        /// Segment name.
        segment: String,
        /// The target node.
        node: NodeId,
    },
    /// An operating-system call failed.
    #[error("{op}: {source}")]
    Os {
        /// What memchan was doing.
        op: String,
        /// The OS error.
        #[source]
        source: std::io::Error,
    },
    /// `global_time()` before this node's clock is synchronised with the cluster's:
    /// through a hub, until enough of the hub's time packets and one echoed probe
    /// arrived (`memchan_core::clock`).
    #[error(
        "the global clock is not synchronised yet ({time_packets} time packets and {probes} \
         echoed probes received; it needs {needed} and 1)"
    )]
    ClockNotSynchronised {
        /// The hub's time packets this node holds.
        time_packets: usize,
        /// Its probes the hub echoed.
        probes: usize,
        /// The time packets it needs (with one echoed probe).
        needed: usize,
    },
}

/// The " (waiting for node 3, node 7)" tail of [`Error::Stalled`].
fn named(nodes: &[NodeId]) -> String {
    if nodes.is_empty() {
        return String::new();
    }
    let list: Vec<String> = nodes.iter().map(|n| n.to_string()).collect();
    format!(" (waiting for {})", list.join(", "))
}

impl Error {
    /// A stable number for the kind of error (the C API returns its negation); it
    /// never changes meaning once given.
    pub fn code(&self) -> i32 {
        match self {
            Error::OutOfBounds { .. } => 1,
            Error::Unaligned { .. } => 2,
            Error::TransmitDisabled { .. } => 3,
            Error::Isolated { .. } => 4,
            Error::SegmentFreed { .. } => 5,
            Error::PermissionDenied { .. } => 6,
            Error::UnknownSegment(_) => 7,
            Error::SegmentSizeMismatch { .. } => 8,
            Error::UnknownNode(_) => 9,
            Error::UnknownGroup(_) => 10,
            Error::Invalid { .. } => 11,
            Error::TableFull(_) => 12,
            Error::VersionMismatch { .. } => 13,
            Error::PageSizeMismatch { .. } => 14,
            Error::AckIncomplete(_) => 15,
            Error::Timeout(..) => 16,
            Error::HubRefused { .. } => 17,
            Error::HubLost(_) => 18,
            Error::Unsupported(_) => 19,
            Error::Os { .. } => 20,
            Error::Stalled { .. } => 21,
            Error::RemoteReadOff { .. } => 22,
            Error::NotMapped { .. } => 23,
            Error::BadShape { .. } => 26,
            Error::ClockNotSynchronised { .. } => 30,
        }
    }

    /// Wraps an OS error with what memchan was doing.
    pub fn os(op: impl Into<String>, source: impl Into<std::io::Error>) -> Error {
        Error::Os {
            op: op.into(),
            source: source.into(),
        }
    }
}
