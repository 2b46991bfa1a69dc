//! `memchan run` (also `oshrun`): starts N PEs of one program on this host, each with
//! its rank in the environment and bound to a core, and stands for them as one job.
//!
//! - Ranks are placed in blocks over the cores the launcher may use (its own affinity,
//!   in order): rank r on core r when there are enough, else consecutive ranks share a
//!   core (`--oversubscribe`). Binding is `sched_setaffinity` in the child before exec.
//! - Each PE leads its own process group, so a signal for a PE reaches what it started
//!   too. SIGINT, SIGTERM and SIGHUP sent to the launcher are forwarded to every PE; a
//!   second one kills them.
//! - The first PE to end abnormally (a non-zero exit, or a signal) ends the job: every
//!   other PE gets SIGTERM, and SIGKILL after `GRACE`. The launcher's exit code is that
//!   first non-zero one (128+N for signal N), 124 on `--timeout`.
//! - Once every PE is gone, the launcher removes what the run's cluster left in
//!   `/dev/shm` (its name is unique to the run, so nobody else uses it).
//! - Across hosts (`hosts.rs`) the launcher starts or joins a hub and one launcher per
//!   host (`--host-job`), which runs its block of ranks as above and hears signals from
//!   the launcher on its stdin.

mod args;
mod hosts;

use std::ffi::OsString;
use std::io::{BufRead, BufReader, IsTerminal, Read, Stdin, Write};
use std::os::fd::RawFd;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::PathBuf;
use std::process::{Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, RecvTimeoutError, Sender};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use clap::Args;
use signal_hook::consts::{SIGHUP, SIGINT, SIGKILL, SIGTERM};
use signal_hook::iterator::Signals;
use tracing::{debug, error, info, warn};

use args::{Bind, RunArgs};

/// `memchan run`'s arguments, parsed by `args::parse` in mpirun's spellings.
#[derive(Debug, Clone, Args)]
#[command(disable_help_flag = true)]
pub struct RunCli {
    /// -n N [--hosts H,..|--hostfile F] [-x VAR[=VAL]] [--tag-output] [--timeout SECS]
    /// [--bind-to core|none] [--map-by core] [--oversubscribe] PROG [ARGS...]
    /// (`memchan run --help` for all)
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, num_args = 0.., value_name = "ARGS")]
    pub args: Vec<OsString>,
}

/// How long PEs told to end (SIGTERM, or a forwarded signal) have before SIGKILL.
const GRACE: Duration = Duration::from_secs(2);

/// The exit code of a run that `--timeout` ended (as `timeout(1)`'s).
pub const TIMEOUT_EXIT: i32 = 124;

/// Prints why the launcher stops; a closed stderr (its output piped into `head`)
/// must not turn the job's exit code into a panic's.
fn say(cmd: &str, e: &anyhow::Error) {
    let _ = writeln!(std::io::stderr(), "{cmd}: {e:#}");
}

/// Runs the launcher named `cmd` (`memchan run` or `oshrun`) and gives its exit code.
/// Command-line mistakes are printed with the usage hint and give 2.
pub fn main(cmd: &str, argv: Vec<OsString>) -> i32 {
    let run = match args::parse(argv, |k| std::env::var(k).ok()) {
        Ok(args::Parsed::Help) => {
            let _ = writeln!(std::io::stdout(), "{}", args::USAGE);
            return 0;
        }
        Ok(args::Parsed::Run(a)) => launch(&a),
        Ok(args::Parsed::HostJob) => hosts::host_job(),
        Err(e) => {
            say(cmd, &e);
            return 2;
        }
    };
    match run {
        Ok(code) => code,
        Err(e) => {
            say(cmd, &e);
            // As a shell says it: 127 for a program not found, 126 for one it may not run.
            match e.downcast_ref::<std::io::Error>().map(std::io::Error::kind) {
                Some(std::io::ErrorKind::NotFound) => 127,
                Some(std::io::ErrorKind::PermissionDenied) => 126,
                _ => 1,
            }
        }
    }
}

/// What the waiting loop hears about.
enum Event {
    /// The PE of this rank ended (and is reaped).
    Exited(usize, ExitStatus),
    /// The launcher received this signal.
    Signal(i32),
}

/// Where a block of ranks runs: the whole job on this host, or one host's block of a
/// run across hosts.
struct Block {
    cluster: String,
    /// The rank of the block's first PE.
    first: usize,
    /// The number of PEs in the whole job.
    size: usize,
    /// Across hosts: the hub every PE joins through, and the key: an open file
    /// (a memfd) every PE inherits and reads as `/proc/self/fd/N`.
    hub: Option<(String, Option<RawFd>)>,
    /// The directory the PEs start in (`None`: the launcher's).
    cwd: Option<PathBuf>,
    /// Started by a launcher on another host (`--host-job`): the PEs read nothing and
    /// die with this process, whose stdin carries the launcher's signals.
    host_job: bool,
}

fn launch(a: &RunArgs) -> Result<i32> {
    if let Some(plan) = hosts::plan_across_hosts(a)? {
        return hosts::launch(a, &plan);
    }
    let cluster = cluster_name();
    let block = Block {
        cluster,
        first: 0,
        size: a.np as usize,
        hub: None,
        cwd: None,
        host_job: false,
    };
    launch_block(a, &block, None)
}

/// Starts `a.np` PEs of `block` on this host and stands for them until they end;
/// `control` (a host job's stdin) carries `signal N` lines, its end kills the PEs.
fn launch_block(a: &RunArgs, block: &Block, control: Option<BufReader<Stdin>>) -> Result<i32> {
    let cluster = &block.cluster;
    let np = a.np as usize;
    let cpus = allowed_cpus()?;
    if np > cpus.len() && !a.oversubscribe {
        bail!(
            "{np} PEs but only {} cores to run them on ({}): pass --oversubscribe to let PEs share cores",
            cpus.len(),
            list(&cpus)
        );
    }
    debug!(%cluster, np, first = block.first, program = ?a.program, "starting PEs");

    // Before the first spawn, so that no signal falls between the PEs' start and the
    // forwarding.
    let (tx, rx) = mpsc::channel();
    let sig = SignalThread::start(&tx)?;
    if let Some(control) = control {
        let tx = tx.clone();
        std::thread::spawn(move || hosts::read_control(control, &tx));
    }

    let mut pids = Vec::with_capacity(np);
    let (pump_tx, pump_rx) = mpsc::channel::<()>();
    let mut pumps = 0;
    for rank in 0..np {
        let cpu = (a.bind == Bind::Core).then(|| place(rank, np, &cpus));
        let mut cmd = pe_command(a, block, rank, cpu);
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                // The ones already started are alive: end them before reporting.
                for &pid in &pids {
                    signal_group(pid, SIGKILL);
                }
                drop(rx);
                sig.stop();
                remove_shm(cluster);
                return Err(anyhow::Error::new(e).context(format!(
                    "starting PE {}: {:?}",
                    block.first + rank,
                    a.program
                )));
            }
        };
        let pid = child.id() as i32;
        let rank = block.first + rank;
        if a.report_bindings {
            match cpu {
                Some(c) => info!(rank, pid, cpu = c, "bound"),
                None => info!(rank, pid, "not bound"),
            }
        }
        debug!(rank, pid, ?cpu, "PE started");
        pids.push(pid);
        if let Some(mut to) = child.stdin.take() {
            // Ends with the launcher's stdin, or once the PE closes its end.
            std::thread::spawn(move || std::io::copy(&mut std::io::stdin().lock(), &mut to));
        }
        if a.tag_output {
            if let Some(out) = child.stdout.take() {
                spawn_pump(out, rank, false, pump_tx.clone());
                pumps += 1;
            }
            if let Some(err) = child.stderr.take() {
                spawn_pump(err, rank, true, pump_tx.clone());
                pumps += 1;
            }
        }
        spawn_waiter(child, pids.len() - 1, tx.clone());
    }
    drop(tx);
    drop(pump_tx);

    let mut pes = Pes {
        pids: &pids,
        first: block.first,
    };
    let code = supervise(a.timeout, &mut pes, &rx);

    sig.stop();
    // The pipes close when the last process holding them ends; one that left its PE's
    // process group could keep one open, so the wait for the last lines is bounded.
    let until = Instant::now() + GRACE;
    for _ in 0..pumps {
        if pump_rx
            .recv_timeout(until.saturating_duration_since(Instant::now()))
            .is_err()
        {
            warn!("a PE's output is still open after every PE ended; not waiting for it");
            break;
        }
    }
    remove_shm(cluster);
    debug!(code, "run ended");
    Ok(code)
}

/// Turns SIGINT, SIGTERM and SIGHUP sent to the launcher into events, until stopped.
struct SignalThread {
    handle: signal_hook::iterator::Handle,
    thread: std::thread::JoinHandle<()>,
}

impl SignalThread {
    fn start(tx: &Sender<Event>) -> Result<SignalThread> {
        let mut signals =
            Signals::new([SIGINT, SIGTERM, SIGHUP]).context("installing signal handlers")?;
        let handle = signals.handle();
        let tx = tx.clone();
        let thread = std::thread::spawn(move || {
            for s in signals.forever() {
                if tx.send(Event::Signal(s)).is_err() {
                    break;
                }
            }
        });
        Ok(SignalThread { handle, thread })
    }

    fn stop(self) {
        self.handle.close();
        let _ = self.thread.join();
    }
}

/// Waits for `child` on a thread of its own and reports its end as member `i`.
fn spawn_waiter(mut child: std::process::Child, i: usize, tx: Sender<Event>) {
    std::thread::spawn(move || {
        // wait() retries EINTR; an error here means the child is not ours to wait for.
        let status = child
            .wait()
            .unwrap_or_else(|_| ExitStatus::from_raw(1 << 8));
        let _ = tx.send(Event::Exited(i, status));
    });
}

/// What `supervise` stands for: the PEs of this host, or the launchers of the hosts
/// of a run across hosts.
trait Members {
    fn len(&self) -> usize;
    /// Sends `sig` to member `i` (still running).
    fn signal(&mut self, i: usize, sig: i32);
    /// Logs that member `i` ended abnormally first, which ends the job.
    fn log_failure(&self, i: usize, status: ExitStatus);
}

/// The PEs of this host: member i is rank `first + i`, leading process group `pids[i]`.
struct Pes<'a> {
    pids: &'a [i32],
    first: usize,
}

impl Members for Pes<'_> {
    fn len(&self) -> usize {
        self.pids.len()
    }

    fn signal(&mut self, i: usize, sig: i32) {
        signal_group(self.pids[i], sig);
    }

    fn log_failure(&self, i: usize, status: ExitStatus) {
        let rank = self.first + i;
        match status.signal() {
            Some(sig) => error!(rank, signal = sig, "PE killed by a signal: ending every PE"),
            None => error!(
                rank,
                code = exit_code(status),
                "PE exited with a non-zero code: ending every PE"
            ),
        }
    }
}

/// Waits until every member has ended, forwarding signals, ending the job on the first
/// abnormal end or the timeout; gives the exit code.
fn supervise(
    timeout: Option<Duration>,
    members: &mut dyn Members,
    rx: &mpsc::Receiver<Event>,
) -> i32 {
    let np = members.len();
    let mut alive = vec![true; np];
    let mut running = np;
    let mut first_failure: Option<i32> = None;
    let mut deadline = timeout.map(|t| Instant::now() + t);
    let mut interrupted: Option<i32> = None;
    // When the PEs still running get SIGKILL.
    let mut kill_at: Option<Instant> = None;

    while running > 0 {
        let wake = [deadline, kill_at].into_iter().flatten().min();
        let ev = match wake {
            Some(t) => rx.recv_timeout(t.saturating_duration_since(Instant::now())),
            None => rx.recv().map_err(|_| RecvTimeoutError::Disconnected),
        };
        match ev {
            Ok(Event::Exited(rank, status)) => {
                alive[rank] = false;
                running -= 1;
                let code = exit_code(status);
                debug!(member = rank, code, "ended");
                if code != 0 && first_failure.is_none() {
                    first_failure = Some(code);
                    if kill_at.is_none() {
                        members.log_failure(rank, status);
                        signal_all(members, &alive, SIGTERM);
                        kill_at = Some(Instant::now() + GRACE);
                    }
                }
            }
            Ok(Event::Signal(sig)) => {
                if interrupted.is_some() {
                    warn!(signal = sig, "signalled again: killing every PE");
                    signal_all(members, &alive, SIGKILL);
                } else {
                    info!(signal = sig, "forwarding the signal to every PE");
                    signal_all(members, &alive, sig);
                    interrupted = Some(sig);
                    kill_at = kill_at.or(Some(Instant::now() + GRACE));
                }
            }
            Err(RecvTimeoutError::Timeout) => {
                let now = Instant::now();
                if deadline.is_some_and(|d| now >= d) {
                    deadline = None;
                    error!(timeout = ?timeout.unwrap_or_default(), "timeout: ending every PE");
                    first_failure = first_failure.or(Some(TIMEOUT_EXIT));
                    signal_all(members, &alive, SIGTERM);
                    kill_at = kill_at.or(Some(now + GRACE));
                }
                if kill_at.is_some_and(|k| now >= k) {
                    kill_at = None;
                    warn!(running, "PEs still running after SIGTERM: killing them");
                    signal_all(members, &alive, SIGKILL);
                }
            }
            // Every waiter thread sends before it ends, so this means none is left.
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    first_failure.or(interrupted.map(|s| 128 + s)).unwrap_or(0)
}

/// The command of the PE of local rank `local` of `block`: the program, its rank
/// variables, its binding.
fn pe_command(a: &RunArgs, block: &Block, local: usize, cpu: Option<usize>) -> Command {
    let mut cmd = Command::new(&a.program);
    cmd.args(&a.program_args);
    let rank = block.first + local;
    let (r, n) = (rank.to_string(), block.size.to_string());
    let (lr, ln) = (local.to_string(), a.np.to_string());
    cmd.env(memchan_launch::CLUSTER, &block.cluster);
    // Every launcher's names are set, so that a PE that reads PMI's or Open MPI's
    // finds the same numbers as one that reads ours.
    for (k, v) in [
        (memchan_launch::RANK, &r),
        (memchan_launch::SIZE, &n),
        (memchan_launch::LOCAL_RANK, &lr),
        (memchan_launch::LOCAL_SIZE, &ln),
        ("PMI_RANK", &r),
        ("PMI_SIZE", &n),
        ("OMPI_COMM_WORLD_RANK", &r),
        ("OMPI_COMM_WORLD_SIZE", &n),
        ("OMPI_COMM_WORLD_LOCAL_RANK", &lr),
        ("OMPI_COMM_WORLD_LOCAL_SIZE", &ln),
    ] {
        cmd.env(k, v);
    }
    if let Some((hub, key)) = &block.hub {
        // Across hosts every PE joins through the hub, those on one host too.
        cmd.env("MEMCHAN_HUB", hub).env_remove("MEMCHAN_HUB_HOST");
        match *key {
            Some(fd) => {
                cmd.env("MEMCHAN_KEY_FILE", format!("/proc/self/fd/{fd}"));
                // SAFETY: between fork and exec, one fcntl on an fd this process owns
                // (the host job's memfd, open until its PEs have ended): the PE keeps
                // it across exec, the only way it is given the key.
                unsafe {
                    cmd.pre_exec(move || {
                        if libc::fcntl(fd, libc::F_SETFD, 0) != 0 {
                            return Err(std::io::Error::last_os_error());
                        }
                        Ok(())
                    });
                }
            }
            None => {
                cmd.env_remove("MEMCHAN_KEY_FILE");
            }
        }
    }
    if let Some(dir) = &block.cwd {
        cmd.current_dir(dir);
    }
    // A launch inside a Slurm job step must not let a PE take the step's rank for its
    // own (`rank_from_env` prefers MEMCHAN_RANK, but other readers may not).
    cmd.env_remove("SLURM_PROCID").env_remove("SLURM_NTASKS");
    for (k, v) in &a.export {
        match v {
            Some(v) => {
                cmd.env(k, v);
            }
            // On this host the PE inherits the launcher's environment already.
            None if std::env::var_os(k).is_none() => {
                warn!(var = %k, "-x names a variable that is not set")
            }
            None => {}
        }
    }
    // Like mpirun: rank 0 reads the launcher's stdin, the others read nothing. A PE
    // leads its own process group, which is not the terminal's foreground group, so
    // it would be stopped (SIGTTIN) reading a terminal: the launcher copies one for it.
    // A host job's stdin is its launcher's control channel: no PE reads it.
    cmd.stdin(match rank {
        _ if block.host_job => Stdio::null(),
        0 if std::io::stdin().is_terminal() => Stdio::piped(),
        0 => Stdio::inherit(),
        _ => Stdio::null(),
    });
    if a.tag_output {
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    }
    cmd.process_group(0);
    if block.host_job {
        let parent = std::process::id() as libc::pid_t;
        // SAFETY: between fork and exec only async-signal-safe calls: prctl and
        // getppid take integers. A PE of a host job dies with it, so that a host job
        // killed by its launcher (SIGKILL, no chance to end its PEs) leaves none
        // behind; a parent gone before the prctl is seen by getppid.
        unsafe {
            cmd.pre_exec(move || {
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGKILL as libc::c_ulong) != 0 {
                    return Err(std::io::Error::last_os_error());
                }
                if libc::getppid() != parent {
                    return Err(std::io::Error::from_raw_os_error(libc::ESRCH));
                }
                Ok(())
            });
        }
    }
    if let Some(cpu) = cpu {
        let mut set = rustix::thread::CpuSet::new();
        set.set(cpu);
        // SAFETY: the closure runs in the child between fork and exec, where only
        // async-signal-safe work is allowed: it makes one system call on a set built
        // before the fork, and an error becomes an `io::Error` from the raw code,
        // without allocating.
        unsafe {
            cmd.pre_exec(move || {
                rustix::thread::sched_setaffinity(None, &set).map_err(std::io::Error::from)
            });
        }
    }
    cmd
}

/// Copies one PE's stdout or stderr to the launcher's, a whole line at a time, each
/// prefixed with `[RANK] ` (a last line without a newline gets one).
fn spawn_pump(from: impl Read + Send + 'static, rank: usize, stderr: bool, done: Sender<()>) {
    std::thread::spawn(move || {
        let mut from = BufReader::new(from);
        let mut line = Vec::new();
        let prefix = format!("[{rank}] ");
        loop {
            line.clear();
            match from.read_until(b'\n', &mut line) {
                Ok(0) | Err(_) => break,
                Ok(_) => {}
            }
            if line.last() != Some(&b'\n') {
                line.push(b'\n');
            }
            // One write per line (the prefix in the same buffer): lines of different
            // PEs never interleave, those of other hosts' launchers sharing the
            // output neither. A closed output is the reader's choice: keep draining.
            line.splice(0..0, prefix.bytes());
            let r = if stderr {
                std::io::stderr().lock().write_all(&line)
            } else {
                let mut o = std::io::stdout().lock();
                o.write_all(&line).and_then(|_| o.flush())
            };
            let _ = r;
        }
        let _ = done.send(());
    });
}

/// The core of `rank` of `np`: blocks of consecutive ranks over the cores in order,
/// one rank per core when there are enough, else as even blocks as fit.
pub fn place(rank: usize, np: usize, cpus: &[usize]) -> usize {
    if np <= cpus.len() {
        cpus[rank]
    } else {
        cpus[rank * cpus.len() / np]
    }
}

/// The CPUs the launcher may run on (its affinity), in order.
fn allowed_cpus() -> Result<Vec<usize>> {
    let set =
        rustix::thread::sched_getaffinity(None).context("reading the launcher's CPU affinity")?;
    let cpus: Vec<usize> = (0..rustix::thread::CpuSet::MAX_CPU)
        .filter(|&c| set.is_set(c))
        .collect();
    if cpus.is_empty() {
        bail!("the launcher's CPU affinity holds no CPU");
    }
    Ok(cpus)
}

fn list(cpus: &[usize]) -> String {
    cpus.iter()
        .map(usize::to_string)
        .collect::<Vec<_>>()
        .join(",")
}

/// A cluster name no other run uses: the launcher's pid and the time.
fn cluster_name() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    format!("run-{}-{nanos:x}", std::process::id())
}

/// The shell's code for how a PE ended: its exit code, or 128+N for signal N.
fn exit_code(s: ExitStatus) -> i32 {
    s.code().or(s.signal().map(|sig| 128 + sig)).unwrap_or(1)
}

fn signal_all(members: &mut dyn Members, alive: &[bool], sig: i32) {
    for (i, _) in alive.iter().enumerate().filter(|(_, &a)| a) {
        members.signal(i, sig);
    }
}

/// Sends `sig` to the process group the PE `pid` leads. Only PEs not yet reaped are
/// signalled, so the group's id still names that PE's group (a waiter thread that has
/// just reaped it leaves a window of one message, in which the id could be reused only
/// if the pid space wrapped around).
fn signal_group(pid: i32, sig: i32) {
    // SAFETY: kill(2) takes two integers and touches none of our memory.
    if unsafe { libc::kill(-pid, sig) } != 0 {
        debug!(pid, sig, err = %std::io::Error::last_os_error(), "signalling a PE's group");
    }
}

/// Removes `/dev/shm/memchan.<cluster>.*`: what PEs that were killed could not.
fn remove_shm(cluster: &str) {
    let prefix = format!("memchan.{cluster}.");
    let Ok(dir) = std::fs::read_dir("/dev/shm") else {
        return;
    };
    let mut removed = 0;
    for e in dir.flatten() {
        if e.file_name()
            .to_str()
            .is_some_and(|n| n.starts_with(&prefix))
            && std::fs::remove_file(e.path()).is_ok()
        {
            removed += 1;
        }
    }
    if removed > 0 {
        info!(%cluster, removed, "removed the run's leftover shared-memory objects");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn blocks() {
        let cpus = [2, 3, 5];
        let at = |np: usize| (0..np).map(|r| place(r, np, &cpus)).collect::<Vec<_>>();
        assert_eq!(at(2), [2, 3]);
        assert_eq!(at(3), [2, 3, 5]);
        assert_eq!(at(4), [2, 2, 3, 5]);
        assert_eq!(at(6), [2, 2, 3, 3, 5, 5]);
        assert_eq!(at(7), [2, 2, 2, 3, 3, 5, 5]);
    }

    #[test]
    fn codes() {
        assert_eq!(exit_code(ExitStatus::from_raw(3 << 8)), 3);
        assert_eq!(exit_code(ExitStatus::from_raw(9)), 137);
        assert_eq!(exit_code(ExitStatus::from_raw(0)), 0);
    }
}
