//! A pure (no I/O) checker for the MEMORY CHANNEL ordering rules: from the writes each
//! sender made and the change logs its receivers recorded it reports every broken
//! single-sender order (rule 1), multisender order (rule 2), corrupt, misdelivered,
//! duplicated or lost write that the logs prove, and it never reports one for a run whose
//! transport applied all writes in one global order.
//!
//! # The test it serves
//!
//! `N` nodes share a segment of 8-byte words laid out by [`Layout`]: each sender owns
//! `owned_words` words that only it writes (rule 1 is checked exactly there), then come
//! `shared_words` words that every sender writes (rule 2). Each sender performs the writes
//! that [`Schedule::generate`] derives from `(seed, sender)` alone, in order; write `seq`
//! stores [`encode`]`(sender, seq)` (never 0, so 0 means "never written") into `word` and
//! must reach exactly the nodes in `dests` — point-to-point, multicast, broadcast, and
//! sometimes with local copy.
//!
//! # The read log
//!
//! Every receiver reads the words round-robin: read number `i` (from 0) reads word
//! `i % total_words`. It logs only *changes*: an [`Observation`] `{ read_index, word, value }`
//! when read `read_index` returned a value different from the previous read of that word
//! (initially 0). The read order being fixed, the log determines every read: read `i`
//! returned the last logged value of word `i % W` at a read index `<= i`. [`ReadRecorder`]
//! keeps such a log. After every sender finished and every write was acknowledged, the
//! receiver reads all words once more into `final_values`; [`ReceiverLog`] carries both,
//! with `reads_done`, the number of round-robin reads made.
//!
//! [`check`] then verifies integrity (each value seen is a write made to that word for
//! that receiver), rule 1 (no read returns a value once a later write of the same sender
//! to that word is proven applied, and no word goes backward), rule 2 (the order facts
//! from all receivers, each sender's program order towards each destination and the
//! final values admit one global order — found by a topological sort over write ids),
//! and that no write is lost (each final value is the last write to that word destined
//! to the receiver).
//!
//! ```
//! use memchan_testkit::check::{check, Layout, ReadRecorder, Schedule, ScheduleConfig};
//! use memchan_core::NodeId;
//!
//! // Three nodes; 0 and 1 send. Two owned words per sender, then two shared words.
//! let layout = Layout::new(3, [NodeId(0), NodeId(1)].into_iter().collect(), 2, 2);
//! let sent = Schedule::generate_all(&ScheduleConfig::new(7, layout.clone(), 50));
//!
//! // An ideal transport: one global order (all of sender 0, then all of sender 1), each
//! // node applying the writes destined to it and reading one word after each.
//! let mut logs = Vec::new();
//! for node in (0..3).map(NodeId) {
//!     let mut memory = vec![0u64; layout.total_words() as usize];
//!     let mut reader = ReadRecorder::new(node, &layout);
//!     for (sender, writes) in &sent {
//!         for w in writes.iter().filter(|w| w.dests.contains(node)) {
//!             memory[w.word as usize] = w.value(*sender);
//!             reader.record(memory[reader.next_word() as usize]);
//!         }
//!     }
//!     logs.push(reader.finish(memory));
//! }
//! let report = check(&layout, &sent, &logs);
//! assert!(report.is_ok(), "{report}");
//!
//! // Receiver 2 claims a value no one wrote: caught.
//! logs[2].final_values[0] = 12345 << 20;
//! assert!(!check(&layout, &sent, &logs).is_ok());
//! ```
//!
//! The rule-2 check is the rule as docs/spec.md states it: one order of the packets that
//! reach several destinations, the same at all of them (local copies included: what the
//! lock relies on), within which every destination applies each sender's packets to
//! it in program order. Such a run always admits one global order of all packets
//! consistent with every destination's facts and each sender's order towards each
//! destination: a cycle through a point-to-point packet can be shortened past it, as
//! both its neighbours were ordered at its one destination, until only packets that
//! several destinations share remain, and those have one order. Two point-to-point
//! packets of one sender to two different nodes are not ordered against each other
//! (MEMORY CHANNEL's one hub ordered them; a host domain's store and a write through
//! the hub need not, and neither do one host's direct deposit and order point). Reads that
//! return the same value in a row are checked together (the last one of the run is the
//! strictest); `reads_replayed` counts them all.

use std::collections::VecDeque;
use std::fmt;
use std::ops::Range;

use memchan_core::attr::Dest;
use memchan_core::names::{GroupId, NodeId, NodeSet, MAX_NODES};

/// The most violations a [`Report`] lists; the rest are only counted.
pub const MAX_REPORTED: usize = 20;
/// The most steps of a cycle a [`Violation::Cycle`] lists.
pub const MAX_CYCLE_STEPS: usize = 32;
/// Bits of a written value that hold the sequence number; the sender is in the top 8.
pub const SEQ_BITS: u32 = 56;
/// Mask of the sequence number in a written value.
pub const SEQ_MASK: u64 = (1 << SEQ_BITS) - 1;

/// The value write `seq` of `sender` stores: the sender in the top 8 bits, `seq` below.
///
/// Panics unless `sender < 256` and `1 <= seq <= SEQ_MASK` (so the value is never 0).
pub fn encode(sender: NodeId, seq: u64) -> u64 {
    assert!(
        sender.index() < 256,
        "sender {} does not fit 8 bits",
        sender.0
    );
    assert!((1..=SEQ_MASK).contains(&seq), "seq {seq} out of 1..2^56");
    (u64::from(sender.0) << SEQ_BITS) | seq
}

/// `(sender, seq)` of a written value; `None` for 0, "never written".
pub fn decode(value: u64) -> Option<(NodeId, u64)> {
    (value != 0).then_some((NodeId((value >> SEQ_BITS) as u16), value & SEQ_MASK))
}

/// A small deterministic PRNG (splitmix64), so that schedules and test interleavings are
/// reproducible everywhere without a `rand` dependency.
#[derive(Debug, Clone)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform number in `0..n`; panics if `n == 0`.
    pub fn below(&mut self, n: u64) -> u64 {
        assert!(n > 0, "SplitMix64::below(0)");
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// True with probability `p`.
    pub fn chance(&mut self, p: f64) -> bool {
        ((self.next_u64() >> 11) as f64) * (1.0 / (1u64 << 53) as f64) < p
    }
}

/// Which region of the segment a word is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Region {
    /// Written only by this sender.
    Owned(NodeId),
    /// Written by every sender.
    Shared,
}

/// The word layout of the test segment: for each sender in increasing node order its
/// `owned_words` words, then `shared_words` words written by all senders.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    nodes: u16,
    senders: Vec<NodeId>,
    owned_words: u32,
    shared_words: u32,
}

impl Layout {
    /// A layout for nodes `0..nodes` of which `senders` send.
    ///
    /// Panics if `nodes > MAX_NODES`, a sender is not below `nodes`, or the segment would
    /// hold more than `u32::MAX` words.
    pub fn new(nodes: u16, senders: NodeSet, owned_words: u32, shared_words: u32) -> Layout {
        assert!(usize::from(nodes) <= MAX_NODES, "at most {MAX_NODES} nodes");
        let senders: Vec<NodeId> = senders.iter().collect();
        if let Some(s) = senders.iter().find(|s| s.0 >= nodes) {
            panic!("sender {} is not one of the {nodes} nodes", s.0);
        }
        let total = senders.len() as u64 * u64::from(owned_words) + u64::from(shared_words);
        assert!(
            total <= u64::from(u32::MAX),
            "segment of {total} words is too large"
        );
        Layout {
            nodes,
            senders,
            owned_words,
            shared_words,
        }
    }

    /// Number of nodes; every node is a receiver.
    pub fn nodes(&self) -> u16 {
        self.nodes
    }

    /// The senders in increasing order.
    pub fn senders(&self) -> &[NodeId] {
        &self.senders
    }

    /// Words owned by each sender.
    pub fn owned_words(&self) -> u32 {
        self.owned_words
    }

    /// Words in the shared region.
    pub fn shared_words(&self) -> u32 {
        self.shared_words
    }

    /// Words in the segment (`W`); the segment is `8 * W` bytes.
    pub fn total_words(&self) -> u32 {
        self.senders.len() as u32 * self.owned_words + self.shared_words
    }

    /// Position of `node` among the senders, if it sends.
    pub fn sender_index(&self, node: NodeId) -> Option<usize> {
        self.senders.binary_search(&node).ok()
    }

    /// The owned region of `sender`; panics if it is not a sender.
    pub fn owned_range(&self, sender: NodeId) -> Range<u32> {
        let i = self
            .sender_index(sender)
            .unwrap_or_else(|| panic!("node {} is not a sender", sender.0)) as u32;
        i * self.owned_words..(i + 1) * self.owned_words
    }

    /// Word index of the `i`-th owned word of `sender`.
    pub fn owned_word(&self, sender: NodeId, i: u32) -> u32 {
        assert!(i < self.owned_words, "owned word {i} out of range");
        self.owned_range(sender).start + i
    }

    /// The shared region.
    pub fn shared_range(&self) -> Range<u32> {
        let start = self.senders.len() as u32 * self.owned_words;
        start..start + self.shared_words
    }

    /// Word index of the `i`-th shared word.
    pub fn shared_word(&self, i: u32) -> u32 {
        assert!(i < self.shared_words, "shared word {i} out of range");
        self.shared_range().start + i
    }

    /// The region of `word`, or `None` past the segment.
    pub fn region(&self, word: u32) -> Option<Region> {
        let shared = self.shared_range();
        if shared.contains(&word) {
            Some(Region::Shared)
        } else if word < shared.start {
            Some(Region::Owned(
                self.senders[(word / self.owned_words) as usize],
            ))
        } else {
            None
        }
    }

    fn all_nodes(&self) -> NodeSet {
        (0..self.nodes).map(NodeId).collect()
    }
}

/// One write of a sender's schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SentWrite {
    /// Position in the sender's program order, from 1.
    pub seq: u64,
    /// Word index in the segment.
    pub word: u32,
    /// Exactly the nodes that must apply the write (the sender itself iff local copy).
    pub dests: NodeSet,
    /// How it is sent; `Dest::Group(g)` names `ScheduleConfig::groups[g]`.
    pub to: Dest,
    /// Whether the sender's own copy is written too (then the sender is in `dests`).
    pub local_copy: bool,
}

impl SentWrite {
    /// The value this write stores when `sender` makes it: [`encode`]`(sender, seq)`.
    pub fn value(&self, sender: NodeId) -> u64 {
        encode(sender, self.seq)
    }
}

/// Relative weights of the destination kinds in a schedule.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KindWeights {
    /// Point-to-point to one other node, chosen uniformly.
    pub point_to_point: u32,
    /// Multicast to one of `ScheduleConfig::groups`, chosen uniformly.
    pub multicast: u32,
    /// Broadcast to every node but the sender.
    pub broadcast: u32,
}

/// Everything a schedule derives from; every node can rebuild every sender's schedule
/// from it.
#[derive(Debug, Clone, PartialEq)]
pub struct ScheduleConfig {
    /// Seed of the whole run.
    pub seed: u64,
    /// The segment layout (nodes, senders, regions).
    pub layout: Layout,
    /// Writes each sender makes.
    pub writes_per_sender: u64,
    /// Multicast groups; a group reaches its members other than the sender, and the
    /// sender too only with local copy.
    pub groups: Vec<NodeSet>,
    /// Mix of destination kinds.
    pub weights: KindWeights,
    /// Probability that a write also goes to the sender's own copy.
    pub local_copy: f64,
    /// Probability that a write goes to the shared region (when both regions exist).
    pub shared_fraction: f64,
}

impl ScheduleConfig {
    /// Defaults: equal weights, local copy 1/4, half the writes shared, and the groups
    /// "even nodes", "odd nodes" and "lower half" (those with at least one member).
    pub fn new(seed: u64, layout: Layout, writes_per_sender: u64) -> ScheduleConfig {
        let n = layout.nodes();
        let groups = [
            (0..n)
                .filter(|i| i % 2 == 0)
                .map(NodeId)
                .collect::<NodeSet>(),
            (0..n).filter(|i| i % 2 == 1).map(NodeId).collect(),
            (0..n.div_ceil(2)).map(NodeId).collect(),
        ]
        .into_iter()
        .filter(|g| !g.is_empty())
        .collect();
        ScheduleConfig {
            seed,
            layout,
            writes_per_sender,
            groups,
            weights: KindWeights {
                point_to_point: 1,
                multicast: 1,
                broadcast: 1,
            },
            local_copy: 0.25,
            shared_fraction: 0.5,
        }
    }
}

/// Deterministic write schedules.
#[derive(Debug, Clone, Copy)]
pub struct Schedule;

impl Schedule {
    /// The writes `sender` makes, in order (`seq` 1, 2, ...): a function of `cfg` and
    /// `sender` alone. Owned-region writes go to any kind of destination; shared-region
    /// writes always reach at least two nodes.
    ///
    /// Panics if `sender` is not a sender of `cfg.layout`, or it has writes to make and
    /// no word to make them to.
    pub fn generate(cfg: &ScheduleConfig, sender: NodeId) -> Vec<SentWrite> {
        let layout = &cfg.layout;
        let owned = layout.owned_range(sender);
        let shared = layout.shared_range();
        assert!(
            cfg.writes_per_sender == 0 || !owned.is_empty() || !shared.is_empty(),
            "sender {} has no word to write",
            sender.0
        );
        let mut rng = SplitMix64::new(
            cfg.seed ^ (u64::from(sender.0) + 1).wrapping_mul(0xA076_1D64_78BD_642F),
        );
        let all = layout.all_nodes();
        let mut others = all;
        others.remove(sender);
        let others_list: Vec<NodeId> = others.iter().collect();
        let groups: Vec<NodeSet> = cfg
            .groups
            .iter()
            .map(|g| {
                let mut g = g.intersect(&all);
                g.remove(sender);
                g
            })
            .collect();
        let dests = DestPicker {
            sender,
            others,
            others_list: &others_list,
            groups: &groups,
            weights: cfg.weights,
            local_copy: cfg.local_copy,
        };
        (1..=cfg.writes_per_sender)
            .map(|seq| {
                let to_shared = if shared.is_empty() {
                    false
                } else if owned.is_empty() {
                    true
                } else {
                    rng.chance(cfg.shared_fraction)
                };
                let region = if to_shared { &shared } else { &owned };
                let word = region.start + rng.below(u64::from(region.end - region.start)) as u32;
                let (to, local_copy, dests) = dests.pick(&mut rng, to_shared);
                SentWrite {
                    seq,
                    word,
                    dests,
                    to,
                    local_copy,
                }
            })
            .collect()
    }

    /// Every sender's schedule, in sender order: the `sent` argument of [`check`].
    pub fn generate_all(cfg: &ScheduleConfig) -> Vec<(NodeId, Vec<SentWrite>)> {
        cfg.layout
            .senders()
            .iter()
            .map(|&s| (s, Schedule::generate(cfg, s)))
            .collect()
    }
}

struct DestPicker<'a> {
    sender: NodeId,
    others: NodeSet,
    others_list: &'a [NodeId],
    groups: &'a [NodeSet],
    weights: KindWeights,
    local_copy: f64,
}

impl DestPicker<'_> {
    fn pick(&self, rng: &mut SplitMix64, need_two: bool) -> (Dest, bool, NodeSet) {
        let has_others = !self.others_list.is_empty();
        let w = [
            if has_others {
                self.weights.point_to_point
            } else {
                0
            },
            if self.groups.is_empty() {
                0
            } else {
                self.weights.multicast
            },
            if has_others {
                self.weights.broadcast
            } else {
                0
            },
        ];
        let total: u64 = w.iter().map(|&x| u64::from(x)).sum();
        for _ in 0..32 {
            if total == 0 {
                break;
            }
            let x = rng.below(total);
            let (to, mut dests) = if x < u64::from(w[0]) {
                let node = self.others_list[rng.below(self.others_list.len() as u64) as usize];
                (Dest::Node(node), [node].into_iter().collect())
            } else if x < u64::from(w[0]) + u64::from(w[1]) {
                let g = rng.below(self.groups.len() as u64) as usize;
                // A sender in the group gets its own copy only with local copy, as on
                // MEMORY CHANNEL.
                let mut members = self.groups[g];
                members.remove(self.sender);
                (Dest::Group(GroupId(g as u16)), members)
            } else {
                (Dest::Broadcast, self.others)
            };
            let local = rng.chance(self.local_copy);
            if local {
                dests.insert(self.sender);
            }
            if dests.is_empty() || (need_two && dests.len() < 2) {
                continue;
            }
            return (to, local, dests);
        }
        let mut dests = self.others;
        dests.insert(self.sender);
        (Dest::Broadcast, true, dests)
    }
}

/// A change seen by a receiver: read number `read_index` (which read word
/// `read_index % total_words`) returned `value`, unlike the previous read of that word.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Observation {
    /// Index of the read in the receiver's round-robin sequence, from 0.
    pub read_index: u64,
    /// The word read; always `read_index % total_words`.
    pub word: u32,
    /// The value read.
    pub value: u64,
}

/// Everything one receiver reports.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReceiverLog {
    /// The receiver.
    pub node: NodeId,
    /// Its changes, in increasing `read_index`.
    pub observations: Vec<Observation>,
    /// Every word, read after all writes were acknowledged (`total_words` values).
    pub final_values: Vec<u64>,
    /// Number of round-robin reads made.
    pub reads_done: u64,
}

/// Keeps a receiver's round-robin read log: ask [`next_word`](Self::next_word), read it,
/// [`record`](Self::record) the value.
#[derive(Debug, Clone)]
pub struct ReadRecorder {
    node: NodeId,
    words: u32,
    reads: u64,
    last: Vec<u64>,
    observations: Vec<Observation>,
}

impl ReadRecorder {
    /// An empty log for `node`; panics if the layout has no word.
    pub fn new(node: NodeId, layout: &Layout) -> Self {
        let words = layout.total_words();
        assert!(words > 0, "the layout has no word to read");
        ReadRecorder {
            node,
            words,
            reads: 0,
            last: vec![0; words as usize],
            observations: Vec::new(),
        }
    }

    /// The word the next read must read.
    pub fn next_word(&self) -> u32 {
        (self.reads % u64::from(self.words)) as u32
    }

    /// Records that the next read (of [`next_word`](Self::next_word)) returned `value`.
    pub fn record(&mut self, value: u64) {
        let word = self.next_word();
        let last = &mut self.last[word as usize];
        if *last != value {
            *last = value;
            self.observations.push(Observation {
                read_index: self.reads,
                word,
                value,
            });
        }
        self.reads += 1;
    }

    /// Reads made so far.
    pub fn reads_done(&self) -> u64 {
        self.reads
    }

    /// Changes logged so far.
    pub fn observations(&self) -> &[Observation] {
        &self.observations
    }

    /// The finished log, with the final value of every word.
    pub fn finish(self, final_values: Vec<u64>) -> ReceiverLog {
        ReceiverLog {
            node: self.node,
            observations: self.observations,
            final_values,
            reads_done: self.reads,
        }
    }
}

/// The rule a violation breaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Rule {
    /// The schedules or logs handed to [`check`] are malformed.
    Input,
    /// A value that is not a write to that word destined to that receiver.
    Integrity,
    /// Rule 1: a sender's packets applied out of its order (or twice).
    SingleSender,
    /// Rule 2: packets of several senders applied in different orders.
    Multisender,
    /// A write destined to a receiver never applied there.
    NoLoss,
}

impl Rule {
    const ALL: [Rule; 5] = [
        Rule::Input,
        Rule::Integrity,
        Rule::SingleSender,
        Rule::Multisender,
        Rule::NoLoss,
    ];

    fn index(self) -> usize {
        self as usize
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Rule::Input => "bad input",
            Rule::Integrity => "integrity",
            Rule::SingleSender => "rule 1 (single-sender order)",
            Rule::Multisender => "rule 2 (multisender order)",
            Rule::NoLoss => "no lost write",
        })
    }
}

/// One step of an ordering cycle. Consecutive steps `A -> B` mean "A was applied before
/// B": program order (write to write of one sender), a final value (a write to a word
/// before the receiver's final value there), "seen before that read" (write to reads) or
/// "not yet applied at that read" (reads to write).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CycleStep {
    /// Write `seq` of `sender`, to `word`.
    Write {
        /// The sender.
        sender: NodeId,
        /// Its sequence number.
        seq: u64,
        /// The word written.
        word: u32,
    },
    /// The moments of reads `first_read..=last_read` of `receiver`.
    Reads {
        /// The receiver.
        receiver: NodeId,
        /// First read of the run.
        first_read: u64,
        /// Last read of the run.
        last_read: u64,
    },
}

impl fmt::Display for CycleStep {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            CycleStep::Write { sender, seq, word } => {
                write!(f, "s{}#{seq}@w{word}", sender.0)
            }
            CycleStep::Reads {
                receiver,
                first_read,
                last_read,
            } if first_read == last_read => write!(f, "[r{} read {first_read}]", receiver.0),
            CycleStep::Reads {
                receiver,
                first_read,
                last_read,
            } => write!(f, "[r{} reads {first_read}..={last_read}]", receiver.0),
        }
    }
}

/// One broken rule, with where it was seen.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Violation {
    /// A sender's schedule is malformed (`seq` not 1, 2, ..., word out of range, ...).
    BadSchedule {
        /// The sender.
        sender: NodeId,
        /// What is wrong.
        detail: String,
    },
    /// A receiver's log is malformed; the offending entry is ignored.
    BadLog {
        /// The receiver.
        receiver: NodeId,
        /// What is wrong.
        detail: String,
    },
    /// A value no sender wrote to this word (or 0 after a write).
    Corrupt {
        /// The receiver.
        receiver: NodeId,
        /// The word.
        word: u32,
        /// The read that returned it; `None` for the final values.
        read_index: Option<u64>,
        /// The value.
        value: u64,
    },
    /// A write to this word that was not destined to this receiver.
    Misdelivered {
        /// The receiver.
        receiver: NodeId,
        /// The word.
        word: u32,
        /// The read that returned it; `None` for the final values.
        read_index: Option<u64>,
        /// The write's sender.
        sender: NodeId,
        /// Its sequence number.
        seq: u64,
        /// Its destinations.
        dests: NodeSet,
    },
    /// Rule 1: a word went back to an older write of a sender (reordered or duplicated).
    Backward {
        /// The receiver.
        receiver: NodeId,
        /// The word.
        word: u32,
        /// The read that returned the older write.
        read_index: u64,
        /// The sender.
        sender: NodeId,
        /// The older write seen.
        seq: u64,
        /// The newer write of the same sender seen earlier at this word.
        after_seq: u64,
    },
    /// Rule 1: a read returned `value` although `missing_seq`, a later write of `sender`
    /// to this word destined to this receiver, was proven applied: the receiver had seen
    /// `seen_seq >= missing_seq` of `sender`, which follows it in order.
    StaleRead {
        /// The receiver.
        receiver: NodeId,
        /// The word.
        word: u32,
        /// The (last) read that returned `value`.
        read_index: u64,
        /// The value read.
        value: u64,
        /// The sender whose order is broken.
        sender: NodeId,
        /// Its write that should have replaced `value`.
        missing_seq: u64,
        /// Its write the receiver had already seen.
        seen_seq: u64,
    },
    /// A write destined to the receiver is not in its final values: the final value is
    /// 0 or an earlier write of the same sender.
    LostWrite {
        /// The receiver.
        receiver: NodeId,
        /// The word.
        word: u32,
        /// The final value there.
        final_value: u64,
        /// The lost write's sender.
        sender: NodeId,
        /// Its sequence number.
        seq: u64,
    },
    /// The order facts admit no global order: a cycle among writes and reads.
    Cycle {
        /// [`Rule::SingleSender`] if all writes in the cycle are one sender's, else
        /// [`Rule::Multisender`].
        rule: Rule,
        /// Number of steps in the cycle.
        len: usize,
        /// Its first [`MAX_CYCLE_STEPS`] steps; the last one leads back to the first.
        steps: Vec<CycleStep>,
    },
}

impl Violation {
    /// The rule this breaks.
    pub fn rule(&self) -> Rule {
        match self {
            Violation::BadSchedule { .. } | Violation::BadLog { .. } => Rule::Input,
            Violation::Corrupt { .. } | Violation::Misdelivered { .. } => Rule::Integrity,
            Violation::Backward { .. } | Violation::StaleRead { .. } => Rule::SingleSender,
            Violation::LostWrite { .. } => Rule::NoLoss,
            Violation::Cycle { rule, .. } => *rule,
        }
    }
}

struct Val(u64);

impl fmt::Display for Val {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match decode(self.0) {
            None => f.write_str("0 (never written)"),
            Some((s, q)) => write!(f, "s{}#{q}", s.0),
        }
    }
}

struct At(Option<u64>);

impl fmt::Display for At {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.0 {
            Some(i) => write!(f, "read {i}"),
            None => f.write_str("final value"),
        }
    }
}

impl fmt::Display for Violation {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: ", self.rule())?;
        match self {
            Violation::BadSchedule { sender, detail } => {
                write!(f, "schedule of sender {}: {detail}", sender.0)
            }
            Violation::BadLog { receiver, detail } => {
                write!(f, "log of receiver {}: {detail}", receiver.0)
            }
            Violation::Corrupt {
                receiver,
                word,
                read_index,
                value: 0,
            } => write!(
                f,
                "receiver {} word {word} {}: went back to 0 after a write",
                receiver.0,
                At(*read_index)
            ),
            Violation::Corrupt {
                receiver,
                word,
                read_index,
                value,
            } => write!(
                f,
                "receiver {} word {word} {}: corrupt value {value:#018x} ({}) is no write to this word",
                receiver.0,
                At(*read_index),
                Val(*value)
            ),
            Violation::Misdelivered {
                receiver,
                word,
                read_index,
                sender,
                seq,
                dests,
            } => write!(
                f,
                "receiver {} word {word} {}: misdelivered s{}#{seq}, destined only to {:?}",
                receiver.0,
                At(*read_index),
                sender.0,
                dests.iter().map(|n| n.0).collect::<Vec<_>>()
            ),
            Violation::Backward {
                receiver,
                word,
                read_index,
                sender,
                seq,
                after_seq,
            } => write!(
                f,
                "receiver {} word {word} read {read_index}: went back to s{}#{seq} after s{0}#{after_seq} (reordered or duplicated)",
                receiver.0, sender.0
            ),
            Violation::StaleRead {
                receiver,
                word,
                read_index,
                value,
                sender,
                missing_seq,
                seen_seq,
            } => write!(
                f,
                "receiver {} word {word} read {read_index}: still {} although s{}#{missing_seq} to this word was applied (receiver had seen s{2}#{seen_seq})",
                receiver.0,
                Val(*value),
                sender.0
            ),
            Violation::LostWrite {
                receiver,
                word,
                final_value,
                sender,
                seq,
            } => write!(
                f,
                "receiver {} word {word}: write s{}#{seq} lost, final value is {}",
                receiver.0,
                sender.0,
                Val(*final_value)
            ),
            Violation::Cycle { len, steps, .. } => {
                write!(
                    f,
                    "no global order (A -> B: A applied before B; [rN read i]: when node N made read i), cycle of {len} steps: "
                )?;
                for s in steps {
                    write!(f, "{s} -> ")?;
                }
                if *len > steps.len() {
                    f.write_str("... -> ")?;
                }
                match steps.first() {
                    Some(s) => write!(f, "{s}"),
                    None => Ok(()),
                }
            }
        }
    }
}

/// The outcome of [`check`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    /// The first [`MAX_REPORTED`] violations found.
    pub violations: Vec<Violation>,
    /// All violations found.
    pub total_violations: usize,
    by_rule: [usize; 5],
    /// Writes in the schedules.
    pub writes_checked: u64,
    /// Receiver logs checked.
    pub receivers_checked: usize,
    /// Observations (changes) checked.
    pub observations_checked: u64,
    /// Round-robin reads accounted for.
    pub reads_replayed: u64,
    /// Nodes of the order graph (writes and read moments).
    pub graph_nodes: u64,
    /// Edges of the order graph.
    pub graph_edges: u64,
}

impl Report {
    /// Whether no violation was found.
    pub fn is_ok(&self) -> bool {
        self.total_violations == 0
    }

    /// Number of violations of `rule` found (listed or not).
    pub fn total(&self, rule: Rule) -> usize {
        self.by_rule[rule.index()]
    }

    /// Panics with the report unless it is ok.
    #[track_caller]
    pub fn assert_ok(&self) {
        assert!(self.is_ok(), "{self}");
    }

    fn push(&mut self, v: Violation) {
        self.total_violations += 1;
        self.by_rule[v.rule().index()] += 1;
        if self.violations.len() < MAX_REPORTED {
            self.violations.push(v);
        }
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "ordering check {}: {} writes, {} receivers, {} reads, {} changes, order graph {} nodes / {} edges",
            if self.is_ok() { "OK" } else { "FAILED" },
            self.writes_checked,
            self.receivers_checked,
            self.reads_replayed,
            self.observations_checked,
            self.graph_nodes,
            self.graph_edges
        )?;
        if !self.is_ok() {
            write!(f, "\n{} violations (", self.total_violations)?;
            let mut first = true;
            for r in Rule::ALL {
                if self.total(r) > 0 {
                    write!(
                        f,
                        "{}{}: {}",
                        if first { "" } else { ", " },
                        r,
                        self.total(r)
                    )?;
                    first = false;
                }
            }
            write!(f, "), first {}:", self.violations.len())?;
            for v in &self.violations {
                write!(f, "\n  {v}")?;
            }
        }
        Ok(())
    }
}

/// Checks what `received` shows against what `sent` wrote, in the `layout` segment.
///
/// `sent` holds each sender's schedule (as from [`Schedule::generate_all`]); `received`
/// one log per receiver (receivers may be missing; their writes go unchecked).
/// Malformed schedules stop the check; malformed log entries are reported and skipped.
pub fn check(
    layout: &Layout,
    sent: &[(NodeId, Vec<SentWrite>)],
    received: &[ReceiverLog],
) -> Report {
    let mut report = Report::default();
    let Some(ctx) = Ctx::new(layout, sent, &mut report) else {
        return report;
    };
    report.writes_checked = u64::from(ctx.write_nodes);
    let mut graph = Graph::new(ctx.write_nodes);
    // Rule 1 is per destination: each sender's writes to one node, in order. (Writes
    // of one sender with no destination in common are not ordered against each other:
    // a store to a node of the sender's host may land before an earlier write through
    // the hub reaches another node.)
    for (si, ws) in ctx.writes.iter().enumerate() {
        let mut last = [None::<u32>; MAX_NODES];
        for w in ws.iter() {
            let id = ctx.id(si, w.seq);
            for d in w.dests.iter() {
                if let Some(prev) = last[d.index()].replace(id) {
                    graph.edge(prev, id);
                }
            }
        }
    }
    let mut seen = vec![false; MAX_NODES];
    for log in received {
        if usize::from(log.node.0) >= usize::from(layout.nodes()) || seen[log.node.index()] {
            report.push(Violation::BadLog {
                receiver: log.node,
                detail: format!(
                    "node {} is out of range or has two logs; log ignored",
                    log.node.0
                ),
            });
            continue;
        }
        seen[log.node.index()] = true;
        report.receivers_checked += 1;
        report.observations_checked += log.observations.len() as u64;
        report.reads_replayed += log.reads_done;
        ctx.check_receiver(log, &mut graph, &mut report);
    }
    report.graph_nodes = u64::from(graph.nodes);
    report.graph_edges = graph.edges.len() as u64;
    if let Some(cycle) = graph.find_cycle() {
        report.push(ctx.describe_cycle(&graph, &cycle));
    }
    report
}

/// How a value read at a word classifies for one receiver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Seen {
    Zero,
    /// A write to this word destined to this receiver.
    Valid {
        si: usize,
        seq: u64,
        id: u32,
    },
    /// Corrupt or misdelivered (already reported).
    Bad,
}

impl Seen {
    fn id(self) -> Option<u32> {
        match self {
            Seen::Valid { id, .. } => Some(id),
            _ => None,
        }
    }
}

struct Obs {
    index: u64,
    word: u32,
    seen: Seen,
}

/// A read that returned `before` (raw `value`) while `after` (the next change observed
/// at that word, if any) was not yet applied.
struct Checkpoint {
    index: u64,
    word: u32,
    value: u64,
    before: Seen,
    after: Option<u32>,
}

struct Ctx<'a> {
    words: u32,
    senders: Vec<NodeId>,
    sender_of: Vec<Option<usize>>,
    writes: Vec<&'a [SentWrite]>,
    base: Vec<u32>,
    write_nodes: u32,
}

impl<'a> Ctx<'a> {
    fn new(
        layout: &Layout,
        sent: &'a [(NodeId, Vec<SentWrite>)],
        report: &mut Report,
    ) -> Option<Self> {
        let words = layout.total_words();
        let senders = layout.senders().to_vec();
        let mut sender_of = vec![None; 256];
        for (i, s) in senders.iter().enumerate() {
            sender_of[s.index()] = Some(i);
        }
        let mut writes: Vec<Option<&[SentWrite]>> = vec![None; senders.len()];
        let all = layout.all_nodes();
        let mut ok = true;
        let mut bad = |sender: NodeId, detail: String, report: &mut Report| {
            report.push(Violation::BadSchedule { sender, detail });
            ok = false;
        };
        for (s, ws) in sent {
            let Some(si) = sender_of.get(s.index()).copied().flatten() else {
                bad(*s, "not a sender of the layout".into(), report);
                continue;
            };
            if writes[si].is_some() {
                bad(*s, "two schedules".into(), report);
                continue;
            }
            writes[si] = Some(ws);
            for (i, w) in ws.iter().enumerate() {
                let problem = if w.seq != i as u64 + 1 {
                    Some(format!("write {i} has seq {}, not {}", w.seq, i + 1))
                } else if w.seq > SEQ_MASK {
                    Some(format!("seq {} does not fit {SEQ_BITS} bits", w.seq))
                } else {
                    match layout.region(w.word) {
                        None => Some(format!(
                            "seq {} writes word {} past the segment",
                            w.seq, w.word
                        )),
                        Some(Region::Owned(o)) if o != *s => Some(format!(
                            "seq {} writes word {} owned by node {}",
                            w.seq, w.word, o.0
                        )),
                        _ if w.dests.intersect(&all) != w.dests => Some(format!(
                            "seq {} is destined to a node outside the cluster",
                            w.seq
                        )),
                        _ => None,
                    }
                };
                if let Some(p) = problem {
                    bad(*s, p, report);
                    break;
                }
            }
        }
        if !ok {
            return None;
        }
        let writes: Vec<&[SentWrite]> = writes.into_iter().map(|w| w.unwrap_or(&[])).collect();
        let mut base = Vec::with_capacity(writes.len());
        let mut total: u64 = 0;
        for w in &writes {
            base.push(total as u32);
            total += w.len() as u64;
        }
        if total > u64::from(u32::MAX / 4) {
            report.push(Violation::BadSchedule {
                sender: senders[0],
                detail: format!("{total} writes are too many to check"),
            });
            return None;
        }
        Some(Ctx {
            words,
            senders,
            sender_of,
            writes,
            base,
            write_nodes: total as u32,
        })
    }

    fn id(&self, si: usize, seq: u64) -> u32 {
        self.base[si] + (seq - 1) as u32
    }

    /// Per word and sender, the seqs of the writes destined to `r`, increasing:
    /// `table[word * senders + si]`.
    fn dest_table(&self, r: NodeId) -> Vec<Vec<u64>> {
        let s = self.senders.len();
        let mut table = vec![Vec::new(); self.words as usize * s];
        for (si, ws) in self.writes.iter().enumerate() {
            for w in ws.iter().filter(|w| w.dests.contains(r)) {
                table[w.word as usize * s + si].push(w.seq);
            }
        }
        table
    }

    fn classify(
        &self,
        r: NodeId,
        word: u32,
        value: u64,
        read_index: Option<u64>,
        report: &mut Report,
    ) -> Seen {
        let Some((s, seq)) = decode(value) else {
            return Seen::Zero;
        };
        let found = self.sender_of[s.index()].and_then(|si| {
            let w = self.writes[si].get((seq as usize).checked_sub(1)?)?;
            (w.word == word).then_some((si, w))
        });
        match found {
            None => {
                report.push(Violation::Corrupt {
                    receiver: r,
                    word,
                    read_index,
                    value,
                });
                Seen::Bad
            }
            Some((_, w)) if !w.dests.contains(r) => {
                report.push(Violation::Misdelivered {
                    receiver: r,
                    word,
                    read_index,
                    sender: s,
                    seq,
                    dests: w.dests,
                });
                Seen::Bad
            }
            Some((si, _)) => Seen::Valid {
                si,
                seq,
                id: self.id(si, seq),
            },
        }
    }

    fn check_receiver(&self, log: &ReceiverLog, graph: &mut Graph, report: &mut Report) {
        let r = log.node;
        let nw = self.words as usize;
        let ns = self.senders.len();
        let w64 = u64::from(self.words);
        if nw == 0 {
            return;
        }
        let table = self.dest_table(r);
        let bad_log = |detail: String, report: &mut Report| {
            report.push(Violation::BadLog {
                receiver: r,
                detail,
            });
        };

        // Validate and classify the observations; derive the checkpoints.
        let mut prev_value = vec![0u64; nw];
        let mut prev_seen = vec![Seen::Zero; nw];
        let mut obs = Vec::with_capacity(log.observations.len());
        let mut cps = Vec::with_capacity(log.observations.len() + nw);
        let mut last_index: Option<u64> = None;
        for o in &log.observations {
            let w = o.word as usize;
            let problem = if o.word >= self.words {
                Some(format!(
                    "read {} of word {} past the segment",
                    o.read_index, o.word
                ))
            } else if o.read_index % w64 != u64::from(o.word) {
                Some(format!(
                    "read {} is of word {}, not {}",
                    o.read_index,
                    o.read_index % w64,
                    o.word
                ))
            } else if last_index.is_some_and(|l| o.read_index <= l) {
                Some(format!(
                    "read {} logged after read {}",
                    o.read_index,
                    last_index.unwrap_or(0)
                ))
            } else if o.read_index >= log.reads_done {
                Some(format!(
                    "read {} logged but only {} reads done",
                    o.read_index, log.reads_done
                ))
            } else if o.value == prev_value[w] {
                Some(format!(
                    "read {} logged as a change of word {} but repeats its value",
                    o.read_index, o.word
                ))
            } else {
                None
            };
            if let Some(p) = problem {
                bad_log(p, report);
                continue;
            }
            last_index = Some(o.read_index);
            let seen = if o.value == 0 {
                report.push(Violation::Corrupt {
                    receiver: r,
                    word: o.word,
                    read_index: Some(o.read_index),
                    value: 0,
                });
                Seen::Bad
            } else {
                self.classify(r, o.word, o.value, Some(o.read_index), report)
            };
            if o.read_index >= w64 {
                cps.push(Checkpoint {
                    index: o.read_index - w64,
                    word: o.word,
                    value: prev_value[w],
                    before: prev_seen[w],
                    after: seen.id(),
                });
            }
            obs.push(Obs {
                index: o.read_index,
                word: o.word,
                seen,
            });
            prev_value[w] = o.value;
            prev_seen[w] = seen;
        }
        // The last read of every word.
        for w in 0..self.words {
            let w_ = u64::from(w);
            if log.reads_done > w_ {
                cps.push(Checkpoint {
                    index: w_ + (log.reads_done - 1 - w_) / w64 * w64,
                    word: w,
                    value: prev_value[w as usize],
                    before: prev_seen[w as usize],
                    after: None,
                });
            }
        }
        cps.sort_unstable_by_key(|c| c.index);

        // Replay in read order.
        let mut lo = vec![0u64; ns];
        let mut last_seq_at = vec![0u64; nw * ns];
        let mut pending: Vec<u32> = Vec::new();
        let mut prev_marker: Option<u32> = None;
        let mut cands: Vec<(usize, u64)> = Vec::new();
        let mut oi = 0;
        let mut observe = |o: &Obs, lo: &mut [u64], pending: &mut Vec<u32>, report: &mut Report| {
            if let Seen::Valid { si, seq, id } = o.seen {
                lo[si] = lo[si].max(seq);
                let last = &mut last_seq_at[o.word as usize * ns + si];
                if seq < *last {
                    report.push(Violation::Backward {
                        receiver: r,
                        word: o.word,
                        read_index: o.index,
                        sender: self.senders[si],
                        seq,
                        after_seq: *last,
                    });
                }
                *last = (*last).max(seq);
                pending.push(id);
            }
        };
        for cp in &cps {
            while oi < obs.len() && obs[oi].index <= cp.index {
                observe(&obs[oi], &mut lo, &mut pending, report);
                oi += 1;
            }
            // Writes proven not applied at this read: the next write of the value's
            // sender to this word (all senders' first ones if the word reads 0).
            cands.clear();
            let row = cp.word as usize * ns;
            match cp.before {
                Seen::Valid { si, seq, .. } => {
                    let list = &table[row + si];
                    if let Some(&n) = list.get(list.partition_point(|&x| x <= seq)) {
                        cands.push((si, n));
                    }
                }
                Seen::Zero => {
                    for (si, list) in table[row..row + ns].iter().enumerate() {
                        if let Some(&n) = list.first() {
                            cands.push((si, n));
                        }
                    }
                }
                Seen::Bad => {}
            }
            for &(si, n) in &cands {
                if n <= lo[si] {
                    report.push(Violation::StaleRead {
                        receiver: r,
                        word: cp.word,
                        read_index: cp.index,
                        value: cp.value,
                        sender: self.senders[si],
                        missing_seq: n,
                        seen_seq: lo[si],
                    });
                }
            }
            if cands.is_empty() && cp.after.is_none() {
                continue;
            }
            let m = graph.marker(r, cp.index);
            if let Some(p) = prev_marker {
                graph.edge(p, m);
            }
            for p in pending.drain(..) {
                graph.edge(p, m);
            }
            for &(si, n) in &cands {
                graph.edge(m, self.id(si, n));
            }
            if let Some(c) = cp.after {
                graph.edge(m, c);
            }
            prev_marker = Some(m);
        }
        while oi < obs.len() {
            observe(&obs[oi], &mut lo, &mut pending, report);
            oi += 1;
        }

        // Final values: each the last write to its word destined to r.
        if log.final_values.len() != nw {
            bad_log(
                format!(
                    "{} final values for {} words; final values ignored",
                    log.final_values.len(),
                    nw
                ),
                report,
            );
            return;
        }
        for (w, &f) in log.final_values.iter().enumerate() {
            let row = &table[w * ns..(w + 1) * ns];
            match self.classify(r, w as u32, f, None, report) {
                Seen::Bad => {}
                Seen::Zero => {
                    if let Some((si, &last)) = row
                        .iter()
                        .enumerate()
                        .find_map(|(si, l)| l.last().map(|q| (si, q)))
                    {
                        report.push(Violation::LostWrite {
                            receiver: r,
                            word: w as u32,
                            final_value: 0,
                            sender: self.senders[si],
                            seq: last,
                        });
                    }
                }
                Seen::Valid { si: sf, seq, id } => {
                    for (si, list) in row.iter().enumerate() {
                        let Some(&last) = list.last() else { continue };
                        if si != sf {
                            graph.edge(self.id(si, last), id);
                        } else if last != seq {
                            report.push(Violation::LostWrite {
                                receiver: r,
                                word: w as u32,
                                final_value: f,
                                sender: self.senders[si],
                                seq: last,
                            });
                        }
                    }
                }
            }
        }
    }

    fn describe_cycle(&self, graph: &Graph, cycle: &[u32]) -> Violation {
        let mut steps: Vec<CycleStep> = Vec::new();
        let mut senders = NodeSet::EMPTY;
        for &n in cycle {
            if n < self.write_nodes {
                let si = self.base.partition_point(|&b| b <= n) - 1;
                let seq = u64::from(n - self.base[si]) + 1;
                senders.insert(self.senders[si]);
                steps.push(CycleStep::Write {
                    sender: self.senders[si],
                    seq,
                    word: self.writes[si][(seq - 1) as usize].word,
                });
            } else {
                let (receiver, read) = graph.markers[(n - self.write_nodes) as usize];
                match steps.last_mut() {
                    Some(CycleStep::Reads {
                        receiver: r,
                        last_read,
                        ..
                    }) if *r == receiver => *last_read = read,
                    _ => steps.push(CycleStep::Reads {
                        receiver,
                        first_read: read,
                        last_read: read,
                    }),
                }
            }
        }
        let len = steps.len();
        steps.truncate(MAX_CYCLE_STEPS);
        Violation::Cycle {
            rule: if senders.len() <= 1 {
                Rule::SingleSender
            } else {
                Rule::Multisender
            },
            len,
            steps,
        }
    }
}

/// The order graph: writes `0..write_nodes`, then read moments ("markers").
struct Graph {
    nodes: u32,
    edges: Vec<(u32, u32)>,
    markers: Vec<(NodeId, u64)>,
}

impl Graph {
    fn new(write_nodes: u32) -> Self {
        Graph {
            nodes: write_nodes,
            edges: Vec::new(),
            markers: Vec::new(),
        }
    }

    fn marker(&mut self, r: NodeId, read: u64) -> u32 {
        self.markers.push((r, read));
        self.nodes += 1;
        self.nodes - 1
    }

    fn edge(&mut self, a: u32, b: u32) {
        self.edges.push((a, b));
    }

    /// Compressed adjacency: `(offsets, targets)`, forward or reversed.
    fn csr(&self, reverse: bool) -> (Vec<u32>, Vec<u32>) {
        let n = self.nodes as usize;
        let mut off = vec![0u32; n + 1];
        for &(a, b) in &self.edges {
            off[if reverse { b } else { a } as usize + 1] += 1;
        }
        for i in 0..n {
            off[i + 1] += off[i];
        }
        let mut fill = off.clone();
        let mut adj = vec![0u32; self.edges.len()];
        for &(a, b) in &self.edges {
            let (from, to) = if reverse { (b, a) } else { (a, b) };
            adj[fill[from as usize] as usize] = to;
            fill[from as usize] += 1;
        }
        (off, adj)
    }

    /// A shortest cycle through some node that Kahn's sort cannot remove, if any.
    fn find_cycle(&self) -> Option<Vec<u32>> {
        let n = self.nodes as usize;
        let (off, adj) = self.csr(false);
        let succ = |u: u32| &adj[off[u as usize] as usize..off[u as usize + 1] as usize];
        let mut indeg = vec![0u32; n];
        for &(_, b) in &self.edges {
            indeg[b as usize] += 1;
        }
        let mut stack: Vec<u32> = (0..self.nodes)
            .filter(|&u| indeg[u as usize] == 0)
            .collect();
        let mut removed = vec![false; n];
        let mut left = n;
        while let Some(u) = stack.pop() {
            removed[u as usize] = true;
            left -= 1;
            for &v in succ(u) {
                indeg[v as usize] -= 1;
                if indeg[v as usize] == 0 {
                    stack.push(v);
                }
            }
        }
        if left == 0 {
            return None;
        }
        // Every node left has a predecessor left: walking back must repeat a node,
        // which lies on a cycle.
        let (roff, radj) = self.csr(true);
        let mut pos = vec![u32::MAX; n];
        let mut cur = (0..self.nodes).find(|&u| !removed[u as usize])?;
        let mut step = 0u32;
        while pos[cur as usize] == u32::MAX {
            pos[cur as usize] = step;
            step += 1;
            cur = *radj[roff[cur as usize] as usize..roff[cur as usize + 1] as usize]
                .iter()
                .find(|&&p| !removed[p as usize])?;
        }
        // Breadth-first from `start` back to itself among the nodes left.
        let start = cur;
        let mut parent = vec![u32::MAX; n];
        parent[start as usize] = start;
        let mut queue = VecDeque::from([start]);
        let mut end = None;
        'bfs: while let Some(u) = queue.pop_front() {
            for &v in succ(u) {
                if v == start {
                    end = Some(u);
                    break 'bfs;
                }
                if !removed[v as usize] && parent[v as usize] == u32::MAX {
                    parent[v as usize] = u;
                    queue.push_back(v);
                }
            }
        }
        let mut cycle = vec![end?];
        while *cycle.last()? != start {
            let p = parent[*cycle.last()? as usize];
            cycle.push(p);
        }
        cycle.reverse();
        Some(cycle)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    type Sent = Vec<(NodeId, Vec<SentWrite>)>;
    /// One write as a receiver applies it: `(word, value)`.
    type Apply = (u32, u64);

    fn set(ids: &[u16]) -> NodeSet {
        ids.iter().map(|&i| NodeId(i)).collect()
    }

    fn world(
        seed: u64,
        nodes: u16,
        senders: &[u16],
        owned: u32,
        shared: u32,
        writes: u64,
    ) -> (Layout, Sent) {
        let layout = Layout::new(nodes, set(senders), owned, shared);
        let sent = Schedule::generate_all(&ScheduleConfig::new(seed, layout.clone(), writes));
        (layout, sent)
    }

    /// A random merge of the senders' program orders: the hub's global order.
    fn global_order(sent: &Sent, rng: &mut SplitMix64) -> Vec<(NodeId, SentWrite)> {
        let total: usize = sent.iter().map(|(_, w)| w.len()).sum();
        let mut next = vec![0usize; sent.len()];
        let mut out = Vec::with_capacity(total);
        while out.len() < total {
            let mut x = rng.below((total - out.len()) as u64) as usize;
            for (i, (s, ws)) in sent.iter().enumerate() {
                let left = ws.len() - next[i];
                if x < left {
                    out.push((*s, ws[next[i]]));
                    next[i] += 1;
                    break;
                }
                x -= left;
            }
        }
        out
    }

    /// What `r` applies under a correct transport: its writes in global order.
    fn deliveries(order: &[(NodeId, SentWrite)], r: NodeId) -> Vec<Apply> {
        order
            .iter()
            .filter(|(_, w)| w.dests.contains(r))
            .map(|(s, w)| (w.word, w.value(*s)))
            .collect()
    }

    #[derive(Clone, Copy)]
    enum Reads {
        /// Before each apply, another read with probability p (geometric run).
        Random(f64),
        /// After each apply, this many full sweeps of the segment.
        Sweeps(u32),
    }

    /// A receiver applying `applies` to its memory, interleaving round-robin reads.
    fn receive(
        layout: &Layout,
        r: NodeId,
        applies: &[Apply],
        reads: Reads,
        rng: &mut SplitMix64,
    ) -> ReceiverLog {
        let words = u64::from(layout.total_words());
        let mut mem = vec![0u64; words as usize];
        let mut rec = ReadRecorder::new(r, layout);
        let read = |rec: &mut ReadRecorder, mem: &[u64]| {
            let w = rec.next_word();
            rec.record(mem[w as usize]);
        };
        match reads {
            Reads::Random(p) => {
                for _ in 0..rng.below(words) {
                    read(&mut rec, &mem);
                }
                for &(w, v) in applies {
                    while rng.chance(p) {
                        read(&mut rec, &mem);
                    }
                    mem[w as usize] = v;
                }
                for _ in 0..rng.below(2 * words + 1) {
                    read(&mut rec, &mem);
                }
            }
            Reads::Sweeps(k) => {
                for &(w, v) in applies {
                    mem[w as usize] = v;
                    for _ in 0..u64::from(k) * words {
                        read(&mut rec, &mem);
                    }
                }
            }
        }
        rec.finish(mem)
    }

    /// Runs every node over the global order of `seed`, letting `tamper` change what
    /// each receiver applies, and checks.
    fn run(
        layout: &Layout,
        sent: &Sent,
        seed: u64,
        reads: Reads,
        mut tamper: impl FnMut(NodeId, &mut Vec<Apply>),
    ) -> Report {
        let mut rng = SplitMix64::new(seed);
        let order = global_order(sent, &mut rng);
        let logs: Vec<ReceiverLog> = (0..layout.nodes())
            .map(NodeId)
            .map(|r| {
                let mut applies = deliveries(&order, r);
                tamper(r, &mut applies);
                receive(layout, r, &applies, reads, &mut rng)
            })
            .collect();
        check(layout, sent, &logs)
    }

    /// [`run`], tampering only with what receiver `r` applies.
    fn run_at(
        layout: &Layout,
        sent: &Sent,
        seed: u64,
        reads: Reads,
        r: NodeId,
        mut tamper: impl FnMut(&mut Vec<Apply>),
    ) -> Report {
        run(layout, sent, seed, reads, |node, a| {
            if node == r {
                tamper(a);
            }
        })
    }

    /// Swaps the applies of values `x` and `y`.
    fn swap_values(applies: &mut [Apply], x: u64, y: u64) {
        let (i, j) = (pos(applies, x), pos(applies, y));
        applies.swap(i, j);
    }

    fn writes_of(sent: &Sent, s: NodeId) -> &[SentWrite] {
        &sent.iter().find(|(n, _)| *n == s).unwrap().1
    }

    fn pos(applies: &[Apply], v: u64) -> usize {
        applies.iter().position(|a| a.1 == v).unwrap()
    }

    fn has(report: &Report, f: impl Fn(&Violation) -> bool) -> bool {
        report.violations.iter().any(f)
    }

    #[test]
    fn encode_decode_roundtrip() {
        assert_eq!(decode(encode(NodeId(7), 1)), Some((NodeId(7), 1)));
        assert_eq!(
            decode(encode(NodeId(255), SEQ_MASK)),
            Some((NodeId(255), SEQ_MASK))
        );
        assert_eq!(decode(0), None);
        assert_ne!(encode(NodeId(0), 1), 0);
    }

    #[test]
    fn layout_indexes() {
        let l = Layout::new(5, set(&[1, 3]), 4, 3);
        assert_eq!(l.total_words(), 11);
        assert_eq!(l.owned_range(NodeId(1)), 0..4);
        assert_eq!(l.owned_word(NodeId(3), 2), 6);
        assert_eq!(l.shared_range(), 8..11);
        assert_eq!(l.shared_word(0), 8);
        assert_eq!(l.region(5), Some(Region::Owned(NodeId(3))));
        assert_eq!(l.region(10), Some(Region::Shared));
        assert_eq!(l.region(11), None);
        assert_eq!(l.sender_index(NodeId(3)), Some(1));
        assert_eq!(l.sender_index(NodeId(2)), None);
    }

    #[test]
    fn schedules_are_reproducible_and_well_formed() {
        let (layout, sent) = world(11, 6, &[0, 2, 5], 4, 4, 2000);
        let cfg = ScheduleConfig::new(11, layout.clone(), 2000);
        assert_eq!(
            Schedule::generate(&cfg, NodeId(2)),
            writes_of(&sent, NodeId(2))
        );
        assert_ne!(writes_of(&sent, NodeId(0)), writes_of(&sent, NodeId(2)));
        let (mut p2p, mut mc, mut bc, mut local) = (0, 0, 0, 0);
        for (s, ws) in &sent {
            for (i, w) in ws.iter().enumerate() {
                assert_eq!(w.seq, i as u64 + 1);
                assert_eq!(w.local_copy, w.dests.contains(*s));
                match layout.region(w.word).unwrap() {
                    Region::Shared => assert!(w.dests.len() >= 2, "{w:?}"),
                    Region::Owned(o) => assert_eq!(o, *s),
                }
                match w.to {
                    Dest::Node(n) => {
                        assert_ne!(n, *s);
                        assert!(w.dests.contains(n));
                        p2p += 1;
                    }
                    Dest::Group(g) => {
                        let mut members = cfg.groups[g.index()];
                        members.remove(*s);
                        assert!(w.dests.intersect(&members) == members);
                        assert_eq!(w.dests.contains(*s), w.local_copy);
                        mc += 1;
                    }
                    Dest::Broadcast => {
                        assert_eq!(w.dests.len(), 5 + usize::from(w.local_copy));
                        bc += 1;
                    }
                }
                local += usize::from(w.local_copy);
            }
        }
        assert!(
            p2p > 500 && mc > 500 && bc > 500 && local > 500,
            "{p2p} {mc} {bc} {local}"
        );
    }

    #[test]
    fn recorder_logs_changes_only() {
        let layout = Layout::new(2, set(&[0]), 1, 1);
        let mut rec = ReadRecorder::new(NodeId(1), &layout);
        for v in [0, 0, 5, 0, 5, 7] {
            rec.record(v);
        }
        let log = rec.finish(vec![5, 7]);
        assert_eq!(log.reads_done, 6);
        let got: Vec<_> = log
            .observations
            .iter()
            .map(|o| (o.read_index, o.word, o.value))
            .collect();
        assert_eq!(got, vec![(2, 0, 5), (5, 1, 7)]);
    }

    #[test]
    fn correct_global_order_has_no_violation() {
        let (layout, sent) = world(1, 6, &[0, 1, 2, 4], 6, 6, 1500);
        let report = run(&layout, &sent, 2, Reads::Random(0.7), |_, _| {});
        report.assert_ok();
        assert_eq!(report.writes_checked, 6000);
        assert_eq!(report.receivers_checked, 6);
        assert!(
            report.observations_checked > 5000 && report.graph_edges > 10_000,
            "{report}"
        );
        let report = run(&layout, &sent, 3, Reads::Sweeps(1), |_, _| {});
        report.assert_ok();
    }

    /// Two consecutive writes of one sender destined to `r`, on different words of the
    /// region `want`; returns their values.
    fn adjacent_pair(
        layout: &Layout,
        sent: &Sent,
        r: NodeId,
        want: Region,
        same_word: bool,
    ) -> (u64, u64) {
        for (s, ws) in sent {
            let mine: Vec<&SentWrite> = ws.iter().filter(|w| w.dests.contains(r)).collect();
            for p in mine.windows(2) {
                let region = |w: &SentWrite| match layout.region(w.word).unwrap() {
                    Region::Owned(_) => Region::Owned(*s),
                    Region::Shared => Region::Shared,
                };
                let want = match want {
                    Region::Owned(_) => Region::Owned(*s),
                    Region::Shared => Region::Shared,
                };
                if region(p[0]) == want
                    && region(p[1]) == want
                    && (p[0].word == p[1].word) == same_word
                {
                    return (p[0].value(*s), p[1].value(*s));
                }
            }
        }
        panic!("no such pair");
    }

    #[test]
    fn rule1_swap_on_owned_words_is_a_stale_read() {
        let (layout, sent) = world(5, 5, &[0, 1, 2], 4, 4, 300);
        let r = NodeId(3);
        let (x, y) = adjacent_pair(&layout, &sent, r, Region::Owned(NodeId(0)), false);
        let report = run_at(&layout, &sent, 6, Reads::Sweeps(2), r, |a| {
            swap_values(a, x, y)
        });
        assert!(report.total(Rule::SingleSender) > 0, "{report}");
        assert!(has(
            &report,
            |v| matches!(v, Violation::StaleRead { receiver, .. } if *receiver == r)
        ));
        assert!(report.to_string().contains("rule 1"));
    }

    #[test]
    fn rule1_swap_on_one_word_goes_backward() {
        let (layout, sent) = world(7, 5, &[0, 1, 2], 2, 4, 300);
        let r = NodeId(4);
        let (x, y) = adjacent_pair(&layout, &sent, r, Region::Owned(NodeId(0)), true);
        let report = run_at(&layout, &sent, 8, Reads::Sweeps(1), r, |a| {
            swap_values(a, x, y)
        });
        assert!(
            has(&report, |v| matches!(v, Violation::Backward { .. })),
            "{report}"
        );
    }

    #[test]
    fn rule1_swap_on_shared_words_is_caught() {
        let (layout, sent) = world(9, 5, &[0, 1, 2], 2, 6, 300);
        let r = NodeId(3);
        let (x, y) = adjacent_pair(&layout, &sent, r, Region::Shared, false);
        let report = run_at(&layout, &sent, 10, Reads::Sweeps(2), r, |a| {
            swap_values(a, x, y)
        });
        assert!(!report.is_ok());
        assert!(
            report.total(Rule::SingleSender) + report.total(Rule::Multisender) > 0,
            "{report}"
        );
    }

    /// Senders 0 and 1 broadcast once each (to `wa`, `wb`); receivers 2 and 3 apply the two
    /// writes in opposite orders.
    fn opposite_orders(same_word: bool, reads: Reads) -> Report {
        let layout = Layout::new(4, set(&[0, 1]), 1, 2);
        let wa = layout.shared_word(0);
        let wb = layout.shared_word(u32::from(!same_word));
        let bcast = |word, dests: &[u16]| SentWrite {
            seq: 1,
            word,
            dests: set(dests),
            to: Dest::Broadcast,
            local_copy: false,
        };
        let sent: Sent = vec![
            (NodeId(0), vec![bcast(wa, &[1, 2, 3])]),
            (NodeId(1), vec![bcast(wb, &[0, 2, 3])]),
        ];
        let (a, b) = ((wa, encode(NodeId(0), 1)), (wb, encode(NodeId(1), 1)));
        let mut rng = SplitMix64::new(1);
        let plans: [&[Apply]; 4] = [&[b], &[a], &[a, b], &[b, a]];
        let logs: Vec<_> = plans
            .iter()
            .enumerate()
            .map(|(r, p)| receive(&layout, NodeId(r as u16), p, reads, &mut rng))
            .collect();
        check(&layout, &sent, &logs)
    }

    #[test]
    fn rule2_opposite_orders_are_a_cycle() {
        for same_word in [true, false] {
            let report = opposite_orders(same_word, Reads::Sweeps(2));
            assert_eq!(report.total_violations, 1, "{report}");
            assert!(
                matches!(
                    &report.violations[0],
                    Violation::Cycle {
                        rule: Rule::Multisender,
                        ..
                    }
                ),
                "{report}"
            );
            assert!(report.to_string().contains("rule 2"), "{report}");
        }
        // On one word the final values alone give it away.
        let report = opposite_orders(true, Reads::Sweeps(0));
        assert_eq!(report.total(Rule::Multisender), 1, "{report}");
        // On two words, unread, nothing can be proven.
        opposite_orders(false, Reads::Sweeps(0)).assert_ok();
    }

    #[test]
    fn rule2_one_receiver_swapping_two_senders_is_a_cycle() {
        let (layout, sent) = world(13, 6, &[0, 1, 2, 3], 2, 4, 200);
        let (r1, r2) = (NodeId(4), NodeId(5));
        let mut rng = SplitMix64::new(14);
        let order = global_order(&sent, &mut rng);
        let at_r1 = deliveries(&order, r1);
        let at_r2 = deliveries(&order, r2);
        let senders_of = |v: u64| decode(v).unwrap().0;
        for same_word in [true, false] {
            let i = at_r2
                .windows(2)
                .position(|p| {
                    senders_of(p[0].1) != senders_of(p[1].1)
                        && (p[0].0 == p[1].0) == same_word
                        && at_r1.contains(&p[0])
                        && at_r1.contains(&p[1])
                })
                .unwrap();
            let report = run_at(&layout, &sent, 14, Reads::Sweeps(2), r2, |a| {
                a.swap(i, i + 1);
            });
            assert!(
                has(&report, |v| matches!(
                    v,
                    Violation::Cycle {
                        rule: Rule::Multisender,
                        ..
                    }
                )),
                "{report}"
            );
            assert_eq!(report.total(Rule::SingleSender), 0, "{report}");
        }
    }

    #[test]
    fn lost_last_write_is_reported() {
        let (layout, sent) = world(15, 5, &[0, 1, 2], 3, 3, 200);
        let r = NodeId(3);
        let mut rng = SplitMix64::new(16);
        let at_r = deliveries(&global_order(&sent, &mut rng), r);
        for region in [layout.owned_range(NodeId(1)), layout.shared_range()] {
            let last = at_r
                .iter()
                .rev()
                .find(|a| region.contains(&a.0))
                .copied()
                .unwrap();
            let report = run_at(&layout, &sent, 16, Reads::Random(0.5), r, |a| {
                a.retain(|x| *x != last);
            });
            let (s, q) = decode(last.1).unwrap();
            let lost = has(&report, |v| {
                matches!(v, Violation::LostWrite { receiver, sender, seq, .. }
                    if *receiver == r && *sender == s && *seq == q)
            });
            if region == layout.shared_range() {
                // Ending on another sender's write instead is an order no other
                // receiver agrees with: a cycle through the final values.
                assert!(lost || report.total(Rule::Multisender) > 0, "{report}");
            } else {
                assert!(lost, "{report}");
            }
        }
    }

    #[test]
    fn lost_middle_write_is_a_stale_read() {
        let (layout, sent) = world(17, 5, &[0, 1, 2], 4, 2, 200);
        let r = NodeId(4);
        let s = NodeId(1);
        let mine: Vec<&SentWrite> = writes_of(&sent, s)
            .iter()
            .filter(|w| w.dests.contains(r))
            .collect();
        let x = mine
            .windows(2)
            .find(|p| p[0].word != p[1].word && layout.region(p[0].word) == Some(Region::Owned(s)))
            .unwrap()[0]
            .value(s);
        let report = run_at(&layout, &sent, 18, Reads::Sweeps(2), r, |a| {
            a.retain(|v| v.1 != x);
        });
        assert!(
            has(&report, |v| matches!(v, Violation::StaleRead { .. })),
            "{report}"
        );
    }

    #[test]
    fn duplicated_write_is_reported() {
        let (layout, sent) = world(19, 5, &[0, 1, 2], 3, 2, 300);
        let r = NodeId(3);
        let mut rng = SplitMix64::new(20);
        let at_r = deliveries(&global_order(&sent, &mut rng), r);
        // Re-applies the first earlier apply `i` right after a later `j` with `pair(i, j)`.
        let reapplied = |pair: &dyn Fn(Apply, Apply) -> bool| {
            let (i, j) = (0..at_r.len())
                .flat_map(|i| (i + 1..at_r.len()).map(move |j| (i, j)))
                .find(|&(i, j)| pair(at_r[i], at_r[j]))
                .unwrap();
            let dup = at_r[i];
            run_at(&layout, &sent, 20, Reads::Sweeps(1), r, |a| {
                a.insert(j + 1, dup);
            })
        };
        // Owned word: an old write of sender 0 re-applied after a newer one to its word.
        let owned = layout.owned_range(NodeId(0));
        let report = reapplied(&|x, y| owned.contains(&x.0) && x.0 == y.0);
        assert!(
            has(&report, |v| matches!(v, Violation::Backward { .. })),
            "{report}"
        );
        // Shared word: re-applied after another sender's write to that word.
        let shared = layout.shared_range();
        let report = reapplied(&|x, y| {
            shared.contains(&x.0) && x.0 == y.0 && decode(x.1).unwrap().0 != decode(y.1).unwrap().0
        });
        assert!(
            has(&report, |v| matches!(v, Violation::Cycle { .. })),
            "{report}"
        );
    }

    #[test]
    fn corrupt_values_are_reported() {
        let (layout, sent) = world(21, 4, &[0, 1], 2, 2, 100);
        let r = NodeId(2);
        let w = layout.shared_word(1);
        let other_word = writes_of(&sent, NodeId(1))
            .iter()
            .find(|x| x.word != w)
            .unwrap()
            .value(NodeId(1));
        for bad in [
            encode(NodeId(0), 1_000_000),
            encode(NodeId(3), 1),
            0xdead_beef_0000,
            other_word,
        ] {
            let report = run_at(&layout, &sent, 22, Reads::Sweeps(1), r, |a| {
                let at = a.len() / 2;
                a.insert(at, (w, bad));
            });
            assert!(
                has(
                    &report,
                    |v| matches!(v, Violation::Corrupt { receiver, word, value, read_index: Some(_) }
                    if *receiver == r && *word == w && *value == bad)
                ),
                "{report}"
            );
        }
    }

    #[test]
    fn misdelivered_value_is_reported() {
        let (layout, sent) = world(23, 5, &[0, 1, 2], 2, 2, 100);
        let r = NodeId(4);
        let (s, x) = sent
            .iter()
            .flat_map(|(s, ws)| ws.iter().map(move |w| (*s, *w)))
            .find(|(_, w)| !w.dests.contains(r))
            .unwrap();
        let report = run_at(&layout, &sent, 24, Reads::Sweeps(1), r, |a| {
            a.insert(a.len() / 2, (x.word, x.value(s)));
        });
        assert!(
            has(
                &report,
                |v| matches!(v, Violation::Misdelivered { receiver, sender, seq, .. }
                if *receiver == r && *sender == s && *seq == x.seq)
            ),
            "{report}"
        );
    }

    #[test]
    fn bad_final_values_and_logs_are_reported() {
        let (layout, sent) = world(25, 4, &[0, 1], 2, 2, 100);
        let mut rng = SplitMix64::new(26);
        let order = global_order(&sent, &mut rng);
        let mut logs: Vec<_> = (0..4)
            .map(|r| {
                receive(
                    &layout,
                    NodeId(r),
                    &deliveries(&order, NodeId(r)),
                    Reads::Random(0.6),
                    &mut rng,
                )
            })
            .collect();
        check(&layout, &sent, &logs).assert_ok();
        logs[1].final_values[0] = 77;
        let o = logs[2].observations[3];
        logs[2].observations[3].word = (o.word + 1) % layout.total_words();
        logs[3].reads_done = 0;
        let report = check(&layout, &sent, &logs);
        assert!(has(&report, |v| matches!(
            v,
            Violation::Corrupt {
                receiver: NodeId(1),
                read_index: None,
                ..
            }
        )));
        assert!(has(&report, |v| matches!(
            v,
            Violation::BadLog {
                receiver: NodeId(2),
                ..
            }
        )));
        assert!(has(&report, |v| matches!(
            v,
            Violation::BadLog {
                receiver: NodeId(3),
                ..
            }
        )));
        assert!(report.violations.len() <= MAX_REPORTED);
        assert!(report.total(Rule::Input) >= 2);
    }

    #[test]
    fn bad_schedules_are_refused() {
        let (layout, mut sent) = world(27, 3, &[0, 1], 2, 2, 10);
        sent[1].1[4].seq = 9;
        let report = check(&layout, &sent, &[]);
        assert!(
            matches!(
                report.violations[..],
                [Violation::BadSchedule {
                    sender: NodeId(1),
                    ..
                }]
            ),
            "{report}"
        );
        let (layout, mut sent) = world(27, 3, &[0, 1], 2, 2, 10);
        sent[0].1[0].word = layout.owned_word(NodeId(1), 0);
        assert_eq!(check(&layout, &sent, &[]).total(Rule::Input), 1);
    }

    #[test]
    fn report_is_bounded() {
        let (layout, sent) = world(29, 3, &[0], 4, 0, 50);
        let logs: Vec<_> = (0..3)
            .map(|r| ReceiverLog {
                node: NodeId(r),
                observations: Vec::new(),
                final_values: vec![1 << 40; 4],
                reads_done: 0,
            })
            .collect();
        let report = check(&layout, &sent, &logs);
        assert_eq!(report.total_violations, 12);
        assert_eq!(report.violations.len(), 12);
        let logs: Vec<_> = (0..3)
            .map(|r| ReceiverLog {
                node: NodeId(r),
                observations: (0..30)
                    .map(|i| Observation {
                        read_index: i,
                        word: (i % 4) as u32,
                        value: i + (1 << 40),
                    })
                    .collect(),
                final_values: vec![0; 4],
                reads_done: 30,
            })
            .collect();
        let report = check(&layout, &sent, &logs);
        assert!(report.total_violations > MAX_REPORTED);
        assert_eq!(report.violations.len(), MAX_REPORTED);
    }

    proptest! {
        #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

        /// Any schedule, any global order, any read interleaving: no violation.
        #[test]
        fn correct_delivery_never_fails(
            seed in any::<u64>(),
            nodes in 1u16..7,
            sender_bits in 1u64..128,
            owned in 0u32..4,
            shared in 0u32..4,
            writes in 0u64..80,
            read_p in 0.0f64..0.95,
            local_copy in 0.0f64..1.0,
        ) {
            let mut senders: Vec<u16> = (0..nodes).filter(|i| sender_bits >> i & 1 == 1).collect();
            if senders.is_empty() {
                senders.push(nodes - 1);
            }
            let shared = if owned + shared == 0 { 1 } else { shared };
            let layout = Layout::new(nodes, set(&senders), owned, shared);
            let mut cfg = ScheduleConfig::new(seed, layout.clone(), writes);
            cfg.local_copy = local_copy;
            let sent = Schedule::generate_all(&cfg);
            let report = run(&layout, &sent, seed ^ 1, Reads::Random(read_p), |_, _| {});
            prop_assert!(report.is_ok(), "{}", report);
        }
    }
}
