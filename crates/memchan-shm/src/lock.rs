//! The cluster lock of seed 000 on one host: the protocol is
//! `memchan_core::bidlock` (why at most one node holds it is argued there); this is
//! its lock page. The point of global order is the order point, and the sender
//! applies its own copy at once. A holder that dies has its slot cleared by the
//! survivor that isolates it (the lock page is flagged, see
//! `Inner::release_locks_of`).
//!
//! Lock pages are written by members, so a byte can be set by no bidder: one a member
//! wrote into a FREE slot counts for nobody (a node's bytes are cleared before its
//! slot is freed), and any other set byte that does not change for the stall bound
//! (a holder that never releases, a forged byte in a member's slot) ends the wait
//! with `Error::Stalled` naming those slots, as do [`STALL_CAP`] bounds in all.

use crate::control::node_state;
use crate::local::STALL_CAP;
use crate::mapping::RxMapping;
use crate::node::Inner;
use crate::tx::TxMapping;
use memchan_core::bidlock::{self, BidPage};
use memchan_core::sync::{AtomicU64, Ordering};
use memchan_core::{Dest, NodeId, Result, RxAttrs, TxAttrs, MAX_NODES};
use std::cell::{Cell, RefCell};
use std::sync::Arc;
use std::time::Instant;

/// A named cluster lock.
pub struct Lock {
    inner: Arc<Inner>,
    rx: RxMapping,
    /// Boxed: a tx mapping carries its targets, and the public lock type holds
    /// either transport's lock in one enum.
    tx: Box<TxMapping>,
    slot: usize,
    rng: memchan_core::idle::Backoff,
}

/// Holds the lock until dropped.
pub struct LockGuard<'a> {
    lock: &'a Lock,
}

impl Lock {
    pub(crate) fn new(inner: &Arc<Inner>, name: &str) -> Result<Lock> {
        // A lock page is open to exactly the uids the cluster is shared with: the
        // control block's own read/write bits.
        let mode = rustix::fs::fstat(inner.local.ctl_map().fd())
            .map(|st| st.st_mode & 0o666)
            .unwrap_or(0o600);
        let seg = inner.segment(
            &memchan_core::validate::lock_segment(name)?,
            MAX_NODES,
            mode,
            crate::control::seg_state::FLAG_LOCK,
            true,
        )?;
        let rx = RxMapping::new(inner.clone(), seg.clone(), RxAttrs::default())?;
        let tx = Box::new(TxMapping::new(
            inner.clone(),
            seg,
            Dest::Broadcast,
            TxAttrs {
                local_copy: true,
                ..TxAttrs::default()
            },
        )?);
        Ok(Lock {
            inner: inner.clone(),
            rx,
            tx,
            slot: inner.local.me.index(),
            rng: memchan_core::idle::Backoff::new(
                (u64::from(inner.local.me.0) + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15),
            ),
        })
    }

    /// Whether any slot other than ours is set in our local copy. Only the words up
    /// to the highest slot of the members bitmap (or ours) are read: a 2-node cluster
    /// reads one word. The bitmap is a superset of the live members, so no member's
    /// bid is missed; it is four loads, where the live members (a state load per
    /// member) cost more than the rest of this check on every bid.
    fn others_bid(&self) -> Result<bool> {
        let members = &self.inner.local.ctl().header.members;
        let mut top = self.slot;
        for (i, w) in members.iter().enumerate().rev() {
            let w = w.load(Ordering::Relaxed);
            if w != 0 {
                top = top.max(i * 64 + 63 - w.leading_zeros() as usize);
                break;
            }
        }
        let base = self.rx.as_ptr() as *const AtomicU64;
        for w in 0..=top / 8 {
            // SAFETY: the lock page holds MAX_NODES bytes = MAX_NODES / 8 aligned words
            // and `top < MAX_NODES`; shared words are read atomically.
            let mut v = unsafe { (*base.add(w)).load(Ordering::Acquire) };
            if w == self.slot / 8 {
                v &= !(0xFFu64 << ((self.slot % 8) * 8));
            }
            if v != 0 && self.taken(w, v) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// Whether a set byte of word `w` (value `v`) is in a slot that is not FREE.
    #[cold]
    #[inline(never)]
    fn taken(&self, w: usize, v: u64) -> bool {
        let nodes = &self.inner.local.ctl().nodes;
        (0..8).any(|b| {
            v >> (b * 8) & 0xFF != 0
                && nodes[w * 8 + b].state.load(Ordering::Acquire) != node_state::FREE
        })
    }

    /// The slots other than ours whose bytes hold the lock up (as [`others_bid`]
    /// counts them): what a stalled wait names.
    fn bidders(&self) -> Vec<NodeId> {
        let base = self.rx.as_ptr() as *const AtomicU64;
        let mut out = Vec::new();
        for w in 0..MAX_NODES / 8 {
            // SAFETY: as in `others_bid`, for every word of the page.
            let v = unsafe { (*base.add(w)).load(Ordering::Acquire) };
            for b in 0..8 {
                let n = w * 8 + b;
                if n != self.slot && v >> (b * 8) & 0xFF != 0 && self.taken(w, 0xFF << (b * 8)) {
                    out.push(NodeId(n as u16));
                }
            }
        }
        out
    }

    fn backoff(&self, attempt: u32) {
        self.rng.pause(1u64 << attempt.min(10));
    }

    /// Acquires the lock, blocking (spin, then back off) until it is ours.
    ///
    /// # Errors
    /// `Error::Stalled` (`"the cluster lock"`, naming the slots that hold it up) when
    /// the other bids stay the same for the stall bound (25 failure timeouts, at least
    /// 1 s), or the wait lasts 4 bounds in all; `Error::Isolated` if this node is.
    pub fn acquire(&self) -> Result<LockGuard<'_>> {
        bidlock::acquire(&Page::new(self))?;
        Ok(LockGuard { lock: self })
    }

    /// Tries once; `None` if another node holds or bids.
    pub fn try_acquire(&self) -> Result<Option<LockGuard<'_>>> {
        Ok(bidlock::try_acquire(&Page::new(self))?.then_some(LockGuard { lock: self }))
    }
}

/// The lock page as the bid protocol sees it, for one acquire: the stall state, the
/// collisions so far and the reads of the page after many collisions.
struct Page<'a>(&'a Lock, RefCell<Option<Stall>>, Cell<u32>, Cell<u32>);

/// How long an acquire has waited, and since when the other bids are the same.
struct Stall {
    start: Instant,
    seen: Vec<NodeId>,
    since: Instant,
}

impl<'a> Page<'a> {
    fn new(lock: &'a Lock) -> Page<'a> {
        Page(lock, RefCell::new(None), Cell::new(0), Cell::new(0))
    }

    /// The stall rule of a wait for other bids to go: `Error::Stalled` once they stayed
    /// the same for the stall bound, or after [`STALL_CAP`] bounds in all (bytes
    /// another member can keep changing). The clock is read only once a wait is long.
    fn check_stall(&self) -> Result<()> {
        let l = self.0;
        l.inner.local.check_alive()?;
        let bound = l.inner.local.stall_bound();
        let now = Instant::now();
        let bidders = l.bidders();
        let mut st = self.1.borrow_mut();
        let st = st.get_or_insert_with(|| Stall {
            start: now,
            seen: bidders.clone(),
            since: now,
        });
        if st.seen != bidders {
            st.seen = bidders;
            st.since = now;
        }
        let (same, all) = (now.duration_since(st.since), now.duration_since(st.start));
        if same > bound || all > bound * STALL_CAP {
            return Err(l.inner.local.stalled(
                "the cluster lock",
                if same > bound { same } else { all },
                st.seen.clone(),
            ));
        }
        Ok(())
    }
}

impl BidPage for Page<'_> {
    fn others_bid(&self) -> Result<bool> {
        // After many collisions (bids that keep coming, perhaps a member toggling its
        // byte) the wait may never reach `hold_off`'s check.
        if self.2.get() >= 8 {
            let reads = self.3.get().wrapping_add(1);
            self.3.set(reads);
            if reads.is_multiple_of(64) {
                self.check_stall()?;
            }
        }
        self.0.others_bid()
    }

    fn bid(&self, v: u8) -> Result<()> {
        let l = self.0;
        if v == 0 {
            // A clear needs no place in the global order (`memchan_core::bidlock`).
            l.tx.write_u8_unordered(l.slot, 0)?;
        } else {
            l.tx.write_u8(l.slot, v)?;
        }
        // Back at once on one host, where the sender applies its own copy; an
        // isolated node never gets it, and neither does one whose rx set bit another
        // member cleared: that wait ends with `Error::Stalled` after the stall bound.
        let mut spins = 0u32;
        let mut idle = memchan_core::idle::LOCK_BID.waiter();
        // The clock is read only if the copy is late (this wait is on every bid).
        let mut since: Option<std::time::Instant> = None;
        while l.rx.load_u8(l.slot)? != v {
            spins = spins.wrapping_add(1);
            if spins.is_multiple_of(1024) {
                l.inner.local.check_alive()?;
                let bound = l.inner.local.stall_bound();
                if since.get_or_insert_with(std::time::Instant::now).elapsed() > bound {
                    return Err(l.inner.local.stalled(
                        "the lock bid's own copy",
                        bound,
                        Vec::new(),
                    ));
                }
            }
            idle.idle();
        }
        Ok(())
    }

    fn hold_off(&self, waits: u32, attempt: u32) -> Result<()> {
        if waits < memchan_core::idle::LOCK_HOLD_OFF_SPINS {
            std::hint::spin_loop();
        } else {
            if waits.is_multiple_of(64) {
                self.check_stall()?;
            }
            self.0.backoff(attempt.max(3));
        }
        Ok(())
    }

    fn back_off(&self, attempt: u32) {
        self.2.set(self.2.get().saturating_add(1));
        self.0.backoff(attempt);
    }
}

impl LockGuard<'_> {
    /// Releases the lock, reporting a failed release (e.g. this node was isolated, in
    /// which case the cluster already cleared its slot).
    pub fn release(self) -> Result<()> {
        let lock = self.lock;
        std::mem::forget(self);
        bidlock::release(&Page::new(lock))
    }
}

impl Drop for LockGuard<'_> {
    fn drop(&mut self) {
        let _ = self.lock.tx.write_u8(self.lock.slot, 0);
    }
}

#[cfg(test)]
mod tests {
    use crate::Node;
    use memchan_core::sync::Ordering;
    use memchan_core::transport::Transport;
    use memchan_core::Config;

    fn cluster(tag: &str) -> String {
        format!("lock-{tag}-{}", std::process::id())
    }

    /// A release bypasses the order point, yet reaches a copy of the lock page made
    /// for a new bidder while the lock was held (the copy shows the holder's bid).
    #[test]
    fn a_release_reaches_a_copy_made_while_the_lock_was_held() {
        let name = cluster("late");
        let a = Node::join(&name, &Config::default()).unwrap();
        let la = a.lock("L").unwrap();
        for round in 0..3 {
            // A new node each round: its copy is made by `Inner::attach_rx`.
            let b = Node::join(&name, &Config::default()).unwrap();
            let held = la.acquire().unwrap();
            let lb = b.lock("L").unwrap();
            assert!(
                lb.try_acquire().unwrap().is_none(),
                "the copy shows the holder"
            );
            held.release().unwrap();
            assert_eq!(
                lb.rx.load_u8(la.slot).unwrap(),
                0,
                "the clear reached the copy, round {round}"
            );
            lb.try_acquire()
                .unwrap()
                .expect("free once released")
                .release()
                .unwrap();
        }
    }

    /// While the order point is held (here by a forged word), a clear writes nothing
    /// without it: `unordered` refuses, and the caller sends an ordered packet.
    #[test]
    fn a_clear_does_not_bypass_a_held_order_point() {
        let name = cluster("held");
        let a = Node::join(&name, &Config::default()).unwrap();
        let la = a.lock("L").unwrap();
        la.tx.write_u8(la.slot, 1).unwrap();
        let word = &a.inner.local.ctl().order.word;
        let free = word.load(Ordering::Acquire);
        word.store(free | 201, Ordering::Release);
        let wrote = la.tx.bypass(la.slot, 0);
        word.store(free, Ordering::Release);
        assert!(!wrote.unwrap(), "written past a held point");
        assert_eq!(la.rx.load_u8(la.slot).unwrap(), 1, "the copy was written");
        la.tx.write_u8_unordered(la.slot, 0).unwrap();
        assert_eq!(la.rx.load_u8(la.slot).unwrap(), 0);
    }
}
