//! The records the contention model's binaries print
//! (`suites/harness/src/sim.rs` writes them), read into types. A line
//! that is not one of them is reported, never guessed at.

use super::error::ContentionError;
use crate::name::Name;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One run of one lock on the simulated machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Record {
    pub suite: Name,
    pub lock: Name,
    pub workload: Name,
    pub machine: Name,
    pub cpus: u32,
    /// `spread` when the vCPUs went round robin over the nodes.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line_bytes: Option<u32>,
    /// Each metric's value (`None`: undefined in this run, e.g. no
    /// hand-over on one vCPU). Deterministic: compared exactly.
    #[serde(default)]
    pub metrics: BTreeMap<String, Option<f64>>,
    /// The lines with the most coherence misses.
    #[serde(default)]
    pub lines: Vec<HotLine>,
    /// Why the run failed (a deadlock, exclusion broken).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Host seconds: the one field that varies from run to run.
    #[serde(default)]
    pub secs: f64,
}

/// A line and the misses it took per acquisition.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HotLine {
    pub line: String,
    pub misses_per_acq: f64,
    /// `(source site, misses per acquisition there)`, most first.
    pub sites: Vec<(String, f64)>,
}

impl Record {
    /// What identifies it across runs: suite, lock, workload, machine,
    /// vCPUs (and a placement or line size other than the default).
    pub fn key(&self) -> String {
        let mut k = format!(
            "{}/{} {} {} {} cpus",
            self.suite, self.lock, self.workload, self.machine, self.cpus
        );
        if let Some(p) = &self.placement {
            k.push_str(&format!(" {p}"));
        }
        if let Some(b) = self.line_bytes {
            k.push_str(&format!(" {b}-byte lines"));
        }
        k
    }
}

/// A lock the model cannot run, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Uncovered {
    pub suite: Name,
    pub lock: Name,
    pub why: String,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
enum Line {
    Contention(Record),
    ContentionError(Record),
    Uncovered(Uncovered),
}

/// What one binary printed.
#[derive(Debug, Default, PartialEq)]
pub struct Printed {
    pub records: Vec<Record>,
    pub uncovered: Vec<Uncovered>,
}

/// Reads the stdout of `suite`'s contention binary.
pub fn parse(suite: &str, stdout: &str) -> Result<Printed, ContentionError> {
    let mut printed = Printed::default();
    for line in stdout.lines().filter(|l| !l.trim().is_empty()) {
        let bad = |why: String| ContentionError::BadOutput {
            suite: suite.to_string(),
            line: line.chars().take(300).collect(),
            why,
        };
        match serde_json::from_str::<Line>(line).map_err(|e| bad(e.to_string()))? {
            Line::Contention(r) => {
                if r.suite != suite {
                    return Err(bad(format!("a record of suite {:?}", r.suite.as_str())));
                }
                if r.error.is_some() || r.metrics.is_empty() {
                    return Err(bad("a run without its numbers".into()));
                }
                printed.records.push(r);
            }
            Line::ContentionError(r) => {
                if r.error.is_none() {
                    return Err(bad("a failed run without its error".into()));
                }
                printed.records.push(r);
            }
            Line::Uncovered(u) => printed.uncovered.push(u),
        }
    }
    Ok(printed)
}

#[cfg(test)]
mod tests {
    use super::*;

    const OK: &str = r#"{"type":"contention","suite":"spinlock","lock":"ticket","workload":"lock_unlock","machine":"x86","cpus":2,"metrics":{"acquisitions":627,"rmr_per_acq":3.997,"handover_cycles":null},"lines":[{"line":"lock","misses_per_acq":3.997,"sites":[["spinlock/src/locks/ticket.rs:57",1.0]]}],"secs":0.005}"#;

    #[test]
    fn reads_runs_failures_and_uncovered_locks() {
        let err = r#"{"type":"contention_error","suite":"spinlock","lock":"mcs","workload":"lock_unlock","machine":"x86","cpus":4,"error":"deadlock: cpu 1 spins on lock","secs":0.1}"#;
        let unc = r#"{"type":"uncovered","suite":"spinlock","lock":"std_mutex","why":"std's"}"#;
        let p = parse("spinlock", &format!("{OK}\n{err}\n{unc}\n")).unwrap();
        assert_eq!(p.records.len(), 2);
        assert_eq!(p.records[0].metrics["rmr_per_acq"], Some(3.997));
        assert_eq!(p.records[0].metrics["handover_cycles"], None);
        assert_eq!(p.records[0].key(), "spinlock/ticket lock_unlock x86 2 cpus");
        assert!(p.records[1]
            .error
            .as_deref()
            .unwrap()
            .starts_with("deadlock"));
        assert_eq!(p.uncovered[0].lock.as_str(), "std_mutex");
    }

    #[test]
    fn refuses_what_is_not_a_record_of_the_suite() {
        let why = |s: &str| match parse("spinlock", s) {
            Err(ContentionError::BadOutput { why, .. }) => why,
            other => panic!("{other:?}"),
        };
        assert!(why("thread 'main' panicked").contains("expected"));
        assert!(why(&OK.replace("\"spinlock\"", "\"rwsem\"")).contains("suite"));
        assert!(why(&OK.replace(r#""secs""#, r#""extra":1,"secs""#)).contains("unknown field"));
        assert!(why(&OK.replace("contention", "contention_error")).contains("without its error"));
    }
}
