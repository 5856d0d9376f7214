//! Seed 003 (Raghavendra, paravirt spinlock stress): total time of a run of
//! S1 (counter in the lock) and S2 (work outside, variable work inside),
//! mean (std) over runs, and % improvement against the reference lock;
//! with each lock's fairness over the window every thread ran (lasom) and
//! its lock events per acquisition.

use super::cells::cell;
use super::events;
use crate::report::table::render as columns;
use crate::results::{Run, SuiteRun};
use serde_json::Value;

/// The lock every other lock is compared with: the ticket lock, the
/// baseline "A" of the seed (a plain ticket spinlock kernel).
pub const REFERENCE: &str = "ticket";

/// The two scenarios: (bench, title).
pub const SCENARIOS: [(&str, &str); 2] = [
    ("stress_s1", "S1: plain counter"),
    ("stress_s2", "S2: work outside + variable work inside"),
];

/// One lock's runs of one scenario.
pub struct Stress {
    pub lock: String,
    /// Mean and sample standard deviation of the total time, in ms.
    pub mean_ms: f64,
    pub std_ms: f64,
    /// % less time than [`REFERENCE`] (positive: faster).
    pub gain: Option<f64>,
    /// Median lasom of the per-thread acquisitions while every thread ran.
    pub lasom: Option<f64>,
    /// The lock's events: `(metric, median per acquisition)`, in the order
    /// the suite printed them.
    pub events: Vec<(String, Option<f64>)>,
}

/// One target's table of one scenario.
pub struct Table {
    pub target: String,
    pub runner: String,
    pub bench: &'static str,
    pub title: &'static str,
    pub rows: Vec<Stress>,
}

/// Mean and sample standard deviation of a run's total times, in ms.
fn mean_std(s: &SuiteRun, bench: &str, lock: &str) -> Option<(f64, f64)> {
    let hz = s.env.as_ref().map_or(0.0, |e| e.timer_hz);
    let v: Vec<f64> = s
        .samples
        .iter()
        .filter(|x| {
            x.bench == bench
                && x.metric == "total_ticks"
                && x.case.get("lock").and_then(Value::as_str) == Some(lock)
        })
        .filter_map(|x| x.value)
        .map(|ticks| {
            if x_is_ns(s) {
                ticks / 1e6
            } else {
                ticks / hz * 1e3
            }
        })
        .collect();
    if v.is_empty() {
        return None;
    }
    let mean = v.iter().sum::<f64>() / v.len() as f64;
    let var = if v.len() > 1 {
        v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (v.len() - 1) as f64
    } else {
        0.0
    };
    Some((mean, var.sqrt()))
}

fn x_is_ns(s: &SuiteRun) -> bool {
    s.env.as_ref().is_some_and(|e| e.timer_unit == "ns")
}

/// Per target, per scenario it ran, the locks' rows, in run order.
pub fn tables(run: &Run) -> Vec<Table> {
    let mut out = Vec::new();
    for t in &run.targets {
        let Some(s) = t.suites.iter().find(|s| s.suite == "spinlock") else {
            continue;
        };
        for (bench, title) in SCENARIOS {
            let mut locks: Vec<&str> = Vec::new();
            for x in s.samples.iter().filter(|x| x.bench == bench) {
                if let Some(l) = x.case.get("lock").and_then(Value::as_str) {
                    if !locks.contains(&l) {
                        locks.push(l);
                    }
                }
            }
            if locks.is_empty() {
                continue;
            }
            let reference = mean_std(s, bench, REFERENCE).map(|(m, _)| m);
            let event_columns = events::columns(s, bench, events::is_event);
            let rows = locks
                .into_iter()
                .filter_map(|l| {
                    let (mean_ms, std_ms) = mean_std(s, bench, l)?;
                    let case = [("lock", Value::from(l))];
                    Some(Stress {
                        lock: l.to_string(),
                        mean_ms,
                        std_ms,
                        gain: reference
                            .filter(|r| *r > 0.0)
                            .map(|r| (r - mean_ms) / r * 100.0),
                        lasom: cell(s, bench, &case, "fairness_cv"),
                        events: event_columns
                            .iter()
                            .filter(|(lock, _)| lock == l)
                            .map(|(_, m)| (m.clone(), cell(s, bench, &case, m)))
                            .collect(),
                    })
                })
                .collect();
            out.push(Table {
                target: t.name.to_string(),
                runner: t.runner.to_string(),
                bench,
                title,
                rows,
            });
        }
    }
    out
}

pub fn render(run: &Run) -> String {
    let mut out = String::new();
    for t in tables(run) {
        let mut rows = vec![[
            "lock",
            "total ms (std)",
            "% improvement w.r.t. ticket",
            "lasom",
            "lock events per acquisition",
        ]
        .map(String::from)
        .to_vec()];
        for r in &t.rows {
            let gain = r.gain.map_or("-".into(), |g| format!("{g:+.2}"));
            rows.push(vec![
                r.lock.clone(),
                format!("{:.3} ({:.3})", r.mean_ms, r.std_ms),
                gain,
                events::fmt(r.lasom),
                events_text(&r.events),
            ]);
        }
        out.push_str(&format!(
            "Seed 003: {}, {} ({})\n{}\n",
            t.title,
            t.target,
            t.runner,
            columns(&rows)
        ));
    }
    out
}

/// A lock's events in one cell: `pending 0.412, queued 0.020`, or `-`.
pub fn events_text(events: &[(String, Option<f64>)]) -> String {
    if events.is_empty() {
        return "-".into();
    }
    let each: Vec<String> = events
        .iter()
        .map(|(m, v)| format!("{} {}", events::label(m), events::fmt(*v)))
        .collect();
    each.join(", ")
}
