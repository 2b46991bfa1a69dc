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
//! call on the data path. Across hosts, nodes join through a **hub** (`memchan hub
//! --listen HOST:PORT`, or one node hosting it in-process: the virtual hub of a
//! two-node cluster), over TCP links with CRC32C, a keyed MAC and retransmission
//! (`memchan-net`). [`Config::hub`] or the environment chooses:
//!
//! | variable | meaning |
//! |---|---|
//! | `MEMCHAN_HUB=HOST:PORT` | join through the hub there |
//! | `MEMCHAN_HUB_HOST=HOST:PORT` | host the hub in this process, listening there |
//! | `MEMCHAN_KEY_FILE=PATH` | the cluster key (its bytes); without one anyone who reaches the hub may join |
//!
//! See `ARCHITECTURE.md` for the layers.
//!
//! The crate's modules, one concept each, all re-exported here: `cluster`
//! ([`Cluster`]), `segment` ([`Segment`]), `mapping` ([`TxMapping`], [`RxMapping`]),
//! `lock` ([`Lock`], [`LockGuard`]), `rma` ([`Rma`], [`Pending`], [`PeerMemory`]), and
//! `flavor` (the list of transports every type dispatches over, [`TransportKind`]).

// First, so that its dispatch macros are in scope in the modules below.
#[macro_use]
mod flavor;
mod cluster;
mod lock;
mod mapping;
mod rma;
mod segment;

pub use cluster::Cluster;
pub use flavor::TransportKind;
pub use lock::{Lock, LockGuard};
pub use mapping::{RxMapping, TxMapping};
pub use rma::{PeerMemory, Pending, Rma};
pub use segment::Segment;

pub use memchan_core::deposit::{Cmp, CondResult, Outcome, Shape, SignalOp};
/// How memchan waits: the named idle strategies and their tuned numbers, for layers
/// above the contract (the message layer, the C API) to wait the same way.
pub use memchan_core::idle;
pub use memchan_core::rma::AtomicOp;
pub use memchan_core::transport::{Caps, WAIT_UNTIL_RECHECK};
pub use memchan_core::validate::{
    CLUSTER_NAME_LEN, EVENT_RING, MAX_SEGMENTS, MAX_SEGMENT_SIZE, NAME_LEN,
};
pub use memchan_core::{
    Config, Dest, Error, EventKind, GlobalTime, GroupId, HubListError, HubSpec, MembershipEvent,
    NodeId, NodeSet, PageSize, Result, RxAttrs, SegOwner, TxAttrs, MAX_GROUPS, MAX_NODES,
};

/// The README's Rust examples, compiled and run as doc-tests (its other blocks are
/// tagged with their language, so rustdoc leaves them alone).
#[cfg(doctest)]
#[doc = include_str!("../../../README.md")]
mod readme {}

/// The Rust guide's and the hub guide's examples, compiled and run as doc-tests.
#[cfg(doctest)]
#[doc = include_str!("../../../docs/guide/rust.md")]
mod guide_rust {}

#[cfg(doctest)]
#[doc = include_str!("../../../docs/guide/hub.md")]
mod guide_hub {}
