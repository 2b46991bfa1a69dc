//! One link: a TCP connection carrying frames both ways, with go-back-N reliability on
//! top of the stream so that corrupt, lost, duplicated or reordered frames (a faulty
//! relay, a bad NIC, a middlebox) never reach the application.
//!
//! **Send side.** Reliable frames get consecutive seqs and stay in the *replay memory*
//! until the peer releases them. A NAK (or silence past the retransmit timeout) rewinds
//! the send cursor to the first frame the peer is missing, and everything from there is
//! sent again, in order. The replay memory is bounded: a sender that would exceed it
//! waits (back-pressure) until the peer releases frames; the wait is counted.
//!
//! **Receive side.** Only the frame with the next expected seq is accepted. After a
//! corrupt frame (CRC) or a gap (seq too high), every later frame is discarded until the
//! retransmission of the missing one arrives; a NAK asks for it. A frame seen before
//! (seq too low) is a duplicate and dropped.
//!
//! **Two acknowledgements.** The header's `received` says "received in order up to
//! here" and drives retransmission. A `Release` frame's payload says "released up to here": frames
//! the receiver is finished with, which the sender may forget. A node releases a frame
//! as soon as it applied it; the hub releases a sender's frame only when every
//! destination has released its copy, so a slow receiver holds back the senders that
//! write to it (end-to-end back-pressure) and the hub's memory stays bounded.
//!
//! **Counters and MACs.** Every frame carries a counter, its MAC's nonce, which must
//! grow strictly in the order frames reach the wire (see [`wire`]). Reliable frames wait
//! in the replay memory and are stamped (counter, MAC, CRC) as they are written; a
//! frame keeps its stamp only while it is above every counter already written or
//! queued, else (a retransmission, or control frames that went out first) it is
//! stamped anew. Control frames take their counter when queued.
//! A frame that arrives with a counter not above the last one accepted is discarded
//! and counted (`replays`): on an honest path only a relay that duplicates or
//! reorders frames makes one.
//!
//! **Never block on receive.** Receiving queues control frames (acks, NAKs) without
//! waiting for the socket; the one thread that may wait is a sender in back-pressure.
//!
//! **Layout.** The rules above are a state machine without I/O (`gbn`: the send side's
//! replay memory, window, cursor and stamps, the receive side's acceptance), tested by
//! property over random events. This module drives it: the socket and its epoll set,
//! the locks, the clocks, the counters other threads read. `tcp` holds the write and
//! `TCP_INFO`, [`Held`] what a link leaves for a rail switch, [`Readers`] which
//! threads read the links inside their own waits.

mod gbn;
mod held;
mod readers;
mod tcp;

pub use held::Held;
pub use readers::Readers;

use crate::proto::reply::{JoinRefusal, ReplyError};
use crate::wire::{self, Borrowed, Decoder, FrameKey, Kind, WireError};
use gbn::{Accept, Rx, Tx, Window};
use memchan_core::status::LinkCounters;
use rustix::event::epoll::{self, EventFlags};
use std::io::{self, Read};
use std::net::TcpStream;
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::time::{Duration, Instant};

/// Tunables of a link.
#[derive(Debug, Clone)]
pub struct LinkConfig {
    /// Bytes of unreleased reliable frames a sender may hold before it waits.
    pub replay_limit: usize,
    /// Silence after which unacknowledged frames are sent again; doubles on every
    /// timeout without progress (up to 16 times as long), back to this on progress.
    pub retransmit_timeout: Duration,
    /// Bytes a sender may have on the wire beyond what the peer confirmed receiving:
    /// a bad or missing frame costs at most this much resent (go-back-N).
    pub window_bytes: usize,
    /// Frames likewise (small frames would otherwise make the window very deep).
    pub window_frames: u64,
    /// How long a sender waits for replay memory while the peer releases nothing
    /// before it gives up.
    pub backpressure_timeout: Duration,
    /// The peer is finished with a frame once it received it (a node applies on
    /// receipt), so the header's `received` also releases. The hub's frames to a node: yes;
    /// a node's frames to the hub: no, the hub releases them itself.
    pub peer_releases_on_receive: bool,
    /// Payload bytes of a batch ([`Kind::Batch`]), 0 for none: with batches on, every
    /// reliable frame is a record, and one sent while the last batch waits unwritten
    /// (a full window or socket, or [`Link::queue`] before [`Link::flush`]) joins it,
    /// so a burst costs one MAC and one write.
    pub batch_bytes: usize,
}

impl Default for LinkConfig {
    fn default() -> Self {
        LinkConfig {
            replay_limit: 16 << 20,
            retransmit_timeout: Duration::from_millis(100),
            window_bytes: 4 << 20,
            window_frames: 256,
            backpressure_timeout: Duration::from_secs(60),
            peer_releases_on_receive: false,
            batch_bytes: 0,
        }
    }
}

/// Why a link stopped.
#[derive(Debug, Clone, thiserror::Error)]
pub enum LinkError {
    /// The peer closed the connection.
    #[error("the peer closed the link")]
    Closed,
    /// A socket error (shared: a link's error is cloned to every thread that meets it).
    #[error("link I/O error: {0}")]
    Io(#[source] Arc<io::Error>),
    /// The peer sent bytes that are not a frame of ours, or a forged frame.
    #[error("protocol error: {0}")]
    Protocol(#[from] WireError),
    /// The peer refused us, with its reason.
    #[error("refused by the peer: {0}")]
    Refused(JoinRefusal),
    /// The peer sent a refusal that does not decode.
    #[error("the peer's refusal does not decode: {0}")]
    BadRefusal(#[source] ReplyError),
    /// Replay memory stayed full for the whole back-pressure timeout.
    #[error("replay memory full for {0:?}: the peer is not releasing frames")]
    Stalled(Duration),
    /// The link was shut down locally.
    #[error("link shut down")]
    Shutdown,
}

#[derive(Default)]
struct Counters {
    frames_tx: AtomicU64,
    frames_rx: AtomicU64,
    bytes_tx: AtomicU64,
    bytes_rx: AtomicU64,
    crc_failures: AtomicU64,
    retransmits: AtomicU64,
    discards: AtomicU64,
    duplicates: AtomicU64,
    replays: AtomicU64,
    naks: AtomicU64,
    backpressure_waits: AtomicU64,
    mac_failures: AtomicU64,
    tcp_retransmits: AtomicU64,
    reader_wakeups: AtomicU64,
}

/// Releases owed before a `Release` goes out unasked.
const RELEASE_BATCH: u64 = 32;

/// Flags of a `Release` frame: an ask for the peer's releases (once they reach the
/// target that follows), and for them at once as well.
const ASK: u8 = 1;
const ASK_NOW: u8 = 2;

fn inc(c: &AtomicU64) {
    c.fetch_add(1, Relaxed);
}

/// Adds to a counter that only one of the link's locks' holders writes (tx or rx):
/// a plain load and store, no locked instruction on the per-frame path.
fn add(c: &AtomicU64, n: u64) {
    c.store(c.load(Relaxed) + n, Relaxed);
}

/// Monotonic nanoseconds from the coarse clock (a few ms resolution, a fraction of
/// the fine clock's cost): enough for silence and heartbeat timing, read per frame.
fn coarse_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::MonotonicCoarse);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// The receive side: the peer's frames as read, and the order they are accepted in.
struct Receiving {
    dec: Decoder,
    order: Rx,
}

/// What the receive side hands its owner.
pub trait Handler {
    /// A reliable frame accepted in order.
    fn frame(&mut self, link: &Link, seq: u64, kind: Kind, payload: &[u8]);
    /// A verified control frame (heartbeat, isolation notice) after the link handled its
    /// own part (acks, NAKs).
    fn control(&mut self, _link: &Link, _kind: Kind, _payload: &[u8]) {}
}

/// One end of a link (see the module doc).
pub struct Link {
    sock: TcpStream,
    /// The key of the frames this end writes.
    key: FrameKey,
    cfg: LinkConfig,
    tx: Mutex<Tx>,
    tx_cv: Condvar,
    rx: Mutex<Receiving>,
    /// Last reliable seq received in order (the header's `received` we send).
    received: AtomicU64,
    /// The highest header `received` written into a frame so far, and the bytes of reliable
    /// frames accepted since.
    ack_sent: AtomicU64,
    unacked_bytes: AtomicU64,
    /// Last reliable seq we released to the peer, and the last one we told it about.
    released: AtomicU64,
    released_sent: AtomicU64,
    /// The peer asked us to report releases at once (an ask without a target).
    ack_now: AtomicBool,
    /// The highest seq an unanswered ask of the peer's waits for (an `ack()` waits
    /// for the frames up to here), 0 for none: answered as soon as it is reached.
    ask_upto: AtomicU64,
    /// `Tx::peer_received`, readable without the lock (skips it for repeated acks).
    peer_received_seen: AtomicU64,
    /// Last seq the peer released (frames up to here left the replay memory).
    peer_released: AtomicU64,
    /// `peer_released` as last seen by `release_moved`.
    release_seen: AtomicU64,
    /// When a frame last arrived ([`coarse_ns`]).
    last_heard: AtomicU64,
    /// When bytes were last written ([`coarse_ns`]).
    last_sent: AtomicU64,
    counters: Counters,
    down: AtomicBool,
    /// The reading thread's epoll set, holding the socket alone (see
    /// [`serve_wait`](Self::serve_wait)), and the events it now listens for.
    epoll: rustix::fd::OwnedFd,
    interest: Mutex<EventFlags>,
    /// Peer address, for logs and status.
    pub peer: String,
}

impl Link {
    /// A link over an established, handshaken connection: this end's frames are MACed
    /// under `key`; the peer's are read by `dec`, the handshake's decoder (its key, its
    /// last counter and any bytes it read past the handshake).
    pub fn new(sock: TcpStream, key: FrameKey, dec: Decoder, cfg: LinkConfig) -> io::Result<Link> {
        sock.set_nodelay(true)?;
        sock.set_nonblocking(true)?;
        let peer = sock
            .peer_addr()
            .map(|a| a.to_string())
            .unwrap_or_else(|_| "?".into());
        let epoll = epoll::create(epoll::CreateFlags::CLOEXEC)?;
        epoll::add(&epoll, &sock, epoll::EventData::new_u64(0), EventFlags::IN)?;
        Ok(Link {
            sock,
            key,
            tx: Mutex::new(Tx::new(cfg.retransmit_timeout, coarse_ns())),
            cfg,
            tx_cv: Condvar::new(),
            rx: Mutex::new(Receiving {
                dec,
                order: Rx::new(1),
            }),
            received: AtomicU64::new(0),
            ack_sent: AtomicU64::new(0),
            unacked_bytes: AtomicU64::new(0),
            released: AtomicU64::new(0),
            released_sent: AtomicU64::new(0),
            ack_now: AtomicBool::new(false),
            ask_upto: AtomicU64::new(0),
            peer_received_seen: AtomicU64::new(0),
            peer_released: AtomicU64::new(0),
            release_seen: AtomicU64::new(0),
            last_heard: AtomicU64::new(coarse_ns()),
            last_sent: AtomicU64::new(0),
            counters: Counters::default(),
            down: AtomicBool::new(false),
            epoll,
            interest: Mutex::new(EventFlags::IN),
            peer,
        })
    }

    fn lock_tx(&self) -> MutexGuard<'_, Tx> {
        self.tx.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Sends a reliable frame; waits while the replay memory is full. Returns the seq
    /// of the frame that carries it (a batch's, with batches on).
    pub fn send(&self, kind: Kind, parts: &[&[u8]]) -> Result<u64, LinkError> {
        self.put(kind, parts, true).map(|(seq, _)| seq)
    }

    /// [`send`](Self::send) without the write: the frame waits in the replay memory
    /// (joining the open batch, with batches on) until [`flush`](Self::flush), the
    /// next send or the tick. Also returns whether the link had nothing queued so
    /// (the caller owes it a flush).
    pub fn queue(&self, kind: Kind, parts: &[&[u8]]) -> Result<(u64, bool), LinkError> {
        self.put(kind, parts, false)
    }

    /// Writes what waits, as far as the socket takes it now.
    pub fn flush(&self) {
        let mut tx = self.lock_tx();
        self.flush_locked(&mut tx);
    }

    fn put(&self, kind: Kind, parts: &[&[u8]], write: bool) -> Result<(u64, bool), LinkError> {
        debug_assert!(kind.reliable() && kind != Kind::Batch);
        let batch = self.cfg.batch_bytes;
        let payload: usize = parts.iter().map(|p| p.len()).sum();
        let size =
            wire::HEADER + payload + wire::MAC + if batch > 0 { wire::RECORD_HEAD } else { 0 };
        let limit = self.cfg.replay_limit;
        let mut tx = self.lock_tx();
        if !tx.fits(size, limit) {
            inc(&self.counters.backpressure_waits);
            let upto = tx.last_seq();
            drop(tx);
            self.ask_for_room(upto);
            tx = self.lock_tx();
            tx = self.wait_tx(tx, self.cfg.backpressure_timeout, |tx| tx.fits(size, limit));
            if !tx.fits(size, limit) && !tx.closed {
                return Err(LinkError::Stalled(self.cfg.backpressure_timeout));
            }
        }
        if tx.closed || self.down.load(Relaxed) {
            return Err(LinkError::Shutdown);
        }
        let first = !std::mem::replace(&mut tx.unflushed, true);
        let seq = match (batch > 0).then(|| tx.append(kind, parts, batch)).flatten() {
            Some(seq) => seq,
            None => {
                let (seq, mut bytes) = tx.next_frame();
                let ack = self.received.load(Relaxed);
                self.ack_sent.fetch_max(ack, Relaxed);
                self.unacked_bytes.store(0, Relaxed);
                // Stamped (counter, MAC, CRC) when it is written: see `Tx::gather`.
                if batch > 0 {
                    wire::encode_unstamped(&mut bytes, Kind::Batch, seq, ack, &[]);
                    wire::append_record(&mut bytes, kind, parts);
                } else {
                    wire::encode_unstamped(&mut bytes, kind, seq, ack, parts);
                }
                tx.push(bytes);
                seq
            }
        };
        if write {
            self.flush_locked(&mut tx);
        }
        Ok((seq, first))
    }

    /// Queues a control frame and writes what the socket takes now; never waits.
    pub fn send_control(&self, kind: Kind, payload: &[u8]) {
        debug_assert!(!kind.reliable());
        let mut tx = self.lock_tx();
        if tx.closed {
            return;
        }
        let ack = self.received.load(Relaxed);
        self.ack_sent.fetch_max(ack, Relaxed);
        self.unacked_bytes.store(0, Relaxed);
        tx.queue_control(&self.key, kind, ack, payload);
        self.flush_locked(&mut tx);
    }

    /// Tells the peer how far we released: at once if it asked or `force`, else once
    /// enough is owed (releases ride in batches; the tick sends stragglers).
    pub fn send_release(&self, force: bool) {
        let r = self.released.load(Relaxed);
        let sent = self.released_sent.load(Relaxed);
        // Load first: a swap is a locked instruction, and this runs per read.
        let asked = self.ack_now.load(Relaxed) && self.ack_now.swap(false, Relaxed);
        // An ask with a target is answered once, when what arrived or was released
        // reaches it (a peer that counts receipt as release needs only the header):
        // not earlier (a release short of it is no use to the waiting ack), and not
        // left to the tick (the thread that reads may be an application thread
        // blocked in a wait, with the service thread asleep to its heartbeat).
        let upto = self.ask_upto.load(Relaxed);
        let reached = upto != 0
            && r.max(self.received.load(Relaxed)) >= upto
            && self
                .ask_upto
                .compare_exchange(upto, 0, Relaxed, Relaxed)
                .is_ok();
        let asked = asked || reached;
        // The header ack rides along: the peer's send window moves with it. Once a
        // quarter window: each Release wakes a thread at the sender (measured: acks every
        // eighth cost a 64 MiB stream about 15% of its rate), and a quarter still
        // leaves three quarters of the window to send into meanwhile.
        let unacked = self
            .received
            .load(Relaxed)
            .saturating_sub(self.ack_sent.load(Relaxed));
        let window_due = unacked >= self.cfg.window_frames / 4
            || self.unacked_bytes.load(Relaxed) >= self.cfg.window_bytes as u64 / 4
            || (force && unacked > 0);
        // `sent` may be above `r`: another thread (the link's reader, the timer, a
        // standby's replaying thread) loaded a newer release and sent it after this
        // one loaded `r`. The peer ignores a release that does not move.
        if asked || window_due || (r > sent && (force || r - sent >= RELEASE_BATCH)) {
            self.released_sent.fetch_max(r, Relaxed);
            self.send_control(Kind::Release, &wire::Put::new().u64(r).u8(0).0);
        }
    }

    /// Marks every reliable frame up to `seq` as released (finished with).
    pub fn release(&self, seq: u64) {
        self.released.fetch_max(seq, Relaxed);
    }

    /// Asks the peer to report its releases once they reach `upto` (an `ack()` waits
    /// for the frames up to there), at once if they do.
    pub fn request_release(&self, upto: u64) {
        self.ask(ASK, upto);
    }

    /// A full replay memory's ask: the peer's releases now (what it released frees
    /// room at once) and again once they reach `upto`.
    fn ask_for_room(&self, upto: u64) {
        self.ask(ASK | ASK_NOW, upto);
    }

    fn ask(&self, flags: u8, upto: u64) {
        let r = self.released.load(Relaxed);
        self.send_control(
            Kind::Release,
            &wire::Put::new().u64(r).u8(flags).u64(upto).0,
        );
    }

    fn window(&self) -> Window {
        Window {
            bytes: self.cfg.window_bytes as u64,
            frames: self.cfg.window_frames,
        }
    }

    /// Writes what the send side has ready until the socket would block, then
    /// publishes the send side's counters. Needs the tx lock.
    fn flush_locked(&self, tx: &mut Tx) {
        tx.unflushed = false;
        let window = self.window();
        loop {
            let slices = tx.gather(&self.key, window);
            let total = slices.total;
            if total == 0 {
                break;
            }
            let n = match tcp::write(&self.sock, &slices) {
                Ok(n) if n > 0 => n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                _ => {
                    tx.closed = true;
                    self.tx_cv.notify_all();
                    break;
                }
            };
            add(&self.counters.bytes_tx, n as u64);
            self.last_sent.store(coarse_ns(), Relaxed);
            tx.advance(n);
            if n < total {
                break;
            }
        }
        let c = &self.counters;
        c.frames_tx.store(tx.frames_sent, Relaxed);
        c.retransmits.store(tx.retransmits, Relaxed);
    }

    /// A header's `received`: the peer received everything up to `ack` (and, on a
    /// link whose peer releases on receive, released it). One tx lock for both.
    fn on_header_received(&self, ack: u64) {
        let release = self.cfg.peer_releases_on_receive && self.peer_released.load(Relaxed) < ack;
        if ack <= self.peer_received_seen.load(Relaxed) && !release {
            return;
        }
        let mut tx = self.lock_tx();
        if tx.on_received(ack, coarse_ns(), self.cfg.retransmit_timeout) {
            self.peer_received_seen.store(ack, Relaxed);
        }
        if release {
            self.release_locked(&mut tx, ack);
        }
        // The window moved: frames held back by it may go now.
        if tx.unsent() {
            self.flush_locked(&mut tx);
        }
    }

    fn on_peer_released(&self, upto: u64) {
        if self.peer_released.load(Relaxed) >= upto {
            return;
        }
        let mut tx = self.lock_tx();
        self.release_locked(&mut tx, upto);
    }

    /// Drops the frames up to `upto` from the replay memory, waking waiting senders.
    fn release_locked(&self, tx: &mut Tx, upto: u64) {
        if self.peer_released.fetch_max(upto, Relaxed) >= upto {
            return;
        }
        if tx.release(upto) && tx.waiters > 0 {
            self.tx_cv.notify_all();
        }
    }

    /// Periodic work: retransmit after silence, write what the socket now takes, report
    /// releases, sample TCP's counters.
    pub fn tick(&self) {
        {
            let mut tx = self.lock_tx();
            tx.on_timer(coarse_ns(), self.cfg.retransmit_timeout * 16);
            self.flush_locked(&mut tx);
            tx.trim_if_idle();
        }
        self.send_release(true);
        // Not waited for: a reader holds it while its handler works (a hub's handler
        // may wait for the hub lock behind a long takeover), and the tick must not
        // hold the heartbeats behind it. A NAK owed goes out at the next tick.
        let mut rx = match self.rx.try_lock() {
            Ok(rx) => rx,
            Err(std::sync::TryLockError::Poisoned(e)) => e.into_inner(),
            Err(std::sync::TryLockError::WouldBlock) => return,
        };
        if let Some(expected) = rx.order.nak_again(self.cfg.retransmit_timeout) {
            drop(rx);
            inc(&self.counters.naks);
            self.send_control(Kind::Nak, &expected.to_le_bytes());
        }
    }

    /// Whether the link needs no [`tick`](Self::tick) until something arrives or is
    /// sent: every frame either way confirmed, no release owed to the peer, no NAK
    /// out. A reading thread may then sleep to its next heartbeat instead of ticking
    /// (an idle node's wake-ups are most of what it costs its host). A reader busy
    /// with the receive side counts as not idle.
    pub fn idle(&self) -> bool {
        let owed = self.released.load(Relaxed) > self.released_sent.load(Relaxed)
            || self.received.load(Relaxed) > self.ack_sent.load(Relaxed);
        !owed && self.lock_tx().settled() && self.rx.try_lock().is_ok_and(|rx| !rx.order.nak_out())
    }

    /// Whether bytes wait to be written (poll for writability).
    pub fn wants_write(&self) -> bool {
        self.lock_tx().wants_write(self.window())
    }

    /// Whether frames wait for the peer to confirm earlier ones (the send window is
    /// full): a sender then reads the link itself to see the acks sooner.
    pub fn window_full(&self) -> bool {
        self.lock_tx().window_full(self.window())
    }

    /// (window full, more than `limit` bytes unreleased), under one lock.
    pub fn pressure(&self, limit: usize) -> (bool, bool) {
        let tx = self.lock_tx();
        (tx.window_full(self.window()), tx.replay_bytes() > limit)
    }

    /// Whether the peer's release point moved since the last call (the hub then
    /// credits the deliveries it released).
    pub fn release_moved(&self) -> bool {
        let now = self.peer_released.load(Relaxed);
        if self.release_seen.load(Relaxed) == now {
            return false;
        }
        self.release_seen.swap(now, Relaxed) != now
    }

    /// Reads what the socket has and hands accepted frames to `h`. `Ok(true)` if
    /// anything was read. Never waits for the socket.
    pub fn receive(&self, h: &mut dyn Handler) -> Result<bool, LinkError> {
        let mut rx = self.rx.lock().unwrap_or_else(|e| e.into_inner());
        let mut any = false;
        // Bounded, so a peer that never stops sending cannot keep the caller here.
        for _ in 0..32 {
            let buf = rx.dec.spare(64 * 1024);
            match (&self.sock).read(buf) {
                Ok(0) => {
                    self.process(&mut rx, h)?;
                    return Err(LinkError::Closed);
                }
                Ok(n) => {
                    let short = n < rx.dec.spare(0).len();
                    rx.dec.filled(n);
                    add(&self.counters.bytes_rx, n as u64);
                    self.last_heard.store(coarse_ns(), Relaxed);
                    any = true;
                    self.process(&mut rx, h)?;
                    if short {
                        // The socket is drained (a short read): save the read that
                        // would say so; poll reports anything that arrives later.
                        break;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => break,
                Err(e) => return Err(LinkError::Io(Arc::new(e))),
            }
        }
        drop(rx);
        if any {
            self.send_release(false);
        }
        Ok(any)
    }

    fn process(&self, rx: &mut Receiving, h: &mut dyn Handler) -> Result<(), LinkError> {
        loop {
            let got = match rx.dec.next_borrowed() {
                Ok(Some(r)) => r,
                Ok(None) => return Ok(()),
                Err(WireError::Replayed { .. }) => {
                    // Seen before: verified, consumed and dropped; what it carried
                    // was accepted the first time or will be resent.
                    add(&self.counters.frames_rx, 1);
                    add(&self.counters.replays, 1);
                    continue;
                }
                Err(e) => {
                    if e == WireError::BadMac {
                        add(&self.counters.mac_failures, 1);
                    }
                    return Err(e.into());
                }
            };
            add(&self.counters.frames_rx, 1);
            let (hd, payload) = match got {
                Borrowed::Refused(why) => {
                    return Err(match JoinRefusal::get(why) {
                        Ok(r) => LinkError::Refused(r),
                        Err(e) => LinkError::BadRefusal(e),
                    })
                }
                Borrowed::Corrupt => {
                    add(&self.counters.crc_failures, 1);
                    self.nak(&mut rx.order);
                    continue;
                }
                Borrowed::Frame(hd, p) => (hd, p),
            };
            self.on_header_received(hd.received);
            if !hd.kind.reliable() {
                self.control(hd.kind, payload);
                h.control(self, hd.kind, payload);
                continue;
            }
            match rx.order.accept(hd.seq) {
                Accept::Duplicate => {
                    add(&self.counters.duplicates, 1);
                    continue;
                }
                Accept::Gap => {
                    add(&self.counters.discards, 1);
                    self.nak(&mut rx.order);
                    continue;
                }
                Accept::InOrder => {}
            }
            self.received.store(hd.seq, Relaxed);
            // Not locked against the sender's reset: a lost update only moves when
            // the next window ack goes out.
            add(
                &self.unacked_bytes,
                (wire::HEADER + hd.len + wire::MAC) as u64,
            );
            if hd.kind == Kind::Batch {
                for (kind, record) in wire::records(payload)? {
                    h.frame(self, hd.seq, kind, record);
                }
            } else {
                h.frame(self, hd.seq, hd.kind, payload);
            }
        }
    }

    fn nak(&self, rx: &mut Rx) {
        if let Some(expected) = rx.nak() {
            inc(&self.counters.naks);
            self.send_control(Kind::Nak, &expected.to_le_bytes());
        }
    }

    fn control(&self, kind: Kind, payload: &[u8]) {
        match kind {
            Kind::Release => {
                let mut g = wire::Get::new(payload, "ack");
                let (Ok(r), Ok(flags)) = (g.u64(), g.u8()) else {
                    return;
                };
                self.on_peer_released(r);
                if flags & ASK != 0 {
                    // Without a target (a peer of before targets) or with one reached
                    // (an answer that was lost is asked for again): answered at once.
                    let upto = g.u64().unwrap_or(0);
                    let have = self.released.load(Relaxed).max(self.received.load(Relaxed));
                    if upto > have {
                        self.ask_upto.fetch_max(upto, Relaxed);
                    }
                    if flags & ASK_NOW != 0 || upto <= have {
                        self.ack_now.store(true, Relaxed);
                    }
                }
            }
            Kind::Nak => {
                if let Ok(seq) = wire::Get::new(payload, "nak").u64() {
                    let mut tx = self.lock_tx();
                    tx.go_back(seq);
                    self.flush_locked(&mut tx);
                }
            }
            _ => {}
        }
    }

    /// Sends a heartbeat (with this end's counters) if nothing was written for
    /// `period`. Any thread may call it: a thread spinning on the link keeps it alive
    /// even when the timer thread beside it gets no CPU.
    pub fn heartbeat_if_quiet(&self, period: Duration) {
        let now = coarse_ns();
        let quiet = now.saturating_sub(self.last_sent.load(Relaxed));
        if quiet >= period.as_nanos() as u64 {
            self.send_control(Kind::Heartbeat, &crate::proto::heartbeat(&self.counters()));
        }
    }

    /// How long since bytes last arrived.
    pub fn silence(&self) -> Duration {
        let now = coarse_ns();
        Duration::from_nanos(now.saturating_sub(self.last_heard.load(Relaxed)))
    }

    /// The silence, if it is longer than `timeout` and no bytes wait unread in the
    /// socket: bytes there arrived, so the peer spoke and only this end's reader is
    /// late (a thread starved on a busy machine). Without that check a timer that
    /// runs before a starved reader would declare a healthy peer silent.
    pub fn silent_past(&self, timeout: Duration) -> Option<Duration> {
        let silent = self.silence();
        let unread = || matches!(rustix::io::ioctl_fionread(&self.sock), Ok(n) if n > 0);
        (silent > timeout && !unread()).then_some(silent)
    }

    /// This end's address.
    pub fn local_addr(&self) -> io::Result<std::net::SocketAddr> {
        self.sock.local_addr()
    }

    /// Highest seq the peer has released.
    pub fn peer_released(&self) -> u64 {
        self.peer_released.load(Relaxed)
    }

    /// Seq of the last reliable frame queued.
    pub fn last_sent(&self) -> u64 {
        self.lock_tx().last_seq()
    }

    /// Polls the socket for reading (and `extra`, e.g. a wake-up eventfd) for up to
    /// `timeout`, for writing too while bytes wait: a wait for data by a thread that
    /// reads the link itself. Returns whether the socket is readable.
    pub fn wait(&self, extra: Option<std::os::fd::BorrowedFd<'_>>, timeout: Duration) -> bool {
        use rustix::event::{poll, PollFd, PollFlags};
        let mut flags = PollFlags::IN;
        if self.wants_write() {
            flags |= PollFlags::OUT;
        }
        let mut fds = vec![PollFd::new(&self.sock, flags)];
        if let Some(e) = extra {
            fds.push(PollFd::from_borrowed_fd(e, PollFlags::IN));
        }
        let ts = rustix::time::Timespec {
            tv_sec: timeout.as_secs() as i64,
            tv_nsec: i64::from(timeout.subsec_nanos()),
        };
        let _ = poll(&mut fds, Some(&ts));
        let r = fds[0].revents();
        if r.contains(PollFlags::OUT) {
            let mut tx = self.lock_tx();
            self.flush_locked(&mut tx);
        }
        r.intersects(PollFlags::IN | PollFlags::HUP | PollFlags::ERR)
    }

    /// The link's reading thread waits here, up to `timeout`, for a frame (unless
    /// `away()`) or for room to write pending bytes (writing them); true if it should
    /// read. While `away()` holds, the threads that wait for data read the link
    /// themselves and this one does not listen for frames: the socket stays in its
    /// epoll set without `IN`, so a frame wakes only them. They call
    /// [`listen`](Self::listen) as the first starts and the last stops, which adds or
    /// removes `IN` under the same lock; epoll wakes a thread already waiting when `IN`
    /// is added on a socket with bytes to read, so a frame arriving after the last of
    /// them left is read at once. (An eventfd poked at each leave did that too, but
    /// woke this thread once per wait: on a node that busy-polls, a context switch per
    /// message, which tripled the cross-host spin latency.)
    pub fn serve_wait(&self, timeout: Duration, away: impl Fn() -> bool) -> bool {
        let out = self.wants_write();
        {
            let mut now = self.lock_interest();
            self.set_interest(&mut now, !away(), out);
        }
        let mut evs = [std::mem::MaybeUninit::<epoll::Event>::uninit(); 1];
        let ts = rustix::time::Timespec {
            tv_sec: timeout.as_secs() as i64,
            tv_nsec: i64::from(timeout.subsec_nanos()),
        };
        let got = match epoll::wait(&self.epoll, &mut evs, Some(&ts)) {
            Ok((ready, _)) => ready.first().map_or(EventFlags::empty(), |e| e.flags),
            Err(_) => EventFlags::empty(),
        };
        if got.contains(EventFlags::IN) {
            self.counters.reader_wakeups.fetch_add(1, Relaxed);
        }
        if got.contains(EventFlags::OUT) {
            let mut tx = self.lock_tx();
            self.flush_locked(&mut tx);
        }
        // `IN` may have been added while this thread slept (`listen`): read then.
        got.intersects(EventFlags::IN | EventFlags::HUP | EventFlags::ERR) && !away()
    }

    /// Makes the reading thread listen for frames, or not, as `away()` now says (see
    /// [`serve_wait`](Self::serve_wait)): called by a thread that reads the link
    /// itself when it becomes the first such thread and when it stops being one.
    pub fn listen(&self, away: impl Fn() -> bool) {
        let mut now = self.lock_interest();
        let out = now.contains(EventFlags::OUT);
        self.set_interest(&mut now, !away(), out);
    }

    fn lock_interest(&self) -> MutexGuard<'_, EventFlags> {
        self.interest.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn set_interest(&self, now: &mut EventFlags, read: bool, write: bool) {
        let mut want = EventFlags::empty();
        want.set(EventFlags::IN, read);
        want.set(EventFlags::OUT, write);
        if *now != want
            && epoll::modify(&self.epoll, &self.sock, epoll::EventData::new_u64(0), want).is_ok()
        {
            *now = want;
        }
    }

    /// Closes the link: wakes waiting senders, shuts the socket down.
    pub fn shutdown(&self) {
        self.down.store(true, Relaxed);
        self.lock_tx().closed = true;
        self.tx_cv.notify_all();
        let _ = self.sock.shutdown(std::net::Shutdown::Both);
    }

    /// Whether the link was shut down or its socket failed.
    pub fn is_down(&self) -> bool {
        self.down.load(Relaxed) || self.lock_tx().closed
    }

    /// The raw socket, for poll sets.
    pub fn fd(&self) -> std::os::fd::BorrowedFd<'_> {
        self.sock.as_fd()
    }

    /// This end's counters.
    pub fn counters(&self) -> LinkCounters {
        let c = &self.counters;
        // Read here (each heartbeat, each status), not per tick: one system call less
        // per wake-up of the reading thread.
        if let Some(r) = tcp::total_retrans(&self.sock) {
            c.tcp_retransmits.store(r, Relaxed);
        }
        LinkCounters {
            frames_tx: c.frames_tx.load(Relaxed),
            frames_rx: c.frames_rx.load(Relaxed),
            bytes_tx: c.bytes_tx.load(Relaxed),
            bytes_rx: c.bytes_rx.load(Relaxed),
            crc_failures: c.crc_failures.load(Relaxed),
            retransmits: c.retransmits.load(Relaxed),
            discards: c.discards.load(Relaxed),
            duplicates: c.duplicates.load(Relaxed),
            replays: c.replays.load(Relaxed),
            naks: c.naks.load(Relaxed),
            backpressure_waits: c.backpressure_waits.load(Relaxed),
            mac_failures: c.mac_failures.load(Relaxed),
            tcp_retransmits: c.tcp_retransmits.load(Relaxed),
            reader_wakeups: c.reader_wakeups.load(Relaxed),
        }
    }

    /// Waits while more than `limit` bytes are unreleased (another sender's back-pressure:
    /// the hub's own node writing into this link). Counted as a back-pressure wait.
    /// `false` if the peer released nothing for `timeout`.
    pub fn wait_replay_below(&self, limit: usize, timeout: Duration) -> bool {
        self.wait_replay(limit, timeout, true)
    }

    /// Waits until the peer released every reliable frame sent (an ack of this link
    /// alone); `false` if the peer released nothing for `timeout`. Not a
    /// back-pressure wait.
    pub fn wait_released(&self, timeout: Duration) -> bool {
        self.wait_replay(0, timeout, false)
    }

    fn wait_replay(&self, limit: usize, timeout: Duration, pressure: bool) -> bool {
        let tx = self.lock_tx();
        if tx.replay_bytes() <= limit || tx.closed {
            return true;
        }
        if pressure {
            inc(&self.counters.backpressure_waits);
        }
        let upto = tx.last_seq();
        drop(tx);
        self.ask_for_room(upto);
        let below = |tx: &Tx| tx.replay_bytes() <= limit;
        let tx = self.wait_tx(self.lock_tx(), timeout, below);
        below(&tx) || tx.closed
    }

    /// Waits on `tx_cv` until `done` holds, the link closes or the peer released
    /// nothing for `timeout` (a slow path that keeps releasing is not stalled: a full
    /// window, 16 MiB on a direct link, through a lossy network may take longer than
    /// a failure timeout to drain); registered as a waiter so that releases know to
    /// notify.
    fn wait_tx<'a>(
        &self,
        mut tx: MutexGuard<'a, Tx>,
        timeout: Duration,
        done: impl Fn(&Tx) -> bool,
    ) -> MutexGuard<'a, Tx> {
        tx.waiters += 1;
        let mut held = tx.replay_bytes();
        let mut deadline = Instant::now() + timeout;
        while !done(&tx) && !tx.closed {
            let now = Instant::now();
            if tx.replay_bytes() < held {
                held = tx.replay_bytes();
                deadline = now + timeout;
            }
            let left = deadline.saturating_duration_since(now);
            if left.is_zero() {
                break;
            }
            tx = self
                .tx_cv
                .wait_timeout(tx, left.min(Duration::from_millis(50)))
                .unwrap_or_else(|e| e.into_inner())
                .0;
        }
        tx.waiters -= 1;
        tx
    }

    /// Bytes held in the replay memory.
    pub fn replay_bytes(&self) -> usize {
        self.lock_tx().replay_bytes()
    }

    /// The seqs of the unreleased reliable frames of `kind`, ascending.
    pub fn unreleased(&self, kind: Kind) -> Vec<u64> {
        self.lock_tx().unreleased(kind)
    }

    /// Shuts the link down and takes the reliable frames its peer had not released,
    /// to go on over another connection under the same seqs ([`Link::resume`]; a
    /// rail switch, see [`crate::rail`]).
    pub fn take_held(&self) -> Held {
        self.shutdown();
        self.lock_tx().take_held()
    }

    /// A link over a new, handshaken connection that goes on where another left off:
    /// `held`'s frames keep their seqs and go first (stamped under `key`), the next
    /// frame sent gets `held.next_seq()`, and the peer's reliable frames are accepted
    /// from seq `expect` on. `Held::default()` and `expect` 1 make a new link.
    pub fn resume(
        sock: TcpStream,
        key: FrameKey,
        dec: Decoder,
        cfg: LinkConfig,
        held: Held,
        expect: u64,
    ) -> io::Result<Link> {
        Link::resume_announced(sock, key, dec, cfg, held, expect, None)
    }

    /// [`resume`](Self::resume), with the control frame `announce` written before any
    /// held frame: what the peer needs to know before it reads them (a node's
    /// `RailResume` at a standby hub).
    pub fn resume_announced(
        sock: TcpStream,
        key: FrameKey,
        dec: Decoder,
        cfg: LinkConfig,
        held: Held,
        expect: u64,
        announce: Option<(Kind, &[u8])>,
    ) -> io::Result<Link> {
        let link = Link::new(sock, key, dec, cfg)?;
        if let Some((kind, payload)) = announce {
            link.send_control(kind, payload);
        }
        let expect = expect.max(1);
        link.rx
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .order
            .expect_from(expect);
        // Both directions go on from where the old connection left them: ours from
        // the last frame accepted, the peer's from the first frame held.
        let before = held.first() - 1;
        let ours = [
            &link.received,
            &link.ack_sent,
            &link.released,
            &link.released_sent,
        ];
        let theirs = [
            &link.peer_received_seen,
            &link.peer_released,
            &link.release_seen,
        ];
        for (counters, at) in [(&ours[..], expect - 1), (&theirs[..], before)] {
            for c in counters {
                c.store(at, Relaxed);
            }
        }
        let mut tx = link.lock_tx();
        tx.resume(held);
        link.flush_locked(&mut tx);
        drop(tx);
        Ok(link)
    }
}
