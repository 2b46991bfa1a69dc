//! memchan between hosts: the hub transport.
//!
//! A node on any host opens one TCP link to the **hub**, the cluster's point of global
//! order. Every write a node sends goes up its link as a `Data` packet; the hub puts it
//! in the one global order and sends it down the links of its destinations as
//! `Deliver` packets, the sender's own local copy included. Each link carries CRC32C,
//! a frame counter and an AEGIS MAC under a key per direction (keyed clusters),
//! and go-back-N sequence numbers (see [`wire`] and `link.rs`).

#![warn(missing_docs)]

pub mod clock;
pub mod handshake;
pub mod hub;
pub mod link;
mod lock;
pub mod node;
mod outcomes;
pub mod proto;
pub mod rail;
mod rail_switch;
mod recent;
pub mod rma;
mod rx;
mod segment;
mod service;
mod state;
mod tx;
pub mod wire;
