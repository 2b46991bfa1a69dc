//! Message passing over memchan, shaped as MPI users expect: a communicator over the
//! cluster's nodes (rank = node id), blocking and non-blocking send and receive,
//! completion by `wait` / `test` / `wait_all` / `wait_any`, `probe` / `iprobe`, tags with
//! [`ANY_SOURCE`] and [`ANY_TAG`], and MPI's non-overtaking rule: two messages from one
//! sender that one receive could match are received in the order they were sent.
//!
//! It is built on the public `memchan` API only (a segment, rx and tx mappings, `wait`),
//! so it runs on every transport: shared memory on one host, the hub between hosts.
//!
//! Two modes, as in seed 002:
//!
//! - **Full postal** ([`Comm::send`], [`Comm::isend`]): buffered. A send may precede its
//!   receive by any amount within the limits below; a non-blocking send's buffer is the
//!   caller's again at completion. Messages up to [`EAGER_MAX`] bytes travel inline in
//!   one cache line; longer ones as a header and fragments through a per-sender bulk
//!   area in the receiver's memory. A message nobody has asked for yet is copied into
//!   the receiver's unexpected store.
//! - **Restricted zero-copy** ([`Comm::ssend`], [`Comm::issend`]): synchronous. The send
//!   completes only once a receive matched it. Longer than [`EAGER_MAX`] it is a
//!   rendezvous: a request to send, the receiver's clear-to-send once a receive matches,
//!   then the body. When that receive's buffer lies in an rx mapping
//!   ([`Comm::irecv_rx`]) the sender deposits the body straight into it: one copy.
//!
//! How (the techniques of the fast shared-memory MPIs, written from their ideas): one
//! segment per communicator that every member maps rx; in it, per sender, a ring of
//! 64-byte slots (header and up to 48 payload bytes; the slot's sequence word written
//! last, so a receiver that sees it sees the whole slot) and a bulk area of chunks.
//! Senders write their own rings by direct deposit; receivers return credits (slots and
//! chunks consumed) in batches through a word in the sender's memory. A waiting caller
//! spins a while, then sleeps on the segment's notify pages (no busy core).
//!
//! **Limits and back-pressure.** Per (sender, receiver): `ring_slots` slots in flight and
//! `chunks` bulk chunks of `chunk_size` bytes; a sender that has used them waits (its
//! non-blocking sends stay incomplete) until the receiver drains. A receiver buffers
//! unexpected messages up to `unexpected_limit` bytes; past that it stops draining the
//! sender whose next message does not fit, and that sender waits. Nothing grows without
//! bound. A program that needs more unexpected data than the limit before it posts the
//! matching receives can deadlock, as with any MPI's buffer limits.
//!
//! **Restrictions of the zero-copy receive.** Data that a receive into an rx mapping
//! gets from a full-postal send (or an eager synchronous one) is copied by the receiver
//! through a tx mapping to itself (the transport's ordered path: correct, not fast).
//!
//! The core API uses plain handles ([`Request`] is a number) and owned buffers, no
//! closures, so that a C API can expose it.

mod wire;

#[cfg(test)]
mod hostile_tests;

pub use wire::EAGER_MAX;

use memchan::{Cluster, Dest, NodeId, RxAttrs, RxMapping, Segment, TxAttrs, TxMapping};
use std::collections::{HashMap, VecDeque};
use std::time::Duration;
use wire::{Body, Kind, Layout, ACK_WORD, F_SYNC, NAME_MAX, SLOT};

/// Progress rounds a caller that announced it sleeps makes before it does (see
/// `Comm::sleep`).
const GRACE_POLLS: u32 = 256;

/// Polls of one ring by a blocking receive's eager path before the general path
/// (which progresses every peer, then sleeps) takes over.
const FAST_POLLS: u32 = 1024;

/// Through a hub: idle progress rounds of a waiting caller before it spins on the
/// link itself, and how long that spin lasts (about the one-host spin) before it
/// sleeps.
const HUB_RING_POLLS: u32 = 16;
const HUB_SPIN: Duration = Duration::from_millis(1);

/// Matches a message from any sender.
pub const ANY_SOURCE: u32 = u32::MAX;
/// Matches a message with any tag.
pub const ANY_TAG: u32 = u32::MAX;
/// The largest tag a message may carry (MPI's `MPI_TAG_UB` guarantee).
pub const TAG_UB: u32 = i32::MAX as u32;
/// The longest message (the length words are checked against it).
pub const MAX_MESSAGE: usize = 1 << 40;

/// A communicator's sizes. Every member must use the same values.
#[derive(Clone, Debug)]
pub struct CommConfig {
    /// Slots per sender ring (a power of two, 8..=4096).
    pub ring_slots: usize,
    /// Bytes per bulk chunk (a multiple of 4096).
    pub chunk_size: usize,
    /// Bulk chunks per sender (2..=64).
    pub chunks: usize,
    /// Node ids of members must be below this (it sizes the segment).
    pub max_nodes: usize,
    /// Bytes of unexpected messages a receiver buffers before it stops draining.
    pub unexpected_limit: usize,
    /// Polls that complete nothing before a waiting caller sleeps.
    pub spin: u32,
    /// Permission bits of the communicator's segment.
    pub mode: u32,
}

impl Default for CommConfig {
    fn default() -> Self {
        CommConfig {
            ring_slots: 64,
            // 2 MiB in flight per (sender, receiver): more than a core's L2 cache
            // (1 MiB here). A smaller bulk ring is still in the receiver's cache when
            // the sender writes it again, and each line written then waits for a
            // transfer from the other core: 64 KiB x 4 gave 8 GB/s for 1 MiB
            // messages, 512 KiB x 4 gives 33-37 GB/s (Open MPI: 13). Only the pages a
            // sender uses are touched on one host.
            chunk_size: 512 * 1024,
            chunks: 4,
            max_nodes: 16,
            unexpected_limit: 64 << 20,
            spin: 20_000,
            mode: 0o600,
        }
    }
}

/// What went wrong. [`code`](Self::code) gives a stable number for a C API.
#[derive(Debug, thiserror::Error)]
pub enum MsgError {
    /// The message is longer than the receive buffer. It is not lost: it stays queued
    /// and a receive with a buffer of `len` bytes gets it.
    #[error("message of {len} bytes from node {node} (tag {tag}) does not fit the {capacity}-byte receive buffer; it stays queued")]
    Truncated {
        node: u32,
        tag: u32,
        len: usize,
        capacity: usize,
    },
    /// The peer left the cluster or failed before the operation completed.
    #[error("node {0} left or failed before the operation completed")]
    PeerGone(u32),
    /// Bad argument.
    #[error("invalid {what}: {why}")]
    Invalid { what: &'static str, why: String },
    /// The peer wrote something the protocol does not allow; it is treated as gone.
    #[error("node {node} broke the message protocol ({why}); it is treated as gone")]
    Protocol { node: u32, why: String },
    /// A handle that is not a pending request of this communicator.
    #[error("unknown or already completed request")]
    UnknownRequest,
    /// The cluster refused (isolated, hub lost, permissions, ...).
    #[error(transparent)]
    Cluster(#[from] memchan::Error),
}

impl MsgError {
    /// A stable code for a C API: the cluster's own code for `Cluster`, 101.. for the rest.
    pub fn code(&self) -> i32 {
        match self {
            MsgError::Truncated { .. } => 101,
            MsgError::PeerGone(_) => 102,
            MsgError::Invalid { .. } => 103,
            MsgError::Protocol { .. } => 104,
            MsgError::UnknownRequest => 105,
            MsgError::Cluster(e) => e.code(),
        }
    }
}

type Result<T> = std::result::Result<T, MsgError>;

/// A received message's envelope.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Status {
    pub source: u32,
    pub tag: u32,
    pub len: usize,
}

/// A pending non-blocking operation (a plain number: index and generation).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Request(pub u64);

/// A completed operation: its outcome and the caller's buffer back (the sent data, or
/// the receive buffer with the message in its first `status.len` bytes; empty for a
/// receive into an rx mapping).
#[derive(Debug)]
pub struct Completion {
    pub result: Result<Status>,
    pub buf: Vec<u8>,
}

enum Buf {
    Owned(Vec<u8>),
    /// The caller's memory (the `_ptr` calls): valid until the request completes.
    Raw(*mut u8, usize),
    Rx {
        name: String,
        offset: usize,
    },
}

impl Buf {
    /// The bytes of a sent message or a receive buffer held in memory (not `Rx`).
    fn bytes(&self) -> &[u8] {
        match self {
            Buf::Owned(v) => v,
            // SAFETY: the `_ptr` calls' contract: `len` readable bytes that stay
            // valid, and are not written by anyone else, until the request completes.
            Buf::Raw(p, len) => unsafe { std::slice::from_raw_parts(*p, *len) },
            Buf::Rx { .. } => &[],
        }
    }
    fn bytes_mut(&mut self) -> Option<&mut [u8]> {
        match self {
            Buf::Owned(v) => Some(v),
            // SAFETY: as in `bytes`, for a receive buffer: writable and not used by
            // anyone else until the request completes.
            Buf::Raw(p, len) => Some(unsafe { std::slice::from_raw_parts_mut(*p, *len) }),
            Buf::Rx { .. } => None,
        }
    }
}

#[derive(Clone, Copy)]
enum Op {
    Send,
    Recv { src: u32, tag: u32 },
}

struct Req {
    op: Op,
    buf: Buf,
    /// Send: message length; receive: capacity.
    len: usize,
    tag: u32,
    done: Option<Result<Status>>,
}

enum Target {
    Bulk,
    Rx { name: String, offset: usize },
}

struct Stream {
    cookie: u64,
    req: usize,
    sent: usize,
    target: Target,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Sink {
    Req(usize),
    Unexp(u64),
}

struct InFlight {
    sink: Sink,
    len: usize,
    got: usize,
    tag: u32,
}

enum UKind {
    Data,
    Rts(u64),
}

struct Unexp {
    uid: u64,
    src: u32,
    tag: u32,
    len: usize,
    data: Vec<u8>,
    complete: bool,
    kind: UKind,
    sync: Option<u64>,
    claimed: Option<usize>,
}

struct PendingCts {
    cookie: u64,
    offset: usize,
    name: Vec<u8>,
    name_len: usize,
}

/// Synchronous sends towards one peer that wait for its acknowledgement (eager)
/// or clear-to-send (rendezvous): (cookie, request, eager), oldest first. Few at a
/// time, and the acknowledgement is usually for the oldest: a short list beats
/// hashing on the latency path.
#[derive(Default)]
struct Awaiting(Vec<(u64, usize, bool)>);

impl Awaiting {
    fn insert(&mut self, cookie: u64, req: usize, eager: bool) {
        self.0.push((cookie, req, eager));
    }
    fn contains(&self, cookie: u64) -> bool {
        self.0.iter().any(|&(c, _, e)| c == cookie && !e)
    }
    /// The request of `cookie`, if it waits for what `eager` says.
    fn remove(&mut self, cookie: u64, eager: bool) -> Option<usize> {
        let k = self
            .0
            .iter()
            .position(|&(c, _, e)| c == cookie && e == eager)?;
        Some(self.0.remove(k).1)
    }
}

#[derive(Clone, PartialEq, Eq)]
enum PeerState {
    Absent,
    Live,
    Gone(Option<String>),
}

struct Peer {
    state: PeerState,
    tx: Option<TxMapping>,
    // me -> peer
    next_seq: u64,
    sent: u64,
    /// The slot whose ack word holds an acknowledgement (it is not published yet
    /// while this is `sent + 1`).
    ack_slot: u64,
    credit: u64,
    out: VecDeque<(Body, Option<usize>)>,
    streams: VecDeque<Stream>,
    chunks_sent: u64,
    awaiting: Awaiting,
    // peer -> me
    recvd: u64,
    credited: u64,
    chunks_recvd: u64,
    inflight: HashMap<u64, InFlight>,
    cts: Option<PendingCts>,
}

impl Peer {
    fn new() -> Peer {
        Peer {
            state: PeerState::Absent,
            tx: None,
            next_seq: 1,
            sent: 0,
            ack_slot: 0,
            credit: 0,
            out: VecDeque::new(),
            streams: VecDeque::new(),
            chunks_sent: 0,
            awaiting: Awaiting::default(),
            recvd: 0,
            credited: 0,
            chunks_recvd: 0,
            inflight: HashMap::new(),
            cts: None,
        }
    }
}

/// What handling one incoming slot did.
enum Handled {
    Consumed,
    /// The unexpected store is full: leave the slot, stop draining this sender.
    Stall,
}

/// A communicator: this node's endpoint of message passing among the cluster's nodes.
/// Used from one thread (`&mut self`); progress happens inside its calls.
pub struct Comm<'c> {
    cluster: &'c Cluster,
    _seg: Segment,
    rx: RxMapping,
    me: usize,
    lay: Layout,
    cfg: CommConfig,
    peers: Vec<Peer>,
    active: Vec<usize>,
    reqs: Vec<Option<Req>>,
    gens: Vec<u32>,
    free: Vec<usize>,
    posted: VecDeque<usize>,
    unexp: VecDeque<Unexp>,
    unexp_bytes: usize,
    next_uid: u64,
    direct: HashMap<(String, usize), TxMapping>,
    epoch: u64,
    spare: Vec<u8>,
    /// Requests completed so far: a drain that completed one stops there.
    completed: u64,
    /// The position in `active` where the next progress round starts.
    turn: usize,
    /// The peers a sleeping caller told so (kept to reuse the allocation).
    told: Vec<usize>,
    /// Whether the cluster runs through a hub: a frame there lands in the rings only
    /// when a thread reads the link, so a waiting caller spins on the link
    /// (`wait_spin`), not on the rings alone (which left every frame to the node's
    /// service thread: a wake-up per message).
    hub: bool,
    /// Polls of one ring on the eager fast paths.
    fast_polls: u32,
    /// `rx.as_ptr()` (as a number: a `Comm` may move between threads), for
    /// [`word`](Self::word).
    base: usize,
}

fn invalid(what: &'static str, why: impl Into<String>) -> MsgError {
    MsgError::Invalid {
        what,
        why: why.into(),
    }
}

impl<'c> Comm<'c> {
    /// Creates this node's endpoint of the communicator `name`: collective over every
    /// live member of the cluster (it ends with a cluster barrier, after which all
    /// members can receive). The members are the cluster's members after that barrier;
    /// every node id must be below `cfg.max_nodes`.
    ///
    /// # Errors
    /// `Invalid` for bad sizes or a node id past `max_nodes`; the cluster's errors
    /// (segment name, permissions, `SegmentSizeMismatch` if members disagree on sizes).
    pub fn new(cluster: &'c Cluster, name: &str, cfg: CommConfig) -> Result<Comm<'c>> {
        if !cfg.ring_slots.is_power_of_two() || !(8..=4096).contains(&cfg.ring_slots) {
            return Err(invalid("ring_slots", "a power of two in 8..=4096"));
        }
        if cfg.chunk_size == 0 || !cfg.chunk_size.is_multiple_of(4096) || cfg.chunk_size > 1 << 26 {
            return Err(invalid("chunk_size", "a multiple of 4096 up to 64 MiB"));
        }
        if !(2..=64).contains(&cfg.chunks) {
            return Err(invalid("chunks", "2..=64"));
        }
        if !(1..=memchan::MAX_NODES).contains(&cfg.max_nodes) {
            return Err(invalid("max_nodes", "1..=256"));
        }
        let me = cluster.node_id().index();
        if me >= cfg.max_nodes {
            return Err(invalid(
                "max_nodes",
                format!("node id {me} is not below {}", cfg.max_nodes),
            ));
        }
        let lay = Layout::new(&cfg, cluster.page_size());
        let seg = cluster.segment(&format!("mp.{name}"), lay.size, cfg.mode)?;
        let rx = seg.map_rx_with(RxAttrs {
            notify: true,
            ..RxAttrs::default()
        })?;
        // Rings and credit lines wake a sleeping waiter; bulk pages need not (a
        // fragment's slot follows its chunk).
        rx.set_attrs(
            lay.bulk_start,
            lay.size - lay.bulk_start,
            RxAttrs::default(),
        )?;
        cluster.barrier()?;
        let mut c = Comm {
            cluster,
            _seg: seg,
            rx,
            me,
            lay,
            peers: (0..cfg.max_nodes).map(|_| Peer::new()).collect(),
            cfg,
            active: Vec::new(),
            reqs: Vec::new(),
            gens: Vec::new(),
            free: Vec::new(),
            posted: VecDeque::new(),
            unexp: VecDeque::new(),
            unexp_bytes: 0,
            next_uid: 0,
            direct: HashMap::new(),
            epoch: cluster.epoch(),
            spare: Vec::new(),
            completed: 0,
            turn: 0,
            told: Vec::new(),
            hub: cluster.transport() == "hub",
            fast_polls: if cluster.transport() == "hub" {
                1
            } else {
                FAST_POLLS
            },
            base: 0,
        };
        c.base = c.rx.as_ptr() as usize;
        for n in cluster.members() {
            let i = n.index();
            if i >= c.cfg.max_nodes {
                return Err(invalid(
                    "max_nodes",
                    format!("member {i} is not below {}", c.cfg.max_nodes),
                ));
            }
            c.peers[i].tx = Some(c._seg.map_tx(Dest::Node(n), TxAttrs::default())?);
            c.peers[i].state = PeerState::Live;
            c.active.push(i);
        }
        Ok(c)
    }

    /// This node's rank (its node id).
    pub fn rank(&self) -> u32 {
        self.me as u32
    }

    /// The members' ranks when the communicator was made, ascending.
    pub fn ranks(&self) -> Vec<u32> {
        self.active.iter().map(|&i| i as u32).collect()
    }

    /// The word at `off` of this node's copy of the segment, loaded with Acquire:
    /// `RxMapping::load_u64` without its checks and dispatch, on the polling path.
    /// Every offset here comes from the layout, 8-aligned and inside the segment.
    #[inline(always)]
    fn word(&self, off: usize) -> u64 {
        debug_assert!(off.is_multiple_of(8) && off + 8 <= self.lay.size);
        // SAFETY: `base` is the start of `self.rx`, mapped while `self` lives and
        // `lay.size` bytes long (the segment was made with that size); `off` is
        // 8-aligned and in bounds (the layout's); receive memory is written by other
        // processes concurrently and read here only through an atomic load.
        unsafe {
            (*((self.base + off) as *const std::sync::atomic::AtomicU64))
                .load(std::sync::atomic::Ordering::Acquire)
        }
    }

    // ---- requests -------------------------------------------------------------------

    fn alloc(&mut self, r: Req) -> Request {
        let i = match self.free.pop() {
            Some(i) => {
                self.reqs[i] = Some(r);
                i
            }
            None => {
                self.reqs.push(Some(r));
                self.gens.push(0);
                self.reqs.len() - 1
            }
        };
        Request((u64::from(self.gens[i]) << 32) | i as u64)
    }

    fn index_of(&self, r: Request) -> Option<usize> {
        let i = (r.0 & 0xffff_ffff) as usize;
        (i < self.reqs.len() && self.gens[i] == (r.0 >> 32) as u32 && self.reqs[i].is_some())
            .then_some(i)
    }

    fn take(&mut self, i: usize) -> Completion {
        let r = self.reqs[i].take().expect("live request");
        self.gens[i] = self.gens[i].wrapping_add(1);
        self.free.push(i);
        Completion {
            result: r.done.unwrap_or(Err(MsgError::UnknownRequest)),
            buf: match r.buf {
                Buf::Owned(v) => v,
                Buf::Raw(..) | Buf::Rx { .. } => Vec::new(),
            },
        }
    }

    fn complete(&mut self, i: usize, res: Result<Status>) {
        if let Some(r) = self.reqs[i].as_mut() {
            if r.done.is_none() {
                r.done = Some(res);
                self.completed += 1;
            }
        }
    }

    fn is_done(&self, i: usize) -> bool {
        self.reqs[i].as_ref().is_some_and(|r| r.done.is_some())
    }

    // ---- sending --------------------------------------------------------------------

    #[inline(always)]
    fn check_dest(&self, dest: u32, tag: u32) -> Result<usize> {
        let d = dest as usize;
        if tag <= TAG_UB
            && self
                .peers
                .get(d)
                .is_some_and(|p| matches!(p.state, PeerState::Live))
        {
            return Ok(d);
        }
        Err(self.dest_refusal(dest, tag))
    }

    /// Why [`check_dest`](Self::check_dest) refused: out of line, so that the
    /// message's formatting stays off the eager path.
    #[cold]
    #[inline(never)]
    fn dest_refusal(&self, dest: u32, tag: u32) -> MsgError {
        if tag > TAG_UB {
            return invalid("tag", format!("{tag} is above TAG_UB ({TAG_UB})"));
        }
        match self.peers.get(dest as usize).map(|p| &p.state) {
            Some(PeerState::Gone(why)) => gone_error(dest, why),
            _ => invalid("destination", format!("{dest} is not a member")),
        }
    }

    fn start_send(&mut self, dest: u32, tag: u32, buf: Buf, sync: bool) -> Result<Request> {
        let d = self.check_dest(dest, tag)?;
        let len = buf.bytes().len();
        if len > MAX_MESSAGE {
            return Err(invalid("length", "over MAX_MESSAGE"));
        }
        let r = self.alloc(Req {
            op: Op::Send,
            buf,
            len,
            tag,
            done: None,
        });
        let i = (r.0 & 0xffff_ffff) as usize;
        let p = &mut self.peers[d];
        let cookie = p.next_seq;
        p.next_seq += 1;
        let flags = if sync { F_SYNC } else { 0 };
        if len <= EAGER_MAX {
            let mut b = Body::new(Kind::Eager, flags, len as u8, tag);
            if let Some(r) = &self.reqs[i] {
                b.set_bytes(r.buf.bytes());
            }
            if sync {
                p.awaiting.insert(cookie, i, true);
                p.out.push_back((b, None));
            } else {
                p.out.push_back((b, Some(i)));
            }
        } else if sync {
            let mut b = Body::new(Kind::Rts, flags, 0, tag);
            b.set_p(0, len as u64);
            p.awaiting.insert(cookie, i, false);
            p.out.push_back((b, None));
        } else {
            let mut b = Body::new(Kind::Hdr, 0, 0, tag);
            b.set_p(0, len as u64);
            p.out.push_back((b, None));
            p.streams.push_back(Stream {
                cookie,
                req: i,
                sent: 0,
                target: Target::Bulk,
            });
        }
        // A protocol error of `d`'s (a credit past what was sent) fails `d`, and
        // with it this request, which the caller then waits for.
        if let Err(e) = self.push(d) {
            self.on_error(d, e)?;
        }
        Ok(r)
    }

    /// Full-postal non-blocking send of `data` (buffered: it may precede its receive).
    /// The buffer comes back in the [`Completion`].
    ///
    /// # Errors
    /// `Invalid` (tag above [`TAG_UB`], not a member), `PeerGone`, the cluster's.
    pub fn isend(&mut self, dest: u32, tag: u32, data: Vec<u8>) -> Result<Request> {
        self.start_send(dest, tag, Buf::Owned(data), false)
    }

    /// [`isend`](Self::isend) (or, with `sync`, [`issend`](Self::issend)) of the
    /// caller's memory (for a C API, or to send one buffer many times); the
    /// completion's buffer is empty.
    ///
    /// # Safety
    /// `data..data+len` must stay readable and unchanged until the request completes
    /// (is returned by `wait`, `test`, `wait_all` or `wait_any`).
    ///
    /// # Errors
    /// As [`isend`](Self::isend).
    pub unsafe fn isend_ptr(
        &mut self,
        dest: u32,
        tag: u32,
        data: *const u8,
        len: usize,
        sync: bool,
    ) -> Result<Request> {
        self.start_send(dest, tag, Buf::Raw(data.cast_mut(), len), sync)
    }

    /// [`irecv`](Self::irecv) into the caller's memory (for a C API, or to reuse one
    /// buffer); the completion's buffer is empty.
    ///
    /// # Safety
    /// `buf..buf+cap` must stay writable, and unused by anyone else, until the request
    /// completes.
    ///
    /// # Errors
    /// As [`irecv`](Self::irecv).
    pub unsafe fn irecv_ptr(
        &mut self,
        src: u32,
        tag: u32,
        buf: *mut u8,
        cap: usize,
    ) -> Result<Request> {
        self.start_recv(src, tag, Buf::Raw(buf, cap), cap)
    }

    /// Zero-copy-mode non-blocking send: synchronous, it completes once a receive
    /// matched it; a long message is deposited straight into an rx-mapped receive
    /// buffer.
    ///
    /// # Errors
    /// As [`isend`](Self::isend).
    pub fn issend(&mut self, dest: u32, tag: u32, data: Vec<u8>) -> Result<Request> {
        self.start_send(dest, tag, Buf::Owned(data), true)
    }

    /// Full-postal blocking send: returns once `data` may be reused.
    ///
    /// # Errors
    /// As [`isend`](Self::isend).
    pub fn send(&mut self, dest: u32, tag: u32, data: &[u8]) -> Result<()> {
        if data.len() <= EAGER_MAX && self.send_now(dest, tag, data)? {
            return Ok(());
        }
        self.send_slow(dest, tag, data)
    }

    /// [`send`](Self::send) through a request: kept out of line, so that the eager
    /// path above stays a small function.
    #[cold]
    #[inline(never)]
    fn send_slow(&mut self, dest: u32, tag: u32, data: &[u8]) -> Result<()> {
        let v = self.copy_in(data);
        let r = self.isend(dest, tag, v)?;
        self.spare = self.finish_blocking(r)?.1;
        Ok(())
    }

    /// The eager path of a blocking full-postal send without a request: when nothing
    /// is queued towards `dest` (order) and its ring has room (back-pressure), the
    /// slot is written at once and the send is complete. Whether it was.
    #[inline(always)]
    fn send_now(&mut self, dest: u32, tag: u32, data: &[u8]) -> Result<bool> {
        let d = self.check_dest(dest, tag)?;
        // A ring without room, or a credit word the general path will find bad.
        if !self.peers[d].out.is_empty() || !matches!(self.ring_room(d), Ok(true)) {
            return Ok(false);
        }
        let mut b = Body::new(Kind::Eager, 0, data.len() as u8, tag);
        b.set_bytes(data);
        self.peers[d].next_seq += 1;
        self.publish_bytes(d, b.first_words(1 + data.len().div_ceil(8)), false)?;
        Ok(true)
    }

    /// The eager path of a blocking synchronous send, as [`send_now`](Self::send_now)
    /// but waiting for the acknowledgement: it polls the ack word of the slot `dest`
    /// publishes here next (where it usually lands, in the line of `dest`'s next
    /// message) a while, then leaves the wait to a request of the general path.
    /// Whether it sent.
    #[inline(always)]
    fn ssend_now(&mut self, dest: u32, tag: u32, data: &[u8]) -> Result<bool> {
        let d = self.check_dest(dest, tag)?;
        // A ring without room, or a credit word the general path will find bad.
        if !self.peers[d].out.is_empty() || !matches!(self.ring_room(d), Ok(true)) {
            return Ok(false);
        }
        let mut b = Body::new(Kind::Eager, F_SYNC, data.len() as u8, tag);
        b.set_bytes(data);
        let cookie = self.peers[d].next_seq;
        self.peers[d].next_seq += 1;
        self.publish_bytes(d, b.first_words(1 + data.len().div_ceil(8)), false)?;
        for _ in 0..self.fast_polls {
            let seq = self.peers[d].recvd + 1;
            let off = self.lay.slot(d, seq);
            // A cookie here is an acknowledgement of this message: cookies are
            // never reused, so an older word never holds it.
            if self.word(off + ACK_WORD) == cookie {
                return Ok(true);
            }
            if self.word(off) == seq {
                break; // a slot to read first: the general path does
            }
            std::hint::spin_loop();
        }
        self.await_ack(d, cookie, data.len(), tag)?;
        Ok(true)
    }

    /// The rest of [`ssend_now`](Self::ssend_now)'s wait, through a request of the
    /// general path (out of line: the eager path stays small).
    #[cold]
    #[inline(never)]
    fn await_ack(&mut self, d: usize, cookie: u64, len: usize, tag: u32) -> Result<()> {
        let r = self.alloc(Req {
            op: Op::Send,
            buf: Buf::Owned(Vec::new()),
            len,
            tag,
            done: None,
        });
        let i = (r.0 & 0xffff_ffff) as usize;
        self.peers[d].awaiting.insert(cookie, i, true);
        self.finish_blocking(r)?;
        Ok(())
    }

    /// Zero-copy-mode blocking send: returns once a receive matched it and the data
    /// is delivered.
    ///
    /// # Errors
    /// As [`isend`](Self::isend).
    pub fn ssend(&mut self, dest: u32, tag: u32, data: &[u8]) -> Result<()> {
        if data.len() <= EAGER_MAX && self.ssend_now(dest, tag, data)? {
            return Ok(());
        }
        self.ssend_slow(dest, tag, data)
    }

    /// [`ssend`](Self::ssend) through a request, out of line as
    /// [`send_slow`](Self::send_slow).
    #[cold]
    #[inline(never)]
    fn ssend_slow(&mut self, dest: u32, tag: u32, data: &[u8]) -> Result<()> {
        let v = self.copy_in(data);
        let r = self.issend(dest, tag, v)?;
        self.spare = self.finish_blocking(r)?.1;
        Ok(())
    }

    fn copy_in(&mut self, data: &[u8]) -> Vec<u8> {
        let mut v = std::mem::take(&mut self.spare);
        v.clear();
        v.extend_from_slice(data);
        v
    }

    fn finish_blocking(&mut self, r: Request) -> Result<(Status, Vec<u8>)> {
        let c = self.wait(r);
        match c.result {
            Ok(s) => Ok((s, c.buf)),
            Err(e) => {
                self.spare = c.buf;
                Err(e)
            }
        }
    }

    /// Waits until everything this node queued (messages, fragments, credits' and
    /// control slots) has been written to its destinations, so that peers can finish
    /// without this node's further help. Call it before leaving, as `MPI_Finalize`.
    ///
    /// # Errors
    /// The cluster's.
    pub fn finish(&mut self) -> Result<()> {
        self.block_until(|c| {
            c.active
                .iter()
                .all(|&p| c.peers[p].out.is_empty() && c.peers[p].streams.is_empty())
        })
    }

    // ---- receiving ------------------------------------------------------------------

    fn start_recv(&mut self, src: u32, tag: u32, buf: Buf, cap: usize) -> Result<Request> {
        if tag != ANY_TAG && tag > TAG_UB {
            return Err(invalid("tag", format!("{tag} is above TAG_UB ({TAG_UB})")));
        }
        if src != ANY_SOURCE
            && self
                .peers
                .get(src as usize)
                .is_none_or(|p| p.state == PeerState::Absent)
        {
            return Err(invalid("source", format!("{src} is not a member")));
        }
        let r = self.alloc(Req {
            op: Op::Recv { src, tag },
            buf,
            len: cap,
            tag,
            done: None,
        });
        let i = (r.0 & 0xffff_ffff) as usize;
        // No progress round first: a message still in a ring is newer than every
        // unexpected one and meets the posted queue, in order, when it is drained.
        self.post(i)?;
        Ok(r)
    }

    /// Matches request `i` against the unexpected store, else queues it.
    fn post(&mut self, i: usize) -> Result<()> {
        let (src, tag, cap) = match self.reqs[i].as_ref() {
            Some(Req {
                op: Op::Recv { src, tag },
                len,
                ..
            }) => (*src, *tag, *len),
            _ => return Ok(()),
        };
        let found = self.unexp.iter().position(|u| {
            u.claimed.is_none()
                && (src == ANY_SOURCE || u.src == src)
                && (tag == ANY_TAG || u.tag == tag)
        });
        if let Some(k) = found {
            let u = &self.unexp[k];
            if u.len > cap {
                let e = MsgError::Truncated {
                    node: u.src,
                    tag: u.tag,
                    len: u.len,
                    capacity: cap,
                };
                self.complete(i, Err(e));
                return Ok(());
            }
            match u.kind {
                UKind::Rts(cookie) => {
                    let u = self.unexp.remove(k).expect("found");
                    self.unexp_bytes -= SLOT;
                    if let Err(e) = self.clear_to_send(u.src as usize, cookie, i, u.len, u.tag) {
                        self.on_error(u.src as usize, e)?;
                    }
                }
                UKind::Data if !u.complete => self.unexp[k].claimed = Some(i),
                UKind::Data => {
                    let u = self.unexp.remove(k).expect("found");
                    self.unexp_bytes -= u.len + SLOT;
                    self.deliver_whole(i, &u)?;
                    if u.sync.is_some() {
                        if let Err(e) = self.push(u.src as usize) {
                            self.on_error(u.src as usize, e)?;
                        }
                    }
                }
            }
            return Ok(());
        }
        if let Some(PeerState::Gone(why)) = self.peers.get(src as usize).map(|p| &p.state) {
            let e = gone_error(src, why);
            self.complete(i, Err(e));
            return Ok(());
        }
        self.posted.push_back(i);
        Ok(())
    }

    /// Copies a whole unexpected message into request `i` and completes it.
    fn deliver_whole(&mut self, i: usize, u: &Unexp) -> Result<()> {
        self.write_req(i, 0, &u.data)?;
        self.complete(
            i,
            Ok(Status {
                source: u.src,
                tag: u.tag,
                len: u.len,
            }),
        );
        if let Some(cookie) = u.sync {
            self.ack(u.src as usize, cookie)?;
        }
        Ok(())
    }

    /// Writes `data` at `at` of request `i`'s buffer.
    fn write_req(&mut self, i: usize, at: usize, data: &[u8]) -> Result<()> {
        let me = self.me;
        let Some(r) = self.reqs[i].as_mut() else {
            return Ok(());
        };
        if let Some(b) = r.buf.bytes_mut() {
            b[at..at + data.len()].copy_from_slice(data);
            return Ok(());
        }
        match &mut r.buf {
            Buf::Owned(_) | Buf::Raw(..) => {}
            Buf::Rx { name, offset } => {
                let (name, off) = (name.clone(), *offset + at);
                self.direct_tx(&name, me)?.write(off, data)?;
                // Through a hub the copy comes back asynchronously: it must have
                // landed before the receive completes.
                self.cluster.ack()?;
            }
        }
        Ok(())
    }

    fn direct_tx(&mut self, name: &str, node: usize) -> Result<&TxMapping> {
        let key = (name.to_string(), node);
        if !self.direct.contains_key(&key) {
            let seg = self.cluster.open_segment(name)?;
            let tx = seg.map_tx(Dest::Node(NodeId(node as u16)), TxAttrs::default())?;
            self.direct.insert(key.clone(), tx);
        }
        Ok(&self.direct[&key])
    }

    /// Deposits a zero-copy body where `p`'s clear-to-send said. The segment and the
    /// range are `p`'s input: one that does not exist, that this node may not write,
    /// or a range past its end is `p` breaking the protocol, which fails `p` alone
    /// (as an error of the write it was, it failed every later call of this
    /// communicator, the stream retried at the head of `p`'s queue). This node's own
    /// trouble (isolated, hub lost, the system's refusals, `p` gone) stays the
    /// caller's, as on every other write.
    fn deposit_direct(&mut self, p: usize, name: &str, offset: usize, data: &[u8]) -> Result<()> {
        let r = match self.direct_tx(name, p) {
            Ok(tx) => tx.write(offset, data).map_err(MsgError::from),
            Err(e) => Err(e),
        };
        r.map_err(|e| match e {
            MsgError::Cluster(
                e @ (memchan::Error::Isolated { .. }
                | memchan::Error::HubLost(_)
                | memchan::Error::Os { .. }
                | memchan::Error::Timeout(..)
                | memchan::Error::Stalled { .. }
                | memchan::Error::TableFull(_)
                | memchan::Error::UnknownNode(_)),
            ) => MsgError::Cluster(e),
            MsgError::Cluster(e) => protocol(
                p,
                &format!(
                    "its clear-to-send names {} bytes at offset {offset} of segment \
                     `{name}`: {e}",
                    data.len()
                ),
            ),
            e => e,
        })
    }

    /// Sends the clear-to-send for the request-to-send `cookie` from `src`, matched by
    /// receive `i`.
    fn clear_to_send(
        &mut self,
        src: usize,
        cookie: u64,
        i: usize,
        len: usize,
        tag: u32,
    ) -> Result<()> {
        let rx_target = match self.reqs[i].as_ref().map(|r| &r.buf) {
            Some(Buf::Rx { name, offset }) => Some((name.clone(), *offset)),
            _ => None,
        };
        self.peers[src].inflight.insert(
            cookie,
            InFlight {
                sink: Sink::Req(i),
                len,
                got: 0,
                tag,
            },
        );
        let p = &mut self.peers[src];
        let mut b = Body::new(Kind::Cts, 0, 0, 0);
        b.set_p(0, cookie);
        match rx_target {
            None => p.out.push_back((b, None)),
            Some((name, offset)) => {
                let n = name.as_bytes();
                b.set_p(1, 1);
                b.set_p(2, offset as u64);
                b.set_p(3, n.len() as u64);
                let mut first = [0u8; 8];
                let k = n.len().min(8);
                first[..k].copy_from_slice(&n[..k]);
                b.set_p(4, u64::from_le_bytes(first));
                p.out.push_back((b, None));
                for part in n[k..].chunks(EAGER_MAX) {
                    let mut nb = Body::new(Kind::Name, 0, part.len() as u8, 0);
                    nb.set_bytes(part);
                    p.out.push_back((nb, None));
                }
            }
        }
        p.next_seq += 1 + (rx_target_slots(&self.reqs[i]) as u64);
        self.push(src)
    }

    /// Acknowledges the synchronous eager message `cookie` of `to`: in the ack word
    /// of the slot this node publishes to `to` next (the line `to` polls, and the
    /// one its next message from here arrives in) if that word is free and the ring
    /// has room for that slot; else as an `Ack` slot, queued. The ack word is
    /// written without a notify unless `to` announced it sleeps (see
    /// [`sleep`](Self::sleep)): a sender that has not gone to sleep polls it.
    fn ack(&mut self, to: usize, cookie: u64) -> Result<()> {
        if self.peers[to].state != PeerState::Live {
            return Ok(());
        }
        let next = self.peers[to].sent + 1;
        if self.peers[to].ack_slot != next && self.ring_room(to)? {
            let off = self.lay.slot(self.me, next) + ACK_WORD;
            self.peers[to].ack_slot = next;
            let tx = self.peers[to]
                .tx
                .as_ref()
                .expect("live peer has a tx mapping");
            // Quiet: a notify's fence would wait for this line to come over before
            // the reply that follows is written into the same line.
            tx.write_no_notify(off, &cookie.to_le_bytes())?;
            // Unless the sender sleeps: it says so in its asleep word here first.
            if self.word(self.lay.asleep(to)) != 0 {
                tx.write_u64(off, cookie)?;
            }
            return Ok(());
        }
        self.control(to, Kind::Ack, &[cookie])
    }

    /// Completes the synchronous eager send that the ack word of slot `seq` of `p`'s
    /// ring acknowledges, if any: a value that is no such cookie is an older
    /// acknowledgement seen already (or one from a lap before), not an error.
    #[inline(always)]
    fn see_ack_word(&mut self, p: usize, seq: u64) -> Result<()> {
        if self.peers[p].awaiting.0.is_empty() {
            return Ok(());
        }
        self.read_ack_word(p, seq)
    }

    #[inline(never)]
    fn read_ack_word(&mut self, p: usize, seq: u64) -> Result<()> {
        let v = self.word(self.lay.slot(p, seq) + ACK_WORD);
        if v == 0 {
            return Ok(());
        }
        if let Some(i) = self.peers[p].awaiting.remove(v, true) {
            self.complete_send(i);
        }
        Ok(())
    }

    /// Completes send request `i` (its status names this node, its tag and length).
    fn complete_send(&mut self, i: usize) {
        let s = self.reqs[i].as_ref().map(|r| Status {
            source: self.me as u32,
            tag: r.tag,
            len: r.len,
        });
        if let Some(s) = s {
            self.complete(i, Ok(s));
        }
    }

    /// Queues a control slot (`Ack`) with payload words `words` towards `to`.
    fn control(&mut self, to: usize, kind: Kind, words: &[u64]) -> Result<()> {
        let p = &mut self.peers[to];
        if p.state != PeerState::Live {
            return Ok(());
        }
        let mut b = Body::new(kind, 0, 0, 0);
        for (k, w) in words.iter().enumerate() {
            b.set_p(k, *w);
        }
        p.next_seq += 1;
        p.out.push_back((b, None));
        // Not written yet: an acknowledgement found while draining goes out with the
        // drain's other slots towards `to` (one notify for them all); a caller outside
        // a drain pushes.
        Ok(())
    }

    /// Full-postal / zero-copy non-blocking receive into `buf` (its length is the
    /// capacity). `src` may be [`ANY_SOURCE`], `tag` [`ANY_TAG`].
    ///
    /// # Errors
    /// `Invalid` (tag, a source that is not a member), the cluster's.
    pub fn irecv(&mut self, src: u32, tag: u32, buf: Vec<u8>) -> Result<Request> {
        let cap = buf.len();
        self.start_recv(src, tag, Buf::Owned(buf), cap)
    }

    /// Non-blocking receive into `len` bytes at `offset` of the rx mapping `rx` (of a
    /// segment the senders may write): a matching synchronous send longer than
    /// [`EAGER_MAX`] deposits its body there directly (one copy). Read the data through
    /// `rx` once the request completes.
    ///
    /// # Errors
    /// `Invalid` if the range is outside `rx`; as [`irecv`](Self::irecv).
    pub fn irecv_rx(
        &mut self,
        src: u32,
        tag: u32,
        rx: &RxMapping,
        offset: usize,
        len: usize,
    ) -> Result<Request> {
        if offset.checked_add(len).is_none_or(|e| e > rx.len()) {
            return Err(invalid(
                "receive range",
                format!("{offset}+{len} past the {}-byte rx mapping", rx.len()),
            ));
        }
        let buf = Buf::Rx {
            name: rx.name().to_string(),
            offset,
        };
        self.start_recv(src, tag, buf, len)
    }

    /// Blocking receive into `buf`.
    ///
    /// # Errors
    /// `Truncated` (the message stays queued), `PeerGone`, as [`irecv`](Self::irecv).
    pub fn recv(&mut self, src: u32, tag: u32, buf: &mut [u8]) -> Result<Status> {
        if let Some(s) = self.recv_now(src, tag, buf)? {
            return Ok(s);
        }
        self.recv_slow(src, tag, buf)
    }

    /// [`recv`](Self::recv) through a request, out of line as
    /// [`send_slow`](Self::send_slow).
    #[cold]
    #[inline(never)]
    fn recv_slow(&mut self, src: u32, tag: u32, buf: &mut [u8]) -> Result<Status> {
        let mut v = std::mem::take(&mut self.spare);
        v.clear();
        v.resize(buf.len(), 0);
        let r = self.irecv(src, tag, v)?;
        let (s, v) = self.finish_blocking(r)?;
        buf[..s.len].copy_from_slice(&v[..s.len]);
        self.spare = v;
        Ok(s)
    }

    /// The eager path of a blocking receive from one source, without a request: when
    /// no posted receive and no buffered message could match first, it polls `src`'s
    /// ring a while and takes the next slot straight into `buf` if that is an eager
    /// message with the tag that fits (acknowledging a synchronous one). `None`: the
    /// general path decides; nothing was taken (a slot the protocol does not allow
    /// is left to it too).
    #[inline(always)]
    fn recv_now(&mut self, src: u32, tag: u32, buf: &mut [u8]) -> Result<Option<Status>> {
        let p = src as usize;
        if src == ANY_SOURCE
            || (tag != ANY_TAG && tag > TAG_UB)
            || self.peers.get(p).is_none_or(|q| q.state != PeerState::Live)
            || !self.posted.is_empty()
            || (!self.unexp.is_empty() && self.find_unexp(src, tag).is_some())
        {
            return Ok(None);
        }
        for _ in 0..self.fast_polls {
            let seq = self.peers[p].recvd + 1;
            let off = self.lay.slot(p, seq);
            if self.word(off) != seq {
                // A pause between polls: on this VM's cores (AMD EPYC) a poll loop
                // without one took 81-86 ns a message against 72-81 with it, 270
                // against 230 in the slow state (the loop's speculative loads are
                // thrown away when the line moves).
                std::hint::spin_loop();
                continue;
            }
            let b = self.read_slot(off, buf.len());
            let len = b.ilen();
            if b.kind() != Some(Kind::Eager)
                || b.tag() > TAG_UB
                || (tag != ANY_TAG && b.tag() != tag)
                || len > EAGER_MAX
                || len > buf.len()
            {
                return Ok(None);
            }
            b.copy_bytes(&mut buf[..len]);
            // The message is taken: a peer gone meanwhile fails its other operations,
            // not this receive.
            let mut ack = || -> Result<()> {
                self.consumed(p, seq)?;
                if b.flags() & F_SYNC != 0 {
                    self.ack(p, seq)?;
                    if !self.peers[p].out.is_empty() {
                        self.push(p)?;
                    }
                }
                Ok(())
            };
            if let Err(e) = ack() {
                self.on_error(p, e)?;
            }
            return Ok(Some(Status {
                source: src,
                tag: b.tag(),
                len,
            }));
        }
        Ok(None)
    }

    /// Blocking receive into an rx mapping (see [`irecv_rx`](Self::irecv_rx)).
    ///
    /// # Errors
    /// As [`irecv_rx`](Self::irecv_rx) and [`recv`](Self::recv).
    pub fn recv_rx(
        &mut self,
        src: u32,
        tag: u32,
        rx: &RxMapping,
        offset: usize,
        len: usize,
    ) -> Result<Status> {
        let r = self.irecv_rx(src, tag, rx, offset, len)?;
        self.finish_blocking(r).map(|(s, _)| s)
    }

    // ---- completion -----------------------------------------------------------------

    /// Waits for `r` (spinning, then asleep) and returns its outcome and buffer.
    pub fn wait(&mut self, r: Request) -> Completion {
        let failed = |e| Completion {
            result: Err(e),
            buf: Vec::new(),
        };
        let Some(i) = self.index_of(r) else {
            return failed(MsgError::UnknownRequest);
        };
        // An eager send is often complete already: no progress round first.
        if let Err(e) = self.block_until(|c| c.is_done(i)) {
            return failed(e);
        }
        self.take(i)
    }

    /// One round of progress; the outcome if `r` is complete (its handle is then spent).
    ///
    /// # Errors
    /// `UnknownRequest`; the cluster's.
    pub fn test(&mut self, r: Request) -> Result<Option<Completion>> {
        let i = self.index_of(r).ok_or(MsgError::UnknownRequest)?;
        self.progress()?;
        Ok(self.is_done(i).then(|| self.take(i)))
    }

    /// Waits for every request; completions in the order given.
    ///
    /// # Errors
    /// `UnknownRequest` (nothing is waited for); the cluster's.
    pub fn wait_all(&mut self, rs: &[Request]) -> Result<Vec<Completion>> {
        let idx: Vec<usize> = rs
            .iter()
            .map(|&r| self.index_of(r).ok_or(MsgError::UnknownRequest))
            .collect::<Result<_>>()?;
        self.block_until(|c| idx.iter().all(|&i| c.is_done(i)))?;
        Ok(idx.into_iter().map(|i| self.take(i)).collect())
    }

    /// Waits for one of the requests; its position and outcome.
    ///
    /// # Errors
    /// `UnknownRequest` (or an empty list); the cluster's.
    pub fn wait_any(&mut self, rs: &[Request]) -> Result<(usize, Completion)> {
        let idx: Vec<usize> = rs
            .iter()
            .map(|&r| self.index_of(r).ok_or(MsgError::UnknownRequest))
            .collect::<Result<_>>()?;
        if idx.is_empty() {
            return Err(MsgError::UnknownRequest);
        }
        let mut hit = 0;
        self.block_until(|c| match idx.iter().position(|&i| c.is_done(i)) {
            Some(k) => {
                hit = k;
                true
            }
            None => false,
        })?;
        Ok((hit, self.take(idx[hit])))
    }

    /// The envelope of the next message a receive of (`src`, `tag`) would get, if one
    /// has arrived (its body may still be arriving).
    ///
    /// # Errors
    /// The cluster's.
    pub fn iprobe(&mut self, src: u32, tag: u32) -> Result<Option<Status>> {
        self.progress()?;
        Ok(self.find_unexp(src, tag))
    }

    /// Waits for a message a receive of (`src`, `tag`) would get; its envelope.
    ///
    /// # Errors
    /// `PeerGone` if `src` is gone and nothing from it is queued; the cluster's.
    pub fn probe(&mut self, src: u32, tag: u32) -> Result<Status> {
        let mut gone = None;
        self.block_until(|c| {
            if c.find_unexp(src, tag).is_some() {
                return true;
            }
            if let Some(PeerState::Gone(w)) = c.peers.get(src as usize).map(|p| &p.state) {
                gone = Some(gone_error(src, w));
                return true;
            }
            false
        })?;
        match gone {
            Some(e) => Err(e),
            None => Ok(self.find_unexp(src, tag).expect("found")),
        }
    }

    fn find_unexp(&self, src: u32, tag: u32) -> Option<Status> {
        self.unexp
            .iter()
            .find(|u| {
                u.claimed.is_none()
                    && (src == ANY_SOURCE || u.src == src)
                    && (tag == ANY_TAG || u.tag == tag)
            })
            .map(|u| Status {
                source: u.src,
                tag: u.tag,
                len: u.len,
            })
    }

    /// Progress until `done` holds: poll `spin` times, then sleep on the notify pages
    /// (a write on a ring or credit page wakes us), watching membership.
    fn block_until(&mut self, mut done: impl FnMut(&Self) -> bool) -> Result<()> {
        let mut polls = 0u32;
        loop {
            if done(self) {
                return Ok(());
            }
            let before = self.completed;
            let stopped = self.progress()?;
            if done(self) {
                return Ok(());
            }
            if stopped {
                // The round stopped at a completion; the rings may hold more, which
                // posted their notify already: look again before any sleep.
                continue;
            }
            // The spin counts idle polls: a caller whose requests keep completing
            // (a window of large messages) does not fall asleep between them.
            polls = if self.completed != before {
                0
            } else {
                polls.saturating_add(1)
            };
            if polls >= self.cfg.spin {
                self.check_members();
                if !self.sleep(&mut done)? {
                    continue;
                }
            } else if self.hub && polls >= HUB_RING_POLLS {
                // Returns when a write lands on the rings or credit lines (all notify
                // pages); a quiet link for the whole spin sends the caller to sleep.
                self.check_members();
                if !self.rx.wait_spin(Some(HUB_SPIN))? {
                    polls = self.cfg.spin;
                }
            } else {
                if polls.is_multiple_of(256) {
                    self.check_members();
                }
                // A pause between polls, as in `recv_now`.
                std::hint::spin_loop();
            }
        }
    }

    /// Sleeps on the notify pages, once (a write there or 100 ms wakes it), after
    /// telling the peers whose acknowledgement a synchronous send waits for: they
    /// write ack words without a notify (`ack`) and look at this word after, so
    /// each either sees it and notifies, or wrote before it was set. For the
    /// second case, set and fenced it looks a while longer ([`GRACE_POLLS`]
    /// progress rounds, far longer than a store takes to become visible) before it
    /// sleeps; the sleep's timeout bounds what a missed wake-up could cost. False
    /// if `done` came true in that last look (not asleep).
    fn sleep(&mut self, done: &mut impl FnMut(&Self) -> bool) -> Result<bool> {
        let mut told = std::mem::take(&mut self.told);
        told.clear();
        for &p in &self.active {
            let peer = &self.peers[p];
            if peer.state == PeerState::Live && peer.awaiting.0.iter().any(|a| a.2) {
                told.push(p);
            }
        }
        let mut slept = true;
        if !told.is_empty() {
            self.set_asleep(&told, 1)?;
            std::sync::atomic::fence(std::sync::atomic::Ordering::SeqCst);
            for _ in 0..GRACE_POLLS {
                self.progress()?;
                if done(self) {
                    slept = false;
                    break;
                }
            }
        }
        if slept {
            self.rx.wait(Some(Duration::from_millis(100)))?;
        }
        if !told.is_empty() {
            self.set_asleep(&told, 0)?;
        }
        self.told = told;
        Ok(slept)
    }

    /// Writes `v` into this node's asleep word at each of `peers`.
    fn set_asleep(&mut self, peers: &[usize], v: u64) -> Result<()> {
        let off = self.lay.asleep(self.me);
        for &p in peers {
            let r = match self.peers[p].tx.as_ref() {
                Some(tx) if self.peers[p].state == PeerState::Live => {
                    tx.write_no_notify(off, &v.to_le_bytes())
                }
                _ => continue,
            };
            if let Err(e) = r {
                self.on_error(p, e.into())?;
            }
        }
        Ok(())
    }

    // ---- membership -----------------------------------------------------------------

    fn check_members(&mut self) {
        let e = self.cluster.epoch();
        if e == self.epoch {
            return;
        }
        self.epoch = e;
        let live = self.cluster.members();
        for k in 0..self.active.len() {
            let p = self.active[k];
            if self.peers[p].state == PeerState::Live && !live.contains(&NodeId(p as u16)) {
                self.fail_peer(p, None);
            }
        }
    }

    /// Completes every pending operation on `p` with an error; `p` is gone for good.
    fn fail_peer(&mut self, p: usize, why: Option<String>) {
        if why.is_some() {
            tracing::warn!(
                node = p,
                why = why.as_deref(),
                "message peer broke the protocol"
            );
        }
        let e = || gone_error(p as u32, &why);
        let peer = &mut self.peers[p];
        peer.state = PeerState::Gone(why.clone());
        let mut hit: Vec<usize> = peer.out.drain(..).filter_map(|(_, r)| r).collect();
        hit.extend(peer.streams.drain(..).map(|s| s.req));
        hit.extend(peer.awaiting.0.drain(..).map(|(_, r, _)| r));
        let inflight: Vec<InFlight> = peer.inflight.drain().map(|(_, f)| f).collect();
        peer.cts = None;
        for f in inflight {
            match f.sink {
                Sink::Req(i) => hit.push(i),
                Sink::Unexp(uid) => {
                    if let Some(k) = self.unexp.iter().position(|u| u.uid == uid) {
                        let u = self.unexp.remove(k).expect("found");
                        self.unexp_bytes -= u.len + SLOT;
                        hit.extend(u.claimed);
                    }
                }
            }
        }
        // Requests-to-send from it can never be served.
        let before = self.unexp.len();
        self.unexp
            .retain(|u| !(u.src == p as u32 && matches!(u.kind, UKind::Rts(_))));
        self.unexp_bytes -= (before - self.unexp.len()) * SLOT;
        let mut keep = VecDeque::new();
        for i in std::mem::take(&mut self.posted) {
            match self.reqs[i].as_ref() {
                Some(Req {
                    op: Op::Recv { src, .. },
                    ..
                }) if *src == p as u32 => hit.push(i),
                _ => keep.push_back(i),
            }
        }
        self.posted = keep;
        for i in hit {
            self.complete(i, Err(e()));
        }
    }

    // ---- progress -------------------------------------------------------------------

    /// One round over the peers: drain each ring, push what is queued. A round stops
    /// after a peer whose drain stopped at a completion, so that the caller sees it
    /// before polling more rings (each poll of a ring its sender wrote is a cache
    /// miss), and returns true; the next round starts after that peer, so every ring
    /// gets its turn.
    fn progress(&mut self) -> Result<bool> {
        let n = self.active.len();
        for j in 0..n {
            let mut k = self.turn + j;
            if k >= n {
                k -= n;
            }
            let p = self.active[k];
            if self.peers[p].state != PeerState::Live {
                continue;
            }
            let stopped = match self.drain(p) {
                Ok(s) => s,
                Err(e) => {
                    self.on_error(p, e)?;
                    continue;
                }
            };
            // Nothing queued towards `p`: nothing to push (the common case of a poll).
            let peer = &self.peers[p];
            if !(peer.out.is_empty() && peer.streams.is_empty()) {
                if let Err(e) = self.push(p) {
                    self.on_error(p, e)?;
                }
            }
            if stopped {
                self.turn = if k + 1 >= n { 0 } else { k + 1 };
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// A protocol error fails the peer; a write refused because the peer is gone too;
    /// anything else (this node isolated, hub lost) is the caller's.
    fn on_error(&mut self, p: usize, e: MsgError) -> Result<()> {
        match e {
            MsgError::Protocol { why, .. } => {
                self.fail_peer(p, Some(why));
                Ok(())
            }
            MsgError::Cluster(memchan::Error::UnknownNode(_)) => {
                self.fail_peer(p, None);
                Ok(())
            }
            e => Err(e),
        }
    }

    /// Writes queued slots and stream chunks towards `p` as credits allow.
    fn push(&mut self, p: usize) -> Result<()> {
        loop {
            self.flush(p)?;
            if !self.peers[p].out.is_empty() || !self.stream_step(p)? {
                return Ok(());
            }
        }
    }

    #[inline(always)]
    fn ring_room(&mut self, p: usize) -> Result<bool> {
        let k = self.lay.slots as u64;
        let peer = &self.peers[p];
        if peer.sent - peer.credit < k {
            return Ok(true);
        }
        let c = self.word(self.lay.credit(p));
        let peer = &mut self.peers[p];
        if c > peer.sent {
            return Err(protocol(p, "credit past what was sent"));
        }
        peer.credit = peer.credit.max(c);
        Ok(peer.sent - peer.credit < k)
    }

    fn flush(&mut self, p: usize) -> Result<()> {
        while !self.peers[p].out.is_empty() && self.ring_room(p)? {
            let peer = &mut self.peers[p];
            let (b, done) = peer.out.pop_front().expect("non-empty");
            // A blocked receiver is woken once per batch: by the last slot's sequence
            // word, which is written after every earlier slot (the next slot surely
            // follows when the queue holds one and the known credit leaves room).
            let more = !peer.out.is_empty() && peer.sent + 1 - peer.credit < self.lay.slots as u64;
            self.publish(p, &b, more)?;
            if let Some(i) = done {
                let s = self.reqs[i].as_ref().map(|r| Status {
                    source: self.me as u32,
                    tag: r.tag,
                    len: r.len,
                });
                if let Some(s) = s {
                    self.complete(i, Ok(s));
                }
            }
        }
        Ok(())
    }

    /// Writes slot `b` as the next of this node's ring at `p` (the caller checked
    /// the room): its words, then its sequence word, the publish, which notifies
    /// unless `quiet`.
    #[inline(always)]
    fn publish(&mut self, p: usize, b: &Body, quiet: bool) -> Result<()> {
        self.publish_bytes(p, b.used_bytes(), quiet)
    }

    /// [`publish`](Self::publish) of a body's words in use, as bytes.
    #[inline(always)]
    fn publish_bytes(&mut self, p: usize, body: &[u8], quiet: bool) -> Result<()> {
        let peer = &mut self.peers[p];
        let seq = peer.sent + 1;
        let off = self.lay.slot(self.me, seq);
        let tx = peer.tx.as_ref().expect("live peer has a tx mapping");
        if quiet {
            tx.write_no_notify(off + 8, body)?;
            tx.write_no_notify(off, &seq.to_le_bytes())?;
        } else {
            tx.write_record(off + 8, body, off, seq)?;
        }
        peer.sent = seq;
        Ok(())
    }

    /// One step of the head stream towards `p` (a chunk, or a whole direct deposit).
    /// Returns whether it made progress.
    fn stream_step(&mut self, p: usize) -> Result<bool> {
        let Some(s) = self.peers[p].streams.front() else {
            return Ok(false);
        };
        let (cookie, i, sent) = (s.cookie, s.req, s.sent);
        let (len, tag) = match self.reqs[i].as_ref() {
            Some(r) => (r.len, r.tag),
            None => return Ok(false),
        };
        let direct = match &s.target {
            Target::Rx { name, offset } => Some((name.clone(), *offset)),
            Target::Bulk => None,
        };
        if !self.ring_room(p)? {
            return Ok(false);
        }
        let me = self.me;
        if let Some((name, offset)) = direct {
            let (ptr, n) = match self.reqs[i].as_ref() {
                Some(r) => (r.buf.bytes().as_ptr(), r.buf.bytes().len()),
                None => return Ok(false),
            };
            // SAFETY: the request's bytes (a Vec it owns, or the caller's memory under
            // the `_ptr` contract) stay put until it completes, which is after this.
            let data = unsafe { std::slice::from_raw_parts(ptr, n) };
            self.deposit_direct(p, &name, offset, data)?;
            let peer = &mut self.peers[p];
            peer.streams.pop_front();
            let mut b = Body::new(Kind::Fin, 0, 0, tag);
            b.set_p(0, cookie);
            b.set_p(1, len as u64);
            peer.next_seq += 1;
            peer.out.push_back((b, Some(i)));
            return Ok(true);
        }
        let used = self.word(self.lay.credit(p) + 8);
        let peer = &self.peers[p];
        if used > peer.chunks_sent {
            return Err(protocol(p, "chunk credit past what was sent"));
        }
        if peer.chunks_sent - used >= self.lay.chunks as u64 {
            return Ok(false);
        }
        let n = self.lay.chunk.min(len - sent);
        let at = self.lay.chunk_at(me, peer.chunks_sent);
        if let Some(r) = self.reqs[i].as_ref() {
            peer.tx
                .as_ref()
                .expect("live peer has a tx mapping")
                .write(at, &r.buf.bytes()[sent..sent + n])?;
        }
        let peer = &mut self.peers[p];
        peer.chunks_sent += 1;
        let mut b = Body::new(Kind::Frag, 0, 0, tag);
        b.set_p(0, cookie);
        b.set_p(1, n as u64);
        peer.next_seq += 1;
        let last = sent + n == len;
        peer.out.push_back((b, last.then_some(i)));
        if last {
            peer.streams.pop_front();
        } else if let Some(s) = peer.streams.front_mut() {
            s.sent += n;
        }
        Ok(true)
    }

    /// Reads the complete slots from `p`'s ring, until the unexpected store is full or
    /// a small message or an acknowledgement completed a request: then it returns true
    /// (the next slot's poll can wait for the next round: it is a cache miss on the
    /// path of the message just received, and a reply behind an acknowledgement is
    /// better taken by the receive that follows than buffered now).
    fn drain(&mut self, p: usize) -> Result<bool> {
        loop {
            let before = self.completed;
            let seq = self.peers[p].recvd + 1;
            let off = self.lay.slot(p, seq);
            // An acknowledgement may wait in the ack word of the slot not yet
            // consumed; the slot itself (often the reply behind it) is left to the
            // receive that follows.
            self.see_ack_word(p, seq)?;
            if self.completed != before {
                return Ok(true);
            }
            if self.word(off) != seq {
                break;
            }
            let b = self.read_slot(off, EAGER_MAX);
            match self.handle(p, seq, &b)? {
                Handled::Stall => break,
                Handled::Consumed => {}
            }
            self.consumed(p, seq)?;
            if self.completed != before && matches!(b.kind(), Some(Kind::Eager | Kind::Ack)) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    /// The slot at `off` (its sequence word seen with Acquire): the header word,
    /// then the payload words in use ([`Body::words_within`] `cap`: an eager receive
    /// into `cap` bytes reads no more). Inlined, and returned in registers: on the
    /// receive path a result returned through memory cost a store-forwarding stall.
    /// Relaxed loads from one base: the sequence word's Acquire already ordered them,
    /// and an Acquire load per word made the compiler reload `self` between them.
    #[inline(always)]
    fn read_slot(&self, off: usize, cap: usize) -> Body {
        debug_assert!(off.is_multiple_of(8) && off + SLOT <= self.lay.size);
        let at = (self.base + off) as *const std::sync::atomic::AtomicU64;
        // SAFETY: a slot of the layout: `SLOT` bytes at an 8-aligned offset inside
        // this node's receive memory, mapped while `self` lives; other processes
        // write it concurrently, so it is read only through atomic loads.
        let load = |k: usize| unsafe { (*at.add(k)).load(std::sync::atomic::Ordering::Relaxed) };
        let mut b = Body::default();
        b.w[0] = load(1);
        for k in 1..b.words_within(cap) {
            b.w[k] = load(1 + k);
        }
        b
    }

    /// Slot `seq` of `p`'s ring is consumed (its ack word read again: it may have
    /// been written after an earlier look, before the slot was published); its
    /// credit goes back in batches of a quarter ring.
    #[inline(always)]
    fn consumed(&mut self, p: usize, seq: u64) -> Result<()> {
        self.see_ack_word(p, seq)?;
        let peer = &mut self.peers[p];
        peer.recvd = seq;
        if peer.recvd - peer.credited >= (self.lay.slots / 4) as u64 {
            peer.credited = peer.recvd;
            let v = peer.recvd;
            peer.tx
                .as_ref()
                .expect("live peer has a tx mapping")
                .write_u64(self.lay.credit(self.me), v)?;
        }
        Ok(())
    }

    /// The first posted receive that (`src`, `tag`) matches.
    fn match_posted(&self, src: u32, tag: u32) -> Option<(usize, usize)> {
        self.posted
            .iter()
            .enumerate()
            .find_map(|(k, &i)| match self.reqs[i].as_ref() {
                Some(Req {
                    op: Op::Recv { src: s, tag: t },
                    ..
                }) if (*s == ANY_SOURCE || *s == src) && (*t == ANY_TAG || *t == tag) => {
                    Some((k, i))
                }
                _ => None,
            })
    }

    fn handle(&mut self, p: usize, seq: u64, b: &Body) -> Result<Handled> {
        let kind = b.kind().ok_or_else(|| protocol(p, "unknown slot kind"))?;
        let src = p as u32;
        let tag = b.tag();
        match kind {
            Kind::Eager | Kind::Hdr | Kind::Rts => {
                if tag > TAG_UB {
                    return Err(protocol(p, "tag above TAG_UB"));
                }
                let len = match kind {
                    Kind::Eager => b.ilen(),
                    _ => usize::try_from(b.p(0)).unwrap_or(usize::MAX),
                };
                if (kind == Kind::Eager && len > EAGER_MAX)
                    || (kind != Kind::Eager && (len <= EAGER_MAX || len > MAX_MESSAGE))
                {
                    return Err(protocol(p, "bad message length"));
                }
                let m = self.match_posted(src, tag);
                let fits =
                    m.is_some_and(|(_, i)| self.reqs[i].as_ref().is_some_and(|r| len <= r.len));
                let store = if kind == Kind::Rts { SLOT } else { len + SLOT };
                if !fits && self.unexp_bytes + store > self.cfg.unexpected_limit {
                    return Ok(Handled::Stall);
                }
                let sync = (b.flags() & F_SYNC != 0).then_some(seq);
                if let Some((k, i)) = m {
                    if fits {
                        self.posted.remove(k);
                        match kind {
                            Kind::Eager => {
                                self.write_req(i, 0, &b.bytes()[..len])?;
                                self.complete(
                                    i,
                                    Ok(Status {
                                        source: src,
                                        tag,
                                        len,
                                    }),
                                );
                                if let Some(c) = sync {
                                    self.ack(p, c)?;
                                }
                            }
                            Kind::Hdr => {
                                self.peers[p].inflight.insert(
                                    seq,
                                    InFlight {
                                        sink: Sink::Req(i),
                                        len,
                                        got: 0,
                                        tag,
                                    },
                                );
                            }
                            _ => self.clear_to_send(p, seq, i, len, tag)?,
                        }
                        return Ok(Handled::Consumed);
                    }
                    let cap = self.reqs[i].as_ref().map_or(0, |r| r.len);
                    self.posted.remove(k);
                    self.complete(
                        i,
                        Err(MsgError::Truncated {
                            node: src,
                            tag,
                            len,
                            capacity: cap,
                        }),
                    );
                }
                let uid = self.next_uid;
                self.next_uid += 1;
                self.unexp_bytes += store;
                let (data, complete, ukind) = match kind {
                    Kind::Eager => (b.bytes()[..len].to_vec(), true, UKind::Data),
                    Kind::Hdr => (vec![0; len], false, UKind::Data),
                    _ => (Vec::new(), true, UKind::Rts(seq)),
                };
                if kind == Kind::Hdr {
                    self.peers[p].inflight.insert(
                        seq,
                        InFlight {
                            sink: Sink::Unexp(uid),
                            len,
                            got: 0,
                            tag,
                        },
                    );
                }
                self.unexp.push_back(Unexp {
                    uid,
                    src,
                    tag,
                    len,
                    data,
                    complete,
                    kind: ukind,
                    sync,
                    claimed: None,
                });
            }
            Kind::Frag => {
                let cookie = b.p(0);
                let n = usize::try_from(b.p(1)).unwrap_or(usize::MAX);
                let at = self.lay.chunk_at(p, self.peers[p].chunks_recvd);
                let f = self.peers[p]
                    .inflight
                    .get(&cookie)
                    .ok_or_else(|| protocol(p, "fragment of no message"))?;
                if n == 0 || n > self.lay.chunk || n > f.len - f.got {
                    return Err(protocol(p, "bad fragment length"));
                }
                let (sink, got, len, tag) = (f.sink, f.got, f.len, f.tag);
                match sink {
                    Sink::Req(i) => match self.reqs[i].as_mut().and_then(|r| r.buf.bytes_mut()) {
                        Some(v) => self.rx.read(at, &mut v[got..got + n])?,
                        _ => {
                            let mut tmp = vec![0; n];
                            self.rx.read(at, &mut tmp)?;
                            self.write_req(i, got, &tmp)?;
                        }
                    },
                    Sink::Unexp(uid) => {
                        if let Some(u) = self.unexp.iter_mut().find(|u| u.uid == uid) {
                            self.rx.read(at, &mut u.data[got..got + n])?;
                        }
                    }
                }
                let peer = &mut self.peers[p];
                peer.chunks_recvd += 1;
                let used = peer.chunks_recvd;
                peer.tx
                    .as_ref()
                    .expect("live peer has a tx mapping")
                    .write_u64(self.lay.credit(self.me) + 8, used)?;
                if got + n < len {
                    if let Some(f) = peer.inflight.get_mut(&cookie) {
                        f.got += n;
                    }
                    return Ok(Handled::Consumed);
                }
                peer.inflight.remove(&cookie);
                match sink {
                    Sink::Req(i) => self.complete(
                        i,
                        Ok(Status {
                            source: src,
                            tag,
                            len,
                        }),
                    ),
                    Sink::Unexp(uid) => {
                        if let Some(k) = self.unexp.iter().position(|u| u.uid == uid) {
                            self.unexp[k].complete = true;
                            if let Some(i) = self.unexp[k].claimed {
                                let u = self.unexp.remove(k).expect("found");
                                self.unexp_bytes -= u.len + SLOT;
                                self.deliver_whole(i, &u)?;
                            }
                        }
                    }
                }
            }
            Kind::Fin => {
                let cookie = b.p(0);
                let f = self.peers[p]
                    .inflight
                    .remove(&cookie)
                    .ok_or_else(|| protocol(p, "finish of no message"))?;
                if b.p(1) != f.len as u64 {
                    return Err(protocol(p, "finish length differs"));
                }
                if let Sink::Req(i) = f.sink {
                    self.complete(
                        i,
                        Ok(Status {
                            source: src,
                            tag: f.tag,
                            len: f.len,
                        }),
                    );
                }
            }
            Kind::Ack => {
                let i = self.peers[p]
                    .awaiting
                    .remove(b.p(0), true)
                    .ok_or_else(|| protocol(p, "acknowledge of no message"))?;
                self.complete_send(i);
            }
            Kind::Cts => {
                let cookie = b.p(0);
                if !self.peers[p].awaiting.contains(cookie) || self.peers[p].cts.is_some() {
                    return Err(protocol(p, "clear-to-send of no request"));
                }
                match b.p(1) {
                    0 => self.start_stream(p, cookie, Target::Bulk),
                    1 => {
                        let name_len = usize::try_from(b.p(3)).unwrap_or(usize::MAX);
                        let offset = usize::try_from(b.p(2)).unwrap_or(usize::MAX);
                        if name_len == 0 || name_len > NAME_MAX {
                            return Err(protocol(p, "bad segment name length"));
                        }
                        let mut name = Vec::with_capacity(name_len);
                        name.extend_from_slice(&b.p(4).to_le_bytes());
                        name.truncate(name_len);
                        self.peers[p].cts = Some(PendingCts {
                            cookie,
                            offset,
                            name,
                            name_len,
                        });
                        self.finish_cts(p)?;
                    }
                    _ => return Err(protocol(p, "bad clear-to-send target")),
                }
            }
            Kind::Name => {
                let Some(c) = self.peers[p].cts.as_mut() else {
                    return Err(protocol(p, "name continuation without a clear-to-send"));
                };
                let want = (c.name_len - c.name.len()).min(EAGER_MAX);
                if b.ilen() != want {
                    return Err(protocol(p, "bad name continuation length"));
                }
                c.name.extend_from_slice(&b.bytes()[..want]);
                self.finish_cts(p)?;
            }
        }
        Ok(Handled::Consumed)
    }

    fn finish_cts(&mut self, p: usize) -> Result<()> {
        let Some(c) = self.peers[p].cts.as_ref() else {
            return Ok(());
        };
        if c.name.len() < c.name_len {
            return Ok(());
        }
        let c = self.peers[p].cts.take().expect("pending");
        let name = String::from_utf8(c.name).map_err(|_| protocol(p, "segment name not UTF-8"))?;
        self.start_stream(
            p,
            c.cookie,
            Target::Rx {
                name,
                offset: c.offset,
            },
        );
        Ok(())
    }

    fn start_stream(&mut self, p: usize, cookie: u64, target: Target) {
        let peer = &mut self.peers[p];
        if let Some(i) = peer.awaiting.remove(cookie, false) {
            peer.streams.push_back(Stream {
                cookie,
                req: i,
                sent: 0,
                target,
            });
        }
    }
}

/// Slots a clear-to-send for request `r` takes beyond its first.
fn rx_target_slots(r: &Option<Req>) -> usize {
    match r.as_ref().map(|r| &r.buf) {
        Some(Buf::Rx { name, .. }) => name.len().saturating_sub(8).div_ceil(EAGER_MAX),
        _ => 0,
    }
}

fn protocol(p: usize, why: &str) -> MsgError {
    MsgError::Protocol {
        node: p as u32,
        why: why.to_string(),
    }
}

fn gone_error(p: u32, why: &Option<String>) -> MsgError {
    match why {
        Some(w) => MsgError::Protocol {
            node: p,
            why: w.clone(),
        },
        None => MsgError::PeerGone(p),
    }
}
