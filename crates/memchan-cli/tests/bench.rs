//! End-to-end test of `memchan bench`: runs the real binary in --quick mode
//! and checks the JSON report, the tables and the plots.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

use serde_json::Value;

/// The benches pin processes to the same two cores: never run two at once.
static SERIAL: Mutex<()> = Mutex::new(());

fn scratch(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("memchan-cli-test-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

fn memchan() -> Command {
    Command::new(env!("CARGO_BIN_EXE_memchan"))
}

fn check(out: &Output) {
    assert!(
        out.status.success(),
        "memchan bench failed ({})\n--- stdout\n{}\n--- stderr\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

fn matplotlib_available() -> bool {
    Command::new("python3")
        .args(["-c", "import matplotlib"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false)
}

fn num(v: &Value, figure: &str, series: &str) -> f64 {
    let x = v["figures"][figure][series]
        .as_f64()
        .unwrap_or_else(|| panic!("figures.{figure}.{series} missing or not a number"));
    assert!(x.is_finite() && x > 0.0, "figures.{figure}.{series} = {x}");
    x
}

/// Every number anywhere under `v` is finite and positive.
fn all_positive(v: &Value, path: &str) {
    match v {
        Value::Number(n) => {
            let x = n.as_f64().unwrap();
            assert!(x.is_finite() && x > 0.0, "{path} = {x}");
        }
        Value::Object(m) => {
            for (k, x) in m {
                all_positive(x, &format!("{path}.{k}"));
            }
        }
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                all_positive(x, &format!("{path}[{i}]"));
            }
        }
        _ => {}
    }
}

fn assert_png(p: &Path) {
    let b = std::fs::read(p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    assert!(b.len() > 1000, "{} is only {} bytes", p.display(), b.len());
    assert_eq!(
        &b[..8],
        b"\x89PNG\r\n\x1a\n",
        "{} is not a PNG",
        p.display()
    );
}

#[test]
fn quick_bench_writes_json_tables_and_plots() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = scratch("quick");
    let json_path = dir.join("bench.json");
    let plot_dir = dir.join("plots");
    let plots = matplotlib_available();
    let mut cmd = memchan();
    cmd.args(["bench", "--quick", "--json"]).arg(&json_path);
    if plots {
        cmd.arg("--plot").arg(&plot_dir);
    } else {
        eprintln!("plot part skipped: python3 cannot import matplotlib");
    }
    let out = cmd.output().expect("running memchan");
    check(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);

    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();

    // The required figures, memchan and references.
    let limit = num(&v, "latency_8b_one_way_ns", "cacheline_limit");
    let tcp = num(&v, "latency_8b_one_way_ns", "tcp_loopback");
    num(&v, "latency_8b_one_way_ns", "memchan");
    let memcpy = num(&v, "bandwidth_1mib_gbps", "memcpy");
    num(&v, "bandwidth_1mib_gbps", "memchan");
    num(&v, "overhead_32b_ns", "memchan");
    num(&v, "overhead_32b_ns", "local_store_fence");
    num(&v, "ack_ns", "memchan");
    num(&v, "lock_acquire_release_ns", "memchan");
    num(&v, "barrier_ns", "memchan");
    num(&v, "notify_wake_ns", "memchan");
    num(&v, "q_ratio", "memchan");
    num(&v, "flop_ns", "linpack_100");
    // p99s come with the medians.
    num(&v, "latency_8b_one_way_ns_p99", "cacheline_limit");
    num(&v, "latency_8b_one_way_ns_p99", "memchan");
    // The full sweep.
    for size in [
        "8", "64", "512", "4096", "32768", "262144", "1048576", "4194304",
    ] {
        num(
            &v["figures"]["bandwidth_sweep_gbps"].clone().into_figures(),
            size,
            "memcpy",
        );
        num(
            &v["figures"]["bandwidth_sweep_gbps"].clone().into_figures(),
            size,
            "memchan",
        );
    }
    // Peers, when present, are numbers too (absent when not installed).
    for (fig, peer) in [
        ("latency_8b_one_way_ns", "mpi"),
        ("latency_8b_one_way_ns", "oshmem"),
        ("bandwidth_1mib_gbps", "mpi"),
        ("ack_ns", "oshmem"),
    ] {
        if v["figures"][fig].get(peer).is_some() {
            num(&v, fig, peer);
        }
    }
    all_positive(&v["figures"], "figures");

    // Sane relations.
    assert!(
        (10.0..=10_000.0).contains(&limit),
        "cache-line limit {limit} ns"
    );
    assert!(
        (0.5..=500.0).contains(&memcpy),
        "memcpy 1 MiB {memcpy} GB/s"
    );
    assert!(
        tcp > limit,
        "tcp loopback {tcp} ns <= cache-line limit {limit} ns"
    );

    // Machine description.
    let m = &v["machine"];
    assert!(!m["cpu_model"].as_str().unwrap_or("").is_empty());
    assert_eq!(m["cores_used"].as_array().map(|a| a.len()), Some(2));
    assert!(m["date"].as_str().unwrap_or("").starts_with("20"));

    // Tables: titles with units, and the verdicts.
    for needle in [
        "[latency_8b_one_way_ns]",
        "median (ns)",
        "median (GB/s)",
        "[bandwidth_sweep_gbps]",
        "[q_ratio]",
        "== targets",
    ] {
        assert!(
            stdout.contains(needle),
            "stdout lacks {needle:?}:\n{stdout}"
        );
    }

    if plots {
        for f in ["bandwidth.png", "latency_hist.png", "latency_cdf.png"] {
            assert_png(&plot_dir.join(f));
        }
        assert!(plot_dir.join("bench_data.json").is_file());
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Helper so sweep entries can be checked with `num`: wraps an object as
/// {"figures": object}.
trait IntoFigures {
    fn into_figures(self) -> Value;
}

impl IntoFigures for Value {
    fn into_figures(self) -> Value {
        serde_json::json!({ "figures": self })
    }
}

#[test]
fn without_open_mpi_the_peers_are_skipped() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = scratch("nompi");
    let json_path = dir.join("bench.json");
    // An empty PATH: no mpicc, no oshcc (the workers are started by absolute path).
    let out = memchan()
        .args(["bench", "--quick", "--json"])
        .arg(&json_path)
        .env("PATH", &dir)
        .output()
        .expect("running memchan");
    check(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("Open MPI not installed: peers skipped (run scripts/setup.sh)"),
        "stderr: {stderr}"
    );
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    assert!(v["figures"]["latency_8b_one_way_ns"].get("mpi").is_none());
    assert!(v["figures"]["latency_8b_one_way_ns"]
        .get("oshmem")
        .is_none());
    num(&v, "latency_8b_one_way_ns", "cacheline_limit");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn plot_without_matplotlib_is_a_clear_error() {
    let dir = scratch("nopy");
    // A python3 that cannot import anything.
    let fake = dir.join("python3");
    std::fs::write(
        &fake,
        "#!/bin/sh\necho 'ModuleNotFoundError: No module named matplotlib' >&2\nexit 1\n",
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let out = memchan()
        .args(["bench", "--quick", "--no-peers", "--plot"])
        .arg(dir.join("plots"))
        .env("PATH", &dir)
        .output()
        .expect("running memchan");
    assert!(!out.status.success(), "expected failure");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("matplotlib"), "stderr: {stderr}");
    assert!(stderr.contains("scripts/setup.sh"), "stderr: {stderr}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn help_explains_the_flags() {
    let out = memchan()
        .args(["bench", "--help"])
        .output()
        .expect("running memchan");
    check(&out);
    let s = String::from_utf8_lossy(&out.stdout);
    for flag in [
        "--rounds",
        "--iters",
        "--quick",
        "--json",
        "--plot",
        "--cpus",
        "--no-peers",
        "--peers-once",
    ] {
        assert!(s.contains(flag), "--help lacks {flag}:\n{s}");
    }
}

#[test]
fn bad_cpus_are_rejected() {
    let out = memchan()
        .args(["bench", "--quick", "--cpus", "0"])
        .output()
        .expect("running memchan");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--cpus"));
}
