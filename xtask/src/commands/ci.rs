//! `cargo xtask ci generate|check|merge|crate-workflow`: the GitHub Actions
//! workflows.

use super::resolve;
use crate::flags::CiCommand;
use anyhow::{bail, Context, Result};
use lockmatrix::ci::crate_workflow::{self, Options};
use lockmatrix::report::output::Destination;
use lockmatrix::{ci, config};
use std::path::{Path, PathBuf};

pub fn run(root: &Path, command: CiCommand) -> Result<bool> {
    match command {
        CiCommand::Generate { config } => {
            let config = config::load(&resolve(root, &config))?;
            for path in ci::generate(root, &config)? {
                outln!("wrote {}", path.display());
            }
            Ok(true)
        }
        CiCommand::Check { config } => {
            let config = config::load(&resolve(root, &config))?;
            let drift = ci::check(root, &config)?;
            for line in &drift {
                outln!("{line}");
            }
            if drift.is_empty() {
                outln!("workflows match targets.yaml and pin every action by commit");
            }
            Ok(drift.is_empty())
        }
        CiCommand::Merge { runs, out } => {
            let runs: Vec<PathBuf> = runs.iter().map(|r| resolve(root, r)).collect();
            ci::merge_runs(&runs, &resolve(root, &out))?;
            outln!("merged {} runs into {}", runs.len(), out.display());
            Ok(true)
        }
        CiCommand::CrateWorkflow {
            krate,
            lockmatrix_repo,
            lockmatrix_rev,
            output,
            config,
        } => {
            // Bad input is named before git runs or targets.yaml is read.
            crate_workflow::check_crate_name(&krate)?;
            let repo = lockmatrix_repo
                .as_deref()
                .unwrap_or(crate_workflow::DEFAULT_REPO);
            let rev = match lockmatrix_rev {
                Some(rev) => rev,
                None => head_commit(root)?,
            };
            let opts = Options::new(&krate, repo, &rev)?;
            let config = config::load(&resolve(root, &config))?;
            let output = output.filter(|o| o != Path::new("-"));
            let workflow = match &output {
                Some(o) => resolve(root, o),
                None => PathBuf::from(crate_workflow::DEFAULT_FILE),
            };
            let files = ci::render_crate_workflow(&config, &opts, &workflow)?;
            if output.is_none() {
                // Two files in one stream: two YAML documents, to read;
                // -o writes each where it goes.
                let text: Vec<&str> = files.iter().map(|(_, text)| text.as_str()).collect();
                Destination::Stdout.write(&text.join("---\n"))?;
                return Ok(true);
            }
            crate_workflow::write(&files)?;
            for (path, _) in &files {
                outln!("wrote {}", path.display());
            }
            outln!(
                "they check out {} at {}: that commit must be on GitHub there",
                opts.lockmatrix_repo(),
                opts.lockmatrix_rev()
            );
            Ok(true)
        }
    }
}

/// This checkout's HEAD commit, the lockmatrix a crate workflow runs by
/// default; a warning when the tree has changes that commit lacks.
fn head_commit(root: &Path) -> Result<String> {
    let git = |args: &[&str]| -> Result<String> {
        let out = std::process::Command::new("git")
            .arg("-C")
            .arg(root)
            .args(args)
            .output()
            .context("running git")?;
        if !out.status.success() {
            bail!(
                "git {}: {}",
                args.join(" "),
                String::from_utf8_lossy(&out.stderr).trim()
            );
        }
        Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    let head = git(&["rev-parse", "HEAD"])
        .context("--lockmatrix-rev not given, and this checkout's HEAD cannot be read")?;
    if git(&["status", "--porcelain", "--untracked-files=no"]).is_ok_and(|s| !s.is_empty()) {
        errln!(
            "warning: {} has uncommitted changes: the workflow runs its commit {head} without them",
            root.display()
        );
    }
    Ok(head)
}
