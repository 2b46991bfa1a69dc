//! The global clock through a hub (docs/spec.md, Semantics 10; the estimate itself is
//! `memchan_core::clock`). The cluster's time is the hub's monotonic clock.
//!
//! - The hub's timer sends every member a `Time` frame each clock period (half a
//!   heartbeat by default), stamped under the hub lock: a time packet takes its place
//!   in the hub's one order like a `Deliver`, on the same reliable link.
//! - A node sends a `TimeProbe` control frame with its own clock once per heartbeat;
//!   the hub stamps it on arrival and answers with a `Time` frame that echoes it.
//! - The node stamps each `Time` frame when it handles it (`Shared::on_frame`) and
//!   feeds [`ClockSync`]: a lower bound of the offset from every frame, an upper bound
//!   from every echo. A node in the hub's process reads the hub's clock itself.
//!
//! Frames (little-endian): `Time` = hub ns (u64), echoed probe ns (u64, 0: none);
//! `TimeProbe` = node ns (u64), the node's current bound (u64, 0: not synchronised;
//! `memchan status` shows it). Anything else is ignored: a malformed time frame is
//! no sample.

use crate::wire::Get;
use memchan_core::clock::{read_cost_ns, ClockState, ClockSync, GlobalTime};
use memchan_core::Result;
use std::sync::{Mutex, OnceLock};

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

/// A node's clock state: the estimator its `Time` frames feed.
pub(crate) struct NodeClock {
    sync: Mutex<ClockSync>,
}

impl NodeClock {
    pub(crate) fn new() -> NodeClock {
        NodeClock {
            sync: Mutex::new(ClockSync::new(read_cost())),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, ClockSync> {
        self.sync.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// A `Time` frame, handled at local time `now`.
    pub(crate) fn on_time(&self, payload: &[u8], now: u64) {
        let Some((hub, echo)) = get_time(payload) else {
            return;
        };
        let mut s = self.lock();
        s.down(hub, now);
        // An echo from the future is no probe of ours: ignore it.
        if echo != 0 && echo <= now {
            s.up(echo, hub);
        }
    }

    pub(crate) fn global_time(&self) -> Result<GlobalTime> {
        self.lock().estimate(mono_ns())
    }

    pub(crate) fn state(&self) -> Option<ClockState> {
        self.lock().state(mono_ns())
    }
}

/// A reading of the hub's own clock (the hub's process reads it directly).
pub(crate) fn hub_time() -> GlobalTime {
    GlobalTime {
        ns: mono_ns(),
        bound_ns: read_cost(),
    }
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

    #[test]
    fn a_node_syncs_from_time_frames() {
        let c = NodeClock::new();
        assert!(c.global_time().is_err());
        let now = mono_ns();
        for k in 0..memchan_core::clock::SYNC_DOWN as u64 {
            let t = now + k * 1_000_000;
            c.on_time(&time(t + 500, t - 500), t + 1_000);
        }
        let g = c.global_time().unwrap();
        assert!(g.bound_ns >= 500, "{g:?}");
        assert!(c.state().is_some());
    }
}
