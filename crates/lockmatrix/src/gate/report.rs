//! What the gate found: every cell's verdict with its effect and the look
//! that decided it, the problems and notes, and what the whole rests on
//! (counts compared, timing gated, footprints, models, Miri).

use super::miri::MiriGate;
use super::ordering::{ModelGate, OrderingChange};
use super::GateOptions;
use crate::acknowledge::Acknowledgement;
use crate::cells::Summary;
use crate::name::Name;
use crate::protocol::{case_label, Better};
use crate::results::{SuiteRun, TargetResult};
use serde::Serialize;
use serde_json::{Map, Value};

/// What the gate concluded about one cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// An instruction count above the reference, or a timing cell
    /// slower than its margin with confidence: fails the gate.
    Regression,
    /// A timing cell slower by less than its threshold, with
    /// confidence.
    Cleared,
    /// A timing cell that reached neither boundary by its last look.
    Inconclusive,
    /// Fewer instructions than the reference, or a timing cell
    /// faster by more than its threshold.
    Improvement,
    /// A QEMU timing, or a metric shown rather than gated: never failing.
    Advisory,
    /// The baseline was recorded on another testbed or in another unit.
    Incomparable,
    /// Missing or non-positive values: cannot be compared on a log scale.
    NotComparable,
    /// A new cell: no baseline to compare with.
    NoBaseline,
    /// An instruction count whose executed ordering footprint changed:
    /// never an improvement, gated by the ordering change itself.
    OrderingChanged,
    /// An instruction count equal to the reference's.
    Unchanged,
    /// A timing cell whose measured noise cannot resolve even the
    /// coarsest threshold of its ladder here: shown with its spread and
    /// what would let it gate, never failing.
    TooNoisy,
}

impl Verdict {
    pub const ALL: [Verdict; 11] = [
        Verdict::Regression,
        Verdict::OrderingChanged,
        Verdict::Inconclusive,
        Verdict::Improvement,
        Verdict::Cleared,
        Verdict::TooNoisy,
        Verdict::Advisory,
        Verdict::Incomparable,
        Verdict::NotComparable,
        Verdict::NoBaseline,
        Verdict::Unchanged,
    ];

    /// The snake_case name used in the JSON report.
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Regression => "regression",
            Verdict::Cleared => "cleared",
            Verdict::Inconclusive => "inconclusive",
            Verdict::Improvement => "improvement",
            Verdict::Advisory => "advisory",
            Verdict::Incomparable => "incomparable",
            Verdict::NotComparable => "not_comparable",
            Verdict::NoBaseline => "no_baseline",
            Verdict::OrderingChanged => "ordering_changed",
            Verdict::Unchanged => "unchanged",
            Verdict::TooNoisy => "too_noisy",
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
    /// One-sided p-value of "slower than the margin" (signed-rank paired,
    /// Mann-Whitney against stored baselines), on all the cell's values.
    pub p: f64,
}

/// Where a timing cell's decision was made.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Look {
    /// The deciding look (1-based), or the last one reached, of `looks`.
    pub look: usize,
    pub looks: usize,
    /// Pairs (per side) that look used: against stored baselines, the
    /// run's rounds.
    pub pairs: usize,
    /// What `pairs` counts: `pairs` (against a base revision) or `rounds`
    /// (against stored baselines).
    pub unit: &'static str,
    /// The slowdown the cell must catch, and the one it tolerates.
    pub threshold: f64,
    pub margin: f64,
    /// The per-cell level of a false regression.
    pub alpha: f64,
}

/// One cell's comparison and verdict.
#[derive(Debug, Clone, Serialize)]
pub struct CellReport {
    pub target: Name,
    pub suite: Name,
    pub bench: Name,
    pub case: Map<String, Value>,
    pub metric: Name,
    pub unit: Name,
    pub better: Better,
    /// A timing cell on real hardware: one that can fail the gate on its
    /// statistics (`policy::Role::Timed`).
    pub family: bool,
    /// How strict the gate was with it here: threshold, margin, level and
    /// the noise they came from (timing cells with values on both sides).
    pub strictness: Option<crate::strictness::Strictness>,
    pub verdict: Verdict,
    /// The run's values (original units).
    pub head: Summary,
    /// The baseline's values, when there is a baseline cell.
    pub base: Option<Summary>,
    pub effect: Option<Effect>,
    /// Family cells: the look that decided them.
    pub look: Option<Look>,
    /// Inconclusive cells: about how many pairs (rounds per side) they
    /// would need to be decided with power 0.8 at their threshold; family
    /// cells of another testbed: the rounds a baseline recorded here would
    /// need to gate later runs (`None`: unknown).
    pub rounds_needed: Option<usize>,
    /// Why a cell is incomparable or not comparable.
    pub note: Option<String>,
    /// A timing cell that gated: it was decided (cleared, a regression),
    /// or its last look could have found a regression. One whose rounds
    /// can never reach the level is not, and says what would.
    pub gated: bool,
}

impl CellReport {
    pub fn kind(&self) -> crate::protocol::Kind {
        crate::protocol::Kind::of(&self.unit)
    }

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
    pub target: Name,
    pub suite: Name,
    pub bench: Name,
    pub case: Map<String, Value>,
    pub name: Name,
    pub details: Value,
    /// The suite's invocation that reported it: the command to run again.
    pub command: String,
}

/// A problem (fails the gate) or a note (never fails), about a target or
/// one of its suites.
#[derive(Debug, Clone, Serialize)]
pub struct Item {
    pub target: Name,
    pub suite: Option<Name>,
    pub what: String,
    /// About the reference (the base revision broke or did not run), not
    /// the run itself: a comparison finding, which `--no-gate` shows
    /// without failing.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub of_reference: bool,
}

impl Item {
    pub fn place(&self) -> String {
        match &self.suite {
            Some(s) => format!("{}/{s}", self.target),
            None => self.target.to_string(),
        }
    }
}

/// Whether the run's timing cells could fail the gate at all.
#[derive(Debug, Clone, Serialize)]
pub struct TimingGate {
    /// Family cells compared (the suites' timing cells on real hardware,
    /// with a comparable reference).
    pub cells: usize,
    /// The strictest per-cell level among them.
    pub cell_alpha: f64,
    /// The fewest pairs (rounds per side) the plan gives a timing cell.
    pub rounds: usize,
    /// The smallest p-value those rounds can give.
    pub min_p: f64,
    /// Some timing cell's last look can reach its level: some slowdown
    /// could fail the gate.
    pub gated: bool,
    /// Family cells compared with stored baselines whose rounds can never
    /// reach the level: their target, and the rounds a baseline would need
    /// (`None`: too noisy for any).
    pub unreachable: Vec<(Name, Option<usize>)>,
    /// Compared pair by pair with a base revision (else with stored
    /// baselines).
    pub paired: bool,
}

impl TimingGate {
    /// One line for the reports.
    pub fn line(&self) -> String {
        let unit = if self.paired { "pairs" } else { "rounds" };
        if self.cells == 0 {
            "timing not gated: no timing cell on real hardware has a comparable reference here"
                .into()
        } else if self.gated {
            format!(
                "timing gated on {} timing cells, up to {} {unit} each: per-cell level down to {:.1e}, reachable (smallest p {:.1e})",
                self.cells, self.rounds, self.cell_alpha, self.min_p
            )
        } else {
            format!(
                "timing not gated: {} {unit} cannot reach p < {:.1e} (smallest p {:.1e}): {}",
                self.rounds,
                self.cell_alpha,
                self.min_p,
                self.advice()
            )
        }
    }

    /// What would make the unreachable cells gate: the flag and value.
    pub fn advice(&self) -> String {
        if self.paired {
            return "run more pairs (--rounds N)".into();
        }
        let targets = |noisy: bool| {
            let mut t: Vec<&str> = self
                .unreachable
                .iter()
                .filter(|(_, m)| m.is_none() == noisy)
                .map(|(t, _)| t.as_str())
                .collect();
            t.sort();
            t.dedup();
            t.join(",")
        };
        let mut out = Vec::new();
        if let Some(m) = self.unreachable.iter().filter_map(|(_, m)| *m).max() {
            out.push(format!(
                "record the baselines with at least {m} rounds (`cargo xtask matrix --targets {} --rounds {m}`, then `cargo xtask baseline update`)",
                targets(false)
            ));
        }
        if self.unreachable.iter().any(|(_, m)| m.is_none()) {
            out.push(format!(
                "gate the cells of {} too noisy for their threshold against stored baselines against a base revision (`--against <base>`)",
                targets(true)
            ));
        }
        out.join("; ")
    }
}

/// The gate's findings for one run.
#[derive(Debug, Clone, Serialize)]
pub struct GateReport {
    pub run_id: String,
    /// Two versions of a lock crate compared (`--crate` against
    /// `--against-crate`): `spin 0.9.8 → 0.12.3`.
    pub crates: Option<String>,
    /// What the run was compared with ([`Reference::describe`]).
    pub reference: String,
    /// Why nothing was compared, by request (`--crate` without
    /// `--against-crate`): only what needs no reference was judged.
    pub unreferenced: Option<String>,
    /// Timing cells were compared round for round with an interleaved base.
    pub paired: bool,
    pub options: GateOptions,
    pub failed_checks: Vec<FailedCheck>,
    /// Broken targets and suites, unreadable baselines: each fails the gate.
    pub problems: Vec<Item>,
    /// Targets not run, baseline cells the run lacks, ...: never fail.
    pub notes: Vec<Item>,
    /// Every cell of the run, in run order (target, suite, then cell key).
    pub cells: Vec<CellReport>,
    /// How many timing cells gate (the timing cells compared).
    pub family: usize,
    /// Whether any timing slowdown could have failed the gate.
    pub timing: TimingGate,
    /// Instruction counts compared exactly.
    pub counts_compared: usize,
    /// Instruction counts that have a reference cell: all of them should
    /// be compared ([`GateReport::outcome`]).
    pub counts_with_reference: usize,
    /// Cells of a suite's timing cells measured on real hardware, with a
    /// reference or not: the timings that could gate here.
    pub family_present: usize,
    /// Operations and counted cells whose ordering footprint was compared.
    pub footprints_compared: usize,
    /// Stored baselines whose counts came from another compiler, counted
    /// again here from their commit.
    pub recounted: Vec<Recounted>,
    /// Every footprint that differs from the reference's, acknowledged or
    /// not (an unacknowledged one fails).
    pub ordering: Vec<OrderingChange>,
    /// The trailers found in the compared range.
    pub acknowledgements: Vec<Acknowledgement>,
    /// The loom model check of the run's locks.
    pub models: ModelGate,
    /// The Miri check of the locks loom cannot see, against the base's.
    pub miri: MiriGate,
    /// The contention model, compared exactly with the reference's.
    pub contention: super::contention::ContentionGate,
}

impl GateReport {
    /// Whether the gate fails: on what needs no reference, in every mode
    /// ([`GateReport::failed_without_reference`]), or on what the
    /// comparison found unless `--no-gate`.
    pub fn failed(&self) -> bool {
        self.failed_without_reference() || (!self.options.no_gate && self.comparison_failed())
    }

    /// A failed check, a broken target or suite, a violated (or unrun)
    /// model, or a race under Miri (unless `--allow-races`): true whatever
    /// the run is compared with, or with nothing.
    pub fn failed_without_reference(&self) -> bool {
        !self.failed_checks.is_empty()
            || self.problems.iter().any(|p| !p.of_reference)
            || self.models.failed()
            || (self.miri.failed() && !self.options.allow_races)
            || self.contention.failed_alone()
    }

    /// A regression, an unacknowledged ordering change, or a reference
    /// that broke.
    pub fn comparison_failed(&self) -> bool {
        self.cells.iter().any(|c| c.verdict == Verdict::Regression)
            || self.unacknowledged().next().is_some()
            || self.problems.iter().any(|p| p.of_reference)
            || !self.contention.worse.is_empty()
    }

    /// What would have failed the run but for a flag named for it, one
    /// phrase each (the reports say it beside the verdict).
    pub fn waived(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.options.no_gate && self.comparison_failed() {
            let regressions = self.count(Verdict::Regression);
            let ordering = self.unacknowledged().count();
            let base = self.problems.iter().filter(|p| p.of_reference).count();
            out.push(format!(
                "--no-gate: {regressions} regressions, {ordering} unacknowledged ordering changes and {base} problems of the reference shown, not failing"
            ));
        }
        if self.options.no_gate && !self.contention.worse.is_empty() {
            out.push(format!(
                "--no-gate: {} worse contention-model metrics shown, not failing",
                self.contention.worse.len()
            ));
        }
        if self.options.allow_races && self.miri.failed() {
            let locks = self.miri.locks.iter().filter(|l| l.race.is_some()).count();
            out.push(format!(
                "--allow-races: races under Miri in {locks} locks shown, not failing"
            ));
        }
        out
    }

    /// Ordering changes no trailer acknowledges: each fails the gate.
    pub fn unacknowledged(&self) -> impl Iterator<Item = &OrderingChange> {
        self.ordering.iter().filter(|c| c.acknowledged.is_none())
    }

    pub fn count(&self, verdict: Verdict) -> usize {
        self.cells.iter().filter(|c| c.verdict == verdict).count()
    }

    pub fn with(&self, verdict: Verdict) -> impl Iterator<Item = &CellReport> {
        self.cells.iter().filter(move |c| c.verdict == verdict)
    }
}

/// A baseline commit counted again with this run's toolchain.
#[derive(Debug, Clone, Serialize)]
pub struct Recounted {
    pub commit: String,
    /// The compiler the baselines were recorded with, and this run's.
    pub recorded_with: String,
    pub counted_with: String,
    /// Instruction counts compared with the recount.
    pub counts: usize,
    /// Ordering footprints compared with the recount's.
    pub footprints: usize,
}

impl Recounted {
    /// `counts: baseline 42a7b06 recounted with rustc 1.96.0 (recorded
    /// with rustc 1.85.0): 330 counts and 1062 footprints compared`.
    pub fn line(&self) -> String {
        format!(
            "counts: baseline {} recounted with {} (recorded with {}): {} counts and {} footprints compared",
            short(&self.commit),
            self.counted_with,
            self.recorded_with,
            self.counts,
            self.footprints
        )
    }
}

pub(super) fn short(commit: &str) -> &str {
    crate::escape::prefix(commit, 12)
}

pub(super) fn item(t: &TargetResult, suite: Option<&SuiteRun>, what: String) -> Item {
    Item {
        target: t.name.clone(),
        suite: suite.map(|s| s.suite.clone()),
        what,
        of_reference: false,
    }
}

/// A problem of the reference's ([`Item::of_reference`]).
pub(super) fn reference_item(t: &TargetResult, suite: Option<&SuiteRun>, what: String) -> Item {
    Item {
        of_reference: true,
        ..item(t, suite, what)
    }
}
