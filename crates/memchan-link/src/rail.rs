//! Dual rail, the part a switch of hubs rests on: what a node records of the active
//! hub's order ([`Applied`]), the [`Report`] it hands the standby hub at a switch, and
//! the standby's [`plan`] for ordering again the packets the old hub may have left
//! half delivered, so that no write is lost, applied twice or seen out of order.
//!
//! The active hub numbers every packet it orders (`gseq`, one counter for the whole
//! cluster) and tells the nodes, from time to time, its *release mark*: every packet
//! up to it was released by all its destinations. A node records each packet it
//! applies as an [`Entry`] (origin, the origin's seq of it, its gseq) and keeps the
//! entries above the release mark, at most [`HISTORY`] of them. At a switch each node
//! reports what it applied (the last gseq, per origin the last seq, the entries) and
//! which of its own packets its replay memory still holds (not released). From all
//! reports [`plan`] orders every held packet: those some node applied keep their old
//! order (by gseq); one that no node applied goes right before its sender's next packet
//! of known place, or after all of them. Every node then receives the packets of the
//! plan meant for it and skips those it applied already ([`Applied::is_applied`]: a
//! node applies each origin's packets in that origin's order, so "applied" is "seq not
//! above the origin's mark").
//!
//! Why the order holds: a node applies a prefix of the old order restricted to it. A
//! packet no node applied can only be constrained by packets already applied by one of
//! its destinations, and those precede it in the old order, so also its sender's later
//! packets of known place; and two packets no node applied may go either way. The
//! standby gives the plan's packets consecutive gseqs and each node renumbers its
//! history to them ([`Plan::renumber`], [`Applied::rebase`]), so a second switch
//! compares places in one numbering. The
//! plan needs the gseq of every held packet some node applied: a node that dropped an
//! entry above the release mark (more than [`HISTORY`] packets in flight) makes the
//! plan fail with [`RailError::HistoryGap`] rather than guess.
//!
//! Not covered: packets whose sender fails together with the active hub (their copies
//! that did not reach every destination are lost, as for a sender isolated with a
//! single rail), and time packets in flight at the switch. The other packets the hub
//! makes itself are made again: an rx snapshot by the map asked again at the standby,
//! a lock slot's clearing by the standby at the end of its takeover
//! (`memchan-hub`'s `standby.rs`, which also rebuilds lock pages from the nodes'
//! copies). The node's side of a switch is `memchan-net`'s `rail_switch.rs`.

use crate::wire::{Get, Put, WireError, MAX_PAYLOAD};
use memchan_core::MAX_NODES;
use std::collections::{HashMap, VecDeque};

/// Bytes before the Deliver payload in a `RailDeliver` frame: the sender's seq and
/// the gseq.
pub const RAIL_HEAD: usize = 16;

/// Encodes a `RailDeliver` frame's head.
pub fn rail_head(oseq: u64, gseq: u64) -> [u8; RAIL_HEAD] {
    let mut h = [0u8; RAIL_HEAD];
    h[..8].copy_from_slice(&oseq.to_le_bytes());
    h[8..].copy_from_slice(&gseq.to_le_bytes());
    h
}

/// Splits a `RailDeliver` payload into (sender's seq, gseq, Deliver payload).
///
/// # Errors
/// `Malformed` if it is shorter than its head.
pub fn get_rail_deliver(b: &[u8]) -> Result<(u64, u64, &[u8]), WireError> {
    let mut g = Get::new(b, "rail deliver");
    Ok((g.u64()?, g.u64()?, g.rest()))
}

/// Applied packets a node remembers above the release mark, at most (18 bytes each in
/// a report, so a report of a full history stays well under a frame's limit).
pub const HISTORY: usize = 32 * 1024;
/// Unreleased packets a report may name, at most: more than a replay memory of the
/// default 16 MiB holds even of the smallest packets.
pub const MAX_HELD: usize = 1 << 20;

/// One applied packet: who sent it, the sender's seq of it, its place in the hub's
/// order.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry {
    /// The sending node.
    pub origin: u16,
    /// The sender's seq of the packet (its link seq, kept across a switch).
    pub oseq: u64,
    /// Its place in the active hub's order.
    pub gseq: u64,
}

/// Why a rail report or a plan is refused.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RailError {
    /// The report's bytes do not parse.
    #[error("malformed rail report: {0}")]
    Malformed(#[from] WireError),
    /// A report that parses but contradicts itself.
    #[error("node {node}'s rail report: {why}")]
    BadReport {
        /// The reporting node.
        node: u16,
        /// What is wrong.
        why: String,
    },
    /// Two reports name the same node.
    #[error("two rail reports from node {0}")]
    TwiceReported(u16),
    /// A node forgot the place of packets that may still be half delivered.
    #[error(
        "node {node} remembers the packets it applied only after #{complete_after}, \
         but those after #{released} may still be half delivered"
    )]
    HistoryGap {
        /// The node.
        node: u16,
        /// It remembers every packet it applied after this gseq.
        complete_after: u64,
        /// The release mark: every packet up to it reached every destination.
        released: u64,
    },
    /// The reports disagree on the old order.
    #[error("the rail reports disagree on the hub's order: {0}")]
    Conflict(String),
    /// A report too large for one frame.
    #[error("a rail report of {0} bytes exceeds the frame limit")]
    TooLarge(usize),
    /// The hub's order went backward at this node.
    #[error("packet #{gseq} from node {origin} (its seq {oseq}) after #{applied}, or after its seq {mark}")]
    OutOfOrder {
        /// The packet's origin.
        origin: u16,
        /// Its seq.
        oseq: u64,
        /// Its gseq.
        gseq: u64,
        /// The last gseq applied before it.
        applied: u64,
        /// The last seq of that origin applied before it.
        mark: u64,
    },
}

/// What a node applied of the hub's order (see the module doc).
#[derive(Debug, Clone)]
pub struct Applied {
    applied: u64,
    released: u64,
    complete_after: u64,
    /// Per origin, the last seq applied (0: none; seqs start at 1).
    marks: Vec<u64>,
    history: VecDeque<Entry>,
    cap: usize,
}

impl Default for Applied {
    fn default() -> Self {
        Applied::new(HISTORY)
    }
}

impl Applied {
    /// Nothing applied; remembers at most `cap` entries above the release mark.
    pub fn new(cap: usize) -> Applied {
        Applied {
            applied: 0,
            released: 0,
            complete_after: 0,
            marks: vec![0; MAX_NODES],
            history: VecDeque::new(),
            cap,
        }
    }

    /// Whether the packet `oseq` of `origin` was applied here already: a packet ordered
    /// again after a switch that this node must skip.
    pub fn is_applied(&self, origin: u16, oseq: u64) -> bool {
        self.marks
            .get(usize::from(origin))
            .is_some_and(|&m| oseq <= m)
    }

    /// A new incarnation of `origin` joined: its link numbers its packets from 1 again,
    /// so the seqs of the node that had the id before say nothing about them. (The
    /// hub orders the join after every packet of the one that left.) The old one's
    /// entries go too: a switch never orders a gone sender's packets again, and a
    /// report must not hold entries beyond their origin's mark.
    pub fn new_origin(&mut self, origin: u16) {
        if let Some(m) = self.marks.get_mut(usize::from(origin)) {
            *m = 0;
            self.history.retain(|e| e.origin != origin);
        }
    }

    /// Records a packet applied in the hub's order.
    ///
    /// # Errors
    /// `OutOfOrder` if `e` is not after everything recorded (by gseq, and by seq among
    /// its origin's packets): the caller skips packets [`is_applied`](Self::is_applied)
    /// says were applied, so this is a hub that broke its order.
    pub fn record(&mut self, e: Entry) -> Result<(), RailError> {
        let mark = self.marks.get(usize::from(e.origin)).copied();
        if e.gseq <= self.applied || mark.is_none_or(|m| e.oseq <= m) {
            return Err(RailError::OutOfOrder {
                origin: e.origin,
                oseq: e.oseq,
                gseq: e.gseq,
                applied: self.applied,
                mark: mark.unwrap_or(u64::MAX),
            });
        }
        self.marks[usize::from(e.origin)] = e.oseq;
        self.applied = e.gseq;
        if e.gseq > self.released {
            self.history.push_back(e);
            if self.history.len() > self.cap {
                if let Some(old) = self.history.pop_front() {
                    self.complete_after = old.gseq;
                }
            }
        }
        Ok(())
    }

    /// The hub's release mark: every packet up to `gseq` reached all its destinations,
    /// so no switch needs its place any more. A stale (lower) mark changes nothing.
    pub fn released_upto(&mut self, gseq: u64) {
        if gseq <= self.released {
            return;
        }
        self.released = gseq;
        while self.history.front().is_some_and(|e| e.gseq <= gseq) {
            self.history.pop_front();
        }
    }

    /// Takes the standby's numbering once it planned a switch: the entries
    /// [`Plan::renumber`] gave for this node's report replace the history (entries of
    /// packets not in the plan were released everywhere, or their sender is gone), and
    /// everything before `next_gseq` counts as released. So the next switch compares
    /// places in one numbering, the standby's order (in which each node's applied
    /// packets precede all it has yet to apply).
    ///
    /// # Errors
    /// `OutOfOrder` if `renumbered` is not ascending by gseq from `next_gseq` (a
    /// standby that broke its plan).
    pub fn rebase(&mut self, renumbered: &[Entry], next_gseq: u64) -> Result<(), RailError> {
        let mut last = next_gseq.saturating_sub(1);
        for e in renumbered {
            let mark = self.marks.get(usize::from(e.origin)).copied().unwrap_or(0);
            if e.gseq <= last || e.oseq > mark {
                return Err(RailError::OutOfOrder {
                    origin: e.origin,
                    oseq: e.oseq,
                    gseq: e.gseq,
                    applied: last,
                    mark,
                });
            }
            last = e.gseq;
        }
        self.history = renumbered.iter().copied().collect();
        self.applied = last;
        self.released = next_gseq.saturating_sub(1);
        self.complete_after = self.released;
        Ok(())
    }

    /// The last gseq applied (0: none).
    pub fn applied(&self) -> u64 {
        self.applied
    }

    /// Entries held (what a report carries).
    pub fn remembered(&self) -> usize {
        self.history.len()
    }

    /// This node's report for the standby hub; `unreleased` are the seqs of its own
    /// packets still in its replay memory, ascending.
    pub fn report(&self, node: u16, unreleased: Vec<u64>) -> Report {
        Report {
            node,
            applied: self.applied,
            released: self.released,
            complete_after: self.complete_after,
            marks: self
                .marks
                .iter()
                .enumerate()
                .filter(|(_, &m)| m != 0)
                .map(|(o, &m)| (o as u16, m))
                .collect(),
            history: self.history.iter().copied().collect(),
            unreleased,
        }
    }
}

/// A node's account at a switch (see the module doc).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Report {
    /// The reporting node.
    pub node: u16,
    /// The last gseq it applied.
    pub applied: u64,
    /// The highest release mark it heard.
    pub released: u64,
    /// It remembers every packet it applied after this gseq.
    pub complete_after: u64,
    /// Per origin (ascending) the last seq applied.
    pub marks: Vec<(u16, u64)>,
    /// Applied packets above the release mark, ascending by gseq.
    pub history: Vec<Entry>,
    /// Seqs of its own packets not released, ascending.
    pub unreleased: Vec<u64>,
}

const MARK_BYTES: usize = 10;
const ENTRY_BYTES: usize = 18;
const RUN_BYTES: usize = 12;

impl Report {
    /// The report as a frame payload; the unreleased seqs go as runs of consecutive
    /// seqs (a replay memory holds mostly consecutive packets).
    ///
    /// # Errors
    /// `TooLarge` beyond a frame's payload limit.
    pub fn encode(&self) -> Result<Vec<u8>, RailError> {
        if self.unreleased.len() > MAX_HELD {
            return Err(RailError::TooLarge(self.unreleased.len() * 8));
        }
        let runs = runs(&self.unreleased);
        let size = 2
            + 3 * 8
            + 2
            + self.marks.len() * MARK_BYTES
            + 4
            + self.history.len() * ENTRY_BYTES
            + 4
            + runs.len() * RUN_BYTES;
        if size > MAX_PAYLOAD {
            return Err(RailError::TooLarge(size));
        }
        let mut p = Put(Vec::with_capacity(size))
            .u16(self.node)
            .u64(self.applied)
            .u64(self.released)
            .u64(self.complete_after)
            .u16(self.marks.len() as u16);
        for &(o, m) in &self.marks {
            p = p.u16(o).u64(m);
        }
        p = p.u32(self.history.len() as u32);
        for e in &self.history {
            p = p.u16(e.origin).u64(e.oseq).u64(e.gseq);
        }
        p = p.u32(runs.len() as u32);
        for &(start, n) in &runs {
            p = p.u64(start).u32(n);
        }
        Ok(p.0)
    }

    /// Parses and checks a report another node sent (hostile bytes: every count is
    /// checked against the bytes present before anything is allocated).
    ///
    /// # Errors
    /// `Malformed` if the bytes do not parse, `BadReport` if the report contradicts
    /// itself.
    pub fn decode(b: &[u8]) -> Result<Report, RailError> {
        const WHAT: &str = "rail report";
        let mut g = Get::new(b, WHAT);
        let node = g.u16()?;
        let applied = g.u64()?;
        let released = g.u64()?;
        let complete_after = g.u64()?;
        let n = usize::from(g.u16()?);
        let mut marks = Vec::with_capacity(n);
        for _ in 0..n {
            marks.push((g.u16()?, g.u64()?));
        }
        let n = g.u32()? as usize;
        if n > b.len() / ENTRY_BYTES {
            return Err(WireError::Malformed(WHAT).into());
        }
        let mut history = Vec::with_capacity(n);
        for _ in 0..n {
            history.push(Entry {
                origin: g.u16()?,
                oseq: g.u64()?,
                gseq: g.u64()?,
            });
        }
        let n = g.u32()? as usize;
        if n > b.len() / RUN_BYTES {
            return Err(WireError::Malformed(WHAT).into());
        }
        let mut unreleased = Vec::new();
        for _ in 0..n {
            let (start, len) = (g.u64()?, u64::from(g.u32()?));
            // Runs may not name more than a replay memory can hold.
            if len == 0 || unreleased.len() as u64 + len > MAX_HELD as u64 {
                return Err(WireError::Malformed(WHAT).into());
            }
            let end = start.checked_add(len).ok_or(WireError::Malformed(WHAT))?;
            unreleased.extend(start..end);
        }
        if !g.rest().is_empty() {
            return Err(WireError::Malformed(WHAT).into());
        }
        let r = Report {
            node,
            applied,
            released,
            complete_after,
            marks,
            history,
            unreleased,
        };
        r.check()?;
        Ok(r)
    }

    /// Whether the report is consistent in itself.
    ///
    /// # Errors
    /// `BadReport` naming the first contradiction.
    pub fn check(&self) -> Result<(), RailError> {
        let bad = |why: String| {
            Err(RailError::BadReport {
                node: self.node,
                why,
            })
        };
        if usize::from(self.node) >= MAX_NODES {
            return bad(format!("node id {} out of range", self.node));
        }
        if self.complete_after > self.applied {
            return bad(format!(
                "remembers from #{} but applied only up to #{}",
                self.complete_after, self.applied
            ));
        }
        let mut marks = vec![0u64; MAX_NODES];
        let mut last = None;
        for &(o, m) in &self.marks {
            if usize::from(o) >= MAX_NODES || m == 0 || last.is_some_and(|l| o <= l) {
                return bad(format!("mark ({o}, {m}) out of range or order"));
            }
            marks[usize::from(o)] = m;
            last = Some(o);
        }
        let mut last_g = 0;
        for e in &self.history {
            if e.gseq <= last_g || e.gseq > self.applied {
                return bad(format!("entry #{} out of order", e.gseq));
            }
            if usize::from(e.origin) >= MAX_NODES
                || e.oseq == 0
                || e.oseq > marks[usize::from(e.origin)]
            {
                return bad(format!(
                    "entry #{} of node {} seq {} beyond its mark",
                    e.gseq, e.origin, e.oseq
                ));
            }
            last_g = e.gseq;
        }
        if self.unreleased.first() == Some(&0) || self.unreleased.windows(2).any(|w| w[0] >= w[1]) {
            return bad("unreleased seqs not ascending from 1".into());
        }
        Ok(())
    }
}

/// Consecutive runs of an ascending list: (first, length).
fn runs(seqs: &[u64]) -> Vec<(u64, u32)> {
    let mut out: Vec<(u64, u32)> = Vec::new();
    for &s in seqs {
        match out.last_mut() {
            Some((start, n)) if *start + u64::from(*n) == s && *n < u32::MAX => *n += 1,
            _ => out.push((s, 1)),
        }
    }
    out
}

/// The standby hub's order for the packets the senders still hold.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// (origin, seq) in the order to deliver them; each destination skips those it
    /// applied.
    pub order: Vec<(u16, u64)>,
    /// The first gseq the standby gives out: above every one the old hub gave.
    pub next_gseq: u64,
}

impl Plan {
    /// The standby's numbering of the packets of `r`'s history that the plan orders
    /// again (what that node's [`Applied::rebase`] takes): the `i`th packet of the
    /// plan gets gseq `next_gseq + i`. Ascending, as the plan keeps each node's
    /// applied packets in their old order.
    pub fn renumber(&self, r: &Report) -> Vec<Entry> {
        let at: HashMap<(u16, u64), u64> = self
            .order
            .iter()
            .enumerate()
            .map(|(i, &k)| (k, self.next_gseq + i as u64))
            .collect();
        let mut out: Vec<Entry> = r
            .history
            .iter()
            .filter_map(|e| {
                at.get(&(e.origin, e.oseq)).map(|&gseq| Entry {
                    origin: e.origin,
                    oseq: e.oseq,
                    gseq,
                })
            })
            .collect();
        out.sort_unstable_by_key(|e| e.gseq);
        out
    }
}

/// Orders the packets the reporting nodes still hold (see the module doc). `reports`
/// are those of every node taking part in the switch; a node without a report is
/// gone, and so is what only it applied.
///
/// # Errors
/// `BadReport`, `TwiceReported`, `Conflict` for reports that cannot all be true;
/// `HistoryGap` when a node forgot the place of a packet that may be half delivered.
pub fn plan(reports: &[Report]) -> Result<Plan, RailError> {
    let mut seen = vec![false; MAX_NODES];
    for r in reports {
        r.check()?;
        let s = &mut seen[usize::from(r.node)];
        if *s {
            return Err(RailError::TwiceReported(r.node));
        }
        *s = true;
    }
    // Any node's mark is a fact about the whole cluster; the highest is the best.
    let released = reports.iter().map(|r| r.released).max().unwrap_or(0);
    if let Some(r) = reports.iter().find(|r| r.complete_after > released) {
        return Err(RailError::HistoryGap {
            node: r.node,
            complete_after: r.complete_after,
            released,
        });
    }
    let mut known: HashMap<(u16, u64), u64> = HashMap::new();
    let mut owner: HashMap<u64, (u16, u64)> = HashMap::new();
    let mut top = released;
    for r in reports {
        top = top.max(r.applied);
        for e in &r.history {
            let key = (e.origin, e.oseq);
            if *known.entry(key).or_insert(e.gseq) != e.gseq
                || *owner.entry(e.gseq).or_insert(key) != key
            {
                return Err(RailError::Conflict(format!(
                    "node {} puts seq {} of node {} at #{}, another node disagrees",
                    r.node, e.oseq, e.origin, e.gseq
                )));
            }
        }
    }
    // Sort key: (gseq of the packet, or of its sender's next packet of known place,
    // u64::MAX if none), packets of unknown place first, then sender and seq.
    let mut keys: Vec<(u64, u8, u16, u64)> = Vec::new();
    for r in reports {
        let mut next = u64::MAX;
        for &s in r.unreleased.iter().rev() {
            match known.get(&(r.node, s)) {
                Some(&g) => {
                    if g >= next {
                        return Err(RailError::Conflict(format!(
                            "node {}'s seq {s} is at #{g}, not before its later packets",
                            r.node
                        )));
                    }
                    next = g;
                    keys.push((g, 1, r.node, s));
                }
                None => keys.push((next, 0, r.node, s)),
            }
        }
    }
    keys.sort_unstable();
    Ok(Plan {
        order: keys.into_iter().map(|(_, _, o, s)| (o, s)).collect(),
        next_gseq: top + 1,
    })
}

/// A node's `RailResume` (the first frame of its link at a standby hub): who it is,
/// where its resent frames start, what it maps rx, and its [`Report`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resume {
    /// The node id it had at the active hub.
    pub node: u16,
    /// Its incarnation there.
    pub inc: u64,
    /// The seq of its first resent frame (its next seq if none).
    pub first_seq: u64,
    /// Its rx mappings: (segment id, generation).
    pub rx: Vec<(u32, u32)>,
    /// Per barrier scope, its arrivals since it joined (`proto::Op::Barrier`'s
    /// number): the standby counts the ones its copy missed.
    pub barriers: Vec<(u16, u64)>,
    /// Its copy of each cluster lock page it maps rx: (segment id, generation, the
    /// bid bytes). The standby's own copy of a lock page is a heartbeat old; it takes
    /// the copy of the node that applied the most of the old order instead (see
    /// `memchan-hub`'s `standby.rs`).
    pub locks: Vec<(u32, u32, Vec<u8>)>,
    /// Its account of the old order.
    pub report: Report,
}

impl Resume {
    /// The frame payload.
    ///
    /// # Errors
    /// `TooLarge` beyond a frame's payload limit.
    pub fn encode(&self) -> Result<Vec<u8>, RailError> {
        let report = self.report.encode()?;
        let mut p = Put(Vec::with_capacity(24 + self.rx.len() * 8 + report.len()))
            .u16(self.node)
            .u64(self.inc)
            .u64(self.first_seq)
            .u32(self.rx.len() as u32);
        for &(seg, gen) in &self.rx {
            p = p.u32(seg).u32(gen);
        }
        p = p.u32(self.barriers.len() as u32);
        for &(scope, number) in &self.barriers {
            p = p.u16(scope).u64(number);
        }
        p = p.u32(self.locks.len() as u32);
        for (seg, gen, bids) in &self.locks {
            p = p.u32(*seg).u32(*gen).u16(bids.len() as u16).bytes(bids);
        }
        let b = p.bytes(&report).0;
        if b.len() > MAX_PAYLOAD {
            return Err(RailError::TooLarge(b.len()));
        }
        Ok(b)
    }

    /// Parses and checks a node's resume (hostile bytes).
    ///
    /// # Errors
    /// `Malformed` or `BadReport` as [`Report::decode`]; `BadReport` also if the report
    /// names another node, or a held seq is below `first_seq`.
    pub fn decode(b: &[u8]) -> Result<Resume, RailError> {
        let mut g = Get::new(b, "rail resume");
        let (node, inc, first_seq) = (g.u16()?, g.u64()?, g.u64()?);
        let n = g.u32()? as usize;
        if n > b.len() / 8 || n > memchan_core::validate::MAX_SEGMENTS {
            return Err(WireError::Malformed("rail resume").into());
        }
        let mut rx = Vec::with_capacity(n);
        for _ in 0..n {
            rx.push((g.u32()?, g.u32()?));
        }
        let n = g.u32()? as usize;
        if n > b.len() / 10 {
            return Err(WireError::Malformed("rail resume").into());
        }
        let mut barriers = Vec::with_capacity(n);
        for _ in 0..n {
            barriers.push((g.u16()?, g.u64()?));
        }
        let n = g.u32()? as usize;
        if n > rx.len() {
            return Err(
                WireError::Malformed("rail resume: more lock pages than rx mappings").into(),
            );
        }
        let mut locks = Vec::with_capacity(n);
        for _ in 0..n {
            let (seg, gen, len) = (g.u32()?, g.u32()?, usize::from(g.u16()?));
            if len > MAX_NODES {
                return Err(WireError::Malformed("rail resume: a lock page's bids").into());
            }
            locks.push((seg, gen, g.bytes(len)?.to_vec()));
        }
        let report = Report::decode(g.rest())?;
        let bad = |why: &str| RailError::BadReport {
            node,
            why: why.to_string(),
        };
        if report.node != node {
            return Err(bad("the report names another node"));
        }
        if first_seq == 0 || report.unreleased.first().is_some_and(|&s| s < first_seq) {
            return Err(bad("a held seq below the first resent one"));
        }
        Ok(Resume {
            node,
            inc,
            first_seq,
            rx,
            barriers,
            locks,
            report,
        })
    }
}

/// A standby hub's `RailPlan` to one node (the first frame it sends after taking
/// over): the new epoch and members, and the node's history in the standby's
/// numbering ([`Plan::renumber`], for [`Applied::rebase`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlanNotice {
    /// The epoch after the switch.
    pub epoch: u64,
    /// The members after the switch.
    pub members: memchan_core::NodeSet,
    /// The plan's first gseq.
    pub next_gseq: u64,
    /// The node's renumbered history.
    pub renumbered: Vec<Entry>,
}

impl PlanNotice {
    /// The frame payload.
    pub fn encode(&self) -> Vec<u8> {
        let mut p = crate::proto::put_set(Put::new().u64(self.epoch), &self.members)
            .u64(self.next_gseq)
            .u32(self.renumbered.len() as u32);
        for e in &self.renumbered {
            p = p.u16(e.origin).u64(e.oseq).u64(e.gseq);
        }
        p.0
    }

    /// Parses one (from the hub: checked all the same; [`Applied::rebase`] checks
    /// the order).
    ///
    /// # Errors
    /// `Malformed` if the bytes do not parse.
    pub fn decode(b: &[u8]) -> Result<PlanNotice, RailError> {
        const WHAT: &str = "rail plan";
        let mut g = Get::new(b, WHAT);
        let epoch = g.u64()?;
        let members = crate::proto::get_set(&mut g)?;
        let next_gseq = g.u64()?;
        let n = g.u32()? as usize;
        if n > b.len() / ENTRY_BYTES {
            return Err(WireError::Malformed(WHAT).into());
        }
        let mut renumbered = Vec::with_capacity(n);
        for _ in 0..n {
            renumbered.push(Entry {
                origin: g.u16()?,
                oseq: g.u64()?,
                gseq: g.u64()?,
            });
        }
        if !g.rest().is_empty() {
            return Err(WireError::Malformed(WHAT).into());
        }
        Ok(PlanNotice {
            epoch,
            members,
            next_gseq,
            renumbered,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e(origin: u16, oseq: u64, gseq: u64) -> Entry {
        Entry { origin, oseq, gseq }
    }

    #[test]
    fn applied_skips_what_it_applied_and_trims_at_the_release_mark() {
        let mut a = Applied::new(3);
        a.record(e(1, 5, 10)).unwrap();
        a.record(e(2, 1, 11)).unwrap();
        assert!(a.is_applied(1, 4) && a.is_applied(1, 5) && !a.is_applied(1, 6));
        assert!(!a.is_applied(3, 1));
        assert!(a.record(e(1, 6, 11)).is_err(), "gseq must grow");
        assert!(a.record(e(1, 5, 12)).is_err(), "an origin's seq must grow");
        a.released_upto(10);
        assert_eq!(a.remembered(), 1);
        a.released_upto(5); // stale: no change
        assert_eq!(a.remembered(), 1);
        for g in 12..16 {
            a.record(e(3, g, g)).unwrap();
        }
        let r = a.report(4, vec![7, 8, 9, 20]);
        assert_eq!(r.history.len(), 3);
        assert_eq!(
            r.complete_after, 12,
            "two entries fell out of a history of 3"
        );
        assert_eq!(Report::decode(&r.encode().unwrap()).unwrap(), r);
    }

    #[test]
    fn a_new_incarnation_of_an_origin_starts_its_seqs_afresh() {
        let mut a = Applied::new(8);
        a.record(e(1, 40, 10)).unwrap();
        a.record(e(2, 7, 11)).unwrap();
        a.new_origin(1);
        assert!(!a.is_applied(1, 1), "the joiner's first packet is new");
        a.record(e(1, 1, 12)).unwrap();
        assert!(a.is_applied(1, 1) && !a.is_applied(1, 2));
        assert!(a.is_applied(2, 7), "other origins keep their marks");
        // The report at a switch holds no entry of the old one beyond the new mark.
        let r = a.report(3, vec![]);
        r.check().unwrap();
        assert_eq!(r.history, vec![e(2, 7, 11), e(1, 1, 12)]);
    }

    #[test]
    fn rebase_takes_the_standby_numbering_and_refuses_a_broken_one() {
        let mut a = Applied::new(8);
        a.record(e(1, 3, 10)).unwrap();
        a.record(e(2, 6, 12)).unwrap();
        let r = a.report(0, vec![]);
        let p = Plan {
            order: vec![(2, 5), (1, 3), (2, 6)],
            next_gseq: 40,
        };
        let renumbered = p.renumber(&r);
        assert_eq!(renumbered, vec![e(1, 3, 41), e(2, 6, 42)]);
        assert!(a.rebase(&[e(2, 6, 42), e(1, 3, 41)], 40).is_err());
        assert!(a.rebase(&[e(1, 4, 41)], 40).is_err(), "beyond its mark");
        a.rebase(&renumbered, 40).unwrap();
        assert_eq!(a.applied(), 42);
        assert!(a.is_applied(2, 5) && a.is_applied(1, 3));
        assert!(a.record(e(3, 1, 42)).is_err() && a.record(e(3, 1, 43)).is_ok());
        let r = a.report(0, vec![]);
        assert_eq!((r.released, r.complete_after), (39, 39));
    }

    #[test]
    fn resume_and_plan_notice_round_trip_and_refuse_contradictions() {
        let mut a = Applied::new(8);
        a.record(e(1, 3, 10)).unwrap();
        let r = Resume {
            node: 2,
            inc: 77,
            first_seq: 5,
            rx: vec![(0, 1), (3, 2)],
            barriers: vec![(u16::MAX, 12), (4, 1)],
            locks: vec![(3, 2, vec![0, 1, 0, 1])],
            report: a.report(2, vec![5, 6, 9]),
        };
        assert_eq!(Resume::decode(&r.encode().unwrap()).unwrap(), r);
        let mut other = r.clone();
        other.report.node = 3;
        assert!(Resume::decode(&other.encode().unwrap()).is_err());
        let mut below = r.clone();
        below.first_seq = 6;
        assert!(Resume::decode(&below.encode().unwrap()).is_err());
        let b = r.encode().unwrap();
        assert!(Resume::decode(&b[..b.len() - 1]).is_err());
        let mut huge = b.clone();
        huge[18..22].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(Resume::decode(&huge).is_err());
        let mut many = r.clone();
        many.locks = vec![(0, 1, vec![]); 3];
        assert!(
            Resume::decode(&many.encode().unwrap()).is_err(),
            "more lock pages than rx mappings"
        );
        let mut long = r.clone();
        long.locks = vec![(3, 2, vec![1; MAX_NODES + 1])];
        assert!(
            Resume::decode(&long.encode().unwrap()).is_err(),
            "more bids than nodes"
        );
        let p = PlanNotice {
            epoch: 9,
            members: [memchan_core::NodeId(0), memchan_core::NodeId(2)]
                .into_iter()
                .collect(),
            next_gseq: 40,
            renumbered: vec![e(1, 3, 41)],
        };
        assert_eq!(PlanNotice::decode(&p.encode()).unwrap(), p);
        assert!(PlanNotice::decode(&p.encode()[..50]).is_err());
    }

    #[test]
    fn decode_refuses_contradictions_and_huge_counts() {
        let r = Report {
            node: 1,
            applied: 9,
            released: 0,
            complete_after: 0,
            marks: vec![(2, 3)],
            history: vec![e(2, 3, 9)],
            unreleased: vec![1, 2],
        };
        assert!(Report::decode(&r.encode().unwrap()).is_ok());
        let mut beyond = r.clone();
        beyond.history = vec![e(2, 4, 9)];
        assert!(matches!(
            Report::decode(&beyond.encode().unwrap()),
            Err(RailError::BadReport { .. })
        ));
        let mut late = r.clone();
        late.history = vec![e(2, 3, 10)];
        assert!(Report::decode(&late.encode().unwrap()).is_err());
        // A history count far beyond the bytes present is refused before allocating.
        let mut b = r.encode().unwrap();
        let at = 2 + 24 + 2 + MARK_BYTES;
        b[at..at + 4].copy_from_slice(&u32::MAX.to_le_bytes());
        assert!(matches!(Report::decode(&b), Err(RailError::Malformed(_))));
        assert!(Report::decode(&b[..5]).is_err());
    }

    #[test]
    fn plan_keeps_the_old_order_and_places_unknown_packets_before_their_successor() {
        // Node 0 applied (1,1)@1 and (2,1)@2; node 1 applied only (2,1)@2... it is
        // not a destination of (1,1). Sender 1 still holds 1..=3, sender 2 holds 1..=2.
        let r0 = Report {
            node: 0,
            applied: 2,
            released: 0,
            complete_after: 0,
            marks: vec![(1, 1), (2, 1)],
            history: vec![e(1, 1, 1), e(2, 1, 2)],
            unreleased: vec![],
        };
        let r1 = Report {
            node: 1,
            applied: 4,
            released: 0,
            complete_after: 0,
            marks: vec![(1, 3), (2, 1)],
            history: vec![e(2, 1, 2), e(1, 3, 4)],
            unreleased: vec![1, 2, 3],
        };
        let r2 = Report {
            node: 2,
            applied: 0,
            released: 0,
            complete_after: 0,
            marks: vec![],
            history: vec![],
            unreleased: vec![1, 2],
        };
        let p = plan(&[r0.clone(), r1.clone(), r2.clone()]).unwrap();
        assert_eq!(p.next_gseq, 5);
        // (1,1)@1, (2,1)@2, then (1,2) right before its successor (1,3)@4, then
        // sender 2's unplaced (2,2) at the end.
        assert_eq!(p.order, vec![(1, 1), (2, 1), (1, 2), (1, 3), (2, 2)]);
        let mut other = r0.clone();
        other.node = 3;
        other.history = vec![e(1, 1, 2)];
        other.marks = vec![(1, 1)];
        assert!(matches!(
            plan(&[r0.clone(), r1.clone(), other]),
            Err(RailError::Conflict(_))
        ));
        assert!(matches!(
            plan(&[r0.clone(), r0.clone()]),
            Err(RailError::TwiceReported(0))
        ));
        let mut forgot = r2;
        forgot.applied = 3;
        forgot.complete_after = 3;
        assert!(matches!(
            plan(&[r0, r1, forgot]),
            Err(RailError::HistoryGap { node: 2, .. })
        ));
    }
}
