//! `validate-gate`: the gate's own accuracy, measured on this machine.
//!
//! Two ways, both evaluating the real gate ([`evaluate`](super::evaluate()),
//! Holm across all gating cells together) against baselines written with
//! [`update_baselines`]:
//!
//! - [`resample`]: one recorded run with many rounds. Each evaluation splits
//!   every suite's rounds at random into two disjoint halves (the same rounds
//!   for all cells of a suite, so a noisy round stays one round), records one
//!   half as the baselines and gates the other (A/A). Both halves come from
//!   one invocation, so this misses noise between invocations (the vCPU moves
//!   DESIGN.md describes): [`end_to_end`] measures that.
//! - [`end_to_end`]: several independent runs of the same targets. The first
//!   is the baseline; every later run is gated against it (A/A).
//!
//! A false alarm is an A/A evaluation with any `regression`. Power: the same
//! head with every value of one randomly chosen gating cell made slower by
//! 5% or 10% (multiplied, or divided for higher-is-better metrics); detected
//! when that cell's verdict is `regression`. The gate tests "slower by more
//! than `delta`", so with the default `delta` of 5% an injected 5% slowdown
//! sits on the null boundary and is found about as often as a false alarm:
//! the report says so, with the rounds per side and the gating cells per
//! evaluation, so the figures can be read honestly.
//!
//! Only targets whose timings gate count (every runner but `qemu`, whose
//! timings are emulator time and advisory); suites that failed are left out
//! and named in the notes. Deterministic for a seed.

use super::cells::CellKey;
use super::evaluate::{evaluate, CellReport, GateReport, Verdict};
use super::render::cell_name;
use super::update::update_baselines;
use super::GateOptions;
use crate::protocol::Better;
use crate::results::{Run, Status};
use anyhow::{bail, Context, Result};
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// The injected slowdowns whose detection rate is the power.
pub const SLOWDOWNS: [f64; 2] = [0.05, 0.10];
/// The goal: a family-wise false-alarm rate of at most 5% ...
pub const GOAL_MAX_RATE: f64 = 0.05;
/// ... measured over at least 60 A/A evaluations (0 of 60 bounds it below 4.9%).
pub const GOAL_MIN_EVALUATIONS: usize = 60;

/// How many evaluations, with which seed, of which gate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ValidateOptions {
    /// Resampling: A/A splits (each also gives one power evaluation per
    /// slowdown). End to end: power evaluations per slowdown (the A/A
    /// evaluations are the later runs).
    pub evaluations: usize,
    pub seed: u64,
    pub gate: GateOptions,
}

impl Default for ValidateOptions {
    fn default() -> Self {
        ValidateOptions {
            evaluations: 100,
            seed: 1,
            gate: GateOptions::default(),
        }
    }
}

impl ValidateOptions {
    /// Checks the ranges, as an exit-status-2 error naming the bad option.
    pub fn check(&self) -> Result<()> {
        if self.evaluations == 0 {
            crate::error::exit2!(
                "--evaluations is 0: expected at least 1 \
                 ({GOAL_MIN_EVALUATIONS} or more to state the false-alarm rate)"
            );
        }
        self.gate.check()
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    Resample,
    EndToEnd,
}

/// Smallest, largest and mean of a count over evaluations or cells.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    pub min: usize,
    pub max: usize,
    pub mean: f64,
}

impl Spread {
    fn of(values: &[usize]) -> Spread {
        Spread {
            min: values.iter().copied().min().unwrap_or(0),
            max: values.iter().copied().max().unwrap_or(0),
            mean: if values.is_empty() {
                0.0
            } else {
                values.iter().sum::<usize>() as f64 / values.len() as f64
            },
        }
    }

    fn show(&self) -> String {
        if self.min == self.max {
            self.min.to_string()
        } else {
            format!("{}-{} (mean {:.1})", self.min, self.max, self.mean)
        }
    }
}

/// How often one injected slowdown was detected.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Detection {
    /// 0.05 = every value of the cell 5% slower.
    pub slowdown: f64,
    pub evaluations: usize,
    pub detected: usize,
    /// `detected / evaluations`: the power.
    pub rate: f64,
    /// Two-sided 95% Clopper-Pearson interval of the rate.
    pub ci95: [f64; 2],
    /// Injections into a cell the gate flagged `underpowered` (too few rounds
    /// for its noise to detect a slowdown of `delta` beyond `delta`).
    pub injected_underpowered: usize,
    /// Detections among the other injections.
    pub detected_when_powered: usize,
    /// The detection rate among the other injections (`None`: there were none).
    pub rate_when_powered: Option<f64>,
    /// Injections into a cell that regressed without the injection (a false
    /// alarm of the A/A evaluation, not a detection; counted in `detected`
    /// when it still regresses).
    pub injected_already_regressed: usize,
    /// Evaluations where another cell than the injected one regressed too.
    pub other_regressions: usize,
}

/// The measured accuracy of the gate.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Validation {
    pub method: Method,
    /// The run(s) measured; end to end, the first is the baseline.
    pub run_ids: Vec<String>,
    /// The targets whose cells gate.
    pub targets: Vec<String>,
    pub options: ValidateOptions,
    /// A/A evaluations.
    pub evaluations: usize,
    /// A/A evaluations with any `regression`.
    pub false_alarms: usize,
    pub false_alarm_rate: f64,
    /// One-sided 95% Clopper-Pearson upper bound of the false-alarm rate.
    pub false_alarm_upper95: f64,
    /// One entry per [`SLOWDOWNS`].
    pub power: Vec<Detection>,
    /// Gating cells (Holm's family) per A/A evaluation.
    pub cells_per_evaluation: Spread,
    /// Rounds per side of the gating cells, over all A/A evaluations.
    pub base_rounds: Spread,
    pub head_rounds: Spread,
    /// `alpha / cells`: the level a lone slowdown must reach under Holm
    /// (at the smallest family).
    pub cell_alpha: f64,
    /// The fewest rounds per side with which the rank test can reach `cell_alpha` at all.
    pub min_rounds_per_side: usize,
    /// Gating cells flagged `underpowered` per A/A evaluation.
    pub underpowered_per_evaluation: Spread,
    /// A/A evaluations with any `possible_regression` (the advisory list).
    pub advisory_alarms: usize,
    /// The cells that raised false alarms and how often, most often first.
    pub false_alarm_cells: Vec<(String, usize)>,
    /// Targets and suites left out, and why.
    pub notes: Vec<String>,
}

impl Validation {
    fn method_text(&self) -> &'static str {
        match self.method {
            Method::Resample => {
                "resample: each A/A evaluation splits every suite's rounds at random into two \
                 disjoint halves of one recorded run, records one half as the baselines and gates \
                 the other (within one invocation: misses noise between invocations)"
            }
            Method::EndToEnd => {
                "end to end: the first run is recorded as the baselines and every later \
                 independent run is gated against it"
            }
        }
    }

    /// Whether the measured false-alarm rate meets the goal (at most 5%
    /// with at least 60 A/A evaluations).
    pub fn goal_met(&self) -> bool {
        self.evaluations >= GOAL_MIN_EVALUATIONS && self.false_alarm_rate <= GOAL_MAX_RATE
    }

    /// The report: `evaluations`, `false_alarms`, `false_alarm_rate`,
    /// `false_alarm_upper95`, `power` (`{"0.05": rate, "0.10": rate}`), and
    /// `details`.
    pub fn json(&self) -> Value {
        let power: Map<String, Value> = self
            .power
            .iter()
            .map(|d| (slowdown_key(d.slowdown), json!(d.rate)))
            .collect();
        let power_details: Map<String, Value> = self
            .power
            .iter()
            .map(|d| (slowdown_key(d.slowdown), json!(d)))
            .collect();
        let alarm_cells: Vec<Value> = self
            .false_alarm_cells
            .iter()
            .map(|(cell, n)| json!({"cell": cell, "false_alarms": n}))
            .collect();
        json!({
            "evaluations": self.evaluations,
            "false_alarms": self.false_alarms,
            "false_alarm_rate": self.false_alarm_rate,
            "false_alarm_upper95": self.false_alarm_upper95,
            "power": power,
            "details": {
                "method": self.method,
                "description": self.method_text(),
                "run_ids": self.run_ids,
                "targets": self.targets,
                "seed": self.options.seed,
                "gate": self.options.gate,
                "cells_per_evaluation": self.cells_per_evaluation,
                "rounds_per_side": {"base": self.base_rounds, "head": self.head_rounds},
                "cell_alpha": self.cell_alpha,
                "min_rounds_per_side": self.min_rounds_per_side,
                "underpowered_per_evaluation": self.underpowered_per_evaluation,
                "advisory_alarms": self.advisory_alarms,
                "false_alarm_cells": alarm_cells,
                "power": power_details,
                "goal": {
                    "max_false_alarm_rate": GOAL_MAX_RATE,
                    "min_evaluations": GOAL_MIN_EVALUATIONS,
                    "met": self.goal_met(),
                    "upper95_within": self.false_alarm_upper95 <= GOAL_MAX_RATE,
                },
                "notes": self.notes,
            }
        })
    }

    /// A few lines for the terminal.
    pub fn terminal(&self) -> String {
        let mut out = String::new();
        let what = match self.method {
            Method::Resample => format!(
                "resampling run {} ({} A/A splits)",
                self.run_ids.join(", "),
                self.evaluations
            ),
            Method::EndToEnd => format!(
                "end to end: {} runs, the first ({}) as the baseline",
                self.run_ids.len(),
                self.run_ids.first().map_or("", String::as_str)
            ),
        };
        out.push_str(&format!(
            "gate validation, {what}; targets: {}\n",
            self.targets.join(", ")
        ));
        out.push_str(&format!(
            "  {} gating cells per evaluation, rounds per side {} base / {} head; \
             Holm's per-cell level {:.3e} needs >= {} rounds per side; {} cells underpowered\n",
            self.cells_per_evaluation.show(),
            self.base_rounds.show(),
            self.head_rounds.show(),
            self.cell_alpha,
            self.min_rounds_per_side,
            self.underpowered_per_evaluation.show(),
        ));
        out.push_str(&format!(
            "  A/A: {} false alarms in {} evaluations: rate {:.3}, 95% upper bound {:.4} \
             (goal: at most {GOAL_MAX_RATE} with at least {GOAL_MIN_EVALUATIONS} evaluations: {})\n",
            self.false_alarms,
            self.evaluations,
            self.false_alarm_rate,
            self.false_alarm_upper95,
            if self.goal_met() { "met" } else { "NOT met" },
        ));
        for (cell, n) in self.false_alarm_cells.iter().take(5) {
            out.push_str(&format!("    false alarm x{n}: {cell}\n"));
        }
        for d in &self.power {
            out.push_str(&format!(
                "  power at {:.0}% slower: {}/{} = {:.2} (95% CI {:.2}-{:.2}); {} of {} injections \
                 into cells with enough rounds detected, {} into underpowered cells\n",
                d.slowdown * 100.0,
                d.detected,
                d.evaluations,
                d.rate,
                d.ci95[0],
                d.ci95[1],
                d.detected_when_powered,
                d.evaluations - d.injected_underpowered,
                d.injected_underpowered,
            ));
            if d.injected_already_regressed > 0 {
                out.push_str(&format!(
                    "    {} of the injected cells regressed without the injection (false alarms)\n",
                    d.injected_already_regressed
                ));
            }
        }
        let delta = self.options.gate.delta;
        if let Some(d) = self.power.iter().find(|d| d.slowdown <= delta + 1e-12) {
            out.push_str(&format!(
                "  the gate fails a cell slower by more than delta = {:.0}%: a {:.0}% slowdown \
                 is within its null hypothesis, found about as often as a false alarm\n",
                delta * 100.0,
                d.slowdown * 100.0,
            ));
        }
        for note in &self.notes {
            out.push_str(&format!("  note: {note}\n"));
        }
        out
    }
}

/// The combined report of `validate-gate`: the resampling figures at the top
/// level and the end-to-end ones, when measured, under `end_to_end`.
pub fn report_json(resampled: &Validation, end_to_end: Option<&Validation>) -> Value {
    let mut v = resampled.json();
    if let (Some(e), Some(map)) = (end_to_end, v.as_object_mut()) {
        map.insert("end_to_end".into(), e.json());
    }
    v
}

fn slowdown_key(s: f64) -> String {
    format!("{s:.2}")
}

/// Resampling: A/A splits of one recorded run with many rounds, and the
/// same splits with one cell slowed by each of [`SLOWDOWNS`].
pub fn resample(run: &Run, opts: &ValidateOptions) -> Result<Validation> {
    opts.check()?;
    let (run, notes) = gating_part(run)?;
    // Per suite: each sample's round as its position in its cell (in round
    // order), and the most rounds a cell has.
    let suites: Vec<(usize, usize, Vec<usize>, usize)> = run
        .targets
        .iter()
        .enumerate()
        .flat_map(|(ti, t)| t.suites.iter().enumerate().map(move |(si, s)| (ti, si, s)))
        .map(|(ti, si, s)| {
            let (positions, rounds) = positions(&s.samples);
            (ti, si, positions, rounds)
        })
        .collect();
    if suites.iter().all(|(_, _, _, rounds)| *rounds < 2) {
        bail!(
            "run {} has fewer than 2 rounds per cell: nothing to split \
             (record one with e.g. `cargo xtask matrix --rounds 20`)",
            run.run_id
        );
    }
    let dir = TempDir::new("resample")?;
    let mut rng = SplitMix64::new(opts.seed);
    let mut tally = Tally::default();
    for _ in 0..opts.evaluations {
        let (mut base, mut head) = (run.clone(), run.clone());
        for (ti, si, positions, rounds) in &suites {
            // side[round]: 0 left out (an odd one), 1 base, 2 head.
            let mut order: Vec<usize> = (0..*rounds).collect();
            rng.shuffle(&mut order);
            let half = rounds / 2;
            let mut side = vec![0u8; *rounds];
            for (k, &round) in order.iter().enumerate().take(2 * half) {
                side[round] = if k < half { 1 } else { 2 };
            }
            let pick = |which: u8| {
                let all = &run.targets[*ti].suites[*si].samples;
                all.iter()
                    .zip(positions)
                    .filter(|(_, &p)| side[p] == which)
                    .map(|(x, _)| x.clone())
                    .collect()
            };
            base.targets[*ti].suites[*si].samples = pick(1);
            head.targets[*ti].suites[*si].samples = pick(2);
        }
        update_baselines(&base, &dir.0, None, None, "validate-gate")
            .context("recording the base half as baselines")?;
        tally.evaluate(&head, &dir.0, opts, &mut rng)?;
    }
    Ok(tally.finish(
        Method::Resample,
        vec![run.run_id.clone()],
        &run,
        opts,
        notes,
    ))
}

/// End to end: the first of several independent runs of the same targets as
/// the baseline, every later run gated against it (A/A); the power from
/// `opts.evaluations` injections per slowdown spread over the later runs.
pub fn end_to_end(runs: &[Run], opts: &ValidateOptions) -> Result<Validation> {
    opts.check()?;
    if runs.len() < 2 {
        crate::error::exit2!(
            "end to end needs at least 2 runs (a baseline and a head), got {}",
            runs.len()
        );
    }
    let mut notes = Vec::new();
    let mut parts = Vec::new();
    for run in runs {
        let (part, n) = gating_part(run)?;
        notes.extend(n.into_iter().map(|n| format!("run {}: {n}", run.run_id)));
        parts.push(part);
    }
    let dir = TempDir::new("end-to-end")?;
    update_baselines(&parts[0], &dir.0, None, None, "validate-gate")
        .context("recording the first run as baselines")?;
    let mut rng = SplitMix64::new(opts.seed);
    let mut tally = Tally::default();
    let mut gating = Vec::new();
    for head in &parts[1..] {
        gating.push(tally.aa(head, &dir.0, opts)?);
    }
    let pairs = parts.len() - 1;
    for j in 0..opts.evaluations.max(pairs) {
        let head = &parts[1 + j % pairs];
        tally.inject(head, &gating[j % pairs], &dir.0, opts, &mut rng)?;
    }
    let ids = runs.iter().map(|r| r.run_id.clone()).collect();
    Ok(tally.finish(Method::EndToEnd, ids, &parts[0], opts, notes))
}

/// Each sample's position in its cell's values in round order (what
/// [`cells::collect`](super::cells::collect) yields), and the most values a
/// cell has. Positions, not round numbers, so that a run whose rounds are all
/// numbered alike still splits.
fn positions(samples: &[crate::protocol::Sample]) -> (Vec<usize>, usize) {
    let mut by_cell: BTreeMap<CellKey, Vec<usize>> = BTreeMap::new();
    for (i, x) in samples.iter().enumerate() {
        by_cell
            .entry(CellKey::new(&x.bench, &x.case, &x.metric))
            .or_default()
            .push(i);
    }
    let mut positions = vec![0; samples.len()];
    let mut rounds = 0;
    for mut idx in by_cell.into_values() {
        idx.sort_by_key(|&i| samples[i].round);
        rounds = rounds.max(idx.len());
        for (p, i) in idx.into_iter().enumerate() {
            positions[i] = p;
        }
    }
    (positions, rounds)
}

/// The part of a run whose timings gate: targets that are not run under
/// QEMU, and of them the suites that ran ok with every check passed. The
/// notes name what was left out.
fn gating_part(run: &Run) -> Result<(Run, Vec<String>)> {
    let mut part = run.clone();
    let mut notes = Vec::new();
    part.targets.retain(|t| {
        if t.runner == "qemu" {
            notes.push(format!(
                "{}: QEMU timings are advisory: not validated",
                t.name
            ));
            return false;
        }
        if let Status::NotRun(why) = &t.status {
            notes.push(format!("{}: not run: {why}", t.name));
            return false;
        }
        true
    });
    for t in &mut part.targets {
        let name = t.name.clone();
        t.suites.retain(|s| {
            let ok = s.status == Status::Ok && s.checks.iter().all(|c| c.ok);
            if !ok {
                notes.push(format!(
                    "{name}/{}: {}: left out",
                    s.suite,
                    s.status.label()
                ));
            }
            ok
        });
        t.status = Status::Ok;
    }
    part.targets.retain(|t| !t.suites.is_empty());
    if part.targets.is_empty() {
        let why = if notes.is_empty() {
            String::new()
        } else {
            format!(" ({})", notes.join("; "))
        };
        bail!(
            "run {} has no suite run ok on a target whose timings gate{why}: \
             validate the gate on this machine's native target, e.g. \
             `cargo xtask matrix --targets x86_64 --rounds 20`",
            run.run_id
        );
    }
    Ok((part, notes))
}

/// A gating cell of a head run.
#[derive(Debug, Clone)]
struct GatingCell {
    target: String,
    suite: String,
    bench: String,
    case: String,
    metric: String,
    better: Better,
    underpowered: bool,
    /// Its A/A verdict was `regression`.
    regressed: bool,
}

impl GatingCell {
    fn of(c: &CellReport) -> GatingCell {
        GatingCell {
            target: c.target.clone(),
            suite: c.suite.clone(),
            bench: c.bench.clone(),
            case: super::cells::canonical_case(&c.case),
            metric: c.metric.clone(),
            better: c.better,
            underpowered: c.underpowered,
            regressed: c.verdict == Verdict::Regression,
        }
    }

    fn is(&self, c: &CellReport) -> bool {
        c.target == self.target
            && c.suite == self.suite
            && c.bench == self.bench
            && c.metric == self.metric
            && super::cells::canonical_case(&c.case) == self.case
    }

    /// `head` with every value of this cell made slower by `slowdown`.
    fn slowed(&self, head: &Run, slowdown: f64) -> Run {
        let mut run = head.clone();
        let factor = match self.better {
            Better::Lower => 1.0 + slowdown,
            Better::Higher => 1.0 / (1.0 + slowdown),
        };
        for t in run.targets.iter_mut().filter(|t| t.name == self.target) {
            for s in t.suites.iter_mut().filter(|s| s.suite == self.suite) {
                for x in s.samples.iter_mut() {
                    if x.bench == self.bench
                        && x.metric == self.metric
                        && super::cells::canonical_case(&x.case) == self.case
                    {
                        x.value = x.value.map(|v| v * factor);
                    }
                }
            }
        }
        run
    }
}

/// Gating cells: those in Holm's family.
fn gating(report: &GateReport) -> Vec<&CellReport> {
    report
        .cells
        .iter()
        .filter(|c| c.effect.is_some_and(|e| e.p_holm.is_some()))
        .collect()
}

/// What the evaluations found so far.
#[derive(Default)]
struct Tally {
    evaluations: usize,
    false_alarms: usize,
    advisory_alarms: usize,
    cells: Vec<usize>,
    underpowered: Vec<usize>,
    base_rounds: Vec<usize>,
    head_rounds: Vec<usize>,
    alarm_cells: BTreeMap<String, usize>,
    /// Per slowdown: (detected, injected underpowered, detected among the
    /// powered, other regressions, evaluations, injected already regressed).
    power: [[usize; 6]; SLOWDOWNS.len()],
}

impl Tally {
    /// One A/A evaluation of `head` against the baselines in `dir`; returns
    /// its gating cells.
    fn aa(&mut self, head: &Run, dir: &Path, opts: &ValidateOptions) -> Result<Vec<GatingCell>> {
        let report = evaluate(head, dir, &opts.gate)?;
        if !report.problems.is_empty() {
            let problems: Vec<String> = report
                .problems
                .iter()
                .map(|p| format!("{}: {}", p.place(), p.what))
                .collect();
            bail!("the gate reported problems: {}", problems.join("; "));
        }
        let cells = gating(&report);
        if cells.is_empty() {
            bail!(
                "run {}: no cell gates against its baseline (every cell is new, \
                 incomparable or without positive values): nothing to validate",
                head.run_id
            );
        }
        self.evaluations += 1;
        if report.count(Verdict::Regression) > 0 {
            self.false_alarms += 1;
            for c in report.with(Verdict::Regression) {
                *self.alarm_cells.entry(cell_name(c)).or_default() += 1;
            }
        }
        if report.count(Verdict::PossibleRegression) > 0 {
            self.advisory_alarms += 1;
        }
        self.cells.push(cells.len());
        self.underpowered
            .push(cells.iter().filter(|c| c.underpowered).count());
        for c in &cells {
            self.base_rounds.push(c.base.as_ref().map_or(0, |b| b.n));
            self.head_rounds.push(c.head.n);
        }
        Ok(cells.into_iter().map(GatingCell::of).collect())
    }

    /// One A/A evaluation, then one injection per slowdown into the same
    /// randomly chosen gating cell.
    fn evaluate(
        &mut self,
        head: &Run,
        dir: &Path,
        opts: &ValidateOptions,
        rng: &mut SplitMix64,
    ) -> Result<()> {
        let cells = self.aa(head, dir, opts)?;
        self.inject(head, &cells, dir, opts, rng)
    }

    fn inject(
        &mut self,
        head: &Run,
        cells: &[GatingCell],
        dir: &Path,
        opts: &ValidateOptions,
        rng: &mut SplitMix64,
    ) -> Result<()> {
        let cell = &cells[rng.below(cells.len())];
        for (i, &slowdown) in SLOWDOWNS.iter().enumerate() {
            let report = evaluate(&cell.slowed(head, slowdown), dir, &opts.gate)?;
            let verdict = report
                .cells
                .iter()
                .find(|c| cell.is(c))
                .map(|c| c.verdict)
                .context("the injected cell is missing from the gate's report")?;
            let detected = verdict == Verdict::Regression;
            let p = &mut self.power[i];
            p[0] += usize::from(detected);
            p[1] += usize::from(cell.underpowered);
            p[2] += usize::from(detected && !cell.underpowered);
            p[3] += usize::from(report.with(Verdict::Regression).any(|c| !cell.is(c)));
            p[4] += 1;
            p[5] += usize::from(cell.regressed);
        }
        Ok(())
    }

    fn finish(
        self,
        method: Method,
        run_ids: Vec<String>,
        run: &Run,
        opts: &ValidateOptions,
        notes: Vec<String>,
    ) -> Validation {
        let n = self.evaluations;
        let fam = self.cells.iter().copied().min().unwrap_or(1).max(1);
        let cell_alpha = opts.gate.alpha / fam as f64;
        let power = SLOWDOWNS
            .iter()
            .zip(self.power)
            .map(
                |(&slowdown, [detected, under, powered_hits, others, evals, already])| {
                    let ci = stats::clopper_pearson(detected as u64, evals.max(1) as u64, 0.05)
                        .map_or([0.0, 1.0], |i| [i.lo, i.hi]);
                    Detection {
                        slowdown,
                        evaluations: evals,
                        detected,
                        rate: detected as f64 / evals.max(1) as f64,
                        ci95: ci,
                        injected_underpowered: under,
                        detected_when_powered: powered_hits,
                        rate_when_powered: (evals > under)
                            .then(|| powered_hits as f64 / (evals - under) as f64),
                        injected_already_regressed: already,
                        other_regressions: others,
                    }
                },
            )
            .collect();
        let min_rounds_per_side = stats::min_rounds_rank(cell_alpha);
        let mut notes = notes;
        let rounds = self.base_rounds.iter().chain(&self.head_rounds).min();
        if let Some(&r) = rounds.filter(|&&r| r < min_rounds_per_side) {
            notes.push(format!(
                "{r} rounds per side: below the {min_rounds_per_side} with which a cell can \
                 reach Holm's per-cell level {cell_alpha:.3e} at all; such cells can never \
                 fail, so their power is 0 by construction (record more rounds)"
            ));
        }
        let mut alarm_cells: Vec<(String, usize)> = self.alarm_cells.into_iter().collect();
        alarm_cells.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        Validation {
            method,
            run_ids,
            targets: run.targets.iter().map(|t| t.name.clone()).collect(),
            options: *opts,
            evaluations: n,
            false_alarms: self.false_alarms,
            false_alarm_rate: self.false_alarms as f64 / n.max(1) as f64,
            false_alarm_upper95: stats::clopper_pearson_upper(
                self.false_alarms as u64,
                n.max(1) as u64,
                0.05,
            )
            .unwrap_or(1.0),
            power,
            cells_per_evaluation: Spread::of(&self.cells),
            base_rounds: Spread::of(&self.base_rounds),
            head_rounds: Spread::of(&self.head_rounds),
            cell_alpha,
            min_rounds_per_side,
            underpowered_per_evaluation: Spread::of(&self.underpowered),
            advisory_alarms: self.advisory_alarms,
            false_alarm_cells: alarm_cells,
            notes,
        }
    }
}

/// A directory for the baselines of one validation, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(what: &str) -> Result<TempDir> {
        use std::sync::atomic::{AtomicUsize, Ordering};
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "lockmatrix-validate-{what}-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;
        Ok(TempDir(dir))
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Vigna's SplitMix64: small, seeded and the same on every platform.
struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    fn next(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut x = self.state;
        x = (x ^ (x >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        x = (x ^ (x >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        x ^ (x >> 31)
    }

    /// Uniform in `0..n` (`n > 0`), by Lemire's multiply-shift (the bias,
    /// below `n / 2^64`, does not matter here).
    fn below(&mut self, n: usize) -> usize {
        ((u128::from(self.next()) * n as u128) >> 64) as usize
    }

    /// Fisher-Yates.
    fn shuffle<T>(&mut self, v: &mut [T]) {
        for i in (1..v.len()).rev() {
            v.swap(i, self.below(i + 1));
        }
    }

    /// Uniform in (0, 1).
    #[cfg(test)]
    fn unit(&mut self) -> f64 {
        ((self.next() >> 11) as f64 + 0.5) * (1.0 / (1u64 << 53) as f64)
    }

    /// Standard normal (Box-Muller).
    #[cfg(test)]
    fn gauss(&mut self) -> f64 {
        let r = (-2.0 * self.unit().ln()).sqrt();
        r * (std::f64::consts::TAU * self.unit()).cos()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::host::Host;
    use crate::protocol::Sample;
    use crate::results::{SuiteRun, TargetResult, ToolInfo};
    use crate::runner::Exit;

    /// One suite of `cells` cells, `rounds` rounds each, log-normal noise
    /// `sigma` around distinct centers; `better(i)` is cell `i`'s direction.
    fn suite(
        rng: &mut SplitMix64,
        name: &str,
        cells: usize,
        rounds: u32,
        sigma: f64,
        better: impl Fn(usize) -> Better,
    ) -> SuiteRun {
        let mut samples = Vec::new();
        for round in 0..rounds {
            for i in 0..cells {
                let center = 40.0 + 7.0 * i as f64;
                samples.push(Sample {
                    suite: name.into(),
                    bench: "bench".into(),
                    case: json!({"op": format!("op{i:02}")})
                        .as_object()
                        .unwrap()
                        .clone(),
                    metric: "ticks_per_op".into(),
                    unit: "ns".into(),
                    better: better(i),
                    round,
                    value: Some(center * (sigma * rng.gauss()).exp()),
                });
            }
        }
        SuiteRun {
            suite: name.into(),
            command: format!("./{name}"),
            status: Status::Ok,
            exit: Exit::Code(0),
            secs: 1.0,
            env: None,
            samples,
            checks: vec![],
            bad_lines: vec![],
            stderr_tail: vec![],
            stdout_sha256: None,
        }
    }

    fn target(name: &str, runner: &str, suites: Vec<SuiteRun>) -> TargetResult {
        TargetResult {
            name: name.into(),
            triple: format!("{name}-unknown-linux-gnu"),
            class: name.into(),
            runner: runner.into(),
            status: Status::Ok,
            toolchain: Some(ToolInfo {
                what: "stable".into(),
                version: "rustc 1.96.0".into(),
            }),
            build_std: false,
            linker: None,
            emulator: (runner == "qemu").then(|| ToolInfo {
                what: "qemu".into(),
                version: "qemu 7.2.15".into(),
            }),
            build_secs: None,
            run_secs: None,
            insns_tolerance: 0.0,
            cpu_model: None,
            suites,
        }
    }

    fn run(id: &str, targets: Vec<TargetResult>) -> Run {
        Run {
            format: crate::results::FORMAT_VERSION,
            run_id: id.into(),
            started: "2026-11-30T02:00:00Z".into(),
            finished: None,
            command: vec!["matrix".into()],
            profile: "quick".into(),
            host: Host {
                cpu_model: "Test CPU".into(),
                cpus: 2,
                kernel: "6.1".into(),
                os: "Debian 12".into(),
                lockmatrix_commit: "abc".into(),
                lockmatrix_dirty: false,
            },
            insns_plugin: None,
            targets,
        }
    }

    /// A native run: 12 cells of `rounds` rounds with noise `sigma`.
    fn native(seed: u64, rounds: u32, sigma: f64) -> Run {
        let mut rng = SplitMix64::new(seed);
        let s = suite(&mut rng, "atomic", 12, rounds, sigma, |_| Better::Lower);
        run(
            &format!("run{seed}"),
            vec![target("x86_64", "native", vec![s])],
        )
    }

    fn opts(evaluations: usize, seed: u64) -> ValidateOptions {
        ValidateOptions {
            evaluations,
            seed,
            ..ValidateOptions::default()
        }
    }

    #[test]
    fn validate_null_data_rarely_false_alarms_and_bounds_the_rate() {
        let v = resample(&native(1, 20, 0.02), &opts(60, 7)).unwrap();
        assert_eq!(v.evaluations, 60);
        assert!(v.false_alarms <= 2, "{}", v.terminal());
        let upper = stats::clopper_pearson_upper(v.false_alarms as u64, 60, 0.05).unwrap();
        assert_eq!(v.false_alarm_upper95, upper);
        assert_eq!(v.false_alarm_rate, v.false_alarms as f64 / 60.0);
        assert_eq!(
            (v.cells_per_evaluation.min, v.cells_per_evaluation.max),
            (12, 12)
        );
        assert_eq!((v.base_rounds.min, v.head_rounds.max), (10, 10));
        assert_eq!(v.cell_alpha, 0.05 / 12.0);
        assert_eq!(v.targets, ["x86_64"]);
        let j = v.json();
        assert_eq!(j["evaluations"], 60);
        assert_eq!(j["false_alarms"], v.false_alarms);
        assert_eq!(j["details"]["rounds_per_side"]["base"]["min"], 10);
        assert_eq!(j["details"]["cells_per_evaluation"]["max"], 12);
        assert_eq!(j["details"]["method"], "resample");
        assert_eq!(j["power"].as_object().unwrap().len(), 2);
        assert!(j["power"]["0.05"].is_f64() && j["power"]["0.10"].is_f64());
        assert!(v.terminal().contains("false alarms in 60 evaluations"));
    }

    #[test]
    fn validate_upper_bound_of_0_in_60_is_0_0487() {
        let r = native(2, 8, 0.02);
        let o = opts(60, 1);
        let tally = |evaluations| Tally {
            evaluations,
            cells: vec![12; evaluations],
            ..Tally::default()
        };
        let v = tally(60).finish(Method::Resample, vec![], &r, &o, vec![]);
        assert!(
            (v.false_alarm_upper95 - 0.0487).abs() < 5e-5,
            "{}",
            v.false_alarm_upper95
        );
        assert!(v.goal_met());
        assert_eq!(v.json()["details"]["goal"]["upper95_within"], true);
        let few = tally(59).finish(Method::Resample, vec![], &r, &o, vec![]);
        assert!(
            !few.goal_met(),
            "fewer than 60 evaluations never meet the goal"
        );
        let mut three = tally(60);
        three.false_alarms = 3;
        let v = three.finish(Method::Resample, vec![], &r, &o, vec![]);
        assert_eq!(v.false_alarm_rate, 0.05);
        assert!(
            (v.false_alarm_upper95 - 0.12419).abs() < 1e-4,
            "{}",
            v.false_alarm_upper95
        );
    }

    #[test]
    fn validate_low_noise_10_percent_slowdown_is_detected() {
        let v = resample(&native(3, 20, 0.01), &opts(40, 3)).unwrap();
        let [five, ten] = [&v.power[0], &v.power[1]];
        assert_eq!((five.slowdown, ten.slowdown), (0.05, 0.10));
        assert_eq!((five.evaluations, ten.evaluations), (40, 40));
        assert!(ten.rate >= 0.8, "{}", v.terminal());
        assert!(five.detected <= ten.detected, "{}", v.terminal());
        // On the null boundary of "slower by more than 5%".
        assert!(five.rate <= 0.2, "{}", v.terminal());
        assert_eq!(v.json()["power"]["0.10"], ten.rate);
        assert!(ten.ci95[0] <= ten.rate && ten.rate <= ten.ci95[1]);
    }

    #[test]
    fn validate_higher_is_better_cells_are_slowed_by_dividing() {
        let mut rng = SplitMix64::new(4);
        let s = suite(&mut rng, "spinlock", 4, 20, 0.01, |_| Better::Higher);
        let r = run("hi", vec![target("x86_64", "native", vec![s])]);
        let v = resample(&r, &opts(20, 4)).unwrap();
        assert!(v.power[1].rate >= 0.8, "{}", v.terminal());
        assert!(v.false_alarms <= 1, "{}", v.terminal());
    }

    #[test]
    fn validate_is_deterministic_for_a_seed() {
        let r = native(5, 12, 0.05);
        let a = resample(&r, &opts(10, 42)).unwrap();
        let b = resample(&r, &opts(10, 42)).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.json(), b.json());
    }

    #[test]
    fn validate_counts_only_gating_targets_and_ok_suites() {
        let mut rng = SplitMix64::new(6);
        let native_suite = suite(&mut rng, "atomic", 5, 10, 0.02, |_| Better::Lower);
        let mut broken = suite(&mut rng, "spinlock", 3, 10, 0.02, |_| Better::Lower);
        broken.status = Status::Failed("crashed: signal 11 (SIGSEGV)".into());
        let qemu_suite = suite(&mut rng, "atomic", 7, 10, 0.5, |_| Better::Lower);
        let r = run(
            "mixed",
            vec![
                target("x86_64", "native", vec![native_suite, broken]),
                target("aarch64", "qemu", vec![qemu_suite.clone()]),
            ],
        );
        let v = resample(&r, &opts(5, 6)).unwrap();
        assert_eq!(v.targets, ["x86_64"]);
        assert_eq!(v.cells_per_evaluation.max, 5);
        assert_eq!((v.base_rounds.min, v.head_rounds.min), (5, 5));
        assert!(
            v.notes.iter().any(|n| n.contains("aarch64: QEMU")),
            "{:?}",
            v.notes
        );
        assert!(
            v.notes.iter().any(|n| n.contains("x86_64/spinlock")),
            "{:?}",
            v.notes
        );

        let qemu_only = run("q", vec![target("aarch64", "qemu", vec![qemu_suite])]);
        let err = format!("{:#}", resample(&qemu_only, &opts(5, 6)).unwrap_err());
        assert!(
            err.contains("no suite run ok on a target whose timings gate"),
            "{err}"
        );
    }

    #[test]
    fn validate_odd_rounds_split_into_equal_halves_and_bad_options_are_named() {
        let v = resample(&native(7, 21, 0.02), &opts(3, 1)).unwrap();
        assert_eq!((v.base_rounds.max, v.head_rounds.max), (10, 10));
        assert!(v.notes.is_empty(), "{:?}", v.notes);
        let few = resample(&native(7, 4, 0.02), &opts(3, 1)).unwrap();
        assert!(
            few.notes
                .iter()
                .any(|n| n.contains("2 rounds per side: below the 5")),
            "{:?}",
            few.notes
        );
        let err = resample(&native(7, 1, 0.02), &opts(3, 1)).unwrap_err();
        assert!(
            format!("{err:#}").contains("fewer than 2 rounds per cell"),
            "{err:#}"
        );
        let err = resample(&native(7, 10, 0.02), &opts(0, 1)).unwrap_err();
        assert!(err.downcast_ref::<crate::error::Exit2>().is_some());
    }

    #[test]
    fn validate_splits_by_position_when_rounds_are_numbered_alike() {
        let mut r = native(8, 20, 0.01);
        for x in &mut r.targets[0].suites[0].samples {
            x.round = 0;
        }
        let v = resample(&r, &opts(10, 8)).unwrap();
        assert_eq!((v.base_rounds.min, v.head_rounds.max), (10, 10));
        let (pos, rounds) = positions(&r.targets[0].suites[0].samples);
        assert_eq!(rounds, 20);
        assert_eq!(
            &pos[..13],
            [0; 12].iter().chain(&[1]).copied().collect::<Vec<_>>()
        );
    }

    #[test]
    fn validate_end_to_end_gates_later_runs_against_the_first() {
        let runs: Vec<Run> = (10..15).map(|seed| native(seed, 10, 0.01)).collect();
        let v = end_to_end(&runs, &opts(30, 9)).unwrap();
        assert_eq!(v.method, Method::EndToEnd);
        assert_eq!(v.evaluations, 4);
        assert_eq!(v.run_ids.len(), 5);
        assert!(v.false_alarms <= 1, "{}", v.terminal());
        assert_eq!((v.base_rounds.min, v.head_rounds.max), (10, 10));
        assert_eq!(v.power[0].evaluations, 30);
        assert!(v.power[1].rate >= 0.8, "{}", v.terminal());
        let j = report_json(&resample(&runs[0], &opts(4, 9)).unwrap(), Some(&v));
        assert_eq!(j["end_to_end"]["evaluations"], 4);
        assert_eq!(j["end_to_end"]["details"]["method"], "end_to_end");
        assert_eq!(j["details"]["method"], "resample");

        let err = end_to_end(&runs[..1], &opts(30, 9)).unwrap_err();
        assert!(format!("{err:#}").contains("at least 2 runs"), "{err:#}");
    }
}
