//! The verdict of every cell of a run against its baseline.
//!
//! In this order: a cell without a baseline is `no_baseline`; one whose
//! baseline was recorded on another testbed (runner kind, CPU model,
//! emulator or compiler version), or with another unit, is `incomparable`;
//! one with missing or non-positive values is `not_comparable` (timings are
//! compared on a log scale); a QEMU timing (emulator time), and a fairness
//! or diagnostic metric anywhere ([`cells::gates`]), is `advisory`.
//! The remaining cells gate: each gets a one-sided Mann-Whitney p-value for
//! "slower by more than delta" ([`stats::compare`]); Holm's correction across
//! all of them at the family-wise alpha decides `regression` (fails the gate);
//! Benjamini-Hochberg at `fdr_q` lists the `possible_regression`s (advisory);
//! a cell whose ratio interval lies below `1 / (1 + delta)` is an
//! `improvement`; a cell that could not have reached significance under Holm
//! (too few rounds for its noise, [`stats::assess_power`] at `alpha / m`) is
//! `underpowered`; the rest are `unchanged`.

use super::baseline::{self, BaselineCell, Testbed};
use super::cells::{self, CellKey, RunCell, Summary};
use super::GateOptions;
use crate::protocol::{case_label, Better};
use crate::results::{Run, Status, SuiteRun, TargetResult};
use anyhow::Result;
use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// What the gate concluded about one cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Slower by more than delta, significant after Holm: fails the gate.
    Regression,
    /// Significant under Benjamini-Hochberg only: advisory.
    PossibleRegression,
    /// Faster by more than delta (the ratio interval is below `1 / (1 + delta)`).
    Improvement,
    /// A QEMU timing: emulator time, shown and never failing.
    Advisory,
    /// Too few rounds to detect a slowdown of delta after Holm; not significant.
    Underpowered,
    /// The baseline was recorded on another testbed or in another unit.
    Incomparable,
    /// Missing or non-positive values: cannot be compared on a log scale.
    NotComparable,
    /// A new cell: no baseline to compare with.
    NoBaseline,
    Unchanged,
}

impl Verdict {
    pub const ALL: [Verdict; 9] = [
        Verdict::Regression,
        Verdict::PossibleRegression,
        Verdict::Improvement,
        Verdict::Advisory,
        Verdict::Underpowered,
        Verdict::Incomparable,
        Verdict::NotComparable,
        Verdict::NoBaseline,
        Verdict::Unchanged,
    ];

    /// The snake_case name used in the JSON report.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Regression => "regression",
            Verdict::PossibleRegression => "possible_regression",
            Verdict::Improvement => "improvement",
            Verdict::Advisory => "advisory",
            Verdict::Underpowered => "underpowered",
            Verdict::Incomparable => "incomparable",
            Verdict::NotComparable => "not_comparable",
            Verdict::NoBaseline => "no_baseline",
            Verdict::Unchanged => "unchanged",
        }
    }
}

/// The effect of head against base, as a cost ratio.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Effect {
    /// Hodges-Lehmann estimate of head / base cost (`1 / value` for
    /// higher-is-better metrics): 1.10 = 10% slower.
    pub ratio: f64,
    /// The interval of the ratio at `confidence` (serialized as `null` when
    /// unbounded: too few rounds for the level).
    pub lo: f64,
    pub hi: f64,
    pub confidence: f64,
    /// One-sided Mann-Whitney p-value of "slower by more than delta", per cell.
    pub p: f64,
    /// Holm-adjusted p-value across the gating cells (gating cells only).
    pub p_holm: Option<f64>,
    /// Benjamini-Hochberg-adjusted p-value (gating cells only).
    pub p_bh: Option<f64>,
}

/// One cell's comparison and verdict.
#[derive(Debug, Clone, Serialize)]
pub struct CellReport {
    pub target: String,
    pub suite: String,
    pub bench: String,
    pub case: Map<String, Value>,
    pub metric: String,
    pub unit: String,
    pub better: Better,
    pub verdict: Verdict,
    /// The run's values (original units).
    pub head: Summary,
    /// The baseline's values, when there is a baseline cell.
    pub base: Option<Summary>,
    pub effect: Option<Effect>,
    /// Gating cells: too few rounds to reach Holm's per-cell level.
    pub underpowered: bool,
    /// Rounds per side the cell would need (gating cells; `None`: unknown).
    pub rounds_needed: Option<usize>,
    /// Why a cell is incomparable or not comparable.
    pub note: Option<String>,
}

impl CellReport {
    pub fn case_label(&self) -> String {
        case_label(&self.case)
    }

    /// The per-cell interval lies above `1 + delta`.
    pub fn clearly_slower(&self, delta: f64) -> bool {
        self.effect.is_some_and(|e| e.lo > 1.0 + delta)
    }

    /// The per-cell interval lies below `1 / (1 + delta)`.
    pub fn clearly_faster(&self, delta: f64) -> bool {
        self.effect.is_some_and(|e| e.hi < 1.0 / (1.0 + delta))
    }
}

/// A failed correctness check: always fails the gate.
#[derive(Debug, Clone, Serialize)]
pub struct FailedCheck {
    pub target: String,
    pub suite: String,
    pub bench: String,
    pub case: Map<String, Value>,
    pub name: String,
    pub details: Value,
}

/// A problem (fails the gate) or a note (never fails), about a target or
/// one of its suites.
#[derive(Debug, Clone, Serialize)]
pub struct Item {
    pub target: String,
    pub suite: Option<String>,
    pub what: String,
}

impl Item {
    pub fn place(&self) -> String {
        match &self.suite {
            Some(s) => format!("{}/{s}", self.target),
            None => self.target.clone(),
        }
    }
}

/// The gate's findings for one run.
#[derive(Debug, Clone, Serialize)]
pub struct GateReport {
    pub run_id: String,
    pub baselines: String,
    pub options: GateOptions,
    pub failed_checks: Vec<FailedCheck>,
    /// Broken targets and suites, unreadable baselines: each fails the gate.
    pub problems: Vec<Item>,
    /// Targets not run, baseline cells the run lacks, ...: never fail.
    pub notes: Vec<Item>,
    /// Every cell of the run, in run order (target, suite, then cell key).
    pub cells: Vec<CellReport>,
    /// How many cells gate (Holm's family).
    pub family: usize,
    /// `alpha / family`: the level a lone slowdown must reach under Holm.
    pub cell_alpha: f64,
}

impl GateReport {
    /// Whether the gate fails: a failed check, a problem or a regression.
    pub fn failed(&self) -> bool {
        !self.failed_checks.is_empty()
            || !self.problems.is_empty()
            || self.cells.iter().any(|c| c.verdict == Verdict::Regression)
    }

    pub fn count(&self, verdict: Verdict) -> usize {
        self.cells.iter().filter(|c| c.verdict == verdict).count()
    }

    pub fn with(&self, verdict: Verdict) -> impl Iterator<Item = &CellReport> {
        self.cells.iter().filter(move |c| c.verdict == verdict)
    }
}

/// A gating cell waiting for the multiplicity correction.
struct Pending {
    index: usize,
    base: Vec<f64>,
    head: Vec<f64>,
}

/// Compares every cell of `run` with the baselines under `baselines` and
/// gives each its verdict. Errors only on bad options or a `baselines` path
/// that is not a directory; an unreadable baseline file is a problem in the
/// report (the gate fails), and the file is left as it is.
pub fn evaluate(run: &Run, baselines: &Path, opts: &GateOptions) -> Result<GateReport> {
    opts.check()?;
    if baselines.exists() && !baselines.is_dir() {
        crate::error::exit2!(
            "{}: not a directory (expected baselines/<target>/<suite>.json)",
            baselines.display()
        );
    }
    let mut report = GateReport {
        run_id: run.run_id.clone(),
        baselines: baselines.display().to_string(),
        options: *opts,
        failed_checks: Vec::new(),
        problems: Vec::new(),
        notes: Vec::new(),
        cells: Vec::new(),
        family: 0,
        cell_alpha: opts.alpha,
    };
    if !baselines.exists() {
        report.notes.push(Item {
            target: "*".into(),
            suite: None,
            what: format!(
                "no baselines directory at {}: every cell is new",
                baselines.display()
            ),
        });
    }
    let mut pending = Vec::new();
    for t in &run.targets {
        target_status(t, &mut report);
        let testbed = Testbed::of(run, t);
        for s in &t.suites {
            suite(t, s, &testbed, baselines, opts, &mut report, &mut pending);
        }
    }
    correct(&mut report, &pending, opts);
    Ok(report)
}

fn item(t: &TargetResult, suite: Option<&SuiteRun>, what: String) -> Item {
    Item {
        target: t.name.clone(),
        suite: suite.map(|s| s.suite.clone()),
        what,
    }
}

/// A target that was not run is a note; one that broke outside its suites
/// (set-up, build) is a problem. Suite failures are reported per suite.
fn target_status(t: &TargetResult, report: &mut GateReport) {
    match &t.status {
        Status::Ok => {}
        Status::NotRun(why) => report.notes.push(item(t, None, format!("not run: {why}"))),
        Status::Failed(why) => {
            if !t
                .suites
                .iter()
                .any(|s| matches!(s.status, Status::Failed(_)))
            {
                report
                    .problems
                    .push(item(t, None, format!("failed: {why}")));
            }
        }
    }
}

fn suite(
    t: &TargetResult,
    s: &SuiteRun,
    testbed: &Testbed,
    baselines: &Path,
    opts: &GateOptions,
    report: &mut GateReport,
    pending: &mut Vec<Pending>,
) {
    let failed: Vec<_> = s.checks.iter().filter(|c| !c.ok).collect();
    for c in &failed {
        report.failed_checks.push(FailedCheck {
            target: t.name.clone(),
            suite: s.suite.clone(),
            bench: c.bench.clone(),
            case: c.case.clone(),
            name: c.name.clone(),
            details: c.details.clone(),
        });
    }
    match &s.status {
        Status::Ok => {}
        // The failed checks are listed on their own.
        Status::Failed(why) if !failed.is_empty() && why.starts_with("check ") => {}
        Status::Failed(why) => report
            .problems
            .push(item(t, Some(s), format!("failed: {why}"))),
        Status::NotRun(why) => report
            .notes
            .push(item(t, Some(s), format!("not run: {why}"))),
    }
    let run_cells = cells::collect(&s.samples);
    if run_cells.is_empty() {
        return;
    }
    let path = baseline::path(baselines, &t.name, &s.suite);
    let base = match baseline::read(&path, &t.name, &s.suite) {
        Ok(b) => b,
        Err(e) => {
            report.problems.push(item(
                t,
                Some(s),
                format!("{e:#}; its {} cells were not compared", run_cells.len()),
            ));
            return;
        }
    };
    let testbed_differs = base
        .as_ref()
        .map(|b| b.testbed.differences(testbed))
        .unwrap_or_default();
    let base_cells: BTreeMap<CellKey, &BaselineCell> = base
        .iter()
        .flat_map(|b| &b.cells)
        .map(|c| (c.key(), c))
        .collect();
    for cell in &run_cells {
        let mut r = CellReport {
            target: t.name.clone(),
            suite: s.suite.clone(),
            bench: cell.key.bench.clone(),
            case: cell.case.clone(),
            metric: cell.key.metric.clone(),
            unit: cell.unit.clone(),
            better: cell.better,
            verdict: Verdict::NoBaseline,
            head: Summary::of(&cell.samples),
            base: None,
            effect: None,
            underpowered: false,
            rounds_needed: None,
            note: None,
        };
        if let Some(bc) = base_cells.get(&cell.key) {
            if let Some(p) = judge(&mut r, cell, bc, &testbed_differs, t, opts) {
                pending.push(Pending {
                    index: report.cells.len(),
                    ..p
                });
            }
        }
        report.cells.push(r);
    }
    let run_keys: std::collections::BTreeSet<&CellKey> = run_cells.iter().map(|c| &c.key).collect();
    let missing: Vec<String> = base_cells
        .iter()
        .filter(|(k, _)| !run_keys.contains(k))
        .map(|(_, c)| format!("{} [{}] {}", c.bench, case_label(&c.case), c.metric))
        .collect();
    if !missing.is_empty() {
        let shown: Vec<&str> = missing.iter().take(3).map(String::as_str).collect();
        let more = if missing.len() > 3 { ", ..." } else { "" };
        report.notes.push(item(
            t,
            Some(s),
            format!(
                "{} baseline cells not in this run: {}{more}",
                missing.len(),
                shown.join(", ")
            ),
        ));
    }
}

/// Sets the verdict of a cell that has a baseline cell, unless it gates:
/// then returns its values for the multiplicity correction.
fn judge(
    r: &mut CellReport,
    cell: &RunCell,
    bc: &BaselineCell,
    testbed_differs: &[String],
    t: &TargetResult,
    opts: &GateOptions,
) -> Option<Pending> {
    r.base = Some(Summary::of(&bc.samples));
    let mut differs = testbed_differs.to_vec();
    if bc.unit != cell.unit {
        differs.push(format!("unit: baseline `{}`, run `{}`", bc.unit, cell.unit));
    }
    if bc.better != cell.better {
        differs.push(format!(
            "better: baseline `{:?}`, run `{:?}`",
            bc.better, cell.better
        ));
    }
    if cell.key.metric == INSNS {
        judge_insns(r, cell, bc, differs, t.insns_tolerance);
        return None;
    }
    let base = cells::lower_is_better(&bc.samples, bc.better);
    let head = cells::lower_is_better(&cell.samples, cell.better);
    let (Some(base), Some(head)) = (base, head) else {
        r.verdict = if !differs.is_empty() {
            Verdict::Incomparable
        } else if !cells::gates(&cell.key.metric, &cell.unit) {
            // E.g. a fairness cv of 0 with one thread: nothing to gate on.
            Verdict::Advisory
        } else {
            Verdict::NotComparable
        };
        differs.push("not comparable (missing or non-positive values)".into());
        r.note = Some(differs.join("; "));
        return None;
    };
    if bc.better == cell.better {
        match stats::compare(&base, &head, opts.delta, opts.alpha) {
            Ok(c) => {
                r.effect = Some(Effect {
                    ratio: c.ratio,
                    lo: c.ratio_lo,
                    hi: c.ratio_hi,
                    confidence: c.confidence,
                    p: c.p_mann_whitney,
                    p_holm: None,
                    p_bh: None,
                })
            }
            Err(e) => differs.push(format!("not comparable: {e}")),
        }
    }
    if !testbed_differs.is_empty() || bc.unit != cell.unit || bc.better != cell.better {
        r.verdict = Verdict::Incomparable;
        r.note = Some(differs.join("; "));
        return None;
    }
    if r.effect.is_none() {
        r.verdict = Verdict::NotComparable;
        r.note = Some(differs.join("; "));
        return None;
    }
    if t.runner == "qemu" {
        r.verdict = Verdict::Advisory;
        r.note = Some("QEMU timing (emulator time): advisory".into());
        return None;
    }
    if !cells::gates(&cell.key.metric, &cell.unit) {
        r.verdict = Verdict::Advisory;
        r.note = Some("fairness or diagnostic metric: advisory".into());
        return None;
    }
    Some(Pending {
        index: 0,
        base,
        head,
    })
}

/// The metric of instruction counts under QEMU's plugin.
const INSNS: &str = "insns_per_op";

/// Instruction counts repeat exactly, so they gate without statistics and
/// on QEMU too: more instructions than the baseline by more than the
/// target's tolerance (0 unless targets.yaml sets `insns_tolerance`) is a
/// regression, fewer is an improvement. A count from another QEMU or
/// compiler is incomparable.
fn judge_insns(
    r: &mut CellReport,
    cell: &RunCell,
    bc: &BaselineCell,
    differs: Vec<String>,
    tolerance: f64,
) {
    let median = |v: &[Option<f64>]| Summary::of(v).median;
    let (Some(head), Some(base)) = (median(&cell.samples), median(&bc.samples)) else {
        r.verdict = Verdict::NotComparable;
        r.note = Some("no instruction count on one side".into());
        return;
    };
    if !differs.is_empty() {
        r.verdict = Verdict::Incomparable;
        r.note = Some(differs.join("; "));
        return;
    }
    let ratio = if base > 0.0 {
        head / base
    } else if head > base {
        f64::INFINITY
    } else {
        1.0
    };
    let exact = (head - base).abs() <= 1e-9 * base.abs().max(1.0);
    r.effect = Some(Effect {
        ratio,
        lo: ratio,
        hi: ratio,
        confidence: 1.0,
        p: if exact { 1.0 } else { 0.0 },
        p_holm: None,
        p_bh: None,
    });
    r.note = Some(format!(
        "{head} insns/op vs {base} in the baseline (exact; tolerance {tolerance})"
    ));
    r.verdict = if exact || (head - base).abs() <= tolerance * base.abs() {
        Verdict::Unchanged
    } else if head > base {
        Verdict::Regression
    } else {
        Verdict::Improvement
    };
}

/// Holm across all gating cells decides the regressions; BH lists the
/// possible ones; the rest are improvements, underpowered or unchanged.
fn correct(report: &mut GateReport, pending: &[Pending], opts: &GateOptions) {
    let m = pending.len();
    report.family = m;
    report.cell_alpha = opts.alpha / m.max(1) as f64;
    let p: Vec<f64> = pending
        .iter()
        .map(|c| report.cells[c.index].effect.map_or(1.0, |e| e.p))
        .collect();
    let holm = stats::holm_adjust(&p);
    let bh = stats::bh_adjust(&p);
    for (i, c) in pending.iter().enumerate() {
        let power = stats::assess_power(&c.base, &c.head, opts.delta, report.cell_alpha).ok();
        let r = &mut report.cells[c.index];
        let Some(e) = r.effect.as_mut() else { continue };
        e.p_holm = Some(holm[i]);
        e.p_bh = Some(bh[i]);
        let e = *e;
        r.underpowered = power.is_none_or(|p| p.underpowered);
        r.rounds_needed = power.and_then(|p| p.rounds_needed);
        r.verdict = if holm[i] <= opts.alpha {
            Verdict::Regression
        } else if bh[i] <= opts.fdr_q {
            Verdict::PossibleRegression
        } else if e.hi < 1.0 / (1.0 + opts.delta) {
            Verdict::Improvement
        } else if r.underpowered {
            Verdict::Underpowered
        } else {
            Verdict::Unchanged
        };
    }
}
