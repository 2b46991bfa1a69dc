//! The hub's gate: every connection until its join is verified. Anyone who reaches
//! the hub's port gets this far, so what a connection costs here is bounded and has no
//! thread of its own:
//!
//! - one thread serves all pending connections, with nonblocking sockets and epoll;
//! - a pending connection holds at most one join frame ([`MAX_JOIN`] bytes of
//!   payload; a longer one is refused from its header), and nothing before its first
//!   byte arrives; the 256 KiB buffers of a link come only with a verified join;
//! - at most `max_pending` connections are pending at once, and at most
//!   `max_pending_per_source` from one source (an IPv4 address, an IPv6 /64). Over the
//!   per-source cap a new connection is refused at once; over the global cap it takes
//!   the place of the oldest pending one if that has waited [`EVICT_AFTER`] (a slow or
//!   idle holder, where a real node answers the hello within a round trip), else it is
//!   refused at once. Refusals for a cap are [`JoinRefusal::Busy`], which a joining
//!   node retries for a while (see `handshake::connect`);
//! - every connection has the handshake deadline ([`STEP`]) from its accept.
//!
//! Every connection that ends here without a join is counted in the hub's `refused`
//! and logged through a [`Limiter`]: at most [`Limiter::LINES`] lines a second, with
//! the count of the lines left out.
//!
//! A verified join leaves the gate: a node gets its link and its reading thread
//! (`Shared::enter`), an observer its status report (sent from here, then closed), a
//! standby its mirror connection (`mirror.rs`).

use crate::limiter::Limiter;
use crate::refuse::say_and_close;
use crate::state::Shared;
use memchan_link::handshake::{self, STEP};
use memchan_link::proto::reply::JoinRefusal;
use memchan_link::proto::{Join, ROLE_MIRROR, ROLE_OBSERVER, ROLE_RESUME};
use memchan_link::wire::{self, Decoder, FrameKey, Kind};
use rustix::event::epoll;
use rustix::fd::OwnedFd;
use std::collections::{HashMap, VecDeque};
use std::io::{ErrorKind, Read, Write};
use std::net::{IpAddr, Ipv6Addr, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::Ordering::Relaxed;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The largest join payload the gate reads (a join is about 70 bytes and two names).
pub const MAX_JOIN: usize = 4096;
/// How long a pending connection is safe from eviction by a newer one.
pub(crate) const EVICT_AFTER: Duration = Duration::from_secs(1);

/// Frame bytes the gate buffers for one connection, at most.
const FRAME_CAP: usize = wire::HEADER + MAX_JOIN + wire::MAC;
/// Connections accepted per wake-up before the gate serves the pending ones again.
const ACCEPT_BATCH: usize = 256;
/// How long accepting pauses when the process is out of descriptors or memory.
const ACCEPT_PAUSE: Duration = Duration::from_millis(100);
/// The gate thread's nice value: below the members' threads (nice 0), above idle.
const GATE_NICE: i32 = 10;
/// The epoll token of the listener (a connection's is its serial and slot).
const LISTENER: u64 = u64::MAX;

/// Where a connection comes from, for the per-source cap: an IPv4 address, or the
/// /64 prefix of an IPv6 one (a host holds a whole /64).
fn source_of(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(_) => ip,
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => {
                let s = v6.segments();
                IpAddr::V6(Ipv6Addr::new(s[0], s[1], s[2], s[3], 0, 0, 0, 0))
            }
        },
    }
}

/// One pending connection.
struct Conn {
    sock: TcpStream,
    peer: SocketAddr,
    source: IpAddr,
    nonce: [u8; 16],
    /// The join's bytes so far (at most `FRAME_CAP`; empty, unallocated, until the
    /// first byte arrives).
    buf: Vec<u8>,
    /// An observer's report and how much of it is sent; closed once it all is.
    out: Option<(Vec<u8>, usize)>,
    serial: u64,
}

/// The gate's state, owned by its thread.
pub(super) struct Gate {
    sh: Arc<Shared>,
    listener: TcpListener,
    ep: OwnedFd,
    slots: Vec<Option<Conn>>,
    free: Vec<usize>,
    pending: usize,
    by_source: HashMap<IpAddr, usize>,
    /// (accepted at, slot, serial) in accept order, so the front is the oldest and
    /// the first to expire; entries of connections gone are skipped (and compacted).
    queue: VecDeque<(Instant, usize, u64)>,
    next_serial: u64,
    log: Limiter,
    /// Accepting pauses until then (out of descriptors).
    paused: Option<Instant>,
    scratch: Box<[u8]>,
}

fn timespec(d: Duration) -> rustix::time::Timespec {
    rustix::time::Timespec {
        tv_sec: d.as_secs() as i64,
        tv_nsec: i64::from(d.subsec_nanos()),
    }
}

impl Gate {
    /// A gate in front of `listener` (made nonblocking).
    pub(super) fn new(sh: Arc<Shared>, listener: TcpListener) -> std::io::Result<Gate> {
        listener.set_nonblocking(true)?;
        // std listens with a backlog of 128: a burst of connections would make the
        // kernel drop a real node's handshake before the gate ever saw it (the
        // kernel caps this at net.core.somaxconn).
        rustix::net::listen(&listener, 4096)?;
        let ep = epoll::create(epoll::CreateFlags::CLOEXEC)?;
        epoll::add(
            &ep,
            &listener,
            epoll::EventData::new_u64(LISTENER),
            epoll::EventFlags::IN,
        )?;
        Ok(Gate {
            sh,
            listener,
            ep,
            slots: Vec::new(),
            free: Vec::new(),
            pending: 0,
            by_source: HashMap::new(),
            queue: VecDeque::new(),
            next_serial: 1,
            log: Limiter::new(Instant::now()),
            paused: None,
            scratch: vec![0; FRAME_CAP].into_boxed_slice(),
        })
    }

    /// Serves connections until the hub stops.
    pub(super) fn run(mut self) {
        // Strangers' connections must not take the CPU from members' traffic: on a
        // busy host (the hub's own cores shared with the nodes' threads, or a flood
        // of connects) the kernel runs the members' reading threads first. Linux
        // keeps a nice value per thread, so this lowers the gate alone. A failure
        // (a container that forbids it) leaves the gate as it was.
        if let Err(e) = rustix::process::setpriority_process(None, GATE_NICE) {
            tracing::debug!(error = %e, "the gate keeps its scheduling priority");
        }
        let mut events = Vec::with_capacity(256);
        while !self.sh.stop.load(Relaxed) {
            let now = Instant::now();
            let wake = [
                self.queue.front().map(|e| e.0 + STEP),
                self.paused,
                self.log.due(),
            ]
            .into_iter()
            .flatten()
            .min()
            .map_or(Duration::from_secs(1), |t| t.saturating_duration_since(now))
            .min(Duration::from_secs(1));
            events.clear();
            match epoll::wait(
                &self.ep,
                rustix::buffer::spare_capacity(&mut events),
                Some(&timespec(wake)),
            ) {
                Ok(_) | Err(rustix::io::Errno::INTR) => {}
                Err(e) => {
                    tracing::error!(error = %e, "the hub's gate cannot wait for connections");
                    return;
                }
            }
            if self.sh.stop.load(Relaxed) {
                return;
            }
            for ev in events.iter().copied() {
                let (token, flags) = (ev.data.u64(), ev.flags);
                if token == LISTENER {
                    self.accept_some();
                } else {
                    self.ready(token, flags);
                }
            }
            let now = Instant::now();
            self.expire(now);
            if self.paused.is_some_and(|t| now >= t) {
                self.paused = None;
                let _ = epoll::modify(
                    &self.ep,
                    &self.listener,
                    epoll::EventData::new_u64(LISTENER),
                    epoll::EventFlags::IN,
                );
            }
            if let Some(n) = self.log.overdue(now) {
                tracing::warn!(
                    suppressed = n,
                    "connection refusals not logged (rate limit)"
                );
            }
        }
    }

    fn accept_some(&mut self) {
        for _ in 0..ACCEPT_BATCH {
            match self.listener.accept() {
                Ok((sock, peer)) => self.take(sock, peer),
                Err(e) if e.kind() == ErrorKind::WouldBlock => return,
                Err(e)
                    if matches!(
                        e.kind(),
                        ErrorKind::Interrupted | ErrorKind::ConnectionAborted
                    ) => {}
                Err(e) => {
                    // Out of descriptors or memory: the listener stays readable, so
                    // stop watching it for a moment instead of spinning on it.
                    if let Some(n) = self.log.admit(Instant::now()) {
                        tracing::warn!(error = %e, suppressed = n, "cannot accept connections; pausing");
                    }
                    self.paused = Some(Instant::now() + ACCEPT_PAUSE);
                    let _ = epoll::modify(
                        &self.ep,
                        &self.listener,
                        epoll::EventData::new_u64(LISTENER),
                        epoll::EventFlags::empty(),
                    );
                    return;
                }
            }
        }
    }

    /// A new connection: refused at once over a cap, else greeted and watched.
    fn take(&mut self, sock: TcpStream, peer: SocketAddr) {
        let now = Instant::now();
        let source = source_of(peer.ip());
        let cfg = &self.sh.cfg;
        let (max, per_source) = (cfg.max_pending, cfg.max_pending_per_source);
        let from_source = self.by_source.get(&source).copied().unwrap_or(0);
        if from_source >= per_source {
            let why = format!("{from_source} handshakes pending from {source}");
            return self.turn_away(sock, peer, JoinRefusal::Busy(why));
        }
        if self.pending >= max && !self.evict_oldest(now) {
            let why = format!("{max} handshakes pending");
            return self.turn_away(sock, peer, JoinRefusal::Busy(why));
        }
        let nonce = match handshake::nonce() {
            Ok(n) => n,
            Err(e) => {
                // No randomness, no handshake: a predictable nonce is never used.
                tracing::error!(%peer, error = %e, "dropped: no nonce for the handshake");
                return;
            }
        };
        let mut hello = Vec::with_capacity(wire::HEADER + 16 + wire::MAC);
        // No MAC: no key is agreed yet (the node proves the key in its Join).
        wire::encode(
            &mut hello,
            &FrameKey::open(),
            1,
            Kind::Hello,
            0,
            0,
            &[&nonce],
        );
        // A fresh socket's send buffer takes the hello whole; one that does not is
        // already broken.
        let greeted = sock.set_nonblocking(true).is_ok()
            && sock.set_nodelay(true).is_ok()
            && matches!((&sock).write(&hello), Ok(n) if n == hello.len());
        if !greeted {
            return self.note(peer, "closed during the handshake");
        }
        let slot = self.free.pop().unwrap_or_else(|| {
            self.slots.push(None);
            self.slots.len() - 1
        });
        let serial = self.next_serial;
        self.next_serial += 1;
        let token = (serial << 32) | slot as u64;
        if epoll::add(
            &self.ep,
            &sock,
            epoll::EventData::new_u64(token),
            epoll::EventFlags::IN | epoll::EventFlags::RDHUP,
        )
        .is_err()
        {
            self.free.push(slot);
            return self.note(peer, "closed: cannot watch the connection");
        }
        self.slots[slot] = Some(Conn {
            sock,
            peer,
            source,
            nonce,
            buf: Vec::new(),
            out: None,
            serial,
        });
        self.pending += 1;
        *self.by_source.entry(source).or_insert(0) += 1;
        self.queue.push_back((now, slot, serial));
        if self.queue.len() > 4 * self.pending.max(64) {
            // Entries of connections gone pile up behind a long-lived front one.
            let slots = &self.slots;
            self.queue
                .retain(|&(_, s, n)| slots[s].as_ref().is_some_and(|c| c.serial == n));
        }
    }

    /// The oldest pending connection, if it waited long enough, makes room.
    fn evict_oldest(&mut self, now: Instant) -> bool {
        while let Some(&(since, slot, serial)) = self.queue.front() {
            if !self.live(slot, serial) {
                self.queue.pop_front();
                continue;
            }
            if now.saturating_duration_since(since) < EVICT_AFTER {
                return false;
            }
            self.queue.pop_front();
            let why = format!("evicted, the oldest of {} pending handshakes", self.pending);
            self.refuse(slot, JoinRefusal::Busy(why));
            return true;
        }
        false
    }

    fn live(&self, slot: usize, serial: u64) -> bool {
        matches!(self.slots.get(slot), Some(Some(c)) if c.serial == serial)
    }

    /// Connections past the handshake deadline are refused.
    fn expire(&mut self, now: Instant) {
        while let Some(&(since, slot, serial)) = self.queue.front() {
            if self.live(slot, serial) {
                if now.saturating_duration_since(since) < STEP {
                    return;
                }
                self.refuse(slot, JoinRefusal::Handshake("handshake timed out".into()));
            }
            self.queue.pop_front();
        }
    }

    /// Takes a connection out of the gate (no longer watched or counted).
    fn remove(&mut self, slot: usize) -> Conn {
        let c = self.slots[slot].take().expect("a live slot");
        let _ = epoll::delete(&self.ep, &c.sock);
        self.free.push(slot);
        self.pending -= 1;
        if let Some(n) = self.by_source.get_mut(&c.source) {
            *n -= 1;
            if *n == 0 {
                self.by_source.remove(&c.source);
            }
        }
        c
    }

    /// Counts and logs a connection that ended without a join (rate-limited).
    fn note(&mut self, peer: SocketAddr, why: &str) {
        self.sh.refused.fetch_add(1, Relaxed);
        if let Some(n) = self.log.admit(Instant::now()) {
            tracing::warn!(%peer, reason = %why, suppressed = n, "refused");
        }
    }

    /// Refuses a connection not taken in: says why, then closes it.
    fn turn_away(&mut self, sock: TcpStream, peer: SocketAddr, why: JoinRefusal) {
        let _ = sock.set_nonblocking(true);
        self.note(peer, &why.to_string());
        say_and_close(sock, &why);
    }

    /// Refuses a pending connection: says why, then closes it.
    fn refuse(&mut self, slot: usize, why: JoinRefusal) {
        let c = self.remove(slot);
        self.note(c.peer, &why.to_string());
        say_and_close(c.sock, &why);
    }

    /// Something happened on a pending connection.
    fn ready(&mut self, token: u64, flags: epoll::EventFlags) {
        let (slot, serial) = ((token & u64::from(u32::MAX)) as usize, token >> 32);
        if !self.live(slot, serial) {
            return;
        }
        let c = self.slots[slot].as_mut().expect("live");
        if let Some((out, sent)) = c.out.as_mut() {
            // An observer's report going out; its input is not read any more.
            match (&c.sock).write(&out[*sent..]) {
                Ok(n) => *sent += n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => {}
                Err(_) => *sent = out.len(),
            }
            if *sent == out.len() || flags.contains(epoll::EventFlags::ERR) {
                // Answered: closes without counting as refused.
                self.remove(slot);
            }
            return;
        }
        let room = FRAME_CAP - c.buf.len();
        match (&c.sock).read(&mut self.scratch[..room]) {
            Ok(0) => return self.closed(slot, "closed during the handshake"),
            Ok(n) => c.buf.extend_from_slice(&self.scratch[..n]),
            Err(e) if matches!(e.kind(), ErrorKind::WouldBlock | ErrorKind::Interrupted) => return,
            Err(e) => return self.closed(slot, &format!("handshake failed: {e}")),
        }
        self.examine(slot);
    }

    /// The peer is gone: nothing to say to it.
    fn closed(&mut self, slot: usize, why: &str) {
        let c = self.remove(slot);
        self.note(c.peer, why);
    }

    /// Looks at what a connection sent: refuses a bad or over-long frame from its
    /// header, waits for the rest of a good one, and acts on a complete join.
    fn examine(&mut self, slot: usize) {
        let c = self.slots[slot].as_ref().expect("live");
        let header = match wire::parse_header(&c.buf) {
            Ok(Some(h)) => h,
            Ok(None) => return,
            Err(e) => return self.refuse(slot, JoinRefusal::of_wire(&e)),
        };
        if header.len > MAX_JOIN {
            let why = format!(
                "a handshake frame of {} bytes exceeds the {MAX_JOIN}-byte limit",
                header.len
            );
            return self.refuse(slot, JoinRefusal::Handshake(why));
        }
        let total = wire::HEADER + header.len + wire::MAC;
        if c.buf.len() < total {
            return;
        }
        let mut dec = Decoder::with_capacity(Some(self.sh.cfg.key.join(&c.nonce)), total);
        dec.push(&c.buf[..total]);
        let (h, payload) = match dec.next_frame() {
            Ok(Some(wire::Received::Frame(h, p))) => (h, p),
            Ok(Some(wire::Received::Refused(_))) => {
                let why = "the peer sent a refusal, not a join".into();
                return self.refuse(slot, JoinRefusal::Handshake(why));
            }
            Ok(Some(wire::Received::Corrupt)) => {
                let why = "handshake frame failed its CRC".into();
                return self.refuse(slot, JoinRefusal::Handshake(why));
            }
            Ok(None) => return,
            Err(e) => return self.refuse(slot, JoinRefusal::of_wire(&e)),
        };
        let why = match (h.kind, Join::get(&payload)) {
            (Kind::Join, Ok(j)) if j.hub_nonce == c.nonce => Ok(j),
            (Kind::Join, Ok(_)) => Err("stale join (nonce does not match)".to_string()),
            (Kind::Join, Err(e)) => Err(e.to_string()),
            (k, _) => Err(format!("expected a join, got {k:?}")),
        };
        let join = match why {
            Ok(j) => j,
            Err(why) => return self.refuse(slot, JoinRefusal::Handshake(why)),
        };
        let keys = self.sh.cfg.key.link(&c.nonce, &join.node_nonce);
        if join.role == ROLE_MIRROR {
            // A standby following the tables (dual rail): its connection stays open.
            let mut dec = Decoder::new(Some(keys.to_hub));
            dec.push(&c.buf[total..]);
            let c = self.remove(slot);
            return self.sh.add_mirror(c.sock, keys.to_node, dec, c.peer);
        }
        if join.role == ROLE_OBSERVER {
            let json = serde_json::to_vec(&self.sh.status()).unwrap_or_default();
            let mut out = Vec::new();
            // The first frame of the hub-to-node direction.
            wire::encode(&mut out, &keys.to_node, 1, Kind::Response, 0, 0, &[&json]);
            let c = self.slots[slot].as_mut().expect("live");
            c.out = Some((out, 0));
            c.buf = Vec::new();
            let token = (c.serial << 32) | slot as u64;
            let _ = epoll::modify(
                &self.ep,
                &c.sock,
                epoll::EventData::new_u64(token),
                epoll::EventFlags::OUT,
            );
            return;
        }
        let mut up = if join.role == ROLE_RESUME {
            crate::standby::resume_decoder(keys.to_hub)
        } else {
            Decoder::new(Some(keys.to_hub))
        };
        up.push(&c.buf[total..]);
        let c = self.remove(slot);
        if join.role == ROLE_RESUME {
            // A node moving its link here (dual rail): its `RailResume` follows.
            return crate::standby::resume(self.sh.clone(), c.sock, keys.to_node, up, join, c.peer);
        }
        if let Err(why) = self.sh.enter(&c.sock, keys.to_node, up, &join, c.peer) {
            self.note(c.peer, &why.to_string());
            say_and_close(c.sock, &why);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_are_addresses_or_v6_prefixes() {
        let v4: IpAddr = "10.1.2.3".parse().unwrap();
        assert_eq!(source_of(v4), v4);
        let mapped: IpAddr = "::ffff:10.1.2.3".parse().unwrap();
        assert_eq!(source_of(mapped), v4);
        let a: IpAddr = "2001:db8:1:2:aaaa::1".parse().unwrap();
        let b: IpAddr = "2001:db8:1:2:bbbb::2".parse().unwrap();
        let c: IpAddr = "2001:db8:1:3::1".parse().unwrap();
        assert_eq!(source_of(a), source_of(b));
        assert_ne!(source_of(a), source_of(c));
    }
}
