//! The global clock on one host (docs/spec.md, Semantics 10): the host's monotonic clock, which
//! every process on it reads from the same invariant TSC (`constant_tsc` and
//! `nonstop_tsc` in `/proc/cpuinfo`, so it runs at one rate on every core and in
//! every power state), with an accuracy bound measured once per process.
//!
//! - **Time namespaces.** A process in a time namespace reads `CLOCK_MONOTONIC` moved
//!   by its namespace's offset; the offset (`/proc/self/timens_offsets`, read once)
//!   is taken back out, so every node on the host reads the host's clock.
//! - **The bound** is what a reading can be off by: how far two cores' readings of one
//!   moment can differ, plus the read's own cost. The first measure is the kernel's
//!   TSC warp check done in user space: a thread on the first allowed CPU and one on
//!   each other CPU pass a cache line back and forth, each stamping the clock; a stamp
//!   on the far core was taken after the near core's stamp before it and before the
//!   one after it, which bounds the cores' difference to an interval; intersected
//!   over the rounds, its larger end (about one cache-line transfer: the measurement
//!   cannot see below that) is the cross-core part. The read cost is the median of
//!   back-to-back reads (`memchan_core::clock::read_cost_ns`).

use memchan_core::clock::{read_cost_ns, GlobalTime};
use memchan_core::idle::CLOCK_PAIR;
use memchan_core::{Error, Result};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// The measured parts of the one-host bound (for the bench and `memchan status`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Calibration {
    /// The largest difference two cores' readings of one moment can have, as measured.
    pub cross_core_ns: u64,
    /// One read of the clock.
    pub read_cost_ns: u64,
    /// CPUs measured against the first (0 on a single CPU).
    pub cpus: usize,
}

/// Rounds per CPU pair, and how long one pair may take at most (a busy machine slows
/// rounds down; the intersection needs only a few good ones).
const ROUNDS: u64 = 256;
const PAIR_BUDGET: Duration = Duration::from_millis(20);
/// A pair that completes no round in this long (its CPU never runs the thread) fails.
const PAIR_DEADLINE: Duration = Duration::from_secs(5);

/// CLOCK_MONOTONIC in ns: shared by every process on the host, so heartbeats compare.
pub(crate) fn now_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// The host's monotonic clock in nanoseconds, this process's time-namespace offset
/// taken out.
pub(crate) fn host_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    let ns = t.tv_sec as i64 * 1_000_000_000 + t.tv_nsec as i64;
    (ns - timens_offset_ns()) as u64
}

/// This process's time namespace's monotonic offset (0 outside one).
fn timens_offset_ns() -> i64 {
    static OFF: OnceLock<i64> = OnceLock::new();
    *OFF.get_or_init(|| {
        let text = std::fs::read_to_string("/proc/self/timens_offsets").unwrap_or_default();
        parse_timens(&text)
    })
}

/// The `monotonic SECS NSECS` line of `/proc/self/timens_offsets`, in ns.
fn parse_timens(text: &str) -> i64 {
    text.lines()
        .find_map(|l| {
            let mut w = l.split_whitespace();
            if w.next()? != "monotonic" {
                return None;
            }
            let s: i64 = w.next()?.parse().ok()?;
            let n: i64 = w.next()?.parse().ok()?;
            Some(s.saturating_mul(1_000_000_000).saturating_add(n))
        })
        .unwrap_or(0)
}

/// The calibration of this process, measured on first use.
///
/// # Errors
/// `Timeout` if a CPU never ran the measuring thread.
pub fn calibration() -> Result<Calibration> {
    static CAL: OnceLock<Calibration> = OnceLock::new();
    if let Some(c) = CAL.get() {
        return Ok(*c);
    }
    let c = measure()?;
    Ok(*CAL.get_or_init(|| c))
}

/// A reading of the host's clock with its bound.
pub(crate) fn global_time() -> Result<GlobalTime> {
    let c = calibration()?;
    Ok(GlobalTime {
        ns: host_ns(),
        bound_ns: c.cross_core_ns + c.read_cost_ns,
    })
}

fn measure() -> Result<Calibration> {
    let read_cost = read_cost_ns(host_ns);
    let saved = rustix::thread::sched_getaffinity(None).ok();
    let cpus: Vec<usize> = match &saved {
        Some(set) => (0..rustix::thread::CpuSet::MAX_CPU)
            .filter(|&c| set.is_set(c))
            .collect(),
        None => Vec::new(),
    };
    let mut cross = Ok(0u64);
    if let Some((&first, others)) = cpus.split_first() {
        for &c in others {
            cross = cross.and_then(|x| Ok(x.max(warp(first, c)?)));
        }
    }
    // The calling thread was pinned for the measurement: give it back its CPUs.
    if let Some(set) = saved {
        let _ = rustix::thread::sched_setaffinity(None, &set);
    }
    let cross = cross?;
    let cal = Calibration {
        cross_core_ns: cross,
        read_cost_ns: read_cost,
        cpus: cpus.len().saturating_sub(1),
    };
    tracing::debug!(?cal, "global clock calibrated");
    Ok(cal)
}

/// How far CPU `b`'s clock readings can be from CPU `a`'s (see the module doc).
fn warp(a: usize, b: usize) -> Result<u64> {
    // turn: 2k + 1 after the near thread stamped round k, 2k + 2 after the far one.
    let turn = AtomicU64::new(0);
    let far_stamp = AtomicU64::new(0);
    let stop = AtomicU64::new(u64::MAX);
    let (lo, hi, rounds) = std::thread::scope(|s| {
        s.spawn(|| {
            pin(b);
            let mut k = 0u64;
            loop {
                let want = 2 * k + 1;
                let mut idle = CLOCK_PAIR.waiter();
                loop {
                    let t = turn.load(Ordering::Acquire);
                    if t == want {
                        break;
                    }
                    if stop.load(Ordering::Acquire) <= k {
                        return;
                    }
                    idle.idle();
                }
                far_stamp.store(host_ns(), Ordering::Relaxed);
                turn.store(want + 1, Ordering::Release);
                k += 1;
            }
        });
        pin(a);
        let (mut lo, mut hi) = (i64::MIN, i64::MAX);
        let start = Instant::now();
        let mut k = 0u64;
        while k < ROUNDS && (k < 16 || start.elapsed() < PAIR_BUDGET) {
            let t1 = host_ns();
            turn.store(2 * k + 1, Ordering::Release);
            let mut idle = CLOCK_PAIR.waiter();
            let mut gave_up = false;
            while turn.load(Ordering::Acquire) != 2 * k + 2 {
                if start.elapsed() > PAIR_DEADLINE {
                    gave_up = true;
                    break;
                }
                idle.idle();
            }
            if gave_up {
                break;
            }
            let t3 = host_ns();
            let t2 = far_stamp.load(Ordering::Relaxed);
            // far - near lies in (t2 - t3, t2 - t1).
            lo = lo.max(t2 as i64 - t3 as i64);
            hi = hi.min(t2 as i64 - t1 as i64);
            k += 1;
        }
        stop.store(k, Ordering::Release);
        (lo, hi, k)
    });
    if rounds == 0 {
        return Err(Error::Timeout(
            PAIR_DEADLINE,
            "the global clock's cross-core measurement (a CPU never ran its thread)",
        ));
    }
    // Empty intersection (the clocks moved during the measurement): the widest view.
    Ok(lo.unsigned_abs().max(hi.unsigned_abs()))
}

/// Pins the calling thread to `cpu` (best effort: unpinned, the measure still holds for
/// whatever cores the threads ran on).
fn pin(cpu: usize) {
    let mut set = rustix::thread::CpuSet::new();
    set.set(cpu);
    let _ = rustix::thread::sched_setaffinity(None, &set);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timens_offsets_parse() {
        assert_eq!(
            parse_timens("monotonic 5000 7\nboottime 0 0\n"),
            5_000_000_000_007
        );
        assert_eq!(parse_timens("monotonic   -3   0\n"), -3_000_000_000);
        assert_eq!(parse_timens(""), 0);
        assert_eq!(parse_timens("monotonic x y"), 0);
    }

    #[test]
    fn calibration_is_measured_and_readings_move_forward() {
        let a = global_time().unwrap();
        let b = global_time().unwrap();
        assert!(b.ns >= a.ns);
        let c = calibration().unwrap();
        assert!(c.read_cost_ns >= 1);
        assert_eq!(a.bound_ns, c.cross_core_ns + c.read_cost_ns);
    }
}
