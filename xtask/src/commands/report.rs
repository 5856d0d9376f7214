//! `cargo xtask report [RUN]`: a run's tables, or the seeds' tables; its
//! HTML report (`--html`), its Bencher export (`--bmf`); or the gating
//! cells across runs (`--history`).

use super::{gate_report, read_run, resolve};
use crate::flags::ReportArgs;
use anyhow::{bail, Context, Result};
use lockmatrix::gate::GateOptions;
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
        let html_path = args.html.then(|| {
            args.output
                .as_ref()
                .map_or_else(|| dir.join("report.html"), |o| resolve(root, o))
        });
        let bmf_path = args.bmf.as_ref().map(|b| resolve(root, b));
        for p in html_path.iter().chain(&bmf_path) {
            check_output(p)?;
        }
        if let Some(p) = &bmf_path {
            let doc = bmf::export(&run);
            bmf::check(&doc).map_err(|e| anyhow::anyhow!("internal error: BMF export: {e}"))?;
            write_output(p, &serde_json::to_string_pretty(&doc)?)?;
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
            write_output(p, &page)?;
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
        check_output(o)?;
    }
    let mut found = Vec::new();
    for d in &dirs {
        if !d.is_dir() {
            bail!(
                "{}: no such directory (expected a run, or a directory of runs)",
                d.display()
            );
        }
        find_runs(d, 3, &mut found);
    }
    let mut runs = Vec::new();
    for dir in found {
        match results::read(&dir) {
            Ok(run) if run.complete() => {
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
            Ok(_) => eprintln!(
                "warning: skipping run {}: incomplete (interrupted, or still running)",
                dir.display()
            ),
            Err(e) => eprintln!("warning: skipping run {}: {e:#}", dir.display()),
        }
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
        write_output(o, &page)?;
        eprintln!("wrote {} ({} bytes)", o.display(), page.len());
    }
    Ok(true)
}

/// Run directories at or under `dir` (down to `depth` levels): a directory
/// with a run.json is a run, and its `base/` (an `--against` base) is not
/// looked into.
fn find_runs(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    if dir.join("run.json").is_file() {
        out.push(dir.to_path_buf());
        return;
    }
    if depth == 0 {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut subdirs: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.is_dir())
        .collect();
    subdirs.sort();
    for d in subdirs {
        find_runs(&d, depth - 1, out);
    }
}

/// An output may be written: not a directory, and not an existing file
/// that this command did not write (an HTML page without lockmatrix's
/// generator tag, a file that is not Bencher Metric Format): those are
/// never overwritten.
fn check_output(path: &Path) -> Result<()> {
    if path.is_dir() {
        bail!(
            "{}: is a directory; expected a file to write",
            path.display()
        );
    }
    let Ok(old) = std::fs::read_to_string(path) else {
        if path.exists() {
            bail!(
                "{}: exists and cannot be read: not overwritten",
                path.display()
            );
        }
        return Ok(());
    };
    let ours = old.contains(html::GENERATOR)
        || serde_json::from_str(&old).is_ok_and(|v| bmf::check(&v).is_ok());
    if !ours {
        bail!(
            "{}: exists and is not a report lockmatrix wrote: not overwritten (remove it, or choose another file)",
            path.display()
        );
    }
    Ok(())
}

/// Writes through a temporary file beside `path` and a rename, so a reader
/// never sees half a report and a failed write leaves the old one.
fn write_output(path: &Path, text: &str) -> Result<()> {
    let name = path
        .file_name()
        .map_or("report".into(), |n| n.to_string_lossy().into_owned());
    let tmp = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
    std::fs::write(&tmp, text).with_context(|| format!("{}: cannot write", path.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        anyhow::anyhow!("{}: cannot write: {e}", path.display())
    })
}
