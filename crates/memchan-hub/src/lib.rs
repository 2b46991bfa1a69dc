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
//! file holds the [`Hub`] and its threads, above every module; none imports it. The
//! rest is one concept a module: `state.rs` (the state they share, a leaf),
//! `config.rs`, `gate.rs` (connections until their join), `admit.rs` (a verified
//! join becomes a member), `reader.rs` (a member's link read), `route.rs` (the one
//! order: frames, data, routing), `control.rs` (segment, group, rx, leave, ack and
//! barrier requests), `sync.rs` (completing acks and barriers), `members.rs`
//! (releases credited, a node's removal), `status.rs` (`memchan status`),
//! `deposit.rs` and `rma.rs` (the hub's part of deposits and remote accesses),
//! `standby.rs` and `mirror.rs` (dual rail: the standby's takeover, the active's
//! copies of its tables), `refuse.rs` and `limiter.rs` (refusing a connection,
//! bounding log lines).

#![warn(missing_docs)]

mod admit;
mod config;
mod control;
mod deposit;
mod gate;
mod limiter;
mod members;
mod mirror;
mod reader;
mod refuse;
mod rma;
mod route;
mod standby;
mod state;
mod status;
mod sync;
mod time_plan;

pub use config::HubConfig;
pub use gate::MAX_JOIN;
pub use state::LocalPort;

use crate::deposit::conds::Conds;
use crate::limiter::Limiter;
use crate::mirror::set::Mirrors;
use crate::rma::table::Table;
use crate::standby::copy::Standby;
use crate::state::{Shared, Sink, State};
use memchan_core::status::ClusterStatus;
use memchan_core::{NodeId, MAX_NODES};
use memchan_link::link::Readers;
use memchan_link::proto::reply::JoinRefusal;
use memchan_link::proto::{self, clock, Join, Welcome};
use memchan_link::wire::Kind;
use parking_lot::Mutex;
use std::collections::HashMap;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::Arc;
use std::time::{Duration, Instant};
/// Up to this many remote links, a spinning `Hub::progress` reads each link instead
/// of polling them all first.
const DIRECT_READS: usize = 2;

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
                instance: {
                    let mut b = [0u8; 8];
                    getrandom::fill(&mut b)?;
                    u64::from_le_bytes(b)
                },
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
                frame_log: Limiter::new(Instant::now()),
                conds: Conds::default(),
                rma: Table::default(),
                gseq: 0,
                standby: cfg.standby_of.clone().map(Standby::new),
                mirrors: Mirrors::default(),
                corked: std::cell::Cell::new(false),
                dirty: std::cell::RefCell::new(Vec::new()),
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

impl Shared {
    /// A time packet to each of `due` (remote members), each stamped under the hub
    /// lock as it is queued: it takes its place in the one order (a node in the hub's
    /// process reads the hub's clock itself).
    fn time_packets(&self, due: &[(NodeId, u64)]) {
        let st = self.lock();
        for &(node, inc) in due {
            if st.alive(node, inc) {
                st.send(node, Kind::Time, &[&clock::time(clock::mono_ns(), 0)]);
            }
        }
    }

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
    let mut times = time_plan::TimePlan::default();
    let mut due = Vec::new();
    while !sh.stop.load(Relaxed) {
        std::thread::sleep(tick);
        let links = sh.remote_links();
        let hb = last_hb.elapsed() >= sh.cfg.heartbeat;
        if hb {
            last_hb = Instant::now();
        }
        if let Some(fast) = sh.cfg.clock_period {
            let settled = sh.cfg.clock_period_settled.max(fast);
            times.due(&links, fast, settled, Instant::now(), &mut due);
            if !due.is_empty() {
                sh.time_packets(&due);
            }
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
        // The acks' stall bound, and any release whose settle is still to come.
        {
            let mut st = sh.lock();
            if !st.acks.is_empty() {
                sh.check_acks(&mut st);
            }
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
