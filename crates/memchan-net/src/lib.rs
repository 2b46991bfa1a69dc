//! memchan between hosts, the node side of the hub transport.
//!
//! A node on any host opens one TCP link to the **hub**, the cluster's point of global
//! order. Every write a node sends goes up its link as a `Data` packet; the hub puts it
//! in the one global order and sends it down the links of its destinations as
//! `Deliver` packets, the sender's own local copy included. Each link carries CRC32C,
//! a frame counter and an AEGIS MAC under a key per direction (keyed clusters),
//! and go-back-N sequence numbers (`memchan_link`).
//!
//! Three crates: `memchan-link` is what both ends speak (frames, codecs, handshake,
//! link, dual-rail protocol), `memchan-hub` the hub server, and this crate the node
//! side, which depends on the hub only to host one in its own process (the virtual
//! hub of a two-node cluster, `HubSpec::Host`).
//!
//! Codemap: [`node`] (the joined [`node::Node`] and its requests) over `state.rs`
//! (what its handles share), `service.rs` (the service thread and the dispatch of
//! what the hub sends), `segment.rs`, `tx.rs`, `mapping.rs` (the rx mapping; `rx.rs` the
//! memory), `lock.rs`, `rma.rs` (`rma/serve.rs` the target's side), `rail_switch.rs`,
//! `clock.rs`, `outcomes.rs`; [`query_status`] asks a hub for its status.

#![warn(missing_docs)]

mod clock;
mod direct;
mod domain;
mod lock;
mod mapping;
pub mod node;
mod outcomes;
mod query;
mod rail_switch;
mod recent;
mod rma;
mod rx;
mod segment;
mod service;
mod state;
mod tx;

pub use query::{query_status, QueryError};
