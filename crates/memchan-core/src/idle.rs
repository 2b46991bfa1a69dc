//! How memchan waits: the named idle strategies, and every tuned number of every wait
//! site in one table.
//!
//! A waiter on shared memory spins while the thing it waits for is likely to come in
//! a few hundred nanoseconds, then gives the core away, because on a host with more
//! processes than cores a spinning waiter takes the core from the very process it
//! waits for. The strategies, in the manner of Aeron's idle strategies:
//!
//! | strategy | what it does | used by |
//! |---|---|---|
//! | [`SpinThenYield`] | spins `spins` rounds, then yields each round | OpenSHMEM waits and collectives ([`SHMEM_WAIT`]), a one-host lock bid ([`LOCK_BID`]), the one-host clock's measurement ([`CLOCK_PAIR`]) |
//! | [`SpinThenPark`] | spins, yields, then sleeps a short while each round | the one-host order point ([`ORDER_POINT`]) |
//! | [`Backoff`] | random pauses, after [`LOCK_HOLD_OFF_SPINS`] spins | cluster-lock bidders (both transports) |
//! | [`Crowd`] | spins, yields while arrivals keep coming, sleeps; stops yielding for a while when a yield meets a task that does not yield | the one-host barrier ([`BARRIER`]) |
//! | [`Polls`] | counted progress rounds before a blocked call spins on its link or sleeps | the message layer ([`MESSAGE`]) |
//!
//! One more lives beside the code it measures: the IP receive thread's adaptive spin
//! (`memchan-ip/src/spin.rs`, `SpinShare`), which spins only while its share of the
//! CPU stays high, because it needs that thread's CPU time.
//!
//! The numbers were tuned on a 2-core machine; each says below what it was measured
//! against. Change them here.

use std::cell::Cell;
use std::time::Duration;

/// Spin, then yield the core on every round.
#[derive(Debug, Clone, Copy)]
pub struct SpinThenYield {
    /// Rounds that only spin.
    pub spins: u32,
}

impl SpinThenYield {
    /// A waiter starting its first round.
    pub fn waiter(self) -> SpinThenYieldWaiter {
        SpinThenYieldWaiter {
            policy: self,
            rounds: 0,
        }
    }
}

/// One wait under a [`SpinThenYield`].
#[derive(Debug)]
pub struct SpinThenYieldWaiter {
    policy: SpinThenYield,
    rounds: u32,
}

impl SpinThenYieldWaiter {
    /// One idle round.
    #[inline]
    pub fn idle(&mut self) {
        if self.rounds < self.policy.spins {
            self.rounds += 1;
            std::hint::spin_loop();
        } else {
            std::thread::yield_now();
        }
    }
}

/// Spin, then yield, then park briefly on every round: for waits that are usually
/// short but may span a descheduled peer.
#[derive(Debug, Clone, Copy)]
pub struct SpinThenPark {
    pub spins: u32,
    pub yields: u32,
    pub park: Duration,
}

impl SpinThenPark {
    /// A waiter starting its first round.
    pub fn waiter(self) -> SpinThenParkWaiter {
        SpinThenParkWaiter {
            policy: self,
            rounds: 0,
        }
    }
}

/// One wait under a [`SpinThenPark`].
#[derive(Debug)]
pub struct SpinThenParkWaiter {
    policy: SpinThenPark,
    rounds: u32,
}

impl SpinThenParkWaiter {
    /// One idle round.
    pub fn idle(&mut self) {
        self.rounds = self.rounds.saturating_add(1);
        let p = self.policy;
        if self.rounds < p.spins {
            std::hint::spin_loop();
        } else if self.rounds < p.spins + p.yields {
            std::thread::yield_now();
        } else {
            std::thread::sleep(p.park);
        }
    }

    /// Whether this waiter has gone past spinning and yielding (worth checking for a
    /// dead peer).
    pub fn is_parked(&self) -> bool {
        self.rounds >= self.policy.spins + self.policy.yields
    }
}

/// Random pauses for the bidders of a cluster lock: bidders that collided do not
/// collide again in lockstep. A xorshift generator, one per lock handle.
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

/// The one-host barrier's waiting: spin, then (on a host with more members than
/// cores) yield while arrivals keep coming, then sleep on the notify pair; and when a
/// yield gives the core away for long (a task beside the cluster that never yields),
/// stop yielding for a while, since each yield would hand it a whole time slice
/// where a sleeper, once woken, preempts it. The barrier's code applies the rules;
/// the numbers are these.
#[derive(Debug, Clone, Copy)]
pub struct Crowd {
    /// Spins before a wait yields or sleeps.
    pub spins: u32,
    /// How long a waiter on a crowded host goes on yielding after the last arrival
    /// it saw, before it sleeps.
    pub yield_for: Duration,
    /// A yield that gave the core away longer than this met a task that does not
    /// yield.
    pub hogged: Duration,
    /// Yields of one wait that must meet such a task before the process stops
    /// yielding.
    pub hogs: u32,
    /// How long the process then sleeps instead of yielding.
    pub hog_pause: Duration,
    /// The longest sleep: bounds how late a change nobody woke the waiter for is
    /// noticed.
    pub sleep: Duration,
}

/// The message layer's progress counts: how long a blocked call keeps polling before
/// it spins on its link or sleeps.
#[derive(Debug, Clone, Copy)]
pub struct Polls {
    /// Progress rounds a caller that announced it sleeps makes before it does.
    pub grace: u32,
    /// Polls of one ring by a blocking receive's eager path before the general path
    /// (which progresses every peer, then sleeps) takes over.
    pub fast: u32,
    /// Through a hub: idle progress rounds of a waiting caller before it spins on the
    /// link itself...
    pub hub_ring: u32,
    /// ...and how long that spin lasts (about the one-host spin) before it sleeps.
    pub hub_spin: Duration,
}

/// OpenSHMEM's `wait_until`, `test` loops, signal waits and the pSync waits of its
/// collectives: PEs often share cores (`memchan run --oversubscribe`).
pub const SHMEM_WAIT: SpinThenYield = SpinThenYield { spins: 128 };

/// A writer waiting for the one-host order point another writer holds.
pub const ORDER_POINT: SpinThenPark = SpinThenPark {
    spins: 200,
    yields: 50,
    park: Duration::from_micros(50),
};

/// The one-host barrier. `spins`: 8 nodes on 2 cores took 570 us a barrier with 4000
/// spins, 100 us with 500. `yield_for`: longer than a barrier of 64 nodes on 2 cores
/// takes while all arrive (a few hundred microseconds), short enough that a late
/// member costs little CPU.
pub const BARRIER: Crowd = Crowd {
    spins: 756,
    yield_for: Duration::from_millis(2),
    hogged: Duration::from_micros(500),
    hogs: 2,
    hog_pause: Duration::from_secs(10),
    sleep: Duration::from_millis(50),
};

/// A one-host lock bid waiting for its own copy: back within a store on one host, so
/// a long spin; a bidder whose copy is late (a descheduled order-point holder) yields.
pub const LOCK_BID: SpinThenYield = SpinThenYield { spins: 1 << 16 };

/// A cluster-lock bidder that lost: it spins this many rounds (the holder's clear is
/// usually near) before it backs off at random ([`Backoff`]).
pub const LOCK_HOLD_OFF_SPINS: u32 = 100;

/// The one-host clock's cross-core measurement: two threads on two cores answer
/// each other; on a busy machine the other one may need this core.
pub const CLOCK_PAIR: SpinThenYield = SpinThenYield { spins: 2000 };

/// The message layer (`memchan-msg`).
pub const MESSAGE: Polls = Polls {
    grace: 256,
    fast: 1024,
    hub_ring: 16,
    hub_spin: Duration::from_millis(1),
};

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spin_then_park_parks_after_its_spins_and_yields() {
        let mut w = SpinThenPark {
            spins: 3,
            yields: 2,
            park: Duration::from_micros(1),
        }
        .waiter();
        for _ in 0..4 {
            assert!(!w.is_parked());
            w.idle();
        }
        w.idle();
        assert!(w.is_parked());
    }

    #[test]
    fn backoff_pauses_differ_between_seeds() {
        let (a, b) = (Backoff::new(1), Backoff::new(2));
        a.pause(1);
        b.pause(1);
        assert_ne!(a.0.get(), b.0.get());
    }
}
