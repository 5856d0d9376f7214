//! `cargo xtask baseline update`: record a run as the new baselines.

use super::{read_run, resolve};
use crate::flags::BaselineCommand;
use anyhow::Result;
use lockmatrix::gate;
use std::path::Path;

pub fn run(root: &Path, command: BaselineCommand) -> Result<bool> {
    let BaselineCommand::Update {
        targets,
        suites,
        from,
        results,
        baselines,
        counts_only,
    } = command;
    let (_, run) = read_run(root, from, &results, "baseline update")?;
    if run.host.lockmatrix_dirty {
        errln!(
            "warning: run {} was made from a tree with uncommitted changes",
            run.run_id
        );
    }
    let Some(commit) = &run.host.lockmatrix_commit else {
        anyhow::bail!(
            "run {}: records no commit (made outside a git checkout): a baseline needs the commit it was measured at",
            run.run_id
        );
    };
    let update = match counts_only {
        true => gate::update::update_counts,
        false => gate::update_baselines,
    };
    let lines = update(
        &run,
        &resolve(root, &baselines),
        targets.as_deref(),
        suites.as_deref(),
        commit,
    )?;
    for line in lines {
        outln!("{line}");
    }
    Ok(true)
}
