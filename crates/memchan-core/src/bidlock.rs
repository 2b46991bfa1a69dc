//! The cluster lock of seed 000 (MEMORY CHANNEL 2), one protocol for both transports:
//! a lock page mapped broadcast with local copy by every bidder, one byte slot per
//! node. To acquire, a node writes 1 into its own slot, waits for that write to come
//! back into its local copy, and reads the page: if its slot is the only one set it
//! holds the lock, otherwise it withdraws (writes 0) and backs off.
//!
//! Why at most one node holds it: every bid passes the point of global order (the
//! order point on one host, the hub between hosts) and is applied at every bidder,
//! the bidder's own copy included, in that one order. Of any two overlapping bids,
//! the later one is applied after the earlier everywhere, so the later bidder sees the
//! earlier bid and withdraws; the earlier bidder may see itself alone and win. A
//! holder that dies has its slot cleared by the cluster (each transport says how).
//!
//! Only bids need that order; a clear (a withdrawal or a release) needs none. If A and
//! B both held, say with A's bid first in the order, B's check came after A's bid
//! was applied to B's copy, so it read a clear of A's slot written there after that
//! bid: A's own (which A writes only after it lost the attempt, or once it has left
//! its critical section: then A did not hold any more), or the cluster's for a dead
//! A. A clear written late to some copy only makes a bidder withdraw. So a transport
//! may write a clear straight into every copy, as long as no copy misses it (the
//! one-host transport does when nothing the order point orders overlaps the write,
//! which covers a copy made for a new bidder).
//!
//! A transport supplies the page ([`BidPage`]); this module supplies the order of
//! the steps.

use crate::error::Result;

/// A node's view of one lock page.
pub trait BidPage {
    /// Whether a slot other than ours is set in our local copy.
    fn others_bid(&self) -> Result<bool>;
    /// Writes `v` (1: bid, 0: withdraw) into our slot and returns once our local copy
    /// shows it: for a bid, once the write passed the point of global order (a
    /// withdrawal may bypass it, see the module doc).
    fn bid(&self, v: u8) -> Result<()>;
    /// Waits a little while others hold or bid: `waits` such calls so far in this
    /// attempt, after `attempt` collisions.
    fn hold_off(&self, waits: u32, attempt: u32) -> Result<()>;
    /// Pauses after the `attempt`-th collision (a random backoff).
    fn back_off(&self, attempt: u32);
}

/// Bids until the lock is ours.
pub fn acquire(p: &impl BidPage) -> Result<()> {
    let mut attempt = 0u32;
    loop {
        // Wait while someone holds or bids: bidding then would only collide.
        let mut waits = 0u32;
        while p.others_bid()? {
            p.hold_off(waits, attempt)?;
            waits = waits.saturating_add(1);
        }
        if try_once(p)? {
            return Ok(());
        }
        attempt += 1;
        p.back_off(attempt);
    }
}

/// Bids once unless another node holds or bids; whether the lock is now ours.
pub fn try_acquire(p: &impl BidPage) -> Result<bool> {
    if p.others_bid()? {
        return Ok(false);
    }
    try_once(p)
}

/// Gives the lock up: clears our slot, like a withdrawal (and, like one, returns once
/// our own copy shows it).
pub fn release(p: &impl BidPage) -> Result<()> {
    p.bid(0)
}

fn try_once(p: &impl BidPage) -> Result<bool> {
    p.bid(1)?;
    if !p.others_bid()? {
        return Ok(true);
    }
    p.bid(0)?;
    Ok(false)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::{Cell, RefCell};

    /// A page whose other slots follow a script: one entry per `others_bid` call.
    struct Scripted {
        others: RefCell<Vec<bool>>,
        mine: Cell<u8>,
        log: RefCell<Vec<String>>,
    }

    impl BidPage for Scripted {
        fn others_bid(&self) -> Result<bool> {
            Ok(self.others.borrow_mut().remove(0))
        }
        fn bid(&self, v: u8) -> Result<()> {
            self.mine.set(v);
            self.log.borrow_mut().push(format!("bid {v}"));
            Ok(())
        }
        fn hold_off(&self, waits: u32, attempt: u32) -> Result<()> {
            self.log
                .borrow_mut()
                .push(format!("hold {waits} {attempt}"));
            Ok(())
        }
        fn back_off(&self, attempt: u32) {
            self.log.borrow_mut().push(format!("back {attempt}"));
        }
    }

    fn page(script: &[bool]) -> Scripted {
        Scripted {
            others: RefCell::new(script.to_vec()),
            mine: Cell::new(0),
            log: RefCell::new(Vec::new()),
        }
    }

    #[test]
    fn waits_for_the_holder_withdraws_on_collision_and_wins_alone() {
        // held twice, free; bid collides; free; bid alone.
        let p = page(&[true, true, false, true, false, false]);
        acquire(&p).unwrap();
        assert_eq!(p.mine.get(), 1);
        assert_eq!(
            *p.log.borrow(),
            ["hold 0 0", "hold 1 0", "bid 1", "bid 0", "back 1", "bid 1"]
        );
    }

    #[test]
    fn try_acquire_never_bids_over_a_holder_and_withdraws_a_losing_bid() {
        let held = page(&[true]);
        assert!(!try_acquire(&held).unwrap());
        assert!(held.log.borrow().is_empty(), "no bid while another holds");
        let lost = page(&[false, true]);
        assert!(!try_acquire(&lost).unwrap());
        assert_eq!(*lost.log.borrow(), ["bid 1", "bid 0"]);
        assert_eq!(lost.mine.get(), 0, "a losing bid is withdrawn");
    }

    #[test]
    fn release_clears_our_slot() {
        let p = page(&[false, false]);
        assert!(try_acquire(&p).unwrap());
        release(&p).unwrap();
        assert_eq!(p.mine.get(), 0);
        assert_eq!(*p.log.borrow(), ["bid 1", "bid 0"]);
    }
}
