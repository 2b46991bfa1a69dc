//! The hub: the cluster's point of global order. It routes point-to-point packets,
//! sequences broadcast and multicast, keeps the segment and group tables, runs
//! membership (heartbeats, isolation, epochs) and answers ack and barrier requests.
//!
//! **One order.** Every `Data` packet is handled under one lock: the hub expands its
//! destination (node, group or broadcast, the sender itself when it asked for a local
//! copy), keeps those that receive the segment, and queues one `Deliver` per
//! destination link before it looks at the next packet. Each link delivers in queue
//! order, so any two packets reach all their common destinations in the same order.
//!
//! **Isolation.** A node is isolated when its link closes, fails a MAC, or stays silent
//! past the failure timeout (no byte waiting unread counts: `Link::silent_past`). Under the same lock it leaves the member set; packets of
//! its that the hub already ordered are delivered, later ones are never read. Its lock
//! slots are cleared by packets the hub orders itself, and every survivor gets a
//! `Failed` event with a new epoch.
//!
//! **Bounded memory.** The hub releases a sender's packet only when every destination
//! released its copy, so what the hub holds is bounded by the senders' replay memories.
//!
//! **Permissions.** The hub checks every request and every `Data` packet against the
//! segment's owner and mode, with the uid and gid the node joined with: a packet its
//! sender may not write is refused (a `PERMISSION_DENIED` response to no request,
//! [`proto::NO_REQUEST`]) and delivered nowhere.
//!
//! Threads: the gate (one thread for every connection not yet joined, see `gate.rs`),
//! one per joined remote node (reading its link), one beat (heartbeats and retransmit
//! timeouts, never the hub lock), one timer (failure detection and periodic work). A
//! node in the hub's own process (the virtual hub of a two-node cluster) is called
//! directly, without a link.
//!
//! Where it sits: this crate speaks what `memchan-link` defines (frames, codecs,
//! handshake, link, the dual-rail protocol) and imports nothing of the node side,
//! `memchan-net`, which depends on it only to host a hub in its own process. Its
//! modules: `gate.rs` (connections until their join), `deposit.rs` and `rma.rs` (the
//! hub's part of deposits and remote accesses), `standby.rs` and `mirror.rs` (dual
//! rail: the standby's takeover, the active's copies of its tables).

#![warn(missing_docs)]

mod deposit;
mod gate;
mod mirror;
mod rma;
mod standby;

pub use gate::MAX_JOIN;

use memchan_core::status::{
    ClusterStatus, GroupStatus, LinkCounters, LockStatus, MemberStatus, SegmentStatus,
};
use memchan_core::{
    validate, Dest, Error, GroupId, NodeId, NodeSet, PageSize, MAX_GROUPS, MAX_NODES,
};
use memchan_link::link::{Handler, Link, LinkConfig, LinkError, Readers};
use memchan_link::proto::clock;
use memchan_link::proto::reply::{JoinRefusal, Refusal, Table};
use memchan_link::proto::{self, code, event_kind, Join, Op, SegInfo, Welcome};
use memchan_link::rail;
use memchan_link::wire::{self, Decoder, FrameKey, Key, Kind, Put};
use parking_lot::{Mutex, MutexGuard};
use std::collections::{HashMap, VecDeque};
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// Origin id of packets the hub makes itself (lock slot clearing, rx snapshots).
const HUB_ORIGIN: u16 = u16::MAX;
/// Up to this many remote links, a spinning `Hub::progress` reads each link instead
/// of polling them all first.
const DIRECT_READS: usize = 2;

/// How a hub runs.
#[derive(Debug, Clone)]
pub struct HubConfig {
    /// `HOST:PORT` to listen on (port 0: any).
    pub listen: String,
    /// The one cluster this hub serves; `None`: the first join names it.
    pub cluster: Option<String>,
    /// The cluster key joins and links are authenticated with.
    pub key: Key,
    /// Whether `key` came from a secret (else anyone who reaches the port may join).
    pub keyed: bool,
    /// Page size; `None`: the first join chooses (4 KiB by default).
    pub page_size: Option<PageSize>,
    /// Heartbeat period on every link.
    pub heartbeat: Duration,
    /// A node silent this long is isolated.
    pub failure_timeout: Duration,
    /// Link tunables.
    pub link: LinkConfig,
    /// Connections that may be between accept and join at once (see `gate.rs`).
    pub max_pending: usize,
    /// Pending connections from one source (IPv4 address, IPv6 /64), at most.
    pub max_pending_per_source: usize,
    /// How often every member gets a time packet (`memchan_link::proto::clock`); `None`: the hub's
    /// clock is off (no time packets, probes unanswered), so no node's global clock
    /// synchronises (a test's "not synchronised" case).
    pub clock_period: Option<Duration>,
    /// Dual rail: number every packet of a remote sender in the hub's order and tell
    /// the nodes the release mark, so that a standby hub can take over
    /// (`memchan_link::rail`).
    pub rail: bool,
    /// Dual rail: this hub is the standby of the active hub at this address: it copies
    /// its tables every heartbeat, refuses ordinary joins, and takes over when nodes
    /// resume their links here (`standby.rs`). Implies `rail`.
    pub standby_of: Option<String>,
}

impl Default for HubConfig {
    fn default() -> Self {
        HubConfig {
            listen: "127.0.0.1:0".into(),
            cluster: None,
            key: Key::open(),
            keyed: false,
            page_size: None,
            heartbeat: Duration::from_millis(100),
            failure_timeout: Duration::from_millis(800),
            link: LinkConfig::default(),
            max_pending: 256,
            max_pending_per_source: 32,
            clock_period: Some(Duration::from_millis(50)),
            rail: false,
            standby_of: None,
        }
    }
}

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

enum Sink {
    Remote(Arc<Link>),
    Local(Arc<dyn LocalPort>),
}

struct Port {
    inc: u64,
    sink: Sink,
    host: String,
    pid: u32,
    uid: u32,
    gid: u32,
    addr: String,
    joined_epoch: u64,
    node_counters: LinkCounters,
    /// This node's reliable frames not yet released: (seq, deliveries outstanding,
    /// gseq if numbered for dual rail, else 0).
    inflight: VecDeque<(u64, u32, u64)>,
    /// Deliveries to this node it has not released: (down seq, origin, origin's seq).
    owed: VecDeque<(u64, u16, u64)>,
    /// Its global clock's bound as its last probe reported it (`memchan status`).
    clock_bound_ns: Option<u64>,
    /// Reliable frames (writes, requests) of this node the hub handled: what a
    /// barrier waiting for it counts as progress (heartbeats do not count).
    handled: u64,
}

struct Seg {
    name: String,
    gen: u32,
    size: usize,
    uid: u32,
    gid: u32,
    mode: u32,
    rx: NodeSet,
    /// Lock segments keep a copy, so a node that maps one late starts consistent.
    shadow: Option<Vec<u8>>,
}

struct PendingAck {
    origin: NodeId,
    inc: u64,
    req: u32,
    waits: Vec<(NodeId, u64, u64)>,
    missing: Vec<NodeId>,
    /// Sum of the waited links' releases when last looked at, and when it last grew
    /// (or a wait ended): an ack fails only after no progress for the failure timeout.
    released: u64,
    moved: Instant,
}

/// A node waiting in a barrier: it arrived at `target` of `scope`'s count.
struct BarrierWait {
    node: NodeId,
    inc: u64,
    req: u32,
    scope: u16,
    target: u64,
    /// The missing members and the sum of their `handled` frames when last looked
    /// at, and when either last changed: the barrier fails only after no progress for
    /// the stall bound.
    missing: NodeSet,
    handled: u64,
    moved: Instant,
}

struct State {
    cluster: Option<String>,
    page: Option<PageSize>,
    epoch: u64,
    next_inc: u64,
    ports: Vec<Option<Port>>,
    segs: Vec<Option<Seg>>,
    next_gen: u32,
    groups: Vec<(String, NodeSet)>,
    acks: Vec<PendingAck>,
    /// Scratch list of `settle` (origin, seq), kept to save an allocation per frame.
    credited: Vec<(u16, u64)>,
    /// Barrier arrivals per scope (group id, `u16::MAX` the cluster) and node: the
    /// same per-node counters as the one-host control block, so a node that joins
    /// during a barrier starts level with the live members and is not part of it.
    barrier_counts: HashMap<u16, [u64; MAX_NODES]>,
    /// Per scope and node: the number of the node's last arrival counted (its own
    /// numbering, from 1 at its join: `Op::Barrier::number`).
    barrier_seen: HashMap<u16, [u64; MAX_NODES]>,
    barrier_waits: Vec<BarrierWait>,
    isolations: u64,
    joins: u64,
    /// Refused `Data` packets are logged at a bounded rate.
    frame_log: gate::Limiter,
    /// Conditional writes whose outcomes are still due (`deposit.rs`).
    conds: deposit::Conds,
    /// Remote reads and atomics under way at their targets (`rma.rs`).
    rma: rma::Table,
    /// The last gseq given (dual rail).
    gseq: u64,
    /// A standby hub's copy of the active's tables and its takeover (dual rail).
    standby: Option<standby::Standby>,
    /// The standbys the tables are copied to before a change is answered (dual rail).
    mirrors: mirror::Mirrors,
}

struct Shared {
    cfg: HubConfig,
    addr: SocketAddr,
    state: Mutex<State>,
    stop: AtomicBool,
    started: Instant,
    /// Threads of the hub's own node reading the links themselves (see `progress`).
    external: Readers,
    links: std::sync::RwLock<Links>,
    /// Connections that ended without a join (counted by the gate without the lock).
    refused: AtomicU64,
}

/// A running hub. Stops (closing every link) when dropped.
pub struct Hub {
    sh: Arc<Shared>,
}

impl Hub {
    /// Binds `cfg.listen` and starts serving.
    pub fn start(mut cfg: HubConfig) -> std::io::Result<Hub> {
        cfg.rail |= cfg.standby_of.is_some();
        let listener = TcpListener::bind(&cfg.listen)?;
        let addr = listener.local_addr()?;
        let first_inc = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default()
            .as_micros() as u64;
        let sh = Arc::new(Shared {
            state: Mutex::new(State {
                cluster: cfg.cluster.clone(),
                page: cfg.page_size,
                epoch: 1,
                next_inc: first_inc,
                ports: (0..MAX_NODES).map(|_| None).collect(),
                segs: Vec::new(),
                next_gen: 1,
                groups: Vec::new(),
                acks: Vec::new(),
                credited: Vec::new(),
                barrier_counts: HashMap::new(),
                barrier_seen: HashMap::new(),
                barrier_waits: Vec::new(),
                isolations: 0,
                joins: 0,
                frame_log: gate::Limiter::new(Instant::now()),
                conds: deposit::Conds::default(),
                rma: rma::Table::default(),
                gseq: 0,
                standby: cfg.standby_of.clone().map(standby::Standby::new),
                mirrors: mirror::Mirrors::default(),
            }),
            cfg,
            addr,
            stop: AtomicBool::new(false),
            started: Instant::now(),
            external: Readers::default(),
            links: std::sync::RwLock::new(Arc::new(Vec::new())),
            refused: AtomicU64::new(0),
        });
        let gate = gate::Gate::new(sh.clone(), listener)?;
        std::thread::Builder::new()
            .name("memchan-hub-gate".into())
            .spawn(move || gate.run())?;
        let s = sh.clone();
        std::thread::Builder::new()
            .name("memchan-hub-timer".into())
            .spawn(move || timer_loop(s))?;
        let s = sh.clone();
        std::thread::Builder::new()
            .name("memchan-hub-beat".into())
            .spawn(move || beat_loop(s))?;
        if sh.cfg.standby_of.is_some() {
            let s = sh.clone();
            std::thread::Builder::new()
                .name("memchan-hub-mirror".into())
                .spawn(move || standby::mirror_loop(s))?;
            let s = sh.clone();
            std::thread::Builder::new()
                .name("memchan-hub-replay".into())
                .spawn(move || standby::replay_loop(s))?;
        }
        Ok(Hub { sh })
    }

    /// The address the hub listens on.
    pub fn local_addr(&self) -> SocketAddr {
        self.sh.addr
    }

    /// The hub's report for `memchan status`.
    pub fn status(&self) -> ClusterStatus {
        self.sh.status()
    }

    /// Attaches a node of this process (the virtual hub's own node).
    ///
    /// # Errors
    /// The hub's refusal of the join.
    pub fn attach_local(
        &self,
        port: Arc<dyn LocalPort>,
        join: &Join,
    ) -> Result<Welcome, JoinRefusal> {
        self.sh.admit(join, Sink::Local(port), "local".into())
    }

    /// A reliable frame from a node of this process. A node of this process has no
    /// replay memory of its own: it waits while a destination link holds more than
    /// the replay limit unreleased, as a remote sender would (`Err` after the
    /// back-pressure timeout).
    pub fn submit_local(
        &self,
        node: NodeId,
        inc: u64,
        kind: Kind,
        parts: &[&[u8]],
    ) -> Result<(), Duration> {
        {
            let mut st = self.sh.lock();
            if !st.alive(node, inc) {
                return Ok(());
            }
            match parts {
                [head, body] if kind == Kind::Data && head.len() == proto::DATA_HEAD => {
                    self.sh.data(&mut st, node, 0, head, body);
                }
                _ => self.sh.frame(&mut st, node, 0, kind, &parts.concat()),
            }
        }
        let limit = self.sh.cfg.link.replay_limit;
        let timeout = self.sh.cfg.link.backpressure_timeout;
        for &(node, inc, ref link) in self.sh.remote_links().iter() {
            let (window_full, over) = link.pressure(limit);
            if window_full {
                // Read the acks here rather than wait for the link's reader thread to
                // be scheduled beside this busy one.
                self.sh.pump(node, inc, link);
            }
            if over && !link.wait_replay_below(limit, timeout) {
                return Err(timeout);
            }
        }
        Ok(())
    }

    /// Reads the remote links in the calling thread: waits up to `timeout` (zero: just
    /// looks) for a frame on any of them or for `wake` to become readable, and acts on
    /// what arrived. A thread of the hub's own node calls this while it waits for data,
    /// between [`begin_progress`](Self::begin_progress) and `end_progress`, so that the
    /// frame it waits for wakes it directly.
    pub fn progress(&self, wake: Option<std::os::fd::BorrowedFd<'_>>, timeout: Duration) {
        use rustix::event::{poll, PollFd, PollFlags};
        let links = self.sh.remote_links();
        if timeout.is_zero() && links.len() <= DIRECT_READS {
            // A spinning caller: a read of each link is one system call as a poll is,
            // and it takes the frame that came, where a poll only says it came.
            for (node, inc, link) in links.iter() {
                self.sh.pump(*node, *inc, link);
                link.heartbeat_if_quiet(self.sh.cfg.heartbeat);
            }
            return;
        }
        let mut fds: Vec<PollFd<'_>> = links
            .iter()
            .map(|(_, _, l)| PollFd::from_borrowed_fd(l.fd(), PollFlags::IN))
            .collect();
        if let Some(w) = wake {
            fds.push(PollFd::from_borrowed_fd(w, PollFlags::IN));
        }
        let ts = rustix::time::Timespec {
            tv_sec: timeout.as_secs() as i64,
            tv_nsec: i64::from(timeout.subsec_nanos()),
        };
        let any = matches!(poll(&mut fds, Some(&ts)), Ok(n) if n > 0);
        for ((node, inc, link), f) in links.iter().zip(&fds) {
            if any && !f.revents().is_empty() {
                self.sh.pump(*node, *inc, link);
            }
            link.heartbeat_if_quiet(self.sh.cfg.heartbeat);
        }
    }

    /// A thread of the hub's own node starts reading the links (see `progress`); the
    /// first one makes the links' reading threads deaf to frames (`Link::listen`).
    pub fn begin_progress(&self) {
        self.sh.external.enter(|| self.sh.links_listen());
    }

    /// ... and stops; the last one makes the links' reading threads listen again: at
    /// once, or, after a spinning wait (`deferred`), at [`settle_listen`]
    /// (Self::settle_listen) or the beat thread's next tick ([`Readers`]).
    pub fn end_progress(&self, deferred: bool) {
        self.sh.external.leave(deferred, || self.sh.links_listen());
    }

    /// Makes the links' reading threads listen again if a spinning wait left them
    /// deaf (called after the hub's own node sent).
    pub fn settle_listen(&self) {
        self.sh.settle_listen();
    }

    /// Whether `node` (that incarnation) is still a member.
    pub fn is_member(&self, node: NodeId, inc: u64) -> bool {
        self.sh.lock().alive(node, inc)
    }
}

impl Drop for Hub {
    fn drop(&mut self) {
        self.sh.stop.store(true, Relaxed);
        let _ = TcpStream::connect_timeout(&self.sh.addr, Duration::from_millis(200));
        let st = self.sh.lock();
        for p in st.ports.iter().flatten() {
            if let Sink::Remote(l) = &p.sink {
                l.shutdown();
            }
        }
    }
}

/// A joined remote node's reading thread: reads its link until it ends.
fn serve(sh: Arc<Shared>, node: NodeId, inc: u64, link: Arc<Link>) {
    loop {
        if sh.stop.load(Relaxed) || !sh.lock().alive(node, inc) {
            return;
        }
        // While a thread of the hub's own node waits for data, it reads the links
        // itself (one wake-up per frame instead of two); this thread stays out, deaf
        // to frames until that thread leaves (`end_progress`).
        if link.serve_wait(Duration::from_millis(50), || sh.external.away())
            && !sh.pump(node, inc, &link)
        {
            return;
        }
    }
}

impl Shared {
    /// Each link's reading thread listens for frames unless a thread of the hub's own
    /// node reads them (`begin_progress`).
    fn links_listen(&self) {
        for (_, _, l) in self.remote_links().iter() {
            l.listen(|| self.external.away());
        }
    }

    /// `links_listen` if a spinning wait owes it (`Hub::end_progress`).
    fn settle_listen(&self) {
        self.external.settle(|| self.links_listen());
    }

    /// A node whose join the gate verified: admitted with a link over `sock` (a
    /// duplicate of it; the gate closes its own) writing under `key` and reading with
    /// `dec` (the node's direction, holding what it sent past its Join), and a thread
    /// reading it, or the reason it is refused.
    fn enter(
        self: &Arc<Self>,
        sock: &TcpStream,
        key: FrameKey,
        dec: Decoder,
        join: &Join,
        peer: SocketAddr,
    ) -> Result<(), JoinRefusal> {
        let cfg = LinkConfig {
            // Bounded by the senders' replay memories (see the module doc), never waits.
            replay_limit: usize::MAX / 2,
            peer_releases_on_receive: true,
            ..self.cfg.link.clone()
        };
        let link = sock
            .try_clone()
            .and_then(|s| Link::new(s, key, dec, cfg))
            .map_err(|e| JoinRefusal::Handshake(format!("cannot set up the link: {e}")))?;
        let link = Arc::new(link);
        let welcome = self.admit(join, Sink::Remote(link.clone()), peer.to_string())?;
        let (node, inc) = (welcome.node, welcome.incarnation);
        tracing::info!(
            node = node.0,
            incarnation = inc,
            %peer,
            host = %join.host,
            pid = join.pid,
            epoch = welcome.epoch,
            "joined"
        );
        let sh = self.clone();
        let reader = std::thread::Builder::new()
            .name("memchan-hub-link".into())
            .spawn(move || serve(sh, node, inc, link));
        if let Err(e) = reader {
            let why = format!("no thread to read its link: {e}");
            self.isolate(&mut self.lock(), node, inc, &why);
        }
        Ok(())
    }
}

impl Shared {
    /// Reads what `node`'s link has and acts on it; `false` once the link is gone.
    fn pump(&self, node: NodeId, inc: u64, link: &Link) -> bool {
        let mut handler = HubHandler {
            sh: self,
            node,
            inc,
        };
        match link.receive(&mut handler) {
            Ok(_) => {
                if link.release_moved() {
                    self.settle(&mut self.lock(), node);
                }
                true
            }
            Err(e) => {
                let why = match e {
                    LinkError::Closed => "its link closed".to_string(),
                    LinkError::Protocol(w) => format!("protocol violation: {w}"),
                    e => e.to_string(),
                };
                self.isolate(&mut self.lock(), node, inc, &why);
                false
            }
        }
    }

    /// The remote links, from a snapshot kept beside the hub lock: a thread spinning
    /// in `Hub::progress` must not take the hub lock on every turn, or the timer
    /// thread (heartbeats) starves behind it.
    fn remote_links(&self) -> Links {
        self.links.read().unwrap_or_else(|e| e.into_inner()).clone()
    }

    /// Rebuilds the snapshot; called with the hub lock held after a join or removal.
    fn refresh_links(&self, st: &State) {
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

type Links = Arc<Vec<(NodeId, u64, Arc<Link>)>>;

struct HubHandler<'a> {
    sh: &'a Shared,
    node: NodeId,
    inc: u64,
}

impl Handler for HubHandler<'_> {
    fn frame(&mut self, link: &Link, seq: u64, kind: Kind, payload: &[u8]) {
        let mut st = self.sh.lock();
        if st.alive(self.node, self.inc) {
            self.sh.frame(&mut st, self.node, seq, kind, payload);
            // `frame` settled this node: the releases its header ack moved (this
            // thread's `receive`, before this call) need no second settle in `pump`.
            link.release_moved();
        }
    }

    fn control(&mut self, _link: &Link, kind: Kind, payload: &[u8]) {
        if kind == Kind::TimeProbe {
            // Stamped on arrival, before the lock: a later stamp only loosens the
            // node's upper bound. The answer goes out in the hub's order.
            let now = clock::mono_ns();
            if let Some((t, bound)) = clock::get_probe(payload) {
                let mut st = self.sh.lock();
                if let Some(p) = st.port_mut(self.node, self.inc) {
                    p.clock_bound_ns = bound;
                }
                if self.sh.cfg.clock_period.is_some() && st.alive(self.node, self.inc) {
                    st.send(self.node, Kind::Time, &[&clock::time(now, t)]);
                }
            }
            return;
        }
        if kind == Kind::Heartbeat {
            if let Ok(c) = proto::get_heartbeat(payload) {
                let mut st = self.sh.lock();
                if let Some(p) = st.port_mut(self.node, self.inc) {
                    p.node_counters = c;
                }
            }
        }
    }
}

/// The hub's pulse: every link's retransmit timer and heartbeat, and never the hub
/// lock. Work that holds the lock for long (a standby taking over orders again tens
/// of thousands of held packets, over a second on a busy machine) must not silence
/// the hub: while the timer thread waited for the lock behind a takeover, the nodes
/// heard nothing past their failure timeout and counted the standby lost too.
fn beat_loop(sh: Arc<Shared>) {
    let tick = timer_tick(&sh.cfg);
    let mut last_hb = Instant::now();
    while !sh.stop.load(Relaxed) {
        std::thread::sleep(tick);
        sh.settle_listen();
        let hb = last_hb.elapsed() >= sh.cfg.heartbeat;
        if hb {
            last_hb = Instant::now();
        }
        for (_, _, link) in sh.remote_links().iter() {
            if hb {
                link.send_control(Kind::Heartbeat, &proto::heartbeat(&link.counters()));
            }
            link.tick();
        }
    }
}

fn timer_tick(cfg: &HubConfig) -> Duration {
    (cfg.heartbeat / 4).clamp(Duration::from_millis(5), Duration::from_millis(20))
}

/// Failure detection and the hub's periodic work under its lock (the heartbeats are
/// `beat_loop`'s).
fn timer_loop(sh: Arc<Shared>) {
    let tick = timer_tick(&sh.cfg);
    let mut last_hb = Instant::now();
    let mut last_time = Instant::now();
    while !sh.stop.load(Relaxed) {
        std::thread::sleep(tick);
        let links = sh.remote_links();
        let hb = last_hb.elapsed() >= sh.cfg.heartbeat;
        if hb {
            last_hb = Instant::now();
        }
        if matches!(sh.cfg.clock_period, Some(p) if last_time.elapsed() >= p) {
            last_time = Instant::now();
            sh.time_packets(&links);
        }
        for &(node, inc, ref link) in links.iter() {
            if let Some(silent) = link.silent_past(sh.cfg.failure_timeout) {
                let why = format!("silent for {} ms", silent.as_millis());
                sh.isolate(&mut sh.lock(), node, inc, &why);
            }
        }
        // (A node isolated above has no port left: its settle does nothing.)
        for &(node, _, _) in links.iter() {
            sh.settle(&mut sh.lock(), node);
        }
        if hb && sh.cfg.rail {
            let mark = sh.lock().rail_mark();
            for (_, _, link) in links.iter() {
                link.send_control(Kind::RailMark, &mark.to_le_bytes());
            }
        }
        if hb {
            sh.expire_conds(&mut sh.lock());
            sh.expire_barriers(&mut sh.lock());
        }
        sh.rma_expire(&mut sh.lock());
        // Every tick: a standby gathering the nodes takes over at its deadline (twice
        // the failure timeout after the first resumed), not up to a heartbeat later.
        sh.standby_tick();
        if hb {
            sh.replicate(&mut sh.lock());
        }
    }
}

impl State {
    fn alive(&self, n: NodeId, inc: u64) -> bool {
        matches!(self.ports.get(n.index()), Some(Some(p)) if p.inc == inc)
    }

    /// The release mark (dual rail): below the first numbered packet some sender
    /// still holds unreleased (gseqs grow along each sender's frames).
    fn rail_mark(&self) -> u64 {
        self.ports
            .iter()
            .flatten()
            .filter_map(|p| p.inflight.iter().find(|e| e.2 != 0).map(|e| e.2 - 1))
            .min()
            .unwrap_or(self.gseq)
    }

    fn port_mut(&mut self, n: NodeId, inc: u64) -> Option<&mut Port> {
        match self.ports.get_mut(n.index()) {
            Some(Some(p)) if p.inc == inc => Some(p),
            _ => None,
        }
    }

    fn members(&self) -> NodeSet {
        self.ports
            .iter()
            .enumerate()
            .filter(|(_, p)| p.is_some())
            .map(|(i, _)| NodeId(i as u16))
            .collect()
    }

    /// Sends a reliable frame to `n`; the down seq if it went over a link.
    fn send(&self, n: NodeId, kind: Kind, parts: &[&[u8]]) -> Option<u64> {
        match &self.ports[n.index()].as_ref()?.sink {
            Sink::Remote(l) => l.send(kind, parts).ok(),
            Sink::Local(p) => {
                p.frame(kind, parts);
                None
            }
        }
    }

    fn respond(&self, n: NodeId, req: u32, status: u8, body: &[u8]) {
        self.send(n, Kind::Response, &[&proto::response(req, status, body)]);
    }

    /// Answers a request with refusal `r` (the node rebuilds the error it names).
    fn refuse_with(&self, n: NodeId, req: u32, r: &Refusal) {
        self.respond(n, req, r.code(), &r.put());
    }

    /// Answers a request with the typed refusal `e` (the node rebuilds the same error).
    fn refuse(&self, n: NodeId, req: u32, e: &Error) {
        self.refuse_with(n, req, &Refusal::of(e));
    }

    fn event(&self, node: NodeId, inc: u64, kind: u8) {
        let members = self.members();
        let ev = proto::event(self.epoch, node, inc, kind, &members);
        for m in members.iter() {
            self.send(m, Kind::Event, &[&ev]);
        }
    }

    /// Delivers a packet made by the hub itself to everyone receiving `seg`.
    fn hub_write(&mut self, seg: usize, offset: usize, data: &[u8]) {
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
    fn lock(&self) -> MutexGuard<'_, State> {
        self.state.lock()
    }

    /// A time packet to every remote member, each stamped under the hub lock as it is
    /// queued: it takes its place in the one order (a node in the hub's process reads
    /// the hub's clock itself).
    fn time_packets(&self, links: &Links) {
        let st = self.lock();
        for &(node, inc, _) in links.iter() {
            if st.alive(node, inc) {
                st.send(node, Kind::Time, &[&clock::time(clock::mono_ns(), 0)]);
            }
        }
    }

    fn admit(&self, j: &Join, sink: Sink, addr: String) -> Result<Welcome, JoinRefusal> {
        let mut st = self.lock();
        if st.standby.as_ref().is_some_and(|s| s.refuses_joins()) {
            return Err(JoinRefusal::Standby);
        }
        match &st.cluster {
            Some(c) if *c != j.cluster => {
                return Err(JoinRefusal::OtherCluster {
                    serves: c.clone(),
                    asked: j.cluster.clone(),
                })
            }
            Some(_) => {}
            None => st.cluster = Some(j.cluster.clone()),
        }
        let page = match (st.page, PageSize::from_bytes(j.page_size as usize)) {
            (Some(p), Some(want)) if p != want => {
                return Err(JoinRefusal::PageSize {
                    existing: p.bytes() as u32,
                    requested: want.bytes() as u32,
                })
            }
            (Some(p), _) => p,
            (None, want) => *st.page.insert(want.unwrap_or(PageSize::K4)),
        };
        let Some(id) = st.ports.iter().position(|p| p.is_none()) else {
            return Err(JoinRefusal::NodeTableFull);
        };
        let node = NodeId(id as u16);
        st.next_inc += 1;
        st.epoch += 1;
        st.joins += 1;
        let inc = st.next_inc;
        st.ports[id] = Some(Port {
            inc,
            sink,
            host: j.host.clone(),
            pid: j.pid,
            uid: j.uid,
            gid: j.gid,
            addr,
            joined_epoch: st.epoch,
            node_counters: LinkCounters::default(),
            inflight: VecDeque::new(),
            owed: VecDeque::new(),
            clock_bound_ns: None,
            handled: 0,
        });
        let welcome = Welcome {
            node,
            incarnation: inc,
            epoch: st.epoch,
            page_size: page.bytes() as u32,
            heartbeat_ms: self.cfg.heartbeat.as_millis() as u32,
            timeout_ms: self.cfg.failure_timeout.as_millis() as u32,
            members: st.members(),
        };
        // Level with the live members before the standby's copy is taken.
        let live = st.members();
        for counts in st.barrier_counts.values_mut() {
            counts[id] = live.iter().map(|m| counts[m.index()]).max().unwrap_or(0);
        }
        // Its own numbering of arrivals starts at its join.
        for seen in st.barrier_seen.values_mut() {
            seen[id] = 0;
        }
        self.replicate(&mut st);
        if let Some(Sink::Remote(l)) = st.ports[id].as_ref().map(|p| &p.sink) {
            l.send_control(Kind::Welcome, &welcome.put());
        }
        self.refresh_links(&st);
        st.event(node, inc, event_kind::JOINED);
        Ok(welcome)
    }

    /// A reliable frame from `n` (seq 0: a local node, which needs no release).
    fn frame(&self, st: &mut State, n: NodeId, seq: u64, kind: Kind, payload: &[u8]) {
        if let Some(sb) = st.standby.as_mut().filter(|s| s.holding()) {
            // A standby taking over: held until the plan orders them.
            sb.hold(n, seq, kind, payload);
            self.check_takeover(st);
            return;
        }
        if let Some(Some(p)) = st.ports.get_mut(n.index()) {
            p.handled += 1;
        }
        let numbered = st.gseq;
        let outstanding = match kind {
            Kind::Data if payload.len() >= proto::DATA_HEAD => {
                let (head, body) = payload.split_at(proto::DATA_HEAD);
                self.data(st, n, seq, head, body)
            }
            Kind::Deposit if payload.len() >= proto::DATA_HEAD => {
                let (head, body) = payload.split_at(proto::DATA_HEAD);
                self.deposit(st, n, seq, head, body)
            }
            Kind::Outcome => {
                self.outcome(st, n, payload);
                0
            }
            Kind::Request => {
                self.request(st, n, payload);
                0
            }
            Kind::RmaRequest => {
                self.rma_request(st, n, payload);
                0
            }
            Kind::RmaDone => {
                self.rma_done(st, n, payload);
                0
            }
            k => {
                tracing::warn!(
                    node = n.0,
                    kind = ?k,
                    "ignored a frame only the hub sends"
                );
                0
            }
        };
        if seq != 0 {
            if let Some(Some(p)) = st.ports.get_mut(n.index()) {
                let gseq = if st.gseq != numbered { st.gseq } else { 0 };
                p.inflight.push_back((seq, outstanding, gseq));
                release_done(p);
            }
            self.settle(st, n);
        }
    }

    /// Orders one packet; returns how many deliveries went over links.
    fn data(&self, st: &mut State, n: NodeId, seq: u64, head: &[u8], body: &[u8]) -> u32 {
        let d = match proto::get_data_split(head, body) {
            Ok(d) => d,
            Err(e) => {
                tracing::warn!(node = n.0, error = %e, "malformed packet dropped");
                return 0;
            }
        };
        let record = d.flags & proto::FLAG_RECORD;
        if record != 0 && !proto::record_ok(d.offset, d.data) {
            tracing::warn!(node = n.0, "malformed record dropped");
            return 0;
        }
        let end = (d.offset as usize).checked_add(d.data.len());
        let Some(to) = self.route(st, n, &d, |size| end.is_some_and(|e| e <= size)) else {
            return 0;
        };
        let Some(Some(seg)) = st.segs.get_mut(d.seg as usize) else {
            return 0;
        };
        if let Some(sh) = seg.shadow.as_mut() {
            sh[d.offset as usize..d.offset as usize + d.data.len()].copy_from_slice(d.data);
        }
        let head = proto::deliver_head(n.0, d.seg, d.gen, d.offset, record);
        let rail = self.rail_place(st, seq);
        let mut outstanding = 0;
        for t in to.iter() {
            let sent = match &rail {
                Some(r) => st.send(t, Kind::RailDeliver, &[r, &head, d.data]),
                None => st.send(t, Kind::Deliver, &[&head, d.data]),
            };
            if let Some(ds) = sent {
                if let Some(Some(p)) = st.ports.get_mut(t.index()) {
                    p.owed.push_back((ds, n.0, seq));
                    outstanding += 1;
                }
            }
        }
        outstanding
    }

    /// Dual rail: the next place in the hub's order for a remote sender's packet or
    /// deposit of seq `seq`, as its `RailDeliver` / `RailDeposit` head (`None`
    /// without a rail, and for a local node's, which has no seq to be known by and
    /// goes down with the hub anyway).
    fn rail_place(&self, st: &mut State, seq: u64) -> Option<[u8; rail::RAIL_HEAD]> {
        (self.cfg.rail && seq != 0).then(|| {
            st.gseq += 1;
            rail::rail_head(seq, st.gseq)
        })
    }

    /// The destinations of `n`'s packet `d` that receive its segment, once its
    /// generation, its range (`fits` the segment's size) and `n`'s right to write
    /// are checked; `None` (a refusal answered where due) if any fails.
    fn route(
        &self,
        st: &mut State,
        n: NodeId,
        d: &proto::Data<'_>,
        fits: impl FnOnce(usize) -> bool,
    ) -> Option<NodeSet> {
        let members = match d.dest {
            Dest::Broadcast => st.members(),
            _ => NodeSet::EMPTY,
        };
        let Some(Some(me)) = st.ports.get(n.index()) else {
            return None;
        };
        let caller = (me.uid, me.gid);
        let known = matches!(st.segs.get(d.seg as usize), Some(Some(s)) if s.gen == d.gen);
        if !known && self.cfg.standby_of.is_some() {
            // A standby that took over with a stale copy (the active dropped it from
            // its mirror set): the write fails the writer's next ack, never lost
            // silently.
            if let Some(suppressed) = st.frame_log.admit(Instant::now()) {
                tracing::warn!(
                    node = n.0,
                    seg = d.seg,
                    gen = d.gen,
                    suppressed,
                    "packet for a segment this standby never learnt refused"
                );
            }
            let what = format!(
                "#{} generation {}, which the standby hub that took over never learnt",
                d.seg, d.gen
            );
            st.refuse_with(n, proto::NO_REQUEST, &Refusal::UnknownSegment(what));
            return None;
        }
        let groups = &st.groups;
        let Some(Some(seg)) = st.segs.get_mut(d.seg as usize) else {
            return None;
        };
        if seg.gen != d.gen || !fits(seg.size) {
            // A stale generation (segment freed) or a hostile offset: touch nothing.
            return None;
        }
        // Write permission, from the uid and gid the node joined with: the library
        // checks it at `map_tx`, a node that skips the library is checked here.
        let perm =
            memchan_core::perm::check(caller, (seg.uid, seg.gid, seg.mode), 2, &seg.name, "map_tx");
        if let Err(e) = perm {
            if let Some(suppressed) = st.frame_log.admit(Instant::now()) {
                tracing::warn!(node = n.0, error = %e, suppressed, "packet refused");
            }
            st.refuse(n, proto::NO_REQUEST, &e);
            return None;
        }
        let mut to = match d.dest {
            Dest::Node(t) => {
                let mut s = NodeSet::EMPTY;
                s.insert(t);
                s
            }
            Dest::Group(g) => match groups.get(g.index()) {
                Some((_, m)) => *m,
                None => return None,
            },
            Dest::Broadcast => members,
        };
        if d.flags & proto::FLAG_LOCAL_COPY != 0 {
            to.insert(n);
        } else if d.dest != Dest::Node(n) {
            to.remove(n);
        }
        // Only members receive: an isolated node leaves every rx set.
        Some(to.intersect(&seg.rx))
    }

    fn request(&self, st: &mut State, n: NodeId, payload: &[u8]) {
        let (req, op) = match Op::get(payload) {
            Ok(r) => r,
            Err(e) => {
                tracing::warn!(node = n.0, error = %e, "malformed request dropped");
                return;
            }
        };
        let Some(Some(me)) = st.ports.get(n.index()) else {
            return;
        };
        let (uid, gid, inc) = (me.uid, me.gid, me.inc);
        match op {
            Op::SegOpen {
                create,
                size,
                mode,
                flags,
                name,
            } => {
                // The node checked these too; the hub never relies on it.
                let checked = validate::stored_segment_name(&name, flags & 1 != 0).and_then(|()| {
                    if create {
                        validate::segment_size(size)?;
                        validate::mode(mode)?;
                    }
                    Ok(())
                });
                if let Err(e) = checked {
                    return st.refuse(n, req, &e);
                }
                let page = st.page.unwrap_or(PageSize::K4);
                let found = st
                    .segs
                    .iter()
                    .position(|s| s.as_ref().is_some_and(|s| s.name == name));
                if let Some(i) = found {
                    let s = st.segs[i].as_ref().expect("found");
                    let want = page.round_up(size as usize);
                    if create && size != 0 && want != s.size {
                        let r = Refusal::SizeMismatch {
                            segment: name,
                            existing: s.size as u64,
                            requested: want as u64,
                        };
                        return st.refuse_with(n, req, &r);
                    }
                    let info = seg_info(i, s);
                    return st.respond(n, req, code::OK, &info.put());
                }
                if !create {
                    return st.refuse_with(n, req, &Refusal::UnknownSegment(name));
                }
                let i = match st.segs.iter().position(|s| s.is_none()) {
                    Some(i) => i,
                    None if st.segs.len() < validate::MAX_SEGMENTS => {
                        st.segs.push(None);
                        st.segs.len() - 1
                    }
                    None => return st.refuse_with(n, req, &Refusal::TableFull(Table::Segment)),
                };
                let size = page.round_up(size as usize);
                let gen = st.next_gen;
                st.next_gen += 1;
                st.segs[i] = Some(Seg {
                    name,
                    gen,
                    size,
                    uid,
                    gid,
                    mode,
                    rx: NodeSet::EMPTY,
                    shadow: (flags & 1 != 0).then(|| vec![0; size]),
                });
                let info = seg_info(i, st.segs[i].as_ref().expect("new"));
                self.replicate(st);
                st.respond(n, req, code::OK, &info.put());
            }
            Op::SegFree { seg, gen } => match st.segs.get(seg as usize) {
                Some(Some(s)) if s.gen == gen => {
                    if uid != 0 && uid != s.uid {
                        let e = Error::PermissionDenied {
                            segment: s.name.clone(),
                            op: "free",
                            uid: s.uid,
                            gid: s.gid,
                            mode: s.mode,
                            caller_uid: uid,
                        };
                        return st.refuse(n, req, &e);
                    }
                    st.segs[seg as usize] = None;
                    self.replicate(st);
                    st.respond(n, req, code::OK, &[]);
                }
                _ => st.refuse_with(n, req, &Refusal::SegmentFreed(String::new())),
            },
            Op::MapRx { seg, gen } => match st.segs.get_mut(seg as usize) {
                Some(Some(s)) if s.gen == gen => {
                    // Read permission, from the uid and gid the node joined with.
                    let perm = memchan_core::perm::check(
                        (uid, gid),
                        (s.uid, s.gid, s.mode),
                        4,
                        &s.name,
                        "map_rx",
                    );
                    if let Err(e) = perm {
                        return st.refuse(n, req, &e);
                    }
                    s.rx.insert(n);
                    if let Some(shadow) = s.shadow.clone() {
                        let head = proto::deliver_head(HUB_ORIGIN, seg, gen, 0, 0);
                        if let Some(ds) = st.send(n, Kind::Deliver, &[&head, &shadow]) {
                            if let Some(Some(p)) = st.ports.get_mut(n.index()) {
                                p.owed.push_back((ds, HUB_ORIGIN, 0));
                            }
                        }
                    }
                    self.replicate(st);
                    st.respond(n, req, code::OK, &[]);
                }
                _ => st.refuse_with(n, req, &Refusal::SegmentFreed(String::new())),
            },
            Op::UnmapRx { seg, gen } => {
                if let Some(Some(s)) = st.segs.get_mut(seg as usize) {
                    if s.gen == gen {
                        s.rx.remove(n);
                    }
                }
                self.replicate(st);
                st.respond(n, req, code::OK, &[]);
            }
            Op::GroupCreate { name, members } => {
                let list: Vec<NodeId> = members.iter().collect();
                let checked = validate::group_name(&name)
                    .and_then(|()| validate::group_members(&list, &st.members()));
                if let Err(e) = checked {
                    return st.refuse(n, req, &e);
                }
                if let Some(i) = st.groups.iter().position(|g| g.0 == name) {
                    if st.groups[i].1 != members {
                        let r = Refusal::Invalid {
                            what: "request".into(),
                            why: format!("group `{name}` exists with other members"),
                        };
                        return st.refuse_with(n, req, &r);
                    }
                    return st.respond(n, req, code::OK, &(i as u16).to_le_bytes());
                }
                if st.groups.len() >= MAX_GROUPS {
                    return st.refuse_with(n, req, &Refusal::TableFull(Table::Group));
                }
                st.groups.push((name, members));
                self.replicate(st);
                let id = (st.groups.len() - 1) as u16;
                st.respond(n, req, code::OK, &id.to_le_bytes());
            }
            Op::GroupLookup { name } => match st.groups.iter().position(|g| g.0 == name) {
                Some(i) => {
                    let body = proto::put_set(Put::new().u16(i as u16), &st.groups[i].1).0;
                    st.respond(n, req, code::OK, &body);
                }
                None => st.refuse_with(n, req, &Refusal::UnknownGroup(name)),
            },
            Op::Ack => {
                let mut waits = Vec::new();
                for (i, p) in st.ports.iter().enumerate() {
                    if let Some(Port {
                        inc,
                        sink: Sink::Remote(l),
                        ..
                    }) = p
                    {
                        let target = l.last_sent();
                        if l.peer_released() < target {
                            waits.push((NodeId(i as u16), *inc, target));
                            l.request_release();
                        }
                    }
                }
                st.acks.push(PendingAck {
                    origin: n,
                    inc,
                    req,
                    waits,
                    missing: Vec::new(),
                    released: 0,
                    moved: Instant::now(),
                });
                self.check_acks(st);
            }
            Op::Barrier { group, number } => {
                if group != u16::MAX {
                    let g = GroupId(group);
                    match st.groups.get(g.index()) {
                        None => return st.refuse(n, req, &validate::unknown_group(g)),
                        Some((_, m)) if !m.contains(n) => {
                            let e = Error::Invalid {
                                what: "group barrier",
                                why: format!("{n} is not a member of group #{group}"),
                            };
                            return st.refuse(n, req, &e);
                        }
                        Some(_) => {}
                    }
                }
                let target = count_arrival(st, n, group, number);
                st.barrier_waits.push(BarrierWait {
                    node: n,
                    inc,
                    req,
                    scope: group,
                    target,
                    missing: NodeSet::EMPTY,
                    handled: 0,
                    moved: Instant::now(),
                });
                self.check_barriers(st);
            }
            Op::GroupCheck { group } => {
                if st.groups.get(usize::from(group)).is_some() {
                    st.respond(n, req, code::OK, &[]);
                } else {
                    st.refuse(n, req, &validate::unknown_group(GroupId(group)));
                }
            }
            Op::Leave => {
                st.respond(n, req, code::OK, &[]);
                // A node that leaves is no destination any more: the acks of others
                // stop waiting for its releases, and do not name it as gone before
                // releasing (`AckIncomplete` is for a node that failed). A leaver
                // that was asked for its releases as it left made such an ack fail.
                for a in &mut st.acks {
                    a.waits.retain(|&(d, i, _)| (d, i) != (n, inc));
                }
                self.remove(st, n, inc, event_kind::LEFT, "left");
            }
        }
    }

    fn check_acks(&self, st: &mut State) {
        let mut done = Vec::new();
        let mut i = 0;
        while i < st.acks.len() {
            let a = &mut st.acks[i];
            let ports = &st.ports;
            let before = a.waits.len();
            a.waits.retain(|&(d, inc, target)| match &ports[d.index()] {
                Some(Port {
                    inc: pi,
                    sink: Sink::Remote(l),
                    ..
                }) if *pi == inc => l.peer_released() < target,
                _ => {
                    a.missing.push(d);
                    false
                }
            });
            if a.waits.is_empty() {
                done.push(st.acks.swap_remove(i));
                continue;
            }
            // Progress is any waited destination releasing more, or a wait ending: a
            // backlog that drains, however slowly, is not a failure. A destination that
            // stays connected (heartbeating) but releases nothing for the failure
            // timeout fails the ack by name instead of holding it forever.
            let released: u64 = a
                .waits
                .iter()
                .filter_map(|&(d, _, _)| match &ports[d.index()] {
                    Some(Port {
                        sink: Sink::Remote(l),
                        ..
                    }) => Some(l.peer_released()),
                    _ => None,
                })
                .sum();
            if released != a.released || a.waits.len() < before {
                a.released = released;
                a.moved = Instant::now();
            }
            if a.moved.elapsed() > self.cfg.failure_timeout {
                done.push(st.acks.swap_remove(i));
            } else {
                i += 1;
            }
        }
        for a in done {
            if !st.alive(a.origin, a.inc) {
                continue;
            }
            if !a.waits.is_empty() {
                let set: NodeSet = a.waits.iter().map(|w| w.0).collect();
                let ms = self.cfg.failure_timeout.as_millis() as u64;
                tracing::warn!(node = a.origin.0, stalled = ?set, "ack stalled: no release for {ms} ms");
                let r = Refusal::AckStalled {
                    waited_ms: ms,
                    stalled: set,
                };
                st.refuse_with(a.origin, a.req, &r);
            } else if a.missing.is_empty() {
                st.respond(a.origin, a.req, code::OK, &[]);
            } else {
                let set: NodeSet = a.missing.iter().copied().collect();
                st.refuse_with(a.origin, a.req, &Refusal::AckIncomplete(set));
            }
        }
    }

    /// Fails the barrier waits whose missing members, alive and connected, made no
    /// progress for the stall bound: none arrived or left, and none sent a write or a
    /// request (a member busy on its way to the barrier is progress, however long it
    /// takes). The same bound as on one host: 25 failure timeouts, at least 1 s.
    fn expire_barriers(&self, st: &mut State) {
        let bound = (self.cfg.failure_timeout * 25).max(Duration::from_secs(1));
        let members = st.members();
        let mut done = Vec::new();
        let State {
            barrier_waits,
            barrier_counts,
            ports,
            groups,
            ..
        } = st;
        barrier_waits.retain_mut(|w| {
            let want = match w.scope {
                u16::MAX => members,
                g => groups
                    .get(usize::from(g))
                    .map_or(NodeSet::EMPTY, |(_, m)| m.intersect(&members)),
            };
            let counts = &barrier_counts[&w.scope];
            let missing: NodeSet = want
                .iter()
                .filter(|m| counts[m.index()] < w.target)
                .collect();
            let handled = missing
                .iter()
                .filter_map(|m| ports[m.index()].as_ref().map(|p| p.handled))
                .sum();
            if missing != w.missing || handled != w.handled {
                (w.missing, w.handled, w.moved) = (missing, handled, Instant::now());
            }
            let stalled = w.moved.elapsed() > bound;
            if stalled {
                done.push((w.node, w.inc, w.req, missing));
            }
            !stalled
        });
        for (n, inc, req, missing) in done {
            if !st.alive(n, inc) {
                continue;
            }
            let ms = bound.as_millis() as u64;
            tracing::warn!(node = n.0, missing = ?missing, "barrier stalled: no progress for {ms} ms");
            let r = Refusal::BarrierStalled {
                waited_ms: ms,
                missing,
            };
            st.refuse_with(n, req, &r);
        }
    }

    /// Answers every barrier waiter whose scope's live members all reached its count.
    fn check_barriers(&self, st: &mut State) {
        let members = st.members();
        // The lowest count among each waited scope's live members, once per scope: a
        // waiter passes when it reaches the waiter's target (the waiter's own count
        // does, it arrived), so a call costs O(members + waiters), not their product.
        let mut lowest: HashMap<u16, u64> = HashMap::new();
        let mut done = Vec::new();
        st.barrier_waits.retain(|w| {
            let low = *lowest.entry(w.scope).or_insert_with(|| {
                let want = match w.scope {
                    u16::MAX => members,
                    g => st
                        .groups
                        .get(usize::from(g))
                        .map_or(NodeSet::EMPTY, |(_, m)| m.intersect(&members)),
                };
                let counts = &st.barrier_counts[&w.scope];
                want.iter()
                    .map(|m| counts[m.index()])
                    .min()
                    .unwrap_or(u64::MAX)
            });
            let passed = low >= w.target;
            if passed {
                done.push((w.node, w.inc, w.req));
            }
            !passed
        });
        for (n, inc, req) in done {
            if st.alive(n, inc) {
                st.respond(n, req, code::OK, &[]);
            }
        }
    }

    /// Moves releases forward after `n` released deliveries: its owed deliveries are
    /// credited to their origins, whose links then release in order.
    fn settle(&self, st: &mut State, n: NodeId) {
        let released = match st.ports.get(n.index()) {
            Some(Some(Port {
                sink: Sink::Remote(l),
                ..
            })) => l.peer_released(),
            _ => return,
        };
        // Reused between calls: this runs for nearly every frame a node sends.
        let mut credited = std::mem::take(&mut st.credited);
        if let Some(Some(p)) = st.ports.get_mut(n.index()) {
            while let Some(&(ds, origin, oseq)) = p.owed.front() {
                if ds > released {
                    break;
                }
                p.owed.pop_front();
                if origin != HUB_ORIGIN {
                    credited.push((origin, oseq));
                }
            }
        }
        self.credit(st, &credited);
        credited.clear();
        st.credited = credited;
        if !st.acks.is_empty() {
            self.check_acks(st);
        }
    }

    fn credit(&self, st: &mut State, credited: &[(u16, u64)]) {
        for &(origin, oseq) in credited {
            if let Some(Some(p)) = st.ports.get_mut(origin as usize) {
                if let Some(&(front, _, _)) = p.inflight.front() {
                    if let Some(e) = p.inflight.get_mut(oseq.wrapping_sub(front) as usize) {
                        e.1 = e.1.saturating_sub(1);
                    }
                }
            }
        }
        // After all decrements, so each origin releases as far as it can at once.
        for &(origin, _) in credited {
            if let Some(Some(p)) = st.ports.get_mut(origin as usize) {
                release_done(p);
            }
        }
    }

    /// Isolates a failed node (see the module doc).
    fn isolate(&self, st: &mut State, n: NodeId, inc: u64, why: &str) {
        if !st.alive(n, inc) {
            return;
        }
        st.isolations += 1;
        tracing::warn!(node = n.0, incarnation = inc, reason = %why, "isolated");
        self.remove(st, n, inc, event_kind::FAILED, why);
    }

    fn remove(&self, st: &mut State, n: NodeId, inc: u64, kind: u8, why: &str) {
        let Some(p) = st.ports[n.index()].take() else {
            return;
        };
        if let Some(sb) = st.standby.as_mut() {
            sb.forget(n);
        }
        self.refresh_links(st);
        st.epoch += 1;
        let epoch = st.epoch;
        match &p.sink {
            Sink::Remote(l) => {
                if kind == event_kind::FAILED {
                    let body = Put::new().u64(epoch).str(why).0;
                    l.send_control(Kind::Isolated, &body);
                }
                l.shutdown();
            }
            Sink::Local(lp) => {
                if kind == event_kind::FAILED {
                    lp.isolated(epoch, why);
                }
            }
        }
        // Deliveries it will never release no longer hold their senders back.
        let credited: Vec<_> = p
            .owed
            .iter()
            .filter(|e| e.1 != HUB_ORIGIN)
            .map(|e| (e.1, e.2))
            .collect();
        self.credit(st, &credited);
        self.conds_gone(st, n);
        let mut clear = Vec::new();
        for (i, s) in st.segs.iter_mut().enumerate() {
            if let Some(s) = s {
                s.rx.remove(n);
                if s.shadow
                    .as_ref()
                    .is_some_and(|sh| sh.get(n.index()) == Some(&1))
                {
                    clear.push(i);
                }
            }
        }
        for seg in clear {
            st.hub_write(seg, n.index(), &[0]);
        }
        st.event(n, inc, kind);
        self.rma_forget(st, n);
        st.barrier_waits.retain(|w| w.node != n);
        for counts in st
            .barrier_counts
            .values_mut()
            .chain(st.barrier_seen.values_mut())
        {
            counts[n.index()] = 0;
        }
        self.check_barriers(st);
        self.check_acks(st);
        self.replicate(st);
    }

    fn status(&self) -> ClusterStatus {
        let st = self.lock();
        let mut segments = Vec::new();
        let mut locks = Vec::new();
        for seg in st.segs.iter().flatten() {
            match (&seg.shadow, seg.name.strip_prefix(validate::LOCK_PREFIX)) {
                (Some(page), Some(name)) => locks.push(LockStatus {
                    name: name.to_string(),
                    bidders: (0..page.len().min(MAX_NODES))
                        .filter(|&i| page[i] != 0)
                        .map(|i| i as u16)
                        .collect(),
                }),
                _ => segments.push(SegmentStatus {
                    name: seg.name.clone(),
                    size: seg.size as u64,
                    uid: seg.uid,
                    gid: seg.gid,
                    mode: seg.mode,
                    rx: seg.rx.iter().map(|n| n.0).collect(),
                }),
            }
        }
        ClusterStatus {
            cluster: st.cluster.clone().unwrap_or_default(),
            transport: "hub".into(),
            listen: self.addr.to_string(),
            protocol: wire::VERSION,
            epoch: st.epoch,
            page_size: st.page.map_or(0, |p| p.bytes() as u32),
            keyed: self.cfg.keyed,
            members: st
                .ports
                .iter()
                .enumerate()
                .filter_map(|(i, p)| {
                    let p = p.as_ref()?;
                    let (hub_side, heard) = match &p.sink {
                        Sink::Remote(l) => (l.counters(), l.silence()),
                        Sink::Local(_) => (LinkCounters::default(), Duration::ZERO),
                    };
                    Some(MemberStatus {
                        node: i as u16,
                        incarnation: p.inc,
                        host: p.host.clone(),
                        pid: p.pid,
                        uid: p.uid,
                        addr: p.addr.clone(),
                        joined_epoch: p.joined_epoch,
                        barriers: st.barrier_counts.get(&u16::MAX).map_or(0, |c| c[i]),
                        last_heard_ms: heard.as_millis() as u64,
                        hub_side,
                        node_side: p.node_counters.clone(),
                        // The hub's own node reads the hub's clock.
                        clock_bound_ns: match p.sink {
                            Sink::Local(_) => Some(clock::read_cost()),
                            Sink::Remote(_) => p.clock_bound_ns,
                        },
                    })
                })
                .collect(),
            segments,
            groups: st
                .groups
                .iter()
                .enumerate()
                .map(|(i, (name, m))| GroupStatus {
                    id: i as u16,
                    name: name.clone(),
                    members: m.iter().map(|n| n.0).collect(),
                })
                .collect(),
            locks,
            isolations: st.isolations,
            joins: st.joins,
            refused: self.refused.load(Relaxed),
            uptime_s: self.started.elapsed().as_secs(),
            rail: self.rail_status(&st),
        }
    }
}

/// Releases the node's frames that are done, in order, up to the first one whose
/// deliveries are still outstanding.
fn release_done(p: &mut Port) {
    let mut upto = None;
    while let Some(&(seq, 0, _)) = p.inflight.front() {
        p.inflight.pop_front();
        upto = Some(seq);
    }
    if let (Some(seq), Sink::Remote(l)) = (upto, &p.sink) {
        l.release(seq);
        l.send_release(false);
    }
}

fn seg_info(i: usize, s: &Seg) -> SegInfo {
    SegInfo {
        seg: i as u32,
        gen: s.gen,
        size: s.size as u64,
        uid: s.uid,
        gid: s.gid,
        mode: s.mode,
    }
}

/// Bytes of a refused connection's input read and dropped before closing it: a close
/// with unread input resets the connection, and the peer might lose the refusal.
const DRAIN: usize = 64 * 1024;

/// Sends a Refuse frame (readable without the key) if the socket takes it now, reads
/// and drops what the peer sent (a close with unread input resets the connection, and
/// the peer could lose the refusal), and closes.
fn say_and_close(mut sock: TcpStream, why: &JoinRefusal) {
    let mut frame = Vec::new();
    wire::encode(
        &mut frame,
        &FrameKey::open(),
        1,
        Kind::Refuse,
        0,
        0,
        &[&why.put()],
    );
    let _ = sock.write(&frame);
    let _ = sock.shutdown(std::net::Shutdown::Write);
    let mut sink = [0u8; 4096];
    let mut drained = 0;
    while drained < DRAIN {
        match sock.read(&mut sink) {
            Ok(n) if n > 0 => drained += n,
            _ => break,
        }
    }
}

/// Counts `n`'s barrier arrival `number` of `scope` (its own numbering, from 1 at its
/// join) and returns the count it waits for. An arrival not counted yet counts,
/// together with any earlier ones this hub missed (a standby's copy is a heartbeat
/// old); one counted already (asked again after a rail switch) is not counted again.
fn count_arrival(st: &mut State, n: NodeId, scope: u16, number: u64) -> u64 {
    let counts = st.barrier_counts.entry(scope).or_insert([0; MAX_NODES]);
    let seen = st.barrier_seen.entry(scope).or_insert([0; MAX_NODES]);
    let i = n.index();
    if number > seen[i] {
        counts[i] = counts[i].saturating_add(number - seen[i]);
        seen[i] = number;
        counts[i]
    } else {
        counts[i].saturating_sub(seen[i] - number)
    }
}

/// Hooks for the tests of the crates above (not an API).
#[doc(hidden)]
pub mod testing {
    use super::Hub;
    use std::time::Duration;

    /// Holds the hub lock for `d`, as a long job under it (a standby's replay) does.
    pub fn hold_lock(hub: &Hub, d: Duration) {
        let _busy = hub.sh.lock();
        std::thread::sleep(d);
    }
}
