//! `--plot DIR`: the bench writes the data (DIR/bench_data.json) and runs the
//! embedded matplotlib script (`plot.py` beside `src/`) with python3 to draw
//! bandwidth.png, latency_hist.png, latency_cdf.png and levels.png (bandwidth vs
//! size per level: the raw sweep, message passing from `mp::sweep`, TCP/IP from the
//! IP level's sweep).

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::{bail, Context, Result};
use serde_json::{json, Map, Value};

use super::ip::IpFigures;
use super::model::{fig, SampleSet, SIZES};
use super::mp;
use super::refs::WINDOW;
use super::report::Report;
use super::stats::summarize;

const SCRIPT: &str = include_str!("../plot.py");

/// The PNG files the script writes.
pub const PNGS: [&str; 4] = [
    "bandwidth.png",
    "latency_hist.png",
    "latency_cdf.png",
    "levels.png",
];

/// Most latency samples per series handed to the plot (evenly spaced
/// quantiles of the pooled samples, so the distribution is kept).
const MAX_PLOT_SAMPLES: usize = 20_000;

/// Fails with a clear message unless `python3 -c 'import matplotlib'` works.
pub fn check_python() -> Result<()> {
    let out = Command::new("python3")
        .args(["-c", "import matplotlib"])
        .stdin(Stdio::null())
        .output();
    match out {
        Err(e) => {
            bail!("python3 is required for plots but could not be run ({e}); run scripts/setup.sh")
        }
        Ok(o) if !o.status.success() => bail!(
            "python3 cannot import matplotlib, which plots need; run scripts/setup.sh \
             (or: apt-get install python3-matplotlib / pip install matplotlib)\n{}",
            String::from_utf8_lossy(&o.stderr).trim()
        ),
        Ok(_) => Ok(()),
    }
}

fn quantiles(v: &[f64], k: usize) -> Vec<f64> {
    let mut s: Vec<f64> = v.iter().copied().filter(|x| x.is_finite()).collect();
    s.sort_by(f64::total_cmp);
    if s.len() <= k {
        return s;
    }
    (0..k).map(|i| s[i * (s.len() - 1) / (k - 1)]).collect()
}

/// One value per sweep size for series `s` (`pick` chooses median or p99 GB/s);
/// null where the size was not measured.
fn sweep_column(rep: &Report, s: &str, pick: fn(&(f64, f64)) -> f64) -> Vec<Value> {
    SIZES
        .iter()
        .map(|&size| {
            rep.sweep
                .iter()
                .find(|r| r.size == size)
                .and_then(|r| r.gbps.get(s))
                .map_or(Value::Null, |x| json!(pick(x)))
        })
        .collect()
}

/// Median GB/s per sweep size of the message-passing sweep's series `s` (windows of
/// [`WINDOW`] messages); null where not measured.
fn mp_column(set: &SampleSet, s: &str) -> Vec<Value> {
    SIZES
        .iter()
        .map(|&size| {
            set.get(&mp::sweep_figure(size), s)
                .and_then(summarize)
                .map_or(Value::Null, |m| json!((size * WINDOW) as f64 / m.median))
        })
        .collect()
}

/// The per-level data of levels.png.
fn levels(rep: &Report, set: &SampleSet, ip: Option<&IpFigures>) -> Value {
    let raw: Map<String, Value> = ["memcpy", "memchan"]
        .into_iter()
        .map(|s| (s.to_string(), Value::Array(sweep_column(rep, s, |x| x.0))))
        .collect();
    let mp: Map<String, Value> = ["memchan_postal", "memchan_zero_copy"]
        .into_iter()
        .map(|s| (s.to_string(), Value::Array(mp_column(set, s))))
        .collect();
    let ipv: Map<String, Value> = ["memchan_ip", "tcp_veth"]
        .into_iter()
        .enumerate()
        .map(|(i, s)| {
            let col = SIZES
                .iter()
                .map(|&size| {
                    ip.and_then(|f| f.sweep.iter().find(|(z, _)| *z == size))
                        .map(|(_, v)| v[i])
                        .filter(|x| x.is_finite())
                        .map_or(Value::Null, |x| json!(x))
                })
                .collect();
            (s.to_string(), Value::Array(col))
        })
        .collect();
    json!({ "sizes": SIZES, "raw": raw, "message_passing": mp, "ip": ipv })
}

/// Writes the data and the plots; returns the files written.
pub fn write(
    dir: &Path,
    rep: &Report,
    set: &SampleSet,
    ip: Option<&IpFigures>,
) -> Result<Vec<PathBuf>> {
    check_python()?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;

    let mut med: Map<String, Value> = Map::new();
    let mut p99: Map<String, Value> = Map::new();
    for s in ["memcpy", "memchan", "mpi"] {
        let m = sweep_column(rep, s, |x| x.0);
        let p = sweep_column(rep, s, |x| x.1);
        if m.iter().any(|x| !x.is_null()) {
            med.insert(s.into(), Value::Array(m));
            p99.insert(s.into(), Value::Array(p));
        }
    }
    let mut lat = Map::new();
    if let Some(series) = set.samples.get(fig::LATENCY) {
        for (name, v) in series {
            lat.insert(name.clone(), json!(quantiles(v, MAX_PLOT_SAMPLES)));
        }
    }
    let title = format!(
        "{} (cores {})",
        rep.machine["cpu_model"].as_str().unwrap_or("?"),
        rep.machine["cores_used"]
    );
    // one-way samples are round trips / 2: they sit on a grid of half a step
    let half_step_ns = rep.machine["tsc_step_ns"].as_f64().unwrap_or(0.0) / 2.0;
    let data = json!({
        "title": title,
        "half_step_ns": half_step_ns,
        "sweep": { "sizes": SIZES, "median_gbps": med, "p99_gbps": p99 },
        "latency_samples_ns": lat,
        "levels": levels(rep, set, ip),
    });
    let data_path = dir.join("bench_data.json");
    std::fs::write(&data_path, serde_json::to_string(&data)? + "\n")
        .with_context(|| format!("writing {}", data_path.display()))?;

    let mut child = Command::new("python3")
        .arg("-")
        .arg(dir)
        .env("MPLBACKEND", "Agg")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("starting python3")?;
    child
        .stdin
        .take()
        .context("python3 stdin")?
        .write_all(SCRIPT.as_bytes())
        .context("sending the plot script to python3")?;
    let out = child.wait_with_output().context("waiting for python3")?;
    if !out.status.success() {
        bail!(
            "the plot script failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        );
    }
    let mut files = vec![data_path];
    for p in PNGS {
        let f = dir.join(p);
        if !f.is_file() {
            bail!("the plot script did not write {}", f.display());
        }
        files.push(f);
    }
    Ok(files)
}
