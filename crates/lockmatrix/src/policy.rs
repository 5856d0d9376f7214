//! What gates, and how: every rule that decides whether a cell can fail the
//! build lives here, and every other module (the gate, the plan, the
//! reports, the validation) asks this one.
//!
//! | what | where | how it gates |
//! |---|---|---|
//! | correctness checks | every target, QEMU included | any failure fails |
//! | instruction counts (`Kind::Instructions`) | counted targets: QEMU targets, and native or ssh targets with `counted_under` | exactly: more than the reference (beyond the target's `insns_tolerance`) is a regression |
//! | timings of a suite's timing family (the sample's `gating` flag) | real hardware: native and ssh runners | statistically, each cell cleared, regression or inconclusive (signed-rank pairs looked at every 10 against `--against`, Mann-Whitney against stored baselines: `crate::family`) |
//! | every other timing, and other quantities | real hardware | advisory: shown with its ratio, never fails |
//! | every timing | QEMU | advisory: emulator time is not the guest CPU's |
//!
//! Why: QEMU runs the guest's code at the emulator's speed, so its times say
//! nothing about the guest CPU, while its instruction counts repeat exactly;
//! a suite declares as its family only the cells quiet enough to tell a
//! slowdown in the rounds CI affords (see docs/gate.md).

use crate::config::{RunnerKind, Target};
use crate::protocol::Kind;

/// Rounds per side on real hardware with `--against` (quick, full): the
/// last look of the sequential test. A cell stops at the look that
/// decides it (10-60 pairs in today's A/A job); at 80 pairs a +5%
/// slowdown of a 1-thread cell is caught 47-95% of the time, at 160
/// 89-98% (resampled; 160 is not validated end to end yet). Chosen by
/// `validate-gate` over 10 recordings of 80 pairs on a 2-vCPU VM
/// (`validation/2026-12-03-perlock-b/`): see docs/gate.md, "Measured:
/// false alarms and power".
pub const AB_ROUNDS: (u32, u32) = (80, 100);

/// How one cell of a run is judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Compared exactly: instruction counts.
    Exact,
    /// In the timing family: can fail the gate on its statistics.
    Family,
    /// Shown with its ratio, never fails.
    Advisory(Advisory),
}

/// Why a cell is advisory.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Advisory {
    /// A time measured under QEMU: the emulator's, not the guest CPU's.
    EmulatorTime,
    /// Not in its suite's timing family.
    OutsideFamily,
}

impl Advisory {
    pub fn note(self) -> &'static str {
        match self {
            Advisory::EmulatorTime => "QEMU timing (emulator time): advisory",
            Advisory::OutsideFamily => "not in the suite's timing family: advisory",
        }
    }
}

/// The role of a cell of kind `kind` on `runner`, in its suite's timing
/// family or not (`gating`).
pub fn role(kind: Kind, runner: RunnerKind, gating: bool) -> Role {
    if kind.exact() {
        Role::Exact
    } else if times_are_advisory(runner) {
        Role::Advisory(Advisory::EmulatorTime)
    } else if gating {
        Role::Family
    } else {
        Role::Advisory(Advisory::OutsideFamily)
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
        for runner in [Native, Qemu, Ssh] {
            assert_eq!(role(Kind::Instructions, runner, false), Role::Exact);
        }
        assert_eq!(
            role(Kind::Time, Qemu, true),
            Role::Advisory(Advisory::EmulatorTime)
        );
        assert_eq!(role(Kind::Time, Native, true), Role::Family);
        assert_eq!(role(Kind::Time, Ssh, true), Role::Family);
        assert_eq!(
            role(Kind::Time, Native, false),
            Role::Advisory(Advisory::OutsideFamily)
        );
        assert_eq!(
            role(Kind::Quantity, Qemu, true),
            Role::Advisory(Advisory::EmulatorTime)
        );
    }
}
