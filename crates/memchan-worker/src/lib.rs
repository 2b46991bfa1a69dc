//! One worker-process harness for memchan's tests: a test binary runs *itself* again
//! as a worker (never `fork`s), in a role named by `MEMCHAN_ROLE` with arguments in
//! `MEMCHAN_ARGS`, and the test talks to it over its stdin and stdout.
//!
//! The binary provides the entry: an ignored test that dispatches on [`role`] and
//! reads [`args`]. By default it is named `worker` at the binary's root (an
//! integration test); a unit test module names its own with [`Spawn::entry`]
//! (`"hostile::worker"`). Every wait on a worker has a deadline, so a hung worker
//! fails its test instead of hanging it; a worker is killed by PID and reaped when
//! dropped. Its stdout lines are echoed to the test's stderr, tagged with its role
//! and PID (shown when the test fails).
//!
//! ```no_run
//! use memchan_worker::{args, role, Worker};
//! use std::time::Duration;
//!
//! #[test]
//! #[ignore = "entry point for worker processes"]
//! fn worker() {
//!     match role().as_str() {
//!         "hello" => println!("HELLO {}", args().join(" ")),
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

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant};

/// The variable naming a worker's role.
pub const ROLE: &str = "MEMCHAN_ROLE";
/// The variable holding a worker's arguments, space-separated.
pub const ARGS: &str = "MEMCHAN_ARGS";

/// This worker's role (in the worker entry).
///
/// # Panics
/// If the process was not started as a worker.
pub fn role() -> String {
    std::env::var(ROLE).expect("MEMCHAN_ROLE: run as a worker by a test")
}

/// This worker's arguments (in the worker entry).
pub fn args() -> Vec<String> {
    std::env::var(ARGS)
        .unwrap_or_default()
        .split_whitespace()
        .map(String::from)
        .collect()
}

/// Makes any panic of this worker, a service thread's included, print `PANIC ...` and
/// abort, so that the test sees a signal and not a worker that limps on.
pub fn abort_on_panic() {
    std::panic::set_hook(Box::new(|info| {
        println!("PANIC {info}");
        std::process::abort();
    }));
}

/// Waits until the test says a line to this worker or closes its stdin (the signal
/// to end).
pub fn wait_for_stdin() {
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
}

/// How a worker is started: [`Worker::spawn`] and its siblings cover the usual
/// cases; this adds a unit test's entry name, a wrapper command, environment and
/// captured stderr.
pub struct Spawn {
    cmd: Command,
    role: String,
    args: Vec<String>,
    entry: String,
    capture_stderr: bool,
}

impl Spawn {
    /// The worker `role` with `args`, run directly.
    pub fn new(role: &str, args: &[String]) -> Spawn {
        Spawn {
            cmd: Command::new(exe()),
            role: role.to_string(),
            args: args.to_vec(),
            entry: "worker".to_string(),
            capture_stderr: false,
        }
    }

    /// Runs it through `wrapper` (a command whose last argument is followed by the
    /// test binary, e.g. `ip netns exec NS`).
    pub fn wrapped(mut self, mut wrapper: Command) -> Spawn {
        wrapper.arg(exe());
        self.cmd = wrapper;
        self
    }

    /// The entry test's path in the binary (default `worker`).
    pub fn entry(mut self, path: &str) -> Spawn {
        self.entry = path.to_string();
        self
    }

    /// Adds `key=value` to its environment.
    pub fn env(mut self, key: &str, value: impl AsRef<std::ffi::OsStr>) -> Spawn {
        self.cmd.env(key, value);
        self
    }

    /// Removes `key` from its environment.
    pub fn env_remove(mut self, key: &str) -> Spawn {
        self.cmd.env_remove(key);
        self
    }

    /// Captures its stderr for [`Worker::expect_stderr`] (and echoes it to ours).
    pub fn capture_stderr(mut self) -> Spawn {
        self.capture_stderr = true;
        self
    }

    /// Starts it.
    ///
    /// # Panics
    /// If the process cannot be started (a test failure).
    pub fn spawn(mut self) -> Worker {
        // A worker of a hub cluster sends every write through the hub unless its test
        // put it in a host domain (`MEMCHAN_DOMAIN`): a test of the network must not
        // find its point-to-point writes turned into stores.
        if !self.cmd.get_envs().any(|(k, _)| k == "MEMCHAN_DOMAIN") {
            self.cmd.env("MEMCHAN_DOMAIN", "off");
        }
        let mut child = self
            .cmd
            .args([
                "--ignored",
                "--exact",
                self.entry.as_str(),
                "--nocapture",
                "--test-threads=1",
            ])
            .env(ROLE, &self.role)
            .env(ARGS, self.args.join(" "))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(if self.capture_stderr {
                Stdio::piped()
            } else {
                Stdio::inherit()
            })
            .spawn()
            .expect("spawn worker");
        let tag = format!("{} {}", self.role, child.id());
        let lines = read_lines(child.stdout.take().expect("stdout"), Some(tag));
        let err_lines = child.stderr.take().map(|e| read_lines(e, None));
        Worker {
            stdin: child.stdin.take(),
            child,
            lines,
            err_lines,
        }
    }
}

/// The test binary, which every worker runs.
fn exe() -> std::path::PathBuf {
    std::env::current_exe().expect("test binary")
}

/// A thread forwarding `from`'s lines, echoed to stderr (tagged, if `tag`).
fn read_lines(from: impl std::io::Read + Send + 'static, tag: Option<String>) -> Receiver<String> {
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in BufReader::new(from).lines() {
            let Ok(line) = line else { break };
            match &tag {
                Some(t) => eprintln!("[{t}] {line}"),
                None => eprintln!("{line}"),
            }
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// The text after the first `prefix` in `line`. libtest prints "test worker ... "
/// without a newline before the worker's first line, so the prefix may start
/// mid-line; a prefix is matched as it stands (`JOIN` finds `JOINERR ...` and
/// `JOINED ...`, which tests use to read either).
fn after<'a>(line: &'a str, prefix: &str) -> Option<&'a str> {
    line.find(prefix).map(|at| &line[at + prefix.len()..])
}

/// A worker process, killed (by PID) and reaped when dropped. Its stdout is read by
/// a thread, so every wait on it has a deadline and a hung worker fails the test
/// instead of hanging it.
pub struct Worker {
    pub child: Child,
    stdin: Option<ChildStdin>,
    lines: Receiver<String>,
    /// Its stderr lines, when started capturing them (they are echoed to this
    /// process's stderr as well).
    err_lines: Option<Receiver<String>>,
}

impl Worker {
    /// Starts the worker `role` with `args` (passed as `MEMCHAN_ARGS`, space-separated).
    pub fn spawn(role: &str, args: &[String]) -> Worker {
        Spawn::new(role, args).spawn()
    }

    /// Starts the worker `role` inside the network namespace `ns` ([`enter`], which
    /// execs, so the worker's PID is the child's), with `env` added to its
    /// environment.
    pub fn spawn_in(ns: &str, role: &str, args: &[String], env: &[(&str, String)]) -> Worker {
        Worker::in_netns(ns, role, args, env).spawn()
    }

    /// Starts the worker `role` through `wrapper` (a command whose last argument is
    /// followed by the test binary, e.g. `ip netns exec NS unshare -T --monotonic S`).
    pub fn spawn_wrapped(
        wrapper: Command,
        role: &str,
        args: &[String],
        env: &[(&str, String)],
    ) -> Worker {
        with_env(Spawn::new(role, args).wrapped(wrapper), env).spawn()
    }

    /// Like [`spawn_in`](Self::spawn_in), with the worker's stderr captured line by
    /// line for [`expect_stderr`](Self::expect_stderr) (and echoed to ours).
    pub fn spawn_in_capturing(
        ns: &str,
        role: &str,
        args: &[String],
        env: &[(&str, String)],
    ) -> Worker {
        Worker::in_netns(ns, role, args, env)
            .capture_stderr()
            .spawn()
    }

    fn in_netns(ns: &str, role: &str, args: &[String], env: &[(&str, String)]) -> Spawn {
        // Each namespace is a host domain of its own, as a host is (`env` may name
        // another), also where namespaces share one /dev/shm (no `mount_ns`).
        let domain = Spawn::new(role, args)
            .wrapped(enter(ns))
            .env("MEMCHAN_DOMAIN", ns);
        with_env(domain, env)
    }

    /// Reads captured stderr lines until one contains `needle`; returns that line.
    ///
    /// # Panics
    /// If the worker was started without capturing stderr, exits first, or `timeout`
    /// passes.
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

    /// Writes `line` to the worker's stdin (nothing once it is closed).
    pub fn say(&mut self, line: &str) {
        if let Some(i) = self.stdin.as_mut() {
            let _ = writeln!(i, "{line}");
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
            if let Some(rest) = after(&line, prefix) {
                return Ok(rest.trim().to_string());
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
                if let (Some(rest), None) = (after(&line, p), &g) {
                    *g = Some(rest.trim().to_string());
                }
            }
        }
        got.into_iter().map(Option::unwrap).collect()
    }

    /// Closes its stdin (the signal to end), reads its output to the end and waits
    /// for it to exit; returns how it ended.
    ///
    /// # Panics
    /// If it does not exit within `timeout`.
    pub fn exit_status(&mut self, timeout: Duration) -> ExitStatus {
        self.stdin = None;
        let deadline = Instant::now() + timeout;
        // Its stdout closes when it exits (or hands the pipe on).
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(_) => {}
                Err(RecvTimeoutError::Disconnected) => break,
                Err(RecvTimeoutError::Timeout) => panic!("worker {} did not exit", self.pid()),
            }
        }
        loop {
            if let Some(status) = self.child.try_wait().expect("wait worker") {
                return status;
            }
            assert!(Instant::now() < deadline, "worker {} timed out", self.pid());
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Like [`exit_status`](Self::exit_status); panics unless the worker succeeded.
    pub fn finish(&mut self, timeout: Duration) {
        let status = self.exit_status(timeout);
        assert!(status.success(), "worker failed: {status}");
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

/// Where network namespace `ns`'s own mount namespace is reached, if it has one:
/// memchan-testkit's topologies give each host namespace one, with its own
/// `/dev/shm`, as a host has (a link to the mount namespace of a process that holds
/// it).
pub fn mount_ns(ns: &str) -> String {
    format!("{MOUNT_NS_DIR}/{ns}")
}

/// The directory of [`mount_ns`]'s links.
pub const MOUNT_NS_DIR: &str = "/run/memchan-mnt";

/// A command whose arguments, followed by a program and its own, run that program
/// inside network namespace `ns` (exec'd: its PID is the child's), as on a host:
/// `nsenter` into `ns` and its [`mount_ns`] (keeping the working directory) where it
/// has one, `ip netns exec ns` otherwise.
pub fn enter(ns: &str) -> Command {
    let mnt = mount_ns(ns);
    if std::path::Path::new(&mnt).exists() {
        let mut c = Command::new("nsenter");
        c.arg(format!("--net=/run/netns/{ns}"))
            .arg(format!("--mount={mnt}"))
            .args(["--wd=.", "--"]);
        c
    } else {
        let mut c = Command::new("ip");
        c.args(["netns", "exec", ns]);
        c
    }
}

fn with_env(mut s: Spawn, env: &[(&str, String)]) -> Spawn {
    for (k, v) in env {
        s = s.env(k, v);
    }
    s
}

#[cfg(test)]
mod tests {
    use super::after;

    #[test]
    fn a_prefix_is_found_mid_line_and_gives_the_rest() {
        assert_eq!(after("test worker ... READY 2 9", "READY"), Some(" 2 9"));
        assert_eq!(
            after("JOINERR kind=HubRefused", "JOIN"),
            Some("ERR kind=HubRefused")
        );
        assert_eq!(after("lat=5 n=2", "n="), Some("2"));
        assert_eq!(after("DONE", "DONE"), Some(""));
        assert_eq!(after("READY 1", "GONE"), None);
    }
}
