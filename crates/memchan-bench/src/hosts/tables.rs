//! The tables and the JSON report of `memchan bench --hosts`.
//!
//! JSON (`--json FILE`), besides the machine and the notes:
//!
//! ```text
//! "figures": {
//!   "net_latency_8b_one_way_us": { "memchan", "memchan_keyed", "tcp_raw",
//!                                  "memchan_spin", "memchan_keyed_spin", "tcp_raw_spin", "mpi_tcp" },
//!   "net_bandwidth_1mib_gbps":   { "memchan", "memchan_keyed", "tcp_raw", "tcp_raw_64k" },
//!   ... the same with _p99 (bandwidth: the 99th-percentile-slowest window)
//! }
//! ```
//!
//! Medians pooled over rounds; every series is present, `null` when it was
//! not measured. `memchan*` is an open cluster, `memchan_keyed*` a keyed one
//! (every frame MACed); both have the same targets: ≤ 1.25 × tcp_raw in the
//! same receive mode; bandwidth ≥ 0.9 × tcp_raw. The cost of the MAC is shown
//! for information as `memchan_keyed / memchan` (JSON
//! `ratios.<figure>.memchan_keyed_vs_memchan`, `memchan_keyed_spin_vs_memchan_spin`).
//! `tcp_raw_64k` (the `tcp_raw` stream written in 64 KiB `write_all`s, the size
//! of memchan's frames) is shown for information, with `memchan / tcp_raw_64k`
//! (JSON `ratios.net_bandwidth_1mib_gbps.memchan_vs_tcp_raw_64k`); it has no target.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{json, Map, Value};

use super::super::global_clock;
use super::super::model::SampleSet;
use super::super::report::{machine_json, render_header, render_notes, status_json};
use super::super::stats::{self, Summary};
use super::super::table::{render_targets, round_ratios, Cmp, Table, Target};
use super::model::{HostInfo, Params, FIG_BANDWIDTH, FIG_LATENCY, MIB};

pub const KEY_LATENCY: &str = "net_latency_8b_one_way_us";
pub const KEY_BANDWIDTH: &str = "net_bandwidth_1mib_gbps";

/// The latency series, in JSON order.
pub const LATENCY_SERIES: [&str; 9] = [
    "memchan",
    "memchan_keyed",
    "tcp_raw",
    "memchan_hub_a",
    "memchan_spin",
    "memchan_keyed_spin",
    "tcp_raw_spin",
    "memchan_hub_a_spin",
    "mpi_tcp",
];
/// The latency target of memchan between hosts, hub on a third host (docs/spec.md).
pub const LATENCY_FACTOR: f64 = 1.15;
/// The bandwidth series, in JSON order.
pub const BANDWIDTH_SERIES: [&str; 4] = ["memchan", "memchan_keyed", "tcp_raw", "tcp_raw_64k"];

/// The MAC's cost in a figure, for information: keyed over open, when both exist.
fn keyed_vs_open(
    values: &BTreeMap<&'static str, (f64, f64, usize)>,
    keyed: &'static str,
    open: &'static str,
) -> (&'static str, &'static str, Option<f64>) {
    let x = match (values.get(keyed), values.get(open)) {
        (Some(k), Some(o)) => Some(k.0 / o.0),
        _ => None,
    };
    (keyed, open, x)
}

/// Everything `--hosts` prints and writes.
#[derive(Debug)]
pub struct HostReport {
    pub tables: Vec<Table>,
    /// series → (median, p99, n) in µs / GB/s.
    pub latency: BTreeMap<&'static str, (f64, f64, usize)>,
    pub bandwidth: BTreeMap<&'static str, (f64, f64, usize)>,
    pub machine: Value,
    pub hosts: Value,
    pub round_medians: Value,
    pub notes: Vec<String>,
}

/// Latency of a series in µs.
fn latency_us(set: &SampleSet, series: &str) -> Option<(f64, f64, usize)> {
    let s: Summary = stats::summarize(set.get(FIG_LATENCY, series)?)?;
    Some((s.median / 1e3, s.p99 / 1e3, s.n))
}

/// Bandwidth of a series in GB/s (p99: the slow tail).
fn bandwidth_gbps(set: &SampleSet, series: &str, window_bytes: f64) -> Option<(f64, f64, usize)> {
    let s = stats::summarize(set.get(FIG_BANDWIDTH, series)?)?;
    Some((window_bytes / s.median, window_bytes / s.p99, s.n))
}

impl HostReport {
    pub fn build(p: &Params, set: &SampleSet, info: &HostInfo) -> HostReport {
        let (ca, cb) = p.cpus;
        let window_bytes = (p.window_mib * MIB) as f64;
        let mut latency = BTreeMap::new();
        for s in LATENCY_SERIES {
            if let Some(v) = latency_us(set, s) {
                latency.insert(s, v);
            }
        }
        let mut bandwidth = BTreeMap::new();
        for s in BANDWIDTH_SERIES {
            if let Some(v) = bandwidth_gbps(set, s, window_bytes) {
                bandwidth.insert(s, v);
            }
        }
        // Every series gets a row: its values, or why it is missing.
        let why = |s: &str| -> String {
            let status = if s == "mpi_tcp" {
                &info.mpi
            } else if s.starts_with("memchan") {
                &info.memchan
            } else {
                &Ok(())
            };
            status
                .clone()
                .err()
                .unwrap_or_else(|| "failed (see the notes)".into())
        };
        let rows = |order: &[&'static str], values: &BTreeMap<&'static str, (f64, f64, usize)>| {
            let row = |&s: &&'static str| (s, values.get(s).copied().ok_or_else(|| why(s)));
            order.iter().map(row).collect::<Vec<_>>()
        };

        let mut tables = Vec::new();
        let mut t = Table::new(
            KEY_LATENCY,
            format!(
                "8-byte one-way latency between two hosts (network namespaces on one bridge), \
                 the hub on a third, blocking receive (cpu {ca} <-> cpu {cb}, round trip / 2)"
            ),
            "us",
            Some("tcp_raw"),
            ["memchan", "memchan_keyed"].map(|subject| Target {
                subject,
                cmp: Cmp::AtMost,
                factor: LATENCY_FACTOR,
            }),
            rows(
                &["tcp_raw", "memchan", "memchan_keyed", "memchan_hub_a"],
                &latency,
            ),
        );
        t.notes.push(
            "tcp_raw: TCP_NODELAY, blocking read, A to B through the bridge; memchan: both \
             sides block in rx.wait (notify on receive), joined through a `memchan hub` on \
             host H, the writes on their direct link A -> B (one hop); memchan_keyed: the \
             same on a keyed cluster; \
             memchan_hub_a: the hub in the ping side's process (one hop), for information"
                .into(),
        );
        t.info_ratios
            .push(keyed_vs_open(&latency, "memchan_keyed", "memchan"));
        t.round_ratios = round_ratios(set, FIG_LATENCY, &t);
        tables.push(t);

        let mut t = Table::new(
            KEY_LATENCY,
            format!(
                "8-byte one-way latency over the veth, busy-polling receive \
                 (cpu {ca} <-> cpu {cb}, round trip / 2)"
            ),
            "us",
            Some("tcp_raw_spin"),
            ["memchan_spin", "memchan_keyed_spin"].map(|subject| Target {
                subject,
                cmp: Cmp::AtMost,
                factor: LATENCY_FACTOR,
            }),
            rows(
                &[
                    "tcp_raw_spin",
                    "memchan_spin",
                    "memchan_keyed_spin",
                    "memchan_hub_a_spin",
                    "mpi_tcp",
                ],
                &latency,
            ),
        );
        t.notes.push(
            "tcp_raw_spin: recv(MSG_DONTWAIT) in a spin loop on both sides; memchan_spin: \
             rx.wait_spin, the hub on host H, the direct link; memchan_hub_a_spin: the hub in \
             the ping side's \
             process, for information; mpi_tcp: Open MPI ob1 + TCP BTL (it polls), rank 1 in \
             the other namespace"
                .into(),
        );
        t.info_ratios.push(keyed_vs_open(
            &latency,
            "memchan_keyed_spin",
            "memchan_spin",
        ));
        t.round_ratios = round_ratios(set, FIG_LATENCY, &t);
        tables.push(t);

        let mut t = Table::new(
            KEY_BANDWIDTH,
            format!(
                "bandwidth between two hosts, the hub on a third, 1 MiB writes (windows of {} MiB, first write to the \
                 receiver's answer)",
                p.window_mib
            ),
            "GB/s",
            Some("tcp_raw"),
            ["memchan", "memchan_keyed"].map(|subject| Target {
                subject,
                cmp: Cmp::AtLeast,
                factor: 0.9,
            }),
            rows(
                &["tcp_raw", "memchan", "memchan_keyed", "tcp_raw_64k"],
                &bandwidth,
            ),
        );
        t.notes.push(
            "tcp_raw: write_all of 1 MiB buffers, the receiver reads the window and answers \
             1 byte; memchan: tx.write of 1 MiB, then a flag, the receiver answers the flag"
                .into(),
        );
        t.notes.push(
            "tcp_raw_64k: the tcp_raw stream and receiver, each 1 MiB buffer written as 16 \
             write_all of 64 KiB (memchan's frame size); information only, the target is \
             against tcp_raw"
                .into(),
        );
        t.info_ratios.push((
            "memchan",
            "tcp_raw_64k",
            match (bandwidth.get("memchan"), bandwidth.get("tcp_raw_64k")) {
                (Some(m), Some(r)) => Some(m.0 / r.0),
                _ => None,
            },
        ));
        t.info_ratios
            .push(keyed_vs_open(&bandwidth, "memchan_keyed", "memchan"));
        t.round_ratios = round_ratios(set, FIG_BANDWIDTH, &t);
        tables.push(t);

        if let Some(t) = global_clock::table(set) {
            tables.push(t);
        }
        // Remote read and fetch-add against one raw TCP round trip (`rma.rs`).
        tables.extend(super::super::rma::host_tables(set, FIG_LATENCY));

        let hosts = json!({
            "namespaces": info.namespaces,
            "hub_namespace": info.namespaces[2],
            "veth": [info.namespaces[0], info.namespaces[1]],
            "addresses": [super::netns::ADDR_A, super::netns::ADDR_B, super::netns::ADDR_HUB],
            "subnet": super::netns::SUBNET,
            "veth_bytes_per_measurement": info.veth_bytes,
            "memchan": status_json(&info.memchan),
            "mpi_tcp": status_json(&info.mpi),
            "latency_round_trips_per_round": p.iters,
            "bandwidth_windows_per_round": p.bw_windows,
            "bandwidth_window_mib": p.window_mib,
        });

        HostReport {
            tables,
            latency,
            bandwidth,
            machine: machine_json(
                p.cpus,
                json!({
                    "date": info.date,
                    "tsc_ghz": info.tsc_ghz,
                    "tsc_step_ns": info.tsc_step_ns,
                    "rounds": p.rounds,
                    "quick": p.quick,
                    "latency_round_trips_per_round": p.iters,
                    "latency_warmup_round_trips": p.warmup,
                    "mpirun_version": info.mpi_version,
                    "elapsed_s": info.elapsed_s,
                }),
            ),
            hosts,
            round_medians: json!(set.round_medians),
            notes: info.notes.clone(),
        }
    }

    /// The human-readable tables.
    pub fn render_text(&self) -> String {
        let mut o = String::new();
        let m = &self.machine;
        render_header(&mut o, "memchan bench --hosts", m);
        let _ = writeln!(
            o,
            "hosts: network namespaces {} ({}) and {} ({}), the hub's {} ({}), each host a \
             veth to one bridge in the hub's; clock: TSC {:.4} GHz",
            self.hosts["namespaces"][0].as_str().unwrap_or("?"),
            super::netns::ADDR_A,
            self.hosts["namespaces"][1].as_str().unwrap_or("?"),
            super::netns::ADDR_B,
            self.hosts["namespaces"][2].as_str().unwrap_or("?"),
            super::netns::ADDR_HUB,
            m["tsc_ghz"].as_f64().unwrap_or(0.0),
        );
        let _ = writeln!(
            o,
            "memchan links: memchan* an open cluster (CRC32C, no MAC); memchan_keyed* a keyed \
             cluster (a key written for the run): CRC32C and an AEGIS MAC (128L / 128X4) on every frame"
        );
        for (what, key) in [("memchan", "memchan"), ("mpi_tcp", "mpi_tcp")] {
            if let Some(s) = self.hosts[key].as_str().filter(|s| *s != "measured") {
                let _ = writeln!(o, "{what}: {s}");
            }
        }
        for t in &self.tables {
            o.push('\n');
            t.render(&mut o);
        }
        render_targets(&mut o, "targets (--hosts)", &self.tables);
        render_notes(&mut o, &self.notes);
        o
    }

    /// The JSON report.
    pub fn to_json(&self) -> Value {
        let obj = |order: &[&'static str],
                   m: &BTreeMap<&'static str, (f64, f64, usize)>,
                   pick: fn(&(f64, f64, usize)) -> Value| {
            let mut o = Map::new();
            for s in order {
                o.insert(s.to_string(), m.get(s).map(pick).unwrap_or(Value::Null));
            }
            Value::Object(o)
        };
        let median = |v: &(f64, f64, usize)| json!(v.0);
        let p99 = |v: &(f64, f64, usize)| json!(v.1);
        let count = |v: &(f64, f64, usize)| json!(v.2);
        let mut figures = Map::new();
        figures.insert(
            KEY_LATENCY.into(),
            obj(&LATENCY_SERIES, &self.latency, median),
        );
        figures.insert(
            format!("{KEY_LATENCY}_p99"),
            obj(&LATENCY_SERIES, &self.latency, p99),
        );
        figures.insert(
            KEY_BANDWIDTH.into(),
            obj(&BANDWIDTH_SERIES, &self.bandwidth, median),
        );
        figures.insert(
            format!("{KEY_BANDWIDTH}_p99"),
            obj(&BANDWIDTH_SERIES, &self.bandwidth, p99),
        );

        for t in self.tables.iter().filter(|t| t.key == global_clock::KEY) {
            global_clock::json_figures(t, &mut figures);
        }
        // The tables of `rma.rs`: their rows' medians and p99s.
        for t in self.tables.iter().filter(|t| {
            t.key != KEY_LATENCY && t.key != KEY_BANDWIDTH && t.key != global_clock::KEY
        }) {
            let (mut med, mut p99) = (Map::new(), Map::new());
            for r in &t.rows {
                let v = r.value.as_ref().ok();
                med.insert(r.name.into(), v.map_or(Value::Null, |v| json!(v.0)));
                p99.insert(r.name.into(), v.map_or(Value::Null, |v| json!(v.1)));
            }
            figures.insert(t.key.into(), Value::Object(med));
            figures.insert(format!("{}_p99", t.key), Value::Object(p99));
        }

        let mut ratios = Map::new();
        let mut targets = Vec::new();
        for t in &self.tables {
            let entry = ratios
                .entry(t.key.to_string())
                .or_insert_with(|| Value::Object(Map::new()));
            if let Some(reference) = t.reference {
                for r in t.rows.iter().filter(|r| r.name != reference) {
                    entry[format!("{}_vs_{reference}", r.name)] = json!(r.ratio);
                }
            }
            for (subject, reference, x) in &t.info_ratios {
                entry[format!("{subject}_vs_{reference}")] = json!(x);
            }
            targets.extend(t.target_json());
        }
        json!({
            "figures": figures,
            "units": {
                KEY_LATENCY: "us",
                KEY_BANDWIDTH: "GB/s",
            },
            "ratios": ratios,
            "targets": targets,
            "samples": {
                KEY_LATENCY: obj(&LATENCY_SERIES, &self.latency, count),
                KEY_BANDWIDTH: obj(&BANDWIDTH_SERIES, &self.bandwidth, count),
            },
            "per_round_medians_ns": self.round_medians,
            "hosts": self.hosts,
            "machine": self.machine,
            "notes": self.notes,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The tables of `rma.rs` (no remote-access samples in these tests).
    const RMA_KEYS: [&str; 2] = ["net_get_8b_us", "net_atomic_fetch_add_us"];

    fn params() -> Params {
        Params::for_tests(true)
    }

    #[test]
    fn missing_series_are_null_and_ratios_follow_the_reference() {
        let mut set = SampleSet::default();
        for round in 0..2 {
            set.round = round;
            set.add(FIG_LATENCY, "tcp_raw", vec![20_000.0; 5]);
            set.add(FIG_LATENCY, "tcp_raw_spin", vec![10_000.0; 5]);
            set.add(FIG_LATENCY, "mpi_tcp", vec![15_000.0; 5]);
            // 64 MiB in 32 ms: ~2.1 GB/s
            set.add(FIG_BANDWIDTH, "tcp_raw", vec![32e6; 3]);
        }
        let rep = HostReport::build(&params(), &set, &HostInfo::for_tests());
        let v = rep.to_json();
        let lat = &v["figures"][KEY_LATENCY];
        assert!(lat["memchan"].is_null() && lat["memchan_spin"].is_null());
        assert!((lat["tcp_raw"].as_f64().unwrap() - 20.0).abs() < 1e-9);
        assert!((lat["tcp_raw_spin"].as_f64().unwrap() - 10.0).abs() < 1e-9);
        assert!((lat["mpi_tcp"].as_f64().unwrap() - 15.0).abs() < 1e-9);
        let bw = v["figures"][KEY_BANDWIDTH]["tcp_raw"].as_f64().unwrap();
        assert!((bw - (64 << 20) as f64 / 32e6).abs() < 1e-9);
        assert!(v["figures"][KEY_BANDWIDTH]["memchan"].is_null());
        assert!(v["figures"][KEY_BANDWIDTH]["tcp_raw_64k"].is_null());
        assert!(v["figures"][&format!("{KEY_BANDWIDTH}_p99")]["tcp_raw_64k"].is_null());
        assert!(v["ratios"][KEY_BANDWIDTH]["memchan_vs_tcp_raw_64k"].is_null());
        let r = v["ratios"][KEY_LATENCY]["mpi_tcp_vs_tcp_raw_spin"]
            .as_f64()
            .unwrap();
        assert!((r - 1.5).abs() < 1e-9);
        assert!(v["ratios"][KEY_LATENCY]["memchan_vs_tcp_raw"].is_null());
        assert!(v["ratios"][KEY_LATENCY]["memchan_keyed_vs_memchan"].is_null());
        for s in ["memchan_keyed", "memchan_keyed_spin"] {
            assert!(lat[s].is_null(), "{s}");
        }
        assert!(v["figures"][KEY_BANDWIDTH]["memchan_keyed"].is_null());
        // Two targets per figure (open and keyed), and one per `rma.rs` table, none
        // evaluated without memchan.
        let targets = v["targets"].as_array().unwrap();
        assert_eq!(targets.len(), 8);
        assert!(targets.iter().all(|t| t["met"].is_null()), "{targets:?}");
        let text = rep.render_text();
        assert!(text.contains("not measured: hub unreachable"), "{text}");
        let keyed_row = text
            .lines()
            .find(|l| l.trim_start().starts_with("memchan_keyed_spin "))
            .expect("a memchan_keyed_spin row");
        assert!(
            keyed_row.contains("not measured: hub unreachable"),
            "{keyed_row}"
        );
        assert!(text.contains("[net_bandwidth_1mib_gbps]"), "{text}");
    }

    #[test]
    fn verdicts_use_the_same_mode() {
        let mut set = SampleSet::default();
        set.add(FIG_LATENCY, "tcp_raw", vec![20_000.0; 5]);
        set.add(FIG_LATENCY, "memchan", vec![22_000.0; 5]);
        set.add(FIG_LATENCY, "tcp_raw_spin", vec![10_000.0; 5]);
        set.add(FIG_LATENCY, "memchan_spin", vec![12_000.0; 5]);
        set.add(FIG_BANDWIDTH, "tcp_raw", vec![30e6; 3]);
        set.add(FIG_BANDWIDTH, "memchan", vec![40e6; 3]);
        let mut i = HostInfo::for_tests();
        i.memchan = Ok(());
        let rep = HostReport::build(&params(), &set, &i);
        let v: Vec<(f64, bool)> = rep
            .tables
            .iter()
            .filter(|t| !RMA_KEYS.contains(&t.key))
            .map(|t| t.verdict_of(0).map(|v| (v.ratio, v.met)).unwrap())
            .collect();
        // 1.1x meets the 1.15x target, 1.2x does not
        assert!((v[0].0 - 1.1).abs() < 1e-9 && v[0].1);
        assert!((v[1].0 - 1.2).abs() < 1e-9 && !v[1].1);
        assert!((v[2].0 - 0.75).abs() < 1e-9 && !v[2].1);
    }

    #[test]
    fn tcp_raw_64k_is_reported_for_information_only() {
        let mut set = SampleSet::default();
        for round in 0..2 {
            set.round = round;
            // window times: 64 MiB in 30 ms (tcp_raw), 32 ms (memchan), 20 ms (64 KiB writes)
            set.add(FIG_BANDWIDTH, "tcp_raw", vec![30e6; 3]);
            set.add(FIG_BANDWIDTH, "memchan", vec![32e6; 3]);
            set.add(FIG_BANDWIDTH, "tcp_raw_64k", vec![20e6; 3]);
        }
        let mut i = HostInfo::for_tests();
        i.memchan = Ok(());
        let rep = HostReport::build(&params(), &set, &i);
        let v = rep.to_json();
        let window = (64 << 20) as f64;
        let bw = &v["figures"][KEY_BANDWIDTH];
        let x = bw["tcp_raw_64k"].as_f64().expect("tcp_raw_64k in the JSON");
        assert!((x - window / 20e6).abs() < 1e-9);
        let p99 = v["figures"][&format!("{KEY_BANDWIDTH}_p99")]["tcp_raw_64k"]
            .as_f64()
            .expect("tcp_raw_64k in the p99 JSON");
        assert!((p99 - window / 20e6).abs() < 1e-9);
        assert_eq!(v["samples"][KEY_BANDWIDTH]["tcp_raw_64k"], json!(6));
        let ratios = &v["ratios"][KEY_BANDWIDTH];
        let r = ratios["memchan_vs_tcp_raw_64k"].as_f64().unwrap();
        assert!((r - 20.0 / 32.0).abs() < 1e-9, "{ratios}");
        let r = ratios["tcp_raw_64k_vs_tcp_raw"].as_f64().unwrap();
        assert!((r - 1.5).abs() < 1e-9, "{ratios}");
        // The verdict stays memchan against tcp_raw.
        let t = &rep.tables[2];
        let verdict = t.verdict_of(0).unwrap();
        let (r, met) = (verdict.ratio, verdict.met);
        assert!((r - 30.0 / 32.0).abs() < 1e-9 && met);
        let targets = v["targets"].as_array().unwrap();
        assert_eq!(targets.len(), 8);
        assert!(targets
            .iter()
            .all(|t| t["subject"] != "tcp_raw_64k" && t["reference"] != "tcp_raw_64k"));
        let text = rep.render_text();
        assert!(text.contains("memchan / tcp_raw_64k: 0.62"), "{text}");
        assert!(text.contains("tcp_raw_64k: the tcp_raw stream"), "{text}");
        let row = text
            .lines()
            .find(|l| l.trim_start().starts_with("tcp_raw_64k "))
            .expect("a tcp_raw_64k row");
        assert!(
            row.contains("1.50") && !row.contains("yes") && !row.contains(">="),
            "{row}"
        );
    }

    /// The hub in side A's process (the two-host topology) is a row of each latency
    /// table with its ratio, and no target of its own.
    #[test]
    fn the_hub_in_a_series_are_information_beside_the_targets() {
        let mut set = SampleSet::default();
        set.add(FIG_LATENCY, "tcp_raw", vec![20_000.0; 5]);
        set.add(FIG_LATENCY, "memchan", vec![40_000.0; 5]);
        set.add(FIG_LATENCY, "memchan_hub_a", vec![21_000.0; 5]);
        set.add(FIG_LATENCY, "tcp_raw_spin", vec![4_000.0; 5]);
        set.add(FIG_LATENCY, "memchan_hub_a_spin", vec![5_000.0; 5]);
        let mut i = HostInfo::for_tests();
        i.memchan = Ok(());
        let v = HostReport::build(&params(), &set, &i).to_json();
        let lat = &v["figures"][KEY_LATENCY];
        assert!((lat["memchan_hub_a"].as_f64().unwrap() - 21.0).abs() < 1e-9);
        assert!((lat["memchan_hub_a_spin"].as_f64().unwrap() - 5.0).abs() < 1e-9);
        let r = &v["ratios"][KEY_LATENCY];
        assert!((r["memchan_hub_a_vs_tcp_raw"].as_f64().unwrap() - 1.05).abs() < 1e-9);
        assert!((r["memchan_hub_a_spin_vs_tcp_raw_spin"].as_f64().unwrap() - 1.25).abs() < 1e-9);
        let targets = v["targets"].as_array().unwrap();
        assert!(targets
            .iter()
            .all(|t| !t["subject"].as_str().unwrap().contains("hub_a")));
        let open = targets
            .iter()
            .find(|t| t["subject"] == "memchan" && t["figure"] == KEY_LATENCY)
            .unwrap();
        assert_eq!(open["met"], json!(false), "{open}");
        assert_eq!(v["hosts"]["hub_namespace"], json!("mcb1h"));
    }

    /// Open and keyed side by side: each keyed series is a row of its figure's table
    /// with its own target, verdict and per-round ratios against the same reference,
    /// and the keyed / open ratio is shown for information.
    #[test]
    fn keyed_rows_sit_beside_the_open_ones_with_their_own_verdicts() {
        let mut set = SampleSet::default();
        for round in 0..2 {
            set.round = round;
            set.add(FIG_LATENCY, "tcp_raw", vec![20_000.0; 5]);
            set.add(FIG_LATENCY, "memchan", vec![22_000.0; 5]);
            set.add(FIG_LATENCY, "memchan_keyed", vec![26_000.0; 5]);
            set.add(FIG_LATENCY, "tcp_raw_spin", vec![10_000.0; 5]);
            set.add(FIG_LATENCY, "memchan_spin", vec![11_000.0; 5]);
            set.add(FIG_LATENCY, "memchan_keyed_spin", vec![11_400.0; 5]);
            // window times: tcp_raw 30 ms, memchan 25 ms, keyed 40 ms
            set.add(FIG_BANDWIDTH, "tcp_raw", vec![30e6; 3]);
            set.add(FIG_BANDWIDTH, "memchan", vec![25e6; 3]);
            set.add(FIG_BANDWIDTH, "memchan_keyed", vec![40e6; 3]);
        }
        let mut i = HostInfo::for_tests();
        i.memchan = Ok(());
        let rep = HostReport::build(&params(), &set, &i);
        let v = rep.to_json();
        let lat = &v["figures"][KEY_LATENCY];
        assert!((lat["memchan_keyed"].as_f64().unwrap() - 26.0).abs() < 1e-9);
        assert!((lat["memchan_keyed_spin"].as_f64().unwrap() - 11.4).abs() < 1e-9);
        let bw = v["figures"][KEY_BANDWIDTH]["memchan_keyed"]
            .as_f64()
            .unwrap();
        assert!((bw - (64 << 20) as f64 / 40e6).abs() < 1e-9);
        assert_eq!(v["samples"][KEY_LATENCY]["memchan_keyed"], json!(10));

        // (figure, subject) -> (ratio, met, per-round ratios)
        let targets: Vec<(String, String, f64, bool, usize)> = v["targets"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|t| !RMA_KEYS.iter().any(|k| t["figure"] == *k))
            .map(|t| {
                (
                    t["figure"].as_str().unwrap().to_string(),
                    t["subject"].as_str().unwrap().to_string(),
                    t["ratio"].as_f64().unwrap(),
                    t["met"].as_bool().unwrap(),
                    t["per_round_ratios"].as_array().unwrap().len(),
                )
            })
            .collect();
        let want = [
            (KEY_LATENCY, "memchan", 1.1, true),
            (KEY_LATENCY, "memchan_keyed", 1.3, false),
            (KEY_LATENCY, "memchan_spin", 1.1, true),
            (KEY_LATENCY, "memchan_keyed_spin", 1.14, true),
            (KEY_BANDWIDTH, "memchan", 1.2, true),
            (KEY_BANDWIDTH, "memchan_keyed", 0.75, false),
        ];
        assert_eq!(targets.len(), want.len(), "{targets:?}");
        for ((f, s, r, met, rounds), (wf, ws, wr, wmet)) in targets.iter().zip(want) {
            assert_eq!((f.as_str(), s.as_str(), *met), (wf, ws, wmet));
            assert!((r - wr).abs() < 1e-9, "{s}: {r}");
            assert_eq!(*rounds, 2, "{s}: per-round ratios");
        }
        let ratios = &v["ratios"];
        let x = ratios[KEY_LATENCY]["memchan_keyed_vs_memchan"]
            .as_f64()
            .unwrap();
        assert!((x - 26.0 / 22.0).abs() < 1e-9);
        let x = ratios[KEY_LATENCY]["memchan_keyed_spin_vs_memchan_spin"]
            .as_f64()
            .unwrap();
        assert!((x - 11.4 / 11.0).abs() < 1e-9);
        let x = ratios[KEY_BANDWIDTH]["memchan_keyed_vs_memchan"]
            .as_f64()
            .unwrap();
        assert!((x - 25.0 / 40.0).abs() < 1e-9);
        let x = ratios[KEY_BANDWIDTH]["memchan_keyed_vs_tcp_raw"]
            .as_f64()
            .unwrap();
        assert!((x - 0.75).abs() < 1e-9);

        let text = rep.render_text();
        let row = |name: &str, nth: usize| -> String {
            text.lines()
                .filter(|l| l.trim_start().starts_with(&format!("{name} ")) && !l.contains(" / "))
                .nth(nth)
                .unwrap_or_else(|| panic!("no row {name} #{nth}:\n{text}"))
                .to_string()
        };
        let r = row("memchan_keyed", 0);
        assert!(
            r.contains("1.30") && r.contains("<= 1.15x") && r.contains("NO"),
            "{r}"
        );
        let r = row("memchan_keyed_spin", 0);
        assert!(r.contains("1.14") && r.contains("yes"), "{r}");
        let r = row("memchan_keyed", 1);
        assert!(
            r.contains("0.75") && r.contains(">= 0.9x") && r.contains("NO"),
            "{r}"
        );
        assert!(text.contains("memchan_keyed / memchan: 1.18"), "{text}");
        assert!(text.contains("AEGIS MAC"), "{text}");
        let target_lines: Vec<&str> = text
            .lines()
            .skip_while(|l| !l.starts_with("== targets"))
            .filter(|l| l.contains("memchan_keyed"))
            .collect();
        assert_eq!(target_lines.len(), 3, "{target_lines:?}");
        assert!(
            target_lines[0].contains("memchan_keyed <= 1.15x tcp_raw")
                && target_lines[0].contains("NOT MET")
                && target_lines[0].contains("median of 2 rounds' ratios"),
            "{target_lines:?}"
        );
        assert!(target_lines[1].contains(" met "), "{target_lines:?}");
    }
}
