//! The hub's state, which its threads and every module share: the one [`State`]
//! under the hub lock (members and their ports, segments, groups, pending acks and
//! barrier waits, the standby's copy and the mirror set), the [`Shared`] part beside
//! it (configuration, the lock itself, the links' snapshot), and the small helpers
//! that answer and write in the hub's order.
//!
//! A leaf: it imports none of the modules that act on it. What it holds by value
//! lives in leaves too (`limiter.rs`, `deposit/conds.rs`, `rma/table.rs`,
//! `mirror/set.rs`, `standby/copy.rs`).

use crate::config::HubConfig;
use crate::deposit::conds::Conds;
use crate::limiter::Limiter;
use crate::mirror::set::Mirrors;
use crate::rma::table::Table;
use crate::standby::copy::Standby;
use memchan_core::status::LinkCounters;
use memchan_core::{Error, NodeId, NodeSet, PageSize, MAX_NODES};
use memchan_link::link::{Link, Readers};
use memchan_link::proto::reply::Refusal;
use memchan_link::proto::{self, SegInfo};
use memchan_link::wire::Kind;
use parking_lot::{Mutex, MutexGuard};
use std::cell::{Cell, RefCell};
use std::collections::{HashMap, VecDeque};
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64};
use std::sync::Arc;
use std::time::Instant;

/// Origin id of packets the hub makes itself (lock slot clearing, rx snapshots).
pub(crate) const HUB_ORIGIN: u16 = u16::MAX;

/// A node living in the hub's own process: frames for it are handed over directly.
pub trait LocalPort: Send + Sync {
    /// A Deliver, Response or Event for this node, in the hub's order: its payload is
    /// the concatenation of `parts`.
    fn frame(&self, kind: Kind, parts: &[&[u8]]);
    /// The node was isolated.
    fn isolated(&self, epoch: u64, why: &str);
    /// The outcomes of conditional writes this node applied since last asked (it
    /// cannot send them up while the hub, which called it, holds its lock).
    fn take_outcomes(&self) -> Vec<Vec<u8>> {
        Vec::new()
    }
    /// Serves a remote read or atomic (an `RmaServe` payload) at once, from the hub's
    /// lock: the `RmaDone` payload, or `None` if the node cannot answer.
    fn rma(&self, _serve: &[u8]) -> Option<Vec<u8>> {
        None
    }
}

/// Where a member's frames go.
pub(crate) enum Sink {
    Remote(Arc<Link>),
    Local(Arc<dyn LocalPort>),
}

/// A member: where its frames go, who it is, and its frames' bookkeeping.
pub(crate) struct Port {
    pub(crate) inc: u64,
    pub(crate) sink: Sink,
    pub(crate) host: String,
    /// Its host domain (`proto::DomainId`), as it joined.
    pub(crate) domain: proto::DomainId,
    pub(crate) pid: u32,
    pub(crate) uid: u32,
    pub(crate) gid: u32,
    pub(crate) addr: String,
    pub(crate) joined_epoch: u64,
    pub(crate) node_counters: LinkCounters,
    /// This node's reliable frames not yet released: (seq, deliveries outstanding,
    /// gseq if numbered for dual rail, else 0).
    pub(crate) inflight: VecDeque<(u64, u32, u64)>,
    /// Deliveries to this node it has not released: (down seq, origin, origin's seq).
    pub(crate) owed: VecDeque<(u64, u16, u64)>,
    /// Its release when the acks were last looked at for it (`settle`): an ack
    /// waits on releases, so only a release that moved can end one.
    pub(crate) acks_seen: u64,
    /// Its global clock's bound as its last probe reported it (`memchan status`).
    pub(crate) clock_bound_ns: Option<u64>,
    /// Reliable frames (writes, requests) of this node the hub handled: what a
    /// barrier waiting for it counts as progress (heartbeats do not count).
    pub(crate) handled: u64,
    /// Where it takes direct links from other hosts' nodes (`ip:port`), if it does.
    pub(crate) direct: Option<String>,
}

/// A segment of the table.
pub(crate) struct Seg {
    pub(crate) name: String,
    pub(crate) gen: u32,
    pub(crate) size: usize,
    pub(crate) uid: u32,
    pub(crate) gid: u32,
    pub(crate) mode: u32,
    pub(crate) rx: NodeSet,
    /// Lock segments keep a copy, so a node that maps one late starts consistent.
    pub(crate) shadow: Option<Vec<u8>>,
}

/// An ack waiting for the destinations' releases.
pub(crate) struct PendingAck {
    pub(crate) origin: NodeId,
    pub(crate) inc: u64,
    pub(crate) req: u32,
    pub(crate) waits: Vec<(NodeId, u64, u64)>,
    pub(crate) missing: Vec<NodeId>,
    /// Sum of the waited links' releases when last looked at, and when it last grew
    /// (or a wait ended): an ack fails only after no progress for the failure timeout.
    pub(crate) released: u64,
    pub(crate) moved: Instant,
}

/// A node waiting in a barrier: it arrived at `target` of `scope`'s count.
pub(crate) struct BarrierWait {
    pub(crate) node: NodeId,
    pub(crate) inc: u64,
    pub(crate) req: u32,
    pub(crate) scope: u16,
    pub(crate) target: u64,
    /// The missing members and the sum of their `handled` frames when last looked
    /// at, and when either last changed: the barrier fails only after no progress for
    /// the stall bound.
    pub(crate) missing: NodeSet,
    pub(crate) handled: u64,
    pub(crate) moved: Instant,
}

/// Everything under the hub lock.
pub(crate) struct State {
    pub(crate) cluster: Option<String>,
    pub(crate) page: Option<PageSize>,
    pub(crate) epoch: u64,
    pub(crate) next_inc: u64,
    /// The cluster's instance (`Welcome::instance`): drawn at start, a standby's
    /// replaced by the active's with the tables.
    pub(crate) instance: u64,
    pub(crate) ports: Vec<Option<Port>>,
    pub(crate) segs: Vec<Option<Seg>>,
    pub(crate) next_gen: u32,
    pub(crate) groups: Vec<(String, NodeSet)>,
    pub(crate) acks: Vec<PendingAck>,
    /// Scratch list of `settle` (origin, seq), kept to save an allocation per frame.
    pub(crate) credited: Vec<(u16, u64)>,
    /// Barrier arrivals per scope (group id, `u16::MAX` the cluster) and node: the
    /// same per-node counters as the one-host control block, so a node that joins
    /// during a barrier starts level with the live members and is not part of it.
    pub(crate) barrier_counts: HashMap<u16, [u64; MAX_NODES]>,
    /// Per scope and node: the number of the node's last arrival counted (its own
    /// numbering, from 1 at its join: `Op::Barrier::number`).
    pub(crate) barrier_seen: HashMap<u16, [u64; MAX_NODES]>,
    pub(crate) barrier_waits: Vec<BarrierWait>,
    pub(crate) isolations: u64,
    pub(crate) joins: u64,
    /// Refused `Data` packets are logged at a bounded rate.
    pub(crate) frame_log: Limiter,
    /// Conditional writes whose outcomes are still due (`deposit.rs`).
    pub(crate) conds: Conds,
    /// Remote reads and atomics under way at their targets (`rma.rs`).
    pub(crate) rma: Table,
    /// The last gseq given (dual rail).
    pub(crate) gseq: u64,
    /// A standby hub's copy of the active's tables and its takeover (dual rail).
    pub(crate) standby: Option<Standby>,
    /// The standbys the tables are copied to before a change is answered (dual rail).
    pub(crate) mirrors: Mirrors,
    /// Frames go to remote links without a write (`Link::queue`): set while a link's
    /// reader acts on a frame; the links queued to are noted in `dirty`, which the
    /// reader takes and writes once it has read what there was, so a burst costs one
    /// write per destination, not one per frame.
    pub(crate) corked: Cell<bool>,
    pub(crate) dirty: RefCell<Vec<Arc<Link>>>,
}

/// What the hub's threads share: the configuration, the lock and its [`State`], and
/// what is read without the lock.
pub(crate) struct Shared {
    pub(crate) cfg: HubConfig,
    pub(crate) addr: SocketAddr,
    pub(crate) state: Mutex<State>,
    pub(crate) stop: AtomicBool,
    pub(crate) started: Instant,
    /// Threads of the hub's own node reading the links themselves (see `progress`).
    pub(crate) external: Readers,
    pub(crate) links: std::sync::RwLock<Links>,
    /// Connections that ended without a join (counted by the gate without the lock).
    pub(crate) refused: AtomicU64,
}

/// The remote links' snapshot (`Shared::remote_links`).
pub(crate) type Links = Arc<Vec<(NodeId, u64, Arc<Link>)>>;

impl State {
    pub(crate) fn alive(&self, n: NodeId, inc: u64) -> bool {
        matches!(self.ports.get(n.index()), Some(Some(p)) if p.inc == inc)
    }

    /// The release mark (dual rail): below the first numbered packet some sender
    /// still holds unreleased (gseqs grow along each sender's frames).
    pub(crate) fn rail_mark(&self) -> u64 {
        self.ports
            .iter()
            .flatten()
            .filter_map(|p| p.inflight.iter().find(|e| e.2 != 0).map(|e| e.2 - 1))
            .min()
            .unwrap_or(self.gseq)
    }

    pub(crate) fn port_mut(&mut self, n: NodeId, inc: u64) -> Option<&mut Port> {
        match self.ports.get_mut(n.index()) {
            Some(Some(p)) if p.inc == inc => Some(p),
            _ => None,
        }
    }

    pub(crate) fn members(&self) -> NodeSet {
        self.ports
            .iter()
            .enumerate()
            .filter(|(_, p)| p.is_some())
            .map(|(i, _)| NodeId(i as u16))
            .collect()
    }

    /// The members other than `node` in host domain `domain` (none for
    /// [`proto::NO_DOMAIN`]): what a joiner's Welcome names as its neighbours.
    pub(crate) fn neighbours(&self, node: NodeId, domain: &proto::DomainId) -> NodeSet {
        if *domain == proto::NO_DOMAIN {
            return NodeSet::EMPTY;
        }
        self.ports
            .iter()
            .enumerate()
            .filter(|(i, p)| *i != node.index() && p.as_ref().is_some_and(|p| p.domain == *domain))
            .map(|(i, _)| NodeId(i as u16))
            .collect()
    }

    /// Sends a reliable frame to `n`; the down seq if it went over a link.
    pub(crate) fn send(&self, n: NodeId, kind: Kind, parts: &[&[u8]]) -> Option<u64> {
        match &self.ports[n.index()].as_ref()?.sink {
            Sink::Remote(l) if self.corked.get() => {
                let (seq, first) = l.queue(kind, parts).ok()?;
                if first {
                    self.dirty.borrow_mut().push(l.clone());
                }
                Some(seq)
            }
            Sink::Remote(l) => l.send(kind, parts).ok(),
            Sink::Local(p) => {
                p.frame(kind, parts);
                None
            }
        }
    }

    pub(crate) fn respond(&self, n: NodeId, req: u32, status: u8, body: &[u8]) {
        self.send(n, Kind::Response, &[&proto::response(req, status, body)]);
    }

    /// Answers a request with refusal `r` (the node rebuilds the error it names).
    pub(crate) fn refuse_with(&self, n: NodeId, req: u32, r: &Refusal) {
        self.respond(n, req, r.code(), &r.put());
    }

    /// Answers a request with the typed refusal `e` (the node rebuilds the same error).
    pub(crate) fn refuse(&self, n: NodeId, req: u32, e: &Error) {
        self.refuse_with(n, req, &Refusal::of(e));
    }

    pub(crate) fn event(&self, node: NodeId, inc: u64, kind: u8) {
        let members = self.members();
        let domain = match &self.ports[node.index()] {
            Some(p) if kind == proto::event_kind::JOINED => p.domain,
            _ => proto::NO_DOMAIN,
        };
        let ev = proto::event(self.epoch, node, inc, kind, &members, &domain);
        for m in members.iter() {
            self.send(m, Kind::Event, &[&ev]);
        }
    }

    /// Delivers a packet made by the hub itself to everyone receiving `seg`.
    pub(crate) fn hub_write(&mut self, seg: usize, offset: usize, data: &[u8]) {
        let Some(s) = self.segs[seg].as_mut() else {
            return;
        };
        if let Some(sh) = s.shadow.as_mut() {
            sh[offset..offset + data.len()].copy_from_slice(data);
        }
        let head = proto::deliver_head(HUB_ORIGIN, seg as u32, s.gen, offset as u64, 0);
        let rx = s.rx;
        for d in rx.iter() {
            if let Some(ds) = self.send(d, Kind::Deliver, &[&head, data]) {
                if let Some(Some(p)) = self.ports.get_mut(d.index()) {
                    p.owed.push_back((ds, HUB_ORIGIN, 0));
                }
            }
        }
    }
}

impl Shared {
    pub(crate) fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock()
    }

    /// The remote links, from a snapshot kept beside the hub lock: a thread spinning
    /// in `Hub::progress` must not take the hub lock on every turn, or the timer
    /// thread (heartbeats) starves behind it.
    pub(crate) fn remote_links(&self) -> Links {
        self.links.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Rebuilds the snapshot; called with the hub lock held after a join or removal.
    pub(crate) fn refresh_links(&self, st: &State) {
        let v: Vec<_> = st
            .ports
            .iter()
            .enumerate()
            .filter_map(|(i, p)| match p {
                Some(Port {
                    inc,
                    sink: Sink::Remote(l),
                    ..
                }) => Some((NodeId(i as u16), *inc, l.clone())),
                _ => None,
            })
            .collect();
        *self.links.write().unwrap_or_else(|e| e.into_inner()) = Arc::new(v);
    }
}

pub(crate) fn seg_info(i: usize, s: &Seg) -> SegInfo {
    SegInfo {
        seg: i as u32,
        gen: s.gen,
        size: s.size as u64,
        uid: s.uid,
        gid: s.gid,
        mode: s.mode,
    }
}
