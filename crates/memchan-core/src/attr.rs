//! Page control attributes (docs/spec.md, Concepts; seed 000 figure 2) and transmit destinations.

use crate::names::{GroupId, NodeId};

/// Where a tx mapping sends: one node, a multicast group, or every node.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Dest {
    /// Point-to-point to one node.
    Node(NodeId),
    /// Multicast to the members of a group.
    Group(GroupId),
    /// Broadcast to every node that maps the segment rx.
    Broadcast,
}

/// Transmit-side attributes of a tx mapping.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxAttrs {
    /// Writes are sent; when false a write fails with `TransmitDisabled`.
    pub transmit_enable: bool,
    /// The sender's own rx mapping receives an ordered copy of each write.
    pub local_copy: bool,
    /// Every write asks its destinations to acknowledge: the write returns once applied
    /// everywhere (an implicit `ack()` after each write).
    pub ack_request: bool,
    /// Point-to-point writes are still sent while the node is isolated (error recovery
    /// pages). Ordered packets of an isolated node are always refused: they would pass
    /// the point of global order.
    pub transmit_under_error: bool,
}

impl Default for TxAttrs {
    fn default() -> Self {
        TxAttrs {
            transmit_enable: true,
            local_copy: false,
            ack_request: false,
            transmit_under_error: false,
        }
    }
}

/// Receive-side attributes of an rx mapping, set per mapping and changeable per page.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RxAttrs {
    /// Writes to the page are applied; when false they are dropped, as on MEMORY CHANNEL.
    pub receive_enable: bool,
    /// A write landing on the page wakes readers blocked in `wait`.
    pub notify: bool,
    /// Other nodes may read the page (`Rma::get`) and apply atomics to its words
    /// (`Rma::fetch_add_u64`, ...) without this node taking part. Off by default: a
    /// node opens its memory to remote access page by page, as MEMORY CHANNEL 2's page
    /// control table does.
    pub remote_read: bool,
}

impl Default for RxAttrs {
    fn default() -> Self {
        RxAttrs {
            receive_enable: true,
            notify: false,
            remote_read: false,
        }
    }
}

impl RxAttrs {
    /// The attribute bits as stored in the page control table byte.
    pub fn bits(self) -> u8 {
        u8::from(self.receive_enable)
            | (u8::from(self.notify) << 1)
            | (u8::from(self.remote_read) << 2)
    }

    /// Attributes from a page control table byte.
    pub fn from_bits(b: u8) -> RxAttrs {
        RxAttrs {
            receive_enable: b & 1 != 0,
            notify: b & 2 != 0,
            remote_read: b & RX_REMOTE_READ != 0,
        }
    }
}

/// The page control byte's remote-read bit (see [`RxAttrs::remote_read`]): both
/// transports test it on the target's side before serving a get or an atomic.
pub const RX_REMOTE_READ: u8 = 4;
