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

/// A target's verdict. Over two rounds or more it is judged on the median of the
/// rounds' ratios (each round's two medians, measured next to each other), else on
/// the ratio of the pooled medians: on this VM a pooled median mixes the fast and
/// slow states of different rounds (one run put message passing at 0.36x Open MPI
/// pooled, "met", where its five rounds said 0.27-0.74x, median 0.67x).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Verdict {
    /// The ratio judged.
    pub ratio: f64,
    /// The pooled medians' ratio (the tables' ratio column).
    pub pooled: f64,
    pub met: bool,
    /// The rounds' ratios, when any were usable.
    pub rounds: Option<Spread>,
}

impl Verdict {
    pub fn new(t: &Target, pooled: f64, rounds: &[f64]) -> Verdict {
        let rounds = Spread::of(rounds);
        let ratio = judged_ratio(pooled, rounds);
        Verdict {
            ratio,
            pooled,
            met: t.met(ratio),
            rounds,
        }
    }

    /// "0.67x  NOT MET" and, over several rounds, what it was judged on.
    pub fn text(&self) -> String {
        let mut o = format!(
            "{:.2}x  {:<8}",
            self.ratio,
            if self.met { "met" } else { "NOT MET" }
        );
        if let Some(r) = self.rounds.filter(|r| r.n > 1) {
            let _ = write!(
                o,
                "  median of {} rounds' ratios (range {:.2}-{:.2}x); pooled medians {:.2}x",
                r.n, r.lo, r.hi, self.pooled
            );
        }
        o
    }
}

/// The usable (finite, positive) ratios of a figure's rounds: how many, their range
/// and median.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Spread {
    pub n: usize,
    pub lo: f64,
    pub hi: f64,
    pub median: f64,
}

impl Spread {
    /// `None` when no ratio is usable.
    pub fn of(rounds: &[f64]) -> Option<Spread> {
        let mut v: Vec<f64> = rounds
            .iter()
            .copied()
            .filter(|r| r.is_finite() && *r > 0.0)
            .collect();
        v.sort_by(f64::total_cmp);
        Some(Spread {
            n: v.len(),
            lo: *v.first()?,
            hi: *v.last()?,
            median: stats::interpolated_median(&v),
        })
    }
}

fn usable(r: f64) -> bool {
    r.is_finite() && r > 0.0
}

/// The ratio a target is judged on (see [`Verdict`]): the median of the rounds'
/// ratios when two or more are usable, else `pooled`.
pub fn judged_ratio(pooled: f64, rounds: Option<Spread>) -> f64 {
    rounds.filter(|r| r.n >= 2).map_or(pooled, |r| r.median)
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

    /// The verdict of target `i`, when both sides were measured.
    pub fn verdict_of(&self, i: usize) -> Option<Verdict> {
        let t = self.targets.get(i)?;
        let pooled = self.row(t.subject)?.ratio?;
        let rounds = self.round_ratios.get(i).map_or(&[][..], |v| v.as_slice());
        Some(Verdict::new(t, pooled, rounds))
    }

    /// The table's entries of the JSON "targets", one per target.
    pub fn target_json(&self) -> Vec<Value> {
        self.targets
            .iter()
            .enumerate()
            .map(|(i, tg)| {
                let v = self.verdict_of(i);
                json!({
                    "figure": self.key,
                    "subject": tg.subject,
                    "reference": self.reference,
                    "target": tg.text(),
                    "ratio": v.as_ref().map(|v| v.ratio),
                    "pooled_ratio": v.as_ref().map(|v| v.pooled),
                    "met": v.as_ref().map(|v| v.met),
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
            let (target, met) = match self.targets.iter().position(|t| t.subject == r.name) {
                Some(i) => match self.verdict_of(i) {
                    Some(v) => (
                        self.targets[i].text(),
                        if v.met { "yes" } else { "NO" }.to_string(),
                    ),
                    None => (
                        self.targets[i].text(),
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
    if let Some(r) = Spread::of(&per_round(set, (figure, series), (ref_figure, ref_series))) {
        return Some(r.median);
    }
    let pooled = |f: &str, s: &str| Some(stats::summarize(set.get(f, s)?)?.median);
    let r = pooled(figure, series)? / pooled(ref_figure, ref_series)?;
    usable(r).then_some(r)
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
        let status = match t.verdict_of(i) {
            Some(v) => v.text(),
            None => "not measured".into(),
        };
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
/// a title line, each side's median and tail, and the target's verdict, and written
/// into the bench's JSON as the tables' figures are.
pub struct Pair {
    pub title: String,
    pub key: &'static str,
    pub unit: &'static str,
    pub names: [&'static str; 2],
    pub med: [f64; 2],
    /// The slow tail (`p99` of times, `p1` of rates) and its name.
    pub tails: ([f64; 2], &'static str),
    pub n: [usize; 2],
    pub target: Target,
    pub round_ratios: Vec<f64>,
    /// `None` when a side has no samples.
    pub verdict: Option<Verdict>,
    /// What the machine allows this figure in the run (a floor neither side can
    /// pass), printed under the verdict: [`with_floor`](Self::with_floor).
    pub floor: Option<String>,
}

impl Pair {
    /// This figure with `floor`, a line on what the machine allows it in this run.
    pub fn with_floor(mut self, floor: Option<String>) -> Pair {
        self.floor = floor;
        self
    }

    /// The figure of `samples` (memchan's, the reference's) and `rounds` (each
    /// round's two medians), judged against `target` (`lower_better`: at most
    /// `factor`, else at least); `p1`: its tail is the samples' 1st percentile (the
    /// slow tail of rates), else their 99th.
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        title: String,
        key: &'static str,
        unit: &'static str,
        names: [&'static str; 2],
        samples: [&[f64]; 2],
        rounds: &[[f64; 2]],
        lower_better: bool,
        factor: f64,
        p1: bool,
    ) -> Pair {
        let s = samples.map(stats::summarize);
        let med = s.map(|x| x.map_or(f64::NAN, |x| x.median));
        let tail = s.map(|x| x.map_or(f64::NAN, |x| if p1 { x.p1 } else { x.p99 }));
        let target = Target {
            subject: names[0],
            cmp: if lower_better {
                Cmp::AtMost
            } else {
                Cmp::AtLeast
            },
            factor,
        };
        let round_ratios: Vec<f64> = rounds.iter().map(|r| r[0] / r[1]).collect();
        let pooled = med[0] / med[1];
        let verdict = usable(pooled).then(|| Verdict::new(&target, pooled, &round_ratios));
        Pair {
            title,
            key,
            unit,
            names,
            med,
            tails: (tail, if p1 { "p1" } else { "p99" }),
            n: samples.map(<[f64]>::len),
            target,
            round_ratios,
            verdict,
            floor: None,
        }
    }

    /// Appends the figure and its verdict to `o`.
    pub fn render(&self, o: &mut String) {
        let _ = writeln!(o, "== {}   [{}]", self.title, self.key);
        let _ = writeln!(
            o,
            "   {:<12} {:>14} {:>14} {:>16}",
            "name",
            format!("median ({})", self.unit),
            format!("{} ({})", self.tails.1, self.unit),
            format!("ratio vs {}", self.names[1])
        );
        let pooled = self.verdict.map_or(f64::NAN, |v| v.pooled);
        for (i, name) in self.names.iter().enumerate() {
            let r = if i == 0 { pooled } else { 1.0 };
            let _ = writeln!(
                o,
                "   {:<12} {:>14.3} {:>14.3} {:>15.2}x",
                name, self.med[i], self.tails.0[i], r
            );
        }
        let verdict = match &self.verdict {
            Some(v) => v.text(),
            None => "not measured".into(),
        };
        let _ = writeln!(
            o,
            "   target: {} {} {}: {}",
            self.names[0],
            self.target.text(),
            self.names[1],
            verdict.trim_end()
        );
        if let Some(f) = &self.floor {
            let _ = writeln!(o, "   floor: {f}");
        }
    }

    /// Adds the figure, its unit, ratio, sample counts and target to the bench's JSON.
    pub fn merge_json(&self, j: &mut Value) {
        let [subject, reference] = self.names;
        let pair = |v: [f64; 2]| json!({ subject: v[0], reference: v[1] });
        if let Some(m) = j["figures"].as_object_mut() {
            m.insert(self.key.into(), pair(self.med));
            m.insert(format!("{}_{}", self.key, self.tails.1), pair(self.tails.0));
        }
        if let Some(m) = j["units"].as_object_mut() {
            m.insert(self.key.into(), json!(self.unit));
        }
        if let (Some(f), Some(m)) = (&self.floor, j.as_object_mut()) {
            if let Some(floors) = m
                .entry("floors")
                .or_insert_with(|| json!({}))
                .as_object_mut()
            {
                floors.insert(self.key.into(), json!(f));
            }
        }
        let pooled = self.verdict.map(|v| v.pooled);
        if let Some(m) = j["ratios"].as_object_mut() {
            m.insert(
                self.key.into(),
                json!({ format!("{subject}_vs_{reference}"): pooled }),
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
                "target": self.target.text(),
                "ratio": self.verdict.map(|v| v.ratio),
                "pooled_ratio": pooled,
                "met": self.verdict.map(|v| v.met),
                "per_round_ratios": self.round_ratios,
            }));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pair_prints_and_records_its_floor() {
        let pair = |floor: Option<String>| {
            Pair::new(
                "bw".into(),
                "bw_gbps",
                "GB/s",
                ["memchan", "oshmem"],
                [&[30.0, 31.0], &[32.0, 33.0]],
                &[[30.5, 32.5]],
                false,
                1.0,
                true,
            )
            .with_floor(floor)
        };
        let mut plain = String::new();
        pair(None).render(&mut plain);
        assert!(!plain.contains("floor:"), "{plain}");
        let mut j = json!({});
        pair(None).merge_json(&mut j);
        assert!(j.get("floors").is_none());

        let with = pair(Some("memcpy 31.0 GB/s".into()));
        let mut o = String::new();
        with.render(&mut o);
        let last = o.lines().last().expect("lines");
        assert_eq!(last, "   floor: memcpy 31.0 GB/s", "{o}");
        let mut j = json!({});
        with.merge_json(&mut j);
        assert_eq!(j["floors"]["bw_gbps"], "memcpy 31.0 GB/s");
    }

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

    #[test]
    fn a_target_is_judged_on_the_rounds_median_once_there_are_two() {
        let at_most = Target {
            subject: "m",
            cmp: Cmp::AtMost,
            factor: 0.5,
        };
        // One round (or none usable): the pooled ratio.
        assert_eq!(judged_ratio(0.4, Spread::of(&[0.7])), 0.4);
        assert_eq!(judged_ratio(0.4, Spread::of(&[f64::NAN, 0.7])), 0.4);
        // The pooled medians can fall in different states of the machine; the
        // rounds' ratios each compare one state.
        let v = Verdict::new(&at_most, 0.36, &[0.27, 0.74, 0.67, 0.70, 0.66]);
        assert_eq!((v.ratio, v.pooled, v.met), (0.67, 0.36, false));
        let text = v.text();
        assert!(
            text.contains("0.67x  NOT MET")
                && text.contains("median of 5 rounds' ratios (range 0.27-0.74x)")
                && text.contains("pooled medians 0.36x"),
            "{text}"
        );
        assert!(Verdict::new(&at_most, 0.6, &[0.4, 0.5]).met);
    }

    #[test]
    fn a_pair_prints_and_writes_the_verdict_it_was_judged_on() {
        // Times: memchan 3 and 1 in two rounds, the reference 2 both times: pooled
        // medians 2 / 2 = 1.0x (at most 1.5x: met), rounds 1.5x and 0.5x (median 1.0x).
        let p = Pair::new(
            "t".into(),
            "k",
            "us",
            ["memchan_ip", "tcp_veth"],
            [&[3.0, 3.0, 1.0, 1.0, 2.0], &[2.0, 2.0, 2.0, 2.0]],
            &[[3.0, 2.0], [1.0, 2.0]],
            true,
            1.5,
            false,
        );
        let v = p.verdict.expect("both sides measured");
        assert_eq!((v.pooled, v.ratio, v.met), (1.0, 1.0, true));
        let mut o = String::new();
        p.render(&mut o);
        assert!(o.contains("[k]") && o.contains("p99 (us)"), "{o}");
        assert!(
            o.contains("target: memchan_ip <= 1.5x tcp_veth: 1.00x  met")
                && o.contains("median of 2 rounds' ratios (range 0.50-1.50x)"),
            "{o}"
        );
        let mut j =
            json!({ "figures": {}, "units": {}, "ratios": {}, "samples": {}, "targets": [] });
        p.merge_json(&mut j);
        assert_eq!(j["ratios"]["k"]["memchan_ip_vs_tcp_veth"], json!(1.0));
        assert_eq!(j["samples"]["k"], json!({ "memchan_ip": 5, "tcp_veth": 4 }));
        assert_eq!(j["units"]["k"], json!("us"));
        let t = &j["targets"][0];
        assert_eq!(t["target"], json!("<= 1.5x"));
        assert_eq!(t["met"], json!(true));
        assert_eq!(t["per_round_ratios"], json!([1.5, 0.5]));
        // A side without samples: no verdict to print.
        let none = Pair::new(
            "t".into(),
            "k",
            "us",
            ["a", "b"],
            [&[], &[1.0]],
            &[],
            true,
            1.5,
            false,
        );
        assert!(none.verdict.is_none());
        let mut o = String::new();
        none.render(&mut o);
        assert!(o.contains("not measured"), "{o}");
    }
}
