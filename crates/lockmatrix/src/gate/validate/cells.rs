//! The cells a validation resamples: the timing samples of a suite run,
//! and the gating cells of a head run (each can be slowed by a factor).

use crate::cells::canonical_case;
use crate::gate::evaluate::{CellReport, GateReport, Verdict};
use crate::name::Name;
use crate::protocol::Better;
use crate::results::Run;
use crate::strictness::Budget;

pub(super) fn is_count(x: &crate::protocol::Sample) -> bool {
    x.kind().exact()
}

/// The timing samples of a suite run (not the instruction counts).
pub(super) fn timing(
    samples: &[crate::protocol::Sample],
) -> impl Iterator<Item = &crate::protocol::Sample> {
    samples.iter().filter(|x| !is_count(x))
}

pub(super) fn suite_of<'a>(
    run: &'a Run,
    target: &str,
    suite: &str,
) -> Option<&'a crate::results::SuiteRun> {
    run.targets
        .iter()
        .find(|t| t.name == target)?
        .suites
        .iter()
        .find(|s| s.suite == suite)
}

pub(super) fn suite_mut<'a>(
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

/// A gating cell of a head run.
#[derive(Debug, Clone)]
pub(super) struct GatingCell {
    pub(super) target: Name,
    pub(super) suite: Name,
    pub(super) bench: Name,
    pub(super) case: String,
    pub(super) metric: Name,
    pub(super) better: Better,
    /// Its A/A verdict was `inconclusive`: too noisy for its pairs.
    pub(super) inconclusive: bool,
    /// Its A/A verdict was `regression`.
    pub(super) regressed: bool,
    /// The threshold the gate chose for it here.
    pub(super) threshold: Option<f64>,
    /// Its family: 1-thread (quiet) or contended.
    pub(super) budget: Budget,
}

impl GatingCell {
    pub(super) fn of(c: &CellReport) -> GatingCell {
        GatingCell {
            target: c.target.clone(),
            suite: c.suite.clone(),
            bench: c.bench.clone(),
            case: canonical_case(&c.case),
            metric: c.metric.clone(),
            better: c.better,
            inconclusive: c.verdict == Verdict::Inconclusive,
            regressed: c.verdict == Verdict::Regression,
            threshold: c.strictness.as_ref().map(|s| s.threshold),
            budget: crate::strictness::Contention::of(&c.case).budget(),
        }
    }

    pub(super) fn is(&self, c: &CellReport) -> bool {
        c.target == self.target
            && c.suite == self.suite
            && c.bench == self.bench
            && c.metric == self.metric
            && canonical_case(&c.case) == self.case
    }

    /// `head` with every value of this cell made slower by `slowdown`.
    pub(super) fn slowed(&self, head: &Run, slowdown: f64) -> Run {
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

/// Gating cells: the timing cells the gate decided.
pub(super) fn gating(report: &GateReport) -> Vec<&CellReport> {
    report.cells.iter().filter(|c| c.look.is_some()).collect()
}
