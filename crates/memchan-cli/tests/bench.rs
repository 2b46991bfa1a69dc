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

fn on_path(tool: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
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

/// The bench's target for figure `key`.
fn target<'a>(v: &'a Value, key: &str) -> &'a Value {
    v["targets"]
        .as_array()
        .and_then(|a| a.iter().find(|t| t["figure"] == key))
        .unwrap_or_else(|| panic!("no target for {key}: {}", v["targets"]))
}

/// Every target of the bench as (figure, subject, reference).
fn target_triples(v: &Value) -> Vec<(String, String, String)> {
    v["targets"]
        .as_array()
        .expect("targets")
        .iter()
        .map(|t| {
            let f = |k: &str| t[k].as_str().unwrap_or("?").to_string();
            (f("figure"), f("subject"), f("reference"))
        })
        .collect()
}

/// The target for `key` is <= 1x OSHMEM, and where OSHMEM ran its verdict is the
/// ratio's.
fn at_most_oshmem<'a>(v: &'a Value, key: &str) -> &'a Value {
    let t = target(v, key);
    assert_eq!(t["target"], "<= 1x", "{t}");
    assert_eq!(t["reference"], "oshmem", "{t}");
    if v["figures"][key].get("oshmem").is_some() {
        num(v, key, "oshmem");
        let r = v["ratios"][key]["memchan_vs_oshmem"]
            .as_f64()
            .unwrap_or_else(|| panic!("no ratio for {key}"));
        assert!(t["met"].as_bool() == Some(r <= 1.0), "{t} vs ratio {r}");
    }
    t
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
    let report_dir = dir.join("results");
    let readme = dir.join("README.md");
    std::fs::write(&readme, README_WITH_MARKERS).unwrap();
    let plots = matplotlib_available();
    let mut cmd = memchan();
    cmd.args(["bench", "--quick", "--json"]).arg(&json_path);
    cmd.arg("--report")
        .arg(&report_dir)
        .arg("--readme")
        .arg(&readme);
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
    // The barrier of 8 and 64 nodes on one host, each with a <= 1x target against
    // OSHMEM at as many PEs (met or not is the bench's verdict, not this test's).
    for key in ["barrier_8_nodes_ns", "barrier_64_nodes_ns"] {
        num(&v, key, "memchan");
        num(&v, &format!("{key}_p99"), "memchan");
        let t = at_most_oshmem(&v, key);
        assert_eq!(t["subject"], "memchan", "{t}");
    }
    // Remote read and fetch-add (and their cross-core variants), each with a <= 1x
    // target against OSHMEM measured the same way.
    for key in [
        "get_8b_ns",
        "get_8b_xcore_ns",
        "atomic_fetch_add_ns",
        "atomic_fetch_add_xcore_ns",
    ] {
        num(&v, key, "memchan");
        at_most_oshmem(&v, key);
        assert!(stdout.contains(&format!("[{key}]")), "stdout lacks [{key}]");
    }
    // The IP level (TCP over memchan ip against TCP over a veth), where it can run.
    // SAFETY: geteuid(2) has no preconditions.
    let ip_can_run = unsafe { libc::geteuid() } == 0 && Path::new("/dev/net/tun").exists();
    if ip_can_run {
        for (key, want) in [
            ("ip_latency_8b_us", "<= 1.5x"),
            ("ip_bandwidth_gbps", ">= 0.7x"),
        ] {
            num(&v, key, "memchan_ip");
            num(&v, key, "tcp_veth");
            let t = target(&v, key);
            assert_eq!(t["target"], want, "{t}");
            assert_eq!(
                (&t["subject"], &t["reference"]),
                (&"memchan_ip".into(), &"tcp_veth".into())
            );
            let r = v["ratios"][key]["memchan_ip_vs_tcp_veth"]
                .as_f64()
                .expect("ip ratio");
            let met = if key == "ip_latency_8b_us" {
                r <= 1.5
            } else {
                r >= 0.7
            };
            assert_eq!(t["met"].as_bool(), Some(met), "{t} vs ratio {r}");
        }
        assert!(stdout.contains("[ip_latency_8b_us]") && stdout.contains("[ip_bandwidth_gbps]"));
    } else {
        assert!(
            v["ip"]["skipped"].is_string(),
            "no reason for skipping the IP level"
        );
    }
    num(&v, "notify_wake_ns", "memchan");
    // The OpenSHMEM level: the same C program built with memchan's and Open MPI's
    // oshcc, each figure with both sides and a target whose verdict is the ratio's.
    // Skipped (with the reason in the JSON) only where Open MPI's oshcc is absent.
    let ompi_oshcc = Command::new("oshcc")
        .arg("-showme")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("oshmem"));
    if ompi_oshcc {
        // The 2-node barrier's peer ran beside memchan's, taking turns: both have
        // samples and the peer's run is on record, with no failure noted.
        num(&v, "barrier_ns", "oshmem");
        let runs = v["peer_runs"].as_array().expect("peer_runs");
        assert!(
            runs.iter().any(|r| r["program"] == "shmem_barrier"),
            "no shmem_barrier run in {runs:?}"
        );
        let notes = v["notes"].to_string();
        assert!(!notes.contains("peer shmem_barrier failed"), "{notes}");
        for (key, want) in [
            ("shmem_put_8b_ns", "<= 0.5x"),
            ("shmem_get_8b_ns", "<= 1x"),
            ("shmem_fadd_ns", "<= 1x"),
            ("shmem_barrier_ns", "<= 0.5x"),
            ("shmem_put_1mib_gbps", ">= 1x"),
        ] {
            let m = num(&v, key, "memchan");
            let o = num(&v, key, "oshmem");
            let t = target(&v, key);
            assert_eq!(t["target"], want, "{t}");
            assert_eq!(
                (&t["subject"], &t["reference"]),
                (&"memchan".into(), &"oshmem".into())
            );
            let r = v["ratios"][key]["memchan_vs_oshmem"]
                .as_f64()
                .unwrap_or_else(|| panic!("no ratio for {key}"));
            assert!(
                (r - m / o).abs() <= 1e-9 * r.abs(),
                "{key}: ratio {r}, {m} / {o}"
            );
            let bound: f64 = want[3..want.len() - 1].parse().unwrap();
            let met = if want.starts_with("<=") {
                r <= bound
            } else {
                r >= bound
            };
            assert_eq!(t["met"].as_bool(), Some(met), "{t} vs ratio {r}");
            assert!(stdout.contains(&format!("[{key}]")), "stdout lacks [{key}]");
        }
    } else {
        assert!(
            v["shmem"]["skipped"].is_string(),
            "no reason for skipping the OpenSHMEM level"
        );
    }
    // The global clock's measured bound on both transports (never 0: a read costs).
    for s in ["shm", "hub"] {
        num(&v, "clock_bound_ns", s);
        num(&v, "clock_bound_ns_p99", s);
    }
    assert!(stdout.contains("[clock_bound_ns]"), "{stdout}");
    // Strided deposit per stride against the local strided copy, and put with signal.
    for stride in ["1", "2", "4", "8", "16", "32", "64"] {
        let sweep = v["figures"]["strided_gbps"].clone().into_figures();
        num(&sweep, stride, "memchan");
        num(&sweep, stride, "local_copy");
        let t = target(&v, &format!("strided_gbps_s{stride}"));
        assert_eq!(t["target"], ">= 0.8x", "{t}");
        assert_eq!(t["reference"], "local_copy", "{t}");
    }
    num(&v, "put_signal_ns", "memchan");
    // Message passing, both modes, with a target and verdict for each (issue 13).
    for key in ["mp_latency_8b_ns", "mp_bandwidth_1mib_gbps"] {
        num(&v, key, "memchan_postal");
        num(&v, key, "memchan_zero_copy");
    }
    // The raw reference of the message latency, measured by the same pairs; beside
    // Open MPI too, whose ratio is printed but no longer judged (issue 34).
    num(&v, "mp_latency_8b_vs_raw_ns", "memchan_raw");
    num(&v, "mp_latency_8b_ns", "memchan_raw");
    let targets = target_triples(&v);
    assert!(
        !targets.iter().any(|t| t.0 == "mp_latency_8b_ns"),
        "the message latency has no target against Open MPI: {targets:?}"
    );
    assert_eq!(target(&v, "mp_latency_8b_vs_raw_ns")["target"], "<= 1.3x");
    if v["figures"]["latency_8b_one_way_ns"].get("mpi").is_some() {
        for s in ["memchan_postal", "memchan_zero_copy"] {
            let line = format!("{s} / mpi: ");
            assert!(stdout.contains(&line), "stdout lacks {line:?}");
        }
    }
    for (key, subject, reference) in [
        ("mp_latency_8b_vs_raw_ns", "memchan_postal", "memchan_raw"),
        (
            "mp_latency_8b_vs_raw_ns",
            "memchan_zero_copy",
            "memchan_raw",
        ),
        ("mp_bandwidth_1mib_gbps", "memchan_postal", "mpi"),
        (
            "mp_bandwidth_1mib_vs_memcpy_gbps",
            "memchan_zero_copy",
            "memcpy",
        ),
    ] {
        let want = (key.into(), subject.into(), reference.into());
        assert!(targets.contains(&want), "no target {want:?} in {targets:?}");
        // Its ratio per round, both sides' medians of that round (the reference from
        // another figure for Open MPI and memcpy): one round, so the pooled ratio.
        let t = v["targets"]
            .as_array()
            .and_then(|a| {
                a.iter()
                    .find(|t| t["figure"] == key && t["subject"] == subject)
            })
            .expect("found above");
        if let Some(r) = t["ratio"].as_f64() {
            let rounds = t["per_round_ratios"].as_array().expect("per_round_ratios");
            assert_eq!(rounds.len(), 1, "{t}");
            let r1 = rounds[0].as_f64().expect("a number");
            assert!((r1 - r).abs() <= 1e-9 * r.abs().max(1.0), "{t}");
            // Judged on the pooled medians, with one round.
            assert_eq!(t["pooled_ratio"].as_f64(), Some(r), "{t}");
        }
    }
    // UCX (ucx_perftest tag matching over shared memory), when installed: a figure in
    // both message-passing tables and its own <= 0.6x target table for latency.
    if on_path("ucx_perftest") {
        num(&v, "mp_latency_8b_ns", "ucx");
        num(&v, "mp_bandwidth_1mib_gbps", "ucx");
        for subject in ["memchan_postal", "memchan_zero_copy"] {
            let want = (
                "mp_latency_8b_vs_ucx_ns".into(),
                subject.into(),
                "ucx".into(),
            );
            assert!(targets.contains(&want), "no target {want:?} in {targets:?}");
        }
        let t = target(&v, "mp_latency_8b_vs_ucx_ns");
        assert_eq!(t["target"], "<= 0.6x", "{t}");
        assert!(stdout.contains("[mp_latency_8b_vs_ucx_ns]"), "{stdout}");
        assert!(
            v["machine"]["peer_versions"]["ucx"].is_string(),
            "{}",
            v["machine"]
        );
    } else {
        eprintln!("ucx part skipped: ucx_perftest not installed");
    }
    num(&v, "q_ratio", "memchan");
    num(&v, "flop_ns", "linpack_100");
    // p99s come with the medians.
    num(&v, "latency_8b_one_way_ns_p99", "cacheline_limit");
    num(&v, "latency_8b_one_way_ns_p99", "memchan");
    // The full sweep.
    let sweep = v["figures"]["bandwidth_sweep_gbps"].clone().into_figures();
    for size in [
        "8", "64", "512", "4096", "32768", "262144", "1048576", "4194304",
    ] {
        num(&sweep, size, "memcpy");
        num(&sweep, size, "memchan");
    }
    // Peers, when present, are numbers too (absent when not installed).
    for (fig, peer) in [
        ("latency_8b_one_way_ns", "mpi"),
        ("latency_8b_one_way_ns", "oshmem"),
        ("bandwidth_1mib_gbps", "mpi"),
        ("ack_ns", "oshmem"),
        ("mp_latency_8b_ns", "mpi"),
        ("mp_bandwidth_1mib_gbps", "mpi"),
    ] {
        if v["figures"][fig].get(peer).is_some() {
            num(&v, fig, peer);
        }
    }
    all_positive(&v["figures"], "figures");

    // Units, not speed: each bound is one that a slow or busy machine cannot break
    // (a latency only grows under load, a bandwidth only shrinks), so crossing it
    // means a unit or a measurement is wrong (ns taken for µs, bytes for GB). How
    // the figures relate to each other (tcp above the cache-line limit, memchan
    // against its references) is the bench's own table and met / NOT MET verdict,
    // not this test's: CI shares two busy cores.
    assert!(limit >= 10.0, "cache-line limit {limit} ns");
    assert!(tcp >= 10.0, "tcp loopback {tcp} ns");
    assert!(memcpy <= 500.0, "memcpy 1 MiB {memcpy} GB/s");

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
        "[barrier_8_nodes_ns]",
        "[barrier_64_nodes_ns]",
        "[strided_gbps_s64]",
        "[put_signal_ns]",
        "== targets",
    ] {
        assert!(
            stdout.contains(needle),
            "stdout lacks {needle:?}:\n{stdout}"
        );
    }

    if plots {
        for f in [
            "bandwidth.png",
            "latency_hist.png",
            "latency_cdf.png",
            "levels.png",
        ] {
            assert_png(&plot_dir.join(f));
        }
        // The per-level plot's data: message passing both modes at every size, and
        // the IP level's where it ran.
        let data: Value = serde_json::from_str(
            &std::fs::read_to_string(plot_dir.join("bench_data.json")).unwrap(),
        )
        .unwrap();
        let lv = &data["levels"];
        let mut series = vec![
            ("raw", "memchan"),
            ("message_passing", "memchan_postal"),
            ("message_passing", "memchan_zero_copy"),
        ];
        if ip_can_run {
            series.extend([("ip", "memchan_ip"), ("ip", "tcp_veth")]);
        }
        for (level, s) in series {
            let col = lv[level][s]
                .as_array()
                .unwrap_or_else(|| panic!("{level}.{s}: {lv}"));
            assert_eq!(col.len(), 8, "{level}.{s}: {lv}");
            assert!(
                col.iter().all(|x| x.as_f64().is_some_and(|x| x > 0.0)),
                "{level}.{s}: {lv}"
            );
        }
    }
    check_report(&v, &stdout, &report_dir, plots);
    check_readme(&readme);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A README with the verdict block's markers, as the docs keep it.
const README_WITH_MARKERS: &str = "# memchan\n\nIntro.\n\n<!-- verdicts:begin -->\nstale verdicts\n<!-- verdicts:end -->\n\nThe rest.\n";

/// `--report DIR`: latest.json parses, carries the run's facts and every target, and
/// agrees with the `--json` document `v`; latest.md names every target with its
/// verdict, holds the printed tables and shows the plots copied beside it.
fn check_report(v: &Value, stdout: &str, dir: &Path, plots: bool) {
    let latest: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("latest.json")).unwrap())
            .expect("latest.json parses");
    let r = &latest["report"];
    for key in ["commit", "date"] {
        assert!(
            r[key].as_str().is_some_and(|s| !s.is_empty()),
            "report.{key}: {r}"
        );
    }
    assert_eq!(r["rounds"], v["machine"]["rounds"], "{r}");
    for key in ["cpu_model", "kernel"] {
        assert!(
            r["machine"][key].as_str().is_some(),
            "report.machine.{key}: {r}"
        );
    }
    assert!(
        r["machine"]["logical_cpus"].as_u64().is_some_and(|n| n > 0),
        "{r}"
    );
    // The machine's state, from the cache-line ping-pong and memcpy this run measured.
    let state = &r["machine"]["state"];
    assert!(
        matches!(state["state"].as_str(), Some("fast" | "slow" | "mixed")),
        "report.machine.state: {state}"
    );
    assert_eq!(
        state, &v["machine"]["state"],
        "the report's state is the run's"
    );
    for key in ["cacheline_limit_ns", "memcpy_gbps"] {
        assert!(
            state[key]["median"].as_f64().is_some_and(|x| x > 0.0),
            "report.machine.state.{key}: {state}"
        );
    }
    assert!(stdout.contains("machine state: "), "{stdout}");
    // The same document as --json, plus the summary.
    let mut rest = latest.clone();
    rest.as_object_mut().unwrap().remove("report");
    assert_eq!(
        rest["targets"], v["targets"],
        "latest.json's targets differ from --json's"
    );
    assert_eq!(
        rest["figures"], v["figures"],
        "latest.json's figures differ"
    );
    let targets = v["targets"].as_array().unwrap();
    let verdicts = r["verdicts"].as_array().expect("report.verdicts");
    assert_eq!(verdicts.len(), targets.len());
    let md = std::fs::read_to_string(dir.join("latest.md")).unwrap();
    for (t, x) in targets.iter().zip(verdicts) {
        assert_eq!(x["figure"], t["figure"]);
        assert_eq!(x["judged_ratio"], t["ratio"], "{x} vs {t}");
        assert_eq!(x["pooled_ratio"], t["pooled_ratio"], "{x} vs {t}");
        let word = match t["met"].as_bool() {
            Some(true) => "met",
            Some(false) => "NOT MET",
            None => "not measured",
        };
        assert_eq!(x["verdict"], word, "{x} vs {t}");
        let row = format!(
            "| `{}` | {} |",
            t["figure"].as_str().unwrap(),
            t["subject"].as_str().unwrap()
        );
        let line = md
            .lines()
            .find(|l| l.starts_with(&row))
            .unwrap_or_else(|| panic!("latest.md has no row {row}:\n{md}"));
        assert!(line.trim_end().ends_with(&format!("| {word} |")), "{line}");
    }
    assert!(
        md.contains(&format!("| commit | `{}`", r["commit"].as_str().unwrap())),
        "{md}"
    );
    assert!(md.contains("| machine state | "), "{md}");
    let first_table = stdout.lines().find(|l| l.starts_with("== ")).unwrap();
    assert!(md.contains(first_table), "latest.md lacks the tables");
    let listed: Vec<&str> = r["plots"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    if plots {
        assert!(!listed.is_empty(), "{r}");
    }
    for p in listed {
        assert_png(&dir.join(p));
        assert!(
            md.contains(&format!("![{p}]({p})")),
            "latest.md does not show {p}"
        );
    }
}

/// `--readme`: only the lines between the markers changed, into a verdict table.
fn check_readme(readme: &Path) {
    let text = std::fs::read_to_string(readme).unwrap();
    let (head, _) = README_WITH_MARKERS.split_once("stale verdicts\n").unwrap();
    let tail = "<!-- verdicts:end -->\n\nThe rest.\n";
    assert!(text.starts_with(head) && text.ends_with(tail), "{text}");
    assert!(!text.contains("stale verdicts"), "{text}");
    assert!(text.contains("](results/latest.md)"), "{text}");
    assert!(
        text.contains("| figure | target | judged ratio |"),
        "{text}"
    );
    assert!(text.contains("Machine state "), "{text}");
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
    let why = v["shmem"]["skipped"].as_str().unwrap_or_default();
    assert!(why.contains("oshcc not installed"), "shmem: {}", v["shmem"]);
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
        "--hosts",
        "--scale",
        "--nodes",
        "--only",
        "--report",
        "--readme",
        "--readme-only",
    ] {
        assert!(s.contains(flag), "--help lacks {flag}:\n{s}");
    }
}

#[test]
fn readme_only_regenerates_the_block_from_the_report_without_measuring() {
    let dir = scratch("readme-only");
    let report = dir.join("results");
    std::fs::create_dir_all(&report).unwrap();
    let latest = serde_json::json!({
        "report": {
            "rounds": 5,
            "machine": { "cpu_model": "Some CPU" },
            "verdicts": [{
                "figure": "ack_ns", "subject": "memchan", "reference": "oshmem",
                "target": "<= 1x", "judged_ratio": 0.5, "pooled_ratio": 0.6,
                "rounds": 5, "spread": [0.4, 0.7], "verdict": "met",
            }],
        },
    });
    std::fs::write(report.join("latest.json"), latest.to_string()).unwrap();
    let readme = dir.join("README.md");
    std::fs::write(&readme, README_WITH_MARKERS).unwrap();
    let run = |file: &Path| {
        let started = std::time::Instant::now();
        let out = memchan()
            .args(["bench", "--readme-only", "--report"])
            .arg(&report)
            .arg("--readme")
            .arg(file)
            .output()
            .expect("running memchan");
        check(&out);
        assert!(
            started.elapsed() < std::time::Duration::from_secs(5),
            "it measured"
        );
        String::from_utf8_lossy(&out.stderr).into_owned()
    };
    run(&readme);
    let text = std::fs::read_to_string(&readme).unwrap();
    assert!(
        text.contains("1 of 1 targets met over 5 round(s) on Some CPU"),
        "{text}"
    );
    assert!(
        text.contains("| `ack_ns` memchan | <= 1x oshmem | 0.50x | 0.40-0.70x (5 rounds) | met |"),
        "{text}"
    );
    assert!(
        text.starts_with("# memchan\n\nIntro.\n\n<!-- verdicts:begin -->\n"),
        "{text}"
    );
    assert!(
        text.ends_with("<!-- verdicts:end -->\n\nThe rest.\n"),
        "{text}"
    );
    // Without the markers: a warning, and the file as it was.
    let plain = dir.join("PLAIN.md");
    std::fs::write(&plain, "# no markers\n").unwrap();
    let err = run(&plain);
    assert!(err.contains("no verdict block"), "{err}");
    assert_eq!(std::fs::read_to_string(&plain).unwrap(), "# no markers\n");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn only_runs_the_chosen_levels() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = scratch("only");
    let json_path = dir.join("bench.json");
    let out = memchan()
        .args(["bench", "--quick", "--no-peers", "--only", "mp", "--json"])
        .arg(&json_path)
        .output()
        .expect("running memchan");
    check(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    // Message passing and its targets, with the memcpy reference it needs...
    assert!(stdout.contains("[mp_latency_8b_ns]"), "{stdout}");
    assert!(stdout.contains("== targets"), "{stdout}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();
    num(&v, "mp_latency_8b_ns", "memchan_postal");
    num(&v, "mp_latency_8b_vs_raw_ns", "memchan_raw");
    num(&v, "mp_bandwidth_1mib_vs_memcpy_gbps", "memcpy");
    assert_eq!(
        v["machine"]["only"],
        serde_json::json!(["mp"]),
        "{}",
        v["machine"]
    );
    // ...and nothing of the other levels.
    for absent in [
        "[latency_8b_one_way_ns]",
        "[bandwidth_sweep_gbps]",
        "[flop_ns]",
        "[ip_latency_8b_us]",
    ] {
        assert!(!stdout.contains(absent), "{absent} in:\n{stdout}");
    }
    assert!(!stdout.contains("OpenSHMEM level"), "{stdout}");
    assert!(
        v["figures"].get("latency_8b_one_way_ns").is_none(),
        "{}",
        v["figures"]
    );
    let _ = std::fs::remove_dir_all(&dir);

    // A level that does not exist, and --only beside --hosts: clear errors.
    for (args, says) in [
        (
            &["bench", "--only", "tcp"][..],
            "possible values: raw, mp, ip, shmem",
        ),
        (
            &["bench", "--only", "ip", "--hosts"][..],
            "cannot be used with '--hosts'",
        ),
    ] {
        let out = memchan().args(args).output().expect("running memchan");
        assert!(!out.status.success(), "{args:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(says), "{args:?}: {err}");
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

/// This run's files in /dev/shm of `--scale` clusters (their names start with
/// `memchan-scale-<coordinator pid>-`).
fn scale_shm_files(coordinator: u32) -> Vec<String> {
    let prefix = format!("memchan.memchan-scale-{coordinator}-");
    std::fs::read_dir("/dev/shm")
        .map(|d| {
            d.flatten()
                .filter_map(|e| e.file_name().to_str().map(String::from))
                .filter(|n| n.starts_with(&prefix))
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn scale_runs_four_nodes_reports_and_leaves_nothing_behind() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = scratch("scale");
    let json_path = dir.join("scale.json");
    let child = memchan()
        .args(["bench", "--scale", "--quick", "--nodes", "4,5", "--json"])
        .arg(&json_path)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("running memchan");
    let pid = child.id();
    let out = child.wait_with_output().expect("waiting for memchan");
    check(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("[scale]"), "stdout:\n{stdout}");
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();

    // One value per node count for every figure: finite, not negative; counts
    // are whole and at least what any node holds (stdin, stdout, stderr and the
    // control block; a main thread).
    // The same for both transports: one host's, and one hub's (`scale_hub_*`).
    for (n, prefix) in ["4", "5"]
        .into_iter()
        .flat_map(|n| ["scale", "scale_hub"].map(|p| (n, p)))
    {
        for f in [
            "membership_ms",
            "spawn_ms",
            "join_max_ms",
            "idle_cpu_pct",
            "idle_cpu_pct_per_node",
            "fds_per_process",
            "threads_per_process",
        ] {
            let f = format!("{prefix}_{f}");
            let x = v["figures"][&f][n]
                .as_f64()
                .unwrap_or_else(|| panic!("figures.{f}.{n} missing: {}", v["figures"]));
            assert!(x.is_finite() && x >= 0.0, "figures.{f}.{n} = {x}");
        }
        let fig = |f: &str| v["figures"][format!("{prefix}_{f}")][n].as_f64().unwrap();
        assert!(fig("membership_ms") > 0.0);
        let fds = fig("fds_per_process");
        assert!(fds >= 4.0 && fds.fract() == 0.0, "fds {fds}");
        let threads = fig("threads_per_process");
        assert!(
            threads >= 1.0 && threads.fract() == 0.0,
            "threads {threads}"
        );
    }
    // The hub ran and used some CPU (it sends every node time packets), counted in
    // its cluster's total.
    for n in ["4", "5"] {
        let hub = v["figures"]["scale_hub_hub_cpu_pct"][n].as_f64().unwrap();
        let total = v["figures"]["scale_hub_idle_cpu_pct"][n].as_f64().unwrap();
        assert!(hub > 0.0 && total >= hub, "hub {hub}, total {total}");
    }
    // Every node saw them all after the window, and all were reaped with their
    // files gone, by the bench's own account ...
    let runs = v["runs"].as_array().expect("runs");
    assert_eq!(runs.len(), 4, "{runs:?}");
    for (r, (n, via)) in runs.iter().zip([
        (4, "shared_memory"),
        (4, "hub"),
        (5, "shared_memory"),
        (5, "hub"),
    ]) {
        assert_eq!(r["nodes"], n, "{r}");
        assert_eq!(r["via"], via, "{r}");
        assert_eq!(r["members_after_window_min"], n, "{r}");
        assert_eq!(r["dropped_after_window"], 0, "{r}");
        assert_eq!(r["reaped"], n, "{r}");
        assert_eq!(r["shm_files_left"], 0, "{r}");
        assert!(r["shm_files"].as_u64().unwrap_or(0) >= 1, "{r}");
    }
    assert!(v["machine"]["loadavg_at_start"].is_array());
    // ... and by looking: no file and no process of its clusters remain.
    assert_eq!(scale_shm_files(pid), Vec::<String>::new());
    let left = processes_mentioning(&format!("memchan-scale-{pid}-"));
    assert!(left.is_empty(), "processes left: {left:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn scale_interrupted_kills_the_nodes_and_removes_their_files() {
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    // Long enough to be interrupted while its nodes are idle.
    let mut child = memchan()
        .args(["bench", "--scale", "--nodes", "6"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("running memchan");
    let pid = child.id();
    let marker = format!("memchan-scale-{pid}-");
    // Wait for all six nodes and their cluster's files.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while processes_mentioning(&marker).len() < 6 || scale_shm_files(pid).is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the nodes never appeared"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "the bench exited early"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // SIGINT to the coordinator alone (a terminal would signal the nodes too):
    // its watcher must stop them.
    let sent = Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(sent.success());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("the bench did not exit after SIGINT");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    let mut err = String::new();
    use std::io::Read as _;
    let _ = child.stderr.take().unwrap().read_to_string(&mut err);
    assert_eq!(
        status.code(),
        Some(130),
        "exit status {status}; stderr:\n{err}"
    );
    assert!(err.contains("stopping the nodes"), "stderr:\n{err}");
    // Killed nodes are reaped by init, not by the exited bench: wait for them.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while !processes_mentioning(&marker).is_empty() && std::time::Instant::now() < deadline {
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // The workers and the hubs on H (their clusters carry the marker too).
    let left = processes_mentioning(&marker);
    assert!(left.is_empty(), "processes left: {left:?}");
    assert_eq!(scale_shm_files(pid), Vec::<String>::new());
    assert!(!std::env::temp_dir()
        .join(format!("memchan-bench-scale-{pid}"))
        .exists());
}

#[test]
fn scale_flags_are_checked() {
    let out = memchan()
        .args(["bench", "--nodes", "4"])
        .output()
        .expect("running memchan");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--scale"));
    let out = memchan()
        .args(["bench", "--scale", "--nodes", "300"])
        .output()
        .expect("running memchan");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("300") && err.contains("256"), "{err}");
}

/// Network namespaces that exist now.
fn namespaces() -> Vec<String> {
    let mut v: Vec<String> = ["/run/netns", "/var/run/netns"]
        .iter()
        .filter_map(|d| std::fs::read_dir(d).ok())
        .flat_map(|d| d.flatten())
        .filter_map(|e| e.file_name().to_str().map(String::from))
        .collect();
    v.sort();
    v.dedup();
    v
}

/// `memchan bench --hosts` needs root (network namespaces) and iproute2.
fn hosts_possible() -> bool {
    let root = std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("Uid:"))
                .and_then(|l| l.split_whitespace().nth(2).map(|e| e == "0"))
        })
        .unwrap_or(false);
    let ip = Command::new("ip")
        .args(["netns", "list"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !(root && ip) {
        eprintln!("--hosts test skipped: needs root and iproute2 (root: {root}, ip: {ip})");
    }
    root && ip
}

/// Processes whose command line mentions `needle`.
fn processes_mentioning(needle: &str) -> Vec<String> {
    let mut found = Vec::new();
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .filter(|s| s.bytes().all(|b| b.is_ascii_digit()))
        else {
            continue;
        };
        if pid == std::process::id().to_string() {
            continue;
        }
        if let Ok(c) = std::fs::read(e.path().join("cmdline")) {
            let c = String::from_utf8_lossy(&c).replace('\0', " ");
            if c.contains(needle) {
                found.push(format!("{pid}: {c}"));
            }
        }
    }
    found
}

#[test]
fn hosts_quick_measures_over_a_veth_and_removes_the_namespaces() {
    if !hosts_possible() {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let dir = scratch("hosts");
    let json_path = dir.join("hosts.json");
    let before = namespaces();
    let out = memchan()
        .args(["bench", "--hosts", "--quick", "--json"])
        .arg(&json_path)
        .output()
        .expect("running memchan");
    check(&out);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let v: Value = serde_json::from_str(&std::fs::read_to_string(&json_path).unwrap()).unwrap();

    // Every series is there, a number or null.
    let lat = &v["figures"]["net_latency_8b_one_way_us"];
    for s in [
        "memchan",
        "memchan_keyed",
        "tcp_raw",
        "memchan_hub_a",
        "memchan_spin",
        "memchan_keyed_spin",
        "tcp_raw_spin",
        "memchan_hub_a_spin",
        "mpi_tcp",
    ] {
        let x = lat
            .get(s)
            .unwrap_or_else(|| panic!("latency series {s} missing: {lat}"));
        assert!(
            x.is_null() || x.as_f64().is_some_and(|x| x.is_finite() && x > 0.0),
            "net_latency_8b_one_way_us.{s} = {x}"
        );
    }
    let bw = &v["figures"]["net_bandwidth_1mib_gbps"];
    for s in ["memchan", "memchan_keyed", "tcp_raw", "tcp_raw_64k"] {
        let x = bw
            .get(s)
            .unwrap_or_else(|| panic!("bandwidth series {s} missing: {bw}"));
        assert!(
            x.is_null() || x.as_f64().is_some_and(|x| x.is_finite() && x > 0.0),
            "net_bandwidth_1mib_gbps.{s} = {x}"
        );
    }

    // Remote read and fetch-add across the veth, against one raw TCP round trip.
    for key in ["net_get_8b_us", "net_atomic_fetch_add_us"] {
        let f = &v["figures"][key];
        for s in ["memchan_rma", "tcp_raw_round_trip"] {
            let x = f.get(s).unwrap_or_else(|| panic!("{key}.{s} missing: {f}"));
            assert!(
                x.is_null() || x.as_f64().is_some_and(|x| x.is_finite() && x > 0.0),
                "{key}.{s} = {x}"
            );
        }
        assert!(stdout.contains(&format!("[{key}]")), "stdout lacks [{key}]");
    }

    // The raw TCP references were measured (positive and finite, checked above).
    // Only bounds that load cannot break are asserted (µs, not ns: a one-way trip
    // over a veth takes more than half a microsecond however fast the machine); how
    // busy-polling compares with blocking is the bench's table, not this test's.
    let tcp = lat["tcp_raw"].as_f64().expect("tcp_raw measured");
    let spin = lat["tcp_raw_spin"].as_f64().expect("tcp_raw_spin measured");
    for (name, x) in [("tcp_raw", tcp), ("tcp_raw_spin", spin)] {
        assert!(x > 0.5, "{name} one-way latency {x} us");
    }
    bw["tcp_raw"].as_f64().expect("tcp_raw bandwidth measured");
    // The global clock's bound through the hub across the veth.
    let bound = v["figures"]["clock_bound_ns"]["hub"].as_f64();
    assert!(
        bound.is_some_and(|b| b.is_finite() && b > 0.0),
        "clock_bound_ns.hub = {bound:?}"
    );
    assert!(stdout.contains("[clock_bound_ns]"), "{stdout}");
    // The barrier over four hosts beside MPI_Barrier on the same placement: both
    // series there (mpi_tcp null without Open MPI), information only, at --quick's size.
    let barrier = &v["figures"]["net_barrier_us"];
    num(&v, "net_barrier_us", "memchan");
    let m = &barrier["mpi_tcp"];
    assert!(
        m.is_null() || m.as_f64().is_some_and(|x| x > 0.0),
        "net_barrier_us.mpi_tcp = {m}"
    );
    assert_eq!(
        v["net_barrier"]["nodes"].as_u64(),
        Some(8),
        "{}",
        v["net_barrier"]
    );
    assert_eq!(
        v["net_barrier"]["hosts"].as_u64(),
        Some(4),
        "{}",
        v["net_barrier"]
    );
    assert!(stdout.contains("[net_barrier_us]"), "{stdout}");
    // The ordering point's flood: deliveries per second, open and keyed, and the
    // --quick size it ran at.
    let flood = &v["figures"]["net_ordering_deliveries_per_s"];
    for s in ["memchan", "memchan_keyed"] {
        let x = flood
            .get(s)
            .unwrap_or_else(|| panic!("flood series {s} missing: {flood}"));
        assert!(
            x.as_f64().is_some_and(|x| x.is_finite() && x > 0.0),
            "net_ordering_deliveries_per_s.{s} = {x}"
        );
    }
    assert_eq!(
        v["net_ordering"]["nodes"].as_u64(),
        Some(8),
        "{}",
        v["net_ordering"]
    );
    assert_eq!(v["net_ordering"]["hosts"].as_u64(), Some(4));
    assert!(
        stdout.contains("[net_ordering_deliveries_per_s]"),
        "{stdout}"
    );
    bw["tcp_raw_64k"]
        .as_f64()
        .expect("tcp_raw_64k bandwidth measured");
    assert!(
        v["figures"]["net_bandwidth_1mib_gbps_p99"]["tcp_raw_64k"]
            .as_f64()
            .is_some_and(|x| x > 0.0),
        "tcp_raw_64k p99 missing"
    );

    // The traffic really crossed the veth.
    let crossed = &v["hosts"]["veth_bytes_per_measurement"];
    for s in [
        "tcp_raw",
        "tcp_raw_spin",
        "tcp_raw_bandwidth",
        "tcp_raw_64k_bandwidth",
    ] {
        let b = crossed[s][0].as_u64().unwrap_or(0);
        assert!(b > 0, "no veth bytes recorded for {s}: {crossed}");
    }

    for needle in [
        "[net_latency_8b_one_way_us]",
        "[net_bandwidth_1mib_gbps]",
        "ratio vs tcp_raw",
        "== targets",
    ] {
        assert!(
            stdout.contains(needle),
            "stdout lacks {needle:?}:\n{stdout}"
        );
    }

    // Open and keyed side by side: every figure has a target for each, against the
    // same reference, and a table row and a targets line for each keyed series.
    let targets = target_triples(&v);
    for (figure, subject, reference) in [
        ("net_latency_8b_one_way_us", "memchan", "tcp_raw"),
        ("net_latency_8b_one_way_us", "memchan_keyed", "tcp_raw"),
        ("net_latency_8b_one_way_us", "memchan_spin", "tcp_raw_spin"),
        (
            "net_latency_8b_one_way_us",
            "memchan_keyed_spin",
            "tcp_raw_spin",
        ),
        ("net_bandwidth_1mib_gbps", "memchan", "tcp_raw"),
        ("net_bandwidth_1mib_gbps", "memchan_keyed", "tcp_raw"),
        ("net_get_8b_us", "memchan_rma", "tcp_raw_round_trip"),
        (
            "net_atomic_fetch_add_us",
            "memchan_rma",
            "tcp_raw_round_trip",
        ),
    ] {
        let want = (figure.into(), subject.into(), reference.into());
        assert!(targets.contains(&want), "no target {want:?} in {targets:?}");
    }
    // The message-passing and IP twins (issue 13): memchan-msg through the hub against
    // Open MPI over TCP, memchan ip through a hub against TCP over the veth.
    let mut want_targets = 8;
    for key in ["net_mp_latency_8b_us", "net_mp_bandwidth_1mib_gbps"] {
        num(&v, key, "memchan_postal");
        num(&v, key, "memchan_zero_copy");
        let m = &v["figures"][key]["mpi_tcp"];
        assert!(
            m.is_null() || m.as_f64().is_some_and(|x| x > 0.0),
            "{key}.mpi_tcp = {m}"
        );
        assert!(stdout.contains(&format!("[{key}]")), "stdout lacks [{key}]");
    }
    // Beside the messages, the floors they ride: a raw TCP socket and a raw memchan
    // write through the hub, busy-polling.
    num(&v, "net_mp_latency_8b_us", "tcp_raw_spin");
    num(&v, "net_mp_latency_8b_us", "memchan_spin");
    for (figure, subject) in [
        ("net_mp_latency_8b_us", "memchan_postal"),
        ("net_mp_latency_8b_us", "memchan_zero_copy"),
        ("net_mp_bandwidth_1mib_gbps", "memchan_postal"),
    ] {
        let want = (figure.into(), subject.into(), "mpi_tcp".into());
        assert!(targets.contains(&want), "no target {want:?} in {targets:?}");
        want_targets += 1;
    }
    // Two nodes of one host inside the cluster of two hosts, beside one host's raw
    // write (issue 35): both measured, the target named.
    num(&v, "net_domain_latency_8b_one_way_ns", "memchan_domain");
    num(&v, "net_domain_latency_8b_one_way_ns", "memchan_shm");
    let want = (
        "net_domain_latency_8b_one_way_ns".into(),
        "memchan_domain".into(),
        "memchan_shm".into(),
    );
    assert!(targets.contains(&want), "no target {want:?} in {targets:?}");
    want_targets += 1;
    for s in [
        "mp_memchan_postal",
        "mp_memchan_zero_copy",
        "mp_memchan_postal_bandwidth",
        "mp_memchan_zero_copy_bandwidth",
    ] {
        let b = crossed[s][0].as_u64().unwrap_or(0);
        assert!(b > 0, "no veth bytes recorded for {s}: {crossed}");
    }
    if Path::new("/dev/net/tun").exists() {
        for (key, want) in [
            ("net_ip_latency_8b_us", "<= 1.5x"),
            ("net_ip_bandwidth_gbps", ">= 0.7x"),
        ] {
            num(&v, key, "memchan_ip");
            num(&v, key, "tcp_veth");
            assert_eq!(target(&v, key)["target"], want);
            assert!(stdout.contains(&format!("[{key}]")), "stdout lacks [{key}]");
            want_targets += 1;
        }
        // What the latency target leaves beside the hub's own raw write.
        assert!(
            stdout.contains("crosses a TCP/IP stack twice"),
            "no floor note for the IP latency:\n{stdout}"
        );
    } else {
        assert!(v["net_ip"]["skipped"].is_string(), "no reason for skipping");
    }
    assert_eq!(targets.len(), want_targets, "{targets:?}");
    for s in ["memchan_keyed", "memchan_keyed_spin"] {
        let rows = stdout
            .lines()
            .filter(|l| l.trim_start().starts_with(&format!("{s} ")) && !l.contains(" / "))
            .count();
        // memchan_keyed: the blocking latency, the bandwidth and the flood tables.
        let want = if s == "memchan_keyed" { 3 } else { 1 };
        assert_eq!(rows, want, "{s} table rows:\n{stdout}");
        let target = stdout
            .lines()
            .skip_while(|l| !l.starts_with("== targets"))
            .any(|l| l.contains(&format!("{s} <= 1.15x")) || l.contains(&format!("{s} >= 0.9x")));
        assert!(target, "no targets line for {s}:\n{stdout}");
    }
    assert!(
        stdout.contains("memchan_keyed* a keyed cluster"),
        "{stdout}"
    );

    // The hub's own host: a third namespace, named in the report.
    assert!(stdout.contains("the hub's mcb"), "{stdout}");
    // The run's namespaces (two hosts of nodes, the hub's) are gone, and it left no
    // other mcb* one behind.
    let ns: Vec<String> = v["hosts"]["namespaces"]
        .as_array()
        .expect("hosts.namespaces")
        .iter()
        .map(|x| x.as_str().unwrap().to_string())
        .collect();
    assert_eq!(ns.len(), 3);
    assert_eq!(v["hosts"]["hub_namespace"].as_str(), Some(ns[2].as_str()));
    let after = namespaces();
    for n in &ns {
        assert!(n.starts_with("mcb"), "{n}");
        assert!(!after.contains(n), "namespace {n} still exists: {after:?}");
    }
    let new: Vec<&String> = after
        .iter()
        .filter(|n| n.starts_with("mcb") && !before.contains(n))
        .collect();
    assert!(new.is_empty(), "left behind: {new:?}");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn hosts_interrupted_kills_the_workers_and_removes_the_namespaces() {
    if !hosts_possible() {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    // Long enough to be interrupted in the middle of a measurement.
    let mut child = memchan()
        .args(["bench", "--hosts", "--rounds", "50", "--no-peers"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("running memchan");
    let pid = child.id();
    let ns_a = format!("mcb{pid}a");
    let ns_b = format!("mcb{pid}b");
    let ns_h = format!("mcb{pid}h");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !namespaces().contains(&ns_h) {
        assert!(
            std::time::Instant::now() < deadline,
            "the namespaces never appeared"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "the bench exited early"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    // Until a measurement is under way: a worker inside namespace A.
    let marker = format!("memchan-bench-hosts-{pid}");
    let in_a = || {
        Command::new("ip")
            .args(["netns", "pids", &ns_a])
            .output()
            .is_ok_and(|o| !o.stdout.trim_ascii().is_empty())
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    while !in_a() {
        assert!(
            std::time::Instant::now() < deadline,
            "no worker entered {ns_a}"
        );
        assert!(
            child.try_wait().unwrap().is_none(),
            "the bench exited early"
        );
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let sent = Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status()
        .expect("kill");
    assert!(sent.success());
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let status = loop {
        if let Some(s) = child.try_wait().unwrap() {
            break s;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("the bench did not exit after SIGINT");
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    };
    let mut err = String::new();
    use std::io::Read as _;
    let _ = child.stderr.take().unwrap().read_to_string(&mut err);
    assert_eq!(
        status.code(),
        Some(130),
        "exit status {status}; stderr:\n{err}"
    );
    let after = namespaces();
    assert!(
        !after.contains(&ns_a) && !after.contains(&ns_b) && !after.contains(&ns_h),
        "namespaces left: {after:?}"
    );
    // The workers and the hubs on H (their clusters carry the marker too).
    let left = processes_mentioning(&marker);
    assert!(left.is_empty(), "processes left: {left:?}");
    assert!(!std::env::temp_dir().join(&marker).exists());
}
