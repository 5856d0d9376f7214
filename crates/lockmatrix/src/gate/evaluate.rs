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
//! - A timing cell outside its suite's declared timing cells (the sample's
//!   `gating` flag), and every QEMU timing (emulator time), is `advisory`:
//!   shown with its ratio, never failing.
//! - Against stored baselines, a timing cell recorded on another testbed
//!   (runner, CPU model, emulator or compiler version) is `incomparable`.
//! - A cell with missing or non-positive values is `not_comparable`.
//! - The remaining timing cells gate, each with a threshold (the slowdown
//!   it must catch) and a per-cell level (the target's alpha split over
//!   its suites and their timing cells), see [`crate::family`].
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

use super::contention::ContentionGate;
use super::judge::*;
use super::miri::MiriGate;
use super::ordering::ModelGate;
pub use super::reference::Reference;
use super::reference::*;
pub use super::report::{
    CellReport, Effect, FailedCheck, GateReport, Item, Look, Recounted, TimingGate, Verdict,
};
use super::GateOptions;
use crate::baseline::Testbed;
use crate::family;
use crate::family::BadGateOption;
use crate::results::Run;

/// Compares every cell of `run` with `reference` and gives each its
/// verdict. Errors only on bad options.
pub fn evaluate(
    run: &Run,
    reference: &Reference,
    opts: &GateOptions,
) -> Result<GateReport, BadGateOption> {
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
        unreferenced: match reference {
            Reference::Nothing { why } => Some(why.clone()),
            _ => None,
        },
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
        // Against stored baselines, `load` fills it in with the file.
        contention: ContentionGate::of(
            run.contention.as_ref(),
            match reference {
                Reference::Base(base) => base
                    .contention
                    .as_ref()
                    .filter(|b| b.error.is_none())
                    .map(|b| (&b.records[..], "the base revision".to_string())),
                _ => None,
            },
        ),
    };
    let mut pending = Vec::new();
    // Per target, how its canary moved from the stored baseline's.
    let mut moved = std::collections::BTreeMap::new();
    // The most pairs a timing cell gets, as the run was planned.
    // Bounded: a crafted run must not ask for millions of looks.
    let planned_pairs = run
        .against
        .as_ref()
        .and_then(|a| a.pairs)
        .map(|n| (n as usize).min(family::MAX_PAIRS));
    for t in &run.targets {
        target_status(t, &mut report);
        let planned = match reference {
            Reference::Base(_) => planned_pairs,
            _ => t.stored_rounds.map(|r| (r as usize).min(family::MAX_PAIRS)),
        };
        for s in &t.suites {
            let testbed = Testbed::of_suite(run, t, &s.suite);
            let Some(found) = reference_of(reference, t, s, &mut report) else {
                continue;
            };
            let ctx = SuiteCtx {
                t,
                s,
                testbed: &testbed,
                acks: reference.acknowledgements(run),
                opts,
                planned,
                canary: &[],
                affordable: crate::policy::affordable_pairs(
                    run.profile == crate::results::Profile::Full,
                ),
            };
            let mut judged = suite(&ctx, found);
            moved
                .entry(t.name.clone())
                .or_insert_with(Vec::new)
                .append(&mut judged.canary);
            pending.extend(report.absorb(judged));
        }
    }
    decide(&mut report, &pending, opts, &moved);
    Ok(report)
}
