//! The regression gate: compares a run's cells with the committed baselines
//! in `baselines/<target>/<suite>.json` and decides whether the run passes.
//!
//! A cell is one `(target, suite, bench, case, metric)`; its samples are one
//! value per round. What fails the gate: a failed correctness check, a target
//! or suite that broke, an unreadable baseline file, and a timing cell on real
//! hardware that is slower than its baseline by more than `delta`,
//! significant after Holm's correction across all gating cells of the run.
//! Everything else is shown and never fails: new cells, cells whose baseline
//! was recorded on another testbed, QEMU timings (emulator time), cells
//! without enough rounds to tell, and the Benjamini-Hochberg advisory list.
//!
//! - [`baseline`]: the baseline file format, reading and atomic writing;
//! - [`evaluate`](mod@evaluate): the verdict of every cell;
//! - [`render`]: the terminal, Markdown and JSON reports;
//! - [`update`]: `baseline update`.

pub mod baseline;
pub mod evaluate;
pub mod ordering;
pub mod render;
pub mod update;
pub mod validate;
pub mod verdict;

#[cfg(test)]
mod tests;

pub use evaluate::{evaluate, Reference};
pub use update::update_baselines;

use serde::Serialize;

/// How strict the gate is.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GateOptions {
    /// The slowdown that matters: a cell regresses when it is slower than its
    /// baseline by more than this fraction (0.05 = 5%).
    pub delta: f64,
    /// Family-wise error rate of the hard gate (Holm across all gating cells).
    pub alpha: f64,
    /// False discovery rate of the advisory "possible regression" list
    /// (Benjamini-Hochberg).
    pub fdr_q: f64,
}

impl Default for GateOptions {
    fn default() -> Self {
        GateOptions {
            delta: 0.05,
            alpha: 0.05,
            fdr_q: 0.10,
        }
    }
}

impl GateOptions {
    /// Checks the ranges, as an exit-status-2 error naming the bad option.
    pub fn check(&self) -> anyhow::Result<()> {
        if !(self.delta.is_finite() && self.delta > 0.0 && self.delta < 10.0) {
            anyhow::bail!(
                "gate delta is {}: expected a fraction > 0 (0.05 = 5% slower)",
                self.delta
            );
        }
        if !(self.alpha > 0.0 && self.alpha < 0.5) {
            anyhow::bail!(
                "gate alpha is {}: expected 0 < alpha < 0.5 (e.g. 0.05)",
                self.alpha
            );
        }
        if !(self.fdr_q > 0.0 && self.fdr_q < 1.0) {
            anyhow::bail!(
                "gate fdr_q is {}: expected 0 < q < 1 (e.g. 0.10)",
                self.fdr_q
            );
        }
        Ok(())
    }
}
