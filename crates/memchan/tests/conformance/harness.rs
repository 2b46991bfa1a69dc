//! Real processes for multi-node tests: the test binary re-executes itself as a worker
//! (the ignored test `worker`, dispatched on `MEMCHAN_ROLE`), never `fork`s.

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

/// The transport a conformance test runs on: the suite is written once and each test
/// runs on every transport (`on_every_transport!`).
pub enum Transport {
    /// One host, shared memory.
    Shm,
    /// Through a hub (run by the test process; the nodes are separate processes
    /// joined over TCP, workers find it through `MEMCHAN_HUB`).
    Hub(memchan_net::hub::Hub),
}

impl Transport {
    /// A fresh hub with the default timing (heartbeat 100 ms, failure timeout 800 ms).
    pub fn hub() -> Transport {
        Self::hub_timed(Duration::from_millis(100), Duration::from_millis(800))
    }

    /// A fresh hub with the given heartbeat and failure timeout.
    pub fn hub_timed(heartbeat: Duration, failure_timeout: Duration) -> Transport {
        let hub = memchan_net::hub::Hub::start(memchan_net::hub::HubConfig {
            heartbeat,
            failure_timeout,
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
    pub fn config(&self, mut cfg: memchan::Config) -> memchan::Config {
        cfg.hub = self.hub_addr().map(memchan::Hub::Connect);
        cfg
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
}

/// Runs the test function `$f(&Transport)` once per transport, as `$f::shm` and
/// `$f::hub` (the hub made by `$hub`, default `Transport::hub()`).
#[macro_export]
macro_rules! on_every_transport {
    ($f:ident) => {
        $crate::on_every_transport!($f, $crate::harness::Transport::hub());
    };
    ($f:ident, $hub:expr) => {
        mod $f {
            #[test]
            fn shm() {
                super::$f(&$crate::harness::Transport::Shm);
            }
            #[test]
            fn hub() {
                super::$f(&$hub);
            }
        }
    };
}

/// A worker process, killed (by PID) and reaped when dropped. Its stdout is read by
/// a thread, so every wait on it has a deadline and a hung worker fails the test
/// instead of hanging it.
pub struct Worker {
    pub child: Child,
    lines: Receiver<String>,
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

    /// `cmd` is the test binary, or a wrapper followed by it.
    fn start(mut cmd: Command, role: &str, args: &[String], env: &[(&str, String)]) -> Worker {
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
            .stderr(Stdio::inherit())
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
        Worker { child, lines }
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Reads lines until one holds `prefix`; returns what follows it.
    pub fn expect_line(&mut self, prefix: &str, timeout: Duration) -> String {
        let deadline = Instant::now() + timeout;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let line = match self.lines.recv_timeout(left) {
                Ok(line) => line,
                Err(RecvTimeoutError::Timeout) => {
                    panic!("worker {} never printed `{prefix}`", self.pid())
                }
                Err(RecvTimeoutError::Disconnected) => {
                    panic!("worker exited before printing `{prefix}`")
                }
            };
            // libtest prints "test worker ... " without a newline before the
            // worker's first line, so the prefix may start mid-line.
            if let Some(pos) = line.find(prefix) {
                return line[pos + prefix.len()..].trim().to_string();
            }
        }
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
