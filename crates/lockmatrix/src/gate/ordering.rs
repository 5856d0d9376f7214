//! The ordering gate: the two checks of memory ordering that no run under
//! QEMU on an x86 host can replace (its guests' loads and stores run in
//! the host's strong order, so a missing barrier never shows as a wrong
//! result, only as fewer instructions).
//!
//! - **The footprint** of every lock operation compares exactly with the
//!   reference: each operation's whole code (static, from the binary's
//!   disassembly) and each counted cell's executed path (the QEMU plugin's
//!   records), instruction by ordering instruction. Any difference is
//!   `ordering changed` and fails, unless a commit in the compared range
//!   acknowledges that lock ([`crate::acknowledge`]). A count cell whose
//!   executed footprint changed is never an improvement (nor a
//!   regression): its verdict is `ordering_changed`, gated by the change.
//! - **The model check** of the head's locks under the C11 model (loom):
//!   any violated model fails, with its trace; a check that could not run
//!   fails too (nothing may pass unchecked).

use crate::acknowledge::{self, Acknowledgement};
pub use crate::baseline::footprints::{CellFootprint, Footprints, OpFootprint};
use crate::cells::CellKey;
use crate::footprint::{self, Class};
use crate::model::Unmodelled;
use crate::name::Name;
use crate::protocol::case_label;
use crate::results::ModelRun;
use serde::Serialize;
use std::collections::BTreeMap;

/// Which view of the footprint changed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum View {
    /// The operation's whole code in the binary.
    Static,
    /// What one operation of a counted cell executed.
    Executed,
}

/// One ordering instruction whose count differs.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct InsnChange {
    pub class: Class,
    pub insn: String,
    pub before: f64,
    pub after: f64,
}

/// An operation (or counted cell) whose ordering footprint differs from
/// the reference's.
#[derive(Debug, Clone, Serialize)]
pub struct OrderingChange {
    pub target: Name,
    pub suite: Name,
    /// The lock or primitive.
    pub unit: String,
    /// `unlock` (static), or the counted cell `lock_unlock [lock=ticket
    /// threads=1]` (executed).
    pub what: String,
    pub view: View,
    pub changes: Vec<InsnChange>,
    /// The trailer that makes it intended; `None` fails the gate.
    pub acknowledged: Option<Acknowledgement>,
}

impl OrderingChange {
    /// `lwsync 1 -> 0, lwarx 1 -> 2`.
    pub fn describe_changes(&self) -> String {
        self.changes
            .iter()
            .map(|c| format!("{} {} -> {}", c.insn, num(c.before), num(c.after)))
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// `powerpc64le/spinlock ticket unlock (static): lwsync 1 -> 0`.
    pub fn line(&self) -> String {
        let what = match self.view {
            View::Static => format!("{} {} (static)", self.unit, self.what),
            View::Executed => format!("{} (executed)", self.what),
        };
        format!(
            "{}/{} {what}: {}",
            self.target,
            self.suite,
            self.describe_changes()
        )
    }
}

fn num(x: f64) -> String {
    if x.fract() == 0.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}

/// The footprint comparison of one suite run with its reference.
pub struct Compared {
    pub changes: Vec<OrderingChange>,
    /// Operations and counted cells compared.
    pub compared: usize,
    /// Count cells (`insns_per_op`) whose executed footprint changed.
    pub changed_cells: Vec<CellKey>,
}

/// Compares `head` with `reference`, instruction by instruction, for
/// every operation and counted cell both have; `acks` decide which
/// changes are intended.
pub fn compare(
    target: &Name,
    suite: &Name,
    head: &Footprints,
    reference: &Footprints,
    acks: &[Acknowledgement],
) -> Compared {
    let mut out = Compared {
        changes: Vec::new(),
        compared: 0,
        changed_cells: Vec::new(),
    };
    let mut change = |unit: String, what: String, view, changes: Vec<InsnChange>| {
        let acknowledged = acknowledge::covering(acks, &unit).cloned();
        out.changes.push(OrderingChange {
            target: target.clone(),
            suite: suite.clone(),
            unit,
            what,
            view,
            changes,
            acknowledged,
        });
    };
    let refs: BTreeMap<(&Name, &Name), &OpFootprint> = reference
        .ops
        .iter()
        .map(|o| ((&o.unit, &o.op), o))
        .collect();
    for op in &head.ops {
        let Some(r) = refs.get(&(&op.unit, &op.op)) else {
            continue;
        };
        out.compared += 1;
        let diff = footprint::changes(&r.entries, &op.entries);
        if !diff.is_empty() {
            let changes = diff
                .into_iter()
                .map(|c| InsnChange {
                    class: c.class,
                    insn: c.insn,
                    before: c.before.into(),
                    after: c.after.into(),
                })
                .collect();
            change(
                op.unit.to_string(),
                op.op.to_string(),
                View::Static,
                changes,
            );
        }
    }
    let cells: BTreeMap<CellKey, &CellFootprint> =
        reference.executed.iter().map(|c| (c.key(), c)).collect();
    for cell in &head.executed {
        let Some(r) = cells.get(&cell.key()) else {
            continue;
        };
        out.compared += 1;
        // Per-op counts are integers for a fixed path; a difference below
        // a thousandth of an instruction is rounding.
        let diff: Vec<InsnChange> = footprint::changes(&r.entries, &cell.entries)
            .into_iter()
            .filter(|c| (c.after - c.before).abs() > 1e-3)
            .map(|c| InsnChange {
                class: c.class,
                insn: c.insn,
                before: c.before,
                after: c.after,
            })
            .collect();
        if !diff.is_empty() {
            out.changed_cells.push(cell.key());
            let what = format!("{} [{}]", cell.bench, case_label(&cell.case));
            change(cell.unit(), what, View::Executed, diff);
        }
    }
    out
}

/// The model check's part of the gate.
#[derive(Debug, Clone, Default, Serialize)]
pub struct ModelGate {
    /// Whether the run model-checked its locks (its suites have models).
    pub ran: bool,
    /// Models that passed, and those violated (with their traces).
    pub passed: usize,
    pub violated: Vec<ModelViolation>,
    /// Why the models could not be checked at all: fails the gate.
    pub error: Option<String>,
    /// Locks deliberately not model-checked, and why.
    pub unmodelled: Vec<Unmodelled>,
    /// Locks checked, in order.
    pub locks: Vec<String>,
}

/// A model loom found a violating execution of.
#[derive(Debug, Clone, Serialize)]
pub struct ModelViolation {
    pub suite: Name,
    pub lock: Name,
    pub model: String,
    pub failure: String,
    /// Loom's trace, cut to the lines that matter (at most [`TRACE_LINES`]).
    pub trace: Vec<String>,
}

/// Lines of a failing trace the reports show.
pub const TRACE_LINES: usize = 12;

impl ModelGate {
    pub fn of(models: Option<&ModelRun>) -> ModelGate {
        let Some(m) = models else {
            return ModelGate::default();
        };
        let mut locks: Vec<String> = m
            .results
            .iter()
            .map(|r| format!("{}/{}", r.suite, r.lock))
            .collect();
        locks.dedup();
        ModelGate {
            ran: true,
            passed: m.results.iter().filter(|r| r.ok).count(),
            violated: m
                .results
                .iter()
                .filter(|r| !r.ok)
                .map(|r| ModelViolation {
                    suite: r.suite.clone(),
                    lock: r.lock.clone(),
                    model: r.model.clone(),
                    // Its first line: the rest of loom's message ends the trace.
                    failure: r
                        .failure
                        .as_deref()
                        .and_then(|f| f.lines().next())
                        .unwrap_or("violated")
                        .to_string(),
                    trace: r.trace.iter().take(TRACE_LINES).cloned().collect(),
                })
                .collect(),
            error: m.error.clone(),
            unmodelled: m.unmodelled.clone(),
            locks,
        }
    }

    pub fn failed(&self) -> bool {
        !self.violated.is_empty() || self.error.is_some()
    }

    /// `models: 14 of 14 passed (tas, ttas, ...)`, or what failed.
    pub fn line(&self) -> String {
        if !self.ran {
            return "models: not checked in this run (no selected suite has models)".into();
        }
        if let Some(e) = &self.error {
            return format!("models: NOT CHECKED: {e}");
        }
        let total = self.passed + self.violated.len();
        if self.violated.is_empty() {
            format!(
                "models: {total} of {total} passed under the C11 model (loom), {} locks",
                self.locks.len()
            )
        } else {
            let mut names: Vec<String> = self
                .violated
                .iter()
                .map(|v| format!("{}/{}", v.suite, v.lock))
                .collect();
            names.dedup();
            format!(
                "models: {} of {total} VIOLATED: {}",
                self.violated.len(),
                names.join(", ")
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::footprint::Entry;
    use crate::protocol::INSNS_PER_OP;
    use serde_json::Map;

    fn entries<N: Copy>(list: &[(Class, &str, N)]) -> Vec<Entry<N>> {
        list.iter()
            .map(|&(class, insn, count)| Entry {
                class,
                insn: insn.to_string(),
                count,
            })
            .collect()
    }

    fn op(unit: &str, op: &str, list: &[(Class, &str, u32)]) -> OpFootprint {
        OpFootprint {
            unit: unit.into(),
            op: op.into(),
            entries: entries(list),
        }
    }

    fn cell(lock: &str, list: &[(Class, &str, f64)]) -> CellFootprint {
        let mut case = Map::new();
        case.insert("lock".into(), lock.into());
        case.insert("threads".into(), 1.into());
        CellFootprint {
            bench: "lock_unlock".into(),
            case,
            entries: entries(list),
        }
    }

    fn release() -> Footprints {
        Footprints {
            ops: vec![
                op("ticket", "lock", &[(Class::AtomicRmw, "lwarx", 1)]),
                op("ticket", "unlock", &[(Class::FullBarrier, "lwsync", 1)]),
            ],
            executed: vec![cell(
                "ticket",
                &[
                    (Class::FullBarrier, "lwsync", 2.0),
                    (Class::AtomicRmw, "lwarx", 1.0),
                ],
            )],
        }
    }

    fn relaxed() -> Footprints {
        Footprints {
            ops: vec![
                op("ticket", "lock", &[(Class::AtomicRmw, "lwarx", 1)]),
                op("ticket", "unlock", &[]),
            ],
            executed: vec![cell("ticket", &[(Class::AtomicRmw, "lwarx", 1.0)])],
        }
    }

    #[test]
    fn a_lost_barrier_is_a_change_in_both_views_and_names_the_lock() {
        let c = compare(
            &"powerpc64le".into(),
            &"spinlock".into(),
            &relaxed(),
            &release(),
            &[],
        );
        assert_eq!(c.compared, 3);
        let lines: Vec<String> = c.changes.iter().map(OrderingChange::line).collect();
        assert_eq!(
            lines,
            [
                "powerpc64le/spinlock ticket unlock (static): lwsync 1 -> 0",
                "powerpc64le/spinlock lock_unlock [lock=ticket threads=1] (executed): lwsync 2 -> 0",
            ]
        );
        assert!(c.changes.iter().all(|c| c.acknowledged.is_none()));
        assert_eq!(c.changed_cells.len(), 1);
        assert_eq!(c.changed_cells[0].metric, INSNS_PER_OP);
    }

    #[test]
    fn the_same_footprint_changes_nothing_and_a_trailer_covers_only_its_lock() {
        let same = compare(&"x".into(), &"spinlock".into(), &release(), &release(), &[]);
        assert!(same.changes.is_empty() && same.changed_cells.is_empty());
        assert_eq!(same.compared, 3);
        let mcs = [Acknowledgement::parse("c1", "mcs on purpose")];
        let other = compare(
            &"x".into(),
            &"spinlock".into(),
            &relaxed(),
            &release(),
            &mcs,
        );
        assert!(other.changes.iter().all(|c| c.acknowledged.is_none()));
        let ticket = [Acknowledgement::parse("c2", "ticket weaker on purpose")];
        let acked = compare(
            &"x".into(),
            &"spinlock".into(),
            &relaxed(),
            &release(),
            &ticket,
        );
        assert!(acked
            .changes
            .iter()
            .all(|c| c.acknowledged.as_ref().is_some_and(|a| a.commit == "c2")));
    }

    #[test]
    fn an_operation_only_one_side_has_is_not_a_change() {
        let mut head = release();
        head.ops
            .push(op("mcs", "lock", &[(Class::OneWay, "ldar", 1)]));
        let c = compare(&"x".into(), &"s".into(), &head, &release(), &[]);
        assert!(c.changes.is_empty());
        assert_eq!(c.compared, 3);
    }

    #[test]
    fn footprints_round_trip_through_json() {
        let f = release();
        let text = serde_json::to_string(&f).unwrap();
        assert!(text.contains("\"static\""));
        let back: Footprints = serde_json::from_str(&text).unwrap();
        assert_eq!(back, f);
    }
}
