//! `memchan bench`: memchan measured against the physical limits and the peers (Open
//! MPI, OpenSHMEM, UCX, TCP) on the same cores in the same run, judged against the
//! targets of the project's spec. The `memchan` binary's `bench` subcommand is a thin
//! wrapper over [`run`], and its hidden `bench-worker` subcommand over
//! [`worker_main`]: the coordinator re-executes that binary for every worker process.
//!
//! This file is the coordinator. It calibrates the timer, starts worker processes
//! pinned to the two cores, runs every reference and every memchan measurement
//! alternately in R rounds, runs the MPI/OpenSHMEM peers, pools all samples and
//! prints one table per figure. The C peers are in `peers/`, the plot script is
//! `plot.py`, both embedded at build time.
//!
//! # Codemap
//!
//! No module imports one that imports it back (the modules form no cycle).
//!
//! - coordinators: this file (one host), `hosts` (`--hosts`: two network
//!   namespaces), `scale` (`--scale`); `dispatch` is the worker process's entry.
//! - measurements: `refs` (the references: cache line, TCP, memcpy, store + fence,
//!   flops), `memchan_side` (the raw level), `mp` (message passing), `rma`,
//!   `deposit`, `global_clock`, `ip` (TCP/IP over memchan), `shmem` (the OpenSHMEM
//!   level), `peers` and `ucx` (the MPI, OpenSHMEM and UCX peers).
//! - shared by the measurements: `session` (a worker's cluster session), `pingpong`
//!   (the one ping-pong driver), `turns` (two compared programs taking turns),
//!   `worker` (spawning and reaping worker processes), `timer` (the TSC).
//! - results: `model` (flags, run parameters, samples), `stats`, `table` (a figure,
//!   its targets and verdicts), `report` (text and JSON), `plot` (`--plot`),
//!   `results` (`--report` and the README's verdict block).

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::{Context, Result};
use indicatif::{ProgressBar, ProgressStyle};

mod deposit;
mod dispatch;
mod global_clock;
mod hosts;
mod ip;
mod memchan_side;
mod model;
mod mp;
mod peers;
mod pingpong;
mod plot;
mod refs;
mod report;
mod results;
mod rma;
mod scale;
mod session;
mod shmem;
mod state;
mod stats;
mod table;
mod timer;
mod turns;
mod ucx;
mod worker;

pub use dispatch::main as worker_main;
pub use model::BenchArgs;
pub use worker::WorkerArgs;

use model::{check_failures, fig, write_json, Config, Level, RunInfo, SampleSet, ScratchDir, Step};
use timer::Clock;
use worker::{take, Kind, Launcher, Role};

/// One round: each reference step, with the memchan measurements and the
/// peers of the same figures right next to it.
const STEPS: [Step; 5] = [
    Step::Cacheline,
    Step::Tcp,
    Step::Memcpy,
    Step::StoreFence,
    Step::Flops,
];

/// Entry point of `memchan bench`.
pub fn run(args: BenchArgs) -> Result<()> {
    if let (true, Some(readme), Some(dir)) = (args.readme_only, &args.readme, &args.report) {
        return results::update_readme(readme, dir).map(drop);
    }
    if args.hosts {
        return hosts::run(&args);
    }
    if args.scale {
        return scale::run(&args);
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
        timer_read_ns: timer::read_cost_ns(&clock),
        memchan: memchan_side::available(),
        peers: String::new(),
        peer_versions: BTreeMap::new(),
        notes: Vec::new(),
        peer_runs: Vec::new(),
        date,
        elapsed_s: 0.0,
        loadavg_at_start: report::loadavg(),
    };
    if let Err(why) = &info.memchan {
        eprintln!("memchan measurements skipped: {why}");
    }

    // The rounds carry the raw and message-passing levels (`--only`).
    let rounds_on = cfg.runs(Level::Raw) || cfg.runs(Level::Mp);
    // Peers: find the toolchains and compile once.
    let peer_set = if args.no_peers {
        info.peers = "skipped (--no-peers)".into();
        None
    } else if !rounds_on {
        info.peers = "not needed (--only)".into();
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

    // The UCX peer of the message-passing figures (`ucx.rs`), beside the MPI ones.
    let ucx_peer = if args.no_peers || !cfg.runs(Level::Mp) {
        None
    } else {
        match ucx::prepare() {
            Ok(u) => {
                if let Some(v) = &u.version {
                    info.peer_versions.insert(ucx::SERIES.into(), v.clone());
                }
                Some(u)
            }
            Err(why) => {
                eprintln!("{why}");
                info.notes.push(why);
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
                .into_iter()
                .filter(|m| {
                    cfg.runs(if mp::is_mp_kind(m.kind) {
                        Level::Mp
                    } else {
                        Level::Raw
                    })
                })
                .collect()
        } else {
            vec![]
        }
    };
    // Message passing alone needs only memcpy (its bandwidth's reference) and the
    // Open MPI peers.
    let reference_on = |s: Step| cfg.runs(Level::Raw) || (cfg.runs(Level::Mp) && s == Step::Memcpy);
    let peer_on = |p: &peers::Program| cfg.runs(Level::Raw) || p.series == "mpi";
    let rounds = if rounds_on { cfg.rounds } else { 0 };
    let steps_per_round: usize = STEPS
        .iter()
        .map(|&s| usize::from(reference_on(s)) + memchan_kinds(s).len())
        .sum();
    let peer_runs = peer_set
        .as_ref()
        .map_or(0, |p| p.programs.iter().filter(|x| peer_on(x)).count());
    let peer_rounds = if args.peers_once { 1 } else { rounds };
    let ucx_runs = usize::from(ucx_peer.is_some());
    let total = (steps_per_round * rounds + (peer_runs + ucx_runs) * peer_rounds) as u64;
    let pb = ProgressBar::new(total);
    pb.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:32} {pos}/{len} {msg}")
            .expect("progress template"),
    );

    let mut failures: Vec<String> = Vec::new();
    for round in 0..rounds {
        set.round = round;
        let msg = |what: &str| format!("round {}/{}: {what}", round + 1, cfg.rounds);
        let peers_now = peer_set
            .as_ref()
            .filter(|_| !(args.peers_once && round > 0));
        let ucx_now = ucx_peer
            .as_ref()
            .filter(|_| !(args.peers_once && round > 0));
        // Whether UCX's latency took turns with the message latency pairs this round.
        let mut ucx_beside = false;
        for step in STEPS {
            // Alternate who goes first, so drift within a round does not
            // systematically favour one side.
            let memchan_first = round % 2 == 1;
            // The 2-node barrier and its OSHMEM peer run together, in turns (below).
            let beside = peers_now
                .and_then(|p| {
                    p.programs
                        .iter()
                        .find(|x| x.after == step && x.is_barrier_pair())
                })
                .filter(|_| memchan_kinds(step).contains(&memchan_side::BARRIER));
            // The message latency pairs and UCX's latency run together, in turns.
            let (with_ucx, pairs): (Vec<_>, Vec<_>) = memchan_kinds(step)
                .into_iter()
                // The N-node barriers run at the end of the round (below).
                .filter(|m| m.nodes <= 2 && !(beside.is_some() && *m == memchan_side::BARRIER))
                .partition(|m| ucx_now.is_some() && mp::is_latency_kind(m.kind));
            for memchan_turn in [memchan_first, !memchan_first] {
                if memchan_turn {
                    run_memchan(
                        &pairs,
                        &mut launcher,
                        &cfg,
                        &mut set,
                        &pb,
                        &msg,
                        &mut failures,
                    );
                    // `with_ucx` is empty without UCX this round.
                    for (m, u) in with_ucx.iter().filter_map(|m| Some((m, ucx_now?))) {
                        pb.set_message(msg(&format!("{m} and ucx_perftest in turns")));
                        let (mine, theirs) = mp::latency_beside_ucx(
                            m.kind,
                            u,
                            &mut launcher,
                            &cfg,
                            &mut set,
                            memchan_first,
                        );
                        ucx_beside = true;
                        if let Err(e) = mine {
                            let note = format!(
                                "memchan measurement {m} failed in round {}: {e:#}",
                                round + 1
                            );
                            pb.println(&note);
                            failures.push(note);
                        }
                        if let Err(e) = theirs {
                            let note = format!(
                                "peer ucx (turns with {m}) failed in round {}: {e:#}",
                                round + 1
                            );
                            pb.println(&note);
                            info.notes.push(note);
                        }
                        pb.inc(1);
                    }
                } else if reference_on(step) {
                    pb.set_message(msg(&format!("{step:?}")));
                    reference(step, &mut launcher, &cfg, &mut set).with_context(|| {
                        format!("reference measurement {step:?}, round {}", round + 1)
                    })?;
                    pb.inc(1);
                }
            }
            let Some(p) = peers_now else { continue };
            if let Some(prog) = beside {
                pb.set_message(msg(&format!(
                    "{} and {} in turns",
                    memchan_side::BARRIER,
                    prog.name
                )));
                let (mine, theirs) = memchan_side::barrier_beside_peer(
                    p,
                    prog,
                    &mut launcher,
                    &cfg,
                    &mut set,
                    memchan_first,
                );
                if let Err(e) = mine {
                    let note = format!(
                        "memchan measurement {} failed in round {}: {e:#}",
                        memchan_side::BARRIER,
                        round + 1
                    );
                    pb.println(&note);
                    failures.push(note);
                }
                record_peer(prog, theirs, round, &mut info, &mut set, &pb);
                pb.inc(2);
            }
            for prog in p.programs.iter().filter(|x| {
                x.after == step && peer_on(x) && !beside.is_some_and(|b| std::ptr::eq(b, *x))
            }) {
                pb.set_message(msg(&prog.name));
                record_peer(
                    prog,
                    p.run(prog, &cfg, &clock),
                    round,
                    &mut info,
                    &mut set,
                    &pb,
                );
                pb.inc(1);
            }
        }
        // The N-node barriers (dozens of processes on the two cores) after every
        // step and its peers (whose own N-node runs come last among them): such runs
        // can move this VM between its fast and slow state (a cache-line transfer of
        // ~50 or ~250 ns), and the 2-node figures of both sides must be measured in
        // the same one.
        let crowds: Vec<_> = STEPS
            .iter()
            .flat_map(|&s| memchan_kinds(s))
            .filter(|m| m.nodes > 2)
            .collect();
        run_memchan(
            &crowds,
            &mut launcher,
            &cfg,
            &mut set,
            &pb,
            &msg,
            &mut failures,
        );
        if let Some(u) = ucx_now {
            pb.set_message(msg("ucx_perftest"));
            if let Err(e) = u.measure(&launcher, &cfg, &mut set, !ucx_beside) {
                let note = format!("peer ucx failed in round {}: {e:#}", round + 1);
                pb.println(&note);
                info.notes.push(note);
            }
            pb.inc(1);
        }
    }
    // Strided deposit and put with signal (`deposit.rs`): after the rounds, in this
    // process, each against its own reference measured beside it.
    let mut deposit_tables = Vec::new();
    if memchan_on && cfg.runs(Level::Raw) {
        pb.set_message("strided deposit, put with signal");
        match deposit::tables(&cfg) {
            Ok(t) => deposit_tables = t,
            Err(e) => failures.push(format!("memchan deposit measurements failed: {e:#}")),
        }
    }
    // The message-passing sweep of the per-level plot (`mp::sweep`), with --plot only.
    if memchan_on && args.plot.is_some() && cfg.runs(Level::Mp) {
        pb.set_message("message-passing bandwidth sweep (for --plot)");
        if let Err(e) = mp::sweep(&mut launcher, &cfg, &mut set) {
            failures.push(format!("memchan message-passing sweep failed: {e:#}"));
        }
    }
    // The IP level (seed 002's third): TCP over memchan ip against TCP over a veth.
    let ip_figures = match ip::unavailable() {
        _ if !cfg.runs(Level::Ip) => Err("not selected (--only)".to_string()),
        Some(why) => Err(format!("skipped: {why}")),
        None => {
            let sweep = args.plot.is_some();
            ip::measure(
                &cfg,
                &launcher.clock,
                &|m| pb.set_message(m.to_string()),
                sweep,
            )
            .map_err(|e| {
                let note = format!("memchan ip measurement failed: {e:#}");
                failures.push(note.clone());
                note
            })
        }
    };
    // The OpenSHMEM level (issue 14): one C program built with both oshccs.
    let shmem_figures = if !cfg.runs(Level::Shmem) {
        Err("not selected (--only)".to_string())
    } else if args.no_peers {
        Err("skipped (--no-peers)".to_string())
    } else {
        shmem::prepare(&scratch.0).map(|b| {
            let rounds = if args.peers_once { 1 } else { cfg.rounds };
            let f = shmem::measure(&b, &cfg, &launcher.clock, rounds, &|m| {
                pb.set_message(m.to_string())
            });
            failures.extend(f.memchan_failures.iter().cloned());
            info.notes.extend(f.notes.iter().cloned());
            f
        })
    };
    pb.finish_and_clear();
    if memchan_on && cfg.runs(Level::Raw) {
        match global_clock::measure_one_host(&mut set) {
            Ok(notes) => info.notes.extend(notes),
            Err(e) => failures.push(format!("memchan measurement clock_bound_ns failed: {e:#}")),
        }
    }
    info.elapsed_s = started.elapsed().as_secs_f64();
    info.notes.extend(failures.iter().cloned());

    let mut rep = report::Report::build(&cfg, &set, &info);
    rep.tables.extend(deposit_tables);
    // What is printed is also the report's tables (`--report`).
    let mut text = rep.render_text();
    match &ip_figures {
        Ok(f) => text.push_str(&f.render()),
        Err(why) if cfg.runs(Level::Ip) => {
            text.push_str(&format!("TCP/IP over memchan: not measured ({why})\n"))
        }
        Err(_) => {}
    }
    let memcpy = state::memcpy_gbps(&set);
    match &shmem_figures {
        Ok(f) => text.push_str(&f.render(memcpy)),
        Err(why) if cfg.runs(Level::Shmem) => {
            text.push_str(&format!("OpenSHMEM level: not measured ({why})\n"))
        }
        Err(_) => {}
    }
    print!("{text}");
    let json = (args.json.is_some() || args.report.is_some()).then(|| {
        let mut j = rep.to_json();
        deposit::add_sweep_json(&mut j, &rep.tables);
        match &ip_figures {
            Ok(f) => f.merge_json(&mut j),
            Err(why) => table::note_skipped(&mut j, "ip", why),
        }
        match &shmem_figures {
            Ok(f) => f.merge_json(&mut j, memcpy),
            Err(why) => table::note_skipped(&mut j, "shmem", why),
        }
        j
    });
    if let (Some(path), Some(j)) = (&args.json, &json) {
        write_json(path, j)?;
    }
    let mut plots = Vec::new();
    if let Some(dir) = &args.plot {
        plots = plot::write(dir, &rep, &set, ip_figures.as_ref().ok())
            .with_context(|| format!("plotting into {}", dir.display()))?;
        for f in &plots {
            eprintln!("wrote {}", f.display());
        }
    }
    if let (Some(dir), Some(j)) = (&args.report, &json) {
        results::write(dir, j, &text, &plots)
            .with_context(|| format!("writing the report into {}", dir.display()))?;
        if let Some(readme) = &args.readme {
            results::update_readme(readme, dir)?;
        }
    }
    check_failures(&failures)
}

/// Runs memchan measurements, advancing the progress bar. A failure does not
/// stop the run (the references are still worth having): it is noted, and
/// the bench exits with an error after printing everything.
fn run_memchan(
    kinds: &[memchan_side::Measurement],
    l: &mut Launcher,
    cfg: &Config,
    set: &mut SampleSet,
    pb: &ProgressBar,
    msg: &dyn Fn(&str) -> String,
    failures: &mut Vec<String>,
) {
    for &k in kinds {
        pb.set_message(msg(&k.to_string()));
        if let Err(e) = measure(k, l, cfg, set) {
            let note = format!(
                "memchan measurement {k} failed in round {}: {e:#}",
                set.round + 1
            );
            pb.println(&note);
            failures.push(note);
        }
        pb.inc(1);
    }
}

/// Runs one memchan measurement through the module that owns its kind.
fn measure(
    m: memchan_side::Measurement,
    l: &mut Launcher,
    cfg: &Config,
    set: &mut SampleSet,
) -> Result<()> {
    match m.kind {
        Kind::MemchanRma => rma::measure(l, cfg, set),
        k if mp::is_mp_kind(k) => mp::measure(k, l, cfg, set),
        _ => memchan_side::measure(m, l, cfg, set),
    }
}

/// Adds a peer program's run to `set` and to the run's record, or notes its failure.
fn record_peer(
    prog: &peers::Program,
    run: Result<peers::PeerRun>,
    round: usize,
    info: &mut RunInfo,
    set: &mut SampleSet,
    pb: &ProgressBar,
) {
    match run {
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
            let note = format!("peer {} failed in round {}: {e:#}", prog.name, round + 1);
            pb.println(&note);
            info.notes.push(note);
        }
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
