//! Randomised backoff for the bidders of a cluster lock (both transports): random
//! pauses keep bidders that collided from colliding again in lockstep.

use std::cell::Cell;
use std::time::Duration;

/// A xorshift generator of pause lengths, one per lock handle.
#[derive(Debug)]
pub struct Backoff(Cell<u64>);

impl Backoff {
    /// A generator seeded with `seed` (give each node a different one).
    pub fn new(seed: u64) -> Backoff {
        Backoff(Cell::new(seed | 1))
    }

    /// Pauses for a random time below `cap_us` microseconds; below 2 µs it only yields.
    pub fn pause(&self, cap_us: u64) {
        let mut x = self.0.get();
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0.set(x);
        let us = x % cap_us.max(1);
        if us < 2 {
            std::thread::yield_now();
        } else {
            std::thread::sleep(Duration::from_micros(us));
        }
    }
}
