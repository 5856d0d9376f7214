//! What one invocation of a pair runs once a look has decided some cells:
//! one lock (`--lock`), and, where both sides' suites take it, only that
//! lock's undecided cells: exactly (`--cell BENCH:KEY=V,..`, one each), or
//! in older builds the benchmarks and case values they have (`--bench`,
//! `--case KEY=V,..`, a cross product). A contended rwsem cell still
//! undecided at 40 pairs then costs its own 0.1 s a pair instead of its
//! lock's whole second.

use crate::family::Undecided;
use crate::name::Name;
use serde_json::{Map, Value};
use std::collections::{BTreeMap, BTreeSet};

/// One invocation's narrowing. Empty sets narrow nothing.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Unit {
    pub lock: Option<Name>,
    pub benches: BTreeSet<Name>,
    /// Per case key (other than `lock`), the values of the lock's
    /// undecided cells. The harness runs a case only when each key it has
    /// holds one of the values: a cross product, so a case between two
    /// undecided ones may run too, which costs time and never a verdict.
    pub cases: BTreeMap<String, BTreeSet<String>>,
    /// The lock's undecided cells exactly, as `--cell` takes them
    /// (`BENCH:KEY=V,..`); when set, they narrow instead of `cases`.
    pub cells: BTreeSet<String>,
}

/// How finely a suite's invocation can be narrowed, as its env record
/// says: an older build takes `--lock` alone, then `--case`, now `--cell`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Narrowing {
    Locks,
    Cases,
    Cells,
}

impl Narrowing {
    /// What a suite run whose env record is `env` takes.
    pub fn of(env: Option<&crate::protocol::Env>) -> Narrowing {
        match env {
            Some(e) if e.narrows_cells => Narrowing::Cells,
            Some(e) if e.narrows_cases => Narrowing::Cases,
            _ => Narrowing::Locks,
        }
    }
}

impl Unit {
    /// The suite's flags for this unit.
    pub fn args(&self) -> Vec<String> {
        let mut args = Vec::new();
        if let Some(l) = &self.lock {
            args.extend(["--lock".to_string(), l.to_string()]);
        }
        if !self.benches.is_empty() {
            let benches: Vec<&str> = self.benches.iter().map(|b| b.as_str()).collect();
            args.extend(["--bench".to_string(), benches.join(",")]);
        }
        if !self.cells.is_empty() {
            for cell in &self.cells {
                args.extend(["--cell".to_string(), cell.clone()]);
            }
            return args;
        }
        for (key, values) in &self.cases {
            let values: Vec<&str> = values.iter().map(String::as_str).collect();
            args.extend(["--case".to_string(), format!("{key}={}", values.join(","))]);
        }
        args
    }
}

/// How the next pair runs the `undecided` cells. Per lock where every one
/// names its `lock` (the harness's `--lock`): each lock's pair is its own
/// two invocations, back to back, because what moves a cell's time on a
/// shared VM drifts over a second or so, and a lock measured 0.1 s after
/// its twin instead of 0.5 s (the whole family between) spreads about a
/// third less per pair (docs/gate.md, "Pull requests"). Otherwise the
/// suite whole, in one invocation per side. Where both sides' suites
/// narrow further (`narrowing`), each lock's invocation runs only its
/// undecided cells (`Cells`), or their benchmarks and case values
/// (`Cases`).
pub fn units(undecided: &[Undecided], narrowing: Narrowing) -> Vec<Unit> {
    let locks: Option<BTreeSet<Name>> = undecided.iter().map(|u| lock_of(&u.case)).collect();
    let locks = match locks {
        Some(l) if !l.is_empty() => l,
        _ if undecided.is_empty() => return Vec::new(),
        _ => return vec![Unit::default()],
    };
    locks
        .into_iter()
        .map(|lock| {
            let mut unit = Unit {
                lock: Some(lock.clone()),
                ..Unit::default()
            };
            if narrowing == Narrowing::Locks {
                return unit;
            }
            let mine = || {
                undecided
                    .iter()
                    .filter(|u| lock_of(&u.case).as_ref() == Some(&lock))
            };
            let exact: Option<BTreeSet<String>> = mine().map(cell_flag).collect();
            if let (Narrowing::Cells, Some(cells)) = (narrowing, exact) {
                unit.benches = mine().map(|u| u.bench.clone()).collect();
                unit.cells = cells;
                return unit;
            }
            let mine = mine();
            let mut skip = BTreeSet::new();
            for u in mine {
                unit.benches.insert(u.bench.clone());
                for (key, value) in u.case.iter().filter(|(k, _)| *k != "lock") {
                    match shown(value).filter(|_| flag_safe(key)) {
                        Some(v) => {
                            unit.cases.entry(key.clone()).or_default().insert(v);
                        }
                        None => {
                            skip.insert(key.clone());
                        }
                    }
                }
            }
            // A key with a value the harness could not match as printed
            // narrows nothing.
            unit.cases.retain(|k, _| !skip.contains(k));
            unit
        })
        .collect()
}

/// `u` as `--cell` takes it, `BENCH:KEY=V,..` (every key but `lock`,
/// which `--lock` names), if the harness can match each value as printed.
fn cell_flag(u: &Undecided) -> Option<String> {
    let keys: Option<Vec<String>> = (u.case.iter())
        .filter(|(k, _)| *k != "lock")
        .map(|(k, v)| {
            shown(v)
                .filter(|_| flag_safe(k))
                .map(|v| format!("{k}={v}"))
        })
        .collect();
    let keys = keys?;
    (!keys.is_empty() && !u.bench.as_str().contains(':'))
        .then(|| format!("{}:{}", u.bench, keys.join(",")))
}

fn lock_of(case: &Map<String, Value>) -> Option<Name> {
    case.get("lock")
        .and_then(Value::as_str)
        .and_then(|l| Name::parse(l).ok())
}

/// A case value as the harness prints it, for `--case`: a string or an
/// integer, and never one with the flag's separators.
fn shown(v: &Value) -> Option<String> {
    let s = match v {
        Value::String(s) => s.clone(),
        Value::Number(n) if n.is_i64() || n.is_u64() => n.to_string(),
        _ => return None,
    };
    flag_safe(&s).then_some(s)
}

fn flag_safe(s: &str) -> bool {
    !s.is_empty() && !s.contains([',', '=']) && !s.starts_with('-')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::name::known;

    fn cell(bench: &str, pairs: &[(&str, Value)]) -> Undecided {
        Undecided {
            bench: known(bench),
            case: pairs
                .iter()
                .map(|(k, v)| (k.to_string(), v.clone()))
                .collect(),
        }
    }

    #[test]
    fn each_lock_is_its_own_unit_and_narrows_to_its_undecided_cells() {
        let u = [
            cell(
                "lock_unlock",
                &[("lock", "ticket".into()), ("threads", 2.into())],
            ),
            cell(
                "stress_s1",
                &[("lock", "ticket".into()), ("threads", 2.into())],
            ),
            cell(
                "lock_unlock",
                &[("lock", "mcs".into()), ("threads", 1.into())],
            ),
        ];
        let units = units(&u, Narrowing::Cases);
        let args: Vec<Vec<String>> = units.iter().map(Unit::args).collect();
        assert_eq!(
            args,
            [
                vec![
                    "--lock",
                    "mcs",
                    "--bench",
                    "lock_unlock",
                    "--case",
                    "threads=1"
                ],
                vec![
                    "--lock",
                    "ticket",
                    "--bench",
                    "lock_unlock,stress_s1",
                    "--case",
                    "threads=2"
                ],
            ]
        );
        // A suite that does not take `--case` runs whole locks.
        let whole: Vec<Vec<String>> = super::units(&u, Narrowing::Locks)
            .iter()
            .map(Unit::args)
            .collect();
        assert_eq!(whole, [vec!["--lock", "mcs"], vec!["--lock", "ticket"]]);
    }

    #[test]
    fn rwsem_cells_narrow_to_their_loads_and_mixes() {
        let c = |mix: &str, load: &str| {
            cell(
                "rw_mix",
                &[
                    ("lock", "linux_rwsem".into()),
                    ("mix", mix.into()),
                    ("readers", 1.into()),
                    ("writers", 1.into()),
                    ("cs_load", load.into()),
                ],
            )
        };
        let units = units(&[c("half", "sleep1us"), c("half", "10")], Narrowing::Cases);
        assert_eq!(
            units[0].args(),
            [
                "--lock",
                "linux_rwsem",
                "--bench",
                "rw_mix",
                "--case",
                "cs_load=10,sleep1us",
                "--case",
                "mix=half",
                "--case",
                "readers=1",
                "--case",
                "writers=1"
            ]
        );
    }

    #[test]
    fn cells_run_exactly_where_both_sides_take_cell() {
        let c = |mix: &str, load: &str, writers: i64| {
            cell(
                "rw_mix",
                &[
                    ("lock", "fair_rwspin".into()),
                    ("mix", mix.into()),
                    ("writers", writers.into()),
                    ("cs_load", load.into()),
                ],
            )
        };
        let u = [c("half", "10", 1), c("all_writers", "1", 2)];
        assert_eq!(
            units(&u, Narrowing::Cells)[0].args(),
            [
                "--lock",
                "fair_rwspin",
                "--bench",
                "rw_mix",
                "--cell",
                "rw_mix:cs_load=1,mix=all_writers,writers=2",
                "--cell",
                "rw_mix:cs_load=10,mix=half,writers=1"
            ]
        );
        // The cross product an older build gets runs four cells for two.
        let cases = units(&u, Narrowing::Cases)[0].args();
        assert!(cases.contains(&"cs_load=1,10".to_string()), "{cases:?}");
        // A value `--cell` cannot carry narrows that lock by `--case`.
        let odd = cell(
            "rw_mix",
            &[
                ("lock", "x".into()),
                ("ratio", 0.5.into()),
                ("mix", "half".into()),
            ],
        );
        assert_eq!(
            units(&[odd], Narrowing::Cells)[0].args(),
            ["--lock", "x", "--bench", "rw_mix", "--case", "mix=half"]
        );
    }

    #[test]
    fn values_the_harness_could_not_match_narrow_nothing() {
        let u = [cell(
            "b",
            &[
                ("lock", "l".into()),
                ("ratio", 0.5.into()),
                ("tag", "a,b".into()),
            ],
        )];
        for narrowing in [Narrowing::Cases, Narrowing::Cells] {
            assert_eq!(
                units(&u, narrowing)[0].args(),
                ["--lock", "l", "--bench", "b"]
            );
        }
    }

    #[test]
    fn cells_that_name_no_lock_run_the_suite_whole() {
        let fence = cell("single_thread", &[("op", "fence".into())]);
        let ticket = cell("lock_unlock", &[("lock", "ticket".into())]);
        assert_eq!(
            units(std::slice::from_ref(&fence), Narrowing::Cells),
            [Unit::default()]
        );
        assert_eq!(units(&[ticket, fence], Narrowing::Cells), [Unit::default()]);
        assert!(units(&[], Narrowing::Cells).is_empty());
        assert!(Unit::default().args().is_empty());
    }
}
