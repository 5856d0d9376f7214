//! The statistics of the evaluations: false alarms, power per slowdown
//! and per cell, and the bounds over them.

use super::cells::{gating, GatingCell};
use super::measure::*;
use super::rng::SplitMix64;
use crate::gate::evaluate::{evaluate, Reference, Verdict};
use crate::gate::render::cell_name;
use crate::results::Run;
use crate::strictness::Budget;
use std::collections::BTreeMap;

/// What the evaluations found so far.
#[derive(Default)]
pub(super) struct Tally {
    pub(super) evaluations: usize,
    pub(super) false_alarms: usize,
    pub(super) advisory_alarms: usize,
    pub(super) cells: Vec<usize>,
    pub(super) inconclusive: Vec<usize>,
    pub(super) base_rounds: Vec<usize>,
    pub(super) head_rounds: Vec<usize>,
    pub(super) alarm_cells: BTreeMap<String, usize>,
    /// Per slowdown: (detected, injected inconclusive, detected among the
    /// powered, other regressions, evaluations, injected already regressed).
    pub(super) power: [[usize; 6]; SLOWDOWNS.len()],
    /// Per cell, per slowdown: (injections, detections).
    pub(super) per_cell: BTreeMap<String, [(usize, usize); SLOWDOWNS.len()]>,
    /// Per family, per slowdown: (injections, detections).
    pub(super) per_budget: BTreeMap<Budget, [(usize, usize); SLOWDOWNS.len()]>,
    /// The strictest per-cell level the gate gave (its own computation,
    /// `strictness::level`, never a second one here).
    pub(super) cell_alpha: Option<f64>,
}

impl Tally {
    /// One A/A evaluation of `head` against `base`; returns its gating cells.
    pub(super) fn aa(
        &mut self,
        head: &Run,
        base: &Run,
        opts: &ValidateOptions,
    ) -> Result<Vec<GatingCell>, ValidateError> {
        let report = evaluate(head, &Reference::Base(base), &opts.gate)?;
        if !report.problems.is_empty() {
            let problems: Vec<String> = report
                .problems
                .iter()
                .map(|p| format!("{}: {}", p.place(), p.what))
                .collect();
            return Err(ValidateError::GateProblems(problems));
        }
        let level = report.timing.cell_alpha;
        self.cell_alpha = Some(self.cell_alpha.map_or(level, |a| a.min(level)));
        let cells = gating(&report);
        if cells.is_empty() {
            return Err(ValidateError::NoGatingCell {
                run: head.run_id.clone(),
            });
        }
        self.evaluations += 1;
        if report.count(Verdict::Regression) > 0 {
            self.false_alarms += 1;
            for c in report.with(Verdict::Regression) {
                *self.alarm_cells.entry(cell_name(c)).or_default() += 1;
            }
        }
        if cells.iter().any(|c| c.verdict == Verdict::Inconclusive) {
            self.advisory_alarms += 1;
        }
        self.cells.push(cells.len());
        self.inconclusive.push(
            cells
                .iter()
                .filter(|c| c.verdict == Verdict::Inconclusive)
                .count(),
        );
        for c in &cells {
            self.base_rounds.push(c.base.as_ref().map_or(0, |b| b.n));
            self.head_rounds.push(c.head.n);
        }
        Ok(cells.into_iter().map(GatingCell::of).collect())
    }

    /// One A/A evaluation, then, for each family with gating cells, one
    /// injection per slowdown into one of its cells chosen at random.
    pub(super) fn evaluate(
        &mut self,
        head: &Run,
        base: &Run,
        opts: &ValidateOptions,
        rng: &mut SplitMix64,
    ) -> Result<(), ValidateError> {
        let cells = self.aa(head, base, opts)?;
        self.inject(head, base, &cells, opts, rng)
    }

    pub(super) fn inject(
        &mut self,
        head: &Run,
        base: &Run,
        cells: &[GatingCell],
        opts: &ValidateOptions,
        rng: &mut SplitMix64,
    ) -> Result<(), ValidateError> {
        // One cell of each family: the 1-thread cells are a tenth of a
        // four-suite run's, and their power at 10% is the goal's, so a
        // draw over all cells would measure it on a handful.
        for budget in Budget::ALL {
            let of: Vec<&GatingCell> = cells.iter().filter(|c| c.budget == budget).collect();
            if !of.is_empty() {
                let cell = of[rng.below(of.len())];
                self.inject_cell(head, base, cell, opts, 0.0)?;
            }
        }
        Ok(())
    }

    /// `cell` slowed by each of [`SLOWDOWNS`] from `least` up, one gate
    /// each.
    pub(super) fn inject_cell(
        &mut self,
        head: &Run,
        base: &Run,
        cell: &GatingCell,
        opts: &ValidateOptions,
        least: f64,
    ) -> Result<(), ValidateError> {
        for (i, &slowdown) in SLOWDOWNS.iter().enumerate() {
            if slowdown < least - 1e-9 {
                continue;
            }
            let report = evaluate(
                &cell.slowed(head, slowdown),
                &Reference::Base(base),
                &opts.gate,
            )?;
            let found = report
                .cells
                .iter()
                .find(|c| cell.is(c))
                .ok_or(ValidateError::InjectedCellMissing)?;
            let detected = found.verdict == Verdict::Regression;
            let p = &mut self.power[i];
            p[0] += usize::from(detected);
            p[1] += usize::from(cell.inconclusive);
            p[2] += usize::from(detected && !cell.inconclusive);
            p[3] += usize::from(report.with(Verdict::Regression).any(|c| !cell.is(c)));
            p[4] += 1;
            p[5] += usize::from(cell.regressed);
            for e in [
                &mut self.per_cell.entry(cell_name(found)).or_default()[i],
                &mut self.per_budget.entry(cell.budget).or_default()[i],
            ] {
                e.0 += 1;
                e.1 += usize::from(detected);
            }
        }
        Ok(())
    }

    pub(super) fn finish(
        self,
        method: Method,
        run_ids: Vec<String>,
        run: &Run,
        opts: &ValidateOptions,
        notes: Vec<String>,
    ) -> Validation {
        let n = self.evaluations;
        let cell_alpha = self.cell_alpha.unwrap_or(opts.gate.alpha);
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
                        injected_inconclusive: under,
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
        let mut power_per_cell: Vec<CellPower> = self
            .per_cell
            .into_iter()
            .map(|(cell, at)| CellPower { cell, at })
            .collect();
        // Weakest first, at the goal's slowdown, or a cell's lowest one
        // where the goal's was not injected (below its threshold).
        let key = |c: &CellPower| {
            let i = (c.at[at].0 > 0)
                .then_some(at)
                .or_else(|| c.at.iter().position(|&(n, _)| n > 0))
                .unwrap_or(at);
            (i, c.rate(i))
        };
        power_per_cell.sort_by(|a, b| {
            let (ka, kb) = (key(a), key(b));
            ka.0.cmp(&kb.0).then(ka.1.total_cmp(&kb.1))
        });
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
            inconclusive_per_evaluation: Spread::of(&self.inconclusive),
            advisory_alarms: self.advisory_alarms,
            false_alarm_cells: alarm_cells,
            power_per_cell,
            power_per_budget: self
                .per_budget
                .into_iter()
                .map(|(budget, at)| BudgetPower { budget, at })
                .collect(),
            notes,
            order_effect: None,
        }
    }
}
