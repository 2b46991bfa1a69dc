//! What `memchan status` and the Prometheus endpoint show: the hub's view of the
//! cluster, with the error counters of both ends of every link.

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
    /// NAKs sent.
    pub naks: u64,
    /// Times a sender waited because the replay memory was full.
    pub backpressure_waits: u64,
    /// Frames with a good CRC and a bad MAC (forged, or a wrong key).
    pub mac_failures: u64,
    /// TCP's own retransmitted segments on this socket (kernel `tcpi_total_retrans`).
    pub tcp_retransmits: u64,
}

impl LinkCounters {
    /// The counters as (name, help, value), in the order status prints them.
    pub fn fields(&self) -> [(&'static str, &'static str, u64); 12] {
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
        ]
    }
}

/// One member as the hub sees it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MemberStatus {
    /// Node id.
    pub node: u16,
    /// Incarnation.
    pub incarnation: u64,
    /// The host name the node reported.
    pub host: String,
    /// Its process id on that host.
    pub pid: u32,
    /// The peer address of its link (`local` for a node inside the hub's process).
    pub addr: String,
    /// Epoch at which it joined.
    pub joined_epoch: u64,
    /// Milliseconds since the hub last heard from it.
    pub last_heard_ms: u64,
    /// The hub's end of the link.
    pub hub_side: LinkCounters,
    /// The node's end, as last reported in its heartbeat.
    pub node_side: LinkCounters,
}

/// The hub's whole report.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HubStatus {
    /// Cluster name.
    pub cluster: String,
    /// Address the hub listens on.
    pub listen: String,
    /// Protocol version.
    pub protocol: u16,
    /// Current membership epoch.
    pub epoch: u64,
    /// Page size in bytes.
    pub page_size: u32,
    /// Whether joins must prove a cluster key.
    pub keyed: bool,
    /// Live members.
    pub members: Vec<MemberStatus>,
    /// Segments allocated.
    pub segments: u32,
    /// Multicast groups.
    pub groups: u32,
    /// Nodes isolated (declared failed) since the hub started.
    pub isolations: u64,
    /// Joins accepted.
    pub joins: u64,
    /// Connections refused (wrong key, wrong version, garbage, bad join).
    pub refused: u64,
    /// Seconds since the hub started.
    pub uptime_s: u64,
}
