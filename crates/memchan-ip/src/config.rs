//! [`IpConfig`], how a node's IP interface is set up, and the default spin window.

use crate::addr::Subnet;
use std::time::Duration;

/// The default longest interactive spin window on one host (the window adapts up to
/// it: see `spin.rs`). On the idle 2-core VM the bench's 8-byte TCP ping-pong
/// between two namespaces measured 1.64-2.09x a veth's latency without spinning,
/// 1.30-1.54x with fixed 40 µs windows and 0.83-1.37x (median 1.04x) with this
/// (both receive threads catch the answer and the next request without being
/// woken; the round trip is ~66 µs, with a tail).
pub const INTERACTIVE_SPIN: Duration = Duration::from_micros(200);

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
