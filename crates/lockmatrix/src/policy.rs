//! What gates, and how: every rule that decides whether a cell can fail the
//! build lives here, and every other module (the gate, the plan, the
//! reports, the validation) asks this one.
//!
//! | what | where | how it gates |
//! |---|---|---|
//! | correctness checks | every target, QEMU included | any failure fails |
//! | instruction counts (`Kind::Instructions`) | counted targets: QEMU targets, and native or ssh targets with `counted_under` | exactly: more than the reference (beyond the target's `insns_tolerance`) is a regression |
//! | every other metric of every cell, 1-thread and contended: times, per-thread operations, slow-path counts | real hardware: native and ssh runners | statistically, each at the strictness its measured noise allows ([`crate::strictness`]): cleared, regression, inconclusive, or too noisy to gate here (said, with what would let it) |
//! | a per-thread maximum (`*_max`), a fairness ratio near 0 (`*fairness_cv`), per-thread counts of one thread | real hardware | shown: no direction is better, or another metric of the cell measures the same ([`Shown`]) |
//! | every timing | QEMU | advisory: emulator time is not the guest CPU's |
//!
//! Why: QEMU runs the guest's code at the emulator's speed, so its times say
//! nothing about the guest CPU, while its instruction counts repeat exactly.
//! On real hardware no cell is left out by decree: a contended cell's noise
//! decides how fine a slowdown it can be asked to catch (docs/gate.md).

use crate::config::{RunnerKind, Target};
use crate::protocol::Kind;
use crate::strictness::{Budget, Contention};

/// Rounds per side on real hardware with `--against` (quick, full): the
/// last look of the sequential test. A cell stops at the look that
/// decides it (10-60 pairs in today's A/A job); at 80 pairs a +5%
/// slowdown of a 1-thread cell is caught 47-95% of the time, at 160
/// 89-98% (resampled; 160 is not validated end to end yet). Chosen by
/// `validate-gate` over 10 recordings of 80 pairs on a 2-vCPU VM
/// (`validation/2026-12-03-perlock-b/`): see docs/gate.md, "Measured:
/// false alarms and power".
pub const AB_ROUNDS: (u32, u32) = (80, 100);

/// The pairs a run of the quick profile (or with `full`, the full one)
/// plans against a base revision: what a timing cell's noise is measured
/// against when it is called too noisy to gate here.
pub fn affordable_pairs(full: bool) -> usize {
    match full {
        false => AB_ROUNDS.0 as usize,
        true => AB_ROUNDS.1 as usize,
    }
}

/// How one cell of a run is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Compared exactly: instruction counts.
    Exact,
    /// A timing cell on real hardware: can fail the gate on its
    /// statistics, spending its budget's share of the false-alarm rate.
    Timed(Budget),
    /// Lock events per acquisition on real hardware: compared by a
    /// robust rule (`gate::events`), zeros included.
    Events,
    /// Shown with its ratio, never fails.
    Advisory(Advisory),
}

/// Why a cell is advisory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Advisory {
    /// A time measured under QEMU: the emulator's, not the guest CPU's.
    EmulatorTime,
    /// What the metric says is not a lock's cost or fairness by itself.
    Shown(Shown),
}

/// Why a metric on real hardware is shown and not gated.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    /// The most one thread got (`acquisitions_max`, `writer_ops_max`): a
    /// fairer lock gives its luckiest thread less, so neither way is better.
    Maximum,
    /// `fairness_cv` (rwsem: `reader_fairness_cv`, `writer_fairness_cv`):
    /// near 0 for a fair lock, where its logarithm moves by factors when
    /// nothing changed, and exactly 0 when two threads took turns (a pair
    /// with a 0 cannot be compared, so such a cell would wait for pairs
    /// that never come); the cell's per-thread minimum gates fairness.
    Ratio,
    /// A per-thread minimum or average of one thread: its time measures
    /// the same.
    OneThread,
    /// A lock's events with one thread: none to count.
    NoContention,
    /// The canary (`canary_*`): the machine's state, not a lock's cost;
    /// compared with the stored baseline's to tell a busier testbed from
    /// a slower lock.
    Canary,
}

impl Advisory {
    pub fn note(self) -> &'static str {
        match self {
            Advisory::EmulatorTime => "QEMU timing (emulator time): advisory",
            Advisory::Shown(Shown::Maximum) => {
                "the most one thread got: shown (a fairer lock gives it less)"
            }
            Advisory::Shown(Shown::Ratio) => {
                "a ratio near 0 for a fair lock: shown (the per-thread minimum gates fairness)"
            }
            Advisory::Shown(Shown::OneThread) => {
                "per-thread operations of one thread: shown (its time gates it)"
            }
            Advisory::Shown(Shown::NoContention) => {
                "lock events of one thread: nothing contends, nothing to count"
            }
            Advisory::Shown(Shown::Canary) => {
                "the canary: the machine's state, beside the cells (a busier testbed, not a slower lock)"
            }
        }
    }
}

/// The role of the cell of `metric` (of kind `kind`, its case's
/// `contention`) on `runner`.
pub fn role(kind: Kind, runner: RunnerKind, metric: &str, contention: Contention) -> Role {
    if kind.exact() {
        Role::Exact
    } else if times_are_advisory(runner) {
        Role::Advisory(Advisory::EmulatorTime)
    } else if kind == Kind::Events && contention == Contention::Alone {
        Role::Advisory(Advisory::Shown(Shown::NoContention))
    } else if kind == Kind::Events {
        Role::Events
    } else if let Some(why) = shown(metric, contention) {
        Role::Advisory(Advisory::Shown(why))
    } else {
        Role::Timed(contention.budget())
    }
}

/// Why `metric` is shown rather than gated, if it is.
fn shown(metric: &str, contention: Contention) -> Option<Shown> {
    let per_thread = metric.starts_with("acquisitions_") || metric.contains("_ops_");
    if metric.starts_with("canary_") {
        Some(Shown::Canary)
    } else if metric.ends_with("_max") {
        Some(Shown::Maximum)
    } else if metric.ends_with("fairness_cv") {
        Some(Shown::Ratio)
    } else if per_thread && contention == Contention::Alone {
        Some(Shown::OneThread)
    } else {
        None
    }
}

/// Whether times measured on `runner` are advisory: emulator time.
pub fn times_are_advisory(runner: RunnerKind) -> bool {
    runner == RunnerKind::Qemu
}

/// Whether `target`'s suites get instruction counts: it runs under QEMU,
/// or is counted under an emulator on this host (`counted_under`).
pub fn counted(target: &Target) -> bool {
    target.runner == RunnerKind::Qemu || target.counted_under.is_some()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_holds() {
        use RunnerKind::*;
        let two = Contention::Contended { threads: 2 };
        let one = Contention::Alone;
        for runner in [Native, Qemu, Ssh] {
            assert_eq!(
                role(Kind::Instructions, runner, "insns_per_op", one),
                Role::Exact
            );
        }
        assert_eq!(
            role(Kind::Time, Qemu, "ticks_per_acquire", one),
            Role::Advisory(Advisory::EmulatorTime)
        );
        assert_eq!(
            role(Kind::Time, Native, "ticks_per_acquire", one),
            Role::Timed(Budget::Quiet)
        );
        assert_eq!(
            role(Kind::Time, Ssh, "ticks_per_acquire", two),
            Role::Timed(Budget::Contended)
        );
        // Contended fairness and rwsem's per-thread operations gate.
        assert_eq!(
            role(Kind::Quantity, Native, "acquisitions_min", two),
            Role::Timed(Budget::Contended)
        );
        assert_eq!(
            role(Kind::Quantity, Native, "writer_ops_avg", two),
            Role::Timed(Budget::Contended)
        );
        assert_eq!(
            role(Kind::Quantity, Native, "writer_slowpath", two),
            Role::Timed(Budget::Contended)
        );
        // Shown: a maximum, a near-zero ratio, one thread's operations.
        for (metric, c, why) in [
            ("acquisitions_max", two, Shown::Maximum),
            ("reader_ops_max", two, Shown::Maximum),
            ("fairness_cv", two, Shown::Ratio),
            ("writer_fairness_cv", two, Shown::Ratio),
            ("reader_fairness_cv", two, Shown::Ratio),
            ("acquisitions_min", one, Shown::OneThread),
            ("canary_ticks_per_op", two, Shown::Canary),
        ] {
            assert_eq!(
                role(Kind::Quantity, Native, metric, c),
                Role::Advisory(Advisory::Shown(why))
            );
        }
        assert_eq!(
            role(Kind::Quantity, Qemu, "writer_ops_avg", two),
            Role::Advisory(Advisory::EmulatorTime)
        );
        // Lock events: by their rule where threads contend, shown alone.
        assert_eq!(
            role(Kind::Events, Native, "pending_per_acquire", two),
            Role::Events
        );
        assert_eq!(
            role(Kind::Events, Native, "pending_per_acquire", one),
            Role::Advisory(Advisory::Shown(Shown::NoContention))
        );
    }
}
