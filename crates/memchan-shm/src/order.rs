//! The point of global order on one host, as this node uses it: entering it (and
//! recovering it from a holder declared failed), sending an **ordered packet** through
//! it (journaled, then applied at every destination before the next ordered packet),
//! finishing a dead holder's journaled packet, and resolving destinations to receive
//! memory (the per-process cache of mapped receive memory, and each tx mapping's
//! [`Targets`]).
//!
//! The order point's word and its protocol are `memchan_core::order`, the journal's
//! steps `memchan_core::journal`; this module places both in the control block
//! (`control::OrderLine`, `control::Journal`) and supplies the journal's record and how
//! a packet is applied.
//!
//! Below the control plane (`node.rs`) and the data path (`tx.rs`), which both call it;
//! it calls neither, only the leaves `local.rs`, `rx.rs` and `control.rs`.

use crate::control::{load_set, node_state, store_set, MAX_PACKET, MAX_SEGMENTS};
use crate::idle::SpinThenPark;
use crate::local::{Local, SegRef};
use crate::rx::{RxObject, Target};
use memchan_core::journal::{self, Journal};
use memchan_core::order::OrderPoint;
use memchan_core::packet;
use memchan_core::sync::Ordering;
use memchan_core::{Error, NodeId, NodeSet, Result, MAX_NODES};
use rustix::fd::OwnedFd;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

type ViewKey = (u32, u32, u16, u64);

/// The receive memory of other nodes (and this node's own) mapped in this process,
/// by (segment index, generation, node, incarnation): mapped on first use by a sender,
/// kept while the pair stays the same.
pub(crate) struct Views(Mutex<HashMap<ViewKey, Arc<RxObject>>>);

impl Views {
    pub(crate) fn new() -> Views {
        Views(Mutex::new(HashMap::new()))
    }
}

/// The other members' processes as this node's service thread found them, by (slot,
/// incarnation): a pidfd opened for the slot's pid and verified to be a process that
/// maps this cluster's control block (`None`: no such process could be verified).
/// Recovery signals only through these, never by a pid read from shared memory.
pub(crate) struct Pidfds(Mutex<PidfdMap>);

/// (slot, incarnation) → the verified pidfd, if any.
pub(crate) type PidfdMap = HashMap<(usize, u64), Option<Arc<OwnedFd>>>;

impl Pidfds {
    pub(crate) fn new() -> Pidfds {
        Pidfds(Mutex::new(HashMap::new()))
    }

    pub(crate) fn lock(&self) -> std::sync::MutexGuard<'_, PidfdMap> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn get(&self, slot: usize, inc: u64) -> Option<Arc<OwnedFd>> {
        self.lock().get(&(slot, inc)).cloned().flatten()
    }
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

    fn journal(&self) -> Journal<'a> {
        let j = &self.local.ctl().journal;
        Journal::new(&j.state, &j.progress)
    }

    fn me(&self) -> u32 {
        u32::from(self.local.me.0)
    }

    /// Waits for the order point, recovering it from a holder declared failed.
    ///
    /// A holder that keeps the point (the same word) for longer than
    /// [`order_timeout`] — alive but hung, a failed holder whose death cannot be
    /// confirmed, or a word forged in the control block — is left holding it, and
    /// this waiter gets `Error::Timeout(.., "the order point")`.
    pub(crate) fn enter(&self) -> Result<u64> {
        let ctl = self.local.ctl();
        let bound = order_timeout(self.local);
        let mut idle = SpinThenPark::new();
        let mut held: Option<(u64, std::time::Instant)> = None;
        loop {
            let holder = match self.point().try_enter(self.me()) {
                Ok(turn) => return Ok(turn),
                Err(holder) => holder,
            };
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
                Some((seen, since)) if seen == w => {
                    if since.elapsed() > bound {
                        return Err(Error::Timeout(bound, "the order point"));
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
    pub(crate) fn ordered_packet(
        &self,
        seg: &SegRef,
        dests: &NodeSet,
        targets: &mut Targets,
        offset: usize,
        data: &[u8],
    ) -> Result<()> {
        debug_assert!(data.len() <= MAX_PACKET);
        self.enter()?;
        // Under the order point: who is alive and who maps the segment is now fixed,
        // and so is whether this node may still send (isolation would drop our own copy
        // and leave a lock bidder waiting for a bid that never comes back).
        if let Err(e) = self
            .local
            .check_alive()
            .and_then(|()| targets.refresh(*self, seg, dests))
        {
            self.leave();
            return Err(e);
        }
        let j = &self.local.ctl().journal;
        let record = || {
            j.seg.store(seg.idx, Ordering::Relaxed);
            j.seg_gen.store(seg.generation, Ordering::Relaxed);
            j.offset.store(offset as u64, Ordering::Relaxed);
            j.len.store(data.len() as u32, Ordering::Relaxed);
            let mut live = NodeSet::EMPTY;
            for (d, _) in &targets.list {
                live.insert(*d);
            }
            store_set(&j.dests, &live);
            // SAFETY: the journal payload has MAX_PACKET bytes ≥ data.len() and is
            // reached only through atomics; readers read it after `begin`'s Release.
            unsafe { packet::store(j.data.as_ptr() as *mut u8, data) };
        };
        let shift = self.local.page.bytes().trailing_zeros();
        self.journal().apply(record, &targets.list, |(_, t)| {
            // SAFETY: the caller bounded the packet by the segment size; `targets.keep`
            // holds every mapping in the list.
            unsafe { t.apply(shift, offset, data) }
        });
        if !self.leave() {
            // We were declared failed while applying and a survivor finished the packet.
            self.local.check_alive()?;
        }
        Ok(())
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
    pub(crate) fn recover(&self, dead: NodeId) {
        let confirm = || {
            let slot = &self.local.ctl().nodes[dead.index()];
            if slot.state.load(Ordering::Acquire) != node_state::FAILED {
                return false;
            }
            let inc = slot.incarnation.load(Ordering::Acquire);
            if slot.pid.load(Ordering::Relaxed) == std::process::id() {
                // A node of this very process: no kill short of our own death.
                return false;
            }
            match self.pidfds.get(dead.index(), inc) {
                Some(fd) => kill_confirmed(&fd),
                None => !crate::node::pid_alive(slot.pid.load(Ordering::Relaxed)),
            }
        };
        let j = &self.local.ctl().journal;
        // Called only after the journal's state read APPLYING and `from` was read, both
        // by read-modify-writes, which see the dead holder's last journal writes even
        // though nothing synchronised with it (its death was seen by timeout or pidfd).
        let finish = |from: usize| {
            // Every word of the record is read from shared memory, which this node
            // does not control: a record that does not describe a packet the dead
            // holder could have sent is discarded (the journal goes IDLE), never applied.
            let rec = Record {
                seg: j.seg.load(Ordering::Relaxed),
                gen: j.seg_gen.load(Ordering::Relaxed),
                offset: j.offset.load(Ordering::Relaxed),
                len: j.len.load(Ordering::Relaxed),
                dests: load_set(&j.dests),
            };
            let segref = match self.check_record(&rec) {
                Ok(s) => s,
                Err(why) => {
                    self.local
                        .discarded
                        .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    tracing::warn!(
                        cluster = %self.local.cluster,
                        node = dead.0,
                        reason = %why,
                        "discarded the journal of a failed node"
                    );
                    return;
                }
            };
            let (offset, len) = (rec.offset as usize, rec.len as usize);
            let mut data = vec![0u8; len];
            // SAFETY: `len` ≤ MAX_PACKET (checked), the size of the journal's payload
            // words, which are reached only through atomics; written before `state`
            // was set APPLYING (Release), which `finish` read by RMW.
            unsafe { packet::load(j.data.as_ptr() as *const u8, &mut data) };
            for d in rec.dests.iter().skip(from) {
                if let Ok(Some(view)) = self.view(&segref, d) {
                    // `view` maps `segref.size` bytes (RxObject::open checks the
                    // object's length) and the range was checked against that size.
                    crate::rx::apply(&view, self.local.page, offset, &data);
                }
            }
        };
        journal::recover(
            self.point(),
            self.journal(),
            u32::from(dead.0),
            self.me(),
            confirm,
            finish,
        );
    }

    /// The segment a journal record names, if the record describes a packet that could
    /// have been sent: segment index in the table, LIVE at that generation, length ≤
    /// one packet, the range inside the segment and inside one page. Otherwise why not.
    fn check_record(&self, rec: &Record) -> std::result::Result<SegRef, String> {
        if rec.seg as usize >= MAX_SEGMENTS {
            return Err(format!("segment index {} out of range", rec.seg));
        }
        let seg = self
            .local
            .seg_by_index(rec.seg, rec.gen)
            .ok_or_else(|| format!("segment {} generation {} is not live", rec.seg, rec.gen))?;
        let len = rec.len as usize;
        if len > MAX_PACKET {
            return Err(format!("length {len} exceeds one packet"));
        }
        let page = self.local.page.bytes() as u64;
        let end = rec.offset.checked_add(rec.len as u64);
        if rec.offset >= seg.size as u64
            || end.is_none_or(|e| e > seg.size as u64)
            || (len > 0 && rec.offset / page != (rec.offset + rec.len as u64 - 1) / page)
        {
            return Err(format!(
                "range {}+{len} outside segment `{}` ({} bytes) or across a page",
                rec.offset, seg.name, seg.size
            ));
        }
        // Destinations are a bitmap of MAX_NODES bits, so every id is in range; one
        // that no longer maps the segment (it detached, or failed, since the packet was
        // journaled) is skipped by `view`, which applies only at live members of the
        // segment's rx set.
        Ok(seg)
    }

    /// `node`'s receive memory for `seg`, mapped here, if it maps the segment rx.
    pub(crate) fn view(&self, seg: &SegRef, node: NodeId) -> Result<Option<Arc<RxObject>>> {
        let c = self.local.ctl();
        let slot = &c.nodes[node.index()];
        if slot.state.load(Ordering::Acquire) != node_state::ALIVE
            || !load_set(&c.segs[seg.idx as usize].rx_set).contains(node)
        {
            return Ok(None);
        }
        let inc = slot.incarnation.load(Ordering::Acquire);
        let key = (seg.idx, seg.generation, node.0, inc);
        let mut views = self.views.0.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(v) = views.get(&key) {
            return Ok(Some(v.clone()));
        }
        let name = self.local.rx_name(seg.idx, seg.generation, node, inc);
        let obj = match RxObject::open(&name, self.local.page, seg.size) {
            Ok(o) => Arc::new(o),
            // Removed between our check and open: the node just unmapped or died.
            Err(Error::Os { source, .. })
                if source.raw_os_error() == Some(rustix::io::Errno::NOENT.raw_os_error()) =>
            {
                return Ok(None)
            }
            Err(e) => return Err(e),
        };
        // Forget views of earlier generations or incarnations of the same pair.
        views.retain(|k, _| !(k.0 == seg.idx && k.2 == node.0));
        views.insert(key, obj.clone());
        Ok(Some(obj))
    }
}

/// A journal record as read from the control block (unchecked).
struct Record {
    seg: u32,
    gen: u32,
    offset: u64,
    len: u32,
    dests: NodeSet,
}

/// The resolved destinations of a tx mapping, rebuilt when the segment's rx set or
/// the membership changes.
pub(crate) struct Targets {
    rx_gen: u64,
    epoch: u64,
    list: Vec<(NodeId, Target)>,
    keep: Vec<Arc<RxObject>>,
}

impl Targets {
    pub(crate) fn new() -> Targets {
        Targets {
            rx_gen: u64::MAX,
            epoch: u64::MAX,
            list: Vec::new(),
            keep: Vec::new(),
        }
    }

    /// Brings the list up to date for `dests` (under the order point for ordered
    /// packets, so no change can slip in before the packet is applied).
    pub(crate) fn refresh(
        &mut self,
        order: Order<'_>,
        seg: &SegRef,
        dests: &NodeSet,
    ) -> Result<()> {
        let ctl = order.local.ctl();
        let e = &ctl.segs[seg.idx as usize];
        let rx_gen = e.rx_gen.load(Ordering::Acquire);
        let epoch = ctl.header.epoch.load(Ordering::Acquire);
        if rx_gen == self.rx_gen && epoch == self.epoch {
            return Ok(());
        }
        if e.generation.load(Ordering::Acquire) != seg.generation {
            return Err(Error::SegmentFreed {
                segment: seg.name.clone(),
            });
        }
        self.list.clear();
        self.keep.clear();
        for d in dests.intersect(&load_set(&e.rx_set)).iter() {
            if ctl.nodes[d.index()].state.load(Ordering::Acquire) != node_state::ALIVE {
                continue;
            }
            if let Some(obj) = order.view(seg, d)? {
                self.list.push((d, Target::of(&obj)));
                self.keep.push(obj);
            }
        }
        self.rx_gen = rx_gen;
        self.epoch = epoch;
        Ok(())
    }

    /// The first destination (the only one of a direct deposit), or [`Target::NONE`].
    pub(crate) fn first(&self) -> Target {
        self.list.first().map_or(Target::NONE, |(_, t)| *t)
    }
}

/// How long a waiter lets one holder keep the order point before it gives up with
/// `Error::Timeout`: 25 failure timeouts, at least 5 s (a live holder maps receive
/// memory under the point, which can take a while for large segments).
pub(crate) fn order_timeout(local: &Local) -> std::time::Duration {
    let ft = std::time::Duration::from_nanos(
        local
            .ctl()
            .header
            .failure_timeout_ns
            .load(Ordering::Relaxed),
    );
    ft.saturating_mul(25).max(std::time::Duration::from_secs(5))
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
    use crate::Node;
    use memchan_core::transport::{SegmentOps, Transport};
    use memchan_core::{Config, RxAttrs};

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
    /// journaled packet whose record `rec` writes, as a forger with write access to
    /// the control block could.
    fn forge_holder(node: &Node, f: usize, pid: u32, rec: impl FnOnce(&crate::control::Journal)) {
        let c = node.inner.local.ctl();
        let s = &c.nodes[f];
        assert_eq!(s.state.load(Ordering::Acquire), node_state::FREE);
        s.pid.store(pid, Ordering::Relaxed);
        s.incarnation.store(u64::MAX - f as u64, Ordering::Relaxed);
        s.state.store(node_state::FAILED, Ordering::Release);
        let w = c.order.word.load(Ordering::Acquire);
        assert_eq!(w & 0xFFFF, 0, "order point free before the forgery");
        c.order.word.store(w | (f as u64 + 1), Ordering::Release);
        rec(&c.journal);
        c.journal.progress.store(0, Ordering::Relaxed);
        c.journal.state.store(journal::APPLYING, Ordering::Release);
    }

    fn discarded(node: &Node) -> u64 {
        node.inner
            .local
            .discarded
            .load(std::sync::atomic::Ordering::Relaxed)
    }

    fn release_slot(node: &Node, f: usize) {
        let s = &node.inner.local.ctl().nodes[f];
        s.incarnation.store(0, Ordering::Relaxed);
        s.state.store(node_state::FREE, Ordering::Release);
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
            forge_holder(&a, f, dead_pid(), |j| {
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
            let c = a.inner.local.ctl();
            assert_eq!(discarded(&a), before + 1, "case {i} was not discarded");
            assert_eq!(c.journal.state.load(Ordering::Acquire), journal::IDLE);
            assert_eq!(a.inner.order().point().holder(), None, "case {i}");
            release_slot(&a, f);
        }
        let mut back = vec![0u8; 4096];
        rx.read(0, &mut back).unwrap();
        assert!(back.iter().all(|&b| b == 0), "the segment was written");

        // A record that describes a real packet is still finished (positive control).
        forge_holder(&a, f, dead_pid(), |j| {
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
        release_slot(&a, f);
        assert_eq!(rx.load_u64(128).unwrap(), 0x1122_3344_5566_7788);
        assert_eq!(a.inner.order().point().holder(), None);
    }

    #[test]
    fn a_forged_holder_with_an_unrelated_pid_is_never_killed_nor_taken_over() {
        let name = cluster("c5");
        let cfg = Config {
            heartbeat: std::time::Duration::from_millis(20),
            failure_timeout: std::time::Duration::from_millis(200),
            ..Config::default()
        };
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
        // Attack c5: an ALIVE slot with a stale heartbeat and an unrelated live pid,
        // holding the order point.
        let f = 201;
        let c = a.inner.local.ctl();
        let s = &c.nodes[f];
        s.pid.store(victim.id(), Ordering::Relaxed);
        s.incarnation.store(7_000_001, Ordering::Relaxed);
        s.heartbeat_ns.store(0, Ordering::Relaxed);
        let w = c.order.word.load(Ordering::Acquire);
        assert_eq!(w & 0xFFFF, 0);
        c.order.word.store(w | (f as u64 + 1), Ordering::Release);
        s.state.store(node_state::ALIVE, Ordering::Release);
        // The service thread declares it failed and cleans its slot up (hang guard:
        // a minute).
        let start = std::time::Instant::now();
        while s.state.load(Ordering::Acquire) != node_state::FREE {
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
        assert_eq!(
            a.inner.order().point().holder(),
            Some(f as u32),
            "taken over without a confirmed death"
        );
        // A waiter gets a typed error after the bound instead of hanging.
        match tx.write_u64(0, 1) {
            Err(Error::Timeout(_, what)) => assert_eq!(what, "the order point"),
            other => panic!("expected Timeout at the order point, got {other:?}"),
        }
        victim.kill().unwrap();
        victim.wait().unwrap();
        c.order.word.store(w, Ordering::Release);
        tx.write_u64(0, 2).unwrap();
        lock.acquire().unwrap().release().unwrap();
    }

    #[test]
    fn live_nodes_survive_a_forged_dead_holder_with_a_wild_journal() {
        let name = cluster("c4live");
        let cfg = Config {
            heartbeat: std::time::Duration::from_millis(20),
            failure_timeout: std::time::Duration::from_millis(200),
            ..Config::default()
        };
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
            .store(crate::node::now_ns(), Ordering::Relaxed);
        let j = &c.journal;
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
        assert_eq!(c.journal.state.load(Ordering::Acquire), journal::IDLE);
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
