//! The memchan side of every figure, kept in this one module so the library
//! can be plugged in (or changed) without touching the references.
//!
//! Each measurement runs exactly like its reference: two worker processes
//! pinned to the same cores, timed with the same counter and, for latencies,
//! through the same generic ping-pong driver ([`super::pingpong`]).
//!
//! STATUS: the `memchan` library API is not wired in yet; [`available`]
//! reports why and the bench prints the references and peers alone.

use anyhow::{bail, Result};

use super::clock::Clock;
use super::worker::{Kind, Launcher, WorkerArgs, WorkerOutput};
use super::{Config, SampleSet};

/// `Ok(())` when the memchan measurements can run, else the reason they are
/// skipped (printed once).
pub fn available() -> Result<(), String> {
    Err("memchan library API not wired into the bench yet (src/bench/memchan_side.rs)".into())
}

/// The memchan measurements of one round, in the order they interleave with
/// the references: returns the kinds to run right after `after`.
pub fn kinds_after(after: super::Step) -> &'static [Kind] {
    use super::Step;
    match after {
        Step::Cacheline => &[Kind::MemchanLatency],
        Step::Memcpy => &[Kind::MemchanBandwidth],
        Step::StoreFence => &[
            Kind::MemchanOverhead,
            Kind::MemchanAck,
            Kind::MemchanLock,
            Kind::MemchanBarrier,
            Kind::MemchanNotify,
        ],
        _ => &[],
    }
}

/// Coordinator side: runs one memchan measurement (both workers) and adds its
/// samples to `set`.
pub fn measure(_kind: Kind, _l: &mut Launcher, _cfg: &Config, _set: &mut SampleSet, _round: usize) -> Result<()> {
    bail!("memchan measurements are not wired in yet")
}

/// Worker side of a memchan measurement.
pub fn worker(kind: Kind, _a: &WorkerArgs, _clock: &Clock) -> Result<WorkerOutput> {
    bail!("{kind:?}: memchan measurements are not wired in yet")
}
