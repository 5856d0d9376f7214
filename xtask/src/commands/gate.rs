//! `cargo xtask gate [RUN]`: gate an earlier run.

use super::{gate_run, read_run};
use crate::flags::GateRunArgs;
use anyhow::Result;
use std::path::Path;

pub fn run(root: &Path, args: GateRunArgs) -> Result<bool> {
    args.gate.options().check()?;
    let (dir, run) = read_run(root, args.run, &args.results, "the gate")?;
    gate_run(root, &run, &dir, None, &args.gate)
}
