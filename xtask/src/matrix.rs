//! `cargo xtask matrix`: set up, build every selected suite for every
//! selected target, run them, and report. One target's failure never stops
//! the others; the exit status is 1 if any target failed.

use crate::build::{self, Job};
use crate::config::{Config, RunnerKind};
use crate::doctor;
use crate::host;
use crate::packages;
use crate::protocol;
use crate::results::{self, Run, Status, TargetResult, ToolInfo};
use crate::runner;
use crate::select::{Selected, Suite};
use crate::table;
use crate::toolchain;
use anyhow::Result;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub struct Options {
    pub profile: String,
    pub rounds: Option<u32>,
    pub timeout_secs: Option<u64>,
    pub results_dir: PathBuf,
    pub features: Vec<String>,
    pub install: bool,
}

/// Installs what the selected targets need: their packages, and Debian's
/// build-std toolchain when some target has no toolchain yet.
fn setup(selected: &[Selected]) -> Result<()> {
    let active: Vec<&Selected> = selected.iter().filter(|s| s.skip.is_none()).collect();
    let mut wanted: Vec<String> = active
        .iter()
        .flat_map(|s| s.target.packages.clone())
        .collect();
    if active
        .iter()
        .any(|s| toolchain::discover(&s.target.triple).is_err())
    {
        wanted.extend(toolchain::DEBIAN_RUST.iter().map(|s| s.to_string()));
    }
    packages::ensure(&wanted)
}

fn suite_args(opts: &Options) -> Vec<String> {
    let mut args = vec!["--profile".to_string(), opts.profile.clone()];
    if let Some(r) = opts.rounds {
        args.extend(["--rounds".to_string(), r.to_string()]);
    }
    args
}

pub fn run(
    root: &Path,
    config: &Config,
    selected: Vec<Selected>,
    suites: &[Suite],
    opts: &Options,
) -> Result<Run> {
    if opts.install {
        setup(&selected)?;
    }
    let started = host::utc(host::now_secs());
    let (run_id, dir) = results::new_run_dir(&opts.results_dir, &started)?;
    std::fs::create_dir_all(dir.join("logs"))?;
    eprintln!(
        "lockmatrix run {run_id}: {} targets x {} suites -> {}",
        selected.len(),
        suites.len(),
        dir.display()
    );

    let mut run = Run {
        format: results::FORMAT_VERSION,
        run_id,
        started,
        finished: None,
        command: std::env::args().skip(1).collect(),
        profile: opts.profile.clone(),
        host: host::collect(root),
        targets: Vec::new(),
    };

    // Set-up per target: what is missing marks that target failed, not the run.
    let mut jobs: Vec<Job> = Vec::new();
    let mut job_of: Vec<Option<usize>> = Vec::new();
    for s in &selected {
        let t = &s.target;
        let ready = doctor::check(t);
        let mut result = TargetResult {
            name: t.name.clone(),
            triple: t.triple.clone(),
            class: t.class.clone(),
            runner: t.runner.name().into(),
            status: Status::Ok,
            toolchain: ready.toolchain.as_ref().ok().map(|tc| ToolInfo {
                what: tc.label.clone(),
                version: tc.version(),
            }),
            build_std: ready.toolchain.as_ref().is_ok_and(|tc| tc.build_std),
            linker: ready.linker.as_ref().ok().map(|p| ToolInfo {
                what: p.display().to_string(),
                version: doctor::linker_version(p),
            }),
            emulator: ready
                .emulator
                .as_ref()
                .and_then(|e| e.as_ref().ok())
                .map(|p| ToolInfo {
                    what: p.display().to_string(),
                    version: doctor::emulator_version(p),
                }),
            build_secs: None,
            run_secs: None,
            suites: Vec::new(),
        };
        let mut job = None;
        if let Some(why) = &s.skip {
            result.status = Status::NotRun(why.clone());
        } else if t.runner == RunnerKind::Ssh && crate::ssh::key_for(t).is_none() {
            result.status = Status::NotRun(format!(
                "no runner: set LOCKMATRIX_SSH_KEY (or LOCKMATRIX_SSH_KEY_{}) to the private key for {}",
                t.name.to_uppercase().replace('-', "_"),
                t.ssh.as_ref().map_or("?".into(), |h| format!("{}@{}:{}", h.user, h.host, h.port))
            ));
        } else if let Some(missing) = ready.missing() {
            result.status = Status::Failed(format!("set-up: {missing}"));
        } else if let Some(same) = jobs.iter().position(|j| j.target.triple == t.triple) {
            // Two hosts of one architecture run the same binaries.
            job = Some(same);
        } else {
            job = Some(jobs.len());
            jobs.push(Job {
                target: t,
                toolchain: ready.toolchain.clone().unwrap(),
                linker: ready.linker.clone().unwrap(),
            });
        }
        job_of.push(job);
        run.targets.push(result);
    }

    let names: Vec<&str> = suites.iter().map(|s| s.name).collect();
    let built = build::build_all(root, &jobs, &names, &opts.features, &dir.join("logs"), 2);

    let progress = crate::progress::Progress::new("run", jobs.len());
    let args = suite_args(opts);
    for (i, s) in selected.iter().enumerate() {
        let Some(j) = job_of[i] else { continue };
        let result = &mut run.targets[i];
        result.build_secs = Some(built[j].secs);
        let binaries = match &built[j].binaries {
            Ok(b) => b,
            Err(e) => {
                result.status = Status::Failed(e.clone());
                continue;
            }
        };
        let t = &s.target;
        let timeout = Duration::from_secs(opts.timeout_secs.unwrap_or(config.timeout_secs(t)));
        let out_dir = dir.join(&t.name);
        std::fs::create_dir_all(&out_dir)?;
        let remote = match (&t.ssh, crate::ssh::key_for(t)) {
            (Some(host), Some(key)) if t.runner == RunnerKind::Ssh => {
                match crate::ssh::Remote::open(host, &key) {
                    Ok(r) => Some(r),
                    Err(why) => {
                        progress.finish(&t.name, &format!("failed: {why}"));
                        result.status = Status::Failed(why);
                        continue;
                    }
                }
            }
            _ => None,
        };
        let mut failures: Vec<String> = Vec::new();
        let mut run_secs = 0.0;
        for suite in &names {
            let item = format!("{}/{suite}", t.name);
            progress.start(&item);
            let ran = match &remote {
                Some(r) => r
                    .copy(&binaries[*suite], suite)
                    .and_then(|()| r.run(suite, &args, timeout)),
                None => {
                    let inv = runner::invocation(t, &binaries[*suite], &args);
                    runner::execute(&inv, &out_dir, timeout)
                        .map(|o| (o, inv.shell()))
                        .map_err(|e| format!("cannot start {}: {e}", inv.program))
                }
            };
            let (outcome, command) = match ran {
                Ok(r) => r,
                Err(why) => {
                    progress.finish(&item, &format!("failed: {why}"));
                    failures.push(format!("{suite}: {why}"));
                    continue;
                }
            };
            std::fs::write(out_dir.join(format!("{suite}.jsonl")), &outcome.stdout)?;
            std::fs::write(out_dir.join(format!("{suite}.stderr")), &outcome.stderr)?;
            let parsed = protocol::parse(&outcome.stdout);
            let status = results::judge(&outcome, &parsed, timeout.as_secs());
            progress.finish(
                &item,
                &format!("{} in {:.1}s", status.label(), outcome.secs),
            );
            if let Status::Failed(why) = &status {
                failures.push(format!("{suite}: {why}"));
            }
            run_secs += outcome.secs;
            result
                .suites
                .push(results::suite_run(suite, command, &outcome, parsed, status));
        }
        result.run_secs = Some(run_secs);
        if !failures.is_empty() {
            result.status = Status::Failed(failures.join("; "));
        }
        results::write(&dir, &run)?;
    }
    progress.done();

    run.finished = Some(host::utc(host::now_secs()));
    results::write(&dir, &run)?;
    print!("{}", table::timings(&run));
    println!("\n{}", table::status(&run));
    println!("{}", table::summary(&run));
    println!("results: {}", dir.join("run.json").display());
    Ok(run)
}
