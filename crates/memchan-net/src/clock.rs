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
//! The frames' payloads are `memchan_link::proto::clock`; this is the node's side
//! ([`NodeClock`]).

use memchan_core::clock::{ClockState, ClockSync, GlobalTime};
use memchan_core::Result;
use memchan_link::proto::clock::{get_time, mono_ns, read_cost};
use std::sync::Mutex;

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
    use memchan_link::proto::clock::time;

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
