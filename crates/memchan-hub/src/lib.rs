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
//! `memchan-net`, which depends on it only to host a hub in its own process. This
//! file holds the [`Hub`], its threads, its state and admission; the rest is one
//! concept a module: `gate.rs` (connections until their join), `route.rs` (the one
//! order: frames, data, routing), `control.rs` (segment, group, rx, leave, ack and
//! barrier requests), `sync.rs` (completing acks and barriers), `members.rs`
//! (releases credited, a node's removal), `status.rs` (`memchan status`),
//! `deposit.rs` and `rma.rs` (the hub's part of deposits and remote accesses),
//! `standby.rs` and `mirror.rs` (dual rail: the standby's takeover, the active's
//! copies of its tables).

#![warn(missing_docs)]

mod control;
mod deposit;
mod gate;
mod members;
mod mirror;
mod rma;
mod route;
mod standby;
mod status;
mod sync;

pub use gate::MAX_JOIN;

use memchan_core::status::{ClusterStatus, LinkCounters};
use memchan_core::{Error, NodeId, NodeSet, PageSize, MAX_NODES};
use memchan_link::link::{Handler, Link, LinkConfig, LinkError, Readers};
use memchan_link::proto::clock;
use memchan_link::proto::reply::{JoinRefusal, Refusal};
use memchan_link::proto::{self, event_kind, Join, SegInfo, Welcome};
use memchan_link::wire::{self, Decoder, FrameKey, Key, Kind};
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
        let mut live = st.members();
        live.remove(node);
        for counts in st.barrier_counts.values_mut() {
            counts[id] = memchan_core::barrier::level(live.iter().map(|m| counts[m.index()]));
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
