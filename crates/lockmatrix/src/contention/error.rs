//! What can go wrong running the contention model. A run that deadlocks
//! or breaks exclusion is not an error: it is a record with its `error`.

use std::path::PathBuf;

#[derive(Debug, thiserror::Error)]
pub enum ContentionError {
    #[error("no toolchain for the contention model: {0}")]
    Toolchain(#[source] crate::toolchain::NoToolchain),
    #[error(transparent)]
    Cache(#[from] crate::cache::CacheError),
    #[error("{}: {error}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        error: std::io::Error,
    },
    /// Cargo could not build the model; `log` is its stderr.
    #[error(
        "building the contention model of {suites} failed: {}",
        first_error(log)
    )]
    Build { suites: String, log: String },
    #[error("running the {suite} contention model: {why}")]
    Run { suite: String, why: String },
    #[error("the {suite} contention model printed {line:?}: {why}")]
    BadOutput {
        suite: String,
        line: String,
        why: String,
    },
}

fn first_error(log: &str) -> &str {
    log.lines()
        .find(|l| l.starts_with("error"))
        .unwrap_or("cargo failed")
}

impl ContentionError {
    pub(crate) fn io(path: impl Into<PathBuf>, error: std::io::Error) -> ContentionError {
        ContentionError::Io {
            path: path.into(),
            error,
        }
    }
}
