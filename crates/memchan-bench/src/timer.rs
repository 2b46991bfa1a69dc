//! The bench's timer: the time-stamp counter read behind an `lfence`, so that
//! every sample of every measurement (memchan, references and the C peers, which
//! use the same `lfence; rdtsc; lfence` sequence) is timed the same way.
//!
//! The coordinator calibrates the counter once against [`Instant`] (~50 ms)
//! and hands the frequency to the workers and peers on their command lines.

use std::time::{Duration, Instant};

/// Reads the time-stamp counter (ticks).
#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn ticks() -> u64 {
    use core::arch::x86_64::{_mm_lfence, _rdtsc};
    // SAFETY: `lfence` and `rdtsc` are available on every x86_64 CPU and have
    // no memory-safety preconditions; the fences only order the read.
    unsafe {
        _mm_lfence();
        let t = _rdtsc();
        _mm_lfence();
        t
    }
}

/// Fallback for other architectures: nanoseconds since the first call.
#[cfg(not(target_arch = "x86_64"))]
#[inline(always)]
pub fn ticks() -> u64 {
    use std::sync::OnceLock;
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_nanos() as u64
}

/// A calibrated counter: `ghz` ticks per nanosecond.
#[derive(Debug, Clone, Copy)]
pub struct Clock {
    pub ghz: f64,
}

impl Clock {
    /// Calibrates the counter against the monotonic clock over `span`, and
    /// reports the smallest step the counter takes (some hypervisors and AMD
    /// parts advance it in steps of tens of ticks).
    pub fn calibrate(span: Duration) -> (Clock, f64) {
        let i0 = Instant::now();
        let c0 = ticks();
        while i0.elapsed() < span {
            std::hint::spin_loop();
        }
        let c1 = ticks();
        let ns = i0.elapsed().as_nanos() as f64;
        let ghz = (c1.wrapping_sub(c0)) as f64 / ns;
        let clock = Clock {
            ghz: if ghz.is_finite() && ghz > 0.0 {
                ghz
            } else {
                1.0
            },
        };
        // Resolution: the greatest common divisor of many read-to-read
        // differences (a read costs more than one step on some machines, so
        // the smallest difference would overstate the step).
        let mut step: u64 = 0;
        let mut prev = ticks();
        for _ in 0..20_000 {
            let t = ticks();
            step = gcd(step, t.wrapping_sub(prev));
            prev = t;
        }
        let step_ns = clock.ns(step);
        (clock, step_ns)
    }

    /// Converts a tick count to nanoseconds.
    #[inline]
    pub fn ns(&self, ticks: u64) -> f64 {
        ticks as f64 / self.ghz
    }
}

fn gcd(mut a: u64, mut b: u64) -> u64 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

/// Cost of one [`ticks`] read, in ns (median of batches of 1000 reads).
pub fn read_cost_ns(clock: &Clock) -> f64 {
    let mut v: Vec<f64> = (0..31)
        .map(|_| {
            let t0 = ticks();
            for _ in 0..1000 {
                std::hint::black_box(ticks());
            }
            clock.ns(ticks().wrapping_sub(t0)) / 1000.0
        })
        .collect();
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Spins until `ready()` holds; fails after `timeout` (checked every 4096
/// polls). Each poll is followed by a `pause` (`spin_loop` hint): measured on
/// this machine it makes the cache-line ping-pong ~5 ns faster one way (no
/// memory-order machine clear when the line finally changes), so the limit
/// and memchan, which both wait through here, get the faster loop.
#[inline]
pub fn spin_until(
    mut ready: impl FnMut() -> bool,
    timeout: Duration,
    what: &str,
) -> anyhow::Result<()> {
    let mut n: u32 = 0;
    let mut deadline: Option<Instant> = None;
    loop {
        if ready() {
            return Ok(());
        }
        std::hint::spin_loop();
        n = n.wrapping_add(1);
        if n.is_multiple_of(4096) {
            let d = *deadline.get_or_insert_with(|| Instant::now() + timeout);
            if Instant::now() > d {
                anyhow::bail!("timed out after {timeout:?} waiting for {what}");
            }
        }
    }
}
