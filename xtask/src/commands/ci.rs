//! `cargo xtask ci generate|check|merge`: the GitHub Actions workflows.

use super::resolve;
use crate::flags::CiCommand;
use anyhow::Result;
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
    }
}
