//! How a validation reads: its text, its Markdown, its JSON.

use super::measure::*;
use crate::strictness::Budget;
use serde_json::{json, Map, Value};

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
            Method::EveryCell => {
                "every cell: each gating cell of each recording, as it was made, slowed alone by \
                 each slowdown at or above the threshold the gate chose for it (its power; the \
                 totals weigh every cell alike)"
            }
        }
    }

    /// The 1-thread cells' detection rate at the goal's slowdown (10%);
    /// `None` when none was injected there.
    pub fn goal_power(&self) -> Option<f64> {
        let i = SLOWDOWNS
            .iter()
            .position(|&s| (s - GOAL_POWER.0).abs() < 1e-9)?;
        self.power_per_budget
            .iter()
            .find(|b| b.budget == Budget::Quiet)?
            .rate(i)
    }

    /// Whether the measurement meets the goal: at least 100 A/A
    /// evaluations whose one-sided 95% upper bound of the false-alarm rate
    /// is at most 5%, and power of at least 0.8 at a 10% slowdown of the
    /// 1-thread cells (not met where none was measured).
    pub fn goal_met(&self) -> bool {
        self.evaluations >= GOAL_MIN_EVALUATIONS
            && self.false_alarm_upper95 <= GOAL_MAX_RATE
            && self.goal_power().is_some_and(|p| p >= GOAL_POWER.1)
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
            "order_effect": self.order_effect,
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
                "inconclusive_per_evaluation": self.inconclusive_per_evaluation,
                "advisory_alarms": self.advisory_alarms,
                "false_alarm_cells": alarm_cells,
                "power": power_details,
                "power_per_cell": self.power_per_cell.iter().map(|c| {
                    let mut cell = injections(&c.at);
                    cell.insert("cell".into(), json!(c.cell));
                    Value::Object(cell)
                }).collect::<Vec<_>>(),
                "power_per_family": self.power_per_budget.iter().map(|b| {
                    (b.budget.name().to_string(), Value::Object(injections(&b.at)))
                }).collect::<Map<String, Value>>(),
                "goal": {
                    "max_false_alarm_rate": GOAL_MAX_RATE,
                    "min_evaluations": GOAL_MIN_EVALUATIONS,
                    "power_at_10": GOAL_POWER.1,
                    "power_at_10_of": "1-thread cells",
                    "measured_power_at_10": self.goal_power(),
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
            Method::EveryCell => format!(
                "every cell of {} separate recordings ({}) injected alone, from its threshold up",
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
             per-cell level down to {:.3e} needs >= {} pairs; {} cells inconclusive\n",
            self.cells_per_evaluation.show(),
            self.base_rounds.show(),
            self.head_rounds.show(),
            self.cell_alpha,
            self.min_rounds_per_side,
            self.inconclusive_per_evaluation.show(),
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
                 into cells the A/A evaluation decided detected, {} into cells it left inconclusive\n",
                d.slowdown * 100.0,
                d.detected,
                d.evaluations,
                d.rate,
                d.ci95[0],
                d.ci95[1],
                d.detected_when_powered,
                d.evaluations - d.injected_inconclusive,
                d.injected_inconclusive,
            ));
            if d.injected_already_regressed > 0 {
                out.push_str(&format!(
                    "    {} of the injected cells regressed without the injection (false alarms)\n",
                    d.injected_already_regressed
                ));
            }
        }
        for b in &self.power_per_budget {
            let at: Vec<String> = (0..SLOWDOWNS.len())
                .filter_map(|i| {
                    let (n, d) = b.at[i];
                    let rate = b.rate(i)?;
                    Some(format!("+{:.0}% {d}/{n} = {rate:.2}", SLOWDOWNS[i] * 100.0))
                })
                .collect();
            out.push_str(&format!(
                "  power of the {} cells: {}\n",
                b.budget.cells(),
                at.join(", ")
            ));
        }
        if !self.power_per_cell.is_empty() {
            let heads: Vec<String> = SLOWDOWNS
                .iter()
                .map(|s| format!("+{:.0}%", s * 100.0))
                .collect();
            out.push_str(&format!(
                "  power per cell (detected/injected at {}), weakest first:\n",
                heads.join(", ")
            ));
        }
        for c in &self.power_per_cell {
            let at: Vec<String> = c.at.iter().map(|(n, d)| format!("{d:>3}/{n:<3}")).collect();
            out.push_str(&format!("    {}  {}\n", at.join("  "), c.cell));
        }
        out.push_str(&format!(
            "  goal (>= {GOAL_MIN_EVALUATIONS} A/A evaluations, 95% upper bound <= {GOAL_MAX_RATE}, 1-thread cells' power >= {} at +{:.0}%): {}\n",
            GOAL_POWER.1,
            GOAL_POWER.0 * 100.0,
            if self.goal_met() { "met" } else { "NOT met" },
        ));
        let margin = crate::strictness::margin(self.options.gate.quiet_threshold);
        if let Some(d) = self.power.iter().find(|d| d.slowdown <= margin + 1e-12) {
            out.push_str(&format!(
                "  a regression is slower than half the cell's threshold (at least {:.1}%): a {:.0}% \
                 slowdown is within the margin, found about as often as a false alarm\n",
                margin * 100.0,
                d.slowdown * 100.0,
            ));
        }
        if let Some(e) = &self.order_effect {
            out.push_str(&format!("  {}\n", e.line()));
        }
        for note in &self.notes {
            out.push_str(&format!("  note: {note}\n"));
        }
        out
    }
}

/// The combined report of `validate-gate`: the resampling figures at the top
/// level, the end-to-end ones, when measured, under `end_to_end`, and
/// every cell's (`--every-cell`) under `every_cell`.
pub fn report_json(
    resampled: &Validation,
    end_to_end: Option<&Validation>,
    every_cell: Option<&Validation>,
) -> Value {
    let mut v = resampled.json();
    if let Some(map) = v.as_object_mut() {
        if let Some(e) = end_to_end {
            map.insert("end_to_end".into(), e.json());
        }
        if let Some(e) = every_cell {
            map.insert("every_cell".into(), e.json());
        }
    }
    v
}

/// Per slowdown, `{"injections": n, "detected": d}`, keyed as `power` is.
fn injections(at: &[(usize, usize); SLOWDOWNS.len()]) -> Map<String, Value> {
    SLOWDOWNS
        .iter()
        .zip(at)
        .map(|(s, (n, d))| (slowdown_key(*s), json!({"injections": n, "detected": d})))
        .collect()
}

fn slowdown_key(s: f64) -> String {
    format!("{s:.2}")
}
