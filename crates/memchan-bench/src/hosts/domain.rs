//! `memchan bench --hosts`: the 8-byte one-way latency between two nodes of one host
//! inside a multi-host cluster (`memchan_domain`), beside the one-host raw write in
//! the same round (`memchan_shm`, the local bench's `memchan` ping-pong).
//!
//! The cluster has three nodes, joined through the hub on host H: the ping and pong
//! sides in namespace A, one host domain (`MEMCHAN_DOMAIN` = A's name), and a third
//! node in namespace B that does nothing else. Ping and pong find each
//! other through a broadcast of their ids, then ping-pong a word point to point with
//! busy-polling loads, as the raw write does on one host: a write between them is a
//! store into the other's receive memory, so the coordinator checks that the
//! ping-pong's bytes did *not* cross the veth.

use anyhow::{ensure, Context, Result};
use memchan::{Cluster, Config as NodeConfig, Dest, HubSpec, NodeId, RxAttrs, TxAttrs};

use super::super::model::SampleSet;
use super::super::refs::PEER_TIMEOUT;
use super::super::session::raw_pingpong;
use super::super::stats;
use super::super::table::{round_ratios, Cmp, Table, Target};
use super::super::timer::Clock;
use super::super::worker::{self, take, Kind, Launcher, Role, WorkerArgs, WorkerOutput};
use super::hub::HubProc;
use super::model::Params;
use super::netns::{self, Namespaces};

/// The figure's key in the report and the JSON.
pub const FIG: &str = "net_domain_latency_8b_one_way_ns";
/// The two series: a same-host pair inside a multi-host cluster, and one host's raw
/// write.
pub const SERIES: [&str; 2] = ["memchan_shm", "memchan_domain"];
/// Words of the id exchange: ping's id + 1, pong's id + 1.
const HELLO_PING: usize = 0;
const HELLO_PONG: usize = 8;

/// Worker side: the ping or pong node in namespace A, or (`Role::Solo`) the node in
/// B.
pub fn worker(a: &WorkerArgs, clock: &Clock) -> Result<WorkerOutput> {
    let home = usize::from(a.role == Role::Solo);
    let ns = a
        .hosts
        .netns
        .get(home)
        .context("--netns needs the two hosts' namespaces")?;
    netns::enter(ns)?;
    let name = a.cluster.as_deref().context("--cluster is required")?;
    let hub = a.hosts.hub.as_deref().context("--hub is required")?;
    let cfg = NodeConfig::default()
        .with_hub(HubSpec::connect(hub))
        .with_host_domain(ns.as_str())
        .without_key_file();
    let c = Cluster::join_with(name, cfg).with_context(|| format!("joining {name} (hub {hub})"))?;
    c.wait_for_members(3, PEER_TIMEOUT)
        .context("waiting for the three nodes")?;
    let hello = c.segment("hello", 4096, 0o600).context("segment hello")?;
    let hello_rx = hello.map_rx().context("map_rx hello")?;
    let pp = c.segment("pp", 4096, 0o600).context("segment pp")?;
    c.barrier().context("barrier before the ids")?;
    let out = if a.role == Role::Solo {
        WorkerOutput::default()
    } else {
        let ping = a.role == Role::Ping;
        let (mine, theirs) = if ping {
            (HELLO_PING, HELLO_PONG)
        } else {
            (HELLO_PONG, HELLO_PING)
        };
        let all = hello
            .map_tx(Dest::Broadcast, TxAttrs::default())
            .context("map_tx hello")?;
        all.write_u64(mine, u64::from(c.node_id().0) + 1)?;
        super::super::timer::spin_until(
            || matches!(hello_rx.load_u64(theirs), Ok(v) if v != 0),
            PEER_TIMEOUT,
            "the other node's id",
        )?;
        let peer = NodeId((hello_rx.load_u64(theirs)? - 1) as u16);
        let rx = pp.map_rx_with(RxAttrs::default()).context("map_rx pp")?;
        let tx = pp
            .map_tx(Dest::Node(peer), TxAttrs::default())
            .context("map_tx pp")?;
        // Both rx mappings exist before the first timed write.
        super::memchan_net::handshake(&rx, &tx, 64)?;
        raw_pingpong(&rx, &tx, a, clock, ping)?
    };
    c.barrier().context("closing barrier")?;
    Ok(out)
}

/// One round: the pair inside the multi-host cluster and the one-host raw write,
/// `domain_first` deciding which goes first; samples added to `set`.
pub fn measure(
    l: &mut Launcher,
    ns: &Namespaces,
    p: &Params,
    port: u16,
    domain_first: bool,
    set: &mut SampleSet,
) -> Result<()> {
    let pingpong = |cluster: &str| -> Vec<String> {
        vec![
            "--iters".into(),
            p.iters.to_string(),
            "--warmup".into(),
            p.warmup.to_string(),
            "--cluster".into(),
            cluster.into(),
        ]
    };
    for domain in [domain_first, !domain_first] {
        if !domain {
            let extra = pingpong(&l.unique("memchan-bench-domain"));
            let out = worker::group(l, Kind::MemchanLatency, 2, p.cpus, &extra)?;
            set.add(FIG, "memchan_shm", take(out, "one_way")?);
            continue;
        }
        let cluster = l.unique("memchan-bench-domain");
        let mut extra = pingpong(&cluster);
        let hub = HubProc::start(l, ns, port, &cluster, None, p.cpus.1)?;
        extra.extend([
            "--hub".into(),
            hub.addr.clone(),
            "--netns".into(),
            format!("{},{}", ns.a, ns.b),
            "--addrs".into(),
            format!("{},{}", netns::ADDR_A, netns::ADDR_B),
            "--nodes".into(),
            "3".into(),
        ]);
        let before = ns.veth_bytes()?;
        let (ca, cb) = p.cpus;
        let solo = l.spawn(Kind::HostDomain, Role::Solo, cb, &extra)?;
        let pong = l.spawn(Kind::HostDomain, Role::Pong, cb, &extra)?;
        let ping = l.spawn(Kind::HostDomain, Role::Ping, ca, &extra)?;
        let out = ping.finish();
        let (pong, solo) = (pong.finish(), solo.finish());
        drop(hub);
        let out = out?;
        pong?;
        solo?;
        let crossed = ns.veth_bytes()?.saturating_sub(before);
        let payload = (p.iters + p.warmup) * 2 * 8;
        ensure!(
            crossed < payload,
            "{crossed} bytes crossed the veth, as many as the ping-pong's {payload}: the pair's \
             writes went through the hub, not its host's memory"
        );
        set.add(FIG, "memchan_domain", take(out, "one_way")?);
    }
    Ok(())
}

/// The figure's table: `memchan_domain <= 1.25 x memchan_shm`.
pub fn table(set: &SampleSet, p: &Params) -> Table {
    let (ca, cb) = p.cpus;
    let rows = SERIES.map(|s| {
        let v = set
            .get(FIG, s)
            .and_then(stats::summarize)
            .map(|m| (m.median, m.p99, m.n))
            .ok_or_else(|| "failed (see the notes)".to_string());
        (s, v)
    });
    let mut t = Table::new(
        FIG,
        format!(
            "8-byte one-way latency between two nodes of one host inside a cluster of two \
             hosts (the hub on a third), busy-polling (cpu {ca} <-> cpu {cb}, round trip / 2)"
        ),
        "ns",
        Some("memchan_shm"),
        [Target {
            subject: "memchan_domain",
            cmp: Cmp::AtMost,
            factor: 1.25,
        }],
        rows,
    );
    t.notes.push(
        "memchan_shm: the raw write on one host (the local bench's ping-pong); \
         memchan_domain: the same ping-pong between two nodes of namespace A's host domain, \
         a third node in B, the hub in H"
            .into(),
    );
    t.round_ratios = round_ratios(set, FIG, &t);
    t
}
