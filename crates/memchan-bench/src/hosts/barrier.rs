//! `memchan bench --hosts`: the barrier over four hosts of 16 nodes each
//! (`net_barrier_us`), memchan beside Open MPI's `MPI_Barrier` on the same placement.
//!
//! memchan: [`NODES`] nodes, round robin on the hosts A, B, C, D, each in its host's
//! domain, joined through the hub on host H; after a first barrier every node runs
//! the timed ones, and node 0 (in A) records the time from one barrier's return to
//! the next's. `mpi_tcp`: `peers/mpi_barrier.c` under one mpirun, one app context of
//! 16 ranks per host, rank 0 timing the same way (`mpi.rs`). The two alternate which
//! goes first every round. Both are 64 processes on this machine's 2 cores; Open MPI
//! runs oversubscribed with `mpi_yield_when_idle`, as `peers.rs` does for every
//! many-rank peer.
//!
//! No target: docs/spec.md asks for the comparison. Open MPI's same-host ranks talk
//! TCP too (its shared-memory transport would reach across the namespaces, which
//! share this machine's `/dev/shm` and host name), while memchan's share their host's
//! memory; the table says so.

use anyhow::{ensure, Context, Result};

use super::super::model::SampleSet;
use super::super::refs::PEER_TIMEOUT;
use super::super::session::{join_cluster, leave};
use super::super::stats;
use super::super::table::{round_ratios, Table};
use super::super::timer::{ticks, Clock};
use super::super::worker::{take, Kind, Launcher, WorkerArgs, WorkerOutput};
use super::flood;
use super::hub::HubProc;
use super::model::Params;
use super::mpi::Mpi;
use super::netns::{Namespaces, HOSTS};

/// The figure's key in the report and the JSON.
pub const KEY: &str = "net_barrier_us";
/// Samples: ns per barrier at node 0 / rank 0.
const FIG: &str = "net_barrier";
const SERIES: [&str; 2] = ["memchan", "mpi_tcp"];
/// Nodes of a full run (16 per host) and of a `--quick` one (2 per host).
pub const NODES: usize = 16 * HOSTS;
const QUICK_NODES: usize = 2 * HOSTS;

/// Nodes, timed barriers and warm-up barriers of this run.
pub fn size(p: &Params) -> (usize, u64, u64) {
    if p.quick {
        (QUICK_NODES, 20, 5)
    } else {
        (NODES, 200, 20)
    }
}

/// Worker side (already in its namespace): one node; node 0's samples.
pub fn worker(a: &WorkerArgs, clock: &Clock, ping: bool) -> Result<WorkerOutput> {
    let c = join_cluster(a, ping)?;
    c.wait_for_members(a.nodes, PEER_TIMEOUT)
        .context("waiting for every node of the barrier")?;
    c.barrier().context("the first barrier")?;
    let mut v = Vec::with_capacity(a.iters as usize);
    // one counter read per barrier: the end of one is the start of the next
    let mut prev = ticks();
    for i in 0..a.warmup + a.iters {
        c.barrier().context("barrier")?;
        let now = ticks();
        if i >= a.warmup {
            v.push(clock.ns(now.wrapping_sub(prev)));
        }
        prev = now;
    }
    leave(&c, ping);
    Ok(if ping {
        WorkerOutput::one("barrier_ns", v)
    } else {
        WorkerOutput::default()
    })
}

/// memchan's barrier, one measurement; samples added to `set`.
pub fn measure_memchan(
    l: &mut Launcher,
    ns: &Namespaces,
    p: &Params,
    port: u16,
    set: &mut SampleSet,
) -> Result<()> {
    let (nodes, iters, warmup) = size(p);
    let cluster = l.unique("memchan-bench-barrier");
    let hub = HubProc::start(l, ns, port, &cluster, None, p.cpus.0)?;
    let base: Vec<String> = vec![
        "--iters".into(),
        iters.to_string(),
        "--warmup".into(),
        warmup.to_string(),
        "--hub".into(),
        hub.addr.clone(),
        "--cluster".into(),
        cluster,
    ];
    let before = ns.veth_bytes()?;
    // Node 0 (the timing one) in A.
    let outs = flood::on_hosts(l, Kind::HostBarrier, nodes, p, ns, &base)?;
    drop(hub);
    let crossed = ns.veth_bytes()?.saturating_sub(before);
    ensure!(crossed > 0, "no byte crossed A's veth during the barriers");
    let out = outs.into_iter().next().context("no output of node 0")?;
    set.add(FIG, "memchan", take(out, "barrier_ns")?);
    Ok(())
}

/// Open MPI's `MPI_Barrier` on the same placement; samples added to `set`.
pub fn measure_mpi(
    m: &Mpi,
    ns: &Namespaces,
    p: &Params,
    clock: &Clock,
    set: &mut SampleSet,
) -> Result<()> {
    let (nodes, iters, warmup) = size(p);
    let hosts = ns.hosts();
    let before = ns.veth_bytes()?;
    let v = m.run_barrier(
        ns,
        &hosts,
        nodes / hosts.len(),
        p.cpus,
        iters,
        warmup,
        clock,
    )?;
    let crossed = ns.veth_bytes()?.saturating_sub(before);
    ensure!(
        crossed > 0,
        "no byte crossed A's veth during MPI_Barrier: the ranks did not talk over it"
    );
    set.add(FIG, "mpi_tcp", v);
    Ok(())
}

/// The figure's table (µs per barrier), for information beside `mpi_tcp`.
pub fn table(set: &SampleSet, p: &Params, mpi: &std::result::Result<(), String>) -> Table {
    let (nodes, iters, _) = size(p);
    let rows = SERIES.map(|s| {
        let v = match set.get(FIG, s).and_then(stats::summarize) {
            Some(m) => Ok((m.median / 1e3, m.p99 / 1e3, m.n)),
            None if s == "mpi_tcp" => Err(mpi
                .clone()
                .err()
                .unwrap_or_else(|| "failed (see the notes)".into())),
            None => Err("failed (see the notes)".into()),
        };
        (s, v)
    });
    let mut t = Table::new(
        KEY,
        format!(
            "barrier of {nodes} nodes on {HOSTS} hosts ({} each, network namespaces), the hub \
             on another; {iters} barriers, the time from one's return to the next's at node 0",
            nodes / HOSTS
        ),
        "us",
        Some("mpi_tcp"),
        [],
        rows,
    );
    t.notes.push(
        "memchan: Cluster::barrier, every node in its host's domain, through the hub on H; \
         mpi_tcp: MPI_Barrier, Open MPI ob1 + TCP BTL between every pair of ranks, same-host \
         pairs included (its shared-memory BTL would reach across the namespaces), \
         oversubscribed with mpi_yield_when_idle; both on this machine's 2 cores; \
         information, no target"
            .into(),
    );
    t.round_ratios = round_ratios(set, FIG, &t);
    t
}

/// The JSON sizes of the figure.
pub fn json(p: &Params) -> serde_json::Value {
    let (nodes, iters, warmup) = size(p);
    serde_json::json!({
        "nodes": nodes,
        "hosts": HOSTS,
        "barriers": iters,
        "warmup_barriers": warmup,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_shows_both_in_microseconds_with_no_target() {
        let mut set = SampleSet::default();
        for round in 0..2 {
            set.round = round;
            set.add(FIG, "memchan", vec![1.5e6; 4]);
            set.add(FIG, "mpi_tcp", vec![3e6; 4]);
        }
        let t = table(&set, &Params::for_tests(false), &Ok(()));
        assert!(t.targets.is_empty());
        let row = |name: &str| t.rows.iter().find(|r| r.name == name).unwrap();
        let m = row("memchan").value.as_ref().unwrap();
        assert!((m.0 - 1500.0).abs() < 1e-9, "{m:?}");
        assert!((row("memchan").ratio.unwrap() - 0.5).abs() < 1e-9);
        assert!(
            t.title.contains("64 nodes on 4 hosts (16 each"),
            "{}",
            t.title
        );
    }

    #[test]
    fn without_open_mpi_its_row_says_why() {
        let mut set = SampleSet::default();
        set.add(FIG, "memchan", vec![2e5; 4]);
        let t = table(
            &set,
            &Params::for_tests(true),
            &Err("skipped (--no-peers)".into()),
        );
        let mpi = t.rows.iter().find(|r| r.name == "mpi_tcp").unwrap();
        assert_eq!(mpi.value, Err("skipped (--no-peers)".to_string()));
        assert!(
            t.title.contains("8 nodes on 4 hosts (2 each"),
            "{}",
            t.title
        );
    }
}
