//! The dual-rail switch plan (`memchan_link::rail`) under the randomized ordering check:
//! a model of the active hub orders every sender's schedule and its destinations apply
//! at random speeds, the hub dies at a random step (whatever it had queued is lost),
//! and the standby orders the held packets by `rail::plan` while each node skips what
//! it applied; in half the runs that standby dies too and a third hub plans from what
//! the second one's order left (nodes renumber their histories to each standby's
//! order). Senders' link seqs have gaps (requests between writes). The testkit's checker then sees every receiver's reads before, across and
//! after the switches: no write may be lost, applied twice or seen out of order.
//! Controls show the check catches a plan that ignores the old order, nodes that do
//! not skip, and nodes that keep the old numbering into a second switch.

use memchan_core::NodeId;
use memchan_link::rail::{self, Applied, Entry, RailError, HISTORY};
use memchan_testkit::check::{
    check, Layout, ReadRecorder, Report, Schedule, ScheduleConfig, SplitMix64,
};
use std::collections::{HashMap, VecDeque};

const NODES: u16 = 5;
const WRITES: u64 = 150;

#[derive(Clone, Copy, PartialEq)]
enum Standby {
    /// `rail::plan`, nodes skip what they applied.
    Rail,
    /// Control: held packets by seq then sender, ignoring the old order.
    IgnoreOldOrder,
    /// Control: `rail::plan`, but nodes apply everything again.
    NoSkip,
    /// Control: `rail::plan`, but nodes keep the old hub's numbering (caught only
    /// at a second switch).
    NoRebase,
}

/// A sender's link seq of its write `seq`: every third link seq is a write, the two
/// between stand for requests (not ordered, so not in a plan).
fn oseq(seq: u64) -> u64 {
    seq * 3
}

struct Sim {
    mem: Vec<u64>,
    rec: ReadRecorder,
    applied: Applied,
    /// Packets the hub queued for this node: (sender index, write seq, gseq).
    queue: VecDeque<(usize, u64, u64)>,
}

impl Sim {
    fn read(&mut self) {
        let v = self.mem[self.rec.next_word() as usize];
        self.rec.record(v);
    }
}

#[derive(Default)]
struct Stats {
    /// Packets some destinations had applied and others not when a hub died.
    half_delivered: u64,
    skipped: u64,
    switches: u64,
}

enum Outcome {
    Checked(Report),
    Gap,
    /// The plan found the reports contradicting each other (a control only).
    Conflict,
}

/// One run: the first hub orders the senders' writes in a random interleaving; up to
/// `switches` times the hub dies at a random step and the next one orders the held
/// packets by the plan (which covers every write not yet released, the ones not yet
/// sent last); after the last switch the plan is delivered whole.
fn run(seed: u64, cap: usize, standby: Standby, switches: u32, stats: &mut Stats) -> Outcome {
    let mut rng = SplitMix64::new(seed ^ 0x7261_696C);
    let layout = Layout::new(NODES, (0..NODES).map(NodeId).collect(), 3, 6);
    let sent = Schedule::generate_all(&ScheduleConfig::new(seed, layout.clone(), WRITES));
    let origin = |s: usize| sent[s].0;
    let mut nodes: Vec<Sim> = (0..NODES)
        .map(|i| Sim {
            mem: vec![0; layout.total_words() as usize],
            rec: ReadRecorder::new(NodeId(i), &layout),
            applied: Applied::new(cap),
            queue: VecDeque::new(),
        })
        .collect();
    let senders = sent.len();
    // Per sender: writes it heard released (a prefix), writes the first hub ordered.
    let mut heard = vec![0u64; senders];
    let mut ordered = vec![0u64; senders];
    let mut gseq = 0u64;
    // The current hub's plan, if it is a standby: what it still has to order.
    let mut plan: Option<VecDeque<(usize, u64)>> = None;
    for phase in 0..=switches {
        // Per packet the current hub ordered: destinations yet to apply it, its gseq.
        let mut outstanding: HashMap<(usize, u64), (u32, u64)> = HashMap::new();
        let last = phase == switches;
        let steps = if last {
            u64::MAX
        } else {
            rng.below(WRITES * senders as u64 * 4) + 1
        };
        let mut step = 0;
        while step < steps {
            step += 1;
            let idle = nodes.iter().all(|n| n.queue.is_empty());
            let pick = if last && idle { 0 } else { rng.below(10) };
            match pick {
                0..=3 => {
                    let next = match &mut plan {
                        Some(p) => p.pop_front(),
                        None => {
                            let r = rng.below(senders as u64) as usize;
                            let s = (r..senders)
                                .chain(0..r)
                                .find(|&s| ordered[s] < WRITES)
                                .unwrap_or(r);
                            (ordered[s] < WRITES).then(|| {
                                ordered[s] += 1;
                                (s, ordered[s])
                            })
                        }
                    };
                    let Some((s, seq)) = next else {
                        if last && idle {
                            break;
                        }
                        continue;
                    };
                    gseq += 1;
                    let w = sent[s].1[seq as usize - 1];
                    for d in w.dests.iter() {
                        nodes[d.index()].queue.push_back((s, seq, gseq));
                    }
                    outstanding.insert((s, seq), (w.dests.len() as u32, gseq));
                }
                4..=7 => {
                    let n = &mut nodes[rng.below(u64::from(NODES)) as usize];
                    let Some((s, seq, g)) = n.queue.pop_front() else {
                        continue;
                    };
                    outstanding.get_mut(&(s, seq)).unwrap().0 -= 1;
                    let (o, q) = (origin(s), oseq(seq));
                    if standby != Standby::NoSkip && n.applied.is_applied(o.0, q) {
                        stats.skipped += 1;
                        continue;
                    }
                    let w = &sent[s].1[seq as usize - 1];
                    n.mem[w.word as usize] = w.value(o);
                    n.read();
                    // A node applying again what it applied breaks its record's
                    // order: the control does not record then.
                    let e = Entry {
                        origin: o.0,
                        oseq: q,
                        gseq: g,
                    };
                    if n.applied.record(e).is_err() {
                        assert!(standby == Standby::NoSkip, "seed {seed}: {e:?}");
                    }
                }
                8 => {
                    // The hub's release mark, as it tells one node.
                    // A standby's mark stays below the packets of its plan it has
                    // not ordered yet (a real standby orders them all at once).
                    let waiting = plan.as_ref().is_some_and(|p| !p.is_empty());
                    let mark = outstanding
                        .values()
                        .filter(|v| v.0 > 0)
                        .map(|v| v.1 - 1)
                        .chain(waiting.then_some(gseq))
                        .min()
                        .unwrap_or(gseq);
                    nodes[rng.below(u64::from(NODES)) as usize]
                        .applied
                        .released_upto(mark);
                }
                _ => nodes[rng.below(u64::from(NODES)) as usize].read(),
            }
        }
        if last {
            break;
        }
        // The hub dies: what it queued is lost. Each sender holds every packet from
        // the first one it did not hear released (releases reach it in order, late).
        stats.switches += 1;
        stats.half_delivered += outstanding
            .iter()
            .filter(|(k, v)| v.0 > 0 && v.0 < sent[k.0].1[k.1 as usize - 1].dests.len() as u32)
            .count() as u64;
        let mut reports = Vec::new();
        for s in 0..senders {
            let done = (heard[s] + 1..=WRITES)
                .take_while(|q| outstanding.get(&(s, *q)).is_some_and(|v| v.0 == 0))
                .count() as u64;
            heard[s] += done - rng.below(done.min(4) + 1);
            let held: Vec<u64> = (heard[s] + 1..=WRITES).map(oseq).collect();
            reports.push(nodes[origin(s).index()].applied.report(origin(s).0, held));
        }
        for n in &mut nodes {
            n.queue.clear();
        }
        // The standby plans from decoded reports.
        let reports: Vec<_> = reports
            .iter()
            .map(|r| rail::Report::decode(&r.encode().unwrap()).unwrap())
            .collect();
        let order = match standby {
            Standby::IgnoreOldOrder => {
                let mut order: Vec<(u16, u64)> = reports
                    .iter()
                    .flat_map(|r| r.unreleased.iter().map(move |&q| (r.node, q)))
                    .collect();
                order.sort_by_key(|&(o, q)| (q, o));
                order
            }
            _ => match rail::plan(&reports) {
                Ok(p) => {
                    // Above all a node applied (gseqs the dead hub gave packets no
                    // node applied may be given again).
                    assert!(
                        nodes.iter().all(|n| n.applied.applied() < p.next_gseq),
                        "seed {seed}: gseq must grow"
                    );
                    for r in reports.iter().filter(|_| standby != Standby::NoRebase) {
                        let n = &mut nodes[usize::from(r.node)].applied;
                        n.rebase(&p.renumber(r), p.next_gseq).unwrap();
                    }
                    gseq = p.next_gseq - 1;
                    p.order
                }
                Err(RailError::HistoryGap { .. }) => return Outcome::Gap,
                Err(RailError::Conflict(_)) if standby != Standby::Rail => {
                    return Outcome::Conflict
                }
                Err(e) => panic!("seed {seed}: {e}"),
            },
        };
        plan = Some(
            order
                .into_iter()
                .map(|(o, q)| (sent.iter().position(|(n, _)| n.0 == o).unwrap(), q / 3))
                .collect(),
        );
    }
    let logs = nodes
        .into_iter()
        .map(|mut n| {
            for _ in 0..layout.total_words() {
                n.read();
            }
            let final_values = n.mem.clone();
            n.rec.finish(final_values)
        })
        .collect::<Vec<_>>();
    Outcome::Checked(check(&layout, &sent, &logs))
}

#[test]
fn a_hub_switch_at_a_random_point_loses_duplicates_and_reorders_nothing() {
    let mut stats = Stats::default();
    for seed in 0..200 {
        match run(
            seed,
            HISTORY,
            Standby::Rail,
            1 + (seed % 2) as u32,
            &mut stats,
        ) {
            Outcome::Checked(r) => {
                assert_eq!(r.writes_checked, u64::from(NODES) * WRITES, "seed {seed}");
                if !r.is_ok() {
                    panic!("seed {seed}: {r}");
                }
            }
            Outcome::Gap | Outcome::Conflict => panic!("seed {seed}: the plan failed"),
        }
    }
    println!(
        "{} switches, {} packets half delivered at them, {} skipped after",
        stats.switches, stats.half_delivered, stats.skipped
    );
    // Half the runs switch twice (the second standby plans from what the first one's
    // order left); the switches did find packets half delivered, which nodes skipped.
    assert_eq!(stats.switches, 300);
    assert!(stats.half_delivered > 100, "{}", stats.half_delivered);
    assert!(stats.skipped > 100, "{}", stats.skipped);
}

#[test]
fn a_short_history_fails_the_plan_rather_than_guess() {
    let mut stats = Stats::default();
    let (mut gaps, mut ok) = (0, 0);
    for seed in 0..200 {
        match run(seed, 2, Standby::Rail, 1, &mut stats) {
            Outcome::Checked(r) => {
                if !r.is_ok() {
                    panic!("seed {seed}: {r}");
                }
                ok += 1;
            }
            Outcome::Gap => gaps += 1,
            Outcome::Conflict => unreachable!("only controls report a conflict"),
        }
    }
    println!("history of 2: {gaps} plans refused, {ok} switches checked");
    assert!(gaps > 0 && ok > 0, "gaps {gaps}, ok {ok}");
}

#[test]
fn the_check_catches_a_standby_that_ignores_the_old_order_or_nodes_that_do_not_skip_or_rebase() {
    for (standby, switches) in [
        (Standby::IgnoreOldOrder, 1),
        (Standby::NoSkip, 1),
        (Standby::NoRebase, 2),
    ] {
        let mut stats = Stats::default();
        let caught = (0..200)
            .filter(
                |&seed| match run(seed, HISTORY, standby, switches, &mut stats) {
                    Outcome::Checked(r) => !r.is_ok(),
                    Outcome::Conflict => true,
                    Outcome::Gap => false,
                },
            )
            .count();
        println!("control caught in {caught} of 200 runs");
        assert!(caught > 0);
    }
}
