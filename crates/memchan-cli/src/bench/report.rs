//! Turning the pooled samples into tables (text) and the JSON report.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::{json, Map, Value};

use super::stats::{self, Summary};
use super::{fig, refs, Config, RunInfo, SampleSet, SIZES};

/// Direction of a target.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Cmp {
    AtMost,
    AtLeast,
}

/// A target: `subject` ≤/≥ `factor` × the table's reference.
#[derive(Debug, Clone)]
pub struct Target {
    pub subject: &'static str,
    pub cmp: Cmp,
    pub factor: f64,
}

impl Target {
    pub(crate) fn text(&self) -> String {
        match self.cmp {
            Cmp::AtMost => format!("<= {}x", self.factor),
            Cmp::AtLeast => format!(">= {}x", self.factor),
        }
    }
    pub(crate) fn met(&self, ratio: f64) -> bool {
        match self.cmp {
            Cmp::AtMost => ratio <= self.factor,
            Cmp::AtLeast => ratio >= self.factor,
        }
    }
}

/// One row: a series' median and p99 in the table's unit.
#[derive(Debug, Clone)]
pub struct Row {
    pub name: String,
    pub median: f64,
    pub p99: f64,
    pub n: usize,
    pub ratio: Option<f64>,
}

/// One figure.
#[derive(Debug, Clone)]
pub struct Table {
    /// JSON key under "figures".
    pub key: &'static str,
    pub title: String,
    pub unit: &'static str,
    pub reference: Option<&'static str>,
    pub target: Option<Target>,
    pub rows: Vec<Row>,
    pub notes: Vec<String>,
    /// Larger is better (bandwidth): p99 is the slow tail.
    pub higher_is_better: bool,
    /// Target ratio computed per round from that round's medians (subject and
    /// reference measured next to each other), for rounds with both.
    pub round_ratios: Vec<f64>,
}

impl Table {
    fn row(&self, name: &str) -> Option<&Row> {
        self.rows.iter().find(|r| r.name == name)
    }

    /// (ratio, met) of the target, when both sides were measured.
    pub fn verdict(&self) -> Option<(f64, bool)> {
        let t = self.target.as_ref()?;
        let r = self.row(t.subject)?.ratio?;
        Some((r, t.met(r)))
    }
}

/// One size of the bandwidth sweep.
#[derive(Debug, Clone)]
pub struct SweepRow {
    pub size: usize,
    /// series → (median GB/s, slow-tail GB/s)
    pub gbps: BTreeMap<String, (f64, f64)>,
}

/// Everything the bench prints and writes.
#[derive(Debug)]
pub struct Report {
    pub tables: Vec<Table>,
    pub sweep: Vec<SweepRow>,
    pub flop: Option<Summary>,
    pub q: BTreeMap<String, f64>,
    pub machine: Value,
    pub notes: Vec<String>,
    pub memchan_status: Result<(), String>,
    pub peers: String,
    pub round_medians: Value,
    pub peer_runs: Vec<Value>,
}

const LATENCY_SERIES: [&str; 5] = [
    "cacheline_limit",
    "memchan",
    "tcp_loopback",
    "mpi",
    "oshmem",
];

fn summarize_time(set: &SampleSet, figure: &str, series: &str) -> Option<Summary> {
    stats::summarize(set.get(figure, series)?)
}

/// A table of times (ns per operation).
fn time_table(
    set: &SampleSet,
    figure: &str,
    key: &'static str,
    title: String,
    order: &[&str],
    reference: Option<&'static str>,
    target: Option<Target>,
) -> Table {
    let mut rows: Vec<Row> = order
        .iter()
        .filter_map(|s| {
            summarize_time(set, figure, s).map(|m| Row {
                name: s.to_string(),
                median: m.median,
                p99: m.p99,
                n: m.n,
                ratio: None,
            })
        })
        .collect();
    let refv = reference.and_then(|r| rows.iter().find(|x| x.name == r).map(|x| x.median));
    if let Some(rv) = refv {
        for r in &mut rows {
            r.ratio = Some(r.median / rv);
        }
    }
    Table {
        key,
        title,
        unit: "ns",
        reference,
        target,
        rows,
        notes: vec![],
        higher_is_better: false,
        round_ratios: vec![],
    }
}

/// A time table of memchan against the oshmem reference, memchan at most
/// `factor` times oshmem; `note` says what the oshmem side measures.
fn oshmem_table(
    set: &SampleSet,
    figure: &str,
    key: &'static str,
    title: &str,
    factor: f64,
    note: &str,
) -> Table {
    let mut t = time_table(
        set,
        figure,
        key,
        title.into(),
        &["memchan", "oshmem"],
        Some("oshmem"),
        Some(Target {
            subject: "memchan",
            cmp: Cmp::AtMost,
            factor,
        }),
    );
    t.notes.push(note.into());
    t
}

/// Per-round ratios subject / reference of the round medians of `figure`
/// (inverted for bandwidth, whose samples are window times).
fn round_ratios(set: &SampleSet, figure: &str, t: &Table) -> Vec<f64> {
    let (Some(tg), Some(reference)) = (&t.target, t.reference) else {
        return vec![];
    };
    ratios_per_round(set, figure, tg.subject, reference, t.higher_is_better)
}

/// `subject` / `reference` from each round's medians (inverted when higher is better,
/// so a ratio below 1 always means memchan did better).
pub(crate) fn ratios_per_round(
    set: &SampleSet,
    figure: &str,
    subject: &str,
    reference: &str,
    higher_is_better: bool,
) -> Vec<f64> {
    let Some(m) = set.round_medians.get(figure) else {
        return vec![];
    };
    let (Some(a), Some(b)) = (m.get(subject), m.get(reference)) else {
        return vec![];
    };
    a.iter()
        .filter_map(|(round, x)| {
            let y = b.get(round)?;
            Some(if higher_is_better { y / x } else { x / y })
        })
        .collect()
}

/// Bandwidth of a series of window times for transfers of `size` bytes:
/// (median GB/s, slow-tail GB/s = bytes / p99 window time, n).
fn bandwidth(set: &SampleSet, size: usize, series: &str) -> Option<(f64, f64, usize)> {
    let s = summarize_time(set, &fig::bandwidth(size), series)?;
    let bytes = (size * refs::WINDOW) as f64;
    Some((bytes / s.median, bytes / s.p99, s.n))
}

impl Report {
    pub fn build(cfg: &Config, set: &SampleSet, info: &RunInfo) -> Report {
        let (a, b) = cfg.cpus;
        let mut tables = Vec::new();

        // 1. one-way latency
        let mut t = time_table(
            set,
            fig::LATENCY,
            "latency_8b_one_way_ns",
            format!("8-byte one-way latency (ping-pong, cpu {a} <-> cpu {b}, round trip / 2)"),
            &LATENCY_SERIES,
            Some("cacheline_limit"),
            Some(Target {
                subject: "memchan",
                cmp: Cmp::AtMost,
                factor: 1.25,
            }),
        );
        t.notes.push(format!(
            "cacheline_limit: raw shared-memory cache-line ping-pong on the same cores (the physical limit); \
             one counter read per round trip ({:.1} ns per read, counter step {:.1} ns)",
            info.timer_read_ns, info.tsc_step_ns
        ));
        tables.push(t);

        // 2. bandwidth 1 MiB
        let mib = 1 << 20;
        let mut rows = Vec::new();
        for s in ["memcpy", "memchan", "mpi"] {
            if let Some((m, p, n)) = bandwidth(set, mib, s) {
                rows.push(Row {
                    name: s.to_string(),
                    median: m,
                    p99: p,
                    n,
                    ratio: None,
                });
            }
        }
        if let Some(rv) = rows.iter().find(|r| r.name == "memcpy").map(|r| r.median) {
            for r in &mut rows {
                r.ratio = Some(r.median / rv);
            }
        }
        tables.push(Table {
            key: "bandwidth_1mib_gbps",
            title: "bandwidth, 1 MiB transfers (windows of 64)".into(),
            unit: "GB/s",
            reference: Some("memcpy"),
            target: Some(Target {
                subject: "memchan",
                cmp: Cmp::AtLeast,
                factor: 0.8,
            }),
            rows,
            notes: vec![
                "memcpy: single core, page-aligned source to destination; p99 column = bandwidth of the \
                 99th-percentile-slowest window; mpi: osu_bw style (64 Isend + ack)"
                    .into(),
            ],
            higher_is_better: true,
            round_ratios: vec![],
        });

        // 3. overhead
        let mut t = time_table(
            set,
            fig::OVERHEAD,
            "overhead_32b_ns",
            "write-and-run overhead of a 32-byte write (per write, batches of 1000)".into(),
            &["local_store_fence", "memchan"],
            Some("local_store_fence"),
            Some(Target {
                subject: "memchan",
                cmp: Cmp::AtMost,
                factor: 2.0,
            }),
        );
        t.notes.push(
            "local_store_fence: 32-byte store to a local buffer + release fence + release store of a flag".into(),
        );
        tables.push(t);

        // 4. ack
        tables.push(oshmem_table(
            set,
            fig::ACK,
            "ack_ns",
            "write (8 B) + acknowledge (per pair, batches of 100)",
            1.0,
            "oshmem: shmem_long_p + shmem_quiet",
        ));

        // 5. lock
        tables.push(oshmem_table(
            set,
            fig::LOCK,
            "lock_acquire_release_ns",
            "lock acquire + release, 2 nodes, uncontended (peer idle)",
            0.5,
            "oshmem: shmem_set_lock + shmem_clear_lock",
        ));

        // 6. barrier
        tables.push(oshmem_table(
            set,
            fig::BARRIER,
            "barrier_ns",
            "barrier, 2 nodes (per barrier)",
            0.5,
            "oshmem: shmem_barrier_all",
        ));

        // 7. notify
        let mut t = time_table(
            set,
            fig::NOTIFY,
            "notify_wake_ns",
            "notify wake-up latency (blocking ping-pong, both sides block in rx.wait, round trip / 2)".into(),
            &["memchan"],
            None,
            None,
        );
        t.notes.push("no reference: reported".into());
        tables.push(t);

        for t in &mut tables {
            let figure = match t.key {
                "latency_8b_one_way_ns" => fig::LATENCY.to_string(),
                "bandwidth_1mib_gbps" => fig::bandwidth(mib),
                "overhead_32b_ns" => fig::OVERHEAD.into(),
                "ack_ns" => fig::ACK.into(),
                "lock_acquire_release_ns" => fig::LOCK.into(),
                "barrier_ns" => fig::BARRIER.into(),
                _ => continue,
            };
            t.round_ratios = round_ratios(set, &figure, t);
        }

        // flop time and q-ratio
        let flop = summarize_time(set, fig::FLOP, "linpack_100");
        let mut q = BTreeMap::new();
        if let (Some(f), Some(lat)) = (flop, tables.first()) {
            for r in &lat.rows {
                q.insert(r.name.clone(), r.median / f.median);
            }
        }

        // sweep
        let mut sweep = Vec::new();
        for &size in &SIZES {
            let mut gbps = BTreeMap::new();
            for s in ["memcpy", "memchan", "mpi"] {
                if let Some((m, p, _)) = bandwidth(set, size, s) {
                    gbps.insert(s.to_string(), (m, p));
                }
            }
            if !gbps.is_empty() {
                sweep.push(SweepRow { size, gbps });
            }
        }

        let round_medians = {
            let mut m = Map::new();
            for (figure, series) in &set.round_medians {
                let mut o = Map::new();
                for (s, v) in series {
                    o.insert(s.clone(), json!(v));
                }
                m.insert(figure.clone(), Value::Object(o));
            }
            Value::Object(m)
        };

        Report {
            tables,
            sweep,
            flop,
            q,
            machine: machine_json(cfg, info),
            notes: info.notes.clone(),
            memchan_status: info.memchan.clone(),
            peers: info.peers.clone(),
            round_medians,
            peer_runs: info.peer_runs.clone(),
        }
    }

    /// The human-readable tables.
    pub fn render_text(&self) -> String {
        let mut o = String::new();
        let m = &self.machine;
        let _ = writeln!(
            o,
            "memchan bench — {} — cores {} — {} round(s), samples pooled — {}",
            m["cpu_model"].as_str().unwrap_or("?"),
            m["cores_used"],
            m["rounds"],
            m["date"].as_str().unwrap_or("")
        );
        let _ = writeln!(
            o,
            "clock: TSC {:.4} GHz, step {:.1} ns, read {:.1} ns; peers: {}",
            m["tsc_ghz"].as_f64().unwrap_or(0.0),
            m["tsc_step_ns"].as_f64().unwrap_or(0.0),
            m["timer_read_ns"].as_f64().unwrap_or(0.0),
            self.peers
        );
        if let Err(why) = &self.memchan_status {
            let _ = writeln!(o, "memchan: not measured — {why}");
        }
        for t in &self.tables {
            o.push('\n');
            render_table(&mut o, t);
        }

        // sweep
        o.push('\n');
        let _ = writeln!(
            o,
            "== bandwidth sweep, windows of 64 transfers   [bandwidth_sweep_gbps]"
        );
        let _ = writeln!(
            o,
            "   {:>8}  {:>14} {:>12}  {:>14} {:>12}  {:>10}",
            "size", "memcpy (GB/s)", "p99 (GB/s)", "memchan (GB/s)", "p99 (GB/s)", "ratio"
        );
        for r in &self.sweep {
            let cell = |s: &str| {
                r.gbps
                    .get(s)
                    .map(|(m, p)| (format!("{m:.2}"), format!("{p:.2}")))
                    .unwrap_or_else(|| ("-".into(), "-".into()))
            };
            let (cm, cp) = cell("memcpy");
            let (mm, mp) = cell("memchan");
            let ratio = match (r.gbps.get("memchan"), r.gbps.get("memcpy")) {
                (Some(a), Some(b)) => format!("{:.2}", a.0 / b.0),
                _ => "-".into(),
            };
            let _ = writeln!(
                o,
                "   {:>8}  {:>14} {:>12}  {:>14} {:>12}  {:>10}",
                human_size(r.size),
                cm,
                cp,
                mm,
                mp,
                ratio
            );
        }

        // flops and q
        o.push('\n');
        let _ = writeln!(o, "== time of one floating-point operation (LINPACK 100x100 LU + solve, 2/3 n^3 + 2 n^2 flops)   [flop_ns]");
        match &self.flop {
            Some(f) => {
                let _ = writeln!(
                    o,
                    "   median {:.4} ns/flop ({:.0} MFLOPS), p99 {:.4} ns/flop, {} repeats",
                    f.median,
                    1e3 / f.median,
                    f.p99,
                    f.n
                );
            }
            None => {
                let _ = writeln!(o, "   not measured");
            }
        }
        let _ = writeln!(o, "\n== q-ratio: 8-byte one-way latency / flop time (dimensionless; seeds: MC2 367, MPI 1,067)   [q_ratio]");
        for s in LATENCY_SERIES {
            if let Some(q) = self.q.get(s) {
                let _ = writeln!(o, "   {s:<18} {q:>10.0}");
            }
        }

        // verdict
        o.push('\n');
        let _ = writeln!(o, "== targets");
        for t in &self.tables {
            let Some(tg) = &t.target else { continue };
            let mut status = match t.verdict() {
                Some((r, met)) => format!("{:.2}x  {:<8}", r, if met { "met" } else { "NOT MET" }),
                None => "not measured".into(),
            };
            if t.round_ratios.len() > 1 {
                let mut v = t.round_ratios.clone();
                v.sort_by(f64::total_cmp);
                let _ = write!(
                    status,
                    "  per round: median {:.2}x, range {:.2}-{:.2}x over {} rounds",
                    stats::interpolated_median(&v),
                    v[0],
                    v[v.len() - 1],
                    v.len()
                );
            }
            let rule = format!(
                "{} {} {}",
                tg.subject,
                tg.text(),
                t.reference.unwrap_or("-")
            );
            let _ = writeln!(o, "   {:<26} {:<36} {}", t.key, rule, status);
        }
        if !self.notes.is_empty() {
            o.push('\n');
            for n in &self.notes {
                let _ = writeln!(o, "note: {n}");
            }
        }
        o
    }

    /// The JSON report: {"figures": {...}, "machine": {...}, ...}.
    pub fn to_json(&self) -> Value {
        let mut figures = Map::new();
        let mut units = Map::new();
        let mut targets = Vec::new();
        let mut ratios = Map::new();
        let mut counts = Map::new();
        for t in &self.tables {
            let mut med = Map::new();
            let mut p99 = Map::new();
            let mut rat = Map::new();
            let mut n = Map::new();
            for r in &t.rows {
                med.insert(r.name.clone(), json!(r.median));
                p99.insert(r.name.clone(), json!(r.p99));
                n.insert(r.name.clone(), json!(r.n));
                if let (Some(x), Some(reference)) = (r.ratio, t.reference) {
                    if r.name != reference {
                        rat.insert(format!("{}_vs_{}", r.name, reference), json!(x));
                    }
                }
            }
            figures.insert(t.key.into(), Value::Object(med));
            figures.insert(format!("{}_p99", t.key), Value::Object(p99));
            units.insert(t.key.into(), json!(t.unit));
            if !rat.is_empty() {
                ratios.insert(t.key.into(), Value::Object(rat));
            }
            counts.insert(t.key.into(), Value::Object(n));
            if let Some(tg) = &t.target {
                let v = t.verdict();
                targets.push(json!({
                    "figure": t.key,
                    "subject": tg.subject,
                    "reference": t.reference,
                    "target": tg.text(),
                    "ratio": v.map(|x| x.0),
                    "met": v.map(|x| x.1),
                    "per_round_ratios": t.round_ratios,
                }));
            }
        }
        let mut sweep = Map::new();
        let mut sweep_p99 = Map::new();
        for r in &self.sweep {
            let mut a = Map::new();
            let mut b = Map::new();
            for (s, (m, p)) in &r.gbps {
                a.insert(s.clone(), json!(m));
                b.insert(s.clone(), json!(p));
            }
            sweep.insert(r.size.to_string(), Value::Object(a));
            sweep_p99.insert(r.size.to_string(), Value::Object(b));
        }
        figures.insert("bandwidth_sweep_gbps".into(), Value::Object(sweep));
        figures.insert("bandwidth_sweep_gbps_p99".into(), Value::Object(sweep_p99));
        units.insert("bandwidth_sweep_gbps".into(), json!("GB/s"));
        if let Some(f) = &self.flop {
            figures.insert("flop_ns".into(), json!({ "linpack_100": f.median }));
            figures.insert("flop_ns_p99".into(), json!({ "linpack_100": f.p99 }));
            figures.insert("mflops".into(), json!({ "linpack_100": 1e3 / f.median }));
            units.insert("flop_ns".into(), json!("ns per flop"));
            units.insert("mflops".into(), json!("MFLOPS"));
        }
        figures.insert("q_ratio".into(), json!(self.q));
        units.insert(
            "q_ratio".into(),
            json!("latency / flop time (dimensionless)"),
        );

        json!({
            "figures": figures,
            "units": units,
            "ratios": ratios,
            "targets": targets,
            "samples": counts,
            "per_round_medians_ns": self.round_medians,
            "machine": self.machine,
            "memchan": match &self.memchan_status { Ok(()) => json!("measured"), Err(e) => json!(format!("not measured: {e}")) },
            "peers": self.peers,
            "peer_runs": self.peer_runs,
            "notes": self.notes,
        })
    }
}

fn fmt_val(v: f64, unit: &str) -> String {
    if unit == "GB/s" {
        format!("{v:.2}")
    } else if v >= 1000.0 {
        format!("{v:.0}")
    } else if v >= 10.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

fn render_table(o: &mut String, t: &Table) {
    let _ = writeln!(o, "== {}   [{}]", t.title, t.key);
    let ratio_head = match t.reference {
        Some(r) => format!("ratio vs {r}"),
        None => "ratio".into(),
    };
    let _ = writeln!(
        o,
        "   {:<18} {:>14} {:>14} {:>28} {:>10} {:>8}",
        "name",
        format!("median ({})", t.unit),
        format!("p99 ({})", t.unit),
        ratio_head,
        "target",
        "met"
    );
    if t.rows.is_empty() {
        let _ = writeln!(o, "   (nothing measured)");
    }
    for r in &t.rows {
        let is_ref = t.reference == Some(r.name.as_str());
        let ratio = match r.ratio {
            Some(_) if is_ref => "1.00 (reference)".to_string(),
            Some(x) => format!("{x:.2}"),
            None => "-".into(),
        };
        let (target, met) = match &t.target {
            Some(tg) if tg.subject == r.name => match r.ratio {
                Some(x) => (tg.text(), if tg.met(x) { "yes" } else { "NO" }.to_string()),
                None => (
                    tg.text(),
                    format!("n/a (no {})", t.reference.unwrap_or("reference")),
                ),
            },
            _ => (String::new(), String::new()),
        };
        let _ = writeln!(
            o,
            "   {:<18} {:>14} {:>14} {:>28} {:>10} {:>8}",
            r.name,
            fmt_val(r.median, t.unit),
            fmt_val(r.p99, t.unit),
            ratio,
            target,
            met
        );
    }
    if let Some(tg) = &t.target {
        if t.row(tg.subject).is_none() {
            let _ = writeln!(
                o,
                "   ({} not measured: target {} {} not evaluated)",
                tg.subject,
                tg.text(),
                t.reference.unwrap_or("")
            );
        }
    }
    if t.higher_is_better {
        let _ = writeln!(
            o,
            "   p99 = slow tail: bandwidth of the 99th-percentile-slowest window"
        );
    }
    for n in &t.notes {
        let _ = writeln!(o, "   {n}");
    }
}

/// "8 B", "4 KiB", "1 MiB".
pub fn human_size(n: usize) -> String {
    if n >= 1 << 20 && n.is_multiple_of(1 << 20) {
        format!("{} MiB", n >> 20)
    } else if n >= 1 << 10 && n.is_multiple_of(1 << 10) {
        format!("{} KiB", n >> 10)
    } else {
        format!("{n} B")
    }
}

fn machine_json(cfg: &Config, info: &RunInfo) -> Value {
    let uname = rustix::system::uname();
    json!({
        "cpu_model": cpu_model(),
        "cores_used": [cfg.cpus.0, cfg.cpus.1],
        "logical_cpus": std::thread::available_parallelism().map(|n| n.get()).unwrap_or(0),
        "date": info.date,
        "hostname": uname.nodename().to_string_lossy(),
        "kernel": uname.release().to_string_lossy(),
        "arch": std::env::consts::ARCH,
        "tsc_ghz": info.tsc_ghz,
        "tsc_step_ns": info.tsc_step_ns,
        "timer_read_ns": info.timer_read_ns,
        "rounds": cfg.rounds,
        "quick": cfg.quick,
        "latency_round_trips_per_round": cfg.iters,
        "tcp_round_trips_per_round": cfg.tcp_iters,
        "peer_versions": info.peer_versions,
        "elapsed_s": info.elapsed_s,
        "memchan_version": env!("CARGO_PKG_VERSION"),
    })
}

pub(crate) fn cpu_model() -> String {
    std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split_once(':'))
                .map(|(_, v)| v.trim().to_string())
        })
        .unwrap_or_else(|| std::env::consts::ARCH.to_string())
}

/// Current UTC time as ISO 8601 (no external date crate).
pub fn iso_date_now() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    // Howard Hinnant's civil_from_days.
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = if m <= 2 { y + 1 } else { y };
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_are_human() {
        assert_eq!(human_size(8), "8 B");
        assert_eq!(human_size(4096), "4 KiB");
        assert_eq!(human_size(4 << 20), "4 MiB");
    }

    #[test]
    fn date_looks_iso() {
        let d = iso_date_now();
        assert_eq!(d.len(), 20, "{d}");
        assert!(d.starts_with("20"));
    }
}
