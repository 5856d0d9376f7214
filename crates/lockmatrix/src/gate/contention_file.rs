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

/// The file's text for `run`'s records at `commit`, and the line that
/// says so; why not when the run's model is not fit to record.
pub fn text(run: &Run, commit: &str) -> Option<Result<(String, String), NotRecorded>> {
    let c = run.contention.as_ref()?;
    if let Some(e) = &c.error {
        return Some(Err(NotRecorded::DidNotRun(e.clone())));
    }
    let failed = c.failed().count();
    if failed > 0 {
        return Some(Err(NotRecorded::Failed(failed)));
    }
    let mut records = c.records.clone();
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
    Some(Ok((
        text,
        format!(
            "contention: {} runs of the model recorded in {FILE}",
            records.len()
        ),
    )))
}
