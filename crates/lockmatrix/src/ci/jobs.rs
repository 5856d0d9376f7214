//! What CI runs for each target of `targets.yaml`: the job's id, where it
//! runs, whether it needs a maintainer's approval. Everything a template
//! needs is decided here, so the templates only lay it out.

use crate::config::{Config, RunnerKind, Target};
use serde::Serialize;
use std::path::PathBuf;

/// Why targets.yaml gives CI no jobs to run as they are (bad input, exit
/// status 2); each names the file.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum JobsError {
    /// A native target of an architecture with no hosted runner, and no
    /// `labels` naming one.
    #[error("{}: target '{target}' runs natively on {triple} but has no `labels`: name a CI runner of that architecture (e.g. labels: [self-hosted, linux, {arch}])", config.display())]
    NoRunner {
        config: PathBuf,
        target: String,
        triple: String,
        arch: String,
    },
    /// Two targets whose names make the same job id.
    #[error("{}: targets '{first}' and '{second}' would both be CI job '{id}': rename one", config.display())]
    SameJob {
        config: PathBuf,
        first: String,
        second: String,
        id: String,
    },
    #[error("{}: every target is disabled: CI would have nothing to run", config.display())]
    NothingToRun { config: PathBuf },
}

/// The Debian 12 image QEMU and ssh jobs build in, pinned by the digest
/// of its multi-platform index: a tag can be moved to other bytes, a
/// digest cannot (`ci check` refuses a job image without one). The digest
/// is the one docker-library/repo-info records for `debian:12.15`
/// (`repos/debian/remote/12.15.md` at its commit 05f354f0a08a, read
/// through a code index: no registry is reachable where this was written,
/// so it was not pulled here; docs/ci.md). To move it: take the digest
/// `docker buildx imagetools inspect debian:12.x` prints, put both here,
/// regenerate, and re-record the baselines.
pub const DEBIAN_IMAGE: &str =
    "debian:12.15@sha256:813017f3d62be4b5891a7acca6a01bdcd4b8513daa81b1ab99d3a50385b26931";

/// The rustup toolchain that builds the xtask and the native targets'
/// suites: pinned to the compiler the committed baselines were recorded
/// with, since the testbed comparison makes another version incomparable.
pub const RUST_TOOLCHAIN: &str = "1.95.0";

/// Installed before anything else in every target job: what rustup, cargo
/// and actions/checkout need. The xtask installs each target's own packages.
pub const BASE_PACKAGES: &[&str] = &["ca-certificates", "curl", "git", "gcc", "libc6-dev"];

/// The hosted runner of QEMU and ssh jobs and of the gate.
pub const HOSTED: &str = "ubuntu-24.04";

/// The label with which a maintainer approves one run of a fork's pull
/// request on self-hosted and ssh runners.
pub const APPROVAL_LABEL: &str = "safe-to-test";

/// Skips pull requests from forks unless a maintainer approved this head:
/// the run the `safe-to-test` label's own `labeled` event started (a label
/// already there when a new commit is pushed approves nothing; the comment
/// workflow then removes it). Every job also skips the `labeled` event of
/// any other label ([`NOT_ANOTHER_LABEL`]).
pub const FORK_GUARD: &str = "(github.event_name != 'pull_request' || github.event.pull_request.head.repo.full_name == github.repository || (github.event.action == 'labeled' && github.event.label.name == 'safe-to-test')) && (github.event.action != 'labeled' || github.event.label.name == 'safe-to-test')";

/// A pull request's `labeled` event runs the jobs only for the approval
/// label: another label is no reason to run the matrix again.
pub const NOT_ANOTHER_LABEL: &str =
    "github.event.action != 'labeled' || github.event.label.name == 'safe-to-test'";

/// The protected environments whose reviewers approve a job.
pub const SELF_HOSTED_ENVIRONMENT: &str = "self-hosted-approval";
pub const SSH_ENVIRONMENT: &str = "ssh-approval";

/// Marks lockmatrix's pull-request comment, so it is updated, not repeated.
pub const COMMENT_MARKER: &str = "<!-- lockmatrix -->";

/// Minutes a target job may take on top of its suites' timeouts: set-up,
/// building std from source, uploading.
const JOB_OVERHEAD_MINUTES: u64 = 45;

#[derive(Debug, Clone, Serialize)]
pub struct Job {
    /// The workflow job id, e.g. `target-aarch64`.
    pub id: String,
    /// The target's name in targets.yaml.
    pub target: String,
    pub class: String,
    pub triple: String,
    /// `native`, `qemu` or `ssh`.
    pub runner: &'static str,
    /// The `runs-on` value, already YAML: `ubuntu-24.04` or `[self-hosted, linux, ppc64le]`.
    pub runs_on: String,
    /// The container image, if the job runs in one.
    pub container: Option<&'static str>,
    pub self_hosted: bool,
    /// The protected environment that must approve the job.
    pub environment: Option<&'static str>,
    /// Whether the job carries [`FORK_GUARD`].
    pub guarded: bool,
    /// The repository secret holding the ssh private key (ssh targets).
    pub ssh_secret: Option<String>,
    pub timeout_minutes: u64,
    /// The testbed the job declares (`LOCKMATRIX_TESTBED`), so that its
    /// stored baselines are named by it: a native target on GitHub's
    /// hosted arm64 runners ([`HOSTED_ARM_TESTBED`]).
    pub testbed: Option<&'static str>,
}

/// The testbed a native aarch64 job on GitHub's hosted `ubuntu-24.04-arm`
/// runners declares: one runner image of one machine type, whose VMs have
/// a new machine id each time (docs/ci.md says what that costs).
pub const HOSTED_ARM_TESTBED: &str = "github-hosted-ubuntu-24.04-arm";

/// A YAML scalar for `s`: plain when that reads back as the same string,
/// else double-quoted (a JSON string is a valid YAML one).
pub fn yaml_scalar(s: &str) -> String {
    const RESERVED: &[&str] = &[
        "y", "n", "yes", "no", "true", "false", "on", "off", "null", "~",
    ];
    let plain = s.starts_with(|c: char| c.is_ascii_alphabetic())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
        && !RESERVED.contains(&s.to_ascii_lowercase().as_str());
    if plain {
        s.to_string()
    } else {
        serde_json::to_string(s).expect("a string serializes")
    }
}

fn runs_on(config: &Config, t: &Target) -> Result<Vec<String>, JobsError> {
    if !t.labels.is_empty() {
        return Ok(t.labels.iter().map(|l| l.to_string()).collect());
    }
    if t.runner != RunnerKind::Native {
        return Ok(vec![HOSTED.to_string()]);
    }
    let arch = t.triple.split('-').next().unwrap_or("");
    match arch {
        "x86_64" | "i686" | "i586" => Ok(vec![HOSTED.to_string()]),
        "aarch64" => Ok(vec![format!("{HOSTED}-arm")]),
        _ => Err(JobsError::NoRunner {
            config: config.path.clone(),
            target: t.name.to_string(),
            triple: t.triple.to_string(),
            arch: arch.to_string(),
        }),
    }
}

fn job(config: &Config, t: &Target, suites: u64) -> Result<Job, JobsError> {
    // config.rs holds names to letters, digits, '.', '_' and '-': each is
    // a valid job id (once '.' is '_'), artifact name and shell word.
    let labels = runs_on(config, t)?;
    let self_hosted = labels.iter().any(|l| l == "self-hosted");
    let ssh = t.runner == RunnerKind::Ssh;
    let runs_on = if labels.len() == 1 {
        yaml_scalar(&labels[0])
    } else {
        let items: Vec<String> = labels.iter().map(|l| yaml_scalar(l)).collect();
        format!("[{}]", items.join(", "))
    };
    let environment = if ssh {
        Some(SSH_ENVIRONMENT)
    } else if self_hosted {
        Some(SELF_HOSTED_ENVIRONMENT)
    } else {
        None
    };
    // A self-hosted machine need not have a container engine; QEMU and ssh
    // jobs on hosted runners build in the pinned image.
    let container = (t.runner != RunnerKind::Native && !self_hosted).then_some(DEBIAN_IMAGE);
    let ssh_secret = ssh.then(|| crate::runner::ssh::key_variable(&t.name));
    // Saturating: a timeout from targets.yaml is at most a day, but a
    // config built in code is not checked.
    let suite_secs = suites.saturating_mul(config.timeout_secs(t));
    Ok(Job {
        id: format!("target-{}", t.name.replace('.', "_")),
        target: t.name.to_string(),
        class: t.class.to_string(),
        triple: t.triple.to_string(),
        runner: t.runner.name(),
        runs_on,
        container,
        self_hosted,
        environment,
        guarded: self_hosted || ssh,
        ssh_secret,
        timeout_minutes: JOB_OVERHEAD_MINUTES.saturating_add(suite_secs.div_ceil(60)),
        testbed: (t.runner == RunnerKind::Native && labels == [format!("{HOSTED}-arm")])
            .then_some(HOSTED_ARM_TESTBED),
    })
}

/// One job per enabled target, in targets.yaml order.
pub fn jobs(config: &Config) -> Result<Vec<Job>, JobsError> {
    let names: Vec<&str> = crate::select::SUITES
        .iter()
        .filter(|s| !s.test_only)
        .map(|s| s.name)
        .collect();
    let mut jobs: Vec<Job> = Vec::new();
    // Job id to its index in `jobs`: one lookup per target.
    let mut ids: std::collections::HashMap<String, usize> = Default::default();
    for t in config.targets.iter().filter(|t| t.enabled) {
        // The suites it runs: a target without Rust only the C ones.
        let suites = crate::select::for_target(&names, t).0.len() as u64;
        let j = job(config, t, suites)?;
        if let Some(&other) = ids.get(&j.id) {
            return Err(JobsError::SameJob {
                config: config.path.clone(),
                first: jobs[other].target.clone(),
                second: j.target,
                id: j.id,
            });
        }
        ids.insert(j.id.clone(), jobs.len());
        jobs.push(j);
    }
    if jobs.is_empty() {
        return Err(JobsError::NothingToRun {
            config: config.path.clone(),
        });
    }
    Ok(jobs)
}

/// The names of the disabled targets, which get no job.
pub fn disabled(config: &Config) -> Vec<String> {
    config
        .targets
        .iter()
        .filter(|t| !t.enabled)
        .map(|t| t.name.to_string())
        .collect()
}
