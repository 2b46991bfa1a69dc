//! memchan's test tooling: what the conformance suite, the CLI's `memchan relay` and
//! test workers use, and what no application linking `memchan` should carry.
//!
//! - [`check`]: the pure checker of ordering rules 1 and 2 from senders' schedules and
//!   receivers' read logs;
//! - [`relay`]: a TCP relay that drops, corrupts, duplicates, reorders and delays link
//!   frames.
//!
//! Not published: it exists for this workspace's tests and tools.

pub mod check;
pub mod relay;
