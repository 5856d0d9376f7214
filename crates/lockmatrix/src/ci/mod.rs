//! GitHub Actions workflows rendered from targets.yaml (see docs/ci.md).
//!
//! - [`jobs`]: what runs for each target, and where;
//! - [`render`](mod@render): the minijinja templates in `xtask/templates/`;
//! - [`check`](mod@check): drift between the committed files and a fresh rendering;
//! - [`actions`]: the third-party actions, pinned by commit, and the rules
//!   every workflow is held to (pins, no kept checkout credential);
//! - [`merge`]: one run from the runs of CI's per-target jobs;
//! - [`crate_workflow`]: the workflow a lock crate's own repository runs
//!   on its pull requests (`cargo xtask ci crate-workflow`).
//!
//! Three workflows: `lockmatrix.yml` (a job per enabled target, then a gate
//! over their merged runs), `lockmatrix-comment.yml` (posts the gate's report
//! on the pull request with a write token the forked run never holds) and
//! `lockmatrix-baselines.yml` (records baselines and opens a pull request).

pub mod actions;
pub mod check;
pub mod crate_workflow;
pub mod jobs;
pub mod merge;
pub mod render;

#[cfg(test)]
mod tests;

pub use check::CheckError;
pub use crate_workflow::CrateWorkflowError;
pub use jobs::JobsError;
pub use render::RenderError;

use crate::config::Config;
use crate::file::FileError;
use std::path::{Path, PathBuf};

/// Why the workflows could not be written or checked: not rendered, or
/// the files not written or read.
#[derive(Debug, thiserror::Error)]
pub enum WorkflowError {
    #[error(transparent)]
    Render(#[from] RenderError),
    #[error("creating {}", path.display())]
    CreateDir {
        path: PathBuf,
        #[source]
        error: std::io::Error,
    },
    #[error(transparent)]
    Write(#[from] FileError),
    #[error(transparent)]
    Check(#[from] CheckError),
}

/// Every workflow file rendered from targets.yaml: (path relative to the
/// repository root, e.g. `.github/workflows/lockmatrix.yml`, contents).
pub fn render(config: &Config) -> Result<Vec<(PathBuf, String)>, RenderError> {
    render::render(config)
}

/// Writes the rendered workflows under `root` (creating
/// `.github/workflows`) and returns the paths written.
pub fn generate(root: &Path, config: &Config) -> Result<Vec<PathBuf>, WorkflowError> {
    let mut written = Vec::new();
    for (rel, text) in render(config)? {
        let path = root.join(&rel);
        let dir = path.parent().expect("workflows live in a directory");
        std::fs::create_dir_all(dir).map_err(|error| WorkflowError::CreateDir {
            path: dir.to_path_buf(),
            error,
        })?;
        crate::file::replace(&path, &text)?;
        written.push(path);
    }
    Ok(written)
}

/// Compares the committed workflows with a fresh rendering, and holds both
/// to [`actions`]' rules: an empty list when identical and within the
/// rules, else one line per drifted, missing or extra file naming the file
/// (and, when drifted, the first differing line in both versions) and one
/// per broken rule.
pub fn check(root: &Path, config: &Config) -> Result<Vec<String>, WorkflowError> {
    let files = render(config)?;
    let mut lines = check::check_files(root, &files)?;
    lines.extend(check::check_rules(root, &files)?);
    Ok(lines)
}

/// The workflow a lock crate's repository runs on its pull requests, at
/// `workflow`, and the comment workflow beside it: (path, contents); see
/// [`crate_workflow`]. Write them with [`crate_workflow::write`].
pub fn render_crate_workflow(
    config: &Config,
    opts: &crate_workflow::Options,
    workflow: &Path,
) -> Result<Vec<(PathBuf, String)>, CrateWorkflowError> {
    crate_workflow::render(config, opts, workflow)
}

/// Combines several runs (CI's per-target jobs) into one run in `out`; see
/// [`merge::merge_runs`].
pub use merge::merge_runs;
