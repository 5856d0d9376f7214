//! Seed 001 (Zijlstra, "qspinlock vs ticket"): time spent in lock() +
//! unlock() per acquisition, threads down, one column per lock; then, with
//! the same rows, what the acquisitions did (each lock's events per
//! acquisition: qspinlock's pending and queued paths among them) and how
//! evenly the threads shared the lock (lockhammer's lasom).

use super::cells::{cell, fmt};
use super::events;
use crate::report::table::render as columns;
use crate::results::Run;
use serde_json::Value;

/// One target's scaling table.
pub struct Scaling {
    pub target: String,
    pub runner: String,
    /// Locks in the order the suite ran them.
    pub locks: Vec<String>,
    /// Thread counts, ascending.
    pub threads: Vec<u64>,
    /// `ns[i][j]`: median ns per acquisition at `threads[i]` with `locks[j]`.
    pub ns: Vec<Vec<Option<f64>>>,
    /// The locks' events, `(lock, metric)`, in the order the suite printed
    /// them, and `events_at[i][k]`: the median of `events[k]` per
    /// acquisition at `threads[i]`.
    pub events: Vec<(String, String)>,
    pub events_at: Vec<Vec<Option<f64>>>,
    /// `lasom[i][j]`: the median lasom at `threads[i]` with `locks[j]`.
    pub lasom: Vec<Vec<Option<f64>>>,
}

/// Every target that ran `lock_unlock`, in run order.
pub fn tables(run: &Run) -> Vec<Scaling> {
    let mut out = Vec::new();
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
        let at = |n: u64, lock: &str, metric: &str| {
            let case = [("lock", Value::from(lock)), ("threads", Value::from(n))];
            cell(s, "lock_unlock", &case, metric)
        };
        let per_lock = |metric: &str| -> Vec<Vec<Option<f64>>> {
            let row = |n: &u64| locks.iter().map(|l| at(*n, l, metric)).collect();
            threads.iter().map(row).collect()
        };
        let events = events::columns(s, "lock_unlock", events::is_event);
        let events_at = threads
            .iter()
            .map(|n| events.iter().map(|(l, m)| at(*n, l, m)).collect())
            .collect();
        out.push(Scaling {
            target: t.name.to_string(),
            runner: t.runner.to_string(),
            ns: per_lock("ticks_per_acquire"),
            lasom: per_lock("fairness_cv"),
            locks,
            threads,
            events,
            events_at,
        });
    }
    out
}

pub fn render(run: &Run) -> String {
    let mut out = String::new();
    for t in tables(run) {
        let mut rows = vec![std::iter::once("threads".to_string())
            .chain(t.locks.iter().cloned())
            .collect::<Vec<_>>()];
        for (n, values) in t.threads.iter().zip(&t.ns) {
            let mut row = vec![format!("{n}:")];
            row.extend(values.iter().map(|v| fmt(*v, 1)));
            rows.push(row);
        }
        out.push_str(&format!(
            "Seed 001: ns in lock()+unlock() per acquisition, {} ({})\n{}\n",
            t.target,
            t.runner,
            columns(&rows)
        ));
        if !t.events.is_empty() {
            let mut rows = vec![std::iter::once("threads".to_string())
                .chain(
                    t.events
                        .iter()
                        .map(|(l, m)| format!("{l} {}", events::label(m))),
                )
                .collect::<Vec<_>>()];
            for (n, values) in t.threads.iter().zip(&t.events_at) {
                let mut row = vec![format!("{n}:")];
                row.extend(values.iter().map(|v| events::fmt(*v)));
                rows.push(row);
            }
            out.push_str(&format!(
                "Seed 001: lock events per acquisition, {} ({})\n{}\n",
                t.target,
                t.runner,
                columns(&rows)
            ));
        }
        if t.lasom.iter().flatten().any(Option::is_some) {
            let mut rows = vec![std::iter::once("threads".to_string())
                .chain(t.locks.iter().cloned())
                .collect::<Vec<_>>()];
            for (n, values) in t.threads.iter().zip(&t.lasom) {
                let mut row = vec![format!("{n}:")];
                row.extend(values.iter().map(|v| events::fmt(*v)));
                rows.push(row);
            }
            out.push_str(&format!(
                "Seed 001: lasom (per-thread acquisitions' stddev / mean), {} ({})\n{}\n",
                t.target,
                t.runner,
                columns(&rows)
            ));
        }
    }
    out
}
