//! The peers: small MPI and OpenSHMEM programs (C sources in `peers/`,
//! embedded in the binary) compiled at bench time with mpicc / oshcc into the
//! run's scratch directory and run with mpirun / oshrun on the same two cores:
//! two ranks, one per core, or for the N-node barrier N ranks sharing them,
//! placed as memchan's N workers are (rank i on the first core when i is even).
//!
//! Each program prints one JSON line (median and p99) and, given a fourth
//! argument, writes its raw samples to that file; the bench pools the raw
//! samples over rounds and cross-checks the line.
//!
//! Debian's Open MPI 4.1 notes: running as root needs `--allow-run-as-root`
//! plus OMPI_ALLOW_RUN_AS_ROOT(_CONFIRM)=1; OSHMEM uses the UCX spml (posix /
//! sysv shared-memory transports on one host) and, with Open MPI 4.1.4 and
//! UCX 1.13, crashes in `shmem_finalize` (a memory-release hook left pointing
//! into an unloaded component) unless the memory patcher is disabled with
//! `--mca memory ^patcher`, which the bench passes to oshrun.
//!
//! More ranks than cores (the 8- and 64-PE barrier) need `--oversubscribe`,
//! `--bind-to core:overload-allowed` to keep the ranks pinned, and
//! `--mca mpi_yield_when_idle 1`: Open MPI turns yielding on by itself only
//! when it sees the oversubscription, which it does not through a rankfile, and
//! without it each PE spins through its whole time slice: 8 PEs' barrier took
//! 36 ms instead of 18 µs.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context, Result};
use serde::Deserialize;

use super::model::{fig, Config, Step, BARRIER_NODES};
use super::timer::Clock;
use super::worker::group_cpu;

const COMMON_H: &str = include_str!("../peers/peer_common.h");
const GET_C: &str = include_str!("../peers/shmem_get.c");
const FADD_C: &str = include_str!("../peers/shmem_fadd.c");

/// Which Open MPI front end builds and launches a program.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tool {
    Mpi,
    Oshmem,
}

impl Tool {
    fn compiler(self) -> &'static str {
        match self {
            Tool::Mpi => "mpicc",
            Tool::Oshmem => "oshcc",
        }
    }
    fn launcher(self) -> &'static str {
        match self {
            Tool::Mpi => "mpirun",
            Tool::Oshmem => "oshrun",
        }
    }
}

/// What a program's samples are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Unit {
    /// ns per operation.
    Ns,
    /// GB/s per window of 64 × 1 MiB (converted to ns per window).
    GbpsWindow1MiB,
}

/// How many iterations a program runs, from the run's configuration.
#[derive(Debug, Clone, Copy)]
enum Iters {
    Latency,
    BwWindows,
    Batches,
    Ops,
    /// The barrier of `np` nodes ([`Config::nodes_barrier_iters`]).
    NodesBarrier,
}

/// One peer program.
#[derive(Debug, Clone)]
pub struct Program {
    /// The run's name (the source's, with the rank count when not 2).
    pub name: String,
    /// The C file's stem: programs of the same source share one executable.
    source_name: &'static str,
    source: &'static str,
    pub tool: Tool,
    /// Ranks (PEs) of a run.
    pub np: usize,
    figure: String,
    pub series: &'static str,
    unit: Unit,
    iters: Iters,
    /// Runs right after this reference step (next to its memchan twin).
    pub after: Step,
    exe: PathBuf,
}

impl Program {
    /// The 2-PE `shmem_barrier_all`, which the bench runs beside memchan's
    /// 2-node barrier, taking turns (`memchan_side::barrier_beside_peer`).
    pub fn is_barrier_pair(&self) -> bool {
        self.figure == fig::BARRIER && self.np == 2
    }

    /// The bench-internal figure id the samples belong to.
    pub fn figure_id(&self) -> String {
        match self.unit {
            Unit::GbpsWindow1MiB => fig::bandwidth(1 << 20),
            Unit::Ns => self.figure.clone(),
        }
    }
}

fn catalogue() -> Vec<Program> {
    let p = |name: &'static str, source, tool, figure: &str, series, unit, iters| Program {
        name: name.to_string(),
        source_name: name,
        source,
        tool,
        np: 2,
        figure: figure.to_string(),
        series,
        unit,
        iters,
        after: match unit {
            Unit::GbpsWindow1MiB => Step::Memcpy,
            Unit::Ns if figure == fig::LATENCY => Step::Cacheline,
            Unit::Ns => Step::StoreFence,
        },
        exe: PathBuf::new(),
    };
    let barrier = include_str!("../peers/shmem_barrier.c");
    let mut v = vec![
        p(
            "mpi_latency",
            include_str!("../peers/mpi_latency.c"),
            Tool::Mpi,
            fig::LATENCY,
            "mpi",
            Unit::Ns,
            Iters::Latency,
        ),
        p(
            "mpi_bw",
            include_str!("../peers/mpi_bw.c"),
            Tool::Mpi,
            "",
            "mpi",
            Unit::GbpsWindow1MiB,
            Iters::BwWindows,
        ),
        p(
            "shmem_latency",
            include_str!("../peers/shmem_latency.c"),
            Tool::Oshmem,
            fig::LATENCY,
            "oshmem",
            Unit::Ns,
            Iters::Latency,
        ),
        p(
            "shmem_ack",
            include_str!("../peers/shmem_ack.c"),
            Tool::Oshmem,
            fig::ACK,
            "oshmem",
            Unit::Ns,
            Iters::Batches,
        ),
        p(
            "shmem_barrier",
            barrier,
            Tool::Oshmem,
            fig::BARRIER,
            "oshmem",
            Unit::Ns,
            Iters::Batches,
        ),
        p(
            "shmem_lock",
            include_str!("../peers/shmem_lock.c"),
            Tool::Oshmem,
            fig::LOCK,
            "oshmem",
            Unit::Ns,
            Iters::Ops,
        ),
    ];
    // Remote read and fetch-add, each also as `_xcore` (the program reads its own
    // name: the owner rewrites the word meanwhile), beside `rma.rs`.
    for (name, source, figure) in [
        ("shmem_get", GET_C, super::rma::GET),
        ("shmem_get_xcore", GET_C, super::rma::GET_XCORE),
        ("shmem_fadd", FADD_C, super::rma::FADD),
        ("shmem_fadd_xcore", FADD_C, super::rma::FADD_XCORE),
    ] {
        v.push(p(
            name,
            source,
            Tool::Oshmem,
            figure,
            "oshmem",
            Unit::Ns,
            Iters::Batches,
        ));
    }
    for (n, _) in BARRIER_NODES {
        let mut prog = p(
            "shmem_barrier",
            barrier,
            Tool::Oshmem,
            &fig::barrier_nodes(n),
            "oshmem",
            Unit::Ns,
            Iters::NodesBarrier,
        );
        prog.name = format!("shmem_barrier_{n}");
        prog.np = n;
        v.push(prog);
    }
    v
}

/// Compiled peers, ready to run.
#[derive(Debug)]
pub struct Peers {
    pub programs: Vec<Program>,
    pub versions: BTreeMap<String, String>,
    pub notes: Vec<String>,
    dir: PathBuf,
    cpus: (usize, usize),
}

/// Outcome of [`prepare`].
#[derive(Debug)]
pub enum Prepared {
    Ready(Peers),
    Skipped(String),
}

/// One run of a program.
#[derive(Debug)]
pub struct PeerRun {
    pub samples_ns: Vec<f64>,
    pub line: PeerLine,
}

/// The JSON line a program prints.
#[derive(Debug, Clone, Deserialize)]
pub struct PeerLine {
    pub peer: String,
    pub figure: String,
    pub unit: String,
    pub median: f64,
    pub p99: f64,
    pub samples: u64,
}

/// Pins rank 0 (the timing side) to `cpus.0`, rank 1 to `cpus.1`, and any
/// further rank `i` alternately to the two (as `worker::group_cpu` places
/// memchan's nodes): by core for the default pair, else through a rankfile
/// written into `dir`. More than two ranks share the cores (see the module doc
/// for the options that takes).
pub(crate) fn bind_ranks(
    cmd: &mut Command,
    dir: &Path,
    cpus: (usize, usize),
    np: usize,
) -> Result<()> {
    if cpus == (0, 1) {
        cmd.args(["--map-by", "core"]);
    } else {
        let rf = dir.join(format!("rankfile{np}"));
        let lines: String = (0..np)
            .map(|i| format!("rank {i}=localhost slot={}\n", group_cpu(i, cpus)))
            .collect();
        std::fs::write(&rf, lines).context("writing the rankfile")?;
        cmd.arg("--rankfile").arg(&rf);
    }
    if np > 2 {
        cmd.args(["--oversubscribe", "--bind-to", "core:overload-allowed"])
            .args(["--mca", "mpi_yield_when_idle", "1"]);
    } else if cpus == (0, 1) {
        cmd.args(["--bind-to", "core"]);
    }
    Ok(())
}

pub(crate) fn on_path(tool: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(tool))
        .find(|p| p.is_file())
}

/// Finds the toolchains and compiles every program whose toolchain exists.
pub fn prepare(scratch: &Path, cpus: (usize, usize)) -> Result<Prepared> {
    let have = |t: Tool| on_path(t.compiler()).is_some() && on_path(t.launcher()).is_some();
    if !have(Tool::Mpi) {
        return Ok(Prepared::Skipped(
            "Open MPI not installed: peers skipped (run scripts/setup.sh)".into(),
        ));
    }
    let dir = scratch.join("peers");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    std::fs::write(dir.join("peer_common.h"), COMMON_H).context("writing peer_common.h")?;

    let mut notes = Vec::new();
    let mut versions = BTreeMap::new();
    let mut usable = vec![Tool::Mpi];
    if have(Tool::Oshmem) {
        usable.push(Tool::Oshmem);
    } else {
        notes.push(
            "OpenSHMEM (oshcc/oshrun) not installed: OSHMEM peers skipped (run scripts/setup.sh)"
                .into(),
        );
    }
    for t in usable.clone() {
        if let Ok(o) = Command::new(t.launcher()).arg("--version").output() {
            let v = String::from_utf8_lossy(&o.stdout);
            if let Some(first) = v.lines().next() {
                versions.insert(t.launcher().to_string(), first.trim().to_string());
            }
        }
    }

    let mut programs = Vec::new();
    let mut failed_tools: Vec<Tool> = Vec::new();
    for mut prog in catalogue() {
        if !usable.contains(&prog.tool) || failed_tools.contains(&prog.tool) {
            continue;
        }
        let exe = dir.join(prog.source_name);
        if exe.is_file() {
            // Built for an earlier entry of the same source.
            prog.exe = exe;
            programs.push(prog);
            continue;
        }
        let src = dir.join(format!("{}.c", prog.source_name));
        std::fs::write(&src, prog.source).with_context(|| format!("writing {}", src.display()))?;
        let out = Command::new(prog.tool.compiler())
            .args(["-O2", "-o"])
            .arg(&exe)
            .arg("-I")
            .arg(&dir)
            .arg(&src)
            .output()
            .with_context(|| format!("running {}", prog.tool.compiler()))?;
        if !out.status.success() {
            notes.push(format!(
                "{} failed to build {}: {} peers skipped\n{}",
                prog.tool.compiler(),
                prog.name,
                prog.tool.launcher(),
                String::from_utf8_lossy(&out.stderr).trim()
            ));
            failed_tools.push(prog.tool);
            continue;
        }
        prog.exe = exe;
        programs.push(prog);
    }
    programs.retain(|p| !failed_tools.contains(&p.tool));
    if programs.is_empty() {
        return Ok(Prepared::Skipped(format!(
            "peers skipped: {}",
            notes.join("; ")
        )));
    }
    Ok(Prepared::Ready(Peers {
        programs,
        versions,
        notes,
        dir,
        cpus,
    }))
}

/// Longest a peer program may run (the launcher's own start included).
pub(crate) const RUN_TIMEOUT: Duration = Duration::from_secs(180);

impl Peers {
    /// Runs one program once on the two cores and returns its samples in ns.
    pub fn run(&self, prog: &Program, cfg: &Config, clock: &Clock) -> Result<PeerRun> {
        self.spawn(prog, cfg, clock, None)?.finish()
    }

    /// Starts one program on the two cores; with `turns`, the program runs its
    /// iterations in the windows [`super::turns`] hands out.
    pub fn spawn<'p>(
        &self,
        prog: &'p Program,
        cfg: &Config,
        clock: &Clock,
        turns: Option<&Path>,
    ) -> Result<PeerRunning<'p>> {
        let (iters, warmup) = match prog.iters {
            Iters::Latency => (cfg.iters, cfg.warmup),
            Iters::BwWindows => (cfg.peer_bw_windows, if cfg.quick { 2 } else { 5 }),
            Iters::Batches => (cfg.batches, (cfg.batches / 10).max(2)),
            Iters::Ops => (cfg.op_iters, (cfg.op_iters / 10).max(10)),
            Iters::NodesBarrier => {
                let n = cfg.nodes_barrier_iters(prog.np);
                (n, (n / 10).max(10))
            }
        };
        let samples_file = self.dir.join(format!("{}.samples", prog.name));
        let out_file = self.dir.join(format!("{}.out", prog.name));
        let err_file = self.dir.join(format!("{}.err", prog.name));
        let _ = std::fs::remove_file(&samples_file);

        let mut cmd = Command::new(prog.tool.launcher());
        cmd.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            .args(["--allow-run-as-root", "-np", &prog.np.to_string()]);
        bind_ranks(&mut cmd, &self.dir, self.cpus, prog.np)?;
        if prog.tool == Tool::Oshmem {
            cmd.args(["--mca", "memory", "^patcher"]);
        }
        match turns {
            Some(dir) => {
                cmd.env("PEER_TURNS", dir).args(["-x", "PEER_TURNS"]);
            }
            None => {
                cmd.env_remove("PEER_TURNS");
            }
        }
        cmd.arg(&prog.exe)
            .arg(iters.to_string())
            .arg(warmup.to_string())
            .arg(format!("{}", clock.ghz))
            .arg(&samples_file)
            .stdin(Stdio::null())
            .stdout(File::create(&out_file).context("creating the peer's stdout file")?)
            .stderr(File::create(&err_file).context("creating the peer's stderr file")?);
        let child = cmd
            .spawn()
            .with_context(|| format!("starting {} {}", prog.tool.launcher(), prog.name))?;
        Ok(PeerRunning {
            prog,
            child,
            samples_file,
            out_file,
            err_file,
        })
    }
}

/// A started peer program.
pub struct PeerRunning<'p> {
    prog: &'p Program,
    child: std::process::Child,
    samples_file: PathBuf,
    out_file: PathBuf,
    err_file: PathBuf,
}

impl super::turns::Side for PeerRunning<'_> {
    fn name(&self) -> &str {
        &self.prog.name
    }
    fn ended(&mut self) -> Result<Option<std::process::ExitStatus>> {
        Ok(self.child.try_wait()?)
    }
}

impl PeerRunning<'_> {
    /// Waits for the program and returns its samples in ns.
    pub fn finish(mut self) -> Result<PeerRun> {
        let prog = self.prog;
        let Some(status) = wait_with_deadline(&mut self.child, RUN_TIMEOUT)? else {
            bail!("timed out after {RUN_TIMEOUT:?}");
        };
        let stdout = std::fs::read_to_string(&self.out_file).unwrap_or_default();
        let stderr = std::fs::read_to_string(&self.err_file).unwrap_or_default();
        if !status.success() {
            bail!(
                "{} exited with {status}: {}",
                prog.tool.launcher(),
                tail(&stderr, 1200)
            );
        }
        let (line, raw) = read_peer_output(&stdout, "the output", &self.samples_file, |line| {
            ensure!(
                line.peer == prog.series,
                "{} reported peer {:?}, expected {:?}",
                prog.name,
                line.peer,
                prog.series
            );
            ensure!(
                line.median.is_finite() && line.median > 0.0 && line.p99.is_finite(),
                "implausible median {}",
                line.median
            );
            Ok(())
        })?;
        let samples_ns = match prog.unit {
            Unit::Ns => raw,
            Unit::GbpsWindow1MiB => {
                let bytes = (super::refs::WINDOW << 20) as f64;
                raw.into_iter().map(|gbps| bytes / gbps).collect()
            }
        };
        Ok(PeerRun { samples_ns, line })
    }
}

/// What a peer run under mpirun/oshrun reported: the JSON line it printed
/// last on `stdout` (`output` names that output in the error), which `check`
/// accepts, and the raw samples it wrote to `samples_file`, one per line,
/// as many as the line says.
pub(crate) fn read_peer_output(
    stdout: &str,
    output: &str,
    samples_file: &Path,
    check: impl FnOnce(&PeerLine) -> Result<()>,
) -> Result<(PeerLine, Vec<f64>)> {
    let line = stdout
        .lines()
        .rev()
        .find(|l| l.trim_start().starts_with('{'))
        .with_context(|| format!("no JSON line in {output}: {}", tail(stdout, 400)))?;
    let line: PeerLine = serde_json::from_str(line).with_context(|| format!("parsing {line:?}"))?;
    check(&line)?;
    let text = std::fs::read_to_string(samples_file)
        .with_context(|| format!("reading {}", samples_file.display()))?;
    let raw: Vec<f64> = text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| l.trim().parse::<f64>())
        .collect::<Result<_, _>>()
        .context("parsing the samples file")?;
    ensure!(
        raw.len() as u64 == line.samples,
        "samples file and JSON line disagree"
    );
    Ok((line, raw))
}

pub(crate) fn tail(s: &str, n: usize) -> &str {
    let s = s.trim();
    let mut start = s.len().saturating_sub(n);
    while !s.is_char_boundary(start) {
        start += 1;
    }
    &s[start..]
}

/// Waits for `child` up to `timeout`; on timeout kills and reaps it and returns `None`
/// (an mpirun or oshrun takes its ranks down with it).
pub(crate) fn wait_with_deadline(
    child: &mut std::process::Child,
    timeout: Duration,
) -> Result<Option<std::process::ExitStatus>> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(s) = child.try_wait()? {
            return Ok(Some(s));
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return Ok(None);
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}
