//! A node's departure, one description for both transports: what must happen, and in
//! which order, when a node leaves or the cluster declares it failed. [`depart`] runs
//! the steps; each transport says how on its memory or frames ([`Departure`]).
//!
//! 1. **Expel** it: out of the member set, and nothing more of it lands (its writes
//!    are refused or never read). What the transport had under way for it that
//!    others wait on is settled here too.
//! 2. **Drop its receive memory**: out of every segment's rx set. Segments stay: they
//!    belong to a uid and gid, not to the node that created them, and live until
//!    freed.
//! 3. **Clear its locks**: its slot of every lock page, so a lock it held or bid for
//!    is free (a clear needs no order, `memchan_core::bidlock`). After the expulsion:
//!    a failed node that still runs could otherwise bid again after the clear and
//!    hold the lock for good.
//! 4. **Announce** it: the epoch moves on by one and every survivor gets one event
//!    (Left or Failed) with it. After steps 1-3, so a survivor that sees the event
//!    relies on nothing more of the node landing and finds its locks free.
//! 5. **Dismiss** it: a failed node (it may still run) learns that it was isolated,
//!    and at which epoch; its calls fail with `Error::Isolated` from then on.
//! 6. **Release the waiters**: every wait of a survivor on it ends. Barriers complete
//!    without it, since it is no member of their scope any more
//!    (`memchan_core::barrier`); requests that needed it end.
//!
//! What stays with each transport, because it differs:
//! - Who notices and who runs the steps: on one host the first survivor to notice
//!   (after finishing the node's packet at the order point, then under the
//!   control-plane lock); through a hub the hub, under its lock.
//! - A node that leaves one host runs its own departure, and the order point takes
//!   ordered writes from live nodes only: it releases its locks itself before it is
//!   expelled, so step 3 finds nothing left to clear. Without the control-plane lock
//!   it leaves by the words it alone writes and runs none of these steps.
//! - What comes after: the one-host slot is freed for a joiner; a hub copies its
//!   tables to its standbys.

use crate::event::EventKind;
use crate::names::NodeId;

/// Why a node stops being a member.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cause {
    /// It left.
    Left,
    /// It was declared failed and isolated.
    Failed,
}

impl Cause {
    /// The event survivors get.
    pub fn event(self) -> EventKind {
        match self {
            Cause::Left => EventKind::Left,
            Cause::Failed => EventKind::Failed,
        }
    }
}

/// Who departs, and why.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Departed {
    /// The node.
    pub node: NodeId,
    /// Its incarnation (the one that departs; a rejoin gets a new one).
    pub incarnation: u64,
    /// Why.
    pub cause: Cause,
}

/// A transport's side of a departure: one method a step (see the module doc).
pub trait Departure {
    /// Step 1: the node is no member any more and nothing more of it lands.
    fn expel(&mut self, d: &Departed);
    /// Step 2: the node is in no segment's rx set.
    fn drop_rx(&mut self, d: &Departed);
    /// Step 3: the node's slot of every lock page is clear.
    fn clear_locks(&mut self, d: &Departed);
    /// Step 4: moves the epoch on and tells every survivor (event `d.cause.event()`);
    /// returns the new epoch.
    fn announce(&mut self, d: &Departed) -> u64;
    /// Step 5: lets the node go; a failed one learns it was isolated at `epoch`.
    fn dismiss(&mut self, d: &Departed, epoch: u64);
    /// Step 6: every survivor waiting on the node (in a barrier, for a request)
    /// looks again without it.
    fn release_waiters(&mut self, d: &Departed);
}

/// Runs `d`'s departure on `t`, in the order of the module doc; returns the epoch of
/// the event the survivors got.
pub fn depart(t: &mut impl Departure, d: &Departed) -> u64 {
    t.expel(d);
    t.drop_rx(d);
    t.clear_locks(d);
    let epoch = t.announce(d);
    t.dismiss(d, epoch);
    t.release_waiters(d);
    epoch
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::names::NodeSet;

    /// A cluster as the steps see it: members, rx sets, lock slots, the events, who
    /// was told it was isolated and whether waiters looked again, with the state each
    /// step found.
    #[derive(Default)]
    struct Model {
        members: NodeSet,
        rx: NodeSet,
        locks: NodeSet,
        epoch: u64,
        events: Vec<(u64, NodeId, EventKind)>,
        /// (members, rx, locks) when the event went out.
        at_event: Option<(NodeSet, NodeSet, NodeSet)>,
        isolated: Option<(NodeId, u64)>,
        /// Members when the waiters looked again, and whether the event was out.
        at_release: Option<(NodeSet, bool)>,
    }

    impl Departure for Model {
        fn expel(&mut self, d: &Departed) {
            self.members.remove(d.node);
        }
        fn drop_rx(&mut self, d: &Departed) {
            self.rx.remove(d.node);
        }
        fn clear_locks(&mut self, d: &Departed) {
            assert!(
                !self.members.contains(d.node),
                "locks cleared before the expulsion"
            );
            self.locks.remove(d.node);
        }
        fn announce(&mut self, d: &Departed) -> u64 {
            self.epoch += 1;
            self.events.push((self.epoch, d.node, d.cause.event()));
            self.at_event = Some((self.members, self.rx, self.locks));
            self.epoch
        }
        fn dismiss(&mut self, d: &Departed, epoch: u64) {
            if d.cause == Cause::Failed {
                self.isolated = Some((d.node, epoch));
            }
        }
        fn release_waiters(&mut self, _: &Departed) {
            self.at_release = Some((self.members, !self.events.is_empty()));
        }
    }

    fn cluster() -> Model {
        let all: NodeSet = [0, 1, 2].map(NodeId).into_iter().collect();
        Model {
            members: all,
            rx: all,
            locks: all,
            epoch: 7,
            ..Model::default()
        }
    }

    #[test]
    fn survivors_hear_of_a_failure_only_once_nothing_of_the_node_remains() {
        let mut m = cluster();
        let gone = NodeId(1);
        let d = Departed {
            node: gone,
            incarnation: 9,
            cause: Cause::Failed,
        };
        assert_eq!(depart(&mut m, &d), 8);
        assert_eq!(m.events, [(8, gone, EventKind::Failed)]);
        let (members, rx, locks) = m.at_event.unwrap();
        assert!(!members.contains(gone) && !rx.contains(gone) && !locks.contains(gone));
        assert!(
            members.contains(NodeId(0)) && locks.contains(NodeId(2)),
            "only it"
        );
        assert_eq!(m.isolated, Some((gone, 8)), "told its isolation's epoch");
        let (members, announced) = m.at_release.unwrap();
        assert!(
            !members.contains(gone) && announced,
            "waiters look without it"
        );
    }

    #[test]
    fn a_leaver_is_announced_as_left_and_not_told_it_was_isolated() {
        let mut m = cluster();
        let d = Departed {
            node: NodeId(0),
            incarnation: 3,
            cause: Cause::Left,
        };
        assert_eq!(depart(&mut m, &d), 8);
        assert_eq!(m.events, [(8, NodeId(0), EventKind::Left)]);
        assert_eq!(m.isolated, None);
        assert!(!m.locks.contains(NodeId(0)) && !m.rx.contains(NodeId(0)));
    }
}
