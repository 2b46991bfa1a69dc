//! The global clock (docs/spec.md, Semantics 10; seed 000): a time every node of a cluster
//! reads, with an accuracy bound measured at run time. This module holds what both
//! transports share and does no I/O: the reading ([`GlobalTime`]), the estimator a
//! node across hosts keeps from the hub's time packets ([`ClockSync`]) and the
//! measure of a clock read's cost ([`read_cost_ns`]). The transports read the clocks.
//!
//! **Across hosts.** The hub stamps time packets with its monotonic clock and sends
//! them in its one order, like every other frame it orders; a node also sends probes
//! stamped with its own clock, which the hub echoes. Let `off` be hub time minus the
//! node's local time. Causality alone bounds it, whatever the latencies:
//! - a time packet stamped `H` by the hub and received at local `L`: the hub stamped
//!   before the node received, so `off >= H - L` (a lower bound);
//! - a probe sent at local `t` and stamped `H` by the hub when it arrived:
//!   `off <= H - t` (an upper bound).
//!
//! The tightest bounds come from the fastest packets each way, and the interval
//! between them is as wide as the fastest downward plus the fastest upward latency
//! (at most the best round trip). A node's reading is the middle of that interval,
//! its bound half its width: seed 000's "twice the range of network latency" is this
//! width, measured between the fastest packets both ways (a latency's range runs
//! from its causal floor, zero, to what was observed), plus the handler time (the
//! cost of reading the local clock). The clocks' rates differ: the drift is the
//! slope of the lower bound between the oldest and newest halves of the window, and
//! each bound is carried forward to now by it, widened by its uncertainty times its
//! age. That uncertainty is twice the interval's width plus the window's range of
//! downward latency (the observed spread: the older half's fastest packet may have
//! been slower than the newer half's by that much), over the time between the two
//! halves.
//!
//! ```
//! use memchan_core::clock::ClockSync;
//! let mut s = ClockSync::new(25);
//! assert!(s.estimate(0).is_err()); // not synchronised yet
//! // The hub's clock runs 1_000_000 ns ahead; packets take 10..30 µs each way.
//! for k in 0..8u64 {
//!     let local = k * 10_000_000;
//!     s.down(local + 1_000_000 - 10_000 + 20_000, local + 20_000); // (hub H, local L)
//!     s.up(local, local + 1_000_000 + 10_000); // (local t, hub H)
//! }
//! let t = s.estimate(80_000_000).unwrap();
//! let truth = 80_000_000 + 1_000_000;
//! assert!(t.ns.abs_diff(truth) <= t.bound_ns, "{t:?}");
//! ```

use crate::error::{Error, Result};
use std::collections::VecDeque;

/// A reading of the cluster's clock: `ns` nanoseconds of the cluster's time base
/// (the hub's monotonic clock across hosts; the host's on one host), and the
/// accuracy bound: the cluster's time at the moment of the reading lies within
/// `ns ± bound_ns`. So two readings taken at the same moment on any two nodes differ
/// by at most the sum of their bounds.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
pub struct GlobalTime {
    /// The cluster's time, in nanoseconds.
    pub ns: u64,
    /// The accuracy bound, in nanoseconds: measured, never a constant.
    pub bound_ns: u64,
}

impl GlobalTime {
    /// Whether this reading and `other` can be readings of one moment: they differ by
    /// at most the sum of their bounds.
    pub fn agrees_with(&self, other: &GlobalTime) -> bool {
        self.ns.abs_diff(other.ns) <= self.bound_ns.saturating_add(other.bound_ns)
    }
}

/// Down samples kept (time packets): a hub sends the first window at 50 ms, then one
/// every 500 ms (memchan-hub's `time_plan.rs`).
pub const WINDOW: usize = 64;
const DOWN: usize = WINDOW;
/// Up samples kept (echoed probes).
const UP: usize = 16;
/// Down samples needed before the clock counts as synchronised (with one up sample):
/// enough to tell a drift between two halves of the window.
pub const SYNC_DOWN: usize = 8;

/// A node's estimate of the hub's clock from the hub's time packets and echoed probes
/// (see the module doc). Times are nanoseconds; local ones of the node's monotonic
/// clock, hub ones of the hub's.
#[derive(Debug, Clone)]
pub struct ClockSync {
    /// (local receive time L, H - L): lower bounds of the offset.
    down: VecDeque<(u64, i64)>,
    /// (local send time t, H - t): upper bounds of the offset.
    up: VecDeque<(u64, i64)>,
    /// The cost of one read of the local clock (the handler time of a reading).
    read_cost_ns: u64,
    /// Drift (offset change per local ns) and its uncertainty, from the window.
    drift: f64,
    drift_err: f64,
}

/// What a synchronised node knows about its clock, for `memchan status` and the bench.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ClockState {
    /// The offset interval's width now (the fastest down plus up latency), ns.
    pub width_ns: u64,
    /// The range of the downward latencies in the window, drift removed, ns.
    pub latency_range_ns: u64,
    /// The estimated drift of the hub's clock against this node's, parts per million.
    pub drift_ppm: f64,
    /// Down and up samples held.
    pub samples: (usize, usize),
}

impl ClockSync {
    /// An estimator whose readings cost `read_cost_ns` each (see [`read_cost_ns`]).
    pub fn new(read_cost_ns: u64) -> ClockSync {
        ClockSync {
            down: VecDeque::with_capacity(DOWN),
            up: VecDeque::with_capacity(UP),
            read_cost_ns,
            drift: 0.0,
            drift_err: 0.0,
        }
    }

    /// A time packet: stamped `hub` by the hub, received at `local`.
    pub fn down(&mut self, hub: u64, local: u64) {
        if self.down.len() == DOWN {
            self.down.pop_front();
        }
        self.down.push_back((local, hub.wrapping_sub(local) as i64));
        self.refit();
    }

    /// An echoed probe: sent at `local`, stamped `hub` when the hub received it.
    pub fn up(&mut self, local: u64, hub: u64) {
        if self.up.len() == UP {
            self.up.pop_front();
        }
        self.up.push_back((local, hub.wrapping_sub(local) as i64));
        self.refit();
    }

    /// Whether enough samples arrived to give a reading.
    pub fn synchronised(&self) -> bool {
        self.down.len() >= SYNC_DOWN && !self.up.is_empty()
    }

    /// Re-estimates the drift: the slope between the best (fastest) down sample of
    /// the older half of the window and of the newer half.
    fn refit(&mut self) {
        if self.down.len() < SYNC_DOWN {
            return;
        }
        let half = self.down.len() / 2;
        let best = |it: &mut dyn Iterator<Item = &(u64, i64)>| {
            it.max_by_key(|s| s.1).copied().unwrap_or((0, 0))
        };
        let a = best(&mut self.down.iter().take(half));
        let b = best(&mut self.down.iter().skip(half));
        let span = b.0.saturating_sub(a.0);
        if span == 0 {
            return;
        }
        let slope = (b.1 - a.1) as f64 / span as f64;
        // The newer end is known to within the interval's width; the older end's best
        // packet may have been slower than the newer's by up to the window's latency
        // range (a busy stretch): the slope is known to within both over the span.
        let width = self.width_at(b.0, slope, 0.0).max(0) as f64;
        self.drift = slope;
        // The range without the slope too: a slope fitted to a slow stretch would
        // explain part of it away.
        let range = self.latency_range(slope).max(self.latency_range(0.0));
        self.drift_err = (2.0 * width + range) / span as f64;
    }

    /// The range of the down samples' lower bounds with the drift `slope` taken out:
    /// how much the downward latency varied over the window.
    fn latency_range(&self, slope: f64) -> f64 {
        let resid = |&(t, v): &(u64, i64)| v as f64 - slope * (t as f64);
        let (mn, mx) = self
            .down
            .iter()
            .map(resid)
            .fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), r| {
                (a.min(r), b.max(r))
            });
        (mx - mn).max(0.0)
    }

    /// The offset bounds at local time `now`, each carried forward by `drift` and
    /// widened by `err` times its age: (lower, upper).
    fn bounds_at(&self, now: u64, drift: f64, err: f64) -> (f64, f64) {
        let carry = |(t, v): (u64, i64), sign: f64| {
            let age = now as f64 - t as f64;
            v as f64 + drift * age + sign * err * age.abs()
        };
        let lo = self
            .down
            .iter()
            .map(|&s| carry(s, -1.0))
            .fold(f64::NEG_INFINITY, f64::max);
        let hi = self
            .up
            .iter()
            .map(|&s| carry(s, 1.0))
            .fold(f64::INFINITY, f64::min);
        (lo, hi)
    }

    fn width_at(&self, now: u64, drift: f64, err: f64) -> i64 {
        let (lo, hi) = self.bounds_at(now, drift, err);
        (hi - lo) as i64
    }

    /// The hub's time at local time `now`, with its bound.
    ///
    /// # Errors
    /// [`Error::ClockNotSynchronised`] before [`SYNC_DOWN`] time packets and one echoed
    /// probe arrived.
    pub fn estimate(&self, now: u64) -> Result<GlobalTime> {
        if !self.synchronised() {
            return Err(Error::ClockNotSynchronised {
                time_packets: self.down.len(),
                probes: self.up.len(),
                needed: SYNC_DOWN,
            });
        }
        let (lo, hi) = self.bounds_at(now, self.drift, self.drift_err);
        // Upper below lower: the bounds disagree (a clock stepped, or the drift moved
        // faster than estimated); the reading then spans both, no tighter.
        let mid = (lo + hi) / 2.0;
        let half = (hi - lo).abs() / 2.0;
        Ok(GlobalTime {
            ns: (now as i64).wrapping_add(mid.round() as i64) as u64,
            // Saturating: samples a hub wrote (or a stepped clock) can make the bound
            // as wide as a u64 holds; the reading is then unbounded, not a panic.
            bound_ns: (half.ceil() as u64).saturating_add(self.read_cost_ns),
        })
    }

    /// What the estimate rests on now, or `None` before synchronisation.
    pub fn state(&self, now: u64) -> Option<ClockState> {
        if !self.synchronised() {
            return None;
        }
        let (lo, hi) = self.bounds_at(now, self.drift, self.drift_err);
        Some(ClockState {
            width_ns: (hi - lo).abs() as u64,
            latency_range_ns: self.latency_range(self.drift) as u64,
            drift_ppm: self.drift * 1e6,
            samples: (self.down.len(), self.up.len()),
        })
    }
}

/// The cost of one call of `read` (a clock read): the median of 63 back-to-back
/// differences, measured once by each transport and added to every bound as the
/// handler time of a reading. Never below 1 ns.
pub fn read_cost_ns(read: impl Fn() -> u64) -> u64 {
    let mut d: Vec<u64> = (0..63)
        .map(|_| {
            let a = read();
            let b = read();
            b.saturating_sub(a)
        })
        .collect();
    d.sort_unstable();
    d[d.len() / 2].max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A node whose clock runs `skew` ppm off the hub's and `off` ns behind, packets
    /// taking `lat(k)` ns: every reading holds the truth within its bound.
    fn run(off: i64, skew_ppm: f64, lat: impl Fn(u64) -> u64) {
        let hub_at = |local: u64| (local as f64 * (1.0 + skew_ppm * 1e-6)) as i64 + off;
        let mut s = ClockSync::new(20);
        let period = 25_000_000u64;
        for k in 0..200u64 {
            let t = 1_000_000_000 + k * period;
            let l = lat(k);
            // Down: stamped at t, received l later.
            s.down(hub_at(t) as u64, t + l);
            if k % 4 == 0 {
                // Up: sent at t + 1 ms, stamped l' later.
                let sent = t + 1_000_000;
                s.up(sent, hub_at(sent + lat(k + 7)) as u64);
            }
            if s.synchronised() {
                let now = t + period / 2;
                let g = s.estimate(now).unwrap();
                let truth = hub_at(now) as u64;
                assert!(
                    g.ns.abs_diff(truth) <= g.bound_ns,
                    "k {k}: {g:?} truth {truth} off by {}",
                    g.ns as i64 - truth as i64
                );
            }
        }
    }

    #[test]
    fn readings_hold_the_truth_within_their_bound() {
        run(5_000_000_000, 0.0, |_| 30_000);
        run(-3_000_000, 0.0, |k| 20_000 + (k * 7919 % 50_000));
        run(7_000, 40.0, |k| 10_000 + (k * 104_729 % 200_000));
        run(0, -25.0, |k| if k % 10 == 3 { 5_000_000 } else { 15_000 });
    }

    #[test]
    fn wild_samples_give_an_unbounded_reading_not_a_panic() {
        // Time packets a nanosecond apart with offsets far apart (a hostile hub, or
        // a clock stepped under a busy node): the fitted drift is known to no better
        // than ~1e18 per ns, so any later reading's bound saturates. It overflowed
        // (a panicking service thread, the node isolated) in a CI run.
        let mut c = ClockSync::new(5);
        for i in 0..SYNC_DOWN as u64 {
            let hub = if i % 2 == 0 { 0 } else { u64::MAX / 2 };
            c.down(hub, 1_000 + i);
        }
        c.up(1_000, 1_000);
        let t = c.estimate(1_000_000_000_000_000).unwrap();
        assert_eq!(t.bound_ns, u64::MAX);
    }

    #[test]
    fn a_slow_stretch_does_not_fake_a_drift() {
        // The first half of the window is all slow (2 ms), the rest fast (20 µs): the
        // drift estimate is off, and its uncertainty must cover that.
        run(123_456, 3.0, |k| if k < 40 { 2_000_000 } else { 20_000 });
        run(-9_999, 0.0, |k| {
            if (k / 16) % 2 == 0 {
                1_500_000
            } else {
                15_000
            }
        });
    }

    #[test]
    fn random_latencies_bursts_and_drifts_stay_within_the_bound() {
        // A small LCG: deterministic, no dependency.
        let mut seed = 0x2545_f491_4f6c_dd1du64;
        let mut next = move || {
            seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
            seed >> 33
        };
        // Fewer under miri, which runs this some thousand times slower.
        let configs = if cfg!(miri) { 3 } else { 300 };
        for _ in 0..configs {
            let off = next() as i64 - (1 << 30);
            let skew = (next() % 101) as f64 - 50.0;
            let base = 5_000 + next() % 100_000;
            let jitter = 1 + next() % 300_000;
            let burst_len = 1 + next() % 48;
            let burst = next() % 5_000_000;
            let salt = next();
            run(off, skew, move |k| {
                let h = (k ^ salt).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 40;
                let slow = (k / burst_len + salt) % 3 == 0;
                base + h % jitter + if slow { burst } else { 0 }
            });
        }
    }

    #[test]
    fn bound_follows_the_latencies() {
        let mut fast = ClockSync::new(20);
        let mut slow = ClockSync::new(20);
        for k in 0..32u64 {
            let t = k * 10_000_000;
            fast.down(t + 1_000, t + 2_000);
            fast.up(t, t + 1_000);
            slow.down(t + 1_000, t + 501_000);
            slow.up(t, t + 500_000);
        }
        let (f, s) = (
            fast.estimate(400_000_000).unwrap(),
            slow.estimate(400_000_000).unwrap(),
        );
        assert!(f.bound_ns < s.bound_ns, "{f:?} {s:?}");
        assert!(s.bound_ns >= 500_000, "half of a 1 ms round trip: {s:?}");
    }

    #[test]
    fn not_synchronised_until_both_ways() {
        let mut s = ClockSync::new(20);
        for k in 0..SYNC_DOWN as u64 {
            s.down(k, k);
        }
        assert!(matches!(
            s.estimate(10),
            Err(Error::ClockNotSynchronised {
                time_packets: SYNC_DOWN,
                probes: 0,
                needed: SYNC_DOWN,
            })
        ));
        s.up(9, 9);
        assert!(s.estimate(10).is_ok());
        assert!(s.state(10).is_some());
    }

    #[test]
    fn read_cost_is_a_median() {
        let n = std::cell::Cell::new(0u64);
        let c = read_cost_ns(|| {
            n.set(n.get() + 5);
            n.get()
        });
        assert_eq!(c, 5);
    }
}
