//! The contention model: the locks written in `suites/` run on a
//! simulated many-core machine (the `ccsim` crate) on the host, at 1 to
//! 64 virtual CPUs, whatever the targets and however many cores the host
//! has (`docs/contention-model.md`).
//!
//! Built with `--cfg lockmatrix_sim`, each suite's binary runs its own
//! locks' unchanged source with ccsim's atomics behind the sync layer and
//! prints a record per lock, workload and vCPU count: cycles, coherence
//! misses (RMRs) and hand-over latency per acquisition, fairness, and the
//! lines that missed most. Every number is the same on every run and host,
//! so the gate compares them exactly (`gate/contention.rs`). [`check`]
//! builds the binaries once, runs them, and keeps each suite's records by
//! the hash of what they were built from, so an unchanged suite costs
//! nothing.
//!
//! - `record.rs`: the records, read into types;
//! - `run.rs`: building and running the binaries, and the cache.

mod error;
mod record;
mod run;

pub use error::ContentionError;
pub use record::{HotLine, Record, Uncovered};
pub use run::{CPUS, MACHINE};

use crate::toolchain::Toolchain;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::time::Instant;

/// The suites with locks written here.
pub const SUITES: &[&str] = &["spinlock", "rwsem"];

/// The model's results in a run (`run.json`'s `contention`).
#[derive(Debug, Clone, Default, Serialize, Deserialize)]
pub struct ContentionRun {
    pub records: Vec<Record>,
    pub uncovered: Vec<Uncovered>,
    /// Why the model could not run at all; `None` when it did.
    #[serde(default)]
    pub error: Option<String>,
    /// Seconds building the binaries (`None`: every suite from the cache).
    #[serde(default)]
    pub build_secs: Option<f64>,
    /// Seconds in all.
    pub secs: f64,
    /// Suites whose records came from the cache.
    #[serde(default)]
    pub cached: Vec<String>,
}

impl ContentionRun {
    pub fn failed(&self) -> impl Iterator<Item = &Record> {
        self.records.iter().filter(|r| r.error.is_some())
    }
}

/// Runs the model of `suites` (those of [`SUITES`]) in the tree at
/// `root`, from the cache where a suite's sources are unchanged.
pub fn check(
    root: &Path,
    tc: &Toolchain,
    suites: &[&str],
) -> Result<ContentionRun, ContentionError> {
    let start = Instant::now();
    let compiler = tc.version();
    let mut out = ContentionRun::default();
    let mut to_build = Vec::new();
    let mut keys = Vec::new();
    for &suite in suites.iter().filter(|s| SUITES.contains(s)) {
        let key = run::key(root, suite, &compiler)?;
        match run::load(&key) {
            Some(printed) => {
                out.records.extend(printed.records);
                out.uncovered.extend(printed.uncovered);
                out.cached.push(suite.to_string());
            }
            None => to_build.push(suite),
        }
        keys.push((suite, key));
    }
    if !to_build.is_empty() {
        let t = Instant::now();
        let built = run::build(tc, root, &to_build)?;
        out.build_secs = Some(t.elapsed().as_secs_f64());
        for (&suite, printed) in to_build.iter().zip(run::run(&built, &to_build)?) {
            let key = &keys.iter().find(|(s, _)| *s == suite).expect("keyed").1;
            run::store(key, &printed)?;
            out.records.extend(printed.records);
            out.uncovered.extend(printed.uncovered);
        }
    }
    // Suite order, then as printed.
    out.records
        .sort_by_key(|r| SUITES.iter().position(|s| *s == r.suite.as_str()));
    out.secs = start.elapsed().as_secs_f64();
    Ok(out)
}
