//! `--report DIR`: the run's report, `DIR/latest.md` and `DIR/latest.json`, replaced
//! (not appended) by every run, so that the repository keeps one current report and
//! its history is `git log DIR`; and `--readme FILE`: the verdict block of a README,
//! generated from `DIR/latest.json`.
//!
//! `latest.json` is the bench's `--json` document with one key more, `report`: the
//! commit, date, rounds and machine of the run, one entry per target (`verdicts`:
//! judged ratio, pooled ratio, the per-round spread, the verdict) and the plots copied
//! beside it. `latest.md` renders the same for a reader, followed by the tables the
//! bench printed. The README block sits between the lines [`BEGIN`] and [`END`]; only
//! what lies between them is rewritten.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};
use std::process::Command;

use anyhow::{Context, Result};
use serde_json::{json, Value};

use super::table::Spread;

/// The line that opens the README's verdict block.
pub const BEGIN: &str = "<!-- verdicts:begin -->";
/// The line that closes it.
pub const END: &str = "<!-- verdicts:end -->";
/// The report's JSON file in DIR.
pub const JSON_FILE: &str = "latest.json";
/// The report's Markdown file in DIR.
pub const MD_FILE: &str = "latest.md";

/// Writes `DIR/latest.json` and `DIR/latest.md` from the bench's JSON document `bench`
/// and its printed tables `text`, replacing the report there, and copies `plots` (the
/// PNGs `--plot` wrote) into `dir`. Plots of the previous report that this run did not
/// draw are removed, so nothing stale is left beside the new report.
///
/// # Errors
/// When DIR cannot be made, a plot cannot be copied or a file cannot be written.
pub fn write(dir: &Path, bench: &Value, text: &str, plots: &[PathBuf]) -> Result<()> {
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let old = read_json(&dir.join(JSON_FILE)).ok();
    let mut names = Vec::new();
    for p in plots
        .iter()
        .filter(|p| p.extension().is_some_and(|e| e == "png"))
    {
        let name = p.file_name().context("a plot without a file name")?;
        let to = dir.join(name);
        std::fs::copy(p, &to)
            .with_context(|| format!("copying {} to {}", p.display(), to.display()))?;
        names.push(name.to_string_lossy().into_owned());
    }
    let old_plots = old.as_ref().and_then(|o| o["report"]["plots"].as_array());
    for stale in old_plots.into_iter().flatten().filter_map(Value::as_str) {
        // Only a bare file name of a previous report is ours to remove.
        if !names.iter().any(|n| n == stale) && Path::new(stale).file_name() == Some(stale.as_ref())
        {
            let _ = std::fs::remove_file(dir.join(stale));
        }
    }
    let (commit, dirty) = commit(dir);
    let m = &bench["machine"];
    let report = json!({
        "commit": commit,
        "dirty": dirty,
        "date": m["date"],
        "rounds": m["rounds"],
        "machine": {
            "cpu_model": m["cpu_model"],
            "logical_cpus": m["logical_cpus"],
            "cores_used": m["cores_used"],
            "kernel": m["kernel"],
            "arch": m["arch"],
            "state": m["state"],
        },
        "verdicts": verdicts(bench),
        "plots": names,
    });
    let mut latest = bench.clone();
    let obj = latest
        .as_object_mut()
        .context("the bench's JSON document is not an object")?;
    obj.insert("report".into(), report);
    let json_text =
        serde_json::to_string_pretty(&latest).context("serialising the report's JSON")? + "\n";
    replace_file(&dir.join(JSON_FILE), &json_text)?;
    replace_file(&dir.join(MD_FILE), &markdown(&latest, text))?;
    eprintln!("wrote {} and {}", dir.join(MD_FILE).display(), JSON_FILE);
    Ok(())
}

/// Rewrites the verdict block of `readme` from `DIR/latest.json`. `Ok(false)` (and a
/// warning) when `readme` lacks the markers: it is then left as it was.
///
/// # Errors
/// When the report or the README cannot be read, or the README cannot be written.
pub fn update_readme(readme: &Path, dir: &Path) -> Result<bool> {
    let latest = read_json(&dir.join(JSON_FILE))?;
    let text =
        std::fs::read_to_string(readme).with_context(|| format!("reading {}", readme.display()))?;
    let block = readme_block(&latest, &link(readme, &dir.join(MD_FILE)));
    let Some(new) = replace_block(&text, &block) else {
        tracing::warn!(
            readme = %readme.display(),
            "no verdict block ({BEGIN} ... {END}, each once, in that order): left unchanged"
        );
        return Ok(false);
    };
    if new != text {
        replace_file(readme, &new)?;
    }
    eprintln!("updated the verdict block of {}", readme.display());
    Ok(true)
}

fn read_json(path: &Path) -> Result<Value> {
    let text =
        std::fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    serde_json::from_str(&text).with_context(|| format!("parsing {}", path.display()))
}

/// Writes `text` to `path` through a temporary file beside it, so that a reader (or
/// an interrupted run) never meets half a report.
fn replace_file(path: &Path, text: &str) -> Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = PathBuf::from(tmp);
    std::fs::write(&tmp, text).with_context(|| format!("writing {}", tmp.display()))?;
    std::fs::rename(&tmp, path).with_context(|| format!("replacing {}", path.display()))
}

/// The commit checked out where the bench runs (`git rev-parse HEAD`), "unknown"
/// outside a git work tree, and whether tracked files differ from it, the report's
/// own directory `dir` left out (the plots were copied into it just before).
fn commit(dir: &Path) -> (String, bool) {
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    match git(&["rev-parse", "HEAD"]) {
        Some(c) if !c.is_empty() => {
            let not_report = format!(":(exclude){}", dir.display());
            let dirty = git(&[
                "status",
                "--porcelain",
                "--untracked-files=no",
                "--",
                ":/",
                &not_report,
            ])
            .is_some_and(|s| !s.is_empty());
            (c, dirty)
        }
        _ => ("unknown".into(), false),
    }
}

/// One entry per target of the bench's JSON: what is judged against what, the ratio
/// judged (the median of the rounds' ratios over two rounds or more, else the pooled
/// one), the pooled medians' ratio, the rounds' spread and the verdict.
pub fn verdicts(bench: &Value) -> Vec<Value> {
    let targets = bench["targets"].as_array().map_or(&[][..], Vec::as_slice);
    targets
        .iter()
        .map(|t| {
            let rounds: Vec<f64> = t["per_round_ratios"]
                .as_array()
                .map_or(&[][..], Vec::as_slice)
                .iter()
                .filter_map(Value::as_f64)
                .collect();
            let spread = Spread::of(&rounds);
            json!({
                "figure": t["figure"],
                "subject": t["subject"],
                "reference": t["reference"],
                "target": t["target"],
                "judged_ratio": t["ratio"],
                "pooled_ratio": t["pooled_ratio"],
                "rounds": spread.map_or(0, |s| s.n),
                "spread": spread.map(|s| [s.lo, s.hi]),
                "verdict": verdict_word(&t["met"]),
            })
        })
        .collect()
}

fn verdict_word(met: &Value) -> &'static str {
    match met.as_bool() {
        Some(true) => "met",
        Some(false) => "NOT MET",
        None => "not measured",
    }
}

fn ratio_text(v: &Value) -> String {
    v.as_f64()
        .map_or_else(|| "-".into(), |x| format!("{x:.2}x"))
}

fn spread_text(v: &Value) -> String {
    match (v["spread"][0].as_f64(), v["spread"][1].as_f64()) {
        (Some(lo), Some(hi)) => {
            let n = v["rounds"].as_u64().unwrap_or(0);
            format!(
                "{lo:.2}-{hi:.2}x ({n} round{})",
                if n == 1 { "" } else { "s" }
            )
        }
        _ => "-".into(),
    }
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v[key].as_str().unwrap_or("-")
}

/// "AMD EPYC ... (2 logical CPUs), kernel 6.1.0, cores 0,1 used".
fn machine_text(m: &Value) -> String {
    let cores = m["cores_used"]
        .as_array()
        .map(|a| a.iter().map(Value::to_string).collect::<Vec<_>>().join(","))
        .unwrap_or_else(|| "?".into());
    format!(
        "{} ({} logical CPUs), kernel {}, cores {cores} used",
        str_of(m, "cpu_model"),
        m["logical_cpus"],
        str_of(m, "kernel")
    )
}

/// `latest.md`: the run's facts, the verdicts, the plots and the printed tables.
fn markdown(latest: &Value, text: &str) -> String {
    let r = &latest["report"];
    let mut o = String::new();
    let _ = writeln!(o, "# memchan bench: the current report\n");
    let _ = writeln!(
        o,
        "Written by `memchan bench --report DIR`, which replaces it on every run: the \
         history is `git log` of this directory. [{JSON_FILE}]({JSON_FILE}) holds the same \
         data (the bench's `--json` document, with this summary under `report`).\n"
    );
    let dirty = if r["dirty"].as_bool() == Some(true) {
        " (with uncommitted changes)"
    } else {
        ""
    };
    let _ = writeln!(o, "| | |\n|---|---|");
    let _ = writeln!(o, "| date | {} |", str_of(r, "date"));
    let _ = writeln!(o, "| commit | `{}`{dirty} |", str_of(r, "commit"));
    let _ = writeln!(o, "| machine | {} |", machine_text(&r["machine"]));
    let _ = writeln!(o, "| rounds | {} |", r["rounds"]);
    let _ = writeln!(
        o,
        "| machine state | {} |",
        super::state::describe(&r["machine"]["state"])
    );
    if let Some(l) = latest["machine"]["loadavg_at_start"].as_array() {
        let l: Vec<&str> = l.iter().filter_map(Value::as_str).collect();
        let _ = writeln!(o, "| load average at start | {} |", l.join(" "));
    }
    let _ = writeln!(o, "\n## Verdicts\n");
    let _ = writeln!(
        o,
        "Each target is judged on the median of the rounds' ratios (each round's two \
         medians, measured side by side) when two rounds or more have both, else on the \
         ratio of the pooled medians; the spread is the rounds' lowest and highest ratio. \
         They were judged in the machine state above: a fast state has a cache-line \
         ping-pong below {:.0} ns, a slow one above.\n",
        super::state::FAST_BELOW_NS
    );
    let _ = writeln!(
        o,
        "| figure | subject | target | judged ratio | pooled ratio | per-round spread | verdict |"
    );
    let _ = writeln!(o, "|---|---|---|---|---|---|---|");
    for v in r["verdicts"].as_array().into_iter().flatten() {
        let _ = writeln!(
            o,
            "| `{}` | {} | {} {} | {} | {} | {} | {} |",
            str_of(v, "figure"),
            str_of(v, "subject"),
            str_of(v, "target"),
            str_of(v, "reference"),
            ratio_text(&v["judged_ratio"]),
            ratio_text(&v["pooled_ratio"]),
            spread_text(v),
            str_of(v, "verdict"),
        );
    }
    let plots: Vec<&str> = r["plots"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .collect();
    let _ = writeln!(o, "\n## Plots\n");
    if plots.is_empty() {
        let _ = writeln!(
            o,
            "None in this run (the bench draws them with `--plot DIR`)."
        );
    }
    for p in plots {
        let _ = writeln!(o, "![{p}]({p})\n");
    }
    let _ = writeln!(o, "\n## Tables, as the bench printed them\n");
    let _ = writeln!(o, "```text\n{}```", text);
    o
}

/// The README's verdict block (without the marker lines): one row per target and a
/// link to the full report. It carries no commit and no date: the report does.
fn readme_block(latest: &Value, link: &str) -> String {
    let r = &latest["report"];
    let all = r["verdicts"].as_array().map_or(&[][..], Vec::as_slice);
    let met = all.iter().filter(|v| v["verdict"] == "met").count();
    let mut o = String::new();
    let _ = writeln!(
        o,
        "<!-- generated by `memchan bench --report DIR --readme FILE` from the report's \
         {JSON_FILE}: edit the bench, not this block -->"
    );
    let _ = writeln!(
        o,
        "{met} of {} targets met over {} round(s) on {} ([the full report]({link}): \
         machine, commit, figures and plots). Machine state {}.\n",
        all.len(),
        r["rounds"],
        str_of(&r["machine"], "cpu_model"),
        super::state::describe(&r["machine"]["state"]),
    );
    let _ = writeln!(
        o,
        "| figure | target | judged ratio | per-round spread | verdict |"
    );
    let _ = writeln!(o, "|---|---|---|---|---|");
    for v in all {
        let _ = writeln!(
            o,
            "| `{}` {} | {} {} | {} | {} | {} |",
            str_of(v, "figure"),
            str_of(v, "subject"),
            str_of(v, "target"),
            str_of(v, "reference"),
            ratio_text(&v["judged_ratio"]),
            spread_text(v),
            str_of(v, "verdict"),
        );
    }
    o
}

/// `report` as a link from `readme`'s directory: relative when both lie under the
/// current directory, else as given.
fn link(readme: &Path, report: &Path) -> String {
    let abs = |p: &Path| std::path::absolute(p).ok();
    let base = abs(readme).and_then(|p| p.parent().map(Path::to_path_buf));
    let (Some(base), Some(target)) = (base, abs(report)) else {
        return report.display().to_string();
    };
    // Walk up from the README's directory until the report lies below it.
    let mut up = String::new();
    let mut dir = base.as_path();
    loop {
        if let Ok(rest) = target.strip_prefix(dir) {
            return format!("{up}{}", rest.display());
        }
        match dir.parent() {
            Some(p) => {
                up.push_str("../");
                dir = p;
            }
            None => return report.display().to_string(),
        }
    }
}

/// `text` with what lies between its [`BEGIN`] and [`END`] lines replaced by `block`
/// (whole lines; `block` ends with a newline), or `None` unless each marker occurs
/// exactly once, `BEGIN` first.
fn replace_block(text: &str, block: &str) -> Option<String> {
    let once = |m: &str| {
        (text.matches(m).count() == 1)
            .then(|| text.find(m))
            .flatten()
    };
    let (b, e) = (once(BEGIN)?, once(END)?);
    if e < b {
        return None;
    }
    // The block starts on the line after BEGIN's and ends before END's line.
    let inner_start = text[b..].find('\n').map(|i| b + i + 1)?;
    let end_line = text[..e].rfind('\n').map_or(0, |i| i + 1);
    if inner_start > end_line {
        return None;
    }
    Some(format!(
        "{}{block}{}",
        &text[..inner_start],
        &text[end_line..]
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bench_json() -> Value {
        json!({
            "machine": {
                "cpu_model": "Test CPU",
                "logical_cpus": 2,
                "cores_used": [0, 1],
                "kernel": "6.1.0-test",
                "arch": "x86_64",
                "date": "2026-12-01T00:00:00Z",
                "rounds": 3,
            },
            "targets": [
                {
                    "figure": "latency_8b_one_way_ns", "subject": "memchan",
                    "reference": "cacheline_limit", "target": "<= 1.25x",
                    "ratio": 1.1, "pooled_ratio": 1.2, "met": true,
                    "per_round_ratios": [1.3, 1.05, 1.1],
                },
                {
                    "figure": "barrier_2_nodes_ns", "subject": "memchan",
                    "reference": "oshmem", "target": "<= 0.5x",
                    "ratio": 0.7, "pooled_ratio": 0.6, "met": false,
                    "per_round_ratios": [0.7],
                },
                {
                    "figure": "lock_ns", "subject": "memchan", "reference": "oshmem",
                    "target": "<= 0.5x", "ratio": null, "pooled_ratio": null, "met": null,
                    "per_round_ratios": [],
                },
            ],
        })
    }

    #[test]
    fn verdicts_carry_the_judged_ratio_the_spread_and_the_word() {
        let v = verdicts(&bench_json());
        assert_eq!(v.len(), 3);
        assert_eq!(v[0]["judged_ratio"], json!(1.1));
        assert_eq!(v[0]["pooled_ratio"], json!(1.2));
        assert_eq!(v[0]["spread"], json!([1.05, 1.3]));
        assert_eq!(v[0]["rounds"], json!(3));
        assert_eq!(v[0]["verdict"], "met");
        assert_eq!(v[1]["verdict"], "NOT MET");
        assert_eq!(v[2]["verdict"], "not measured");
        assert_eq!(v[2]["spread"], Value::Null);
    }

    #[test]
    fn the_block_between_the_markers_is_replaced_and_nothing_else() {
        let readme =
            format!("# Title\n\nBefore.\n{BEGIN}\nold line 1\nold line 2\n{END}\nAfter.\n");
        let out = replace_block(&readme, "new block\n").unwrap();
        assert_eq!(
            out,
            format!("# Title\n\nBefore.\n{BEGIN}\nnew block\n{END}\nAfter.\n")
        );
        // Idempotent, and an empty block between adjacent markers is filled.
        assert_eq!(replace_block(&out, "new block\n").unwrap(), out);
        let empty = format!("a\n{BEGIN}\n{END}\n");
        assert_eq!(
            replace_block(&empty, "x\n").unwrap(),
            format!("a\n{BEGIN}\nx\n{END}\n")
        );
    }

    #[test]
    fn without_both_markers_once_and_in_order_nothing_is_replaced() {
        assert_eq!(replace_block("# Title\nno markers\n", "x\n"), None);
        assert_eq!(
            replace_block(&format!("{BEGIN}\nonly the start\n"), "x\n"),
            None
        );
        assert_eq!(replace_block(&format!("{END}\nx\n{BEGIN}\n"), "x\n"), None);
        let twice = format!("{BEGIN}\n{END}\n{BEGIN}\n{END}\n");
        assert_eq!(replace_block(&twice, "x\n"), None);
    }

    fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!(
            "memchan-bench-results-{tag}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_report_replaces_the_last_and_feeds_the_readme_block() {
        let d = scratch("write");
        let dir = d.join("results");
        let plot = d.join("latency.png");
        std::fs::write(&plot, b"png").unwrap();
        write(
            &dir,
            &bench_json(),
            "== a table\n",
            std::slice::from_ref(&plot),
        )
        .unwrap();
        assert!(dir.join("latency.png").is_file());
        // The next run drew no plot: the old one goes, the files are replaced.
        let mut next = bench_json();
        next["machine"]["rounds"] = json!(5);
        write(&dir, &next, "== another table\n", &[]).unwrap();
        assert!(!dir.join("latency.png").exists());
        let latest = read_json(&dir.join(JSON_FILE)).unwrap();
        assert_eq!(latest["report"]["rounds"], json!(5));
        assert_eq!(latest["targets"], next["targets"]);
        assert!(latest["report"]["commit"]
            .as_str()
            .is_some_and(|c| !c.is_empty()));
        let md = std::fs::read_to_string(dir.join(MD_FILE)).unwrap();
        assert!(
            md.contains("== another table") && !md.contains("== a table"),
            "{md}"
        );
        assert!(md.contains("| `barrier_2_nodes_ns` | memchan | <= 0.5x oshmem | 0.70x | 0.60x"));

        let readme = d.join("README.md");
        std::fs::write(&readme, format!("intro\n{BEGIN}\nold\n{END}\nend\n")).unwrap();
        assert!(update_readme(&readme, &dir).unwrap());
        let text = std::fs::read_to_string(&readme).unwrap();
        assert!(
            text.starts_with(&format!("intro\n{BEGIN}\n"))
                && text.ends_with(&format!("{END}\nend\n"))
        );
        assert!(
            text.contains("1 of 3 targets met over 5 round(s) on Test CPU"),
            "{text}"
        );
        assert!(text.contains("](results/latest.md)"), "{text}");
        assert!(text.contains("| `latency_8b_one_way_ns` memchan | <= 1.25x cacheline_limit | 1.10x | 1.05-1.30x (3 rounds) | met |"), "{text}");
        assert!(
            !text.contains("2026-12-01"),
            "no date in the README: {text}"
        );

        let plain = d.join("PLAIN.md");
        std::fs::write(&plain, "no markers here\n").unwrap();
        assert!(!update_readme(&plain, &dir).unwrap());
        assert_eq!(
            std::fs::read_to_string(&plain).unwrap(),
            "no markers here\n"
        );
        let _ = std::fs::remove_dir_all(&d);
    }
}
