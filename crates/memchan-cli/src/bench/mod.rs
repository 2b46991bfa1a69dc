//! `memchan bench`: the coordinator. It calibrates the clock, starts worker
//! processes pinned to the two cores (re-executing this binary), runs every
//! reference and every memchan measurement alternately in R rounds, runs the
//! MPI/OpenSHMEM peers, pools all samples and prints one table per figure.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{bail, Context, Result};
use clap::Args;
use indicatif::{ProgressBar, ProgressStyle};

pub mod clock;
pub mod hosts;
pub mod memchan_side;
pub mod peers;
pub mod pingpong;
pub mod plot;
pub mod refs;
pub mod report;
pub mod stats;
pub mod table;
pub mod worker;

use clock::Clock;
use worker::{Kind, Launcher, Role};

/// Transfer sizes of the bandwidth sweep (bytes).
pub const SIZES: [usize; 8] = [8, 64, 512, 4 << 10, 32 << 10, 256 << 10, 1 << 20, 4 << 20];

/// Options of `memchan bench`.
#[derive(Debug, Clone, Args)]
pub struct BenchArgs {
    /// Number of rounds. Each round runs every reference and every memchan
    /// measurement once, alternately (the order flips every other round), so
    /// that drift of the machine (the cache-line limit moves 70–120 ns, memcpy
    /// 17–33 GB/s from run to run) hits both sides alike; the samples of all
    /// rounds are pooled. [default: 5, or 1 with --quick]
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

    /// Write PNG plots into DIR (bandwidth vs transfer size; latency histogram
    /// and CDF), together with the data they are drawn from (bench_data.json).
    /// Needs python3 with matplotlib (scripts/setup.sh installs it).
    #[arg(long, value_name = "DIR")]
    pub plot: Option<PathBuf>,

    /// The two cores to pin to: the timing ("ping") side first, then the
    /// answering ("pong") side. The peers are bound to the same two cores.
    #[arg(long, value_delimiter = ',', default_value = "0,1", value_name = "A,B")]
    pub cpus: Vec<usize>,

    /// Do not run the Open MPI / OpenSHMEM peers.
    #[arg(long)]
    pub no_peers: bool,

    /// Run the peers in the first round only instead of in every round
    /// (each peer costs an mpirun/oshrun start-up of about half a second).
    #[arg(long)]
    pub peers_once: bool,

    /// Run only the host figures: two network namespaces joined by a veth
    /// pair, and over it raw TCP (blocking and busy-polling 8-byte ping-pong,
    /// 1 MiB-write stream), Open MPI over TCP and memchan through a hub.
    /// Needs root (CAP_NET_ADMIN) and iproute2.
    #[arg(long)]
    pub hosts: bool,
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
}

impl Config {
    fn from_args(a: &BenchArgs) -> Result<Self> {
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
        })
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

/// One round: each reference step, with the memchan measurements and the
/// peers of the same figures right next to it.
const STEPS: [Step; 5] = [
    Step::Cacheline,
    Step::Tcp,
    Step::Memcpy,
    Step::StoreFence,
    Step::Flops,
];

/// Figure ids used inside the bench (the JSON keys are built in `report`).
pub mod fig {
    pub const LATENCY: &str = "latency";
    pub const OVERHEAD: &str = "overhead";
    pub const ACK: &str = "ack";
    pub const LOCK: &str = "lock";
    pub const BARRIER: &str = "barrier";
    pub const NOTIFY: &str = "notify";
    pub const FLOP: &str = "flop";
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
    /// The round now running (0-based).
    pub round: usize,
}

impl SampleSet {
    pub fn add(&mut self, figure: &str, series: &str, v: Vec<f64>) {
        if let Some(s) = stats::summarize(&v) {
            self.round_medians
                .entry(figure.to_string())
                .or_default()
                .entry(series.to_string())
                .or_default()
                .insert(self.round, s.median);
        }
        self.samples
            .entry(figure.to_string())
            .or_default()
            .entry(series.to_string())
            .or_default()
            .extend(v);
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
}

/// Removes the run's scratch directory on every exit path.
struct ScratchDir(PathBuf);

impl Drop for ScratchDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Entry point of `memchan bench`.
pub fn run(args: BenchArgs) -> Result<()> {
    if args.hosts {
        return hosts::run(&args);
    }
    let started = std::time::Instant::now();
    let date = report::iso_date_now();
    let cfg = Config::from_args(&args)?;
    if args.plot.is_some() {
        plot::check_python().context("--plot")?;
    }

    let scratch =
        ScratchDir(std::env::temp_dir().join(format!("memchan-bench-{}", std::process::id())));
    std::fs::create_dir_all(&scratch.0)
        .with_context(|| format!("creating {}", scratch.0.display()))?;

    let (clock, step_ns) = Clock::calibrate(Duration::from_millis(50));
    let mut info = RunInfo {
        tsc_ghz: clock.ghz,
        tsc_step_ns: step_ns,
        timer_read_ns: clock::read_cost_ns(&clock),
        memchan: memchan_side::available(),
        peers: String::new(),
        peer_versions: BTreeMap::new(),
        notes: Vec::new(),
        peer_runs: Vec::new(),
        date,
        elapsed_s: 0.0,
    };
    if let Err(why) = &info.memchan {
        eprintln!("memchan measurements skipped: {why}");
    }

    // Peers: find the toolchains and compile once.
    let peer_set = if args.no_peers {
        info.peers = "skipped (--no-peers)".into();
        None
    } else {
        match peers::prepare(&scratch.0, cfg.cpus)? {
            peers::Prepared::Ready(p) => {
                info.peers = if args.peers_once || cfg.rounds == 1 {
                    "run once (first round)".into()
                } else {
                    format!("run every round ({} rounds)", cfg.rounds)
                };
                info.peer_versions = p.versions.clone();
                for n in &p.notes {
                    eprintln!("{n}");
                    info.notes.push(n.clone());
                }
                Some(p)
            }
            peers::Prepared::Skipped(why) => {
                eprintln!("{why}");
                info.peers = why;
                None
            }
        }
    };

    let mut launcher = Launcher::new(&scratch.0, clock)?;
    let mut set = SampleSet::default();

    let memchan_on = info.memchan.is_ok();
    let memchan_kinds = |s: Step| {
        if memchan_on {
            memchan_side::kinds_after(s)
        } else {
            &[]
        }
    };
    let steps_per_round: usize = STEPS.iter().map(|&s| 1 + memchan_kinds(s).len()).sum();
    let peer_runs = peer_set.as_ref().map_or(0, |p| p.programs.len());
    let peer_rounds = if args.peers_once { 1 } else { cfg.rounds };
    let total = (steps_per_round * cfg.rounds + peer_runs * peer_rounds) as u64;
    let pb = ProgressBar::new(total);
    pb.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:32} {pos}/{len} {msg}")
            .expect("progress template"),
    );

    let mut failures: Vec<String> = Vec::new();
    for round in 0..cfg.rounds {
        set.round = round;
        let msg = |what: &str| format!("round {}/{}: {what}", round + 1, cfg.rounds);
        let peers_now = peer_set
            .as_ref()
            .filter(|_| !(args.peers_once && round > 0));
        for step in STEPS {
            // Alternate who goes first, so drift within a round does not
            // systematically favour one side.
            let memchan_first = round % 2 == 1;
            for memchan_turn in [memchan_first, !memchan_first] {
                if memchan_turn {
                    run_memchan(
                        memchan_kinds(step),
                        &mut launcher,
                        &cfg,
                        &mut set,
                        &pb,
                        &msg,
                        &mut failures,
                    );
                } else {
                    pb.set_message(msg(&format!("{step:?}")));
                    reference(step, &mut launcher, &cfg, &mut set).with_context(|| {
                        format!("reference measurement {step:?}, round {}", round + 1)
                    })?;
                    pb.inc(1);
                }
            }
            let Some(p) = peers_now else { continue };
            for prog in p.programs.iter().filter(|x| x.after == step) {
                pb.set_message(msg(prog.name));
                match p.run(prog, &cfg, &clock) {
                    Ok(r) => {
                        info.peer_runs.push(serde_json::json!({
                            "program": prog.name,
                            "round": round + 1,
                            "figure": r.line.figure,
                            "unit": r.line.unit,
                            "median": r.line.median,
                            "p99": r.line.p99,
                            "samples": r.line.samples,
                        }));
                        set.add(&prog.figure_id(), prog.series, r.samples_ns);
                    }
                    Err(e) => {
                        let note =
                            format!("peer {} failed in round {}: {e:#}", prog.name, round + 1);
                        pb.println(&note);
                        info.notes.push(note);
                    }
                }
                pb.inc(1);
            }
        }
    }
    pb.finish_and_clear();
    info.elapsed_s = started.elapsed().as_secs_f64();
    info.notes.extend(failures.iter().cloned());

    let rep = report::Report::build(&cfg, &set, &info);
    print!("{}", rep.render_text());
    if let Some(path) = &args.json {
        write_json(path, &rep.to_json())?;
    }
    if let Some(dir) = &args.plot {
        let files = plot::write(dir, &rep, &set)
            .with_context(|| format!("plotting into {}", dir.display()))?;
        for f in files {
            eprintln!("wrote {}", f.display());
        }
    }
    check_failures(&failures)
}

/// Writes the JSON report to `path` (`--json`).
fn write_json(path: &Path, json: &serde_json::Value) -> Result<()> {
    let text = serde_json::to_string_pretty(json).context("serialising the JSON report")?;
    std::fs::write(path, text + "\n").with_context(|| format!("writing {}", path.display()))?;
    eprintln!("wrote {}", path.display());
    Ok(())
}

/// The bench's outcome once everything measured is printed: an error listing
/// the memchan measurements that failed, if any.
fn check_failures(failures: &[String]) -> Result<()> {
    if !failures.is_empty() {
        bail!(
            "{} memchan measurement(s) failed (the tables show what was measured):\n{}",
            failures.len(),
            failures.join("\n")
        );
    }
    Ok(())
}

/// Runs memchan measurements, advancing the progress bar. A failure does not
/// stop the run (the references are still worth having): it is noted, and
/// the bench exits with an error after printing everything.
fn run_memchan(
    kinds: &[Kind],
    l: &mut Launcher,
    cfg: &Config,
    set: &mut SampleSet,
    pb: &ProgressBar,
    msg: &dyn Fn(&str) -> String,
    failures: &mut Vec<String>,
) {
    for &k in kinds {
        pb.set_message(msg(&format!("{k:?}")));
        if let Err(e) = memchan_side::measure(k, l, cfg, set) {
            let note = format!(
                "memchan measurement {k:?} failed in round {}: {e:#}",
                set.round + 1
            );
            pb.println(&note);
            failures.push(note);
        }
        pb.inc(1);
    }
}

/// Runs one reference step (both workers when it is a pair).
fn reference(step: Step, l: &mut Launcher, cfg: &Config, set: &mut SampleSet) -> Result<()> {
    let (p, q) = cfg.cpus;
    match step {
        Step::Cacheline => {
            let name = format!("/{}", l.unique("memchan-bench-line"));
            let _region = refs::ShmRegion::create(&name, refs::REGION_LEN)?;
            let mut extra = cfg.pingpong_args(cfg.iters);
            extra.extend(["--shm".to_string(), name]);
            let out = worker::pair(l, Kind::Cacheline, (p, q), &extra)?;
            set.add(fig::LATENCY, "cacheline_limit", take(out, "one_way")?);
        }
        Step::Tcp => {
            let port = l.free_port()?;
            let mut extra = cfg.pingpong_args(cfg.tcp_iters);
            extra.extend(["--port".to_string(), port.to_string()]);
            let out = worker::pair(l, Kind::Tcp, (p, q), &extra)?;
            set.add(fig::LATENCY, "tcp_loopback", take(out, "one_way")?);
        }
        Step::Memcpy => {
            let out = l
                .spawn(Kind::Memcpy, Role::Solo, p, &cfg.sweep_args())?
                .finish()?;
            for (size, v) in out.series {
                let size: usize = size.parse().context("memcpy worker: bad size")?;
                set.add(&fig::bandwidth(size), "memcpy", v);
            }
        }
        Step::StoreFence => {
            let extra = ["--iters".to_string(), cfg.batches.to_string()];
            let out = l.spawn(Kind::StoreFence, Role::Solo, p, &extra)?.finish()?;
            set.add(
                fig::OVERHEAD,
                "local_store_fence",
                take(out, "local_store_fence")?,
            );
        }
        Step::Flops => {
            let extra = ["--iters".to_string(), cfg.flop_repeats.to_string()];
            let out = l.spawn(Kind::Flops, Role::Solo, p, &extra)?.finish()?;
            set.add(fig::FLOP, "linpack_100", take(out, "linpack_100")?);
        }
    }
    Ok(())
}

/// Takes one named series out of a worker's output.
pub fn take(mut out: worker::WorkerOutput, name: &str) -> Result<Vec<f64>> {
    out.series
        .remove(name)
        .with_context(|| format!("worker output has no series {name:?}"))
}
