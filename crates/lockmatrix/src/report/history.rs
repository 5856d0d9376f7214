//! `cargo xtask report --history [DIR...]`: the gating cells across runs.
//!
//! Gating cells are the ones that can fail the gate: instruction counts
//! (everywhere) and each suite's timing cells on real hardware (QEMU
//! timings never gate). Runs are ordered by start time, then commit; each
//! run's own gate (against its `--against` base, or the baselines) says
//! which changes it flagged: a regression, an inconclusive timing cell, an
//! improvement. The terminal gets a table (a sparkline and the last values
//! of each cell); [`html`] draws one panel per cell.

use crate::cells;
use crate::gate::evaluate::{GateReport, Verdict};
use crate::name::{self, Name};
use crate::policy::{self, Role};
use crate::protocol::case_label;
use crate::protocol::Kind;
use crate::report::html::svg::{esc, num, Scale, Svg};
use crate::report::table::{median, render as columns, value_ns};
use crate::results::Run;
use std::collections::BTreeMap;
use std::path::PathBuf;

/// Most runs shown as value columns in the terminal (the sparkline has all).
const COLUMNS: usize = 6;

/// One run of the history.
pub struct RunInfo {
    pub dir: PathBuf,
    pub run_id: String,
    pub started: String,
    pub commit: String,
    /// `HEAD~1 (abc123)` for a run made with `--against`.
    pub against: Option<String>,
    /// What its gate compared it with, when it compared anything.
    pub reference: Option<String>,
}

/// A flagged change of one cell in one run.
#[derive(Clone, Copy)]
pub struct Flag {
    pub verdict: Verdict,
    pub ratio: Option<f64>,
}

/// One gating cell across the runs.
pub struct Trend {
    pub target: Name,
    pub suite: Name,
    pub bench: Name,
    pub case: String,
    pub metric: Name,
    /// `ns` for times (ticks converted), else the cell's unit.
    pub unit: Name,
    /// One entry per run, in history order: the median, and the gate's flag.
    pub values: Vec<(Option<f64>, Option<Flag>)>,
}

impl Trend {
    pub fn name(&self) -> String {
        format!(
            "{}/{} {} [{}] {}",
            self.target, self.suite, self.bench, self.case, self.metric
        )
    }

    fn is_count(&self) -> bool {
        Kind::of(&self.unit).exact()
    }

    /// Whether every run that has the cell has the same value.
    fn constant(&self) -> bool {
        let mut v = self.values.iter().filter_map(|(v, _)| *v);
        let first = v.next();
        v.all(|x| Some(x) == first)
    }

    fn flagged(&self) -> bool {
        self.values.iter().any(|(_, f)| f.is_some())
    }
}

pub struct History {
    pub runs: Vec<RunInfo>,
    pub trends: Vec<Trend>,
}

fn flag_of(verdict: Verdict) -> bool {
    matches!(
        verdict,
        Verdict::Regression | Verdict::Inconclusive | Verdict::Improvement
    )
}

/// The history of `runs`, each with the directory it was read from and its
/// gate report (`None`: not gated). Sorted by start time, then commit.
pub fn build(mut runs: Vec<(PathBuf, Run, Option<GateReport>)>) -> History {
    runs.sort_by(|a, b| {
        (&a.1.started, &a.1.host.lockmatrix_commit, &a.1.run_id).cmp(&(
            &b.1.started,
            &b.1.host.lockmatrix_commit,
            &b.1.run_id,
        ))
    });
    // (target, suite, bench, case, metric) -> index into trends
    let mut index: BTreeMap<(Name, Name, Name, String, Name), usize> = BTreeMap::new();
    let mut trends: Vec<Trend> = Vec::new();
    let n = runs.len();
    for (i, (_, run, gate)) in runs.iter().enumerate() {
        let flags: BTreeMap<(Name, Name, Name, String, Name), Flag> = gate
            .iter()
            .flat_map(|g| &g.cells)
            .filter(|c| flag_of(c.verdict))
            .map(|c| {
                (
                    (
                        c.target.clone(),
                        c.suite.clone(),
                        c.bench.clone(),
                        c.case_label(),
                        c.metric.clone(),
                    ),
                    Flag {
                        verdict: c.verdict,
                        ratio: c.effect.map(|e| e.ratio),
                    },
                )
            })
            .collect();
        for t in &run.targets {
            for s in &t.suites {
                let hz = s.env.as_ref().map_or(0.0, |e| e.timer_hz);
                for c in cells::collect(&s.samples) {
                    if let Role::Advisory(_) =
                        policy::role(c.kind(), t.runner, &c.key.metric, c.contention)
                    {
                        continue;
                    }
                    let time = c.kind() == Kind::Time;
                    let mut v: Vec<f64> = c
                        .samples
                        .iter()
                        .flatten()
                        .filter_map(|x| {
                            if time {
                                value_ns(&c.unit, *x, hz)
                            } else {
                                Some(*x)
                            }
                        })
                        .collect();
                    let key = (
                        t.name.clone(),
                        s.suite.clone(),
                        c.key.bench.clone(),
                        case_label(&c.case),
                        c.key.metric.clone(),
                    );
                    let at = *index.entry(key.clone()).or_insert_with(|| {
                        trends.push(Trend {
                            target: key.0.clone(),
                            suite: key.1.clone(),
                            bench: key.2.clone(),
                            case: key.3.clone(),
                            metric: key.4.clone(),
                            unit: if time {
                                name::known("ns")
                            } else {
                                c.unit.clone()
                            },
                            values: vec![(None, None); n],
                        });
                        trends.len() - 1
                    });
                    trends[at].values[i] = (median(&mut v), flags.get(&key).copied());
                }
            }
        }
    }
    let runs = runs
        .into_iter()
        .map(|(dir, run, gate)| RunInfo {
            dir,
            against: run
                .against
                .as_ref()
                .map(|a| format!("{} ({})", a.rev, crate::commit::shown(a.commit.as_ref()))),
            reference: gate
                .filter(|g| g.counts_compared > 0 || g.cells.iter().any(|c| c.effect.is_some()))
                .map(|g| g.reference),
            run_id: run.run_id,
            started: run.started,
            commit: crate::commit::shown(run.host.lockmatrix_commit.as_ref()).to_string(),
        })
        .collect();
    History { runs, trends }
}

/// Eight levels, lowest to highest, for a sparkline.
const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

fn sparkline(values: &[(Option<f64>, Option<Flag>)]) -> String {
    let finite: Vec<f64> = values.iter().filter_map(|(v, _)| *v).collect();
    let lo = finite.iter().copied().fold(f64::INFINITY, f64::min);
    let hi = finite.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    values
        .iter()
        .map(|(v, _)| match v {
            None => ' ',
            Some(_) if hi <= lo => BARS[3],
            Some(v) => BARS[(((v - lo) / (hi - lo)) * 7.0).round() as usize],
        })
        .collect()
}

fn mark(f: Option<Flag>) -> &'static str {
    match f.map(|f| f.verdict) {
        Some(Verdict::Regression) => " !",
        Some(Verdict::Inconclusive) => " ?",
        Some(Verdict::Improvement) => " +",
        _ => "",
    }
}

/// The terminal report: the runs, then one row per gating cell (constant
/// instruction counts summed up in one line), then the flagged changes.
pub fn text(h: &History) -> String {
    let mut out = format!("history of {} runs, oldest first:\n", h.runs.len());
    for (i, r) in h.runs.iter().enumerate() {
        out.push_str(&format!(
            "  #{:<2} {}  started {}  commit {}{}{}\n",
            i + 1,
            r.run_id,
            r.started,
            r.commit,
            r.against
                .as_ref()
                .map_or(String::new(), |a| format!("  against {a}")),
            match &r.reference {
                Some(_) => String::new(),
                None => "  (not gated: nothing to compare with)".into(),
            }
        ));
    }
    let shown: Vec<&Trend> = h
        .trends
        .iter()
        .filter(|t| !t.is_count() || !t.constant() || t.flagged())
        .collect();
    let constant = h.trends.len() - shown.len();
    let first = h.runs.len().saturating_sub(COLUMNS);
    let mut rows = vec![["where", "bench", "case", "metric", "unit"]
        .iter()
        .map(|s| s.to_string())
        .chain((first..h.runs.len()).map(|i| format!("#{}", i + 1)))
        .chain(["trend".to_string(), "last vs first".into()])
        .collect::<Vec<_>>()];
    for t in &shown {
        let mut row = vec![
            format!("{}/{}", t.target, t.suite),
            t.bench.to_string(),
            t.case.clone(),
            t.metric.to_string(),
            t.unit.to_string(),
        ];
        for (v, f) in &t.values[first..] {
            row.push(format!("{}{}", v.map_or("-".into(), num), mark(*f)));
        }
        row.push(sparkline(&t.values));
        let present: Vec<f64> = t.values.iter().filter_map(|(v, _)| *v).collect();
        row.push(match (present.first(), present.last()) {
            (Some(a), Some(b)) if present.len() > 1 && *a > 0.0 => {
                format!("{:+.1}%", (b - a) / a * 100.0)
            }
            _ => "-".into(),
        });
        rows.push(row);
    }
    out.push_str(&format!(
        "\ngating cells: {} ({} timing cells on real hardware, {} instruction counts; {} counts the same in every run, not listed)\n",
        h.trends.len(),
        h.trends.iter().filter(|t| !t.is_count()).count(),
        h.trends.iter().filter(|t| t.is_count()).count(),
        constant
    ));
    if shown.is_empty() {
        out.push_str("(no gating cell varied)\n");
    } else {
        out.push_str(&columns(&rows));
    }
    out.push_str(
        "marks: ! regression, ? inconclusive, + improvement (as each run's gate flagged it)\n",
    );
    let mut flagged = Vec::new();
    for t in &h.trends {
        for (i, (v, f)) in t.values.iter().enumerate() {
            if let Some(f) = f {
                flagged.push(format!(
                    "  #{} {}: {}: {}{}",
                    i + 1,
                    h.runs[i].run_id,
                    t.name(),
                    f.verdict.name(),
                    match (f.ratio, v) {
                        (Some(r), _) => format!(" (cost ratio {r:.3})"),
                        (None, Some(v)) => format!(" (now {})", num(*v)),
                        _ => String::new(),
                    }
                ));
            }
        }
    }
    out.push_str(&format!("\nflagged changes: {}\n", flagged.len()));
    for f in flagged {
        out.push_str(&f);
        out.push('\n');
    }
    out
}

/// An HTML page of the same: one panel per listed cell, the runs along x,
/// each flagged run marked with its verdict's colour and a ring.
pub fn html(h: &History) -> String {
    let panels: Vec<(String, String)> = h
        .trends
        .iter()
        .filter(|t| !t.is_count() || !t.constant() || t.flagged())
        .filter_map(|t| Some((esc(&t.name()), trend_chart(t, &h.runs)?)))
        .collect();
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">{}\
         <title>lockmatrix history</title><style>{}</style></head><body><h1>lockmatrix history: {} runs</h1>\
         <section id=\"runs\"><h2>Runs</h2>{}</section><section id=\"trends\"><h2>Gating cells</h2>\
         <p>Median per run; a ringed point is a change that run's gate flagged (red: regression, orange: inconclusive, green: improvement). \
         Instruction counts that never changed are not drawn.</p>{}</section></body></html>\n",
        crate::report::html::GENERATOR,
        crate::report::html::STYLE,
        h.runs.len(),
        run_list(&h.runs),
        crate::report::html::grid(panels)
    )
}

/// One cell's chart: its median per run, oldest first, each flagged run
/// ringed in its verdict's colour; `None` when it has no value to scale.
fn trend_chart(t: &Trend, runs: &[RunInfo]) -> Option<String> {
    let (left, right, top, bottom, height, width) = (52.0, 12.0, 10.0, 30.0, 170.0, 330.0);
    let y = Scale::fit(
        t.values.iter().filter_map(|(v, _)| *v),
        height - bottom,
        top,
        false,
    )?;
    let mut s = Svg::new(width, height);
    s.y_axis(&y, left, width - right, &t.unit);
    let n = t.values.len().max(2) as f64;
    let x = |i: usize| left + 10.0 + (width - left - right - 20.0) * i as f64 / (n - 1.0);
    s.line(
        (left, height - bottom),
        (width - right, height - bottom),
        "#888",
        1.0,
        "",
    );
    let step = ((t.values.len() as f64) / 8.0).ceil().max(1.0) as usize;
    for i in (0..t.values.len()).step_by(step) {
        s.text(
            x(i),
            height - bottom + 12.0,
            "middle",
            "tick",
            &format!("#{}", i + 1),
        );
    }
    s.text(
        (left + width - right) / 2.0,
        height - 4.0,
        "middle",
        "axis",
        "run (oldest first)",
    );
    let pts: Vec<(f64, f64)> = t
        .values
        .iter()
        .enumerate()
        .filter_map(|(i, (v, _))| Some((x(i), y.at((*v)?))))
        .collect();
    s.polyline(&pts, "#0072b2", &t.name());
    for (i, (v, f)) in t.values.iter().enumerate() {
        let Some(v) = v else { continue };
        let title = point_title(t, i, &runs[i], *v, *f);
        if let Some(f) = f {
            s.circle(
                x(i),
                y.at(*v),
                7.0,
                crate::report::html::verdict_colour(f.verdict),
                &title,
            );
        }
        s.circle(x(i), y.at(*v), 3.0, "#0072b2", &title);
    }
    Some(s.finish(&t.name()))
}

/// A point's tooltip: the run (`i`-th, oldest first), its commit, the
/// value, and what its gate flagged.
fn point_title(t: &Trend, i: usize, r: &RunInfo, v: f64, f: Option<Flag>) -> String {
    format!(
        "#{} {} (commit {}): {} {}{}",
        i + 1,
        r.run_id,
        r.commit,
        num(v),
        t.unit,
        f.map_or(String::new(), |f| format!(
            "; flagged: {}{}",
            f.verdict.name(),
            f.ratio
                .map_or(String::new(), |r| format!(", cost ratio {r:.3}"))
        ))
    )
}

/// The runs, oldest first: each one's id, start, commit, and the base
/// revision it ran against.
fn run_list(runs: &[RunInfo]) -> String {
    let mut out = String::from("<ol>");
    for r in runs {
        out.push_str(&format!(
            "<li><code>{}</code> started {}, commit <code>{}</code>{}</li>",
            esc(&r.run_id),
            esc(&r.started),
            esc(&r.commit),
            r.against
                .as_ref()
                .map_or(String::new(), |a| format!(", against {}", esc(a)))
        ));
    }
    out.push_str("</ol>");
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::{evaluate, GateOptions, Reference};
    use crate::report::tests::run_with;

    fn at(started: &str, commit: &str, scale: f64, insns: f64) -> Run {
        let mut r = run_with(scale, insns);
        r.started = started.into();
        r.run_id = started.replace([':', '-'], "");
        r.host.lockmatrix_commit =
            Some(crate::commit::CommitId::parse(&commit.repeat(40)[..40]).unwrap());
        r
    }

    #[test]
    fn runs_are_ordered_and_gate_flags_are_marked() {
        let base = at("2030-01-01T00:00:00Z", "aaa", 1.0, 21.0);
        let slower = at("2030-01-03T00:00:00Z", "ccc", 1.3, 22.0);
        let gate = evaluate(&slower, &Reference::Base(&base), &GateOptions::default()).unwrap();
        // Given out of order: the history sorts them by start time.
        let h = build(vec![
            (PathBuf::from("c"), slower, Some(gate)),
            (PathBuf::from("a"), base, None),
            (
                PathBuf::from("b"),
                at("2030-01-02T00:00:00Z", "bbb", 1.0, 21.0),
                None,
            ),
        ]);
        let ids: Vec<&str> = h.runs.iter().map(|r| r.commit.as_str()).collect();
        assert_eq!(ids, ["aaaaaaaaaaaa", "bbbbbbbbbbbb", "cccccccccccc"]);
        // QEMU timings are not gating cells; QEMU counts are.
        assert!(h
            .trends
            .iter()
            .all(|t| t.target == "x86_64" || t.metric == "insns_per_op"));
        let ticket = h
            .trends
            .iter()
            .find(|t| t.target == "aarch64" && t.case == "lock=ticket threads=1")
            .unwrap();
        assert_eq!(
            ticket.values.iter().map(|(v, _)| *v).collect::<Vec<_>>(),
            [Some(21.0), Some(21.0), Some(22.0)]
        );
        assert!(matches!(
            ticket.values[2].1,
            Some(Flag {
                verdict: Verdict::Regression,
                ..
            })
        ));
        let text = text(&h);
        let row: Vec<&str> = text
            .lines()
            .find(|l| l.starts_with("aarch64/spinlock"))
            .unwrap()
            .split_whitespace()
            .collect();
        assert_eq!(
            row,
            [
                "aarch64/spinlock",
                "lock_unlock",
                "lock=ticket",
                "threads=1",
                "insns_per_op",
                "insns",
                "21",
                "21",
                "22",
                "!",
                "▁▁█",
                "+4.8%"
            ]
        );
        assert!(text.contains("#3 20300103T000000Z: aarch64/spinlock lock_unlock [lock=ticket threads=1] insns_per_op: regression (cost ratio"), "{text}");
        // The unchanged counts are summed up, not listed.
        assert!(text.contains("counts the same in every run, not listed"));
        // Every native timing cell gates, the 1-thread `cas_local` too.
        assert!(text.contains("op=cas_local"), "{text}");
        let page = html(&h);
        assert!(page.contains("flagged: regression"));
    }
}
