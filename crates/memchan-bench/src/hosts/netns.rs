//! The "hosts" of `memchan bench --hosts`: hosts of nodes and one for the hub,
//! network namespaces on one switch (a bridge in the hub's namespace), created with
//! iproute2 and removed on every exit path. The pairs' figures use A and B; the
//! many-node ones (the ordering point's flood, the barrier) spread over A, B, C and D
//! (10.202.0.4, .5, each a veth to the bridge as A and B are).
//!
//! ```text
//!   namespace mcb<pid>a               namespace mcb<pid>h                namespace mcb<pid>b
//!   veth mcb<pid>a 10.202.0.1/24 <==> mcb<pid>ha -[br0 10.202.0.3/24]- mcb<pid>hb <==> veth mcb<pid>b 10.202.0.2/24
//!   ping side (timing, cpu A)         the hub (`memchan hub`)              pong side (answering, cpu B)
//! ```
//!
//! A and B reach each other through the bridge, as two hosts through a switch: raw
//! TCP between them is one hop, and so is a node's link to the hub. The veth end in A
//! carries everything A sends or receives, so its counters prove a figure's traffic
//! left the host ([`Namespaces::veth_bytes`]).
//!
//! The one-host IP figure's `tcp_veth` reference uses [`Namespaces::pair`]: A and B
//! and one veth pair straight between them, no bridge.
//!
//! The names carry the coordinator's pid, so concurrent runs never collide and
//! a leftover of a dead run with the same pid is known to be stale. The
//! addresses are the same in every run: each run has its own namespaces.
//!
//! Cleanup (kill every process inside the namespaces by pid, then `ip netns
//! del`) runs from `Drop` (normal exit, errors, panics that unwind) and from a
//! watcher thread woken by SIGINT / SIGTERM / SIGHUP (`signal_hook`'s iterator:
//! the handler itself only wakes the thread). A worker enters its namespace
//! with `setns(2)` on `/run/netns/<name>` ([`enter`]).
//!
//! A twin of `memchan-testkit`'s `netns` (the multi-host tests' topologies), kept
//! apart on purpose for now: the shipped `memchan` binary links this crate and must
//! link no test tooling, so the bench cannot take it from the testkit. One topology
//! module for both needs a home outside the testkit (a small crate of its own).

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

/// The subnet of the veth pair.
pub const SUBNET: &str = "10.202.0.0/24";
/// Address of side A (ping side).
pub const ADDR_A: &str = "10.202.0.1";
/// Address of side B (pong side).
pub const ADDR_B: &str = "10.202.0.2";
/// Address of the hub's host (the bridge in namespace H).
pub const ADDR_HUB: &str = "10.202.0.3";
/// The hosts of nodes of the `--hosts` topology, A and B first (the pairs' sides),
/// with their addresses: C and D hold nodes of the many-node figures only.
pub const HOSTS: usize = 4;
const HOST_ADDRS: [&str; HOSTS] = [ADDR_A, ADDR_B, "10.202.0.4", "10.202.0.5"];
/// The bridge inside namespace H (names are per namespace).
const BRIDGE: &str = "br0";

/// Namespaces of this process still to be removed (shared by `Drop` and the
/// signal watcher: whoever takes them removes them).
static ACTIVE: Mutex<Vec<String>> = Mutex::new(Vec::new());
/// Held while namespaces are being removed, so that the signal watcher, which exits
/// the process, waits for a removal by `Drop` under way instead of cutting it short
/// (both names were left behind once that way: `Drop` had taken them from `ACTIVE`).
static BUSY: Mutex<()> = Mutex::new(());
/// Scratch directories the signal watcher removes too (`Drop` does not run
/// when it exits the process).
static SCRATCH: Mutex<Vec<PathBuf>> = Mutex::new(Vec::new());

/// The namespaces; the veth ends in A and B are named like their namespaces.
#[derive(Debug)]
pub struct Namespaces {
    pub a: String,
    pub b: String,
    /// The hub's host (`--hosts` only).
    h: Option<String>,
    /// Hosts C and D (`--hosts` only).
    more: Vec<String>,
    ip: PathBuf,
}

/// Finds `ip` on PATH or in the usual sbin directories.
pub fn ip_binary() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).collect())
        .unwrap_or_default();
    dirs.extend(["/usr/sbin", "/sbin", "/usr/bin", "/bin"].map(PathBuf::from));
    dirs.into_iter().map(|d| d.join("ip")).find(|p| p.is_file())
}

/// Runs `ip ARGS`, failing with its stderr.
fn ip(bin: &Path, args: &[&str]) -> Result<String> {
    let out = Command::new(bin)
        .args(args)
        .output()
        .with_context(|| format!("running {} {}", bin.display(), args.join(" ")))?;
    if !out.status.success() {
        bail!(
            "`ip {}` failed ({}): {}",
            args.join(" "),
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

impl Namespaces {
    /// The `--hosts` topology: hosts `mcb<pid>a`, `b`, `c`, `d` and the hub's
    /// `mcb<pid>h`, the bridge in H, a veth pair from each host to it, the
    /// addresses, every link (lo included) up.
    pub fn with_hub_host() -> Result<Self> {
        Self::create(true)
    }

    /// Two namespaces only, one veth pair straight between them (the one-host IP
    /// figure's reference, `tcp_veth`).
    pub fn pair() -> Result<Self> {
        Self::create(false)
    }

    fn create(hub_host: bool) -> Result<Self> {
        let ip_bin = ip_binary().context(
            "--hosts needs iproute2 (`ip`), which is not installed (apt-get install iproute2)",
        )?;
        let pid = std::process::id();
        let (a, b) = (format!("mcb{pid}a"), format!("mcb{pid}b"));
        let h = hub_host.then(|| format!("mcb{pid}h"));
        let more: Vec<String> = if hub_host {
            vec![format!("mcb{pid}c"), format!("mcb{pid}d")]
        } else {
            Vec::new()
        };
        let hosts: Vec<String> = [a.clone(), b.clone()]
            .into_iter()
            .chain(more.clone())
            .collect();
        let names: Vec<String> = hosts.iter().chain(h.as_ref()).cloned().collect();
        // A namespace with our pid in its name belongs to a dead process
        // (pids are unique among the living): remove it.
        remove(&ip_bin, &names);
        install_signal_cleanup()?;
        ACTIVE
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend(names.iter().cloned());
        // From here on, Drop removes whatever part was created.
        let ns = Namespaces {
            a: a.clone(),
            b: b.clone(),
            h: h.clone(),
            more,
            ip: ip_bin.clone(),
        };
        ip(&ip_bin, &["netns", "add", &a]).context(
            "--hosts creates network namespaces: it needs root (CAP_NET_ADMIN and CAP_SYS_ADMIN)",
        )?;
        for n in &hosts[1..] {
            ip(&ip_bin, &["netns", "add", n])?;
        }
        match &h {
            Some(h) => {
                ip(&ip_bin, &["netns", "add", h])?;
                ip(
                    &ip_bin,
                    &[
                        "-n",
                        h,
                        "link",
                        "add",
                        BRIDGE,
                        "type",
                        "bridge",
                        "stp_state",
                        "0",
                    ],
                )
                .context(
                    "--hosts joins its namespaces with a bridge (the kernel's `bridge` module)",
                )?;
                ip(
                    &ip_bin,
                    &[
                        "-n",
                        h,
                        "addr",
                        "add",
                        &format!("{ADDR_HUB}/24"),
                        "dev",
                        BRIDGE,
                    ],
                )?;
                for n in &hosts {
                    // The end in H is named after the host it leads to: mcb<pid>ha, hb, ...
                    let port = format!("{h}{}", &n[n.len() - 1..]);
                    ip(
                        &ip_bin,
                        &["link", "add", n, "type", "veth", "peer", "name", &port],
                    )?;
                    ip(&ip_bin, &["link", "set", n, "netns", n])?;
                    ip(&ip_bin, &["link", "set", &port, "netns", h])?;
                    ip(&ip_bin, &["-n", h, "link", "set", &port, "master", BRIDGE])?;
                    ip(&ip_bin, &["-n", h, "link", "set", &port, "up"])?;
                }
                ip(&ip_bin, &["-n", h, "link", "set", "lo", "up"])?;
                ip(&ip_bin, &["-n", h, "link", "set", BRIDGE, "up"])?;
            }
            None => {
                ip(
                    &ip_bin,
                    &["link", "add", &a, "type", "veth", "peer", "name", &b],
                )?;
                ip(&ip_bin, &["link", "set", &a, "netns", &a])?;
                ip(&ip_bin, &["link", "set", &b, "netns", &b])?;
            }
        }
        for (n, addr) in hosts.iter().zip(HOST_ADDRS) {
            ip(
                &ip_bin,
                &["-n", n, "addr", "add", &format!("{addr}/24"), "dev", n],
            )?;
            ip(&ip_bin, &["-n", n, "link", "set", "lo", "up"])?;
            ip(&ip_bin, &["-n", n, "link", "set", n, "up"])?;
        }
        Ok(ns)
    }

    /// The hosts of nodes: A and B, then C and D on the `--hosts` topology.
    pub fn hosts(&self) -> Vec<&str> {
        [self.a.as_str(), self.b.as_str()]
            .into_iter()
            .chain(self.more.iter().map(String::as_str))
            .collect()
    }

    /// The hub's host.
    ///
    /// # Errors
    /// On the two-namespace topology, which has none.
    pub fn hub_host(&self) -> Result<&str> {
        self.h
            .as_deref()
            .context("these namespaces have no hub host (Namespaces::pair)")
    }

    /// Bytes received + sent so far by the veth end in namespace A.
    pub fn veth_bytes(&self) -> Result<u64> {
        let text = ip(
            &self.ip,
            &["-n", &self.a, "-s", "-j", "link", "show", "dev", &self.a],
        )?;
        let v: serde_json::Value =
            serde_json::from_str(&text).context("parsing `ip -s -j link show`")?;
        let s = &v[0]["stats64"];
        match (s["rx"]["bytes"].as_u64(), s["tx"]["bytes"].as_u64()) {
            (Some(rx), Some(tx)) => Ok(rx + tx),
            _ => bail!("`ip -s -j link show` gave no byte counters: {text}"),
        }
    }

    /// The `ip` binary in use.
    pub fn ip_path(&self) -> &Path {
        &self.ip
    }
}

impl Drop for Namespaces {
    fn drop(&mut self) {
        let _busy = BUSY.lock().unwrap_or_else(|p| p.into_inner());
        let names: Vec<String> = {
            let mut g = ACTIVE.lock().unwrap_or_else(|p| p.into_inner());
            let ours = |n: &String| {
                *n == self.a || *n == self.b || self.h.as_ref() == Some(n) || self.more.contains(n)
            };
            let mine: Vec<String> = g.iter().filter(|n| ours(n)).cloned().collect();
            g.retain(|n| !ours(n));
            mine
        };
        remove(&self.ip, &names);
    }
}

/// Kills every process inside the namespaces (by pid), then deletes them.
/// Errors are ignored: this is best-effort cleanup of what exists.
fn remove(ip_bin: &Path, names: &[String]) {
    let me = std::process::id() as i32;
    let mut killed: Vec<i32> = Vec::new();
    for n in names {
        let Ok(text) = ip(ip_bin, &["netns", "pids", n]) else {
            continue;
        };
        for pid in text.lines().filter_map(|l| l.trim().parse::<i32>().ok()) {
            if pid != me && kill(pid) {
                killed.push(pid);
            }
        }
    }
    // Wait (briefly) until they are gone, so the veth pair goes with them.
    let deadline = Instant::now() + Duration::from_secs(2);
    while killed
        .iter()
        .any(|p| Path::new(&format!("/proc/{p}")).exists())
        && Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(5));
    }
    for n in names {
        if Path::new("/run/netns").join(n).exists() || Path::new("/var/run/netns").join(n).exists()
        {
            let _ = ip(ip_bin, &["netns", "del", n]);
        }
    }
}

/// SIGKILL to one pid; true if the signal was sent.
fn kill(pid: i32) -> bool {
    match rustix::process::Pid::from_raw(pid) {
        Some(p) => rustix::process::kill_process(p, rustix::process::Signal::KILL).is_ok(),
        None => false,
    }
}

/// Kills the direct children of this process (by pid, from /proc): workers
/// that have not entered their namespace yet, `ip netns exec` launchers.
fn kill_children() {
    let me = std::process::id();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return;
    };
    for e in dir.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<i32>().ok()) else {
            continue;
        };
        let Ok(stat) = std::fs::read_to_string(e.path().join("stat")) else {
            continue;
        };
        // "pid (comm) state ppid ...": comm may hold spaces, so split after ')'.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|s| s.parse::<u32>().ok());
        if ppid == Some(me) {
            kill(pid);
        }
    }
}

/// Installs (once) handlers for SIGINT, SIGTERM and SIGHUP and a watcher thread
/// that, on the first of them, stops the workers and removes the namespaces, then
/// exits with 128 + signal.
fn install_signal_cleanup() -> Result<()> {
    static INSTALLED: OnceLock<()> = OnceLock::new();
    if INSTALLED.get().is_some() {
        return Ok(());
    }
    let mut signals =
        Signals::new([SIGINT, SIGTERM, SIGHUP]).context("installing the signal handlers")?;
    std::thread::Builder::new()
        .name("netns-cleanup".into())
        .spawn(move || {
            let Some(sig) = signals.forever().next() else {
                return; // the handlers were removed: nothing to watch
            };
            eprintln!(
                "\nmemchan bench --hosts: signal {sig}: stopping the workers and removing the network namespaces"
            );
            kill_children();
            // Never released: the process exits below.
            let _busy = BUSY.lock().unwrap_or_else(|p| p.into_inner());
            let names: Vec<String> =
                std::mem::take(&mut *ACTIVE.lock().unwrap_or_else(|p| p.into_inner()));
            if let Some(bin) = ip_binary() {
                remove(&bin, &names);
            }
            for d in SCRATCH.lock().unwrap_or_else(|p| p.into_inner()).iter() {
                let _ = std::fs::remove_dir_all(d);
            }
            std::process::exit(128 + sig);
        })
        .context("starting the signal watcher thread")?;
    let _ = INSTALLED.set(());
    Ok(())
}

/// Has the signal watcher also remove `dir` (the run's scratch directory).
pub fn remove_on_signal(dir: &Path) {
    SCRATCH
        .lock()
        .unwrap_or_else(|p| p.into_inner())
        .push(dir.to_path_buf());
}

/// Moves the calling (single-threaded) process into namespace `name`.
pub fn enter(name: &str) -> Result<()> {
    let path = ["/run/netns", "/var/run/netns"]
        .iter()
        .map(|d| Path::new(d).join(name))
        .find(|p| p.exists())
        .with_context(|| format!("network namespace {name} does not exist"))?;
    let f = std::fs::File::open(&path).with_context(|| format!("opening {}", path.display()))?;
    rustix::thread::move_into_link_name_space(
        std::os::fd::AsFd::as_fd(&f),
        Some(rustix::thread::LinkNameSpaceType::Network),
    )
    .with_context(|| format!("setns into network namespace {name}"))
}
