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
//!
//! **Where things are.** This file holds the types (the communicator's state, requests,
//! peers, the unexpected store); the communicator's methods are split by concern, the
//! way Open MPI's ob1 splits its files: `comm` (set-up and queries), `request` (the
//! slab), `send`, `recv` (posting, delivery, the rendezvous), `wait` (completion,
//! probes, blocking), `matching` (incoming slots against posted receives, and the slot
//! dispatcher), `progress` (rings, streams, credits), `peer` (peers that fail), and
//! `wire` (the slot layout both ends read).

mod comm;
mod config;
mod matching;
mod peer;
mod progress;
mod recv;
mod request;
mod send;
mod wait;
mod wire;

#[cfg(test)]
mod hostile_tests;

pub use config::CommConfig;
pub use wire::EAGER_MAX;

use memchan::{Cluster, Dest, NodeId, RxAttrs, RxMapping, Segment, TxAttrs, TxMapping};
use std::collections::{HashMap, VecDeque};
use std::time::Duration;
use wire::{Body, Kind, Layout, ACK_WORD, F_SYNC, NAME_MAX, SLOT};

/// Progress rounds a caller that announced it sleeps makes before it does (see
/// `Comm::sleep`).
const GRACE_POLLS: u32 = memchan::idle::MESSAGE.grace;

/// Polls of one ring by a blocking receive's eager path before the general path
/// (which progresses every peer, then sleeps) takes over.
const FAST_POLLS: u32 = memchan::idle::MESSAGE.fast;

/// Through a hub: idle progress rounds of a waiting caller before it spins on the
/// link itself, and how long that spin lasts (about the one-host spin) before it
/// sleeps.
const HUB_RING_POLLS: u32 = memchan::idle::MESSAGE.hub_ring;
const HUB_SPIN: Duration = memchan::idle::MESSAGE.hub_spin;

/// Matches a message from any sender.
pub const ANY_SOURCE: u32 = u32::MAX;
/// Matches a message with any tag.
pub const ANY_TAG: u32 = u32::MAX;
/// The largest tag a message may carry (MPI's `MPI_TAG_UB` guarantee).
pub const TAG_UB: u32 = i32::MAX as u32;
/// The longest message (the length words are checked against it).
pub const MAX_MESSAGE: usize = 1 << 40;

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
