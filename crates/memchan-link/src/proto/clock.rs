//! The global clock's frames (SPEC Semantics 10; the estimate is
//! `memchan_core::clock`, the node's estimator `memchan-net`'s `clock.rs`): the
//! cluster's time is the hub's monotonic clock ([`mono_ns`]).
//!
//! Frames (little-endian): `Time` = hub ns (u64), echoed probe ns (u64, 0: none);
//! `TimeProbe` = node ns (u64), the node's current bound (u64, 0: not synchronised;
//! `memchan status` shows it). Anything else is ignored: a malformed time frame is
//! no sample.

use crate::wire::Get;
use memchan_core::clock::read_cost_ns;
use std::sync::OnceLock;

/// This process's monotonic clock, in ns (the hub's is the cluster's time).
pub fn mono_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// The cost of one read of [`mono_ns`], measured once.
pub fn read_cost() -> u64 {
    static COST: OnceLock<u64> = OnceLock::new();
    *COST.get_or_init(|| read_cost_ns(mono_ns))
}

/// A `Time` frame's payload.
pub fn time(hub_ns: u64, echo_ns: u64) -> [u8; 16] {
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&hub_ns.to_le_bytes());
    b[8..].copy_from_slice(&echo_ns.to_le_bytes());
    b
}

/// A `Time` frame's (hub ns, echoed probe ns).
pub fn get_time(b: &[u8]) -> Option<(u64, u64)> {
    let mut g = Get::new(b, "time packet");
    Some((g.u64().ok()?, g.u64().ok()?))
}

/// A `TimeProbe` frame's payload.
pub fn probe(node_ns: u64, bound_ns: Option<u64>) -> [u8; 16] {
    let mut b = [0u8; 16];
    b[..8].copy_from_slice(&node_ns.to_le_bytes());
    b[8..].copy_from_slice(&bound_ns.unwrap_or(0).to_le_bytes());
    b
}

/// A `TimeProbe` frame's node ns (never 0: 0 means "no probe" in a `Time` frame) and
/// the bound it reports (`None`: not synchronised).
pub fn get_probe(b: &[u8]) -> Option<(u64, Option<u64>)> {
    let mut g = Get::new(b, "time probe");
    let t = g.u64().ok().filter(|&t| t != 0)?;
    let bound = g.u64().ok()?;
    Some((t, (bound != 0).then_some(bound)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_refuse_garbage() {
        assert_eq!(get_time(&time(5, 7)), Some((5, 7)));
        assert_eq!(get_time(&[1, 2, 3]), None);
        assert_eq!(get_probe(&probe(9, Some(5))), Some((9, Some(5))));
        assert_eq!(get_probe(&probe(9, None)), Some((9, None)));
        assert_eq!(get_probe(&probe(0, Some(5))), None);
        assert_eq!(get_probe(&[1; 8]), None);
        assert_eq!(get_probe(&[]), None);
    }
}
