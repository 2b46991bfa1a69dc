//! Remote read and remote atomics on one host (issue 12 points 1 and 3):
//! `get_8b_ns` and `atomic_fetch_add_ns`, each beside the OSHMEM peer measured
//! the same way in the same run (`peers/shmem_get.c`, `shmem_fadd.c`), and
//! each with a cross-core variant in which the owner rewrites the word between
//! the operations, so its cache line really moves between the two cores.
//!
//! | series     | ping (timing side, cpu A)                               | pong (the owner, cpu B)                     |
//! |------------|---------------------------------------------------------|---------------------------------------------|
//! | get        | `get_u64(pong, 0)` × 100 per sample                     | waits on another line of its memory         |
//! | fetch-add  | `fetch_add_u64(pong, 0, 1)` × 100 per sample            | waits on another line                       |
//! | `_xcore`   | the same, each timed alone (one counter read per sample), 1 µs apart | stores to the word in a loop meanwhile |
//!
//! Targets: memchan at most 1.0× OSHMEM for each (issue 12 point 9).

use anyhow::{Context, Result};
use memchan::{Cluster, Dest, RxAttrs, TxAttrs};
use std::sync::atomic::{AtomicU64, Ordering};

use super::model::{Config, SampleSet};
use super::refs::PEER_TIMEOUT;
use super::table::{self, Cmp, Table, Target};
use super::timer::{spin_until, ticks, Clock};
use super::worker::{self, Kind, Launcher, Role, WorkerArgs, WorkerOutput};

/// Figure ids of the samples (one per table).
pub const GET: &str = "get_8b";
/// The cross-core get.
pub const GET_XCORE: &str = "get_8b_xcore";
/// Fetch-add.
pub const FADD: &str = "atomic_fetch_add";
/// The cross-core fetch-add.
pub const FADD_XCORE: &str = "atomic_fetch_add_xcore";

/// Operations per timed batch (as the OSHMEM peers).
pub const BATCH: usize = 100;

/// The worker's series and the figures they belong to.
const SERIES: [(&str, &str); 4] = [
    ("get", GET),
    ("get_xcore", GET_XCORE),
    ("fadd", FADD),
    ("fadd_xcore", FADD_XCORE),
];

/// Coordinator side: runs the two workers and adds the four series to `set`.
pub fn measure(l: &mut Launcher, cfg: &Config, set: &mut SampleSet) -> Result<()> {
    let extra = vec![
        "--iters".into(),
        cfg.batches.to_string(),
        "--warmup".into(),
        (cfg.batches / 10).max(2).to_string(),
        "--cluster".into(),
        l.unique("memchan-bench-rma"),
    ];
    let mut out = worker::group(l, Kind::MemchanRma, 2, cfg.cpus, &extra)?;
    for (series, figure) in SERIES {
        let v = out
            .series
            .remove(series)
            .with_context(|| format!("the rma worker reported no {series} series"))?;
        set.add(figure, "memchan", v);
    }
    Ok(())
}

/// Word offsets in the segment: the word read and updated; the phase (ping → the
/// owner's copy) and the owner's answer (owner → ping's copy), on lines of their own.
const WORD: usize = 0;
const PHASE: usize = 64;
const ANSWER: usize = 128;

/// Worker side.
pub fn worker(a: &WorkerArgs, clock: &Clock) -> Result<WorkerOutput> {
    let name = a.cluster.as_deref().context("--cluster is required")?;
    let c = Cluster::join(name).with_context(|| format!("joining cluster {name}"))?;
    // `memchan_side` calls this module: the peer is found here, not through it.
    c.wait_for_members(2, PEER_TIMEOUT)
        .context("waiting for the other bench node")?;
    let me = c.node_id();
    let peer = c
        .members()
        .into_iter()
        .find(|&n| n != me)
        .context("no other member in the bench cluster")?;
    let seg = c.segment("rma", 4096, 0o600).context("segment rma")?;
    let open = RxAttrs {
        remote_read: true,
        ..RxAttrs::default()
    };
    let rx = seg.map_rx_with(open).context("map_rx")?;
    let tx = seg
        .map_tx(Dest::Node(peer), TxAttrs::default())
        .context("map_tx")?;
    c.barrier().context("start barrier")?;
    let mut out = WorkerOutput::default();
    if a.role == Role::Ping {
        let rma = seg.rma().context("rma handle")?;
        let batches = |op: &dyn Fn() -> Result<u64>| -> Result<Vec<f64>> {
            let mut v = Vec::with_capacity(a.iters as usize);
            for b in 0..a.warmup + a.iters {
                let t0 = ticks();
                for _ in 0..BATCH {
                    std::hint::black_box(op()?);
                }
                let t1 = ticks();
                if b >= a.warmup {
                    v.push(clock.ns(t1.wrapping_sub(t0)) / BATCH as f64);
                }
            }
            Ok(v)
        };
        // Cross-core: each operation timed alone, 1 us after the previous one, so
        // that the owner's stores have taken the line back (as the OSHMEM peer).
        let gap = (clock.ghz * 1000.0) as u64;
        let alone = |op: &dyn Fn() -> Result<u64>| -> Result<Vec<f64>> {
            let mut v = Vec::with_capacity(a.iters as usize);
            for i in 0..a.warmup + a.iters {
                let until = ticks().wrapping_add(gap);
                while ticks() < until {}
                let t0 = ticks();
                std::hint::black_box(op()?);
                let t1 = ticks();
                if i >= a.warmup {
                    v.push(clock.ns(t1.wrapping_sub(t0)));
                }
            }
            Ok(v)
        };
        let get = || rma.get_u64(peer, WORD).context("get_u64");
        let fadd = || rma.fetch_add_u64(peer, WORD, 1).context("fetch_add_u64");
        out.series.insert("get".into(), batches(&get)?);
        out.series.insert("fadd".into(), batches(&fadd)?);
        // The owner starts rewriting the word; it answers once it does.
        tx.write_u64(PHASE, 1)?;
        spin_until(
            || matches!(rx.load_u64(ANSWER), Ok(1)),
            PEER_TIMEOUT,
            "the owner to start rewriting",
        )?;
        out.series.insert("get_xcore".into(), alone(&get)?);
        out.series.insert("fadd_xcore".into(), alone(&fadd)?);
        tx.write_u64(PHASE, 2)?;
    } else {
        spin_until(
            || matches!(rx.load_u64(PHASE), Ok(1)),
            PEER_TIMEOUT,
            "the rewrite phase",
        )?;
        tx.write_u64(ANSWER, 1)?;
        // SAFETY: `WORD` is 8-aligned and inside this node's rx mapping, which `rx`
        // keeps mapped; every party reaches it only through atomics.
        let word = unsafe { &*(rx.as_ptr().add(WORD) as *const AtomicU64) };
        let mut v = 0u64;
        while rx.load_u64(PHASE)? != 2 {
            v += 1;
            word.store(v, Ordering::Relaxed);
            if v.is_multiple_of(1 << 16) && !c.members().contains(&peer) {
                anyhow::bail!("the timing side left during the rewrite phase");
            }
        }
    }
    c.barrier().context("closing barrier")?;
    Ok(out)
}

/// The four tables, memchan against OSHMEM at most 1.0×.
pub fn tables(set: &SampleSet) -> Vec<Table> {
    let specs = [
        (
            GET,
            "get_8b_ns",
            "remote read of an 8-byte word (get_u64; per get, batches of 100; owner idle)",
            "oshmem: shmem_long_g",
        ),
        (
            GET_XCORE,
            "get_8b_xcore_ns",
            "remote read of an 8-byte word, the owner rewriting it meanwhile (the line moves; per get, each timed alone 1 us apart)",
            "oshmem: shmem_long_g while PE 1 stores to the word in a loop",
        ),
        (
            FADD,
            "atomic_fetch_add_ns",
            "remote fetch-add on an 8-byte word (per operation, batches of 100; owner idle)",
            "oshmem: shmem_long_atomic_fetch_add",
        ),
        (
            FADD_XCORE,
            "atomic_fetch_add_xcore_ns",
            "remote fetch-add on an 8-byte word, the owner rewriting it meanwhile (each timed alone 1 us apart)",
            "oshmem: shmem_long_atomic_fetch_add while PE 1 stores to the word in a loop",
        ),
    ];
    specs
        .into_iter()
        .map(|(figure, key, title, note)| {
            let rows = ["memchan", "oshmem"].into_iter().filter_map(|s| {
                let m = super::stats::summarize(set.get(figure, s)?)?;
                Some((s, Ok((m.median, m.p99, m.n))))
            });
            let mut t = Table::new(
                key,
                title.into(),
                "ns",
                Some("oshmem"),
                Some(Target {
                    subject: "memchan",
                    cmp: Cmp::AtMost,
                    factor: 1.0,
                }),
                rows,
            );
            t.notes.push(note.into());
            t.round_ratios = table::round_ratios(set, figure, &t);
            t
        })
        .collect()
}

/// `--hosts`: the samples (ns) of one get and one fetch-add on the direct link, each a
/// round trip over the veth (`hosts/memchan_net.rs`).
pub const FIG_NET_GET: &str = "net_get_8b";
/// The fetch-add across hosts.
pub const FIG_NET_FADD: &str = "net_atomic_fetch_add";

/// `--hosts` coordinator: files the worker's two series.
pub fn add_host_samples(mut out: WorkerOutput, set: &mut SampleSet) -> Result<()> {
    for (series, figure) in [("get", FIG_NET_GET), ("fadd", FIG_NET_FADD)] {
        let v = out
            .series
            .remove(series)
            .with_context(|| format!("the host rma worker reported no {series} series"))?;
        set.add(figure, "memchan_rma", v);
    }
    Ok(())
}

/// `--hosts` tables: a get and a fetch-add on the direct link (blocking: the caller
/// waits in `poll` on its link) against one raw TCP round trip in the same blocking
/// mode (twice `tcp_raw`'s one-way latency, from the same run), at most 1.25×.
pub fn host_tables(set: &SampleSet, latency_figure: &str) -> Vec<Table> {
    let us = |v: &[f64]| super::stats::summarize(v).map(|m| (m.median / 1e3, m.p99 / 1e3, m.n));
    let round_trip: Option<Vec<f64>> = set
        .get(latency_figure, "tcp_raw")
        .map(|v| v.iter().map(|x| 2.0 * x).collect());
    [
        (
            FIG_NET_GET,
            "net_get_8b_us",
            "remote read of an 8-byte word across the veth, on the nodes' direct link (one get, blocking)",
        ),
        (
            FIG_NET_FADD,
            "net_atomic_fetch_add_us",
            "remote fetch-add on an 8-byte word across the veth, on the nodes' direct link (blocking)",
        ),
    ]
    .into_iter()
    .map(|(figure, key, title)| {
        let rows = [
            ("tcp_raw_round_trip", round_trip.as_deref().and_then(us)),
            ("memchan_rma", set.get(figure, "memchan_rma").and_then(us)),
        ]
        .into_iter()
        .map(|(s, v)| {
            (
                s,
                v.ok_or_else(|| "not measured (see the notes)".to_string()),
            )
        });
        let mut t = Table::new(
            key,
            title.into(),
            "us",
            Some("tcp_raw_round_trip"),
            Some(Target {
                subject: "memchan_rma",
                cmp: Cmp::AtMost,
                factor: 1.25,
            }),
            rows,
        );
        t.notes.push(
            "tcp_raw_round_trip: twice tcp_raw's one-way latency (8-byte ping-pong, blocking \
             read) of the same run; memchan_rma: on the nodes' direct link (the hub on host H \
             brokered it), the target's link side answers"
                .into(),
        );
        t
    })
    .collect()
}
