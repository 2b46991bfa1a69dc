//! What both ends of a memchan hub link speak: the node side (`memchan-net`) and the
//! hub (`memchan-hub`) each depend on this crate, and on neither of each other's
//! modules.
//!
//! - [`wire`]: the frame format and its decoder, the only code that parses bytes from
//!   the network (CRC32C, a frame counter, an AEGIS MAC under a key per direction);
//! - [`proto`]: the payloads of the frames (join, welcome, data, deliver, requests,
//!   events, heartbeats, time packets, deposits, remote accesses) and the hub's coded
//!   answers ([`proto::reply`]);
//! - [`handshake`]: Hello, Join, Welcome or Refuse, before a link exists;
//! - [`link`]: the go-back-N link over a TCP socket (retransmission, NAK, replay
//!   memory, back-pressure, the hand-over of a link to a standby hub);
//! - [`rail`]: the dual-rail protocol, what a node records of the hub's order and the
//!   standby's plan for ordering again what a lost hub left half delivered.

#![warn(missing_docs)]

pub mod handshake;
pub mod link;
pub mod proto;
pub mod rail;
pub mod wire;
