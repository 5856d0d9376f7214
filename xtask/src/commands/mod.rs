//! One module per command, each with a `run` that returns whether it
//! passed; and what several commands share: the checkout they work on, the
//! run they read, the gate they print.

pub mod baseline;
pub mod ci;
pub mod container;
pub mod doctor;
pub mod gate;
pub mod matrix;
pub mod mutate_orderings;
pub mod report;
pub mod test;
pub mod validate_gate;

use anyhow::{bail, Context, Result};
use lockmatrix::results::{self, Run};
use std::path::{Path, PathBuf};

/// The lockmatrix checkout the command works on: the nearest directory at
/// or above the current one that holds `targets.yaml`, `Cargo.toml` and
/// `suites/`, as cargo finds its workspace. Every command uses this one
/// root for targets.yaml, the suites and the baselines, whichever checkout
/// the xtask binary was built from.
pub fn root() -> Result<PathBuf> {
    let cwd = std::env::current_dir().context("reading the current directory")?;
    let is_root = |d: &Path| {
        d.join("targets.yaml").is_file()
            && d.join("Cargo.toml").is_file()
            && d.join("suites").is_dir()
    };
    match cwd.ancestors().find(|d| is_root(d)) {
        Some(root) => Ok(root.to_path_buf()),
        None => bail!(
            "{}: not inside a lockmatrix checkout (no targets.yaml, Cargo.toml and suites/ here or above)",
            cwd.display()
        ),
    }
}

/// A path from the command line: relative ones are from the current
/// directory, as the user typed them.
pub fn resolve(root: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().map_or_else(|_| root.join(p), |d| d.join(p))
    }
}

/// The run named on the command line, or the newest complete one, read
/// and checked; says which on stderr, and which newer runs it skipped.
/// `what` says what it is for; only a report may show an incomplete run
/// (with a warning), never the gate or a baseline update.
pub fn read_run(
    root: &Path,
    run: Option<PathBuf>,
    results_dir: &Path,
    what: &str,
) -> Result<(PathBuf, Run)> {
    let (dir, run) = match run {
        Some(dir) => {
            let dir = resolve(root, &dir);
            errln!("using run {}", dir.display());
            let run = results::read(&dir)?;
            (dir, run)
        }
        None => {
            let newest = results::newest(&resolve(root, results_dir))?;
            for (dir, why) in &newest.skipped {
                errln!("warning: skipping run {}: {why}", dir.display());
            }
            errln!("using run {}", newest.dir.display());
            (newest.dir, newest.run)
        }
    };
    if !run.complete() {
        if what == "report" {
            errln!(
                "warning: run {} is incomplete (interrupted, or still running): showing what it holds",
                dir.display()
            );
        } else {
            bail!(
                "run {} is incomplete (interrupted, or still running): {what} needs a complete run",
                dir.display()
            );
        }
    }
    Ok((dir, run))
}

/// The gate's findings for `run` ([`lockmatrix::gate::gate`]); what it
/// could not read is said on stderr.
pub fn gate_report(
    root: &Path,
    run: &Run,
    dir: &Path,
    base: Option<&Run>,
    baselines: Option<&Path>,
    opts: &lockmatrix::gate::GateOptions,
) -> Result<lockmatrix::gate::evaluate::GateReport> {
    let baselines = baselines.map(|b| resolve(root, b));
    let g = lockmatrix::gate::Gating {
        root,
        run,
        dir,
        base,
        baselines: baselines.as_deref(),
    };
    let gated = lockmatrix::gate::gate(&g, opts)?;
    for w in &gated.warnings {
        errln!("warning: {w}");
    }
    Ok(gated.report)
}

/// Compares `run` with its reference ([`gate_report`]), prints and writes
/// the reports; returns whether the gate passed.
pub fn gate_run(
    root: &Path,
    run: &Run,
    dir: &Path,
    base: Option<&Run>,
    args: &crate::flags::GateArgs,
) -> Result<bool> {
    let outputs = args.outputs(|p| resolve(root, p))?;
    let report = gate_report(
        root,
        run,
        dir,
        base,
        args.baselines.as_deref(),
        &args.options(),
    )?;
    show_gate(run, &report, &outputs, (args, true))
}

/// Prints the gate's report (in full, or its findings alone) and writes
/// it where asked; returns whether the gate passed (NOT GATED, or a run
/// measured alone, passes unless `--require-gate`).
pub fn show_gate(
    run: &Run,
    report: &lockmatrix::gate::evaluate::GateReport,
    outputs: &crate::flags::GateOutputs,
    (args, full): (&crate::flags::GateArgs, bool),
) -> Result<bool> {
    match full {
        true => out!("\n{}", report.terminal()),
        false => out!("\n{}", report.brief()),
    }
    if let Some(d) = &outputs.json {
        d.write(&serde_json::to_string_pretty(&report.json())?)?;
    }
    // Seed 000's table (its alpha row, rustc's and gcc's CAS side by
    // side), and each operation's ordering footprint per target, collapsed.
    let mut footprints: Vec<(String, String)> = lockmatrix::report::seeds::seed000::markdown(run)
        .into_iter()
        .collect();
    footprints.extend(lockmatrix::report::footprints::markdown(run));
    if let Some(d) = &outputs.markdown {
        d.write(&report.markdown_with(lockmatrix::gate::SUMMARY_BYTES, &footprints))?;
    }
    if let Some(d) = &outputs.pr_comment {
        d.write(&report.markdown_with(lockmatrix::gate::COMMENT_BYTES, &footprints))?;
    }
    use lockmatrix::gate::verdict::Outcome;
    Ok(match report.outcome() {
        // Measured alone (`--crate` without `--against-crate`): nothing
        // was compared, which is what --require-gate refuses.
        Outcome::Pass if args.require_gate && report.unreferenced.is_some() => {
            out!(
                "--require-gate: nothing was compared, so nothing gated; give --against-crate SPEC"
            );
            false
        }
        Outcome::Pass => true,
        Outcome::NotGated => !args.require_gate,
        Outcome::Fail => false,
    })
}
