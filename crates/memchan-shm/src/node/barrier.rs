//! The barrier over the cluster or a group, placed on the control block: each node's
//! word per scope (`NodeSlot::barrier`), the duo line for two nodes, the thread's
//! cached round plan, and how a waiter spins, yields or sleeps on its notify pair
//! (crowded hosts, hogged cores), bounded by the stall guard. What the words mean,
//! who waits for whom and the round plan are `memchan_core::barrier`'s.

use super::*;
use memchan_core::barrier::Round;
use memchan_core::idle::BARRIER;

impl Inner {
    /// Barrier over the live members of `scope` (0 = cluster, 1 + g = group g).
    ///
    /// A dissemination barrier (`memchan_core::barrier`): O(log n) rounds in which
    /// each node writes only its own word and waits on one peer's. The ranks are the
    /// scope's members in the members bitmap when the node arrives. What a round
    /// cannot trust (`bar::round`), a peer no longer alive, a members bitmap that
    /// changed, or a wait that went to sleep, all fall back to the check that is
    /// always sufficient: every current member of the scope has arrived. So
    /// membership changes cost speed, never correctness, and a failed node cannot
    /// hang it.
    ///
    /// Bounded: members that neither arrive nor fail (a live process that never calls
    /// the barrier, or a slot no process stands behind that no service thread could
    /// prove empty) hold it up for at most [`Local::stall_bound`] (25 failure
    /// timeouts, at least 1 s) after the last progress (a member arriving, joining or
    /// leaving the scope, or a missing member's application threads using CPU), with
    /// arrivals extending it to at most [`STALL_CAP`] bounds in all; it then fails with
    /// `Error::Stalled` naming them. This node's arrival stays counted: a
    /// late member passes this barrier at once, and the next one lines up again.
    pub(crate) fn barrier(&self, scope: usize, group: Option<NodeSet>) -> Result<()> {
        self.local.check_alive()?;
        let c = self.local.ctl();
        let me = self.local.me;
        let last = self.bar_last[scope].load(Ordering::Relaxed);
        let t = bar::next(bar::word::number(last));
        // Wakes owed to peers asleep on our words, settled before any wait of ours
        // sleeps and when this barrier ends, on every path (`Drop`).
        let mut owed = Owed::new(&c.nodes[me.index()]);
        // The arrival goes out first, with the last barrier's tag: the word after
        // which a 2-node barrier's peer passes is then on its way before the members
        // are read and the plan looked up, not after (~10 ns of the ~20 a barrier's
        // own work takes). It claims only that this node reached `t`, true whatever
        // rank set the plan takes; a peer that took another set sees another tag and
        // falls back, and the word goes out again below if the plan's tag differs.
        // Release: every earlier write of this node is visible to whoever sees the
        // arrival (on one host each write is applied when it returns).
        let early = bar::word::rounds(last) == 1;
        let duo_last = self.duo_last[scope].load(Ordering::Relaxed);
        if early {
            if let Some(peer) = duo_last.checked_sub(1) {
                duo_publish(c, scope, me, peer as usize, t, bar::word::tag(last));
            }
            owed.publish(scope, bar::word::arrival(t, bar::word::tag(last)));
        }
        let bitmap = load_set(&c.header.members);
        // `bar::scope`, written out: its by-value set costs a copy through the stack
        // here, before the plan's lookup.
        let mut ranks = match group {
            Some(g) => bitmap.intersect(&g),
            None => bitmap,
        };
        ranks.insert(me);
        let plan = Cached::head(me, &bitmap, &ranks);
        let tag = u64::from(plan.tag);
        let mut stall = Stall::new();
        if plan.crowd && yield_ok() {
            // More nodes than cores: a round costs a context switch, not a cache-line
            // transfer, so every node waits for all arrivals at once, yielding (`FLAT`
            // tells a peer that took the dissemination that none of its rounds will
            // follow). Beside a task that does not yield (`HOGGED`) the dissemination's
            // sleeps do better than one sleep per missing member.
            self.bar_last[scope].store(bar::word::pack(t, tag, 0), Ordering::Relaxed);
            owed.publish(scope, bar::word::pack(t, tag, bar::word::FLAT));
            return self.wait_all_arrived(scope, group, t, &mut stall, &mut owed);
        }
        let arrival = bar::word::arrival(t, tag);
        self.bar_last[scope].store(arrival, Ordering::Relaxed);
        let rounds = u32::from(plan.rounds);
        // Two nodes: their arrivals meet on one line as well (`DuoLine`).
        let duo = if rounds == 1 { Cached::src(0) } else { None };
        let duo_now = duo.map_or(0, |p| p.index() as u32 + 1);
        self.duo_last[scope].store(duo_now, Ordering::Relaxed);
        if !early || bar::word::tag(last) != tag || duo_last != duo_now {
            if let Some(peer) = duo {
                duo_publish(c, scope, me, peer.index(), t, tag);
            }
            owed.publish(scope, arrival);
        }
        for k in 0..rounds {
            // Always there: `head` just cached this thread's plan.
            let Some(src) = Cached::src(k) else {
                self.wait_all_arrived(scope, group, t, &mut stall, &mut owed)?;
                break;
            };
            let want = RoundWait {
                src,
                scope,
                t,
                tag,
                need: u64::from(k) + 1,
                bitmap,
                duo: duo.map(|p| &c.duos[scope].0[duo::slot(p.index(), me.index())]),
            };
            match self.wait_round(&want, group, &mut stall, &mut owed)? {
                Round::Done => {
                    // The last round's word is waited on by nobody.
                    if k + 1 < rounds {
                        owed.publish(scope, bar::word::after_round(t, tag, k));
                    }
                }
                Round::AllArrived => break,
                Round::Fallback => {
                    self.wait_all_arrived(scope, group, t, &mut stall, &mut owed)?;
                    break;
                }
            }
        }
        Ok(())
    }

    /// One dissemination round: waits for `want.src` to have done round `need - 1`.
    pub(super) fn wait_round(
        &self,
        want: &RoundWait<'_>,
        group: Option<NodeSet>,
        stall: &mut Stall,
        owed: &mut Owed,
    ) -> Result<Round> {
        let c = self.local.ctl();
        let s = &c.nodes[want.src.index()];
        let word = &s.barrier[want.scope];
        // Some(done) once the source's word decides the round, None while it is behind.
        let look = || bar::round(word.load(Ordering::Acquire), want.t, want.tag, want.need);
        // The peer is gone or being declared failed, or the membership changed.
        let changed = || {
            s.state.load(Ordering::Acquire) != node_state::ALIVE
                || load_set(&c.header.members) != want.bitmap
        };
        // A 2-node barrier spins on the peer's word on the shared line (`DuoLine`); it
        // shows only an arrival, and the peer's own word is looked at before a sleep.
        let quick = || match want.duo {
            Some(d) => duo::arrived(
                d.load(Ordering::Acquire),
                want.src.index(),
                want.tag,
                want.t,
            )
            .then_some(Round::Done),
            None => look(),
        };
        let mut spins = 0u32;
        loop {
            if let Some(done) = quick() {
                return Ok(done);
            }
            spins = spins.saturating_add(1);
            if spins.is_multiple_of(64) {
                self.local.check_alive()?;
                if changed() {
                    return Ok(Round::Fallback);
                }
            }
            if spins < SPINS {
                // A pause between looks: on this VM's cores (AMD EPYC) the 2-node
                // barrier took 68-72 ns without one, 48-63 with (alternating
                // windows; the loop's speculative loads are thrown away when the
                // line moves).
                std::hint::spin_loop();
                continue;
            }
            // Asleep or about to be: the all-arrived check is due (it is what ends a
            // barrier whose ranks disagree), and so is the stall bound.
            let missing = self.missing(want.scope, group, want.t);
            if missing.is_empty() {
                return Ok(Round::AllArrived);
            }
            stall.check(&self.local, missing, |m| self.cpu_of(m))?;
            owed.settle();
            let seen = s.bar_seq.load(Ordering::SeqCst);
            s.bar_waiters.fetch_add(1, Ordering::SeqCst);
            crate::asym::heavy();
            let now = look();
            if now.is_none() {
                // The timeout bounds how late a membership change, or a word whose
                // wake-up another member swallowed (a forged waiter count), is noticed.
                SharedFutex.wait(&s.bar_seq, seen, Some(SLEEP));
            }
            s.bar_waiters.fetch_sub(1, Ordering::SeqCst);
            if let Some(done) = now {
                return Ok(done);
            }
            if changed() {
                return Ok(Round::Fallback);
            }
        }
    }

    /// Waits until every current member of the scope has arrived at `t`: the
    /// dissemination's fallback, and the whole wait of a crowded host (more members
    /// than online cores, see [`crowded`]).
    ///
    /// Arrival within a barrier only grows, so after one full look
    /// ([`missing`](Self::missing)) only the members still missing are looked at
    /// again, and dropped once they arrive, fail or leave (a joiner starts level, so it
    /// is never missing from a barrier under way). While nodes arrive, a crowded host
    /// waits by `sched_yield`, for at most [`YIELD_FOR`] since the last arrival: a
    /// spinning waiter would take the core from the nodes it waits for, and a sleeper
    /// costs its waker a futex wake and a context switch per arrival it waits on
    /// (64 nodes on 2 cores: ~85 us per barrier yielding, ~0.9 ms sleeping). Not while
    /// a task that does not yield shares the cores ([`HOGGED`]): each yield would
    /// hand it a time slice (beside two busy loops: ~12 ms yielding, ~2 ms sleeping).
    /// Otherwise it spins [`SPINS`] times. Then it sleeps on the first missing
    /// member's notify pair, whose arrival wakes it.
    pub(super) fn wait_all_arrived(
        &self,
        scope: usize,
        group: Option<NodeSet>,
        t: u64,
        stall: &mut Stall,
        owed: &mut Owed,
    ) -> Result<()> {
        let c = self.local.ctl();
        let crowd = crowded(load_set(&c.header.members).len());
        let mut missing = self.missing(scope, group, t);
        let mut spins = 0u32;
        // The last change in who is missing: the yield phase runs from there.
        let mut moved: Option<Instant> = None;
        let mut hogs = 0u32;
        loop {
            let before = missing;
            let bitmap = load_set(&c.header.members);
            for n in before.iter() {
                let s = &c.nodes[n.index()];
                let w = s.barrier[scope].load(Ordering::Acquire);
                if bar::reached(bar::word::number(w), t)
                    || s.state.load(Ordering::Acquire) != node_state::ALIVE
                    || !bitmap.contains(n)
                {
                    missing.remove(n);
                }
            }
            let Some(first) = missing.iter().next() else {
                return Ok(());
            };
            spins = spins.saturating_add(1);
            if spins.is_multiple_of(64) {
                self.local.check_alive()?;
            }
            if crowd {
                if missing != before {
                    moved = None;
                }
                let since = *moved.get_or_insert_with(Instant::now);
                if since.elapsed() < YIELD_FOR && yield_ok() {
                    let before = Instant::now();
                    std::thread::yield_now();
                    if before.elapsed() > HOGGED {
                        // Not at the first: a descheduled vCPU looks the same once.
                        hogs += 1;
                        if hogs == HOGS {
                            hogged();
                        }
                    }
                    continue;
                }
            } else if spins < SPINS {
                std::hint::spin_loop();
                continue;
            }
            stall.check(&self.local, missing, |m| self.cpu_of(m))?;
            owed.settle();
            // Sleep on the first missing member's pair: its arrival wakes us.
            let s = &c.nodes[first.index()];
            let seen = s.bar_seq.load(Ordering::SeqCst);
            s.bar_waiters.fetch_add(1, Ordering::SeqCst);
            crate::asym::heavy();
            let w = s.barrier[scope].load(Ordering::SeqCst);
            if !bar::reached(bar::word::number(w), t) {
                SharedFutex.wait(&s.bar_seq, seen, Some(SLEEP));
            }
            s.bar_waiters.fetch_sub(1, Ordering::SeqCst);
        }
    }

    /// The CPU time the verified processes behind `nodes` used so far (for the
    /// barrier's stall bound).
    pub(super) fn cpu_of(&self, nodes: &NodeSet) -> u64 {
        let c = self.local.ctl();
        nodes
            .iter()
            .filter_map(|n| {
                let inc = c.nodes[n.index()].incarnation.load(Ordering::Acquire);
                self.pidfds.cpu_ticks(n.index(), inc)
            })
            .sum()
    }

    /// Live members of the scope, other than this node, that have not arrived at `t`.
    /// A joiner starts level with the members (`join`), so it is never missing from a
    /// barrier under way when it joined.
    pub(super) fn missing(&self, scope: usize, group: Option<NodeSet>, t: u64) -> NodeSet {
        let c = self.local.ctl();
        let mut waited = bar::scope(self.members(), group);
        waited.remove(self.local.me);
        bar::missing(&waited, t, |n| {
            bar::word::number(c.nodes[n.index()].barrier[scope].load(Ordering::Acquire))
        })
    }
}

// The barrier's numbers, named where every wait's are (`memchan_core::idle`, which
// says what each was measured against).
pub(super) const SPINS: u32 = BARRIER.spins;
pub(super) const YIELD_FOR: Duration = BARRIER.yield_for;
pub(super) const HOGGED: Duration = BARRIER.hogged;
pub(super) const HOGS: u32 = BARRIER.hogs;
pub(super) const HOG_PAUSE: Duration = BARRIER.hog_pause;

/// The monotonic time (ns since [`hog_epoch`]) before which this process does not
/// yield in a barrier wait; 0 at first.
pub(super) static NO_YIELD_UNTIL: std::sync::atomic::AtomicU64 =
    std::sync::atomic::AtomicU64::new(0);

pub(super) fn hog_epoch() -> Instant {
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// Whether barrier waits of this process may yield now (see [`HOGGED`]).
pub(super) fn yield_ok() -> bool {
    let until = NO_YIELD_UNTIL.load(std::sync::atomic::Ordering::Relaxed);
    until == 0 || hog_epoch().elapsed().as_nanos() as u64 >= until
}

/// Yields met a task that does not yield: sleep instead for [`HOG_PAUSE`].
pub(super) fn hogged() {
    let until = (hog_epoch().elapsed() + HOG_PAUSE).as_nanos() as u64;
    NO_YIELD_UNTIL.store(until, std::sync::atomic::Ordering::Relaxed);
}

/// Whether a cluster of `members` nodes (all on this host) has more nodes than the
/// host has online cores: its barrier waits yield the core instead of spinning.
pub(super) fn crowded(members: usize) -> bool {
    static CORES: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    let cores = *CORES.get_or_init(|| {
        // SAFETY: sysconf has no memory preconditions.
        let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
        usize::try_from(n).unwrap_or(1).max(1)
    });
    members > cores
}

pub(super) const SLEEP: Duration = BARRIER.sleep;

/// This node's side of its barrier notify pair during one barrier: publishes its
/// barrier words and wakes the peers asleep on them.
///
/// A waiter increments the pair's waiter count, then looks at the word it waits on
/// (`wait_round`, `wait_all_arrived`); a publisher stores the word, then reads the
/// count: either we see the waiter and wake it, or it sees the word. Each side needs
/// a full barrier between its write and its read. On the publisher's side that
/// barrier would wait, on every barrier word, until the word's store has left the
/// core: a cross-core transfer on the critical path (a 2-node barrier cost about two
/// one-way latencies instead of one). So, in a process registered for `membarrier`
/// (`asym.rs`), the publisher has only a compiler fence and the waiter, about to
/// sleep, pays with `membarrier`. Otherwise the publisher's barrier is a
/// read-modify-write of the count, owed until this node's own wait goes to sleep or
/// the barrier ends ([`settle`](Self::settle), also on drop): the count's changes are
/// one total order, so either our RMW sees the waiter's increment, or the increment
/// reads from our RMW (a release after the word's store) and the waiter sees the
/// word. A waiter that registers meanwhile is woken at most one spin phase
/// (`SPINS`) late, and a barrier is never left with a wake-up owed.
pub(super) struct Owed<'a> {
    slot: &'a NodeSlot,
    /// A word was published whose waiters are neither woken nor settled.
    pending: bool,
}

impl<'a> Owed<'a> {
    fn new(slot: &'a NodeSlot) -> Self {
        Owed {
            slot,
            pending: false,
        }
    }

    /// Publishes `w` as this node's barrier word of `scope`.
    fn publish(&mut self, scope: usize, w: u64) {
        let s = self.slot;
        s.barrier[scope].store(w, Ordering::Release);
        std::sync::atomic::compiler_fence(Ordering::SeqCst);
        if s.bar_waiters.load(Ordering::Relaxed) != 0 {
            self.wake();
        } else {
            self.pending = !crate::asym::registered();
        }
    }

    /// Settles what [`publish`](Self::publish) left owed: the waiter count read by a
    /// read-modify-write, and a wake if anyone waits.
    fn settle(&mut self) {
        if self.pending && self.slot.bar_waiters.fetch_add(0, Ordering::SeqCst) != 0 {
            self.wake();
        }
        self.pending = false;
    }

    /// Moves the sequence (a read-modify-write after the word's store: a waiter that
    /// reads the new sequence sees the word, one that read the old one does not
    /// sleep on it) and wakes the sleepers.
    fn wake(&mut self) {
        self.slot.bar_seq.fetch_add(1, Ordering::SeqCst);
        SharedFutex.wake(&self.slot.bar_seq);
        self.pending = false;
    }
}

impl Drop for Owed<'_> {
    fn drop(&mut self) {
        self.settle();
    }
}

/// What one round waits for.
pub(super) struct RoundWait<'a> {
    src: NodeId,
    scope: usize,
    t: u64,
    tag: u64,
    need: u64,
    /// The members bitmap the ranks were taken from.
    bitmap: NodeSet,
    /// A 2-node barrier's peer word on their shared line.
    duo: Option<&'a memchan_core::sync::AtomicU64>,
}

/// Stores this node's arrival at `t` on the line it shares with `peer` (`DuoLine`),
/// before its own word: the peer spins on this one. Release, as the own word.
pub(super) fn duo_publish(c: &Control, scope: usize, me: NodeId, peer: usize, t: u64, tag: u64) {
    c.duos[scope].0[duo::slot(me.index(), peer)]
        .store(duo::pack(t, me.index(), tag), Ordering::Release);
}

/// The barrier's stall bound: progress is a change in who is missing, or a missing
/// member's process at work (its CPU time grew: a member slow to reach the barrier is
/// not a failure, as through a hub, where its writes and requests count). The clocks
/// (start, last progress) start at the first slow wait, off the fast path.
pub(super) struct Stall {
    clock: Option<(Instant, Instant)>,
    last: NodeSet,
    /// The missing members' CPU time when last looked at, once a bound passed.
    cpu: Option<u64>,
}

impl Stall {
    fn new() -> Self {
        Stall {
            clock: None,
            last: NodeSet::EMPTY,
            cpu: None,
        }
    }

    /// `cpu`: the missing members' CPU time so far (verified processes only).
    fn check(
        &mut self,
        local: &Local,
        missing: NodeSet,
        cpu: impl FnOnce(&NodeSet) -> u64,
    ) -> Result<()> {
        let bound = local.stall_bound();
        let (start, since) = *self.clock.get_or_insert_with(|| {
            let now = Instant::now();
            (now, now)
        });
        if missing != self.last {
            self.last = missing;
            self.cpu = None;
            self.clock = Some((start, Instant::now()));
            if start.elapsed() > bound * STALL_CAP {
                // Arrivals are words another member can fake: they extend the wait
                // only so far.
                return Err(local.stalled(
                    "barrier arrivals",
                    bound * STALL_CAP,
                    missing.iter().collect(),
                ));
            }
        } else if since.elapsed() > bound {
            // The kernel's count, not a word of the control block: a busy member
            // holds the barrier as long as it works, as it would in MPI.
            let now = cpu(&missing);
            let t = Instant::now();
            match self.cpu.replace(now) {
                // The first look only takes the count: the next comes a quarter bound
                // later, so an idle member is named after 1.25 bounds.
                None => self.clock = Some((start, t.checked_sub(bound * 3 / 4).unwrap_or(t))),
                Some(c) if c != now => self.clock = Some((start, t)),
                Some(_) => {
                    return Err(local.stalled("barrier arrivals", bound, missing.iter().collect()))
                }
            }
        }
        Ok(())
    }
}

/// What a barrier derives from its rank set: the round plan (`bar::Plan`) and
/// whether the host is crowded. Kept per thread for the last (node, members, ranks)
/// seen, since it changes only with membership and costs more than the rest of a
/// barrier's own work (bit counts without `popcnt` in the baseline x86-64 target,
/// the tag's hash). It stays in the thread's cache: a barrier takes its [`Head`]
/// (two registers) and the round sources one at a time: copying the whole plan out
/// through memory stalled on store forwarding (a 2-node barrier loop alone in one
/// process: 25 -> 10 ns with the own-word change of `Inner::bar_last`).
pub(super) struct Cached {
    me: NodeId,
    bitmap: NodeSet,
    ranks: NodeSet,
    head: Head,
    /// The source of round k, for the rounds there are (`bar::Plan::src`).
    src: [NodeId; bar::MAX_ROUNDS],
}

/// The part of a [`Cached`] plan a barrier needs at once: small enough to come back
/// from the thread-local cache in a register.
#[derive(Clone, Copy)]
pub(super) struct Head {
    tag: u16,
    rounds: u8,
    crowd: bool,
}

thread_local! {
    static PLAN: std::cell::RefCell<Option<Cached>> = const { std::cell::RefCell::new(None) };
}

impl Cached {
    /// The head of the plan of `me` with the cluster's `bitmap` and rank set `ranks`
    /// (which holds `me`), computing and caching the plan when the key changed.
    #[inline(always)]
    fn head(me: NodeId, bitmap: &NodeSet, ranks: &NodeSet) -> Head {
        // Word by word: a vector compare of sets just stored word by word stalls on
        // store forwarding for longer than the rest of a barrier's own work.
        let same = |a: &NodeSet, b: &NodeSet| {
            a.0.iter()
                .zip(b.0.iter())
                .fold(0u64, |d, (x, y)| d | (std::hint::black_box(*x) ^ *y))
                == 0
        };
        let hit = PLAN.with_borrow(|p| match p {
            Some(p) if p.me == me && same(&p.bitmap, bitmap) && same(&p.ranks, ranks) => {
                Some(p.head)
            }
            _ => None,
        });
        if let Some(h) = hit {
            return h;
        }
        Self::compute(me, bitmap, ranks)
    }

    /// The source of round `k` of the plan [`head`](Self::head) last returned on
    /// this thread.
    #[inline(always)]
    fn src(k: u32) -> Option<NodeId> {
        PLAN.with_borrow(|p| p.as_ref().and_then(|p| p.src.get(k as usize).copied()))
    }

    #[cold]
    #[inline(never)]
    fn compute(me: NodeId, bitmap: &NodeSet, ranks: &NodeSet) -> Head {
        let plan = bar::Plan::new(me, ranks);
        let head = Head {
            tag: plan.tag,
            rounds: plan.rounds,
            crowd: crowded(bitmap.len()),
        };
        PLAN.with_borrow_mut(|c| {
            *c = Some(Cached {
                me,
                bitmap: *bitmap,
                ranks: *ranks,
                head,
                src: plan.src,
            })
        });
        head
    }
}
