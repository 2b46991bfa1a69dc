//! TCP/IP over memchan: [`IpNode::start`] gives a cluster node a TUN interface whose
//! IP packets travel as memchan writes, so unmodified programs (ping, iperf3, any
//! socket program) talk across the interconnect. `memchan ip` runs it.
//!
//! - **Addresses**: node `id` is host `id + 1` of a subnet (default `10.77.0.0/24`,
//!   [`addr::Subnet`]); the kernel routes the subnet to the TUN interface.
//! - **Point-to-point**: a packet for node `d` becomes a record in `d`'s receive
//!   memory, in the unicast ring this node owns there (`Dest::Node(d)`); broadcast
//!   (the subnet's, 255.255.255.255, all hosts 224.0.0.1) packets become one
//!   record in this node's broadcast ring, written once through a `Dest::Broadcast`
//!   mapping into every node's copy. Layout and protocol: [`ring`].
//! - **Multicast** (224.0.0.0/4): a packet for a group goes once, through a
//!   `Dest::Group` mapping, to the memchan group of the nodes whose kernels joined
//!   that IP group (learned from `/proc/net/igmp`); nobody else's memory sees it.
//!   [`mcast`].
//! - **Receiving**: one thread sleeps in `RxMapping::wait` (every ring page posts
//!   notify; a record's body is written without, so its header word wakes the
//!   receiver), drains every ring, and writes each packet to the TUN device straight
//!   from receive memory; after traffic it may spin a while first, sending too.
//! - **Flow control**: the reader returns credits (bytes consumed) in batches; a
//!   full unicast ring makes the sender wait for credits (up to 200 ms, then the
//!   packet is dropped and counted), a full broadcast ring drops at once.
//! - A large MTU (default 65535) keeps the per-packet cost from capping TCP, and
//!   checksum offload (`virtio_net_hdr`, see `tun.rs`) spares both kernels the
//!   software checksum: the packets cross memory, not a wire.
//!
//! Built on the public `memchan` crate only.

use std::io;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::time::Duration;

pub mod addr;
pub mod mcast;
mod node;
pub mod ring;
mod spin;
mod tun;

pub use addr::{Route, Subnet};
pub use node::IpNode;

/// The default longest interactive spin window on one host (the window adapts up to
/// it: see `spin.rs`). On the idle 2-core VM the bench's 8-byte TCP ping-pong
/// between two namespaces measured 1.64-2.09x a veth's latency without spinning,
/// 1.30-1.54x with fixed 40 µs windows and 0.83-1.37x (median 1.04x) with this
/// (both receive threads catch the answer and the next request without being
/// woken; the round trip is ~66 µs, with a tail).
pub const INTERACTIVE_SPIN: Duration = Duration::from_micros(200);

/// What can go wrong starting or running `memchan ip`, each naming the problem.
#[derive(Debug, thiserror::Error)]
pub enum IpError {
    /// The kernel offers no TUN device.
    #[error("no TUN device: /dev/net/tun does not exist (load the `tun` module, or give a container --device /dev/net/tun)")]
    NoTunDevice,
    /// The step needs CAP_NET_ADMIN (root).
    #[error("not permitted: {0} needs root (CAP_NET_ADMIN)")]
    NotPermitted(&'static str),
    /// A configuration value that cannot work.
    #[error("invalid {what}: {why}")]
    Invalid { what: &'static str, why: String },
    /// This node's id has no slot or no address.
    #[error("node id {id} is past the {slots} IP slots (--max-nodes) or the subnet {subnet}")]
    NodeOutOfRange {
        id: u16,
        slots: usize,
        subnet: Subnet,
    },
    /// Another system call failed.
    #[error("{what}: {source}")]
    Os {
        what: &'static str,
        #[source]
        source: io::Error,
    },
    /// The cluster refused (segment size mismatch, permission, ...).
    #[error(transparent)]
    Memchan(#[from] memchan::Error),
}

/// How a node's IP interface is set up. Every node of a cluster must use the same
/// subnet, segment, ring sizes and slot count (the segment's size says so: a
/// mismatch is `SegmentSizeMismatch`).
#[derive(Debug, Clone)]
pub struct IpConfig {
    /// The subnet; node `id` is host `id + 1`.
    pub subnet: Subnet,
    /// The TUN interface's name.
    pub ifname: String,
    /// The TUN interface's MTU (at most 65535): the largest packet.
    pub mtu: u32,
    /// Bytes of each sender's unicast ring in each receiver (at least 4 records of a
    /// full MTU).
    pub ring_bytes: usize,
    /// Bytes of each sender's broadcast ring.
    pub bcast_ring_bytes: usize,
    /// Slots: node ids `0..max_nodes` take part.
    pub max_nodes: usize,
    /// The segment holding every ring.
    pub segment: String,
    /// How long the receiver busy-polls after traffic before it sleeps (0: sleep at
    /// once).
    pub spin: Duration,
    /// How long at most it busy-polls (reading the TUN device too) after an exchange
    /// of small packets only, both ways: request/response traffic, where the answer
    /// or the next request is due soon; a stream (large packets one way) does not (0:
    /// as `spin`). The window starts at 10 µs, opens to this when the next packet came
    /// after the window but within this, and halves after longer gaps. `None` (the
    /// default): [`INTERACTIVE_SPIN`] on one host, 0 through a hub, where spinning
    /// measured slower than sleeping (a C ping-pong across a veth: 62-120 µs median,
    /// p90 171-184 µs, against 64-68 µs, p90 83-93 µs). Either spin stops while
    /// spinning gets the thread too little of a core (a busy machine), and is tried
    /// again 100 ms later, then after pauses doubling up to 1.6 s while it keeps
    /// failing.
    pub interactive_spin: Option<Duration>,
}

impl Default for IpConfig {
    fn default() -> Self {
        IpConfig {
            subnet: Subnet::DEFAULT,
            ifname: "mcip0".into(),
            mtu: 65535,
            ring_bytes: 4 << 20,
            bcast_ring_bytes: 256 << 10,
            max_nodes: 8,
            segment: "memchan-ip".into(),
            spin: Duration::ZERO,
            interactive_spin: None,
        }
    }
}

/// The interface's counters (monotonic).
#[derive(Debug, Default)]
pub struct Counters {
    pub tx_packets: AtomicU64,
    pub tx_bytes: AtomicU64,
    pub rx_packets: AtomicU64,
    pub rx_bytes: AtomicU64,
    /// Packets for an address no live node has (a multicast group no other node
    /// joined), or not IPv4.
    pub drop_no_route: AtomicU64,
    /// Packets dropped because the destination's ring stayed full.
    pub drop_ring_full: AtomicU64,
    /// Waits for a receiver's credits (a full unicast ring).
    pub ring_full_waits: AtomicU64,
    /// Records a sender wrote that no honest sender writes (its ring is abandoned).
    pub bad_records: AtomicU64,
    /// Frames dropped because their `virtio_net_hdr` is one no honest sender writes
    /// (segmentation, unknown flags, a checksum place past the packet); the ring is
    /// kept.
    pub bad_frames: AtomicU64,
    /// Failed memchan writes and TUN writes.
    pub errors: AtomicU64,
    /// Multicast packets sent through a memchan group, and received through one.
    pub tx_multicast: AtomicU64,
    pub rx_multicast: AtomicU64,
    /// Multicast packets sent through the broadcast ring because no group could be
    /// had (the cluster's groups are all taken).
    pub mc_fallback: AtomicU64,
    /// Times a multicast ring reader fell behind (or its sender restarted) and
    /// skipped to the head, losing packets.
    pub mc_skipped: AtomicU64,
    /// Busy-poll windows the receive thread ran after traffic.
    pub spins: AtomicU64,
    /// Times it stopped spinning because spinning got it too little of a core (a
    /// busy machine; it tries again after 100 ms, or up to 1.6 s while it keeps
    /// failing).
    pub spin_backoffs: AtomicU64,
    /// Times the interactive spin window opened to its longest: the next packet of
    /// an exchange came after a spin that caught nothing, within the longest window.
    pub spin_window_opens: AtomicU64,
}

/// A copy of [`Counters`] at one moment.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CounterSnapshot {
    pub tx_packets: u64,
    pub tx_bytes: u64,
    pub rx_packets: u64,
    pub rx_bytes: u64,
    pub drop_no_route: u64,
    pub drop_ring_full: u64,
    pub ring_full_waits: u64,
    pub bad_records: u64,
    pub bad_frames: u64,
    pub errors: u64,
    pub tx_multicast: u64,
    pub rx_multicast: u64,
    pub mc_fallback: u64,
    pub mc_skipped: u64,
    pub spins: u64,
    pub spin_backoffs: u64,
    pub spin_window_opens: u64,
}

impl Counters {
    pub fn snapshot(&self) -> CounterSnapshot {
        CounterSnapshot {
            tx_packets: self.tx_packets.load(Relaxed),
            tx_bytes: self.tx_bytes.load(Relaxed),
            rx_packets: self.rx_packets.load(Relaxed),
            rx_bytes: self.rx_bytes.load(Relaxed),
            drop_no_route: self.drop_no_route.load(Relaxed),
            drop_ring_full: self.drop_ring_full.load(Relaxed),
            ring_full_waits: self.ring_full_waits.load(Relaxed),
            bad_records: self.bad_records.load(Relaxed),
            bad_frames: self.bad_frames.load(Relaxed),
            errors: self.errors.load(Relaxed),
            tx_multicast: self.tx_multicast.load(Relaxed),
            rx_multicast: self.rx_multicast.load(Relaxed),
            mc_fallback: self.mc_fallback.load(Relaxed),
            mc_skipped: self.mc_skipped.load(Relaxed),
            spins: self.spins.load(Relaxed),
            spin_backoffs: self.spin_backoffs.load(Relaxed),
            spin_window_opens: self.spin_window_opens.load(Relaxed),
        }
    }
}

impl std::fmt::Display for CounterSnapshot {
    /// One line of `key=value` pairs (what `memchan ip` prints).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "tx_packets={} tx_bytes={} rx_packets={} rx_bytes={} drop_no_route={} drop_ring_full={} ring_full_waits={} bad_records={} bad_frames={} errors={} tx_multicast={} rx_multicast={} mc_fallback={} mc_skipped={} spins={} spin_backoffs={} spin_window_opens={}",
            self.tx_packets,
            self.tx_bytes,
            self.rx_packets,
            self.rx_bytes,
            self.drop_no_route,
            self.drop_ring_full,
            self.ring_full_waits,
            self.bad_records,
            self.bad_frames,
            self.errors,
            self.tx_multicast,
            self.rx_multicast,
            self.mc_fallback,
            self.mc_skipped,
            self.spins,
            self.spin_backoffs,
            self.spin_window_opens
        )
    }
}
