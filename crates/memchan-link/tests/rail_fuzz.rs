//! Rail reports are bytes another node wrote: `Report::decode` must refuse every
//! malformed or self-contradicting one with a typed error, never panic, and never
//! allocate for counts the bytes do not back; a report it accepts must be what a node
//! could have made (it re-encodes to the same bytes, and `plan` takes it).

use memchan_link::rail::{plan, Applied, Entry, PlanNotice, RailError, Report, Resume};
use proptest::prelude::*;

fn config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        cases,
        // Failures print their minimal input; no regression files in the tree.
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// A report a node could make: `n` packets from origins 0..4 applied in order, a
/// release mark, a history capacity, and some held seqs.
fn honest(n: u64, mark: u64, cap: usize, held: Vec<u64>) -> Report {
    let mut a = Applied::new(cap);
    let mut seqs = [0u64; 4];
    for g in 1..=n {
        let o = (g * 7 % 4) as usize;
        seqs[o] += 1;
        a.record(Entry {
            origin: o as u16,
            oseq: seqs[o],
            gseq: g * 2,
        })
        .unwrap();
    }
    a.released_upto(mark);
    let mut held = held;
    held.sort_unstable();
    held.dedup();
    held.retain(|&s| s > 0);
    a.report(9, held)
}

proptest! {
    #![proptest_config(config(2048))]

    #[test]
    fn honest_reports_roundtrip(n in 0u64..200, mark in 0u64..400, cap in 1usize..64,
                                held in proptest::collection::vec(0u64..1000, 0..50)) {
        let r = honest(n, mark, cap, held);
        let b = r.encode().unwrap();
        let back = Report::decode(&b).unwrap();
        prop_assert_eq!(&back, &r);
        prop_assert_eq!(back.encode().unwrap(), b);
    }

    #[test]
    fn mutated_reports_are_refused_or_consistent(n in 1u64..100, cap in 1usize..64,
                                                 held in proptest::collection::vec(1u64..500, 0..20),
                                                 flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6),
                                                 cut in any::<usize>()) {
        let mut b = honest(n, 0, cap, held).encode().unwrap();
        for (at, x) in flips {
            let i = at % b.len();
            b[i] ^= x.max(1);
        }
        if cut % 4 == 0 {
            b.truncate(cut / 4 % (b.len() + 1));
        }
        match Report::decode(&b) {
            Ok(r) => {
                // Accepted: consistent in itself; the plan takes it or names why not
                // (a mutated history may place a held packet after a later one).
                prop_assert!(r.check().is_ok());
                match plan(std::slice::from_ref(&r)) {
                    Ok(p) => prop_assert_eq!(p.order.len(), r.unreleased.len()),
                    Err(RailError::HistoryGap { .. } | RailError::Conflict(_)) => {}
                    Err(e) => prop_assert!(false, "plan refused an accepted report: {e}"),
                }
            }
            Err(RailError::Malformed(_) | RailError::BadReport { .. }) => {}
            Err(e) => prop_assert!(false, "unexpected error {e}"),
        }
    }

    #[test]
    fn arbitrary_bytes_never_panic(b in proptest::collection::vec(any::<u8>(), 0..512)) {
        let _ = Report::decode(&b);
        let _ = Resume::decode(&b);
        let _ = PlanNotice::decode(&b);
    }

    /// A `RailResume` (a node's frame at a standby hub): mutated ones are refused with
    /// a typed error, or accepted only as a consistent resume of the node they name.
    #[test]
    fn mutated_resumes_are_refused_or_consistent(n in 1u64..100, cap in 1usize..64,
                                                 held in proptest::collection::vec(1u64..500, 0..20),
                                                 rx in proptest::collection::vec((0u32..64, 1u32..9), 0..8),
                                                 flips in proptest::collection::vec((any::<usize>(), any::<u8>()), 1..6)) {
        let report = honest(n, 0, cap, held);
        let first = report.unreleased.first().copied().unwrap_or(1);
        let locks = rx.iter().take(2).map(|&(seg, gen)| (seg, gen, vec![1, 0, 1])).collect();
        let r = Resume { node: 9, inc: 5, first_seq: first, rx, barriers: vec![(u16::MAX, n)], locks, report };
        let mut b = r.encode().unwrap();
        prop_assert_eq!(&Resume::decode(&b).unwrap(), &r);
        for (at, x) in flips {
            let i = at % b.len();
            b[i] ^= x.max(1);
        }
        match Resume::decode(&b) {
            Ok(m) => {
                prop_assert!(m.report.check().is_ok());
                prop_assert_eq!(m.report.node, m.node);
                prop_assert!(m.report.unreleased.iter().all(|&s| s >= m.first_seq));
            }
            Err(RailError::Malformed(_) | RailError::BadReport { .. }) => {}
            Err(e) => prop_assert!(false, "unexpected error {e}"),
        }
    }
}
