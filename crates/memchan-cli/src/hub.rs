//! `memchan hub`: runs a cluster's hub (`memchan_hub::Hub`) in the foreground.
//!
//! It prints `listening ADDR` (the bound address, so `--listen HOST:0` works) and, with
//! `--metrics`, `metrics ADDR` on stdout, then serves until SIGTERM or SIGINT. The hub
//! itself logs joins, refusals (at most a few lines a second, with the count left
//! out) and isolations on stderr.

use std::io::Write;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use crate::metrics::{exposition, serve_metrics};
use anyhow::{bail, Context, Result};
use clap::Args;
use memchan_core::PageSize;
use memchan_hub::{Hub, HubConfig};
use memchan_link::wire::Key;
use signal_hook::consts::{SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

/// Options of `memchan hub`.
#[derive(Debug, Clone, Args)]
pub struct HubArgs {
    /// Address to listen on for nodes (e.g. 0.0.0.0:7100; port 0 picks one). The
    /// bound address is printed on stdout as `listening ADDR`.
    #[arg(long, value_name = "HOST:PORT")]
    pub listen: String,

    /// The one cluster this hub serves (default: the first node to join names it).
    #[arg(long, value_name = "NAME")]
    pub cluster: Option<String>,

    /// File holding the cluster key (its bytes, surrounding whitespace ignored).
    /// Default: the file `MEMCHAN_KEY_FILE` names. Without a key anyone who reaches
    /// the listening address may join.
    #[arg(long, value_name = "PATH")]
    pub key_file: Option<PathBuf>,

    /// Page size of the cluster, 4096 or 8192 (default: the first join chooses).
    #[arg(long, value_name = "BYTES", value_parser = page_size)]
    pub page_size: Option<PageSize>,

    /// Heartbeat period on every link, in milliseconds.
    #[arg(long, value_name = "N", default_value_t = 100)]
    pub heartbeat_ms: u64,

    /// A node silent this long (milliseconds) is isolated.
    #[arg(long, value_name = "N", default_value_t = 800)]
    pub failure_timeout_ms: u64,

    /// Connections the hub holds between accept and a verified join, at most; over
    /// it a new one displaces the oldest if that waited a second, else it is refused
    /// at once. Each costs a socket and at most a 4 KiB buffer, never a thread.
    #[arg(long, value_name = "N", default_value_t = 256, value_parser = clap::value_parser!(u32).range(1..=65536))]
    pub max_pending: u32,

    /// Pending connections (see --max-pending) from one source (an IPv4 address or
    /// an IPv6 /64), at most; over it a new one is refused at once.
    #[arg(long, value_name = "N", default_value_t = 32, value_parser = clap::value_parser!(u32).range(1..=65536))]
    pub max_pending_per_address: u32,

    /// Also serve Prometheus metrics (`GET /metrics`) on this address (port 0 picks
    /// one); the bound address is printed on stdout as `metrics ADDR`.
    #[arg(long, value_name = "ADDR")]
    pub metrics: Option<String>,
    /// Dual rail, the active hub: number every packet in the cluster's order and
    /// tell the nodes how far all destinations released, so that a standby (see
    /// --standby-of) can take over with no write lost, applied twice or reordered.
    #[arg(long)]
    pub rail: bool,

    /// Dual rail, the standby hub: copy the tables of the active hub at this address
    /// every heartbeat, refuse ordinary joins, and take over when the nodes (joined
    /// with `MEMCHAN_HUB=ACTIVE,STANDBY`) lose the active hub and resume here.
    #[arg(long, value_name = "HOST:PORT", conflicts_with = "rail")]
    pub standby_of: Option<String>,
}

fn page_size(s: &str) -> std::result::Result<PageSize, String> {
    s.parse::<usize>()
        .ok()
        .and_then(PageSize::from_bytes)
        .ok_or_else(|| format!("`{s}` is not a supported page size (4096 or 8192)"))
}

/// The key file named by `--key-file`, else by `MEMCHAN_KEY_FILE` (if not empty).
pub(crate) fn key_file(arg: Option<PathBuf>) -> Option<PathBuf> {
    arg.or_else(|| {
        std::env::var_os("MEMCHAN_KEY_FILE")
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    })
}

/// The cluster key from `path` (`None`: the open key), and whether there was one.
pub(crate) fn load_key(path: Option<&std::path::Path>) -> Result<(Key, bool)> {
    let secret = memchan_net::node::read_key(path)?;
    Ok(match secret {
        Some(s) => (Key::from_secret(&s), true),
        None => (Key::open(), false),
    })
}

/// Makes SIGTERM and SIGINT wake [`wait_for_signal`] instead of killing the process
/// (from here on: a signal that arrives before the wait is kept for it).
pub(crate) fn catch_signals() -> Result<Signals> {
    Signals::new([SIGTERM, SIGINT]).context("installing the SIGTERM/SIGINT handlers")
}

/// Blocks until SIGTERM or SIGINT arrived.
pub(crate) fn wait_for_signal(mut signals: Signals) {
    let _ = signals.forever().next();
}

/// Prints one line on stdout and flushes it (scripts wait for these lines).
pub(crate) fn announce(line: &str) -> Result<()> {
    let mut out = std::io::stdout().lock();
    writeln!(out, "{line}")?;
    out.flush()?;
    Ok(())
}

/// Runs `memchan hub` until SIGTERM or SIGINT; errors exit 1 with one line on stderr.
pub fn run(args: HubArgs) -> Result<()> {
    if let Err(e) = serve(args) {
        eprintln!("memchan hub: {e:#}");
        std::process::exit(1);
    }
    Ok(())
}

fn serve(args: HubArgs) -> Result<()> {
    if args.heartbeat_ms == 0 {
        bail!("--heartbeat-ms must be at least 1");
    }
    if args.failure_timeout_ms <= args.heartbeat_ms {
        bail!(
            "--failure-timeout-ms ({}) must be longer than --heartbeat-ms ({})",
            args.failure_timeout_ms,
            args.heartbeat_ms
        );
    }
    let (key, keyed) = load_key(key_file(args.key_file).as_deref())?;
    let signals = catch_signals()?;
    let hub = Hub::start(HubConfig {
        listen: args.listen.clone(),
        cluster: args.cluster,
        key,
        keyed,
        page_size: args.page_size,
        heartbeat: Duration::from_millis(args.heartbeat_ms),
        failure_timeout: Duration::from_millis(args.failure_timeout_ms),
        max_pending: args.max_pending as usize,
        max_pending_per_source: args.max_pending_per_address as usize,
        rail: args.rail,
        standby_of: args.standby_of.clone(),
        ..HubConfig::default()
    })
    .with_context(|| format!("cannot listen on {}", args.listen))?;
    let hub = Arc::new(hub);
    if !keyed {
        tracing::warn!(
            "no cluster key: any process that reaches {} may join \
             (use --key-file or MEMCHAN_KEY_FILE)",
            hub.local_addr()
        );
    }
    announce(&format!("listening {}", hub.local_addr()))?;
    let metrics = match &args.metrics {
        Some(listen) => {
            let h = hub.clone();
            let srv = serve_metrics(listen, move || Ok(exposition(&h.status())))
                .with_context(|| format!("cannot serve metrics on {listen}"))?;
            announce(&format!("metrics {}", srv.local_addr()))?;
            Some(srv)
        }
        None => None,
    };
    wait_for_signal(signals);
    // The metrics server first (its thread holds a reference to the hub), then the
    // hub, which closes every link.
    drop(metrics);
    drop(hub);
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn page_sizes_are_checked() {
        assert_eq!(page_size("4096"), Ok(PageSize::K4));
        assert_eq!(page_size("8192"), Ok(PageSize::K8));
        assert!(page_size("1024").is_err());
        assert!(page_size("4k").is_err());
    }
}
