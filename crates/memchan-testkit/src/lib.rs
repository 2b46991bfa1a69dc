//! memchan's test tooling: what the conformance suite and test workers use, and what
//! no application linking `memchan` should carry.
//!
//! - [`check`]: the pure checker of ordering rules 1 and 2 from senders' schedules and
//!   receivers' read logs;
//! - [`relay`]: a TCP relay that drops, corrupts, duplicates, reorders and delays link
//!   frames (the `memchan-relay` crate, re-exported: `memchan relay` links it without
//!   this kit);
//! - [`harness`]: multi-process tests: [`Worker`](harness::Worker) processes (the test
//!   binary re-executed), the [`Transport`](harness::Transport) a conformance test runs
//!   on, and the macros that run a test on every transport ([`every_transport!`],
//!   [`on_every_transport!`]);
//! - [`netns`]: network-namespace topologies (a hub namespace and host namespaces joined
//!   by veth pairs) and the faults a multi-host test inflicts on them (root only).
//!
//! Not published: it exists for this workspace's tests and tools.

pub mod check;
pub mod harness;
pub mod netns;
pub use memchan_relay as relay;
