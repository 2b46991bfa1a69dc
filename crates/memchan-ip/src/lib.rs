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

pub mod addr;
mod config;
mod counters;
mod error;
pub mod mcast;
mod node;
pub mod ring;
mod spin;
mod tun;

pub use addr::{Route, Subnet};
pub use config::{IpConfig, INTERACTIVE_SPIN};
pub use counters::{CounterSnapshot, Counters};
pub use error::IpError;
pub use node::IpNode;
