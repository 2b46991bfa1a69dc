//! `mpi_tcp`: Open MPI over TCP across the two namespaces, with the bench's
//! own MPI ping-pong peer (`peers/mpi_latency.c`, the program of the
//! local `mpi` figure), compiled with `mpicc`.
//!
//! mpirun runs inside namespace A; rank 1 is an MPMD second app context that
//! enters namespace B through `ip netns exec` before it execs the program:
//!
//! ```text
//! ip netns exec A mpirun --allow-run-as-root --mca btl tcp,self --mca pml ob1
//!     --mca btl_tcp_if_include 10.202.0.0/24 --mca oob_tcp_if_include 10.202.0.0/24
//!     --bind-to core --map-by core
//!     -np 1 mpi_latency ARGS : -np 1 ip netns exec B mpi_latency ARGS
//! ```
//!
//! What makes it work: a rank reaches mpirun's PMIx server over TCP, and
//! PMIx 4 listens on loopback by default, which rank 1 (in namespace B) cannot
//! reach; `PMIX_MCA_ptl_base_if_include=10.202.0.0/24` makes the server listen
//! on the veth address instead. The ranks' own traffic goes through the TCP
//! BTL on the veth subnet (the shared-memory BTL is left out). The coordinator
//! checks that the veth byte counters grew by at least the payload.
//!
//! ob1 over TCP waits for a message by polling its progress engine, so this
//! is a busy-polling figure (next to `tcp_raw_spin`).
//!
//! The barrier figure's `mpi_tcp` runs `peers/mpi_barrier.c` the same way with one
//! app context of 16 ranks per host of nodes ([`Mpi::run_barrier`]).
//!
//! The same way, `mpi_bw` (the local `mpi` bandwidth peer, `peers/mpi_bw.c`:
//! windows of 64 non-blocking 1 MiB sends, a 4-byte answer) gives the message-passing
//! twin `net_mp_bandwidth_1mib_gbps` its `mpi_tcp` row ([`Mpi::run_bw`]).

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use anyhow::{bail, ensure, Context, Result};

use super::super::peers::{bind_ranks, on_path, read_peer_output, tail};
use super::super::timer::Clock;
use super::netns::{Namespaces, SUBNET};

const COMMON_H: &str = include_str!("../../peers/peer_common.h");
const SOURCE: &str = include_str!("../../peers/mpi_latency.c");
const BW_SOURCE: &str = include_str!("../../peers/mpi_bw.c");
const BARRIER_SOURCE: &str = include_str!("../../peers/mpi_barrier.c");

/// Longest one mpirun may take.
const MPI_TIMEOUT: Duration = Duration::from_secs(180);

/// The compiled ping-pong.
#[derive(Debug)]
pub struct Mpi {
    exe: PathBuf,
    /// `mpi_bw`, when it compiled.
    bw_exe: Option<PathBuf>,
    /// `mpi_barrier`, when it compiled.
    barrier_exe: Option<PathBuf>,
    dir: PathBuf,
    pub version: Option<String>,
}

/// Outcome of [`prepare`].
#[derive(Debug)]
pub enum Prepared {
    Ready(Mpi),
    Skipped(String),
}

/// Writes `source` as `dir/NAME.c` and compiles it with `mpicc -O2` into `dir/NAME`.
fn mpicc(dir: &Path, name: &str, source: &str) -> Result<std::process::Output> {
    let src = dir.join(format!("{name}.c"));
    std::fs::write(&src, source).with_context(|| format!("writing {name}.c"))?;
    Command::new("mpicc")
        .args(["-O2", "-o"])
        .arg(dir.join(name))
        .arg("-I")
        .arg(dir)
        .arg(&src)
        .output()
        .context("running mpicc")
}

/// Finds mpicc / mpirun and compiles the ping-pong into `scratch`.
pub fn prepare(scratch: &Path) -> Result<Prepared> {
    if on_path("mpicc").is_none() || on_path("mpirun").is_none() {
        return Ok(Prepared::Skipped(
            "Open MPI not installed (no mpicc/mpirun): mpi_tcp skipped (run scripts/setup.sh)"
                .into(),
        ));
    }
    let dir = scratch.join("mpi_tcp");
    std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
    std::fs::write(dir.join("peer_common.h"), COMMON_H).context("writing peer_common.h")?;
    let exe = dir.join("mpi_latency");
    let out = mpicc(&dir, "mpi_latency", SOURCE)?;
    if !out.status.success() {
        return Ok(Prepared::Skipped(format!(
            "mpicc failed to build mpi_latency: mpi_tcp skipped\n{}",
            String::from_utf8_lossy(&out.stderr).trim()
        )));
    }
    // The bandwidth peer: optional (the latency figure does not need it).
    let bw_exe = mpicc(&dir, "mpi_bw", BW_SOURCE)
        .is_ok_and(|o| o.status.success())
        .then(|| dir.join("mpi_bw"));
    let barrier_exe = mpicc(&dir, "mpi_barrier", BARRIER_SOURCE)
        .is_ok_and(|o| o.status.success())
        .then(|| dir.join("mpi_barrier"));
    let version = Command::new("mpirun")
        .arg("--version")
        .output()
        .ok()
        .and_then(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .next()
                .map(|l| l.trim().to_string())
        });
    Ok(Prepared::Ready(Mpi {
        exe,
        bw_exe,
        barrier_exe,
        dir,
        version,
    }))
}

impl Mpi {
    /// One mpirun: `iters` round trips after `warmup`, rank 0 in namespace A
    /// on `cpus.0`, rank 1 in namespace B on `cpus.1`. Returns one-way ns.
    pub fn run(
        &self,
        ns: &Namespaces,
        cpus: (usize, usize),
        iters: u64,
        warmup: u64,
        clock: &Clock,
    ) -> Result<Vec<f64>> {
        self.run_exe(&self.exe, ns, cpus, iters, warmup, clock)
    }

    /// One mpirun of `mpi_bw`: `iters` windows of 64 x 1 MiB after `warmup`; GB/s
    /// per window.
    pub fn run_bw(
        &self,
        ns: &Namespaces,
        cpus: (usize, usize),
        iters: u64,
        warmup: u64,
        clock: &Clock,
    ) -> Result<Vec<f64>> {
        let exe = self.bw_exe.as_ref().context("mpicc did not build mpi_bw")?;
        self.run_exe(exe, ns, cpus, iters, warmup, clock)
    }

    /// One mpirun of `mpi_barrier`: `per_host` ranks on each of `hosts`, `iters`
    /// barriers after `warmup`; ns per barrier at rank 0.
    #[allow(clippy::too_many_arguments)]
    pub fn run_barrier(
        &self,
        ns: &Namespaces,
        hosts: &[&str],
        per_host: usize,
        cpus: (usize, usize),
        iters: u64,
        warmup: u64,
        clock: &Clock,
    ) -> Result<Vec<f64>> {
        let exe = self
            .barrier_exe
            .as_ref()
            .context("mpicc did not build mpi_barrier")?;
        self.run_on(exe, ns, hosts, per_host, cpus, iters, warmup, clock)
    }

    fn run_exe(
        &self,
        exe: &Path,
        ns: &Namespaces,
        cpus: (usize, usize),
        iters: u64,
        warmup: u64,
        clock: &Clock,
    ) -> Result<Vec<f64>> {
        self.run_on(exe, ns, &[&ns.a, &ns.b], 1, cpus, iters, warmup, clock)
    }

    /// One mpirun in `hosts[0]`, one app context of `per_host` ranks per host (the
    /// later ones entering their namespace through `ip netns exec`).
    #[allow(clippy::too_many_arguments)]
    fn run_on(
        &self,
        exe: &Path,
        ns: &Namespaces,
        hosts: &[&str],
        per_host: usize,
        cpus: (usize, usize),
        iters: u64,
        warmup: u64,
        clock: &Clock,
    ) -> Result<Vec<f64>> {
        let first = *hosts.first().context("mpirun needs at least one host")?;
        let samples_file = self.dir.join("mpi_tcp.samples");
        let out_file = self.dir.join("mpi_tcp.out");
        let err_file = self.dir.join("mpi_tcp.err");
        let _ = std::fs::remove_file(&samples_file);
        let prog_args = [
            iters.to_string(),
            warmup.to_string(),
            format!("{}", clock.ghz),
            samples_file.display().to_string(),
        ];
        let ip = ns.ip_path();
        let mut cmd = Command::new(ip);
        cmd.args(["netns", "exec", first, "mpirun"])
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            // PMIx server on the veth address, so that rank 1 reaches it.
            .env("PMIX_MCA_ptl_base_if_include", SUBNET)
            .args(["--allow-run-as-root"])
            .args(["--mca", "btl", "tcp,self", "--mca", "pml", "ob1"])
            .args(["--mca", "btl_tcp_if_include", SUBNET])
            .args(["--mca", "oob_tcp_if_include", SUBNET]);
        bind_ranks(&mut cmd, &self.dir, cpus, hosts.len() * per_host)?;
        let np = per_host.to_string();
        cmd.args(["-np", &np]).arg(exe).args(&prog_args);
        for host in &hosts[1..] {
            cmd.args([":", "-np", &np])
                .arg(ip)
                .args(["netns", "exec", host])
                .arg(exe)
                .args(&prog_args);
        }
        cmd.stdin(Stdio::null())
            .stdout(File::create(&out_file).context("creating mpirun's stdout file")?)
            .stderr(File::create(&err_file).context("creating mpirun's stderr file")?);
        let mut child = cmd.spawn().context("starting ip netns exec ... mpirun")?;
        // `ip netns exec` execs mpirun: this pid is mpirun's.
        let Some(status) = super::super::peers::wait_with_deadline(&mut child, MPI_TIMEOUT)? else {
            bail!("mpirun timed out after {MPI_TIMEOUT:?}");
        };
        let stdout = std::fs::read_to_string(&out_file).unwrap_or_default();
        let stderr = std::fs::read_to_string(&err_file).unwrap_or_default();
        if !status.success() {
            bail!("mpirun exited with {status}: {}", tail(&stderr, 1200));
        }
        let (_, raw) = read_peer_output(&stdout, "mpirun's output", &samples_file, |line| {
            ensure!(
                line.median.is_finite() && line.median > 0.0,
                "implausible median {}",
                line.median
            );
            Ok(())
        })?;
        Ok(raw)
    }
}
