//! Worker processes. `memchan bench` never forks: it re-executes its own
//! binary (`std::env::current_exe()`) with the hidden `bench-worker`
//! subcommand, one process per node (two for a pair, N for the N-node barrier,
//! N unpinned ones for `--scale`), each pinned to its core unless started
//! without one. A worker writes its samples as JSON to the file named by `--out`.

use std::collections::BTreeMap;
use std::fs::File;
use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::{Args, ValueEnum};
use serde::{Deserialize, Serialize};

use super::pingpong::{self, Endpoint};
use super::timer::Clock;

/// What a worker measures.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Kind {
    Cacheline,
    Tcp,
    Memcpy,
    StoreFence,
    Flops,
    MemchanLatency,
    MemchanBandwidth,
    MemchanOverhead,
    MemchanAck,
    MemchanLock,
    MemchanBarrier,
    MemchanNotify,
    /// Remote read and fetch-add, with their cross-core variants (`rma.rs`).
    MemchanRma,
    // Message passing (`mp.rs`): latency and 1 MiB bandwidth, per mode.
    MpLatencyPostal,
    MpLatencyZeroCopy,
    MpBandwidthPostal,
    MpBandwidthZeroCopy,
    // `--hosts`: the figures over a veth between two network namespaces.
    HostTcp,
    HostTcpSpin,
    HostTcpBw,
    /// `tcp_raw_64k`: the `HostTcpBw` stream written in 64 KiB `write_all`s.
    HostTcpBw64k,
    HostMemchan,
    HostMemchanSpin,
    HostMemchanBw,
    /// Remote read and fetch-add through the hub, one round trip each (`rma.rs`).
    HostMemchanRma,
    /// `--hosts`: one node of the ordering point's flood (`hosts/flood.rs`).
    HostFlood,
    /// `--hosts`: one node of a same-host pair inside two hosts (`hosts/domain.rs`).
    HostDomain,
    /// `--hosts`: one node of the barrier over four hosts (`hosts/barrier.rs`).
    HostBarrier,
    /// `--scale`: one idle node of an N-node cluster.
    ScaleNode,
}

/// Which side of a two-process measurement.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Role {
    /// The initiating, timing side (cpu 0 by default).
    Ping,
    /// The answering side (cpu 1 by default).
    Pong,
    /// A single-process measurement.
    Solo,
}

/// Arguments of the hidden `bench-worker` subcommand.
#[derive(Debug, Clone, Args)]
pub struct WorkerArgs {
    #[arg(long, value_enum)]
    pub kind: Kind,
    #[arg(long, value_enum, default_value = "solo")]
    pub role: Role,
    /// Core to pin this process to (none: the scheduler places it).
    #[arg(long)]
    pub cpu: Option<usize>,
    /// Nodes of the measurement's cluster: every worker waits for this many
    /// members before it starts.
    #[arg(long, default_value_t = 2)]
    pub nodes: usize,
    /// Calibrated time-stamp counter frequency (ticks per ns).
    #[arg(long)]
    pub tsc_ghz: f64,
    /// Timed iterations (round trips, windows, batches or repeats).
    #[arg(long, default_value_t = 1000)]
    pub iters: u64,
    /// Untimed warm-up iterations.
    #[arg(long, default_value_t = 100)]
    pub warmup: u64,
    /// Shared-memory object of the cache-line ping-pong.
    #[arg(long)]
    pub shm: Option<String>,
    /// TCP port of the loopback ping-pong.
    #[arg(long)]
    pub port: Option<u16>,
    /// memchan cluster name.
    #[arg(long)]
    pub cluster: Option<String>,
    /// Transfer sizes in bytes for bandwidth sweeps.
    #[arg(long, value_delimiter = ',')]
    pub sizes: Vec<usize>,
    /// Byte budget per size for bandwidth sweeps.
    #[arg(long, default_value_t = 256 << 20)]
    pub budget: usize,
    /// Minimum number of windows per size.
    #[arg(long, default_value_t = 10)]
    pub min_windows: usize,
    /// Maximum number of windows per size.
    #[arg(long, default_value_t = 2000)]
    pub max_windows: usize,
    /// File the samples are written to (JSON).
    #[arg(long)]
    pub out: PathBuf,
    /// Turn FIFOs (`turns.rs`): run the timed iterations in windows the bench
    /// alternates with those of the program this one is compared with.
    #[arg(long)]
    pub turns: Option<PathBuf>,
    /// Namespaces and addresses of the `--hosts` measurements.
    #[command(flatten)]
    pub hosts: HostArgs,
}

/// Worker options of the host measurements (flattened into `bench-worker`).
#[derive(Debug, Clone, Default, Args)]
pub struct HostArgs {
    /// Network namespaces of the ping side and of the pong side.
    #[arg(long, value_delimiter = ',')]
    pub netns: Vec<String>,
    /// Addresses of the ping side and of the pong side.
    #[arg(long, value_delimiter = ',')]
    pub addrs: Vec<String>,
    /// The hub on the third host (`HOST:PORT`) both sides connect to; without it
    /// the ping side hosts the hub in its own process, on its address and `--port`.
    #[arg(long)]
    pub hub: Option<String>,
    /// MiB per bandwidth window.
    #[arg(long, default_value_t = 64)]
    pub window_mib: usize,
    /// The cluster key file of a keyed memchan measurement (both sides get the
    /// same); without it the cluster is open, whatever `MEMCHAN_KEY_FILE` says.
    #[arg(long)]
    pub key_file: Option<PathBuf>,
}

impl HostArgs {
    /// Address of side `i` (0: ping side, 1: pong side).
    pub fn addr(&self, i: usize) -> Result<&str> {
        self.addrs
            .get(i)
            .map(|s| s.as_str())
            .context("--addrs needs the two sides' addresses")
    }
}

/// What a worker hands back: named series of samples (ns).
#[derive(Debug, Default, Serialize, Deserialize)]
pub struct WorkerOutput {
    pub series: BTreeMap<String, Vec<f64>>,
}

impl WorkerOutput {
    pub fn one(name: &str, v: Vec<f64>) -> Self {
        let mut series = BTreeMap::new();
        series.insert(name.to_string(), v);
        Self { series }
    }
}

/// Pins the calling thread (the whole single-threaded process) to `cpu`.
pub fn pin(cpu: usize) -> Result<()> {
    let mut set = rustix::thread::CpuSet::new();
    set.set(cpu);
    rustix::thread::sched_setaffinity(None, &set).with_context(|| format!("pinning to cpu {cpu}"))
}

/// Runs the timing side of a ping-pong and packages its samples.
pub fn ping_output(ep: &mut impl Endpoint, a: &WorkerArgs, clock: &Clock) -> Result<WorkerOutput> {
    let v = pingpong::ping(ep, a.warmup, a.iters, clock)?;
    Ok(WorkerOutput::one("one_way", v))
}

/// One side of a ping-pong over `ep`: the ping side's [`ping_output`], or the pong
/// side's answers (no samples).
pub fn ping_or_pong(
    ep: &mut impl Endpoint,
    a: &WorkerArgs,
    clock: &Clock,
    ping: bool,
) -> Result<WorkerOutput> {
    if ping {
        return ping_output(ep, a, clock);
    }
    pingpong::pong(ep, a.warmup, a.iters)?;
    Ok(WorkerOutput::default())
}

/// Starts and collects worker processes for the coordinator.
pub struct Launcher {
    exe: PathBuf,
    dir: PathBuf,
    pub clock: Clock,
    n: u64,
}

/// A running worker.
pub struct Running {
    child: Child,
    out: PathBuf,
    err: PathBuf,
    what: String,
}

/// Longest a single worker may run.
const WORKER_TIMEOUT: Duration = Duration::from_secs(300);

impl Launcher {
    pub fn new(dir: &Path, clock: Clock) -> Result<Self> {
        let exe = std::env::current_exe().context("locating the memchan binary (current_exe)")?;
        Ok(Self {
            exe,
            dir: dir.to_path_buf(),
            clock,
            n: 0,
        })
    }

    /// A name unique within this bench run (for shm objects, clusters).
    pub fn unique(&mut self, prefix: &str) -> String {
        self.n += 1;
        format!("{prefix}-{}-{}", std::process::id(), self.n)
    }

    /// Spawns `memchan bench-worker --kind K --role R --cpu C ... extra`.
    pub fn spawn(
        &mut self,
        kind: Kind,
        role: Role,
        cpu: usize,
        extra: &[String],
    ) -> Result<Running> {
        let (mut cmd, out, err) = self.command(kind, role, Some(cpu), extra)?;
        let what = format!("{kind:?}/{role:?} on cpu {cpu}");
        let child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .spawn()
            .with_context(|| format!("spawning {} bench-worker ({what})", self.exe.display()))?;
        Ok(Running {
            child,
            out,
            err,
            what,
        })
    }

    /// The command of one worker (stderr to a file of the scratch directory,
    /// stdin and stdout left to the caller), with the files it writes: its
    /// output (`--out`) and its stderr.
    pub fn command(
        &mut self,
        kind: Kind,
        role: Role,
        cpu: Option<usize>,
        extra: &[String],
    ) -> Result<(Command, PathBuf, PathBuf)> {
        self.n += 1;
        let out = self.dir.join(format!("w{}.json", self.n));
        let err = self.dir.join(format!("w{}.err", self.n));
        let name =
            |v: Option<clap::builder::PossibleValue>| v.expect("value enum").get_name().to_string();
        let mut cmd = Command::new(&self.exe);
        cmd.arg("bench-worker")
            .args(["--kind", &name(kind.to_possible_value())])
            .args(["--role", &name(role.to_possible_value())]);
        if let Some(cpu) = cpu {
            cmd.args(["--cpu", &cpu.to_string()]);
        }
        cmd.args(["--tsc-ghz", &format!("{}", self.clock.ghz)])
            .arg("--out")
            .arg(&out)
            .args(extra)
            .stderr(File::create(&err).with_context(|| format!("creating {}", err.display()))?);
        Ok((cmd, out, err))
    }

    /// The `memchan` executable the workers run.
    pub fn exe(&self) -> &Path {
        &self.exe
    }

    /// A path in the run's scratch directory (for a peer's log).
    pub fn scratch_path(&self, name: &str) -> PathBuf {
        self.dir.join(name)
    }

    /// Free TCP port on 127.0.0.1 for the loopback ping-pong.
    pub fn free_port(&self) -> Result<u16> {
        let l = TcpListener::bind("127.0.0.1:0").context("finding a free loopback port")?;
        Ok(l.local_addr()?.port())
    }
}

impl Running {
    /// Waits for the worker and returns its samples.
    pub fn finish(mut self) -> Result<WorkerOutput> {
        let deadline = Instant::now() + WORKER_TIMEOUT;
        let status = loop {
            if let Some(s) = self.child.try_wait().context("waiting for a worker")? {
                break s;
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                let _ = self.child.wait();
                bail!("worker {} timed out after {WORKER_TIMEOUT:?}", self.what);
            }
            std::thread::sleep(Duration::from_millis(1));
        };
        let stderr = std::fs::read_to_string(&self.err).unwrap_or_default();
        let _ = std::fs::remove_file(&self.err);
        if !status.success() {
            bail!("worker {} failed ({status}): {}", self.what, stderr.trim());
        }
        let text = std::fs::read_to_string(&self.out)
            .with_context(|| format!("reading the output of worker {}", self.what))?;
        let _ = std::fs::remove_file(&self.out);
        serde_json::from_str(&text)
            .with_context(|| format!("parsing the output of worker {}", self.what))
    }

    /// Kills a worker whose partner failed.
    pub fn abort(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_file(&self.out);
        let _ = std::fs::remove_file(&self.err);
    }
}

/// Runs a ping/pong pair and returns the ping side's samples. If either
/// side fails the other is killed, and the first failure is reported.
pub fn pair(
    l: &mut Launcher,
    kind: Kind,
    cpus: (usize, usize),
    extra: &[String],
) -> Result<WorkerOutput> {
    group(l, kind, 2, cpus, extra)
}

/// The core of node `i` of a group: node 0 (the timing side) on the first
/// core, then alternately the second and the first, as `oshrun --map-by core`
/// places rank `i` of the OSHMEM peers (see `peers::bind_ranks`).
///
/// With more nodes than cores they share the two cores. They are pinned
/// alternately rather than left to the scheduler so that memchan and its
/// OSHMEM peer run with the same placement (Open MPI leaves oversubscribed
/// ranks unbound unless told otherwise, and the kernel may then stack a
/// barrier's nodes on one core one run and spread them the next) and the
/// figure repeats from run to run.
pub fn group_cpu(i: usize, cpus: (usize, usize)) -> usize {
    if i.is_multiple_of(2) {
        cpus.0
    } else {
        cpus.1
    }
}

/// Runs `n` workers of `kind` (node 0 the timing "ping" side, the others
/// "pong", placed by [`group_cpu`]) and returns node 0's samples. The pong
/// sides start first, as a pair always did. If one fails the others are
/// killed, and the first failure is reported.
pub fn group(
    l: &mut Launcher,
    kind: Kind,
    n: usize,
    cpus: (usize, usize),
    extra: &[String],
) -> Result<WorkerOutput> {
    Group::start(l, kind, n, cpus, extra)?.finish()
}

/// A started [`group`] of workers.
pub struct Group {
    kind: Kind,
    /// Index i is node i.
    nodes: Vec<Running>,
    name: String,
}

impl Group {
    /// Starts the workers of [`group`] without waiting for them.
    pub fn start(
        l: &mut Launcher,
        kind: Kind,
        n: usize,
        cpus: (usize, usize),
        extra: &[String],
    ) -> Result<Group> {
        Group::start_each(l, kind, n, cpus, |_| extra.to_vec())
    }

    /// [`start`](Self::start), with node `i`'s arguments `extra(i)`.
    pub fn start_each(
        l: &mut Launcher,
        kind: Kind,
        n: usize,
        cpus: (usize, usize),
        extra: impl Fn(usize) -> Vec<String>,
    ) -> Result<Group> {
        if n < 2 {
            bail!("a group needs at least 2 workers, got {n}");
        }
        // Node 0 is spawned last.
        let mut nodes: Vec<Option<Running>> = (0..n).map(|_| None).collect();
        for i in (0..n).rev() {
            let role = if i == 0 { Role::Ping } else { Role::Pong };
            let mut extra = extra(i);
            extra.extend(["--nodes".to_string(), n.to_string()]);
            match l.spawn(kind, role, group_cpu(i, cpus), &extra) {
                Ok(r) => nodes[i] = Some(r),
                Err(e) => {
                    nodes.into_iter().flatten().for_each(Running::abort);
                    return Err(e);
                }
            }
        }
        Ok(Group {
            kind,
            nodes: nodes.into_iter().flatten().collect(),
            name: format!("memchan {kind:?} workers"),
        })
    }

    /// Waits for the workers and returns node 0's samples.
    pub fn finish(self) -> Result<WorkerOutput> {
        Ok(self.finish_all()?.swap_remove(0))
    }

    /// Waits for the workers and returns every node's samples, node 0 first; the
    /// first failure if any failed (the others are then killed).
    pub fn finish_all(self) -> Result<Vec<WorkerOutput>> {
        let Group {
            kind, mut nodes, ..
        } = self;
        let n = nodes.len();
        let deadline = Instant::now() + WORKER_TIMEOUT;
        let mut first_failed: Option<usize> = None;
        let mut done = vec![false; n];
        while done.iter().any(|d| !d) {
            for (i, r) in nodes.iter_mut().enumerate() {
                if done[i] {
                    continue;
                }
                if let Some(s) = r.child.try_wait().context("waiting for a worker")? {
                    done[i] = true;
                    if !s.success() && first_failed.is_none() {
                        first_failed = Some(i);
                    }
                }
            }
            if first_failed.is_some() {
                for r in &mut nodes {
                    let _ = r.child.kill();
                }
                break;
            }
            if Instant::now() > deadline {
                nodes.into_iter().for_each(Running::abort);
                bail!("{kind:?} with {n} workers timed out after {WORKER_TIMEOUT:?}");
            }
            std::thread::sleep(Duration::from_millis(1));
        }
        let mut results: Vec<Result<WorkerOutput>> =
            nodes.into_iter().map(Running::finish).collect();
        if let Some(i) = first_failed {
            // The failure that ended the group, before any the kills caused.
            results.swap_remove(i)?;
        }
        // Every output, unless a node that exited with success has its output
        // missing or unreadable.
        results.into_iter().collect()
    }
}

impl super::turns::Side for Group {
    fn name(&self) -> &str {
        &self.name
    }
    fn ended(&mut self) -> Result<Option<std::process::ExitStatus>> {
        for r in &mut self.nodes {
            if let Some(s) = r.child.try_wait().context("waiting for a worker")? {
                return Ok(Some(s));
            }
        }
        Ok(None)
    }
}

/// Takes one named series out of a worker's output.
pub fn take(mut out: WorkerOutput, name: &str) -> Result<Vec<f64>> {
    out.series
        .remove(name)
        .with_context(|| format!("worker output has no series {name:?}"))
}
