//! Which sources a target dir last built the workspace's packages from.
//!
//! Cargo decides a path package's freshness by its files' times, and
//! treats a package at the same place in two checkouts (this tree and an
//! `--against` worktree, or two clones sharing the cache) as one unit: a
//! tree's older files would pass for built when another tree's binaries
//! are there. Every target dir the suites are built into (the matrix's
//! per target, loom's, the contention model's, Miri's) keeps a stamp of
//! the sources it last built (`lockmatrix-sources`), and where it names
//! other sources the workspace packages are cleaned out first (their
//! dependencies stay): freshness settled by content.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub(crate) struct SourcesStamp {
    path: PathBuf,
    sources: String,
}

impl SourcesStamp {
    /// The stamp of target dir `dir` for `sources` (any text that changes
    /// with what the build reads).
    pub(crate) fn new(dir: &Path, sources: String) -> SourcesStamp {
        SourcesStamp {
            path: dir.join("lockmatrix-sources"),
            sources,
        }
    }

    /// Whether the dir last built these sources.
    pub(crate) fn holds(&self) -> bool {
        std::fs::read_to_string(&self.path).is_ok_and(|s| s == self.sources)
    }

    /// Records that the dir now holds a build of these sources.
    pub(crate) fn write(&self) -> std::io::Result<()> {
        std::fs::write(&self.path, &self.sources)
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }
}

/// Runs `clean` (a `cargo clean` with the dir's options) for every
/// workspace package ([`packages`]). What it says does not matter:
/// a package never built there has nothing stale to clean, and `clean
/// -p` may say so. An error only when it cannot be started.
pub(crate) fn clean_packages(mut clean: Command) -> std::io::Result<()> {
    for p in packages() {
        clean.args(["-p", p]);
    }
    clean.stdout(Stdio::null()).stderr(Stdio::null()).status()?;
    Ok(())
}

/// The workspace packages built for the targets: the suites, the
/// harness, and the lock crate under test (`subject`, which a `--crate`
/// tree generates).
fn packages() -> impl Iterator<Item = &'static str> {
    crate::select::SUITES
        .iter()
        .filter(|s| s.lang == crate::select::Lang::Rust)
        .map(|s| s.name)
        .chain(["harness", "subject"])
}
