//! Direct links: a point-to-point write to a node of another host goes on a TCP link
//! between the two nodes, one network hop, not up to the hub and down again.
//!
//! **Set-up.** A node that joins through a hub listens on its hub link's address and
//! tells the hub its port (`Op::DirectListen`). A sender's first point-to-point write
//! to a node it cannot store into asks the hub for a direct link (`Op::DirectOpen`):
//! the hub sends the destination a `DirectExpect` (who will connect, with the uid and
//! gid it joined with, and a fresh pair secret) and answers the sender with the
//! destination's address and the same secret. The handshake proves the secret (and,
//! on a keyed cluster, the cluster key: `Key::direct`) both ways before a frame is
//! taken; the link's frames are MACed under keys derived from it and both sides'
//! nonces. Refused (the destination takes no direct links, an old hub) or failed,
//! the sender writes to that destination through the hub. **One link per pair**: the
//! destination writes back on the link it accepted (`Directs::offer`; the hub's
//! answer gave the sender the destination's uid and gid to check those writes by),
//! so that an answer rides the stream of the question.
//!
//! **Each end checks** what arrives as the hub would: a `Data` packet for this
//! node alone, a segment it maps rx in that generation, the range, and the sender's
//! right to write it by the uid and gid the hub vouched for. A refused packet is
//! answered on the link as the hub answers one (the sender's next `ack` fails).
//!
//! **Order** (rule 1 across the two paths, as the sticky rule of `tx.rs` for stores):
//! a write on a direct link first waits for an ack covering every earlier frame through
//! the hub that may reach its destination (`Shared::settle`); a frame through the hub
//! that may reach a node first waits until that node released everything sent to it
//! on a direct link ([`Directs::drain`]), so neither path overtakes the other. An
//! `ack` drains every direct link, then asks the hub. Multi-destination writes and
//! the services stay on the hub; remote reads and atomics take the link as writes
//! do (`rma.rs`), answered on it.

use crate::state::Shared;
use memchan_core::{Error, NodeId, NodeSet, Result};
use memchan_link::handshake::{self, read_frame, write_frame, STEP};
use memchan_link::link::{Handler, Link, LinkConfig, LinkError};
use memchan_link::proto::{self, DirectExpect, DirectWay, Op};
use memchan_link::wire::{Decoder, FrameKey, Get, Key, Kind, Put};
use rustix::event::epoll;
use std::collections::HashMap;
use std::net::{SocketAddr, TcpListener, TcpStream, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, RwLock, Weak};
use std::time::{Duration, Instant};

/// Handshakes under way at once: a flood of connections that never speak ties up
/// this many threads for a [`STEP`] each, no more.
const HANDSHAKES: usize = 16;
/// How long a sender writes to a destination through the hub after a link to it
/// was refused or failed, before it tries again.
const RETRY: Duration = Duration::from_secs(1);
/// The link's timer period while frames are unconfirmed.
const TICK: Duration = Duration::from_millis(10);

/// What a sender knows of its direct link to one destination.
enum Way {
    Up(Arc<Link>),
    /// Being opened: through the hub meanwhile.
    Opening,
    /// Through the hub (refused, or the link failed) until this instant (or the
    /// destination's incarnation changes): a destination that joined a moment ago may
    /// not have told the hub its port yet.
    Hub(Instant),
}

/// A pair link: the other node, the link, the uid and gid the hub vouched for.
type Inbound = (u16, Arc<Link>, (u32, u32));
/// A link another node opened: it, its incarnation, the link, its uid and gid.
type Accepted = (u16, u64, Arc<Link>, (u32, u32));

/// A node's direct links, both ways.
pub(crate) struct Directs {
    key: Key,
    link: LinkConfig,
    listener: TcpListener,
    /// The hub's `DirectExpect`s not yet used, by sender.
    expect: Mutex<HashMap<u16, DirectExpect>>,
    expected: Condvar,
    /// Outgoing, by destination (with its incarnation).
    out: RwLock<HashMap<u16, (u64, Way)>>,
    /// Incoming, by sender, with the uid and gid the hub vouched for.
    inbound: Mutex<Vec<Inbound>>,
    /// Whether `inbound` has any link (read without its lock on every wait).
    any_inbound: AtomicBool,
    /// The incoming links' sockets and the node's wake-up descriptor: what a thread
    /// waiting for data polls.
    poll: rustix::fd::OwnedFd,
    /// Destinations whose link is up and not yet written to.
    fresh: Mutex<std::collections::HashSet<u16>>,
    /// Set once anything was sent on a direct link: until then no hub frame waits.
    used: AtomicBool,
    /// Remote accesses asked on a direct link and not yet answered: request id ->
    /// the node asked and the link (its address). Only that node's answer on that
    /// link is taken; a link that ends answers its own as lost.
    asked: Mutex<HashMap<u32, (u16, usize)>>,
    /// Destinations whose link failed with writes unreleased: the next ack fails
    /// naming them.
    lost: Mutex<NodeSet>,
    handshakes: AtomicUsize,
    threads: Mutex<Vec<std::thread::JoinHandle<()>>>,
    stop: AtomicBool,
}

impl Directs {
    /// Listens on the hub link's address, becomes `sh.direct` and tells the hub;
    /// `None` if it cannot listen (every write then goes through the hub).
    pub(crate) fn start(sh: &Arc<Shared>, key: Key, link: LinkConfig) -> Option<Arc<Directs>> {
        let ip = sh.link()?.local_addr().ok()?.ip();
        let listener = TcpListener::bind(SocketAddr::new(ip, 0)).ok()?;
        let port = listener.local_addr().ok()?.port();
        let poll = epoll::create(epoll::CreateFlags::CLOEXEC).ok()?;
        epoll::add(
            &poll,
            &sh.wake,
            epoll::EventData::new_u64(0),
            epoll::EventFlags::IN,
        )
        .ok()?;
        let d = Arc::new(Directs {
            key,
            link,
            listener,
            expect: Mutex::default(),
            expected: Condvar::new(),
            out: RwLock::default(),
            inbound: Mutex::default(),
            any_inbound: AtomicBool::new(false),
            poll,
            fresh: Mutex::default(),
            used: AtomicBool::new(false),
            asked: Mutex::default(),
            lost: Mutex::new(NodeSet::EMPTY),
            handshakes: AtomicUsize::new(0),
            threads: Mutex::default(),
            stop: AtomicBool::new(false),
        });
        let (s, dd) = (Arc::downgrade(sh), d.clone());
        let t = std::thread::Builder::new()
            .name("memchan-direct-accept".into())
            .spawn(move || dd.accept(s))
            .ok()?;
        d.keep(t);
        // Ready for the hub's `DirectExpect`s before the hub may send one.
        let _ = sh.direct.set(d.clone());
        if let Err(e) = sh.request(Op::DirectListen { port }) {
            // Nobody opens a link to this node; its own writes may still open some.
            tracing::debug!(error = %e, "the hub takes no direct links to this node");
        }
        Some(d)
    }

    fn keep(&self, t: std::thread::JoinHandle<()>) {
        let mut ts = self.threads.lock().unwrap_or_else(|e| e.into_inner());
        ts.retain(|t| !t.is_finished());
        ts.push(t);
    }

    /// Ends every link and thread (the node leaves).
    pub(crate) fn stop(&self) {
        self.stop.store(true, Ordering::Release);
        let _ = rustix::net::shutdown(&self.listener, rustix::net::Shutdown::Read);
        for (_, w) in self.out.read().unwrap_or_else(|e| e.into_inner()).values() {
            if let Way::Up(l) = w {
                l.shutdown();
            }
        }
        for (_, l, _) in self
            .inbound
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
        {
            l.shutdown();
        }
        self.expected.notify_all();
        let ts = std::mem::take(&mut *self.threads.lock().unwrap_or_else(|e| e.into_inner()));
        for t in ts {
            let _ = t.join();
        }
    }

    /// Makes the incoming links' threads listen for frames, or not, as `away()`
    /// says (`Link::listen`: the first application thread to wait and the last).
    pub(crate) fn listen(&self, away: impl Fn() -> bool) {
        for (_, l, _) in self
            .inbound
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
        {
            l.listen(&away);
        }
    }

    /// Whether `id` is a request asked of `from` on `link` (then it is no more).
    fn take_asked(&self, id: u32, from: NodeId, link: &Link) -> bool {
        let mut a = self.asked.lock().unwrap_or_else(|e| e.into_inner());
        let ours = a.get(&id) == Some(&(from.0, std::ptr::from_ref(link) as usize));
        if ours {
            a.remove(&id);
        }
        ours
    }

    /// The requests asked on `link`, which ended, get their answer: lost, as the
    /// writes a failed link held (`AckIncomplete` naming the node: whether an
    /// atomic took effect is not known).
    fn lose_asked(&self, sh: &Shared, from: u16, link: &Arc<Link>) {
        let at = Arc::as_ptr(link) as usize;
        let mut lost = Vec::new();
        self.asked
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|id, w| {
                let keep = *w != (from, at);
                if !keep {
                    lost.push(*id);
                }
                keep
            });
        if lost.is_empty() {
            return;
        }
        let mut gone = NodeSet::EMPTY;
        gone.insert(NodeId(from));
        let r = proto::reply::Refusal::AckIncomplete(gone);
        let (status, body) = (r.code(), r.put());
        let mut st = sh.lock();
        for id in lost {
            st.answered(id, status, &body);
        }
        drop(st);
        sh.wake_other_readers();
    }

    /// The links this node has, whichever side opened them.
    pub(crate) fn connections(&self) -> usize {
        self.inbound.lock().unwrap_or_else(|e| e.into_inner()).len()
    }

    /// Whether any node of another host has a link to this one.
    pub(crate) fn has_inbound(&self) -> bool {
        self.any_inbound.load(Ordering::Acquire)
    }

    /// The poll set of the incoming links and the wake-up descriptor.
    pub(crate) fn poll_set(&self) -> std::os::fd::BorrowedFd<'_> {
        use std::os::fd::AsFd;
        self.poll.as_fd()
    }

    /// Reads what the incoming links have, in the calling thread (one waiting for
    /// data), never waiting for a socket.
    pub(crate) fn read_inbound(&self, sh: &Shared) {
        let links: Vec<Inbound> = self
            .inbound
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        for (from, l, caller) in links {
            let mut w = Waiting(
                sh,
                Sender {
                    from: NodeId(from),
                    caller,
                    // The link's own thread logs the first refusal.
                    refused: 1,
                    answers: Vec::new(),
                },
            );
            let _ = l.receive(&mut w);
            w.1.answer(&l);
        }
    }

    /// Whether this is the first write on the link to `to` (then no more).
    fn first_use(&self, to: NodeId) -> bool {
        self.fresh
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&to.0)
    }

    /// The destinations written to on a direct link now.
    pub(crate) fn up(&self) -> Vec<NodeId> {
        let out = self.out.read().unwrap_or_else(|e| e.into_inner());
        let mut v: Vec<NodeId> = out
            .iter()
            .filter(|(_, (_, w))| matches!(w, Way::Up(l) if !l.is_down()))
            .map(|(n, _)| NodeId(*n))
            .collect();
        v.sort();
        v
    }

    /// The hub says `e.from` may connect.
    pub(crate) fn expect(&self, e: DirectExpect) {
        self.expect
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(e.from, e);
        self.expected.notify_all();
    }

    /// Node `n` left, failed or joined anew: its links are of no use any more, and a
    /// sender may try a link to its new incarnation.
    pub(crate) fn forget(&self, n: NodeId) {
        if let Some((_, Way::Up(l))) = self
            .out
            .write()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&n.0)
        {
            l.shutdown();
        }
        let mut inb = self.inbound.lock().unwrap_or_else(|e| e.into_inner());
        inb.retain(|(from, l, _)| {
            let keep = *from != n.0;
            if !keep {
                l.shutdown();
            }
            keep
        });
        self.any_inbound.store(!inb.is_empty(), Ordering::Release);
        self.expect
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&n.0);
    }

    /// The link to write to `to` on; `None`: through the hub. The first call for a
    /// destination starts opening one on a thread of its own, so that no write
    /// waits for a handshake: until it is up, writes go through the hub (and the
    /// first on the link waits for them to be applied, `Shared::settle`).
    fn way(self: &Arc<Self>, sh: &Arc<Shared>, to: NodeId) -> Option<Arc<Link>> {
        let retry =
            |w: Option<&(u64, Way)>| matches!(w, Some((_, Way::Hub(t))) if Instant::now() >= *t);
        {
            let out = self.out.read().unwrap_or_else(|e| e.into_inner());
            match out.get(&to.0) {
                Some((_, Way::Up(l))) => return Some(l.clone()),
                w if w.is_some() && !retry(w) => return None,
                _ => {}
            }
        }
        let mut out = self.out.write().unwrap_or_else(|e| e.into_inner());
        let w = out.get(&to.0);
        if (w.is_some() && !retry(w)) || self.stop.load(Ordering::Acquire) {
            return None;
        }
        out.insert(to.0, (0, Way::Opening));
        drop(out);
        let (d, s) = (self.clone(), sh.clone());
        let t = std::thread::Builder::new()
            .name("memchan-direct-open".into())
            .spawn(move || {
                let way = match d.open(&s, to) {
                    Ok((inc, l)) => (inc, Way::Up(l)),
                    Err(e) => {
                        tracing::debug!(to = to.0, error = %e, "no direct link: writes through the hub");
                        (0, Way::Hub(Instant::now() + RETRY))
                    }
                };
                let mut out = d.out.write().unwrap_or_else(|e| e.into_inner());
                match out.get_mut(&to.0) {
                    Some(slot @ (_, Way::Opening)) => {
                        if matches!(way.1, Way::Up(_)) {
                            d.fresh
                                .lock()
                                .unwrap_or_else(|e| e.into_inner())
                                .insert(to.0);
                        }
                        *slot = way;
                    }
                    // The destination's link came first and carries the pair's writes
                    // (`offer`); this one stays up, as the destination may write on it.
                    Some((_, Way::Up(_))) => {}
                    // Forgotten meanwhile (the destination left or joined anew).
                    _ => {
                        if let Way::Up(l) = way.1 {
                            l.shutdown();
                        }
                    }
                }
            });
        match t {
            Ok(t) => self.keep(t),
            Err(_) => {
                self.out
                    .write()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(to.0, (0, Way::Hub(Instant::now() + RETRY)));
            }
        }
        None
    }

    /// Asks the hub for a way to `to`, connects and shakes hands (the sender's side).
    fn open(self: &Arc<Self>, sh: &Arc<Shared>, to: NodeId) -> Result<(u64, Arc<Link>)> {
        let body = sh.request_within(Op::DirectOpen { to: to.0 }, Some(STEP))?;
        let way = DirectWay::get(&body).map_err(|e| Error::Invalid {
            what: "direct way",
            why: e.to_string(),
        })?;
        let fail = |what: &str, e: &dyn std::fmt::Display| Error::Invalid {
            what: "direct link",
            why: format!("{what} {}: {e}", way.addr),
        };
        let deadline = Instant::now() + STEP;
        let sa = way
            .addr
            .to_socket_addrs()
            .map_err(|e| fail("resolve", &e))?
            .next()
            .ok_or_else(|| fail("resolve", &"no address"))?;
        let mut sock = TcpStream::connect_timeout(&sa, STEP).map_err(|e| fail("connect to", &e))?;
        sock.set_nodelay(true).map_err(|e| fail("set up", &e))?;
        let hello = Put::new().u16(sh.me.0).u64(sh.inc).0;
        write_frame(&mut sock, &FrameKey::open(), Kind::Hello, &hello)
            .map_err(|e| fail("write to", &e))?;
        let mut dec = Decoder::new(None);
        let (h, p) =
            read_frame(&mut sock, &mut dec, deadline).map_err(|e| fail("hello from", &e))?;
        if h.kind != Kind::Hello || p.len() != 16 {
            return Err(fail("hello from", &"not a direct link's hello"));
        }
        let theirs: [u8; 16] = p[..16].try_into().expect("16 bytes");
        let mine = handshake::nonce()?;
        let pair = self.key.direct(&way.secret);
        write_frame(&mut sock, &pair.join(&theirs), Kind::Join, &mine)
            .map_err(|e| fail("write to", &e))?;
        let keys = pair.link(&theirs, &mine);
        let mut dec2 = Decoder::new(Some(keys.to_node));
        dec2.push(&dec.take_pending());
        let (h, _) =
            read_frame(&mut sock, &mut dec2, deadline).map_err(|e| fail("welcome from", &e))?;
        if h.kind != Kind::Welcome {
            return Err(fail("welcome from", &format!("{:?}", h.kind)));
        }
        sock.set_read_timeout(None)
            .map_err(|e| fail("set up", &e))?;
        let link = Link::new(sock, keys.to_hub, dec2, self.link.clone())
            .map_err(|e| Error::os("set up a direct link", e))?;
        let link = Arc::new(link);
        let (s, l, d) = (Arc::downgrade(sh), link.clone(), self.clone());
        let caller = (way.uid, way.gid);
        let t = std::thread::Builder::new()
            .name("memchan-direct-out".into())
            .spawn(move || d.serve_pair(&s, to.0, &l, caller))
            .map_err(|e| Error::os("start a direct link's thread", e))?;
        self.keep(t);
        Ok((way.inc, link))
    }

    /// Accepts connections until the node leaves.
    fn accept(self: Arc<Self>, sh: Weak<Shared>) {
        loop {
            let conn = self.listener.accept();
            if self.stop.load(Ordering::Acquire) {
                return;
            }
            let Ok((sock, _)) = conn else {
                // A transient failure (no descriptors, a reset before accept): the
                // next connection may do better.
                std::thread::sleep(Duration::from_millis(10));
                continue;
            };
            if self.handshakes.fetch_add(1, Ordering::AcqRel) >= HANDSHAKES {
                self.handshakes.fetch_sub(1, Ordering::AcqRel);
                continue;
            }
            let (d, s) = (self.clone(), sh.clone());
            let t = std::thread::Builder::new()
                .name("memchan-direct-in".into())
                .spawn(move || {
                    let r = d.welcome(sock);
                    d.handshakes.fetch_sub(1, Ordering::AcqRel);
                    let me = s.upgrade().map(|s| s.me);
                    if let (Some((from, inc, link, caller)), Some(me)) = (r, me) {
                        d.offer(me, from, inc, &link);
                        d.serve_pair(&s, from, &link, caller);
                    }
                });
            match t {
                Ok(t) => self.keep(t),
                Err(_) => {
                    self.handshakes.fetch_sub(1, Ordering::AcqRel);
                }
            }
        }
    }

    /// The destination's side of a handshake: who connects, the hub's word for it,
    /// the proof of the pair key. `None` (the connection dropped) on anything else.
    fn welcome(&self, mut sock: TcpStream) -> Option<Accepted> {
        let deadline = Instant::now() + STEP;
        sock.set_nodelay(true).ok()?;
        let mut dec = Decoder::new(None);
        let (h, p) = read_frame(&mut sock, &mut dec, deadline).ok()?;
        let mut g = Get::new(&p, "direct hello");
        let (from, inc) = (g.u16().ok()?, g.u64().ok()?);
        if h.kind != Kind::Hello {
            return None;
        }
        // The hub's word may still be on its way on this node's hub link.
        let e = {
            let mut ex = self.expect.lock().unwrap_or_else(|e| e.into_inner());
            loop {
                if let Some(e) = ex.get(&from).filter(|e| e.inc == inc) {
                    break e.clone();
                }
                let left = deadline.saturating_duration_since(Instant::now());
                if left.is_zero() || self.stop.load(Ordering::Acquire) {
                    tracing::warn!(from, "a direct link nobody announced refused");
                    return None;
                }
                ex = self
                    .expected
                    .wait_timeout(ex, left)
                    .unwrap_or_else(|e| e.into_inner())
                    .0;
            }
        };
        let mine = handshake::nonce().ok()?;
        write_frame(&mut sock, &FrameKey::open(), Kind::Hello, &mine).ok()?;
        let pair = self.key.direct(&e.secret);
        let mut dec2 = Decoder::new(Some(pair.join(&mine)));
        dec2.push(&dec.take_pending());
        let (h, p) = match read_frame(&mut sock, &mut dec2, deadline) {
            Ok(r) => r,
            Err(err) => {
                tracing::warn!(from, error = %err, "a direct link's handshake failed");
                return None;
            }
        };
        let theirs: [u8; 16] = p.get(..16)?.try_into().ok()?;
        if h.kind != Kind::Join {
            return None;
        }
        // Used once: a second connection needs a new word from the hub.
        self.expect
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&from);
        let keys = pair.link(&mine, &theirs);
        let mut dec3 = Decoder::new(Some(keys.to_hub));
        dec3.push(&dec2.take_pending());
        sock.set_read_timeout(None).ok()?;
        let link = Arc::new(Link::new(sock, keys.to_node, dec3, self.link.clone()).ok()?);
        link.send_control(Kind::Welcome, &[]);
        Some((from, inc, link, (e.uid, e.gid)))
    }

    /// A link `from` opened to this node carries this node's writes to `from` as
    /// well: one connection per pair, so that an answer rides the TCP stream of the
    /// question as in a ping-pong over one socket (measured over loopback, a second
    /// connection for the way back cost 2.5-3 µs one way: the pure TCP
    /// acknowledgements of two one-way streams). Not if this node has a link of its
    /// own up (its writes stay on it: rule 1), or is opening one and has the lower
    /// id (both opening at once: the lower id's link is the pair's).
    fn offer(&self, me: NodeId, from: u16, inc: u64, link: &Arc<Link>) {
        let mut out = self.out.write().unwrap_or_else(|e| e.into_inner());
        let take = match out.get(&from) {
            None | Some((_, Way::Hub(_))) => true,
            Some((_, Way::Opening)) => from < me.0,
            Some((_, Way::Up(_))) => false,
        };
        if take {
            out.insert(from, (inc, Way::Up(link.clone())));
            self.fresh
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .insert(from);
        }
    }

    /// Serves a pair's link, whichever side opened it, until it ends: the other
    /// node's writes are applied once checked against the uid and gid the hub
    /// vouched for, its releases and refusals of this node's writes are taken, and
    /// an application thread waiting for data reads the link itself meanwhile (it
    /// is in the poll set).
    fn serve_pair(&self, sh: &Weak<Shared>, from: u16, link: &Arc<Link>, caller: (u32, u32)) {
        let Some(heartbeat) = sh.upgrade().map(|s| s.heartbeat) else {
            link.shutdown();
            return;
        };
        let polled = epoll::add(
            &self.poll,
            link.fd(),
            epoll::EventData::new_u64(1),
            epoll::EventFlags::IN,
        );
        if polled.is_err() {
            link.shutdown();
            return;
        }
        {
            let mut inb = self.inbound.lock().unwrap_or_else(|e| e.into_inner());
            inb.push((from, link.clone(), caller));
            self.any_inbound.store(true, Ordering::Release);
        }
        let mut h = In {
            sh: sh.clone(),
            from: Sender {
                from: NodeId(from),
                caller,
                refused: 0,
                answers: Vec::new(),
            },
        };
        serve(link, sh, heartbeat, &mut h);
        let _ = epoll::delete(&self.poll, link.fd());
        if let Some(s) = sh.upgrade() {
            self.lose_asked(&s, from, link);
        }
        let mut inb = self.inbound.lock().unwrap_or_else(|e| e.into_inner());
        inb.retain(|(_, l, _)| !Arc::ptr_eq(l, link));
        self.any_inbound.store(!inb.is_empty(), Ordering::Release);
    }

    /// Waits until every destination in `to` (`None`: all) released what this node
    /// sent it on a direct link: before a frame through the hub that may reach it,
    /// and at an ack.
    ///
    /// # Errors
    /// `Timeout` if a destination released nothing for `timeout`. A link that failed
    /// with writes unreleased is not an error here: [`take_lost`](Self::take_lost).
    pub(crate) fn drain(&self, to: Option<NodeId>, timeout: Duration) -> Result<()> {
        if !self.used.load(Ordering::Acquire) {
            return Ok(());
        }
        let links: Vec<(u16, Arc<Link>)> = {
            let out = self.out.read().unwrap_or_else(|e| e.into_inner());
            out.iter()
                .filter(|(n, _)| to.is_none_or(|t| t.0 == **n))
                .filter_map(|(n, (_, w))| match w {
                    Way::Up(l) => Some((*n, l.clone())),
                    _ => None,
                })
                .collect()
        };
        for (n, l) in links {
            if !l.wait_released(timeout) {
                tracing::warn!(to = n, "a direct link's destination released nothing");
                return Err(Error::Timeout(
                    timeout,
                    "a destination to release the acknowledged writes (a direct link)",
                ));
            }
            if l.is_down() && l.replay_bytes() > 0 {
                self.lost
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(NodeId(n));
            }
        }
        Ok(())
    }

    /// The destinations whose direct link failed with writes unreleased since the
    /// last call: what the ack then fails with.
    pub(crate) fn take_lost(&self) -> NodeSet {
        std::mem::replace(
            &mut *self.lost.lock().unwrap_or_else(|e| e.into_inner()),
            NodeSet::EMPTY,
        )
    }
}

impl Shared {
    /// Sends a `Data` packet: on a direct link when it is for one node of another
    /// host that takes them, else through the hub.
    pub(crate) fn send_data(self: &Arc<Self>, to: Option<NodeId>, parts: &[&[u8]]) -> Result<()> {
        if let Some(n) = to {
            if self.send_direct(n, parts)? {
                return Ok(());
            }
        }
        self.send_to(to, Kind::Data, parts)
    }

    /// Sends a point-to-point `Data` packet to `to` on a direct link, if there is one
    /// (`false`: the caller sends it through the hub).
    pub(crate) fn send_direct(self: &Arc<Self>, to: NodeId, parts: &[&[u8]]) -> Result<bool> {
        self.send_direct_as(to, Kind::Data, parts, |_| {})
    }

    /// Sends remote access `id` of `to`'s memory (an `RmaRequest` payload) on the
    /// direct link to it, as [`send_direct`](Self::send_direct) sends a packet: behind
    /// this node's earlier writes to `to`, and only if those that went through the
    /// hub were acked. `to` answers on the link (`rma::serve::serve_direct`).
    pub(crate) fn send_direct_rma(
        self: &Arc<Self>,
        to: NodeId,
        id: u32,
        payload: &[u8],
    ) -> Result<bool> {
        let asked = |l: &Arc<Link>| {
            if let Some(d) = self.direct.get() {
                d.asked
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(id, (to.0, Arc::as_ptr(l) as usize));
            }
        };
        let sent = self.send_direct_as(to, Kind::RmaRequest, &[payload], asked);
        if !matches!(sent, Ok(true)) {
            if let Some(d) = self.direct.get() {
                d.asked
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&id);
            }
        }
        sent
    }

    /// [`send_direct`](Self::send_direct) of a frame of `kind`; `before` runs with
    /// the link just before the frame goes on it.
    fn send_direct_as(
        self: &Arc<Self>,
        to: NodeId,
        kind: Kind,
        parts: &[&[u8]],
        before: impl FnOnce(&Arc<Link>),
    ) -> Result<bool> {
        let Some(d) = self.direct.get() else {
            return Ok(false);
        };
        let Some(l) = d.way(self, to) else {
            return Ok(false);
        };
        self.check()?;
        // Earlier frames through the hub that may reach `to` and no ack since: this
        // write follows them through the hub, which costs no wait (the sticky path),
        // and writes go direct again after the next ack. Only a link just up waits
        // for them once (`settle`), or a sender that never acks would never use it.
        let need = self
            .hazard_any
            .load(Ordering::SeqCst)
            .max(self.hazard_to[to.index()].load(Ordering::SeqCst));
        if need > self.acked.load(Ordering::SeqCst) {
            if !d.first_use(to) {
                return Ok(false);
            }
            self.settle(to)?;
        }
        d.used.store(true, Ordering::Release);
        before(&l);
        match l.send(kind, parts) {
            Ok(_) => Ok(true),
            Err(LinkError::Stalled(t)) => Err(Error::Timeout(
                t,
                "a destination to release (back-pressure)",
            )),
            Err(_) => {
                // The link failed: what it held unreleased fails the next ack, and
                // this and later writes go through the hub.
                if l.replay_bytes() > 0 {
                    d.lost.lock().unwrap_or_else(|e| e.into_inner()).insert(to);
                }
                if let Some(e) = d
                    .out
                    .write()
                    .unwrap_or_else(|e| e.into_inner())
                    .get_mut(&to.0)
                {
                    e.1 = Way::Hub(Instant::now() + RETRY);
                }
                Ok(false)
            }
        }
    }
}

/// Reads and times one direct link until it fails, goes silent or the node leaves.
/// Not listened to while an application thread waits for data: that thread reads
/// it itself (`Directs::read_inbound`), so a frame wakes only it, as on the hub link
/// (`Link::serve_wait`).
fn serve(link: &Link, sh: &Weak<Shared>, heartbeat: Duration, h: &mut In) {
    let mut last_tick = Instant::now();
    loop {
        let Some(s) = sh.upgrade() else { break };
        if s.stop.load(Ordering::Acquire) || link.is_down() {
            break;
        }
        let timeout = s.failure_timeout;
        let away = || s.app_reading.away();
        // An idle link sleeps to its next heartbeat; a frame that arrives wakes it.
        let slice = if link.idle() { heartbeat } else { TICK };
        if link.serve_wait(slice, away) {
            let r = link.receive(h);
            h.from.answer(link);
            if r.is_err() {
                break;
            }
        }
        drop(s);
        if last_tick.elapsed() >= TICK {
            last_tick = Instant::now();
            link.tick();
            if link.silent_past(timeout).is_some() {
                tracing::warn!(peer = %link.peer, "a direct link went silent");
                break;
            }
        }
        link.heartbeat_if_quiet(heartbeat);
    }
    link.shutdown();
}

/// A pair link's reader: applies what the other node writes, once checked.
struct In {
    sh: Weak<Shared>,
    from: Sender,
}

/// The other node of a pair link.
struct Sender {
    from: NodeId,
    /// The uid and gid the hub vouched for.
    caller: (u32, u32),
    /// Packets refused on this link so far (only the first is logged).
    refused: u64,
    /// Answers to the other node's remote accesses, sent once the read is over (a
    /// send that met back-pressure inside it would wait for releases that only a
    /// read can take).
    answers: Vec<Vec<u8>>,
}

impl Handler for In {
    fn frame(&mut self, link: &Link, seq: u64, kind: Kind, payload: &[u8]) {
        match self.sh.upgrade() {
            Some(sh) => self.from.frame(&sh, link, seq, kind, payload),
            None => link.release(seq),
        }
    }
}

/// An incoming link read by a thread waiting for data.
struct Waiting<'a>(&'a Shared, Sender);

impl Handler for Waiting<'_> {
    fn frame(&mut self, link: &Link, seq: u64, kind: Kind, payload: &[u8]) {
        self.1.frame(self.0, link, seq, kind, payload);
    }
}

impl Sender {
    fn frame(&mut self, sh: &Shared, link: &Link, seq: u64, kind: Kind, payload: &[u8]) {
        match kind {
            Kind::Data => {
                if let Err(e) = self.apply(sh, payload) {
                    self.refused += 1;
                    if self.refused == 1 {
                        tracing::warn!(from = self.from.0, error = %e, "packet on a direct link refused");
                    }
                    let r = proto::reply::Refusal::of(&e);
                    let answer = proto::response(proto::NO_REQUEST, r.code(), &r.put());
                    let _ = link.send(Kind::Response, &[&answer]);
                }
            }
            Kind::RmaRequest => {
                let answer = crate::rma::serve::serve_direct(sh, self.from, self.caller, payload);
                self.answers.extend(answer);
            }
            Kind::Response => match proto::get_response(payload) {
                // The other node refused a packet of this node's: the next ack fails.
                Ok((proto::NO_REQUEST, status, body)) => {
                    tracing::warn!(
                        to = self.from.0,
                        "a direct link's destination refused a packet"
                    );
                    sh.lock().refused.get_or_insert((status, body.to_vec()));
                }
                // Only the answer to a request asked of that node on this link.
                Ok((id, status, body)) => {
                    let ours = sh
                        .direct
                        .get()
                        .is_some_and(|d| d.take_asked(id, self.from, link));
                    if ours && sh.lock().answered(id, status, body) {
                        sh.wake_other_readers();
                    }
                }
                Err(_) => {}
            },
            _ => {}
        }
        link.release(seq);
    }

    /// Sends the answers the last read made.
    fn answer(&mut self, link: &Link) {
        for a in self.answers.drain(..) {
            let _ = link.send(Kind::Response, &[&a]);
        }
    }

    fn apply(&self, sh: &Shared, payload: &[u8]) -> Result<()> {
        let bad = |why: &str| Error::Invalid {
            what: "direct packet",
            why: why.into(),
        };
        let d = proto::get_data(payload).map_err(|e| bad(&e.to_string()))?;
        let known = proto::FLAG_RECORD | proto::FLAG_QUIET;
        if d.dest != memchan_core::Dest::Node(sh.me) || d.flags & !known != 0 {
            return Err(bad("not a point-to-point packet for this node"));
        }
        {
            let map = sh.rx.read().unwrap_or_else(|e| e.into_inner());
            // Not mapped (any more) here, or another generation: dropped, as the hub
            // drops a packet for a segment its destination unmapped.
            let Some(m) = map.get(&d.seg).filter(|m| m.gen == d.gen) else {
                return Ok(());
            };
            // A sender the hub failed (or that left) since: nothing more of it is
            // applied, as through the hub, whose member set it left first.
            if m.fenced(self.from) {
                return Ok(());
            }
            let (name, uid, gid, mode) = &m.owner;
            memchan_core::perm::check(self.caller, (*uid, *gid, *mode), 2, name, "map_tx")?;
        }
        sh.deliver(&proto::Deliver {
            origin: self.from.0,
            seg: d.seg,
            gen: d.gen,
            offset: d.offset,
            flags: d.flags,
            data: d.data,
        });
        Ok(())
    }
}
