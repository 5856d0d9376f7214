//! What one invocation of a pair runs once a look has decided some cells:
//! one lock (`--lock`), and, where both sides' suites take it, only the
//! benchmarks and case values of that lock's undecided cells (`--bench`,
//! `--case KEY=V,..`). A contended rwsem cell still undecided at 40 pairs
//! then costs its own 0.1 s a pair instead of its lock's whole second.

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
/// suite whole, in one invocation per side. With `by_case` (both sides'
/// suites said `narrows_cases`), each lock's invocation runs only its
/// undecided cells' benchmarks and case values.
pub fn units(undecided: &[Undecided], by_case: bool) -> Vec<Unit> {
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
            if !by_case {
                return unit;
            }
            let mine = undecided
                .iter()
                .filter(|u| lock_of(&u.case).as_ref() == Some(&lock));
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
        let units = units(&u, true);
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
        let whole: Vec<Vec<String>> = super::units(&u, false).iter().map(Unit::args).collect();
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
        let units = units(&[c("half", "sleep1us"), c("half", "10")], true);
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
    fn values_the_harness_could_not_match_narrow_nothing() {
        let u = [cell(
            "b",
            &[
                ("lock", "l".into()),
                ("ratio", 0.5.into()),
                ("tag", "a,b".into()),
            ],
        )];
        assert_eq!(units(&u, true)[0].args(), ["--lock", "l", "--bench", "b"]);
    }

    #[test]
    fn cells_that_name_no_lock_run_the_suite_whole() {
        let fence = cell("single_thread", &[("op", "fence".into())]);
        let ticket = cell("lock_unlock", &[("lock", "ticket".into())]);
        assert_eq!(units(std::slice::from_ref(&fence), true), [Unit::default()]);
        assert_eq!(units(&[ticket, fence], true), [Unit::default()]);
        assert!(units(&[], true).is_empty());
        assert!(Unit::default().args().is_empty());
    }
}
