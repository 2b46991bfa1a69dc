//! The cluster lock of a hub cluster: seed 000's bid lock
//! ([`memchan_core::bidlock`]) over a lock page that every node maps rx and tx towards
//! every node with local copy, one byte per node. The hub is the point of global order:
//! a bid counts once the node's own write has come back in that order.

use crate::mapping::RxMapping;
use crate::tx::TxMapping;
use memchan_core::bidlock::{self, BidPage};
use memchan_core::{Result, MAX_NODES};

/// A cluster lock (seed 000's bid lock over a broadcast page with local copy).
pub struct Lock {
    slot: usize,
    rx: RxMapping,
    tx: TxMapping,
    rng: memchan_core::idle::Backoff,
}

/// Holds a [`Lock`] until dropped.
pub struct LockGuard<'a> {
    lock: &'a Lock,
}

impl Lock {
    /// The lock over the page mapped by `rx` and `tx`; this node bids in byte `slot`,
    /// and backs off with a pause seeded by `seed`.
    pub(crate) fn new(slot: usize, rx: RxMapping, tx: TxMapping, seed: u64) -> Lock {
        Lock {
            slot,
            rx,
            tx,
            rng: memchan_core::idle::Backoff::new(seed),
        }
    }

    fn others_bid(&self) -> Result<bool> {
        let mut page = [0u8; MAX_NODES];
        self.rx.read(0, &mut page)?;
        Ok(page
            .iter()
            .enumerate()
            .any(|(i, &b)| i != self.slot && b != 0))
    }

    fn backoff(&self, attempt: u32) {
        self.rng.pause(20u64 << attempt.min(8));
    }

    /// Waits until our own slot shows `v`: our write came back in the global order.
    fn own_write_back(&self, v: u8) -> Result<()> {
        let mut spins = 0u32;
        while self.rx.load_u8(self.slot)? != v {
            spins = spins.wrapping_add(1);
            if spins.is_multiple_of(64) {
                self.rx.sh.check()?;
                std::thread::yield_now();
            }
        }
        Ok(())
    }

    /// Acquires the lock.
    pub fn acquire(&self) -> Result<LockGuard<'_>> {
        bidlock::acquire(&Page(self))?;
        Ok(LockGuard { lock: self })
    }

    /// Tries once; `None` if another node holds or bids.
    pub fn try_acquire(&self) -> Result<Option<LockGuard<'_>>> {
        Ok(bidlock::try_acquire(&Page(self))?.then_some(LockGuard { lock: self }))
    }
}

/// The lock page as the bid protocol (`memchan_core::bidlock`) sees it; the point of
/// global order is the hub.
struct Page<'a>(&'a Lock);

impl BidPage for Page<'_> {
    fn others_bid(&self) -> Result<bool> {
        self.0.others_bid()
    }

    fn bid(&self, v: u8) -> Result<()> {
        self.0.tx.write_u8(self.0.slot, v)?;
        self.0.own_write_back(v)
    }

    fn hold_off(&self, _waits: u32, attempt: u32) -> Result<()> {
        self.0.rx.sh.check()?;
        self.0.backoff(attempt.max(2));
        Ok(())
    }

    fn back_off(&self, attempt: u32) {
        self.0.backoff(attempt);
    }
}

impl LockGuard<'_> {
    /// Releases now, reporting errors (drop releases too, ignoring them).
    pub fn release(self) -> Result<()> {
        let l = self.lock;
        std::mem::forget(self);
        bidlock::release(&Page(l))
    }
}

impl Drop for LockGuard<'_> {
    fn drop(&mut self) {
        let _ = self.lock.tx.write_u8(self.lock.slot, 0);
        let _ = self.lock.own_write_back(0);
    }
}
