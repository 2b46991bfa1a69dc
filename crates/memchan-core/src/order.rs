//! The point of global order: a **lock-free-entry, owner-tagged** sequencer through
//! which every ordered packet (broadcast, multicast, local copy) passes, so that all
//! destinations apply ordered packets in one order (ordering rule 2).
//!
//! The one-host transport places an [`OrderPoint`] in shared memory; the hub of a
//! multi-host cluster replaces it with its own sequencing. Entering tags the point with
//! the holder's node, so a survivor can take over from a holder that died (see
//! [`OrderPoint::take_over`]) and finish its journaled packet: the order point is never
//! lost with a process.
//!
//! # Layout
//!
//! ```text
//!  0      4      8                        64
//!  +------+------+------------------------+
//!  | owner| pad  | seq (u64)    ...pad    |   one cache line
//!  +------+------+------------------------+
//!  owner: 0 = free, n + 1 = held by node n
//!  seq:   number of ordered packets completed (the global order index)
//! ```
//!
//! ```
//! use memchan_core::order::OrderPoint;
//! use memchan_core::sync::{AtomicU32, AtomicU64};
//! let (owner, seq) = (AtomicU32::new(0), AtomicU64::new(0));
//! let point = OrderPoint::new(&owner, &seq);
//! let turn = point.enter(7, |_holder| std::hint::spin_loop());
//! assert_eq!(turn, 0);
//! assert_eq!(point.try_enter(8), Err(7));
//! assert!(point.leave(7));
//! assert_eq!(point.enter(8, |_| ()), 1);
//! ```

use crate::sync::{AtomicU32, AtomicU64, Ordering};

/// A view of the two words that make an order point.
#[derive(Clone, Copy)]
pub struct OrderPoint<'a> {
    owner: &'a AtomicU32,
    seq: &'a AtomicU64,
}

impl<'a> OrderPoint<'a> {
    /// An order point over `owner` (0 when free) and `seq`.
    pub fn new(owner: &'a AtomicU32, seq: &'a AtomicU64) -> Self {
        OrderPoint { owner, seq }
    }

    /// Enters if free and returns this packet's place in the order; otherwise the
    /// current holder's node index.
    pub fn try_enter(&self, me: u32) -> Result<u64, u32> {
        match self
            .owner
            .compare_exchange(0, me + 1, Ordering::Acquire, Ordering::Relaxed)
        {
            Ok(_) => Ok(self.seq.load(Ordering::Relaxed)),
            Err(holder) => Err(holder.wrapping_sub(1)),
        }
    }

    /// Enters, calling `idle(holder)` between tries (test-and-test-and-set, so waiters
    /// spin on a shared line rather than bouncing it); `idle` is where the caller backs
    /// off and checks that the holder is still alive.
    pub fn enter(&self, me: u32, mut idle: impl FnMut(u32)) -> u64 {
        loop {
            match self.try_enter(me) {
                Ok(turn) => return turn,
                Err(_) => loop {
                    let held = self.owner.load(Ordering::Relaxed);
                    if held == 0 {
                        break;
                    }
                    idle(held - 1);
                },
            }
        }
    }

    /// Completes the holder's packet: advances the order and frees the point. Returns
    /// false if the point was taken over meanwhile (this node was declared failed): the
    /// order is then the survivor's to advance.
    pub fn leave(&self, me: u32) -> bool {
        if self.owner.load(Ordering::Relaxed) != me + 1 {
            return false;
        }
        // Only the holder writes `seq`, so a plain increment is exact; the Release below
        // publishes it to the next holder's Acquire.
        let s = self.seq.load(Ordering::Relaxed);
        self.seq.store(s + 1, Ordering::Relaxed);
        self.owner
            .compare_exchange(me + 1, 0, Ordering::Release, Ordering::Relaxed)
            .is_ok()
    }

    /// Takes the point over from `dead`, a holder that the cluster declared failed.
    /// Returns false if `dead` no longer holds it. The caller then finishes the dead
    /// holder's journaled packet and calls [`leave`](Self::leave) as itself.
    pub fn take_over(&self, dead: u32, me: u32) -> bool {
        self.owner
            .compare_exchange(dead + 1, me + 1, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// The holder's node index, if held.
    pub fn holder(&self) -> Option<u32> {
        self.owner.load(Ordering::Acquire).checked_sub(1)
    }

    /// Number of ordered packets completed so far.
    pub fn completed(&self) -> u64 {
        self.seq.load(Ordering::Acquire)
    }
}
