//! The OpenSHMEM level of `memchan bench` (issue 14, point 4): the same C program,
//! `peers/shmem_level.c`, built once with Open MPI's `oshcc` and once with
//! memchan's (`memchan oshcc`, libmemchan), and run with `oshrun` and `memchan run`
//! on the same two cores, both sides of every operation in every round, started
//! together and taking turns ([`super::turns`]), so that both meet the same states of
//! the machine; which goes first flips every other round:
//!
//! | figure                | what (PE 0 times, PE 1 is the target)          | target    |
//! |-----------------------|------------------------------------------------|-----------|
//! | `shmem_put_8b_ns`     | `shmem_putmem` of 8 bytes + `shmem_quiet`      | <= 0.5x   |
//! | `shmem_get_8b_ns`     | `shmem_getmem` of 8 bytes                      | <= 1x     |
//! | `shmem_fadd_ns`       | `shmem_long_atomic_fetch_add`                  | <= 1x     |
//! | `shmem_barrier_ns`    | `shmem_barrier_all`, 2 PEs                     | <= 0.5x   |
//! | `shmem_put_1mib_gbps` | 64 x `shmem_putmem` of 1 MiB + `shmem_quiet`   | >= 1x     |
//!
//! The ratio is memchan's median over OSHMEM's. Placement: rank 0 on the lower of
//! the two cores, rank 1 on the other, on both sides (`memchan run` places ranks in
//! blocks over its own affinity, which the bench sets to the two cores; `oshrun`
//! gets the same placement through `peers::bind_ranks`). The level needs Open MPI's
//! `oshcc`/`oshrun` (recognised by `-showme` naming liboshmem and `--version` naming
//! open-mpi.org, since memchan installs commands of the same names) and a C compiler for
//! memchan's `oshcc`; otherwise it says why it was skipped.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, ensure, Context, Result};
use serde_json::Value;

use super::model::Config;
use super::peers::{bind_ranks, on_path, read_peer_output, tail, wait_with_deadline, RUN_TIMEOUT};
use super::stats::summarize;
use super::table::Pair;
use super::timer::Clock;
use super::turns::{self, Turns};

const COMMON_H: &str = include_str!("../peers/peer_common.h");
const LEVEL_C: &str = include_str!("../peers/shmem_level.c");

/// The two sides, in the order of every per-side array here.
const SIDES: [&str; 2] = ["memchan", "oshmem"];
const MEMCHAN: usize = 0;
const OSHMEM: usize = 1;

/// How many iterations (and warm-up ones) an operation runs.
#[derive(Debug, Clone, Copy)]
enum Iters {
    /// Batches of 100 operations, one sample per batch.
    Batches,
    /// Windows of 64 MiB, one sample per window.
    Windows,
}

/// One measured operation.
#[derive(Debug, Clone, Copy)]
struct Op {
    /// The program's OP argument.
    arg: &'static str,
    key: &'static str,
    title: &'static str,
    unit: &'static str,
    iters: Iters,
    /// Target on memchan / OSHMEM: at most this (times), or at least it (bandwidth).
    target: f64,
    lower_better: bool,
}

const OPS: [Op; 5] = [
    Op {
        arg: "put8",
        key: "shmem_put_8b_ns",
        title: "OpenSHMEM: 8-byte put + quiet",
        unit: "ns",
        iters: Iters::Batches,
        target: 0.5,
        lower_better: true,
    },
    Op {
        arg: "get8",
        key: "shmem_get_8b_ns",
        title: "OpenSHMEM: 8-byte get",
        unit: "ns",
        iters: Iters::Batches,
        target: 1.0,
        lower_better: true,
    },
    Op {
        arg: "fadd",
        key: "shmem_fadd_ns",
        title: "OpenSHMEM: fetch-add (long)",
        unit: "ns",
        iters: Iters::Batches,
        target: 1.0,
        lower_better: true,
    },
    Op {
        arg: "barrier",
        key: "shmem_barrier_ns",
        title: "OpenSHMEM: barrier_all, 2 PEs (per barrier, batches of 100)",
        unit: "ns",
        iters: Iters::Batches,
        target: 0.5,
        lower_better: true,
    },
    Op {
        arg: "put1m",
        key: "shmem_put_1mib_gbps",
        title: "OpenSHMEM: 1 MiB put bandwidth (windows of 64 puts + quiet)",
        unit: "GB/s",
        iters: Iters::Windows,
        target: 1.0,
        lower_better: false,
    },
];

impl Iters {
    fn of(self, cfg: &Config) -> (u64, u64) {
        match self {
            Iters::Batches => (cfg.batches, (cfg.batches / 10).max(2)),
            Iters::Windows => (cfg.peer_bw_windows, if cfg.quick { 2 } else { 5 }),
        }
    }
}

/// The two builds of the program, ready to run.
pub struct Builds {
    dir: PathBuf,
    /// This binary, for `memchan run`.
    memchan: PathBuf,
    exe: [PathBuf; 2],
}

/// Samples of every operation and side, with per-round medians, and what went wrong.
#[derive(Debug, Default)]
pub struct ShmemFigures {
    samples: [[Vec<f64>; 2]; OPS.len()],
    rounds: [Vec<[f64; 2]>; OPS.len()],
    /// Failures of memchan's side: the bench fails with them.
    pub memchan_failures: Vec<String>,
    /// Failures of Open MPI's side: noted, as a peer's are.
    pub notes: Vec<String>,
}

/// Why `tool` on PATH is not Open MPI's, if it is not.
fn not_open_mpi(tool: &str, args: &[&str], needle: &str) -> Option<String> {
    if on_path(tool).is_none() {
        return Some(format!(
            "Open MPI's {tool} not installed (run scripts/setup.sh)"
        ));
    }
    match Command::new(tool).args(args).output() {
        Ok(o) if String::from_utf8_lossy(&o.stdout).contains(needle) => None,
        Ok(_) => Some(format!(
            "the {tool} on PATH is not Open MPI's (`{tool} {}` does not name {needle})",
            args.join(" ")
        )),
        Err(e) => Some(format!("cannot run {tool}: {e}")),
    }
}

/// Builds the program with both `oshcc`s into `scratch/shmem`, or says why the
/// level cannot run here.
pub fn prepare(scratch: &Path) -> std::result::Result<Builds, String> {
    if let Some(why) = not_open_mpi("oshcc", &["-showme"], "oshmem")
        .or_else(|| not_open_mpi("oshrun", &["--version"], "open-mpi.org"))
    {
        return Err(why);
    }
    let memchan =
        std::env::current_exe().map_err(|e| format!("cannot find this program's path: {e}"))?;
    let dir = scratch.join("shmem");
    let build = || -> Result<[PathBuf; 2]> {
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        std::fs::write(dir.join("peer_common.h"), COMMON_H).context("writing peer_common.h")?;
        let src = dir.join("shmem_level.c");
        std::fs::write(&src, LEVEL_C).context("writing shmem_level.c")?;
        let mut exe = [PathBuf::new(), PathBuf::new()];
        for (i, side) in SIDES.iter().enumerate() {
            let mut cmd = if i == MEMCHAN {
                let mut c = Command::new(&memchan);
                c.arg("oshcc");
                c
            } else {
                Command::new("oshcc")
            };
            exe[i] = dir.join(format!("shmem_level_{side}"));
            let out = cmd
                .arg("-O2")
                .arg(format!("-DSHMEM_LEVEL_SIDE=\"{side}\""))
                .arg("-I")
                .arg(&dir)
                .arg("-o")
                .arg(&exe[i])
                .arg(&src)
                .output()
                .with_context(|| format!("running {side}'s oshcc"))?;
            ensure!(
                out.status.success(),
                "{side}'s oshcc failed to build shmem_level.c: {}",
                tail(&String::from_utf8_lossy(&out.stderr), 1200)
            );
        }
        Ok(exe)
    };
    let exe = build().map_err(|e| format!("{e:#}"))?;
    Ok(Builds { dir, memchan, exe })
}

impl Builds {
    /// Starts `op` on `side`; with `turns`, the program runs its iterations in the
    /// windows [`Turns`] hands out.
    fn spawn(
        &self,
        op: &Op,
        side: usize,
        cfg: &Config,
        clock: &Clock,
        turns: Option<&Path>,
    ) -> Result<Running> {
        let (iters, warmup) = op.iters.of(cfg);
        let stem = format!("{}_{}", op.arg, SIDES[side]);
        let samples_file = self.dir.join(format!("{stem}.samples"));
        let out_file = self.dir.join(format!("{stem}.out"));
        let err_file = self.dir.join(format!("{stem}.err"));
        let _ = std::fs::remove_file(&samples_file);
        let cores = (cfg.cpus.0.min(cfg.cpus.1), cfg.cpus.0.max(cfg.cpus.1));
        let mut cmd = if side == MEMCHAN {
            let mut c = Command::new(&self.memchan);
            c.args(["run", "-n", "2", "--bind-to", "core"]);
            let mut set = rustix::thread::CpuSet::new();
            set.set(cores.0);
            set.set(cores.1);
            // SAFETY: the closure makes one system call (sched_setaffinity) and
            // allocates nothing, as a pre-exec hook in a forked child must.
            unsafe {
                use std::os::unix::process::CommandExt;
                c.pre_exec(move || {
                    rustix::thread::sched_setaffinity(None, &set).map_err(std::io::Error::from)
                });
            }
            c
        } else {
            let mut c = Command::new("oshrun");
            c.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
                .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
                .args(["--allow-run-as-root", "-np", "2"]);
            bind_ranks(&mut c, &self.dir, cores, 2)?;
            // See peers.rs: Open MPI 4.1.4 + UCX 1.13 crash in shmem_finalize without it.
            c.args(["--mca", "memory", "^patcher"]);
            if turns.is_some() {
                c.args(["-x", "PEER_TURNS"]);
            }
            c
        };
        match turns {
            Some(dir) => cmd.env("PEER_TURNS", dir),
            None => cmd.env_remove("PEER_TURNS"),
        };
        cmd.arg(&self.exe[side])
            .arg(op.arg)
            .arg(iters.to_string())
            .arg(warmup.to_string())
            .arg(format!("{}", clock.ghz))
            .arg(&samples_file)
            .stdin(Stdio::null())
            .stdout(File::create(&out_file).context("creating the program's stdout file")?)
            .stderr(File::create(&err_file).context("creating the program's stderr file")?);
        let child = cmd.spawn().with_context(|| format!("starting {stem}"))?;
        Ok(Running {
            child,
            stem,
            side,
            samples_file,
            out_file,
            err_file,
        })
    }

    /// Runs `op` once on `side` alone and returns its samples (ns, or GB/s per
    /// window).
    fn run(&self, op: &Op, side: usize, cfg: &Config, clock: &Clock) -> Result<Vec<f64>> {
        self.spawn(op, side, cfg, clock, None)?.finish(op)
    }

    /// Runs `op` on both sides at once, their windows taking turns (`first` goes
    /// first in the even windows): each side's samples, or why it has none. When one
    /// side fails, the other is run again alone.
    fn run_pair(
        &self,
        op: &Op,
        first: usize,
        cfg: &Config,
        clock: &Clock,
    ) -> [Result<Vec<f64>>; 2] {
        let (Ok(ta), Ok(tb)) = (
            Turns::new(&self.dir.join("turns_memchan")),
            Turns::new(&self.dir.join("turns_oshmem")),
        ) else {
            // No FIFOs here: each side alone, as before turns.
            return [MEMCHAN, OSHMEM].map(|side| self.run(op, side, cfg, clock));
        };
        let turns = [ta, tb];
        let mut started =
            [MEMCHAN, OSHMEM].map(|side| self.spawn(op, side, cfg, clock, Some(turns[side].dir())));
        let failed = match &mut started {
            [Ok(a), Ok(b)] => turns::drive(&turns, [a, b], first, RUN_TIMEOUT).err(),
            [Err(_), _] => Some((MEMCHAN, anyhow::anyhow!("not started"))),
            [_, Err(_)] => Some((OSHMEM, anyhow::anyhow!("not started"))),
        };
        // Closing the FIFOs ends a program still waiting for its turn.
        drop(turns);
        let mut out = started.map(|r| r.and_then(|run| run.finish(op)));
        if let Some((bad, e)) = failed {
            out[bad] = turns::failed_with(std::mem::replace(&mut out[bad], Ok(Vec::new())), e);
            out[1 - bad] = self.run(op, 1 - bad, cfg, clock);
        }
        out
    }
}

/// A started run of the program.
struct Running {
    child: std::process::Child,
    stem: String,
    side: usize,
    samples_file: PathBuf,
    out_file: PathBuf,
    err_file: PathBuf,
}

impl turns::Side for Running {
    fn name(&self) -> &str {
        &self.stem
    }
    fn ended(&mut self) -> Result<Option<std::process::ExitStatus>> {
        Ok(self.child.try_wait()?)
    }
}

impl Running {
    /// Waits for the program and reads its samples.
    fn finish(mut self, op: &Op) -> Result<Vec<f64>> {
        let stem = &self.stem;
        let Some(status) = wait_with_deadline(&mut self.child, RUN_TIMEOUT)? else {
            bail!("{stem} timed out after {RUN_TIMEOUT:?}");
        };
        let stdout = std::fs::read_to_string(&self.out_file).unwrap_or_default();
        let stderr = std::fs::read_to_string(&self.err_file).unwrap_or_default();
        if !status.success() {
            bail!("{stem} exited with {status}: {}", tail(&stderr, 1200));
        }
        let side = self.side;
        let (_, raw) = read_peer_output(&stdout, "the output", &self.samples_file, |line| {
            ensure!(
                line.peer == SIDES[side] && line.figure == op.key,
                "{stem} reported {:?} of {:?}",
                line.peer,
                line.figure
            );
            ensure!(
                line.median.is_finite() && line.median > 0.0,
                "implausible median {}",
                line.median
            );
            Ok(())
        })?;
        Ok(raw)
    }
}

/// Runs every operation on both sides in each of `rounds` rounds.
pub fn measure(
    b: &Builds,
    cfg: &Config,
    clock: &Clock,
    rounds: usize,
    progress: &dyn Fn(&str),
) -> ShmemFigures {
    let mut f = ShmemFigures::default();
    for round in 0..rounds {
        for (i, op) in OPS.iter().enumerate() {
            let mut med = [f64::NAN; 2];
            let first = if round % 2 == 0 { MEMCHAN } else { OSHMEM };
            progress(&format!(
                "round {}/{rounds}: OpenSHMEM {} (both sides in turns)",
                round + 1,
                op.arg,
            ));
            let out = b.run_pair(op, first, cfg, clock);
            for (side, r) in out.into_iter().enumerate() {
                match r {
                    Ok(s) => {
                        med[side] = summarize(&s).map_or(f64::NAN, |x| x.median);
                        f.samples[i][side].extend(s);
                    }
                    Err(e) => {
                        let note = format!(
                            "OpenSHMEM level: {} on {} failed in round {}: {e:#}",
                            op.arg,
                            SIDES[side],
                            round + 1
                        );
                        if side == MEMCHAN {
                            f.memchan_failures.push(note);
                        } else {
                            f.notes.push(note);
                        }
                    }
                }
            }
            f.rounds[i].push(med);
        }
    }
    f
}

impl ShmemFigures {
    /// The figures; `memcpy` (GB/s, the run's, `state::memcpy_gbps`) is printed
    /// beside the 1 MiB put as its floor.
    fn figs(&self, memcpy: Option<f64>) -> Vec<Pair> {
        OPS.iter()
            .enumerate()
            .map(|(i, op)| {
                let pair = Pair::new(
                    op.title.into(),
                    op.key,
                    op.unit,
                    SIDES,
                    [&self.samples[i][MEMCHAN], &self.samples[i][OSHMEM]],
                    &self.rounds[i],
                    op.lower_better,
                    op.target,
                    !op.lower_better,
                );
                let floor = memcpy.filter(|_| op.arg == "put1m").map(|m| {
                    format!(
                        "memcpy (one core, the raw level's reference) {m:.2} GB/s in this run; \
                         memchan {:.2}x of it, oshmem {:.2}x (a put is one core copying into \
                         the target's memory)",
                        pair.med[0] / m,
                        pair.med[1] / m
                    )
                });
                pair.with_floor(floor)
            })
            .collect()
    }

    /// The tables and their verdicts, as text (`memcpy` as for [`figs`](Self::figs)).
    pub fn render(&self, memcpy: Option<f64>) -> String {
        let mut o = String::new();
        for f in self.figs(memcpy) {
            f.render(&mut o);
        }
        o
    }

    /// Adds the figures, units, ratios, targets, sample counts and floors to the
    /// bench's JSON.
    pub fn merge_json(&self, j: &mut Value, memcpy: Option<f64>) {
        for f in self.figs(memcpy) {
            f.merge_json(j);
        }
    }
}
