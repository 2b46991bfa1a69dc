//! `memchan ip`: gives this node a TUN interface whose packets travel as memchan
//! writes (`memchan_ip`). It joins the cluster (on this host, or through the hub
//! `MEMCHAN_HUB` names), prints `up node=N addr=A/P dev=IF` on stdout, a counters
//! line every `--stats-secs`, and serves until SIGTERM or SIGINT, then prints the
//! final counters (`counters ...`) and leaves. While it runs, its counters are
//! published for `memchan status` ([`crate::ip_status`]).

use std::io::Write;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use clap::Args;
use memchan_ip::{IpConfig, IpNode, Subnet};

use crate::ip_status;

/// Options of `memchan ip`.
#[derive(Debug, Clone, Args)]
pub struct IpArgs {
    /// The cluster to join (on this host; with MEMCHAN_HUB set, through that hub).
    #[arg(long, value_name = "NAME")]
    pub cluster: String,
    /// The subnet: node id N gets host address N + 1 (10.77.0.0/24: node 0 is
    /// 10.77.0.1). Every node of the cluster must use the same.
    #[arg(long, value_name = "A.B.C.D/P", default_value = "10.77.0.0/24")]
    pub subnet: String,
    /// Name of the TUN interface.
    #[arg(long, value_name = "NAME", default_value = "mcip0")]
    pub ifname: String,
    /// MTU of the interface (at most 65535): large, so per-packet cost does not cap TCP.
    #[arg(long, value_name = "BYTES", default_value_t = 65535)]
    pub mtu: u32,
    /// Each sender's unicast ring in each receiver, KiB (same on every node).
    #[arg(long, value_name = "KIB", default_value_t = 4096)]
    pub ring_kib: usize,
    /// Each sender's broadcast ring, KiB (same on every node).
    #[arg(long, value_name = "KIB", default_value_t = 256)]
    pub bcast_ring_kib: usize,
    /// Node ids 0..N take part (same on every node): receive memory is N slots.
    #[arg(long, value_name = "N", default_value_t = 8)]
    pub max_nodes: usize,
    /// Microseconds the receiver busy-polls before it sleeps (0: sleep at once).
    #[arg(long, value_name = "US", default_value_t = 0)]
    pub spin_us: u64,
    /// Longest time in microseconds the receiver busy-polls (reading the TUN device
    /// too) after an exchange of small packets only, both ways (request/response
    /// traffic; not a stream): the window starts at 10, opens to this when the next
    /// packet came after the window but within this, and halves after longer gaps;
    /// 0: as --spin-us. Default: 200 on one host, 0 through a hub. Either spin pauses
    /// while the machine is too busy for it.
    #[arg(long, value_name = "US")]
    pub interactive_spin_us: Option<u64>,
    /// Print the counters every N seconds (0: only when stopping).
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub stats_secs: u64,
}

/// Entry point of `memchan ip`.
pub fn run(a: IpArgs) -> Result<()> {
    let subnet: Subnet = a.subnet.parse()?;
    let cfg = IpConfig {
        subnet,
        ifname: a.ifname.clone(),
        mtu: a.mtu,
        ring_bytes: a.ring_kib << 10,
        bcast_ring_bytes: a.bcast_ring_kib << 10,
        max_nodes: a.max_nodes,
        spin: Duration::from_micros(a.spin_us),
        interactive_spin: a.interactive_spin_us.map(Duration::from_micros),
        ..IpConfig::default()
    };
    // Signals first: one that arrives while starting still stops us cleanly.
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    for sig in [signal_hook::consts::SIGINT, signal_hook::consts::SIGTERM] {
        signal_hook::flag::register(sig, stop.clone()).context("installing signal handlers")?;
    }
    let cluster = Arc::new(
        memchan::Cluster::join(&a.cluster)
            .with_context(|| format!("joining cluster `{}`", a.cluster))?,
    );
    let node = IpNode::start(cluster.clone(), &cfg).context("memchan ip")?;
    let mut out = std::io::stdout();
    writeln!(
        out,
        "up node={} addr={}/{} dev={}",
        cluster.node_id().0,
        node.addr(),
        subnet.prefix(),
        node.ifname()
    )?;
    out.flush()?;
    let status_dir = ip_status::dir();
    let mut publisher = ip_status::Publisher::new(&status_dir, &a.cluster, cluster.node_id().0)
        .map_err(|e| tracing::warn!("counters not published for memchan status: {e:#}"))
        .ok();
    let mut entry = ip_status::IpEntry {
        cluster: a.cluster.clone(),
        node: cluster.node_id().0,
        pid: std::process::id(),
        dev: node.ifname().to_string(),
        addr: format!("{}/{}", node.addr(), subnet.prefix()),
        updated_unix_ms: 0,
        counters: Default::default(),
    };
    let mut next = Instant::now() + Duration::from_secs(a.stats_secs);
    let mut tick = 0u64;
    while !stop.load(std::sync::atomic::Ordering::Relaxed) && node.is_running() {
        std::thread::sleep(Duration::from_millis(50));
        tick += 1;
        // About every 100 ms (and at once): written only when a counter moved.
        if let Some(p) = publisher.as_mut().filter(|_| tick % 2 == 1) {
            entry.counters = ip_status::counters_of(&node.counters().to_string());
            entry.updated_unix_ms = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_millis() as u64);
            if let Err(e) = p.publish(&entry) {
                tracing::warn!("counters no longer published for memchan status: {e:#}");
                publisher = None;
            }
        }
        if a.stats_secs > 0 && Instant::now() >= next {
            next += Duration::from_secs(a.stats_secs);
            writeln!(out, "stats peers={} {}", node.peers_up(), node.counters())?;
            out.flush()?;
        }
    }
    drop(publisher);
    let failed = !node.is_running();
    let last = node.stop();
    writeln!(out, "counters {last}")?;
    out.flush()?;
    if failed {
        anyhow::bail!(
            "memchan ip stopped: this node can no longer take part in the cluster (see the log)"
        );
    }
    Ok(())
}
