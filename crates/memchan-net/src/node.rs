//! The node side of the hub transport: a joined [`Node`] (join, membership, events,
//! segments, groups, ack, barrier, lock, leave), its requests to the hub, and the
//! transport contract's `Transport` impl.
//!
//! A write to a tx mapping becomes `Data` packets (at most [`memchan_link::wire::PACKET`] bytes
//! each) on the link to the hub. The node's service thread reads `Deliver` packets from
//! the hub and applies each to the rx mapping it names, in the hub's order, then
//! releases it; readers see the bytes with plain (atomic) loads. A node in the hub's
//! process (virtual hub) hands its packets to the hub directly and is handed its
//! deliveries.
//!
//! The node side's other parts live in their own modules, named as in `memchan-shm`,
//! and are re-exported here: `segment.rs` ([`Segment`]), `tx.rs` ([`TxMapping`]),
//! `mapping.rs` ([`RxMapping`]; the receive memory the link reader writes is
//! `rx.rs`), `lock.rs` ([`Lock`], [`LockGuard`]), `rma.rs` ([`Rma`]),
//! `state.rs` (the state the handles share) and `service.rs` (the service thread,
//! the reading of the link and the dispatch of what the hub sends).

use crate::service::LocalSlot;
use crate::state::{answer, garbled, Reading, Shared, Standby, Up, ALIVE};
use memchan_core::transport::{Caps, HubOps, Transport};
use memchan_core::{
    validate, Config, Dest, Error, GroupId, MembershipEvent, NodeId, NodeSet, PageSize, Result,
    TxAttrs, MAX_NODES,
};
use memchan_hub::{Hub, HubConfig};
use memchan_link::handshake::{self, HandshakeError};
use memchan_link::link::{Link, LinkConfig};
use memchan_link::proto::reply::JoinRefusal;
use memchan_link::proto::{self, code, Join, Op, SegInfo, ROLE_NODE};
use memchan_link::wire::{Get, Key, Kind};
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

pub use crate::lock::{Lock, LockGuard};
pub use crate::mapping::RxMapping;
pub use crate::rma::Rma;
pub use crate::segment::Segment;
pub use crate::tx::TxMapping;
pub use memchan_core::HubSpec;

/// How a node joins through a hub: the [`Config`] with its key read and its link
/// tunables resolved ([`NetConfig::from_config`]).
#[derive(Debug, Clone)]
pub struct NetConfig {
    /// The hub: one to connect to (with dual rail, its standby too), or one to host.
    pub hub: HubSpec,
    /// Cluster key.
    pub key: Key,
    /// Whether the key came from a secret.
    pub keyed: bool,
    /// Wanted page size.
    pub page_size: Option<PageSize>,
    /// Heartbeat period.
    pub heartbeat: Duration,
    /// Silence after which the hub (or a node) counts as failed.
    pub failure_timeout: Duration,
    /// Link tunables (replay memory, retransmit timeout).
    pub link: LinkConfig,
    /// The host domain (`Config::host_domain`; `None`: every write through the hub).
    pub host_domain: Option<String>,
    /// Direct links to nodes of other hosts (`Config::direct`).
    pub direct: bool,
}

impl NetConfig {
    /// The hub transport's view of a validated `cfg` (the key file read).
    ///
    /// # Errors
    /// `Invalid` without a hub in `cfg`; the key file's read errors.
    pub fn from_config(cfg: &Config) -> Result<NetConfig> {
        let hub = cfg.hub.clone().ok_or(Error::Invalid {
            what: "request",
            why: "the hub transport needs a hub address".into(),
        })?;
        let secret = read_key(cfg.key_file.as_deref())?;
        Ok(NetConfig {
            hub,
            key: secret.as_deref().map_or_else(Key::open, Key::from_secret),
            keyed: secret.is_some(),
            page_size: cfg.page_size,
            heartbeat: cfg.heartbeat,
            failure_timeout: cfg.failure_timeout,
            link: LinkConfig {
                replay_limit: cfg.replay_limit,
                ..LinkConfig::default()
            },
            host_domain: cfg.host_domain.clone(),
            direct: cfg.direct,
        })
    }
}

/// Reads the cluster key named by a config (`None`: an open cluster).
///
/// # Errors
/// `Os` if the file cannot be read, `Invalid` if it is empty.
pub fn read_key(path: Option<&std::path::Path>) -> Result<Option<Vec<u8>>> {
    let Some(path) = path else { return Ok(None) };
    let bytes = std::fs::read(path)
        .map_err(|e| Error::os(format!("read the cluster key file {}", path.display()), e))?;
    if bytes.trim_ascii().is_empty() {
        return Err(Error::Invalid {
            what: "cluster key file",
            why: format!("{} is empty", path.display()),
        });
    }
    Ok(Some(bytes.trim_ascii().to_vec()))
}

/// A failed join as an error: the refusals the one-host transport has too (a full
/// node table, another page size) get its typed errors, the rest `HubRefused` with
/// the handshake's reason.
fn join_error(addr: &str, cluster: &str, e: HandshakeError) -> Error {
    match e {
        HandshakeError::Refused(JoinRefusal::NodeTableFull) => Error::TableFull("node"),
        HandshakeError::Refused(JoinRefusal::PageSize {
            existing,
            requested,
        }) => Error::PageSizeMismatch {
            cluster: cluster.to_string(),
            existing: existing as usize,
            requested: requested as usize,
        },
        e => Error::HubRefused {
            addr: addr.to_string(),
            why: e.to_string(),
        },
    }
}

/// A node joined through a hub.
pub struct Node {
    sh: Arc<Shared>,
    service: Option<std::thread::JoinHandle<()>>,
    hub: Option<Arc<Hub>>,
}

fn host_name() -> String {
    rustix::system::uname()
        .nodename()
        .to_string_lossy()
        .into_owned()
}

impl Node {
    /// Joins cluster `name` through the hub `cfg.hub`.
    pub fn join(name: &str, cfg: NetConfig) -> Result<Node> {
        validate::cluster_name(name)?;
        let join = Join {
            hub_nonce: [0; 16],
            node_nonce: [0; 16],
            role: ROLE_NODE,
            page_size: cfg.page_size.map_or(0, |p| p.bytes() as u32),
            pid: std::process::id(),
            uid: rustix::process::geteuid().as_raw(),
            gid: rustix::process::getegid().as_raw(),
            cluster: name.to_string(),
            host: host_name(),
            domain: cfg
                .host_domain
                .as_deref()
                .map_or(proto::NO_DOMAIN, crate::domain::identity),
        };
        match &cfg.hub {
            HubSpec::Connect { active, standby } => {
                Self::join_remote(active, standby.as_deref(), name, &cfg, join)
            }
            HubSpec::Host(listen) => Self::join_local(listen, name, &cfg, join),
        }
    }

    fn join_remote(
        addr: &str,
        standby: Option<&str>,
        name: &str,
        cfg: &NetConfig,
        join: Join,
    ) -> Result<Node> {
        let j =
            handshake::join(addr, &cfg.key, join.clone()).map_err(|e| join_error(addr, name, e))?;
        let link_cfg = LinkConfig {
            peer_releases_on_receive: false,
            ..cfg.link.clone()
        };
        let link = Link::new(j.sock, j.key, j.dec, link_cfg.clone())
            .map_err(|e| Error::os("set up the hub link", e))?;
        let w = j.welcome;
        let dual_rail = standby.is_some();
        let standby = standby.map(|addr| Standby {
            addr: addr.to_string(),
            key: cfg.key.clone(),
            join: join.clone(),
            link: link_cfg.clone(),
        });
        let up = Up::Link(std::sync::RwLock::new(Arc::new(link)));
        let domain = cfg.host_domain.as_deref();
        let sh = Arc::new(Shared::new(
            name,
            &join,
            &w,
            up,
            standby,
            domain,
            cfg.failure_timeout,
        )?);
        let s = sh.clone();
        let (hb, timeout) = (cfg.heartbeat, cfg.failure_timeout);
        let service = std::thread::Builder::new()
            .name("memchan-node-link".into())
            .spawn(move || s.service(hb, timeout))
            .map_err(|e| Error::os("start the link thread", e))?;
        // Not with dual rail: a direct link is one path, with no standby to resume at.
        if cfg.direct && !dual_rail {
            // Both ends release what they take as they take it.
            let direct_cfg = LinkConfig {
                peer_releases_on_receive: true,
                window_bytes: 16 << 20,
                ..cfg.link.clone()
            };
            crate::direct::Directs::start(&sh, cfg.key.clone(), direct_cfg);
        }
        Ok(Node {
            sh,
            service: Some(service),
            hub: None,
        })
    }

    fn join_local(listen: &str, name: &str, cfg: &NetConfig, join: Join) -> Result<Node> {
        let hub = Hub::start(HubConfig {
            listen: listen.to_string(),
            cluster: Some(name.to_string()),
            key: cfg.key.clone(),
            keyed: cfg.keyed,
            page_size: cfg.page_size,
            heartbeat: cfg.heartbeat,
            failure_timeout: cfg.failure_timeout,
            link: cfg.link.clone(),
            ..HubConfig::default()
        })
        .map_err(|e| Error::os(format!("start the virtual hub on {listen}"), e))?;
        let hub = Arc::new(hub);
        // The port is attached before the node exists: frames for it wait in `pending`.
        let port = Arc::new(LocalSlot::default());
        let w = hub
            .attach_local(port.clone(), &join)
            .map_err(|r| join_error(listen, name, HandshakeError::Refused(r)))?;
        let domain = cfg.host_domain.as_deref();
        let sh = Arc::new(Shared::new(
            name,
            &join,
            &w,
            Up::Local(hub.clone()),
            None,
            domain,
            cfg.failure_timeout,
        )?);
        port.set(sh.clone());
        Ok(Node {
            sh,
            service: None,
            hub: Some(hub),
        })
    }

    /// This node's id.
    pub fn id(&self) -> NodeId {
        self.sh.me
    }
    /// This node's incarnation.
    pub fn incarnation(&self) -> u64 {
        self.sh.inc
    }
    /// The cluster name.
    pub fn cluster(&self) -> &str {
        &self.sh.cluster
    }
    /// Page size in bytes.
    pub fn page_size(&self) -> usize {
        self.sh.page.bytes()
    }
    /// Live members as last told by the hub.
    pub fn members(&self) -> NodeSet {
        self.sh.lock().members
    }
    /// Current epoch as last told by the hub.
    pub fn epoch(&self) -> u64 {
        self.sh.lock().epoch
    }
    /// The hub this node hosts (virtual hub), if any.
    pub fn hosted_hub(&self) -> Option<&Hub> {
        self.hub.as_deref()
    }

    /// What this node would hand a standby hub at a switch of rails (`memchan_link::rail`): what
    /// it applied of a dual-rail hub's numbered order, and the seqs of its own packets
    /// not yet released.
    pub fn rail_report(&self) -> memchan_link::rail::Report {
        let held = self
            .sh
            .link()
            .map_or_else(Vec::new, |l| l.unreleased(memchan_link::wire::Kind::Data));
        self.sh.rail_lock().report(self.sh.me.0, held)
    }

    /// Next membership event.
    pub fn next_event(&self, timeout: Option<Duration>) -> Option<MembershipEvent> {
        let deadline = timeout.map(|t| Instant::now() + t);
        let mut st = self.sh.lock();
        loop {
            if let Some(e) = st.events.pop_front() {
                return Some(e);
            }
            if self.sh.health.load(Ordering::Acquire) != ALIVE {
                // No more events will come; the next call that can fail says why.
                return None;
            }
            let left = match deadline {
                Some(d) => d.saturating_duration_since(Instant::now()),
                None => Duration::from_secs(1),
            };
            if left.is_zero() {
                return None;
            }
            st = self.sh.wait(st, left);
        }
    }

    /// Waits until at least `n` nodes are members.
    pub fn wait_for_members(&self, n: usize, timeout: Duration) -> Result<()> {
        let deadline = Instant::now() + timeout;
        let mut st = self.sh.lock();
        while st.members.len() < n {
            drop(st);
            self.sh.check()?;
            st = self.sh.lock();
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(Error::Timeout(timeout, "members"));
            }
            st = self.sh.wait(st, left);
        }
        Ok(())
    }

    /// Finds or creates a segment.
    pub fn segment(&self, name: &str, size: usize, mode: u32) -> Result<Segment> {
        self.open(name, true, size, mode, 0)
    }

    /// Opens an existing segment.
    pub fn open_segment(&self, name: &str) -> Result<Segment> {
        self.open(name, false, 0, 0, 0)
    }

    fn open(&self, name: &str, create: bool, size: usize, mode: u32, flags: u8) -> Result<Segment> {
        validate::stored_segment_name(name, flags & 1 != 0)?;
        if create {
            validate::segment_size(size as u64)?;
            validate::mode(mode)?;
        }
        let op = Op::SegOpen {
            create,
            size: size as u64,
            mode,
            flags,
            name: name.to_string(),
        };
        let body = self.sh.request(op)?;
        let info = SegInfo::get(&body).map_err(garbled)?;
        Ok(Segment::new(self.sh.clone(), name.to_string(), info))
    }

    /// Creates or finds a multicast group.
    pub fn create_group(&self, name: &str, members: &[NodeId]) -> Result<GroupId> {
        validate::group_name(name)?;
        // Ids past the table and an empty list are refused here; whether each id is a
        // member is the hub's to say: this node's view of a join may lag the hub's.
        let every_id = memchan_core::NodeSet([u64::MAX; memchan_core::MAX_NODES / 64]);
        let members = validate::group_members(members, &every_id)?;
        let op = Op::GroupCreate {
            name: name.to_string(),
            members,
        };
        let body = self.sh.request(op)?;
        let id = Get::new(&body, "group id").u16().map_err(garbled)?;
        Ok(GroupId(id))
    }

    /// Looks a group up.
    pub fn group(&self, name: &str) -> Result<GroupId> {
        let body = self.sh.request(Op::GroupLookup {
            name: name.to_string(),
        })?;
        let id = Get::new(&body, "group id").u16().map_err(garbled)?;
        Ok(GroupId(id))
    }

    /// Returns once every earlier write of this node was applied at every destination.
    pub fn ack(&self) -> Result<()> {
        // What went on direct links first: the hub knows nothing of it.
        let mut lost = NodeSet::EMPTY;
        if let Some(d) = self.sh.direct.get() {
            d.drain(None, self.sh.failure_timeout)?;
            lost = d.take_lost();
        }
        // Nothing sent since the last answered ack: every earlier write is covered
        // by it already (`Shared::sent`).
        let sent = self.sh.sent.load(Ordering::SeqCst);
        if sent == self.sh.acked.load(Ordering::SeqCst) {
            self.sh.check()?;
        } else {
            self.sh.request(Op::Ack)?;
            self.sh.acked.fetch_max(sent, Ordering::SeqCst);
        }
        // A packet the hub refused before this ack (its refusal comes first in the
        // hub's order) fails it.
        let refused = self.sh.lock().refused.take();
        if let Some((status, body)) = refused {
            answer(status, body)?;
        }
        if !lost.is_empty() {
            return Err(Error::AckIncomplete(lost.iter().collect()));
        }
        // Non-blocking gets complete by the ack too (OpenSHMEM's quiet).
        crate::rma::quiet(&self.sh)
    }

    /// The nodes this node now writes to on a direct link, one network hop (a link
    /// opens on the first point-to-point write to a node of another host; writes go
    /// through the hub until it is up).
    pub fn direct_links(&self) -> Vec<NodeId> {
        self.sh.direct.get().map(|d| d.up()).unwrap_or_default()
    }

    /// The members in this node's host domain, as the hub told it: the nodes whose
    /// receive memory it stores into (once they map the segment). A write to any
    /// other node goes over the network, with no look in `/dev/shm` for it.
    pub fn neighbours(&self) -> Vec<NodeId> {
        self.sh.lock().neighbours.iter().collect()
    }

    /// The TCP connections this node's direct links run on: one per pair of nodes
    /// that write to each other (the first one opened carries both ways), two only
    /// if both opened at once.
    pub fn direct_connections(&self) -> usize {
        self.sh.direct.get().map_or(0, |d| d.connections())
    }

    /// The global clock: the hub's, as estimated from its time packets (`clock.rs`);
    /// read directly in the hub's own process.
    ///
    /// # Errors
    /// `ClockNotSynchronised` until enough time packets and an echoed probe arrived.
    pub fn global_time(&self) -> Result<memchan_core::GlobalTime> {
        match &self.sh.up {
            Up::Local(_) => Ok(crate::clock::hub_time()),
            Up::Link(_) => self.sh.clock.global_time(),
        }
    }

    /// What this node's clock estimate rests on (`None`: not synchronised, or this
    /// node reads the hub's clock directly).
    pub fn clock_state(&self) -> Option<memchan_core::clock::ClockState> {
        match &self.sh.up {
            Up::Local(_) => None,
            Up::Link(_) => self.sh.clock.state(),
        }
    }

    /// Cluster barrier (earlier writes applied everywhere before anyone passes).
    pub fn barrier(&self) -> Result<()> {
        self.ack_before_barrier()?;
        self.sh.barrier(u16::MAX)
    }

    /// The ack that orders this node's writes before its arrival. The nodes an
    /// `AckIncomplete` names are gone (their link closed before releasing): a barrier
    /// is over the live members, so that is no reason to skip the arrival (which would
    /// also put this node's barriers out of step with the others').
    fn ack_before_barrier(&self) -> Result<()> {
        match self.ack() {
            Err(Error::AckIncomplete(_)) => Ok(()),
            r => r,
        }
    }

    /// Barrier over a group's live members.
    pub fn barrier_group(&self, g: GroupId) -> Result<()> {
        self.ack_before_barrier()?;
        self.sh.barrier(g.0)
    }

    /// The cluster lock `name`.
    pub fn lock(&self, name: &str) -> Result<Lock> {
        let seg = self.open(&validate::lock_segment(name)?, true, MAX_NODES, 0o666, 1)?;
        let rx = seg.map_rx()?;
        let tx = seg.map_tx(
            Dest::Broadcast,
            TxAttrs {
                local_copy: true,
                ..TxAttrs::default()
            },
        )?;
        Ok(Lock::new(self.sh.me.index(), rx, tx, self.sh.inc))
    }

    /// Leaves the cluster now.
    pub fn leave(mut self) {
        self.leave_now();
    }

    fn leave_now(&mut self) {
        if self.sh.health.load(Ordering::Acquire) == ALIVE {
            let _ = self
                .sh
                .request_within(Op::Leave, Some(Duration::from_secs(2)));
        }
        self.sh.stop.store(true, Ordering::Release);
        if let Some(d) = self.sh.direct.get() {
            d.stop();
        }
        if let Some(l) = self.sh.link() {
            l.shutdown();
        }
        if let Some(t) = self.service.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Node {
    fn drop(&mut self) {
        self.leave_now();
    }
}

/// Requests to the hub: the answer, or the hub's refusal as an [`Error`].
impl Shared {
    /// Arrives at the next barrier of `scope` (a group id, `u16::MAX` the cluster)
    /// and waits until it is passed.
    pub(crate) fn barrier(&self, scope: u16) -> Result<()> {
        let number = {
            let mut n = self
                .barrier_numbers
                .lock()
                .unwrap_or_else(|e| e.into_inner());
            let k = n.entry(scope).or_insert(0);
            *k += 1;
            *k
        };
        self.request(Op::Barrier {
            group: scope,
            number,
        })
        .map(drop)
    }

    /// Sends `op` and waits for the answer.
    ///
    /// No request has a fixed timer: the hub answers a segment or group request as it
    /// reads it, so its answer only waits behind this node's own backlog on the link, and
    /// it waits while the hub is alive (a silent hub is `HubLost` after the failure
    /// timeout). An ack the hub fails (`ACK_STALLED`) once its destinations released
    /// nothing for the failure timeout; a barrier (`BARRIER_STALLED`, `Error::Stalled`)
    /// once its missing members made no progress for the stall bound. So a slow backlog,
    /// or a member slow to reach the barrier, is never a failure.
    pub(crate) fn request(&self, op: Op) -> Result<Vec<u8>> {
        match self.request_within(op, None) {
            // The one answer that names the cluster.
            Err(Error::Stalled {
                what,
                waited,
                nodes,
                ..
            }) => Err(Error::Stalled {
                cluster: self.cluster.clone(),
                what,
                waited,
                nodes,
            }),
            r => r,
        }
    }

    /// Sends `op` and waits for the answer; `bound: None` waits while the hub is alive.
    pub(crate) fn request_within(&self, op: Op, bound: Option<Duration>) -> Result<Vec<u8>> {
        let new_id = || loop {
            // `NO_REQUEST` marks the hub's refusals of packets; the counter skips it
            // when it wraps.
            let id = self.next_req.fetch_add(1, Ordering::Relaxed);
            if id != proto::NO_REQUEST {
                break id;
            }
        };
        let mut id = new_id();
        let what = "the hub's answer";
        let mut switched = self.rail_switched();
        let mut asked_again = false;
        self.send(Kind::Request, &[&op.put(id)])?;
        let deadline = bound.map(|b| (Instant::now() + b, b));
        // Like a wait, the requesting thread reads the link itself: the answer wakes
        // it directly, and a service thread that stays off the link while another
        // application thread reads it cannot hold the answer back.
        let _reading = Reading::new(self);
        let (status, body) = loop {
            if let Some(r) = self.lock().responses.remove(&id) {
                break r;
            }
            self.check()?;
            if self.stop.load(Ordering::Acquire) {
                // The node left meanwhile (a direct link's opener asking as it did).
                return Err(Error::HubLost("the node left".into()));
            }
            if !switched && self.rail_switched() {
                switched = true;
                // The old hub may have read the request (and released its frame, so
                // the link does not replay it) and not answered before it was lost:
                // the standby is asked again, whatever the request. Until this was so
                // for every request (it was for acks and barriers only), a node that
                // was looking a group up as the hub died waited until it was isolated
                // (the rare stall of the rail ordering tests, ~1 run in 140). Every
                // request is safe to ask twice: a lookup or check reads, an open or
                // group create finds what the first made, a map or unmap of rx sets
                // what it set, an ack asked twice is one ack, an arrival is counted
                // once by its number, a second leave finds the node leaving, and a
                // free the old hub made is answered `SEGMENT_FREED` (taken as done).
                self.lock().abandon(id);
                id = new_id();
                asked_again = true;
                self.send(Kind::Request, &[&op.put(id)])?;
            }
            let slice = Duration::from_millis(100);
            let slice = match deadline {
                Some((d, timeout)) => {
                    let left = d.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        self.lock().abandon(id);
                        return Err(Error::Timeout(timeout, what));
                    }
                    left.min(slice)
                }
                None => slice,
            };
            self.progress(slice);
        };
        if asked_again && matches!(op, Op::SegFree { .. }) && status == code::SEGMENT_FREED {
            return Ok(Vec::new());
        }
        answer(status, body)
    }
}

impl Transport for Node {
    type Segment = Segment;
    type Tx = TxMapping;
    type Rx = RxMapping;
    type Lock = Lock;
    const NAME: &'static str = "hub";

    fn join(name: &str, cfg: &Config) -> Result<Node> {
        validate::cluster_name(name)?;
        cfg.validate()?;
        Node::join(name, NetConfig::from_config(cfg)?)
    }
    fn caps(&self) -> Caps {
        let hosted = if self.hub.is_some() {
            Caps::HOSTED_HUB
        } else {
            Caps::default()
        };
        Caps::ORDERED | Caps::NOTIFY | Caps::RELIABLE_LINKS | Caps::GET | Caps::ATOMICS | hosted
    }
    fn node_id(&self) -> NodeId {
        self.id()
    }
    fn incarnation(&self) -> u64 {
        self.incarnation()
    }
    fn cluster(&self) -> &str {
        self.cluster()
    }
    fn page_size(&self) -> usize {
        self.page_size()
    }
    fn members(&self) -> NodeSet {
        self.members()
    }
    fn epoch(&self) -> u64 {
        self.epoch()
    }
    fn next_event(&self, timeout: Option<Duration>) -> Option<MembershipEvent> {
        self.next_event(timeout)
    }
    fn wait_for_members(&self, n: usize, timeout: Duration) -> Result<()> {
        self.wait_for_members(n, timeout)
    }
    fn segment(&self, name: &str, size: usize, mode: u32) -> Result<Segment> {
        self.segment(name, size, mode)
    }
    fn open_segment(&self, name: &str) -> Result<Segment> {
        self.open_segment(name)
    }
    fn create_group(&self, name: &str, members: &[NodeId]) -> Result<GroupId> {
        self.create_group(name, members)
    }
    fn group(&self, name: &str) -> Result<GroupId> {
        self.group(name)
    }
    fn ack(&self) -> Result<()> {
        self.ack()
    }
    fn barrier(&self) -> Result<()> {
        self.barrier()
    }
    fn barrier_group(&self, g: GroupId) -> Result<()> {
        self.barrier_group(g)
    }
    fn lock(&self, name: &str) -> Result<Lock> {
        self.lock(name)
    }
    fn global_time(&self) -> Result<memchan_core::GlobalTime> {
        self.global_time()
    }
    fn leave(self) {
        self.leave()
    }
}

impl HubOps for Node {
    fn hosted_hub_addr(&self) -> Result<std::net::SocketAddr> {
        self.hub
            .as_ref()
            .map(|h| h.local_addr())
            .ok_or(Error::Unsupported(
                "a hosted hub (this node connects to one)",
            ))
    }
}

memchan_core::ops_from_inherent!(tx: TxMapping, rx: RxMapping, lock: Lock, guard: LockGuard);
