//! Bounding log lines: [`Limiter`], for floods of events a stranger can cause (the
//! gate's refused connections, the hub's refused packets).

use std::time::{Duration, Instant};

/// Caps the lines a flood of events can log: at most [`LINES`](Self::LINES) a second;
/// the rest are counted and the count goes with the next line logged.
#[derive(Debug)]
pub(crate) struct Limiter {
    window: Instant,
    lines: u32,
    suppressed: u64,
}

impl Limiter {
    /// Lines logged per second, at most.
    pub(crate) const LINES: u32 = 5;
    const WINDOW: Duration = Duration::from_secs(1);

    pub(crate) fn new(now: Instant) -> Limiter {
        Limiter {
            window: now,
            lines: 0,
            suppressed: 0,
        }
    }

    /// `Some(lines left out before this one)` if a line may be logged now.
    pub(crate) fn admit(&mut self, now: Instant) -> Option<u64> {
        if now.saturating_duration_since(self.window) >= Self::WINDOW {
            self.window = now;
            self.lines = 0;
        }
        if self.lines < Self::LINES {
            self.lines += 1;
            Some(std::mem::take(&mut self.suppressed))
        } else {
            self.suppressed += 1;
            None
        }
    }

    /// Lines left out and not yet reported, once the window they fell in is over
    /// (the flood stopped: no later line carries the count).
    pub(crate) fn overdue(&mut self, now: Instant) -> Option<u64> {
        if self.suppressed > 0 && now.saturating_duration_since(self.window) >= Self::WINDOW {
            self.window = now;
            self.lines = 0;
            return Some(std::mem::take(&mut self.suppressed));
        }
        None
    }

    /// When [`overdue`](Self::overdue) would report, if lines were left out.
    pub(crate) fn due(&self) -> Option<Instant> {
        (self.suppressed > 0).then(|| self.window + Self::WINDOW)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_limiter_lets_a_few_lines_a_second_through_and_counts_the_rest() {
        let t0 = Instant::now();
        let mut l = Limiter::new(t0);
        for _ in 0..Limiter::LINES {
            assert_eq!(l.admit(t0), Some(0));
        }
        for _ in 0..10 {
            assert_eq!(l.admit(t0), None);
        }
        assert_eq!(l.overdue(t0), None, "the window is not over");
        assert_eq!(l.due(), Some(t0 + Limiter::WINDOW));
        // The next window's first line carries the count.
        let t1 = t0 + Limiter::WINDOW;
        assert_eq!(l.admit(t1), Some(10));
        assert_eq!(l.admit(t1), Some(0));
        // A flood that stops is reported once its window ends.
        for _ in 0..Limiter::LINES {
            l.admit(t1);
        }
        assert_eq!(l.overdue(t1 + Limiter::WINDOW), Some(2));
        assert_eq!(l.overdue(t1 + 2 * Limiter::WINDOW), None);
    }
}
