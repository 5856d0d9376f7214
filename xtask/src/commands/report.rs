//! `cargo xtask report [RUN]`: a run's tables, or the seeds' tables; its
//! HTML report (`--html`), its Bencher export (`--bmf`); or the gating
//! cells across runs (`--history`).

use super::{gate_report, read_run, resolve};
use crate::flags::ReportArgs;
use anyhow::{bail, Result};
use lockmatrix::file;
use lockmatrix::gate::GateOptions;
use lockmatrix::report::{bmf, history, html, output, seeds, table};
use lockmatrix::results;
use std::path::{Path, PathBuf};

pub fn run(root: &Path, args: ReportArgs) -> Result<bool> {
    if args.history {
        return self::history(root, &args);
    }
    if args.output.is_some() && !args.html {
        bail!("-o/--output names the file of --html or --history; give one of them");
    }
    if args.runs.len() > 1 {
        bail!(
            "report takes one run ({} given); --history takes several",
            args.runs.len()
        );
    }
    let (dir, run) = read_run(root, args.runs.first().cloned(), &args.results, "report")?;
    if args.html || args.bmf.is_some() {
        // Check every output before writing any.
        let html_path = args.html.then(|| {
            args.output
                .as_ref()
                .map_or_else(|| dir.join("report.html"), |o| resolve(root, o))
        });
        let bmf_path = args.bmf.as_ref().map(|b| resolve(root, b));
        for p in html_path.iter().chain(&bmf_path) {
            output::check(p)?;
        }
        if let Some(p) = &bmf_path {
            let doc = bmf::export(&run);
            bmf::check(&doc).map_err(|e| anyhow::anyhow!("internal error: BMF export: {e}"))?;
            file::replace(p, &serde_json::to_string_pretty(&doc)?)?;
            eprintln!(
                "wrote {} ({} benchmarks, Bencher Metric Format)",
                p.display(),
                doc.as_object().map_or(0, |o| o.len())
            );
        }
        if let Some(p) = &html_path {
            let gate = gate_report(
                root,
                &run,
                &dir,
                None,
                args.baselines.as_deref(),
                &GateOptions::default(),
            )?;
            let page = html::render(&run, Some(&gate));
            file::replace(p, &page)?;
            eprintln!("wrote {} ({} bytes)", p.display(), page.len());
        }
        return Ok(true);
    }
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

/// `--history`: every complete run under the given directories (or
/// `--results`), each gated as `cargo xtask gate` would, in order.
fn history(root: &Path, args: &ReportArgs) -> Result<bool> {
    let dirs: Vec<PathBuf> = if args.runs.is_empty() {
        vec![resolve(root, &args.results)]
    } else {
        args.runs.iter().map(|d| resolve(root, d)).collect()
    };
    let out = args.output.as_ref().map(|o| resolve(root, o));
    if let Some(o) = &out {
        output::check(o)?;
    }
    let all = results::all(&dirs)?;
    for (dir, why) in &all.skipped {
        eprintln!("warning: skipping run {}: {why}", dir.display());
    }
    let mut runs = Vec::new();
    for (dir, run) in all.runs {
        let gate = gate_report(
            root,
            &run,
            &dir,
            None,
            args.baselines.as_deref(),
            &GateOptions::default(),
        )
        .map_err(|e| eprintln!("warning: {}: not gated: {e:#}", dir.display()))
        .ok();
        runs.push((dir, run, gate));
    }
    if runs.is_empty() {
        bail!(
            "no complete run in {}: run `cargo xtask matrix` first",
            dirs.iter()
                .map(|d| d.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
    let h = history::build(runs);
    print!("{}", history::text(&h));
    if let Some(o) = &out {
        let page = history::html(&h);
        file::replace(o, &page)?;
        eprintln!("wrote {} ({} bytes)", o.display(), page.len());
    }
    Ok(true)
}
