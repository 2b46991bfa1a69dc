//! The IP level of `memchan bench` (seed 002's third level): TCP between two network
//! namespaces, over a veth pair (`tcp_veth`, the kernel's own path) and over
//! `memchan ip` (`memchan_ip`: a TUN interface in each namespace, the packets
//! carried as memchan writes through shared memory), side by side in every round,
//! the order flipping every other round:
//!
//! | figure               | what                                                       |
//! |----------------------|------------------------------------------------------------|
//! | `ip_latency_8b_us`   | 8-byte TCP ping-pong (TCP_NODELAY, blocking reads), one way |
//! | `ip_bandwidth_gbps`  | a TCP stream of 1 MiB writes, GB/s per window of 16 MiB (a 1-byte answer closes each window) |
//!
//! Targets (docs/spec.md, Targets): `memchan_ip` bandwidth >= 0.7x and latency <= 1.5x
//! `tcp_veth`'s. Both sides are threads of the bench process that entered their
//! namespace (`setns`), the timing side pinned to the first core, the answering
//! side to the second; the two `memchan ip` processes are not pinned. It runs only
//! as root with `/dev/net/tun` and iproute2, and otherwise says why it was skipped.
//!
//! `--hosts` measures the same pair with the two `memchan ip` nodes joined through
//! the hub on host H (as the raw and message-passing twins do) instead of shared
//! memory, so every packet crosses the veth ([`measure_hosts`]:
//! `net_ip_latency_8b_us`, `net_ip_bandwidth_gbps`, against the same `tcp_veth`).

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use serde_json::Value;

use super::hosts::netns::{self, Namespaces};
use super::model::{Config, SIZES};
use super::pingpong;
use super::refs::{PageBuf, Tcp};
use super::stats::summarize;
use super::table::Pair;
use super::timer::{ticks, Clock};
use super::worker::pin;

/// JSON figure keys.
pub const FIG_LATENCY: &str = "ip_latency_8b_us";
pub const FIG_BANDWIDTH: &str = "ip_bandwidth_gbps";
/// The series.
const MEMCHAN_IP: &str = "memchan_ip";
const TCP_VETH: &str = "tcp_veth";
/// Targets: memchan_ip latency <= 1.5x, bandwidth >= 0.7x of tcp_veth.
pub const LATENCY_TARGET: f64 = 1.5;
const BANDWIDTH_TARGET: f64 = 0.7;
const MIB: usize = 1 << 20;
const WINDOW_MIB: usize = 16;

/// The `--hosts` twins' keys.
pub const FIG_NET_LATENCY: &str = "net_ip_latency_8b_us";
pub const FIG_NET_BANDWIDTH: &str = "net_ip_bandwidth_gbps";

/// Samples per series of both figures, and per-round medians.
#[derive(Debug, Default)]
pub struct IpFigures {
    /// The JSON keys (latency, bandwidth), and how memchan ip's nodes were joined.
    keys: [&'static str; 2],
    via: &'static str,
    /// `--plot`: per write size, the median GB/s of `memchan_ip` and `tcp_veth`.
    pub sweep: Vec<(usize, [f64; 2])>,
    lat: [Vec<f64>; 2],
    bw: [Vec<f64>; 2],
    round_lat: Vec<[f64; 2]>,
    round_bw: Vec<[f64; 2]>,
}

/// Why the IP level cannot run here, if it cannot.
pub fn unavailable() -> Option<String> {
    // SAFETY: geteuid(2) has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        return Some("needs root (network namespaces and a TUN interface)".into());
    }
    if !std::path::Path::new("/dev/net/tun").exists() {
        return Some("no /dev/net/tun".into());
    }
    if netns::ip_binary().is_none() {
        return Some("needs iproute2 (`ip`)".into());
    }
    None
}

/// Runs `f` on a thread that entered namespace `ns` (and is pinned to `cpu`).
fn in_ns<T: Send>(ns: &str, cpu: usize, f: impl FnOnce() -> Result<T> + Send) -> Result<T> {
    std::thread::scope(|s| {
        s.spawn(|| {
            netns::enter(ns)?;
            pin(cpu)?;
            f()
        })
        .join()
        .unwrap_or_else(|_| bail!("a measurement thread panicked"))
    })
}

/// A `memchan ip` process in a namespace; stopped with SIGTERM (a clean leave, so
/// the cluster's files go) on drop.
struct IpProc(Child);

impl IpProc {
    /// `hub`: join through the hub at this address (else on this host, through
    /// shared memory).
    fn start(
        ns: &Namespaces,
        which: &str,
        cluster: &str,
        hub: Option<&str>,
    ) -> Result<(IpProc, String)> {
        let exe = std::env::current_exe().context("locating the memchan binary")?;
        let mut cmd = Command::new(ns.ip_path());
        cmd.args(["netns", "exec", which])
            .arg(&exe)
            .args(["ip", "--cluster", cluster])
            .env_remove("MEMCHAN_HUB")
            .env_remove("MEMCHAN_HUB_HOST")
            .env_remove("MEMCHAN_KEY_FILE")
            // Its namespace is its host (they share this machine's /dev/shm).
            .env("MEMCHAN_DOMAIN", which);
        if let Some(addr) = hub {
            cmd.env("MEMCHAN_HUB", addr);
        }
        // Its stderr in a file, quoted when it does not come up.
        let err_path = std::env::temp_dir().join(format!("{cluster}-{which}.err"));
        let err_file = std::fs::File::create(&err_path)
            .with_context(|| format!("creating {}", err_path.display()))?;
        let spawned = cmd
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(err_file)
            .spawn()
            .context("starting memchan ip");
        let err_text = || {
            let t = std::fs::read_to_string(&err_path).unwrap_or_default();
            let _ = std::fs::remove_file(&err_path);
            t
        };
        let mut child = match spawned {
            Ok(c) => c,
            Err(e) => {
                err_text();
                return Err(e);
            }
        };
        let out = child.stdout.take().context("memchan ip stdout")?;
        let p = IpProc(child);
        let mut line = String::new();
        BufReader::new(out)
            .read_line(&mut line)
            .context("reading memchan ip's `up` line")?;
        let addr = line
            .split_whitespace()
            .find_map(|f| f.strip_prefix("addr="))
            .and_then(|a| a.split('/').next())
            .with_context(|| {
                format!(
                    "memchan ip in {which} did not come up (said `{}`; stderr: {})",
                    line.trim(),
                    super::peers::tail(&err_text(), 600)
                )
            })?;
        // Up: the file is no longer needed (the process keeps writing to its descriptor).
        let _ = std::fs::remove_file(&err_path);
        Ok((p, addr.to_string()))
    }
}

impl Drop for IpProc {
    fn drop(&mut self) {
        // SAFETY: kill(2) on our own child's pid (`ip netns exec` execs memchan).
        unsafe { libc::kill(self.0.id() as libc::pid_t, libc::SIGTERM) };
        let deadline = Instant::now() + Duration::from_secs(5);
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.0.try_wait() {
                return;
            }
            std::thread::sleep(Duration::from_millis(5));
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// One 8-byte ping-pong over TCP to `addr:port` (server in `ns.b`): one-way µs.
fn latency(
    ns: &Namespaces,
    cfg: &Config,
    clock: &Clock,
    addr: &str,
    port: u16,
    iters: u64,
) -> Result<Vec<f64>> {
    let bind = format!("{addr}:{port}");
    let l = in_ns(&ns.b, cfg.cpus.1, || {
        TcpListener::bind(&bind).with_context(|| format!("binding {bind}"))
    })?;
    let warmup = (iters / 10).max(10);
    std::thread::scope(|s| {
        let server = s.spawn(|| -> Result<()> {
            pin(cfg.cpus.1)?;
            let (c, _) = l.accept().context("accepting the ping side")?;
            pingpong::pong(&mut Tcp::new(c)?, warmup, iters)
        });
        let v = in_ns(&ns.a, cfg.cpus.0, || {
            let c = TcpStream::connect(&bind).with_context(|| format!("connecting to {bind}"))?;
            pingpong::ping(&mut Tcp::new(c)?, warmup, iters, clock)
        });
        server
            .join()
            .unwrap_or_else(|_| bail!("pong thread panicked"))?;
        Ok(v?.into_iter().map(|ns| ns / 1e3).collect())
    })
}

/// A TCP stream of `write`-byte writes to `addr:port`: GB/s per window of
/// `window` bytes (a whole number of writes).
#[allow(clippy::too_many_arguments)]
fn bandwidth(
    ns: &Namespaces,
    cfg: &Config,
    clock: &Clock,
    addr: &str,
    port: u16,
    windows: u64,
    write: usize,
    window: usize,
) -> Result<Vec<f64>> {
    let bind = format!("{addr}:{port}");
    let l = in_ns(&ns.b, cfg.cpus.1, || {
        TcpListener::bind(&bind).with_context(|| format!("binding {bind}"))
    })?;
    let total = windows + 1; // the first is a warm-up
    std::thread::scope(|s| {
        let server = s.spawn(|| -> Result<()> {
            pin(cfg.cpus.1)?;
            let (mut c, _) = l.accept().context("accepting the stream")?;
            let mut buf = vec![0u8; MIB];
            for _ in 0..total {
                let mut left = window;
                while left > 0 {
                    let n = c
                        .read(&mut buf[..left.min(MIB)])
                        .context("reading the stream")?;
                    if n == 0 {
                        bail!("the stream ended early");
                    }
                    left -= n;
                }
                c.write_all(&[1]).context("answering a window")?;
            }
            Ok(())
        });
        let v = in_ns(&ns.a, cfg.cpus.0, || {
            let mut c =
                TcpStream::connect(&bind).with_context(|| format!("connecting to {bind}"))?;
            let buf = PageBuf::new(write, 0x5a);
            let mut out = Vec::new();
            for w in 0..total {
                let t0 = ticks();
                for _ in 0..window / write {
                    c.write_all(buf.as_slice()).context("writing the stream")?;
                }
                let mut b = [0u8; 1];
                c.read_exact(&mut b).context("reading a window's answer")?;
                if w > 0 {
                    out.push(window as f64 / clock.ns(ticks().wrapping_sub(t0)));
                }
            }
            Ok(out)
        });
        server
            .join()
            .unwrap_or_else(|_| bail!("stream reader panicked"))?;
        v
    })
}

/// Waits until a TCP connection to `addr` from namespace `ns_a` succeeds (the two
/// `memchan ip` nodes found each other).
fn wait_reachable(ns: &Namespaces, addr: &str, port: u16) -> Result<()> {
    let bind = format!("{addr}:{port}");
    let l = in_ns(&ns.b, 0, || {
        TcpListener::bind(&bind).with_context(|| format!("binding {bind}"))
    })?;
    l.set_nonblocking(true)?;
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let to: std::net::SocketAddr = bind.parse()?;
        let ok = in_ns(&ns.a, 0, || {
            Ok(TcpStream::connect_timeout(&to, Duration::from_millis(500)).is_ok())
        })?;
        if ok {
            return Ok(());
        }
        if Instant::now() > deadline {
            bail!("the two memchan ip nodes did not reach each other within 20 s");
        }
    }
}

/// Measures both figures in `cfg.rounds` rounds; `sweep` (for `--plot`): then the
/// stream once per write size of the bandwidth sweep, both series.
pub fn measure(
    cfg: &Config,
    clock: &Clock,
    progress: &dyn Fn(&str),
    sweep: bool,
) -> Result<IpFigures> {
    let ns = Namespaces::pair()?;
    let cluster = format!("memchan-bench-ip-{}", std::process::id());
    measure_on(&ns, &cluster, None, cfg, clock, progress, sweep)
}

/// `--hosts`: both figures with the nodes, one in namespace A and one in B, of
/// `cluster` joined through the hub listening on `hub` (on the hub's own host).
pub fn measure_hosts(
    ns: &Namespaces,
    cluster: &str,
    hub: &str,
    cfg: &Config,
    clock: &Clock,
    progress: &dyn Fn(&str),
) -> Result<IpFigures> {
    measure_on(ns, cluster, Some(hub), cfg, clock, progress, false)
}

fn measure_on(
    ns: &Namespaces,
    cluster: &str,
    hub: Option<&str>,
    cfg: &Config,
    clock: &Clock,
    progress: &dyn Fn(&str),
    sweep: bool,
) -> Result<IpFigures> {
    let (pa, _addr_a) = IpProc::start(ns, &ns.a, cluster, hub)?;
    let (pb, addr_b) = IpProc::start(ns, &ns.b, cluster, hub)?;
    let mut port = 5600;
    wait_reachable(ns, &addr_b, port)?;
    let iters = if cfg.quick { 1000 } else { 5000 };
    let windows = if cfg.quick { 4 } else { 16 };
    let mut f = IpFigures {
        keys: if hub.is_some() {
            [FIG_NET_LATENCY, FIG_NET_BANDWIDTH]
        } else {
            [FIG_LATENCY, FIG_BANDWIDTH]
        },
        via: if hub.is_some() {
            ", joined through the hub on host H"
        } else {
            ""
        },
        ..IpFigures::default()
    };
    for round in 0..cfg.rounds {
        let order = if round % 2 == 0 { [0, 1] } else { [1, 0] };
        let mut lat = [0.0; 2];
        let mut bw = [0.0; 2];
        for i in order {
            let (addr, name) = if i == 0 {
                (addr_b.as_str(), MEMCHAN_IP)
            } else {
                (netns::ADDR_B, TCP_VETH)
            };
            progress(&format!("ip round {}/{}: {name}", round + 1, cfg.rounds));
            port += 1;
            let l = latency(ns, cfg, clock, addr, port, iters)
                .with_context(|| format!("{name} latency"))?;
            port += 1;
            let b = bandwidth(ns, cfg, clock, addr, port, windows, MIB, WINDOW_MIB * MIB)
                .with_context(|| format!("{name} bandwidth"))?;
            lat[i] = summarize(&l).map_or(f64::NAN, |s| s.median);
            bw[i] = summarize(&b).map_or(f64::NAN, |s| s.median);
            f.lat[i].extend(l);
            f.bw[i].extend(b);
        }
        f.round_lat.push(lat);
        f.round_bw.push(bw);
    }
    if sweep {
        // Windows of up to 2048 writes (at most 16 MiB), a few per size.
        let windows = if cfg.quick { 2 } else { 6 };
        for size in SIZES {
            let window = (size * 2048).min(WINDOW_MIB * MIB);
            let mut med = [f64::NAN; 2];
            for (i, m) in med.iter_mut().enumerate() {
                let (addr, name) = if i == 0 {
                    (addr_b.as_str(), MEMCHAN_IP)
                } else {
                    (netns::ADDR_B, TCP_VETH)
                };
                progress(&format!("ip sweep: {name}, {size}-byte writes"));
                port += 1;
                let b = bandwidth(ns, cfg, clock, addr, port, windows, size, window)
                    .with_context(|| format!("{name} bandwidth, {size}-byte writes"))?;
                *m = summarize(&b).map_or(f64::NAN, |s| s.median);
            }
            f.sweep.push((size, med));
        }
    }
    drop((pa, pb));
    Ok(f)
}

impl IpFigures {
    /// Bytes of the timed bandwidth windows of both series.
    pub fn bandwidth_bytes(&self) -> u64 {
        ((self.bw[0].len() + self.bw[1].len()) * WINDOW_MIB * MIB) as u64
    }

    fn figs(&self) -> [Pair; 2] {
        let one = |key, unit, title: &str, s: &[Vec<f64>; 2], rounds, lower_better, factor| {
            Pair::new(
                format!("{title}{}", self.via),
                key,
                unit,
                [MEMCHAN_IP, TCP_VETH],
                [&s[0], &s[1]],
                rounds,
                lower_better,
                factor,
                // Both tails are 99th percentiles, as the keys say (`_p99`).
                false,
            )
        };
        [
            one(
                self.keys[0],
                "µs",
                "TCP/IP over memchan: 8-byte one-way latency (TCP ping-pong)",
                &self.lat,
                &self.round_lat,
                true,
                LATENCY_TARGET,
            ),
            one(
                self.keys[1],
                "GB/s",
                "TCP/IP over memchan: bandwidth (TCP stream of 1 MiB writes)",
                &self.bw,
                &self.round_bw,
                false,
                BANDWIDTH_TARGET,
            ),
        ]
    }

    /// The median 8-byte one-way latency of `tcp_veth`, µs.
    pub fn tcp_veth_latency_us(&self) -> Option<f64> {
        summarize(&self.lat[1]).map(|s| s.median)
    }

    /// The two tables and their verdicts, as text.
    pub fn render(&self) -> String {
        let mut o = String::new();
        for f in self.figs() {
            f.render(&mut o);
        }
        o
    }

    /// Adds the figures, units, ratios, targets and sample counts to the bench's JSON.
    pub fn merge_json(&self, j: &mut Value) {
        for f in self.figs() {
            f.merge_json(j);
        }
    }
}
