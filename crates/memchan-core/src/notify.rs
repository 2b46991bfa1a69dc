//! Notify on receive: the **lost-wakeup-free** handshake between a writer that deposits
//! on a notify page and a reader blocked until such a write lands.
//!
//! The writer bumps `seq` and wakes only if someone waits, so an unwatched page costs
//! one atomic add. The reader announces itself in `waiters` before it re-reads `seq`,
//! and the kernel's futex wait re-checks `seq` atomically: either the writer sees the
//! waiter and wakes it, or the reader sees the new `seq` and does not sleep. Both sides
//! use SeqCst for this store-then-load pair (Dekker's pattern); the loom model in
//! `tests/loom.rs` checks it against a futex model.
//!
//! ```
//! use memchan_core::notify::{Futex, Notify};
//! use memchan_core::sync::AtomicU32;
//! use std::time::Duration;
//! struct Spin;
//! impl Futex for Spin {
//!     fn wait(&self, _w: &AtomicU32, _expected: u32, _t: Option<Duration>) {}
//!     fn wake(&self, _w: &AtomicU32) {}
//! }
//! let (seq, waiters) = (AtomicU32::new(0), AtomicU32::new(0));
//! let n = Notify::new(&seq, &waiters);
//! n.post(&Spin);
//! assert_eq!(n.wait(0, Some(Duration::ZERO), &Spin), Some(1));
//! ```

use crate::sync::{fence, AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// The blocking primitive: a cross-process futex in production, a model under loom.
pub trait Futex {
    /// Sleeps while `*word == expected`, at most `timeout` (spurious returns allowed).
    fn wait(&self, word: &AtomicU32, expected: u32, timeout: Option<Duration>);
    /// Wakes every sleeper on `word`.
    fn wake(&self, word: &AtomicU32);
}

/// A view of a notify word pair.
#[derive(Clone, Copy)]
pub struct Notify<'a> {
    seq: &'a AtomicU32,
    waiters: &'a AtomicU32,
}

impl<'a> Notify<'a> {
    /// A handshake over `seq` (writes landed) and `waiters` (readers asleep or about to be).
    pub fn new(seq: &'a AtomicU32, waiters: &'a AtomicU32) -> Self {
        Notify { seq, waiters }
    }

    /// Writer side: records a landed write and wakes sleepers, if any.
    pub fn post(&self, futex: &impl Futex) {
        self.seq.fetch_add(1, Ordering::SeqCst);
        // The fence makes the store-then-load pair checkable: loom models SeqCst
        // accesses as AcqRel, but SeqCst fences exactly. It costs one mfence, on
        // notify pages only.
        fence(Ordering::SeqCst);
        if self.waiters.load(Ordering::SeqCst) != 0 {
            futex.wake(self.seq);
        }
    }

    /// The current write count, to pass to [`wait`](Self::wait) later.
    pub fn current(&self) -> u32 {
        self.seq.load(Ordering::Acquire)
    }

    /// Reader side: blocks until the write count differs from `seen` and returns it, or
    /// returns `None` when `timeout` passes first.
    pub fn wait(&self, seen: u32, timeout: Option<Duration>, futex: &impl Futex) -> Option<u32> {
        let deadline = timeout.map(|t| Instant::now() + t);
        loop {
            let now = self.seq.load(Ordering::Acquire);
            if now != seen {
                return Some(now);
            }
            let left = match deadline {
                Some(d) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        return None;
                    }
                    Some(left)
                }
                None => None,
            };
            self.waiters.fetch_add(1, Ordering::SeqCst);
            fence(Ordering::SeqCst);
            if self.seq.load(Ordering::SeqCst) == seen {
                futex.wait(self.seq, seen, left);
            }
            self.waiters.fetch_sub(1, Ordering::SeqCst);
        }
    }
}
