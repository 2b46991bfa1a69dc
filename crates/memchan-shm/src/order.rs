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

use crate::control::{load_set, node_state, store_set, MAX_PACKET};
use crate::idle::SpinThenPark;
use crate::local::{Local, SegRef};
use crate::rx::{RxObject, Target};
use memchan_core::journal::{self, Journal};
use memchan_core::order::OrderPoint;
use memchan_core::sync::Ordering;
use memchan_core::{Error, NodeId, NodeSet, Result, MAX_NODES};
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

/// This node's side of the point of global order: its identity and control block,
/// and the receive memory it has mapped.
#[derive(Clone, Copy)]
pub(crate) struct Order<'a> {
    local: &'a Local,
    views: &'a Views,
}

impl<'a> Order<'a> {
    pub(crate) fn new(local: &'a Local, views: &'a Views) -> Order<'a> {
        Order { local, views }
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
    pub(crate) fn enter(&self) -> u64 {
        let ctl = self.local.ctl();
        let mut idle = SpinThenPark::new();
        self.point().enter(self.me(), |holder| {
            idle.idle();
            if idle.is_parked()
                && (holder as usize) < MAX_NODES
                && ctl.nodes[holder as usize].state.load(Ordering::Acquire) == node_state::FAILED
            {
                self.recover(NodeId(holder as u16));
            }
        })
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
        self.enter();
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
            // SAFETY: the journal payload has MAX_PACKET bytes ≥ data.len(); only the
            // order point holder writes it, and readers read it after `begin`'s Release.
            unsafe {
                std::ptr::copy_nonoverlapping(data.as_ptr(), j.data.as_ptr() as *mut u8, data.len())
            };
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
    /// A holder declared failed by heartbeat timeout may only be hung: if its process
    /// still exists it is killed first, because on one host nothing else stops its
    /// stores, and it would go on applying a packet that we finish for it.
    pub(crate) fn recover(&self, dead: NodeId) {
        let confirm = || {
            let slot = &self.local.ctl().nodes[dead.index()];
            if slot.state.load(Ordering::Acquire) != node_state::FAILED {
                return false;
            }
            stop_process(slot.pid.load(Ordering::Relaxed));
            true
        };
        let j = &self.local.ctl().journal;
        // Called only after the journal's state read APPLYING and `from` was read, both
        // by read-modify-writes, which see the dead holder's last journal writes even
        // though nothing synchronised with it (its death was seen by timeout or pidfd).
        let finish = |from: usize| {
            let seg = j.seg.load(Ordering::Relaxed);
            let gen = j.seg_gen.load(Ordering::Relaxed);
            let offset = j.offset.load(Ordering::Relaxed) as usize;
            let len = j.len.load(Ordering::Relaxed) as usize;
            let dests = load_set(&j.dests);
            let mut data = vec![0u8; len];
            // SAFETY: `data` (the journal's payload words) holds ≥ len bytes written
            // before `state` was set APPLYING (Release), which `finish` read by RMW.
            unsafe {
                std::ptr::copy_nonoverlapping(j.data.as_ptr() as *const u8, data.as_mut_ptr(), len)
            };
            if let Some(segref) = self.local.seg_by_index(seg, gen) {
                for d in dests.iter().skip(from) {
                    if let Ok(Some(view)) = self.view(&segref, d) {
                        crate::rx::apply(&view, self.local.page, offset, &data);
                    }
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

/// Kills process `pid` (SIGKILL through a pidfd, so a reused pid is never hit after
/// the open) and waits up to a second for it to be gone. Nothing if it is gone or not
/// ours to signal.
fn stop_process(pid: u32) {
    let Some(p) = rustix::process::Pid::from_raw(pid as i32) else {
        return;
    };
    let Ok(fd) = rustix::process::pidfd_open(p, rustix::process::PidfdFlags::empty()) else {
        return;
    };
    if rustix::process::pidfd_send_signal(&fd, rustix::process::Signal::KILL).is_err() {
        return;
    }
    let mut pfd = [rustix::event::PollFd::new(
        &fd,
        rustix::event::PollFlags::IN,
    )];
    let second = rustix::time::Timespec {
        tv_sec: 1,
        tv_nsec: 0,
    };
    let _ = rustix::event::poll(&mut pfd, Some(&second));
}
