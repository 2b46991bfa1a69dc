//! The running interface: a transmit thread (TUN -> rings) and a receive thread
//! (rings -> TUN, membership, hellos, credits) over one segment. See [`crate::ring`]
//! for the layout and the hello.

use std::collections::BTreeMap;
use std::net::Ipv4Addr;
use std::sync::atomic::Ordering::{Acquire, Relaxed, Release, SeqCst};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use memchan::{Cluster, Dest, RxAttrs, RxMapping, Segment, TxAttrs, TxMapping};

use crate::addr::Route;
use crate::config::IpConfig;
use crate::counters::{CounterSnapshot, Counters};
use crate::error::IpError;
use crate::mcast::{self, ListRead, McLayout, McNext, McReader, McWriter};
use crate::ring::{self, credit_pos, credit_word, rec_len, Layout, Next, Reader, Writer};
use crate::spin::{self, SpinShare, SpinWindow};
use crate::tun::{vnet_hdr_ok, Tun, VNET_HDR};

/// How long a sender waits for a full unicast ring's credits before dropping.
const FULL_WAIT: Duration = Duration::from_millis(200);
/// Receive thread's sleep slice: membership and hello retries run at least this often.
const TICK: Duration = Duration::from_millis(20);
/// Packets read from the TUN device before the doorbells are rung anyway.
const BATCH: usize = 32;
/// How often the receive thread reads the kernel's multicast memberships: between
/// bursts of packets, and under unbroken traffic.
const IGMP_EVERY: Duration = Duration::from_millis(100);
const MC_BUSY_EVERY: Duration = Duration::from_secs(1);
/// Frames at most this long (the virtio_net_hdr and IP headers included) are
/// "small": an 8-byte TCP message is 70 bytes, an ack 62.
const SMALL: usize = 256;

/// A running IP interface over memchan. Stops (threads joined, interface gone) on
/// [`stop`](Self::stop) or drop.
pub struct IpNode {
    sh: Arc<Shared>,
    threads: Vec<JoinHandle<()>>,
    addr: Ipv4Addr,
    ifname: String,
}

/// The transmit side's view of one peer.
struct PeerTx {
    /// The unicast session: this node's ring in the peer's receive memory.
    session: Mutex<Option<Session>>,
    ready: AtomicBool,
    /// The peer's last CREDIT / BCREDIT words (tagged), copied by the receive thread.
    credit: AtomicU64,
    bcredit: AtomicU64,
}

struct Session {
    tx: TxMapping,
    w: Writer,
    start: u32,
    /// Where the peer starts reading this node's broadcast ring.
    bstart: u64,
    doorbell: u64,
}

struct Shared {
    cluster: Arc<Cluster>,
    lay: Layout,
    me: usize,
    my_inc: u64,
    max_len: usize,
    tun: Tun,
    c: Counters,
    stop: AtomicBool,
    peers: Vec<PeerTx>,
    /// The broadcast ring's head and seq, published by the transmit thread.
    bpub: Mutex<(u64, u32)>,
    credit_mx: Mutex<()>,
    credit_cv: Condvar,
    tx_waiting: AtomicBool,
    spin: Duration,
    interactive_spin: Duration,
    /// The last packet read from the TUN device, its length.
    tx_last_len: AtomicUsize,
    subnet: crate::addr::Subnet,
    txs: Mutex<TxState>,
    /// The multicast segments' layout, and the main segment's name (theirs start with it).
    mcl: McLayout,
    segment: String,
    ifname: String,
    /// Multicast routes, kept by the receive thread: each joined address and the
    /// sorted ids of the nodes that joined it (this one included), with a generation.
    mc_routes: Mutex<(u64, BTreeMap<Ipv4Addr, Vec<u16>>)>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// A start seq for a new session: never 0, unlikely to match an earlier one.
fn random_seq() -> u32 {
    use std::hash::{BuildHasher, Hasher};
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(Instant::now().elapsed().as_nanos());
    ring::next_seq(h.finish() as u32)
}

impl IpNode {
    /// Maps the rings, opens and configures the TUN interface, and starts the two
    /// threads. `cluster` is this node's membership (shared: the threads use it).
    ///
    /// # Errors
    /// [`IpError::Invalid`] for a configuration that cannot work,
    /// [`IpError::NodeOutOfRange`], the TUN errors ([`IpError::NoTunDevice`],
    /// [`IpError::NotPermitted`]), and the cluster's own (`SegmentSizeMismatch` when
    /// another node uses other sizes).
    pub fn start(cluster: Arc<Cluster>, cfg: &IpConfig) -> Result<IpNode, IpError> {
        let page = cluster.page_size();
        let invalid = |what, why: String| Err(IpError::Invalid { what, why });
        if !(576..=65535).contains(&cfg.mtu) {
            return invalid("mtu", format!("{}: 576..=65535", cfg.mtu));
        }
        let max_rec = rec_len(cfg.mtu as usize + VNET_HDR);
        if !cfg.ring_bytes.is_multiple_of(page) || cfg.ring_bytes < 4 * max_rec {
            return invalid(
                "ring size",
                format!(
                    "{} bytes: whole {page}-byte pages, at least 4 records of the MTU ({} bytes)",
                    cfg.ring_bytes,
                    4 * max_rec
                ),
            );
        }
        if !cfg.bcast_ring_bytes.is_multiple_of(page) || cfg.bcast_ring_bytes < 2 * max_rec {
            return invalid(
                "broadcast ring size",
                format!(
                    "{} bytes: whole {page}-byte pages, at least 2 records of the MTU ({} bytes)",
                    cfg.bcast_ring_bytes,
                    2 * max_rec
                ),
            );
        }
        if !(2..=usize::from(u16::MAX)).contains(&cfg.max_nodes)
            || cfg.max_nodes > memchan::MAX_NODES
        {
            return invalid(
                "max nodes",
                format!("{}: 2..={}", cfg.max_nodes, memchan::MAX_NODES),
            );
        }
        let lay = Layout {
            page,
            ring: cfg.ring_bytes,
            bring: cfg.bcast_ring_bytes,
            slots: cfg.max_nodes,
        };
        let me = cluster.node_id();
        let addr = match cfg.subnet.addr_of((cfg.max_nodes - 1) as u16) {
            Some(_) if me.index() < lay.slots => {
                cfg.subnet.addr_of(me.0).expect("within the slots")
            }
            _ => {
                return Err(IpError::NodeOutOfRange {
                    id: me.0,
                    slots: lay.slots,
                    subnet: cfg.subnet.to_string(),
                })
            }
        };
        let seg = cluster.segment(&cfg.segment, lay.segment_size(), 0o600)?;
        let rx = seg.map_rx_with(RxAttrs::default())?;
        let bell = RxAttrs {
            notify: true,
            ..RxAttrs::default()
        };
        // Every page of the rings posts notify: a record's word (its last write; the
        // body goes without notify) wakes the receiver, with no doorbell after it.
        for s in 0..lay.slots {
            rx.set_attrs(lay.hdr(s), lay.slot_size(), bell)?;
        }
        let btx = seg.map_tx(Dest::Broadcast, TxAttrs::default())?;
        let tun = Tun::open(&cfg.ifname, cfg.mtu, addr, cfg.subnet.prefix())?;
        tun.set_nonblocking().map_err(|source| IpError::Os {
            what: "making the TUN descriptor non-blocking",
            source,
        })?;
        let ifname = tun.name().to_string();
        let bseq = random_seq();
        let hub = cluster.transport() == memchan::TransportKind::Hub;
        let sh = Arc::new(Shared {
            my_inc: cluster.incarnation().max(1),
            cluster,
            lay,
            me: me.index(),
            max_len: cfg.mtu as usize + VNET_HDR,
            tun,
            c: Counters::default(),
            stop: AtomicBool::new(false),
            peers: (0..lay.slots)
                .map(|_| PeerTx {
                    session: Mutex::new(None),
                    ready: AtomicBool::new(false),
                    credit: AtomicU64::new(0),
                    bcredit: AtomicU64::new(0),
                })
                .collect(),
            bpub: Mutex::new((0, bseq)),
            credit_mx: Mutex::new(()),
            credit_cv: Condvar::new(),
            tx_waiting: AtomicBool::new(false),
            spin: cfg.spin,
            interactive_spin: cfg.interactive_spin.unwrap_or(if hub {
                Duration::ZERO
            } else {
                crate::config::INTERACTIVE_SPIN
            }),
            tx_last_len: AtomicUsize::new(0),
            subnet: cfg.subnet,
            txs: Mutex::new(TxState {
                btx,
                bw: Writer { head: 0, seq: bseq },
                buf: vec![0; cfg.mtu as usize + VNET_HDR],
                pending: vec![false; lay.slots],
                mc: BTreeMap::new(),
                mc_gen: 0,
            }),
            mcl: McLayout {
                page,
                ring: cfg.bcast_ring_bytes,
                slots: lay.slots,
            },
            segment: cfg.segment.clone(),
            ifname: ifname.clone(),
            mc_routes: Mutex::new((0, BTreeMap::new())),
        });
        let spawn = |name: &str, f: Box<dyn FnOnce() + Send>| {
            std::thread::Builder::new()
                .name(name.into())
                .spawn(f)
                .map_err(|source| IpError::Os {
                    what: "starting a thread",
                    source,
                })
        };
        let (s1, s2) = (sh.clone(), sh.clone());
        let mut threads = vec![spawn("ip-rx", Box::new(move || rx_loop(&s1, seg, rx)))?];
        match spawn("ip-tx", Box::new(move || tx_loop(&s2))) {
            Ok(t) => threads.push(t),
            Err(e) => {
                sh.stop.store(true, SeqCst);
                for t in threads {
                    let _ = t.join();
                }
                return Err(e);
            }
        }
        tracing::info!(%addr, ifname, node = me.0, "memchan ip up");
        Ok(IpNode {
            sh,
            threads,
            addr,
            ifname,
        })
    }

    /// This node's address.
    pub fn addr(&self) -> Ipv4Addr {
        self.addr
    }

    /// The TUN interface's name.
    pub fn ifname(&self) -> &str {
        &self.ifname
    }

    /// False once the interface stopped by itself (this node was isolated, or lost
    /// its hub): the caller should stop it and leave.
    pub fn is_running(&self) -> bool {
        !self.sh.stop.load(Relaxed)
    }

    /// The counters now.
    pub fn counters(&self) -> CounterSnapshot {
        self.sh.c.snapshot()
    }

    /// Peers this node is sending to now.
    pub fn peers_up(&self) -> usize {
        self.sh
            .peers
            .iter()
            .filter(|p| p.ready.load(Relaxed))
            .count()
    }

    /// Stops both threads and closes the interface; the final counters.
    pub fn stop(mut self) -> CounterSnapshot {
        self.halt();
        self.sh.c.snapshot()
    }

    fn halt(&mut self) {
        self.sh.stop.store(true, SeqCst);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl Drop for IpNode {
    fn drop(&mut self) {
        self.halt();
    }
}

// ---------------------------------------------------------------- transmit side

/// The transmit state: whoever holds it reads the TUN device, so packets leave in
/// the order the kernel queued them, whichever thread sends them.
struct TxState {
    /// This node's broadcast ring (a `Dest::Broadcast` mapping) and its writer.
    btx: TxMapping,
    bw: Writer,
    buf: Vec<u8>,
    /// Peers whose doorbell is due.
    pending: Vec<bool>,
    /// Multicast: this node's ring in each node set's segment, by the set's name
    /// (`None`: no group could be had for it; tried again when the routes change).
    mc: BTreeMap<String, Option<McTx>>,
    /// The routes' generation `mc` was made under.
    mc_gen: u64,
}

/// This node's ring in one multicast segment, written through a `Dest::Group` mapping.
struct McTx {
    tx: TxMapping,
    w: McWriter,
}

fn tx_loop(sh: &Shared) {
    while !sh.stop.load(Relaxed) {
        let ok = pump(sh, &mut lock(&sh.txs), false);
        if ok {
            sh.tun.poll_readable(100);
        } else {
            std::thread::sleep(TICK);
        }
    }
}

/// Reads every packet waiting on the TUN device, writes each into its ring, then
/// rings the doorbells. False if the device failed. The receive thread pumps with
/// `no_wait`: it stops while a peer's ring has no room for the largest packet, since
/// a sender waiting for credits needs that thread to take them (and to drain, so
/// that the peer can send its own credits); the transmit thread, woken by what is
/// left on the device, sends the rest.
fn pump(sh: &Shared, t: &mut TxState, no_wait: bool) -> bool {
    let mut n = 0;
    let ok = loop {
        if no_wait && !rings_have_room(sh) {
            break true;
        }
        match sh.tun.read(&mut t.buf) {
            Ok(Some(len)) => {
                route(sh, len, t);
                n += 1;
                if n % BATCH == 0 {
                    ring_doorbells(sh, &mut t.pending);
                }
            }
            Ok(None) => break true,
            Err(e) => {
                sh.c.errors.fetch_add(1, Relaxed);
                tracing::warn!(error = %e, "reading the TUN device");
                break false;
            }
        }
    };
    ring_doorbells(sh, &mut t.pending);
    ok
}

/// Whether every ready peer's unicast ring has room for a packet of the MTU.
fn rings_have_room(sh: &Shared) -> bool {
    let size = sh.lay.ring;
    sh.peers.iter().filter(|p| p.ready.load(Acquire)).all(|p| {
        let seen = p.credit.load(SeqCst);
        lock(&p.session)
            .as_ref()
            .is_none_or(|s| has_room(s, seen, size, sh.max_len))
    })
}

/// Whether session `s`'s ring of `size` bytes, with credit word `seen`, has room
/// for a packet of `len` bytes.
fn has_room(s: &Session, seen: u64, size: usize, len: usize) -> bool {
    let tail = credit_pos(seen, s.start).unwrap_or(0).min(s.w.head);
    s.w.head - tail + s.w.need(size, len) <= size as u64
}

/// Sends the frame (virtio_net_hdr and IP packet) of `len` bytes in `t.buf`.
fn route(sh: &Shared, len: usize, t: &mut TxState) {
    let frame = &t.buf[..len];
    let ip = frame.get(VNET_HDR..).unwrap_or_default();
    if ip.len() < 20 || ip[0] >> 4 != 4 {
        sh.c.drop_no_route.fetch_add(1, Relaxed);
        return;
    }
    let dst = Ipv4Addr::new(ip[16], ip[17], ip[18], ip[19]);
    let sent = match sh.subnet.route(dst) {
        Route::Node(id) if (id as usize) < sh.lay.slots && id as usize != sh.me => {
            send_unicast(sh, id as usize, frame, &mut t.pending)
        }
        Route::All => send_broadcast(sh, frame, &t.btx, &mut t.bw),
        Route::Multicast(group) => send_multicast(sh, group, len, t),
        _ => {
            sh.c.drop_no_route.fetch_add(1, Relaxed);
            false
        }
    };
    sh.tx_last_len.store(len, Relaxed);
    if sent {
        sh.c.tx_packets.fetch_add(1, Relaxed);
        sh.c.tx_bytes.fetch_add((len - VNET_HDR) as u64, Relaxed);
    }
}

/// Writes the multicast packet in `t.buf` once through the group of the nodes that
/// joined `group` (this one aside), and rings their doorbells; through the broadcast
/// ring if no memchan group can be had. True if sent.
fn send_multicast(sh: &Shared, group: Ipv4Addr, len: usize, t: &mut TxState) -> bool {
    let (gen, set) = {
        let r = lock(&sh.mc_routes);
        (r.0, r.1.get(&group).cloned().unwrap_or_default())
    };
    let me = sh.me as u16;
    if !set.iter().any(|&id| id != me) {
        sh.c.drop_no_route.fetch_add(1, Relaxed);
        return false;
    }
    if t.mc_gen != gen {
        // Sets that failed may work now; sets no longer routed are let go.
        t.mc_gen = gen;
        let live: Vec<String> = {
            let r = lock(&sh.mc_routes);
            r.1.values()
                .map(|s| mcast::set_name(&sh.segment, s))
                .collect()
        };
        t.mc.retain(|name, m| m.is_some() && live.contains(name));
    }
    let name = mcast::set_name(&sh.segment, &set);
    let mc = t
        .mc
        .entry(name)
        .or_insert_with_key(|name| match open_mc_tx(sh, name, &set) {
            Ok(m) => Some(m),
            Err(e) => {
                tracing::warn!(%group, error = %e, "memchan ip: no memchan group for a multicast group; using the broadcast ring");
                None
            }
        });
    let pkt = &t.buf[..len];
    let Some(m) = mc.as_mut() else {
        sh.c.mc_fallback.fetch_add(1, Relaxed);
        return send_broadcast(sh, pkt, &t.btx, &mut t.bw);
    };
    if let Err(e) = m.w.push(&m.tx, sh.mcl.ring_of(sh.me), pkt) {
        sh.c.errors.fetch_add(1, Relaxed);
        tracing::debug!(%group, error = %e, "multicast write");
        return false;
    }
    sh.c.tx_multicast.fetch_add(1, Relaxed);
    for &id in set.iter().filter(|&&id| id != me) {
        if sh.peers[usize::from(id)].ready.load(Relaxed) {
            t.pending[usize::from(id)] = true;
        }
    }
    true
}

/// The group and segment of node set `set` (named `name`), and a `Dest::Group`
/// mapping of it.
fn open_mc_tx(sh: &Shared, name: &str, set: &[u16]) -> memchan::Result<McTx> {
    let ids: Vec<memchan::NodeId> = set.iter().map(|&i| memchan::NodeId(i)).collect();
    let g = sh.cluster.create_group(name, &ids)?;
    let seg = sh.cluster.segment(name, sh.mcl.segment_size(), 0o600)?;
    let tx = seg.map_tx(Dest::Group(g), TxAttrs::default())?;
    tracing::info!(group = name, members = ?set, "memchan ip: multicast to a memchan group");
    Ok(McTx {
        tx,
        w: McWriter::default(),
    })
}

/// Writes `pkt` into peer `id`'s receive memory, waiting (up to [`FULL_WAIT`]) for
/// credits if its ring is full. True if sent.
fn send_unicast(sh: &Shared, id: usize, pkt: &[u8], pending: &mut [bool]) -> bool {
    let p = &sh.peers[id];
    if !p.ready.load(Acquire) {
        sh.c.drop_no_route.fetch_add(1, Relaxed);
        return false;
    }
    let size = sh.lay.ring;
    let mut deadline = None;
    loop {
        let seen = p.credit.load(SeqCst);
        {
            let mut g = lock(&p.session);
            let Some(s) = g.as_mut() else {
                sh.c.drop_no_route.fetch_add(1, Relaxed);
                return false;
            };
            if has_room(s, seen, size, pkt.len()) {
                return match s.w.push(&s.tx, sh.lay.uni(sh.me), size, pkt) {
                    Ok(()) => true,
                    Err(e) => {
                        sh.c.errors.fetch_add(1, Relaxed);
                        tracing::debug!(peer = id, error = %e, "unicast write");
                        false
                    }
                };
            }
            // Full: the receiver must be awake to return credits.
            ring_one(sh, s);
            pending[id] = false;
        }
        let now = Instant::now();
        let end = *deadline.get_or_insert_with(|| {
            sh.c.ring_full_waits.fetch_add(1, Relaxed);
            now + FULL_WAIT
        });
        if now >= end || sh.stop.load(Relaxed) {
            sh.c.drop_ring_full.fetch_add(1, Relaxed);
            return false;
        }
        wait_credit(sh, &p.credit, seen);
    }
}

/// Sleeps until a credit word other than `seen` arrives (or a short slice passes).
fn wait_credit(sh: &Shared, credit: &AtomicU64, seen: u64) {
    let g = lock(&sh.credit_mx);
    sh.tx_waiting.store(true, SeqCst);
    if credit.load(SeqCst) == seen {
        let _ = sh.credit_cv.wait_timeout(g, Duration::from_millis(10));
    }
    sh.tx_waiting.store(false, SeqCst);
}

/// Writes `pkt` once into every node's copy of this node's broadcast ring; dropped
/// if a live peer has not consumed enough of it. True if sent.
fn send_broadcast(sh: &Shared, pkt: &[u8], btx: &TxMapping, bw: &mut Writer) -> bool {
    let size = sh.lay.bring;
    let mut tail = bw.head;
    for p in sh.peers.iter().filter(|p| p.ready.load(Acquire)) {
        if let Some(s) = lock(&p.session).as_ref() {
            let t = credit_pos(p.bcredit.load(Acquire), s.start).unwrap_or(s.bstart);
            tail = tail.min(t.clamp(s.bstart.min(bw.head), bw.head));
        }
    }
    if bw.head - tail + bw.need(size, pkt.len()) > size as u64 {
        sh.c.drop_ring_full.fetch_add(1, Relaxed);
        return false;
    }
    if let Err(e) = bw.push(btx, sh.lay.bcast(sh.me), size, pkt) {
        sh.c.errors.fetch_add(1, Relaxed);
        tracing::debug!(error = %e, "broadcast write");
        return false;
    }
    *lock(&sh.bpub) = (bw.head, bw.seq);
    true
}

fn ring_doorbells(sh: &Shared, pending: &mut [bool]) {
    for (id, flag) in pending.iter_mut().enumerate() {
        if std::mem::take(flag) {
            if let Some(s) = lock(&sh.peers[id].session).as_mut() {
                ring_one(sh, s);
            }
        }
    }
}

/// Bumps the doorbell in the peer's copy of this node's header (its notify page).
fn ring_one(sh: &Shared, s: &mut Session) {
    s.doorbell += 1;
    if s.tx
        .write_u64(sh.lay.hdr(sh.me) + ring::DOORBELL, s.doorbell)
        .is_err()
    {
        sh.c.errors.fetch_add(1, Relaxed);
    }
}

// ----------------------------------------------------------------- receive side

/// The receive thread's state for one peer.
#[derive(Default)]
struct PeerRx {
    member: bool,
    /// This node's hello and credits go through it.
    ctrl: Option<TxMapping>,
    /// The peer incarnation this node's sending session is for (kept after the peer
    /// leaves, so its stale hello does not start a new one).
    w_inc: u64,
    /// The peer incarnation whose rings are being read, and their readers.
    r_inc: u64,
    peer_start: u32,
    uni: Option<Reader>,
    bc: Option<Reader>,
    uni_reported: u64,
    bc_reported: u64,
    hello_at: Option<Instant>,
    /// The incarnation of the peer last found of another record format (warned once).
    bad_format_inc: u64,
    /// The multicast list generation this node last published to the peer (0: none).
    mc_sent: u32,
    /// The peer's multicast list: the generation word last read, and the addresses.
    mc_seen: u64,
    mc: Vec<Ipv4Addr>,
}

/// The receive thread's multicast state.
struct McRx {
    /// This node's joined groups, their list generation (even), the last read.
    mine: Vec<Ipv4Addr>,
    gen: u32,
    read_at: Option<Instant>,
    /// The peers' lists changed: the routes need recomputing.
    dirty: bool,
    routes_gen: u64,
    /// The segments of the sets this node is in, by name, read one reader per sender.
    segs: BTreeMap<String, McSeg>,
    buf: Vec<u8>,
}

struct McSeg {
    rx: RxMapping,
    readers: Vec<McReader>,
    _seg: Segment,
}

fn rx_loop(sh: &Shared, seg: Segment, rx: RxMapping) {
    let mut st: Vec<PeerRx> = (0..sh.lay.slots).map(|_| PeerRx::default()).collect();
    let mut mc = McRx {
        mine: Vec::new(),
        gen: (random_seq() & !1) | 2,
        read_at: None,
        dirty: true,
        routes_gen: 0,
        segs: BTreeMap::new(),
        buf: vec![0; sh.max_len],
    };
    let mut epoch = u64::MAX;
    let mut warned_beyond = false;
    // Traffic since the last sleep: worth spinning for more.
    let mut active = false;
    // The largest packet delivered since the last sleep.
    let mut largest = 0;
    // Whether spinning gets this thread its core (else it stops spinning a while).
    let mut share = SpinShare::default();
    // The interactive spin's window, and when the one that caught nothing started.
    let mut window = SpinWindow::new(sh.interactive_spin);
    let mut missed_from = None;
    while !sh.stop.load(Relaxed) {
        let e = sh.cluster.epoch();
        if e != epoch {
            epoch = e;
            let members = sh.cluster.members();
            if !warned_beyond && members.iter().any(|m| m.index() >= sh.lay.slots) {
                warned_beyond = true;
                tracing::warn!(
                    slots = sh.lay.slots,
                    "nodes with ids past the IP slots get no address (raise --max-nodes)"
                );
            }
            for (id, p) in st.iter_mut().enumerate() {
                let now = id != sh.me && members.iter().any(|m| m.index() == id);
                if p.member && !now {
                    forget(sh, id, p);
                    mc.dirty = true;
                }
                p.member = now;
            }
        }
        let mut progress = false;
        for (id, p) in st.iter_mut().enumerate() {
            if !p.member {
                continue;
            }
            handshake(sh, &seg, &rx, id, p);
            let got = drain(sh, &rx, id, p);
            largest = largest.max(got);
            progress |= got > 0;
            take_credits(sh, &rx, id);
        }
        progress |= mc_drain(sh, &st, &mut mc);
        // Memberships are read between bursts, off the packets' path (under
        // unbroken traffic, once a second).
        let due = mc.read_at.map(|t| t.elapsed());
        if due.is_none_or(|d| d >= IGMP_EVERY && (!progress || d >= MC_BUSY_EVERY)) {
            mc_upkeep(sh, &rx, &mut st, &mut mc);
        }
        if progress {
            active = true;
            continue;
        }
        for p in st.iter_mut() {
            report_credits(sh, p, true);
        }
        // After traffic, spin a while before sleeping, sending too: an answer to
        // what was just delivered then leaves without waking the transmit thread,
        // and the next request finds this thread awake. After small packets both
        // ways (request and answer, not a stream and its acks) longer. An idle node
        // does not spin.
        let mut woke = false;
        if active {
            let interactive = largest <= SMALL && sh.tx_last_len.load(Relaxed) <= SMALL;
            let spin = if interactive {
                sh.spin.max(window.len())
            } else {
                sh.spin
            };
            let start = Instant::now();
            missed_from = None;
            if !spin.is_zero() && share.may_spin(start) {
                let cpu0 = spin::thread_cpu();
                let end = start + spin;
                while Instant::now() < end {
                    if let Ok(mut t) = sh.txs.try_lock() {
                        pump(sh, &mut t, true);
                    }
                    if rx.wait_spin(Some(Duration::ZERO)).unwrap_or(false) {
                        woke = true;
                        break;
                    }
                    std::thread::yield_now();
                }
                let now = Instant::now();
                sh.c.spins.fetch_add(1, Relaxed);
                if share.record(now - start, spin::thread_cpu() - cpu0, now) {
                    sh.c.spin_backoffs.fetch_add(1, Relaxed);
                }
                if !woke && interactive {
                    missed_from = Some(start);
                }
            }
        }
        if woke {
            continue;
        }
        largest = 0;
        match rx.wait(Some(TICK)) {
            Ok(w) => {
                active = w;
                if let Some(t) = missed_from.take() {
                    if window.missed(t.elapsed()) {
                        sh.c.spin_window_opens.fetch_add(1, Relaxed);
                    }
                }
            }
            Err(e) => {
                // Isolated, or the hub is gone: this node cannot take part any more.
                tracing::error!(error = %e, "memchan ip: this node can no longer receive; stopping");
                sh.c.errors.fetch_add(1, Relaxed);
                sh.stop.store(true, SeqCst);
            }
        }
    }
}

/// The peer left: stop sending to it and reading from it.
fn forget(sh: &Shared, id: usize, p: &mut PeerRx) {
    let tx = &sh.peers[id];
    tx.ready.store(false, SeqCst);
    *lock(&tx.session) = None;
    p.ctrl = None;
    p.uni = None;
    p.bc = None;
    p.hello_at = None;
    p.mc_sent = 0;
    p.mc_seen = 0;
    p.mc.clear();
    tracing::info!(peer = id, "memchan ip: peer gone");
}

/// Writes this node's hello into the peer's copy of its header: `start`/`bstart`
/// of the session for the peer incarnation `peer` (0: none yet), PEER last.
fn hello(sh: &Shared, ctrl: &TxMapping, start: u64, bstart: u64, peer: u64) -> memchan::Result<()> {
    let h = sh.lay.hdr(sh.me);
    ctrl.write_u64(h + ring::START, start)?;
    ctrl.write_u64(h + ring::BSTART, bstart)?;
    // FORMAT before INC: a reader that sees this incarnation sees its format.
    ctrl.write_u64(h + ring::FORMAT, ring::FORMAT_VERSION)?;
    ctrl.write_u64(h + ring::INC, sh.my_inc)?;
    ctrl.write_u64(h + ring::PEER, peer)
}

fn handshake(sh: &Shared, seg: &Segment, rx: &RxMapping, id: usize, p: &mut PeerRx) {
    if p.ctrl.is_none() {
        match seg.map_tx(Dest::Node(memchan::NodeId(id as u16)), TxAttrs::default()) {
            Ok(t) => p.ctrl = Some(t),
            Err(e) => {
                tracing::debug!(peer = id, error = %e, "mapping tx to a peer");
                return;
            }
        }
    }
    let Some(ctrl) = p.ctrl.as_ref() else { return };
    let h = sh.lay.hdr(id);
    let load = |off| rx.load_u64(h + off).unwrap_or(0);
    // Read PEER first: the words written before it are this hello's.
    let peer_field = load(ring::PEER);
    let inc = load(ring::INC);
    let format = load(ring::FORMAT);
    if inc != 0 && format != ring::FORMAT_VERSION {
        // Another build: its records would be misread both ways.
        if p.bad_format_inc != inc {
            p.bad_format_inc = inc;
            tracing::warn!(
                peer = id,
                format,
                ours = ring::FORMAT_VERSION,
                "memchan ip: a peer of another record format (another memchan build); not exchanging packets with it"
            );
        }
        return;
    }
    // Sending side: any hello of a new incarnation proves it maps the rings.
    if inc != 0 && inc != p.w_inc {
        match seg.map_tx(Dest::Node(memchan::NodeId(id as u16)), TxAttrs::default()) {
            Ok(tx) => {
                let start = random_seq();
                let (bhead, bseq) = *lock(&sh.bpub);
                let ptx = &sh.peers[id];
                ptx.ready.store(false, SeqCst);
                *lock(&ptx.session) = Some(Session {
                    tx,
                    w: Writer {
                        head: 0,
                        seq: start,
                    },
                    start,
                    bstart: bhead,
                    doorbell: 0,
                });
                let starts = u64::from(start) | (u64::from(bseq) << 32);
                if hello(sh, ctrl, starts, bhead, inc).is_ok() {
                    p.w_inc = inc;
                    p.mc_sent = 0;
                    ptx.ready.store(true, SeqCst);
                    tracing::info!(peer = id, "memchan ip: sending to peer");
                }
            }
            Err(e) => tracing::debug!(peer = id, error = %e, "mapping tx to a peer"),
        }
    } else if p.w_inc == 0 || inc == 0 {
        // Not known to each other yet: say hello every tick until the peer maps.
        let due = p.hello_at.is_none_or(|t| t.elapsed() >= TICK);
        if due && hello(sh, ctrl, 0, 0, 0).is_ok() {
            p.hello_at = Some(Instant::now());
        }
    }
    // Receiving side: the peer's session for this incarnation of ours.
    if peer_field == sh.my_inc && inc != p.r_inc {
        let starts = load(ring::START);
        let bstart = load(ring::BSTART);
        let (us, bs) = (starts as u32, (starts >> 32) as u32);
        if us != 0 && bs != 0 && bstart.is_multiple_of(ring::ALIGN as u64) {
            p.r_inc = inc;
            p.peer_start = us;
            p.uni = Some(Reader { pos: 0, seq: us });
            p.bc = Some(Reader {
                pos: bstart,
                seq: bs,
            });
            p.uni_reported = 0;
            p.bc_reported = bstart;
            // A new incarnation publishes its own multicast list from scratch.
            p.mc_seen = 0;
            tracing::info!(peer = id, "memchan ip: receiving from peer");
        }
    }
}

/// Hands the peer's new packets to the TUN device; the largest one's length (0: none).
fn drain(sh: &Shared, rx: &RxMapping, id: usize, p: &mut PeerRx) -> usize {
    let mut largest = 0;
    let rings = [
        (&mut p.uni, sh.lay.uni(id), sh.lay.ring),
        (&mut p.bc, sh.lay.bcast(id), sh.lay.bring),
    ];
    for (reader, base, size) in rings {
        let Some(r) = reader.as_mut() else { continue };
        for _ in 0..64 {
            match r.peek(rx, base, size, sh.max_len) {
                Next::Empty => break,
                Next::Packet { off, len } => {
                    // The header is copied out and checked here, and the kernel gets
                    // that copy: the sender could change the one in the ring meanwhile.
                    let mut hdr = [0u8; VNET_HDR];
                    if len < VNET_HDR || rx.read(off, &mut hdr).is_err() {
                        sh.c.bad_frames.fetch_add(1, Relaxed);
                    } else {
                        // SAFETY: `peek` checked `off..off + len` lies in the ring,
                        // inside the mapping, which lives across the call.
                        unsafe {
                            deliver(sh, &hdr, rx.as_ptr().add(off + VNET_HDR), len - VNET_HDR)
                        };
                    }
                    r.advance(len);
                    largest = largest.max(len);
                }
                Next::Bad(why) => {
                    sh.c.bad_records.fetch_add(1, Relaxed);
                    tracing::warn!(peer = id, why, "memchan ip: abandoning a peer's ring");
                    *reader = None;
                    break;
                }
            }
        }
    }
    if largest > 0 {
        report_credits(sh, p, false);
    }
    largest
}

/// Hands a received frame to the kernel, if its header `hdr` (this process's
/// copy) passes [`vnet_hdr_ok`]; counts what became of it. True if delivered.
///
/// # Safety
/// `pkt..pkt + len` stays mapped for the call (see [`Tun::write_frame`]).
unsafe fn deliver(sh: &Shared, hdr: &[u8; VNET_HDR], pkt: *const u8, len: usize) -> bool {
    if !vnet_hdr_ok(hdr, len) {
        sh.c.bad_frames.fetch_add(1, Relaxed);
        return false;
    }
    // SAFETY: the caller keeps the packet mapped; `hdr` is borrowed for the call.
    match unsafe { sh.tun.write_frame(hdr, pkt, len) } {
        Ok(()) => {
            sh.c.rx_packets.fetch_add(1, Relaxed);
            sh.c.rx_bytes.fetch_add(len as u64, Relaxed);
            true
        }
        Err(_) => {
            sh.c.errors.fetch_add(1, Relaxed);
            false
        }
    }
}

/// Tells the peer how much of its rings this node consumed: at once past a quarter
/// ring, or when idle (`idle`) past two full records (so a sender that waits for
/// room always gets it).
fn report_credits(sh: &Shared, p: &mut PeerRx, idle: bool) {
    let Some(ctrl) = p.ctrl.as_ref() else { return };
    let h = sh.lay.hdr(sh.me);
    if let Some(r) = p.uni {
        let unreported = r.pos - p.uni_reported;
        let batch = if idle {
            2 * rec_len(sh.max_len)
        } else {
            sh.lay.ring / 4
        };
        if unreported > 0
            && unreported >= batch as u64
            && ctrl
                .write_u64(h + ring::CREDIT, credit_word(r.pos, p.peer_start))
                .is_ok()
        {
            p.uni_reported = r.pos;
        }
    }
    if let Some(r) = p.bc {
        let unreported = r.pos.wrapping_sub(p.bc_reported);
        if unreported > 0
            && (idle || unreported >= (sh.lay.bring / 4) as u64)
            && ctrl
                .write_u64(h + ring::BCREDIT, credit_word(r.pos, p.peer_start))
                .is_ok()
        {
            p.bc_reported = r.pos;
        }
    }
}

/// Copies the peer's credit words for this node's rings to the transmit side, and
/// wakes the transmit thread if it waits for them.
fn take_credits(sh: &Shared, rx: &RxMapping, id: usize) {
    let h = sh.lay.hdr(id);
    let p = &sh.peers[id];
    let c = rx.load_u64(h + ring::CREDIT).unwrap_or(0);
    let b = rx.load_u64(h + ring::BCREDIT).unwrap_or(0);
    p.bcredit.store(b, Release);
    if p.credit.swap(c, SeqCst) != c && sh.tx_waiting.load(SeqCst) {
        let _g = lock(&sh.credit_mx);
        sh.credit_cv.notify_all();
    }
}

// ------------------------------------------------------------------ multicast

/// The multicast bookkeeping: this node's memberships (from the kernel) to the
/// peers, the peers' lists into the routes, the segments of this node's sets mapped.
fn mc_upkeep(sh: &Shared, rx: &RxMapping, st: &mut [PeerRx], mc: &mut McRx) {
    mc.read_at = Some(Instant::now());
    match std::fs::read_to_string("/proc/net/igmp") {
        Ok(text) => {
            let now = mcast::joined_groups(&text, &sh.ifname);
            if now != mc.mine {
                tracing::info!(groups = ?now, "memchan ip: multicast memberships");
                mc.mine = now;
                mc.gen = mc.gen.wrapping_add(2).max(2);
                mc.dirty = true;
            }
        }
        Err(e) => tracing::debug!(error = %e, "reading /proc/net/igmp"),
    }
    for (id, p) in st.iter_mut().enumerate() {
        if !p.member {
            continue;
        }
        match mcast::read_list(rx, sh.lay.hdr(id), p.mc_seen) {
            ListRead::Unchanged => {}
            ListRead::New(g, list) => {
                p.mc_seen = g;
                p.mc = list;
                mc.dirty = true;
            }
            ListRead::Bad(why) => {
                sh.c.bad_records.fetch_add(1, Relaxed);
                tracing::warn!(
                    peer = id,
                    why,
                    "memchan ip: ignoring a peer's multicast list"
                );
                p.mc_seen = rx.load_u64(sh.lay.hdr(id) + mcast::MC_GEN).unwrap_or(0);
                p.mc.clear();
                mc.dirty = true;
            }
        }
    }
    if std::mem::take(&mut mc.dirty) {
        reroute(sh, st, mc);
    }
    // Published once the peer maps the rings (its hello), again on every change;
    // after `reroute` mapped this node's segments, so the first packets land.
    for p in st.iter_mut().filter(|p| p.member) {
        if let (Some(ctrl), true) = (p.ctrl.as_ref(), p.w_inc != 0 && p.mc_sent != mc.gen) {
            if mcast::publish(ctrl, sh.lay.hdr(sh.me), mc.gen, &mc.mine).is_ok() {
                p.mc_sent = mc.gen;
            }
        }
    }
}

/// Hands the packets waiting in this node's multicast segments to the TUN device;
/// true if there were any.
fn mc_drain(sh: &Shared, st: &[PeerRx], mc: &mut McRx) -> bool {
    let mut any = false;
    for s in mc.segs.values_mut() {
        for (id, r) in s.readers.iter_mut().enumerate() {
            if id == sh.me || !st[id].member {
                continue;
            }
            for _ in 0..64 {
                let next = r.next(
                    &s.rx,
                    |off, b| s.rx.read(off, b),
                    sh.mcl.ring_of(id),
                    sh.max_len,
                    &mut mc.buf,
                );
                match next {
                    McNext::Empty => break,
                    McNext::Skipped => {
                        sh.c.mc_skipped.fetch_add(1, Relaxed);
                    }
                    McNext::Packet(len) => {
                        any = true;
                        // A copy already, checked not overrun: its header is this
                        // process's own.
                        match mc.buf[..len].split_first_chunk::<VNET_HDR>() {
                            Some((hdr, pkt)) => {
                                // SAFETY: `pkt` is a live slice for the call.
                                if unsafe { deliver(sh, hdr, pkt.as_ptr(), pkt.len()) } {
                                    sh.c.rx_multicast.fetch_add(1, Relaxed);
                                }
                            }
                            None => {
                                sh.c.bad_frames.fetch_add(1, Relaxed);
                            }
                        }
                    }
                }
            }
        }
    }
    any
}

/// Recomputes the routes (each joined address and the nodes that joined it) for the
/// transmit side, and maps rx the segments of the sets this node is in (letting go
/// of the others).
fn reroute(sh: &Shared, st: &[PeerRx], mc: &mut McRx) {
    let mut routes: BTreeMap<Ipv4Addr, Vec<u16>> = BTreeMap::new();
    for &a in &mc.mine {
        routes.entry(a).or_default().push(sh.me as u16);
    }
    for (id, p) in st.iter().enumerate().filter(|(_, p)| p.member) {
        for &a in &p.mc {
            routes.entry(a).or_default().push(id as u16);
        }
    }
    for set in routes.values_mut() {
        set.sort_unstable();
        set.dedup();
    }
    let wanted: Vec<String> = mc
        .mine
        .iter()
        .filter_map(|a| routes.get(a))
        .map(|set| mcast::set_name(&sh.segment, set))
        .collect();
    mc.segs.retain(|name, _| wanted.contains(name));
    for name in wanted {
        if mc.segs.contains_key(&name) {
            continue;
        }
        let mapped = sh
            .cluster
            .segment(&name, sh.mcl.segment_size(), 0o600)
            .and_then(|seg| Ok((seg.map_rx()?, seg)));
        match mapped {
            Ok((rx, seg)) => {
                mc.segs.insert(
                    name,
                    McSeg {
                        rx,
                        readers: vec![McReader::default(); sh.mcl.slots],
                        _seg: seg,
                    },
                );
            }
            // Tried again at the next change; meanwhile this node misses the group.
            Err(e) => {
                tracing::warn!(segment = name, error = %e, "memchan ip: mapping a multicast segment")
            }
        }
    }
    mc.routes_gen += 1;
    *lock(&sh.mc_routes) = (mc.routes_gen, routes);
}
