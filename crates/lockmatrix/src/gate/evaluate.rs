//! The verdict of every cell of a run against its reference: the base
//! revision run beside it (`--against`), or the committed baselines.
//!
//! In this order:
//! - `insns_per_op` cells compare exactly ([`judge_insns`]): more
//!   instructions than the reference is a regression on every runner, QEMU
//!   too; counts from another target, compiler or emulator release are
//!   `incomparable` (the same binary compares whatever its labels say),
//!   unless a recount of the baselines' commit with this run's toolchain
//!   stands in for them ([`Reference::recounted`]).
//! - Each operation's ordering footprint compares exactly where counts do
//!   ([`super::ordering`]): a change fails unless a trailer acknowledges
//!   it, and a count cell whose executed footprint changed is
//!   `ordering_changed`, never an improvement. A violated model fails.
//! - A timing cell outside its suite's declared timing family (the sample's
//!   `gating` flag), and every QEMU timing (emulator time), is `advisory`:
//!   shown with its ratio, never failing.
//! - Against stored baselines, a family cell recorded on another testbed
//!   (runner, CPU model, emulator or compiler version) is `incomparable`.
//! - A cell with missing or non-positive values is `not_comparable`.
//! - The remaining family cells gate, each with a threshold (the slowdown
//!   it must catch) and a per-cell level (the target's alpha split over
//!   its suites and their family cells), see [`crate::family`].
//!   Against the base revision the pairs are replayed look by look and a
//!   cell ends `regression` (slower than half its threshold, with
//!   confidence), `cleared` (slower by less than its threshold, with
//!   confidence; `improvement` when even faster by more than it) or
//!   `inconclusive` (the last look reached, with the pairs it would need).
//!   Against stored baselines the same three verdicts come from one look:
//!   Mann-Whitney for the regression, the Hodges-Lehmann interval for the
//!   clearing.
//!
//! [`evaluate`] is a pure function of the run, the reference and the
//! options; reading baseline files happens before ([`Reference::stored`]).

use super::baseline::{self, Baseline, Testbed};
use super::miri::MiriGate;
use super::ordering::{self, Footprints, ModelGate, OrderingChange};
use super::GateOptions;
use crate::acknowledge::Acknowledgement;
use crate::cells::{self, CellKey, RunCell, Summary};
use crate::commit::CommitId;
use crate::family;
use crate::name::Name;
use crate::policy::{self, Role};
use crate::protocol::{case_label, Better};
use crate::results::{Failure, Run, Status, SuiteRun, TargetResult};
use anyhow::Result;
use serde::Serialize;
use serde_json::{Map, Value};
use stats::Decision;
use std::collections::BTreeMap;
use std::path::Path;

/// What the gate concluded about one cell.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// An instruction count above the reference, or a timing-family cell
    /// slower than its margin with confidence: fails the gate.
    Regression,
    /// A timing-family cell slower by less than its threshold, with
    /// confidence.
    Cleared,
    /// A timing-family cell that reached neither boundary by its last look.
    Inconclusive,
    /// Fewer instructions than the reference, or a timing-family cell
    /// faster by more than its threshold.
    Improvement,
    /// A QEMU timing, or a cell outside the timing family: shown, never failing.
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
}

impl Verdict {
    pub const ALL: [Verdict; 10] = [
        Verdict::Regression,
        Verdict::OrderingChanged,
        Verdict::Inconclusive,
        Verdict::Improvement,
        Verdict::Cleared,
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

/// Where a family cell's decision was made.
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
    /// In its suite's timing family.
    pub gating: bool,
    /// A timing-family cell on real hardware: one that can fail the gate
    /// on its statistics (`policy::Role::Family`).
    pub family: bool,
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
    /// A family cell that gated: it was decided (cleared, a regression),
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
}

/// A problem (fails the gate) or a note (never fails), about a target or
/// one of its suites.
#[derive(Debug, Clone, Serialize)]
pub struct Item {
    pub target: Name,
    pub suite: Option<Name>,
    pub what: String,
}

impl Item {
    pub fn place(&self) -> String {
        match &self.suite {
            Some(s) => format!("{}/{s}", self.target),
            None => self.target.to_string(),
        }
    }
}

/// What a run is compared with.
pub enum Reference<'a> {
    /// The committed baselines: per `(target, suite)` of the run, the file's
    /// content (`None`: no file).
    Stored {
        dir: String,
        files: BTreeMap<(Name, Name), Option<Baseline>>,
        /// The `Lockmatrix-Ordering:` trailers between the baselines'
        /// commits and the run's ([`Reference::acknowledge`]).
        acknowledged: Vec<Acknowledgement>,
        /// The baselines' commits counted again with this run's toolchain
        /// (`matrix::Options::recount`), where the baselines' counts came
        /// from another compiler: their counts and footprints stand in
        /// for the stored ones ([`Reference::recounted`]).
        recounts: Vec<&'a Run>,
    },
    /// The base revision's run, made in the same session with its rounds
    /// interleaved with the head's (`--against`): round `i` of a cell on
    /// both sides forms a pair.
    Base(&'a Run),
}

impl<'a> Reference<'a> {
    /// Stored baselines whose counts are taken from `recounts` wherever a
    /// recount of the baseline's commit ran the target and suite.
    pub fn recounted<'b>(self, with: &'b [Run]) -> Reference<'b>
    where
        'a: 'b,
    {
        match self {
            Reference::Stored {
                dir,
                files,
                acknowledged,
                mut recounts,
            } => {
                recounts.extend(with);
                Reference::Stored {
                    dir,
                    files,
                    acknowledged,
                    recounts,
                }
            }
            base => base,
        }
    }
}

impl Reference<'_> {
    /// Reads the baselines of every `(target, suite)` of `run` from `dir`
    /// (`baselines/<target>/<suite>.json`). A file that cannot be read is
    /// an error naming it (bad input); nothing is ever written.
    pub fn stored(run: &Run, dir: &Path) -> Result<Reference<'static>> {
        if dir.exists() && !dir.is_dir() {
            anyhow::bail!(
                "{}: not a directory (expected baselines/<target>/<suite>.json)",
                dir.display()
            );
        }
        let mut files = BTreeMap::new();
        for t in &run.targets {
            for s in &t.suites {
                // A corrupt baseline is bad input: nothing is compared.
                let read = baseline::read(dir, &t.name, &s.suite)?;
                files.insert((t.name.clone(), s.suite.clone()), read);
            }
        }
        Ok(Reference::Stored {
            dir: dir.display().to_string(),
            files,
            acknowledged: Vec::new(),
            recounts: Vec::new(),
        })
    }

    /// The `(commit, targets)` whose stored counts do not compare with
    /// `run`'s (another compiler, emulator release or CPU choice built or
    /// counted them) and are worth counting again with this run's
    /// toolchain: each commit's targets with such a suite.
    pub fn to_recount(&self, run: &Run) -> BTreeMap<CommitId, Vec<Name>> {
        let mut out: BTreeMap<CommitId, Vec<Name>> = BTreeMap::new();
        let Reference::Stored { files, .. } = self else {
            return out;
        };
        for t in run.targets.iter().filter(|t| t.status == Status::Ok) {
            for s in &t.suites {
                let testbed = Testbed::of_suite(run, t, &s.suite);
                let Some(Some(b)) = files.get(&(t.name.clone(), s.suite.clone())) else {
                    continue;
                };
                // Counts, or ordering footprints: both come from the binary.
                let counted =
                    s.samples.iter().any(|x| x.kind().exact()) || !s.static_footprint.is_empty();
                let same = same_binary(b.binary.as_ref(), t, s);
                if counted && !same && !b.testbed.count_differences(&testbed).is_empty() {
                    let targets = out.entry(b.commit.clone()).or_default();
                    if !targets.contains(&t.name) {
                        targets.push(t.name.clone());
                    }
                }
            }
        }
        out
    }

    /// The commits the stored baselines were recorded at, for reading the
    /// trailers between them and the run's commit.
    pub fn baseline_commits(&self) -> Vec<CommitId> {
        let Reference::Stored { files, .. } = self else {
            return Vec::new();
        };
        let commits: std::collections::BTreeSet<CommitId> =
            files.values().flatten().map(|b| b.commit.clone()).collect();
        commits.into_iter().collect()
    }

    /// The baseline files recorded at `commit`, for errors that name them.
    pub fn files_at(&self, commit: &CommitId) -> Vec<std::path::PathBuf> {
        let Reference::Stored { dir, files, .. } = self else {
            return Vec::new();
        };
        files
            .iter()
            .filter(|(_, b)| b.as_ref().is_some_and(|b| b.commit == *commit))
            .map(|((t, s), _)| baseline::path(Path::new(dir), t, s))
            .collect()
    }

    /// Adds trailers read for stored baselines (an `--against` run carries
    /// its own in `run.against`).
    pub fn acknowledge(&mut self, acks: Vec<Acknowledgement>) {
        if let Reference::Stored { acknowledged, .. } = self {
            acknowledged.extend(acks);
        }
    }

    /// The trailers that acknowledge ordering changes against it.
    fn acknowledgements<'r>(&'r self, run: &'r Run) -> &'r [Acknowledgement] {
        match self {
            Reference::Stored { acknowledged, .. } => acknowledged,
            Reference::Base(_) => run.against.as_ref().map_or(&[], |a| &a.acknowledged),
        }
    }

    /// How reports name the reference.
    pub fn describe(&self) -> String {
        match self {
            Reference::Stored { dir, .. } => format!("the baselines in {dir}"),
            Reference::Base(base) if base.subject.is_some() => {
                let b = base.subject.as_ref().expect("matched");
                format!("{} ({})", b.label(), b.source)
            }
            Reference::Base(base) => match &base.against {
                Some(a) => format!(
                    "the base revision {} ({})",
                    a.rev,
                    crate::commit::shown(a.commit.as_ref())
                ),
                None => format!("the base run {}", base.run_id),
            },
        }
    }
}

fn short(commit: &str) -> &str {
    crate::escape::prefix(commit, 12)
}

/// Whether the run's timing family could fail the gate at all.
#[derive(Debug, Clone, Serialize)]
pub struct TimingGate {
    /// Family cells compared (the suites' timing family on real hardware,
    /// with a comparable reference).
    pub cells: usize,
    /// The strictest per-cell level among them.
    pub cell_alpha: f64,
    /// The fewest pairs (rounds per side) the plan gives a family cell.
    pub rounds: usize,
    /// The smallest p-value those rounds can give.
    pub min_p: f64,
    /// Some family cell's last look can reach its level: some slowdown
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
            "timing not gated: no cell of a suite's timing family has a comparable reference here"
                .into()
        } else if self.gated {
            format!(
                "timing gated on {} family cells, up to {} {unit} each: per-cell level down to {:.1e}, reachable (smallest p {:.1e})",
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
    /// How many timing cells gate (the family cells compared).
    pub family: usize,
    /// Whether any timing slowdown could have failed the gate.
    pub timing: TimingGate,
    /// Instruction counts compared exactly.
    pub counts_compared: usize,
    /// Instruction counts that have a reference cell: all of them should
    /// be compared ([`GateReport::outcome`]).
    pub counts_with_reference: usize,
    /// Cells of a suite's timing family measured on real hardware, with a
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
}

impl GateReport {
    /// Whether the gate fails: a failed check, a problem, a regression,
    /// an unacknowledged ordering change or a violated (or unchecked) model.
    pub fn failed(&self) -> bool {
        !self.failed_checks.is_empty()
            || !self.problems.is_empty()
            || self.cells.iter().any(|c| c.verdict == Verdict::Regression)
            || self.unacknowledged().next().is_some()
            || self.models.failed()
            || self.miri.failed()
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

/// A family cell waiting for its decision, once its target's suites and
/// family are known.
struct Pending {
    index: usize,
    target: Name,
    base: Vec<f64>,
    head: Vec<f64>,
    /// The target's suites, the suite's family cells, the most pairs a cell gets.
    suites: usize,
    family_cells: usize,
    max_pairs: usize,
    /// Against stored baselines: the rounds the run planned (its last
    /// look), or `None` (one look at the rounds there are).
    planned_rounds: Option<usize>,
}

/// The reference cells of one suite run, and what makes them comparable.
struct SuiteReference {
    cells: BTreeMap<CellKey, RefCell>,
    /// What the timings and the counts were measured on: the same but
    /// where a recount of the baseline's commit stands in for its counts.
    testbed: Option<Testbed>,
    count_testbed: Option<Testbed>,
    paired: bool,
    /// The recount whose counts stand in for the stored ones.
    recount: Option<(String, String)>,
    /// Why the recount made for this suite could not stand in.
    recount_failed: Option<String>,
    /// SHA-256 of the suite binary the stored counts came from.
    binary: Option<String>,
    /// Its ordering footprints, when it recorded them.
    footprints: Option<Footprints>,
}

/// One reference cell: its values (in round order) and how to show it.
struct RefCell {
    case: Map<String, Value>,
    unit: Name,
    better: Better,
    samples: Vec<Option<f64>>,
    /// The round of each value (a stored baseline's: their order).
    rounds: Vec<u32>,
}

/// Compares every cell of `run` with `reference` and gives each its
/// verdict. Errors only on bad options.
pub fn evaluate(run: &Run, reference: &Reference, opts: &GateOptions) -> Result<GateReport> {
    opts.check()?;
    let mut report = GateReport {
        run_id: run.run_id.clone(),
        crates: match (reference, &run.subject) {
            (Reference::Base(base), Some(head)) => base
                .subject
                .as_ref()
                .map(|b| format!("{} {} → {}", head.name, b.version, head.version)),
            _ => None,
        },
        reference: reference.describe(),
        paired: matches!(reference, Reference::Base(_)),
        options: *opts,
        failed_checks: Vec::new(),
        problems: Vec::new(),
        notes: Vec::new(),
        cells: Vec::new(),
        family: 0,
        timing: TimingGate {
            cells: 0,
            cell_alpha: opts.alpha,
            rounds: 0,
            min_p: 1.0,
            gated: false,
            unreachable: Vec::new(),
            paired: false,
        },
        counts_compared: 0,
        counts_with_reference: 0,
        family_present: 0,
        footprints_compared: 0,
        recounted: Vec::new(),
        ordering: Vec::new(),
        acknowledgements: reference.acknowledgements(run).to_vec(),
        models: ModelGate::of(run.models.as_ref()),
        miri: MiriGate::of(
            run.miri.as_ref(),
            match reference {
                Reference::Base(base) => base.miri.as_ref(),
                _ => None,
            },
        ),
    };
    let mut pending = Vec::new();
    // The most pairs a family cell gets: as the run was planned, else the
    // most any of the target's cells has.
    // Bounded: a crafted run must not ask for millions of looks.
    let planned = run
        .against
        .as_ref()
        .and_then(|a| a.pairs)
        .map(|n| (n as usize).min(family::MAX_PAIRS));
    for t in &run.targets {
        target_status(t, &mut report);
        for s in &t.suites {
            let testbed = Testbed::of_suite(run, t, &s.suite);
            let Some(found) = reference_of(reference, t, s, &mut report) else {
                continue;
            };
            let acks = reference.acknowledgements(run);
            suite(t, s, &testbed, found, acks, opts, &mut report, &mut pending);
        }
        let most = pending
            .iter()
            .filter(|p| p.target == t.name)
            .map(|p| p.base.len().min(p.head.len()))
            .max()
            .unwrap_or(0);
        for p in pending.iter_mut().filter(|p| p.target == t.name) {
            p.suites = t.suites.len();
            p.max_pairs = planned.unwrap_or(most);
            p.planned_rounds = t.stored_rounds.map(|r| (r as usize).min(family::MAX_PAIRS));
        }
    }
    decide(&mut report, &pending, opts);
    Ok(report)
}

/// The reference of one suite run, or `None` after reporting why there is
/// none to use (an unreadable baseline is a problem: the gate fails).
fn reference_of(
    reference: &Reference,
    t: &TargetResult,
    s: &SuiteRun,
    report: &mut GateReport,
) -> Option<SuiteReference> {
    let collect = |cells: Vec<RunCell>| -> BTreeMap<CellKey, RefCell> {
        cells
            .into_iter()
            .map(|c| {
                let r = RefCell {
                    case: c.case,
                    unit: c.unit,
                    better: c.better,
                    samples: c.samples,
                    rounds: c.rounds,
                };
                (c.key, r)
            })
            .collect()
    };
    match reference {
        Reference::Base(base) => {
            let bt = base.targets.iter().find(|b| b.name == t.name);
            let bs = bt.and_then(|b| b.suites.iter().find(|b| b.suite == s.suite));
            let cells = bs
                .map(|b| collect(cells::collect(&b.samples)))
                .unwrap_or_default();
            let rev = crate::commit::shown(base.host.lockmatrix_commit.as_ref());
            // A base that broke compares nothing: never a pass with every
            // cell "new".
            match (bt.map(|b| &b.status), bs) {
                (Some(Status::Failed(why)), None) => report.problems.push(item(
                    t,
                    Some(s),
                    format!("the base revision {rev} failed: {why}; nothing was compared"),
                )),
                (_, Some(b)) if matches!(b.status, Status::Failed(_)) => {
                    report.problems.push(item(
                        t,
                        Some(s),
                        format!(
                            "the base revision {rev} failed: {}; its cells are not a reference",
                            b.status.label()
                        ),
                    ));
                    return None;
                }
                (None | Some(Status::Pending | Status::NotRun(_)), None) => {
                    report.problems.push(item(
                        t,
                        Some(s),
                        format!("the base revision {rev} did not run it; nothing was compared"),
                    ))
                }
                (_, None) => report.notes.push(item(
                    t,
                    Some(s),
                    format!("the base revision {rev} has no such suite: every cell is new"),
                )),
                _ => {}
            }
            let testbed = bt.map(|b| Testbed::of_suite(base, b, &s.suite));
            Some(SuiteReference {
                cells,
                count_testbed: testbed.clone(),
                testbed,
                paired: true,
                recount: None,
                recount_failed: None,
                binary: None,
                footprints: bt
                    .zip(bs)
                    .and_then(|(bt, bs)| Footprints::of(&bt.triple, bs)),
            })
        }
        Reference::Stored {
            files, recounts, ..
        } => match files.get(&(t.name.clone(), s.suite.clone())) {
            Some(Some(b)) => {
                let mut found = SuiteReference {
                    cells: b
                        .cells
                        .iter()
                        .map(|c| {
                            let r = RefCell {
                                case: c.case.clone(),
                                unit: c.unit.clone(),
                                better: c.better,
                                samples: c.samples.clone(),
                                rounds: (0..c.samples.len() as u32).collect(),
                            };
                            (c.key(), r)
                        })
                        .collect(),
                    testbed: Some(b.testbed.clone()),
                    count_testbed: Some(b.testbed.clone()),
                    paired: false,
                    footprints: b.footprint.clone(),
                    recount: None,
                    recount_failed: None,
                    binary: b.binary.clone(),
                };
                // The baseline's commit counted again here: its counts and
                // footprints for the stored ones.
                let recounted = match stand_in(recounts, &b.commit, t, s) {
                    Ok(found) => found,
                    Err(why) => {
                        found.recount_failed = Some(why.to_string());
                        None
                    }
                };
                if let Some((r, rt, rs)) = recounted {
                    found
                        .cells
                        .retain(|_, c| !crate::protocol::Kind::of(&c.unit).exact());
                    found.cells.extend(collect(
                        cells::collect(&rs.samples)
                            .into_iter()
                            .filter(|c| c.kind().exact())
                            .collect(),
                    ));
                    found.count_testbed = Some(Testbed::of_suite(r, rt, &rs.suite));
                    found.footprints = Footprints::of(&rt.triple, rs);
                    found.binary = rt.binaries.get(&rs.suite).cloned();
                    found.recount = Some((
                        b.commit.to_string(),
                        b.testbed.compiler_version.clone().unwrap_or_default(),
                    ));
                }
                Some(found)
            }
            _ => Some(SuiteReference {
                cells: BTreeMap::new(),
                testbed: None,
                count_testbed: None,
                paired: false,
                footprints: None,
                recount: None,
                recount_failed: None,
                binary: None,
            }),
        },
    }
}

/// The recount of `commit` that stands in for target `t`'s suite `s`:
/// `None` when no recount was made at all (the compilers agreed, or it
/// could not be), an error saying why when one was made and cannot serve.
fn stand_in<'r>(
    recounts: &[&'r Run],
    commit: &CommitId,
    t: &TargetResult,
    s: &SuiteRun,
) -> std::result::Result<Option<(&'r Run, &'r TargetResult, &'r SuiteRun)>, NoStandIn> {
    if recounts.is_empty() {
        return Ok(None);
    }
    let Some(r) = recounts
        .iter()
        .find(|r| r.host.lockmatrix_commit.as_ref() == Some(commit))
    else {
        return Err(NoStandIn::OtherCommits {
            commit: commit.clone(),
            made: recounts
                .iter()
                .map(|r| {
                    r.host
                        .lockmatrix_commit
                        .as_ref()
                        .map_or("unknown", |c| c.short())
                        .to_string()
                })
                .collect(),
        });
    };
    let Some(rt) = r.targets.iter().find(|x| x.name == t.name) else {
        return Ok(None);
    };
    let place = format!("{}/{}", t.name, s.suite);
    let Some(rs) = rt.suites.iter().find(|x| x.suite == s.suite) else {
        return Err(NoStandIn::NotRun {
            commit: commit.clone(),
            place,
            why: rt.status.label(),
        });
    };
    if rs.status != Status::Ok {
        return Err(NoStandIn::Failed {
            commit: commit.clone(),
            place,
            why: rs.status.label(),
        });
    }
    Ok(Some((r, rt, rs)))
}

/// Why the recount made for a suite cannot stand in for its baseline.
#[derive(Debug, Clone)]
enum NoStandIn {
    /// No recount is of the baselines' commit (`made`: those there are).
    OtherCommits { commit: CommitId, made: Vec<String> },
    NotRun {
        commit: CommitId,
        place: String,
        why: String,
    },
    Failed {
        commit: CommitId,
        place: String,
        why: String,
    },
}

impl std::fmt::Display for NoStandIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoStandIn::OtherCommits { commit, made } => write!(
                f,
                "no recount of the baselines' commit {} stands in (the recounts made are of {})",
                commit.short(),
                made.join(", ")
            ),
            NoStandIn::NotRun { commit, place, why } => write!(
                f,
                "the recount of {} did not run {place}: {why}",
                commit.short()
            ),
            NoStandIn::Failed { commit, place, why } => write!(
                f,
                "the recount of {} failed on {place}: {why}",
                commit.short()
            ),
        }
    }
}

/// Whether `recorded` is the hash of the binary that ran suite `s` on `t`.
fn same_binary(recorded: Option<&String>, t: &TargetResult, s: &SuiteRun) -> bool {
    recorded.is_some() && recorded == t.binaries.get(&s.suite)
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
    // Suites left out for want of a Rust backend: said once, never failing
    // (a target with nothing left to run says it as its not-run reason).
    if let (Some(why), false) = (&t.not_built, matches!(t.status, Status::NotRun(_))) {
        report.notes.push(item(t, None, why.clone()));
    }
    match &t.status {
        Status::Ok => {}
        Status::Pending => {
            report
                .problems
                .push(item(t, None, "not finished: the run was cut short".into()))
        }
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

#[allow(clippy::too_many_arguments)]
fn suite(
    t: &TargetResult,
    s: &SuiteRun,
    testbed: &Testbed,
    reference: SuiteReference,
    acks: &[Acknowledgement],
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
        Status::Pending => report
            .problems
            .push(item(t, Some(s), "not finished".into())),
        // The failed checks are listed on their own.
        Status::Failed(Failure::Check { .. }) if !failed.is_empty() => {}
        Status::Failed(why) => report
            .problems
            .push(item(t, Some(s), format!("failed: {why}"))),
        Status::NotRun(why) => report
            .notes
            .push(item(t, Some(s), format!("not run: {why}"))),
    }
    let run_cells = cells::collect(&s.samples);
    let timing_differs = reference
        .testbed
        .as_ref()
        .filter(|_| !reference.paired)
        .map(|b| b.differences(testbed))
        .unwrap_or_default();
    let mut count_differs = reference
        .count_testbed
        .as_ref()
        .map(|b| b.count_differences(testbed))
        .unwrap_or_default();
    // The same binary counts the same, whatever compiler or CPU-choice
    // label either side records; only the counting emulator's release
    // still matters.
    if same_binary(reference.binary.as_ref(), t, s) {
        count_differs.retain(|d| d.starts_with("counting emulator release"));
    }
    // Said first: what was made to compare them, and why it could not.
    if let (false, Some(why)) = (count_differs.is_empty(), &reference.recount_failed) {
        count_differs.insert(0, why.clone());
    }
    let footprints_before = report.footprints_compared;
    let ordering = ordering_of(t, s, &reference, &count_differs, acks, report);
    let counts_before = report.counts_compared;
    let family_cells = run_cells
        .iter()
        .filter(|c| policy::role(c.kind(), t.runner, c.gating) == Role::Family)
        .count();
    for cell in &run_cells {
        let mut r = CellReport {
            target: t.name.clone(),
            suite: s.suite.clone(),
            bench: cell.key.bench.clone(),
            case: cell.case.clone(),
            metric: cell.key.metric.clone(),
            unit: cell.unit.clone(),
            better: cell.better,
            gating: cell.gating,
            family: policy::role(cell.kind(), t.runner, cell.gating) == Role::Family,
            verdict: Verdict::NoBaseline,
            head: Summary::of(&cell.samples),
            base: None,
            effect: None,
            look: None,
            rounds_needed: None,
            note: None,
            gated: false,
        };
        if r.family {
            report.family_present += 1;
        }
        if let Some(rc) = reference.cells.get(&cell.key) {
            if cell.kind().exact() {
                report.counts_with_reference += 1;
            }
            let differs = if cell.kind().exact() {
                &count_differs
            } else {
                &timing_differs
            };
            let p = judge(&mut r, cell, rc, differs, t, reference.paired, opts);
            // Another testbed's: the rounds a recording here would need
            // for its baseline to gate later runs, from this run's spread.
            if r.family && r.verdict == Verdict::Incomparable && !reference.paired {
                r.rounds_needed =
                    cells::lower_is_better(&cell.samples, cell.better).and_then(|v| {
                        family::stored_rounds_needed(
                            opts,
                            &cell.case,
                            &v,
                            family::STORED_ROUNDS.0 as usize,
                            t.suites.len(),
                            family_cells,
                        )
                    });
            }
            if let Some(p) = p {
                pending.push(Pending {
                    index: report.cells.len(),
                    family_cells,
                    ..p
                });
            }
            if cell.kind().exact()
                && matches!(
                    r.verdict,
                    Verdict::Unchanged | Verdict::Regression | Verdict::Improvement
                )
            {
                report.counts_compared += 1;
                // Fewer instructions because barriers left is no
                // improvement: the ordering change decides.
                if ordering.contains(&cell.key) {
                    r.verdict = Verdict::OrderingChanged;
                }
            }
        }
        report.cells.push(r);
    }
    if let Some((commit, recorded_with)) = &reference.recount {
        let counted_with = t.compiler_of(&s.suite).unwrap_or_default();
        let counts = report.counts_compared - counts_before;
        let footprints = report.footprints_compared - footprints_before;
        match report
            .recounted
            .iter_mut()
            .find(|r| &r.commit == commit && r.counted_with == counted_with)
        {
            Some(r) => {
                r.counts += counts;
                r.footprints += footprints;
            }
            None => report.recounted.push(Recounted {
                commit: commit.clone(),
                recorded_with: recorded_with.clone(),
                counted_with,
                counts,
                footprints,
            }),
        }
    }
    let run_keys: std::collections::BTreeSet<&CellKey> = run_cells.iter().map(|c| &c.key).collect();
    let missing: Vec<String> = reference
        .cells
        .iter()
        .filter(|(k, _)| !run_keys.contains(k))
        .map(|(k, c)| format!("{} [{}] {}", k.bench, case_label(&c.case), k.metric))
        .collect();
    if !missing.is_empty() {
        let shown: Vec<&str> = missing.iter().take(3).map(String::as_str).collect();
        let more = if missing.len() > 3 { ", ..." } else { "" };
        report.notes.push(item(
            t,
            Some(s),
            format!(
                "{} reference cells not in this run: {}{more}",
                missing.len(),
                shown.join(", ")
            ),
        ));
    }
}

/// Compares the suite run's ordering footprints with the reference's,
/// where counts compare (the same binary's code: same target, compiler and
/// counting emulator); adds the changes to the report and returns the
/// count cells whose executed footprint changed.
fn ordering_of(
    t: &TargetResult,
    s: &SuiteRun,
    reference: &SuiteReference,
    count_differs: &[String],
    acks: &[Acknowledgement],
    report: &mut GateReport,
) -> std::collections::BTreeSet<CellKey> {
    let head = Footprints::of(&t.triple, s);
    if let Some(e) = &s.footprint_error {
        report.notes.push(item(
            t,
            Some(s),
            format!("no static ordering footprint: {e}"),
        ));
    }
    let (Some(head), Some(base)) = (head, &reference.footprints) else {
        return Default::default();
    };
    if !count_differs.is_empty() {
        report.notes.push(item(
            t,
            Some(s),
            format!(
                "ordering footprint not compared: {}",
                count_differs.join("; ")
            ),
        ));
        return Default::default();
    }
    let compared = ordering::compare(&t.name, &s.suite, &head, base, acks);
    report.footprints_compared += compared.compared;
    report.ordering.extend(compared.changes);
    compared.changed_cells.into_iter().collect()
}

/// Sets the verdict of a cell that has a reference cell, unless it gates:
/// then returns its values for the multiplicity correction.
fn judge(
    r: &mut CellReport,
    cell: &RunCell,
    rc: &RefCell,
    testbed_differs: &[String],
    t: &TargetResult,
    paired: bool,
    opts: &GateOptions,
) -> Option<Pending> {
    r.base = Some(Summary::of(&rc.samples));
    let mut differs = testbed_differs.to_vec();
    if rc.unit != cell.unit {
        differs.push(format!(
            "unit: reference `{}`, run `{}`",
            rc.unit, cell.unit
        ));
    }
    if rc.better != cell.better {
        differs.push(format!(
            "better: reference `{:?}`, run `{:?}`",
            rc.better, cell.better
        ));
    }
    let role = policy::role(cell.kind(), t.runner, cell.gating);
    if role == Role::Exact {
        judge_insns(r, cell, rc, differs, t.insns_tolerance);
        return None;
    }
    // Paired: the rounds both sides have, in round order.
    // Paired: the rounds both sides have, matched by round; a bad value
    // drops its pair, not the cell.
    let (base, head) = if paired {
        let (b, h, dropped) = cells::pairs(
            (&rc.rounds, &rc.samples, rc.better),
            (&cell.rounds, &cell.samples, cell.better),
        );
        if dropped > 0 && !b.is_empty() {
            r.note = Some(format!(
                "{dropped} pairs dropped (a missing or non-positive value)"
            ));
        }
        let some = |v: Vec<f64>| (!v.is_empty()).then_some(v);
        (some(b), some(h))
    } else {
        (
            cells::lower_is_better(&rc.samples, rc.better),
            cells::lower_is_better(&cell.samples, cell.better),
        )
    };
    let (Some(base), Some(head)) = (base, head) else {
        r.verdict = if !differs.is_empty() {
            Verdict::Incomparable
        } else if !cell.gating {
            // E.g. a fairness cv of 0 with one thread: nothing to gate on.
            Verdict::Advisory
        } else {
            Verdict::NotComparable
        };
        differs.push("not comparable (missing or non-positive values)".into());
        r.note = Some(differs.join("; "));
        return None;
    };
    if rc.better == cell.better {
        let margin = crate::family::margin(crate::family::threshold(opts, &cell.case));
        let compared = if paired {
            stats::compare_paired(&base, &head, margin, opts.clear_alpha)
        } else {
            stats::compare(&base, &head, margin, opts.clear_alpha)
        };
        match compared {
            Ok(c) => {
                r.effect = Some(Effect {
                    ratio: c.ratio,
                    lo: c.ratio_lo,
                    hi: c.ratio_hi,
                    confidence: c.confidence,
                    p: c.p_rank,
                })
            }
            Err(e) => differs.push(format!("not comparable: {e}")),
        }
    }
    if !differs.is_empty() && r.effect.is_some() {
        r.verdict = Verdict::Incomparable;
        r.note = Some(differs.join("; "));
        return None;
    }
    if r.effect.is_none() {
        r.verdict = Verdict::NotComparable;
        r.note = Some(differs.join("; "));
        return None;
    }
    if let Role::Advisory(why) = role {
        r.verdict = Verdict::Advisory;
        r.note = Some(why.note().into());
        return None;
    }
    Some(Pending {
        index: 0,
        target: t.name.clone(),
        base,
        head,
        suites: 0,
        family_cells: 0,
        max_pairs: 0,
        planned_rounds: None,
    })
}

/// Instruction counts repeat exactly, so they gate without statistics and
/// on QEMU too: more instructions than the reference by more than the
/// target's tolerance (0 unless targets.yaml sets `insns_tolerance`) is a
/// regression, fewer is an improvement. A count from another target,
/// compiler or emulator release is incomparable.
fn judge_insns(
    r: &mut CellReport,
    cell: &RunCell,
    rc: &RefCell,
    differs: Vec<String>,
    tolerance: f64,
) {
    let median = |v: &[Option<f64>]| Summary::of(v).median;
    let (Some(head), Some(base)) = (median(&cell.samples), median(&rc.samples)) else {
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
    });
    r.note = Some(format!(
        "{head} insns/op vs {base} in the reference (exact; tolerance {tolerance})"
    ));
    r.verdict = if exact || (head - base).abs() <= tolerance * base.abs() {
        Verdict::Unchanged
    } else if head > base {
        Verdict::Regression
    } else {
        Verdict::Improvement
    };
}

/// Every family cell's verdict: its looks replayed against the base
/// revision (signed-rank pairs), or against stored baselines (the run's
/// rounds with the Mann-Whitney test, at the looks the run planned).
fn decide(report: &mut GateReport, pending: &[Pending], opts: &GateOptions) {
    report.family = pending.len();
    let mut timing = TimingGate {
        cells: pending.len(),
        cell_alpha: opts.alpha,
        rounds: usize::MAX,
        min_p: 0.0,
        gated: false,
        unreachable: Vec::new(),
        paired: report.paired,
    };
    for c in pending {
        let alpha = family::cell_alpha(opts, c.suites, c.family_cells);
        let r = &mut report.cells[c.index];
        let threshold = family::threshold(opts, &r.case);
        let margin = family::margin(threshold);
        let n = c.base.len().min(c.head.len());
        // Sized for the distance between the threshold and the margin.
        let apart = (1.0 + threshold) / (1.0 + margin) - 1.0;
        let needed = if report.paired {
            stats::assess_paired_power(&c.base[..n], &c.head[..n], apart, alpha)
        } else {
            stats::assess_power(&c.base, &c.head, apart, alpha)
        };
        r.rounds_needed = needed.ok().and_then(|p| p.rounds_needed);
        // The plan the run was made with: where its looks are, and whether
        // its last can reach the level at all.
        let (plan, min_p, last) = if report.paired {
            let last = c.max_pairs.max(n);
            let plan = family::plan(opts, c.max_pairs, c.suites, c.family_cells);
            (plan, stats::min_p_value_paired(last), last)
        } else {
            let looks = family::stored_looks(c.planned_rounds, c.head.len());
            let last = *looks.last().expect("looks");
            let plan = family::stored_plan(opts, c.base.len(), looks, c.suites, c.family_cells);
            (plan, stats::min_p_value(c.base.len(), last), last)
        };
        let Ok(plan) = plan else { continue };
        let reachable = min_p <= plan.last_level();
        timing.cell_alpha = timing.cell_alpha.min(alpha);
        timing.rounds = timing.rounds.min(last);
        timing.min_p = timing.min_p.max(min_p);
        timing.gated |= reachable;
        let Some(e) = r.effect else { continue };
        let mut look = Look {
            look: 1,
            looks: plan.looks.len(),
            pairs: n,
            unit: if report.paired { "pairs" } else { "rounds" },
            threshold,
            margin,
            alpha,
        };
        let found = match report.paired {
            true => family::decide(&plan, opts, &r.case, &c.base, &c.head),
            false => family::decide_stored(&plan, opts, &r.case, &c.base, &c.head),
        };
        let unit = if report.paired { "pairs" } else { "rounds" };
        let verdict = match found {
            Some(s) => {
                look.look = s.look + 1;
                look.pairs = s.pairs;
                match s.decision {
                    Decision::Regression => Verdict::Regression,
                    Decision::Cleared => Verdict::Cleared,
                    Decision::Inconclusive => Verdict::Inconclusive,
                    Decision::Continue => {
                        let had = if report.paired { n } else { c.head.len() };
                        r.note = Some(format!(
                            "the run stopped at {had} {unit}, before the last look ({last})"
                        ));
                        Verdict::Inconclusive
                    }
                }
            }
            None => {
                r.note = Some(format!(
                    "{} {unit}: fewer than the first look ({})",
                    if report.paired { n } else { c.head.len() },
                    plan.looks[0]
                ));
                Verdict::Inconclusive
            }
        };
        // Cleared, and faster by more than the threshold.
        r.verdict = if verdict == Verdict::Cleared && e.hi < 1.0 / (1.0 + threshold) {
            Verdict::Improvement
        } else {
            verdict
        };
        r.gated = reachable || r.verdict != Verdict::Inconclusive;
        if !r.gated {
            // What would let it gate: more rounds in the stored baseline,
            // or more pairs.
            let why = if report.paired {
                format!(
                    "{last} pairs cannot reach p < {:.1e} (smallest p {min_p:.1e}): run more pairs (--rounds)",
                    plan.last_level()
                )
            } else {
                // For a later run, which plans the default looks.
                let more = family::stored_rounds_needed(
                    opts,
                    &r.case,
                    &c.base,
                    last.max(family::STORED_ROUNDS.0 as usize),
                    c.suites,
                    c.family_cells,
                );
                timing.unreachable.push((r.target.clone(), more));
                format!(
                    "its baseline's {} rounds and this run's {last} cannot reach p < {:.1e} (smallest p {min_p:.1e}): {}",
                    c.base.len(),
                    plan.last_level(),
                    match more {
                        Some(m) => format!("record its baselines with at least {m} rounds"),
                        None => "its noise is too large for its threshold against stored baselines: gate it with --against".into(),
                    }
                )
            };
            r.note = Some(why);
        }
        r.look = Some(look);
    }
    if timing.rounds == usize::MAX {
        timing.rounds = 0;
    }
    report.timing = timing;
}
