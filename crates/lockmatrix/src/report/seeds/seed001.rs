//! Seed 001 (Zijlstra, "qspinlock vs ticket"): time spent in lock() +
//! unlock() per acquisition, threads down, one column per lock.

use super::{cell, fmt};
use crate::report::table::render as columns;
use crate::results::Run;
use serde_json::Value;

pub fn render(run: &Run) -> String {
    let mut out = String::new();
    for t in &run.targets {
        let Some(s) = t.suites.iter().find(|s| s.suite == "spinlock") else {
            continue;
        };
        let mut locks: Vec<String> = Vec::new();
        let mut threads: Vec<u64> = Vec::new();
        for x in s.samples.iter().filter(|x| x.bench == "lock_unlock") {
            if let Some(l) = x.case.get("lock").and_then(Value::as_str) {
                if !locks.iter().any(|k| k == l) {
                    locks.push(l.to_string());
                }
            }
            if let Some(n) = x.case.get("threads").and_then(Value::as_u64) {
                if !threads.contains(&n) {
                    threads.push(n);
                }
            }
        }
        if locks.is_empty() {
            continue;
        }
        threads.sort_unstable();
        let mut rows = vec![std::iter::once("threads".to_string())
            .chain(locks.iter().cloned())
            .collect::<Vec<_>>()];
        for n in &threads {
            let mut row = vec![format!("{n}:")];
            for l in &locks {
                let case = [
                    ("lock", Value::from(l.as_str())),
                    ("threads", Value::from(*n)),
                ];
                row.push(fmt(cell(s, "lock_unlock", &case, "ticks_per_acquire"), 1));
            }
            rows.push(row);
        }
        out.push_str(&format!(
            "Seed 001: ns in lock()+unlock() per acquisition, {} ({})\n{}\n",
            t.name,
            t.runner,
            columns(&rows)
        ));
    }
    out
}
