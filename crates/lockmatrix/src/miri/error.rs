//! What can go wrong checking the locks with Miri, as values the caller
//! can tell apart. A race Miri reports is not an error: it is a
//! [`super::MiriResult`] with failing seeds; a Miri that cannot be had is
//! [`super::Unavailable`].

use std::fmt;
use std::path::PathBuf;

#[derive(Debug)]
pub enum MiriError {
    /// No cache directory to build in and keep the results.
    Cache(crate::cache::CacheError),
    /// Reading the sources, writing the cache.
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    /// `cargo miri setup` failed: Miri's sysroot could not be built.
    Setup { log: String },
    /// The suite did not build under Miri, or its `--list` failed.
    Build { suite: String, log: String },
    /// The suite's `--list` printed a line that is not a client record.
    BadOutput {
        suite: String,
        line: String,
        why: String,
    },
}

impl MiriError {
    pub(crate) fn io(path: impl Into<PathBuf>, error: std::io::Error) -> MiriError {
        MiriError::Io {
            path: path.into(),
            error,
        }
    }
}

/// The first line of `log` that says what went wrong.
fn first_error(log: &str) -> &str {
    log.lines()
        .find(|l| l.starts_with("error"))
        .or_else(|| log.lines().rfind(|l| !l.trim().is_empty()))
        .unwrap_or("no output")
}

impl fmt::Display for MiriError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            MiriError::Cache(e) => e.fmt(f),
            MiriError::Io { path, error } => write!(f, "{}: {error}", path.display()),
            MiriError::Setup { log } => {
                write!(f, "cargo miri setup failed: {}", first_error(log))
            }
            MiriError::Build { suite, log } => {
                write!(
                    f,
                    "building {suite} under Miri failed: {}",
                    first_error(log)
                )
            }
            MiriError::BadOutput { suite, line, why } => {
                write!(f, "{suite} under Miri printed {line:?}: {why}")
            }
        }
    }
}

impl std::error::Error for MiriError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            MiriError::Io { error, .. } => Some(error),
            _ => None,
        }
    }
}

impl From<crate::cache::CacheError> for MiriError {
    fn from(e: crate::cache::CacheError) -> MiriError {
        MiriError::Cache(e)
    }
}
