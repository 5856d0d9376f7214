//! `validate-gate`: the accuracy of the pull-request gate, measured on
//! this machine.
//!
//! Pull requests gate timing with `--against`: base and head alternate
//! round by round on one machine and each timing-family cell gets the
//! paired signed-rank test, Holm across the family. This module measures
//! that rule on A/A recordings, `matrix --against HEAD` runs (both sides
//! the same code, so every regression is a false alarm), with the real
//! gate ([`evaluate`](super::evaluate())) against the recorded base run:
//!
//! - [`resample`]: each evaluation draws `rounds` of the recorded pairs at
//!   random (the same rounds for every cell of a suite, so a noisy moment
//!   stays one pair), pooled over the recordings, and gates them (A/A).
//!   Power: the same draw with every head value of one randomly chosen
//!   family cell made slower by each of [`SLOWDOWNS`]; detected when that
//!   cell's verdict is `regression`.
//! - [`end_to_end`]: every recording gated as it was made, all its pairs
//!   (A/A across separate invocations of the matrix), and the injections
//!   spread over them.
//!
//! Only targets whose timings gate count (every runner but `qemu`); suites
//! that failed are left out and named in the notes. Deterministic for a
//! seed. Pure: the gate runs on the runs in memory.

use super::evaluate::{evaluate, CellReport, GateReport, Reference, Verdict};
use super::render::cell_name;
use super::GateOptions;
use crate::cells::canonical_case;
use crate::name::Name;
use crate::protocol::Better;
use crate::results::{Run, Status};
use anyhow::{bail, Context, Result};
use serde::Serialize;
use serde_json::{json, Map, Value};
use std::collections::BTreeMap;

/// The injected slowdowns whose detection rate is the power.
pub const SLOWDOWNS: [f64; 3] = [0.05, 0.10, 0.20];
/// The goal: a family-wise false-alarm rate of at most 5% ...
pub const GOAL_MAX_RATE: f64 = 0.05;
/// ... measured over at least 100 A/A evaluations ...
pub const GOAL_MIN_EVALUATIONS: usize = 100;
/// ... and power of at least 0.8 for a 10% slowdown of any one cell.
pub const GOAL_POWER: (f64, f64) = (0.10, 0.8);

/// How many evaluations of how many rounds, with which seed, of which gate.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct ValidateOptions {
    /// Resampling: A/A draws (each also gives one power evaluation per
    /// slowdown). End to end: power evaluations per slowdown (the A/A
    /// evaluations are the recordings).
    pub evaluations: usize,
    /// Pairs per side in each resampled evaluation: the rounds a pull
    /// request's job runs.
    pub rounds: usize,
    pub seed: u64,
    pub gate: GateOptions,
}

impl Default for ValidateOptions {
    fn default() -> Self {
        ValidateOptions {
            evaluations: 100,
            rounds: crate::policy::AB_ROUNDS.0 as usize,
            seed: 1,
            gate: GateOptions::default(),
        }
    }
}

impl ValidateOptions {
    /// Checks the ranges, as an exit-status-2 error naming the bad option.
    pub fn check(&self) -> Result<()> {
        if self.evaluations == 0 {
            anyhow::bail!(
                "--evaluations is 0: expected at least 1 \
                 ({GOAL_MIN_EVALUATIONS} or more to state the false-alarm rate)"
            );
        }
        if self.rounds < 2 {
            anyhow::bail!("--pairs is {}: expected at least 2", self.rounds);
        }
        self.gate.check()
    }
}

/// An A/A recording: the head run and its base run (`<run>/base`).
pub type Recording = (Run, Run);

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
    pub targets: Vec<Name>,
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
    /// Per cell injected with the goal's slowdown (10%): injections and
    /// detections, weakest first.
    pub power_per_cell: Vec<(String, usize, usize)>,
    /// Targets and suites left out, and why.
    pub notes: Vec<String>,
}

impl Validation {
    fn method_text(&self) -> &'static str {
        match self.method {
            Method::Resample => {
                "resample: each A/A evaluation draws the pull request's rounds of base/head pairs \
                 at random from `matrix --against HEAD` recordings (the same rounds for every cell \
                 of a suite) and gates head against base with the paired rule"
            }
            Method::EndToEnd => {
                "end to end: every `matrix --against HEAD` recording gated as it was made, each \
                 a separate invocation of the matrix"
            }
        }
    }

    /// The detection rate at the goal's slowdown (10%).
    pub fn goal_power(&self) -> f64 {
        self.power
            .iter()
            .find(|d| (d.slowdown - GOAL_POWER.0).abs() < 1e-9)
            .map_or(0.0, |d| d.rate)
    }

    /// Whether the measurement meets the goal: at least 100 A/A
    /// evaluations whose one-sided 95% upper bound of the false-alarm rate
    /// is at most 5%, and power of at least 0.8 at a 10% slowdown.
    pub fn goal_met(&self) -> bool {
        self.evaluations >= GOAL_MIN_EVALUATIONS
            && self.false_alarm_upper95 <= GOAL_MAX_RATE
            && self.goal_power() >= GOAL_POWER.1
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
            "rounds_per_side": self.head_rounds.max,
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
                "power_per_cell_at_10": self.power_per_cell.iter().map(|(c, n, d)| json!({"cell": c, "injections": n, "detected": d})).collect::<Vec<_>>(),
                "goal": {
                    "max_false_alarm_rate": GOAL_MAX_RATE,
                    "min_evaluations": GOAL_MIN_EVALUATIONS,
                    "power_at_10": GOAL_POWER.1,
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
                "resampling {} pairs per side from {} ({} A/A draws)",
                self.options.rounds,
                self.run_ids.join(", "),
                self.evaluations
            ),
            Method::EndToEnd => format!(
                "end to end: {} separate recordings ({}), all their pairs",
                self.run_ids.len(),
                self.run_ids.join(", ")
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
            "  A/A: {} false alarms in {} evaluations: rate {:.3}, 95% upper bound {:.4}\n",
            self.false_alarms, self.evaluations, self.false_alarm_rate, self.false_alarm_upper95,
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
        for (cell, n, d) in self
            .power_per_cell
            .iter()
            .filter(|(_, n, d)| *d < *n)
            .take(5)
        {
            out.push_str(&format!(
                "    at 10%: {cell}: {d} of {n} injections detected\n"
            ));
        }
        out.push_str(&format!(
            "  goal (>= {GOAL_MIN_EVALUATIONS} A/A evaluations, 95% upper bound <= {GOAL_MAX_RATE}, power >= {} at +{:.0}%): {}\n",
            GOAL_POWER.1,
            GOAL_POWER.0 * 100.0,
            if self.goal_met() { "met" } else { "NOT met" },
        ));
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

/// Resampling: A/A draws of `opts.rounds` pairs from the recordings, and
/// the same draws with one cell slowed by each of [`SLOWDOWNS`].
pub fn resample(recordings: &[Recording], opts: &ValidateOptions) -> Result<Validation> {
    opts.check()?;
    let (parts, notes) = gating_parts(recordings)?;
    // Per (target, suite) of the first recording: the pool of recorded
    // pairs, as (recording, round), over every recording that has it.
    let mut pools: BTreeMap<(Name, Name), Vec<(usize, u32)>> = BTreeMap::new();
    for t in &parts[0].0.targets {
        for s in &t.suites {
            let pool = pools.entry((t.name.clone(), s.suite.clone())).or_default();
            for (j, (head, base)) in parts.iter().enumerate() {
                let rounds = |run: &Run| -> std::collections::BTreeSet<u32> {
                    suite_of(run, &t.name, &s.suite)
                        .map(|s| timing(&s.samples).map(|x| x.round).collect())
                        .unwrap_or_default()
                };
                let both = rounds(head);
                pool.extend(rounds(base).intersection(&both).map(|&r| (j, r)));
            }
        }
    }
    let smallest = pools.values().map(Vec::len).min().unwrap_or(0);
    if smallest < opts.rounds {
        bail!(
            "the recordings hold {smallest} pairs of some suite; drawing {} needs more \
             (record with e.g. `cargo xtask matrix --against HEAD --rounds 60`)",
            opts.rounds
        );
    }
    let mut rng = SplitMix64::new(opts.seed);
    let mut tally = Tally::default();
    for _ in 0..opts.evaluations {
        let (mut head, mut base) = (parts[0].0.clone(), parts[0].1.clone());
        for ((target, suite), pool) in &pools {
            let mut order: Vec<usize> = (0..pool.len()).collect();
            rng.shuffle(&mut order);
            let draw: Vec<(usize, u32)> = order[..opts.rounds].iter().map(|&i| pool[i]).collect();
            for (side, run) in [(0, &mut head), (1, &mut base)] {
                let picked = draw
                    .iter()
                    .enumerate()
                    .flat_map(|(k, &(j, r))| {
                        let from = if side == 0 { &parts[j].0 } else { &parts[j].1 };
                        let samples = suite_of(from, target, suite)
                            .map(|s| s.samples.clone())
                            .unwrap_or_default();
                        samples
                            .into_iter()
                            .filter(move |x| x.round == r && !is_count(x))
                            .map(move |mut x| {
                                x.round = k as u32;
                                x
                            })
                    })
                    .collect::<Vec<_>>();
                if let Some(s) = suite_mut(run, target, suite) {
                    let counts: Vec<_> =
                        s.samples.iter().filter(|x| is_count(x)).cloned().collect();
                    s.samples = picked;
                    s.samples.extend(counts);
                }
            }
        }
        tally.evaluate(&head, &base, opts, &mut rng)?;
    }
    let ids = recordings.iter().map(|(h, _)| h.run_id.clone()).collect();
    Ok(tally.finish(Method::Resample, ids, &parts[0].0, opts, notes))
}

/// End to end: every recording gated as it was made (A/A), and
/// `opts.evaluations` injections per slowdown spread over them.
pub fn end_to_end(recordings: &[Recording], opts: &ValidateOptions) -> Result<Validation> {
    opts.check()?;
    let (parts, notes) = gating_parts(recordings)?;
    let mut rng = SplitMix64::new(opts.seed);
    let mut tally = Tally::default();
    let mut gating = Vec::new();
    for (head, base) in &parts {
        gating.push(tally.aa(head, base, opts)?);
    }
    for j in 0..opts.evaluations.max(parts.len()) {
        let (head, base) = &parts[j % parts.len()];
        tally.inject(head, base, &gating[j % parts.len()], opts, &mut rng)?;
    }
    let ids = recordings.iter().map(|(h, _)| h.run_id.clone()).collect();
    Ok(tally.finish(Method::EndToEnd, ids, &parts[0].0, opts, notes))
}

fn is_count(x: &crate::protocol::Sample) -> bool {
    x.kind().exact()
}

/// The timing samples of a suite run (not the instruction counts).
fn timing(samples: &[crate::protocol::Sample]) -> impl Iterator<Item = &crate::protocol::Sample> {
    samples.iter().filter(|x| !is_count(x))
}

fn suite_of<'a>(run: &'a Run, target: &str, suite: &str) -> Option<&'a crate::results::SuiteRun> {
    run.targets
        .iter()
        .find(|t| t.name == target)?
        .suites
        .iter()
        .find(|s| s.suite == suite)
}

fn suite_mut<'a>(
    run: &'a mut Run,
    target: &str,
    suite: &str,
) -> Option<&'a mut crate::results::SuiteRun> {
    run.targets
        .iter_mut()
        .find(|t| t.name == target)?
        .suites
        .iter_mut()
        .find(|s| s.suite == suite)
}

/// The parts of the recordings whose timings gate: targets that are not
/// run under QEMU, and of them the suites that ran ok with every check
/// passed on both sides. The notes name what was left out.
fn gating_parts(recordings: &[Recording]) -> Result<(Vec<Recording>, Vec<String>)> {
    if recordings.is_empty() {
        anyhow::bail!("validate-gate needs at least one recording");
    }
    let mut notes = Vec::new();
    let mut parts = Vec::new();
    for (head, base) in recordings {
        let keep = |run: &Run, notes: &mut Vec<String>| {
            let mut part = run.clone();
            part.targets.retain(|t| {
                if crate::policy::times_are_advisory(t.runner) {
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
            part
        };
        let h = keep(head, &mut notes);
        let b = keep(base, &mut notes);
        if h.targets.is_empty() || b.targets.is_empty() {
            let why = if notes.is_empty() {
                String::new()
            } else {
                format!(" ({})", notes.join("; "))
            };
            bail!(
                "run {} has no suite run ok on both sides on a target whose timings gate{why}: \
                 record one on this machine's native target, e.g. \
                 `cargo xtask matrix --targets x86_64 --against HEAD --rounds 60`",
                head.run_id
            );
        }
        parts.push((h, b));
    }
    notes.sort();
    notes.dedup();
    Ok((parts, notes))
}

/// A gating cell of a head run.
#[derive(Debug, Clone)]
struct GatingCell {
    target: Name,
    suite: Name,
    bench: Name,
    case: String,
    metric: Name,
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
            case: canonical_case(&c.case),
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
            && canonical_case(&c.case) == self.case
    }

    /// `head` with every value of this cell made slower by `slowdown`.
    fn slowed(&self, head: &Run, slowdown: f64) -> Run {
        let mut run = head.clone();
        let factor = match self.better {
            Better::Lower => 1.0 + slowdown,
            Better::Higher => 1.0 / (1.0 + slowdown),
        };
        if let Some(s) = suite_mut(&mut run, &self.target, &self.suite) {
            for x in s.samples.iter_mut() {
                if x.bench == self.bench
                    && x.metric == self.metric
                    && canonical_case(&x.case) == self.case
                {
                    x.value = x.value.map(|v| v * factor);
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
    /// Per slowdown and cell: (injections, detections).
    per_cell: [BTreeMap<String, (usize, usize)>; SLOWDOWNS.len()],
}

impl Tally {
    /// One A/A evaluation of `head` against `base`; returns its gating cells.
    fn aa(&mut self, head: &Run, base: &Run, opts: &ValidateOptions) -> Result<Vec<GatingCell>> {
        let report = evaluate(head, &Reference::Base(base), &opts.gate)?;
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
                "run {}: no cell of a timing family compares with its base \
                 (every cell is new, advisory or without positive values): nothing to validate",
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
        base: &Run,
        opts: &ValidateOptions,
        rng: &mut SplitMix64,
    ) -> Result<()> {
        let cells = self.aa(head, base, opts)?;
        self.inject(head, base, &cells, opts, rng)
    }

    fn inject(
        &mut self,
        head: &Run,
        base: &Run,
        cells: &[GatingCell],
        opts: &ValidateOptions,
        rng: &mut SplitMix64,
    ) -> Result<()> {
        let cell = &cells[rng.below(cells.len())];
        for (i, &slowdown) in SLOWDOWNS.iter().enumerate() {
            let report = evaluate(
                &cell.slowed(head, slowdown),
                &Reference::Base(base),
                &opts.gate,
            )?;
            let found = report
                .cells
                .iter()
                .find(|c| cell.is(c))
                .context("the injected cell is missing from the gate's report")?;
            let detected = found.verdict == Verdict::Regression;
            let p = &mut self.power[i];
            p[0] += usize::from(detected);
            p[1] += usize::from(cell.underpowered);
            p[2] += usize::from(detected && !cell.underpowered);
            p[3] += usize::from(report.with(Verdict::Regression).any(|c| !cell.is(c)));
            p[4] += 1;
            p[5] += usize::from(cell.regressed);
            let e = self.per_cell[i].entry(cell_name(found)).or_default();
            e.0 += 1;
            e.1 += usize::from(detected);
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
        let min_rounds_per_side = stats::min_pairs(cell_alpha);
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
        let at = SLOWDOWNS
            .iter()
            .position(|&s| (s - GOAL_POWER.0).abs() < 1e-9)
            .expect("the goal's slowdown is injected");
        let mut power_per_cell: Vec<(String, usize, usize)> = self.per_cell[at]
            .iter()
            .map(|(c, &(n, d))| (c.clone(), n, d))
            .collect();
        power_per_cell
            .sort_by(|a, b| (a.2 as f64 / a.1 as f64).total_cmp(&(b.2 as f64 / b.1 as f64)));
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
            power_per_cell,
            notes,
        }
    }
}

/// Vigna's SplitMix64: small, seeded and the same on every platform.
pub(crate) struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    pub(crate) fn new(seed: u64) -> SplitMix64 {
        SplitMix64 { state: seed }
    }

    pub(crate) fn next(&mut self) -> u64 {
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::tests::{cell, noisy_cells, one_suite, run, suite_run, target, Rng};
    use serde_json::json;

    /// A/A recording: head and base of one native target, `cells` family
    /// cells of `rounds` pairs with log-normal noise `sigma` (and 5% outlier
    /// rounds), both sides from the same distribution.
    fn recording(seed: u64, cells: usize, rounds: usize, sigma: f64) -> Recording {
        let mut rng = Rng::new(seed);
        let mut side = |id: &str| {
            let mut r = one_suite(
                "x86_64",
                "native",
                "atomic",
                &noisy_cells(&mut rng, cells, rounds, sigma, |_| 1.0),
            );
            r.run_id = id.into();
            r
        };
        (side(&format!("aa{seed}")), side(&format!("aa{seed}/base")))
    }

    fn opts(evaluations: usize, rounds: usize, seed: u64) -> ValidateOptions {
        ValidateOptions {
            evaluations,
            rounds,
            seed,
            ..ValidateOptions::default()
        }
    }

    #[test]
    fn validate_null_data_rarely_false_alarms_and_bounds_the_rate() {
        let v = resample(&[recording(1, 12, 40, 0.02)], &opts(100, 20, 7)).unwrap();
        assert_eq!(v.evaluations, 100);
        assert!(v.false_alarms <= 5, "{}", v.terminal());
        let upper = stats::clopper_pearson_upper(v.false_alarms as u64, 100, 0.05).unwrap();
        assert_eq!(v.false_alarm_upper95, upper);
        assert_eq!(
            (v.cells_per_evaluation.min, v.cells_per_evaluation.max),
            (12, 12)
        );
        assert_eq!((v.base_rounds.min, v.head_rounds.max), (20, 20));
        assert_eq!(v.cell_alpha, 0.05 / 12.0);
        let j = v.json();
        assert_eq!(j["evaluations"], 100);
        assert_eq!(j["rounds_per_side"], 20);
        assert_eq!(j["details"]["method"], "resample");
        assert_eq!(j["power"].as_object().unwrap().len(), 3);
        assert!(v.terminal().contains("false alarms in 100 evaluations"));
    }

    #[test]
    fn validate_upper_bound_of_0_in_100_and_the_goal() {
        let (r, _) = recording(2, 3, 8, 0.02);
        let o = opts(100, 4, 1);
        let tally = |evaluations, detected| {
            let mut t = Tally {
                evaluations,
                cells: vec![12; evaluations],
                ..Tally::default()
            };
            t.power[1] = [detected, 0, detected, 0, 100, 0];
            t
        };
        let v = tally(100, 90).finish(Method::Resample, vec![], &r, &o, vec![]);
        // One-sided 95% Clopper-Pearson for 0 of 100: 1 - 0.05^(1/100).
        assert!(
            (v.false_alarm_upper95 - 0.0295).abs() < 1e-4,
            "{}",
            v.false_alarm_upper95
        );
        assert!(v.goal_met());
        assert!(!tally(99, 90)
            .finish(Method::Resample, vec![], &r, &o, vec![])
            .goal_met());
        assert!(
            !tally(100, 70)
                .finish(Method::Resample, vec![], &r, &o, vec![])
                .goal_met(),
            "power 0.7 misses the goal"
        );
    }

    #[test]
    fn validate_low_noise_10_percent_slowdown_is_detected() {
        let v = resample(&[recording(3, 12, 60, 0.01)], &opts(40, 30, 3)).unwrap();
        let [five, ten, twenty] = [&v.power[0], &v.power[1], &v.power[2]];
        assert_eq!(
            (five.slowdown, ten.slowdown, twenty.slowdown),
            (0.05, 0.10, 0.20)
        );
        assert!(
            ten.rate >= 0.8 && twenty.rate >= ten.rate,
            "{}",
            v.terminal()
        );
        // On the null boundary of "slower by more than 5%".
        assert!(five.rate <= 0.25, "{}", v.terminal());
        assert_eq!(v.json()["power"]["0.10"], ten.rate);
        assert!(!v.power_per_cell.is_empty());
    }

    #[test]
    fn validate_is_deterministic_for_a_seed() {
        let rec = [recording(5, 6, 30, 0.05)];
        let a = resample(&rec, &opts(10, 20, 42)).unwrap();
        let b = resample(&rec, &opts(10, 20, 42)).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.json(), b.json());
    }

    #[test]
    fn validate_counts_only_gating_targets_and_ok_suites() {
        let mut rng = Rng::new(6);
        let mut side = || {
            let mut broken = suite_run(
                "spinlock",
                &noisy_cells(&mut rng, 3, 10, 0.02, |_| 1.0),
                vec![],
            );
            broken.status = Status::Failed(crate::results::Failure::Crashed { signal: 11 });
            run(vec![
                target(
                    "x86_64",
                    "native",
                    vec![
                        suite_run(
                            "atomic",
                            &noisy_cells(&mut rng, 5, 10, 0.02, |_| 1.0),
                            vec![],
                        ),
                        broken,
                    ],
                ),
                target(
                    "aarch64",
                    "qemu",
                    vec![suite_run(
                        "atomic",
                        &noisy_cells(&mut rng, 7, 10, 0.5, |_| 1.0),
                        vec![],
                    )],
                ),
            ])
        };
        let rec = (side(), side());
        let v = resample(std::slice::from_ref(&rec), &opts(5, 8, 6)).unwrap();
        assert_eq!(v.targets, ["x86_64"]);
        assert_eq!(v.cells_per_evaluation.max, 5);
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
        let qemu_only = {
            let mut r = rec.clone();
            r.0.targets.retain(|t| t.name == "aarch64");
            r.1.targets.retain(|t| t.name == "aarch64");
            r
        };
        let err = format!("{:#}", resample(&[qemu_only], &opts(5, 8, 6)).unwrap_err());
        assert!(err.contains("no suite run ok on both sides"), "{err}");
    }

    #[test]
    fn validate_too_few_pairs_and_bad_options_are_named() {
        let err = resample(&[recording(7, 4, 6, 0.02)], &opts(3, 20, 1)).unwrap_err();
        assert!(
            format!("{err:#}").contains("hold 6 pairs of some suite; drawing 20"),
            "{err:#}"
        );
        let err = resample(&[recording(7, 4, 6, 0.02)], &opts(0, 4, 1)).unwrap_err();
        assert!(format!("{err:#}").contains("--evaluations is 0"), "{err:#}");
    }

    #[test]
    fn validate_pools_pairs_across_recordings_and_gates_each_end_to_end() {
        let recs: Vec<Recording> = (10..13).map(|seed| recording(seed, 6, 12, 0.01)).collect();
        // 3 x 12 pairs in the pool: a draw of 30 needs more than one recording.
        let v = resample(&recs, &opts(20, 30, 9)).unwrap();
        assert_eq!(v.head_rounds.max, 30);
        assert_eq!(v.run_ids.len(), 3);
        let e = end_to_end(&recs, &opts(30, 12, 9)).unwrap();
        assert_eq!(e.method, Method::EndToEnd);
        assert_eq!(e.evaluations, 3);
        assert!(e.false_alarms <= 1, "{}", e.terminal());
        assert_eq!(e.power[1].evaluations, 30);
        let j = report_json(&v, Some(&e));
        assert_eq!(j["end_to_end"]["evaluations"], 3);
        assert_eq!(j["end_to_end"]["details"]["method"], "end_to_end");
    }

    #[test]
    fn validate_a_cell_outside_the_family_is_never_injected() {
        let mut rng = Rng::new(14);
        let mut side = || {
            let mut cells = noisy_cells(&mut rng, 2, 12, 0.01, |_| 1.0);
            let mut outside = cell("stress", json!({"lock": "tas"}), vec![100.0; 12]);
            outside.gating = false;
            cells.push(outside);
            one_suite("x86_64", "native", "spinlock", &cells)
        };
        let v = resample(&[(side(), side())], &opts(10, 10, 1)).unwrap();
        assert_eq!(v.cells_per_evaluation.max, 2);
        assert!(v
            .power_per_cell
            .iter()
            .all(|(c, _, _)| !c.contains("stress")));
    }
}
