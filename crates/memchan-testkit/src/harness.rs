//! Real processes for multi-node tests: the test binary re-executes itself as a worker,
//! never `fork`s.
//!
//! A test binary using [`Worker`] (or [`Transport::spawn`]) provides the worker entry
//! itself: an ignored test named `worker` at the root of the binary that dispatches on
//! the `MEMCHAN_ROLE` environment variable and reads its arguments with [`args`]. The
//! worker is started as `current_exe() --ignored --exact worker`, so it runs the test
//! binary that spawned it, with that binary's roles:
//!
//! ```no_run
//! use memchan_testkit::harness::{args, Worker};
//! use std::time::Duration;
//!
//! #[test]
//! #[ignore = "entry point for worker processes"]
//! fn worker() {
//!     let a = args();
//!     match std::env::var("MEMCHAN_ROLE").expect("MEMCHAN_ROLE").as_str() {
//!         "hello" => println!("HELLO {}", a.join(" ")),
//!         other => panic!("unknown role {other}"),
//!     }
//! }
//!
//! #[test]
//! fn a_worker_says_hello() {
//!     let mut w = Worker::spawn("hello", &["world".into()]);
//!     assert_eq!(w.expect_line("HELLO", Duration::from_secs(30)), "world");
//!     w.finish(Duration::from_secs(30));
//! }
//! ```
//!
//! A conformance test is a function of a [`Transport`]; `on_every_transport!(f)` makes
//! one `#[test]` of it per line of [`every_transport!`](crate::every_transport).

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// A cluster name no other test (or test run) uses.
pub fn unique_cluster(tag: &str) -> String {
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "t-{tag}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

/// The transport a conformance test runs on: the suite is written once against the
/// public API (the transport contract's one face) and every test runs on every
/// transport listed in [`every_transport!`](crate::every_transport).
pub enum Transport {
    /// One host, shared memory.
    Shm,
    /// Through a hub (run by the test process; the nodes are separate processes
    /// joined over TCP, workers find it through `MEMCHAN_HUB`).
    Hub(memchan_hub::Hub),
}

/// The liveness timing a test's cluster runs with (the hub's, for a hub).
#[derive(Clone, Copy)]
pub struct Timing {
    pub heartbeat: Duration,
    pub failure_timeout: Duration,
}

impl Default for Timing {
    fn default() -> Self {
        Timing {
            heartbeat: Duration::from_millis(100),
            failure_timeout: Duration::from_millis(800),
        }
    }
}

/// Lists every transport the suite runs on, one line each: the name of its test
/// variant and how the test process sets it up for a [`Timing`]. A new transport is
/// one line here; every `on_every_transport!` test then runs on it too.
///
/// `every_transport!(m!(args))` expands to `m!(args; name => setup, ...)`; `m` may be
/// a path (`$crate::instantiate_per_transport`), so the macro needs no import at the
/// caller.
#[macro_export]
macro_rules! every_transport {
    ($($then:ident)::+ ! ($($args:tt)*)) => {
        $($then)::+!($($args)*;
            shm => |_t: $crate::harness::Timing| $crate::harness::Transport::Shm,
            hub => $crate::harness::Transport::hub_timed,
        );
    };
}

/// Runs the test function `$f(&Transport)` once per transport of [`every_transport!`]
/// (as `$f::shm`, `$f::hub`, ...), with the default timing or `$timing`. Invoke it at
/// the level of `$f` (the generated module calls `super::$f`).
#[macro_export]
macro_rules! on_every_transport {
    ($f:ident) => {
        $crate::on_every_transport!($f, $crate::harness::Timing::default());
    };
    ($f:ident, $timing:expr) => {
        $crate::every_transport!($crate::instantiate_per_transport!($f, $timing));
    };
}

/// One `#[test]` per transport line (used by `on_every_transport!`).
#[macro_export]
macro_rules! instantiate_per_transport {
    ($f:ident, $timing:expr; $($name:ident => $setup:expr),* $(,)?) => {
        mod $f {
            $(
                #[test]
                fn $name() {
                    let setup = $setup;
                    super::$f(&setup($timing));
                }
            )*
        }
    };
}

impl Transport {
    /// A fresh hub with the given heartbeat and failure timeout.
    pub fn hub_timed(t: Timing) -> Transport {
        let hub = memchan_hub::Hub::start(memchan_hub::HubConfig {
            heartbeat: t.heartbeat,
            failure_timeout: t.failure_timeout,
            ..Default::default()
        })
        .expect("start a hub");
        Transport::Hub(hub)
    }

    fn hub_addr(&self) -> Option<String> {
        match self {
            Transport::Shm => None,
            Transport::Hub(h) => Some(h.local_addr().to_string()),
        }
    }

    /// `cfg` pointed at this transport.
    pub fn config(&self, cfg: memchan::Config) -> memchan::Config {
        match self.hub_addr() {
            Some(addr) => cfg.with_hub(memchan::HubSpec::connect(addr)),
            None => cfg.without_hub(),
        }
    }

    /// Joins `name` in this process.
    pub fn join(&self, name: &str) -> memchan::Result<memchan::Cluster> {
        self.join_with(name, memchan::Config::default())
    }

    /// Joins `name` in this process with `cfg` (its hub replaced by this transport's).
    pub fn join_with(&self, name: &str, cfg: memchan::Config) -> memchan::Result<memchan::Cluster> {
        memchan::Cluster::join_with(name, self.config(cfg))
    }

    /// Starts a worker process on this transport.
    pub fn spawn(&self, role: &str, args: &[String]) -> Worker {
        let mut cmd = Command::new(std::env::current_exe().expect("test binary"));
        cmd.env_remove("MEMCHAN_HUB").env_remove("MEMCHAN_HUB_HOST");
        let env: Vec<(&str, String)> = self
            .hub_addr()
            .map(|a| ("MEMCHAN_HUB", a))
            .into_iter()
            .collect();
        Worker::start(cmd, role, args, &env)
    }

    /// Whether this is the hub transport.
    pub fn is_hub(&self) -> bool {
        matches!(self, Transport::Hub(_))
    }

    /// The status report of `cluster` on this transport, as `memchan status` shows it
    /// (one host: its control block; hub: the hub's view).
    ///
    /// # Panics
    /// If it cannot be read (a test failure).
    pub fn status(&self, cluster: &str) -> memchan_core::status::ClusterStatus {
        match self {
            Transport::Shm => memchan_shm::status::query(cluster).expect("one-host status"),
            Transport::Hub(h) => h.status(),
        }
    }
}

/// A worker process, killed (by PID) and reaped when dropped. Its stdout is read by
/// a thread, so every wait on it has a deadline and a hung worker fails the test
/// instead of hanging it.
pub struct Worker {
    pub child: Child,
    lines: Receiver<String>,
    /// Its stderr lines, when started with [`Worker::spawn_in_capturing`] (they are
    /// echoed to this process's stderr as well).
    err_lines: Option<Receiver<String>>,
}

impl Worker {
    /// Starts the worker `role` with `args` (passed as `MEMCHAN_ARGS`, space-separated).
    pub fn spawn(role: &str, args: &[String]) -> Worker {
        Worker::start(
            Command::new(std::env::current_exe().expect("test binary")),
            role,
            args,
            &[],
        )
    }

    /// Starts the worker `role` inside the network namespace `ns` (`ip netns exec`,
    /// which execs, so the worker's PID is the child's), with `env` added to its
    /// environment.
    pub fn spawn_in(ns: &str, role: &str, args: &[String], env: &[(&str, String)]) -> Worker {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", ns])
            .arg(std::env::current_exe().expect("test binary"));
        Worker::start(cmd, role, args, env)
    }

    /// Starts the worker `role` through `wrapper` (a command whose last argument is
    /// followed by the test binary, e.g. `ip netns exec NS unshare -T --monotonic S`).
    pub fn spawn_wrapped(
        mut wrapper: Command,
        role: &str,
        args: &[String],
        env: &[(&str, String)],
    ) -> Worker {
        wrapper.arg(std::env::current_exe().expect("test binary"));
        Worker::start(wrapper, role, args, env)
    }

    /// Like [`spawn_in`](Self::spawn_in), with the worker's stderr captured line by
    /// line for [`expect_stderr`](Self::expect_stderr) (and echoed to ours).
    pub fn spawn_in_capturing(
        ns: &str,
        role: &str,
        args: &[String],
        env: &[(&str, String)],
    ) -> Worker {
        let mut cmd = Command::new("ip");
        cmd.args(["netns", "exec", ns])
            .arg(std::env::current_exe().expect("test binary"));
        let mut w = Worker::start_with(cmd, role, args, env, true);
        let err = BufReader::new(w.child.stderr.take().expect("stderr"));
        let (tx, rx) = channel();
        std::thread::spawn(move || {
            for line in err.lines() {
                let Ok(line) = line else { break };
                eprintln!("{line}");
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        w.err_lines = Some(rx);
        w
    }

    /// Reads captured stderr lines until one contains `needle`; returns that line.
    pub fn expect_stderr(&mut self, needle: &str, timeout: Duration) -> String {
        let pid = self.pid();
        let lines = self
            .err_lines
            .as_ref()
            .expect("worker started without capturing stderr");
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match lines.recv_timeout(left) {
                Ok(line) if line.contains(needle) => return line,
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) => {
                    panic!("worker {pid} never printed `{needle}` on stderr")
                }
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("worker {pid} exited before printing `{needle}` on stderr")
                }
            }
        }
    }

    /// `cmd` is the test binary, or a wrapper followed by it.
    fn start(cmd: Command, role: &str, args: &[String], env: &[(&str, String)]) -> Worker {
        Worker::start_with(cmd, role, args, env, false)
    }

    fn start_with(
        mut cmd: Command,
        role: &str,
        args: &[String],
        env: &[(&str, String)],
        capture_stderr: bool,
    ) -> Worker {
        let mut child = cmd
            .args([
                "--ignored",
                "--exact",
                "worker",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("MEMCHAN_ROLE", role)
            .env("MEMCHAN_ARGS", args.join(" "))
            .envs(env.iter().map(|(k, v)| (k, v)))
            .stdout(Stdio::piped())
            .stderr(if capture_stderr {
                Stdio::piped()
            } else {
                Stdio::inherit()
            })
            .spawn()
            .expect("spawn worker");
        let out = BufReader::new(child.stdout.take().expect("stdout"));
        let (tx, lines) = channel();
        std::thread::spawn(move || {
            for line in out.lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Worker {
            child,
            lines,
            err_lines: None,
        }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Every thread's stack of the worker, if it still runs and `gdb` is installed
    /// (a diagnostic for a test that finds a worker stuck; else why not).
    pub fn stacks(&self) -> String {
        let pid = self.pid().to_string();
        let out = Command::new("gdb")
            .args(["-p", &pid, "-batch", "-nx", "-ex", "thread apply all bt"])
            .output();
        match out {
            Ok(o) => String::from_utf8_lossy(&o.stdout).into_owned(),
            Err(e) => format!("no stacks of worker {pid} (gdb: {e})"),
        }
    }

    /// SIGSTOPs the worker and returns once every one of its threads has stopped.
    ///
    /// `kill` returns before that: one thread takes the signal and the others stop
    /// only when they next enter the kernel, so on a busy machine a thread of the
    /// worker can run on (and write) for milliseconds after it. The group stop is
    /// complete when `waitpid(WUNTRACED)` reports it.
    ///
    /// # Panics
    /// If the signal cannot be sent or the worker exits instead of stopping.
    pub fn stop(&self) {
        let pid = self.pid() as libc::pid_t;
        // SAFETY: kill(2) on our own child's pid (not reaped while `self.child` lives).
        let sent = unsafe { libc::kill(pid, libc::SIGSTOP) };
        assert_eq!(sent, 0, "SIGSTOP {pid}");
        loop {
            let mut status = 0;
            // SAFETY: waitpid(2) on our own child; WUNTRACED reports the stop without
            // reaping, so `self.child` still owns the pid.
            let r = unsafe { libc::waitpid(pid, &mut status, libc::WUNTRACED) };
            if r == pid && libc::WIFSTOPPED(status) {
                return;
            }
            let err = std::io::Error::last_os_error();
            assert!(
                r == -1 && err.kind() == std::io::ErrorKind::Interrupted,
                "worker {pid} did not stop (waitpid {r}, status {status:#x}, {err})"
            );
        }
    }

    /// SIGCONTs a worker stopped by [`stop`](Self::stop) (a no-op if it is gone).
    pub fn resume(&self) {
        // SAFETY: kill(2) on our own child's pid.
        unsafe { libc::kill(self.pid() as libc::pid_t, libc::SIGCONT) };
    }

    /// Reads lines until one holds `prefix`; returns what follows it.
    pub fn expect_line(&mut self, prefix: &str, timeout: Duration) -> String {
        self.try_expect_line(prefix, timeout)
            .unwrap_or_else(|| panic!("worker {} never printed `{prefix}`", self.pid()))
    }

    /// Like [`expect_line`](Self::expect_line), but `None` if `timeout` passes first.
    pub fn try_expect_line(&mut self, prefix: &str, timeout: Duration) -> Option<String> {
        match self.poll_line(prefix, timeout) {
            Ok(l) => Some(l),
            Err(RecvTimeoutError::Timeout) => None,
            Err(RecvTimeoutError::Disconnected) => {
                panic!("worker exited before printing `{prefix}`")
            }
        }
    }

    /// The text after `prefix` in the next line holding it, or why there is none
    /// (`Timeout`, or `Disconnected`: the worker closed its stdout, i.e. exited).
    pub fn poll_line(
        &mut self,
        prefix: &str,
        timeout: Duration,
    ) -> Result<String, RecvTimeoutError> {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = self.lines.recv_timeout(left)?;
            // libtest prints "test worker ... " without a newline before the
            // worker's first line, so the prefix may start mid-line.
            if let Some(pos) = line.find(prefix) {
                return Ok(line[pos + prefix.len()..].trim().to_string());
            }
        }
    }

    /// Reads lines until each of `prefixes` was seen, in any order; returns what
    /// follows each (its first occurrence), in the order of `prefixes`.
    pub fn expect_lines(&mut self, prefixes: &[&str], timeout: Duration) -> Vec<String> {
        let deadline = Instant::now() + timeout;
        let mut got: Vec<Option<String>> = vec![None; prefixes.len()];
        while got.iter().any(Option::is_none) {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match self.lines.recv_timeout(left) {
                Ok(line) => line,
                Err(e) => panic!(
                    "worker {} {} before printing all of {prefixes:?} (got {got:?})",
                    self.pid(),
                    if e == RecvTimeoutError::Timeout {
                        "timed out"
                    } else {
                        "exited"
                    }
                ),
            };
            for (p, g) in prefixes.iter().zip(got.iter_mut()) {
                if let (Some(pos), None) = (line.find(p), &g) {
                    *g = Some(line[pos + p.len()..].trim().to_string());
                }
            }
        }
        got.into_iter().map(Option::unwrap).collect()
    }

    /// Waits for exit; panics on failure or if it takes longer than `timeout`.
    pub fn finish(&mut self, timeout: Duration) {
        let deadline = Instant::now() + timeout;
        loop {
            if let Some(status) = self.child.try_wait().expect("wait worker") {
                assert!(status.success(), "worker failed: {status}");
                return;
            }
            assert!(Instant::now() < deadline, "worker {} timed out", self.pid());
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// kill -9.
    pub fn kill9(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// `key=value` pairs of a result line.
pub fn field(line: &str, key: &str) -> u64 {
    line.split_whitespace()
        .find_map(|kv| kv.strip_prefix(key)?.strip_prefix('='))
        .unwrap_or_else(|| panic!("no `{key}` in `{line}`"))
        .parse()
        .unwrap_or_else(|_| panic!("`{key}` not a number in `{line}`"))
}

/// Sends this worker's `tracing` events (the hub's joins and refusals, the relay's
/// errors) to stderr as `memchan hub` does: filtered by `MEMCHAN_LOG` (default
/// `info`), without colours, so [`Worker::expect_stderr`] can find them. Call it first
/// in the worker entry; a second call does nothing.
pub fn log_to_stderr() {
    let filter = tracing_subscriber::EnvFilter::builder()
        .with_default_directive(tracing_subscriber::filter::LevelFilter::INFO.into())
        .with_env_var("MEMCHAN_LOG")
        .from_env_lossy();
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}

/// The worker's arguments.
pub fn args() -> Vec<String> {
    std::env::var("MEMCHAN_ARGS")
        .unwrap_or_default()
        .split_whitespace()
        .map(String::from)
        .collect()
}

/// CLOCK_MONOTONIC in ns, comparable across processes.
pub fn mono_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid out-pointer for clock_gettime.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// CPU time the calling thread has used (to tell a waiter that slept from one that
/// spun, without reading the wall clock).
pub fn thread_cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid clock id and a timespec to fill.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}
