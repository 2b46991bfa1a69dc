//! The bench's shared data: the flags and resolved run parameters, the reference
//! steps, the figure ids, the pooled samples and the facts a report needs, plus the
//! output helpers both coordinators use. A leaf of the module tree: it imports no
//! other bench module but [`stats`] (for per-round medians), so the coordinator
//! (`mod.rs`), the measurements, the statistics and the reports can all use it.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};
use clap::Args;

use super::stats;

/// Transfer sizes of the bandwidth sweep (bytes).
pub const SIZES: [usize; 8] = [8, 64, 512, 4 << 10, 32 << 10, 256 << 10, 1 << 20, 4 << 20];

/// The N-node barrier figures (besides the 2-node one), each against OSHMEM's
/// `shmem_barrier_all` at as many PEs: node count and JSON key.
pub const BARRIER_NODES: [(usize, &str); 2] =
    [(8, "barrier_8_nodes_ns"), (64, "barrier_64_nodes_ns")];

/// Options of `memchan bench`.
#[derive(Debug, Clone, Args)]
pub struct BenchArgs {
    /// Number of rounds. Each round runs every reference and every memchan
    /// measurement once, alternately (the order flips every other round), so
    /// that drift of the machine (the cache-line limit moves 70–120 ns, memcpy
    /// 17–33 GB/s from run to run) hits both sides alike; the samples of all
    /// rounds are pooled for the medians, and a target is judged on the median of
    /// the rounds' ratios (two rounds or more). [default: 5, or 1 with --quick]
    #[arg(long, value_name = "R")]
    pub rounds: Option<usize>,

    /// Round trips per latency measurement per round (TCP loopback uses at
    /// most 20000). Other measurements scale with it.
    /// [default: 50000, or 2000 with --quick]
    #[arg(long, value_name = "N")]
    pub iters: Option<u64>,

    /// Few iterations and a single round (under 20 s): for tests and smoke
    /// runs, not for figures you quote.
    #[arg(long)]
    pub quick: bool,

    /// Also write every figure (medians, p99s, ratios, targets, the full
    /// bandwidth sweep) and a description of the machine as JSON to FILE.
    #[arg(long, value_name = "FILE")]
    pub json: Option<PathBuf>,

    /// Write the run's report into DIR, replacing the one there: latest.md (machine,
    /// commit, date, rounds, every target's judged ratio, pooled ratio, per-round
    /// spread and verdict, the printed tables, the plots) and latest.json (the --json
    /// document with that summary under "report"). With --plot, the PNGs are copied
    /// into DIR beside them. The one-host run only.
    #[arg(long, value_name = "DIR", conflicts_with_all = ["hosts", "scale"])]
    pub report: Option<PathBuf>,

    /// After the report is written, rewrite FILE's verdict block from DIR/latest.json:
    /// the lines between `<!-- verdicts:begin -->` and `<!-- verdicts:end -->`, and
    /// nothing else. Without both markers FILE is left alone, with a warning.
    #[arg(long, value_name = "FILE", requires = "report")]
    pub readme: Option<PathBuf>,

    /// With --readme: measure nothing, only regenerate FILE's verdict block from the
    /// report already in DIR.
    #[arg(long, requires = "readme")]
    pub readme_only: bool,

    /// Write PNG plots into DIR (bandwidth vs transfer size; latency histogram
    /// and CDF; bandwidth vs size per level: raw writes, message passing, TCP/IP),
    /// together with the data they are drawn from (bench_data.json).
    /// Needs python3 with matplotlib (scripts/setup.sh installs it).
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,

    /// The two cores to pin to: the timing ("ping") side first, then the
    /// answering ("pong") side. The peers are bound to the same two cores.
    #[arg(long, value_delimiter = ',', default_value = "0,1", value_name = "A,B")]
    pub cpus: Vec<usize>,

    /// Do not run the Open MPI / OpenSHMEM / UCX peers.
    #[arg(long)]
    pub no_peers: bool,

    /// Run the peers in the first round only instead of in every round
    /// (each peer costs an mpirun/oshrun start-up of about half a second).
    #[arg(long)]
    pub peers_once: bool,

    /// Run only the host figures: two network namespaces joined by a veth
    /// pair, and over it raw TCP (blocking and busy-polling 8-byte ping-pong,
    /// 1 MiB-write stream), Open MPI over TCP and memchan through a hub, then
    /// message passing and TCP/IP over memchan through a hub.
    /// Needs root (CAP_NET_ADMIN) and iproute2.
    #[arg(long)]
    pub hosts: bool,

    /// Run only the scale figures: for each node count (--nodes), that many
    /// nodes, one unpinned process each, join and wait for full membership,
    /// then idle, on one host's shared memory and again through one hub on
    /// loopback (four host domains); reports the time from the first spawn until
    /// all N see N members, the idle CPU of the whole cluster (the hub's
    /// included) and per node over a quiet window (3 s, or 1 s with --quick),
    /// threads and descriptors per process, and checks that every process is
    /// reaped and /dev/shm is clean.
    #[arg(long, conflicts_with = "hosts")]
    pub scale: bool,

    /// Node counts of --scale. [default: 8,64,256]
    #[arg(long, value_delimiter = ',', value_name = "N,...", requires = "scale")]
    pub nodes: Vec<usize>,

    /// Run only these levels (comma-separated; default: all): `raw` (memchan writes
    /// against the cache-line limit, memcpy and TCP loopback, with the Open MPI /
    /// OpenSHMEM peers of those figures, remote read, atomics, strided deposit),
    /// `mp` (message passing in both modes against Open MPI and UCX, with the
    /// memcpy reference), `ip` (TCP/IP over `memchan ip` against a veth), `shmem`
    /// (the OpenSHMEM level). The one-host run only.
    #[arg(long, value_delimiter = ',', value_name = "LEVEL,...", conflicts_with_all = ["hosts", "scale"])]
    pub only: Vec<Level>,
}

/// A level of the one-host bench (`--only`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Level {
    /// Raw memchan writes and the raw level's other figures.
    Raw,
    /// Message passing.
    Mp,
    /// TCP/IP over memchan.
    Ip,
    /// The OpenSHMEM level.
    Shmem,
}

/// The resolved run parameters.
#[derive(Debug, Clone)]
pub struct Config {
    pub rounds: usize,
    pub quick: bool,
    pub cpus: (usize, usize),
    /// Round trips per latency measurement.
    pub iters: u64,
    pub tcp_iters: u64,
    pub warmup: u64,
    /// Byte budget per size of the bandwidth sweeps, and window bounds.
    pub bw_budget: usize,
    pub bw_min_windows: usize,
    pub bw_max_windows: usize,
    /// Batches of 1000 writes (overhead) / of 100 write+ack pairs (ack).
    pub batches: u64,
    /// Iterations of lock, barrier, notify.
    pub op_iters: u64,
    /// LINPACK repeats.
    pub flop_repeats: u64,
    /// Windows of the MPI 1 MiB bandwidth peer.
    pub peer_bw_windows: u64,
    /// The levels to run (`--only`; empty: all).
    pub only: Vec<Level>,
}

impl Config {
    pub fn from_args(a: &BenchArgs) -> Result<Self> {
        let rounds = a.rounds.unwrap_or(if a.quick { 1 } else { 5 });
        if rounds == 0 {
            bail!("--rounds must be at least 1");
        }
        let iters = a.iters.unwrap_or(if a.quick { 2000 } else { 50_000 });
        if iters == 0 {
            bail!("--iters must be at least 1");
        }
        let cpus = match a.cpus.as_slice() {
            [p, q] => (*p, *q),
            other => bail!("--cpus takes exactly two cores, got {other:?}"),
        };
        let online = std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1);
        let allowed = rustix::thread::sched_getaffinity(None).context("sched_getaffinity")?;
        let list: Vec<String> = (0..rustix::thread::CpuSet::MAX_CPU)
            .filter(|&c| allowed.is_set(c))
            .map(|c| c.to_string())
            .collect();
        for c in [cpus.0, cpus.1] {
            if c >= rustix::thread::CpuSet::MAX_CPU || !allowed.is_set(c) {
                bail!(
                    "--cpus: core {c} is not available to this process (allowed: {})",
                    list.join(",")
                );
            }
        }
        if cpus.0 == cpus.1 {
            eprintln!(
                "warning: ping and pong share cpu {}: latencies will include context switches",
                cpus.0
            );
        }
        if online < 2 {
            eprintln!("warning: only {online} core available to this process");
        }
        let scale = |full: u64, min: u64| (iters * full / 50_000).max(min);
        Ok(Self {
            rounds,
            quick: a.quick,
            cpus,
            iters,
            tcp_iters: iters.min(20_000),
            warmup: (iters / 10).clamp(100, 10_000),
            bw_budget: if a.quick { 16 << 20 } else { 256 << 20 },
            bw_min_windows: if a.quick { 3 } else { 10 },
            bw_max_windows: if a.quick { 200 } else { 2000 },
            batches: scale(2000, 20),
            op_iters: scale(20_000, 200),
            flop_repeats: scale(200, 10),
            peer_bw_windows: if a.quick { 10 } else { 100 },
            only: a.only.clone(),
        })
    }

    /// Whether this run measures `level`.
    pub fn runs(&self, level: Level) -> bool {
        self.only.is_empty() || self.only.contains(&level)
    }

    /// Barriers per round of the `n`-node barrier figures, memchan and OSHMEM
    /// alike. Every node beyond the second shares the two cores, so a barrier
    /// costs about a time slice per extra node: the counts fall with `n` to keep
    /// each figure to a second or two per round.
    pub fn nodes_barrier_iters(&self, n: usize) -> u64 {
        let full = if n <= 8 { 1000 } else { 200 };
        (self.iters * full / 50_000).max(20)
    }

    /// Arguments shared by the two sides of a ping-pong.
    pub fn pingpong_args(&self, iters: u64) -> Vec<String> {
        vec![
            "--iters".into(),
            iters.to_string(),
            "--warmup".into(),
            self.warmup.min(iters).max(10).to_string(),
        ]
    }

    /// Arguments of a bandwidth sweep.
    pub fn sweep_args(&self) -> Vec<String> {
        let sizes: Vec<String> = SIZES.iter().map(|s| s.to_string()).collect();
        vec![
            "--sizes".into(),
            sizes.join(","),
            "--budget".into(),
            self.bw_budget.to_string(),
            "--min-windows".into(),
            self.bw_min_windows.to_string(),
            "--max-windows".into(),
            self.bw_max_windows.to_string(),
        ]
    }
}

/// The reference steps of one round.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    Cacheline,
    Tcp,
    Memcpy,
    StoreFence,
    Flops,
}

/// Figure ids used inside the bench (the JSON keys are built in `report`).
pub mod fig {
    pub const LATENCY: &str = "latency";
    pub const OVERHEAD: &str = "overhead";
    pub const ACK: &str = "ack";
    pub const LOCK: &str = "lock";
    pub const BARRIER: &str = "barrier";
    /// `barrier/<n>`: the barrier of `n` nodes on one host.
    pub fn barrier_nodes(n: usize) -> String {
        format!("barrier/{n}")
    }
    pub const NOTIFY: &str = "notify";
    pub const FLOP: &str = "flop";
    /// Message passing (`mp.rs`): 8-byte one-way latency, ns.
    pub const MP_LATENCY: &str = "mp_latency";
    /// Message passing: ns per window of 64 × 1 MiB.
    pub const MP_BANDWIDTH: &str = "mp_bandwidth";
    /// `bandwidth/<size>`: samples are ns per window of 64 transfers.
    pub fn bandwidth(size: usize) -> String {
        format!("bandwidth/{size}")
    }
}

/// All samples of a run: figure → series → samples (ns), pooled over rounds,
/// and the per-round medians (figure → series → round → median).
#[derive(Debug, Default)]
pub struct SampleSet {
    pub samples: BTreeMap<String, BTreeMap<String, Vec<f64>>>,
    pub round_medians: BTreeMap<String, BTreeMap<String, BTreeMap<usize, f64>>>,
    /// Where each (figure, series, round)'s samples start in `samples` (a round's
    /// samples are contiguous: rounds run one after another).
    round_starts: BTreeMap<(String, String, usize), usize>,
    /// The round now running (0-based).
    pub round: usize,
}

impl SampleSet {
    /// Adds samples of the running round. A series added more than once in a round
    /// (the raw reference of both message-passing pairs) gets the median of all its
    /// samples of that round.
    pub fn add(&mut self, figure: &str, series: &str, v: Vec<f64>) {
        let all = self
            .samples
            .entry(figure.to_string())
            .or_default()
            .entry(series.to_string())
            .or_default();
        let start = *self
            .round_starts
            .entry((figure.to_string(), series.to_string(), self.round))
            .or_insert(all.len());
        all.extend(v);
        if let Some(s) = stats::summarize(&all[start..]) {
            self.round_medians
                .entry(figure.to_string())
                .or_default()
                .entry(series.to_string())
                .or_default()
                .insert(self.round, s.median);
        }
    }

    pub fn get(&self, figure: &str, series: &str) -> Option<&[f64]> {
        self.samples.get(figure)?.get(series).map(|v| v.as_slice())
    }
}

/// Facts about the run that go into the report.
#[derive(Debug)]
pub struct RunInfo {
    pub tsc_ghz: f64,
    pub tsc_step_ns: f64,
    pub timer_read_ns: f64,
    pub memchan: Result<(), String>,
    pub peers: String,
    pub peer_versions: BTreeMap<String, String>,
    pub notes: Vec<String>,
    /// The JSON line of every peer run, as the C program printed it.
    pub peer_runs: Vec<serde_json::Value>,
    /// When the run started (UTC, ISO 8601).
    pub date: String,
    pub elapsed_s: f64,
    /// /proc/loadavg (1, 5, 15 min) when the run started.
    pub loadavg_at_start: Vec<String>,
}

/// Removes the run's scratch directory on every exit path.
pub struct ScratchDir(pub PathBuf);

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Writes the JSON report to `path` (`--json`).
pub fn write_json(path: &Path, json: &serde_json::Value) -> Result<()> {
    let text = serde_json::to_string_pretty(json).context("serialising the JSON report")?;
    std::fs::write(path, text + "\n").with_context(|| format!("writing {}", path.display()))?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

/// The bench's outcome once everything measured is printed: an error listing
/// the memchan measurements that failed, if any.
pub fn check_failures(failures: &[String]) -> Result<()> {
    if !failures.is_empty() {
        bail!(
            "{} memchan measurement(s) failed (the tables show what was measured):\n{}",
            failures.len(),
            failures.join("\n")
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_round_median_covers_every_add_of_that_round_only() {
        let mut s = SampleSet::default();
        s.add("f", "x", vec![1.0, 2.0, 3.0]);
        s.add("f", "x", vec![10.0, 11.0, 12.0]);
        s.round = 1;
        s.add("f", "x", vec![100.0]);
        let m = &s.round_medians["f"]["x"];
        // Round 0: the median of all six samples, not of the last add alone.
        assert_eq!(
            m[&0],
            stats::summarize(&[1.0, 2.0, 3.0, 10.0, 11.0, 12.0])
                .unwrap()
                .median
        );
        assert_eq!(m[&1], 100.0);
        assert_eq!(s.get("f", "x").map(<[f64]>::len), Some(7));
    }
}
