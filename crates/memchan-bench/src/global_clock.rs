//! `clock_bound_ns`: the accuracy bound of the cluster's global clock
//! (`Cluster::global_time`, docs/spec.md, Semantics 10) as each transport measures it at run
//! time. Not the bench's own timer (that is `timer.rs`).
//!
//! - `shm`: a node of a one-host cluster; its bound is the measured cross-core warp
//!   of the host's clock plus a read's cost, the same for every reading of a process.
//! - `hub`: a node joined through a hub over TCP (loopback on one host; with
//!   `--hosts`, a hub in namespace A and the node in namespace B, across the veth).
//!   Once its clock is synchronised and its estimator holds a full window of time
//!   packets (the steady state, about 3 s), [`SAMPLES`] readings spread over the
//!   hub's time packets (one every [`SPACING`]); each bound is half the offset
//!   interval the fastest packets each way leave, plus drift and a read's cost. The
//!   note gives the first bound, right after synchronisation, too.
//!
//! There is no reference or target: seed 000 gives the formula (twice the range of
//! network latency plus handler time), not a figure to compare with.

use std::time::{Duration, Instant};

use anyhow::{bail, Context, Result};
use memchan_core::transport::Transport;
use memchan_core::{Config as NodeConfig, Error, HubSpec};
use memchan_hub::{Hub, HubConfig};
use serde_json::{json, Map, Value};

use super::model::SampleSet;
use super::stats;
use super::table::Table;

/// The figure id in the sample set and the table's (and JSON's) key.
pub const FIG: &str = "clock_bound";
pub const KEY: &str = "clock_bound_ns";
/// Readings per transport, and the time between two (so they span several of the
/// hub's time packets, one per 50 ms).
pub const SAMPLES: usize = 100;
pub const SPACING: Duration = Duration::from_millis(4);
/// The longest wait for a node's clock to synchronise (a few time packets).
const SYNC_DEADLINE: Duration = Duration::from_secs(20);

/// Both one-host transports: adds their samples to `set`, returns notes on what each
/// bound is made of.
pub fn measure_one_host(set: &mut SampleSet) -> Result<Vec<String>> {
    let mut notes = Vec::new();
    let name = format!("bench-clock-{}", std::process::id());
    let shm = <memchan_shm::Node as Transport>::join(&name, &NodeConfig::default())
        .context("joining (shm)")?;
    let mut v = Vec::with_capacity(SAMPLES);
    for _ in 0..SAMPLES {
        v.push(shm.global_time().context("global_time (shm)")?.bound_ns as f64);
    }
    let cal = memchan_shm::clock_calibration().context("clock calibration (shm)")?;
    notes.push(format!(
        "clock_bound_ns shm: the host's monotonic clock (invariant TSC); bound = cross-core warp \
         {} ns (measured over {} CPU pair(s)) + read cost {} ns",
        cal.cross_core_ns, cal.cpus, cal.read_cost_ns
    ));
    set.add(FIG, "shm", v);
    drop(shm);

    let hub = Hub::start(HubConfig::default()).context("starting a hub on loopback")?;
    let addr = hub.local_addr().to_string();
    let (v, note) = sample_hub(&name, &addr, "hub (loopback)")?;
    notes.push(note);
    set.add(FIG, "hub", v);
    Ok(notes)
}

/// The hub transport across the `--hosts` veth: a hub in namespace `ns_a` listening
/// on `addr_a:port`, a node in `ns_b`; both run in threads of this process, each in
/// its namespace. Adds the `hub` series to `set`; returns a note.
pub fn measure_hosts(
    set: &mut SampleSet,
    ns_a: &str,
    ns_b: &str,
    addr_a: &str,
    port: u16,
) -> Result<String> {
    let listen = format!("{addr_a}:{port}");
    let (ns_a, ns_b) = (ns_a.to_string(), ns_b.to_string());
    let l = listen.clone();
    // The hub's threads inherit the namespace of the thread that starts it.
    let hub = std::thread::spawn(move || -> Result<Hub> {
        super::hosts::netns::enter(&ns_a)?;
        Hub::start(HubConfig {
            listen: l.clone(),
            ..HubConfig::default()
        })
        .with_context(|| format!("starting a hub on {l}"))
    })
    .join()
    .map_err(|_| anyhow::anyhow!("the hub thread panicked"))??;
    let name = format!("bench-hclock-{}", std::process::id());
    let r = std::thread::spawn(move || -> Result<(Vec<f64>, String)> {
        super::hosts::netns::enter(&ns_b)?;
        sample_hub(&name, &listen, "hub (across the veth)")
    })
    .join()
    .map_err(|_| anyhow::anyhow!("the node thread panicked"))?;
    drop(hub);
    let (v, note) = r?;
    set.add(FIG, "hub", v);
    Ok(note)
}

/// Joins `name` through the hub at `addr`, waits for its clock, samples its bound.
fn sample_hub(name: &str, addr: &str, what: &str) -> Result<(Vec<f64>, String)> {
    let cfg = NodeConfig::default().with_hub(HubSpec::connect(addr.to_string()));
    let node = <memchan_net::node::Node as Transport>::join(name, &cfg)
        .with_context(|| format!("joining through the hub at {addr}"))?;
    let start = Instant::now();
    loop {
        match node.global_time() {
            Ok(_) => break,
            Err(Error::ClockNotSynchronised { .. }) if start.elapsed() < SYNC_DEADLINE => {
                std::thread::sleep(Duration::from_millis(5))
            }
            Err(e) => bail!("global_time through {what}: {e}"),
        }
    }
    let synced_ms = start.elapsed().as_secs_f64() * 1e3;
    let first = node.global_time().context("global_time (hub)")?.bound_ns;
    // The steady state: a full window of time packets.
    while node
        .clock_state()
        .is_some_and(|s| s.samples.0 < memchan_core::clock::WINDOW)
        && start.elapsed() < SYNC_DEADLINE
    {
        std::thread::sleep(Duration::from_millis(20));
    }
    let mut v = Vec::with_capacity(SAMPLES);
    for _ in 0..SAMPLES {
        v.push(node.global_time().context("global_time (hub)")?.bound_ns as f64);
        std::thread::sleep(SPACING);
    }
    let state = node.clock_state();
    node.leave();
    let note = match state {
        Some(s) => format!(
            "clock_bound_ns {what}: synchronised {synced_ms:.0} ms after the join (first bound \
             {first} ns); sampled with {} time packets and {} echoed probes held: offset \
             interval {} ns wide (fastest down + up latency, drift uncertainty included), \
             down-latency range {} ns, drift {:.2} ppm",
            s.samples.0, s.samples.1, s.width_ns, s.latency_range_ns, s.drift_ppm
        ),
        None => format!(
            "clock_bound_ns {what}: synchronised {synced_ms:.0} ms after the join (first bound \
             {first} ns)"
        ),
    };
    Ok((v, note))
}

/// The table of both series (whichever were measured).
pub fn table(set: &SampleSet) -> Option<Table> {
    let rows: Vec<_> = ["shm", "hub"]
        .into_iter()
        .filter_map(|s| {
            let m = stats::summarize(set.get(FIG, s)?)?;
            Some((s, Ok((m.median, m.p99, m.n))))
        })
        .collect();
    if rows.is_empty() {
        return None;
    }
    let mut t = Table::new(
        KEY,
        "global clock accuracy bound (Cluster::global_time, measured at run time)".into(),
        "ns",
        None,
        None,
        rows,
    );
    t.notes.push(
        "no reference: reported (seed 000: twice the latency range plus handler time)".into(),
    );
    Some(t)
}

/// `clock_bound_ns` and `clock_bound_ns_p99` for a JSON report's figures.
pub fn json_figures(t: &Table, figures: &mut Map<String, Value>) {
    let (mut med, mut p99) = (Map::new(), Map::new());
    for r in &t.rows {
        if let Ok((m, p, _)) = r.value {
            med.insert(r.name.into(), json!(m));
            p99.insert(r.name.into(), json!(p));
        }
    }
    figures.insert(KEY.into(), Value::Object(med));
    figures.insert(format!("{KEY}_p99"), Value::Object(p99));
}
