//! `memchan`: the command-line front end of the memchan cluster interconnect.
//!
//! Its main job is `memchan bench` (the `memchan-bench` crate), which starts an
//! embedded local cluster of worker processes pinned to cores and prints, side by
//! side from one run, memchan's figures against the physical limit and the peers.
//! Started under the name `oshrun` it is the launcher, `memchan run`; under the name
//! `oshcc`, the C compiler wrapper `memchan oshcc`.

use anyhow::Result;
use clap::{Parser, Subcommand};
use std::io::IsTerminal;
use tracing_subscriber::filter::LevelFilter;
use tracing_subscriber::EnvFilter;

mod hub;
mod ip;
mod ip_status;
mod metrics;
mod oshcc;
mod relay;
mod run;
mod status;

/// memchan — a software cluster interconnect (shared-memory reflective memory
/// in the line of DEC MEMORY CHANNEL).
#[derive(Debug, Parser)]
#[command(name = "memchan", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Measure memchan against the cache-line limit, memcpy, TCP loopback and
    /// the Open MPI / OpenSHMEM peers, interleaved in rounds on the same cores,
    /// and print one table per figure (median, p99, ratio, target, met).
    Bench(memchan_bench::BenchArgs),
    /// Internal: one side of a measurement, spawned by `memchan bench`.
    #[command(hide = true)]
    BenchWorker(memchan_bench::WorkerArgs),
    /// A fault-injecting relay for testing links: forwards TCP connections to the
    /// hub and, per link frame and direction, drops, corrupts, duplicates, reorders
    /// or delays it with the given probabilities (the handshake always passes).
    Relay(relay::RelayArgs),
    /// Run a cluster's hub: nodes on any host join through it (`MEMCHAN_HUB`). Prints
    /// `listening ADDR` (and `metrics ADDR`), then serves until SIGTERM or SIGINT.
    Hub(hub::HubArgs),
    /// Ask a hub for the cluster's state: members, epochs and both ends of every
    /// link's error counters, as tables or JSON, or served as Prometheus metrics.
    Status(status::StatusArgs),
    /// Start N processes (PEs) of a program on this host, ranks in the environment,
    /// bound to cores, as one job (mpirun/oshrun syntax; `memchan run --help`).
    Run(run::RunCli),
    /// Compile and link a C OpenSHMEM program against libmemchan: the system C
    /// compiler (OSHMEM_CC, SHMEM_CC or cc) with -I/-L/rpath/-lmemchan; -showme prints it.
    Oshcc(oshcc::OshccCli),
    /// Give this node a TUN interface whose IP packets travel as memchan writes
    /// (TCP/IP over memchan): node N is host N+1 of the subnet. Needs root.
    Ip(ip::IpArgs),
}

/// The variable holding the log filter, in `tracing_subscriber::EnvFilter` syntax
/// (`debug`, `warn,memchan_net=debug`, ...).
const LOG_ENV: &str = "MEMCHAN_LOG";

/// Sends the libraries' `tracing` events (the hub's joins, refusals and isolations,
/// the relay's errors) to stderr, one line each: time, level, module, message and
/// fields; `info` and up unless `MEMCHAN_LOG` says otherwise; coloured only on a
/// terminal. What the command itself prints (`listening ADDR`, its errors) is output,
/// not logs, and does not pass through here. The launcher (`launcher`) hosts a hub
/// across hosts whose joins are not news there: without `MEMCHAN_LOG` its hub logs
/// warnings only.
fn init_logging(launcher: bool) {
    let filter = EnvFilter::builder()
        .with_default_directive(LevelFilter::INFO.into())
        .with_env_var(LOG_ENV)
        .from_env_lossy();
    let filter = match std::env::var_os(LOG_ENV) {
        None if launcher => {
            filter.add_directive("memchan_hub=warn".parse().expect("a valid directive"))
        }
        _ => filter,
    };
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(std::io::stderr().is_terminal())
        // A closed stderr (`... 2>&1 | head -1`) loses the lines, not the process:
        // the subscriber would report its failed write with a panicking eprintln.
        .log_internal_errors(false)
        .init();
}

fn main() -> Result<()> {
    // Installed (or linked) as `oshrun`, the binary is `memchan run`.
    let mut argv = std::env::args_os();
    let arg0 = argv.next().unwrap_or_default();
    let called = std::path::Path::new(&arg0).file_name();
    if called.is_some_and(|n| n == "oshrun") {
        init_logging(true);
        std::process::exit(run::main("oshrun", argv.collect()));
    }
    // As `oshcc`, the compiler wrapper.
    if called.is_some_and(|n| n == "oshcc") {
        std::process::exit(oshcc::main("oshcc", argv.collect()));
    }
    let cli = Cli::parse();
    init_logging(matches!(cli.command, Command::Run(_)));
    match cli.command {
        Command::Bench(args) => memchan_bench::run(args),
        Command::Relay(args) => relay::run(args),
        Command::Hub(args) => hub::run(args),
        Command::Status(args) => status::run(args),
        Command::Run(args) => std::process::exit(run::main("memchan run", args.args)),
        Command::Ip(args) => ip::run(args),
        Command::Oshcc(args) => std::process::exit(oshcc::main("memchan oshcc", args.args)),
        Command::BenchWorker(args) => {
            // One line for the coordinator to quote, without a backtrace.
            if let Err(e) = memchan_bench::worker_main(args) {
                eprintln!("{e:#}");
                std::process::exit(1);
            }
            Ok(())
        }
    }
}
