//! The worker side of `memchan bench`: the entry of the hidden `bench-worker`
//! subcommand. It pins the process, runs the one measurement it was started for
//! (a reference here, or the memchan / `--hosts` side) and writes the samples as
//! JSON to `--out`. It sits above the measurement modules and nothing imports it
//! but the crate root (as [`worker_main`](crate::worker_main)), so `worker.rs` (the
//! launcher they use) stays below them.

use std::fs::File;
use std::net::{TcpListener, TcpStream};
use std::time::{Duration, Instant};

use anyhow::{Context, Result};

use super::hosts;
use super::memchan_side;
use super::mp;
use super::pingpong;
use super::refs::{self, CacheLine, ShmRegion, Tcp};
use super::scale;
use super::timer::Clock;
use super::worker::{pin, ping_output, Kind, Role, WorkerArgs, WorkerOutput};

/// Entry point of `memchan bench-worker`.
pub fn main(args: WorkerArgs) -> Result<()> {
    if let Some(cpu) = args.cpu {
        pin(cpu)?;
    }
    let clock = Clock { ghz: args.tsc_ghz };
    let out =
        run(&args, &clock).with_context(|| format!("{:?} worker ({:?})", args.kind, args.role))?;
    let f = File::create(&args.out).with_context(|| format!("creating {}", args.out.display()))?;
    serde_json::to_writer(std::io::BufWriter::new(f), &out)
        .with_context(|| format!("writing {}", args.out.display()))?;
    Ok(())
}

fn run(a: &WorkerArgs, clock: &Clock) -> Result<WorkerOutput> {
    match a.kind {
        Kind::Cacheline => {
            let name = a.shm.as_deref().context("--shm is required")?;
            let region = ShmRegion::open(name, refs::REGION_LEN)?;
            let (la, lb) = (
                region.atomic_u64(refs::LINE_A),
                region.atomic_u64(refs::LINE_B),
            );
            match a.role {
                Role::Ping => {
                    let mut ep = CacheLine { out: la, inp: lb };
                    ping_output(&mut ep, a, clock)
                }
                _ => {
                    let mut ep = CacheLine { out: lb, inp: la };
                    pingpong::pong(&mut ep, a.warmup, a.iters)?;
                    Ok(WorkerOutput::default())
                }
            }
        }
        Kind::Tcp => {
            let port = a.port.context("--port is required")?;
            match a.role {
                Role::Ping => {
                    let s = connect_retry(port)?;
                    let mut ep = Tcp::new(s)?;
                    ping_output(&mut ep, a, clock)
                }
                _ => {
                    let l = TcpListener::bind(("127.0.0.1", port))
                        .with_context(|| format!("binding 127.0.0.1:{port}"))?;
                    let (s, _) = l.accept().context("accepting the ping side")?;
                    let mut ep = Tcp::new(s)?;
                    pingpong::pong(&mut ep, a.warmup, a.iters)?;
                    Ok(WorkerOutput::default())
                }
            }
        }
        Kind::Memcpy => {
            let mut out = WorkerOutput::default();
            for &size in &a.sizes {
                let w = refs::windows_for(size, a.budget, a.min_windows, a.max_windows);
                out.series
                    .insert(size.to_string(), refs::memcpy_window_ns(size, w, clock));
            }
            Ok(out)
        }
        Kind::StoreFence => Ok(WorkerOutput::one(
            "local_store_fence",
            refs::store_fence_ns(a.iters as usize, clock),
        )),
        Kind::Flops => Ok(WorkerOutput::one(
            "linpack_100",
            refs::flop_ns(a.iters as usize, clock)?,
        )),
        k if hosts::is_host_kind(k) => hosts::worker(k, a, clock),
        Kind::ScaleNode => scale::worker(a),
        Kind::MemchanRma => super::rma::worker(a, clock),
        k if mp::is_mp_kind(k) => mp::worker(k, a, clock),
        k => memchan_side::worker(k, a, clock),
    }
}

fn connect_retry(port: u16) -> Result<TcpStream> {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        match TcpStream::connect(("127.0.0.1", port)) {
            Ok(s) => return Ok(s),
            Err(e) if Instant::now() > deadline => {
                return Err(e).with_context(|| format!("connecting to 127.0.0.1:{port}"))
            }
            Err(_) => std::thread::sleep(Duration::from_millis(2)),
        }
    }
}
