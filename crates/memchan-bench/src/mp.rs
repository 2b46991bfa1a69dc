//! Message passing (`memchan-msg`), the seed's second level, beside Open MPI on the
//! same two cores: 8-byte ping-pong latency (blocking `send` / `recv`, round trip / 2,
//! as `mpi_latency.c`) and 1 MiB bandwidth (osu_bw style: a window of 64 non-blocking
//! sends of one buffer, then a 4-byte answer, as `mpi_bw.c`), each in full postal
//! mode (`isend`: buffered, through the per-sender bulk chunks) and in restricted
//! zero-copy mode (`issend`: synchronous; for bandwidth the receive buffer lies in an
//! rx mapping, so the body is deposited straight into it).
//!
//! The `mpi` series of the two tables are the samples of the existing Open MPI peers
//! (`latency` and `bandwidth/1048576` figures) of the same run. The latency pairs
//! interleave a raw write's ping-pong with their messages (the `<= 1.3x` target's
//! reference) and, when UCX is installed, take turns with its `tag_lat`
//! ([`latency_beside_ucx`], the `<= 0.6x` target's).
//!
//! With `--plot`, [`sweep`] runs the bandwidth pair once more over the sweep's sizes
//! (`--sizes`: the worker reports a series per size) for the per-level plot.

use anyhow::{ensure, Context, Result};
use memchan::{Cluster, Dest, RxAttrs, TxAttrs};
use memchan_msg::{Comm, CommConfig};

use super::model::{fig, Config, SampleSet};
use super::peers::RUN_TIMEOUT;
use super::pingpong::{self, Endpoint, Fns};
use super::refs::{self, PEER_TIMEOUT, WINDOW};
use super::session::{self, other_node, spin_for};
use super::timer::{ticks, Clock};
use super::turns::{self, Turns, Window};
use super::ucx::{self, Ucx};
use super::worker::{self, take, Group, Kind, Launcher, Role, WorkerArgs, WorkerOutput};

/// Bytes of one bandwidth message.
pub const MSG: usize = 1 << 20;

/// Round trips per block of the latency pairs' alternation between the messages
/// and the raw ping-pong: long enough that a switch costs nothing measurable (a
/// few cold misses), short enough that both see the same machine.
const RAW_BLOCK: u64 = 2048;

/// The series of the raw ping-pong run interleaved with the message latency pairs.
pub const RAW_SERIES: &str = "memchan_raw";

/// Whether `k` is one of this module's latency pairs.
pub fn is_latency_kind(k: Kind) -> bool {
    matches!(k, Kind::MpLatencyPostal | Kind::MpLatencyZeroCopy)
}

/// Whether `k` is one of this module's worker kinds.
pub fn is_mp_kind(k: Kind) -> bool {
    matches!(
        k,
        Kind::MpLatencyPostal
            | Kind::MpLatencyZeroCopy
            | Kind::MpBandwidthPostal
            | Kind::MpBandwidthZeroCopy
    )
}

/// The series a kind's samples go to.
fn series(k: Kind) -> &'static str {
    match k {
        Kind::MpLatencyPostal | Kind::MpBandwidthPostal => "memchan_postal",
        _ => "memchan_zero_copy",
    }
}

/// Coordinator side: runs one pair and adds its samples to `set`.
pub fn measure(kind: Kind, l: &mut Launcher, cfg: &Config, set: &mut SampleSet) -> Result<()> {
    let extra = pair_args(kind, l, cfg);
    let out = worker::pair(l, kind, cfg.cpus, &extra)?;
    record(kind, out, set)
}

/// A latency pair (`kind`) and UCX's `tag_lat` started together and taking turns
/// ([`turns::drive_with`]; memchan's windows first in the even ones when
/// `memchan_first`), so that both meet the same states of the machine: the pair's
/// round trips in [`turns::WINDOWS`] windows and, between them, one `ucx_perftest`
/// run of as many round trips each. Memchan's samples and UCX's values are added to
/// `set`; returns memchan's outcome, then UCX's. When the FIFOs cannot be made or
/// UCX fails, the pair runs again alone (and UCX's values so far are kept).
pub fn latency_beside_ucx(
    kind: Kind,
    ucx: &Ucx,
    l: &mut Launcher,
    cfg: &Config,
    set: &mut SampleSet,
    memchan_first: bool,
) -> (Result<()>, Result<()>) {
    let turns = match Turns::new(&l.scratch_path(&format!("turns_{kind:?}_ucx"))) {
        Ok(t) => t,
        Err(e) => return (measure(kind, l, cfg, set), Err(e)),
    };
    let mut extra = pair_args(kind, l, cfg);
    extra.extend(["--turns".to_string(), turns.dir().display().to_string()]);
    let mut pair = match Group::start(l, kind, 2, cfg.cpus, &extra) {
        Ok(p) => p,
        Err(e) => return (Err(e), Ok(())),
    };
    let per_window = (cfg.iters / turns::WINDOWS as u64).max(1);
    let mut values = Vec::with_capacity(turns::WINDOWS);
    let failed = {
        let launcher: &Launcher = l;
        let mut theirs = |_w: usize| -> Result<()> {
            values.push(ucx.latency_ns(launcher, cfg.cpus, cfg.warmup, per_window)?);
            Ok(())
        };
        let first = usize::from(!memchan_first);
        turns::drive_with(&turns, &mut pair, &mut theirs, first, RUN_TIMEOUT).err()
    };
    set.add(fig::MP_LATENCY, ucx::SERIES, values);
    // Closing the FIFOs ends a pair still waiting for its turn.
    drop(turns);
    let mine = pair.finish();
    match failed {
        None => (mine.and_then(|out| record(kind, out, set)), Ok(())),
        Some((0, e)) => (turns::failed_with(mine.map(drop), e), Ok(())),
        Some((_, e)) => (measure(kind, l, cfg, set), Err(e)),
    }
}

/// The workers' arguments of a pair of `kind`, on a cluster of its own.
fn pair_args(kind: Kind, l: &mut Launcher, cfg: &Config) -> Vec<String> {
    let cluster = l.unique("memchan-bench-mp");
    let mut extra = if is_latency_kind(kind) {
        cfg.pingpong_args(cfg.iters)
    } else {
        let w = refs::windows_for(MSG, cfg.bw_budget, cfg.bw_min_windows, cfg.bw_max_windows);
        vec![
            "--iters".into(),
            w.to_string(),
            "--warmup".into(),
            "2".into(),
        ]
    };
    extra.extend(["--cluster".to_string(), cluster]);
    extra
}

/// Adds a pair's output to `set`: the messages' samples and, for a latency pair, the
/// raw ping-pong's interleaved with them.
fn record(kind: Kind, mut out: WorkerOutput, set: &mut SampleSet) -> Result<()> {
    let figure = if is_latency_kind(kind) {
        set.add(fig::MP_LATENCY, RAW_SERIES, take_raw(&mut out)?);
        fig::MP_LATENCY
    } else {
        fig::MP_BANDWIDTH
    };
    set.add(figure, series(kind), take(out, "samples")?);
    Ok(())
}

/// The raw ping-pong's samples of a latency pair's output.
fn take_raw(out: &mut WorkerOutput) -> Result<Vec<f64>> {
    out.series
        .remove("raw")
        .context("message latency worker: no raw series")
}

/// The sweep's figure id for `size` (ns per window of [`WINDOW`] messages; series
/// `memchan_postal`, `memchan_zero_copy`).
pub fn sweep_figure(size: usize) -> String {
    format!("mp_sweep/{size}")
}

/// `--plot`: both bandwidth pairs once over the sweep's sizes.
pub fn sweep(l: &mut Launcher, cfg: &Config, set: &mut SampleSet) -> Result<()> {
    for kind in [Kind::MpBandwidthPostal, Kind::MpBandwidthZeroCopy] {
        let mut extra = cfg.sweep_args();
        extra.extend([
            "--warmup".to_string(),
            "1".into(),
            "--cluster".into(),
            l.unique("memchan-bench-mp-sweep"),
        ]);
        let out = worker::pair(l, kind, cfg.cpus, &extra)?;
        for (size, v) in out.series {
            let size: usize = size.parse().context("mp sweep worker: bad size")?;
            set.add(&sweep_figure(size), series(kind), v);
        }
    }
    Ok(())
}

/// One side's communicator endpoint of a ping-pong.
struct Ep<'a, 'c> {
    comm: &'a mut Comm<'c>,
    peer: u32,
    sync: bool,
}

impl Endpoint for Ep<'_, '_> {
    fn send(&mut self, seq: u64) -> Result<()> {
        let b = seq.to_le_bytes();
        if self.sync {
            self.comm.ssend(self.peer, 1, &b)?;
        } else {
            self.comm.send(self.peer, 1, &b)?;
        }
        Ok(())
    }
    fn wait(&mut self, seq: u64) -> Result<()> {
        let mut b = [0u8; 8];
        let s = self.comm.recv(self.peer, 1, &mut b)?;
        ensure!(
            s.len == 8 && u64::from_le_bytes(b) == seq,
            "ping-pong: got {:?} for {seq}",
            s
        );
        Ok(())
    }
}

/// One bandwidth measurement of a pair: windows of [`WINDOW`] non-blocking sends of
/// `size` bytes, then a 4-byte answer; ns per window (timing side).
struct Bw {
    peer: u32,
    ping: bool,
    sync: bool,
    size: usize,
}

impl Bw {
    fn windows(
        &self,
        comm: &mut Comm<'_>,
        zc_rx: Option<&memchan::RxMapping>,
        warmup: u64,
        iters: u64,
        clock: &Clock,
    ) -> Result<Vec<f64>> {
        let (peer, size) = (self.peer, self.size);
        let mut buf = vec![if self.ping { 1u8 } else { 0 }; size];
        let mut samples = Vec::with_capacity(iters as usize);
        for i in 0..warmup + iters {
            let t0 = ticks();
            let mut reqs = Vec::with_capacity(WINDOW);
            for _ in 0..WINDOW {
                // SAFETY: `buf` lives, unchanged (sends) or untouched by this code
                // (receives), until `wait_all` below returns every request.
                let r = unsafe {
                    match (zc_rx, self.ping) {
                        (_, true) => comm.isend_ptr(peer, 100, buf.as_ptr(), size, self.sync)?,
                        (Some(rx), false) => comm.irecv_rx(peer, 100, rx, 0, size)?,
                        (None, false) => comm.irecv_ptr(peer, 100, buf.as_mut_ptr(), size)?,
                    }
                };
                reqs.push(r);
            }
            for done in comm.wait_all(&reqs)? {
                let s = done.result?;
                ensure!(s.len == size, "bandwidth: a {} byte message", s.len);
            }
            if self.ping {
                let mut ack = [0u8; 4];
                comm.recv(peer, 101, &mut ack)?;
                if i >= warmup {
                    samples.push(clock.ns(ticks().wrapping_sub(t0)));
                }
            } else {
                comm.send(peer, 101, &[0; 4])?;
            }
        }
        if !self.ping {
            // The receiver checks the last message arrived whole.
            let mut last = vec![0u8; size];
            match zc_rx {
                Some(rx) => rx.read(0, &mut last)?,
                None => last.copy_from_slice(&buf),
            }
            ensure!(last.iter().all(|&b| b == 1), "bandwidth: damaged message");
        }
        Ok(samples)
    }
}

/// Worker side: one node of the pair. With `--netns` (the `--hosts` twins), it enters
/// its side's namespace first and joins through the hub on host H.
pub fn worker(kind: Kind, a: &WorkerArgs, clock: &Clock) -> Result<WorkerOutput> {
    let name = a.cluster.as_deref().context("--cluster is required")?;
    let hosts = !a.hosts.netns.is_empty();
    let c = if hosts {
        let ping = a.role == Role::Ping;
        let ns = a
            .hosts
            .netns
            .get(usize::from(!ping))
            .context("--netns A,B")?;
        super::hosts::netns::enter(ns)?;
        session::join_cluster(a, ping)?
    } else {
        Cluster::join(name).with_context(|| format!("joining cluster {name}"))?
    };
    c.wait_for_members(2, PEER_TIMEOUT)
        .context("waiting for the other bench node")?;
    let ping = a.role == Role::Ping;
    // A bandwidth pair's message sizes: the sweep's (a series per size), else 1 MiB.
    let sweep = !a.sizes.is_empty();
    let sizes = if sweep { a.sizes.clone() } else { vec![MSG] };
    let largest = sizes.iter().copied().max().unwrap_or(MSG);
    // The zero-copy bandwidth receive buffer: an rx mapping of the receiver's.
    let zc_rx = if kind == Kind::MpBandwidthZeroCopy && !ping {
        let seg = c.segment("mpzc", largest, 0o600).context("segment mpzc")?;
        Some((seg.map_rx_with(RxAttrs::default())?, seg))
    } else {
        None
    };
    let mut comm = Comm::new(&c, "bench", CommConfig::default()).context("communicator")?;
    let me = comm.rank();
    let peer = comm
        .ranks()
        .into_iter()
        .find(|&r| r != me)
        .context("no peer in the communicator")?;
    let mut out = WorkerOutput::default();
    match kind {
        Kind::MpLatencyPostal | Kind::MpLatencyZeroCopy => {
            let mut ep = Ep {
                comm: &mut comm,
                peer,
                sync: kind == Kind::MpLatencyZeroCopy,
            };
            if hosts {
                // Across hosts the raw write's twin is a host figure of its own
                // (`memchan_spin`, waiting through the hub as a raw writer should); a
                // spin on a word here would wait for the service thread to apply it.
                if ping {
                    let v = pingpong::ping(&mut ep, a.warmup, a.iters, clock)?;
                    out.series.insert("samples".into(), v);
                } else {
                    pingpong::pong(&mut ep, a.warmup, a.iters)?;
                }
            } else {
                // The raw level's ping-pong (`latency_8b_one_way_ns`: write_u64, spin)
                // interleaved with the messages, for the ratio between the two.
                let seg = c.segment("mp-raw", 4096, 0o600).context("segment mp-raw")?;
                let rx = seg.map_rx_with(RxAttrs::default())?;
                let tx = seg.map_tx(Dest::Node(other_node(&c)?), TxAttrs::default())?;
                c.barrier().context("raw ping-pong barrier")?;
                let mut raw = Fns(
                    |seq| tx.write_u64(0, seq).context("write_u64"),
                    |seq| spin_for(&rx, 0, seq, "the raw ping-pong peer"),
                );
                // With `--turns`, in the windows the bench alternates with UCX's runs;
                // between them both sides wait in `read()`, off the cores.
                let mut window = match &a.turns {
                    Some(dir) => Some(Window::open(dir, usize::from(!ping))?),
                    None => None,
                };
                let windows = if window.is_some() { turns::WINDOWS } else { 1 };
                let mut turn = |begin: bool| match &mut window {
                    Some(w) if begin => w.begin(),
                    Some(w) => w.end(),
                    None => Ok(()),
                };
                let (block, warmup, iters) = (RAW_BLOCK, a.warmup, a.iters);
                if ping {
                    let (mp, raw) = pingpong::ping_pair(
                        &mut ep, &mut raw, block, warmup, iters, clock, windows, &mut turn,
                    )?;
                    out.series.insert("samples".into(), mp);
                    out.series.insert("raw".into(), raw);
                } else {
                    pingpong::pong_pair(
                        &mut ep, &mut raw, block, warmup, iters, windows, &mut turn,
                    )?;
                }
            }
        }
        _ => {
            let sync = kind == Kind::MpBandwidthZeroCopy;
            for size in sizes {
                let windows = if sweep {
                    refs::windows_for(size, a.budget, a.min_windows, a.max_windows) as u64
                } else {
                    a.iters
                };
                let run = Bw {
                    peer,
                    ping,
                    sync,
                    size,
                };
                let v = run.windows(
                    &mut comm,
                    zc_rx.as_ref().map(|x| &x.0),
                    a.warmup,
                    windows,
                    clock,
                )?;
                let name = if sweep {
                    size.to_string()
                } else {
                    "samples".into()
                };
                out.series.insert(name, v);
            }
        }
    }
    comm.finish()?;
    drop(comm);
    c.barrier().context("closing barrier")?;
    if hosts {
        session::leave(&c, a.role == Role::Ping);
    }
    Ok(out)
}
