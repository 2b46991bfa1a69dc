//! The journal of the packet in flight at a point of global order: the holder records
//! its packet before it applies it anywhere and counts the destinations it has done,
//! so that a survivor that takes the point over from a holder that died (see
//! [`OrderPoint::take_over`]) finishes the packet where it stopped. A packet is then
//! applied at all of its destinations or at none, and before any later ordered packet.
//!
//! The journal is two words in the transport's shared memory, `state` and `progress`,
//! beside a record that only the transport knows (the one-host transport's is
//! `control::Journal`: segment, offset, destinations, payload). [`Journal`] owns the
//! steps and their memory orderings; the transport supplies, as closures, how the
//! record is written and how the packet is applied.
//!
//! # Steps
//!
//! ```text
//!  holder (under the order point)          state      progress
//!    begin:   write the record             IDLE       -
//!             progress = 0 (Relaxed)       IDLE       0
//!             state = APPLYING (Release)   APPLYING   0         the record is published
//!    applied: apply at destination i,
//!             progress = i + 1 (Release)   APPLYING   i + 1
//!    end:     state = IDLE (Release)       IDLE       n
//!
//!  survivor (after OrderPoint::take_over)
//!    finish:  state by RMW; if APPLYING: progress by RMW, apply the record at
//!             destinations progress.., state = IDLE (Release)
//! ```
//!
//! Why the survivor reads by read-modify-write (`fetch_add(0, AcqRel)`): it may have
//! learned of the death by a heartbeat timeout, which synchronises with nothing the
//! holder wrote, and a plain load may then read a stale state or progress and leave
//! the packet half applied (the loom models found this). An RMW reads the latest value
//! and synchronises with the holder's Release store of it, so the record and every
//! apply counted in `progress` are visible. A destination the holder applied but had
//! not counted yet gets the packet again, whole: the same bytes at the same place,
//! before anything else.
//!
//! ```
//! use memchan_core::journal::{self, Journal};
//! use memchan_core::order::OrderPoint;
//! use memchan_core::sync::{AtomicU32, AtomicU64};
//! let (word, state, progress) = (AtomicU64::new(0), AtomicU32::new(0), AtomicU32::new(0));
//! let (point, j) = (OrderPoint::new(&word), Journal::new(&state, &progress));
//! let mut dests = [0u8; 3];
//! // Node 7 enters, journals its packet, applies it at the first destination and dies.
//! point.enter(7, |_| ());
//! j.begin(|| { /* write the record */ });
//! dests[0] = 42;
//! j.applied(0);
//! // Node 1 finds it failed, takes the point over and finishes the packet.
//! let left = journal::recover(point, j, 7, 1, || true, |from| {
//!     dests[from..].fill(42);
//! });
//! assert_eq!(left, Some(true));
//! assert_eq!(dests, [42; 3]);
//! assert_eq!(point.holder(), None);
//! ```

use crate::order::{owner_of, OrderPoint};
use crate::sync::{AtomicU32, Ordering};

/// `state`: no packet in flight (or the holder has not published its record yet).
pub const IDLE: u32 = 0;
/// `state`: the record is complete; destinations `progress..` are still to be applied.
pub const APPLYING: u32 = 1;

/// A view of the two words that make a journal.
#[derive(Clone, Copy)]
pub struct Journal<'a> {
    state: &'a AtomicU32,
    progress: &'a AtomicU32,
}

impl<'a> Journal<'a> {
    /// A journal over `state` ([`IDLE`] or [`APPLYING`]) and `progress` (destinations
    /// done).
    pub fn new(state: &'a AtomicU32, progress: &'a AtomicU32) -> Self {
        Journal { state, progress }
    }

    /// Holder, first step: `record` writes the packet's record (plain or Relaxed
    /// stores are enough), then the journal is marked [`APPLYING`] with nothing applied,
    /// which publishes the record.
    pub fn begin(&self, record: impl FnOnce()) {
        record();
        self.progress.store(0, Ordering::Relaxed);
        self.state.store(APPLYING, Ordering::Release);
    }

    /// Holder: destination `i` (counted from 0, in the order the record gives) has the
    /// packet.
    pub fn applied(&self, i: usize) {
        self.progress.store(i as u32 + 1, Ordering::Release);
    }

    /// Holder, last step: every destination has the packet.
    pub fn end(&self) {
        self.state.store(IDLE, Ordering::Release);
    }

    /// The holder's whole packet: [`begin`](Self::begin) with `record`, `apply` at each
    /// of `dests` in order, each followed by [`applied`](Self::applied), then
    /// [`end`](Self::end).
    pub fn apply<T>(
        &self,
        record: impl FnOnce(),
        dests: impl IntoIterator<Item = T>,
        mut apply: impl FnMut(T),
    ) {
        self.begin(record);
        for (i, d) in dests.into_iter().enumerate() {
            apply(d);
            self.applied(i);
        }
        self.end();
    }

    /// Survivor, holding the point it took over: if a packet is journaled, calls
    /// `finish(from)`, which applies the recorded packet at its destinations `from..`
    /// (reading the record is safe there), and marks the journal [`IDLE`]. Returns
    /// whether there was a packet.
    pub fn finish(&self, finish: impl FnOnce(usize)) -> bool {
        if self.state.fetch_add(0, Ordering::AcqRel) != APPLYING {
            return false;
        }
        let from = self.progress.fetch_add(0, Ordering::AcqRel) as usize;
        finish(from);
        self.state.store(IDLE, Ordering::Release);
        true
    }
}

/// A survivor's recovery of the point from `dead`: if `dead` holds it (the word read
/// by a read-modify-write, [`OrderPoint::load_latest`]) and `confirm()` (the
/// transport's word that `dead` is declared failed and can store nothing more; the
/// one-host transport kills a hung holder there), takes the point over as `me` from
/// that word, finishes its journaled packet with `finish` ([`Journal::finish`]) and
/// leaves.
///
/// Returns `None` if it did not take over (not held by `dead`, not confirmed, or
/// another survivor was first), else whether its own [`leave`](OrderPoint::leave)
/// succeeded (false only if this node in turn was declared failed meanwhile).
pub fn recover(
    point: OrderPoint<'_>,
    journal: Journal<'_>,
    dead: u32,
    me: u32,
    confirm: impl FnOnce() -> bool,
    finish: impl FnOnce(usize),
) -> Option<bool> {
    let seen = point.load_latest();
    if owner_of(seen) != Some(dead) || !confirm() {
        return None;
    }
    if !point.take_over(seen, me) {
        return None;
    }
    journal.finish(finish);
    Some(point.leave(me))
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::sync::AtomicU64;
    use std::cell::RefCell;

    struct Words {
        word: AtomicU64,
        state: AtomicU32,
        progress: AtomicU32,
    }

    fn words() -> Words {
        Words {
            word: AtomicU64::new(0),
            state: AtomicU32::new(IDLE),
            progress: AtomicU32::new(0),
        }
    }

    impl Words {
        fn point(&self) -> OrderPoint<'_> {
            OrderPoint::new(&self.word)
        }
        fn journal(&self) -> Journal<'_> {
            Journal::new(&self.state, &self.progress)
        }
    }

    #[test]
    fn holder_records_first_counts_each_destination_and_ends_idle() {
        let w = words();
        let log = RefCell::new(Vec::new());
        let j = w.journal();
        j.apply(
            || {
                log.borrow_mut()
                    .push(format!("record {}", w.state.load(Ordering::Relaxed)))
            },
            ["a", "b"],
            |d| {
                let (s, p) = (
                    w.state.load(Ordering::Relaxed),
                    w.progress.load(Ordering::Relaxed),
                );
                log.borrow_mut().push(format!("{d} {s} {p}"));
            },
        );
        assert_eq!(*log.borrow(), ["record 0", "a 1 0", "b 1 1"]);
        assert_eq!(w.state.load(Ordering::Relaxed), IDLE);
        assert_eq!(w.progress.load(Ordering::Relaxed), 2);
        assert!(!j.finish(|_| panic!("nothing to finish")));
    }

    #[test]
    fn survivor_finishes_from_progress() {
        let w = words();
        w.point().enter(3, |_| ());
        let j = w.journal();
        j.begin(|| ());
        j.applied(0);
        j.applied(1); // died here: two of four destinations done
        let from = RefCell::new(None);
        assert_eq!(
            recover(
                w.point(),
                j,
                3,
                0,
                || true,
                |f| *from.borrow_mut() = Some(f)
            ),
            Some(true)
        );
        assert_eq!(*from.borrow(), Some(2));
        assert_eq!(w.state.load(Ordering::Relaxed), IDLE);
        assert_eq!(w.point().holder(), None);
        assert_eq!(
            w.point().completed(),
            1,
            "the dead holder's turn counts once"
        );
    }

    #[test]
    fn survivor_leaves_an_idle_journal_alone_and_still_frees_the_point() {
        let w = words();
        w.point().enter(3, |_| ()); // died before journaling
        let r = recover(
            w.point(),
            w.journal(),
            3,
            0,
            || true,
            |_| panic!("no packet"),
        );
        assert_eq!(r, Some(true));
        assert_eq!(w.point().holder(), None);
    }

    #[test]
    fn no_take_over_from_a_live_or_unconfirmed_or_other_holder() {
        let w = words();
        w.point().enter(3, |_| ());
        w.journal().begin(|| ());
        let never = |_| panic!("must not finish");
        assert_eq!(recover(w.point(), w.journal(), 3, 0, || false, never), None);
        assert_eq!(recover(w.point(), w.journal(), 4, 0, || true, never), None);
        assert_eq!(w.point().holder(), Some(3));
        assert_eq!(w.state.load(Ordering::Relaxed), APPLYING);
        let free = words();
        assert_eq!(
            recover(free.point(), free.journal(), 3, 0, || true, never),
            None
        );
    }
}
