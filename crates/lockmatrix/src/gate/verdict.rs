//! What the gate's last line says: PASS only when everything that could
//! gate here did, NOT GATED when some of it could not be compared (a
//! compiler moved, another testbed's timings), FAIL on a finding. A PASS
//! that compared nothing would tell a user nothing.

use super::evaluate::{GateReport, Verdict};
use std::collections::BTreeMap;

/// The run's overall result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Everything that could gate was compared, and nothing failed.
    Pass,
    /// Nothing failed, but not everything was compared: exit 0, or 1
    /// with `--require-gate`.
    NotGated,
    Fail,
}

impl Outcome {
    pub fn word(self) -> &'static str {
        match self {
            Outcome::Pass => "PASS",
            Outcome::NotGated => "NOT GATED",
            Outcome::Fail => "FAIL",
        }
    }

    /// The JSON report's `result`.
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Pass => "pass",
            Outcome::NotGated => "not_gated",
            Outcome::Fail => "fail",
        }
    }
}

impl GateReport {
    pub fn outcome(&self) -> Outcome {
        if self.failed() {
            Outcome::Fail
        } else if self.not_gated().is_empty() {
            Outcome::Pass
        } else {
            Outcome::NotGated
        }
    }

    /// What could gate here and was not compared, one phrase each.
    pub fn not_gated(&self) -> Vec<String> {
        let mut out = Vec::new();
        let counts_missed = self.counts_with_reference - self.counts_compared;
        if counts_missed > 0 {
            out.push(format!(
                "{counts_missed} of {} instruction counts not compared ({})",
                self.counts_with_reference,
                self.main_cause(true)
            ));
        }
        if self.family_present > 0 && !self.timing.gated {
            let why = if self.timing.cells == 0 {
                self.main_cause(false)
            } else {
                format!(
                    "{} rounds cannot reach Holm's level: record more with --rounds",
                    self.timing.rounds
                )
            };
            out.push(format!(
                "none of the {} timing-family cells gated ({why})",
                self.family_present
            ));
        }
        if self.models.error.is_some() {
            out.push("the model check did not run".into());
        }
        out
    }

    /// The most common reason among the incomparable counts, or the
    /// incomparable timing-family cells, with how many share it.
    fn main_cause(&self, counts: bool) -> String {
        let mut causes: BTreeMap<&str, usize> = BTreeMap::new();
        for c in self.with(Verdict::Incomparable).filter(|c| {
            if counts {
                c.kind().exact()
            } else {
                c.family
            }
        }) {
            *causes.entry(c.note.as_deref().unwrap_or("?")).or_default() += 1;
        }
        match causes.into_iter().max_by_key(|(_, n)| *n) {
            Some((why, n)) => format!("{n} incomparable: {why}"),
            None if counts => "no value on one side".into(),
            None => "no comparable reference".into(),
        }
    }

    /// The last line: the outcome and what it rests on, e.g. `PASS: 330/330
    /// instruction counts compared exactly, 31/31 timing-family cells gated, 730
    /// footprints exact, 16/16 models passed`; for NOT GATED, what was not
    /// compared and the command that would compare it.
    pub fn verdict_line(&self) -> String {
        let outcome = self.outcome();
        let fewer = self
            .with(Verdict::Improvement)
            .filter(|c| c.kind().exact())
            .count();
        let mut parts = vec![format!(
            "{}/{} instruction counts compared exactly{}",
            self.counts_compared,
            self.counts_with_reference,
            match fewer {
                0 => String::new(),
                n => format!(" ({n} fewer)"),
            }
        )];
        parts.push(if self.family_present == 0 {
            "no timing family on real hardware here (QEMU timings are advisory)".into()
        } else {
            let gated = if self.timing.gated {
                self.timing.cells
            } else {
                0
            };
            let under = match self.count(Verdict::Underpowered) {
                0 => String::new(),
                n => format!(" ({n} underpowered: no evidence either way)"),
            };
            format!(
                "{gated}/{} timing-family cells gated{under}",
                self.family_present
            )
        });
        parts.push(format!(
            "{} ordering footprints compared",
            self.footprints_compared
        ));
        if self.models.ran {
            let total = self.models.passed + self.models.violated.len();
            parts.push(format!("{}/{total} models passed", self.models.passed));
        }
        let mut line = format!("{}: {}", outcome.word(), parts.join(", "));
        if outcome == Outcome::NotGated {
            line.push_str(&format!(
                "\nNOT GATED: {}; to gate here, compare with a revision built on this machine (`cargo xtask matrix --against <base>`), or record this testbed's baselines (`cargo xtask baseline update`); --require-gate makes this exit 1",
                self.not_gated().join("; ")
            ));
        }
        line
    }
}
