//! The barrier, one protocol for both transports: what a barrier number is, who must
//! arrive before a node passes, where a joiner starts, and the dissemination's round
//! plan. A transport places the numbers (words of the one-host control block, the
//! hub's table of counts) and waits on them its own way; this module decides.
//!
//! **Numbers.** Every node keeps, per scope (the cluster, or one group), the number
//! of the last barrier it arrived at: it arrives at barrier `t` by moving its number
//! to `t` ([`next`]). Numbers are [`NUMBER_BITS`] wide and wrap, so one at or past
//! another is one less than half the range ahead ([`reached`]). A joiner starts level
//! with the live members, at the number furthest on among them ([`level`]): the next
//! barrier it calls is the one they call next, and it is never missing from one under
//! way (it has reached that one already).
//!
//! **Who waits for whom.** A node passes barrier `t` once every live member of the
//! scope has reached `t` ([`missing`], [`lowest`]). That check is always sufficient
//! and never depends on anything but the members and their numbers: a member that
//! leaves or fails stops being one (`memchan_core::membership`), so it never holds a
//! barrier up, and a changed member set costs speed, never correctness.
//!
//! **The dissemination.** Where nodes can watch each other's numbers (one host), the
//! check can be split into O(log n) rounds ([`Plan`]): the ranks are the scope's
//! members sorted by id; in round k rank r waits for rank (r - 2^k) mod n to have done
//! round k - 1, so after round k it knows the 2^(k+1) - 1 ranks before it arrived,
//! and after ceil(log2 n) rounds that all did. That knowledge passes only between
//! nodes that took the same rank set, which a 16-bit tag of the set tells
//! ([`tag_of`]); whatever a round cannot trust ([`round`]) falls back to the check
//! above. A node's progress in its barrier is one [`word`].
//!
//! **Arrivals heard again.** Where a node reports its arrivals by message to a party
//! that may hear a report twice (a standby hub after a rail switch), it numbers them
//! itself, from 1 after its join, and [`count_arrival`] turns the reports into its
//! barrier number.

use crate::names::{NodeId, NodeSet};

/// Bits of a barrier number: numbers wrap at `1 << NUMBER_BITS`.
pub const NUMBER_BITS: u32 = 44;
const NUMBER_MASK: u64 = (1 << NUMBER_BITS) - 1;

/// The number of the barrier after `number`.
#[inline(always)]
pub fn next(number: u64) -> u64 {
    number.wrapping_add(1) & NUMBER_MASK
}

/// Whether number `a` is at or past `b` ("past": less than half the range ahead).
#[inline(always)]
pub fn reached(a: u64, b: u64) -> bool {
    a.wrapping_sub(b) & NUMBER_MASK < 1 << (NUMBER_BITS - 1)
}

/// The number a joiner starts at, given the live members' `numbers`: the one furthest
/// on (0 in an empty cluster).
pub fn level(numbers: impl IntoIterator<Item = u64>) -> u64 {
    numbers
        .into_iter()
        .reduce(|a, b| if reached(a, b) { a } else { b })
        .unwrap_or(0)
}

/// The lowest of the `numbers` (`None` for none): every one of them reached `t`
/// exactly when this one did.
pub fn lowest(numbers: impl IntoIterator<Item = u64>) -> Option<u64> {
    numbers
        .into_iter()
        .reduce(|a, b| if reached(a, b) { b } else { a })
}

/// Those of `waited` whose number has not reached `t`: the members a barrier at `t`
/// still waits for, when `waited` is the scope's live members (less the waiter, which
/// arrived).
#[inline]
pub fn missing(waited: &NodeSet, t: u64, mut number: impl FnMut(NodeId) -> u64) -> NodeSet {
    let mut missing = NodeSet::EMPTY;
    for n in waited.iter() {
        if !reached(number(n), t) {
            missing.insert(n);
        }
    }
    missing
}

/// The members a barrier of `scope` waits for: the cluster's live `members`, or those
/// of them in the scope's `group`.
#[inline(always)]
pub fn scope(members: NodeSet, group: Option<NodeSet>) -> NodeSet {
    match group {
        Some(g) => members.intersect(&g),
        None => members,
    }
}

/// Counts a node's arrival report `reported` (its own numbering, from 1 after its
/// join) into its barrier number `count`, with `seen` the last report counted (0
/// after its join); returns the barrier number it waits for. A report not counted
/// yet counts, together with any earlier ones missed (a standby's copy of the counts
/// is a heartbeat old); one counted already (asked again) is not counted again.
pub fn count_arrival(count: &mut u64, seen: &mut u64, reported: u64) -> u64 {
    if reported > *seen {
        *count = count.wrapping_add(reported - *seen) & NUMBER_MASK;
        *seen = reported;
        *count
    } else {
        count.wrapping_sub(*seen - reported) & NUMBER_MASK
    }
}

/// The most rounds a dissemination takes (256 nodes).
pub const MAX_ROUNDS: usize = 8;

/// A node's dissemination over a rank set: the set's tag, the number of rounds and
/// each round's source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Plan {
    /// [`tag_of`] the rank set.
    pub tag: u16,
    /// ceil(log2 n) for n ranks (0 for a node alone).
    pub rounds: u8,
    /// The node round k waits for (rank r - 2^k mod n), for the rounds there are;
    /// the planning node itself beyond them.
    pub src: [NodeId; MAX_ROUNDS],
}

impl Plan {
    /// The plan of `me` over `ranks`, which holds `me`.
    pub fn new(me: NodeId, ranks: &NodeSet) -> Plan {
        let n = ranks.len();
        debug_assert!(ranks.contains(me), "a node plans over a rank set it is in");
        let r = rank_of(ranks, me);
        let rounds = usize::BITS - (n.max(1) - 1).leading_zeros();
        let mut src = [me; MAX_ROUNDS];
        for (k, s) in src.iter_mut().enumerate().take(rounds as usize) {
            *s = nth(ranks, (r + n - (1usize << k) % n) % n);
        }
        Plan {
            // 16 bits by construction; at most 8 rounds (256 nodes).
            tag: tag_of(ranks) as u16,
            rounds: rounds as u8,
            src,
        }
    }
}

/// The rank of `n` in `set` (members below it).
pub fn rank_of(set: &NodeSet, n: NodeId) -> usize {
    let (w, b) = (n.index() / 64, n.index() % 64);
    let below: usize = set.0[..w].iter().map(|x| x.count_ones() as usize).sum();
    below + (set.0[w] & ((1u64 << b) - 1)).count_ones() as usize
}

/// The member of `set` at rank `i` (`i < set.len()`).
pub fn nth(set: &NodeSet, mut i: usize) -> NodeId {
    for (w, &bits) in set.0.iter().enumerate() {
        let c = bits.count_ones() as usize;
        if i < c {
            let mut rest = bits;
            for _ in 0..i {
                rest &= rest - 1;
            }
            return NodeId((w * 64) as u16 + rest.trailing_zeros() as u16);
        }
        i -= c;
    }
    unreachable!("rank below the set's size")
}

/// The rank set's tag (16 bits): nodes that took different sets see different tags
/// (but for a 2^-16 collision) and fall back to the all-arrived check.
pub fn tag_of(set: &NodeSet) -> u64 {
    let mut h = 0u64;
    for w in set.0 {
        h = (h ^ w).wrapping_mul(0x9E37_79B9_7F4A_7C15).rotate_left(29);
    }
    h >> 48
}

/// A node's progress in its last barrier, as one word other nodes watch:
/// `number << 20 | tag << 4 | rounds`, with the low 44 bits of the barrier
/// `number`, the `tag` of the rank set it took at arrival and how far it got in that
/// barrier's dissemination: 1 = arrived, k + 2 = its round-k wait succeeded,
/// 0 = a joiner, not part of barrier `number`, [`FLAT`](word::FLAT) = arrived,
/// waiting for all arrivals without rounds. Only the node itself writes its word.
pub mod word {
    /// `rounds` of a node that takes no rounds: a peer waiting for one of its rounds
    /// falls back to the all-arrived check (the most rounds are 8: word 9).
    pub const FLAT: u64 = 0xf;
    const NUMBER_SHIFT: u32 = 20;

    /// The word of barrier `number`, rank-set tag `tag`, progress `rounds`.
    #[inline(always)]
    pub fn pack(number: u64, tag: u64, rounds: u64) -> u64 {
        (number & super::NUMBER_MASK) << NUMBER_SHIFT | (tag & 0xffff) << 4 | (rounds & 0xf)
    }
    /// The word of a joiner that starts level at `number`.
    #[inline(always)]
    pub fn joiner(number: u64) -> u64 {
        pack(number, 0, 0)
    }
    /// The word of an arrival at `number` with rank-set tag `tag`.
    #[inline(always)]
    pub fn arrival(number: u64, tag: u64) -> u64 {
        pack(number, tag, 1)
    }
    /// The word after round `k` of barrier `number` succeeded.
    #[inline(always)]
    pub fn after_round(number: u64, tag: u64, k: u32) -> u64 {
        pack(number, tag, u64::from(k) + 2)
    }
    /// The barrier number of `w`.
    #[inline(always)]
    pub fn number(w: u64) -> u64 {
        w >> NUMBER_SHIFT
    }
    /// The rank-set tag of `w`.
    #[inline(always)]
    pub fn tag(w: u64) -> u64 {
        (w >> 4) & 0xffff
    }
    /// The progress of `w`.
    #[inline(always)]
    pub fn rounds(w: u64) -> u64 {
        w & 0xf
    }
}

/// How a wait in the dissemination ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Round {
    /// The source did the round before: go on.
    Done,
    /// Every member has arrived: the barrier is over.
    AllArrived,
    /// The ranks cannot be trusted: wait for every member to arrive.
    Fallback,
}

/// What the source's word `w` tells a node in round `k` of barrier `t` with rank-set
/// tag `tag` (`need` = k + 1): `None` while the source is behind.
///
/// A source at `t` decides by its tag and progress: another rank set, a joiner (it is
/// not part of `t`) or one without rounds means falling back. A source already past
/// `t` arrived at `t`, all round 0 needs; for a later round it may have finished `t`,
/// or be a joiner that moved on, so the rounds cannot be trusted. (Common in a 2-node
/// loop: the peer passes one transfer after our arrival and may arrive at the next
/// barrier before we look at its word of `t`.)
#[inline(always)]
pub fn round(w: u64, t: u64, tag: u64, need: u64) -> Option<Round> {
    let num = word::number(w);
    if num == t {
        let rounds = word::rounds(w);
        if word::tag(w) != tag || rounds == 0 || rounds == word::FLAT {
            return Some(Round::Fallback);
        }
        if rounds >= need {
            return Some(Round::Done);
        }
        None
    } else if reached(num, t) {
        Some(if need == 1 {
            Round::Done
        } else {
            Round::Fallback
        })
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(ids: &[u16]) -> NodeSet {
        ids.iter().map(|&i| NodeId(i)).collect()
    }

    #[test]
    fn numbers_wrap_and_compare_across_the_wrap() {
        let top = NUMBER_MASK;
        assert_eq!(next(top), 0);
        assert!(reached(0, top), "0 is one past the last number");
        assert!(!reached(top, 0));
        assert!(reached(5, 5) && reached(6, 5) && !reached(4, 5));
        assert!(
            !reached(5 + (1 << (NUMBER_BITS - 1)), 5),
            "half the range is behind"
        );
    }

    #[test]
    fn a_joiner_starts_at_the_number_furthest_on_and_the_lowest_decides() {
        assert_eq!(level([3, 7, 5]), 7);
        assert_eq!(level([]), 0);
        assert_eq!(level([NUMBER_MASK, 1]), 1, "across the wrap");
        assert_eq!(lowest([3, 7, 5]), Some(3));
        assert_eq!(lowest([NUMBER_MASK, 1]), Some(NUMBER_MASK));
        assert_eq!(lowest([]), None);
    }

    #[test]
    fn missing_are_the_waited_behind_t() {
        let numbers = [4u64, 5, 3, 9];
        let m = missing(&set(&[0, 1, 2, 3]), 5, |n| numbers[n.index()]);
        assert_eq!(m, set(&[0, 2]));
        assert!(missing(&NodeSet::EMPTY, 5, |_| 0).is_empty());
        assert_eq!(scope(set(&[0, 1, 2]), Some(set(&[1, 2, 7]))), set(&[1, 2]));
        assert_eq!(scope(set(&[0, 1]), None), set(&[0, 1]));
    }

    #[test]
    fn an_arrival_heard_again_is_not_counted_again() {
        // A joiner level at 10: its first report makes it 11.
        let (mut count, mut seen) = (10, 0);
        assert_eq!(count_arrival(&mut count, &mut seen, 1), 11);
        assert_eq!(count_arrival(&mut count, &mut seen, 1), 11, "asked again");
        // Reports 2 and 3 missed (a standby's stale copy): 4 counts them all.
        assert_eq!(count_arrival(&mut count, &mut seen, 4), 14);
        assert_eq!((count, seen), (14, 4));
        // An old report waits for the number it had then, passed already.
        assert_eq!(count_arrival(&mut count, &mut seen, 2), 12);
        assert!(reached(count, 12));
        assert_eq!(count, 14, "an old report moves nothing");
    }

    #[test]
    fn ranks_are_ids_in_order() {
        let s = set(&[3, 64, 65, 200]);
        assert_eq!(
            [3, 64, 65, 200].map(|i| rank_of(&s, NodeId(i))),
            [0, 1, 2, 3]
        );
        assert_eq!(
            (0..4).map(|r| nth(&s, r).0).collect::<Vec<_>>(),
            [3, 64, 65, 200]
        );
    }

    #[test]
    fn the_plan_is_a_dissemination_every_rank_agrees_on() {
        let ranks = set(&[1, 4, 6, 9, 12]);
        let ids: Vec<NodeId> = ranks.iter().collect();
        let plans: Vec<Plan> = ids.iter().map(|&me| Plan::new(me, &ranks)).collect();
        for (r, p) in plans.iter().enumerate() {
            assert_eq!(p.rounds, 3, "ceil(log2 5)");
            assert_eq!(p.tag, plans[0].tag, "one rank set, one tag");
            for k in 0..3 {
                let want = (r + 5 - (1 << k) % 5) % 5;
                assert_eq!(p.src[k], ids[want], "rank {r} round {k}");
            }
        }
        // What each rank knows arrived: after round k what its source knew after
        // round k - 1. All of it after the last round, not before.
        let mut known: Vec<Vec<bool>> = (0..5).map(|r| (0..5).map(|x| x == r).collect()).collect();
        for k in 0..3 {
            let before = known.clone();
            for (r, p) in plans.iter().enumerate() {
                let s = rank_of(&ranks, p.src[k]);
                for x in 0..5 {
                    known[r][x] |= before[s][x];
                }
            }
            let all = known.iter().all(|k| k.iter().all(|&x| x));
            assert_eq!(all, k == 2, "after round {k}");
        }
        let alone = Plan::new(NodeId(7), &set(&[7]));
        assert_eq!((alone.rounds, alone.src), (0, [NodeId(7); MAX_ROUNDS]));
        let full: NodeSet = (0..256u16).map(NodeId).collect();
        assert_eq!(Plan::new(NodeId(0), &full).rounds, MAX_ROUNDS as u8);
        assert_ne!(tag_of(&ranks), tag_of(&set(&[1, 4, 6, 9])));
    }

    #[test]
    fn a_round_trusts_only_the_same_rank_set_in_the_same_barrier() {
        let (t, tag) = (40, 0xbeef);
        assert_eq!(word::number(word::arrival(t, tag)), t);
        assert_eq!(word::tag(word::arrival(t, tag)), tag);
        assert_eq!(word::rounds(word::after_round(t, tag, 2)), 4);
        // The source arrived: round 0 done, round 1 not yet.
        let arrived = word::arrival(t, tag);
        assert_eq!(round(arrived, t, tag, 1), Some(Round::Done));
        assert_eq!(round(arrived, t, tag, 2), None);
        assert_eq!(
            round(word::after_round(t, tag, 0), t, tag, 2),
            Some(Round::Done)
        );
        // Behind: wait.
        assert_eq!(round(word::arrival(t - 1, tag), t, tag, 1), None);
        // Another rank set, a joiner, a flat arrival: fall back.
        assert_eq!(
            round(word::arrival(t, tag ^ 1), t, tag, 1),
            Some(Round::Fallback)
        );
        assert_eq!(round(word::joiner(t), t, tag, 1), Some(Round::Fallback));
        let flat = word::pack(t, tag, word::FLAT);
        assert_eq!(round(flat, t, tag, 1), Some(Round::Fallback));
        // Past t: its arrival at t is all round 0 needs; later rounds cannot trust it.
        let past = word::arrival(next(t), tag);
        assert_eq!(round(past, t, tag, 1), Some(Round::Done));
        assert_eq!(round(past, t, tag, 2), Some(Round::Fallback));
    }
}
