//! `cargo xtask report [RUN]`: a run's tables, or the seeds' tables.

use super::read_run;
use crate::flags::ReportArgs;
use anyhow::Result;
use lockmatrix::report::{seeds, table};
use std::path::Path;

pub fn run(root: &Path, args: ReportArgs) -> Result<bool> {
    let (_, run) = read_run(root, args.run, &args.results, "report")?;
    if args.tables {
        print!("{}", seeds::render(&run));
        return Ok(true);
    }
    print!("{}", table::timings(&run));
    print!("{}", table::lock_crates(&run));
    println!("\n{}", table::status(&run));
    println!("{}", table::summary(&run));
    Ok(true)
}
