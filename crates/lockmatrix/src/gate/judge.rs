//! The judgement: each suite's cells against their reference, each
//! verdict, and the timing cells decided look by look. Pure.

use super::ordering::OrderingChange;
use super::ordering::{self, Footprints};
use super::reference::*;
use super::report::*;
use super::GateOptions;
use crate::acknowledge::Acknowledgement;
use crate::baseline::Testbed;
use crate::cells::{self, CellKey, RunCell, Summary};
use crate::family;
use crate::name::Name;
use crate::policy::{self, Role};
use crate::protocol::case_label;
use crate::results::{Failure, Status, SuiteRun, TargetResult};
use crate::strictness::{Budget, Counts, Resolution};
use stats::{Decision, Sequential, StatsError};

/// A timing cell whose values compare, waiting for its looks: all that
/// its strictness and decision are computed from.
pub(super) struct Pending {
    /// Its place among its suite's cells (the report's, once absorbed).
    pub(super) index: usize,
    pub(super) budget: Budget,
    /// Its suite's timing cells of each budget, and its target's suites.
    pub(super) counts: Counts,
    pub(super) suites: usize,
    /// Its values, lower is better: paired round by round against a base
    /// revision, else the stored baseline's and the run's.
    pub(super) base: Vec<f64>,
    pub(super) head: Vec<f64>,
    /// The rounds a stored baseline recorded (`base` has fewer values
    /// where a round gave the cell none); paired, `base`'s length.
    pub(super) base_rounds: usize,
    /// The most pairs (rounds) the run planned it, its last look; `None`
    /// for a run planned no looks (`--rounds`, an older run): one look at
    /// the pairs or rounds there are.
    pub(super) planned: Option<usize>,
    /// [`SuiteCtx::affordable`].
    pub(super) affordable: usize,
    pub(super) target: Name,
}

/// A target that was not run is a note; one that broke outside its suites
/// (set-up, build) is a problem. Suite failures are reported per suite.
pub(super) fn target_status(t: &TargetResult, report: &mut GateReport) {
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

/// Where one suite run is judged: its target, the testbed it ran on,
/// the trailers that acknowledge ordering changes, the gate's options.
#[derive(Clone, Copy)]
pub(super) struct SuiteCtx<'a> {
    pub t: &'a TargetResult,
    pub s: &'a SuiteRun,
    pub testbed: &'a Testbed,
    pub acks: &'a [Acknowledgement],
    pub opts: &'a GateOptions,
    /// The pairs the run planned against a base revision (`--against`),
    /// or the rounds against stored baselines: each timing cell's last look.
    pub planned: Option<usize>,
    /// The pairs a run of its profile plans by default: a cell its noise
    /// keeps from resolving even with those is too noisy, one short only
    /// of this run's pairs is not gated.
    pub affordable: usize,
    /// Against stored baselines: how the run's canaries moved from the
    /// baseline's, those that moved beyond their spread (then its events
    /// are not compared, nor the timing cells each speaks for:
    /// [`super::canary`]).
    pub canary: &'a [super::canary::Move],
}

/// What judging one suite run adds to the report: its cells with their
/// verdicts (timing cells still waiting in `pending`, indexed into
/// `cells`), its problems and notes, and what it compared.
#[derive(Default)]
pub(super) struct Judged {
    pub failed_checks: Vec<FailedCheck>,
    pub problems: Vec<Item>,
    pub notes: Vec<Item>,
    pub cells: Vec<CellReport>,
    pub pending: Vec<Pending>,
    pub counts_compared: usize,
    pub counts_with_reference: usize,
    pub family_present: usize,
    pub footprints_compared: usize,
    pub ordering: Vec<OrderingChange>,
    pub recounted: Option<Recounted>,
    /// Against stored baselines: how the run's canary moved from the
    /// baseline's, when it moved beyond its spread ([`super::canary`]).
    pub canary: Vec<super::canary::Move>,
}

/// Judges one suite run against its reference: its checks and status,
/// each cell (exact counts, advisory timings, timing cells left for
/// [`decide`]), its ordering footprint, and the recount it used.
pub(super) fn suite(ctx: &SuiteCtx, reference: SuiteReference) -> Judged {
    let (t, s) = (ctx.t, ctx.s);
    let mut out = Judged::default();
    checks_and_status(t, s, &mut out);
    let run_cells = cells::collect(&s.samples);
    let canary = match reference.paired {
        true => Vec::new(),
        false => super::canary::moved(&run_cells, &reference),
    };
    let ctx = &SuiteCtx {
        canary: &canary,
        ..*ctx
    };
    let differs = Differs::of(ctx, &reference);
    let ordering = ordering_of(ctx, &reference, &differs.count, &mut out);
    let (_, counts) = crate::family::timed(run_cells.clone(), t.runner);
    let base_rounds = cells::timing_rounds(
        (reference.cells.values()).map(|c| (c.unit.as_str(), c.samples.len())),
    );
    let run_rounds =
        cells::timing_rounds((run_cells.iter()).map(|c| (c.unit.as_str(), c.samples.len())));
    for cell in &run_cells {
        let mut r = cell_report(t, s, cell);
        if r.family {
            out.family_present += 1;
        }
        if let Some(rc) = reference.cells.get(&cell.key) {
            if cell.kind().exact() {
                out.counts_with_reference += 1;
            }
            let differs = if cell.kind().exact() {
                &differs.count
            } else {
                &differs.timing
            };
            let values = judge(&mut r, (cell, rc), differs, reference.paired, ctx);
            let budget =
                match policy::role(cell.kind(), t.runner, &cell.key.metric, cell.contention) {
                    Role::Timed(b) => Some(b),
                    _ => None,
                };
            if let (Some(b), Verdict::Incomparable, false) = (budget, r.verdict, reference.paired) {
                r.rounds_needed = rounds_to_record(ctx, (cell, run_rounds), (b, counts));
            }
            if let (Some(budget), Some((base, head))) = (budget, values) {
                out.pending.push(Pending {
                    index: out.cells.len(),
                    budget,
                    counts,
                    suites: t.suites.len(),
                    base_rounds: base_rounds.max(base.len()),
                    base,
                    head,
                    planned: ctx.planned,
                    affordable: ctx.affordable,
                    target: t.name.clone(),
                });
            }
            if cell.kind().exact()
                && matches!(
                    r.verdict,
                    Verdict::Unchanged | Verdict::Regression | Verdict::Improvement
                )
            {
                out.counts_compared += 1;
                // Fewer instructions because barriers left is no
                // improvement: the ordering change decides.
                if ordering.contains(&cell.key) {
                    r.verdict = Verdict::OrderingChanged;
                }
            }
        }
        out.cells.push(r);
    }
    out.recounted = recounted(ctx, &reference, &out);
    out.canary = canary.clone();
    if let Some(note) = missing_cells(t, s, &reference, &run_cells) {
        out.notes.push(note);
    }
    out
}

/// Adds the suite run's failed checks to `out`, and its status as a
/// problem or a note (a check failure only when no check is listed).
fn checks_and_status(t: &TargetResult, s: &SuiteRun, out: &mut Judged) {
    let failed: Vec<_> = s.checks.iter().filter(|c| !c.ok).collect();
    for c in &failed {
        out.failed_checks.push(FailedCheck {
            target: t.name.clone(),
            suite: s.suite.clone(),
            bench: c.bench.clone(),
            case: c.case.clone(),
            name: c.name.clone(),
            details: c.details.clone(),
            command: s.command.clone(),
        });
    }
    match &s.status {
        Status::Ok => {}
        Status::Pending => out.problems.push(item(t, Some(s), "not finished".into())),
        // The failed checks are listed on their own.
        Status::Failed(Failure::Check { .. }) if !failed.is_empty() => {}
        Status::Failed(why) => out
            .problems
            .push(item(t, Some(s), format!("failed: {why}"))),
        Status::NotRun(why) => out.notes.push(item(t, Some(s), format!("not run: {why}"))),
    }
}

/// How the testbeds of the run and its reference differ, for timings and
/// for counts: each non-empty list makes its cells incomparable.
struct Differs {
    timing: Vec<String>,
    count: Vec<String>,
}

impl Differs {
    /// The differences between the suite run's testbed and its
    /// reference's. Paired timings ran side by side, so their testbeds
    /// never differ; counts of the same binary differ only by the
    /// counting emulator's release.
    fn of(ctx: &SuiteCtx, reference: &SuiteReference) -> Differs {
        let timing = reference
            .testbed
            .as_ref()
            .filter(|_| !reference.paired)
            .map(|b| b.differences(ctx.testbed))
            .unwrap_or_default();
        let mut count = reference
            .count_testbed
            .as_ref()
            .map(|b| b.count_differences(ctx.testbed))
            .unwrap_or_default();
        // The same binary counts the same, whatever compiler or CPU-choice
        // label either side records; only the counting emulator's release
        // still matters.
        if same_binary(reference.binary.as_ref(), ctx.t, ctx.s) {
            count.retain(|d| d.starts_with("counting emulator release"));
        }
        // Said first: what was made to compare them, and why it could not.
        if let (false, Some(why)) = (count.is_empty(), &reference.recount_failed) {
            count.insert(0, why.clone());
        }
        Differs { timing, count }
    }
}

/// A run cell's report before it is judged: what it is, its head values,
/// and no verdict yet (no baseline).
fn cell_report(t: &TargetResult, s: &SuiteRun, cell: &RunCell) -> CellReport {
    CellReport {
        target: t.name.clone(),
        suite: s.suite.clone(),
        bench: cell.key.bench.clone(),
        case: cell.case.clone(),
        metric: cell.key.metric.clone(),
        unit: cell.unit.clone(),
        better: cell.better,
        family: matches!(
            policy::role(cell.kind(), t.runner, &cell.key.metric, cell.contention),
            Role::Timed(_)
        ),
        strictness: None,
        verdict: Verdict::NoBaseline,
        head: Summary::of(&cell.samples),
        base: None,
        effect: None,
        look: None,
        rounds_needed: None,
        note: None,
        gated: false,
    }
}

/// For a timing cell whose stored baseline is another testbed's: the
/// rounds a recording here would need for its baseline to gate later
/// runs, from this run's spread, at the rate it had values in the run's
/// `rounds`.
fn rounds_to_record(
    ctx: &SuiteCtx,
    (cell, rounds): (&RunCell, usize),
    (budget, counts): (Budget, Counts),
) -> Option<usize> {
    let v = cells::lower_is_better(&cell.samples, cell.better)?;
    let needed = family::stored_rounds_needed(
        ctx.opts,
        (budget, counts, ctx.t.suites.len()),
        &v,
        family::STORED_ROUNDS.0 as usize,
    )?;
    Some(crate::strictness::Recorded { values: &v, rounds }.rounds_for(needed))
}

/// The recount whose counts stood in for the stored ones, with what it
/// compared (`out`'s counts and footprints so far).
fn recounted(ctx: &SuiteCtx, reference: &SuiteReference, out: &Judged) -> Option<Recounted> {
    reference
        .recount
        .as_ref()
        .map(|(commit, recorded_with)| Recounted {
            commit: commit.clone(),
            recorded_with: recorded_with.clone(),
            counted_with: ctx.t.compiler_of(&ctx.s.suite).unwrap_or_default(),
            counts: out.counts_compared,
            footprints: out.footprints_compared,
        })
}

/// A note naming the reference cells the run lacks (the first three), or
/// `None` when it has them all.
fn missing_cells(
    t: &TargetResult,
    s: &SuiteRun,
    reference: &SuiteReference,
    run_cells: &[RunCell],
) -> Option<Item> {
    let run_keys: std::collections::BTreeSet<&CellKey> = run_cells.iter().map(|c| &c.key).collect();
    let missing: Vec<String> = reference
        .cells
        .iter()
        .filter(|(k, _)| !run_keys.contains(k))
        .map(|(k, c)| format!("{} [{}] {}", k.bench, case_label(&c.case), k.metric))
        .collect();
    if missing.is_empty() {
        return None;
    }
    let shown: Vec<&str> = missing.iter().take(3).map(String::as_str).collect();
    let more = if missing.len() > 3 { ", ..." } else { "" };
    Some(item(
        t,
        Some(s),
        format!(
            "{} reference cells not in this run: {}{more}",
            missing.len(),
            shown.join(", ")
        ),
    ))
}

/// Compares the suite run's ordering footprints with the reference's,
/// where counts compare (the same binary's code: same target, compiler and
/// counting emulator); adds the changes to `out` and returns the count
/// cells whose executed footprint changed.
pub(super) fn ordering_of(
    ctx: &SuiteCtx,
    reference: &SuiteReference,
    count_differs: &[String],
    out: &mut Judged,
) -> std::collections::BTreeSet<CellKey> {
    let (t, s) = (ctx.t, ctx.s);
    let head = Footprints::of(&t.triple, s);
    if let Some(e) = &s.footprint_error {
        out.notes.push(item(
            t,
            Some(s),
            format!("no static ordering footprint: {e}"),
        ));
    }
    let (Some(head), Some(base)) = (head, &reference.footprints) else {
        return Default::default();
    };
    if !count_differs.is_empty() {
        out.notes.push(item(
            t,
            Some(s),
            format!(
                "ordering footprint not compared: {}",
                count_differs.join("; ")
            ),
        ));
        return Default::default();
    }
    let compared = ordering::compare(&t.name, &s.suite, &head, base, ctx.acks);
    out.footprints_compared += compared.compared;
    out.ordering.extend(compared.changes);
    compared.changed_cells.into_iter().collect()
}

/// Sets the verdict of a cell that has a reference cell, unless it gates:
/// then returns its values, `(base, head)`, for its looks.
pub(super) fn judge(
    r: &mut CellReport,
    (cell, rc): (&RunCell, &RefCell),
    testbed_differs: &[String],
    paired: bool,
    ctx: &SuiteCtx,
) -> Option<(Vec<f64>, Vec<f64>)> {
    let t = ctx.t;
    r.base = Some(Summary::of(&rc.samples));
    let mut differs = testbed_differs.to_vec();
    differs.extend(cell_differences(cell, rc));
    let role = policy::role(cell.kind(), t.runner, &cell.key.metric, cell.contention);
    if role == Role::Exact {
        judge_insns(r, cell, rc, differs, t.insns_tolerance);
        return None;
    }
    if role == Role::Events {
        if let Some(m) = super::canary::deciding(ctx.canary, Budget::Contended) {
            differs.push(super::canary::note(m));
        }
        super::events::judge(r, cell, &rc.samples, differs);
        return None;
    }
    let (Some(base), Some(head)) = compared_values(r, (cell, rc), paired) else {
        r.verdict = if !differs.is_empty() {
            Verdict::Incomparable
        } else if !matches!(role, Role::Timed(_)) {
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
        match effect((&base, &head), paired, 0.0, ctx.opts) {
            Ok(e) => r.effect = Some(e),
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
    Some((base, head))
}

/// How a run cell and its reference cell disagree on what they measure:
/// the unit, or which way is better.
fn cell_differences(cell: &RunCell, rc: &RefCell) -> Vec<String> {
    let mut differs = Vec::new();
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
    differs
}

/// The values compared, `(base, head)`, lower is better: paired, the
/// rounds both sides have matched by round (a bad value drops its pair,
/// not the cell, and `r`'s note says how many were dropped); else each
/// side's values. `None` for a side with none to compare.
fn compared_values(
    r: &mut CellReport,
    (cell, rc): (&RunCell, &RefCell),
    paired: bool,
) -> (Option<Vec<f64>>, Option<Vec<f64>>) {
    if !paired {
        return (
            cells::lower_is_better(&rc.samples, rc.better),
            cells::lower_is_better(&cell.samples, cell.better),
        );
    }
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
}

/// The head's effect against the base at `margin` (0: slower at all;
/// a timing cell's own once its strictness is known): signed-rank pairs
/// when paired, else the Mann-Whitney comparison.
fn effect(
    (base, head): (&[f64], &[f64]),
    paired: bool,
    margin: f64,
    opts: &GateOptions,
) -> Result<Effect, StatsError> {
    let c = if paired {
        stats::compare_paired(base, head, margin, opts.clear_alpha)
    } else {
        stats::compare(base, head, margin, opts.clear_alpha)
    }?;
    Ok(Effect {
        ratio: c.ratio,
        lo: c.ratio_lo,
        hi: c.ratio_hi,
        confidence: c.confidence,
        p: c.p_rank,
    })
}

/// Instruction counts repeat exactly, so they gate without statistics and
/// on QEMU too: more instructions than the reference by more than the
/// target's tolerance (0 unless targets.yaml sets `insns_tolerance`) is a
/// regression, fewer is an improvement. A count from another target,
/// compiler or emulator release is incomparable.
pub(super) fn judge_insns(
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

/// Every timing cell's verdict: its strictness, then its looks replayed
/// against the base revision (signed-rank pairs), or against stored
/// baselines (the run's rounds with the Mann-Whitney test, at the looks
/// the run planned), unless its target's canary moved (`moved`: target
/// to its canaries' moves), which makes the cells a move speaks for
/// incomparable, all but a 1-thread cell that regressed while the 1-thread
/// canary got faster ([`super::canary::keeps_a_regression`]).
pub(super) fn decide(
    report: &mut GateReport,
    pending: &[Pending],
    opts: &GateOptions,
    moved: &std::collections::BTreeMap<Name, Vec<super::canary::Move>>,
) {
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
        let r = &mut report.cells[c.index];
        let timing_of = decide_cell(c, r, report.paired, opts);
        let deciding = moved
            .get(&c.target)
            .and_then(|m| super::canary::deciding(m, c.budget));
        if let (Some(m), false) = (deciding, report.paired) {
            // Neither a pass nor a fail: the testbed, not the code, moved;
            // but a 1-thread cell slower on a machine whose 1-thread
            // canary got faster is slower ([`super::canary`]).
            let stands =
                super::canary::keeps_a_regression(m, c.budget) && r.verdict == Verdict::Regression;
            if !stands {
                if r.verdict != Verdict::TooNoisy {
                    r.verdict = Verdict::Incomparable;
                    r.note = Some(super::canary::note(m));
                    r.gated = false;
                    r.look = None;
                    // More rounds would not help: the testbed moved.
                    r.rounds_needed = None;
                }
                continue;
            }
        }
        let Some(cell) = timing_of else {
            continue;
        };
        timing.cell_alpha = timing.cell_alpha.min(cell.alpha);
        timing.rounds = timing.rounds.min(cell.last);
        timing.min_p = timing.min_p.max(cell.min_p);
        timing.gated |= cell.reachable;
        timing.unreachable.extend(cell.unreachable);
    }
    if timing.rounds == usize::MAX {
        timing.rounds = 0;
    }
    report.timing = timing;
}

/// What one timing cell adds to the run's [`TimingGate`]: its level, the
/// pairs or rounds of its last look and the smallest p they can give,
/// whether that look can reach the level, and, compared with stored
/// baselines that cannot, its target and the rounds its baseline needs.
struct CellTiming {
    alpha: f64,
    last: usize,
    min_p: f64,
    reachable: bool,
    unreachable: Option<(Name, Option<usize>)>,
}

/// Decides one timing cell: its strictness, its verdict, the look that
/// decided, the rounds a decision needs, and why it does not gate when it
/// does not. `None` when it is too noisy to gate here (its verdict says
/// so) or no plan could be made for it.
fn decide_cell(
    c: &Pending,
    r: &mut CellReport,
    paired: bool,
    opts: &GateOptions,
) -> Option<CellTiming> {
    let n = c.base.len().min(c.head.len());
    let budget = (c.budget, c.counts, c.suites);
    let recorded = crate::strictness::Recorded {
        values: &c.base,
        rounds: c.base_rounds,
    };
    let (strictness, plan, min_p, last) = if paired {
        let last = c.planned.unwrap_or(n).clamp(n.max(1), family::MAX_PAIRS);
        let s = family::paired_strictness(opts, budget, (&c.base, &c.head), (last, c.affordable));
        let plan = family::plan(opts, &s);
        (s, plan, stats::min_p_value_paired(last), last)
    } else {
        let looks = family::stored_looks(c.planned, c.head.len());
        let last = *looks.last().expect("looks");
        let s = family::stored_strictness(opts, budget, recorded, &looks);
        let plan = family::stored_plan(opts, &s, c.base.len(), looks);
        (s, plan, stats::min_p_value(c.base.len(), last), last)
    };
    let (threshold, margin, alpha) = (strictness.threshold, strictness.margin, strictness.alpha);
    r.strictness = Some(strictness.clone());
    if let Resolution::TooNoisy { needs } = strictness.resolution {
        r.verdict = Verdict::TooNoisy;
        r.note = Some(strictness.line());
        r.rounds_needed = needs;
        return None;
    }
    let Ok(plan) = plan else { return None };
    // The effect at the cell's own margin, now that it is known.
    if let Ok(e) = effect((&c.base, &c.head), paired, margin, opts) {
        r.effect = Some(e);
    }
    r.rounds_needed = rounds_needed(c, paired, threshold, alpha);
    let reachable = min_p <= plan.last_level();
    let mut timing = CellTiming {
        alpha,
        last,
        min_p,
        reachable,
        unreachable: None,
    };
    let Some(e) = r.effect else {
        return Some(timing);
    };
    let unit = if paired { "pairs" } else { "rounds" };
    let found = match paired {
        true => family::decide(&plan, &strictness, &c.base, &c.head),
        false => family::decide_stored(&plan, &strictness, &c.base, &c.head),
    };
    let had = if paired { n } else { c.head.len() };
    let (verdict, note) = verdict_at(found.as_ref(), had, last, plan.looks[0], unit);
    if note.is_some() {
        r.note = note;
    }
    // Cleared, and faster by more than the threshold.
    r.verdict = if verdict == Verdict::Cleared && e.hi < 1.0 / (1.0 + threshold) {
        Verdict::Improvement
    } else {
        verdict
    };
    r.gated = (reachable && strictness.resolves()) || r.verdict != Verdict::Inconclusive;
    if let (false, Resolution::Short { needs }) = (r.gated, strictness.resolution) {
        // Short of the pairs, or the baseline's rounds, its noise asks.
        r.note = Some(strictness.line());
        match paired {
            true => r.rounds_needed = needs.or(r.rounds_needed),
            false => timing.unreachable = Some((r.target.clone(), needs)),
        }
    } else if !r.gated {
        // What would let it gate: more rounds in the stored baseline,
        // or more pairs.
        let level = plan.last_level();
        r.note = Some(if paired {
            format!(
                "{last} pairs cannot reach p < {level:.1e} (smallest p {min_p:.1e}): run more pairs (--rounds)"
            )
        } else {
            // For a later run, which plans the default looks: the
            // rounds that give the values it needs.
            let more = family::stored_rounds_needed(
                opts,
                budget,
                &c.base,
                last.max(family::STORED_ROUNDS.0 as usize),
            )
            .map(|n| recorded.rounds_for(n));
            timing.unreachable = Some((r.target.clone(), more));
            stored_unreachable(recorded, last, level, min_p, more)
        });
    }
    r.look = Some(Look {
        look: found.as_ref().map_or(1, |s| s.look + 1),
        looks: plan.looks.len(),
        pairs: found.as_ref().map_or(n, |s| s.pairs),
        unit,
        threshold,
        margin,
        alpha,
    });
    Some(timing)
}

/// The rounds a cell would need to tell a slowdown by the threshold from
/// one by its margin at level `alpha`, from its spread.
fn rounds_needed(c: &Pending, paired: bool, threshold: f64, alpha: f64) -> Option<usize> {
    let n = c.base.len().min(c.head.len());
    // Sized for the distance between the threshold and the margin.
    let apart = (1.0 + threshold) / (1.0 + crate::strictness::margin(threshold)) - 1.0;
    let needed = if paired {
        stats::assess_paired_power(&c.base[..n], &c.head[..n], apart, alpha)
    } else {
        stats::assess_power(&c.base, &c.head, apart, alpha)
    };
    needed.ok().and_then(|p| p.rounds_needed)
}

/// The verdict the looks reached (`found`: the deciding or last look;
/// `None`: the run had fewer than the first look), with a note when the
/// run stopped before its looks could decide.
fn verdict_at(
    found: Option<&Sequential>,
    had: usize,
    last: usize,
    first_look: usize,
    unit: &str,
) -> (Verdict, Option<String>) {
    let Some(s) = found else {
        return (
            Verdict::Inconclusive,
            Some(format!(
                "{had} {unit}: fewer than the first look ({first_look})"
            )),
        );
    };
    match s.decision {
        Decision::Regression => (Verdict::Regression, None),
        Decision::Cleared => (Verdict::Cleared, None),
        Decision::Inconclusive => (Verdict::Inconclusive, None),
        Decision::Continue => (
            Verdict::Inconclusive,
            Some(format!(
                "the run stopped at {had} {unit}, before the last look ({last})"
            )),
        ),
    }
}

/// Why a timing cell compared with stored baselines cannot gate: its
/// baseline's rounds and the run's cannot reach the level; and what
/// would (`more`: the rounds to record its baselines with, `None`: too
/// noisy for any).
fn stored_unreachable(
    recorded: crate::strictness::Recorded,
    last: usize,
    level: f64,
    min_p: f64,
    more: Option<usize>,
) -> String {
    let base = match (recorded.values.len(), recorded.rounds) {
        (v, r) if r > v => format!("{v} values of {r} rounds"),
        (v, _) => format!("{v} rounds"),
    };
    format!(
        "its baseline's {base} and this run's {last} cannot reach p < {level:.1e} (smallest p {min_p:.1e}): {}",
        match more {
            Some(m) => format!("record its baselines with at least {m} rounds"),
            None => "its noise is too large for its threshold against stored baselines: gate it with --against".into(),
        }
    )
}

impl GateReport {
    /// Adds one suite run's judgement: its cells after the report's, its
    /// recount merged into the one of the same commit and compiler.
    /// Returns its pending timing cells, indexed into the report's cells.
    pub(super) fn absorb(&mut self, j: Judged) -> Vec<Pending> {
        let offset = self.cells.len();
        let pending = j
            .pending
            .into_iter()
            .map(|p| Pending {
                index: p.index + offset,
                ..p
            })
            .collect();
        self.failed_checks.extend(j.failed_checks);
        self.problems.extend(j.problems);
        self.notes.extend(j.notes);
        self.cells.extend(j.cells);
        self.counts_compared += j.counts_compared;
        self.counts_with_reference += j.counts_with_reference;
        self.family_present += j.family_present;
        self.footprints_compared += j.footprints_compared;
        self.ordering.extend(j.ordering);
        if let Some(r) = j.recounted {
            match self
                .recounted
                .iter_mut()
                .find(|x| x.commit == r.commit && x.counted_with == r.counted_with)
            {
                Some(x) => {
                    x.counts += r.counts;
                    x.footprints += r.footprints;
                }
                None => self.recounted.push(r),
            }
        }
        pending
    }
}
