//! What a validation measures and how it is asked for: its goals, its
//! options, a recording's summary, and the result (false alarms, spread,
//! power per slowdown and per cell).

use crate::family::BadGateOption;
use crate::gate::GateOptions;
use crate::name::Name;
use crate::results::Run;
use crate::strictness::Budget;
use serde::Serialize;

/// The injected slowdowns whose detection rate is the power.
pub const SLOWDOWNS: [f64; 5] = [0.05, 0.10, 0.25, 0.50, 1.00];
/// The goal: a family-wise false-alarm rate of at most 5% ...
pub const GOAL_MAX_RATE: f64 = 0.05;
/// ... measured over at least 100 A/A evaluations ...
pub const GOAL_MIN_EVALUATIONS: usize = 100;
/// ... and power of at least 0.8 for a 10% slowdown of any one 1-thread
/// cell (contended cells are gated from 25% up: their power is reported,
/// per cell and per slowdown, not held to a goal).
pub const GOAL_POWER: (f64, f64) = (0.10, 0.8);

/// A recording as the validation reads it, and nothing else: each suite's
/// timing values (as the suites declared them when it was made)
/// and its failed checks, without its other cells, footprints or raw output, so
/// ten recordings fit in a repository and `--from` re-runs the analysis on
/// them with the same result.
pub fn summary(run: &Run) -> Run {
    let mut run = run.clone();
    for t in &mut run.targets {
        t.binaries.clear();
        let runner = t.runner;
        for s in &mut t.suites {
            // The timing cells alone: what the gate decides statistically.
            s.samples.retain(|x| {
                let contention = crate::strictness::Contention::of(&x.case);
                matches!(
                    crate::policy::role(x.kind(), runner, &x.metric, contention),
                    crate::policy::Role::Timed(_)
                )
            });
            // A passing check changes no verdict; a suite's 1,186 of them
            // with their details were most of a summary's size.
            s.checks.retain(|c| !c.ok);
            s.executed.clear();
            s.static_footprint.clear();
            s.probes = None;
            s.bad_lines.clear();
            s.stderr_tail.clear();
            // Its raw output is not kept with it.
            s.stdout_sha256 = None;
        }
    }
    run
}

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
    pub fn check(&self) -> Result<(), ValidateError> {
        if self.evaluations > MAX_EVALUATIONS {
            return Err(ValidateError::TooManyEvaluations(self.evaluations));
        }
        if self.rounds > MAX_EVALUATIONS {
            return Err(ValidateError::TooManyPairs(self.rounds));
        }
        if self.evaluations == 0 {
            return Err(ValidateError::NoEvaluations);
        }
        if self.rounds < 2 {
            return Err(ValidateError::TooFewPairs(self.rounds));
        }
        Ok(self.gate.check()?)
    }
}

/// The most `--evaluations` (and `--pairs`) a validation takes: minutes of
/// work already, where a typo of a few zeros would run for hours.
pub const MAX_EVALUATIONS: usize = 10_000;

/// Why a validation could not be made: an option out of its range, or
/// recordings that hold nothing the gate's timings judge. All are bad
/// input (exit status 2), naming the option or the run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ValidateError {
    #[error(
        "--evaluations is {0}: expected at most {max} (about 900 take 46 s here; more states no rate any better than the recordings allow)",
        max = MAX_EVALUATIONS
    )]
    TooManyEvaluations(usize),
    #[error("--pairs is {0}: expected at most {max}", max = MAX_EVALUATIONS)]
    TooManyPairs(usize),
    #[error(
        "--evaluations is 0: expected at least 1 \
         ({goal} or more to state the false-alarm rate)",
        goal = GOAL_MIN_EVALUATIONS
    )]
    NoEvaluations,
    #[error("--pairs is {0}: expected at least 2")]
    TooFewPairs(usize),
    /// A gate option out of its range.
    #[error(transparent)]
    Gate(#[from] BadGateOption),
    #[error("validate-gate needs at least one recording")]
    NoRecordings,
    /// No target of run `run` has a suite whose timings gate, run ok on
    /// both sides; `left_out` says what was left out, in parentheses.
    #[error(
        "run {run} has no suite run ok on both sides on a target whose timings gate{left_out}: \
         record one on this machine's native target, e.g. \
         `cargo xtask matrix --targets x86_64 --against HEAD --rounds {rounds}`",
        rounds = crate::policy::AB_ROUNDS.0
    )]
    NothingGates { run: String, left_out: String },
    /// Resampling would draw more pairs than some suite's recordings hold.
    #[error(
        "the recordings hold {smallest} pairs of some suite; drawing {wanted} needs more \
         (record with e.g. `cargo xtask matrix --against HEAD --rounds {rounds}`)",
        rounds = crate::policy::AB_ROUNDS.0
    )]
    TooFewPairsRecorded { smallest: usize, wanted: usize },
    /// The gate's problems with a recording, each as `<place>: <what>`.
    #[error("the gate reported problems: {}", .0.join("; "))]
    GateProblems(Vec<String>),
    #[error(
        "run {run}: no timing cell compares with its base \
         (every cell is new, advisory or without positive values): nothing to validate"
    )]
    NoGatingCell { run: String },
    #[error("the injected cell is missing from the gate's report")]
    InjectedCellMissing,
}

/// An A/A recording: the head run and its base run (`<run>/base`).
pub type Recording = (Run, Run);

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    Resample,
    EndToEnd,
    EveryCell,
}

/// Smallest, largest and mean of a count over evaluations or cells.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Spread {
    pub min: usize,
    pub max: usize,
    pub mean: f64,
}

impl Spread {
    pub(super) fn of(values: &[usize]) -> Spread {
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

    pub(super) fn show(&self) -> String {
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
    /// Injections into a cell the gate flagged `inconclusive` (too few rounds
    /// for its noise to detect a slowdown of `delta` beyond `delta`).
    pub injected_inconclusive: usize,
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

/// One cell's power: a slowdown is injected into one timing cell of each
/// family per evaluation, drawn at random, so each cell gets about
/// `evaluations / cells of its family` injections at each slowdown.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct CellPower {
    pub cell: String,
    /// Per [`SLOWDOWNS`]: (injections, detections).
    pub at: [(usize, usize); SLOWDOWNS.len()],
}

impl CellPower {
    /// Detections over injections at `SLOWDOWNS[i]` (0 when none).
    pub fn rate(&self, i: usize) -> f64 {
        let (n, d) = self.at[i];
        d as f64 / n.max(1) as f64
    }
}

/// One family's power: its injections and detections at each of
/// [`SLOWDOWNS`], over the cells of its family drawn at random (or every
/// cell, with `--every-cell`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct BudgetPower {
    pub budget: Budget,
    /// Per [`SLOWDOWNS`]: (injections, detections).
    pub at: [(usize, usize); SLOWDOWNS.len()],
}

impl BudgetPower {
    /// Detections over injections at `SLOWDOWNS[i]` (`None`: none).
    pub fn rate(&self, i: usize) -> Option<f64> {
        let (n, d) = self.at[i];
        (n > 0).then(|| d as f64 / n as f64)
    }
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
    /// Gating cells flagged `inconclusive` per A/A evaluation.
    pub inconclusive_per_evaluation: Spread,
    /// A/A evaluations with any `possible_regression` (the advisory list).
    pub advisory_alarms: usize,
    /// The cells that raised false alarms and how often, most often first.
    pub false_alarm_cells: Vec<(String, usize)>,
    /// Per cell, its injections and detections at each of [`SLOWDOWNS`],
    /// weakest at the goal's slowdown (10%) first.
    pub power_per_cell: Vec<CellPower>,
    /// Per family (1-thread, contended), the same injections as `power`.
    pub power_per_budget: Vec<BudgetPower>,
    /// Targets and suites left out, and why.
    pub notes: Vec<String>,
    /// Whether the side of a pair run second is faster (`order.rs`).
    pub order_effect: Option<OrderEffect>,
}

/// The measured order effect of the timing pairs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct OrderEffect {
    pub recordings: usize,
    pub pairs: usize,
    /// `second / first` (geometric): below 1 when the side run second is
    /// faster.
    pub ratio: f64,
    /// 95% percentile bootstrap interval over recordings (`None` with
    /// fewer than two).
    pub ci95: Option<[f64; 2]>,
}

impl OrderEffect {
    /// `the side run second took 0.985x the first's time [0.97, 1.00] (95%, 12 recordings, 480 pairs)`.
    pub fn line(&self) -> String {
        let ci = self
            .ci95
            .map_or("no interval from one recording".to_string(), |[lo, hi]| {
                format!("95% interval {lo:.3}-{hi:.3} over recordings")
            });
        format!(
            "AB/BA order effect: the side run second took {:.3}x the first's time ({ci}; {} recordings, {} pairs)",
            self.ratio, self.recordings, self.pairs
        )
    }
}
