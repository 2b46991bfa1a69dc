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
        let mut child = Command::new(std::env::current_exe().expect("test binary"))
            .args([
                "--ignored",
                "--exact",
                "worker",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("MEMCHAN_ROLE", role)
            .env("MEMCHAN_ARGS", args.join(" "))
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
