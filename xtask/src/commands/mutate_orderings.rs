//! `cargo xtask mutate-orderings`: every ordering of every modelled lock
//! weakened to `Relaxed` in turn, and whether the lock's loom models catch
//! it (`lockmatrix::model::mutate`). Passes when each mutant is caught or
//! its ordering's comment says it is more than needed.

use crate::flags::MutateOrderingsArgs;
use anyhow::Result;
use lockmatrix::model::mutate::{self, Verdict};
use lockmatrix::model::{self as models};
use std::path::Path;
use std::time::{Duration, Instant};

pub fn run(root: &Path, args: MutateOrderingsArgs) -> Result<bool> {
    let toolchain = models::host_toolchain(root)?;
    let start = Instant::now();
    let mutants = mutate::orderings(
        root,
        &toolchain,
        Duration::from_secs(args.timeout),
        &mut |done, all| errln!("mutate-orderings: round {done}/{all} built and checked"),
    )?;
    let rows: Vec<[String; 4]> = mutants
        .iter()
        .map(|m| {
            let s = &m.site;
            let caught = match &m.verdict {
                Verdict::Caught { model, failure } => format!("yes: {model}: {failure}"),
                Verdict::Survived if m.documented() => {
                    format!("no, documented: {}", s.comment)
                }
                Verdict::Survived => "NO".to_string(),
            };
            [
                s.lock.clone(),
                format!("{}:{}", s.file.display(), s.line),
                s.ordering.clone(),
                caught,
            ]
        })
        .collect();
    let head = ["lock", "file:line", "ordering", "caught"];
    let width = |i: usize| {
        rows.iter()
            .map(|r| r[i].len())
            .chain([head[i].len()])
            .max()
            .unwrap_or(0)
    };
    let (w0, w1, w2) = (width(0), width(1), width(2));
    outln!(
        "{:w0$}  {:w1$}  {:w2$}  {}",
        head[0],
        head[1],
        head[2],
        head[3]
    );
    for r in &rows {
        outln!("{:w0$}  {:w1$}  {:w2$}  {}", r[0], r[1], r[2], r[3]);
    }
    let caught = mutants.iter().filter(|m| m.caught()).count();
    let documented = mutants
        .iter()
        .filter(|m| !m.caught() && m.documented())
        .count();
    let unexplained = mutants.len() - caught - documented;
    outln!(
        "{} mutants: {caught} caught, {documented} survived with a comment saying the ordering is more than needed, {unexplained} survived unexplained ({:.0} s)",
        mutants.len(),
        start.elapsed().as_secs_f64()
    );
    Ok(unexplained == 0)
}
