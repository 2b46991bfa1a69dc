//! The `--hosts` twins of the message-passing and IP levels (issue 13): the same
//! figures as one host, between the two hosts of nodes (the hub on the third).
//!
//! | key                            | series                                   | how                                                   |
//! |--------------------------------|------------------------------------------|-------------------------------------------------------|
//! | `net_mp_latency_8b_us`         | `memchan_postal`, `memchan_zero_copy`, `mpi_tcp`, `tcp_raw_spin`, `memchan_spin` | `mp.rs`'s ping-pong, the nodes joined through the hub on host H; the others: the latency samples of the same run (the raw socket and raw write are the floors, see the table's note) |
//! | `net_mp_bandwidth_1mib_gbps`   | the same                                 | `mp.rs`'s windows of 64 × 1 MiB; `mpi_tcp`: `mpi_bw` under the same mpirun across the namespaces |
//! | `net_ip_latency_8b_us`         | `memchan_ip`, `tcp_veth`                 | `ip.rs` with the `memchan ip` nodes joined through the hub on host H |
//! | `net_ip_bandwidth_gbps`        | the same                                 | the same                                              |
//!
//! The message-passing measurements run after the rounds of the other host figures,
//! in as many rounds of their own (the order reversed every other round); the IP pair
//! runs last. Each checks, as the others do, that its payload crossed the veth. The
//! targets are the one-host ones (message passing at most 0.5 × MPI's latency and at
//! least its bandwidth in full postal mode; IP at most 1.5 × TCP's latency and at
//! least 0.7 × its bandwidth), against the peers over the same veth.

use anyhow::{bail, Result};
use indicatif::ProgressBar;
use serde_json::{json, Value};

use super::super::ip::{self, IpFigures};
use super::super::model::{Config, SampleSet};
use super::super::refs::WINDOW;
use super::super::stats;
use super::super::table::{self, Cmp, Table, Target};
use super::super::timer::Clock;
use super::super::worker::{self, take, Kind, Launcher};
use super::model::{HostInfo, Params, FIG_LATENCY, MIB};
use super::mpi::Mpi;
use super::netns::{self, Namespaces};

/// Figure ids of the samples: one-way ns, and ns per window of 64 × 1 MiB.
const FIG_MP_LATENCY: &str = "net_mp_latency";
const FIG_MP_BANDWIDTH: &str = "net_mp_bandwidth";
pub const KEY_MP_LATENCY: &str = "net_mp_latency_8b_us";
pub const KEY_MP_BANDWIDTH: &str = "net_mp_bandwidth_1mib_gbps";
const MODES: [&str; 2] = ["memchan_postal", "memchan_zero_copy"];
/// Bytes of one window of the bandwidth figures.
const WINDOW_BYTES: f64 = (WINDOW * MIB) as f64;

/// One measurement of a message-passing round.
#[derive(Debug, Clone, Copy)]
enum Item {
    Memchan(Kind),
    MpiBw,
}

const ITEMS: [Item; 5] = [
    Item::Memchan(Kind::MpLatencyPostal),
    Item::Memchan(Kind::MpLatencyZeroCopy),
    Item::Memchan(Kind::MpBandwidthPostal),
    Item::Memchan(Kind::MpBandwidthZeroCopy),
    Item::MpiBw,
];

/// Measurements per round (for the progress bar).
pub fn mp_items(mpi: bool) -> usize {
    ITEMS.len() - usize::from(!mpi)
}

fn is_bw(k: Kind) -> bool {
    matches!(k, Kind::MpBandwidthPostal | Kind::MpBandwidthZeroCopy)
}

fn mode(k: Kind) -> &'static str {
    match k {
        Kind::MpLatencyPostal | Kind::MpBandwidthPostal => MODES[0],
        _ => MODES[1],
    }
}

/// Runs one round of the message-passing twins, adding samples to `set`; failures
/// become notes (memchan's also `failures`, so the run ends in an error).
#[allow(clippy::too_many_arguments)]
pub fn mp_round(
    round: usize,
    l: &mut Launcher,
    ns: &Namespaces,
    p: &Params,
    mpi: Option<&Mpi>,
    clock: &Clock,
    port: &mut u16,
    set: &mut SampleSet,
    info: &mut HostInfo,
    failures: &mut Vec<String>,
    pb: &ProgressBar,
) {
    set.round = round;
    let mut order: Vec<Item> = ITEMS
        .into_iter()
        .filter(|i| mpi.is_some() || !matches!(i, Item::MpiBw))
        .collect();
    if round % 2 == 1 {
        order.reverse();
    }
    for item in order {
        let what = match item {
            Item::Memchan(k) => format!("message passing {k:?}"),
            Item::MpiBw => "mpi_tcp bandwidth".into(),
        };
        pb.set_message(format!("round {}/{}: {what}", round + 1, p.rounds));
        *port = port.wrapping_add(1).max(20_000);
        let r = match (item, mpi) {
            (Item::Memchan(k), _) => memchan_mp(k, l, ns, p, *port, set, info),
            (Item::MpiBw, Some(m)) => mpi_bw(m, ns, p, clock, set, info),
            (Item::MpiBw, None) => Ok(()),
        };
        if let Err(e) = r {
            let note = format!("{what} failed in round {}: {e:#}", round + 1);
            pb.println(&note);
            match item {
                Item::Memchan(_) => failures.push(note),
                Item::MpiBw => info.notes.push(note),
            }
        }
        pb.inc(1);
    }
}

/// Fails unless at least `need` bytes crossed the veth since `before`; returns them.
fn crossed(ns: &Namespaces, before: u64, need: u64) -> Result<u64> {
    let n = ns.veth_bytes()?.saturating_sub(before);
    if n < need {
        bail!(
            "only {n} bytes crossed the veth, less than the payload ({need} bytes): \
             the traffic took another path, samples discarded"
        );
    }
    Ok(n)
}

fn memchan_mp(
    kind: Kind,
    l: &mut Launcher,
    ns: &Namespaces,
    p: &Params,
    port: u16,
    set: &mut SampleSet,
    info: &mut HostInfo,
) -> Result<()> {
    let (iters, warmup) = if is_bw(kind) {
        (p.bw_windows, p.bw_warmup)
    } else {
        (p.iters, p.warmup)
    };
    let cluster = l.unique("memchan-bench-hosts-mp");
    let hub = super::hub::HubProc::start(l, ns, port, &cluster, None, p.cpus.0)?;
    let extra: Vec<String> = vec![
        "--hub".into(),
        hub.addr.clone(),
        "--iters".into(),
        iters.to_string(),
        "--warmup".into(),
        warmup.to_string(),
        "--port".into(),
        port.to_string(),
        "--netns".into(),
        format!("{},{}", ns.a, ns.b),
        "--addrs".into(),
        format!("{},{}", netns::ADDR_A, netns::ADDR_B),
        "--cluster".into(),
        cluster,
    ];
    let before = ns.veth_bytes()?;
    let out = worker::pair(l, kind, p.cpus, &extra)?;
    drop(hub);
    let need = if is_bw(kind) {
        (iters + warmup) * (WINDOW * MIB) as u64
    } else {
        (iters + warmup) * 2 * 8
    };
    let n = crossed(ns, before, need)?;
    let (figure, key) = if is_bw(kind) {
        (FIG_MP_BANDWIDTH, format!("mp_{}_bandwidth", mode(kind)))
    } else {
        (FIG_MP_LATENCY, format!("mp_{}", mode(kind)))
    };
    info.veth_bytes.entry(key).or_default().push(n);
    set.add(figure, mode(kind), take(out, "samples")?);
    Ok(())
}

fn mpi_bw(
    m: &Mpi,
    ns: &Namespaces,
    p: &Params,
    clock: &Clock,
    set: &mut SampleSet,
    info: &mut HostInfo,
) -> Result<()> {
    let before = ns.veth_bytes()?;
    let gbps = m.run_bw(ns, p.cpus, p.bw_windows, p.bw_warmup, clock)?;
    let need = (p.bw_windows + p.bw_warmup) * (WINDOW * MIB) as u64;
    let n = crossed(ns, before, need)?;
    info.veth_bytes
        .entry("mpi_tcp_bandwidth".into())
        .or_default()
        .push(n);
    // As ns per window, like memchan's samples (bytes / (bytes per ns)).
    let ns_per_window = gbps.iter().map(|g| WINDOW_BYTES / g).collect();
    set.add(FIG_MP_BANDWIDTH, "mpi_tcp", ns_per_window);
    Ok(())
}

/// The two message-passing tables.
pub fn mp_tables(set: &SampleSet, info: &HostInfo) -> Vec<Table> {
    let why = |s: &str| {
        if s == "mpi_tcp" {
            info.mpi.clone().err()
        } else {
            None
        }
        .unwrap_or_else(|| "not measured (see the notes)".into())
    };
    let us = |figure: &str, s: &'static str| {
        let v = set
            .get(figure, s)
            .and_then(stats::summarize)
            .map(|m| (m.median / 1e3, m.p99 / 1e3, m.n));
        (s, v.ok_or_else(|| why(s)))
    };
    let gbps = |s: &'static str| {
        let v = set
            .get(FIG_MP_BANDWIDTH, s)
            .and_then(stats::summarize)
            .map(|m| (WINDOW_BYTES / m.median, WINDOW_BYTES / m.p99, m.n));
        (s, v.ok_or_else(|| why(s)))
    };
    let mut lat = Table::new(
        KEY_MP_LATENCY,
        "message passing across the veth, 8-byte one-way latency (blocking send / recv \
         ping-pong through the hub on host H, round trip / 2)"
            .into(),
        "us",
        Some("mpi_tcp"),
        MODES.map(|subject| Target {
            subject,
            cmp: Cmp::AtMost,
            factor: 0.5,
        }),
        [
            us(FIG_MP_LATENCY, MODES[0]),
            us(FIG_MP_LATENCY, MODES[1]),
            us(FIG_LATENCY, "mpi_tcp"),
            us(FIG_LATENCY, "tcp_raw_spin"),
            us(FIG_LATENCY, "memchan_spin"),
        ],
    );
    lat.notes.push(
        "memchan_postal: send (buffered); memchan_zero_copy: ssend; mpi_tcp: Open MPI ob1 + \
         TCP BTL across the veth (busy-polling), tcp_raw_spin and memchan_spin: a raw TCP \
         socket and a raw memchan write through the hub, busy-polling (the samples of the \
         net_latency_8b_one_way_us rows)"
            .into(),
    );
    let floor =
        table::ratio_of_rounds(set, (FIG_LATENCY, "tcp_raw_spin"), (FIG_LATENCY, "mpi_tcp"));
    lat.notes.extend(floor.map(|r| {
        table::floor_note(
            "tcp_raw_spin",
            "a raw TCP ping-pong across the same veth (the floor of anything riding TCP, \
             as the hub does)",
            r,
            "mpi_tcp",
            0.5,
        )
    }));
    let mut bw = Table::new(
        KEY_MP_BANDWIDTH,
        "message passing across the veth, 1 MiB bandwidth (windows of 64 non-blocking sends \
         + 4-byte answer)"
            .into(),
        "GB/s",
        Some("mpi_tcp"),
        [Target {
            subject: MODES[0],
            cmp: Cmp::AtLeast,
            factor: 1.0,
        }],
        [gbps(MODES[0]), gbps(MODES[1]), gbps("mpi_tcp")],
    );
    // Each round's ratio from that round's medians (`mpi_bw` runs in the same round
    // as the pair): this VM's state moves both sides together within a round. The
    // latency table has none: its `mpi_tcp` is measured in the raw level's rounds.
    bw.round_ratios = table::round_ratios(set, FIG_MP_BANDWIDTH, &bw);
    bw.notes.push(
        "memchan_postal: isend; memchan_zero_copy: issend into an rx-mapped receive buffer; \
         mpi_tcp: the mpi_bw peer under mpirun across the namespaces (TCP BTL)"
            .into(),
    );
    vec![lat, bw]
}

/// The IP twins: `memchan ip` through a `memchan hub` on host H (listening on port
/// `port` of its address) against TCP over the veth. `Err`: why not measured.
pub fn ip_twins(
    l: &mut Launcher,
    ns: &Namespaces,
    cfg: &Config,
    clock: &Clock,
    port: u16,
    pb: &ProgressBar,
) -> std::result::Result<IpFigures, String> {
    if let Some(why) = ip::unavailable() {
        return Err(format!("skipped: {why}"));
    }
    let mut run = || -> Result<IpFigures> {
        let cluster = l.unique("memchan-bench-hosts-ip");
        let hub = super::hub::HubProc::start(l, ns, port, &cluster, None, cfg.cpus.0)?;
        let before = ns.veth_bytes()?;
        let f = ip::measure_hosts(ns, &cluster, &hub.addr, cfg, clock, &|m| {
            pb.set_message(m.to_string())
        })?;
        // At least the bandwidth streams' bytes crossed (each side's node reaches the
        // other only through the hub).
        crossed(ns, before, f.bandwidth_bytes())?;
        Ok(f)
    };
    run().map_err(|e| format!("memchan ip through a hub failed: {e:#}"))
}

/// What `memchan_ip <= 1.5x tcp_veth` leaves across hosts: memchan's link is itself
/// TCP over the veth, so a packet of `memchan ip` crosses a TCP/IP stack twice (the
/// program's, over the TUN, then the link's), and the raw write (`memchan`, blocking,
/// as `memchan ip`'s threads wait) takes most of the budget.
pub fn ip_floor_note(set: &SampleSet, f: &IpFigures) -> Option<String> {
    let raw = set
        .get(FIG_LATENCY, "memchan")
        .and_then(stats::summarize)?
        .median
        / 1e3;
    let veth = f.tcp_veth_latency_us()?;
    if !(raw > 0.0 && veth > 0.0) {
        return None;
    }
    let left = ip::LATENCY_TARGET * veth - raw;
    let leaves = if left > 0.0 {
        format!("leaves the program's own stack, the TUN and memchan ip's threads {left:.1} us")
    } else {
        format!("is below the raw write alone by {:.1} us", -left)
    };
    Some(format!(
        "   memchan: a raw write between the hosts (blocking) is {raw:.1} us = {:.2}x tcp_veth \
         in this run; memchan's link is TCP over this veth, so a memchan_ip packet crosses \
         a TCP/IP stack twice, and <= {}x tcp_veth {leaves}\n",
        raw / veth,
        ip::LATENCY_TARGET,
    ))
}

/// Adds the IP twins (or why they are missing) to the `--hosts` JSON.
pub fn ip_json(j: &mut Value, f: &std::result::Result<IpFigures, String>) {
    match f {
        Ok(f) => f.merge_json(j),
        Err(why) => {
            if let Some(m) = j.as_object_mut() {
                m.insert("net_ip".into(), json!({ "skipped": why }));
            }
        }
    }
}

/// Units of the message-passing twins in the `--hosts` JSON.
pub fn mp_units(j: &mut Value) {
    if let Some(u) = j["units"].as_object_mut() {
        u.insert(KEY_MP_LATENCY.into(), json!("us"));
        u.insert(KEY_MP_BANDWIDTH.into(), json!("GB/s"));
    }
}

#[cfg(test)]
mod tests {
    use super::super::model::HostInfo;
    use super::*;

    #[test]
    fn the_bandwidth_target_is_judged_round_by_round_too() {
        let mut set = SampleSet::default();
        // Round 0 fast, round 1 slow (the VM's states): memchan 2x then 0.5x mpi_tcp.
        for (round, (memchan, mpi)) in [(10e6, 20e6), (80e6, 40e6)].into_iter().enumerate() {
            set.round = round;
            set.add(FIG_MP_BANDWIDTH, MODES[0], vec![memchan; 3]);
            set.add(FIG_MP_BANDWIDTH, "mpi_tcp", vec![mpi; 3]);
        }
        let info = HostInfo {
            memchan: Ok(()),
            ..HostInfo::for_tests()
        };
        let tables = mp_tables(&set, &info);
        let bw = tables.iter().find(|t| t.key == KEY_MP_BANDWIDTH).unwrap();
        // Bandwidth: the reference's time per window over the subject's.
        assert_eq!(bw.round_ratios, vec![vec![2.0, 0.5]]);
        let lat = tables.iter().find(|t| t.key == KEY_MP_LATENCY).unwrap();
        assert!(lat.round_ratios.iter().all(Vec::is_empty));
    }
}
