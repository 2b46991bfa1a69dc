//! What `memchan status` and the Prometheus endpoint show, the same for every
//! transport: the cluster's members, segments, groups and locks, and the error
//! counters of both ends of every link (a hub cluster; one host has no links).
//!
//! ```
//! use memchan_core::status::{ClusterStatus, SegmentStatus};
//! let st = ClusterStatus {
//!     transport: "shm".into(),
//!     segments: vec![SegmentStatus { name: "inbox".into(), size: 4096, ..Default::default() }],
//!     ..Default::default()
//! };
//! assert_eq!(st.segments.len(), 1);
//! ```

use serde::{Deserialize, Serialize};

/// Counters of one end of a link. Every field only grows.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LinkCounters {
    /// Frames sent (retransmissions included).
    pub frames_tx: u64,
    /// Frames received (bad ones included).
    pub frames_rx: u64,
    /// Bytes sent.
    pub bytes_tx: u64,
    /// Bytes received.
    pub bytes_rx: u64,
    /// Frames whose CRC32C failed.
    pub crc_failures: u64,
    /// Reliable frames sent again (after a NAK or a timeout).
    pub retransmits: u64,
    /// Good frames thrown away because an earlier one was bad or missing (go-back-N).
    pub discards: u64,
    /// Frames received twice (seq already applied).
    pub duplicates: u64,
    /// Frames refused as seen before: a good MAC, but a counter not above the last one
    /// accepted (a replay, or a relay's duplicate or late reordered copy).
    pub replays: u64,
    /// NAKs sent.
    pub naks: u64,
    /// Times a sender waited because the replay memory was full.
    pub backpressure_waits: u64,
    /// Frames with a good CRC and a bad MAC (forged, or a wrong key).
    pub mac_failures: u64,
    /// TCP's own retransmitted segments on this socket (kernel `tcpi_total_retrans`).
    pub tcp_retransmits: u64,
    /// Times the link's reading thread woke because a frame arrived. While an
    /// application thread waits for data it reads the link itself and this one
    /// sleeps on: this stays far below `frames_rx` on a node that waits in `wait`.
    pub reader_wakeups: u64,
}

impl LinkCounters {
    /// The counters as (name, help, value), in the order status prints them.
    pub fn fields(&self) -> [(&'static str, &'static str, u64); 14] {
        [
            (
                "frames_tx",
                "frames sent, retransmissions included",
                self.frames_tx,
            ),
            (
                "frames_rx",
                "frames received, bad ones included",
                self.frames_rx,
            ),
            ("bytes_tx", "bytes sent", self.bytes_tx),
            ("bytes_rx", "bytes received", self.bytes_rx),
            (
                "crc_failures",
                "frames whose CRC32C failed",
                self.crc_failures,
            ),
            (
                "retransmits",
                "reliable frames sent again",
                self.retransmits,
            ),
            (
                "discards",
                "frames discarded after a bad or missing one",
                self.discards,
            ),
            ("duplicates", "frames received twice", self.duplicates),
            (
                "replays",
                "frames refused as seen before (frame counter)",
                self.replays,
            ),
            ("naks", "retransmission requests sent", self.naks),
            (
                "backpressure_waits",
                "waits for replay memory",
                self.backpressure_waits,
            ),
            ("mac_failures", "frames with a bad MAC", self.mac_failures),
            (
                "tcp_retransmits",
                "TCP segments retransmitted by the kernel",
                self.tcp_retransmits,
            ),
            (
                "reader_wakeups",
                "wake-ups of the link's reading thread for a frame",
                self.reader_wakeups,
            ),
        ]
    }
}

/// One member.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberStatus {
    /// Node id.
    pub node: u16,
    /// Incarnation.
    pub incarnation: u64,
    /// The host name the node reported (one host: this host's).
    pub host: String,
    /// Its process id on that host.
    pub pid: u32,
    /// Its effective uid (what segment permissions are checked against).
    pub uid: u32,
    /// The peer address of its link (`local` for a node inside the hub's process or
    /// on a one-host cluster).
    pub addr: String,
    /// Epoch at which it joined.
    pub joined_epoch: u64,
    /// Milliseconds since it was last heard from (the hub's link, or its heartbeat
    /// word on one host).
    pub last_heard_ms: u64,
    /// Its count of cluster-wide barrier arrivals (a joiner starts level with the
    /// live members): a barrier under way shows as members one apart.
    pub barriers: u64,
    /// The hub's end of the link (zero on one host: no link).
    pub hub_side: LinkCounters,
    /// The node's end, as last reported in its heartbeat (zero on one host).
    pub node_side: LinkCounters,
    /// The accuracy bound of its global clock (`global_time`) as it last reported it
    /// in a clock probe, in ns; `None` while it is not synchronised, and on one host
    /// (each process measures its own there).
    #[serde(default)]
    pub clock_bound_ns: Option<u64>,
}

/// One segment (cluster lock pages are listed under [`ClusterStatus::locks`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct SegmentStatus {
    /// Name.
    pub name: String,
    /// Size in bytes.
    pub size: u64,
    /// Owner uid.
    pub uid: u32,
    /// Owner gid.
    pub gid: u32,
    /// Permission bits.
    pub mode: u32,
    /// The nodes that map it rx.
    pub rx: Vec<u16>,
}

/// One multicast group.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct GroupStatus {
    /// Id.
    pub id: u16,
    /// Name.
    pub name: String,
    /// Members.
    pub members: Vec<u16>,
}

/// One cluster lock.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LockStatus {
    /// The lock's name (without the `_lock.` of its page).
    pub name: String,
    /// The nodes whose slot is set: the holder, or bidders between bid and withdrawal.
    pub bidders: Vec<u16>,
}

/// The whole report.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClusterStatus {
    /// Cluster name.
    pub cluster: String,
    /// The transport: `shm` (one host) or `hub`.
    pub transport: String,
    /// Address the hub listens on (empty on one host).
    pub listen: String,
    /// Protocol version (of the wire, or of the one-host control block).
    pub protocol: u16,
    /// Current membership epoch.
    pub epoch: u64,
    /// Page size in bytes.
    pub page_size: u32,
    /// Whether joins must prove a cluster key (never on one host).
    pub keyed: bool,
    /// Live members.
    pub members: Vec<MemberStatus>,
    /// Segments allocated (lock pages apart).
    pub segments: Vec<SegmentStatus>,
    /// Multicast groups.
    pub groups: Vec<GroupStatus>,
    /// Cluster locks.
    pub locks: Vec<LockStatus>,
    /// Nodes isolated (declared failed) since the hub or the cluster started.
    pub isolations: u64,
    /// Joins accepted.
    pub joins: u64,
    /// Connections that ended without a join (wrong key, wrong version, garbage, bad
    /// join, over a cap of pending connections, timed out or closed; hub only).
    pub refused: u64,
    /// Seconds since the hub started (one host: since the cluster was created).
    pub uptime_s: u64,
    /// Dual rail: this hub's rail (`None`: a hub of one rail, or one host).
    #[serde(default)]
    pub rail: Option<RailStatus>,
}

/// A hub's part in a dual-rail cluster.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RailStatus {
    /// `active` (numbers the order), `standby` (mirrors the active's tables),
    /// `gathering` (a standby taking over, waiting for the nodes' reports),
    /// `took over` or `failed` (a standby whose takeover could not be planned).
    pub role: String,
    /// The active hub a standby mirrors (empty for the active).
    pub active: String,
    /// Milliseconds since a standby last copied the active's tables (`None`: never).
    pub mirrored_ms_ago: Option<u64>,
    /// Why the last copy failed, if it did (the active is gone, most likely).
    pub mirror_error: String,
    /// The last place given in the order.
    pub gseq: u64,
    /// The nodes that resumed their links here (a standby taking over or took over).
    pub resumed: Vec<u16>,
    /// Packets the takeover's plan ordered again (half delivered, or unreleased).
    pub replanned: u64,
}
