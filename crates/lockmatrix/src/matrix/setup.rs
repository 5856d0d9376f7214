//! Setting a run up: what each selected target needs and has (its
//! record, the build job it shares), the QEMU plugin; and why a crate
//! under test does not build somewhere.

use super::options::Options;
use super::prepare::{Prepared, Subjects};
use crate::build::Job;
use crate::config::{Config, RunnerKind, Target};
use crate::cpu::BadChoices;
use crate::name;
use crate::observe::{Event, Observer};
use crate::readiness::{self, Readiness};
use crate::results::{self, Failure, Run, Status, TargetResult, ToolInfo};
use crate::runner::ssh;
use crate::select::Selected;
use crate::toolchain;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// What `readiness` found for `t`, as the run records it.
fn target_result(t: &Target, ready: &Readiness) -> TargetResult {
    let tool = |p: &PathBuf, version: String| ToolInfo {
        what: p.display().to_string(),
        version,
    };
    let found = |r: &Option<std::result::Result<PathBuf, readiness::Missing>>| {
        r.as_ref()
            .and_then(|e| e.as_ref().ok())
            .map(|p| tool(p, readiness::emulator_version(p)))
    };
    TargetResult {
        name: t.name.clone(),
        triple: t.triple.clone(),
        class: t.class.clone(),
        runner: t.runner,
        status: Status::Pending,
        toolchain: ready
            .toolchain
            .as_ref()
            .ok()
            .and_then(Option::as_ref)
            .map(|tc| ToolInfo {
                what: tc.label.clone(),
                version: tc.version(),
            }),
        build_std: ready
            .toolchain
            .as_ref()
            .is_ok_and(|tc| tc.as_ref().is_some_and(|tc| tc.build_std)),
        linker: ready
            .linker
            .as_ref()
            .ok()
            .map(|p| tool(p, readiness::linker_version(p))),
        emulator: found(&ready.emulator),
        counter: found(&ready.counter),
        cpu: t.chooses_cpu().then(|| results::Cpu {
            variant: t.variant.as_ref().map(|v| v.to_string()),
            qemu_cpu: t.qemu_cpu.clone(),
            codegen: t.codegen_flags().join(" "),
        }),
        build_secs: None,
        run_secs: None,
        insns_tolerance: t.insns_tolerance,
        stored_rounds: None,
        cpu_model: None,
        machine: None,
        kernel: None,
        virtualization: None,
        declared_testbed: None,
        sources_sha256: None,
        binaries: BTreeMap::new(),
        compilers: BTreeMap::new(),
        not_built: None,
        suites: Vec::new(),
    }
}

/// What [`set_up`] settled: each selected target's record and, for those
/// that can be built, the build job it shares.
pub(super) struct Targets<'a> {
    /// Each selected target's record, in selection order.
    pub results: Vec<TargetResult>,
    /// The build jobs, one per triple and CPU choice.
    pub jobs: Vec<Job<'a>>,
    /// Each selected target's job, where it can be built.
    pub job_of: Vec<Option<usize>>,
}

/// What the suites need of a target's tools: the oldest Rust they build
/// with, the toolchains `--toolchain` admits, and the suites to build.
pub(super) struct Wanted<'a> {
    pub need: toolchain::Version,
    pub only: &'a toolchain::Only,
    pub suites: &'a [&'a str],
}

/// Each selected target's record and, for those that can be built, the
/// build job it shares (two hosts of one architecture run the same
/// binaries). What is missing marks that target failed, not the run; a
/// CPU choice its tools do not know (any selected target's) is bad input
/// and fails the whole run before anything is built.
pub(super) fn set_up<'a>(
    config: &Config,
    selected: &'a [Selected],
    wanted: Wanted,
    prepared: &Prepared,
) -> std::result::Result<Targets<'a>, BadChoices> {
    let Wanted {
        need,
        only,
        suites: names,
    } = wanted;
    let cache = &prepared.cache;
    let mut bad = Vec::new();
    let (mut targets, mut jobs, mut job_of) = (Vec::new(), Vec::<Job>::new(), Vec::new());
    // (triple, codegen flags) to the job that builds them.
    let mut job_for: std::collections::HashMap<(name::Name, Vec<String>), usize> =
        Default::default();
    for s in selected {
        let t = &s.target;
        let mut ready = readiness::check(t, need, only);
        if s.skip.is_none() {
            bad.append(&mut ready.choices);
        }
        let mut result = target_result(t, &ready);
        let mut job = None;
        let (runs, not_built) = crate::select::for_target(names, t);
        result.not_built = not_built.clone();
        if let Some(why) = &s.skip {
            result.status = Status::NotRun(why.clone());
        } else if let (true, Some(why)) = (runs.is_empty(), not_built) {
            result.status = Status::NotRun(why);
        } else if t.runner == RunnerKind::Ssh && ssh::key_for(t).is_none() {
            result.status = Status::NotRun(format!(
                "no runner: set LOCKMATRIX_SSH_KEY (or {}) to the private key for {}",
                ssh::key_variable(&t.name),
                t.ssh
                    .as_ref()
                    .map_or("?".into(), |h| format!("{}@{}:{}", h.user, h.host, h.port))
            ));
        } else if let Some(missing) = ready.missing() {
            result.status = Status::Failed(Failure::SetUp {
                missing: missing.to_string(),
            });
        } else if let Some(why) = prepared
            .subject
            .as_ref()
            .and_then(|s| too_new(s, t, ready.toolchain.as_ref().ok()?.as_ref()?))
        {
            result.status = cannot_build(prepared, why, None);
        } else if let Some(&same) = job_for.get(&(t.triple.clone(), t.codegen_flags())) {
            // Two hosts of one architecture and CPU choice run the same binaries.
            job = Some(same);
        } else {
            job = Some(jobs.len());
            job_for.insert((t.triple.clone(), t.codegen_flags()), jobs.len());
            jobs.push(Job {
                target: t,
                toolchain: ready.toolchain.clone().expect("ready"),
                linker: ready.linker.clone().expect("ready"),
                cache: cache.to_path_buf(),
            });
        }
        targets.push(result);
        job_of.push(job);
    }
    if !bad.is_empty() {
        return Err(BadChoices {
            path: config.path.clone(),
            errors: bad,
        });
    }
    Ok(Targets {
        results: targets,
        jobs,
        job_of,
    })
}

/// Why the crate under test (either side) cannot be built for `t` with
/// `tc`: its `rust-version` is newer than the toolchain.
fn too_new(s: &Subjects, t: &Target, tc: &toolchain::Toolchain) -> Option<String> {
    let have = toolchain::Version::parse(&tc.version())?;
    s.all().find_map(|c| {
        let why = c.too_new_for(have)?;
        Some(format!(
            "{why}; the toolchain for {} is {}",
            t.name,
            tc.version()
        ))
    })
}

/// The status of a target the crate under test does not build for: not
/// run, with the reason, unless `--require-build` makes it a failure.
pub(super) fn cannot_build(prepared: &Prepared, why: String, log: Option<String>) -> Status {
    match prepared.subject.as_ref().is_some_and(|s| s.require_build) {
        true => Status::Failed(Failure::Build { error: why, log }),
        false => Status::NotRun(why),
    }
}

/// When a build failed because the crate under test did not compile,
/// that said in one line: the crate, the target and cargo's first error.
pub(super) fn crate_build_failure(
    s: &Subjects,
    target: &str,
    failure: &Failure,
) -> Option<(String, Option<String>)> {
    let Failure::Build { log: Some(log), .. } = failure else {
        return None;
    };
    let text = std::fs::read_to_string(log).ok()?;
    let culprit = s
        .all()
        .find(|c| text.contains(&format!("could not compile `{}`", c.name)))?;
    let first = text
        .lines()
        .find(|l| l.starts_with("error"))
        .unwrap_or("error")
        .chars()
        .take(160)
        .collect::<String>();
    Some((
        format!("{} does not build for {target}: {first}", culprit.label()),
        Some(log.clone()),
    ))
}

/// The QEMU plugin, when some job counts instructions and `--no-insns` is
/// not given; a plugin that does not build is a warning, not a failure.
pub(super) fn plugin(
    root: &Path,
    jobs: &[Job],
    opts: &Options,
    run: &mut Run,
    observer: &dyn Observer,
) -> Option<PathBuf> {
    if opts.no_insns || !jobs.iter().any(|j| crate::policy::counted(j.target)) {
        return None;
    }
    match crate::plugin::build(root) {
        Ok(so) => {
            run.insns_plugin = Some(ToolInfo {
                what: so.display().to_string(),
                version: format!("insns-plugin, QEMU plugin API {}", crate::plugin::API),
            });
            Some(so)
        }
        Err(why) => {
            observer.event(Event::Warning(&format!("no insns_per_op this run: {why}")));
            None
        }
    }
}
