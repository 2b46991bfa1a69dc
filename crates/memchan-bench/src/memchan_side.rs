//! The memchan side of every figure, kept in this one module so the library
//! can change without touching the references.
//!
//! Each measurement runs exactly like its reference: two worker processes
//! pinned to the same cores (each joins a fresh cluster by name; no daemon),
//! timed with the same counter and, for latencies, through the same generic
//! ping-pong driver ([`super::pingpong`]).
//!
//! | kind       | ping (timing side, cpu A)                          | pong (cpu B)                |
//! |------------|----------------------------------------------------|-----------------------------|
//! | latency    | `write_u64(0, seq)`, spin on own rx word 0         | spin, answer `write_u64`    |
//! | bandwidth  | per window: 64 × (`write(0, S bytes)` + 8-byte seq flag), wait for the answer | wait for the 64th flag, answer |
//! | overhead   | `write(0, 32 bytes)` × 1000 per sample             | idle                        |
//! | ack        | (`write_u64` + `ack()`) × 100 per sample           | idle                        |
//! | lock       | `acquire()` + `release()`, uncontended             | idle (joined)               |
//! | barrier    | `barrier()`                                        | `barrier()`                 |
//! | barrier, N nodes | `barrier()` (node 0 of N)                    | `barrier()` (nodes 1..N, alternately on cpu A and B) |
//! | notify     | ping-pong, both sides block in `rx.wait` (rx mapped with notify on receive) | same |

use anyhow::{bail, ensure, Context, Result};
use memchan::{RxAttrs, TxMapping};

use super::model::{fig, Config, SampleSet, Step, BARRIER_NODES};
use super::peers::{PeerRun, Peers, Program, RUN_TIMEOUT};
use super::pingpong::Fns;
use super::refs::{self, OVERHEAD_BATCH, PEER_TIMEOUT, WINDOW};
use super::session::{raw_pingpong, spin_for, Session};
use super::timer::{ticks, Clock};
use super::turns::{self, Turns, Window};
use super::worker::{self, take, Group, Kind, Launcher, Role, WorkerArgs, WorkerOutput};

/// Write + ack pairs per timed batch (as the OSHMEM put + quiet peer).
pub const ACK_BATCH: usize = 100;

/// `Ok(())` when the memchan measurements can run, else why they are skipped.
pub fn available() -> Result<(), String> {
    Ok(())
}

/// One memchan measurement: what its workers measure, and how many nodes
/// (worker processes) run it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Measurement {
    pub kind: Kind,
    pub nodes: usize,
}

impl std::fmt::Display for Measurement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}", self.kind)?;
        if self.nodes != 2 {
            write!(f, " ({} nodes)", self.nodes)?;
        }
        Ok(())
    }
}

/// The memchan measurements that run right after the reference `after` in
/// each round (before it, every other round).
pub fn kinds_after(after: Step) -> Vec<Measurement> {
    let two = |kind| Measurement { kind, nodes: 2 };
    match after {
        Step::Cacheline => vec![
            two(Kind::MemchanLatency),
            two(Kind::MpLatencyPostal),
            two(Kind::MpLatencyZeroCopy),
        ],
        Step::Memcpy => vec![
            two(Kind::MemchanBandwidth),
            two(Kind::MpBandwidthPostal),
            two(Kind::MpBandwidthZeroCopy),
        ],
        Step::StoreFence => {
            let mut v = vec![
                two(Kind::MemchanOverhead),
                two(Kind::MemchanAck),
                two(Kind::MemchanLock),
                two(Kind::MemchanBarrier),
            ];
            v.extend(BARRIER_NODES.map(|(nodes, _)| Measurement {
                kind: Kind::MemchanBarrier,
                nodes,
            }));
            v.push(two(Kind::MemchanNotify));
            v.push(two(Kind::MemchanRma));
            v
        }
        _ => vec![],
    }
}

/// Coordinator side: runs one memchan measurement (all its workers) and adds
/// its samples to `set`.
pub fn measure(m: Measurement, l: &mut Launcher, cfg: &Config, set: &mut SampleSet) -> Result<()> {
    let Measurement { kind, nodes } = m;
    let extra = worker_args(m, l, cfg)?;
    let out = worker::group(l, kind, nodes, cfg.cpus, &extra)?;
    record(m, out, set)
}

/// The 2-node barrier.
pub const BARRIER: Measurement = Measurement {
    kind: Kind::MemchanBarrier,
    nodes: 2,
};

/// The 2-node barrier and its OSHMEM peer (`prog`, `shmem_barrier.c` on 2 PEs)
/// started together and taking turns ([`super::turns`]; memchan's windows first
/// in the even ones when `memchan_first`): memchan's samples added to `set`, or why
/// there are none, and the peer's run. When one side fails (or no FIFOs can be
/// made), the other runs again alone.
pub fn barrier_beside_peer(
    peers: &Peers,
    prog: &Program,
    l: &mut Launcher,
    cfg: &Config,
    set: &mut SampleSet,
    memchan_first: bool,
) -> (Result<()>, Result<PeerRun>) {
    let clock = l.clock;
    let made = (
        Turns::new(&l.scratch_path("turns_barrier_memchan")),
        Turns::new(&l.scratch_path("turns_barrier_oshmem")),
    );
    let (Ok(tm), Ok(tp)) = made else {
        return (measure(BARRIER, l, cfg, set), peers.run(prog, cfg, &clock));
    };
    let turns = [tm, tp];
    let mine = worker_args(BARRIER, l, cfg).and_then(|mut extra| {
        extra.push("--turns".into());
        extra.push(turns[0].dir().display().to_string());
        Group::start(l, BARRIER.kind, BARRIER.nodes, cfg.cpus, &extra)
    });
    let theirs = peers.spawn(prog, cfg, &clock, Some(turns[1].dir()));
    let (mut mine, mut theirs) = (mine, theirs);
    let failed = match (&mut mine, &mut theirs) {
        (Ok(a), Ok(b)) => {
            let first = usize::from(!memchan_first);
            turns::drive(&turns, [a, b], first, RUN_TIMEOUT).err()
        }
        (Err(_), _) => Some((0, anyhow::anyhow!("not started"))),
        (_, Err(_)) => Some((1, anyhow::anyhow!("not started"))),
    };
    // Closing the FIFOs ends a side still waiting for its turn.
    drop(turns);
    let mine = mine.and_then(|g| g.finish());
    let theirs = theirs.and_then(|r| r.finish());
    match failed {
        None => (mine.and_then(|out| record(BARRIER, out, set)), theirs),
        Some((0, e)) => (
            turns::failed_with(mine.map(drop), e),
            peers.run(prog, cfg, &clock),
        ),
        Some((_, e)) => (measure(BARRIER, l, cfg, set), turns::failed_with(theirs, e)),
    }
}

/// The workers' arguments of a measurement run through [`worker::group`].
fn worker_args(m: Measurement, l: &mut Launcher, cfg: &Config) -> Result<Vec<String>> {
    let Measurement { kind, nodes } = m;
    let cluster = l.unique("memchan-bench");
    let mut extra = match kind {
        Kind::MemchanLatency => cfg.pingpong_args(cfg.iters),
        Kind::MemchanBandwidth => cfg.sweep_args(),
        Kind::MemchanOverhead | Kind::MemchanAck => {
            vec![
                "--iters".into(),
                cfg.batches.to_string(),
                "--warmup".into(),
                (cfg.batches / 10).max(2).to_string(),
            ]
        }
        Kind::MemchanBarrier if nodes > 2 => {
            let iters = cfg.nodes_barrier_iters(nodes);
            cfg.pingpong_args(iters)
        }
        // The 2-node barrier in batches, as its OSHMEM peer (`shmem_barrier.c`).
        Kind::MemchanBarrier => {
            vec![
                "--iters".into(),
                cfg.batches.to_string(),
                "--warmup".into(),
                (cfg.batches / 10).max(2).to_string(),
            ]
        }
        Kind::MemchanLock | Kind::MemchanNotify => cfg.pingpong_args(cfg.op_iters),
        k => bail!("{k:?} is not a memchan measurement"),
    };
    extra.extend(["--cluster".to_string(), cluster]);
    Ok(extra)
}

/// Adds a measurement's output to `set`.
fn record(m: Measurement, out: WorkerOutput, set: &mut SampleSet) -> Result<()> {
    let Measurement { kind, nodes } = m;
    match kind {
        Kind::MemchanLatency => set.add(fig::LATENCY, "memchan", take(out, "one_way")?),
        Kind::MemchanNotify => set.add(fig::NOTIFY, "memchan", take(out, "one_way")?),
        Kind::MemchanOverhead => {
            let mut out = out;
            let contract = out.series.remove("memchan_contract").unwrap_or_default();
            set.add(fig::OVERHEAD, "memchan_contract", contract);
            set.add(fig::OVERHEAD, "memchan", take(out, "memchan")?);
        }
        Kind::MemchanAck => set.add(fig::ACK, "memchan", take(out, "memchan")?),
        Kind::MemchanLock => set.add(fig::LOCK, "memchan", take(out, "memchan")?),
        Kind::MemchanBarrier if nodes > 2 => {
            set.add(&fig::barrier_nodes(nodes), "memchan", take(out, "memchan")?)
        }
        Kind::MemchanBarrier => set.add(fig::BARRIER, "memchan", take(out, "memchan")?),
        Kind::MemchanBandwidth => {
            for (size, v) in out.series {
                let size: usize = size.parse().context("memchan bandwidth worker: bad size")?;
                set.add(&fig::bandwidth(size), "memchan", v);
            }
        }
        k => bail!("{k:?} is not a memchan measurement"),
    }
    Ok(())
}

/// Worker side of a memchan measurement.
pub fn worker(kind: Kind, a: &WorkerArgs, clock: &Clock) -> Result<WorkerOutput> {
    let s = Session::join(a)?;
    let ping = a.role == Role::Ping;
    let out = match kind {
        Kind::MemchanLatency => {
            let (rx, tx) = s.channel("pingpong", 4096, RxAttrs::default())?;
            raw_pingpong(&rx, &tx, a, clock, ping)?
        }
        Kind::MemchanNotify => {
            let attrs = RxAttrs {
                notify: true,
                ..RxAttrs::default()
            };
            let (rx, tx) = s.channel("notify", 4096, attrs)?;
            let mut ep = Fns(
                |seq| tx.write_u64(0, seq).context("write_u64"),
                |seq| {
                    while rx.load_u64(0)? != seq {
                        ensure!(
                            rx.wait(Some(PEER_TIMEOUT))?,
                            "rx.wait timed out after {PEER_TIMEOUT:?}"
                        );
                    }
                    Ok(())
                },
            );
            worker::ping_or_pong(&mut ep, a, clock, ping)?
        }
        Kind::MemchanBandwidth => bandwidth(&s, a, clock, ping)?,
        Kind::MemchanOverhead => {
            let (_rx, tx) = s.channel("overhead", 4096, RxAttrs::default())?;
            let mut out = WorkerOutput::one("memchan", Vec::new());
            if ping {
                out = overhead(a, clock, tx)?;
            }
            out
        }
        Kind::MemchanAck => {
            let (_rx, tx) = s.channel("ack", 4096, RxAttrs::default())?;
            let mut v = Vec::new();
            if ping {
                let mut seq = 0u64;
                for b in 0..a.warmup + a.iters {
                    let t0 = ticks();
                    for _ in 0..ACK_BATCH {
                        seq += 1;
                        tx.write_u64(0, seq)?;
                        s.c.ack()?;
                    }
                    let t1 = ticks();
                    if b >= a.warmup {
                        v.push(clock.ns(t1.wrapping_sub(t0)) / ACK_BATCH as f64);
                    }
                }
            }
            WorkerOutput::one("memchan", v)
        }
        Kind::MemchanLock => {
            let lock = s.c.lock("bench-lock").context("cluster lock")?;
            s.c.barrier().context("start barrier")?;
            let mut v = Vec::new();
            if ping {
                let mut prev = ticks();
                for i in 0..a.warmup + a.iters {
                    let g = lock.acquire().context("lock acquire")?;
                    g.release().context("lock release")?;
                    let now = ticks();
                    if i >= a.warmup {
                        v.push(clock.ns(now.wrapping_sub(prev)));
                    }
                    prev = now;
                }
            }
            WorkerOutput::one("memchan", v)
        }
        Kind::MemchanBarrier if a.nodes > 2 => {
            s.c.barrier().context("start barrier")?;
            let mut v = Vec::new();
            let mut prev = ticks();
            for i in 0..a.warmup + a.iters {
                s.c.barrier()?;
                let now = ticks();
                if ping && i >= a.warmup {
                    v.push(clock.ns(now.wrapping_sub(prev)));
                }
                prev = now;
            }
            WorkerOutput::one("memchan", v)
        }
        // Two nodes: the mean of a batch of barriers per sample. One sample per
        // barrier alternates between a short and a long one whenever one side is
        // half a barrier ahead of the other (here: 40 and 560 ns in turn), and its
        // median is then whichever of the two happens to be the more frequent.
        // With `--turns`, in the windows the bench alternates with the OSHMEM peer's,
        // each started together, as `shmem_barrier.c` does.
        Kind::MemchanBarrier => {
            let rank = usize::from(!ping);
            let mut turns = match &a.turns {
                Some(dir) => Some(Window::open(dir, rank)?),
                None => None,
            };
            let windows = if turns.is_some() { turns::WINDOWS } else { 1 };
            let total = a.warmup + a.iters;
            let mut v = Vec::new();
            for w in 0..windows {
                if let Some(t) = &mut turns {
                    t.begin()?;
                }
                s.c.barrier().context("start barrier")?;
                for b in turns::window_range(total, w, windows) {
                    let t0 = ticks();
                    for _ in 0..ACK_BATCH {
                        s.c.barrier()?;
                    }
                    let t1 = ticks();
                    if ping && b >= a.warmup {
                        v.push(clock.ns(t1.wrapping_sub(t0)) / ACK_BATCH as f64);
                    }
                }
                s.c.barrier().context("window's closing barrier")?;
                if let Some(t) = &mut turns {
                    t.end()?;
                }
            }
            WorkerOutput::one("memchan", v)
        }
        k => bail!("{k:?} is not a memchan measurement"),
    };
    s.done()?;
    Ok(out)
}

/// Bandwidth sweep: for each size, windows of 64 × (S bytes + 8-byte flag);
/// the receiver answers once the 64th flag of a window has landed.
/// The 32-byte overhead, batches alternating between the public `TxMapping` and the
/// same write through the one-host transport's own type as the contract's `TxOps`
/// (`memchan_contract`), which goes first flipping every batch: the gap between the two is what the public API's private
/// flavor costs on the hot path.
fn overhead(a: &WorkerArgs, clock: &Clock, tx: TxMapping) -> Result<WorkerOutput> {
    // Owned here, as `dtx` is: a mapping behind a reference from outside is reloaded
    // after every store (the compiler cannot tell the stores do not reach it).
    use memchan_core::transport::{SegmentOps, Transport, TxOps};
    let name = a.cluster.as_deref().context("--cluster is required")?;
    let cfg = memchan::Config::default().without_hub();
    // A second node of this process, joined through memchan-shm itself.
    let direct = memchan_shm::Node::join(name, &cfg).context("joining through memchan-shm")?;
    let dtx = direct
        .open_segment("overhead")
        .context("segment overhead")?
        .map_tx(tx.dest(), memchan::TxAttrs::default())
        .context("map_tx (contract)")?;
    let src = [0xa5u8; 32];
    let (mut public, mut contract) = (Vec::new(), Vec::new());
    let public_batch = || -> Result<f64> {
        let t0 = ticks();
        for _ in 0..OVERHEAD_BATCH {
            tx.write(0, std::hint::black_box(&src))?;
        }
        Ok(clock.ns(ticks().wrapping_sub(t0)) / OVERHEAD_BATCH as f64)
    };
    let contract_batch = || -> Result<f64> {
        let t0 = ticks();
        for _ in 0..OVERHEAD_BATCH {
            TxOps::write(&dtx, 0, std::hint::black_box(&src))?;
        }
        Ok(clock.ns(ticks().wrapping_sub(t0)) / OVERHEAD_BATCH as f64)
    };
    for b in 0..a.warmup + a.iters {
        // Which goes first flips every batch, so neither always follows the other.
        let (p, c) = if b % 2 == 0 {
            (public_batch()?, contract_batch()?)
        } else {
            let c = contract_batch()?;
            (public_batch()?, c)
        };
        if b >= a.warmup {
            public.push(p);
            contract.push(c);
        }
    }
    drop(dtx);
    // Gone before the closing barrier, which counts every live member.
    direct.leave();
    let mut out = WorkerOutput::one("memchan", public);
    out.series.insert("memchan_contract".into(), contract);
    Ok(out)
}

fn bandwidth(s: &Session, a: &WorkerArgs, clock: &Clock, ping: bool) -> Result<WorkerOutput> {
    let max = a
        .sizes
        .iter()
        .copied()
        .max()
        .context("--sizes is required")?;
    // data at 0..max, then the flag (ping → pong) and the answer (pong → ping)
    // on their own page
    let flag = max.next_multiple_of(4096);
    let answer = flag + 64;
    let (rx, tx) = s.channel("bandwidth", flag + 4096, RxAttrs::default())?;
    let src = refs::PageBuf::new(max, 0x5a);
    let mut out = WorkerOutput::default();
    let mut seq = 0u64; // flag values, one per transfer
    let mut win = 0u64; // answer values, one per window
    for &size in &a.sizes {
        let windows = refs::windows_for(size, a.budget, a.min_windows, a.max_windows);
        let data = &src.as_slice()[..size];
        let mut v = Vec::with_capacity(windows);
        for w in 0..windows + 1 {
            win += 1;
            if ping {
                let t0 = ticks();
                for _ in 0..WINDOW {
                    seq += 1;
                    tx.write(0, data)?;
                    tx.write_u64(flag, seq)?;
                }
                spin_for(&rx, answer, win, "the bandwidth receiver's answer")?;
                let t1 = ticks();
                if w > 0 {
                    v.push(clock.ns(t1.wrapping_sub(t0)));
                }
            } else {
                seq += WINDOW as u64;
                spin_for(&rx, flag, seq, "the bandwidth sender's flag")?;
                tx.write_u64(answer, win)?;
            }
        }
        out.series.insert(size.to_string(), v);
    }
    if !ping {
        out.series.clear();
    }
    Ok(out)
}
