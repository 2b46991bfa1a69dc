//! `memchan relay`: a fault-injecting TCP relay for testing memchan links.
//!
//! The relay itself is the `memchan-relay` crate (so test workers can run it inside a
//! network namespace too); this is its command line: flags, the `listening ADDR` line, the
//! stats file (every 200 ms and at exit) and the summary on stderr. SIGTERM and SIGINT
//! stop it cleanly.

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use anyhow::{Context, Result};
use clap::Args;
use memchan_relay::{check_probability, write_stats_file, Relay, RelayConfig};
use signal_hook::consts::{SIGINT, SIGTERM};

/// Stats-file period.
const STATS_PERIOD: Duration = Duration::from_millis(200);
/// How often the stats thread looks at the stop flag.
const POLL: Duration = Duration::from_millis(5);

/// Options of `memchan relay`.
#[derive(Debug, Clone, Args)]
pub struct RelayArgs {
    /// Address to accept connections on (e.g. 127.0.0.1:7100; port 0 picks one).
    /// The bound address is printed on stdout as `listening ADDR`.
    #[arg(long, value_name = "ADDR")]
    pub listen: String,

    /// Address to forward each accepted connection to (the hub).
    #[arg(long, value_name = "ADDR")]
    pub to: String,

    /// Probability (0..1) that a frame is dropped (not forwarded).
    #[arg(long, value_name = "P", default_value_t = 0.0, value_parser = probability)]
    pub drop: f64,

    /// Probability (0..1) that one random bit of a frame is flipped, at a byte index in
    /// [12, frame length): the header's magic, version, kind, flags and length are
    /// never touched, so the framing survives and the receiver sees a CRC failure.
    #[arg(long, value_name = "P", default_value_t = 0.0, value_parser = probability)]
    pub corrupt: f64,

    /// Probability (0..1) that a frame is forwarded twice.
    #[arg(long, value_name = "P", default_value_t = 0.0, value_parser = probability)]
    pub dup: f64,

    /// Probability (0..1) that a frame is held back and sent right after the next
    /// frame of its direction (or after 20 ms if none comes).
    #[arg(long, value_name = "P", default_value_t = 0.0, value_parser = probability)]
    pub reorder: f64,

    /// Delay every faultable frame by this many microseconds ± 50% jitter after it
    /// arrived, like a long wire: frames in flight overlap, and order is kept.
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub delay_us: u64,

    /// Seed of the fault generator (each connection and direction derives its own).
    #[arg(long, value_name = "S", default_value_t = 1)]
    pub seed: u64,

    /// Write the counters as one JSON object to PATH every 200 ms and at exit
    /// (written to a temporary file and renamed, so readers never see half of it).
    #[arg(long, value_name = "PATH")]
    pub stats_file: Option<PathBuf>,
}

fn probability(s: &str) -> std::result::Result<f64, String> {
    let p: f64 = s.parse().map_err(|e| format!("{e}"))?;
    check_probability(p).map_err(|e| e.to_string())
}

/// Set by SIGTERM/SIGINT.
static STOP: AtomicBool = AtomicBool::new(false);

/// Runs `memchan relay` until SIGTERM or SIGINT.
pub fn run(args: RelayArgs) -> Result<()> {
    for sig in [SIGTERM, SIGINT] {
        signal_hook::flag::register(sig, &STOP).context("installing the signal handlers")?;
    }
    let relay = Relay::bind(RelayConfig {
        listen: args.listen.clone(),
        to: args.to.clone(),
        drop: args.drop,
        corrupt: args.corrupt,
        dup: args.dup,
        reorder: args.reorder,
        delay_us: args.delay_us,
        seed: args.seed,
    })
    .with_context(|| format!("starting the relay on {}", args.listen))?;
    {
        let mut out = std::io::stdout().lock();
        writeln!(out, "listening {}", relay.local_addr())?;
        out.flush()?;
    }
    let stats = relay.stats();
    std::thread::scope(|s| {
        if let Some(path) = &args.stats_file {
            let stats = stats.clone();
            s.spawn(move || {
                while !STOP.load(Ordering::SeqCst) {
                    if let Err(e) = write_stats_file(path, &stats.snapshot()) {
                        tracing::warn!(path = %path.display(), error = %e, "cannot write the stats file");
                    }
                    let next = std::time::Instant::now() + STATS_PERIOD;
                    while !STOP.load(Ordering::SeqCst) && std::time::Instant::now() < next {
                        std::thread::sleep(POLL);
                    }
                }
            });
        }
        relay.run(&STOP);
    });
    let last = stats.snapshot();
    if let Some(path) = &args.stats_file {
        write_stats_file(path, &last)?;
    }
    eprintln!("{}", last.summary());
    // The forwarding threads die with the process, which closes every socket.
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn probabilities_are_checked() {
        assert_eq!(probability("0.25"), Ok(0.25));
        assert!(probability("1.5").is_err());
        assert!(probability("-0.1").is_err());
        assert!(probability("x").is_err());
    }
}
