//! One figure table, shared by the one-host report ([`super::report`]) and
//! `--hosts` ([`super::hosts::tables`]): its rows, its targets and verdicts,
//! and how it is printed.

use std::fmt::Write as _;

use serde_json::{json, Value};

use super::model::SampleSet;
use super::stats;

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

/// One series of a table.
#[derive(Debug, Clone)]
pub struct Row {
    pub name: &'static str,
    /// (median, p99, samples) in the table's unit, or why the series was not
    /// measured: the `--hosts` tables list every series, and such a row reads
    /// "not measured: why".
    pub value: Result<(f64, f64, usize), String>,
    /// median / reference median, when both exist.
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
    /// Each a row against the reference (`--hosts` has two subjects per figure: the
    /// open and the keyed cluster; the one-host figures at most one).
    pub targets: Vec<Target>,
    pub rows: Vec<Row>,
    pub notes: Vec<String>,
    /// Larger is better (bandwidth, the figures whose target is a floor): p99
    /// is the slow tail.
    pub higher_is_better: bool,
    /// Per target (in `targets`' order), its ratio computed per round from that
    /// round's medians (subject and reference measured next to each other), for
    /// rounds with both.
    pub round_ratios: Vec<Vec<f64>>,
    /// Ratios shown for information, no target: (subject, reference, ratio
    /// of the medians in the table's unit when both were measured).
    pub info_ratios: Vec<(&'static str, &'static str, Option<f64>)>,
}

impl Table {
    /// A table of `rows` (series, values or why not measured), in that order;
    /// every measured row gets its ratio to the reference's median.
    pub fn new(
        key: &'static str,
        title: String,
        unit: &'static str,
        reference: Option<&'static str>,
        targets: impl IntoIterator<Item = Target>,
        rows: impl IntoIterator<Item = (&'static str, Result<(f64, f64, usize), String>)>,
    ) -> Table {
        let targets: Vec<Target> = targets.into_iter().collect();
        let mut rows: Vec<Row> = rows
            .into_iter()
            .map(|(name, value)| Row {
                name,
                value,
                ratio: None,
            })
            .collect();
        let refv = reference
            .and_then(|r| rows.iter().find(|x| x.name == r))
            .and_then(|x| x.value.as_ref().ok())
            .map(|v| v.0);
        if let Some(rv) = refv {
            for r in &mut rows {
                if let Ok(v) = &r.value {
                    r.ratio = Some(v.0 / rv);
                }
            }
        }
        Table {
            key,
            title,
            unit,
            reference,
            higher_is_better: targets.iter().any(|t| t.cmp == Cmp::AtLeast),
            targets,
            rows,
            notes: vec![],
            round_ratios: vec![],
            info_ratios: vec![],
        }
    }

    fn row(&self, name: &str) -> Option<&Row> {
        self.rows.iter().find(|r| r.name == name)
    }

    /// (ratio, met) of a target, when both sides were measured.
    pub fn verdict_of(&self, t: &Target) -> Option<(f64, bool)> {
        let r = self.row(t.subject)?.ratio?;
        Some((r, t.met(r)))
    }

    /// The table's entries of the JSON "targets", one per target.
    pub fn target_json(&self) -> Vec<Value> {
        self.targets
            .iter()
            .enumerate()
            .map(|(i, tg)| {
                let v = self.verdict_of(tg);
                json!({
                    "figure": self.key,
                    "subject": tg.subject,
                    "reference": self.reference,
                    "target": tg.text(),
                    "ratio": v.map(|x| x.0),
                    "met": v.map(|x| x.1),
                    "per_round_ratios": self.round_ratios.get(i).cloned().unwrap_or_default(),
                })
            })
            .collect()
    }

    /// The table as text.
    pub fn render(&self, o: &mut String) {
        let _ = writeln!(o, "== {}   [{}]", self.title, self.key);
        let ratio_head = match self.reference {
            Some(r) => format!("ratio vs {r}"),
            None => "ratio".into(),
        };
        let _ = writeln!(
            o,
            "   {:<18} {:>14} {:>14} {:>28} {:>10} {:>8}",
            "name",
            format!("median ({})", self.unit),
            format!("p99 ({})", self.unit),
            ratio_head,
            "target",
            "met"
        );
        if self.rows.is_empty() {
            let _ = writeln!(o, "   (nothing measured)");
        }
        for r in &self.rows {
            let (med, p99) = match &r.value {
                Ok((med, p99, _)) => (med, p99),
                Err(why) => {
                    let _ = writeln!(o, "   {:<18} not measured: {why}", r.name);
                    continue;
                }
            };
            let is_ref = self.reference == Some(r.name);
            let ratio = match r.ratio {
                Some(_) if is_ref => "1.00 (reference)".to_string(),
                Some(x) => format!("{x:.2}"),
                None => "-".into(),
            };
            let (target, met) = match self.targets.iter().find(|t| t.subject == r.name) {
                Some(tg) => match r.ratio {
                    Some(x) => (tg.text(), if tg.met(x) { "yes" } else { "NO" }.to_string()),
                    None => (
                        tg.text(),
                        format!("n/a (no {})", self.reference.unwrap_or("reference")),
                    ),
                },
                _ => (String::new(), String::new()),
            };
            let _ = writeln!(
                o,
                "   {:<18} {:>14} {:>14} {:>28} {:>10} {:>8}",
                r.name,
                fmt_val(*med, self.unit),
                fmt_val(*p99, self.unit),
                ratio,
                target,
                met
            );
        }
        for tg in &self.targets {
            if self.row(tg.subject).is_none() {
                let _ = writeln!(
                    o,
                    "   ({} not measured: target {} {} not evaluated)",
                    tg.subject,
                    tg.text(),
                    self.reference.unwrap_or("")
                );
            }
        }
        for (subject, reference, x) in &self.info_ratios {
            let x = x.map_or_else(|| "-".to_string(), |x| format!("{x:.2}"));
            let _ = writeln!(
                o,
                "   {subject} / {reference}: {x} (information, no target)"
            );
        }
        if self.higher_is_better {
            let _ = writeln!(
                o,
                "   p99 = slow tail: bandwidth of the 99th-percentile-slowest window"
            );
        }
        for n in &self.notes {
            let _ = writeln!(o, "   {n}");
        }
    }
}

/// `series` of `figure` against `ref_series` of `ref_figure` as the median of the
/// rounds' ratios (each round's two medians), as the targets' per-round line: on
/// this VM a pooled median mixes the fast and slow states of different rounds. The
/// pooled medians' ratio when no round has both.
pub fn ratio_of_rounds(
    set: &SampleSet,
    (figure, series): (&str, &str),
    (ref_figure, ref_series): (&str, &str),
) -> Option<f64> {
    let mut rounds: Vec<f64> = per_round(set, (figure, series), (ref_figure, ref_series))
        .into_iter()
        .filter(|r| r.is_finite() && *r > 0.0)
        .collect();
    if rounds.is_empty() {
        let pooled = |f: &str, s: &str| Some(stats::summarize(set.get(f, s)?)?.median);
        let r = pooled(figure, series)? / pooled(ref_figure, ref_series)?;
        return (r.is_finite() && r > 0.0).then_some(r);
    }
    rounds.sort_by(f64::total_cmp);
    Some(stats::interpolated_median(&rounds))
}

/// One figure of two series measured side by side (a level with a table of its
/// own: `ip.rs`, `shmem.rs`), as the bench's JSON holds it.
pub struct PairFigure<'a> {
    pub key: &'a str,
    pub unit: &'a str,
    /// The subject, then the reference.
    pub sides: [&'a str; 2],
    pub med: [f64; 2],
    /// The slow tail and the suffix of its key (`p99` of times, `p1` of bandwidths).
    pub tail: ([f64; 2], &'a str),
    pub n: [usize; 2],
    pub ratio: f64,
    pub target: &'a str,
    pub met: bool,
    pub round_ratios: &'a [f64],
}

impl PairFigure<'_> {
    /// Adds the figure, its unit, ratio, sample counts and target to the bench's JSON.
    pub fn merge_json(&self, j: &mut Value) {
        let [subject, reference] = self.sides;
        let pair = |v: [f64; 2]| json!({ subject: v[0], reference: v[1] });
        if let Some(m) = j["figures"].as_object_mut() {
            m.insert(self.key.into(), pair(self.med));
            m.insert(format!("{}_{}", self.key, self.tail.1), pair(self.tail.0));
        }
        if let Some(m) = j["units"].as_object_mut() {
            m.insert(self.key.into(), json!(self.unit));
        }
        if let Some(m) = j["ratios"].as_object_mut() {
            m.insert(
                self.key.into(),
                json!({ format!("{subject}_vs_{reference}"): self.ratio }),
            );
        }
        if let Some(m) = j["samples"].as_object_mut() {
            m.insert(
                self.key.into(),
                json!({ subject: self.n[0], reference: self.n[1] }),
            );
        }
        if let Some(a) = j["targets"].as_array_mut() {
            a.push(json!({
                "figure": self.key,
                "subject": subject,
                "reference": reference,
                "target": self.target,
                "ratio": self.ratio,
                "met": self.met,
                "per_round_ratios": self.round_ratios,
            }));
        }
    }
}

/// Notes in the bench's JSON, under `level`, why that level was not measured.
pub fn note_skipped(j: &mut Value, level: &str, why: &str) {
    if let Some(m) = j.as_object_mut() {
        m.insert(level.into(), json!({ "skipped": why }));
    }
}

/// A note on what an at-most target of `factor` against `reference` leaves the
/// subjects when a floor they cannot beat (`floor`: `what`, the same path without
/// their software) measures `ratio` times the reference in the run.
pub fn floor_note(floor: &str, what: &str, ratio: f64, reference: &str, factor: f64) -> String {
    format!(
        "{floor}: {what} is {ratio:.2}x {reference} in this run (median of the rounds' \
         ratios), so <= {factor}x {reference} leaves a message {:.2}x {floor}",
        factor / ratio
    )
}

/// The "== targets" section: one line per table with a target, its verdict
/// and, over several rounds, the spread of the per-round ratios.
pub fn render_targets(o: &mut String, heading: &str, tables: &[Table]) {
    o.push('\n');
    let _ = writeln!(o, "== {heading}");
    for (t, i, tg) in tables
        .iter()
        .flat_map(|t| t.targets.iter().enumerate().map(move |(i, tg)| (t, i, tg)))
    {
        let rounds = t.round_ratios.get(i).map_or(&[][..], |v| v.as_slice());
        let mut status = match t.verdict_of(tg) {
            Some((r, met)) => format!("{:.2}x  {:<8}", r, if met { "met" } else { "NOT MET" }),
            None => "not measured".into(),
        };
        if rounds.len() > 1 {
            let mut v = rounds.to_vec();
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
        let _ = writeln!(o, "   {:<26} {:<42} {}", t.key, rule, status);
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

/// Each target's ratio from each round's medians of `figure`, for rounds with
/// both sides (inverted when higher is better, whose samples are window
/// times, so a ratio below 1 always means memchan did better).
pub fn round_ratios(set: &SampleSet, figure: &str, t: &Table) -> Vec<Vec<f64>> {
    round_ratios_across(set, figure, figure, t)
}

/// [`round_ratios`] with the subjects' samples in `figure` and the reference's in
/// `ref_figure` (a reference measured as part of another figure, such as Open MPI's
/// latency in the raw level's, beside message passing's in the same round).
pub fn round_ratios_across(
    set: &SampleSet,
    figure: &str,
    ref_figure: &str,
    t: &Table,
) -> Vec<Vec<f64>> {
    let per_target = |tg: &Target| -> Vec<f64> {
        let Some(reference) = t.reference else {
            return vec![];
        };
        let r = per_round(set, (figure, tg.subject), (ref_figure, reference));
        if t.higher_is_better {
            r.into_iter().map(|x| 1.0 / x).collect()
        } else {
            r
        }
    };
    t.targets.iter().map(per_target).collect()
}

/// `series` of `figure` over `ref_series` of `ref_figure`, each round's medians, for
/// every round that has both.
fn per_round(set: &SampleSet, (figure, series): (&str, &str), (rf, rs): (&str, &str)) -> Vec<f64> {
    let medians = |f: &str, s: &str| set.round_medians.get(f).and_then(|m| m.get(s));
    let (Some(a), Some(b)) = (medians(figure, series), medians(rf, rs)) else {
        return vec![];
    };
    a.iter()
        .filter_map(|(round, x)| Some(x / b.get(round)?))
        .collect()
}

/// A figure measured on two sides only, memchan's (`names[0]`) and one reference
/// (`names[1]`), with its own samples (the IP level, the OpenSHMEM level): printed as
/// a title line, each side's median and tail, and the target's verdict.
pub struct Pair<'a> {
    pub title: &'a str,
    pub key: &'a str,
    pub unit: &'a str,
    /// "p99" for a time, "p1" for a rate.
    pub tail: &'a str,
    pub names: [&'a str; 2],
    pub med: [f64; 2],
    pub tails: [f64; 2],
    pub ratio: f64,
    /// `<= 0.5x` and the like.
    pub target: &'a str,
    pub met: bool,
}

/// Appends `p` to `o`.
pub fn render_pair(o: &mut String, p: &Pair) {
    let _ = writeln!(o, "== {}   [{}]", p.title, p.key);
    let _ = writeln!(
        o,
        "   {:<12} {:>14} {:>14} {:>16}",
        "name",
        format!("median ({})", p.unit),
        format!("{} ({})", p.tail, p.unit),
        format!("ratio vs {}", p.names[1])
    );
    for (i, name) in p.names.iter().enumerate() {
        let r = if i == 0 {
            format!("{:.2}x", p.ratio)
        } else {
            "1.00x".into()
        };
        let _ = writeln!(
            o,
            "   {:<12} {:>14.3} {:>14.3} {:>16}",
            name, p.med[i], p.tails[i], r
        );
    }
    let _ = writeln!(
        o,
        "   target: {} {} {}: {:.2}x, {}",
        p.names[0],
        p.target,
        p.names[1],
        p.ratio,
        if p.met { "met" } else { "NOT MET" }
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_floor_ratio_is_the_median_of_the_rounds_ratios() {
        let mut set = SampleSet::default();
        // Round 0 in this VM's fast state, rounds 1 and 2 in its slow one.
        for (round, raw, mpi) in [(0, 70.0, 150.0), (1, 280.0, 300.0), (2, 260.0, 400.0)] {
            set.round = round;
            set.add("lat", "raw", vec![raw]);
            set.add("ref", "mpi", vec![mpi]);
        }
        let r = ratio_of_rounds(&set, ("lat", "raw"), ("ref", "mpi")).expect("three rounds");
        assert!((r - 0.65).abs() < 1e-9, "{r}");
        // No round in common: the pooled medians.
        let mut apart = SampleSet::default();
        apart.add("lat", "raw", vec![70.0]);
        apart.round = 1;
        apart.add("ref", "mpi", vec![140.0]);
        let r = ratio_of_rounds(&apart, ("lat", "raw"), ("ref", "mpi")).expect("pooled");
        assert!((r - 0.5).abs() < 1e-9, "{r}");
        assert_eq!(
            ratio_of_rounds(&apart, ("lat", "raw"), ("ref", "ucx")),
            None
        );
        let note = floor_note("raw", "a raw write", 0.4, "mpi", 0.5);
        assert!(
            note.contains("0.40x mpi") && note.contains("1.25x raw"),
            "{note}"
        );
    }
}
