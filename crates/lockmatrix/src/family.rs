//! How strict the gate is with a target's timing family, and how the
//! family is decided against the base revision run beside it:
//! group-sequentially, cell by cell (see `stats::SequentialPlan` for the
//! boundaries). Below both the run loop and the gate, which share it.
//! After each pair the run loop asks which cells are still [`pending`] and
//! runs only those in the next one ([`units`]: per lock), so a cell stops
//! at the look that decides it and a suite once all its cells are
//! decided; the gate replays the same looks over what was recorded
//! ([`decide`]), so both agree on where each cell stopped.
//!
//! - Thresholds: a 1-thread cell (its case names no `threads`, `readers`
//!   or `writers`, or one in all) must catch a slowdown of
//!   `quiet_threshold` (5%), a contended one of `threshold` (10%); a
//!   regression is slower than half of it with confidence (the margin: a
//!   layout shift of a percent or two is not a regression), a cleared cell
//!   slower by less than all of it.
//! - Levels: the family is a target's (one testbed, one CI job). Its
//!   false-alarm rate `alpha` is split evenly over the target's suites and
//!   then over each suite's family cells (Bonferroni: every suite can
//!   decide its own cells while it runs, without waiting for the others).
//! - Looks: every [`LOOK_EVERY`] pairs, and at the most pairs a cell gets.

use crate::cells::{self, RunCell};
use crate::config::RunnerKind;
use crate::name::Name;
use crate::policy::{self, Role};
use crate::protocol::Sample;
use serde::Serialize;
use serde_json::{Map, Value};
use stats::{Decision, Sequential, SequentialPlan, StatsError};

/// How strict the gate is.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GateOptions {
    /// The slowdown a contended timing-family cell must catch (0.10 =
    /// 10%): it is cleared only when slower by less, and a regression is
    /// slower than half of it with confidence.
    pub threshold: f64,
    /// The same for 1-thread cells, whose noise allows a finer one.
    pub quiet_threshold: f64,
    /// False-alarm rate of a target's timing family, over all its looks.
    pub alpha: f64,
    /// Per cell: how often a slowdown of the threshold may be cleared.
    pub clear_alpha: f64,
    /// `--no-gate`: what a comparison found (regressions, ordering
    /// changes) is shown and fails nothing. What needs no reference (a
    /// failed check, a broken target, a violated model, a race) still
    /// fails: only a flag named for it silences it.
    pub no_gate: bool,
    /// `--allow-races`: races under Miri are shown and fail nothing (a
    /// known race in a crate one cannot fix); the report says so.
    pub allow_races: bool,
}

impl Default for GateOptions {
    fn default() -> Self {
        GateOptions {
            threshold: 0.10,
            quiet_threshold: 0.05,
            alpha: 0.05,
            clear_alpha: 0.05,
            no_gate: false,
            allow_races: false,
        }
    }
}

impl GateOptions {
    /// Checks the ranges, as an exit-status-2 error naming the bad option.
    pub fn check(&self) -> Result<(), BadGateOption> {
        for (name, t) in [
            ("threshold", self.threshold),
            ("quiet threshold", self.quiet_threshold),
        ] {
            if !(t.is_finite() && t > 0.0 && t < 10.0) {
                return Err(BadGateOption::Threshold { name, value: t });
            }
        }
        for (name, a) in [("alpha", self.alpha), ("clear alpha", self.clear_alpha)] {
            if !(a > 0.0 && a < 0.5) {
                return Err(BadGateOption::Alpha { name, value: a });
            }
        }
        Ok(())
    }
}

/// A gate option out of its range, named as the command line names it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BadGateOption {
    /// A threshold that is not a fraction above 0 (below 10).
    #[error("gate {name} is {value}: expected a fraction > 0 (0.10 = 10% slower)")]
    Threshold { name: &'static str, value: f64 },
    /// A false-alarm rate outside (0, 0.5).
    #[error("gate {name} is {value}: expected 0 < alpha < 0.5 (e.g. 0.05)")]
    Alpha { name: &'static str, value: f64 },
}

/// Pairs between two looks.
pub const LOOK_EVERY: usize = 10;

/// The most pairs a plan's last look may ask for: a run read from a CI
/// artifact is untrusted, and each look costs the boundary computation.
pub const MAX_PAIRS: usize = 10_000;

/// The threads a case runs: its `threads`, or its `readers` and
/// `writers`; 1 when it names neither (a single-thread op).
fn threads(case: &Map<String, Value>) -> u64 {
    let n = |k: &str| case.get(k).and_then(Value::as_u64);
    n("threads").unwrap_or_else(|| (n("readers").unwrap_or(0) + n("writers").unwrap_or(0)).max(1))
}

/// The slowdown a family cell must catch (0.10 = 10%).
pub fn threshold(opts: &GateOptions, case: &Map<String, Value>) -> f64 {
    if threads(case) <= 1 {
        opts.quiet_threshold
    } else {
        opts.threshold
    }
}

/// The slowdown tolerated: a regression is slower than this.
pub fn margin(threshold: f64) -> f64 {
    threshold / 2.0
}

/// The per-cell level of a family cell: `alpha / suites / cells`.
pub fn cell_alpha(opts: &GateOptions, suites: usize, family_cells: usize) -> f64 {
    opts.alpha / (suites.max(1) * family_cells.max(1)) as f64
}

/// The plan of one suite's family cells.
pub fn plan(
    opts: &GateOptions,
    max_pairs: usize,
    suites: usize,
    family_cells: usize,
) -> Result<SequentialPlan, StatsError> {
    SequentialPlan::new(
        SequentialPlan::looks_every(LOOK_EVERY, max_pairs.max(1)),
        cell_alpha(opts, suites, family_cells),
        opts.clear_alpha,
    )
}

/// One family cell's pairs replayed over the plan's looks. `None` when its
/// values cannot be compared (missing or non-positive) or the first look
/// has not come.
pub fn decide(
    plan: &SequentialPlan,
    opts: &GateOptions,
    case: &Map<String, Value>,
    base: &[f64],
    head: &[f64],
) -> Option<Sequential> {
    let n = base.len().min(head.len());
    let t = threshold(opts, case);
    plan.decide(&base[..n], &head[..n], t, margin(t)).ok()
}

/// Rounds between two looks against stored baselines.
pub const STORED_LOOK_EVERY: usize = 5;

/// The most rounds a real-hardware target's family cell gets against
/// comparable stored baselines (quick, full profile): the last look. A
/// cell stops at the look that decides it; an unchanged quiet cell at
/// the first ([`STORED_LOOK_EVERY`] rounds, as many as a run without a
/// reference takes).
pub const STORED_ROUNDS: (u32, u32) = (30, 45);

/// A real-hardware target's stored baselines, where their testbed is the
/// run's: per suite, the timing cells' recorded values (as costs), which
/// the run's rounds are compared with look by look ([`pending_stored`]).
#[derive(Debug, Clone, Default)]
pub struct Stored {
    pub suites: std::collections::BTreeMap<String, Vec<StoredCell>>,
}

/// One stored timing cell: its key and its values, lower is better.
#[derive(Debug, Clone)]
pub struct StoredCell {
    pub key: cells::CellKey,
    pub values: Vec<f64>,
}

/// The looks against stored baselines: every [`STORED_LOOK_EVERY`]
/// rounds up to `planned` (the run's last look, as it was planned), or
/// one look at the rounds there are when none was planned (`--rounds`, a
/// run from before the looks).
pub fn stored_looks(planned: Option<usize>, have: usize) -> Vec<usize> {
    match planned {
        Some(max) => SequentialPlan::looks_every(STORED_LOOK_EVERY, max.clamp(1, MAX_PAIRS)),
        None => vec![have.max(1)],
    }
}

/// The fewest rounds a stored baseline of a timing family holds: one slow
/// round among fewer moves its median, and fewer values say little of
/// the spread a later run is judged with.
pub const STORED_BASELINE_LEAST: usize = 10;

/// The most rounds a stored baseline is asked to hold: a native round of
/// the three suites takes about 10 s on a 2-vCPU VM, so 60 rounds record
/// in about 10 minutes, once per testbed. A cell that needs more is too
/// noisy for stored baselines; `--against` gates it.
pub const STORED_BASELINE_MOST: usize = 60;

/// The plan of one suite's family cells against stored baselines holding
/// `base_rounds` values each, at `looks`.
pub fn stored_plan(
    opts: &GateOptions,
    base_rounds: usize,
    looks: Vec<usize>,
    suites: usize,
    family_cells: usize,
) -> Result<SequentialPlan, StatsError> {
    SequentialPlan::against_fixed(
        looks,
        base_rounds,
        cell_alpha(opts, suites, family_cells),
        opts.clear_alpha,
    )
}

/// The family cells of one suite still undecided against its stored
/// baselines after the rounds recorded so far (`head`), by their case: the
/// run loop runs them, and only them, in the next round. A cell with no
/// comparable stored values holds nothing up.
pub fn pending_stored(
    head: &[Sample],
    stored: &[StoredCell],
    runner: RunnerKind,
    opts: &GateOptions,
    max_rounds: usize,
    suites: usize,
) -> Vec<Map<String, Value>> {
    let head = family(cells::collect(head), runner);
    let n = head.len();
    head.into_iter()
        .filter(|h| {
            let Some(b) = stored.iter().find(|b| b.key == h.key) else {
                return false;
            };
            let Some(hv) = cells::lower_is_better(&h.samples, h.better) else {
                return false;
            };
            let looks = stored_looks(Some(max_rounds), hv.len());
            let Ok(plan) = stored_plan(opts, b.values.len(), looks, suites, n) else {
                return false;
            };
            !decide_stored(&plan, opts, &h.case, &b.values, &hv)
                .is_some_and(|s| matches!(s.decision, Decision::Regression | Decision::Cleared))
        })
        .map(|h| h.case)
        .collect()
}

/// One family cell's rounds replayed over a stored plan's looks: `None`
/// when its values cannot be compared or the first look has not come.
pub fn decide_stored(
    plan: &SequentialPlan,
    opts: &GateOptions,
    case: &Map<String, Value>,
    base: &[f64],
    head: &[f64],
) -> Option<Sequential> {
    let t = threshold(opts, case);
    plan.decide_against_fixed(base, head, t, margin(t)).ok()
}

/// The fewest rounds a stored baseline needs so that a later run of at
/// most `max_rounds` rounds can decide its family cell of values `base`
/// (lower is better): the last look can reach the regression level, and
/// an unchanged cell of this spread is cleared there 4 times in 5
/// ([`SequentialPlan::decidable_against_fixed`]). The spread is the one
/// recorded, assumed for the rounds not yet recorded; never fewer than
/// [`STORED_BASELINE_LEAST`]. `None` when no count
/// up to [`STORED_BASELINE_MOST`] would do: the cell is too noisy for its
/// threshold against stored baselines.
pub fn stored_rounds_needed(
    opts: &GateOptions,
    case: &Map<String, Value>,
    base: &[f64],
    max_rounds: usize,
    suites: usize,
    family_cells: usize,
) -> Option<usize> {
    let sd = stats::robust_spread(base)?;
    let t = threshold(opts, case);
    let decidable = |n: usize| {
        let looks = stored_looks(Some(max_rounds), max_rounds);
        stored_plan(opts, n, looks, suites, family_cells)
            .is_ok_and(|plan| plan.decidable_against_fixed(n, sd, t))
    };
    // More rounds never hurt: the fewest that do, by bisection (each
    // answer computes a plan's boundaries).
    if !decidable(STORED_BASELINE_MOST) {
        return None;
    }
    let (mut lo, mut hi) = (STORED_BASELINE_LEAST - 1, STORED_BASELINE_MOST);
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        match decidable(mid) {
            true => hi = mid,
            false => lo = mid,
        }
    }
    Some(hi)
}

/// The cells of a suite's timing family on `runner`.
fn family(cells: Vec<RunCell>, runner: RunnerKind) -> Vec<RunCell> {
    cells
        .into_iter()
        .filter(|c| policy::role(c.kind(), runner, c.gating) == Role::Family)
        .collect()
}

/// The family cells of one suite that both sides ran and that are not
/// decided (regression or cleared) on the pairs recorded so far, by their
/// case: the run loop runs them, and only them, in the next pair. With
/// `opts` `None` (every round kept, as `validate-gate` records) none is
/// ever decided. A cell whose values cannot be compared holds nothing
/// up; an empty answer ends the suite's pairs.
pub fn pending(
    head: &[Sample],
    base: &[Sample],
    runner: RunnerKind,
    opts: Option<&GateOptions>,
    max_pairs: usize,
    suites: usize,
) -> Vec<Map<String, Value>> {
    let head = family(cells::collect(head), runner);
    let base = family(cells::collect(base), runner);
    let plan = opts.map(|o| plan(o, max_pairs, suites, head.len()));
    head.into_iter()
        .filter(|h| {
            let Some(b) = base.iter().find(|b| b.key == h.key) else {
                return false;
            };
            let (bv, hv, _) = cells::pairs(
                (&b.rounds, &b.samples, b.better),
                (&h.rounds, &h.samples, h.better),
            );
            if bv.is_empty() {
                return false;
            }
            let (Some(opts), Some(Ok(plan))) = (opts, &plan) else {
                return true;
            };
            !decide(plan, opts, &h.case, &bv, &hv)
                .is_some_and(|s| matches!(s.decision, Decision::Regression | Decision::Cleared))
        })
        .map(|h| h.case)
        .collect()
}

/// How one family pair runs the `pending` cells. Per lock where every one
/// names its `lock` (the harness's `--lock`): each lock's pair is its own
/// two invocations, back to back, because what moves a cell's time on a
/// shared VM drifts over a second or so, and a lock measured 0.1 s after
/// its twin instead of 0.5 s (the whole family between) spreads about a
/// third less per pair (docs/gate.md, "Pull requests"). Otherwise the
/// whole family in one invocation per side.
pub fn units(pending: &[Map<String, Value>]) -> Vec<Option<Name>> {
    let locks: Option<std::collections::BTreeSet<Name>> = pending
        .iter()
        .map(|c| {
            c.get("lock")
                .and_then(Value::as_str)
                .and_then(|l| Name::parse(l).ok())
        })
        .collect();
    match locks {
        Some(l) if !l.is_empty() => l.into_iter().map(Some).collect(),
        _ if pending.is_empty() => Vec::new(),
        _ => vec![None],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::name::known;
    use crate::protocol::Better;

    fn sample(lock: &str, threads: u64, round: u32, value: f64) -> Sample {
        let mut case = Map::new();
        case.insert("lock".into(), lock.into());
        case.insert("threads".into(), threads.into());
        Sample {
            suite: known("spinlock"),
            bench: known("lock_unlock"),
            case,
            metric: known("ns_per_op"),
            unit: known("ns"),
            better: Better::Lower,
            value: Some(value),
            gating: true,
            round,
        }
    }

    fn side(rounds: u32, slow: f64, spread: f64) -> Vec<Sample> {
        (0..rounds)
            .flat_map(|r| {
                let wobble = 1.0 + spread * ((r * 7 % 5) as f64 - 2.0);
                [
                    sample("ticket", 1, r, 20.0 * wobble),
                    sample("mcs", 1, r, 30.0 * wobble * slow),
                ]
            })
            .collect()
    }

    #[test]
    fn a_quiet_unchanged_suite_is_decided_at_the_first_look_and_not_before() {
        let opts = GateOptions::default();
        let base = side(10, 1.0, 0.002);
        let head: Vec<Sample> = base
            .iter()
            .cloned()
            .map(|mut s| {
                s.value = s.value.map(|v| v * 1.001);
                s
            })
            .collect();
        let pending = |h: &[Sample], b: &[Sample], runner, opts| {
            let cases = super::pending(h, b, runner, opts, 40, 3);
            cases.iter().map(|c| c["lock"].clone()).collect::<Vec<_>>()
        };
        assert!(pending(&head, &base, RunnerKind::Native, Some(&opts)).is_empty());
        // Before the first look both cells are pending, and each lock is
        // its own unit.
        let early = super::pending(
            &head[..18],
            &base[..18],
            RunnerKind::Native,
            Some(&opts),
            40,
            3,
        );
        assert_eq!(early.len(), 2);
        assert_eq!(units(&early), [Some(known("mcs")), Some(known("ticket"))]);
        // Recording every round (no options), nothing is ever decided.
        assert_eq!(pending(&head, &base, RunnerKind::Native, None).len(), 2);
        // Under QEMU nothing is in the family: nothing to wait for.
        assert!(pending(&head[..2], &base[..2], RunnerKind::Qemu, Some(&opts)).is_empty());
    }

    #[test]
    fn a_cell_in_the_margin_keeps_the_suite_going() {
        let opts = GateOptions::default();
        // mcs 3.5% slower: more than the 2.5% margin of a 1-thread cell,
        // less than its 5% threshold, with 10 pairs of noise as large:
        // neither boundary is crossed at the first look.
        let base = side(10, 1.0, 0.0);
        let head = side(10, 1.035, 0.02);
        let pending = super::pending(&head, &base, RunnerKind::Native, Some(&opts), 40, 3);
        // ticket is decided (cleared) and stops; mcs alone goes on.
        assert_eq!(units(&pending), [Some(known("mcs"))]);
    }

    #[test]
    fn a_family_whose_cells_name_no_lock_runs_whole() {
        let mut fence = Map::new();
        fence.insert("op".into(), "fence".into());
        let ticket = sample("ticket", 1, 0, 1.0).case;
        assert_eq!(units(&[fence.clone()]), [None]);
        assert_eq!(units(&[ticket, fence]), [None]);
        assert!(units(&[]).is_empty());
    }

    #[test]
    fn thresholds_follow_the_threads() {
        let opts = GateOptions::default();
        let case = |t: u64| sample("x", t, 0, 1.0).case;
        assert_eq!(threshold(&opts, &case(1)), opts.quiet_threshold);
        assert_eq!(threshold(&opts, &case(2)), opts.threshold);
        assert_eq!(threshold(&opts, &Map::new()), opts.quiet_threshold);
        let rw = |r: u64, w: u64| {
            let mut m = Map::new();
            m.insert("readers".into(), r.into());
            m.insert("writers".into(), w.into());
            m
        };
        assert_eq!(threshold(&opts, &rw(0, 2)), opts.threshold);
        assert_eq!(threshold(&opts, &rw(0, 1)), opts.quiet_threshold);
        assert!((cell_alpha(&opts, 3, 10) - opts.alpha / 30.0).abs() < 1e-15);
    }
}
