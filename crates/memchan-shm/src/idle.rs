//! Named idle strategies: how a waiter spends its time instead of ad-hoc sleeps.

use std::time::Duration;

/// Spin, then yield the core, then park briefly: right for waits that are usually short
/// but may span a descheduled peer (two cores, more processes than cores).
pub(crate) struct SpinThenPark {
    rounds: u32,
}

impl SpinThenPark {
    const SPINS: u32 = 200;
    const YIELDS: u32 = 50;

    pub(crate) fn new() -> Self {
        SpinThenPark { rounds: 0 }
    }

    /// One idle step.
    pub(crate) fn idle(&mut self) {
        self.rounds = self.rounds.saturating_add(1);
        if self.rounds < Self::SPINS {
            std::hint::spin_loop();
        } else if self.rounds < Self::SPINS + Self::YIELDS {
            std::thread::yield_now();
        } else {
            std::thread::sleep(Duration::from_micros(50));
        }
    }

    /// Whether this waiter has gone past spinning (worth checking for a dead peer).
    pub(crate) fn is_parked(&self) -> bool {
        self.rounds >= Self::SPINS + Self::YIELDS
    }
}
