//! The go-back-N state machine of a link, without I/O: the send side's replay memory,
//! window, write cursor and stamps ([`Tx`]) and the receive side's acceptance rule
//! ([`Rx`]). The link (`super`) owns the socket, the locks and the clocks; it tells
//! these what it wrote, what headers it read and what time it is. Kept apart so that
//! the window's edges (a half-written frame, a rewind that waits for a frame boundary,
//! a release of a frame being rewritten, counters in wire order) are tested by
//! property over any sequence of events, not only those a socket happens to produce.

use super::held::{kind_of, seq_of, Held};
use crate::wire::{self, FrameKey, Kind};
use std::collections::VecDeque;
use std::io::IoSlice;
use std::time::{Duration, Instant};

/// Frame buffers kept for reuse, and the largest capacity kept (a full packet's
/// frame): freeing 64 KiB frames lets the allocator return the memory to the kernel,
/// and every new frame then page-faults.
const POOL_FRAMES: usize = 64;
const POOLED_CAPACITY: usize = 80 * 1024;
/// Buffers an idle link keeps.
const POOL_IDLE: usize = 4;
/// Replay frames gathered into one write (with the half-written one and the control
/// frames, within [`Slices`]' 16).
const GATHER: usize = 14;
/// A NAK for the seq just rewound to, this soon after, asks for the same thing.
const NAK_REPEAT: Duration = Duration::from_millis(5);

/// How far a sender may run ahead of what the peer confirmed receiving.
#[derive(Debug, Clone, Copy)]
pub(super) struct Window {
    pub bytes: u64,
    pub frames: u64,
}

struct Frame {
    seq: u64,
    /// The counter `bytes` carry (0: not stamped yet).
    stamp: u64,
    bytes: Vec<u8>,
    /// Bytes of reliable frames sent on this link up to and including this one.
    end: u64,
    /// Records may still be added ([`Tx::append`]): no byte of it was ever gathered
    /// for writing, on this connection or on one it resumes.
    open: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Partial {
    None,
    Ctl,
    Replay,
}

/// The send side (see the link's module doc for the rules).
pub(super) struct Tx {
    next_seq: u64,
    /// The last frame counter given out (every frame, control or reliable, takes the
    /// next one).
    counter: u64,
    /// The highest counter written or queued to be written (in `ctl` or a half
    /// written frame): a replay frame may go out under its stamp only above it.
    floor: u64,
    /// Unreleased reliable frames, in seq order.
    replay: VecDeque<Frame>,
    replay_bytes: usize,
    /// Index in `replay` of the next frame to write.
    send_idx: usize,
    /// Bytes of `replay[send_idx]` (Partial::Replay) or of `ctl` (Partial::Ctl) written.
    off: usize,
    partial: Partial,
    /// Control frames waiting to be written.
    ctl: Vec<u8>,
    /// A rewind asked for while a frame was half written.
    rewind: Option<u64>,
    last_rewind: Option<(u64, Instant)>,
    /// Highest seq the peer received in order, and when that last grew.
    peer_received: u64,
    progress_at: u64,
    /// Current retransmit timeout (backs off while the peer makes no progress).
    rto: Duration,
    /// `end` of the last frame pushed, and of the last one released.
    pushed_end: u64,
    popped_end: u64,
    /// Buffers of released frames, reused for new ones (saves an allocation and a
    /// free per frame); trimmed when a tick finds the link idle.
    pool: Vec<Vec<u8>>,
    /// `next_seq` at the last tick.
    pool_mark: u64,
    /// Frames written whole or queued (control frames count when queued: one is never
    /// sent twice), and reliable frames rewound to be written again.
    pub frames_sent: u64,
    pub retransmits: u64,
    /// The socket failed or the link was shut down: nothing more is written.
    pub closed: bool,
    /// Frames were queued without a write since the last one (`Link::queue`).
    pub unflushed: bool,
    /// Threads waiting for replay memory (the link notifies only when there are some:
    /// a condvar notify is a system call, and the hub releases per frame received).
    pub waiters: usize,
}

impl Tx {
    /// A send side whose first frame is seq 1, with retransmit timeout `rto`, at
    /// coarse time `now_ns`.
    pub fn new(rto: Duration, now_ns: u64) -> Tx {
        Tx {
            next_seq: 1,
            counter: 0,
            floor: 0,
            replay: VecDeque::new(),
            replay_bytes: 0,
            send_idx: 0,
            off: 0,
            partial: Partial::None,
            ctl: Vec::new(),
            rewind: None,
            last_rewind: None,
            peer_received: 0,
            progress_at: now_ns,
            rto,
            pushed_end: 0,
            popped_end: 0,
            pool: Vec::new(),
            pool_mark: 1,
            frames_sent: 0,
            retransmits: 0,
            closed: false,
            unflushed: false,
            waiters: 0,
        }
    }

    /// Whether a frame of `size` bytes fits the replay memory of `limit` bytes (an
    /// empty one takes any frame).
    pub fn fits(&self, size: usize, limit: usize) -> bool {
        self.replay_bytes + size <= limit || self.replay.is_empty()
    }

    pub fn replay_bytes(&self) -> usize {
        self.replay_bytes
    }

    /// Seq of the last reliable frame queued.
    pub fn last_seq(&self) -> u64 {
        self.next_seq - 1
    }

    /// Takes the next seq and a buffer to encode its frame into.
    pub fn next_frame(&mut self) -> (u64, Vec<u8>) {
        let seq = self.next_seq;
        self.next_seq += 1;
        (seq, self.pool.pop().unwrap_or_default())
    }

    /// Appends a reliable frame (encoded unstamped, seq from [`next_frame`](Self::next_frame))
    /// to the replay memory.
    pub fn push(&mut self, bytes: Vec<u8>) {
        self.push_frame(bytes, true);
    }

    fn push_frame(&mut self, bytes: Vec<u8>, open: bool) {
        let seq = seq_of(&bytes);
        debug_assert!(self.replay.back().is_none_or(|f| f.seq + 1 == seq));
        self.replay_bytes += bytes.len();
        self.pushed_end += bytes.len() as u64;
        self.replay.push_back(Frame {
            seq,
            stamp: 0,
            bytes,
            end: self.pushed_end,
            open,
        });
    }

    /// Adds a record to the last reliable frame if that is a batch never stamped
    /// (so no byte of it was ever written: a frame the peer may have seen keeps its
    /// bytes) with room for it under `cap` payload bytes. Its seq if it did.
    pub fn append(&mut self, kind: Kind, parts: &[&[u8]], cap: usize) -> Option<u64> {
        let add = wire::RECORD_HEAD + parts.iter().map(|p| p.len()).sum::<usize>();
        let f = self.replay.back_mut()?;
        let payload = f.bytes.len() - wire::HEADER - wire::MAC;
        if !f.open || kind_of(&f.bytes) != Kind::Batch as u8 || payload + add > cap {
            return None;
        }
        wire::append_record(&mut f.bytes, kind, parts);
        f.end += add as u64;
        self.pushed_end += add as u64;
        self.replay_bytes += add;
        Some(f.seq)
    }

    /// Queues a control frame, stamped now: it goes out in order, before any replay
    /// frame not yet begun (its counter is above all of theirs, and those must be
    /// above it).
    pub fn queue_control(&mut self, key: &FrameKey, kind: Kind, received: u64, payload: &[u8]) {
        self.counter += 1;
        self.floor = self.counter;
        wire::encode(
            &mut self.ctl,
            key,
            self.counter,
            kind,
            0,
            received,
            &[payload],
        );
        self.frames_sent += 1;
    }

    /// What to write now, in wire order: the rest of a half-written frame, the queued
    /// control frames, then the replay frames from the send cursor on that the window
    /// lets go, stamped (counter, MAC, CRC) as they become due. Frames are never
    /// interleaved, so a rewind asked for mid-frame happens here, at the boundary.
    /// Write what the socket takes, then call [`advance`](Self::advance) with it.
    pub fn gather(&mut self, key: &FrameKey, w: Window) -> Slices<'_> {
        if self.partial == Partial::None {
            if let Some(seq) = self.rewind.take() {
                self.rewind_now(seq);
            }
        }
        let from =
            (self.send_idx + usize::from(self.partial == Partial::Replay)).min(self.replay.len());
        let (base_end, base_seq) = self.window_base();
        let count = self
            .replay
            .range(from..)
            .take(GATHER)
            .take_while(|f| within(f, base_end, base_seq, w))
            .count();
        // A frame keeps its stamp only if it is above everything written or queued
        // before it, else it is stamped anew (a MAC per retransmission; rarely one
        // more when control frames went first).
        let mut prev = self.floor;
        for f in self.replay.range_mut(from..from + count) {
            f.open = false;
            if f.stamp <= prev {
                self.counter += 1;
                f.stamp = self.counter;
                wire::stamp(&mut f.bytes, key, f.stamp);
            }
            prev = f.stamp;
        }
        let mut slices = Slices::default();
        match self.partial {
            Partial::Replay => {
                slices.push(&self.replay[self.send_idx].bytes[self.off..]);
                slices.push(&self.ctl);
            }
            Partial::Ctl => slices.push(&self.ctl[self.off..]),
            Partial::None => slices.push(&self.ctl),
        }
        for f in self.replay.range(from..from + count) {
            slices.push(&f.bytes);
        }
        slices
    }

    /// Moves the write cursors over `n` bytes written of what [`gather`](Self::gather)
    /// gave, in its order.
    pub fn advance(&mut self, mut n: usize) {
        if self.partial == Partial::Replay {
            let left = self.replay[self.send_idx].bytes.len() - self.off;
            if n < left {
                self.off += n;
                return;
            }
            n -= left;
            self.send_idx += 1;
            self.off = 0;
            self.partial = Partial::None;
            self.frames_sent += 1;
        }
        let from = if self.partial == Partial::Ctl {
            self.off
        } else {
            0
        };
        let left = self.ctl.len() - from;
        if left > 0 {
            if n < left {
                self.off = from + n;
                self.partial = Partial::Ctl;
                return;
            }
            n -= left;
            self.ctl.clear();
            self.off = 0;
            self.partial = Partial::None;
        }
        while n > 0 {
            let f = &self.replay[self.send_idx];
            let len = f.bytes.len();
            // Begun on the wire: its counter is spent.
            self.floor = self.floor.max(f.stamp);
            if n < len {
                self.off = n;
                self.partial = Partial::Replay;
                return;
            }
            n -= len;
            self.send_idx += 1;
            self.frames_sent += 1;
        }
    }

    /// Where the send window starts: the `end` and seq of the last frame the peer
    /// confirmed receiving (the first frame after it may always be sent).
    fn window_base(&self) -> (u64, u64) {
        let seq = self.peer_received;
        match self.replay.front() {
            Some(f) if seq >= f.seq => {
                let i = (seq - f.seq) as usize;
                (self.replay.get(i).map_or(self.pushed_end, |f| f.end), seq)
            }
            _ => (self.popped_end, seq),
        }
    }

    /// Whether the frame at the send cursor exists and fits the send window.
    fn window_open(&self, w: Window) -> bool {
        let Some(f) = self.replay.get(self.send_idx) else {
            return false;
        };
        let (base_end, base_seq) = self.window_base();
        within(f, base_end, base_seq, w)
    }

    /// Whether bytes wait to be written now.
    pub fn wants_write(&self, w: Window) -> bool {
        !self.closed
            && (!self.ctl.is_empty() || self.partial != Partial::None || self.window_open(w))
    }

    /// Whether the send side needs no timer: every frame written was confirmed
    /// received (released or not: a frame only the peer's application holds is never
    /// re-sent), nothing is queued or half written.
    pub fn settled(&self) -> bool {
        self.ctl.is_empty()
            && self.partial == Partial::None
            && self.send_idx == self.replay.len()
            && self
                .replay
                .back()
                .is_none_or(|f| f.seq <= self.peer_received)
    }

    /// Whether frames wait only for the peer to confirm earlier ones.
    pub fn window_full(&self, w: Window) -> bool {
        !self.closed
            && self.partial == Partial::None
            && self.send_idx < self.replay.len()
            && !self.window_open(w)
    }

    /// Whether frames wait to be written (sent for the first time or again).
    pub fn unsent(&self) -> bool {
        self.send_idx < self.replay.len()
    }

    fn rewind_now(&mut self, seq: u64) {
        let Some(front) = self.replay.front().map(|f| f.seq) else {
            return;
        };
        let idx = seq.saturating_sub(front) as usize;
        if idx < self.send_idx {
            self.retransmits += (self.send_idx - idx) as u64;
            self.send_idx = idx;
            self.last_rewind = Some((seq, Instant::now()));
        }
    }

    /// Rewinds the sender to `seq` (a NAK, or a timeout), at the next frame boundary.
    /// The caller writes after it.
    pub fn go_back(&mut self, seq: u64) {
        if let Some((s, at)) = self.last_rewind {
            if s == seq && at.elapsed() < NAK_REPEAT {
                return;
            }
        }
        if self.partial == Partial::Replay {
            self.rewind = Some(seq);
        } else {
            self.rewind_now(seq);
        }
    }

    /// A header's `received`: the peer received everything up to `ack`. Progress
    /// resets the retransmit timeout to `rto`.
    pub fn on_received(&mut self, ack: u64, now_ns: u64, rto: Duration) -> bool {
        if ack <= self.peer_received {
            return false;
        }
        self.peer_received = ack;
        self.progress_at = now_ns;
        self.rto = rto;
        true
    }

    /// Drops the frames up to `upto` from the replay memory (a frame half rewritten
    /// stays until its last byte is out). Whether any left.
    pub fn release(&mut self, upto: u64) -> bool {
        let mut freed = false;
        while let Some(f) = self.replay.front() {
            if f.seq > upto || (self.send_idx == 0 && self.partial == Partial::Replay) {
                break;
            }
            let mut f = self.replay.pop_front().expect("front");
            self.replay_bytes -= f.bytes.len();
            if f.bytes.capacity() <= POOLED_CAPACITY && self.pool.len() < POOL_FRAMES {
                f.bytes.clear();
                self.pool.push(std::mem::take(&mut f.bytes));
            }
            self.popped_end = f.end;
            self.send_idx = self.send_idx.saturating_sub(1);
            freed = true;
        }
        if self.rewind.is_some_and(|r| r <= upto) {
            self.rewind = None;
        }
        freed
    }

    /// The retransmit timer at coarse time `now_ns`: after `rto` without progress the
    /// first frame sent but not confirmed is due again, and the timeout doubles (up to
    /// `max`). The caller writes after it.
    pub fn on_timer(&mut self, now_ns: u64, max: Duration) {
        let unreceived = self.replay.front().and_then(|f| {
            let i = (self.peer_received + 1).saturating_sub(f.seq) as usize;
            (i < self.send_idx).then_some(i)
        });
        if let Some(i) = unreceived {
            if now_ns.saturating_sub(self.progress_at) > self.rto.as_nanos() as u64 {
                let seq = self.replay[i].seq;
                self.progress_at = now_ns;
                self.rto = (self.rto * 2).min(max);
                self.last_rewind = None;
                self.go_back(seq);
            }
        }
    }

    /// Trims the buffer pool if no frame was sent since the last call.
    pub fn trim_if_idle(&mut self) {
        if self.next_seq == self.pool_mark {
            self.pool.truncate(POOL_IDLE);
        }
        self.pool_mark = self.next_seq;
    }

    /// The seqs of the unreleased reliable frames of `kind`, ascending.
    pub fn unreleased(&self, kind: Kind) -> Vec<u64> {
        self.replay
            .iter()
            .filter(|f| kind_of(&f.bytes) == kind as u8)
            .map(|f| f.seq)
            .collect()
    }

    /// Empties the replay memory into a [`Held`] (the link is going down).
    pub fn take_held(&mut self) -> Held {
        let frames = self.replay.drain(..).map(|f| f.bytes).collect();
        self.replay_bytes = 0;
        self.send_idx = 0;
        self.off = 0;
        self.partial = Partial::None;
        self.rewind = None;
        Held {
            frames,
            next_seq: self.next_seq,
        }
    }

    /// Goes on where another link left off: `held`'s frames first, under their seqs.
    pub fn resume(&mut self, held: Held) {
        let before = held.first() - 1;
        self.next_seq = held.next_seq;
        self.pool_mark = held.next_seq;
        self.peer_received = before;
        for mut bytes in held.frames {
            // The old connection's header ack says nothing about this one's frames.
            bytes[24..32].fill(0);
            // The peer may have seen it on the old connection: its bytes stay as sent.
            self.push_frame(bytes, false);
        }
    }
}

/// Whether `f` may be on the wire with the window based at (`base_end`, `base_seq`):
/// the first frame past the base always may.
fn within(f: &Frame, base_end: u64, base_seq: u64, w: Window) -> bool {
    f.seq <= base_seq + 1 || (f.end - base_end <= w.bytes && f.seq - base_seq <= w.frames)
}

/// What the receive side decided about a reliable frame's seq.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Accept {
    /// The next one expected: taken.
    InOrder,
    /// Seen before: dropped.
    Duplicate,
    /// Past a missing one: dropped, the missing one asked for.
    Gap,
}

/// The receive side's order: the next seq it accepts.
pub(super) struct Rx {
    expected: u64,
    /// When we last asked for `expected` again.
    nak_at: Option<Instant>,
}

impl Rx {
    /// A receive side that accepts reliable frames from seq `expected` on.
    pub fn new(expected: u64) -> Rx {
        Rx {
            expected: expected.max(1),
            nak_at: None,
        }
    }

    /// Accepts from seq `expected` on (a link resumed over a new connection).
    pub fn expect_from(&mut self, expected: u64) {
        self.expected = expected.max(1);
        self.nak_at = None;
    }

    /// Accepts only the next seq.
    pub fn accept(&mut self, seq: u64) -> Accept {
        if seq < self.expected {
            Accept::Duplicate
        } else if seq > self.expected {
            Accept::Gap
        } else {
            self.expected += 1;
            self.nak_at = None;
            Accept::InOrder
        }
    }

    /// The seq to NAK after a gap or a corrupt frame, if not asked for already.
    pub fn nak(&mut self) -> Option<u64> {
        self.nak_at.is_none().then(|| {
            self.nak_at = Some(Instant::now());
            self.expected
        })
    }

    /// Whether a NAK is out, unanswered (its repeat is the timer's to send).
    pub fn nak_out(&self) -> bool {
        self.nak_at.is_some()
    }

    /// The seq to NAK again, if the last NAK went unanswered for `timeout`.
    pub fn nak_again(&mut self, timeout: Duration) -> Option<u64> {
        let due = self.nak_at.is_some_and(|at| at.elapsed() > timeout);
        due.then(|| {
            self.nak_at = Some(Instant::now());
            self.expected
        })
    }
}

/// Up to 16 non-empty byte slices for one write, gathered without allocating.
pub(super) struct Slices<'a> {
    s: [IoSlice<'a>; 16],
    n: usize,
    pub total: usize,
}

impl Default for Slices<'_> {
    fn default() -> Self {
        Slices {
            s: [IoSlice::new(&[]); 16],
            n: 0,
            total: 0,
        }
    }
}

impl<'a> Slices<'a> {
    fn push(&mut self, b: &'a [u8]) {
        if !b.is_empty() && self.n < self.s.len() {
            self.s[self.n] = IoSlice::new(b);
            self.n += 1;
            self.total += b.len();
        }
    }

    pub fn as_slices(&self) -> &[IoSlice<'a>] {
        &self.s[..self.n]
    }
}

/// Properties of the send side over random sequences of events, against a peer that
/// splits the written bytes into frames, drops, damages or doubles some of them, and
/// decodes and accepts the rest with the crate's own decoder and [`Rx`].
#[cfg(test)]
mod tests {
    use super::*;
    use crate::wire::{Borrowed, Decoder, Key, WireError, HEADER, MAC};
    use proptest::prelude::*;

    /// Small, so that random runs reach the replay memory's and the window's edges.
    const LIMIT: usize = 24 * 1024;
    const WINDOW: Window = Window {
        bytes: 8 * 1024,
        frames: 6,
    };
    const RTO: Duration = Duration::from_millis(100);
    /// Payload bytes of a batch.
    const BATCH: usize = 4000;

    #[derive(Debug, Clone, Copy)]
    enum Fault {
        Drop,
        Damage,
        Double,
    }

    #[derive(Debug, Clone)]
    enum Op {
        /// A reliable frame with this many payload bytes, if the replay memory has room.
        Push(usize),
        /// A record of this many bytes, added to the open batch or in a new one.
        Record(usize),
        Control,
        /// The socket takes this many bytes of what is ready.
        Write(usize),
        /// The peer's header `received` catches up with what it accepted.
        Ack,
        /// The peer asks for the first seq it lacks.
        Nak,
        /// The peer releases up to this fraction (of 255) of what it accepted.
        Release(u8),
        /// The retransmit timeout passes.
        Timer,
        /// The next whole frame on the wire meets this fault.
        Fault(Fault),
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            2 => (0usize..3000).prop_map(Op::Push),
            3 => (0usize..1200).prop_map(Op::Record),
            1 => Just(Op::Control),
            4 => (1usize..9000).prop_map(Op::Write),
            2 => Just(Op::Ack),
            1 => Just(Op::Nak),
            2 => any::<u8>().prop_map(Op::Release),
            1 => Just(Op::Timer),
            1 => prop_oneof![
                Just(Fault::Drop),
                Just(Fault::Damage),
                Just(Fault::Double)
            ]
            .prop_map(Op::Fault),
        ]
    }

    /// The receiving end, behind a faulty path.
    struct Peer {
        /// Bytes written and not yet a whole frame.
        wire: Vec<u8>,
        dec: Decoder,
        rx: Rx,
        /// Payloads accepted, in order.
        got: Vec<Vec<u8>>,
        fault: Option<Fault>,
        doubled: usize,
        replays: usize,
        /// A gap or damage was seen since the last NAK.
        nak_owed: bool,
    }

    impl Peer {
        fn received(&self) -> u64 {
            self.rx.expected - 1
        }

        fn feed(&mut self, bytes: &[u8]) {
            self.wire.extend_from_slice(bytes);
            loop {
                if self.wire.len() < HEADER {
                    return;
                }
                let len = u32::from_le_bytes(self.wire[8..12].try_into().unwrap()) as usize;
                let total = HEADER + len + MAC;
                if self.wire.len() < total {
                    return;
                }
                let mut frame: Vec<u8> = self.wire.drain(..total).collect();
                match self.fault.take() {
                    Some(Fault::Drop) => continue,
                    Some(Fault::Damage) => *frame.last_mut().unwrap() ^= 0x40,
                    Some(Fault::Double) => {
                        self.doubled += 1;
                        self.dec.push(&frame);
                    }
                    None => {}
                }
                self.dec.push(&frame);
                self.decode();
            }
        }

        fn decode(&mut self) {
            loop {
                match self.dec.next_borrowed() {
                    Ok(None) => return,
                    Ok(Some(Borrowed::Frame(hd, payload))) => {
                        if hd.kind.reliable() {
                            match self.rx.accept(hd.seq) {
                                Accept::InOrder if hd.kind == Kind::Batch => {
                                    let records = wire::records(payload).expect("a good batch");
                                    self.got.extend(records.map(|(_, r)| r.to_vec()));
                                }
                                Accept::InOrder => self.got.push(payload.to_vec()),
                                Accept::Gap => self.nak_owed = true,
                                Accept::Duplicate => {}
                            }
                        }
                    }
                    Ok(Some(Borrowed::Corrupt)) => self.nak_owed = true,
                    Err(WireError::Replayed { .. }) => self.replays += 1,
                    Ok(Some(Borrowed::Refused(_))) | Err(_) => {
                        panic!("the link wrote bytes the peer refuses")
                    }
                }
            }
        }
    }

    struct Run {
        tx: Tx,
        key: FrameKey,
        peer: Peer,
        sent: Vec<Vec<u8>>,
        now_ns: u64,
    }

    impl Run {
        fn new() -> Run {
            let keys = Key::from_secret(b"gbn properties").link(&[1; 16], &[2; 16]);
            Run {
                tx: Tx::new(RTO, 0),
                peer: Peer {
                    wire: Vec::new(),
                    dec: Decoder::new(Some(keys.to_hub.clone())),
                    rx: Rx::new(1),
                    got: Vec::new(),
                    fault: None,
                    doubled: 0,
                    replays: 0,
                    nak_owed: false,
                },
                key: keys.to_hub,
                sent: Vec::new(),
                now_ns: 0,
            }
        }

        fn apply(&mut self, op: &Op) {
            match *op {
                Op::Push(len) => {
                    let size = HEADER + len + MAC;
                    if self.tx.fits(size, LIMIT) {
                        let (seq, mut bytes) = self.tx.next_frame();
                        let payload: Vec<u8> = (0..len).map(|i| (seq as usize + i) as u8).collect();
                        wire::encode_unstamped(&mut bytes, Kind::Data, seq, 0, &[&payload]);
                        self.tx.push(bytes);
                        self.sent.push(payload);
                    }
                }
                Op::Record(len) => {
                    let payload: Vec<u8> = (0..len).map(|i| (i * 7 + len) as u8).collect();
                    let size = HEADER + wire::RECORD_HEAD + len + MAC;
                    if self.tx.append(Kind::Deliver, &[&payload], BATCH).is_some() {
                        self.sent.push(payload);
                    } else if self.tx.fits(size, LIMIT) {
                        let (seq, mut bytes) = self.tx.next_frame();
                        wire::encode_unstamped(&mut bytes, Kind::Batch, seq, 0, &[]);
                        wire::append_record(&mut bytes, Kind::Deliver, &[&payload]);
                        self.tx.push(bytes);
                        self.sent.push(payload);
                    }
                }
                Op::Control => {
                    let r = self.peer.received();
                    self.tx
                        .queue_control(&self.key, Kind::Heartbeat, r, b"alive");
                }
                Op::Write(n) => self.write(n),
                Op::Ack => {
                    let r = self.peer.received();
                    self.tx.on_received(r, self.now_ns, RTO);
                }
                Op::Nak => {
                    if std::mem::take(&mut self.peer.nak_owed) {
                        self.tx.go_back(self.peer.rx.expected);
                    }
                }
                Op::Release(f) => {
                    let upto = self.peer.received() * u64::from(f) / 255;
                    self.tx.release(upto);
                }
                Op::Timer => {
                    self.now_ns += 10 * RTO.as_nanos() as u64;
                    self.tx.on_timer(self.now_ns, RTO * 16);
                }
                Op::Fault(f) => self.peer.fault = Some(f),
            }
            self.check();
        }

        /// What the socket takes: up to `n` bytes of what is ready, in order.
        fn write(&mut self, n: usize) {
            let slices = self.tx.gather(&self.key, WINDOW);
            let mut out = Vec::new();
            for s in slices.as_slices() {
                let room = n - out.len();
                out.extend_from_slice(&s[..s.len().min(room)]);
            }
            if !out.is_empty() {
                self.tx.advance(out.len());
                self.peer.feed(&out);
            }
        }

        /// The invariants that hold after every event.
        fn check(&self) {
            let tx = &self.tx;
            assert!(
                tx.replay_bytes <= LIMIT + HEADER + BATCH + MAC,
                "replay memory {} past its limit",
                tx.replay_bytes
            );
            assert_eq!(
                tx.replay_bytes,
                tx.replay.iter().map(|f| f.bytes.len()).sum::<usize>()
            );
            // Every frame begun on the wire began inside the window, and the window's
            // base only moves forward, so each is inside it still.
            let begun = tx.send_idx + usize::from(tx.partial == Partial::Replay);
            let (base_end, base_seq) = tx.window_base();
            for f in tx.replay.range(..begun.min(tx.replay.len())) {
                assert!(
                    within(f, base_end, base_seq, WINDOW),
                    "seq {} on the wire outside the window based at {base_seq}",
                    f.seq
                );
            }
            assert!(tx.send_idx <= tx.replay.len());
            let wrong = self
                .peer
                .got
                .iter()
                .zip(&self.sent)
                .position(|(a, b)| a != b);
            assert_eq!(wrong, None, "frame accepted out of order");
            assert_eq!(
                self.peer.replays, self.peer.doubled,
                "a counter repeated other than by a doubled frame"
            );
        }

        /// Runs the link to quiet: everything pushed is accepted, exactly once, in order.
        fn drain(&mut self) {
            self.peer.fault = None;
            for _ in 0..10_000 {
                if self.peer.got.len() == self.sent.len() {
                    break;
                }
                self.write(usize::MAX);
                for op in [Op::Ack, Op::Nak, Op::Release(255), Op::Timer] {
                    self.apply(&op);
                }
            }
            assert_eq!(
                self.peer.got.len(),
                self.sent.len(),
                "not everything pushed was accepted"
            );
            self.check();
            // A rewrite the timer began goes out whole (released mid-frame it would not).
            self.write(usize::MAX);
            self.apply(&Op::Ack);
            self.apply(&Op::Release(255));
            assert_eq!(self.tx.replay_bytes, 0, "released frames stayed in memory");
        }
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(256))]

        #[test]
        fn any_sequence_of_events_delivers_each_frame_once_in_order_within_the_window(
            ops in proptest::collection::vec(op(), 1..200)
        ) {
            let mut run = Run::new();
            for op in &ops {
                run.apply(op);
            }
            run.drain();
        }
    }

    #[test]
    fn a_release_of_the_frame_being_rewritten_waits_for_its_last_byte() {
        let mut run = Run::new();
        for op in [Op::Push(2000), Op::Push(2000), Op::Write(100_000)] {
            run.apply(&op);
        }
        // Both frames written and received; the peer asks for seq 1 again (as after a
        // damaged copy), and the rewrite of seq 1 stops halfway.
        run.tx.on_timer(u64::MAX / 2, RTO * 16);
        run.apply(&Op::Write(500));
        assert_eq!(run.tx.partial, Partial::Replay);
        run.apply(&Op::Ack);
        run.apply(&Op::Release(255));
        assert_eq!(
            run.tx.replay.front().map(|f| f.seq),
            Some(1),
            "half-written frame freed"
        );
        run.apply(&Op::Write(100_000));
        run.apply(&Op::Release(255));
        assert!(run.tx.replay.is_empty());
        assert!(
            run.peer.got == run.sent,
            "the rewrite delivered the wrong frames"
        );
    }

    #[test]
    fn the_first_frame_past_the_base_goes_whatever_its_size() {
        let mut run = Run::new();
        run.apply(&Op::Push(2900));
        let big = Window {
            bytes: 10,
            frames: 1,
        };
        let n = run.tx.gather(&run.key, big).total;
        assert_eq!(n, HEADER + 2900 + MAC);
        run.tx.advance(n);
        run.apply(&Op::Push(10));
        assert_eq!(
            run.tx.gather(&run.key, big).total,
            0,
            "second frame past a 1-frame window"
        );
        run.tx.on_received(1, 0, RTO);
        assert_eq!(run.tx.gather(&run.key, big).total, HEADER + 10 + MAC);
    }
}
