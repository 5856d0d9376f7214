//! What is settled before anything is installed or built: the cache and
//! the results directory take files, `--against` names a revision (checked
//! out), `--crate` a crate cargo resolves (its trees made); and the Debian
//! packages the selected targets need.

use super::options::Options;
use super::worktree;
use crate::host;
use crate::results::{self};
use crate::select::Selected;
use crate::toolchain;
use std::path::{Path, PathBuf};

/// Why a run cannot start (bad input or missing set-up, exit status 2):
/// nothing has been installed or built yet.
#[derive(Debug, thiserror::Error)]
pub enum PrepareError {
    #[error(transparent)]
    Cache(#[from] crate::cache::CacheError),
    #[error(transparent)]
    Results(#[from] results::ResultsError),
    /// `--against` names no revision here, or it cannot be checked out.
    #[error(transparent)]
    Worktree(#[from] worktree::WorktreeError),
    /// A `--crate` (or `--against-crate`) cargo cannot resolve, or whose
    /// tree cannot be made.
    #[error(transparent)]
    Crate(#[from] crate::subject::DeriveError),
}

/// What [`prepare`] settled before anything is installed or built.
pub struct Prepared {
    /// With `--against`: the base revision's worktree.
    pub base: Option<worktree::Worktree>,
    /// The cache directory, checked writable.
    pub cache: PathBuf,
    /// With `--crate`: the tree the crate is built in, and what was
    /// resolved for each side (the base's tree is `base`'s path).
    pub subject: Option<Subjects>,
}

/// The lock crate under test, resolved.
pub struct Subjects {
    pub head_tree: PathBuf,
    pub head: crate::subject::Subject,
    pub base: Option<crate::subject::Subject>,
    pub require_build: bool,
    /// Trailers in the crate's own history between the two versions.
    pub acknowledged: Vec<crate::acknowledge::Acknowledgement>,
    /// The trees' locks, held until the run is over.
    _locks: Vec<std::fs::File>,
    /// Path crates' copies, removed with the run's end.
    _copies: Vec<crate::scratch::Scratch>,
    /// One line each, for the user: a path crate's untracked files left
    /// out of its copy.
    pub notes: Vec<String>,
}

impl Subjects {
    pub(super) fn all(&self) -> impl Iterator<Item = &crate::subject::Subject> {
        std::iter::once(&self.head).chain(&self.base)
    }
}

impl Prepared {
    /// Old `--against` worktrees removed from the cache.
    pub fn removed_worktrees(&self) -> &[PathBuf] {
        self.base.as_ref().map_or(&[], |w| &w.removed)
    }
}

/// Checks what can be checked before installing anything: the cache and
/// the results directory take files, `--against` names a revision
/// (checked out), and `--crate` a crate cargo resolves (its trees made).
pub fn prepare(root: &Path, opts: &Options) -> Result<Prepared, PrepareError> {
    let cache = crate::cache::check()?;
    results::check_writable(&opts.results_dir)?;
    // What a killed run left of a path crate goes before anything else.
    crate::subject::derive::prune(&cache);
    let derive = |spec| crate::subject::derive(root, spec, &cache);
    if let Some(c) = &opts.crates {
        let head = derive(&c.head)?;
        let mut notes: Vec<String> = left_out_note(&c.head, &head.left_out).into_iter().collect();
        let mut locks = vec![head.lock];
        let mut copies: Vec<_> = head.copy.into_iter().collect();
        let (base, base_subject) = match &c.base {
            // A crate against itself: one tree, the same binaries.
            Some(spec) if *spec == c.head => (Some(head.tree.clone()), Some(head.subject.clone())),
            Some(spec) => {
                let d = derive(spec)?;
                notes.extend(left_out_note(spec, &d.left_out));
                locks.push(d.lock);
                copies.extend(d.copy);
                (Some(d.tree), Some(d.subject))
            }
            None => (None, None),
        };
        let base = base.map(|path| worktree::Worktree {
            path,
            commit: host::collect(root).lockmatrix_commit,
            removed: Vec::new(),
        });
        let (head_tree, head) = (head.tree, head.subject);
        return Ok(Prepared {
            base,
            cache,
            subject: Some(Subjects {
                head_tree,
                head,
                base: base_subject,
                require_build: c.require_build,
                acknowledged: c
                    .base
                    .as_ref()
                    .map_or_else(Vec::new, |b| crate::subject::acknowledgements(&c.head, b)),
                _locks: locks,
                _copies: copies,
                notes,
            }),
        });
    }
    let base = match &opts.against {
        Some(rev) => Some(worktree::against(root, rev)?),
        None => None,
    };
    Ok(Prepared {
        base,
        cache,
        subject: None,
    })
}

/// The one line that names a path crate's untracked files left out of
/// its copy (at most five, each on no line of its own), if any.
fn left_out_note(spec: &crate::subject::Spec, left_out: &[PathBuf]) -> Option<String> {
    if left_out.is_empty() {
        return None;
    }
    let mut names: Vec<String> = left_out
        .iter()
        .take(5)
        .map(|p| crate::escape::one_line(&p.to_string_lossy()).into_owned())
        .collect();
    if left_out.len() > 5 {
        names.push(format!("and {} more", left_out.len() - 5));
    }
    Some(format!(
        "crate: {spec}: left out {} untracked file(s) that `cargo package --allow-dirty` would take: {} (commit them or name them in `include` to measure them)",
        left_out.len(),
        names.join(", ")
    ))
}

/// The Debian packages the selected targets need: theirs, and Debian's
/// build-std toolchain when some target has no toolchain yet. `need` is
/// the suites' `rust-version`.
pub fn packages_needed(
    selected: &[Selected],
    need: toolchain::Version,
    only: &toolchain::Only,
) -> Vec<String> {
    let active: Vec<&Selected> = selected.iter().filter(|s| s.skip.is_none()).collect();
    let mut wanted: Vec<String> = active
        .iter()
        .flat_map(|s| s.target.packages.clone())
        .collect();
    // Debian's rustc-web is installed too where only a nightly's rust-src
    // would build a target: it is preferred over a nightly
    // ([`toolchain::discover`]).
    let debian = *only == toolchain::Only::Debian;
    if debian
        || active.iter().any(|s| {
            s.target.rust
                && toolchain::discover_only(&s.target.triple, need, only)
                    .map_or(true, |tc| tc.nightly_build_std())
        })
    {
        wanted.extend(toolchain::DEBIAN_RUST.iter().map(|s| s.to_string()));
    }
    wanted
}
