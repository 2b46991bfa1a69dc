//! `memchan bench --scale`: what idle nodes cost, and how long a cluster takes to
//! form, at N = 8, 64 and 256 nodes (`--nodes`), one process per node, twice: on
//! the shared-memory transport (`hub: None`, whatever the environment says), and
//! through one hub (a `memchan hub` process the coordinator starts on loopback),
//! the nodes spread over [`HUB_DOMAINS`] host domains as if on that many hosts.
//!
//! For each N and transport the coordinator:
//!
//! 1. (through a hub: starts the hub and reads its address), takes
//!    `CLOCK_MONOTONIC`, then spawns N `bench-worker --kind scale-node`
//!    processes as fast as it can. Each joins, calls `wait_for_members(N)` and
//!    prints one JSON line on its stdout with its monotonic timestamps (start,
//!    joined, saw N members); then it blocks in a `read` of its stdin, so its
//!    main thread costs nothing while idle;
//! 2. waits (`poll` on the N stdouts) until every node has reported: the time
//!    to full membership is the latest "saw N members" minus the first spawn;
//! 3. lets the cluster settle, then over a quiet window reads the on-CPU time
//!    of every thread of every node process (`/proc/<pid>/task/*/schedstat`,
//!    nanoseconds, summed) at both ends: idle CPU of the whole cluster and per
//!    node, as % of one core, the hub's own threads counted in the cluster's
//!    total and shown apart. It also counts each process's threads and
//!    descriptors (`/proc/<pid>/fd`) and the cluster's files in `/dev/shm`;
//! 4. asks every node (a `check` line on its stdin) how many members it sees
//!    and whether it still is one: a node lost or isolated during the window
//!    fails the run (after its figures are printed); then closes the
//!    stdins: each node leaves and exits. Every process must be reaped and no
//!    `memchan.<cluster>.*` file may remain in `/dev/shm`, or the run fails.
//!
//! The nodes are not pinned: this measures what nodes cost where the scheduler
//! puts them, as applications run them (`--cpus` does not apply). The
//! coordinator's own CPU is not counted. Nothing here asserts a speed; the
//! figures are reported (issue 11, point 8).

use std::collections::BTreeMap;
use std::io::{BufRead, Read, Write};
use std::os::fd::OwnedFd;
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use anyhow::{bail, ensure, Context, Result};
use indicatif::{ProgressBar, ProgressStyle};
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::model::{check_failures, write_json, BenchArgs, ScratchDir};
use super::report::{self, render_header, render_notes};
use super::stats;
use super::timer::Clock;
use super::worker::{Kind, Launcher, Role, WorkerArgs, WorkerOutput};

/// The host domains the nodes of a measurement through a hub are spread over
/// (`MEMCHAN_DOMAIN=h0..`), round robin: the "4 hosts" of docs/spec.md's scale
/// figure, all on this machine's loopback, each node with its own link to the hub.
pub const HUB_DOMAINS: usize = 4;

/// How the nodes of one measurement reach each other.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Via {
    /// One host: shared memory.
    SharedMemory,
    /// One hub on loopback, the nodes in [`HUB_DOMAINS`] host domains.
    Hub,
}

impl Via {
    fn label(self) -> String {
        match self {
            Via::SharedMemory => "shm".to_string(),
            Via::Hub => format!("hub/{HUB_DOMAINS}"),
        }
    }
}

/// Node counts of `--scale` when `--nodes` is not given.
pub const DEFAULT_NODES: [usize; 3] = [8, 64, 256];

/// How long a node waits for the others (the probe of 4c63486 saw 3.5–6.2 s at
/// 256 nodes); the coordinator waits a little longer, so that a node's own
/// typed timeout is what it reports.
const MEMBERS_TIMEOUT: Duration = Duration::from_secs(120);
const REPORT_TIMEOUT: Duration = Duration::from_secs(130);
/// Longest the nodes may take to leave and exit once released.
const LEAVE_TIMEOUT: Duration = Duration::from_secs(60);

/// What a node prints once it sees N members (CLOCK_MONOTONIC, ns).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Ready {
    pid: u32,
    node: u16,
    started_ns: u64,
    joined_ns: u64,
    members_ns: u64,
}

/// `CLOCK_MONOTONIC` in ns: one clock for every process of the host.
fn monotonic_ns() -> u64 {
    let t = rustix::time::clock_gettime(rustix::time::ClockId::Monotonic);
    t.tv_sec as u64 * 1_000_000_000 + t.tv_nsec as u64
}

/// Worker side: one node.
pub fn worker(a: &WorkerArgs) -> Result<WorkerOutput> {
    let started_ns = monotonic_ns();
    let name = a.cluster.as_deref().context("--cluster is required")?;
    let cfg = match a.hosts.addrs.first() {
        // The coordinator's hub, open, in the host domain it named in this
        // process's `MEMCHAN_DOMAIN`.
        Some(hub) => memchan::Config::default()
            .with_hub(memchan::HubSpec::connect(hub.clone()))
            .without_key_file(),
        None => memchan::Config::default().without_hub(),
    };
    let c = memchan::Cluster::join_with(name, cfg)
        .with_context(|| format!("joining cluster {name}"))?;
    let joined_ns = monotonic_ns();
    c.wait_for_members(a.nodes, MEMBERS_TIMEOUT)
        .with_context(|| format!("waiting for {} members", a.nodes))?;
    let members_ns = monotonic_ns();
    let ready = Ready {
        pid: std::process::id(),
        node: c.node_id().0,
        started_ns,
        joined_ns,
        members_ns,
    };
    let say = |line: String| -> Result<()> {
        let mut out = std::io::stdout().lock();
        writeln!(out, "{line}").context("reporting to the coordinator")?;
        out.flush().context("reporting to the coordinator")
    };
    say(serde_json::to_string(&ready)?)?;
    // Idle until the coordinator writes or closes our stdin: a blocking read.
    // A `check` line asks for the members this node sees now; end of file
    // (the coordinator's release, or its death) makes the node leave.
    for line in std::io::stdin().lock().lines() {
        let line = line.context("waiting for the release")?;
        ensure!(line == "check", "unexpected request {line:?}");
        let members = c.members();
        say(serde_json::to_string(&Check {
            members: members.len(),
            member: members.contains(&c.node_id()),
        })?)?;
    }
    let t = Instant::now();
    c.leave();
    let leave_ns = t.elapsed().as_nanos() as f64;
    Ok(WorkerOutput::one("leave_ns", vec![leave_ns]))
}

/// A node's answer to `check`: how many members it sees, and whether it is
/// still one of them (not isolated).
#[derive(Debug, Clone, Serialize, Deserialize)]
struct Check {
    members: usize,
    member: bool,
}

/// The figures of one N.
#[derive(Debug, Clone, Serialize)]
pub struct Row {
    pub nodes: usize,
    pub via: Via,
    /// First spawn to the return of the last spawn (ms).
    pub spawn_ms: f64,
    /// First spawn to the last node seeing N members (ms).
    pub membership_ms: f64,
    /// `Cluster::join` per node, median and max (ms).
    pub join_median_ms: f64,
    pub join_max_ms: f64,
    /// The quiet window (s) and the CPU the nodes used in it, as % of one core:
    /// all nodes together, and per node.
    pub idle_window_s: f64,
    /// All of the cluster's processes: the nodes, and the hub through one.
    pub idle_cpu_pct: f64,
    /// The nodes' alone, per node.
    pub idle_cpu_pct_per_node: f64,
    /// The hub's process (0 on shared memory).
    pub hub_cpu_pct: f64,
    /// Threads and descriptors per node process: median and max.
    pub threads_median: f64,
    pub threads_max: f64,
    pub fds_median: f64,
    pub fds_max: f64,
    /// The cluster's files in /dev/shm while idle: count and total MB.
    pub shm_files: usize,
    pub shm_mb: f64,
    /// Fewest members a node saw after the window (N if nothing failed meanwhile).
    pub members_after_window_min: usize,
    /// Nodes no longer members of their cluster after the window (isolated).
    pub dropped_after_window: usize,
    /// `leave()` per node, median and max (ms).
    pub leave_median_ms: f64,
    pub leave_max_ms: f64,
    /// Node processes reaped after the release (must be N).
    pub reaped: usize,
    /// The cluster's files left in /dev/shm after every node exited (must be 0).
    pub shm_files_left: usize,
}

/// One running node, as the coordinator holds it.
struct Proc {
    child: Child,
    stdin: Option<ChildStdin>,
    stdout: ChildStdout,
    line: Vec<u8>,
    ready: Option<Ready>,
    out: std::path::PathBuf,
    err: std::path::PathBuf,
    reaped: bool,
}

/// The N node processes of one measurement. Dropping it (an error on the way)
/// kills and reaps whatever still runs and removes the cluster's files, which
/// nobody else would: the cluster's name is this run's alone.
struct Fleet {
    cluster: String,
    procs: Vec<Proc>,
    /// The hub of a measurement through one; ended after the nodes.
    hub: Option<Child>,
}

impl Drop for Fleet {
    fn drop(&mut self) {
        if let Some(h) = &mut self.hub {
            let _ = h.kill();
            let _ = h.wait();
        }
        for p in &mut self.procs {
            if !p.reaped {
                let _ = p.child.kill();
                let _ = p.child.wait();
            }
            let _ = std::fs::remove_file(&p.out);
            let _ = std::fs::remove_file(&p.err);
        }
        for (path, _) in shm_files(&self.cluster) {
            let _ = std::fs::remove_file(path);
        }
        active().take();
    }
}

/// The cluster being measured and a pidfd of each of its node processes, for
/// the signal watcher (a pidfd names that process even once it is reaped and
/// its pid reused, so the watcher can never signal another process).
type Active = Option<(String, Vec<OwnedFd>)>;
static ACTIVE: Mutex<Active> = Mutex::new(None);

fn active() -> std::sync::MutexGuard<'static, Active> {
    ACTIVE.lock().unwrap_or_else(|p| p.into_inner())
}

/// The cluster's files in /dev/shm, with their sizes.
fn shm_files(cluster: &str) -> Vec<(std::path::PathBuf, u64)> {
    let prefix = format!("memchan.{cluster}.");
    let Ok(dir) = std::fs::read_dir("/dev/shm") else {
        return vec![];
    };
    dir.flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| (e.path(), e.metadata().map(|m| m.len()).unwrap_or(0)))
        .collect()
}

/// On SIGINT, SIGTERM or SIGHUP (a terminal's Ctrl-C also kills the nodes,
/// which then cannot leave): kill the nodes, remove the cluster's files and the
/// scratch directory, exit with 128 + signal.
fn install_signal_cleanup(scratch: &Path) -> Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
    static INSTALLED: OnceLock<()> = OnceLock::new();
    if INSTALLED.get().is_some() {
        return Ok(());
    }
    let mut signals = signal_hook::iterator::Signals::new([SIGINT, SIGTERM, SIGHUP])
        .context("installing the signal handlers")?;
    let scratch = scratch.to_path_buf();
    std::thread::Builder::new()
        .name("scale-cleanup".into())
        .spawn(move || {
            let Some(sig) = signals.forever().next() else {
                return;
            };
            eprintln!("\nmemchan bench --scale: signal {sig}: stopping the nodes");
            if let Some((cluster, pidfds)) = active().take() {
                for fd in &pidfds {
                    let _ = rustix::process::pidfd_send_signal(fd, rustix::process::Signal::KILL);
                }
                // A pidfd turns readable when its process has exited: only then
                // can no node create a file any more.
                use rustix::event::{poll, PollFd, PollFlags, Timespec};
                let wait = Timespec {
                    tv_sec: 5,
                    tv_nsec: 0,
                };
                for fd in &pidfds {
                    let _ = poll(&mut [PollFd::new(fd, PollFlags::IN)], Some(&wait));
                }
                for (path, _) in shm_files(&cluster) {
                    let _ = std::fs::remove_file(path);
                }
            }
            let _ = std::fs::remove_dir_all(&scratch);
            std::process::exit(128 + sig);
        })
        .context("starting the signal watcher thread")?;
    let _ = INSTALLED.set(());
    Ok(())
}

/// Timing of one run: the quiet window and the settling before it.
#[derive(Debug, Clone, Copy)]
struct Timing {
    settle: Duration,
    window: Duration,
}

/// Entry point of `memchan bench --scale`.
pub fn run(args: &BenchArgs) -> Result<()> {
    let started = Instant::now();
    let date = report::iso_date_now();
    let loadavg = report::loadavg();
    if args.plot.is_some() {
        bail!("--plot does not apply to --scale (its figures are a table)");
    }
    let nodes: Vec<usize> = if args.nodes.is_empty() {
        DEFAULT_NODES.to_vec()
    } else {
        args.nodes.clone()
    };
    for &n in &nodes {
        ensure!(
            (2..=memchan::MAX_NODES).contains(&n),
            "--nodes: {n} is not between 2 and {} (the node table's size)",
            memchan::MAX_NODES
        );
    }
    let timing = if args.quick {
        Timing {
            settle: Duration::from_millis(200),
            window: Duration::from_secs(1),
        }
    } else {
        // Past every node's first window of time packets through a hub (64 at 50 ms
        // after its join, memchan-hub's `time_plan.rs`): the steady state.
        Timing {
            settle: Duration::from_secs(4),
            window: Duration::from_secs(3),
        }
    };
    let scratch = ScratchDir(
        std::env::temp_dir().join(format!("memchan-bench-scale-{}", std::process::id())),
    );
    std::fs::create_dir_all(&scratch.0)
        .with_context(|| format!("creating {}", scratch.0.display()))?;
    install_signal_cleanup(&scratch.0)?;
    // The nodes take no timing from the counter; the launcher wants a clock.
    let mut launcher = Launcher::new(&scratch.0, Clock { ghz: 1.0 })?;

    // One step per line a node writes: its report, its answer to the check.
    let vias = [Via::SharedMemory, Via::Hub];
    let total: usize = nodes.iter().map(|n| 2 * n * vias.len()).sum();
    let pb = ProgressBar::new(total as u64);
    pb.set_style(
        ProgressStyle::with_template("{spinner} [{elapsed_precise}] {bar:32} {pos}/{len} {msg}")
            .expect("progress template"),
    );
    // A failed N (a node isolated on a busy machine, say) is noted and the
    // others still run, as in the other modes; the run then exits with an error.
    let mut rows = Vec::new();
    let mut failures = Vec::new();
    for (&n, via) in nodes.iter().flat_map(|n| vias.iter().map(move |v| (n, *v))) {
        match measure(n, via, timing, &mut launcher, &pb) {
            Ok(row) => {
                // Its figures are still worth printing, but the cluster did not
                // stay whole: that fails the run.
                if row.members_after_window_min < n || row.dropped_after_window > 0 {
                    let note = format!(
                        "--scale with {n} nodes ({}): the cluster did not stay whole while idle: \
                         after the window {} node(s) were no longer members (isolated) and \
                         the fewest members a node saw was {} of {n}",
                        via.label(),
                        row.dropped_after_window,
                        row.members_after_window_min
                    );
                    pb.println(&note);
                    failures.push(note);
                }
                rows.push(row);
            }
            Err(e) => {
                let note = format!("--scale with {n} nodes ({}) failed: {e:#}", via.label());
                pb.println(&note);
                failures.push(note);
            }
        }
    }
    pb.finish_and_clear();

    let allowed = allowed_cpus();
    let machine = report::machine_json(
        (0, 0),
        json!({
            "date": date,
            "cores_used": allowed,
            "pinned": false,
            "loadavg_at_start": loadavg,
            "settle_s": timing.settle.as_secs_f64(),
            "elapsed_s": started.elapsed().as_secs_f64(),
        }),
    );
    let mut notes =
        vec!["the nodes are not pinned; the coordinator's own CPU is not counted".to_string()];
    notes.extend(failures.iter().cloned());
    print!("{}", render_text(&rows, &machine, timing, &notes));
    if let Some(path) = &args.json {
        write_json(path, &to_json(&rows, &machine, &notes))?;
    }
    check_failures(&failures)
}

/// The cores this process may run on (where the unpinned nodes go).
fn allowed_cpus() -> Vec<usize> {
    match rustix::thread::sched_getaffinity(None) {
        Ok(set) => (0..rustix::thread::CpuSet::MAX_CPU)
            .filter(|&c| set.is_set(c))
            .collect(),
        Err(_) => vec![],
    }
}

/// Hands `child` (`what`: a node, the hub) to the signal watcher through a pidfd,
/// taken before anyone waits for it, so the pid is still its; without one the child
/// is killed and reaped, and the measurement fails.
fn watch(child: &mut Child, what: &str) -> Result<()> {
    let pidfd = rustix::process::Pid::from_raw(child.id() as i32)
        .with_context(|| format!("the pid of {what}"))
        .and_then(|p| {
            rustix::process::pidfd_open(p, rustix::process::PidfdFlags::empty())
                .with_context(|| format!("pidfd_open of {what}"))
        });
    match (pidfd, active().as_mut()) {
        (Ok(fd), Some((_, fds))) => fds.push(fd),
        (Err(e), _) => {
            let _ = child.kill();
            let _ = child.wait();
            return Err(e);
        }
        _ => {}
    }
    Ok(())
}

/// Starts the hub of a measurement through one: `memchan hub` on a loopback port
/// of its choosing, for `cluster` only. Returns it and the address it printed.
fn start_hub(l: &Launcher, cluster: &str) -> Result<(Child, String)> {
    let err = l.scratch_path(&format!("{cluster}.hub.err"));
    let mut child = std::process::Command::new(l.exe())
        .args(["hub", "--listen", "127.0.0.1:0", "--cluster", cluster])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&err).with_context(|| format!("creating {}", err.display()))?)
        .spawn()
        .context("starting the hub (memchan hub)")?;
    watch(&mut child, "the hub")?;
    // Its first line, or end of file if it failed (its stderr says why).
    let mut first = String::new();
    let out = child.stdout.take().context("the hub's stdout")?;
    let _ = std::io::BufReader::new(out).read_line(&mut first);
    match first.trim().strip_prefix("listening ") {
        Some(addr) => Ok((child, addr.to_string())),
        None => {
            let _ = child.kill();
            let _ = child.wait();
            let why = std::fs::read_to_string(&err).unwrap_or_default();
            bail!("the hub did not start: {:?} {}", first.trim(), why.trim())
        }
    }
}

/// One N and transport: spawn, membership, quiet window, release, checks.
fn measure(n: usize, via: Via, timing: Timing, l: &mut Launcher, pb: &ProgressBar) -> Result<Row> {
    let cluster = l.unique("memchan-scale");
    *active() = Some((cluster.clone(), Vec::with_capacity(n + 1)));
    let mut fleet = Fleet {
        cluster: cluster.clone(),
        procs: Vec::with_capacity(n),
        hub: None,
    };
    let mut extra = vec![
        "--cluster".to_string(),
        cluster.clone(),
        "--nodes".to_string(),
        n.to_string(),
    ];
    if via == Via::Hub {
        pb.set_message(format!("{n} nodes: starting the hub"));
        let (hub, addr) = start_hub(l, &cluster)?;
        fleet.hub = Some(hub);
        extra.extend(["--addrs".to_string(), addr]);
    }
    pb.set_message(format!("{n} nodes ({}): spawning", via.label()));
    let first_spawn = monotonic_ns();
    for i in 0..n {
        let (mut cmd, out, err) = l.command(Kind::ScaleNode, Role::Solo, None, &extra)?;
        if via == Via::Hub {
            cmd.env("MEMCHAN_DOMAIN", format!("h{}", i % HUB_DOMAINS));
        }
        let mut child = cmd
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .context("spawning a node")?;
        watch(&mut child, "a node")?;
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().context("the node's stdout")?;
        fleet.procs.push(Proc {
            child,
            stdin,
            stdout,
            line: Vec::new(),
            ready: None,
            out,
            err,
            reaped: false,
        });
    }
    let spawned = monotonic_ns();

    // 2. Every node's report, as it comes.
    pb.set_message(format!("{n} nodes: joining"));
    let lines = next_lines(&mut fleet, REPORT_TIMEOUT, "report full membership", pb)?;
    for (p, line) in fleet.procs.iter_mut().zip(lines) {
        let r: Ready = serde_json::from_str(&line)
            .with_context(|| format!("parsing a node's report {line:?}"))?;
        p.ready = Some(r);
    }
    let readies: Vec<&Ready> = fleet
        .procs
        .iter()
        .filter_map(|p| p.ready.as_ref())
        .collect();
    let last_members = readies.iter().map(|r| r.members_ns).max().unwrap_or(0);
    let ms = |ns: u64| ns as f64 / 1e6;
    let mut joins: Vec<f64> = readies
        .iter()
        .map(|r| ms(r.joined_ns.saturating_sub(r.started_ns)))
        .collect();
    joins.sort_by(f64::total_cmp);

    // 3. The quiet window.
    pb.set_message(format!(
        "{n} nodes: idle window of {:?}",
        timing.window + timing.settle
    ));
    std::thread::sleep(timing.settle);
    let pids: Vec<u32> = fleet.procs.iter().map(|p| p.child.id()).collect();
    let hub_pid: Vec<u32> = fleet.hub.iter().map(Child::id).collect();
    let t0 = monotonic_ns();
    let (before, hub_before) = (on_cpu_ns(&pids)?, on_cpu_ns(&hub_pid)?);
    std::thread::sleep(timing.window);
    let (after, hub_after) = (on_cpu_ns(&pids)?, on_cpu_ns(&hub_pid)?);
    let t1 = monotonic_ns();
    let used = |before: &BTreeMap<(u32, u32), u64>, after: &BTreeMap<(u32, u32), u64>| -> u64 {
        after
            .iter()
            .map(|(k, v)| v.saturating_sub(before.get(k).copied().unwrap_or(0)))
            .sum()
    };
    let window_ns = t1.saturating_sub(t0).max(1);
    let pct = |ns: u64| ns as f64 / window_ns as f64 * 100.0;
    let nodes_cpu_pct = pct(used(&before, &after));
    let hub_cpu_pct = pct(used(&hub_before, &hub_after));
    let mut threads: Vec<f64> = pids
        .iter()
        .map(|&p| after.keys().filter(|(q, _)| *q == p).count() as f64)
        .collect();
    let mut fds = pids
        .iter()
        .map(|&p| count_dir(&format!("/proc/{p}/fd")).map(|c| c as f64))
        .collect::<Result<Vec<f64>>>()?;
    threads.sort_by(f64::total_cmp);
    fds.sort_by(f64::total_cmp);
    let files = shm_files(&cluster);
    let shm_mb = files.iter().map(|(_, b)| *b).sum::<u64>() as f64 / 1e6;

    // 4. Ask every node what it sees (nobody isolated or lost in the window),
    // then release, reap and check.
    pb.set_message(format!("{n} nodes: checking membership"));
    for p in &mut fleet.procs {
        let stdin = p.stdin.as_mut().context("the node's stdin")?;
        stdin
            .write_all(b"check\n")
            .and_then(|()| stdin.flush())
            .context("asking a node for its members")?;
    }
    let mut members_min = usize::MAX;
    let mut dropped = 0;
    for line in next_lines(&mut fleet, LEAVE_TIMEOUT, "answer the membership check", pb)? {
        let c: Check = serde_json::from_str(&line)
            .with_context(|| format!("parsing a node's answer {line:?}"))?;
        members_min = members_min.min(c.members);
        dropped += usize::from(!c.member);
    }
    pb.set_message(format!("{n} nodes: leaving"));
    for p in &mut fleet.procs {
        p.stdin.take();
    }
    let deadline = Instant::now() + LEAVE_TIMEOUT;
    let mut leaves = Vec::with_capacity(n);
    let mut reaped = 0;
    for p in &mut fleet.procs {
        let status = loop {
            if let Some(s) = p.child.try_wait().context("waiting for a node")? {
                break s;
            }
            if Instant::now() > deadline {
                bail!("a node did not exit within {LEAVE_TIMEOUT:?} of its release");
            }
            std::thread::sleep(Duration::from_millis(2));
        };
        p.reaped = true;
        reaped += 1;
        let stderr = std::fs::read_to_string(&p.err).unwrap_or_default();
        ensure!(
            status.success(),
            "node (pid {}) failed after its release ({status}): {}",
            p.child.id(),
            stderr.trim()
        );
        let text = std::fs::read_to_string(&p.out)
            .with_context(|| format!("reading {}", p.out.display()))?;
        let o: WorkerOutput = serde_json::from_str(&text).context("parsing a node's output")?;
        if let Some(v) = o.series.get("leave_ns").and_then(|v| v.first()) {
            leaves.push(v / 1e6);
        }
    }
    leaves.sort_by(f64::total_cmp);
    if let Some(mut hub) = fleet.hub.take() {
        let _ = hub.kill();
        hub.wait().context("waiting for the hub")?;
    }
    let left_files = shm_files(&cluster);
    ensure!(
        left_files.is_empty(),
        "{} file(s) of the cluster left in /dev/shm after every node exited: {:?}",
        left_files.len(),
        left_files.iter().map(|(p, _)| p).collect::<Vec<_>>()
    );
    for &p in &pids {
        ensure!(
            !Path::new(&format!("/proc/{p}")).exists(),
            "node process {p} still exists after it was reaped"
        );
    }
    drop(fleet);

    let med = |v: &[f64]| {
        if v.is_empty() {
            0.0
        } else {
            stats::percentile(v, 0.5)
        }
    };
    let max = |v: &[f64]| v.last().copied().unwrap_or(0.0);
    Ok(Row {
        nodes: n,
        via,
        spawn_ms: ms(spawned.saturating_sub(first_spawn)),
        membership_ms: ms(last_members.saturating_sub(first_spawn)),
        join_median_ms: med(&joins),
        join_max_ms: max(&joins),
        idle_window_s: window_ns as f64 / 1e9,
        idle_cpu_pct: nodes_cpu_pct + hub_cpu_pct,
        idle_cpu_pct_per_node: nodes_cpu_pct / n as f64,
        hub_cpu_pct,
        threads_median: med(&threads),
        threads_max: max(&threads),
        fds_median: med(&fds),
        fds_max: max(&fds),
        shm_files: files.len(),
        shm_mb,
        members_after_window_min: if members_min == usize::MAX {
            0
        } else {
            members_min
        },
        dropped_after_window: dropped,
        leave_median_ms: med(&leaves),
        leave_max_ms: max(&leaves),
        reaped,
        shm_files_left: left_files.len(),
    })
}

/// The next line each node writes on its stdout, in the nodes' order, taken
/// as they come (`poll`), within `timeout`; `what` names what they were to
/// do, for the errors. End of file before a line means the node failed: its
/// stderr says why.
fn next_lines(
    fleet: &mut Fleet,
    timeout: Duration,
    what: &str,
    pb: &ProgressBar,
) -> Result<Vec<String>> {
    use rustix::event::{poll, PollFd, PollFlags, Timespec};
    let n = fleet.procs.len();
    let mut lines: Vec<Option<String>> = vec![None; n];
    let deadline = Instant::now() + timeout;
    let mut pending: Vec<usize> = (0..n).collect();
    while !pending.is_empty() {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            bail!(
                "{} of {n} nodes did not {what} within {timeout:?}",
                pending.len()
            );
        }
        let ts = Timespec {
            tv_sec: left.as_secs() as i64,
            tv_nsec: i64::from(left.subsec_nanos()),
        };
        let mut fds: Vec<PollFd<'_>> = pending
            .iter()
            .map(|&i| PollFd::new(&fleet.procs[i].stdout, PollFlags::IN))
            .collect();
        match poll(&mut fds, Some(&ts)) {
            Ok(_) | Err(rustix::io::Errno::INTR) => {}
            Err(e) => return Err(e).context("poll on the nodes' stdout"),
        }
        let readable: Vec<usize> = fds
            .iter()
            .zip(&pending)
            .filter(|(f, _)| !f.revents().is_empty())
            .map(|(_, &i)| i)
            .collect();
        drop(fds);
        for i in readable {
            if let Some(line) = read_line(&mut fleet.procs[i], what)? {
                lines[i] = Some(line);
                pending.retain(|&x| x != i);
                pb.inc(1);
            }
        }
    }
    Ok(lines.into_iter().flatten().collect())
}

/// Reads what a node wrote on its stdout: its next whole line, if in.
fn read_line(p: &mut Proc, what: &str) -> Result<Option<String>> {
    let mut buf = [0u8; 512];
    let k = match p.stdout.read(&mut buf) {
        Ok(k) => k,
        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => return Ok(None),
        Err(e) => return Err(e).context("reading a node's stdout"),
    };
    if k == 0 {
        let _ = p.child.wait();
        p.reaped = true;
        let stderr = std::fs::read_to_string(&p.err).unwrap_or_default();
        bail!(
            "node (pid {}) exited before it could {what}: {}",
            p.child.id(),
            stderr.trim()
        );
    }
    p.line.extend_from_slice(&buf[..k]);
    let Some(end) = p.line.iter().position(|&b| b == b'\n') else {
        return Ok(None);
    };
    let line = String::from_utf8_lossy(&p.line[..end]).into_owned();
    p.line.drain(..=end);
    Ok(Some(line))
}

/// On-CPU nanoseconds of every thread of `pids` ((pid, tid) → ns), the first
/// field of `/proc/<pid>/task/<tid>/schedstat`. A node that is gone is an
/// error: the window is only meaningful with all of them alive.
fn on_cpu_ns(pids: &[u32]) -> Result<BTreeMap<(u32, u32), u64>> {
    let mut m = BTreeMap::new();
    for &pid in pids {
        let dir = format!("/proc/{pid}/task");
        let tasks = std::fs::read_dir(&dir)
            .with_context(|| format!("node process {pid} is gone ({dir})"))?;
        for e in tasks.flatten() {
            let Some(tid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
                continue;
            };
            // A thread may exit between the listing and the read: skip it.
            let Ok(s) = std::fs::read_to_string(e.path().join("schedstat")) else {
                continue;
            };
            let ns = s
                .split_whitespace()
                .next()
                .and_then(|x| x.parse::<u64>().ok())
                .with_context(|| format!("unreadable schedstat of {pid}/{tid}: {s:?}"))?;
            m.insert((pid, tid), ns);
        }
    }
    Ok(m)
}

fn count_dir(path: &str) -> Result<usize> {
    Ok(std::fs::read_dir(path)
        .with_context(|| format!("reading {path}"))?
        .count())
}

/// The text report.
fn render_text(rows: &[Row], machine: &Value, timing: Timing, notes: &[String]) -> String {
    use std::fmt::Write as _;
    let mut o = String::new();
    render_header(&mut o, "memchan bench --scale", machine);
    let _ = writeln!(
        o,
        "\n== scale: N idle nodes, one process each, unpinned, on one host (shm) and through one hub on loopback in {HUB_DOMAINS} host domains (hub/{HUB_DOMAINS}); idle CPU over a {:.0} s window {:.1} s after full membership   [scale]",
        timing.window.as_secs_f64(),
        timing.settle.as_secs_f64()
    );
    let _ = writeln!(
        o,
        "   {:>5} {:>6} {:>10} {:>15} {:>16} {:>14} {:>12} {:>8} {:>9} {:>9} {:>14} {:>14}",
        "nodes",
        "via",
        "spawn (ms)",
        "all see N (ms)",
        "join med/max ms",
        "idle CPU (%)",
        "per node (%)",
        "hub (%)",
        "threads",
        "fds",
        "/dev/shm (MB)",
        "leave med/max"
    );
    for r in rows {
        let _ = writeln!(
            o,
            "   {:>5} {:>6} {:>10.1} {:>15.1} {:>16} {:>14.2} {:>12.3} {:>8.2} {:>9} {:>9} {:>14} {:>14}",
            r.nodes,
            r.via.label(),
            r.spawn_ms,
            r.membership_ms,
            format!("{:.1} / {:.1}", r.join_median_ms, r.join_max_ms),
            r.idle_cpu_pct,
            r.idle_cpu_pct_per_node,
            r.hub_cpu_pct,
            format!("{:.0}", r.threads_max),
            format!("{:.0} / {:.0}", r.fds_median, r.fds_max),
            format!("{} / {:.2}", r.shm_files, r.shm_mb),
            format!("{:.1} / {:.1}", r.leave_median_ms, r.leave_max_ms),
        );
    }
    let _ = writeln!(
        o,
        "   all see N: first spawn to the last node's return from wait_for_members(N) (CLOCK_MONOTONIC); \
         idle CPU: on-CPU time of every thread of every node and of the hub (/proc/<pid>/task/*/schedstat) \
         over the window, % of one core; per node: the nodes' alone; hub: the hub's process; \
         threads: most per process; fds: median / max per process; \
         /dev/shm: the cluster's files / MB"
    );
    let _ = writeln!(
        o,
        "   after the window, fewest members a node saw: {}; then all left: {} processes reaped, {} /dev/shm files left",
        rows.iter()
            .map(|r| {
                let mut x = format!("{}/{}", r.members_after_window_min, r.nodes);
                if r.dropped_after_window > 0 {
                    x += &format!(" ({} isolated)", r.dropped_after_window);
                }
                x
            })
            .collect::<Vec<_>>()
            .join(", "),
        rows.iter().map(|r| r.reaped).sum::<usize>(),
        rows.iter().map(|r| r.shm_files_left).sum::<usize>()
    );
    render_notes(&mut o, notes);
    o
}

/// A figure of a row, for the JSON.
type Figure<'a> = &'a dyn Fn(&Row) -> f64;

/// The JSON report: {"figures": {figure: {N: value}}, "units", "runs", ...};
/// the figures through a hub are named `scale_hub_*`.
fn to_json(rows: &[Row], machine: &Value, notes: &[String]) -> Value {
    let figure = |via: Via, f: Figure| -> Value {
        Value::Object(
            rows.iter()
                .filter(|r| r.via == via)
                .map(|r| (r.nodes.to_string(), json!(f(r))))
                .collect::<Map<String, Value>>(),
        )
    };
    let mut figures = Map::new();
    for (via, prefix) in [(Via::SharedMemory, "scale"), (Via::Hub, "scale_hub")] {
        let all: [(&str, Figure); 7] = [
            ("membership_ms", &|r| r.membership_ms),
            ("spawn_ms", &|r| r.spawn_ms),
            ("join_max_ms", &|r| r.join_max_ms),
            ("idle_cpu_pct", &|r| r.idle_cpu_pct),
            ("idle_cpu_pct_per_node", &|r| r.idle_cpu_pct_per_node),
            ("fds_per_process", &|r| r.fds_max),
            ("threads_per_process", &|r| r.threads_max),
        ];
        for (name, f) in all {
            figures.insert(format!("{prefix}_{name}"), figure(via, f));
        }
    }
    figures.insert(
        "scale_hub_hub_cpu_pct".to_string(),
        figure(Via::Hub, &|r| r.hub_cpu_pct),
    );
    json!({
        "figures": figures,
        "units": {
            "scale_membership_ms": "ms from the first spawn until every node saw N members",
            "scale_spawn_ms": "ms from the first spawn to the return of the last",
            "scale_join_max_ms": "ms, slowest Cluster::join",
            "scale_idle_cpu_pct": "% of one core, all nodes together (and the hub, for scale_hub_), idle",
            "scale_idle_cpu_pct_per_node": "% of one core per node, idle",
            "scale_fds_per_process": "open descriptors, most of any node process",
            "scale_threads_per_process": "threads, most of any node process",
            "scale_hub_hub_cpu_pct": "% of one core, the hub's process alone, idle",
            "scale_hub_*": "the same figures through one hub on loopback, the nodes in 4 host domains",
        },
        "runs": rows,
        "machine": machine,
        "notes": notes,
    })
}
