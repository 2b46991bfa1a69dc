//! Which threads read a node's links inside their own waits, so that the threads that
//! otherwise read them stay deaf meanwhile.

use std::sync::atomic::{
    AtomicBool, AtomicU32, AtomicU64,
    Ordering::{Relaxed, SeqCst},
};
use std::time::Duration;

/// The application threads that read links themselves (inside a wait), for the
/// threads that otherwise read them (a node's service thread, a hub's link readers),
/// which stay deaf to frames while any does ([`Link::listen`]). The first reader
/// makes them deaf; the last makes them listen again, at once, or, after a spinning
/// wait, lazily: [`settle`](Self::settle) is called after the node's next send and
/// at those threads' next turn, and the next first reader finds them still deaf (no
/// system call). That takes an `epoll_ctl` off the path from a frame's arrival to a
/// spinning thread's reply.
///
/// [`Link::listen`]: super::Link::listen
#[derive(Debug, Default)]
pub struct Readers {
    count: AtomicU32,
    /// The last reader was a spinning wait and left the links deaf.
    owed: AtomicBool,
    /// When a spinning wait last ended (`coarse_ns`), for [`spun_within`](Self::spun_within).
    spun_at: AtomicU64,
}

impl Readers {
    /// How many threads read now (SeqCst: see the callers' Dekker pairs).
    pub fn count(&self) -> u32 {
        self.count.load(SeqCst)
    }

    /// Whether any thread reads now: the links' own readers stay deaf.
    pub fn away(&self) -> bool {
        self.count() != 0
    }

    /// A thread starts reading; the first calls `listen` (which makes them deaf).
    pub fn enter(&self, listen: impl FnOnce()) {
        if self.count.fetch_add(1, SeqCst) == 0 {
            self.owed.store(false, SeqCst);
            listen();
        }
    }

    /// A thread stops reading; the last calls `listen` (which makes them listen), or,
    /// after a spinning wait, leaves it owed.
    pub fn leave(&self, spinning: bool, listen: impl FnOnce()) {
        if self.count.fetch_sub(1, SeqCst) == 1 {
            if spinning {
                self.spun_at.store(super::coarse_ns(), Relaxed);
                self.owed.store(true, SeqCst);
            } else {
                listen();
            }
        }
    }

    /// Whether a spinning wait ended within `span`: a reading thread that sleeps long
    /// would leave the links deaf that long after the next one (see `settle`).
    pub fn spun_within(&self, span: Duration) -> bool {
        super::coarse_ns().saturating_sub(self.spun_at.load(Relaxed)) < span.as_nanos() as u64
    }

    /// Calls `listen` if a spinning wait left it owed.
    pub fn settle(&self, listen: impl FnOnce()) {
        if self.owed.load(Relaxed) && self.owed.swap(false, SeqCst) {
            listen();
        }
    }
}
