//! The contention model's seed tables (`report --tables`): the locks
//! written here on the simulated machine, labelled as a model, beside the
//! real runs' tables. Seed 001's ladder (cycles and coherence misses per
//! acquisition, to 64 vCPUs), seed 003's S1/S2 (acquisitions in the fixed
//! virtual time), seed 002's mixes (acquisitions per vCPU, min/avg/max).

use super::table::render;
use crate::contention::{Record, Uncovered};
use crate::results::Run;
use std::collections::BTreeMap;
use std::fmt::Write;

fn value(r: &Record, metric: &str) -> String {
    match r.metrics.get(metric) {
        Some(Some(v)) => format!("{v}"),
        _ => "-".into(),
    }
}

/// Rows of locks by vCPU count for one workload of one suite.
fn ladder(records: &[&Record], workload: &str, cell: impl Fn(&Record) -> String) -> Option<String> {
    let runs: Vec<&&Record> = records.iter().filter(|r| r.workload == workload).collect();
    if runs.is_empty() {
        return None;
    }
    let mut cpus: Vec<u32> = runs.iter().map(|r| r.cpus).collect();
    cpus.sort_unstable();
    cpus.dedup();
    let mut locks: Vec<&str> = Vec::new();
    for r in &runs {
        if !locks.contains(&r.lock.as_str()) {
            locks.push(r.lock.as_str());
        }
    }
    let mut rows = vec![std::iter::once("lock".to_string())
        .chain(cpus.iter().map(|c| format!("{c} cpus")))
        .collect::<Vec<_>>()];
    for lock in locks {
        let by: BTreeMap<u32, &&&Record> = runs
            .iter()
            .filter(|r| r.lock.as_str() == lock)
            .map(|r| (r.cpus, r))
            .collect();
        rows.push(
            std::iter::once(lock.to_string())
                .chain(cpus.iter().map(|c| {
                    by.get(c).map_or("-".into(), |r| match &r.error {
                        Some(_) => "FAILED".into(),
                        None => cell(r),
                    })
                }))
                .collect(),
        );
    }
    Some(render(&rows))
}

/// Every table of the run's contention model; empty when it has none.
pub fn tables(run: &Run) -> String {
    let Some(c) = &run.contention else {
        return String::new();
    };
    let mut out = String::new();
    if let Some(e) = &c.error {
        let _ = writeln!(out, "\ncontention model: NOT RUN: {e}");
        return out;
    }
    let machine = c.records.first().map_or("?", |r| r.machine.as_str());
    let of = |suite: &str| -> Vec<&Record> {
        c.records
            .iter()
            .filter(|r| r.suite.as_str() == suite)
            .collect()
    };
    let spin = of("spinlock");
    let mut section = |title: String, table: Option<String>| {
        if let Some(t) = table {
            let _ = writeln!(out, "\n{title}\n{t}");
        }
    };
    section(
        format!(
            "seed 001 (MODEL, simulated `{machine}` machine): cycles per lock+unlock, lock_unlock"
        ),
        ladder(&spin, "lock_unlock", |r| value(r, "cycles_per_acq")),
    );
    section(
        format!("seed 001 (MODEL, `{machine}`): coherence misses (RMRs) per acquisition"),
        ladder(&spin, "lock_unlock", |r| value(r, "rmr_per_acq")),
    );
    section(
        format!("seed 001 (MODEL, `{machine}`): hand-over cycles, fairness (acquisitions min/max per vCPU)"),
        ladder(&spin, "lock_unlock", |r| {
            format!(
                "{} {}/{}",
                value(r, "handover_cycles"),
                value(r, "acq_min"),
                value(r, "acq_max")
            )
        }),
    );
    for (w, name) in [("stress_s1", "S1"), ("stress_s2", "S2")] {
        section(
            format!("seed 003 {name} (MODEL, `{machine}`): acquisitions in the fixed virtual time (RMRs per acquisition)"),
            ladder(&spin, w, |r| format!("{} ({})", value(r, "acquisitions"), value(r, "rmr_per_acq"))),
        );
    }
    let rw = of("rwsem");
    for w in ["half_writers", "all_writers"] {
        section(
            format!(
                "seed 002 {w} (MODEL, `{machine}`): write acquisitions per vCPU min/avg/max; read"
            ),
            ladder(&rw, w, |r| {
                let side = |s: &str| {
                    format!(
                        "{}/{}/{}",
                        value(r, &format!("{s}_acq_min")),
                        value(r, &format!("{s}_acq_avg")),
                        value(r, &format!("{s}_acq_max"))
                    )
                };
                if r.metrics.contains_key("read_acq_avg") && r.metrics.contains_key("write_acq_avg")
                {
                    format!("w {}; r {}", side("write"), side("read"))
                } else {
                    format!(
                        "{} acq, {} RMR/acq",
                        value(r, "acquisitions"),
                        value(r, "rmr_per_acq")
                    )
                }
            }),
        );
    }
    let _ = writeln!(out, "\n{}", coverage(&c.uncovered, &c.records));
    out
}

/// Which locks the model covers, and which it cannot reach.
fn coverage(uncovered: &[Uncovered], records: &[Record]) -> String {
    let mut covered: Vec<String> = Vec::new();
    for r in records {
        let l = format!("{}/{}", r.suite, r.lock);
        if !covered.contains(&l) {
            covered.push(l);
        }
    }
    let out: Vec<String> = uncovered
        .iter()
        .map(|u| format!("{}/{}", u.suite, u.lock))
        .collect();
    format!(
        "contention model covers {}; out of its reach (other crates' atomics, gated on real hardware only): {}",
        covered.join(", "),
        if out.is_empty() { "none".into() } else { out.join(", ") }
    )
}

/// One workload's metric by lock and vCPU count, for the HTML report's
/// model curves (the same records the tables above print).
pub struct Ladder {
    pub machine: String,
    pub cpus: Vec<u32>,
    pub locks: Vec<String>,
    /// `values[i][j]`: `cpus[i]`, `locks[j]` (`None`: no value, or failed).
    pub values: Vec<Vec<Option<f64>>>,
}

/// `metric` of `workload` of `suite` in the run's model, if it ran.
pub fn ladder_of(run: &Run, suite: &str, workload: &str, metric: &str) -> Option<Ladder> {
    let c = run.contention.as_ref()?;
    let runs: Vec<&Record> = (c.records.iter())
        .filter(|r| r.suite.as_str() == suite && r.workload == workload)
        .collect();
    let first = runs.first()?;
    let mut cpus: Vec<u32> = runs.iter().map(|r| r.cpus).collect();
    cpus.sort_unstable();
    cpus.dedup();
    let mut locks: Vec<String> = Vec::new();
    for r in &runs {
        if !locks.iter().any(|l| l == r.lock.as_str()) {
            locks.push(r.lock.to_string());
        }
    }
    let values = cpus
        .iter()
        .map(|&n| {
            locks
                .iter()
                .map(|l| {
                    runs.iter()
                        .find(|r| r.cpus == n && r.lock.as_str() == l && r.error.is_none())
                        .and_then(|r| r.metrics.get(metric).copied().flatten())
                })
                .collect()
        })
        .collect();
    Some(Ladder {
        machine: first.machine.to_string(),
        cpus,
        locks,
        values,
    })
}
