//! The contention model's part of the gate: every metric of every run of
//! the model (lock, workload, machine, vCPU count) compared exactly with
//! the reference's (the base revision's model, or `baselines/contention.json`).
//!
//! The numbers are the same on every run and host, so there is no noise
//! to allow for: a metric worse than the reference's fails, naming the
//! lock, the vCPU count, the metric and the line whose misses grew most;
//! a better one is shown as changed and passes (`baseline update` records
//! it). A run that failed (a deadlock, exclusion broken) fails; a model
//! that could not run at all fails too (nothing passes unchecked), and
//! without a reference nothing is compared and the line says so.

use crate::contention::{ContentionRun, HotLine, Record, Uncovered};
use serde::Serialize;
use std::collections::BTreeMap;

/// Which way a metric is better.
fn lower_is_better(metric: &str) -> Option<bool> {
    match metric {
        "acquisitions" => Some(false),
        m if m.ends_with("acq_min") || m.ends_with("acq_avg") => Some(false),
        m if m.ends_with("acq_max") => None,
        _ => Some(true),
    }
}

/// One metric that moved.
#[derive(Debug, Clone, Serialize)]
pub struct Change {
    /// `spinlock/qspinlock lock_unlock x86 8 cpus`.
    pub run: String,
    pub lock: String,
    pub cpus: u32,
    pub metric: String,
    pub reference: Option<f64>,
    pub head: Option<f64>,
    /// The line whose misses per acquisition grew most, and where.
    pub hotter: Option<String>,
}

impl Change {
    pub fn line(&self) -> String {
        let v = |x: Option<f64>| x.map_or("none".to_string(), |x| format!("{x}"));
        let mut s = format!(
            "{}: {} {} -> {}",
            self.run,
            self.metric,
            v(self.reference),
            v(self.head)
        );
        if let Some(h) = &self.hotter {
            s.push_str(&format!("; hotter: {h}"));
        }
        s
    }
}

#[derive(Debug, Clone, Default, Serialize)]
pub struct ContentionGate {
    /// Whether the run ran the model.
    pub ran: bool,
    /// Why it could not: fails the gate.
    pub error: Option<String>,
    /// What it was compared with (`None`: nothing to compare with).
    pub reference: Option<String>,
    pub runs: usize,
    pub compared: usize,
    /// Runs that failed in the head (deadlock, exclusion).
    pub failed_runs: Vec<String>,
    pub worse: Vec<Change>,
    pub better: Vec<Change>,
    /// Metrics with no better side (`acq_max`) that moved: shown.
    pub moved: Vec<Change>,
    /// Runs in only one side.
    pub new_runs: Vec<String>,
    pub gone_runs: Vec<String>,
    /// Locks the model ran, and those out of its reach.
    pub locks: Vec<String>,
    pub uncovered: Vec<Uncovered>,
}

/// The line of `head` that gained most misses per acquisition over
/// `reference`'s line of the same label, with its top site.
fn hotter(head: &[HotLine], reference: &[HotLine]) -> Option<String> {
    let before = |label: &str| {
        reference
            .iter()
            .find(|l| l.line == label)
            .map_or(0.0, |l| l.misses_per_acq)
    };
    head.iter()
        .map(|l| (l, l.misses_per_acq - before(&l.line)))
        .filter(|(_, d)| *d > 0.0005)
        .max_by(|a, b| a.1.total_cmp(&b.1))
        .map(|(l, d)| {
            let site = l
                .sites
                .first()
                .map(|(s, _)| format!(", most at {s}"))
                .unwrap_or_default();
            format!("{} (+{:.3} misses/acquisition{site})", l.line, d)
        })
}

impl ContentionGate {
    /// `head` against `reference` (`what`: how the reference is named).
    pub fn of(
        head: Option<&ContentionRun>,
        reference: Option<(&[Record], String)>,
    ) -> ContentionGate {
        let Some(head) = head else {
            return ContentionGate::default();
        };
        let mut g = ContentionGate {
            ran: true,
            error: head.error.clone(),
            runs: head.records.len(),
            uncovered: head.uncovered.clone(),
            ..ContentionGate::default()
        };
        for r in &head.records {
            let lock = format!("{}/{}", r.suite, r.lock);
            if !g.locks.contains(&lock) {
                g.locks.push(lock);
            }
            if let Some(e) = &r.error {
                g.failed_runs.push(format!("{}: {e}", r.key()));
            }
        }
        let Some((refs, what)) = reference else {
            return g;
        };
        g.reference = Some(what);
        let by_key: BTreeMap<String, &Record> = refs.iter().map(|r| (r.key(), r)).collect();
        for r in head.records.iter().filter(|r| r.error.is_none()) {
            let Some(base) = by_key.get(&r.key()) else {
                g.new_runs.push(r.key());
                continue;
            };
            for (metric, &value) in &r.metrics {
                let Some(&was) = base.metrics.get(metric) else {
                    continue;
                };
                g.compared += 1;
                if was == value {
                    continue;
                }
                let change = Change {
                    run: r.key(),
                    lock: format!("{}/{}", r.suite, r.lock),
                    cpus: r.cpus,
                    metric: metric.clone(),
                    reference: was,
                    head: value,
                    hotter: hotter(&r.lines, &base.lines),
                };
                match (lower_is_better(metric), was, value) {
                    (None, _, _) => g.moved.push(change),
                    (Some(lower), Some(a), Some(b)) if (b > a) != lower => g.better.push(change),
                    // Worse, or defined before and undefined now (or the
                    // reverse): a change the gate cannot call better.
                    _ => g.worse.push(change),
                }
            }
        }
        let head_keys: Vec<String> = head.records.iter().map(Record::key).collect();
        g.gone_runs = by_key
            .keys()
            .filter(|k| !head_keys.contains(k))
            .cloned()
            .collect();
        g
    }

    /// Fails whatever the reference: the model did not run, or a run
    /// deadlocked or broke exclusion.
    pub fn failed_alone(&self) -> bool {
        self.ran && (self.error.is_some() || !self.failed_runs.is_empty())
    }

    /// Fails: the above, or a worse metric than the reference's.
    pub fn failed(&self) -> bool {
        self.failed_alone() || !self.worse.is_empty()
    }

    /// `contention: 1470 metrics of 245 runs compared exactly with the base
    /// revision: 0 worse, 0 better (12 locks; 7 out of reach)`.
    pub fn line(&self) -> String {
        if !self.ran {
            return "contention: not run (no selected suite has locks written here)".into();
        }
        if let Some(e) = &self.error {
            return format!("contention: NOT RUN: {e}");
        }
        let tail = format!(
            "({} locks on the simulated machine; {} out of its reach)",
            self.locks.len(),
            self.uncovered.len()
        );
        let failed = if self.failed_runs.is_empty() {
            String::new()
        } else {
            format!(", {} runs FAILED", self.failed_runs.len())
        };
        match &self.reference {
            None => format!(
                "contention: {} runs, nothing to compare with{failed} {tail}",
                self.runs
            ),
            Some(what) => format!(
                "contention: {} metrics of {} runs compared exactly with {what}: {} worse, {} better{failed} {tail}",
                self.compared,
                self.runs,
                self.worse.len(),
                self.better.len()
            ),
        }
    }

    /// Each finding on one line: failed runs, worse metrics.
    pub fn findings(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .error
            .iter()
            .map(|e| format!("could not run: {e}"))
            .collect();
        out.extend(self.failed_runs.iter().cloned());
        out.extend(self.worse.iter().map(Change::line));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(lock: &str, cpus: u32, rmr: f64, line_misses: f64) -> Record {
        Record {
            suite: "spinlock".into(),
            lock: lock.into(),
            workload: "lock_unlock".into(),
            machine: "x86".into(),
            cpus,
            placement: None,
            line_bytes: None,
            metrics: [
                ("rmr_per_acq".to_string(), Some(rmr)),
                ("acquisitions".to_string(), Some(100.0)),
                ("acq_max".to_string(), Some(rmr)),
            ]
            .into(),
            lines: vec![HotLine {
                line: "queue node".into(),
                misses_per_acq: line_misses,
                sites: vec![("spinlock/src/locks/mcs.rs:90".into(), line_misses)],
            }],
            error: None,
            secs: 0.1,
        }
    }

    fn run(records: Vec<Record>) -> ContentionRun {
        ContentionRun {
            records,
            ..ContentionRun::default()
        }
    }

    #[test]
    fn a_worse_metric_fails_naming_lock_cpus_metric_and_line() {
        let base = vec![record("mcs", 8, 6.0, 5.0), record("mcs", 16, 6.0, 5.0)];
        let head = run(vec![
            record("mcs", 8, 6.0, 5.0),
            record("mcs", 16, 9.5, 8.5),
        ]);
        let g = ContentionGate::of(Some(&head), Some((&base, "the base revision".into())));
        assert!(g.failed());
        assert_eq!(g.worse.len(), 1, "acq_max moves but has no better side");
        let line = g.worse[0].line();
        assert!(
            line.contains("spinlock/mcs lock_unlock x86 16 cpus"),
            "{line}"
        );
        assert!(line.contains("rmr_per_acq 6 -> 9.5"), "{line}");
        assert!(
            line.contains(
                "queue node (+3.500 misses/acquisition, most at spinlock/src/locks/mcs.rs:90)"
            ),
            "{line}"
        );
        assert_eq!(g.compared, 6);
    }

    #[test]
    fn equal_passes_better_is_shown_and_nothing_to_compare_says_so() {
        let base = vec![record("ticket", 4, 8.0, 8.0)];
        let same = ContentionGate::of(Some(&run(base.clone())), Some((&base, "b".into())));
        assert!(!same.failed() && same.worse.is_empty() && same.better.is_empty());
        let better = ContentionGate::of(
            Some(&run(vec![record("ticket", 4, 7.0, 7.0)])),
            Some((&base, "b".into())),
        );
        assert!(!better.failed());
        assert_eq!(better.better.len(), 1);
        let alone = ContentionGate::of(Some(&run(base.clone())), None);
        assert!(
            alone.line().contains("nothing to compare with"),
            "{}",
            alone.line()
        );
        assert!(!alone.failed());
    }

    #[test]
    fn a_failed_run_or_a_model_that_could_not_run_fails() {
        let mut r = record("ticket", 4, 8.0, 8.0);
        r.error = Some("deadlock: cpu 1 spins on lock".into());
        assert!(ContentionGate::of(Some(&run(vec![r])), None).failed());
        let mut broken = run(vec![]);
        broken.error = Some("no toolchain".into());
        let g = ContentionGate::of(Some(&broken), None);
        assert!(g.failed() && g.line().contains("NOT RUN"));
        assert!(!ContentionGate::of(None, None).failed());
    }
}
