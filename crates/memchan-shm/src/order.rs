//! The point of global order on one host, as this node uses it: entering it (and
//! recovering it from a holder declared failed), sending an **ordered packet** through
//! it (journaled, then applied at every destination before the next ordered packet),
//! finishing a dead holder's journaled packet, and resolving destinations to receive
//! memory (the per-process cache of mapped receive memory, and each tx mapping's
//! [`Targets`]).
//!
//! The order point's word and its protocol are `memchan_core::order`, the journal's
//! steps `memchan_core::journal`; this module places the word in the control block
//! (`control::OrderLine`) and the journal in each holder's own journal object
//! (`record.rs`), and supplies the journal's record and how a packet is applied.
//!
//! Who may receive and who may have sent rests on kernel facts, never on words of the
//! control block: a destination gets a packet only if the owner of its receive memory
//! may read the segment ([`Order::view`]), and a failed holder's record is finished
//! only if the owner of its journal object may write the segment ([`Order::recover`]),
//! both by the segment's permission object (`perm.rs`).
//!
//! Below the control plane (`node.rs`) and the data path (`tx.rs`), which both call it;
//! it calls neither, only the leaves `local.rs`, `rx.rs`, `record.rs`, `perm.rs` and
//! `control.rs`.

use crate::control::{load_set, node_state, store_set, MAX_PACKET, MAX_SEGMENTS};
use crate::local::{Local, SegRef, STALL_CAP};
use crate::record::JournalObject;
use crate::rx::{RxObject, Target, WordOp};
use memchan_core::idle::ORDER_POINT;
use memchan_core::journal::{self, Journal};
use memchan_core::order::{owner_of, OrderPoint};
use memchan_core::sync::{fence, AtomicU32, Ordering};
use memchan_core::{Error, NodeId, NodeSet, Result, MAX_NODES};
use rustix::fd::OwnedFd;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

type ViewKey = (u32, u32, u16, u64, u64);

/// The receive memory of other nodes (and this node's own) mapped in this process,
/// by (segment index, generation, node, incarnation, inode of the segment's permission
/// object): mapped on first use by a sender, kept while the pair stays the same. The
/// inode, because index and generation are words any member can rewrite: a segment
/// made again under a reused index and generation has another permission object, so
/// a view admitted for the old one is not taken for it. `None`: that receive memory
/// belongs to a uid that may not read the segment, and is never delivered to.
pub(crate) struct Views(Mutex<HashMap<ViewKey, Option<Arc<RxObject>>>>);

impl Views {
    pub(crate) fn new() -> Views {
        Views(Mutex::new(HashMap::new()))
    }
}

/// The other members' processes as this node's service thread found them, by (slot,
/// incarnation). Recovery signals only through a [`Behind::Verified`] pidfd, never by
/// a pid read from shared memory.
pub(crate) struct Pidfds(Mutex<PidfdMap>);

/// What stands behind a member's slot, as found once per (slot, incarnation) from the
/// pid the slot carried then (`pid` below: a later write of the slot's pid word
/// changes nothing).
#[derive(Clone)]
pub(crate) enum Behind {
    /// Not looked at yet (the service thread has it queued).
    Pending,
    /// The slot's node: a process that maps this cluster's control block and the
    /// node's presence mark; the only kind of process memchan ever signals.
    Verified { fd: Arc<OwnedFd>, pid: u32 },
    /// A live process this node may not inspect (another user's, when the cluster is
    /// shared): its pidfd, if one could be opened, tells when it exits; it is never
    /// signalled.
    Opaque { fd: Option<Arc<OwnedFd>>, pid: u32 },
    /// No member: the pid names no process, or one that does not map the control
    /// block (a phantom slot another member wrote, or a dead node's reused pid), and
    /// the slot's presence lock is vacant (`presence.rs`).
    Nobody,
    /// The pid leads to no member, yet the slot's presence lock is held: a live node
    /// whose pid word was rewritten (or a lock another member holds). Never signalled;
    /// gone once the lock is vacant.
    Unseen,
}

/// (slot, incarnation) → what stands behind it.
pub(crate) type PidfdMap = HashMap<(usize, u64), Behind>;

impl Pidfds {
    pub(crate) fn new() -> Pidfds {
        Pidfds(Mutex::new(HashMap::new()))
    }

    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, PidfdMap> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Whether the process behind (slot, incarnation), a slot whose state word says
    /// FAILED, may be treated as a dead or hung holder. That word is any member's to
    /// write, so it decides nothing by itself: a verified process is killed only if
    /// it has exited or the kernel shows its heartbeat thread stopped (SIGSTOP, a
    /// tracer) or gone, and a live process this node found behind the slot, verified
    /// or not, is never taken over from.
    fn verdict(&self, slot: usize, inc: u64) -> Verdict {
        // Cloned out: the /proc reads below must not hold the map the heartbeat thread
        // also takes.
        let behind = self.lock().get(&(slot, inc)).cloned();
        match behind.as_ref() {
            Some(Behind::Verified { fd, pid }) => {
                let hung = exited(fd, Some(&ZERO))
                    || matches!(pulse(*pid, slot), None | Some(('T' | 't', _)));
                if hung {
                    Verdict::Kill(fd.clone(), *pid)
                } else {
                    Verdict::Alive
                }
            }
            Some(Behind::Opaque { fd: Some(fd), .. }) if !exited(fd, Some(&ZERO)) => Verdict::Alive,
            Some(Behind::Opaque { fd: Some(_), .. }) => Verdict::Gone,
            _ => Verdict::Unknown,
        }
    }
}

impl Pidfds {
    /// The CPU time (clock ticks, user + system) the application threads of the
    /// verified process behind (slot, incarnation) have used so far: memchan's own
    /// threads (`memchan-*`: heartbeat, service), which run in an idle process too, do
    /// not count. Read from `/proc/<pid>/task/*/stat` of the pid taken with its pidfd
    /// (never a pid word of the control block); `None` if none is verified.
    pub(crate) fn cpu_ticks(&self, slot: usize, inc: u64) -> Option<u64> {
        let behind = self.lock().get(&(slot, inc)).cloned();
        let pid = match behind {
            Some(Behind::Verified { fd, pid }) if !exited(&fd, Some(&ZERO)) => pid,
            _ => return None,
        };
        let mut sum = 0;
        for t in std::fs::read_dir(format!("/proc/{pid}/task"))
            .ok()?
            .flatten()
        {
            let Ok(stat) = std::fs::read_to_string(t.path().join("stat")) else {
                continue;
            };
            match stat_cpu(&stat) {
                Some((name, ticks)) if !name.starts_with("memchan-") => sum += ticks,
                _ => {}
            }
        }
        Some(sum)
    }
}

const ZERO: rustix::time::Timespec = rustix::time::Timespec {
    tv_sec: 0,
    tv_nsec: 0,
};

/// What [`Pidfds::verdict`] says of a failed holder's process.
enum Verdict {
    /// Its node (this pid), hung or dead: kill it (through this pidfd) and take over
    /// once gone.
    Kill(Arc<OwnedFd>, u32),
    /// The process found behind the slot exited (it may not have been the node).
    Gone,
    /// A live process that is not hung (or may be the node): leave it the point.
    Alive,
    /// Nothing verified behind the slot.
    Unknown,
}

/// This node's side of the point of global order: its identity and control block,
/// the receive memory it has mapped, and the verified pidfds of the other members.
#[derive(Clone, Copy)]
pub(crate) struct Order<'a> {
    local: &'a Local,
    views: &'a Views,
    pidfds: &'a Pidfds,
}

impl<'a> Order<'a> {
    pub(crate) fn new(local: &'a Local, views: &'a Views, pidfds: &'a Pidfds) -> Order<'a> {
        Order {
            local,
            views,
            pidfds,
        }
    }

    /// The order point's holder now, if any.
    pub(crate) fn holder(&self) -> Option<u32> {
        self.point().holder()
    }

    fn point(&self) -> OrderPoint<'a> {
        OrderPoint::new(&self.local.ctl().order.word)
    }

    fn me(&self) -> u32 {
        u32::from(self.local.me.0)
    }

    /// Waits for the order point, recovering it from a holder declared failed.
    ///
    /// A holder that keeps the point (the same word) for longer than
    /// [`Local::stall_bound`] (25 failure timeouts, at least 1 s) — alive but hung, a
    /// failed holder whose death cannot be confirmed, or a word forged in the control
    /// block — is left holding it, and this waiter gets `Error::Stalled` (`"the order
    /// point"`, naming the holder); so does a waiter that did not get in within
    /// [`STALL_CAP`] bounds in all (a word another member keeps changing).
    #[inline]
    pub(crate) fn enter(&self) -> Result<u64> {
        // An uncontended entry is one CAS on the data path of every ordered packet and
        // lock bid: the waiting (idle strategy, clock, stall bound) is out of line.
        match self.point().try_enter(self.me()) {
            Ok(turn) => Ok(turn),
            Err(_) => self.enter_slow(),
        }
    }

    /// [`enter`](Self::enter) once the point was found taken.
    #[cold]
    #[inline(never)]
    fn enter_slow(&self) -> Result<u64> {
        let ctl = self.local.ctl();
        let bound = self.local.stall_bound();
        let mut idle = ORDER_POINT.waiter();
        let mut held: Option<(u64, std::time::Instant)> = None;
        // Read the clock only once the point was found taken.
        let mut start: Option<std::time::Instant> = None;
        loop {
            let holder = match self.point().try_enter(self.me()) {
                Ok(turn) => return Ok(turn),
                Err(holder) => holder,
            };
            let start = *start.get_or_insert_with(std::time::Instant::now);
            idle.idle();
            if !idle.is_parked() {
                continue;
            }
            if (holder as usize) < MAX_NODES
                && ctl.nodes[holder as usize].state.load(Ordering::Acquire) == node_state::FAILED
            {
                self.recover(NodeId(holder as u16));
            }
            let w = self.point().load();
            match held {
                _ if start.elapsed() > bound * STALL_CAP => {
                    return Err(self.local.stalled(
                        "the order point",
                        bound * STALL_CAP,
                        Vec::new(),
                    ));
                }
                Some((seen, since)) if seen == w => {
                    if since.elapsed() > bound {
                        let holder = owner_of(w)
                            .filter(|&h| (h as usize) < MAX_NODES)
                            .map(|h| NodeId(h as u16));
                        return Err(self.local.stalled(
                            "the order point",
                            bound,
                            holder.into_iter().collect(),
                        ));
                    }
                }
                _ => held = Some((w, std::time::Instant::now())),
            }
        }
    }

    /// Leaves the order point after [`enter`](Self::enter); false if this node was
    /// declared failed meanwhile and a survivor took the point over.
    pub(crate) fn leave(&self) -> bool {
        self.point().leave(self.me())
    }

    /// Sends one ordered packet (≤ one page, not crossing a page) to `dests` as this
    /// node, through the point of global order. Journaled first, so a survivor can
    /// finish it if this process dies half-way.
    ///
    /// The destinations' receive memory is mapped before the point is entered (an
    /// `mmap` of a large segment takes long, and every ordered writer of the host would
    /// wait behind it); under the point the targets are only checked against the rx
    /// sets and membership of that moment. Should they have changed to a destination
    /// not mapped yet, the point is left and the mapping done outside, up to
    /// [`MAP_TRIES`] times (a cluster whose rx sets keep changing); after that it is
    /// done under the point.
    pub(crate) fn ordered_packet(
        &self,
        seg: &SegRef,
        dests: &NodeSet,
        targets: &mut Targets,
        offset: usize,
        data: &[u8],
    ) -> Result<()> {
        debug_assert!(data.len() <= MAX_PACKET);
        self.journaled(seg, dests, targets, offset, (0, data), |_, t, shift| {
            // SAFETY: the caller bounded the packet by the segment size; `targets.keep`
            // holds every mapping in the list.
            unsafe { t.apply(shift, offset, data) }
        })
    }

    /// A word operation (signal update, conditional write) as one ordered packet:
    /// applied at every destination in increasing node order under the order point,
    /// journaled with its op code so that a survivor finishes it as the same
    /// operation. Returns each destination's word before (`None`: receive disabled).
    pub(crate) fn ordered_word(
        &self,
        seg: &SegRef,
        dests: &NodeSet,
        targets: &mut Targets,
        offset: usize,
        op: WordOp,
    ) -> Result<Vec<(NodeId, Option<u64>)>> {
        let (code, payload, len) = op.encode();
        let mut out = Vec::with_capacity(targets.list.len());
        self.journaled(
            seg,
            dests,
            targets,
            offset,
            (code, &payload[..len]),
            |d, t, shift| {
                // SAFETY: the caller checked the word (aligned, in the segment);
                // `targets.keep` holds every mapping in the list.
                out.push((d, unsafe { t.word_op(shift, offset, op) }));
            },
        )?;
        Ok(out)
    }

    /// The journaled step both ordered packets share: enters the point with `targets`
    /// current, journals (op code, payload), applies at each destination in order
    /// (`apply(node, target, page shift)`), clears the payload and leaves.
    #[inline(always)]
    fn journaled(
        &self,
        seg: &SegRef,
        dests: &NodeSet,
        targets: &mut Targets,
        offset: usize,
        (code, payload): (u32, &[u8]),
        mut apply: impl FnMut(NodeId, Target, u32),
    ) -> Result<()> {
        let rec = self.local.journal()?.record();
        self.enter_for(seg, dests, targets)?;
        let journal = Journal::new(&rec.state, &rec.progress);
        journal.begin(|| {
            rec.seg.store(seg.idx, Ordering::Relaxed);
            rec.seg_gen.store(seg.generation, Ordering::Relaxed);
            rec.offset.store(offset as u64, Ordering::Relaxed);
            rec.len.store(payload.len() as u32, Ordering::Relaxed);
            rec.op.store(code, Ordering::Relaxed);
            store_set(&rec.dests, &targets.live);
            rec.store_payload(payload);
        });
        let shift = self.local.page.bytes().trailing_zeros();
        for (i, (d, t)) in targets.list.iter().enumerate() {
            apply(*d, *t, shift);
            journal.applied(i);
        }
        // Before `end`: a survivor that finds the packet still APPLYING finds every
        // destination done and applies nothing, so the payload is no longer needed and
        // no finished packet's bytes stay in the journal.
        rec.clear_payload(payload.len());
        journal.end();
        if !self.leave() {
            // We were declared failed while applying and a survivor finished the packet.
            self.local.check_alive()?;
        }
        Ok(())
    }

    /// Resolves `targets` and enters the point with them current (see
    /// [`ordered_packet`](Self::ordered_packet)).
    fn enter_for(&self, seg: &SegRef, dests: &NodeSet, targets: &mut Targets) -> Result<()> {
        let mut tries = 0;
        loop {
            targets.refresh(*self, seg, dests)?;
            self.enter()?;
            // Under the order point: who is alive and who maps the segment is now
            // fixed, and so is whether this node may still send (isolation would drop
            // our own copy and leave a lock bidder waiting for a bid that never comes
            // back).
            match self
                .local
                .check_alive()
                .and_then(|()| targets.resolve(*self, seg, dests, tries >= MAP_TRIES))
            {
                Ok(true) => break,
                Ok(false) => {
                    self.leave();
                    tries += 1;
                }
                Err(e) => {
                    self.leave();
                    return Err(e);
                }
            }
        }
        Ok(())
    }

    /// Writes `data` (one packet) at every destination **without** the order point,
    /// if nothing that the point orders overlaps the write; `Ok(false)` otherwise,
    /// and the caller sends it as an ordered packet (which writes every destination
    /// again). Only for a write whose place in the global order does not matter: a
    /// lock slot's clear (`lock.rs`, and why in `memchan_core::bidlock`). Costs no
    /// journal and one locked instruction instead of two.
    ///
    /// What must not overlap it: an ordered packet (none is in flight while the point
    /// is free), a take-over, and a change of the destinations, which happens under
    /// the point (`Inner::attach_rx` copies a lock page into a new receive memory
    /// under it, and moves `rx_gen`). So the point must read free before the stores,
    /// the targets must be those of that moment (checked as under the point, after
    /// the word's Acquire load: an attach that left the point before it moved
    /// `rx_gen` visibly), and the point's word must be unchanged after them, read by
    /// a read-modify-write: if an entry came first, that read sees it; otherwise the
    /// entry reads from it, and the one who entered sees our stores.
    pub(crate) fn unordered(
        &self,
        seg: &SegRef,
        dests: &NodeSet,
        targets: &mut Targets,
        offset: usize,
        data: &[u8],
    ) -> Result<bool> {
        debug_assert!(data.len() <= MAX_PACKET);
        targets.refresh(*self, seg, dests)?;
        let before = self.point().load();
        if owner_of(before).is_some() || !targets.resolve(*self, seg, dests, false)? {
            return Ok(false);
        }
        self.local.check_alive()?;
        let shift = self.local.page.bytes().trailing_zeros();
        for (_, t) in &targets.list {
            // SAFETY: the caller bounded the packet by the segment size; `targets.keep`
            // holds every mapping in the list.
            unsafe { t.apply(shift, offset, data) };
        }
        Ok(self.point().load_latest() == before)
    }

    /// If the failed `dead` holds the order point, takes it over, finishes its
    /// journaled packet (every destination applied, in order) and frees the point.
    ///
    /// Only once the holder is confirmed dead: a holder declared failed by heartbeat
    /// timeout may only be hung, and on one host nothing else stops its stores, so it
    /// would go on applying a packet that we finish for it. Its process is killed
    /// through the pidfd this node's service thread opened and verified for it
    /// (never by a pid read from shared memory), and the point is taken over once the
    /// pidfd is readable. Without a verified pidfd nothing is signalled, and the point
    /// is taken over only if the recorded pid names no process at all (a holder that
    /// died before this node ever saw it). Otherwise the point stays with the holder
    /// and waiters time out in [`enter`](Self::enter).
    ///
    /// The packet is read from the holder's journal object (`record.rs`), and only
    /// once it is confirmed dead. It is finished only if it is a packet that the
    /// object's owner — the one uid (besides root) that can have written it — may
    /// write to that segment, and only at destinations that may read it; otherwise it
    /// is discarded and the point freed as for an impossible record.
    pub(crate) fn recover(&self, dead: NodeId) {
        let slot = &self.local.ctl().nodes[dead.index()];
        let discard = |why: &str| {
            self.local
                .discarded
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            tracing::warn!(
                cluster = %self.local.cluster,
                node = dead.0,
                reason = %why,
                "discarded the journal of a failed node"
            );
        };
        // The holder's journal words, copied from its object once its death is
        // confirmed: `journal::recover` runs its steps on these (IDLE: nothing to
        // finish). The object may be mapped read-only, and its process is gone, so
        // nothing but this survivor changes them.
        let (state, progress) = (AtomicU32::new(journal::IDLE), AtomicU32::new(0));
        let object: OnceLock<JournalObject> = OnceLock::new();
        // The record checked and its destinations mapped, before the point is taken
        // over (no `mmap` under it: every ordered writer of the host would wait).
        let prepared: OnceLock<std::result::Result<Prepared, String>> = OnceLock::new();
        let confirm = || {
            if slot.state.load(Ordering::Acquire) != node_state::FAILED {
                return false;
            }
            let inc = slot.incarnation.load(Ordering::Acquire);
            // Never on the slot's pid word: a process is signalled only through a
            // verified pidfd (never this one's: a node of this very process dies only
            // with us), and the point is taken over only once the holder's presence
            // lock is vacant, the kernel's word that no process of that (slot,
            // incarnation) is left to store.
            let gone = match self.pidfds.verdict(dead.index(), inc) {
                Verdict::Kill(fd, pid) => pid != std::process::id() && kill_confirmed(&fd),
                Verdict::Gone | Verdict::Unknown => true,
                Verdict::Alive => false,
            } && self.local.vacant(dead, inc);
            if !gone {
                return false;
            }
            let name = crate::local::journal_name(&self.local.cluster, dead, inc);
            match JournalObject::open_failed(&name) {
                Ok(Some(j)) => {
                    // The holder's process has exited (the kernel said so above): all
                    // of its stores are done, and the fence orders our loads after them.
                    fence(Ordering::SeqCst);
                    let r = j.record();
                    state.store(r.state.load(Ordering::Acquire), Ordering::Relaxed);
                    progress.store(r.progress.load(Ordering::Acquire), Ordering::Relaxed);
                    if state.load(Ordering::Relaxed) == journal::APPLYING {
                        let _ = prepared.set(self.prepare_record(&j));
                    }
                    let _ = object.set(j);
                }
                // It never sent an ordered packet: nothing in flight.
                Ok(None) => {}
                // Unreadable (another uid's, and this node is not root) or not a
                // journal object: the point is still taken over and freed.
                Err(e) => discard(&format!("its journal object cannot be used: {e}")),
            }
            true
        };
        let finish = |from: usize| {
            let Some(j) = object.get() else { return };
            match prepared.get() {
                Some(Ok(p)) => self.finish_record(p, from),
                Some(Err(why)) => discard(why),
                None => {}
            }
            if j.writable {
                // Nobody will finish it again, and its bytes must not stay.
                let r = j.record();
                r.clear_payload(MAX_PACKET);
                r.state.store(journal::IDLE, Ordering::Release);
            }
        };
        journal::recover(
            self.point(),
            Journal::new(&state, &progress),
            u32::from(dead.0),
            self.me(),
            confirm,
            finish,
        );
    }

    /// Checks the record of a failed holder's journal object `j` and maps its
    /// destinations, outside the order point: it describes a packet that could have
    /// been sent and that its writer had the right to send (segment index in the table,
    /// LIVE at that generation, length ≤ one packet, the range inside the segment and
    /// inside one page, and the object's owner allowed to write the segment by its
    /// permission object). Otherwise says why, and nothing is applied.
    fn prepare_record(&self, j: &JournalObject) -> std::result::Result<Prepared, String> {
        let r = j.record();
        let (idx, gen) = (
            r.seg.load(Ordering::Relaxed),
            r.seg_gen.load(Ordering::Relaxed),
        );
        let (offset, len) = (
            r.offset.load(Ordering::Relaxed),
            r.len.load(Ordering::Relaxed),
        );
        if idx as usize >= MAX_SEGMENTS {
            return Err(format!("segment index {idx} out of range"));
        }
        let seg = match self.local.seg_by_index(idx, gen) {
            Ok(Some(s)) => s,
            Ok(None) => return Err(format!("segment {idx} generation {gen} is not live")),
            Err(e) => return Err(format!("segment {idx} generation {gen}: {e}")),
        };
        let ulen = len as usize;
        if ulen > MAX_PACKET {
            return Err(format!("length {ulen} exceeds one packet"));
        }
        let page = self.local.page.bytes() as u64;
        // A word operation's payload is its operands; what it touches is one word.
        let span = if r.op.load(Ordering::Relaxed) == 0 {
            len
        } else {
            8
        };
        let end = offset.checked_add(u64::from(span));
        if offset >= seg.size as u64
            || end.is_none_or(|e| e > seg.size as u64)
            || (span > 0 && offset / page != (offset + u64::from(span) - 1) / page)
        {
            return Err(format!(
                "range {offset}+{ulen} outside segment `{}` ({} bytes) or across a page",
                seg.name, seg.size
            ));
        }
        if !seg.perm.allows(j.owner, 2) {
            return Err(format!(
                "its writer (uid {}, gid {}: the owner of its journal object) may not \
                 write segment `{}` (owner {}:{}, mode {:o})",
                j.owner.0, j.owner.1, seg.name, seg.perm.uid, seg.perm.gid, seg.perm.mode
            ));
        }
        let data = r.load_payload(ulen);
        let word = match r.op.load(Ordering::Relaxed) {
            0 => None,
            code => match WordOp::decode(code, &data) {
                Some(op) if offset.is_multiple_of(8) => Some(op),
                _ => return Err(format!("word operation {code} of {ulen} bytes at {offset}")),
            },
        };
        // Destinations are a bitmap of MAX_NODES bits, so every id is in range; one
        // that no longer maps the segment (it detached, or failed, since the packet was
        // journaled) or may not read it gets no view.
        let nodes = &self.local.ctl().nodes;
        let dests = load_set(&r.dests)
            .iter()
            .map(|d| {
                let inc = nodes[d.index()].incarnation.load(Ordering::Acquire);
                let view = self.view(&seg, d).ok().flatten();
                (d, view.map(|v| (inc, v)))
            })
            .collect();
        Ok(Prepared {
            seg,
            offset: offset as usize,
            data,
            word,
            dests,
        })
    }

    /// Finishes a prepared record from destination `from` on, under the order point
    /// taken over: each destination still live at the incarnation it was mapped for
    /// and still in the segment's rx set. (No node joins an rx set meanwhile: that
    /// takes the order point, which the dead holder kept until now.)
    fn finish_record(&self, p: &Prepared, from: usize) {
        let c = self.local.ctl();
        if !self.local.seg_live(p.seg.idx, p.seg.generation) {
            return;
        }
        let rx_set = load_set(&c.segs[p.seg.idx as usize].rx_set);
        for (d, view) in p.dests.iter().skip(from) {
            let Some((inc, view)) = view else { continue };
            let slot = &c.nodes[d.index()];
            if slot.state.load(Ordering::Acquire) == node_state::ALIVE
                && slot.incarnation.load(Ordering::Acquire) == *inc
                && rx_set.contains(*d)
            {
                // `view` maps `seg.size` bytes (RxObject::open checks the object's
                // length) and the range was checked against that size.
                match p.word {
                    None => crate::rx::apply(view, self.local.page, p.offset, &p.data),
                    Some(op) => {
                        let shift = self.local.page.bytes().trailing_zeros();
                        // SAFETY: 8-aligned and inside the segment (checked when the
                        // record was prepared); `view` holds the mapping.
                        unsafe { Target::of(view).word_op(shift, p.offset, op) };
                    }
                }
            }
        }
    }

    /// `node`'s receive memory for `seg`, mapped here, if it maps the segment rx.
    pub(crate) fn view(&self, seg: &SegRef, node: NodeId) -> Result<Option<Arc<RxObject>>> {
        match self.lookup(seg, node, true)? {
            View::Mapped(v) => Ok(Some(v)),
            View::None | View::Unmapped => Ok(None),
        }
    }

    /// `node`'s receive memory for `seg`: mapped here already, mapped now (only if
    /// `map`), or not at all because `node` does not map the segment rx.
    fn lookup(&self, seg: &SegRef, node: NodeId, map: bool) -> Result<View> {
        let c = self.local.ctl();
        let slot = &c.nodes[node.index()];
        if slot.state.load(Ordering::Acquire) != node_state::ALIVE
            || !load_set(&c.segs[seg.idx as usize].rx_set).contains(node)
        {
            return Ok(View::None);
        }
        let inc = slot.incarnation.load(Ordering::Acquire);
        let key = (seg.idx, seg.generation, node.0, inc, seg.perm.ino());
        let mut views = self.views.0.lock().unwrap_or_else(|p| p.into_inner());
        match views.get(&key) {
            // Unmapped by its owner since (the key names the segment, node and
            // incarnation, not one map of it): the name may hold new receive memory.
            Some(Some(v)) if v.retired() => {}
            Some(v) => return Ok(v.clone().map_or(View::None, View::Mapped)),
            None => {}
        }
        if !map {
            return Ok(View::Unmapped);
        }
        if self.holder() == Some(self.me()) {
            self.local
                .maps_held
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        let name = self.local.rx_name(seg.idx, seg.generation, node, inc);
        let obj = match RxObject::open(&name, self.local.page, seg.size) {
            Ok(o) => Arc::new(o),
            // Removed between our check and open: the node just unmapped or died.
            Err(Error::Os { source, .. })
                if source.raw_os_error() == Some(rustix::io::Errno::NOENT.raw_os_error()) =>
            {
                return Ok(View::None)
            }
            Err(e) => return Err(e),
        };
        let obj = self.admit(seg, node, obj)?;
        // Forget views of earlier generations or incarnations of the same pair.
        views.retain(|k, _| !(k.0 == seg.idx && k.2 == node.0));
        views.insert(key, obj.clone());
        Ok(obj.map_or(View::None, View::Mapped))
    }

    /// `node`'s receive memory `obj` for `seg` as a destination, or `None` if its owner
    /// may not read the segment. A sender must never deliver to a receiver that may
    /// not read, and the owner of the receive memory is a kernel fact (a member can
    /// put any node in an rx set and make a file of that name). Called once per
    /// (segment, node, incarnation): the answer is cached with the view, so the
    /// refusal is counted and logged once per destination.
    fn admit(
        &self,
        seg: &SegRef,
        node: NodeId,
        obj: Arc<RxObject>,
    ) -> Result<Option<Arc<RxObject>>> {
        let owner = obj.owner()?;
        if seg.perm.allows(owner, 4) {
            return Ok(Some(obj));
        }
        self.local
            .denied
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        tracing::warn!(
            cluster = %self.local.cluster,
            segment = %seg.name,
            node = node.0,
            uid = owner.0,
            gid = owner.1,
            "not delivering to a node whose receive memory belongs to a uid that may not \
             read the segment"
        );
        Ok(None)
    }
}

/// A failed holder's journaled packet, checked, with its destinations (in the
/// record's order, so the journal's progress indexes them) mapped where they may read.
struct Prepared {
    seg: SegRef,
    offset: usize,
    data: Vec<u8>,
    /// A word operation (signal update, conditional write), finished as the same
    /// operation; `None` for a write of `data`.
    word: Option<WordOp>,
    dests: Vec<(NodeId, Option<MappedDest>)>,
}

/// A destination's incarnation and its receive memory, mapped for a recovery.
type MappedDest = (u64, Arc<RxObject>);

/// Tries, under the order point, to bring an ordered packet's targets up to date
/// without mapping receive memory, before the point is left to map outside it.
const MAP_TRIES: u32 = 4;

/// What [`Order::lookup`] found.
enum View {
    /// The node does not map the segment rx, its receive memory is gone, or its owner
    /// may not read the segment.
    None,
    /// Its receive memory, mapped in this process.
    Mapped(Arc<RxObject>),
    /// It maps the segment rx, but this process has not mapped its receive memory.
    Unmapped,
}

/// The resolved destinations of a tx mapping, rebuilt when the segment's rx set or
/// the membership changes.
pub(crate) struct Targets {
    rx_gen: u64,
    epoch: u64,
    list: Vec<(NodeId, Target)>,
    /// The nodes of `list`, as the journal records them.
    live: NodeSet,
    keep: Vec<Arc<RxObject>>,
}

impl Targets {
    pub(crate) fn new() -> Targets {
        Targets {
            rx_gen: u64::MAX,
            epoch: u64::MAX,
            list: Vec::new(),
            live: NodeSet::EMPTY,
            keep: Vec::new(),
        }
    }

    /// Brings the list up to date for `dests`, mapping receive memory as needed.
    pub(crate) fn refresh(
        &mut self,
        order: Order<'_>,
        seg: &SegRef,
        dests: &NodeSet,
    ) -> Result<()> {
        self.resolve(order, seg, dests, true).map(|_| ())
    }

    /// Brings the list up to date for `dests` if the segment's rx set or the
    /// membership moved since it was made. Without `map` (under the order point) only
    /// receive memory this process has mapped already is used: false, and the list
    /// unchanged, if a destination's is not.
    #[inline]
    fn resolve(
        &mut self,
        order: Order<'_>,
        seg: &SegRef,
        dests: &NodeSet,
        map: bool,
    ) -> Result<bool> {
        let ctl = order.local.ctl();
        let e = &ctl.segs[seg.idx as usize];
        let rx_gen = e.rx_gen.load(Ordering::Acquire);
        let epoch = ctl.header.epoch.load(Ordering::Acquire);
        if rx_gen == self.rx_gen && epoch == self.epoch {
            return Ok(true);
        }
        self.rebuild(order, seg, dests, map, rx_gen, epoch)
    }

    /// The slow half of [`resolve`](Self::resolve): the list rebuilt for `rx_gen`
    /// and `epoch`.
    #[cold]
    #[inline(never)]
    fn rebuild(
        &mut self,
        order: Order<'_>,
        seg: &SegRef,
        dests: &NodeSet,
        map: bool,
        rx_gen: u64,
        epoch: u64,
    ) -> Result<bool> {
        let ctl = order.local.ctl();
        let e = &ctl.segs[seg.idx as usize];
        if e.generation.load(Ordering::Acquire) != seg.generation {
            return Err(Error::SegmentFreed {
                segment: seg.name.clone(),
            });
        }
        let (mut list, mut keep, mut live) = (Vec::new(), Vec::new(), NodeSet::EMPTY);
        for d in dests.intersect(&load_set(&e.rx_set)).iter() {
            if ctl.nodes[d.index()].state.load(Ordering::Acquire) != node_state::ALIVE {
                continue;
            }
            match order.lookup(seg, d, map)? {
                View::Mapped(obj) => {
                    list.push((d, Target::of(&obj)));
                    live.insert(d);
                    keep.push(obj);
                }
                View::None => {}
                View::Unmapped => return Ok(false),
            }
        }
        (self.list, self.keep, self.live) = (list, keep, live);
        self.rx_gen = rx_gen;
        self.epoch = epoch;
        Ok(true)
    }

    /// The first destination (the only one of a direct deposit), or [`Target::NONE`].
    pub(crate) fn first(&self) -> Target {
        self.list.first().map_or(Target::NONE, |(_, t)| *t)
    }
}

/// The kernel's view of member `slot`'s heartbeat thread in process `pid` (the thread
/// named `memchan-hb-<slot>`, which only that process can have started): its state
/// letter and its context switches so far. `None` if no such thread is found. Read
/// from `/proc/<pid>/task/*/status`, which every uid may read. Should the process
/// hold nodes of several clusters with the same slot, the busiest thread counts.
pub(crate) fn pulse(pid: u32, slot: usize) -> Option<(char, u64)> {
    let name = format!("memchan-hb-{slot}");
    let tasks = std::fs::read_dir(format!("/proc/{pid}/task")).ok()?;
    let mut best: Option<(char, u64)> = None;
    for t in tasks.flatten() {
        let dir = t.path();
        let comm = std::fs::read_to_string(dir.join("comm")).unwrap_or_default();
        if comm.trim_end() != name {
            continue;
        }
        let Ok(status) = std::fs::read_to_string(dir.join("status")) else {
            continue;
        };
        let field = |key: &str| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .map(str::trim)
                .unwrap_or("")
        };
        let state = field("State:").chars().next().unwrap_or('?');
        let switches = ["voluntary_ctxt_switches:", "nonvoluntary_ctxt_switches:"]
            .iter()
            .map(|k| field(k).parse::<u64>().unwrap_or(0))
            .sum::<u64>();
        if best.is_none_or(|(_, b)| switches > b) {
            best = Some((state, switches));
        }
    }
    best
}

/// The CPU time (clock ticks, user + system, all threads) process `pid` has used so
/// far, from `/proc/<pid>/stat`; `None` if it cannot be read.
pub(crate) fn process_cpu(pid: u32) -> Option<u64> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat_cpu(&stat).map(|(_, ticks)| ticks)
}

/// A `/proc/.../stat` line's name (field 2) and utime + stime (fields 14 and 15). The
/// name sits in parentheses and may hold spaces and parentheses itself: the fields
/// after it count from the last ')'.
fn stat_cpu(stat: &str) -> Option<(&str, u64)> {
    let (open, close) = (stat.find('(')?, stat.rfind(')')?);
    let mut f = stat.get(close + 1..)?.split_whitespace().skip(11);
    let mut tick = || f.next()?.parse::<u64>().ok();
    Some((stat.get(open + 1..close)?, tick()? + tick()?))
}

/// Whether the process behind `fd` has exited, without waiting.
pub(crate) fn exited(fd: &OwnedFd, wait: Option<&rustix::time::Timespec>) -> bool {
    let mut p = [rustix::event::PollFd::new(fd, rustix::event::PollFlags::IN)];
    matches!(rustix::event::poll(&mut p, wait), Ok(n) if n > 0)
}

/// SIGKILLs the process behind `fd` unless it has exited, and waits (up to 10 s) for
/// its pidfd to turn readable. True only if it did: a refused signal (EPERM, another
/// user's process) or a process still there after the wait is not a confirmed kill.
fn kill_confirmed(fd: &OwnedFd) -> bool {
    let now = rustix::time::Timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    if exited(fd, Some(&now)) {
        return true;
    }
    if rustix::process::pidfd_send_signal(fd, rustix::process::Signal::KILL).is_err() {
        return false;
    }
    let wait = rustix::time::Timespec {
        tv_sec: 10,
        tv_nsec: 0,
    };
    exited(fd, Some(&wait))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stat_cpu_reads_utime_and_stime_after_a_name_with_parentheses() {
        let line = "42 (a) (b c) S 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16";
        assert_eq!(stat_cpu(line), Some(("a) (b c", 11 + 12)));
        assert_eq!(stat_cpu("42 (x) S 1 2"), None, "too few fields");
        assert_eq!(stat_cpu("garbage"), None);
    }
    use crate::Node;
    use memchan_core::transport::{SegmentOps, Transport};
    use memchan_core::{Config, RxAttrs};

    /// Failure detection in tens of milliseconds, for the forged-holder tests.
    fn fast() -> Config {
        Config::default()
            .with_heartbeat(std::time::Duration::from_millis(20))
            .with_failure_timeout(std::time::Duration::from_millis(200))
    }

    fn cluster(tag: &str) -> String {
        format!("order-{tag}-{}", std::process::id())
    }

    /// A pid that names no process: a child that has exited and been reaped.
    fn dead_pid() -> u32 {
        let mut c = std::process::Command::new("true").spawn().unwrap();
        let pid = c.id();
        c.wait().unwrap();
        pid
    }

    /// Makes free slot `f` a FAILED node with `pid` that holds the order point with a
    /// journaled packet whose record `rec` writes into a journal object of this
    /// process's uid: what a node that died mid-packet leaves, or what a forger of
    /// this uid with write access to the control block could make. Returns the
    /// object (mapped here) for the caller to check and remove.
    fn forge_holder(
        node: &Node,
        f: usize,
        pid: u32,
        rec: impl FnOnce(&crate::record::Record),
    ) -> (JournalObject, String) {
        let c = node.inner.local.ctl();
        let s = &c.nodes[f];
        assert_eq!(s.state.load(Ordering::Acquire), node_state::FREE);
        let inc = u64::MAX - f as u64;
        s.pid.store(pid, Ordering::Relaxed);
        s.incarnation.store(inc, Ordering::Relaxed);
        s.state.store(node_state::FAILED, Ordering::Release);
        let w = c.order.word.load(Ordering::Acquire);
        assert_eq!(w & 0xFFFF, 0, "order point free before the forgery");
        c.order.word.store(w | (f as u64 + 1), Ordering::Release);
        let name = crate::local::journal_name(&node.inner.local.cluster, NodeId(f as u16), inc);
        let j = JournalObject::create(&name).unwrap();
        let r = j.record();
        rec(r);
        r.progress.store(0, Ordering::Relaxed);
        r.state.store(journal::APPLYING, Ordering::Release);
        (j, name)
    }

    fn discarded(node: &Node) -> u64 {
        node.inner
            .local
            .discarded
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    fn release_slot(node: &Node, f: usize, journal: &str) {
        let s = &node.inner.local.ctl().nodes[f];
        s.incarnation.store(0, Ordering::Relaxed);
        s.state.store(node_state::FREE, Ordering::Release);
        crate::shm::ShmMap::unlink(journal);
    }

    #[test]
    fn recovery_discards_a_journal_that_names_no_possible_packet() {
        let name = cluster("wild");
        let a = Node::join(&name, &Config::default()).unwrap();
        let seg = a.segment("s", 4096, 0o600).unwrap();
        let rx = seg.map_rx_with(RxAttrs::default()).unwrap();
        let sref = a
            .inner
            .local
            .seg_by_index(0, 1)
            .unwrap()
            .expect("segment 0, generation 1");
        let me = a.inner.local.me;
        let f = 200;
        let wild: [(u32, u32, u64, u32); 6] = [
            (sref.idx, sref.generation, 1 << 40, 8),      // attack c4
            (sref.idx, sref.generation, u64::MAX - 3, 8), // offset + len wraps
            (sref.idx, sref.generation, 4090, 8),         // past the end
            (sref.idx, sref.generation, 0, 100_000),      // longer than a packet
            (9999, sref.generation, 0, 8),                // no such segment index
            (sref.idx, sref.generation + 7, 0, 8),        // not this generation
        ];
        for (i, &(s, g, off, len)) in wild.iter().enumerate() {
            let before = discarded(&a);
            let (j, jname) = forge_holder(&a, f, dead_pid(), |j| {
                j.seg.store(s, Ordering::Relaxed);
                j.seg_gen.store(g, Ordering::Relaxed);
                j.offset.store(off, Ordering::Relaxed);
                j.len.store(len, Ordering::Relaxed);
                let mut d = NodeSet::EMPTY;
                d.insert(me);
                store_set(&j.dests, &d);
                j.data[0].store(u64::MAX, Ordering::Relaxed);
            });
            a.inner.order().recover(NodeId(f as u16));
            assert_eq!(discarded(&a), before + 1, "case {i} was not discarded");
            let r = j.record();
            assert_eq!(r.state.load(Ordering::Acquire), journal::IDLE);
            assert_eq!(r.data[0].load(Ordering::Relaxed), 0, "payload left behind");
            assert_eq!(a.inner.order().point().holder(), None, "case {i}");
            release_slot(&a, f, &jname);
        }
        let mut back = vec![0u8; 4096];
        rx.read(0, &mut back).unwrap();
        assert!(back.iter().all(|&b| b == 0), "the segment was written");

        // A record that describes a real packet is still finished (positive control).
        let (_j, jname) = forge_holder(&a, f, dead_pid(), |j| {
            j.seg.store(sref.idx, Ordering::Relaxed);
            j.seg_gen.store(sref.generation, Ordering::Relaxed);
            j.offset.store(128, Ordering::Relaxed);
            j.len.store(8, Ordering::Relaxed);
            let mut d = NodeSet::EMPTY;
            d.insert(me);
            store_set(&j.dests, &d);
            j.data[0].store(0x1122_3344_5566_7788, Ordering::Relaxed);
        });
        a.inner.order().recover(NodeId(f as u16));
        release_slot(&a, f, &jname);
        assert_eq!(rx.load_u64(128).unwrap(), 0x1122_3344_5566_7788);
        assert_eq!(a.inner.order().point().holder(), None);
    }

    #[test]
    fn recovery_maps_the_dead_holders_destinations_before_it_takes_the_point_over() {
        let name = cluster("premap");
        let a = Node::join(&name, &Config::default()).unwrap();
        let b = Node::join(&name, &Config::default()).unwrap();
        let _seg = a.segment("s", 4096, 0o600).unwrap();
        // Neither node has sent to `s`: no process has b's receive memory mapped.
        let rx_b = b
            .segment("s", 4096, 0o600)
            .unwrap()
            .map_rx_with(RxAttrs::default())
            .unwrap();
        let sref = a
            .inner
            .local
            .seg_by_index(0, 1)
            .unwrap()
            .expect("segment 0");
        let f = 200;
        let (_j, jname) = forge_holder(&a, f, dead_pid(), |j| {
            j.seg.store(sref.idx, Ordering::Relaxed);
            j.seg_gen.store(sref.generation, Ordering::Relaxed);
            j.offset.store(256, Ordering::Relaxed);
            j.len.store(8, Ordering::Relaxed);
            let mut d = NodeSet::EMPTY;
            d.insert(b.inner.local.me);
            store_set(&j.dests, &d);
            j.data[0].store(0x0102_0304_0506_0708, Ordering::Relaxed);
        });
        // a recovers (b's service thread may be first: either way one of them).
        a.inner.order().recover(NodeId(f as u16));
        release_slot(&a, f, &jname);
        assert_eq!(a.inner.order().point().holder(), None);
        assert_eq!(rx_b.load_u64(256).unwrap(), 0x0102_0304_0506_0708);
        let held = |n: &Node| {
            n.inner
                .local
                .maps_held
                .load(std::sync::atomic::Ordering::Relaxed)
        };
        assert_eq!(
            held(&a) + held(&b),
            0,
            "receive memory mapped under the taken-over order point"
        );
    }

    #[test]
    fn a_holder_whose_pid_word_leads_elsewhere_is_never_signalled_nor_taken_over_while_it_lives() {
        let name = cluster("c5");
        let cfg = fast();
        let a = Node::join(&name, &cfg).unwrap();
        let seg = a.segment("s", 4096, 0o600).unwrap();
        let _rx = seg.map_rx_with(RxAttrs::default()).unwrap();
        let tx = seg
            .map_tx(
                memchan_core::Dest::Broadcast,
                memchan_core::TxAttrs::default(),
            )
            .unwrap();
        // A lock page, so the reaping also meets release_locks_of.
        let lock = a.lock("L").unwrap();
        let mut victim = std::process::Command::new("sleep")
            .arg("300")
            .spawn()
            .unwrap();
        // Attack c5: an ALIVE slot holding the order point, with a stale heartbeat and
        // the pid of an unrelated live process. Its presence lock is held (here, by
        // this process): what a live node whose pid word another member rewrote shows.
        let f = 201;
        let inc = 7_000_001;
        let live = crate::presence::PresenceLock::take(
            &crate::local::live_name(&name, NodeId(f as u16), inc),
            0o600,
        )
        .unwrap();
        let c = a.inner.local.ctl();
        let s = &c.nodes[f];
        s.pid.store(victim.id(), Ordering::Relaxed);
        s.incarnation.store(inc, Ordering::Relaxed);
        s.heartbeat_ns.store(0, Ordering::Relaxed);
        let w = c.order.word.load(Ordering::Acquire);
        assert_eq!(w & 0xFFFF, 0);
        c.order.word.store(w | (f as u64 + 1), Ordering::Release);
        s.state.store(node_state::ALIVE, Ordering::Release);
        // A waiter gets a typed error after the stall bound instead of hanging.
        match tx.write_u64(0, 1) {
            Err(Error::Stalled { what, nodes, .. }) => {
                assert_eq!(what, "the order point");
                assert_eq!(nodes, vec![NodeId(f as u16)], "names the holder");
            }
            other => panic!("expected Stalled at the order point, got {other:?}"),
        }
        // Meanwhile (25 failure timeouts) nothing but words said it was gone: it was
        // not isolated (on 4c63486 and until the presence lock, its pid word made it
        // "nobody" and a survivor isolated it), nor its point taken.
        assert_eq!(s.state.load(Ordering::Acquire), node_state::ALIVE);
        assert_eq!(a.inner.order().point().holder(), Some(f as u32));
        // Its presence lock let go (the node's process ended): the service thread
        // isolates it and takes the point over (hang guard: a minute).
        drop(live);
        let start = std::time::Instant::now();
        while s.state.load(Ordering::Acquire) != node_state::FREE
            || a.inner.order().point().holder().is_some()
        {
            assert!(
                start.elapsed().as_secs() < 60,
                "the fake node was never reaped"
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert!(
            victim.try_wait().unwrap().is_none(),
            "memchan signalled an unrelated process"
        );
        victim.kill().unwrap();
        victim.wait().unwrap();
        tx.write_u64(0, 2).unwrap();
        lock.acquire().unwrap().release().unwrap();
    }

    #[test]
    fn live_nodes_survive_a_forged_dead_holder_with_a_wild_journal() {
        let name = cluster("c4live");
        let cfg = fast();
        let a = Node::join(&name, &cfg).unwrap();
        let b = Node::join(&name, &cfg).unwrap();
        let seg = a.segment("s", 4096, 0o600).unwrap();
        let rx_a = seg.map_rx_with(RxAttrs::default()).unwrap();
        let seg_b = b.segment("s", 4096, 0o600).unwrap();
        let rx_b = seg_b.map_rx_with(RxAttrs::default()).unwrap();
        let sref = a
            .inner
            .local
            .seg_by_index(0, 1)
            .unwrap()
            .expect("segment 0, generation 1");
        let before = discarded(&a) + discarded(&b);
        // Attack c4 on a live cluster: an ALIVE slot whose pid is gone, holding the
        // order point, with a journal entry at offset 2^40 for both nodes. The service
        // threads find it dead and recover.
        let f = 202;
        let c = a.inner.local.ctl();
        let s = &c.nodes[f];
        s.pid.store(dead_pid(), Ordering::Relaxed);
        s.incarnation.store(7_000_002, Ordering::Relaxed);
        s.heartbeat_ns
            .store(crate::clock::now_ns(), Ordering::Relaxed);
        let jo = JournalObject::create(&crate::local::journal_name(
            &name,
            NodeId(f as u16),
            7_000_002,
        ))
        .unwrap();
        let j = jo.record();
        j.seg.store(sref.idx, Ordering::Relaxed);
        j.seg_gen.store(sref.generation, Ordering::Relaxed);
        j.offset.store(1 << 40, Ordering::Relaxed);
        j.len.store(8, Ordering::Relaxed);
        let mut d = NodeSet::EMPTY;
        d.insert(a.inner.local.me);
        d.insert(b.inner.local.me);
        store_set(&j.dests, &d);
        j.progress.store(0, Ordering::Relaxed);
        let w = c.order.word.load(Ordering::Acquire);
        c.order.word.store(w | (f as u64 + 1), Ordering::Release);
        j.state.store(journal::APPLYING, Ordering::Release);
        s.state.store(node_state::ALIVE, Ordering::Release);
        let start = std::time::Instant::now();
        while s.state.load(Ordering::Acquire) != node_state::FREE
            || a.inner.order().point().holder().is_some()
        {
            assert!(
                start.elapsed().as_secs() < 60,
                "the forged holder was never reaped"
            );
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        // Exactly one survivor took over and discarded the record.
        assert_eq!(discarded(&a) + discarded(&b), before + 1);
        assert_eq!(j.state.load(Ordering::Acquire), journal::IDLE);
        // Both nodes are still members and ordered writes go on.
        assert!(a.members().contains(b.node_id()) && b.members().contains(a.node_id()));
        let tx = seg_b
            .map_tx(
                memchan_core::Dest::Broadcast,
                memchan_core::TxAttrs {
                    local_copy: true,
                    ..memchan_core::TxAttrs::default()
                },
            )
            .unwrap();
        tx.write_u64(64, 5).unwrap();
        assert_eq!(rx_a.load_u64(64).unwrap(), 5);
        assert_eq!(rx_b.load_u64(64).unwrap(), 5);
        let mut back = vec![0u8; 4096];
        rx_a.read(0, &mut back).unwrap();
        back[64..72].fill(0);
        assert!(
            back.iter().all(|&x| x == 0),
            "the segment was written elsewhere"
        );
    }
}
