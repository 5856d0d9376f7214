//! `cargo xtask matrix`: the flags into a [`Job`], checked, run (in the
//! container where this host cannot), and what it found shown.

use super::resolve;
use crate::flags::MatrixArgs;
use crate::{miri_setup, packages, progress};
use anyhow::Result;
use lockmatrix::job::{End, Finished, Job, Request, SetUp, SetUpError};
use lockmatrix::report::table;
use std::path::Path;

pub fn run(root: &Path, args: MatrixArgs) -> Result<bool> {
    // Every option is checked before anything is installed or built.
    let outputs = args.gate.outputs(|p| resolve(root, p))?;
    let job = Job::check(request(root, &args))?;
    // Checked here, the same matrix runs inside the image.
    if let Some(plan) = super::container::choose(root, &args, job.selected(), job.need())? {
        return plan.run(root, job.config());
    }
    let setup = Installer;
    let finished = job.run(&setup, &progress::Terminal::default())?;
    show(&finished, args.tables);
    let targets_ok = finished.targets_ok();
    let passed = match &finished.end {
        End::NothingRan { why, answered } => {
            if !answered {
                anyhow::bail!("nothing ran: {why}");
            }
            outln!("nothing ran: {why}");
            true
        }
        End::Gated(gated) => {
            for w in &gated.warnings {
                errln!("warning: {w}");
            }
            let full = args.tables;
            let gate_ok =
                super::show_gate(&finished.run, &gated.report, &outputs, (&args.gate, full))?;
            targets_ok && gate_ok
        }
    };
    if !args.no_html {
        html(&finished)?;
    }
    if !args.tables {
        let dir = finished.dir.display();
        outln!("every table: cargo xtask report {dir} (the seeds': --tables)");
        outln!("the gate in full: cargo xtask gate {dir}");
    }
    Ok(passed)
}

/// `results/<run>/report.html`: the run's page, written with every run
/// (`--no-html` leaves it out), and where it is.
fn html(f: &Finished) -> Result<()> {
    let gate = match &f.end {
        End::Gated(g) => Some(&g.report),
        _ => None,
    };
    let started = std::time::Instant::now();
    let page = lockmatrix::report::html::render(&f.run, gate);
    let path = f.dir.join("report.html");
    lockmatrix::file::replace(&path, &page)?;
    outln!(
        "report: {} ({} KB, written in {:.1}s)",
        path.display(),
        page.len() / 1024,
        started.elapsed().as_secs_f64()
    );
    Ok(())
}

/// The flags as the library takes them, paths resolved from where the
/// user typed them.
fn request(root: &Path, args: &MatrixArgs) -> Request {
    let gate = &args.gate;
    Request {
        root: root.to_path_buf(),
        cwd: std::env::current_dir().unwrap_or_else(|_| root.to_path_buf()),
        config: resolve(root, &args.selection.config),
        targets: args.selection.targets.clone(),
        suites: args.suites.clone(),
        profile: args.profile,
        rounds: args.rounds,
        timeout: args.timeout,
        results: resolve(root, &args.results),
        features: args.features.clone(),
        against: args.against.clone(),
        krate: args.krate.clone(),
        against_crate: args.against_crate.clone(),
        require_build: args.require_build,
        no_insns: args.no_insns,
        no_install: args.no_install,
        toolchain: args.toolchain.clone(),
        gate: gate.options(),
        baselines: match &gate.baselines {
            Some(b) => resolve(root, b),
            None => root.join("baselines"),
        },
        baselines_given: gate.baselines.is_some(),
        require_gate: gate.require_gate,
    }
}

/// Installs with apt-get and rustup (`--no-install` never gets here).
struct Installer;

impl SetUp for Installer {
    fn packages(&self, wanted: &[String]) -> Result<(), SetUpError> {
        // Its causes are kept: the error prints as it did.
        Ok(packages::ensure(wanted)?)
    }

    fn miri(&self) {
        // Where it cannot be had the check says NOT CHECKED, with the
        // command, and the rest of the matrix runs.
        if let Err(e) = miri_setup::install() {
            errln!("miri: NOT CHECKED: {e:#}");
        }
    }
}

/// A finished run's targets and where it is; with `--tables` every table
/// of the run first (the default keeps the terminal to the findings).
fn show(f: &Finished, tables: bool) {
    let run = &f.run;
    if tables {
        out!("{}", table::timings(run));
        out!("{}", table::footprints(run));
        out!("{}", table::models(run));
        out!("{}", table::miri(run));
        out!("{}", lockmatrix::report::contention::tables(run));
        out!("{}", table::lock_crates(run));
    }
    outln!("\n{}", table::status(run));
    outln!("{}", table::summary(run));
    outln!("results: {}", f.dir.join("run.json").display());
}
