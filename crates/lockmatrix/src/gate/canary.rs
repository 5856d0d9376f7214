//! The canary's part of a stored comparison: a stored baseline is
//! unpaired, so whatever moved the machine between recording and checking
//! (another tenant, a build beside the run, a lower clock) moves every
//! cell, contended ones most, and would read as a slower lock. The suites
//! measure a fixed workload beside their cells in every unpaired round
//! (`harness::canary`), and the baseline records it; where the run's
//! canary moved beyond the baseline's own spread, the testbed's state
//! differs, and its timings are not compared: never a FAIL, never a PASS,
//! NOT GATED with the canary's shift named.

use super::reference::SuiteReference;
use crate::cells::{self, RunCell};
use crate::protocol::case_label;

/// How far a canary may move before the testbed is called changed: three
/// times its recorded spread, and never less than this.
pub const LEAST_SHIFT: f64 = 0.10;

/// The fewest values a side needs for its median to say anything.
const LEAST_ROUNDS: usize = 3;

/// `canary [threads=2] x1.31 (its baseline spread 2.1%, 20 rounds)` for the
/// first of the run's canary cells that moved from the stored baseline's,
/// or `None` when none did (or none can be compared: a baseline recorded
/// before canaries, too few rounds).
pub(super) fn moved(run_cells: &[RunCell], reference: &SuiteReference) -> Option<String> {
    run_cells
        .iter()
        .filter(|c| c.key.metric.starts_with("canary_"))
        .find_map(|c| {
            let rc = reference.cells.get(&c.key)?;
            let base = cells::lower_is_better(&rc.samples, rc.better)?;
            let head = cells::lower_is_better(&c.samples, c.better)?;
            if base.len() < LEAST_ROUNDS || head.len() < LEAST_ROUNDS {
                return None;
            }
            let spread = stats::robust_spread(&base)?;
            let ratio = median(&head) / median(&base);
            let allowed = (3.0 * spread).max(LEAST_SHIFT.ln_1p());
            (ratio.ln().abs() > allowed).then(|| {
                format!(
                    "canary [{}] x{ratio:.2} (its baseline spread {:.1}%, {} rounds)",
                    case_label(&c.case),
                    spread.exp_m1() * 100.0,
                    base.len()
                )
            })
        })
}

fn median(v: &[f64]) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    match n % 2 {
        1 => v[n / 2],
        _ => (v[n / 2 - 1] + v[n / 2]) / 2.0,
    }
}

/// The note a timing cell gets when its target's canary moved.
pub(super) fn note(shift: &str) -> String {
    format!(
        "not compared: the testbed's state differs from the baseline's ({shift}): a busier or quieter machine, not the code, may have moved it; compare with --against <base>, or check again on a quiet testbed"
    )
}
