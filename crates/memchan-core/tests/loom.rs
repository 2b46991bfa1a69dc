#![cfg(loom)]
//! Loom models of memchan's lock-free core: the point of global order
//! ([`memchan_core::order::OrderPoint`]), its journal and the take-over of a dead
//! holder's journaled packet ([`memchan_core::journal`], which `memchan-shm`'s
//! `order.rs` runs), the notify handshake ([`memchan_core::notify::Notify`]) against a
//! futex model, and the seed-000 cluster lock ([`memchan_core::bidlock`]) built on the
//! order point.
//!
//! Run with
//!
//! ```text
//! RUSTFLAGS="--cfg loom" cargo test -p memchan-core --test loom --release
//! ```
//!
//! (use a separate `CARGO_TARGET_DIR`, e.g. `target/loom`, so the `--cfg loom` build
//! does not evict the normal one). Each model has a default preemption bound (3 for the
//! two-thread models, 2 for the three-thread ones, 1 for the blocking lock; about 30 s
//! for the file in release on two cores, most of it the cluster lock) that `LOOM_MAX_PREEMPTIONS` overrides;
//! `scripts/slow-checks.sh` runs them all at 3 (about 2 min 30 s).
//!
//! These models found five real bugs, all fixed: a late `leave` by a holder declared
//! failed (now one CAS-only word), a stale take-over of a reused node id (the sequence
//! tags it), a half-applied packet after a death seen by timeout (read-modify-write
//! reads of the word and the journal), and an isolated bidder waiting forever.
//!
//! What runs as shipped: the order point (`order.rs`: `enter`, `leave`, `take_over`,
//! `load_latest`), the journal (`journal.rs`: the holder's `Journal::apply`, the
//! survivor's `recover` and `Journal::finish`; the dying holder of model 2 calls the
//! steps `begin`, `applied` and `end` itself, so that it can stop between them), the
//! notify handshake (`notify.rs`), all compiled over loom's atomics through
//! `memchan_core::sync`, and the lock's protocol (`bidlock.rs`: `acquire`,
//! `try_acquire`, `release`), driven through a lock page of loom atomics ([`BidPage`]),
//! and the membership event ring's seqlock (`event.rs`: [`EventSlot`]'s `write` and
//! `read`).
//! What is still re-stated here, in a few lines each keeping their memory orderings:
//! what `memchan-shm` supplies around them (the journal's record, reduced to one data
//! word; applying a packet at a destination, reduced to an apply log; the one-host
//! lock page, an ordered write as `lock.rs` does it); if those change, change the
//! models with them.
//!
//! Each model's doc comment says which broken variants it was checked to catch (by
//! breaking a scratch copy of the source and watching the model fail).

use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicU8, AtomicUsize, Ordering};
use loom::sync::{Arc, Condvar, Mutex};
use loom::thread;
use memchan_core::bidlock::{self, BidPage};
use memchan_core::event::EventSlot;
use memchan_core::journal::{self, IDLE};
use memchan_core::notify::{Futex, Notify};
use memchan_core::order::OrderPoint;
use memchan_core::{EventKind, MembershipEvent, NodeId};
use std::time::Duration;

use Ordering::{Acquire, Relaxed, Release, SeqCst};

/// Checks `model` under loom with the default preemption bound `bound` (unless
/// `LOOM_MAX_PREEMPTIONS` overrides it) and prints how many executions it explored.
fn check(name: &str, bound: usize, model: impl Fn() + Sync + Send + 'static) {
    check_capped(name, bound, usize::MAX, model)
}

/// [`check`] for a model whose executions multiply fast with the bound: an override by
/// `LOOM_MAX_PREEMPTIONS` is lowered to `cap`.
fn check_capped(name: &str, bound: usize, cap: usize, model: impl Fn() + Sync + Send + 'static) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(b.preemption_bound.unwrap_or(bound).min(cap));
    let runs = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counter = runs.clone();
    let start = std::time::Instant::now();
    b.check(move || {
        counter.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        model()
    });
    eprintln!(
        "{name}: {} executions, preemption bound {:?}, {:.1?}",
        runs.load(std::sync::atomic::Ordering::Relaxed),
        b.preemption_bound,
        start.elapsed()
    );
}

/// Spins a waiter may make in one wait before loom stops branching in that execution.
const SPIN_LIMIT: u32 = 3;

/// A waiter's idle step: `spin_hint` (loom's `yield_now`) with a bound on the
/// exploration. Under loom a yield makes the next scheduling choice free (no preemption
/// is charged), so two threads spinning behind a third can alternate forever and the
/// model never ends ("exceeded maximum number of branches"). A spin writes nothing; it
/// only waits for a value to change, so the states after a long wait are expected to
/// be reached by executions that wait less (a pruning heuristic, not a proof): once one
/// wait has spun `SPIN_LIMIT` times, loom finishes that execution on its default
/// schedule without branching further.
struct Spin(u32);

impl Spin {
    fn new() -> Self {
        Spin(0)
    }

    fn idle(&mut self) {
        self.0 += 1;
        if self.0 > SPIN_LIMIT {
            loom::skip_branch();
        }
        memchan_core::sync::spin_hint();
    }
}

// ---------------------------------------------------------------------------------
// Destinations and the order point
// ---------------------------------------------------------------------------------

/// Most packets any model sends.
const MAX_PACKETS: usize = 4;

/// One destination's receive memory, reduced to an apply log: `log[0..len]` are the
/// packet ids applied there, in apply order. Written only with Relaxed accesses, so
/// that every happens-before edge the model relies on must come from the order point
/// itself: a holder that does not see its predecessor's writes reads a stale `len` and
/// overwrites or skips a log entry.
struct DestLog {
    len: AtomicUsize,
    log: [AtomicU32; MAX_PACKETS],
}

impl DestLog {
    fn new() -> Self {
        DestLog {
            len: AtomicUsize::new(0),
            log: std::array::from_fn(|_| AtomicU32::new(0)),
        }
    }

    /// Applies packet `pkt`; returns its position in this destination's order.
    fn apply(&self, pkt: u32) -> usize {
        let i = self.len.load(Relaxed);
        assert!(i < MAX_PACKETS, "more packets applied than sent");
        self.log[i].store(pkt, Relaxed);
        self.len.store(i + 1, Relaxed);
        i
    }

    /// The log, read after every thread joined.
    fn snapshot(&self) -> Vec<u32> {
        let n = self.len.load(Relaxed);
        (0..n).map(|i| self.log[i].load(Relaxed)).collect()
    }
}

/// The journal of the packet in flight (`memchan-shm`'s `control::Journal`, its
/// record reduced to one data word), run by [`journal::Journal`].
struct Journal {
    state: AtomicU32,
    data: AtomicU32,
    progress: AtomicU32,
}

impl Journal {
    fn steps(&self) -> journal::Journal<'_> {
        journal::Journal::new(&self.state, &self.progress)
    }
}

/// A one-host cluster reduced to what ordered packets touch: the order point's word,
/// the journal, and two destinations (applied in node order).
struct Net {
    word: AtomicU64,
    journal: Journal,
    dests: [DestLog; 2],
}

impl Net {
    fn new() -> Self {
        Net {
            word: AtomicU64::new(0),
            journal: Journal {
                state: AtomicU32::new(IDLE),
                data: AtomicU32::new(0),
                progress: AtomicU32::new(0),
            },
            dests: [DestLog::new(), DestLog::new()],
        }
    }

    fn point(&self) -> OrderPoint<'_> {
        OrderPoint::new(&self.word)
    }

    /// `order.rs`'s `ordered_packet` from its journal on, as the holder:
    /// [`journal::Journal::apply`] with the packet id as the record and an apply at
    /// every destination in node order. Returns each destination's apply position.
    fn apply_journaled(&self, pkt: u32) -> [usize; 2] {
        let j = &self.journal;
        let mut pos = [0; 2];
        j.steps().apply(
            || j.data.store(pkt, Relaxed),
            self.dests.iter().zip(&mut pos),
            |(d, p)| *p = d.apply(pkt),
        );
        pos
    }

    /// `order.rs`'s `recover`: [`journal::recover`] from `dead` as `me`, confirmed
    /// when `dead` is declared failed (`failed`, read with `detect`), finishing the
    /// journaled packet at the destinations from `from` on. Returns whether it took
    /// the point over.
    fn recover(&self, dead: u32, me: u32, failed: &AtomicBool, detect: Ordering) -> bool {
        let j = &self.journal;
        let finish = |from: usize| {
            let data = j.data.load(Relaxed);
            for d in self.dests.iter().skip(from) {
                d.apply(data);
            }
        };
        match journal::recover(
            self.point(),
            j.steps(),
            dead,
            me,
            || failed.load(detect),
            finish,
        ) {
            None => false,
            Some(left) => {
                assert!(left, "the point was taken from a live survivor");
                true
            }
        }
    }
}

/// Sends one ordered packet `pkt` from node `me` to both destinations, as
/// `order.rs`'s `ordered_packet` does; returns the order index `enter` gave it, after
/// checking that it is the packet's apply position at both destinations.
fn send(net: &Net, me: u32, pkt: u32) -> u64 {
    let op = net.point();
    let mut spin = Spin::new();
    let turn = op.enter(me, |_holder| spin.idle());
    let pos = net.apply_journaled(pkt);
    assert_eq!(
        pos, [turn as usize; 2],
        "order index is not the apply position"
    );
    assert!(op.leave(me), "nobody declared node {me} failed");
    turn
}

/// Packet id of sender `s`'s `k`-th packet.
fn pkt_id(s: u32, k: u32) -> u32 {
    (s + 1) * 16 + k
}

/// Runs `senders` threads sending `per_sender` ordered packets each, and checks ordering
/// rules 1 and 2 and the order point's bookkeeping.
fn multisender(senders: u32, per_sender: u32) {
    let net = Arc::new(Net::new());
    let handles: Vec<_> = (0..senders)
        .map(|s| {
            let net = net.clone();
            thread::spawn(move || {
                (0..per_sender)
                    .map(|k| send(&net, s, pkt_id(s, k)))
                    .collect::<Vec<u64>>()
            })
        })
        .collect();
    let turns: Vec<Vec<u64>> = handles.into_iter().map(|h| h.join().unwrap()).collect();

    let total = (senders * per_sender) as usize;
    let d0 = net.dests[0].snapshot();
    let d1 = net.dests[1].snapshot();
    // Every packet applied once at each destination ...
    assert_eq!(d0.len(), total, "dest 0 log {d0:?}");
    assert_eq!(d1.len(), total, "dest 1 log {d1:?}");
    // ... and in one order everywhere (rule 2).
    assert_eq!(d0, d1, "destinations disagree on the order");
    for s in 0..senders {
        // Each sender's packets in the order sent (rule 1).
        let mine: Vec<u32> = d0.iter().copied().filter(|p| p / 16 == s + 1).collect();
        let sent: Vec<u32> = (0..per_sender).map(|k| pkt_id(s, k)).collect();
        assert_eq!(mine, sent, "sender {s}'s packets out of send order");
        // The order index `enter` returned is the packet's place in the order.
        for (k, &t) in turns[s as usize].iter().enumerate() {
            assert_eq!(
                d0[t as usize],
                pkt_id(s, k as u32),
                "turn {t} of sender {s}"
            );
        }
    }
    let mut all: Vec<u64> = turns.concat();
    all.sort_unstable();
    assert_eq!(
        all,
        (0..total as u64).collect::<Vec<_>>(),
        "order indices not unique"
    );
    let op = net.point();
    assert_eq!(op.completed(), total as u64);
    assert_eq!(op.holder(), None);
}

/// Model 1a, the multisender rule: two senders, two ordered packets each, to two
/// destinations, each packet applied at both under the order point.
///
/// Checks: both destinations apply the four packets in one order (rule 2), each
/// sender's in send order (rule 1); each `enter` returns a unique index equal to the
/// packet's apply position; `completed()` is 4 and the point ends free.
///
/// Verified to fail (1a and 1b) on a scratch copy of `order.rs` where: `leave` frees
/// the point without advancing the sequence (the next holder's `enter` returns a
/// stale index: "order index is not the apply position"); `try_enter`'s CAS is
/// Relaxed instead of Acquire, or `leave`'s is Relaxed instead of Release (the next
/// holder reads a stale apply log and overwrites its predecessor's entry); `try_enter`
/// is a load-then-store instead of a CAS (two holders at once; the loser's `leave`
/// finds the point not its own).
#[test]
fn order_point_two_senders_two_packets() {
    check("order_point_two_senders_two_packets", 3, || {
        multisender(2, 2)
    });
}

/// Model 1b, the multisender rule with three senders of one packet each (three-way
/// contention on the order point; same checks and same broken variants as 1a).
#[test]
fn order_point_three_senders() {
    check("order_point_three_senders", 2, || multisender(3, 1));
}

// ---------------------------------------------------------------------------------
// Take-over of a dead holder
// ---------------------------------------------------------------------------------

/// Where the holder of model 2 dies, in `ordered_packet`'s sequence of steps.
#[derive(Clone, Copy, Debug, PartialEq, PartialOrd)]
enum DiesAfter {
    /// Entered the point, journal not yet marked APPLYING.
    Enter,
    /// Journal APPLYING, `progress` 0, nothing applied.
    Journal,
    /// Applied at destination 0, `progress` 1 (the half-applied packet).
    Dest0,
    /// Applied at both destinations, `progress` 2, journal still APPLYING.
    Dest1,
    /// Journal back to IDLE, about to leave.
    Idle,
}

const DEAD: u32 = 0;
const SURVIVOR: u32 = 1;
const SENDER: u32 = 2;
const DEAD_PKT: u32 = 0xD0;
const SENDER_PKT: u32 = 0x5E;

/// Model 2 body: node 0 enters the point and sends `DEAD_PKT`, dying at `dies`
/// (it never leaves; its exit sets `failed`, the way the cluster service learns of a
/// death, with Release so that the survivor sees what the dead process wrote). Node 1
/// is the cluster service's `declare_failed`: it waits for `failed` and recovers the
/// point. Node 2 sends `SENDER_PKT` concurrently through `Order::enter`, whose idle
/// callback also recovers the point from a failed holder (so two survivors race for
/// the take-over).
fn take_over_model(dies: DiesAfter) {
    take_over_model_with(dies, Acquire)
}

/// [`take_over_model`] with `failed` set with Release and read with `detect` when that
/// is Acquire, both Relaxed when it is Relaxed.
fn take_over_model_with(dies: DiesAfter, detect: Ordering) {
    let set = if detect == Relaxed { Relaxed } else { Release };
    let net = Arc::new(Net::new());
    let failed = Arc::new(AtomicBool::new(false));

    let dead = {
        let (net, failed) = (net.clone(), failed.clone());
        thread::spawn(move || {
            let op = net.point();
            let mut spin = Spin::new();
            op.enter(DEAD, |_| spin.idle());
            // `Journal::apply`'s steps, stopping at `dies`.
            let j = &net.journal;
            if dies > DiesAfter::Enter {
                j.steps().begin(|| j.data.store(DEAD_PKT, Relaxed));
            }
            for (i, d) in net.dests.iter().enumerate() {
                let step = [DiesAfter::Dest0, DiesAfter::Dest1][i];
                if dies >= step {
                    d.apply(DEAD_PKT);
                    j.steps().applied(i);
                }
            }
            if dies >= DiesAfter::Idle {
                j.steps().end();
            }
            // Dies holding the point.
            failed.store(true, set);
        })
    };
    let survivor = {
        let (net, failed) = (net.clone(), failed.clone());
        thread::spawn(move || {
            let mut spin = Spin::new();
            while !failed.load(detect) {
                spin.idle();
            }
            net.recover(DEAD, SURVIVOR, &failed, detect);
        })
    };
    let sender = {
        let (net, failed) = (net.clone(), failed.clone());
        thread::spawn(move || {
            let op = net.point();
            let mut spin = Spin::new();
            let turn = op.enter(SENDER, |holder| {
                if holder == DEAD && failed.load(detect) {
                    net.recover(DEAD, SENDER, &failed, detect);
                } else {
                    spin.idle();
                }
            });
            let pos = net.apply_journaled(SENDER_PKT);
            // Same place at both; the dead holder's turn counts even when it died
            // before journaling (then nothing of it was applied).
            assert_eq!(pos[0], pos[1]);
            assert!(turn as usize >= pos[0]);
            assert!(op.leave(SENDER));
        })
    };
    dead.join().unwrap();
    survivor.join().unwrap();
    sender.join().unwrap();

    let d0 = net.dests[0].snapshot();
    let d1 = net.dests[1].snapshot();
    let count = |log: &[u32], p| log.iter().filter(|&&x| x == p).count();
    // All or nothing, and exactly once if it was journaled before the death.
    let expect_dead = usize::from(dies > DiesAfter::Enter);
    assert_eq!(count(&d0, DEAD_PKT), expect_dead, "dest 0 {d0:?}");
    assert_eq!(count(&d1, DEAD_PKT), expect_dead, "dest 1 {d1:?}");
    assert_eq!(count(&d0, SENDER_PKT), 1, "dest 0 {d0:?}");
    assert_eq!(count(&d1, SENDER_PKT), 1, "dest 1 {d1:?}");
    // The dead holder's packet and the sender's in the same order at both.
    assert_eq!(d0, d1, "destinations disagree on the order");
    let op = net.point();
    // The dead holder's turn was completed by its survivor.
    assert_eq!(op.completed(), 2);
    assert_eq!(op.holder(), None);
    assert_eq!(net.journal.state.load(Relaxed), IDLE);
}

/// Model 2, take-over: the holder dies with its packet applied at destination 0 only
/// (`progress` 1); a survivor takes the point over and rolls the packet forward; a
/// third node sends concurrently and may itself do the take-over.
///
/// Checks: the dead holder's packet is applied exactly once at each destination, the
/// third sender's too, in the same relative order at both; `completed()` counts both
/// and the point and journal end free.
///
/// Verified to fail (this and the other death points) when: the survivor rolls
/// forward from 0 instead of `progress` (applied twice at destination 0); the
/// survivor skips the roll-forward (destination 1 never gets it); `take_over` in
/// `order.rs` is an unconditional swap instead of a CAS (both survivors take over and
/// leave: `completed()` 3); the survivor does not `leave` (the sender spins forever:
/// loom's branch limit); and on every broken `order.rs` of model 1. (The three
/// survivor bugs re-checked on a scratch copy of `journal.rs`, in `Journal::finish`
/// and `journal::recover`, once the models drove them.)
#[test]
fn take_over_half_applied() {
    check("take_over_half_applied", 2, || {
        take_over_model(DiesAfter::Dest0)
    });
}

/// Model 2 at the other death points: before the journal is marked (nothing is
/// applied anywhere), after it is marked but before any apply, after the last apply,
/// and after the journal went idle but before `leave` (`completed` must still count it
/// exactly once).
#[test]
fn take_over_other_death_points() {
    for dies in [
        DiesAfter::Enter,
        DiesAfter::Journal,
        DiesAfter::Dest1,
        DiesAfter::Idle,
    ] {
        check(&format!("take_over {dies:?}"), 2, move || {
            take_over_model(dies)
        });
    }
}

/// Model 2 with a death detected without a happens-before edge: the cluster service
/// declares a node failed on a heartbeat timeout (`service.rs::tick`, `silent`), which
/// synchronizes with nothing the holder wrote. Here `failed` is set and read Relaxed,
/// so only the survivor's read-modify-writes of `journal.state` and `journal.progress`
/// (`fetch_add(0, AcqRel)` in `Journal::finish`) make it see the holder's
/// journal: they read the latest value and synchronize with the holder's Release
/// stores. Without them (plain Acquire loads) the survivor may read the journal IDLE,
/// or an old `progress`, and leave the packet half-applied.
///
/// The order word itself is read the same way (`OrderPoint::load_latest`): with a plain
/// load the survivor may see the word from before the holder's entry, find no holder,
/// and leave the packet half-applied (loom found exactly that).
///
/// Run at two death points: half-applied (`Dest0`), and journaled with nothing applied
/// (`Journal`), where only `begin`'s Release store of APPLYING publishes the record.
/// Verified to fail, on a scratch copy of `journal.rs`, when: `finish` reads `state`
/// and `progress` with plain Acquire loads; `applied` stores `progress` Relaxed (both
/// at `Dest0`); `begin` stores APPLYING Relaxed (at `Journal`: the survivor reads a
/// stale record and applies the wrong packet).
#[test]
fn take_over_detected_by_timeout() {
    for dies in [DiesAfter::Dest0, DiesAfter::Journal] {
        check(
            &format!("take_over_detected_by_timeout {dies:?}"),
            2,
            move || take_over_model_with(dies, Relaxed),
        );
    }
}

/// Model 2 with a holder that is declared failed while alive (hung past the heartbeat
/// timeout) and then resumes and calls `leave`, with nothing to apply (the journal
/// stays IDLE), so only the order word is at stake. The survivor loads the word before
/// it reads `failed` and takes over only from that word.
///
/// Checks: the two packets that completed got distinct order indices and
/// `completed()` ends 2 with the point free: the resumed holder's `leave` either runs
/// before the take-over (which then misses: the word changed) or fails after it,
/// never advancing the sequence behind the survivor's back.
///
/// Catches: owner and sequence in two words, `leave` reading the owner, then storing
/// `seq + 1`, then freeing the owner (a survivor's take-over and leave and a third
/// node's whole packet can run between the read and the store, which then goes back
/// over theirs: `completed()` 1, a repeated order index).
#[test]
fn take_over_zombie_leave() {
    check("take_over_zombie_leave", 2, || {
        let net = Arc::new(Net::new());
        let failed = Arc::new(AtomicBool::new(false));
        let zombie = {
            let (net, failed) = (net.clone(), failed.clone());
            thread::spawn(move || {
                let op = net.point();
                let mut spin = Spin::new();
                let turn = op.enter(DEAD, |_| spin.idle());
                failed.store(true, Release); // declared failed, but not dead
                op.leave(DEAD);
                turn
            })
        };
        let survivor = {
            let (net, failed) = (net.clone(), failed.clone());
            thread::spawn(move || {
                let mut spin = Spin::new();
                while !failed.load(Acquire) {
                    spin.idle();
                }
                net.recover(DEAD, SURVIVOR, &failed, Acquire);
            })
        };
        let op = net.point();
        let mut spin = Spin::new();
        let turn = op.enter(SENDER, |_| spin.idle());
        net.apply_journaled(SENDER_PKT);
        assert!(op.leave(SENDER));
        let zturn = zombie.join().unwrap();
        survivor.join().unwrap();
        assert_ne!(turn, zturn, "two packets got the same order index");
        assert_eq!(net.point().completed(), 2);
        assert_eq!(net.point().holder(), None);
    });
}

// ---------------------------------------------------------------------------------
// Notify
// ---------------------------------------------------------------------------------

/// The kernel futex, modelled: `wait` re-checks `word == expected` under the bucket lock
/// and sleeps atomically with that check; `wake` takes the bucket lock and wakes every
/// sleeper. No timeouts and no spurious wakeups, so a lost wakeup is a deadlock that
/// loom reports.
struct ModelFutex {
    bucket: Mutex<()>,
    sleepers: Condvar,
}

impl ModelFutex {
    fn new() -> Self {
        ModelFutex {
            bucket: Mutex::new(()),
            sleepers: Condvar::new(),
        }
    }
}

impl Futex for ModelFutex {
    fn wait(&self, word: &AtomicU32, expected: u32, timeout: Option<Duration>) {
        assert!(timeout.is_none(), "the model has no timeouts");
        let guard = self.bucket.lock().unwrap();
        if word.load(SeqCst) == expected {
            drop(self.sleepers.wait(guard).unwrap());
        }
    }

    fn wake(&self, _word: &AtomicU32) {
        let _guard = self.bucket.lock().unwrap();
        self.sleepers.notify_all();
    }
}

/// Model 3 body: one writer posts `posts` times on the crate's [`Notify`]; one reader
/// waits (no timeout) until it has seen them all, starting from the initial count.
fn notify_model(posts: u32) {
    let words = Arc::new((AtomicU32::new(0), AtomicU32::new(0)));
    let futex = Arc::new(ModelFutex::new());
    let writer = {
        let (words, futex) = (words.clone(), futex.clone());
        thread::spawn(move || {
            let n = Notify::new(&words.0, &words.1);
            for _ in 0..posts {
                n.post(&*futex);
            }
        })
    };
    let n = Notify::new(&words.0, &words.1);
    let mut seen = 0;
    let mut waits = 0;
    while seen < posts {
        let now = n.wait(seen, None, &*futex).expect("no timeout");
        assert!(now > seen && now <= posts, "saw {now} after {seen}");
        seen = now;
        waits += 1;
    }
    assert!(waits <= posts);
    writer.join().unwrap();
    let (seq, waiters) = &*words;
    assert_eq!(seq.load(Relaxed), posts);
    assert_eq!(waiters.load(Relaxed), 0, "a waiter stayed registered");
}

/// Model 3a, notify without lost wakeups: one post, one reader blocked from the initial
/// count. A lost wakeup leaves the reader asleep forever, which loom reports as a
/// deadlock.
///
/// Loom models SeqCst *accesses* as AcqRel (loom README, "Unsupported features") but
/// SeqCst fences exactly, which is why `notify.rs` fences its store-then-load pairs:
/// without the fences loom explores the store-buffering outcome (the writer reads
/// `waiters` 0 and the reader reads the old `seq`) and reports a lost wakeup.
///
/// Verified to fail (3a and 3b, deadlock) when: `wait` does not register in `waiters`
/// (the writer sees no sleeper and does not wake); `post` reads `waiters` before
/// bumping `seq`; either side's fence is dropped (the loom-visible form of weakening
/// that side's SeqCst to AcqRel); the futex model's `wait` sleeps without re-checking
/// the word.
#[test]
fn notify_one_post() {
    check("notify_one_post", 3, || notify_model(1));
}

/// Model 3b: two posts, the reader waiting twice (or once, if both posts land before it
/// looks): same checks as 3a, plus `waiters` returning to zero.
#[test]
fn notify_two_posts() {
    check("notify_two_posts", 3, || notify_model(2));
}

// ---------------------------------------------------------------------------------
// Cluster lock over the order point
// ---------------------------------------------------------------------------------

/// Two nodes' local copies of a lock page (`copies[n][slot]`) under one order point,
/// plus the critical section's shared state.
struct LockNet {
    order: AtomicU64,
    copies: [[AtomicU8; 2]; 2],
    /// Holders inside the critical section right now.
    holders: AtomicU32,
    /// Incremented only by a holder, non-atomically: loom reports a data race if two
    /// holders' critical sections are not ordered by happens-before.
    counter: UnsafeCell<u32>,
}

/// Bidding attempts per node in the bounded model (loom needs bounded loops).
const LOCK_ATTEMPTS: u32 = 2;

impl LockNet {
    fn new() -> Self {
        LockNet {
            order: AtomicU64::new(0),
            copies: std::array::from_fn(|_| std::array::from_fn(|_| AtomicU8::new(0))),
            holders: AtomicU32::new(0),
            counter: UnsafeCell::new(0),
        }
    }

    /// The critical section: one holder at a time, each ordered after the last.
    fn critical_section(&self) {
        let inside = self.holders.fetch_add(1, Relaxed);
        assert_eq!(inside, 0, "two holders of the cluster lock");
        // SAFETY: loom's `UnsafeCell` checks this access: it reports a causality
        // violation unless every other holder's access happens-before this one.
        self.counter.with_mut(|c| unsafe { *c += 1 });
        self.holders.fetch_sub(1, Relaxed);
    }

    /// Checks after every thread joined: the counter equals the wins, every slot is 0.
    fn check_end(&self, wins: u32) {
        // SAFETY: every thread has joined; loom checks the access.
        assert_eq!(self.counter.with(|c| unsafe { *c }), wins);
        for copy in &self.copies {
            for slot in copy {
                assert_eq!(slot.load(Relaxed), 0, "a slot left set");
            }
        }
    }
}

/// Node `me`'s lock page over [`LockNet`], as `memchan-shm`'s `lock.rs` places it on
/// one host: the [`bidlock`] protocol runs unchanged on top of it.
///
/// `bid` is `tx.write_u8(slot, v)` on the broadcast + local copy mapping: an ordered
/// packet applied (Release store) at every node's copy in node order, under the real
/// [`OrderPoint`]; then it waits until its own copy shows `v` (at once on one host,
/// where the sender applies its own copy under the point). `others_bid` reads the
/// other slot of its own copy (Acquire loads). Holding off and backing off are idle
/// steps whose exploration [`Spin`] bounds (one budget for the whole page: a node
/// that keeps colliding stops branching after `SPIN_LIMIT` idle steps in all).
struct ModelPage<'a> {
    net: &'a LockNet,
    me: u32,
    spin: std::cell::RefCell<Spin>,
}

impl<'a> ModelPage<'a> {
    fn new(net: &'a LockNet, me: u32) -> Self {
        ModelPage {
            net,
            me,
            spin: std::cell::RefCell::new(Spin::new()),
        }
    }

    fn ordered_write(&self, v: u8) {
        let op = OrderPoint::new(&self.net.order);
        let mut spin = Spin::new();
        op.enter(self.me, |_| spin.idle());
        for copy in &self.net.copies {
            copy[self.me as usize].store(v, Release);
        }
        assert!(op.leave(self.me));
    }
}

impl BidPage for ModelPage<'_> {
    fn others_bid(&self) -> memchan_core::Result<bool> {
        let mine = &self.net.copies[self.me as usize];
        Ok((0..2).any(|slot| slot != self.me as usize && mine[slot].load(Acquire) != 0))
    }

    fn bid(&self, v: u8) -> memchan_core::Result<()> {
        self.ordered_write(v);
        let own = &self.net.copies[self.me as usize][self.me as usize];
        let mut spin = Spin::new();
        while own.load(Acquire) != v {
            spin.idle();
        }
        Ok(())
    }

    fn hold_off(&self, _waits: u32, _attempt: u32) -> memchan_core::Result<()> {
        self.spin.borrow_mut().idle();
        Ok(())
    }

    fn back_off(&self, _attempt: u32) {
        self.spin.borrow_mut().idle();
    }
}

/// Node `me`, bounded: up to `LOCK_ATTEMPTS` calls of [`bidlock::try_acquire`], backing
/// off after each one that fails; on a win it runs the critical section and calls
/// [`bidlock::release`]. Returns whether it won.
fn try_acquire_cs_release(net: &LockNet, me: u32) -> bool {
    let page = ModelPage::new(net, me);
    for attempt in 1..=LOCK_ATTEMPTS {
        if bidlock::try_acquire(&page).unwrap() {
            net.critical_section();
            bidlock::release(&page).unwrap();
            return true;
        }
        page.back_off(attempt);
    }
    false
}

/// Node `me`: [`bidlock::acquire`] (which bids until it wins), the critical section,
/// [`bidlock::release`].
fn acquire_cs_release(net: &LockNet, me: u32) {
    let page = ModelPage::new(net, me);
    bidlock::acquire(&page).unwrap();
    net.critical_section();
    bidlock::release(&page).unwrap();
}

/// Model 4a, the seed-000 cluster lock ([`bidlock`], the code both transports run) over
/// the order point: two nodes call `try_acquire` (bid: ordered write of 1 into their
/// slot of both nodes' copies, then check their own copy for other bids, withdrawing
/// with an ordered write of 0 on a collision) up to two times each, and the winner
/// runs the critical section and calls `release`.
///
/// Checks: at most one holder at a time (an atomic holder count, and loom's race
/// detection on the non-atomic counter, which also demands that each critical section
/// happens-before the next); the counter equals the number of wins; every slot ends 0.
///
/// Verified to fail (loom: "Causality violation: Concurrent write accesses to
/// `UnsafeCell`") when: bids bypass the order point (each node stores its bid at both
/// copies and reads the other's slot as 0: store buffering, two holders); a bidder
/// checks for other bids before placing its own; `try_enter`'s CAS is Relaxed or
/// `leave`'s is Relaxed (critical sections not ordered by happens-before); `try_enter`
/// is a load-then-store. (Checked on the re-stated steps this model used before it
/// drove `bidlock`; re-checked on a scratch copy of `bidlock.rs`: `try_once` checking
/// for other bids before placing its own fails as above, and a colliding bid that is
/// not withdrawn fails "a slot left set".)
#[test]
fn cluster_lock_mutual_exclusion() {
    check("cluster_lock", 3, || {
        let net = Arc::new(LockNet::new());
        let other = {
            let net = net.clone();
            thread::spawn(move || try_acquire_cs_release(&net, 1))
        };
        let won0 = try_acquire_cs_release(&net, 0);
        let won1 = other.join().unwrap();
        net.check_end(u32::from(won0) + u32::from(won1));
    });
}

/// Model 4b, the blocking `bidlock::acquire`: two nodes each acquire (holding off while
/// the other bids or holds, withdrawing and backing off on a collision, until they
/// win), run the critical section and release.
///
/// Checks: as 4a, and both nodes win (the counter is 2): `acquire` neither returns
/// without the lock nor leaves a slot set. Exploration past `SPIN_LIMIT` idle steps
/// per node is pruned (see [`Spin`]), so this bounds the schedules explored, not how
/// long `acquire` may take.
///
/// Preemption bound 1 by default (about 4,000 executions, a fraction of a second);
/// `LOOM_MAX_PREEMPTIONS` raises it to at most 2 (about 365,000, some 16 s on two
/// cores; 3 is far longer).
///
/// Verified to fail at bound 1 when, in a scratch copy of `bidlock.rs`: `try_once`
/// checks for other bids before placing its own (loom: causality violation on the
/// counter, two holders); a colliding bid is not withdrawn (loom: the model exceeds
/// its branches, both nodes waiting for ever, and 4a finds the slot left set).
#[test]
fn cluster_lock_blocking_acquire() {
    check_capped("cluster_lock_blocking_acquire", 1, 2, || {
        let net = Arc::new(LockNet::new());
        let other = {
            let net = net.clone();
            thread::spawn(move || acquire_cs_release(&net, 1))
        };
        acquire_cs_release(&net, 0);
        other.join().unwrap();
        net.check_end(2);
    });
}

// ---------------------------------------------------------------------------------
// Membership event ring slot (seqlock)
// ---------------------------------------------------------------------------------

/// Event number `i` as the model writes it: every field derived from `i`, so a read
/// that mixes two events' fields is told apart from either.
fn model_event(i: u64) -> MembershipEvent {
    MembershipEvent {
        epoch: 10 + i,
        node: NodeId(i as u16),
        incarnation: 100 + i,
        kind: [EventKind::Joined, EventKind::Left][i as usize % 2],
    }
}

/// Model 5, the event ring's seqlock ([`EventSlot`], as `memchan-shm` writes and reads
/// its ring): one writer stores events 0 and then 1 into the same slot (event 1
/// overwrites event 0, as event `i + EVENTS` overwrites `i` in the ring); one reader
/// reads event 0 and then event 1.
///
/// Checks: whatever the reader gets is a miss or exactly the event it asked for, never
/// a mix of the two events' fields; after the writer is done, event 1 reads whole.
///
/// Verified to fail (a torn event returned) when, in a scratch copy of `event.rs`: the
/// writer's Release fence after marking the slot is dropped; the reader's Acquire fence
/// before re-checking `seq` is dropped; the reader does not re-check `seq`.
#[test]
fn event_slot_is_never_torn() {
    check("event_slot_is_never_torn", 3, || {
        let slot = Arc::new(EventSlot::default());
        let writer = {
            let slot = slot.clone();
            thread::spawn(move || {
                slot.write(0, &model_event(0));
                slot.write(1, &model_event(1));
            })
        };
        for i in 0..2 {
            if let Ok(e) = slot.read(i) {
                assert_eq!(e, model_event(i), "torn event {i}");
            }
        }
        writer.join().unwrap();
        assert_eq!(slot.read(1), Ok(model_event(1)));
        assert!(slot.read(0).is_err());
    });
}
