//! Membership events: every node sees the same events in the same order, whatever
//! the transport.

use crate::names::NodeId;

/// What happened to a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// The node joined.
    Joined,
    /// The node left cleanly.
    Left,
    /// The node died or hung and was isolated.
    Failed,
}

/// A membership change, seen by every node in the same order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MembershipEvent {
    /// The epoch this change started.
    pub epoch: u64,
    /// The node concerned.
    pub node: NodeId,
    /// Its incarnation (a rejoin gets a new one).
    pub incarnation: u64,
    /// What happened.
    pub kind: EventKind,
}
