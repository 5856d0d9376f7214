//! Why a results directory could not be used, or a run read: each error
//! names the directory or file, and what was expected. All are bad input
//! or missing set-up (exit status 2).

use crate::file::FileError;
use std::path::PathBuf;

/// Why runs cannot be written under, or found in, a results directory.
#[derive(Debug, thiserror::Error)]
pub enum ResultsError {
    /// `--results` cannot be made a directory, or nothing can be created
    /// in it; `doing` is "create it" or "write there".
    #[error("--results {}: cannot {doing}: {error} (expected a writable directory)", path.display())]
    NotWritable {
        path: PathBuf,
        doing: &'static str,
        error: std::io::Error,
    },
    /// A new run directory could not be created.
    #[error("--results: cannot create {}: {error}", dir.display())]
    RunDir { dir: PathBuf, error: std::io::Error },
    /// The results directory cannot be listed.
    #[error("{}: cannot read the results directory: {error}; run `cargo xtask matrix` first", path.display())]
    NoResults {
        path: PathBuf,
        error: std::io::Error,
    },
    /// No run in it is complete; `passed_over` names the newest skipped
    /// ones, each on a line of its own.
    #[error("no complete run in {}: run `cargo xtask matrix` first{passed_over}", path.display())]
    NoCompleteRun { path: PathBuf, passed_over: String },
    /// A directory named to hold runs is not one.
    #[error("{}: no such directory (expected a run, or a directory of runs)", path.display())]
    NoSuchDirectory { path: PathBuf },
}

/// Why a run directory cannot be read ([`super::read`]): damaged, edited
/// by hand, or not a run at all.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("{}: no such run directory", dir.display())]
    NoRunDirectory { dir: PathBuf },
    #[error("{}: no run.json: not a run, or one interrupted before it started", dir.display())]
    NoRunJson { dir: PathBuf },
    #[error("{}: not UTF-8 text: not a lockmatrix run", path.display())]
    NotUtf8 { path: PathBuf },
    /// `run.json` could not be read (refused, too large, unreadable).
    #[error(transparent)]
    File(FileError),
    /// A format this xtask does not read (it reads `oldest` to `newest`).
    #[error("{}: run format {format}: this xtask reads formats {oldest} to {newest}", path.display())]
    Format {
        path: PathBuf,
        format: u64,
        oldest: u32,
        newest: u32,
    },
    /// Not JSON of a run: serde's words, without the values it quotes
    /// ([`crate::escape::without_values`]).
    #[error("{}: not a lockmatrix run: {why} (damaged or cut short?)", path.display())]
    NotARun { path: PathBuf, why: String },
    /// A one-line field holds a character that acts on a terminal or a page.
    #[error("{}: {why}", path.display())]
    ActingChar {
        path: PathBuf,
        why: crate::escape::ActingChar,
    },
    #[error("{}: target `{target}` is listed twice (edited by hand?)", path.display())]
    TargetTwice { path: PathBuf, target: String },
    /// `suite` is `<target>/<suite>`.
    #[error("{}: {suite} is listed twice (edited by hand?)", path.display())]
    SuiteTwice { path: PathBuf, suite: String },
    /// `cell` is `<target>/<suite> <bench> [<case>] <metric>`.
    #[error("{}: {cell} has two samples of round {round} (edited by hand?)", path.display())]
    TwoSamples {
        path: PathBuf,
        cell: String,
        round: u32,
    },
    /// A sample's value its kind cannot have.
    #[error("{}: {cell} round {round} is {value}: {why} (edited by hand?)", path.display())]
    BadSample {
        path: PathBuf,
        cell: String,
        round: u32,
        value: f64,
        why: crate::protocol::BadValue,
    },
    /// A suite's `<target>/<suite>.jsonl` no longer hashes to what
    /// `run.json` recorded.
    #[error("{}: damaged: it no longer holds the output {} was read from (sha256 differs)", file.display(), path.display())]
    Damaged { file: PathBuf, path: PathBuf },
    /// A suite's `<target>/<suite>.jsonl` cannot be read; `suite` is
    /// `<target>/<suite>`.
    #[error("{error}: the run's raw output of {suite} (kept to check the run)")]
    Output { error: FileError, suite: String },
}
