//! When the receive thread may busy-poll.
//!
//! A spin after request/response traffic saves the two thread wake-ups a packet
//! otherwise costs beyond a veth's path (the transmit thread reading the TUN device,
//! the receive thread woken by the record's word). On a busy machine spinning delays
//! packets and the programs the spinner serves: measured on the 2-core VM beside one
//! busy loop, 8-byte TCP latency 39-41 µs without spinning, 45-63 µs spinning 40 µs
//! windows, 92 µs with 200 µs windows. So each window's share of the CPU (thread CPU
//! time / wall time) feeds a slow moving average, and below [`MIN_SHARE`] the thread
//! stops spinning for [`RETRY`] (doubling up to [`LONGEST_PAUSE`] while spells of
//! spinning keep ending so), then starts again from just above the floor. Measured
//! with 40 µs windows: the average share was 0.51-0.69 per node on the idle VM and
//! 0.25-0.36 beside the busy loop (a window alone varies far more: 0.2-1.0).
//!
//! The spinner keeps the thread's own priority and yields the core each turn.
//! Tried and dropped (2026-11-28): spinning at `SCHED_IDLE` (idle VM 0.99-1.18x a
//! veth's latency, against 1.15-1.58x at its own priority) and at nice 19
//! (1.26-1.49x): the spinner is the one thread that moves the rings, and a thread of
//! low priority is starved while normal threads fill every core: beside two busy
//! loops exchanges stalled for up to 446 ms at `SCHED_IDLE` (p90 128 ms) and 62 ms
//! at nice 19 (p90 36 ms), against a p90 of 1.3-1.9 ms without spinning or spinning
//! at the thread's own priority.

use std::time::{Duration, Instant};

/// Below this average share of the CPU in its windows the thread stops spinning.
pub const MIN_SHARE: f64 = 0.42;
/// How long a thread that stopped spinning first waits before it spins again.
pub const RETRY: Duration = Duration::from_millis(100);
/// The longest pause: pauses double while spinning stays short-lived.
pub const LONGEST_PAUSE: Duration = Duration::from_millis(1600);
/// Where the average starts.
const START: f64 = 0.55;
/// Where it starts again after a pause: just above [`MIN_SHARE`], so that on a
/// machine still busy a few windows (~20 at a share of 0.33, against ~60 from
/// [`START`]) pause it again, while on an idle one (windows averaging 0.5-0.7) the
/// average climbs away from the floor.
const RESUME: f64 = 0.45;
/// A spell of spinning this many windows long resets the pause to [`RETRY`].
const SETTLED: u32 = 64;
/// Windows shorter than this say little (the clocks' own cost) and are not counted.
const MIN_WINDOW: Duration = Duration::from_micros(5);
/// Weight of the newest window in the average: slow, since single windows vary
/// widely (standard deviation ~0.25) and the idle and busy averages are ~0.15 apart.
const WEIGHT: f64 = 1.0 / 64.0;

/// The spin policy of one thread: the moving average of its share of the CPU.
#[derive(Debug)]
pub struct SpinShare {
    share: f64,
    /// While paused: when spinning may start again.
    resume_at: Option<Instant>,
    /// The next pause.
    pause: Duration,
    /// Windows counted since spinning (re)started.
    windows: u32,
}

impl Default for SpinShare {
    fn default() -> Self {
        SpinShare {
            share: START,
            resume_at: None,
            pause: RETRY,
            windows: 0,
        }
    }
}

impl SpinShare {
    /// Whether a spin may start `now`.
    pub fn may_spin(&mut self, now: Instant) -> bool {
        match self.resume_at {
            Some(t) if now < t => false,
            Some(_) => {
                self.resume_at = None;
                self.share = RESUME;
                self.windows = 0;
                true
            }
            None => true,
        }
    }

    /// Counts a finished window: `wall` long, of which the thread ran `cpu`. True if
    /// the thread pauses spinning after it ([`RETRY`], doubling up to
    /// [`LONGEST_PAUSE`] while each spell of spinning ends before it settles).
    pub fn record(&mut self, wall: Duration, cpu: Duration, now: Instant) -> bool {
        if wall < MIN_WINDOW {
            return false;
        }
        let s = (cpu.as_secs_f64() / wall.as_secs_f64()).min(1.0);
        self.share += WEIGHT * (s - self.share);
        self.windows = self.windows.saturating_add(1);
        if self.windows == SETTLED {
            self.pause = RETRY;
        }
        if self.share < MIN_SHARE {
            self.resume_at = Some(now + self.pause);
            self.pause = (self.pause * 2).min(LONGEST_PAUSE);
            return true;
        }
        false
    }

    /// The current average share.
    #[cfg(test)]
    fn share(&self) -> f64 {
        self.share
    }
}

/// The shortest interactive spin window, where a [`SpinWindow`] starts.
pub const FIRST_WINDOW: Duration = Duration::from_micros(10);

/// How long the interactive spin lasts, adapted to the traffic in the manner of
/// KVM's halt polling: when the next packet came after the window ended but within
/// the longest window, that window would have caught it, and the window opens to
/// it at once; when it came later (an idle gap, not an exchange), spinning was
/// wasted, and the window halves, down to [`FIRST_WINDOW`]. A packet caught while
/// spinning leaves it as it is. So a ping-pong whose round trip is under the
/// longest window is caught at every turn after its first, one late turn costs one
/// wake-up rather than a climb back, and sparse requests spin only short windows.
///
/// Measured on the 2-core VM with the bench's 8-byte TCP ping-pong (66 µs median
/// round trip, a long tail), five runs each: fixed 100 µs windows 1.02-1.33x a
/// veth's latency (fixed 40 µs: 1.30-1.49x), fixed 200 µs 0.92-1.18x, this window
/// up to 200 µs 0.83-1.37x (median 1.04x; a window doubling from 10 µs and falling
/// back to it after each gap: 1.04-1.29x, median 1.15x).
#[derive(Debug)]
pub struct SpinWindow {
    len: Duration,
    longest: Duration,
}

impl SpinWindow {
    /// A window that adapts up to `longest` (zero: never spins).
    pub fn new(longest: Duration) -> SpinWindow {
        SpinWindow {
            len: FIRST_WINDOW.min(longest),
            longest,
        }
    }

    /// The current window.
    pub fn len(&self) -> Duration {
        self.len
    }

    /// A spin of the current window caught nothing, and the next packet came `idle`
    /// after the spin started. Whether the window opened (it was shorter than the
    /// longest, and the packet came within the longest).
    pub fn missed(&mut self, idle: Duration) -> bool {
        let was = self.len;
        self.len = if idle <= self.longest {
            self.longest
        } else {
            (self.len / 2).max(FIRST_WINDOW.min(self.longest))
        };
        self.len > was
    }
}

/// The calling thread's CPU time.
pub fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime(2) writes one timespec, which lives across the call;
    // CLOCK_THREAD_CPUTIME_ID cannot fail on Linux for the calling thread.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: Duration = Duration::from_micros(40);

    /// Up to `n` windows whose shares alternate around `mean` (+-0.25, as measured):
    /// how many ran before the thread paused, if it did.
    fn windows(p: &mut SpinShare, n: usize, mean: f64, now: Instant) -> Option<usize> {
        (0..n).find(|i| {
            let s = if i % 2 == 0 { mean + 0.25 } else { mean - 0.25 };
            p.record(W, W.mul_f64(s.clamp(0.0, 1.0)), now)
        })
    }

    #[test]
    fn a_thread_that_gets_its_core_keeps_spinning() {
        let now = Instant::now();
        let mut p = SpinShare::default();
        assert_eq!(windows(&mut p, 100_000, 0.51, now), None);
        assert!(p.may_spin(now));
    }

    #[test]
    fn a_thread_sharing_its_core_pauses_longer_each_time_until_it_settles() {
        let mut now = Instant::now();
        let mut p = SpinShare::default();
        let n = windows(&mut p, 1000, 0.33, now).expect("pauses");
        assert!((5..200).contains(&n), "{n} windows before pausing");
        assert!(!p.may_spin(now));
        assert!(!p.may_spin(now + RETRY / 2));
        // After the pause it spins again from just above the floor, and a machine
        // still busy pauses it again sooner, for twice as long, up to the longest.
        let mut pause = RETRY;
        for _ in 0..8 {
            now += pause;
            assert!(p.may_spin(now));
            assert_eq!(p.share(), RESUME);
            let m = windows(&mut p, 1000, 0.33, now).expect("pauses again");
            assert!(m < n, "{m} windows after a pause, {n} at first");
            pause = (pause * 2).min(LONGEST_PAUSE);
            assert!(!p.may_spin(now + pause - Duration::from_millis(1)));
        }
        assert_eq!(pause, LONGEST_PAUSE);
        // The machine is idle again: spinning resumes for good, and once it has
        // settled a later busy spell pauses it for the first pause again.
        now += pause;
        assert!(p.may_spin(now));
        assert_eq!(windows(&mut p, 100_000, 0.55, now), None);
        windows(&mut p, 1000, 0.33, now).expect("pauses");
        assert!(!p.may_spin(now + RETRY - Duration::from_millis(1)));
        assert!(p.may_spin(now + RETRY));
    }

    #[test]
    fn short_windows_and_odd_clocks_do_not_count() {
        let now = Instant::now();
        let mut p = SpinShare::default();
        for _ in 0..1000 {
            assert!(!p.record(Duration::from_micros(1), Duration::ZERO, now));
        }
        assert_eq!(p.share(), START);
        // CPU time above wall time (clocks read at different instants) counts as 1.
        p.record(W, W * 3, now);
        assert!(p.share() > START && p.share() <= 1.0);
    }

    #[test]
    fn a_missed_exchange_opens_the_window_and_idle_gaps_halve_it() {
        let longest = Duration::from_micros(200);
        let mut w = SpinWindow::new(longest);
        assert_eq!(w.len(), FIRST_WINDOW);
        // A 66 µs round trip missed by the first window: the longest catches it.
        assert!(w.missed(Duration::from_micros(66)));
        assert_eq!(w.len(), longest);
        // Missed again within the longest: it stays open, and did not open anew.
        assert!(!w.missed(Duration::from_micros(190)));
        // Gaps past the longest window halve it, down to the first window.
        assert!(!w.missed(Duration::from_micros(500)));
        assert_eq!(w.len(), longest / 2);
        for _ in 0..10 {
            w.missed(Duration::from_millis(5));
        }
        assert_eq!(w.len(), FIRST_WINDOW);
        // A longest window under the first: that is the only window.
        let mut short = SpinWindow::new(Duration::from_micros(4));
        short.missed(Duration::from_micros(3));
        assert_eq!(short.len(), Duration::from_micros(4));
        short.missed(Duration::from_millis(3));
        assert_eq!(short.len(), Duration::from_micros(4));
        assert_eq!(SpinWindow::new(Duration::ZERO).len(), Duration::ZERO);
    }

    #[test]
    fn thread_cpu_moves_while_the_thread_runs() {
        let t0 = thread_cpu();
        let start = Instant::now();
        while thread_cpu() == t0 && start.elapsed() < Duration::from_secs(5) {
            std::hint::black_box(0u64);
        }
        assert!(thread_cpu() > t0);
    }
}
