//! Membership events: every node sees the same events in the same order, whatever
//! the transport; and [`EventSlot`], a slot of the ring that keeps them in shared
//! memory.

use crate::names::{NodeId, MAX_NODES};
use crate::sync::{fence, AtomicU32, AtomicU64, Ordering};

/// What happened to a node.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    /// The node joined.
    Joined,
    /// The node left cleanly.
    Left,
    /// The node died or hung and was isolated.
    Failed,
}

/// A membership change, seen by every node in the same order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MembershipEvent {
    /// The epoch this change started.
    pub epoch: u64,
    /// The node concerned.
    pub node: NodeId,
    /// Its incarnation (a rejoin gets a new one).
    pub incarnation: u64,
    /// What happened.
    pub kind: EventKind,
}

/// One slot of a ring of membership events in shared memory, written and read as a
/// **seqlock**: `seq` says which event the slot holds, and a reader keeps what it read
/// only if `seq` named the event it wanted before and after it read the fields, so it
/// never returns a slot half overwritten.
///
/// ```text
///  writer (one at a time)                       reader of event i
///    seq = 0 (Relaxed)       being written        s1 = seq (Acquire); s1 == i + 1?
///    fence(Release)                               fields (Relaxed)
///    fields (Relaxed)                             fence(Acquire)
///    seq = i + 1 (Release)   holds event i        seq (Relaxed) == s1?
/// ```
///
/// Why it is enough: if a reader's field load reads a store of a later writer, that
/// writer's Release fence synchronises with the reader's Acquire fence, so the
/// reader's second load of `seq` sees that writer's 0 or a later value, never `i + 1`
/// again (event numbers only grow). A slot that does not hold event `i` whole reads as
/// [`SlotMiss::NotHeld`]: the event was overwritten (or the slot forged), never half of
/// two events. The loom model `event_slot_is_never_torn` in `tests/loom.rs` checks
/// this code.
///
/// The fields are public because they are words of shared memory that any member can
/// write (the hostile-block tests do); `write` and `read` are the protocol.
#[repr(C)]
pub struct EventSlot {
    /// Event number + 1 of the event stored here; 0 while being written or never.
    pub seq: AtomicU64,
    /// [`MembershipEvent::epoch`].
    pub epoch: AtomicU64,
    /// [`MembershipEvent::incarnation`].
    pub incarnation: AtomicU64,
    /// [`MembershipEvent::node`].
    pub node: AtomicU32,
    /// [`EventKind`] as 0, 1, 2.
    pub kind: AtomicU32,
}

/// Why [`EventSlot::read`] returned no event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SlotMiss {
    /// The slot does not hold the event whole: it is being written, or holds a later
    /// event (or a forged `seq`). The event is gone from the ring.
    NotHeld,
    /// The slot holds the event whole, but no writer stores it: a node id or kind out
    /// of range.
    Forged,
}

impl Default for EventSlot {
    fn default() -> Self {
        EventSlot {
            seq: AtomicU64::new(0),
            epoch: AtomicU64::new(0),
            incarnation: AtomicU64::new(0),
            node: AtomicU32::new(0),
            kind: AtomicU32::new(0),
        }
    }
}

impl EventSlot {
    /// Stores `ev` as event number `index`. Writers must take turns (the one-host
    /// transport writes under the control block's `flock`).
    pub fn write(&self, index: u64, ev: &MembershipEvent) {
        self.seq.store(0, Ordering::Relaxed);
        // Orders the mark before the field stores (a Release store would order only
        // what comes before it).
        fence(Ordering::Release);
        self.epoch.store(ev.epoch, Ordering::Relaxed);
        self.incarnation.store(ev.incarnation, Ordering::Relaxed);
        self.node.store(u32::from(ev.node.0), Ordering::Relaxed);
        self.kind.store(ev.kind as u32, Ordering::Relaxed);
        self.seq.store(index.wrapping_add(1), Ordering::Release);
    }

    /// Event number `index`, if this slot holds it whole and it is one a writer could
    /// have stored.
    pub fn read(&self, index: u64) -> Result<MembershipEvent, SlotMiss> {
        let want = index.wrapping_add(1);
        if self.seq.load(Ordering::Acquire) != want {
            return Err(SlotMiss::NotHeld);
        }
        let epoch = self.epoch.load(Ordering::Relaxed);
        let incarnation = self.incarnation.load(Ordering::Relaxed);
        let node = self.node.load(Ordering::Relaxed);
        let kind = self.kind.load(Ordering::Relaxed);
        // Orders the field loads before the re-check (an Acquire load would order only
        // what comes after it).
        fence(Ordering::Acquire);
        if self.seq.load(Ordering::Relaxed) != want {
            return Err(SlotMiss::NotHeld);
        }
        let kind = match kind {
            0 => EventKind::Joined,
            1 => EventKind::Left,
            2 => EventKind::Failed,
            _ => return Err(SlotMiss::Forged),
        };
        if node as usize >= MAX_NODES {
            return Err(SlotMiss::Forged);
        }
        Ok(MembershipEvent {
            epoch,
            node: NodeId(node as u16),
            incarnation,
            kind,
        })
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    fn ev(i: u64) -> MembershipEvent {
        MembershipEvent {
            epoch: 10 + i,
            node: NodeId((i % MAX_NODES as u64) as u16),
            incarnation: 100 + i,
            kind: [EventKind::Joined, EventKind::Left, EventKind::Failed][i as usize % 3],
        }
    }

    #[test]
    fn a_slot_returns_only_the_event_it_holds() {
        let s = EventSlot::default();
        assert_eq!(s.read(0), Err(SlotMiss::NotHeld), "never written");
        s.write(0, &ev(0));
        assert_eq!(s.read(0), Ok(ev(0)));
        assert_eq!(s.read(1), Err(SlotMiss::NotHeld));
        s.write(7, &ev(7));
        assert_eq!(s.read(0), Err(SlotMiss::NotHeld), "overwritten");
        assert_eq!(s.read(7), Ok(ev(7)));
        s.kind.store(9, Ordering::Relaxed);
        assert_eq!(s.read(7), Err(SlotMiss::Forged), "a kind no writer stores");
        s.write(8, &ev(8));
        s.node.store(MAX_NODES as u32, Ordering::Relaxed);
        assert_eq!(s.read(8), Err(SlotMiss::Forged), "a node id out of range");
    }

    /// A writer overwrites one slot as fast as it can while a reader reads it: every
    /// event the reader gets is one the writer wrote, whole (the fields of one event).
    #[test]
    fn a_reader_never_gets_a_torn_event() {
        let rounds: u64 = if cfg!(miri) { 100 } else { 200_000 };
        let slot = std::sync::Arc::new(EventSlot::default());
        let w = {
            let slot = slot.clone();
            std::thread::spawn(move || {
                for i in 0..rounds {
                    slot.write(i, &ev(i));
                }
            })
        };
        while !w.is_finished() {
            // The event the slot names now, if any.
            let Some(i) = slot.seq.load(Ordering::Relaxed).checked_sub(1) else {
                continue;
            };
            if let Ok(e) = slot.read(i) {
                assert_eq!(e, ev(i), "torn event {i}");
            }
        }
        w.join().unwrap();
        assert_eq!(slot.read(rounds - 1), Ok(ev(rounds - 1)));
    }
}
