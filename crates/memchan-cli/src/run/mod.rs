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

mod args;

use std::ffi::OsString;
use std::io::{BufRead, BufReader, IsTerminal, Read, Write};
use std::os::unix::process::{CommandExt, ExitStatusExt};
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

/// Runs the launcher named `cmd` (`memchan run` or `oshrun`) and gives its exit code.
/// Command-line mistakes are printed with the usage hint and give 2.
pub fn main(cmd: &str, argv: Vec<OsString>) -> i32 {
    let a = match args::parse(argv, |k| std::env::var(k).ok()) {
        Ok(args::Parsed::Help) => {
            println!("{}", args::USAGE);
            return 0;
        }
        Ok(args::Parsed::Run(a)) => a,
        Err(e) => {
            eprintln!("{cmd}: {e:#}");
            return 2;
        }
    };
    match launch(&a) {
        Ok(code) => code,
        Err(e) => {
            eprintln!("{cmd}: {e:#}");
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

fn launch(a: &RunArgs) -> Result<i32> {
    check_hosts(&a.hosts)?;
    let np = a.np as usize;
    let cpus = allowed_cpus()?;
    if np > cpus.len() && !a.oversubscribe {
        bail!(
            "{np} PEs but only {} cores to run them on ({}): pass --oversubscribe to let PEs share cores",
            cpus.len(),
            list(&cpus)
        );
    }
    let cluster = cluster_name();
    debug!(%cluster, np, program = ?a.program, "starting PEs");

    // Before the first spawn, so that no signal falls between the PEs' start and the
    // forwarding.
    let (tx, rx) = mpsc::channel();
    let mut signals =
        Signals::new([SIGINT, SIGTERM, SIGHUP]).context("installing signal handlers")?;
    let sig_handle = signals.handle();
    let sig_tx = tx.clone();
    let sig_thread = std::thread::spawn(move || {
        for s in signals.forever() {
            if sig_tx.send(Event::Signal(s)).is_err() {
                break;
            }
        }
    });

    let mut pids = Vec::with_capacity(np);
    let (pump_tx, pump_rx) = mpsc::channel::<()>();
    let mut pumps = 0;
    for rank in 0..np {
        let cpu = (a.bind == Bind::Core).then(|| place(rank, np, &cpus));
        let mut cmd = pe_command(a, &cluster, rank, cpu);
        let mut child = match cmd.spawn() {
            Ok(c) => c,
            Err(e) => {
                // The ones already started are alive: end them before reporting.
                for &pid in &pids {
                    signal_group(pid, SIGKILL);
                }
                drop(rx);
                sig_handle.close();
                let _ = sig_thread.join();
                remove_shm(&cluster);
                return Err(
                    anyhow::Error::new(e).context(format!("starting PE {rank}: {:?}", a.program))
                );
            }
        };
        let pid = child.id() as i32;
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
        let tx = tx.clone();
        std::thread::spawn(move || {
            // wait() retries EINTR; an error here means the child is not ours to wait for.
            let status = child
                .wait()
                .unwrap_or_else(|_| ExitStatus::from_raw(1 << 8));
            let _ = tx.send(Event::Exited(rank, status));
        });
    }
    drop(tx);
    drop(pump_tx);

    let code = supervise(a, &pids, &rx);

    sig_handle.close();
    let _ = sig_thread.join();
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
    remove_shm(&cluster);
    debug!(code, "run ended");
    Ok(code)
}

/// Waits until every PE has ended, forwarding signals, ending the job on the first
/// abnormal end or the timeout; gives the exit code.
fn supervise(a: &RunArgs, pids: &[i32], rx: &mpsc::Receiver<Event>) -> i32 {
    let np = pids.len();
    let mut alive = vec![true; np];
    let mut running = np;
    let mut first_failure: Option<i32> = None;
    let mut deadline = a.timeout.map(|t| Instant::now() + t);
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
                debug!(rank, code, "PE ended");
                if code != 0 && first_failure.is_none() {
                    first_failure = Some(code);
                    if kill_at.is_none() {
                        match status.signal() {
                            Some(sig) => {
                                error!(rank, signal = sig, "PE killed by a signal: ending every PE")
                            }
                            None => error!(
                                rank,
                                code, "PE exited with a non-zero code: ending every PE"
                            ),
                        }
                        signal_all(pids, &alive, SIGTERM);
                        kill_at = Some(Instant::now() + GRACE);
                    }
                }
            }
            Ok(Event::Signal(sig)) => {
                if interrupted.is_some() {
                    warn!(signal = sig, "signalled again: killing every PE");
                    signal_all(pids, &alive, SIGKILL);
                } else {
                    info!(signal = sig, "forwarding the signal to every PE");
                    signal_all(pids, &alive, sig);
                    interrupted = Some(sig);
                    kill_at = kill_at.or(Some(Instant::now() + GRACE));
                }
            }
            Err(RecvTimeoutError::Timeout) => {
                let now = Instant::now();
                if deadline.is_some_and(|d| now >= d) {
                    deadline = None;
                    error!(timeout = ?a.timeout.unwrap_or_default(), "timeout: ending every PE");
                    first_failure = first_failure.or(Some(TIMEOUT_EXIT));
                    signal_all(pids, &alive, SIGTERM);
                    kill_at = kill_at.or(Some(now + GRACE));
                }
                if kill_at.is_some_and(|k| now >= k) {
                    kill_at = None;
                    warn!(running, "PEs still running after SIGTERM: killing them");
                    signal_all(pids, &alive, SIGKILL);
                }
            }
            // Every waiter thread sends before it ends, so this means none is left.
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    first_failure.or(interrupted.map(|s| 128 + s)).unwrap_or(0)
}

/// The command of one PE: the program, its rank variables, its binding.
fn pe_command(a: &RunArgs, cluster: &str, rank: usize, cpu: Option<usize>) -> Command {
    let mut cmd = Command::new(&a.program);
    cmd.args(&a.program_args);
    let (r, n) = (rank.to_string(), a.np.to_string());
    cmd.env(memchan_launch::CLUSTER, cluster);
    // One host: the local rank is the rank. Every launcher's names are set, so that a
    // PE that reads PMI's or Open MPI's finds the same numbers as one that reads ours.
    for (k, v) in [
        (memchan_launch::RANK, &r),
        (memchan_launch::SIZE, &n),
        (memchan_launch::LOCAL_RANK, &r),
        (memchan_launch::LOCAL_SIZE, &n),
        ("PMI_RANK", &r),
        ("PMI_SIZE", &n),
        ("OMPI_COMM_WORLD_RANK", &r),
        ("OMPI_COMM_WORLD_SIZE", &n),
        ("OMPI_COMM_WORLD_LOCAL_RANK", &r),
        ("OMPI_COMM_WORLD_LOCAL_SIZE", &n),
    ] {
        cmd.env(k, v);
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
    cmd.stdin(match rank {
        0 if std::io::stdin().is_terminal() => Stdio::piped(),
        0 => Stdio::inherit(),
        _ => Stdio::null(),
    });
    if a.tag_output {
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    }
    cmd.process_group(0);
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
            // One write_all per line under the stream's lock: lines of different PEs
            // never interleave. A closed output is the reader's choice: keep draining.
            let r = if stderr {
                let mut e = std::io::stderr().lock();
                e.write_all(prefix.as_bytes())
                    .and_then(|_| e.write_all(&line))
            } else {
                let mut o = std::io::stdout().lock();
                o.write_all(prefix.as_bytes())
                    .and_then(|_| o.write_all(&line))
                    .and_then(|_| o.flush())
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

/// Refuses hosts other than this one: starting PEs on other hosts is not built yet.
fn check_hosts(hosts: &[String]) -> Result<()> {
    let uname = rustix::system::uname();
    let me = uname.nodename().to_string_lossy().into_owned();
    let short = me.split('.').next().unwrap_or(&me).to_string();
    let remote: Vec<&String> = hosts
        .iter()
        .filter(|h| {
            !["localhost", "127.0.0.1", "::1", me.as_str(), short.as_str()].contains(&h.as_str())
        })
        .collect();
    if let Some(h) = remote.first() {
        bail!(
            "starting PEs on other hosts (`{h}`) is not supported yet: start one launcher per host \
             (srun, or by hand) with MEMCHAN_HUB set, see the README"
        );
    }
    Ok(())
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

fn signal_all(pids: &[i32], alive: &[bool], sig: i32) {
    for (&pid, _) in pids.iter().zip(alive).filter(|(_, &a)| a) {
        signal_group(pid, sig);
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

    #[test]
    fn other_hosts_are_not_yet() {
        assert!(check_hosts(&["localhost".into(), "127.0.0.1".into()]).is_ok());
        let e = check_hosts(&["localhost".into(), "far-away-host".into()])
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("`far-away-host`") && e.contains("not supported yet"),
            "{e}"
        );
    }
}
