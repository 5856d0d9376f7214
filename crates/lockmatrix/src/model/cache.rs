//! Model results kept by what they were checked from, so a lock whose
//! sources did not change is not checked again.
//!
//! A lock's key hashes everything its models are built from: the
//! workspace manifest and lock file (loom's version is in it), the harness
//! (the model runner), every file of its suite except the other modelled
//! locks' own files (`src/locks/<other>.rs`, `src/model/<other>.rs`), the
//! features and the compiler. So a change to `ticket.rs` re-checks the
//! ticket lock alone, and a change to what every lock of a suite shares
//! (`sync.rs`, the shared models, the suite's manifest, its benchmarks,
//! which the loom build compiles too) re-checks them all. Loom is
//! deterministic: a result, passed or failed, holds for as long as its
//! key.

use super::error::ModelError;
use super::record::{ModelResult, Unmodelled};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Bumped when what a key covers or an entry holds changes.
const FORMAT: u32 = 1;

/// A lock's cached check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub format: u32,
    pub suite: String,
    pub lock: String,
    /// Its models' results (none: the build has no model of it, e.g. the
    /// broken lock without its feature).
    pub results: Vec<ModelResult>,
    /// The suite's locks that are not modelled, as the binary said.
    pub unmodelled: Vec<Unmodelled>,
}

impl Entry {
    pub fn new(
        suite: &str,
        lock: &str,
        results: Vec<ModelResult>,
        unmodelled: Vec<Unmodelled>,
    ) -> Entry {
        Entry {
            format: FORMAT,
            suite: suite.to_string(),
            lock: lock.to_string(),
            results,
            unmodelled,
        }
    }
}

/// Where entries are kept.
pub fn dir() -> Result<PathBuf, ModelError> {
    Ok(crate::cache::dir()?.join("model-results"))
}

/// Every file under `dir`, sorted.
fn files(dir: &Path) -> Result<Vec<PathBuf>, ModelError> {
    let mut out = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for entry in std::fs::read_dir(&d).map_err(|e| ModelError::io(&d, e))? {
            let path = entry.map_err(|e| ModelError::io(&d, e))?.path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                out.push(path);
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The key of `lock` of `suite` in the tree at `root`; `locks` are the
/// suite's modelled locks.
pub fn key(
    root: &Path,
    suite: &str,
    lock: &str,
    locks: &[String],
    compiler: &str,
    features: &[String],
) -> Result<String, ModelError> {
    let suite_dir = root.join("suites").join(suite);
    let others: Vec<PathBuf> = locks
        .iter()
        .filter(|l| *l != lock)
        .flat_map(|l| {
            let file = format!("{l}.rs");
            [
                suite_dir.join("src/locks").join(&file),
                suite_dir.join("src/model").join(&file),
            ]
        })
        .collect();
    let mut paths = vec![root.join("Cargo.toml"), root.join("Cargo.lock")];
    paths.extend(files(&root.join("suites/harness"))?);
    paths.extend(
        files(&suite_dir)?
            .into_iter()
            .filter(|p| !others.contains(p)),
    );
    let all = format!(
        "lockmatrix model cache {FORMAT}\0{compiler}\0{}\0",
        features.join(",")
    );
    crate::file::files_hash(&all, root, &paths)
        .map_err(|e| ModelError::io(root, std::io::Error::other(e.to_string())))
}

/// The entry kept under `key`, if there is a readable one of this format.
/// A damaged entry is as good as none: it is checked again.
pub fn load(key: &str) -> Option<Entry> {
    let mut entry: Entry = crate::file::load_json(&dir().ok()?, key)?;
    if entry.format != FORMAT {
        return None;
    }
    entry.results.iter_mut().for_each(|r| r.cached = true);
    Some(entry)
}

pub fn store(key: &str, entry: &Entry) -> Result<(), ModelError> {
    let dir = dir()?;
    crate::file::store_json(&dir, key, entry)
        .map_err(|e| ModelError::io(&dir, std::io::Error::other(e.to_string())))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scratch tree with two modelled locks in one suite.
    fn tree(name: &str) -> PathBuf {
        let root = std::env::temp_dir().join(format!("lm-model-key-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for (file, text) in [
            ("Cargo.toml", "[workspace]"),
            ("Cargo.lock", "# lock"),
            ("suites/harness/src/model.rs", "runner"),
            ("suites/s/src/sync.rs", "sync"),
            ("suites/s/src/locks/a.rs", "lock a"),
            ("suites/s/src/locks/b.rs", "lock b"),
            ("suites/s/src/model/a.rs", "model a"),
            ("suites/s/src/model/b.rs", "model b"),
        ] {
            let p = root.join(file);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        root
    }

    #[test]
    fn a_lock_key_moves_with_its_own_and_shared_files_only() {
        let root = tree("moves");
        let locks = ["a".to_string(), "b".to_string()];
        let k = |lock: &str| key(&root, "s", lock, &locks, "rustc 1.85.0", &[]).unwrap();
        let (a, b) = (k("a"), k("b"));
        assert_ne!(a, b);
        std::fs::write(root.join("suites/s/src/locks/b.rs"), "lock b, changed").unwrap();
        assert_eq!(k("a"), a, "another lock's file moved a's key");
        assert_ne!(k("b"), b);
        let b = k("b");
        std::fs::write(root.join("suites/s/src/model/b.rs"), "model b, changed").unwrap();
        assert_eq!(k("a"), a);
        assert_ne!(k("b"), b);
        std::fs::write(root.join("suites/s/src/sync.rs"), "sync, changed").unwrap();
        assert_ne!(k("a"), a, "a shared file did not move the key");
        let a = k("a");
        std::fs::write(root.join("suites/harness/src/model.rs"), "runner, changed").unwrap();
        assert_ne!(k("a"), a);
        let a = k("a");
        assert_ne!(
            key(&root, "s", "a", &locks, "rustc 1.95.0", &[]).unwrap(),
            a
        );
        let features = ["s/x".to_string()];
        assert_ne!(
            key(&root, "s", "a", &locks, "rustc 1.85.0", &features).unwrap(),
            a
        );
        std::fs::remove_dir_all(&root).unwrap();
    }
}
