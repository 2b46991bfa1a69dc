//! One bench node's cluster session, shared by the worker sides that join a bench
//! cluster (the raw level in `memchan_side.rs`, message passing in `mp.rs`, the
//! `--hosts` figures in `hosts/memchan_net.rs`): joining (on one host, or through the
//! hub one side hosts), finding the other node, spinning on an rx word and leaving.
//! A leaf: it imports no measurement module, so those can all use it without
//! importing each other.

use std::time::{Duration, Instant};

use anyhow::{ensure, Context, Result};
use memchan::{
    Cluster, Config as NodeConfig, Dest, HubSpec as Hub, NodeId, RxAttrs, RxMapping, TransportKind,
    TxAttrs, TxMapping,
};

use super::refs::PEER_TIMEOUT;
use super::timer::spin_until;
use super::worker::WorkerArgs;

/// How long a `--hosts` node retries joining while the hub is not up yet.
const JOIN_RETRY: Duration = Duration::from_secs(20);

/// One node of a two-node bench cluster.
pub struct Session {
    pub c: Cluster,
    pub peer: NodeId,
}

/// Waits for the other bench node to join and returns its id.
pub fn other_node(c: &Cluster) -> Result<NodeId> {
    other_node_of(c, 2)
}

/// Waits until the cluster has its `n` bench nodes and returns the id of one
/// that is not this node.
fn other_node_of(c: &Cluster, n: usize) -> Result<NodeId> {
    c.wait_for_members(n, PEER_TIMEOUT)
        .with_context(|| format!("waiting for the other {} bench node(s)", n - 1))?;
    let me = c.node_id();
    c.members()
        .into_iter()
        .find(|&n| n != me)
        .context("no other member in the bench cluster")
}

impl Session {
    /// Joins `--cluster` and waits for its `--nodes` bench nodes.
    pub fn join(a: &WorkerArgs) -> Result<Self> {
        let name = a.cluster.as_deref().context("--cluster is required")?;
        let c = Cluster::join(name).with_context(|| format!("joining cluster {name}"))?;
        let peer = other_node_of(&c, a.nodes)?;
        Ok(Self { c, peer })
    }

    /// Maps `name` (`size` bytes) rx here and tx towards the peer, then waits
    /// at a barrier so that both rx mappings exist before anything is sent.
    pub fn channel(
        &self,
        name: &str,
        size: usize,
        rx_attrs: RxAttrs,
    ) -> Result<(RxMapping, TxMapping)> {
        let seg = self
            .c
            .segment(name, size, 0o600)
            .with_context(|| format!("segment {name}"))?;
        let rx = seg.map_rx_with(rx_attrs).context("map_rx")?;
        let tx = seg
            .map_tx(Dest::Node(self.peer), TxAttrs::default())
            .context("map_tx")?;
        self.c.barrier().context("start barrier")?;
        Ok((rx, tx))
    }

    /// The closing barrier: nobody leaves while the other side still works.
    pub fn done(self) -> Result<()> {
        self.c.barrier().context("closing barrier")?;
        Ok(())
    }
}

/// Spins on an rx word until it holds `v`.
#[inline]
pub fn spin_for(rx: &RxMapping, off: usize, v: u64, what: &str) -> Result<()> {
    rx.load_u64(off)?; // checks the offset once, so the loop can ignore errors
    spin_until(
        || matches!(rx.load_u64(off), Ok(x) if x == v),
        PEER_TIMEOUT,
        what,
    )
}

/// One side of the raw write's ping-pong over `rx` / `tx`: `write_u64` of the
/// sequence at offset 0, busy-polling loads until the peer's answer lands.
pub fn raw_pingpong(
    rx: &RxMapping,
    tx: &TxMapping,
    a: &WorkerArgs,
    clock: &super::timer::Clock,
    ping: bool,
) -> Result<super::worker::WorkerOutput> {
    let mut ep = super::pingpong::Fns(
        |seq| tx.write_u64(0, seq).context("write_u64"),
        |seq| spin_for(rx, 0, seq, "the memchan peer"),
    );
    super::worker::ping_or_pong(&mut ep, a, clock, ping)
}

/// Joins `--cluster` through the hub on the third host (`--hub`), or, without it,
/// through the hub side A hosts (`ping`) or connects to (side B); the `--hosts` raw
/// figures' join (`hosts/memchan_net.rs`), the message-passing twins' (`mp.rs`) and
/// the flood's.
pub fn join_cluster(a: &WorkerArgs, ping: bool) -> Result<Cluster> {
    let name = a.cluster.as_deref().context("--cluster is required")?;
    let (hub, hosting) = match &a.hosts.hub {
        Some(h) => (h.clone(), false),
        None => {
            let port = a.port.context("--port or --hub is required")?;
            (format!("{}:{port}", a.hosts.addr(0)?), ping)
        }
    };
    let deadline = Instant::now() + JOIN_RETRY;
    let c = loop {
        let cfg = NodeConfig::default().with_hub(if hosting {
            Hub::Host(hub.clone())
        } else {
            Hub::connect(hub.as_str())
        });
        // Its namespace is its host: the two sides share this machine's /dev/shm,
        // and would otherwise store into each other's memory past the veth.
        let cfg = match a.hosts.netns.get(usize::from(!ping)) {
            Some(ns) => cfg.with_host_domain(ns.as_str()),
            None => cfg.without_host_domain(),
        };
        // Set either way: an open measurement stays open under MEMCHAN_KEY_FILE.
        let cfg = match &a.hosts.key_file {
            Some(path) => cfg.with_key_file(path),
            None => cfg.without_key_file(),
        };
        match Cluster::join_with(name, cfg) {
            Ok(c) => break c,
            // a hub in side A's process may not listen yet
            Err(_) if !hosting && Instant::now() < deadline => {
                std::thread::sleep(Duration::from_millis(5))
            }
            Err(e) => return Err(e).with_context(|| format!("joining cluster {name} (hub {hub})")),
        }
    };
    ensure!(
        c.transport() == TransportKind::Hub,
        "joined cluster {name} over shared memory, not through the hub"
    );
    Ok(c)
}

/// Leaves cleanly: side B makes sure its last writes have arrived (ack) before it
/// leaves; side A, which may host the hub, stays until side B has left (at most a second).
pub fn leave(c: &Cluster, ping: bool) {
    if ping {
        let deadline = Instant::now() + Duration::from_secs(1);
        while c.members().len() > 1 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(1));
        }
    } else {
        // Side A may already be gone with the hub once it has the last answer: an
        // error here changes nothing.
        let _ = c.ack();
    }
}
