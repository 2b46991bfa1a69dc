//! Membership: the members bitmap, the event ring (join, leave, fail, with epochs),
//! declaring a node failed, its departure's steps (`memchan_core::membership`) placed
//! on the control block ([`Cleanup`]), and waiting for a number of members.

use super::*;
use memchan_core::membership::Departure;

impl Inner {
    /// Live members: the header's members bitmap, less any node whose slot is not
    /// ALIVE (a bit another member set for a free slot, a node being declared failed).
    pub(crate) fn members(&self) -> NodeSet {
        let c = self.local.ctl();
        let mut live = NodeSet::EMPTY;
        for n in load_set(&c.header.members).iter() {
            if c.nodes[n.index()].state.load(Ordering::Acquire) == node_state::ALIVE {
                live.insert(n);
            }
        }
        live
    }

    pub(crate) fn is_member(&self, n: NodeId) -> bool {
        n.index() < MAX_NODES
            && self.local.ctl().nodes[n.index()]
                .state
                .load(Ordering::Acquire)
                == node_state::ALIVE
    }

    /// Writes a membership event (under the flock). The ring is a seqlock per event:
    /// `seq` is 0 while the event is written and its index + 1 once it is complete.
    /// Epoch and head are words any member can write, so they wrap, never overflow.
    pub(super) fn push_event(&self, node: NodeId, incarnation: u64, kind: EventKind) -> u64 {
        let c = self.local.ctl();
        let epoch = c
            .header
            .epoch
            .fetch_add(1, Ordering::AcqRel)
            .wrapping_add(1);
        let ring = &c.events;
        let head = ring.head.load(Ordering::Relaxed);
        ring.events[(head % ring.events.len() as u64) as usize].write(
            head,
            &MembershipEvent {
                epoch,
                node,
                incarnation,
                kind,
            },
        );
        ring.head.store(head.wrapping_add(1), Ordering::Release);
        Notify::new(&c.header.event_seq, &c.header.event_waiters).post(&SharedFutex);
        epoch
    }

    /// Number of membership events written so far (a cursor for [`next_event`]).
    pub(crate) fn event_head(&self) -> u64 {
        self.local.ctl().events.head.load(Ordering::Acquire)
    }

    /// The event at `cursor`, waiting up to `timeout` for it. Events older than the ring
    /// are skipped (the cursor moves to the oldest kept).
    ///
    /// Each slot is a seqlock (`memchan_core::event::EventSlot`), so an event is read
    /// whole or not at all. Every word of the ring can be another member's: a head
    /// that moved back is followed (the cursor drops to it), an event with a node id or
    /// kind memchan never writes is skipped, and so is a published event whose slot no
    /// longer holds it (never waited on: its writer may have died half-way). Each sleep
    /// is cut to one heartbeat, so a forged waiter count costs latency, not the event.
    pub(crate) fn next_event(
        &self,
        cursor: &mut u64,
        timeout: Option<Duration>,
    ) -> Option<MembershipEvent> {
        let c = self.local.ctl();
        let ring = &c.events;
        let notify = Notify::new(&c.header.event_seq, &c.header.event_waiters);
        let deadline = timeout.map(|t| Instant::now() + t);
        let n = ring.events.len() as u64;
        let mut first = true;
        loop {
            // Also between skipped events: a member that keeps writing the ring must
            // not hold a bounded wait past its timeout.
            if !first && deadline.is_some_and(|d| Instant::now() >= d) {
                return None;
            }
            first = false;
            let seen = notify.current();
            let head = ring.head.load(Ordering::Acquire);
            if head < *cursor {
                *cursor = head;
            }
            if head > *cursor {
                *cursor = (*cursor).max(head.saturating_sub(n));
                let at = *cursor;
                *cursor = at.wrapping_add(1);
                match ring.events[(at % n) as usize].read(at) {
                    Ok(ev) => return Some(ev),
                    // Event `at` was published (head passed it) and its slot no longer
                    // holds it: overwritten by a later one (or forged). Skip it, as the
                    // ring skips every event older than it keeps; never wait on the
                    // slot, whose writer may have died half-way.
                    Err(SlotMiss::NotHeld) => continue,
                    Err(SlotMiss::Forged) => {
                        tracing::warn!(
                            cluster = %self.local.cluster,
                            event = at,
                            "skipped a membership event memchan never writes"
                        );
                        continue;
                    }
                }
            }
            let slice = self.local.heartbeat;
            let left = match deadline {
                Some(d) => {
                    let l = d.saturating_duration_since(Instant::now());
                    if l.is_zero() {
                        return None;
                    }
                    l.min(slice)
                }
                None => slice,
            };
            notify.wait(seen, Some(left), &SharedFutex);
        }
    }

    /// Declares `node` (incarnation `inc`) failed and isolates it, unless another
    /// survivor already did.
    pub(crate) fn declare_failed(&self, node: NodeId, inc: u64) {
        if self.local.ctl().nodes[node.index()]
            .incarnation
            .load(Ordering::Acquire)
            == inc
            && self.mark_failed(node, node_state::ALIVE)
        {
            self.finish_failed(node, inc);
        }
    }

    /// Takes over a slot left in a state that is neither FREE nor ALIVE for long (a
    /// survivor that died or gave up half-way through a cleanup, or a word another
    /// member wrote): marks it FAILED (from `state`) and cleans it up.
    pub(crate) fn reap_stuck(&self, node: NodeId, state: u32, inc: u64) {
        let slot = &self.local.ctl().nodes[node.index()];
        if slot.incarnation.load(Ordering::Acquire) == inc
            && (state == node_state::FAILED || self.mark_failed(node, state))
        {
            self.finish_failed(node, inc);
        }
    }

    /// The rest of an isolation after the slot was marked FAILED: finish its ordered
    /// packet (before taking the plane: a plane holder may be queued behind it at the
    /// order point), then clean it up under the plane if it still is that FAILED
    /// incarnation (another survivor may have been first). If the plane cannot be had
    /// (`Error::Stalled`) the slot stays FAILED, out of `members()`, and the service
    /// threads of the cluster retry ([`reap_stuck`](Self::reap_stuck)).
    pub(super) fn finish_failed(&self, node: NodeId, inc: u64) {
        self.order().recover(node);
        match self.plane() {
            Ok(_g) => {
                let slot = &self.local.ctl().nodes[node.index()];
                if slot.state.load(Ordering::Acquire) == node_state::FAILED
                    && slot.incarnation.load(Ordering::Acquire) == inc
                {
                    self.cleanup_failed(node, inc);
                }
            }
            Err(e) => tracing::warn!(
                cluster = %self.local.cluster,
                node = node.0,
                error = %e,
                "could not clean up a failed node; it stays FAILED until a retry"
            ),
        }
    }

    /// `from` -> FAILED; true for the one caller that made the change.
    pub(super) fn mark_failed(&self, node: NodeId, from: u32) -> bool {
        self.local.ctl().nodes[node.index()]
            .state
            .compare_exchange(
                from,
                node_state::FAILED,
                Ordering::AcqRel,
                Ordering::Relaxed,
            )
            .is_ok()
    }

    /// Isolates a failed node completely, then tells everyone (the departure of
    /// `memchan_core::membership`), and frees its slot (under the plane).
    pub(super) fn cleanup_failed(&self, node: NodeId, inc: u64) {
        let gone = Departed {
            node,
            incarnation: inc,
            cause: Cause::Failed,
        };
        depart(&mut Cleanup(self), &gone);
        self.local.ctl().nodes[node.index()]
            .state
            .store(node_state::FREE, Ordering::Release);
    }

    /// Removes `node` from every segment's rx set and deletes its receive memory, and
    /// its journal object, the last of its files (after `Order::recover` read it).
    /// Every segment's `rx_gen` moves, also where `node` mapped nothing: that is how
    /// the node's own direct-deposit path learns, at its next write, to re-check
    /// whether it may still send (see `TxMapping::deposit`).
    pub(super) fn drop_rx_everywhere(&self, node: NodeId, inc: u64) {
        let c = self.local.ctl();
        ShmMap::unlink(&crate::local::journal_name(&self.local.cluster, node, inc));
        // Only once its process is gone: an isolated node that lives on (hung, of
        // another uid) must still show as live to a recovery of the order point it
        // may hold. Its own end removes the file otherwise (`PresenceLock`), or the
        // cluster's last node does.
        if node != self.local.me && self.local.vacant(node, inc) {
            ShmMap::unlink(&crate::local::live_name(&self.local.cluster, node, inc));
        }
        for (i, seg) in c.segs.iter().enumerate() {
            if seg.state.load(Ordering::Acquire) != seg_state::LIVE {
                continue;
            }
            let mut set = load_set(&seg.rx_set);
            if set.contains(node) {
                set.remove(node);
                store_set(&seg.rx_set, &set);
            }
            seg.rx_gen.fetch_add(1, Ordering::AcqRel);
            let gen = seg.generation.load(Ordering::Acquire);
            ShmMap::unlink(&self.local.rx_name(i as u32, gen, node, inc));
        }
    }

    /// Deletes `node`'s receive memory of every live segment, leaving the rx sets alone.
    pub(super) fn unlink_rx_of(&self, node: NodeId, inc: u64) {
        for (i, seg) in self.local.ctl().segs.iter().enumerate() {
            if seg.state.load(Ordering::Acquire) == seg_state::LIVE {
                let gen = seg.generation.load(Ordering::Acquire);
                ShmMap::unlink(&self.local.rx_name(i as u32, gen, node, inc));
            }
        }
    }

    /// Writes 0 into `node`'s bid slot of every cluster lock, so a lock it held is free.
    ///
    /// Not while `node` still holds the order point (a failed holder whose death could
    /// not be confirmed, see `Order::recover`): each release is an ordered write that
    /// would wait for the point until it times out. Its locks then stay set; so do
    /// the rest when one release gives `Error::Stalled` (the others would wait as long).
    pub(super) fn release_locks_of(&self, node: NodeId) {
        let c = self.local.ctl();
        if self.order().holder() == Some(u32::from(node.0)) {
            tracing::warn!(
                cluster = %self.local.cluster,
                node = node.0,
                "a failed node still holds the order point; its locks are not released"
            );
            return;
        }
        for i in 0..MAX_SEGMENTS {
            let seg = &c.segs[i];
            if seg.state.load(Ordering::Acquire) != seg_state::LIVE
                || seg.flags.load(Ordering::Acquire) & seg_state::FLAG_LOCK == 0
            {
                continue;
            }
            let gen = seg.generation.load(Ordering::Acquire);
            if let Ok(Some(segref)) = self.local.seg_by_index(i as u32, gen) {
                let dests = load_set(&seg.rx_set);
                let mut targets = Targets::new();
                if let Err(e @ Error::Stalled { .. }) =
                    self.order()
                        .ordered_packet(&segref, &dests, &mut targets, node.index(), &[0])
                {
                    tracing::warn!(
                        cluster = %self.local.cluster,
                        node = node.0,
                        error = %e,
                        "could not release the locks of a node"
                    );
                    return;
                }
            }
        }
    }

    /// Wakes every barrier sleeper (on every node's pair): they re-check membership.
    pub(super) fn release_barrier_waiters(&self) {
        for s in &self.local.ctl().nodes {
            if s.bar_waiters.load(Ordering::SeqCst) != 0 {
                Notify::new(&s.bar_seq, &s.bar_waiters).post(&SharedFutex);
            }
        }
    }

    /// Adds or removes `n` in the members bitmap (under the flock).
    pub(super) fn set_member(&self, n: NodeId, member: bool) {
        let words = &self.local.ctl().header.members;
        let mut set = load_set(words);
        if member {
            set.insert(n);
        } else {
            set.remove(n);
        }
        store_set(words, &set);
    }

    /// Waits until at least `n` nodes are members, asleep between membership events
    /// (every join, leave and failure posts the event notify pair; each sleep is cut to
    /// one heartbeat, so a wake-up another member swallowed costs latency only).
    pub(crate) fn wait_for_members(&self, n: usize, timeout: Duration) -> Result<()> {
        let c = self.local.ctl();
        let notify = Notify::new(&c.header.event_seq, &c.header.event_waiters);
        let deadline = Instant::now() + timeout;
        loop {
            let seen = notify.current();
            self.local.check_alive()?;
            if self.members().len() >= n {
                return Ok(());
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Error::Timeout(timeout, "cluster members"));
            }
            notify.wait(seen, Some(left.min(self.local.heartbeat)), &SharedFutex);
        }
    }

    /// Header fields for status and tests.
    pub(crate) fn epoch(&self) -> u64 {
        self.local.ctl().header.epoch.load(Ordering::Acquire)
    }
}

/// A departure's steps on the control block, run by a survivor for a failed node or by
/// a leaver for itself, holding the plane (`memchan_core::membership`).
pub(super) struct Cleanup<'a>(pub(super) &'a Inner);

impl Departure for Cleanup<'_> {
    fn expel(&mut self, d: &Departed) {
        // From here the node's own data path refuses to send (see `check_alive`), and
        // the rx_gen move of `drop_rx` makes its direct deposits re-check.
        self.0.local.ctl().nodes[d.node.index()]
            .incarnation
            .store(0, Ordering::Release);
        self.0.set_member(d.node, false);
    }

    fn drop_rx(&mut self, d: &Departed) {
        self.0.drop_rx_everywhere(d.node, d.incarnation);
    }

    fn clear_locks(&mut self, d: &Departed) {
        // A leaver released its own before it was expelled (`Inner::leave`): the order
        // point takes no ordered write of a node no longer alive.
        if d.cause == Cause::Failed {
            self.0.release_locks_of(d.node);
        }
    }

    fn announce(&mut self, d: &Departed) -> u64 {
        if d.cause == Cause::Failed {
            self.0
                .local
                .ctl()
                .header
                .isolations
                .fetch_add(1, Ordering::Relaxed);
        }
        self.0.push_event(d.node, d.incarnation, d.cause.event())
    }

    fn dismiss(&mut self, d: &Departed, epoch: u64) {
        // What the isolated node's `Error::Isolated` names (a leaver is not isolated).
        if d.cause == Cause::Failed {
            self.0.local.ctl().nodes[d.node.index()]
                .isolated_epoch
                .store(epoch, Ordering::Release);
        }
    }

    fn release_waiters(&mut self, _: &Departed) {
        self.0.release_barrier_waiters();
    }
}
