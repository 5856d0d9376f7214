//! The canary's part of a stored comparison: a stored baseline is
//! unpaired, so whatever moved the machine between recording and checking
//! (another tenant, a build beside the run, a lower clock) moves every
//! cell, contended ones most, and would read as a slower lock. The suites
//! measure a fixed workload beside their cells in every unpaired round
//! (`harness::canary`), and the baseline records it; where the run's
//! canary moved beyond the baseline's own spread, the testbed's state
//! differs, and what it could have moved is not compared:
//!
//! - a slower canary (a busier machine) would read as slower locks: the
//!   cells it speaks for are not compared, never a FAIL, never a PASS,
//!   NOT GATED with the canary's shift named;
//! - a faster 1-thread canary (a quieter machine, a higher clock) hides a
//!   slower 1-thread cell and never invents one: a 1-thread cell that
//!   regressed all the same fails, the others are not compared.
//!
//! The 1-thread canary speaks for every cell (a busier machine takes time
//! from every thread); the 2-thread one for the contended cells alone, in
//! either direction: on a 2-vCPU VM it moves with how near the host
//! placed the two vCPUs (31 to 75 ticks per add from one round to the
//! next), which a 1-thread cell never feels, and its direction says
//! nothing of a contended cell's: a busier machine can make it faster (a
//! descheduled thread leaves the other adding alone) while a contended
//! cell gets slower (with a compiler beside a check: x0.56, and a fair
//! mutex's stress cell x3.7 slower).

use super::reference::SuiteReference;
use crate::cells::{self, RunCell};
use crate::protocol::case_label;
use crate::strictness::{Budget, Contention};

/// How far a canary may move before the testbed is called changed: three
/// times its recorded spread, and never less than this.
pub const LEAST_SHIFT: f64 = 0.10;

/// The fewest values a side needs for its median to say anything.
const LEAST_ROUNDS: usize = 3;

/// How a target's canary moved from its stored baseline's.
#[derive(Debug, Clone, PartialEq)]
pub struct Move {
    /// `canary [threads=2] x1.31, 95% interval x1.2 to x1.4 (its baseline
    /// spread 2.1%, 20 rounds)`.
    pub shift: String,
    /// Slower than recorded: a busier machine.
    pub busier: bool,
    /// The canary ran contended (2 threads): it speaks for the contended
    /// cells alone.
    pub contended: bool,
}

/// How the run's canary cells moved from the stored baseline's: none when
/// none moved (or none can be compared: a baseline recorded before
/// canaries, too few rounds).
pub(super) fn moved(run_cells: &[RunCell], reference: &SuiteReference) -> Vec<Move> {
    run_cells
        .iter()
        .filter(|c| c.key.metric.starts_with("canary_"))
        .filter_map(|c| {
            let rc = reference.cells.get(&c.key)?;
            let base = cells::lower_is_better(&rc.samples, rc.better)?;
            let head = cells::lower_is_better(&c.samples, c.better)?;
            let (why, ratio) = shift(&base, &head)?;
            Some(Move {
                shift: format!("canary [{}] {why}", case_label(&c.case)),
                busier: ratio > 1.0,
                contended: Contention::of(&c.case).budget() == Budget::Contended,
            })
        })
        .collect()
}

/// Whether a cell of `budget` that regressed under move `m` still fails:
/// a 1-thread cell, when the 1-thread canary got faster.
pub(super) fn keeps_a_regression(m: &Move, budget: Budget) -> bool {
    !m.busier && !m.contended && budget == Budget::Quiet
}

/// The move that decides a cell of `budget` (lock events: `Contended`,
/// any move), a busier one first.
pub(super) fn deciding(moves: &[Move], budget: Budget) -> Option<&Move> {
    let speaking = || {
        moves
            .iter()
            .filter(move |m| !m.contended || budget == Budget::Contended)
    };
    speaking().find(|m| m.busier).or_else(|| speaking().next())
}

/// How the canary's `head` values moved from its `base` values, when they
/// moved: beyond three times the baseline's spread (at least
/// [`LEAST_SHIFT`]), or, where the baseline was itself recorded on a busy
/// machine and its spread is wide, by more than [`LEAST_SHIFT`] with the
/// whole 95% interval of the ratio beyond it. (The second rule exists
/// because a baseline recorded beside other work has a bimodal canary,
/// quiet and preempted rounds: three times its spread allowed x1.8, and a
/// check under two CPU hogs moved it x1.62 with an interval of x1.34 to
/// x1.84, while seven timing cells read as regressions.)
fn shift(base: &[f64], head: &[f64]) -> Option<(String, f64)> {
    if base.len() < LEAST_ROUNDS || head.len() < LEAST_ROUNDS {
        return None;
    }
    let spread = stats::robust_spread(base)?;
    let ratio = median(head) / median(base);
    let allowed = (3.0 * spread).max(LEAST_SHIFT.ln_1p());
    let interval = stats::hodges_lehmann_ratio(base, head, 0.95).ok()?;
    let least = 1.0 + LEAST_SHIFT;
    let beyond = interval.lo > least || interval.hi < 1.0 / least;
    (ratio.ln().abs() > allowed || beyond).then(|| {
        let why = format!(
            "x{ratio:.2}, 95% interval x{:.2} to x{:.2} (its baseline spread {:.1}%, {} rounds)",
            interval.lo,
            interval.hi,
            spread.exp_m1() * 100.0,
            base.len()
        );
        (why, ratio)
    })
}

/// What `baseline update` says of a suite run whose 1-thread canary
/// spread so wide that the spread rule of [`shift`] would be laxer than
/// its floor (more than a third of [`LEAST_SHIFT`]): the machine was busy
/// while the rounds were recorded. A quiet 2-vCPU VM's spreads 1.4%; one
/// recorded beside other work, 21.4%. Its cells' spreads, and the
/// thresholds a check gets from them, are the busy machine's too.
pub(super) fn busy_recording(cells: &[RunCell], place: &str) -> Option<String> {
    let spreads: Vec<f64> = cells
        .iter()
        .filter(|c| c.key.metric.starts_with("canary_"))
        .filter(|c| Contention::of(&c.case).budget() == Budget::Quiet)
        .filter_map(|c| cells::lower_is_better(&c.samples, c.better))
        .filter(|v| v.len() >= LEAST_ROUNDS)
        .filter_map(|v| stats::robust_spread(&v))
        .collect();
    let widest = spreads.into_iter().max_by(f64::total_cmp)?;
    (3.0 * widest > LEAST_SHIFT.ln_1p()).then(|| {
        format!(
            "{place}: recorded, but its 1-thread canary spread {:.1}% (a quiet testbed's is about 1-2%): the machine was busy while recording, and its cells' spreads, and the thresholds checks against them get, are a busy machine's; record again on a quiet testbed",
            widest.exp_m1() * 100.0
        )
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

/// How every note of [`note`] begins.
const NOTE: &str = "not compared: the testbed's state differs from the baseline's (canary";

/// Whether a cell's note says its target's canary moved.
pub(super) fn is_note(note: &str) -> bool {
    note.starts_with(NOTE)
}

/// The note a cell gets when its target's canary moved and it is not
/// compared.
pub(super) fn note(m: &Move) -> String {
    let why = match (m.contended, m.busier) {
        (true, _) => "two threads no longer run here as they did when it was recorded (a busier machine, or where the host placed the vCPUs: either moves a contended cell either way); compare with --against <base>",
        (false, true) => "a busier machine, not the code, may have slowed it; compare with --against <base>, or check again on a quiet testbed",
        (false, false) => "a quieter machine could hide a slower lock (a 1-thread cell that is slower all the same still fails); compare with --against <base>",
    };
    let shift = m.shift.strip_prefix("canary").unwrap_or(&m.shift);
    format!("{NOTE}{shift}): {why}")
}

#[cfg(test)]
mod tests {
    use super::shift;

    /// `n` values from `low` to `high`, spaced by `(i / (n - 1))^power`
    /// on the log scale: above 1 most values sit near `low` (a mostly quiet
    /// machine), below 1 near `high` (a mostly preempted one).
    fn ramp(n: usize, low: f64, high: f64, power: f64) -> Vec<f64> {
        let k = (high / low).ln();
        (0..n)
            .map(|i| low * (k * (i as f64 / (n - 1) as f64).powf(power)).exp())
            .collect()
    }

    fn tight(n: usize, at: f64) -> Vec<f64> {
        ramp(n, at, at * 1.02, 1.0)
    }

    #[test]
    fn a_quiet_canary_that_stays_is_not_a_move_and_one_that_moves_is() {
        let base = tight(20, 5.0);
        assert_eq!(shift(&base, &tight(20, 5.1)), None);
        let (moved, ratio) = shift(&base, &tight(20, 6.0)).expect("x1.2 on a tight canary");
        assert!(moved.starts_with("x1.2") && ratio > 1.0, "{moved}");
        let (_, ratio) = shift(&base, &tight(20, 4.0)).expect("x0.8 on a tight canary");
        assert!(ratio < 1.0);
    }

    #[test]
    fn a_baseline_recorded_half_busy_still_tells_a_busier_check() {
        // The baseline: 57 rounds from 4.6 to 10.2 ticks, most of them
        // near 4.6 (as one recorded beside other work was); its spread is
        // wide, and three times it allows x2.2.
        let base = ramp(57, 4.6, 10.2, 2.0);
        let spread = stats::robust_spread(&base).unwrap();
        assert!(
            (3.0 * spread).exp() > 2.0,
            "the spread rule alone would not see it"
        );
        // The check under two hogs: most rounds near 10.2, the median x1.44.
        let busier = ramp(30, 4.6, 10.2, 0.5);
        let (moved, _) = shift(&base, &busier).expect("a busier check is named");
        assert!(moved.starts_with("x1.4"), "{moved}");
        // The same machine again (30 rounds of the same spread) is not a move.
        assert_eq!(shift(&base, &ramp(30, 4.6, 10.2, 2.0)), None);
    }

    #[test]
    fn too_few_rounds_say_nothing() {
        assert_eq!(shift(&[5.0, 5.0], &[50.0, 50.0, 50.0]), None);
    }
}
