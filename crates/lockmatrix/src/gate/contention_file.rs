//! `baselines/contention.json`: the contention model's records as
//! `baseline update` stores them, one record per line so an update reads
//! well in a diff. Not per target: the model runs on the host and its
//! numbers are the same on every host.
//!
//! ```json
//! {
//!   "format": 1,
//!   "commit": "0123abcd...",
//!   "records": [
//! {"suite":"spinlock","lock":"ticket","workload":"lock_unlock","machine":"x86","cpus":2,"metrics":{...},"lines":[...],"secs":0.0}
//!   ]
//! }
//! ```

use crate::contention::Record;
use crate::results::Run;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

pub const FILE: &str = "contention.json";
const FORMAT: u32 = 1;

#[derive(Debug, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Stored {
    pub format: u32,
    pub commit: String,
    pub records: Vec<Record>,
}

/// Why the file could not be read: bad input naming it.
#[derive(Debug, thiserror::Error)]
#[error("{}: corrupt contention baseline ({why}): fix it, or delete it and run `cargo xtask baseline update`", path.display())]
pub struct Corrupt {
    pub path: PathBuf,
    pub why: String,
}

/// The stored records in `dir`, `None` when there is no file.
pub fn read(dir: &Path) -> Result<Option<Stored>, Corrupt> {
    let path = dir.join(FILE);
    let corrupt = |why: String| Corrupt {
        path: path.clone(),
        why,
    };
    match std::fs::symlink_metadata(&path) {
        Err(_) => return Ok(None),
        Ok(m) if !m.is_file() => return Err(corrupt("not a regular file".into())),
        Ok(_) => {}
    }
    let text = std::fs::read_to_string(&path).map_err(|e| corrupt(e.to_string()))?;
    let stored: Stored = serde_json::from_str(&text).map_err(|e| corrupt(e.to_string()))?;
    if stored.format != FORMAT {
        return Err(corrupt(format!(
            "format {}, expected {FORMAT}",
            stored.format
        )));
    }
    Ok(Some(stored))
}

/// Why a run's model is not recorded (said, never fatal: the other
/// baselines are written).
#[derive(Debug, thiserror::Error)]
pub enum NotRecorded {
    #[error("contention: not recorded: the model did not run: {0}")]
    DidNotRun(String),
    #[error("contention: not recorded: {0} runs failed")]
    Failed(usize),
}

/// The file's text for `run`'s records at `commit`, merged into `old`
/// (the file as it is, if any): the suites the run modelled (of those
/// `suites` names; all by default) replace their records, and the other
/// suites' records stay as they were, so an update from a run of one
/// suite loses none of the others'. With the line that says so; `None`
/// when there is nothing to record; why not when the run's model is not
/// fit to record.
pub fn text(
    run: &Run,
    commit: &str,
    old: Option<&Stored>,
    suites: Option<&[String]>,
) -> Option<Result<(String, String), NotRecorded>> {
    let c = run.contention.as_ref()?;
    if let Some(e) = &c.error {
        return Some(Err(NotRecorded::DidNotRun(e.clone())));
    }
    let selected = |r: &&Record| suites.is_none_or(|s| s.iter().any(|n| n == r.suite.as_str()));
    let new: Vec<&Record> = c.records.iter().filter(selected).collect();
    if new.is_empty() {
        return None;
    }
    let failed = new.iter().filter(|r| r.error.is_some()).count();
    if failed > 0 {
        return Some(Err(NotRecorded::Failed(failed)));
    }
    let replaced: Vec<&str> = dedup(new.iter().map(|r| r.suite.as_str()));
    let before: &[Record] = old.map(|o| &o.records[..]).unwrap_or_default();
    let kept: Vec<&Record> = before
        .iter()
        .filter(|r| !replaced.contains(&r.suite.as_str()))
        .collect();
    // The file's order: each suite where it first appears, the old file's
    // first, so that an update's diff shows only what changed.
    let order = dedup(
        before
            .iter()
            .chain(new.iter().copied())
            .map(|r| r.suite.as_str()),
    );
    let mut records: Vec<Record> = Vec::new();
    for suite in &order {
        let from = match replaced.contains(suite) {
            true => &new,
            false => &kept,
        };
        records.extend(
            from.iter()
                .filter(|r| r.suite.as_str() == *suite)
                .map(|r| (*r).clone()),
        );
    }
    records.iter_mut().for_each(|r| r.secs = 0.0);
    let lines: Vec<String> = records
        .iter()
        .map(|r| serde_json::to_string(r).expect("a record serializes"))
        .collect();
    let text = format!(
        "{{\n  \"format\": {FORMAT},\n  \"commit\": {},\n  \"records\": [\n{}\n  ]\n}}\n",
        serde_json::to_string(commit).expect("a string serializes"),
        lines.join(",\n")
    );
    let mut line = format!(
        "contention: {} runs of the model recorded in {FILE} ({})",
        new.len(),
        replaced.join(", ")
    );
    if !kept.is_empty() {
        line += &format!(
            "; {} kept as they were ({}: not in this run)",
            kept.len(),
            dedup(kept.iter().map(|r| r.suite.as_str())).join(", ")
        );
    }
    Some(Ok((text, line)))
}

/// `names` without repeats, in the order of their first appearance.
fn dedup<'a>(names: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let mut out: Vec<&str> = Vec::new();
    for n in names {
        if !out.contains(&n) {
            out.push(n);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contention::ContentionRun;

    fn record(suite: &str, lock: &str, rmr: f64) -> Record {
        Record {
            suite: suite.into(),
            lock: lock.into(),
            workload: "lock_unlock".into(),
            machine: "x86".into(),
            cpus: 2,
            placement: None,
            line_bytes: None,
            metrics: [("rmr_per_acq".to_string(), Some(rmr))].into(),
            lines: vec![],
            error: None,
            secs: 0.5,
        }
    }

    fn run_of(records: Vec<Record>) -> Run {
        let mut run = super::super::tests::one_suite("x86_64", "native", "atomic", &[]);
        run.contention = Some(ContentionRun {
            records,
            ..ContentionRun::default()
        });
        run
    }

    fn stored_of(text: &str) -> Vec<(String, f64)> {
        let s: Stored = serde_json::from_str(text).unwrap();
        s.records
            .iter()
            .map(|r| {
                (
                    r.suite.as_str().to_string(),
                    r.metrics["rmr_per_acq"].unwrap(),
                )
            })
            .collect()
    }

    /// Measured: a `baseline update` from a run of the spinlock suite
    /// alone rewrote the file with its 105 records and dropped rwsem's 28.
    #[test]
    fn an_update_from_one_suites_run_keeps_the_other_suites_records() {
        let old = Stored {
            format: FORMAT,
            commit: "old".into(),
            records: vec![
                record("spinlock", "ticket", 1.0),
                record("rwsem", "linux_rwsem", 2.0),
            ],
        };
        let run = run_of(vec![record("spinlock", "ticket", 3.0)]);
        let (text, line) = super::text(&run, "new", Some(&old), None).unwrap().unwrap();
        let want = [("spinlock".to_string(), 3.0), ("rwsem".to_string(), 2.0)];
        assert_eq!(stored_of(&text), want);
        assert!(text.contains("\"commit\": \"new\""));
        assert_eq!(
            line,
            "contention: 1 runs of the model recorded in contention.json (spinlock); 1 kept as they were (rwsem: not in this run)"
        );
        // `--suites rwsem` of a run without it: nothing to write.
        let rwsem = ["rwsem".to_string()];
        assert!(super::text(&run, "new", Some(&old), Some(&rwsem)).is_none());
        // No file yet: the run's records alone.
        let (text, _) = super::text(&run, "new", None, None).unwrap().unwrap();
        assert_eq!(stored_of(&text), [("spinlock".to_string(), 3.0)]);
    }
}
