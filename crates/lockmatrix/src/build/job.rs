//! What a build is asked for and what it gives: a target's job, the
//! binaries built, and why a build failed.

use crate::config::Target;
use crate::toolchain::Toolchain;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

pub struct Job<'a> {
    pub target: &'a Target,
    /// `None` for a target without a Rust backend: only its C suites build.
    pub toolchain: Option<Toolchain>,
    pub linker: PathBuf,
    /// The cache ([`crate::cache::dir`]) its target dir is in.
    pub cache: PathBuf,
}

pub struct Built {
    pub secs: f64,
    /// Suite name to binary.
    pub binaries: Result<BTreeMap<String, Binary>, BuildError>,
    /// [`sources_hash`] of what was built.
    pub sources: String,
}

/// A built suite binary, as it runs: a read-only copy in the cache's
/// content-addressed store ([`store_dir`]), never a file under `results/`.
#[derive(Debug, Clone)]
pub struct Binary {
    pub path: PathBuf,
    pub sha256: String,
    /// What built it, when not the target's Rust toolchain: a C suite's
    /// cross gcc with its flags ([`c`]).
    pub compiler: Option<crate::toolchain::ToolInfo>,
}

/// A stored binary that no longer holds what this run built.
#[derive(Debug, Clone, PartialEq)]
pub struct Changed {
    pub path: PathBuf,
}

impl std::fmt::Display for Changed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: changed since this run built it (sha256 differs): not run",
            self.path.display()
        )
    }
}

impl std::error::Error for Changed {}

impl Binary {
    /// Hashes the file again against [`Binary::sha256`], which this
    /// process took from the bytes it built or checked (a record outside
    /// the cache: the one run.json keeps), just before it is executed:
    /// whatever wrote into the store since is never run.
    pub fn verify(&self) -> Result<(), Changed> {
        let now = std::fs::read(&self.path).map(|b| crate::file::sha256(&b));
        match now {
            Ok(h) if h == self.sha256 => Ok(()),
            _ => Err(Changed {
                path: self.path.clone(),
            }),
        }
    }
}

/// Why a target's suites did not build, as data from the moment it
/// happens.
#[derive(Debug, Clone, PartialEq)]
pub enum BuildError {
    /// cargo failed: its first error line, and its log.
    Cargo { error: String, log: PathBuf },
    /// cargo succeeded but left no binary where it should be.
    NoBinary { path: PathBuf },
    /// Something around cargo failed (starting it, the target dir's lock,
    /// keeping a binary): what, with the path.
    Around { what: String },
    /// A C suite's compiler failed: its first error line, and its log.
    Compiler { error: String, log: PathBuf },
}

impl BuildError {
    /// What failed, and the log that says more (a run records both).
    pub fn error_and_log(&self) -> (String, Option<String>) {
        match self {
            BuildError::Cargo { error, log } | BuildError::Compiler { error, log } => {
                (error.clone(), Some(log.display().to_string()))
            }
            BuildError::NoBinary { path } => {
                (format!("build produced no binary {}", path.display()), None)
            }
            BuildError::Around { what } => (what.clone(), None),
        }
    }
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.error_and_log() {
            (error, Some(log)) => write!(f, "build failed: {error} (log: {log})"),
            (error, None) => write!(f, "build failed: {error}"),
        }
    }
}

/// A tree to build from, and where its build logs and binaries go.
pub struct Tree<'a> {
    pub root: &'a Path,
    /// `build-<target>.log` for each target.
    pub logs: PathBuf,
    /// `<target>/<suite>` for each binary.
    pub bins: PathBuf,
}
