//! Every lock operation's static ordering footprint as a table per suite:
//! a row per (unit, op), a column per target, each cell its counts by
//! class and its instructions. The terminal table and the HTML section
//! both draw this one.

use crate::footprint::Class;
use crate::results::Run;
use std::collections::BTreeMap;

/// One operation's footprint on one target.
#[derive(Debug, Clone, PartialEq)]
pub struct Cell {
    pub full_barriers: u32,
    pub one_way: u32,
    pub atomic_rmw: u32,
    /// `2 lwsync`, `1 lwarx`, ... in class and name order.
    pub insns: Vec<String>,
}

impl Cell {
    /// `1/0/2`: full barriers / one-way / atomic RMW.
    pub fn counts(&self) -> String {
        format!(
            "{}/{}/{}",
            self.full_barriers, self.one_way, self.atomic_rmw
        )
    }
}

/// One suite's table.
pub struct SuiteTable<'a> {
    pub suite: &'a str,
    /// The targets that ran the suite, in run order.
    pub targets: Vec<&'a str>,
    /// (unit, op) -> target -> cell.
    pub rows: BTreeMap<(&'a str, &'a str), BTreeMap<&'a str, Cell>>,
}

/// A table per suite that has static footprints, in run order.
pub fn tables(run: &Run) -> Vec<SuiteTable<'_>> {
    let mut suites: Vec<&str> = Vec::new();
    for s in run.targets.iter().flat_map(|t| &t.suites) {
        if !s.static_footprint.is_empty() && !suites.contains(&s.suite.as_str()) {
            suites.push(&s.suite);
        }
    }
    suites
        .into_iter()
        .map(|suite| {
            let mut table = SuiteTable {
                suite,
                targets: Vec::new(),
                rows: BTreeMap::new(),
            };
            for t in &run.targets {
                for s in t.suites.iter().filter(|s| s.suite == suite) {
                    if !table.targets.contains(&t.name.as_str()) {
                        table.targets.push(&t.name);
                    }
                    for op in &s.static_footprint {
                        let n = |c: Class| -> u32 {
                            op.footprint
                                .entries
                                .iter()
                                .filter(|e| e.class == c)
                                .map(|e| e.count)
                                .sum()
                        };
                        let cell = Cell {
                            full_barriers: n(Class::FullBarrier),
                            one_way: n(Class::OneWay),
                            atomic_rmw: n(Class::AtomicRmw),
                            insns: op
                                .footprint
                                .entries
                                .iter()
                                .map(|e| format!("{} {}", e.count, e.insn))
                                .collect(),
                        };
                        table
                            .rows
                            .entry((&op.unit, &op.op))
                            .or_default()
                            .insert(&t.name, cell);
                    }
                }
            }
            table
        })
        .collect()
}

/// The tables in Markdown, one `(summary, table)` per suite, for a pull
/// request's comment: every datum in a code span.
pub fn markdown(run: &Run) -> Vec<(String, String)> {
    let md = crate::escape::markdown;
    tables(run)
        .into_iter()
        .map(|t| {
            let mut body = format!(
                "| unit | op | {} |\n",
                t.targets
                    .iter()
                    .map(|x| md(x))
                    .collect::<Vec<_>>()
                    .join(" | ")
            );
            body.push_str(&format!("|---|---|{}\n", "---:|".repeat(t.targets.len())));
            for ((unit, op), cells) in &t.rows {
                let counts: Vec<String> = t
                    .targets
                    .iter()
                    .map(|x| cells.get(x).map_or_else(String::new, Cell::counts))
                    .collect();
                body.push_str(&format!(
                    "| {} | {} | {} |\n",
                    md(unit),
                    md(op),
                    counts.join(" | ")
                ));
            }
            (
                format!(
                    "Ordering footprint: {} (full barriers/one-way/atomic RMW per operation)",
                    md(t.suite)
                ),
                body,
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::footprint::{Entry, StaticFootprint};

    fn op(unit: &str, op: &str, entries: &[(Class, &str, u32)]) -> crate::results::StaticOp {
        crate::results::StaticOp {
            unit: unit.into(),
            op: op.into(),
            footprint: StaticFootprint {
                entries: entries
                    .iter()
                    .map(|&(class, insn, count)| Entry {
                        class,
                        insn: insn.into(),
                        count,
                    })
                    .collect(),
                followed: vec![],
                stopped: vec![],
                indirect_calls: 0,
                insns: 0,
            },
        }
    }

    /// One row per operation, one column per target that ran the suite,
    /// counts by class and the instructions; the Markdown carries the
    /// same numbers.
    #[test]
    fn a_table_per_suite_with_counts_by_class_per_target() {
        let mut run = crate::report::tests::sample_run();
        run.targets[0].suites[0].static_footprint = vec![op("ticket", "unlock", &[])];
        run.targets[1].suites[0].static_footprint = vec![op(
            "ticket",
            "unlock",
            &[
                (Class::FullBarrier, "lwsync", 1),
                (Class::AtomicRmw, "lwarx", 2),
            ],
        )];
        let tables = tables(&run);
        assert_eq!(tables.len(), 1);
        let t = &tables[0];
        assert_eq!(
            t.targets,
            [run.targets[0].name.as_str(), run.targets[1].name.as_str()]
        );
        let row = &t.rows[&("ticket", "unlock")];
        assert_eq!(row[t.targets[0]].counts(), "0/0/0");
        let weak = &row[t.targets[1]];
        assert_eq!(weak.counts(), "1/0/2");
        assert_eq!(weak.insns, ["1 lwsync", "2 lwarx"]);
        let md = markdown(&run);
        assert!(
            md[0].1.contains("| `ticket` | `unlock` | 0/0/0 | 1/0/2 |"),
            "{}",
            md[0].1
        );
    }
}
