//! How the timing gate decides its cells, against the base revision run
//! beside it or against stored baselines: group-sequentially, cell by
//! cell (see `stats::SequentialPlan` for the boundaries), each at its own
//! strictness ([`crate::strictness`]: threshold, margin and level from
//! its kind and its measured noise). Below both the run loop and the gate,
//! which share it. After each look the run loop asks which cells are
//! still [`pending`] and runs only those in the next pairs ([`units`]: per
//! lock), so a cell stops at the look that decides it and a suite once
//! all its cells are decided; the gate replays the same looks over what
//! was recorded ([`decide`]), so both agree on where each cell stopped.
//!
//! - Which cells: every timing cell on real hardware ([`timed`]:
//!   `policy::Role::Timed`), 1-thread and contended.
//! - Looks: every [`LOOK_EVERY`] pairs, and at the most pairs a cell gets;
//!   the first look's pairs are its pilot, which fixes its threshold.
//! - A cell too noisy for the coarsest threshold of its ladder stops at
//!   its pilot: more pairs cannot make it gate (said in the report).

use crate::cells::{self, RunCell};
use crate::config::RunnerKind;
use crate::name::Name;
use crate::policy::{self, Role};
use crate::protocol::Sample;
use crate::strictness::{self, Budget, Counts, Strictness};
pub use crate::strictness::{BadGateOption, GateOptions, LOOK_EVERY, STORED_BASELINE_MOST};
use serde_json::{Map, Value};
use stats::{Decision, Sequential, SequentialPlan, StatsError};

/// The most pairs a plan's last look may ask for: a run read from a CI
/// artifact is untrusted, and each look costs the boundary computation.
pub const MAX_PAIRS: usize = 10_000;

/// A suite's timing cells on `runner`, each with its budget, and how many
/// cells spend each budget.
pub fn timed(cells: Vec<RunCell>, runner: RunnerKind) -> (Vec<(RunCell, Budget)>, Counts) {
    let mut counts = Counts::default();
    let timed: Vec<(RunCell, Budget)> = cells
        .into_iter()
        .filter_map(
            |c| match policy::role(c.kind(), runner, &c.key.metric, c.contention) {
                Role::Timed(budget) => Some((c, budget)),
                _ => None,
            },
        )
        .collect();
    for (_, b) in &timed {
        counts.add(*b);
    }
    (timed, counts)
}

/// The strictness of a cell of `budget` compared pair by pair, from its
/// pairs so far (the pilot's spread), in a suite with `counts` timing
/// cells of a target of `suites` suites, at most `most` pairs.
pub fn paired_strictness(
    opts: &GateOptions,
    (budget, counts, suites): (Budget, Counts, usize),
    (base, head): (&[f64], &[f64]),
    (most, affordable): (usize, usize),
) -> Strictness {
    let alpha = strictness::level(opts, budget, suites, counts);
    let most = most.clamp(1, MAX_PAIRS);
    strictness::paired(
        opts,
        budget,
        alpha,
        (base, head),
        (most, affordable.min(MAX_PAIRS)),
    )
}

/// The plan of a cell compared pair by pair: a look every
/// [`LOOK_EVERY`] pairs up to its most, at its level.
pub fn plan(opts: &GateOptions, s: &Strictness) -> Result<SequentialPlan, StatsError> {
    SequentialPlan::new(
        SequentialPlan::looks_every(LOOK_EVERY, s.most.max(1)),
        s.alpha,
        opts.clear_alpha,
    )
}

/// One cell's pairs replayed over its plan's looks at its threshold.
/// `None` when its values cannot be compared (missing or non-positive) or
/// the first look has not come.
pub fn decide(
    plan: &SequentialPlan,
    s: &Strictness,
    base: &[f64],
    head: &[f64],
) -> Option<Sequential> {
    let n = base.len().min(head.len());
    plan.decide(&base[..n], &head[..n], s.threshold, s.margin)
        .ok()
}

/// Whether a cell needs no more pairs: decided (a regression, or
/// cleared), or too noisy for its ladder once its pilot is in.
fn settled(opts: &GateOptions, s: &Strictness, base: &[f64], head: &[f64]) -> bool {
    if s.too_noisy() {
        return base.len().min(head.len()) >= strictness::PILOT;
    }
    plan(opts, s)
        .ok()
        .and_then(|p| decide(&p, s, base, head))
        .is_some_and(|d| matches!(d.decision, Decision::Regression | Decision::Cleared))
}

/// Rounds between two looks against stored baselines.
pub const STORED_LOOK_EVERY: usize = 5;

/// The most rounds a real-hardware target's timing cell gets against
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

/// One stored timing cell: its key, its values (lower is better), and
/// the rounds its baseline recorded (more than its values where a round
/// gave it none).
#[derive(Debug, Clone)]
pub struct StoredCell {
    pub key: cells::CellKey,
    pub values: Vec<f64>,
    pub rounds: usize,
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

/// The fewest rounds a stored baseline of a timing cell holds: one slow
/// round among fewer moves its median, and fewer values say little of
/// the spread a later run is judged with.
pub const STORED_BASELINE_LEAST: usize = 10;

/// The strictness of a cell compared with its stored baseline of values
/// `base` at `looks`.
pub fn stored_strictness(
    opts: &GateOptions,
    (budget, counts, suites): (Budget, Counts, usize),
    base: strictness::Recorded,
    looks: &[usize],
) -> Strictness {
    let alpha = strictness::level(opts, budget, suites, counts);
    // What a run planned at the defaults would have: the yardstick of
    // "too noisy here".
    let planned = stored_looks(Some(STORED_ROUNDS.0 as usize), 0);
    strictness::stored(opts, budget, alpha, base, (looks, &planned))
}

/// The plan of a cell against its stored baseline of `base_rounds`
/// values, at `looks`.
pub fn stored_plan(
    opts: &GateOptions,
    s: &Strictness,
    base_rounds: usize,
    looks: Vec<usize>,
) -> Result<SequentialPlan, StatsError> {
    SequentialPlan::against_fixed(looks, base_rounds, s.alpha, opts.clear_alpha)
}

/// One cell's rounds replayed over a stored plan's looks: `None` when its
/// values cannot be compared or the first look has not come.
pub fn decide_stored(
    plan: &SequentialPlan,
    s: &Strictness,
    base: &[f64],
    head: &[f64],
) -> Option<Sequential> {
    plan.decide_against_fixed(base, head, s.threshold, s.margin)
        .ok()
}

/// One timing cell still undecided at a look: its benchmark and case
/// (the matrix narrows the next pairs to them).
#[derive(Debug, Clone, PartialEq)]
pub struct Undecided {
    pub bench: Name,
    pub case: Map<String, Value>,
}

/// The timing cells of one suite still undecided against its stored
/// baselines after the rounds recorded so far (`head`), by their case: the
/// run loop runs them, and only them, in the next round. A cell with no
/// comparable stored values, or too noisy to gate against them, holds
/// nothing up.
pub fn pending_stored(
    head: &[Sample],
    stored: &[StoredCell],
    runner: RunnerKind,
    opts: &GateOptions,
    max_rounds: usize,
    suites: usize,
) -> Vec<Undecided> {
    let (head, counts) = timed(cells::collect(head), runner);
    head.into_iter()
        .filter(|(h, budget)| {
            let Some(b) = stored.iter().find(|b| b.key == h.key) else {
                return false;
            };
            let Some(hv) = cells::lower_is_better(&h.samples, h.better) else {
                return false;
            };
            let looks = stored_looks(Some(max_rounds), hv.len());
            let recorded = strictness::Recorded {
                values: &b.values,
                rounds: b.rounds,
            };
            let s = stored_strictness(opts, (*budget, counts, suites), recorded, &looks);
            if s.too_noisy() {
                return false;
            }
            let Ok(plan) = stored_plan(opts, &s, b.values.len(), looks) else {
                return false;
            };
            !decide_stored(&plan, &s, &b.values, &hv)
                .is_some_and(|d| matches!(d.decision, Decision::Regression | Decision::Cleared))
        })
        .map(|(h, _)| Undecided {
            bench: h.key.bench,
            case: h.case,
        })
        .collect()
}

/// The fewest rounds a stored baseline needs so that a later run of at
/// most `max_rounds` rounds can decide its timing cell of values `base`
/// (lower is better) at the finest threshold of its ladder that
/// [`STORED_BASELINE_MOST`] rounds would resolve, the spread recorded
/// assumed for the rounds not yet recorded; never fewer than
/// [`STORED_BASELINE_LEAST`]. `None` when no count up to
/// [`STORED_BASELINE_MOST`] resolves even the coarsest: the cell is too
/// noisy for stored baselines here.
pub fn stored_rounds_needed(
    opts: &GateOptions,
    (budget, counts, suites): (Budget, Counts, usize),
    base: &[f64],
    max_rounds: usize,
) -> Option<usize> {
    let sd = stats::robust_spread(base)?;
    let alpha = strictness::level(opts, budget, suites, counts);
    let looks = stored_looks(Some(max_rounds), max_rounds);
    let decidable = |n: usize, t: f64| {
        SequentialPlan::against_fixed(looks.clone(), n, alpha, opts.clear_alpha)
            .is_ok_and(|plan| plan.decidable_against_fixed(n, sd, t))
    };
    let rung = strictness::ladder(opts, budget)
        .into_iter()
        .find(|&t| decidable(STORED_BASELINE_MOST, t))?;
    // More rounds never hurt: the fewest that do, by bisection (each
    // answer computes a plan's boundaries).
    let (mut lo, mut hi) = (STORED_BASELINE_LEAST - 1, STORED_BASELINE_MOST);
    while hi - lo > 1 {
        let mid = (lo + hi) / 2;
        match decidable(mid, rung) {
            true => hi = mid,
            false => lo = mid,
        }
    }
    Some(hi)
}

/// The timing cells of one suite that both sides ran and that are not
/// settled (decided, or too noisy once their pilot is in) on the pairs
/// recorded so far, by their case: the run loop runs them, and only them,
/// in the next pairs. With `opts` `None` (every round kept, as
/// `validate-gate` records) none is ever settled. A cell whose values
/// cannot be compared holds nothing up; an empty answer ends the suite's
/// pairs.
pub fn pending(
    head: &[Sample],
    base: &[Sample],
    runner: RunnerKind,
    opts: Option<&GateOptions>,
    (max_pairs, affordable): (usize, usize),
    suites: usize,
) -> Vec<Undecided> {
    let (head, counts) = timed(cells::collect(head), runner);
    let (base, _) = timed(cells::collect(base), runner);
    head.into_iter()
        .filter(|(h, budget)| {
            let Some((b, _)) = base.iter().find(|(b, _)| b.key == h.key) else {
                return false;
            };
            let (bv, hv, _) = cells::pairs(
                (&b.rounds, &b.samples, b.better),
                (&h.rounds, &h.samples, h.better),
            );
            if bv.is_empty() {
                return false;
            }
            let Some(opts) = opts else {
                return true;
            };
            let s = paired_strictness(
                opts,
                (*budget, counts, suites),
                (&bv, &hv),
                (max_pairs, affordable),
            );
            !settled(opts, &s, &bv, &hv)
        })
        .map(|(h, _)| Undecided {
            bench: h.key.bench,
            case: h.case,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matrix::units;
    use crate::name::known;
    use crate::protocol::Better;
    use crate::strictness::{Budget, Counts};

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
            let cases = super::pending(h, b, runner, opts, (40, 80), 3);
            cases
                .iter()
                .map(|c| c.case["lock"].clone())
                .collect::<Vec<_>>()
        };
        assert!(pending(&head, &base, RunnerKind::Native, Some(&opts)).is_empty());
        // Before the first look both cells are pending, and each lock is
        // its own unit.
        let early = super::pending(
            &head[..18],
            &base[..18],
            RunnerKind::Native,
            Some(&opts),
            (40, 80),
            3,
        );
        assert_eq!(early.len(), 2);
        let locks = |u: &[Undecided]| -> Vec<_> {
            units(u, crate::matrix::Narrowing::Cases)
                .into_iter()
                .map(|u| u.lock)
                .collect()
        };
        assert_eq!(locks(&early), [Some(known("mcs")), Some(known("ticket"))]);
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
        let pending = super::pending(&head, &base, RunnerKind::Native, Some(&opts), (40, 80), 3);
        // ticket is decided (cleared) and stops; mcs alone goes on.
        let locks: Vec<_> = units(&pending, crate::matrix::Narrowing::Cases)
            .into_iter()
            .map(|u| u.lock)
            .collect();
        assert_eq!(locks, [Some(known("mcs"))]);
    }

    /// `n` pairs of one contended cell: base around 100, head `slow`
    /// times it, the pairs' log ratios spreading by about `sd`.
    fn contended(lock: &str, n: u32, slow: f64, sd: f64) -> (Vec<Sample>, Vec<Sample>) {
        let wobble = |r: u32| (sd * ((r * 7 % 11) as f64 - 5.0) / 3.0).exp();
        let base = (0..n).map(|r| sample(lock, 2, r, 100.0)).collect();
        let head = (0..n)
            .map(|r| sample(lock, 2, r, 100.0 * slow * wobble(r)))
            .collect();
        (base, head)
    }

    #[test]
    fn a_contended_cell_gates_at_the_threshold_its_pilot_allows() {
        let opts = GateOptions::default();
        let pending = |h: &[Sample], b: &[Sample]| {
            super::pending(h, b, RunnerKind::Native, Some(&opts), (80, 80), 3)
        };
        // Unchanged, 12% spread: cleared at the first look (its pilot).
        let (b, h) = contended("ticket", 10, 1.0, 0.1);
        assert!(pending(&h, &b).is_empty());
        let cells = cells::collect(&h);
        let (timed, counts) = timed(cells, RunnerKind::Native);
        assert_eq!(timed[0].1, Budget::Contended);
        let (bv, hv) = (
            vec![100.0; 10],
            cells::lower_is_better(&timed[0].0.samples, Better::Lower).unwrap(),
        );
        let s = paired_strictness(&opts, (Budget::Contended, counts, 3), (&bv, &hv), (80, 80));
        assert!(s.resolves() && s.threshold >= 0.25, "{}", s.line());
        // Ten times slower: a regression at the first look whose
        // boundary the signed-rank test can reach (O'Brien-Fleming's early
        // boundaries ask for more than 20 pairs can give), pending until.
        let (b, h) = contended("ticket", 20, 10.0, 0.15);
        assert_eq!(pending(&h, &b).len(), 1);
        let (b, h) = contended("ticket", 30, 10.0, 0.15);
        assert!(pending(&h, &b).is_empty());
        let (bv, hv): (Vec<f64>, Vec<f64>) = (
            b.iter().map(|x| x.value.unwrap()).collect(),
            h.iter().map(|x| x.value.unwrap()).collect(),
        );
        let s = paired_strictness(&opts, (Budget::Contended, counts, 3), (&bv, &hv), (80, 80));
        let d = decide(&plan(&opts, &s).unwrap(), &s, &bv, &hv).unwrap();
        assert_eq!(d.decision, Decision::Regression);
        // Far too noisy for 2x: it stops at its pilot, never decided.
        let (b, h) = contended("tas", 9, 1.0, 3.0);
        assert_eq!(pending(&h, &b).len(), 1, "the pilot is not in yet");
        let (b, h) = contended("tas", 10, 1.0, 3.0);
        assert!(pending(&h, &b).is_empty());
    }

    #[test]
    fn stored_baselines_need_the_rounds_their_cells_spread_asks_for() {
        let opts = GateOptions::default();
        let counts = Counts {
            quiet: 4,
            contended: 40,
        };
        let quiet: Vec<f64> = (0..20)
            .map(|i| 100.0 * (1.0 + 0.005 * ((i % 5) as f64 - 2.0)))
            .collect();
        let needed = stored_rounds_needed(&opts, (Budget::Quiet, counts, 3), &quiet, 30).unwrap();
        assert!(
            (STORED_BASELINE_LEAST..=STORED_BASELINE_MOST).contains(&needed),
            "{needed}"
        );
        // A noisier contended cell needs more rounds, or cannot be had.
        let loud: Vec<f64> = (0..20)
            .map(|i| 100.0 * (1.0 + 0.2 * ((i % 5) as f64 - 2.0)))
            .collect();
        let more = stored_rounds_needed(&opts, (Budget::Contended, counts, 3), &loud, 30);
        assert!(more.is_none_or(|m| m >= needed), "{more:?} vs {needed}");
        let wild: Vec<f64> = (0..20).map(|i| 100.0 * 4f64.powi(i % 3)).collect();
        assert_eq!(
            stored_rounds_needed(&opts, (Budget::Contended, counts, 3), &wild, 30),
            None
        );
    }
}
