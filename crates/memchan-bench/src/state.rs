//! Which state the machine was in: the cache-line ping-pong and the memcpy rate each
//! round measured, and what they say. This machine has a fast state (cache-line
//! ping-pong about 60-75 ns) and a slow one (about 190-240 ns) that the same program
//! meets on different days and sometimes within one run; a verdict means little
//! without it (issue 39). Some days it is another processor (an Intel Xeon at 140-160
//! ns, where an AMD EPYC showed both states): the report names the processor too.
//! Both figures come from the raw level, so a run without it (`--only`) has no state.
//!
//! A round is *fast* when its cache-line ping-pong is below [`FAST_BELOW_NS`], else
//! *slow*; the run is fast or slow when every round is, else *mixed*. Each figure is
//! measured at one moment of its round, so a round's other figures may have met the
//! other state: the per-round spreads of the verdicts show it.

use std::collections::BTreeMap;

use serde_json::{json, Value};

use super::model::{fig, SampleSet};
use super::refs;
use super::stats;

/// The boundary between the two states, between their ranges.
pub const FAST_BELOW_NS: f64 = 130.0;

/// Each round's median of `series` in `figure`.
fn rounds(set: &SampleSet, figure: &str, series: &str) -> BTreeMap<usize, f64> {
    set.round_medians
        .get(figure)
        .and_then(|f| f.get(series))
        .cloned()
        .unwrap_or_default()
}

/// Each round's single-core memcpy of 1 MiB in GB/s (the raw level's reference,
/// measured in ns per window of [`refs::WINDOW`] copies).
fn memcpy_rounds(set: &SampleSet) -> BTreeMap<usize, f64> {
    let window = ((1usize << 20) * refs::WINDOW) as f64;
    rounds(set, &fig::bandwidth(1 << 20), "memcpy")
        .into_iter()
        .filter(|&(_, ns)| ns > 0.0)
        .map(|(r, ns)| (r, window / ns))
        .collect()
}

fn median(m: &BTreeMap<usize, f64>) -> Option<f64> {
    let v: Vec<f64> = m.values().copied().collect();
    stats::summarize(&v).map(|s| s.median)
}

/// The run's memcpy rate (GB/s): the median of the rounds', as `machine.state`
/// reports it; what a copy by one core can reach.
pub fn memcpy_gbps(set: &SampleSet) -> Option<f64> {
    median(&memcpy_rounds(set))
}

/// The `machine.state` of the bench's JSON: per round and median, the cache-line
/// limit (ns) and memcpy (GB/s), each round's state and the run's.
pub fn of(set: &SampleSet) -> Value {
    let line = rounds(set, fig::LATENCY, "cacheline_limit");
    let memcpy = memcpy_rounds(set);
    if line.is_empty() {
        return json!({ "state": "not measured" });
    }
    let each: BTreeMap<usize, &str> = line
        .iter()
        .map(|(&r, &ns)| (r, if ns < FAST_BELOW_NS { "fast" } else { "slow" }))
        .collect();
    let state = if each.values().all(|s| *s == "fast") {
        "fast"
    } else if each.values().all(|s| *s == "slow") {
        "slow"
    } else {
        "mixed"
    };
    let json_median = |m: &BTreeMap<usize, f64>| median(m).map_or(Value::Null, |x| json!(x));
    json!({
        "state": state,
        "fast_below_ns": FAST_BELOW_NS,
        "round_states": each,
        "cacheline_limit_ns": { "median": json_median(&line), "rounds": line },
        "memcpy_gbps": { "median": json_median(&memcpy), "rounds": memcpy },
    })
}

/// One line for a reader: "fast: cache-line ping-pong 68 ns (rounds 67-71), memcpy
/// 47.0 GB/s (rounds 46.5-47.3)", or "mixed: ...; slow in round(s) 2, 4".
pub fn describe(s: &Value) -> String {
    let state = s["state"].as_str().unwrap_or("not measured");
    if s["cacheline_limit_ns"].is_null() {
        return state.to_string();
    }
    let range = |v: &Value, unit: &str, digits: usize| -> String {
        let xs: Vec<f64> = v["rounds"]
            .as_object()
            .into_iter()
            .flatten()
            .filter_map(|(_, x)| x.as_f64())
            .collect();
        let lo = xs.iter().copied().fold(f64::INFINITY, f64::min);
        let hi = xs.iter().copied().fold(f64::NEG_INFINITY, f64::max);
        match v["median"].as_f64() {
            Some(m) if xs.len() > 1 => {
                format!("{m:.digits$} {unit} (rounds {lo:.digits$}-{hi:.digits$})")
            }
            Some(m) => format!("{m:.digits$} {unit}"),
            None => "-".into(),
        }
    };
    let slow: Vec<String> = s["round_states"]
        .as_object()
        .into_iter()
        .flatten()
        .filter(|(_, v)| v.as_str() == Some("slow"))
        .map(|(r, _)| (r.parse::<usize>().unwrap_or(0) + 1).to_string())
        .collect();
    let which = if state == "mixed" {
        format!("; slow in round(s) {}", slow.join(", "))
    } else {
        String::new()
    };
    format!(
        "{state}: cache-line ping-pong {}, memcpy {}{which}",
        range(&s["cacheline_limit_ns"], "ns", 0),
        range(&s["memcpy_gbps"], "GB/s", 1),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(lines: &[f64], memcpy_ns: &[f64]) -> SampleSet {
        let mut s = SampleSet::default();
        for (r, &ns) in lines.iter().enumerate() {
            s.round = r;
            s.add(fig::LATENCY, "cacheline_limit", vec![ns, ns, ns]);
        }
        for (r, &ns) in memcpy_ns.iter().enumerate() {
            s.round = r;
            s.add(&fig::bandwidth(1 << 20), "memcpy", vec![ns]);
        }
        s
    }

    #[test]
    fn the_rounds_cache_line_limits_name_the_state() {
        let fast = of(&set(&[66.0, 71.0, 68.0], &[1.4e6, 1.45e6, 1.42e6]));
        assert_eq!(fast["state"], "fast");
        let slow = of(&set(&[210.0, 195.0], &[2.0e6, 2.1e6]));
        assert_eq!(slow["state"], "slow");
        let mixed = of(&set(&[70.0, 233.0, 67.0], &[1.4e6, 1.4e6, 1.4e6]));
        assert_eq!(mixed["state"], "mixed");
        assert_eq!(mixed["round_states"]["1"], "slow");
        let d = describe(&mixed);
        assert!(
            d.starts_with("mixed: cache-line ping-pong 70 ns (rounds 67-233), memcpy 47.9 GB/s"),
            "{d}"
        );
        assert!(d.ends_with("; slow in round(s) 2"), "{d}");
        // 64 MiB in 1.4 ms: about 47.9 GB/s.
        let gbps = fast["memcpy_gbps"]["median"].as_f64().unwrap();
        assert!((gbps - 67108864.0 / 1.42e6).abs() < 0.01, "{gbps}");
    }

    #[test]
    fn a_run_without_the_raw_level_has_no_state() {
        let s = of(&SampleSet::default());
        assert_eq!(s["state"], "not measured");
        assert_eq!(describe(&s), "not measured");
    }
}
