//! Dual rail, the standby hub's side (`memchan_link::rail` has the design): it keeps a
//! connection in the [`ROLE_MIRROR`] role open to the active hub, which sends it the
//! tables whenever they change (and every heartbeat) and waits for its receipt before
//! it answers the node that changed them (`mirror.rs`), and when nodes come to it with their links
//! ([`ROLE_RESUME`], then a `RailResume` frame: id, incarnation, first resent seq, rx
//! mappings, rail report) it takes over: it adopts each node under its old id and
//! incarnation, holds what their links resend, and once every member of the copied
//! tables resumed (or twice the failure timeout after the first did) orders the held
//! packets by [`rail::plan`], tells each node its renumbered history (`RailPlan`), and
//! goes on as the cluster's hub. Members that did not come are failed, as an isolation
//! would (lock slots cleared, `Failed` events).
//!
//! The copy holds every member, segment, rx set and group a node was told of, as long
//! as this standby stayed in the active's mirror set; lock copies and barrier counts
//! are as old as one heartbeat. A standby the active dropped (it did not confirm in
//! time) is stale until it connects again; after a takeover it refuses a write to a
//! segment it does not know (`Shared::route`), so the writer's next `ack` fails. A
//! node's barrier arrival or request the old hub handled but did not answer is not
//! answered again, except an `ack`, which the node sends again after a switch.

pub(crate) mod copy;

use crate::reader::serve;
use crate::refuse::say_and_close;
use crate::state::{Port, Seg, Shared, Sink, State};
use crate::sync::count_arrival;
use copy::{set_of, Phase, Replay, Resumed, Standby, Tables};
use memchan_core::status::{LinkCounters, RailStatus};
use memchan_core::{NodeId, NodeSet, PageSize, MAX_NODES};
use memchan_link::handshake::{self, read_frame, HandshakeError, STEP};
use memchan_link::link::{Held, Link};
use memchan_link::proto::reply::JoinRefusal;
use memchan_link::proto::{event_kind, Join, ROLE_MIRROR};
use memchan_link::rail::{self, PlanNotice, RailError, Report, Resume};
use memchan_link::wire::{self, Decoder, FrameKey, Kind};
use std::collections::{HashMap, VecDeque};
use std::io::Write;
use std::net::{SocketAddr, TcpStream};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::Instant;

/// Why a standby's copy of the tables, or a node's resume at it, failed.
#[derive(Debug, thiserror::Error)]
pub(super) enum StandbyError {
    /// The active hub's handshake, or reading the node's resume, failed.
    #[error(transparent)]
    Handshake(#[from] HandshakeError),
    /// A frame of another kind than expected.
    #[error("expected {want}, got {got:?}")]
    Unexpected {
        /// What was expected.
        want: &'static str,
        /// What came.
        got: Kind,
    },
    /// A socket call failed.
    #[error("{what}: {source}")]
    Io {
        /// What was being done.
        what: &'static str,
        /// The error.
        #[source]
        source: std::io::Error,
    },
    /// The tables do not parse.
    #[error("bad tables: {0}")]
    Tables(#[source] serde_json::Error),
    /// The tables parse but are not ones a hub could hold.
    #[error("{0}")]
    BadCopy(String),
    /// The node's `RailResume` does not decode.
    #[error(transparent)]
    Resume(#[from] RailError),
    /// The active hub still answers: the node lost only its own link to it.
    #[error(
        "the active hub {0} still answers this standby: this node lost only its own link to it"
    )]
    ActiveAnswers(String),
    /// A resume at a hub that is not a standby.
    #[error("this hub is not a standby")]
    NotStandby,
    /// A resume after the takeover.
    #[error("this standby already took over without this node")]
    TookOver,
    /// A resume before any copy of the members came.
    #[error("this standby has no copy of the active hub's members")]
    NoCopy,
    /// A resume into another cluster.
    #[error("this standby serves cluster `{serves}`, not `{asked}`")]
    OtherCluster {
        /// The copy's cluster.
        serves: String,
        /// The node's.
        asked: String,
    },
    /// A resuming node the copy does not hold.
    #[error("node {node} incarnation {inc} is not a member of the copied tables")]
    NotMember {
        /// Its id.
        node: u16,
        /// Its incarnation.
        inc: u64,
    },
    /// A node resuming twice.
    #[error("node {0} resumed already")]
    Resumed(u16),
}

/// How far above the copy's next generation a standby that took over starts.
const GEN_GAP: u32 = 1 << 24;

/// How long the replaying thread holds the hub lock at a time.
const REPLAY_SLICE: std::time::Duration = std::time::Duration::from_millis(2);

/// The standby's copying thread: follows the active's tables over a mirror
/// connection, connecting again every heartbeat while it cannot, until nodes start
/// resuming here.
pub(super) fn mirror_loop(sh: Arc<Shared>) {
    let Some(active) = sh.cfg.standby_of.clone() else {
        return;
    };
    while !sh.stop.load(Relaxed) {
        let Some(why) = follow(&sh, &active) else {
            return;
        };
        let why = why.to_string();
        let mut st = sh.lock();
        let Some(sb) = st.standby.as_mut() else {
            return;
        };
        if sb.mirror_error != why {
            tracing::warn!(active = %active, reason = %why, "cannot copy the active hub's tables");
        }
        sb.mirror_error = why;
        drop(st);
        std::thread::sleep(sh.cfg.heartbeat);
    }
}

/// Node `o`'s held frames, if it is still a member; a node isolated during the
/// replay has them dropped (they go with it).
fn live_held<'a>(
    sb: &'a mut Standby,
    st: &State,
    o: u16,
) -> Option<&'a mut VecDeque<(u64, Kind, Vec<u8>)>> {
    let r = sb.resumed.get_mut(&o)?;
    if st.ports[usize::from(o)].is_none() {
        r.held.clear();
        return None;
    }
    Some(&mut r.held)
}

/// The standby's replaying thread: sleeps until a takeover has its plan, then
/// handles the held frames a slice at a time (`Shared::replay_slice`), letting go of
/// the hub lock between slices so that the links are read and the timer runs.
pub(super) fn replay_loop(sh: Arc<Shared>) {
    match sh.lock().standby.as_mut() {
        Some(sb) => sb.replayer = Some(std::thread::current()),
        None => return,
    }
    while !sh.stop.load(Relaxed) {
        let mut st = sh.lock();
        match st.standby.as_ref().map(|sb| &sb.phase) {
            Some(Phase::Replaying) => {
                sh.replay_slice(&mut st);
                // Handed to the next waiter: the links' readers and the timer get
                // their turn between slices.
                parking_lot::MutexGuard::unlock_fair(st);
            }
            Some(Phase::Mirroring | Phase::Gathering(_)) => {
                drop(st);
                std::thread::park_timeout(sh.cfg.heartbeat);
            }
            _ => return,
        }
    }
}

/// One mirror connection: each copy of the tables is checked and kept, then
/// confirmed (the active answers the node that changed them only after that).
/// `None` once this standby no longer mirrors, else why the connection ended.
fn follow(sh: &Shared, active: &str) -> Option<StandbyError> {
    let join = Join::service(ROLE_MIRROR);
    let (mut sock, key, mut dec) = match handshake::connect(active, &sh.cfg.key, join) {
        Ok(c) => c,
        Err(e) => return Some(e.into()),
    };
    let mut counter = 1;
    loop {
        // The active sends the tables every heartbeat: silence for the failure
        // timeout is an active gone.
        let deadline = Instant::now() + sh.cfg.failure_timeout;
        let (h, p) = match read_frame(&mut sock, &mut dec, deadline) {
            Ok(f) => f,
            Err(e) => return Some(e.into()),
        };
        if h.kind != Kind::Response {
            return Some(StandbyError::Unexpected {
                want: "the tables",
                got: h.kind,
            });
        }
        let copy = serde_json::from_slice::<Tables>(&p)
            .map_err(StandbyError::Tables)
            .and_then(|t| t.check().map(|()| t).map_err(StandbyError::BadCopy));
        let version = {
            let mut st = sh.lock();
            let sb = st.standby.as_mut()?;
            if sb.phase != Phase::Mirroring {
                return None;
            }
            match copy {
                Ok(t) => {
                    let v = t.version;
                    sb.tables = Some(t);
                    sb.mirrored_at = Some(Instant::now());
                    sb.mirror_error.clear();
                    v
                }
                Err(why) => return Some(why),
            }
        };
        let mut out = Vec::new();
        let receipt = version.to_le_bytes();
        wire::encode(
            &mut out,
            &key,
            counter,
            Kind::MirrorReceipt,
            0,
            0,
            &[&receipt],
        );
        counter += 1;
        if let Err(source) = sock.write_all(&out) {
            return Some(StandbyError::Io {
                what: "cannot confirm the copy",
                source,
            });
        }
    }
}

/// The decoder a resuming node's link is read with: its `RailResume` may carry a
/// report up to a frame's limit.
pub(super) fn resume_decoder(key: FrameKey) -> Decoder {
    Decoder::with_capacity(Some(key), wire::HEADER + wire::MAX_PAYLOAD + wire::MAC)
}

/// A node whose `ROLE_RESUME` join verified: reads its `RailResume` (in a thread of
/// its own, as it may be large) and adopts it, or refuses it.
pub(super) fn resume(
    sh: Arc<Shared>,
    sock: TcpStream,
    key: FrameKey,
    dec: Decoder,
    join: Join,
    peer: SocketAddr,
) {
    let spawned = std::thread::Builder::new()
        .name("memchan-hub-resume".into())
        .spawn(move || {
            let mut sock = sock;
            let mut dec = dec;
            let got = sock
                .set_nonblocking(false)
                .map_err(|source| StandbyError::Io {
                    what: "cannot read the resume",
                    source,
                })
                .and_then(|()| Ok(read_frame(&mut sock, &mut dec, Instant::now() + STEP)?))
                .and_then(|(h, p)| match h.kind {
                    Kind::RailResume => Ok(Resume::decode(&p)?),
                    got => Err(StandbyError::Unexpected {
                        want: "a rail resume",
                        got,
                    }),
                });
            let r = got
                .and_then(|r| sh.active_gone().map(|()| r))
                .and_then(|r| sh.adopt(&sock, key, dec, &join, r, peer));
            if let Err(why) = r {
                tracing::warn!(%peer, reason = %why, "rail resume refused");
                say_and_close(sock, &JoinRefusal::Resume(why.to_string()));
            }
        });
    if let Err(e) = spawned {
        tracing::warn!(%peer, error = %e, "no thread to take a rail resume");
    }
}

impl Shared {
    /// Before the first node resumes: `Err` if the active hub still answers here (a
    /// node that lost only its own link to it must not split the cluster; the active
    /// isolates it, as with one rail). Answering is sending its Hello within half the
    /// failure timeout.
    fn active_gone(&self) -> Result<(), StandbyError> {
        let mirroring = self
            .lock()
            .standby
            .as_ref()
            .is_some_and(|s| s.phase == Phase::Mirroring);
        let Some(active) = self.cfg.standby_of.as_deref().filter(|_| mirroring) else {
            return Ok(());
        };
        let wait = self.cfg.failure_timeout / 2;
        let answers = (|| -> Option<()> {
            use std::net::ToSocketAddrs;
            let sa = active.to_socket_addrs().ok()?.next()?;
            let mut sock = TcpStream::connect_timeout(&sa, wait).ok()?;
            let mut dec = Decoder::new(None);
            let (h, _) = read_frame(&mut sock, &mut dec, Instant::now() + wait).ok()?;
            (h.kind == Kind::Hello).then_some(())
        })();
        match answers {
            Some(()) => Err(StandbyError::ActiveAnswers(active.to_string())),
            None => Ok(()),
        }
    }

    /// Adopts a resuming node under its old id and incarnation (see the module doc).
    fn adopt(
        self: &Arc<Self>,
        sock: &TcpStream,
        key: FrameKey,
        dec: Decoder,
        join: &Join,
        r: Resume,
        peer: SocketAddr,
    ) -> Result<(), StandbyError> {
        let mut st = self.lock();
        let st = &mut *st;
        let Some(sb) = st.standby.as_mut() else {
            return Err(StandbyError::NotStandby);
        };
        if !matches!(sb.phase, Phase::Mirroring | Phase::Gathering(_)) {
            return Err(StandbyError::TookOver);
        }
        let Some(t) = sb.tables.as_ref().filter(|t| !t.members.is_empty()) else {
            return Err(StandbyError::NoCopy);
        };
        if t.cluster != join.cluster {
            return Err(StandbyError::OtherCluster {
                serves: t.cluster.clone(),
                asked: join.cluster.clone(),
            });
        }
        let m = match t.member(r.node) {
            Some(m) if m.inc == r.inc => m.clone(),
            _ => {
                return Err(StandbyError::NotMember {
                    node: r.node,
                    inc: r.inc,
                })
            }
        };
        if sb.resumed.contains_key(&r.node) || st.ports[usize::from(r.node)].is_some() {
            return Err(StandbyError::Resumed(r.node));
        }
        let cfg = self.cfg.node_link();
        let link = sock
            .try_clone()
            .and_then(|s| Link::resume(s, key, dec, cfg, Held::default(), r.first_seq))
            .map_err(|source| StandbyError::Io {
                what: "cannot set up the link",
                source,
            })?;
        let link = Arc::new(link);
        tracing::info!(node = r.node, incarnation = r.inc, %peer, held = r.report.unreleased.len(), "node resumed its link");
        if sb.phase == Phase::Mirroring {
            sb.phase = Phase::Gathering(Instant::now());
            tracing::warn!(active = %sb.active, "taking over from the active hub");
        }
        sb.resumed.insert(
            r.node,
            Resumed {
                need: r.report.unreleased.last().copied().unwrap_or(0),
                report: r.report,
                rx: r.rx,
                barriers: r.barriers,
                locks: r.locks,
                held: VecDeque::new(),
                got: r.first_seq - 1,
            },
        );
        st.ports[usize::from(r.node)] = Some(Port {
            inc: r.inc,
            sink: Sink::Remote(link.clone()),
            host: m.host,
            domain: m.domain,
            pid: m.pid,
            uid: m.uid,
            gid: m.gid,
            addr: peer.to_string(),
            joined_epoch: m.joined_epoch,
            node_counters: LinkCounters::default(),
            inflight: VecDeque::new(),
            owed: VecDeque::new(),
            acks_seen: 0,
            clock_bound_ns: None,
            handled: 0,
            direct: None,
        });
        self.refresh_links(st);
        let (sh, node, inc) = (self.clone(), NodeId(r.node), r.inc);
        std::thread::Builder::new()
            .name("memchan-hub-link".into())
            .spawn(move || serve(sh, node, inc, link))
            .map_err(|source| StandbyError::Io {
                what: "no thread to read its link",
                source,
            })?;
        self.check_takeover(st);
        Ok(())
    }

    /// Takes over once every copied member resumed, or twice the failure timeout after
    /// the first did, and every resumed node's held frames arrived.
    pub(super) fn check_takeover(&self, st: &mut State) {
        let Some(sb) = st.standby.as_ref() else {
            return;
        };
        let (Phase::Gathering(since), Some(t)) = (&sb.phase, &sb.tables) else {
            return;
        };
        let all = t.members.iter().all(|m| sb.resumed.contains_key(&m.node));
        if !all && since.elapsed() < self.cfg.failure_timeout * 2 {
            return;
        }
        if sb.resumed.values().any(|r| r.got < r.need) {
            return;
        }
        self.take_over(st);
    }

    fn take_over(&self, st: &mut State) {
        let started = Instant::now();
        let Some(mut sb) = st.standby.take() else {
            return;
        };
        let Some(t) = sb.tables.clone() else {
            st.standby = Some(sb);
            return;
        };
        let mut nodes: Vec<u16> = sb.resumed.keys().copied().collect();
        nodes.sort_unstable();
        let reports: Vec<Report> = nodes.iter().map(|n| sb.resumed[n].report.clone()).collect();
        let plan = match rail::plan(&reports) {
            Ok(p) => p,
            Err(e) => {
                tracing::error!(error = %e, "cannot order the held packets; the resumed nodes are isolated");
                sb.phase = Phase::Failed(e.to_string());
                st.standby = Some(sb);
                for n in nodes {
                    let inc = st.ports[usize::from(n)].as_ref().map_or(0, |p| p.inc);
                    self.isolate(st, NodeId(n), inc, &format!("the standby hub: {e}"));
                }
                return;
            }
        };
        let resumed = set_of(&nodes);
        // The copied tables, with what the resumed nodes map rx (their own account,
        // checked against the segment's rights) and only them as members.
        st.cluster = Some(t.cluster.clone());
        st.page = PageSize::from_bytes(t.page_size as usize);
        st.next_inc = st.next_inc.max(t.next_inc);
        st.instance = t.instance;
        // Generations from far above the copy's: a segment the active made after
        // this standby's copy (a stale one, dropped from the mirror set) and made
        // again here by a resent request never takes its old generation, so the old
        // mapping's writes are refused, not delivered to an rx set that lost them.
        st.next_gen = t.next_gen.saturating_add(GEN_GAP);
        st.segs = t
            .segs
            .iter()
            .map(|s| {
                s.as_ref().map(|s| Seg {
                    name: s.name.clone(),
                    gen: s.gen,
                    size: s.size as usize,
                    uid: s.uid,
                    gid: s.gid,
                    mode: s.mode,
                    rx: set_of(&s.rx).intersect(&resumed),
                    shadow: s.shadow.clone(),
                })
            })
            .collect();
        for &n in &nodes {
            let Some(p) = st.ports[usize::from(n)].as_ref() else {
                continue;
            };
            let caller = (p.uid, p.gid);
            for &(seg, gen) in &sb.resumed[&n].rx {
                if let Some(Some(s)) = st.segs.get_mut(seg as usize) {
                    let may = memchan_core::perm::check(
                        caller,
                        (s.uid, s.gid, s.mode),
                        4,
                        &s.name,
                        "map_rx",
                    );
                    if s.gen == gen && may.is_ok() {
                        s.rx.insert(NodeId(n));
                    }
                }
            }
        }
        let bids = lock_pages(st, &sb.resumed);
        st.groups = t
            .groups
            .iter()
            .map(|(name, m)| (name.clone(), set_of(m)))
            .collect();
        st.barrier_counts = t
            .barriers
            .iter()
            .filter_map(|(scope, c)| Some((*scope, c.as_slice().try_into().ok()?)))
            .collect();
        st.barrier_seen = t
            .barrier_seen
            .iter()
            .filter_map(|(scope, c)| Some((*scope, c.as_slice().try_into().ok()?)))
            .collect();
        // Arrivals at the active after the copy was taken: counted now, so that a
        // node that passed a barrier there does not hold the others at it.
        for &n in &nodes {
            for &(scope, number) in &sb.resumed[&n].barriers {
                count_arrival(st, NodeId(n), scope, number);
            }
        }
        st.epoch = st.epoch.max(t.epoch) + 1;
        let members = st.members();
        for &n in &nodes {
            let notice = PlanNotice {
                epoch: st.epoch,
                members,
                next_gseq: plan.next_gseq,
                renumbered: plan.renumber(&sb.resumed[&n].report),
            };
            st.send(NodeId(n), Kind::RailPlan, &[&notice.encode()]);
        }
        // The held packets are handled by the replaying thread, a slice at a time:
        // under one lock, tens of thousands of them took seconds on a busy machine,
        // and the hub's readers and timer, waiting for the lock, let nodes give the
        // hub up or found them silent.
        sb.phase = Phase::Replaying;
        sb.replay = Some(Replay {
            order: plan.order,
            next_gseq: plan.next_gseq,
            at: 0,
            tables: t,
            nodes,
            bids,
            started,
        });
        if let Some(r) = &sb.replayer {
            r.unpark();
        }
        st.standby = Some(sb);
    }

    /// Handles held frames for one slice of time: the held packets in the plan's
    /// order, each at its place, a node's other held frames (requests) in its seq
    /// order around them, then what the resumed nodes sent meanwhile. Once none is
    /// left the takeover is over.
    fn replay_slice(&self, st: &mut State) {
        // Out of the state while it runs, so that `frame` handles what it is given
        // rather than holding it again.
        let Some(mut sb) = st.standby.take() else {
            return;
        };
        let Some(mut rp) = sb.replay.take() else {
            st.standby = Some(sb);
            return;
        };
        let until = Instant::now() + REPLAY_SLICE;
        let mut n = 0u32;
        let mut time_left = || {
            n = n.wrapping_add(1);
            !n.is_multiple_of(32) || Instant::now() < until
        };
        while rp.at < rp.order.len() && time_left() {
            let (i, (o, s)) = (rp.at, rp.order[rp.at]);
            rp.at += 1;
            let Some(held) = live_held(&mut sb, st, o) else {
                continue;
            };
            while let Some((seq, kind, payload)) = held.pop_front() {
                if seq > s {
                    held.push_front((seq, kind, payload));
                    break;
                }
                if seq == s {
                    // `data` gives the next place: this packet's in the plan.
                    st.gseq = rp.next_gseq + i as u64 - 1;
                }
                self.frame(st, NodeId(o), seq, kind, &payload);
                if seq == s {
                    break;
                }
            }
        }
        let ordered = rp.at == rp.order.len();
        if ordered {
            st.gseq = st.gseq.max(rp.next_gseq + rp.order.len() as u64 - 1);
            // Then what is left, the nodes in turn.
            let mut any = true;
            while any && time_left() {
                any = false;
                for &o in &rp.nodes {
                    let Some(held) = live_held(&mut sb, st, o) else {
                        continue;
                    };
                    if let Some((seq, kind, payload)) = held.pop_front() {
                        self.frame(st, NodeId(o), seq, kind, &payload);
                        any = true;
                    }
                }
            }
        }
        let done = ordered && sb.resumed.values().all(|r| r.held.is_empty());
        if !done {
            sb.replay = Some(rp);
            st.standby = Some(sb);
            return;
        }
        sb.replanned = rp.order.len() as u64;
        sb.phase = Phase::TookOver;
        st.standby = Some(sb);
        let resumed = set_of(&rp.nodes);
        // The bids of nodes that are not members: those that did not come, and those
        // isolated before the switch whose slot clearing (a packet the hub makes, which
        // no sender holds for the plan) was lost with the old hub at some node.
        clear_bids(st, &rp.bids, &resumed);
        // Members that did not come: failed, as an isolation would have them.
        for m in rp
            .tables
            .members
            .iter()
            .filter(|m| !resumed.contains(NodeId(m.node)))
        {
            st.epoch += 1;
            st.event(NodeId(m.node), m.inc, event_kind::FAILED);
            tracing::warn!(node = m.node, "did not resume at the standby: failed");
        }
        tracing::warn!(
            nodes = ?rp.nodes,
            replanned = rp.order.len(),
            next_gseq = rp.next_gseq,
            epoch = st.epoch,
            took_ms = rp.started.elapsed().as_millis() as u64,
            "took over from the active hub"
        );
    }

    /// Waits the gathering's deadline out on the timer.
    pub(super) fn standby_tick(&self) {
        let mut st = self.lock();
        if st.standby.as_ref().is_some_and(|s| s.holding()) {
            self.check_takeover(&mut st);
        }
    }

    /// This hub's part in dual rail for `memchan status`.
    pub(super) fn rail_status(&self, st: &State) -> Option<RailStatus> {
        match &st.standby {
            Some(sb) => Some(sb.status(st.gseq)),
            None if self.cfg.rail => Some(RailStatus {
                role: "active".into(),
                gseq: st.gseq,
                ..RailStatus::default()
            }),
            None => None,
        }
    }
}

/// Lock pages at a takeover: each shadow (what a node mapping the page later is sent)
/// becomes the bids of the resumed node that applied the most of the old order, not
/// the copy of the tables, which misses the bids of its last heartbeat. That node
/// applied every packet of the page up to its last gseq (it receives all of them since
/// it mapped the page, and its snapshot then held the earlier ones), and every later
/// one was applied by no node, so its sender still holds it and the plan orders it
/// again, through the shadow. Each bid byte has one writer, its node (and the hub's
/// clearing of it), so a sender's held packets, a suffix of its writes, replayed onto
/// that copy leave each byte as the old order did. Returns, per lock page, the slots
/// that some node's copy showed taken.
fn lock_pages(st: &mut State, resumed: &HashMap<u16, Resumed>) -> Vec<(usize, NodeSet)> {
    let mut out = Vec::new();
    for (i, seg) in st.segs.iter_mut().enumerate() {
        let Some(s) = seg.as_mut() else { continue };
        let Some(shadow) = s.shadow.as_mut() else {
            continue;
        };
        let (cap, gen, rx) = (shadow.len(), s.gen, s.rx);
        // Copies of this page by nodes the standby counts as receiving it (their rx
        // claims checked against the segment's rights above).
        let copies = || {
            resumed.iter().filter_map(|(&n, r)| {
                let c = r.locks.iter().find(|c| c.0 as usize == i && c.1 == gen)?;
                (rx.contains(NodeId(n)) && c.2.len() <= cap).then_some((r.report.applied, &c.2))
            })
        };
        if let Some((_, best)) = copies().max_by_key(|c| c.0) {
            shadow[..best.len()].copy_from_slice(best);
        }
        out.push((i, copies().flat_map(|(_, c)| taken(c)).collect()));
    }
    out
}

/// The slots a lock page's bytes show taken.
fn taken(bids: &[u8]) -> impl Iterator<Item = NodeId> + '_ {
    bids.iter()
        .take(MAX_NODES)
        .enumerate()
        .filter(|b| *b.1 != 0)
        .map(|b| NodeId(b.0 as u16))
}

/// Clears, in every lock page, the bid of each node that is not a member (`members`):
/// taken in the page's shadow or in some resumed node's copy (`bids`).
fn clear_bids(st: &mut State, bids: &[(usize, NodeSet)], members: &NodeSet) {
    let mut clear = Vec::new();
    for (i, seg) in st.segs.iter().enumerate() {
        let Some(shadow) = seg.as_ref().and_then(|s| s.shadow.as_ref()) else {
            continue;
        };
        let mut slots: NodeSet = taken(shadow).collect();
        for b in bids.iter().filter(|b| b.0 == i) {
            b.1.iter().for_each(|n| slots.insert(n));
        }
        clear.extend(
            slots
                .iter()
                .filter(|n| !members.contains(*n))
                .map(|n| (i, n)),
        );
    }
    for (seg, slot) in clear {
        st.hub_write(seg, slot.index(), &[0]);
    }
}
