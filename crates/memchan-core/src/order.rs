//! The point of global order: an **owner-tagged sequencer in one word, changed only by
//! compare-and-swap**, through which every ordered packet (broadcast, multicast, local
//! copy) passes, so that all destinations apply ordered packets in one order
//! (ordering rule 2).
//!
//! The one-host transport places an [`OrderPoint`] in shared memory; the hub of a
//! multi-host cluster replaces it with its own sequencing. Entering tags the point with
//! the holder's node, so a survivor can take over from a holder that died (see
//! [`OrderPoint::take_over`]) and finish its journaled packet: the order point is never
//! lost with a process. Owner and sequence share one word so that every change is a
//! single CAS: a holder that was declared failed and wakes up later cannot advance the
//! sequence behind the survivor's back, and the sequence doubles as the tag that keeps
//! a stale take-over from hitting a later holder with a reused node id.
//!
//! # Layout
//!
//! ```text
//!  63                                     16 15            0
//!  +----------------------------------------+---------------+
//!  | seq: ordered packets completed (48 bit)| owner (16 bit)|   one AtomicU64,
//!  +----------------------------------------+---------------+   own cache line
//!  owner: 0 = free, n + 1 = held by node n
//! ```
//!
//! ```
//! use memchan_core::order::OrderPoint;
//! use memchan_core::sync::AtomicU64;
//! let word = AtomicU64::new(0);
//! let point = OrderPoint::new(&word);
//! let turn = point.enter(7, |_holder| std::hint::spin_loop());
//! assert_eq!(turn, 0);
//! assert_eq!(point.try_enter(8), Err(7));
//! assert!(point.leave(7));
//! assert_eq!(point.enter(8, |_| ()), 1);
//! ```

use crate::sync::{AtomicU64, Ordering};

const OWNER_BITS: u32 = 16;
const OWNER_MASK: u64 = (1 << OWNER_BITS) - 1;

/// The owner field of an order word: `None` when free, else the holder's node index.
pub fn owner_of(word: u64) -> Option<u32> {
    ((word & OWNER_MASK) as u32).checked_sub(1)
}

/// The sequence field of an order word: ordered packets completed.
pub fn seq_of(word: u64) -> u64 {
    word >> OWNER_BITS
}

fn word(owner: Option<u32>, seq: u64) -> u64 {
    (seq << OWNER_BITS) | owner.map_or(0, |o| u64::from(o) + 1)
}

/// A view of the word that makes an order point.
#[derive(Clone, Copy)]
pub struct OrderPoint<'a> {
    word: &'a AtomicU64,
}

impl<'a> OrderPoint<'a> {
    /// An order point over `word` (0: free, nothing completed).
    pub fn new(word: &'a AtomicU64) -> Self {
        OrderPoint { word }
    }

    /// The whole word, to pass to [`take_over`](Self::take_over).
    pub fn load(&self) -> u64 {
        self.word.load(Ordering::Acquire)
    }

    /// Enters if free and returns this packet's place in the order; otherwise the
    /// current holder's node index.
    pub fn try_enter(&self, me: u32) -> Result<u64, u32> {
        let mut w = self.word.load(Ordering::Relaxed);
        loop {
            if let Some(holder) = owner_of(w) {
                return Err(holder);
            }
            match self.word.compare_exchange_weak(
                w,
                word(Some(me), seq_of(w)),
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Ok(seq_of(w)),
                Err(now) => w = now,
            }
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
                    match owner_of(self.word.load(Ordering::Relaxed)) {
                        None => break,
                        Some(holder) => idle(holder),
                    }
                },
            }
        }
    }

    /// Completes the holder's packet: advances the order and frees the point, in one
    /// CAS. Returns false if the point was taken over meanwhile (this node was declared
    /// failed): the order is then the survivor's to advance.
    pub fn leave(&self, me: u32) -> bool {
        let mut w = self.word.load(Ordering::Relaxed);
        loop {
            if owner_of(w) != Some(me) {
                return false;
            }
            match self.word.compare_exchange_weak(
                w,
                word(None, seq_of(w) + 1),
                Ordering::Release,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(now) => w = now,
            }
        }
    }

    /// Takes the point over from a holder that the cluster declared failed, if the
    /// word still reads `seen` (as loaded before the holder was found failed; the
    /// sequence in it keeps a later holder that reuses the node id safe). The caller
    /// then finishes the dead holder's journaled packet and calls
    /// [`leave`](Self::leave) as itself.
    pub fn take_over(&self, seen: u64, me: u32) -> bool {
        owner_of(seen).is_some()
            && self
                .word
                .compare_exchange(
                    seen,
                    word(Some(me), seq_of(seen)),
                    Ordering::AcqRel,
                    Ordering::Relaxed,
                )
                .is_ok()
    }

    /// The whole word as it is now, by a read-modify-write: for a survivor whose
    /// knowledge of a holder's death (a heartbeat timeout) synchronises with nothing
    /// the holder wrote, a plain load may still see the word from before its entry.
    pub fn load_latest(&self) -> u64 {
        self.word.fetch_add(0, Ordering::AcqRel)
    }

    /// The holder's node index, if held.
    pub fn holder(&self) -> Option<u32> {
        owner_of(self.load())
    }

    /// Number of ordered packets completed so far.
    pub fn completed(&self) -> u64 {
        seq_of(self.load())
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn stale_take_over_misses_a_later_holder_with_the_same_id() {
        let w = AtomicU64::new(0);
        let p = OrderPoint::new(&w);
        p.enter(3, |_| ());
        let seen = p.load(); // node 3 holds; then it is declared failed
        assert!(p.take_over(seen, 1));
        assert!(!p.leave(3), "the failed holder cannot leave any more");
        assert!(p.leave(1));
        p.enter(3, |_| ()); // node id 3 reused by a new incarnation
        assert!(!p.take_over(seen, 2), "stale take-over must fail");
        assert_eq!(p.holder(), Some(3));
        assert!(p.leave(3));
        assert_eq!(p.completed(), 2);
    }
}
