//! Miri's results kept by what the check is built from, so that an
//! unchanged crate costs nothing.
//!
//! A suite's key hashes the tree's workspace manifest and lock file (the
//! version of every lock crate, a registry crate's checksum), the harness
//! (the clients' runner), the `subject` crate (the crate under test: a path
//! crate's copy is hashed into its manifest), and of the suite its
//! manifest, `main.rs`, `miri.rs` (the clients, their seeds and rates) and
//! the lock adapters in `src/locks/`, without the files of the locks loom
//! checks; then Miri's version and the flags every client runs with. A
//! change to a lock written here, or to a benchmark, does not run Miri
//! again. Miri is deterministic for a seed: a result, raced or clean,
//! holds for as long as its key.

use super::error::MiriError;
use super::record::MiriResult;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// Bumped when what a key covers or an entry holds changes, or when
/// entries may be wrong: 2, because before it a tree built after another
/// in the shared target dir could run the other's binary and keep its
/// results under its own key (`run::forget_other_tree`).
const FORMAT: u32 = 2;

/// A suite's cached check.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Entry {
    pub format: u32,
    pub suite: String,
    pub results: Vec<MiriResult>,
}

impl Entry {
    pub fn new(suite: &str, results: Vec<MiriResult>) -> Entry {
        Entry {
            format: FORMAT,
            suite: suite.to_string(),
            results,
        }
    }
}

pub fn dir() -> Result<PathBuf, MiriError> {
    Ok(crate::cache::dir()?.join("miri-results"))
}

/// Every file under `dir`, sorted; none when it does not exist.
fn files(dir: &Path) -> Result<Vec<PathBuf>, MiriError> {
    let mut out = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for entry in entries {
            let path = entry.map_err(|e| MiriError::io(&d, e))?.path();
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

/// The files of `tree` the Miri check of `suite` is built from.
pub fn sources(tree: &Path, suite: &str) -> Result<Vec<PathBuf>, MiriError> {
    let dir = tree.join("suites").join(suite);
    let modelled = crate::model::modelled_locks(tree, suite).unwrap_or_default();
    let mut paths = vec![tree.join("Cargo.toml"), tree.join("Cargo.lock")];
    paths.extend(files(&tree.join("suites/harness"))?);
    paths.extend(files(&tree.join("suites/subject"))?);
    paths.extend(["Cargo.toml", "src/main.rs", "src/miri.rs"].map(|f| dir.join(f)));
    paths.extend(files(&dir.join("src/locks"))?.into_iter().filter(|p| {
        let stem = p.file_stem().and_then(|s| s.to_str()).unwrap_or("");
        !modelled.iter().any(|m| m == stem)
    }));
    Ok(paths)
}

/// The key of `suite`'s check in `tree` with Miri `version`.
pub fn key(tree: &Path, suite: &str, version: &str) -> Result<String, MiriError> {
    let all = format!(
        "lockmatrix miri cache {FORMAT}\0{version}\0{}\0{suite}\0",
        super::run::FLAGS
    );
    let files = sources(tree, suite)?;
    crate::file::files_hash(&all, tree, &files)
        .map_err(|e| MiriError::io(tree, std::io::Error::other(e.to_string())))
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

pub fn store(key: &str, entry: &Entry) -> Result<(), MiriError> {
    let dir = dir()?;
    crate::file::store_json(&dir, key, entry)
        .map_err(|e| MiriError::io(&dir, std::io::Error::other(e.to_string())))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_key_moves_with_the_crate_the_clients_and_miri_only() {
        let root = std::env::temp_dir().join(format!("lm-miri-key-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for (file, text) in [
            ("Cargo.toml", "[workspace]"),
            ("Cargo.lock", "spin 0.10.1"),
            ("suites/harness/src/miri.rs", "runner"),
            ("suites/subject/src/locks.rs", "none"),
            ("suites/s/Cargo.toml", "[package]"),
            ("suites/s/src/main.rs", "main"),
            ("suites/s/src/miri.rs", "clients"),
            ("suites/s/src/workload.rs", "benchmarks"),
            ("suites/s/src/locks/shipped.rs", "adapters"),
            ("suites/s/src/locks/ticket.rs", "our ticket lock"),
            ("suites/s/src/model/ticket.rs", "its loom model"),
        ] {
            let p = root.join(file);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let k = || key(&root, "s", "miri 1").unwrap();
        let first = k();
        // What Miri does not run: a lock loom checks, its model, a benchmark.
        for f in [
            "suites/s/src/locks/ticket.rs",
            "suites/s/src/model/ticket.rs",
            "suites/s/src/workload.rs",
        ] {
            std::fs::write(root.join(f), "changed").unwrap();
            assert_eq!(k(), first, "{f} moved the key");
        }
        // What it does: the crates pinned, the crate under test, the clients, the adapters.
        let mut last = first;
        for f in [
            "Cargo.lock",
            "suites/subject/src/locks.rs",
            "suites/s/src/miri.rs",
            "suites/s/src/locks/shipped.rs",
        ] {
            std::fs::write(root.join(f), "changed").unwrap();
            assert_ne!(k(), last, "{f} did not move the key");
            last = k();
        }
        assert_ne!(key(&root, "s", "miri 2").unwrap(), last);
        std::fs::remove_dir_all(&root).unwrap();
    }
}
