//! What can go wrong checking the models, as values the caller can tell
//! apart. A model that fails is not an error: it is a [`super::ModelResult`]
//! with `ok: false`.

use std::fmt;
use std::path::PathBuf;

#[derive(Debug)]
pub enum ModelError {
    /// No host toolchain that can build the suites.
    Toolchain(crate::toolchain::NoToolchain),
    /// No cache directory to build and keep the models in.
    Cache(crate::cache::CacheError),
    /// Reading the sources, writing the cache or a scratch copy.
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    /// Cargo could not build the suites' models; `log` is cargo's stderr.
    Build { suites: String, log: String },
    /// A model binary could not be run, was killed or timed out.
    Run { suite: String, why: String },
    /// A model binary printed a line that is not a model record.
    BadOutput {
        suite: String,
        line: String,
        why: String,
    },
    /// A mutation could not be made where the scan found the ordering.
    Mutation {
        file: PathBuf,
        line: usize,
        why: String,
    },
}

impl ModelError {
    pub(crate) fn io(path: impl Into<PathBuf>, error: std::io::Error) -> ModelError {
        ModelError::Io {
            path: path.into(),
            error,
        }
    }
}

impl fmt::Display for ModelError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ModelError::Toolchain(why) => write!(f, "no toolchain for the models: {why}"),
            ModelError::Cache(e) => e.fmt(f),
            ModelError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            ModelError::Build { suites, log } => {
                let first = log
                    .lines()
                    .find(|l| l.starts_with("error"))
                    .unwrap_or("cargo failed");
                write!(f, "building the models of {suites} failed: {first}")
            }
            ModelError::Run { suite, why } => write!(f, "running the {suite} models: {why}"),
            ModelError::BadOutput { suite, line, why } => {
                write!(f, "the {suite} models printed {line:?}: {why}")
            }
            ModelError::Mutation { file, line, why } => {
                write!(f, "{}:{line}: cannot mutate: {why}", file.display())
            }
        }
    }
}

impl std::error::Error for ModelError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ModelError::Io { error, .. } => Some(error),
            _ => None,
        }
    }
}

impl From<crate::cache::CacheError> for ModelError {
    fn from(e: crate::cache::CacheError) -> ModelError {
        ModelError::Cache(e)
    }
}
