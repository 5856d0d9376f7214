//! `cargo xtask report [RUN]`: a run's tables, or the seeds' tables; its
//! HTML report (`--html`), its Bencher export (`--bmf`); or the gating
//! cells across runs (`--history`).

use super::{gate_report, read_run, resolve};
use crate::flags::ReportArgs;
use anyhow::{bail, Result};
use lockmatrix::gate::GateOptions;
use lockmatrix::report::output::{Destination, Replaces};
use lockmatrix::report::{bmf, history, html, seeds, table};
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
        let html_path = args.html.then(|| match &args.output {
            Some(o) => Destination::new(o, |p| resolve(root, p)),
            None => Destination::File(dir.join("report.html")),
        });
        let bmf_path = args
            .bmf
            .as_ref()
            .map(|b| Destination::new(b, |p| resolve(root, p)));
        if html_path == Some(Destination::Stdout) && bmf_path == Some(Destination::Stdout) {
            bail!("--html -o - and --bmf - would both write to standard output: give one a file");
        }
        for p in html_path.iter().chain(&bmf_path) {
            p.check(Replaces::OwnReport)?;
        }
        if let Some(p) = &bmf_path {
            let doc = bmf::export(&run);
            bmf::check(&doc).map_err(|e| anyhow::anyhow!("internal error: BMF export: {e}"))?;
            p.write(&serde_json::to_string_pretty(&doc)?)?;
            errln!(
                "wrote {} ({} benchmarks, Bencher Metric Format)",
                p.shown(),
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
            p.write(&page)?;
            errln!("wrote {} ({} bytes)", p.shown(), page.len());
        }
        return Ok(true);
    }
    if args.tables {
        out!("{}", seeds::render(&run));
        out!("{}", lockmatrix::report::contention::tables(&run));
        return Ok(true);
    }
    if args.footprint {
        out!("{}", table::footprint_detail(&run));
        return Ok(true);
    }
    out!("{}", table::timings(&run));
    out!("{}", table::footprints(&run));
    out!("{}", table::models(&run));
    out!("{}", table::miri(&run));
    out!("{}", table::lock_crates(&run));
    outln!("\n{}", table::status(&run));
    outln!("{}", table::summary(&run));
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
    let out = args
        .output
        .as_ref()
        .map(|o| Destination::new(o, |p| resolve(root, p)));
    if let Some(o) = &out {
        o.check(Replaces::OwnReport)?;
    }
    let all = results::all(&dirs)?;
    for (dir, why) in &all.skipped {
        errln!("warning: skipping run {}: {why}", dir.display());
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
        .map_err(|e| errln!("warning: {}: not gated: {e:#}", dir.display()))
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
    out!("{}", history::text(&h));
    if let Some(o) = &out {
        let page = history::html(&h);
        o.write(&page)?;
        errln!("wrote {} ({} bytes)", o.shown(), page.len());
    }
    Ok(true)
}
