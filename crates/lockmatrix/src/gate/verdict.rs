//! What the gate's last line says: PASS only when everything that could
//! gate here did, NOT GATED when some of it could not be compared (a
//! compiler moved, another testbed's timings), FAIL on a finding. A PASS
//! that compared nothing would tell a user nothing.

use super::evaluate::{CellReport, GateReport, Verdict};
use crate::strictness::Resolution;
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

/// The most common note among `cells`, with how many share it.
fn cause(cells: &[&CellReport]) -> String {
    // Too few pairs for its threshold: each cell's note names its own
    // spread, so say what they share and the pairs that would gate all.
    let short = |c: &&CellReport| {
        c.strictness
            .as_ref()
            .is_some_and(|s| matches!(s.resolution, Resolution::Short { .. }))
    };
    if cells.iter().all(short) {
        let unit = cells[0].strictness.as_ref().map_or("pairs", |s| s.unit);
        let needs = cells
            .iter()
            .filter_map(|c| match c.strictness.as_ref().map(|s| s.resolution) {
                Some(Resolution::Short { needs }) => needs,
                _ => None,
            })
            .max();
        let more = match (needs, unit) {
            (Some(n), "pairs") => format!(": {n} pairs would gate them all (--rounds {n})"),
            (Some(n), _) => format!(": a baseline of {n} rounds would gate them all"),
            (None, _) => String::new(),
        };
        return format!(
            "{} not gated: too few {unit} for their thresholds{more}",
            cells.len()
        );
    }
    let mut causes: BTreeMap<&str, usize> = BTreeMap::new();
    for c in cells {
        *causes.entry(c.note.as_deref().unwrap_or("?")).or_default() += 1;
    }
    let (why, n) = causes
        .into_iter()
        .max_by_key(|(_, n)| *n)
        .expect("some cells");
    let kind = match cells.iter().all(|c| c.verdict == Verdict::Incomparable) {
        true => "incomparable",
        false => "not gated",
    };
    format!("{n} {kind}: {why}")
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
        if self.unreferenced.is_none() {
            out.extend(self.not_compared());
        }
        if self.models.error.is_some() {
            out.push("the model check did not run".into());
        }
        if let Some(why) = self.miri.unchecked() {
            out.push(why);
        }
        out
    }

    /// The counts and timing cells that had a reference and were
    /// not compared.
    fn not_compared(&self) -> Vec<String> {
        let mut out = Vec::new();
        let counts_missed = self.counts_with_reference - self.counts_compared;
        if counts_missed > 0 {
            out.push(format!(
                "{counts_missed} of {} instruction counts not compared ({})",
                self.counts_with_reference,
                self.main_cause(true)
            ));
        }
        let ungated = self.ungated_family();
        let gated = self.cells.iter().filter(|c| c.family && c.gated).count();
        if self.family_present > 0 && (gated == 0 || !ungated.is_empty()) {
            let why = match ungated.is_empty() {
                true => "no comparable reference".to_string(),
                false => cause(&ungated),
            };
            let which = match gated {
                0 => format!("none of the {} timing cells gated", self.family_present),
                _ => format!(
                    "{} of {} timing cells not gated",
                    ungated.len(),
                    self.family_present
                ),
            };
            out.push(format!("{which} ({why})"));
        }
        out
    }

    /// The timing cells that had a reference and still did not
    /// gate: another testbed's, values missing, or rounds that cannot
    /// reach the level.
    fn ungated_family(&self) -> Vec<&CellReport> {
        self.cells
            .iter()
            // A cell too noisy for 2x here was compared: its noise, not
            // a missing reference, keeps it from gating (said apart).
            .filter(|c| {
                c.family
                    && !c.gated
                    && !matches!(c.verdict, Verdict::NoBaseline | Verdict::TooNoisy)
            })
            .collect()
    }

    /// What would make the ungated timing cells gate, said once per
    /// cause: the command and the value (never only "record baselines",
    /// which cannot help another machine's or an unknown testbed).
    fn timing_advice(&self) -> Vec<String> {
        let ungated = self.ungated_family();
        let mut out = Vec::new();
        if !self.timing.unreachable.is_empty() {
            out.push(self.timing.advice());
        }
        let (moved, incomparable): (Vec<&&CellReport>, Vec<&&CellReport>) = ungated
            .iter()
            .filter(|c| c.verdict == Verdict::Incomparable)
            .partition(|c| c.note.as_deref().is_some_and(super::canary::is_note));
        if !moved.is_empty() {
            // Not the baselines' fault: no rounds to record would help.
            out.push("check again when the testbed is as it was when its baselines were recorded (its canary moved), or compare with a revision built on this machine (`--against <base>`)".into());
        }
        if incomparable.is_empty() {
            return out;
        }
        let mut targets: Vec<&str> = incomparable.iter().map(|c| c.target.as_str()).collect();
        targets.sort();
        targets.dedup();
        let targets = targets.join(",");
        let unknown = incomparable.iter().any(|c| {
            c.note
                .as_deref()
                .is_some_and(|n| n.contains("the run's testbed is unknown"))
        });
        let rounds = incomparable.iter().filter_map(|c| c.rounds_needed).max();
        let record = match rounds {
            Some(n) => format!(
                "record this testbed's baselines (`cargo xtask matrix --targets {targets} --rounds {n}`, then `cargo xtask baseline update`)"
            ),
            None => format!(
                "record this testbed's baselines (`cargo xtask matrix --targets {targets} --rounds N`, then `cargo xtask baseline update`, which says the N it needs)"
            ),
        };
        out.push(match unknown {
            true => format!(
                "compare with a revision built on this machine (`--against <base>`), or on a dedicated machine set {}=<name> and {record}",
                crate::host::TESTBED_VARIABLE
            ),
            false => format!("compare with a revision built on this machine (`--against <base>`), or {record}"),
        });
        out
    }

    /// The most common reason among the incomparable counts, or the
    /// incomparable timing cells, with how many share it.
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
    /// instruction counts compared exactly, 31/31 timing cells gated, 730
    /// footprints exact, 16/16 models passed`; for NOT GATED, what was not
    /// compared and the command that would compare it.
    /// What changed between two versions of a lock crate, cell by cell:
    /// every instruction count that moved (`aarch64 spin.SpinMutex 16 →
    /// 14 insns/op`) and every timing cell with its ratio and
    /// verdict (`x86_64 spin.SpinMutex lock_unlock -3% (unchanged)`).
    fn crate_changes(&self) -> Vec<String> {
        const SHOWN: usize = 12;
        let lock = |c: &CellReport| {
            c.case
                .get("lock")
                .and_then(|v| v.as_str())
                .unwrap_or("?")
                .to_string()
        };
        let mut counts: Vec<String> = self
            .cells
            .iter()
            .filter(|c| c.kind().exact())
            .filter_map(|c| {
                let (b, h) = (c.base.as_ref()?.median?, c.head.median?);
                (b != h).then(|| format!("{} {} {b} → {h} insns/op", c.target, lock(c)))
            })
            .collect();
        if counts.len() > SHOWN {
            let more = counts.len() - SHOWN;
            counts.truncate(SHOWN);
            counts.push(format!("{more} more counts changed"));
        }
        if counts.is_empty() && self.counts_compared > 0 {
            counts.push(format!(
                "the same instruction counts in all {} compared",
                self.counts_compared
            ));
        }
        let timings = self.cells.iter().filter(|c| c.family).filter_map(|c| {
            let e = c.effect?;
            Some(format!(
                "{} {} {} {:+.1}% ({})",
                c.target,
                lock(c),
                c.bench,
                (e.ratio - 1.0) * 100.0,
                c.verdict.name()
            ))
        });
        counts.into_iter().chain(timings).collect()
    }

    pub fn verdict_head(&self) -> String {
        let outcome = self.outcome();
        let mut parts = Vec::new();
        if let Some(why) = &self.unreferenced {
            parts.push(format!("measured, not compared ({why})"));
        } else {
            parts.extend(self.compared_parts());
        }
        if self.models.ran {
            let total = self.models.passed + self.models.violated.len();
            parts.push(format!("{}/{total} models passed", self.models.passed));
        }
        if self.miri.ran && self.miri.not_checked.is_none() {
            // A lock some client of which did not run is not race-free.
            let clean = self
                .miri
                .locks
                .iter()
                .filter(|l| l.race.is_none() && l.not_checked.is_empty())
                .count();
            parts.push(format!(
                "{clean}/{} locks race-free under Miri",
                self.miri.locks.len()
            ));
        }
        let mut line = format!("{}: {}", outcome.word(), parts.join(", "));
        if let Some(crates) = &self.crates {
            line = format!("{crates}: {}\n{line}", self.crate_changes().join(", "));
        }
        for w in self.waived() {
            line.push_str(&format!("\n{w}"));
        }
        line
    }

    /// What the verdict rests on where the run was compared: counts,
    /// timing cells, footprints.
    fn compared_parts(&self) -> Vec<String> {
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
            "no timing cell on real hardware here (QEMU timings are advisory)".into()
        } else {
            // Counted as the cells are: a cleared or regressed cell gated.
            let family = |v| self.with(v).filter(|c| c.family && c.gated).count();
            let gated = self.cells.iter().filter(|c| c.family && c.gated).count();
            let decided = match gated {
                0 => String::new(),
                _ => format!(
                    " ({} cleared, {} regressions, {} inconclusive)",
                    family(Verdict::Cleared) + family(Verdict::Improvement),
                    family(Verdict::Regression),
                    family(Verdict::Inconclusive)
                ),
            };
            format!(
                "{gated}/{} timing cells gated{decided}",
                self.family_present
            )
        });
        parts.push(format!(
            "{} ordering footprints compared",
            self.footprints_compared
        ));
        let events = self
            .cells
            .iter()
            .filter(|c| c.kind() == crate::protocol::Kind::Events)
            .filter(|c| {
                matches!(
                    c.verdict,
                    Verdict::Unchanged | Verdict::Regression | Verdict::Improvement
                )
            })
            .count();
        if events > 0 {
            parts.push(format!("{events} lock-event rates compared"));
        }
        parts
    }

    /// [`GateReport::verdict_line`] with, when NOT GATED, what was not
    /// gated and what would gate it.
    pub fn verdict_line(&self) -> String {
        let mut line = self.verdict_head();
        if self.outcome() == Outcome::NotGated {
            let advice = match self.advice() {
                a if a.is_empty() => String::new(),
                a => format!("; to gate here, {}", a.join("; ")),
            };
            line.push_str(&format!(
                "\nNOT GATED: {}{advice}; --require-gate makes this exit 1",
                self.not_gated().join("; ")
            ));
        }
        line
    }

    /// What would make what was not gated gate, each the flag and value.
    pub(super) fn advice(&self) -> Vec<String> {
        let mut advice = self.timing_advice();
        if self.counts_with_reference > self.counts_compared {
            advice.push("count both sides with one compiler: `cargo xtask matrix` recounts the baselines' commit with this machine's, or `--against <base>` builds both here".into());
        }
        advice
    }
}
