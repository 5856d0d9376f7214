//! `cargo xtask validate-gate`: measure the pull-request gate's false-alarm
//! rate and power on A/A recordings of this machine's native target.

use super::resolve;
use crate::flags::ValidateGateArgs;
use crate::{packages, progress};
use anyhow::{bail, Result};
use lockmatrix::config::RunnerKind;
use lockmatrix::gate::validate::{self, Recording, ValidateOptions};
use lockmatrix::gate::GateOptions;
use lockmatrix::report::output::{Destination, Replaces};
use lockmatrix::results::{self, Profile};
use lockmatrix::{config, matrix, select, toolchain};
use std::path::Path;

pub fn run(root: &Path, args: ValidateGateArgs) -> Result<bool> {
    let opts = ValidateOptions {
        evaluations: args.evaluations,
        rounds: args.pairs,
        seed: args.seed,
        gate: GateOptions {
            threshold: args.threshold,
            quiet_threshold: args.quiet_threshold,
            alpha: args.alpha,
            ..GateOptions::default()
        },
    };
    opts.check()?;
    // The output rule of every command: checked before any work, written
    // whole through a temporary file, never through a link or into a FIFO.
    let json = args
        .json
        .as_ref()
        .map(|p| Destination::new(p, |p| resolve(root, p)));
    if let Some(d) = &json {
        d.check(Replaces::AnyFile)?;
    }
    // One recording given twice would count as two.
    let mut seen = std::collections::BTreeSet::new();
    for d in &args.from {
        let dir = resolve(root, d);
        let real = dir.canonicalize().unwrap_or_else(|_| dir.clone());
        if !seen.insert(real) {
            bail!(
                "--from {}: given twice (or two paths to one recording): each recording counts once",
                dir.display()
            );
        }
    }
    let recordings: Vec<Recording> = if args.from.is_empty() {
        record(
            root,
            args.runs,
            &args.suites,
            args.rounds,
            &resolve(root, &args.results),
        )?
    } else {
        args.from
            .iter()
            .map(|d| {
                let dir = resolve(root, d);
                let head = results::read(&dir)?;
                if head.against.is_none() {
                    bail!(
                        "{}: not an A/A recording: make one with `cargo xtask matrix --against HEAD --rounds {}`",
                        dir.display(),
                        lockmatrix::policy::AB_ROUNDS.0
                    );
                }
                Ok((head, results::read(&dir.join("base"))?))
            })
            .collect::<Result<_>>()?
    };
    if let Some(to) = &args.keep_summaries {
        keep_summaries(&resolve(root, to), &recordings)?;
    }
    let resampled = validate::resample(&recordings, &opts)?;
    out!("{}", resampled.terminal());
    let e2e = validate::end_to_end(&recordings, &opts)?;
    out!("\n{}", e2e.terminal());
    let every = match args.every_cell {
        true => Some(validate::every_cell(&recordings, &opts)?),
        false => None,
    };
    if let Some(e) = &every {
        out!("\n{}", e.terminal());
    }
    if let Some(d) = &json {
        let report = validate::report_json(&resampled, Some(&e2e), every.as_ref());
        d.write(&serde_json::to_string_pretty(&report)?)?;
    }
    Ok(true)
}

/// Records `count` A/A runs (`--against HEAD`) of the host's native
/// target.
fn record(
    root: &Path,
    count: usize,
    suites: &str,
    rounds: u32,
    results: &Path,
) -> Result<Vec<Recording>> {
    let config = config::load(&root.join("targets.yaml"))?;
    let host = format!("{}-unknown-linux-gnu", std::env::consts::ARCH);
    let Some(native) = config
        .targets
        .iter()
        .find(|t| t.runner == RunnerKind::Native && t.triple == host)
    else {
        bail!("targets.yaml has no native target for this host ({host})");
    };
    let selected = select::targets(&config, Some(&native.name))?;
    let suites = select::suites(Some(suites))?;
    let opts = matrix::Options {
        profile: Profile::Quick,
        rounds: Some(rounds),
        timeout_secs: None,
        results_dir: results.to_path_buf(),
        features: Vec::new(),
        against: Some("HEAD".into()),
        no_insns: true,
        counts_only: false,
        tree: None,
        crates: None,
        // Every round is kept: the validation resamples them.
        stop_when_decided: None,
        toolchain: Default::default(),
        stored: None,
    };
    let need = toolchain::rust_version(&root.join("Cargo.toml"));
    packages::ensure(&matrix::packages_needed(
        &selected,
        need,
        &Default::default(),
    ))?;
    let observer = progress::Terminal::default();
    (0..count.max(1))
        .map(|i| {
            errln!("validate-gate: recording A/A run {} of {count}", i + 1);
            let prepared = matrix::prepare(root, &opts)?;
            let o = matrix::run(
                root, &config, &selected, &suites, &opts, &prepared, &observer,
            )?;
            Ok((o.run, o.base.expect("an --against run has a base")))
        })
        .collect()
}

/// Writes each recording's summary (`validate::summary`) under `to`, one
/// directory per recording named by its run id; refuses, writing
/// nothing, if any of those directories is already there.
fn keep_summaries(to: &Path, recordings: &[Recording]) -> Result<()> {
    let mut seen = std::collections::HashSet::new();
    let dirs: Vec<_> = recordings
        .iter()
        .enumerate()
        .map(|(i, (head, _))| {
            // A run id read from a file reaches a path only as a name,
            // and two recordings never share one.
            let name = lockmatrix::name::Name::parse(&head.run_id)
                .ok()
                .map(|n| n.to_string())
                .filter(|n| seen.insert(n.clone()))
                .unwrap_or_else(|| format!("recording-{:02}", i + 1));
            to.join(name)
        })
        .collect();
    if let Some(d) = dirs.iter().find(|d| d.exists()) {
        bail!(
            "{}: a summary is already there; nothing was written (choose another --keep-summaries)",
            d.display()
        );
    }
    for (dir, (head, base)) in dirs.iter().zip(recordings) {
        std::fs::create_dir_all(dir.join("base"))?;
        results::write(dir, &validate::summary(head))?;
        results::write(&dir.join("base"), &validate::summary(base))?;
    }
    errln!(
        "validate-gate: {} recording summaries in {}",
        recordings.len(),
        to.display()
    );
    Ok(())
}
