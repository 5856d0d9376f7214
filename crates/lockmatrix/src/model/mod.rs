//! The model check: the locks written in `suites/` checked under the C11
//! memory model with loom, on the host, whatever the targets.
//!
//! An emulator cannot show what a missing barrier does: qemu-user runs a
//! weakly ordered guest's loads and stores in the x86 host's (TSO) order,
//! so a lock whose Acquire or Release was weakened passes every run. Built
//! with `--cfg loom`, each suite's binary runs its locks' loom models
//! (`suites/<suite>/src/model/`, one file per lock, the lock code itself
//! unchanged: see each suite's `sync.rs`) and prints a record per model.
//! [`check`] builds them, runs them, reads the records into
//! [`ModelResult`]s and keeps them by the hash of what they were built
//! from, so a lock that did not change is not checked again
//! (`docs/ordering.md` says what the models cover and what not).
//!
//! - `record.rs`: the records a model binary prints, read into types;
//! - `run.rs`: building the models and running them;
//! - `cache.rs`: results kept by the hash of a lock's sources;
//! - [`mutate`]: the mutation check, every ordering of every modelled lock
//!   weakened to `Relaxed` in turn.
//!
//! No terminal output: progress and results are the caller's to show.

mod cache;
mod error;
pub mod mutate;
mod record;
mod run;

pub use error::ModelError;
pub use record::{ModelResult, Unmodelled};

use crate::toolchain::{self, Toolchain};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

/// The suites with locks written here, which have models.
pub const SUITES: &[&str] = &["spinlock", "rwsem"];

/// What [`check`] checks.
pub struct Request<'a> {
    /// The workspace whose `suites/` are checked.
    pub root: &'a Path,
    /// The host toolchain that builds the models ([`host_toolchain`]).
    pub toolchain: &'a Toolchain,
    /// Some of [`SUITES`].
    pub suites: &'a [&'a str],
    /// Cargo features, as `cargo build --features` takes them (e.g.
    /// `spinlock/broken-lock`, which adds the control that must fail).
    pub features: &'a [String],
    /// Only these locks (`None`: every modelled lock of the suites).
    pub locks: Option<&'a [String]>,
    /// Take unchanged locks' results from the cache, and keep new ones.
    pub use_cache: bool,
    /// Longest a suite's model binary may run.
    pub timeout: Duration,
}

impl<'a> Request<'a> {
    /// Every model of every suite, cached, 10 minutes per suite at most.
    pub fn all(root: &'a Path, toolchain: &'a Toolchain) -> Request<'a> {
        Request {
            root,
            toolchain,
            suites: SUITES,
            features: &[],
            locks: None,
            use_cache: true,
            timeout: Duration::from_secs(600),
        }
    }
}

/// What [`check`] found.
#[derive(Debug)]
pub struct Checked {
    /// Every model of every lock checked, suite by suite, lock by lock.
    pub results: Vec<ModelResult>,
    /// The locks deliberately not modelled, and why.
    pub unmodelled: Vec<Unmodelled>,
    /// Seconds spent building the models; `None` when every result came
    /// from the cache and nothing was built.
    pub build_secs: Option<f64>,
}

impl Checked {
    /// The results that failed (violations, and the control as it should).
    pub fn failed(&self) -> impl Iterator<Item = &ModelResult> {
        self.results.iter().filter(|r| !r.ok)
    }
}

/// The toolchain that builds the models for this host: the one the QEMU
/// plugin would use, at least the suites' `rust-version`.
pub fn host_toolchain(root: &Path) -> Result<Toolchain, ModelError> {
    let host = format!("{}-unknown-linux-gnu", std::env::consts::ARCH);
    let need = toolchain::rust_version(&root.join("Cargo.toml"));
    toolchain::discover(&host, need).map_err(ModelError::Toolchain)
}

/// Locks of the suites not model-checked, and why, besides those the
/// suites' model binaries name (std's and other crates' locks).
pub fn unmodelled_elsewhere() -> Vec<Unmodelled> {
    vec![Unmodelled {
        suite: crate::name::known("atomic"),
        lock: crate::name::known("primitives"),
        why: "not model-checked: the atomic suite's primitives are inline assembly, which loom cannot see; their ordering is what the instruction footprint gates".into(),
    }]
}

/// The modelled locks of `suite` in the tree at `root`: each is
/// `src/locks/<lock>.rs` with its models in `src/model/<lock>.rs` (the
/// modules' `mod.rs` are neither).
pub fn modelled_locks(root: &Path, suite: &str) -> Result<Vec<String>, ModelError> {
    let dir = root.join("suites").join(suite).join("src");
    let models = dir.join("model");
    let mut locks: Vec<String> = std::fs::read_dir(&models)
        .map_err(|e| ModelError::io(&models, e))?
        .filter_map(|e| e.ok())
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let lock = name.strip_suffix(".rs")?.to_string();
            (lock != "mod" && dir.join("locks").join(&name).is_file()).then_some(lock)
        })
        .collect();
    locks.sort();
    Ok(locks)
}

/// Checks the models the request asks for: from the cache where a lock's
/// sources are unchanged, else built and run now.
pub fn check(req: &Request) -> Result<Checked, ModelError> {
    let compiler = req.toolchain.version();
    // (suite, lock) -> its key and, if cached, its entry.
    let mut wanted: Vec<(&str, String, String, Option<cache::Entry>)> = Vec::new();
    for &suite in req.suites {
        let locks = modelled_locks(req.root, suite)?;
        for lock in &locks {
            if req.locks.is_some_and(|only| !only.contains(lock)) {
                continue;
            }
            let key = cache::key(req.root, suite, lock, &locks, &compiler, req.features)?;
            let entry = req.use_cache.then(|| cache::load(&key)).flatten();
            wanted.push((suite, lock.clone(), key, entry));
        }
    }
    let mut to_build: Vec<&str> = wanted
        .iter()
        .filter(|w| w.3.is_none())
        .map(|w| w.0)
        .collect();
    to_build.dedup();
    let mut build_secs = None;
    let mut fresh: BTreeMap<(String, String), cache::Entry> = BTreeMap::new();
    if !to_build.is_empty() {
        let start = Instant::now();
        let built = run::build(req.toolchain, req.root, &to_build, req.features)?;
        build_secs = Some(start.elapsed().as_secs_f64());
        for &suite in &to_build {
            let has = run::list(&built, suite)?;
            let missing: Vec<String> = wanted
                .iter()
                .filter(|w| w.0 == suite && w.3.is_none() && has.contains(&w.1))
                .map(|w| w.1.clone())
                .collect();
            let printed = if missing.is_empty() {
                record::Printed::default()
            } else {
                run::run(&built, suite, &missing, req.timeout)?
            };
            for w in wanted.iter().filter(|w| w.0 == suite && w.3.is_none()) {
                let results = printed
                    .results
                    .iter()
                    .filter(|r| r.lock == w.1)
                    .cloned()
                    .collect();
                let entry = cache::Entry::new(suite, &w.1, results, printed.unmodelled.clone());
                if missing.contains(&w.1) && entry.results.is_empty() {
                    return Err(ModelError::Run {
                        suite: suite.to_string(),
                        why: format!("it lists {} but printed no model of it", w.1),
                    });
                }
                fresh.insert((suite.to_string(), w.1.clone()), entry);
            }
        }
    }
    let mut checked = Checked {
        results: Vec::new(),
        unmodelled: Vec::new(),
        build_secs,
    };
    for (suite, lock, key, cached) in wanted {
        let entry = match cached {
            Some(entry) => entry,
            None => {
                let entry = fresh
                    .remove(&(suite.to_string(), lock))
                    .expect("every lock not cached was run");
                if req.use_cache {
                    cache::store(&key, &entry)?;
                }
                entry
            }
        };
        for u in entry.unmodelled {
            if !checked.unmodelled.contains(&u) {
                checked.unmodelled.push(u);
            }
        }
        checked.results.extend(entry.results);
    }
    checked.unmodelled.extend(unmodelled_elsewhere());
    Ok(checked)
}
