//! What the tests of the `memchan` binary share: the binary, temporary files, a
//! long-running child (`memchan hub`, `memchan status --metrics`) and a node joining a
//! hub with a key.
//!
//! Each test file uses only some of these, hence `allow(dead_code)` on the module.

use std::io::{BufRead, BufReader, Read};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use memchan::{Cluster, Config};

/// Bounds every wait of these helpers (a hang guard, not a speed claim).
pub const WAIT: Duration = Duration::from_secs(20);

pub fn bin() -> Command {
    let mut c = Command::new(memchan_tests::memchan_exe());
    // The tests say everything explicitly.
    c.env_remove("MEMCHAN_HUB").env_remove("MEMCHAN_KEY_FILE");
    c
}

/// A file in the temp directory, removed on drop.
pub struct TempFile(pub PathBuf);

impl TempFile {
    pub fn new(tag: &str, contents: &str) -> TempFile {
        let p = std::env::temp_dir().join(format!("memchan-hub-cli-{}-{tag}", std::process::id()));
        std::fs::write(&p, contents).unwrap();
        TempFile(p)
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A long-running `memchan` child: its stdout lines arrive on a channel, its stderr
/// is collected. Killed (and reaped) on drop, whatever happened.
pub struct Proc {
    pub child: Child,
    pub lines: Receiver<String>,
    stderr: Arc<Mutex<String>>,
    /// The thread collecting stderr; it ends at the pipe's end of file.
    stderr_reader: Option<std::thread::JoinHandle<()>>,
}

impl Proc {
    pub fn spawn(args: &[&str]) -> Proc {
        let mut cmd = bin();
        cmd.args(args);
        Proc::spawn_command(cmd)
    }

    /// As [`Proc::spawn`], for a command built by the caller (e.g. `memchan` started
    /// in a network namespace by `ip netns exec`).
    pub fn spawn_command(mut cmd: Command) -> Proc {
        let mut child = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn memchan");
        let out = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let stderr = Arc::new(Mutex::new(String::new()));
        let mut err = child.stderr.take().unwrap();
        let sink = stderr.clone();
        let stderr_reader = std::thread::spawn(move || {
            let mut buf = [0u8; 4096];
            while let Ok(n) = err.read(&mut buf) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap()
                    .push_str(&String::from_utf8_lossy(&buf[..n]));
            }
        });
        Proc {
            child,
            lines,
            stderr,
            stderr_reader: Some(stderr_reader),
        }
    }

    pub fn stderr(&self) -> String {
        self.stderr.lock().unwrap().clone()
    }

    /// The pids of `n` PEs of a launcher, from their `pid RANK PID` lines.
    pub fn pids(&self, n: usize) -> std::collections::BTreeMap<u32, i32> {
        let mut pids = std::collections::BTreeMap::new();
        while pids.len() < n {
            let l = self.lines.recv_timeout(WAIT).expect("a PE's pid line");
            let w: Vec<&str> = l.split_whitespace().collect();
            if let ["pid", rank, pid] = w[..] {
                pids.insert(rank.parse().unwrap(), pid.parse().unwrap());
            }
        }
        pids
    }

    /// Waits (under the hang guard) for the child's end: its status and its whole
    /// stderr.
    pub fn wait(&mut self) -> (std::process::ExitStatus, String) {
        let status = wait_bounded(&mut self.child);
        if let Some(r) = self.stderr_reader.take() {
            r.join().expect("stderr reader");
        }
        (status, self.stderr())
    }

    /// Sends `sig` to the child.
    pub fn signal(&self, sig: i32) {
        // SAFETY: kill(2) on our own child, not yet reaped (held by `self`).
        assert_eq!(unsafe { libc::kill(self.child.id() as i32, sig) }, 0);
    }

    /// The next stdout line, which must start with `prefix `; returns the rest.
    pub fn expect_line(&mut self, prefix: &str) -> String {
        let line = match self.lines.recv_timeout(WAIT) {
            Ok(l) => l,
            Err(e) => panic!(
                "no `{prefix} ADDR` line on stdout ({e}); exit: {:?}; stderr:\n{}",
                self.child.try_wait(),
                self.stderr()
            ),
        };
        line.strip_prefix(&format!("{prefix} "))
            .unwrap_or_else(|| panic!("expected `{prefix} ADDR`, got `{line}`"))
            .to_string()
    }

    /// SIGTERM, then waits for the exit, which must be clean.
    pub fn terminate(mut self) -> String {
        // SAFETY: kill(2) on our own child's pid.
        let rc = unsafe { libc::kill(self.child.id() as libc::pid_t, libc::SIGTERM) };
        assert_eq!(rc, 0);
        let deadline = Instant::now() + WAIT;
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            assert!(
                Instant::now() < deadline,
                "ignored SIGTERM; stderr:\n{}",
                self.stderr()
            );
            std::thread::sleep(Duration::from_millis(10));
        };
        // The child exited, so its stderr reaches end of file: the reader thread has
        // everything once it ends (rather than hoping 50 ms was enough to drain it).
        if let Some(r) = self.stderr_reader.take() {
            r.join().expect("stderr reader");
        }
        let err = self.stderr();
        assert!(status.success(), "exited {status}; stderr:\n{err}");
        err
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Joins `cluster` through `hubs` (`HOST:PORT`, or `ACTIVE,STANDBY` for two rails).
pub fn join(cluster: &str, hubs: &str, key: &Path) -> Cluster {
    let hub = memchan::HubSpec::parse_rails(hubs).expect("one or two hubs");
    // Outside any host domain: these tests are of the hubs, so every write goes
    // through one.
    let cfg = Config::default()
        .with_hub(hub)
        .with_key_file(key)
        .without_host_domain();
    Cluster::join_with(cluster, cfg).expect("join through the hub")
}

/// `memchan-capi`'s `tests/c/NAME.c` compiled by `memchan oshcc` (the system compiler,
/// with `flags`) into a temporary executable, removed on drop.
pub struct CProgram(pub PathBuf);

impl CProgram {
    pub fn build(name: &str, flags: &[&str]) -> CProgram {
        const CAPI: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../memchan-capi");
        // One file per build: the tests run in parallel and each removes its own.
        static BUILDS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let k = BUILDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let exe = std::env::temp_dir().join(format!(
            "memchan-c-{}-{k}-{}",
            std::process::id(),
            name.replace('/', "-")
        ));
        let out = bin()
            .arg("oshcc")
            .args(flags)
            .arg(Path::new(CAPI).join(format!("tests/c/{name}.c")))
            .arg("-o")
            .arg(&exe)
            .env_remove("OSHMEM_CC")
            .env_remove("SHMEM_CC")
            .output()
            .expect("run memchan oshcc");
        assert!(
            out.status.success(),
            "cc failed:\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        CProgram(exe)
    }
}

impl Drop for CProgram {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// The OpenSHMEM conformance set: the program names of memchan-capi's `tests/c/spec`,
/// sorted (each builds with `CProgram::build("spec/NAME", ..)`).
pub fn spec_programs() -> Vec<String> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../memchan-capi/tests/c/spec");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("read {}: {e}", dir.display()))
        .filter_map(|e| {
            let p = e.ok()?.path();
            let stem = p.file_stem()?.to_string_lossy().into_owned();
            (p.extension()? == "c").then_some(stem)
        })
        .collect();
    names.sort();
    assert!(!names.is_empty(), "no programs in {}", dir.display());
    names
}

/// Bytes a child printed, as text.
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// Runs `cmd` to its end with stdin closed and stdout and stderr captured; SIGKILLed if
/// it outlives `guard` (a hang guard, not a speed claim).
pub fn output(mut cmd: Command, guard: Duration) -> std::process::Output {
    let child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn memchan run");
    let pid = child.id();
    let (tx, rx) = mpsc::channel::<()>();
    let dog = std::thread::spawn(move || {
        if rx.recv_timeout(guard).is_err() {
            // SAFETY: kill(2) on our own child's pid (not yet reaped: we hold `child`).
            unsafe { libc::kill(pid as libc::pid_t, libc::SIGKILL) };
        }
    });
    let out = child.wait_with_output().expect("wait for memchan run");
    let _ = tx.send(());
    let _ = dog.join();
    out
}

/// Waits for `child` to end, failing past the hang guard.
pub fn wait_bounded(child: &mut Child) -> std::process::ExitStatus {
    let t0 = Instant::now();
    loop {
        if let Some(s) = child.try_wait().unwrap() {
            return s;
        }
        assert!(t0.elapsed() < WAIT, "the launcher did not end");
        std::thread::yield_now();
    }
}

/// Polls until no process `pid` exists (the launcher reaps its PEs).
pub fn assert_gone(pid: i32) {
    let t0 = Instant::now();
    while Path::new(&format!("/proc/{pid}")).exists() {
        assert!(t0.elapsed() < WAIT, "PE {pid} still exists");
        std::thread::yield_now();
    }
}
