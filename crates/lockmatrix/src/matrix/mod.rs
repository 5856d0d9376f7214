//! The matrix: build every selected suite for every selected target, run
//! them, and record everything in a run directory. One target's failure
//! never stops the others.
//!
//! With `--against REV` the base revision is built too ([`worktree`]) and
//! runs beside this tree, round for round ([`plan`]); its run is kept as
//! `base/run.json` in the run directory. The steps: [`prepare`] (checks
//! that need nothing installed), [`packages_needed`] (for the caller to
//! install), [`run`].

mod ordering;
mod pipeline;
mod plan;
mod site;
pub mod worktree;

pub use plan::rounds;

use crate::build::{self, Built, Job, Tree};
use crate::config::{Config, RunnerKind, Target};
use crate::cpu::BadChoices;
use crate::host;
use crate::name;
use crate::observe::{Event, Observer};
use crate::readiness::{self, Readiness};
use crate::results::{
    self, Against, Failure, Profile, Run, Status, SuiteFailure, TargetResult, ToolInfo,
};
use crate::runner::ssh;
use crate::select::{Selected, Suite};
use crate::toolchain;
use anyhow::Result;
use site::{record, Site, SuiteRuns};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub struct Options {
    pub profile: Profile,
    pub rounds: Option<u32>,
    pub timeout_secs: Option<u64>,
    pub results_dir: PathBuf,
    pub features: Vec<String>,
    /// A git revision to build as well and interleave with this tree's
    /// rounds (`--against`).
    pub against: Option<String>,
    /// Do not count instructions (no plugin, no counted runs).
    pub no_insns: bool,
    /// Only count instructions (and take the static footprints): one
    /// counting invocation per suite, no timed rounds, no model check. A
    /// baseline's commit is recounted so ([`recount`]).
    pub counts_only: bool,
    /// Build the suites from this tree (a worktree of another commit)
    /// rather than the checkout; the plugin that counts is the checkout's.
    pub tree: Option<PathBuf>,
    /// `--crate` (and `--against-crate`): measure a lock crate's locks.
    pub crates: Option<Crates>,
    /// `--toolchain`: the toolchains that may build the suites.
    pub toolchain: toolchain::Only,
    /// A real-hardware target's comparable stored baselines, given the
    /// machine and the target's record (read above the matrix, where the
    /// baselines' format lives): its rounds then go on look by look.
    pub stored: Option<StoredBaselines>,
    /// With `--against`: stop a suite's pairs at the first look where the
    /// gate with these options has decided every family cell
    /// ([`crate::family`]). `None` records every round (the
    /// recordings `validate-gate` resamples).
    pub stop_when_decided: Option<crate::family::GateOptions>,
}

/// Where a run finds a real-hardware target's comparable stored baselines.
pub type StoredBaselines = std::sync::Arc<
    dyn Fn(&host::Host, &TargetResult) -> Option<crate::family::Stored> + Send + Sync,
>;

/// The lock crate under test and the version to compare it with.
#[derive(Clone)]
pub struct Crates {
    pub head: crate::subject::Spec,
    /// `--against-crate`: built and run beside the head as `--against`'s
    /// base revision is.
    pub base: Option<crate::subject::Spec>,
    /// A target the crate does not build for fails the run (`--require-build`)
    /// rather than being not run, with the reason.
    pub require_build: bool,
}

impl Options {
    /// The options of a recount of `tree` (a baseline's commit) into
    /// `results_dir`, beside a run made with `self`.
    pub fn recount(&self, tree: PathBuf, results_dir: PathBuf) -> Options {
        Options {
            profile: self.profile,
            rounds: Some(1),
            timeout_secs: self.timeout_secs,
            results_dir,
            features: self.features.clone(),
            against: None,
            no_insns: false,
            counts_only: true,
            tree: Some(tree),
            crates: None,
            toolchain: self.toolchain.clone(),
            stored: None,
            stop_when_decided: None,
        }
    }
}

/// What [`prepare`] settled before anything is installed or built.
pub struct Prepared {
    /// With `--against`: the base revision's worktree.
    pub base: Option<worktree::Worktree>,
    /// The cache directory, checked writable.
    pub cache: PathBuf,
    /// With `--crate`: the tree the crate is built in, and what was
    /// resolved for each side (the base's tree is `base`'s path).
    pub subject: Option<Subjects>,
}

/// The lock crate under test, resolved.
pub struct Subjects {
    pub head_tree: PathBuf,
    pub head: crate::subject::Subject,
    pub base: Option<crate::subject::Subject>,
    pub require_build: bool,
    /// Trailers in the crate's own history between the two versions.
    pub acknowledged: Vec<crate::acknowledge::Acknowledgement>,
    /// The trees' locks, held until the run is over.
    _locks: Vec<std::fs::File>,
    /// Path crates' copies, removed with the run's end.
    _copies: Vec<crate::subject::derive::Copy>,
}

impl Subjects {
    fn all(&self) -> impl Iterator<Item = &crate::subject::Subject> {
        std::iter::once(&self.head).chain(&self.base)
    }
}

impl Prepared {
    /// Old `--against` worktrees removed from the cache.
    pub fn removed_worktrees(&self) -> &[PathBuf] {
        self.base.as_ref().map_or(&[], |w| &w.removed)
    }
}

/// A matrix run, and with `--against` the base revision's run made in the
/// same session, round for round.
pub struct Outcome {
    pub run: Run,
    pub dir: PathBuf,
    pub base: Option<Run>,
}

/// Checks what can be checked before installing anything: the cache and
/// the results directory take files, `--against` names a revision
/// (checked out), and `--crate` a crate cargo resolves (its trees made).
pub fn prepare(root: &Path, opts: &Options) -> Result<Prepared> {
    let cache = crate::cache::check()?;
    results::check_writable(&opts.results_dir)?;
    if let Some(c) = &opts.crates {
        let head = crate::subject::derive(root, &c.head, &cache)?;
        let mut locks = vec![head.lock];
        let mut copies: Vec<_> = head.copy.into_iter().collect();
        let (base, base_subject) = match &c.base {
            // A crate against itself: one tree, the same binaries.
            Some(spec) if *spec == c.head => (Some(head.tree.clone()), Some(head.subject.clone())),
            Some(spec) => {
                let d = crate::subject::derive(root, spec, &cache)?;
                locks.push(d.lock);
                copies.extend(d.copy);
                (Some(d.tree), Some(d.subject))
            }
            None => (None, None),
        };
        let base = base.map(|path| worktree::Worktree {
            path,
            commit: host::collect(root).lockmatrix_commit,
            removed: Vec::new(),
        });
        let (head_tree, head) = (head.tree, head.subject);
        return Ok(Prepared {
            base,
            cache,
            subject: Some(Subjects {
                head_tree,
                head,
                base: base_subject,
                require_build: c.require_build,
                acknowledged: c
                    .base
                    .as_ref()
                    .map_or_else(Vec::new, |b| crate::subject::acknowledgements(&c.head, b)),
                _locks: locks,
                _copies: copies,
            }),
        });
    }
    let base = match &opts.against {
        Some(rev) => Some(worktree::against(root, rev)?),
        None => None,
    };
    Ok(Prepared {
        base,
        cache,
        subject: None,
    })
}

/// The Debian packages the selected targets need: theirs, and Debian's
/// build-std toolchain when some target has no toolchain yet. `need` is
/// the suites' `rust-version`.
pub fn packages_needed(
    selected: &[Selected],
    need: toolchain::Version,
    only: &toolchain::Only,
) -> Vec<String> {
    let active: Vec<&Selected> = selected.iter().filter(|s| s.skip.is_none()).collect();
    let mut wanted: Vec<String> = active
        .iter()
        .flat_map(|s| s.target.packages.clone())
        .collect();
    // Debian's rustc-web is installed too where only a nightly's rust-src
    // would build a target: it is preferred over a nightly
    // ([`toolchain::discover`]).
    let debian = *only == toolchain::Only::Debian;
    if debian
        || active.iter().any(|s| {
            s.target.rust
                && toolchain::discover_only(&s.target.triple, need, only)
                    .map_or(true, |tc| tc.nightly_build_std())
        })
    {
        wanted.extend(toolchain::DEBIAN_RUST.iter().map(|s| s.to_string()));
    }
    wanted
}

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
type SetUp<'a> = (Vec<TargetResult>, Vec<Job<'a>>, Vec<Option<usize>>);

/// Each selected target's record and, for those that can be built, the
/// build job it shares (two hosts of one architecture run the same
/// binaries). What is missing marks that target failed, not the run; a
/// CPU choice its tools do not know (any selected target's) is bad input
/// and fails the whole run before anything is built.
fn set_up<'a>(
    config: &Config,
    selected: &'a [Selected],
    (need, only, names): (toolchain::Version, &toolchain::Only, &[&str]),
    prepared: &Prepared,
) -> std::result::Result<SetUp<'a>, BadChoices> {
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
    Ok((targets, jobs, job_of))
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
fn cannot_build(prepared: &Prepared, why: String, log: Option<String>) -> Status {
    match prepared.subject.as_ref().is_some_and(|s| s.require_build) {
        true => Status::Failed(Failure::Build { error: why, log }),
        false => Status::NotRun(why),
    }
}

/// When a build failed because the crate under test did not compile,
/// that said in one line: the crate, the target and cargo's first error.
fn crate_build_failure(
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

/// The binaries of one build, with their hashes recorded in `target`.
fn built_binaries<'a>(
    built: &'a Built,
    target: &mut TargetResult,
) -> std::result::Result<&'a BTreeMap<String, build::Binary>, Failure> {
    let bins = built.binaries.as_ref().map_err(Failure::from)?;
    target.sources_sha256 = Some(built.sources.clone());
    for (suite, b) in bins {
        target.binaries.insert(name::known(suite), b.sha256.clone());
        if let Some(c) = &b.compiler {
            target.compilers.insert(name::known(suite), c.clone());
        }
    }
    Ok(bins)
}

/// The QEMU plugin, when some job counts instructions and `--no-insns` is
/// not given; a plugin that does not build is a warning, not a failure.
fn plugin(
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

/// Both sides of one target's run, and where each is recorded.
struct Sides<'a> {
    head: (&'a Path, &'a mut TargetResult),
    base: Option<(&'a Path, &'a mut TargetResult)>,
}

/// Runs every suite of one target on `site`, recording both sides; a
/// suite's failure is recorded and the next suite still runs.
fn run_target(site: &Site, suites: &[&str], sides: Sides, observer: &dyn Observer) -> Result<()> {
    let Sides { head, base } = sides;
    let (dir, result) = head;
    let timeout = site.timeout.as_secs();
    let mut base = base;
    let mut failures: Vec<SuiteFailure> = Vec::new();
    let mut base_failures: Vec<SuiteFailure> = Vec::new();
    for suite in suites {
        let step = format!("{}/{suite}", site.target.name);
        observer.event(Event::StepStarted(&step));
        let SuiteRuns {
            head,
            base: base_run,
        } = match site.run_suite(suite) {
            Ok(ran) => ran,
            Err(failure) => {
                observer.event(Event::StepDone {
                    step: &step,
                    outcome: &format!("failed: {failure}"),
                });
                failures.push(SuiteFailure {
                    suite: name::known(suite),
                    failure,
                });
                continue;
            }
        };
        if let (Some(b), Some((base_dir, base_result))) = (base_run, base.as_mut()) {
            if let Status::Failed(failure) = record(base_dir, base_result, suite, b, timeout)? {
                base_failures.push(SuiteFailure {
                    suite: name::known(suite),
                    failure,
                });
            }
        }
        let secs = head.outcome.secs;
        let status = record(dir, result, suite, head, timeout)?;
        observer.event(Event::StepDone {
            step: &step,
            outcome: &format!("{} in {secs:.1}s", status.label()),
        });
        if let Status::Failed(failure) = status {
            failures.push(SuiteFailure {
                suite: name::known(suite),
                failure,
            });
        }
    }
    result.run_secs.get_or_insert(0.0);
    result.status = match failures.is_empty() {
        true => Status::Ok,
        false => Status::Failed(Failure::Suites { suites: failures }),
    };
    if let Some((_, b)) = base {
        b.status = match base_failures.is_empty() {
            true => Status::Ok,
            false => Status::Failed(Failure::Suites {
                suites: base_failures,
            }),
        };
    }
    Ok(())
}

/// The base revision's run beside `run`: the same host and targets, its
/// own commit, filled in as the rounds run.
fn base_run_of(run: &Run) -> Run {
    let mut b = run.clone();
    b.run_id = format!("{}/base", run.run_id);
    b.against = None;
    b.host.lockmatrix_commit = run.against.as_ref().and_then(|a| a.commit.clone());
    b.host.lockmatrix_dirty = false;
    b
}

/// What running one target's suites needs of the whole run.
struct Runs<'a> {
    config: &'a Config,
    opts: &'a Options,
    prepared: &'a Prepared,
    plugin: Option<&'a Path>,
    dir: &'a Path,
    base_dir: &'a Path,
    names: &'a [&'a str],
    observer: &'a dyn Observer,
    /// The machine the run happens on: with a target's own facts, the
    /// testbed its stored baselines must match.
    host: &'a host::Host,
}

impl Runs<'_> {
    /// Runs `s`'s suites with the binaries `built` (and with `--against`
    /// the base's, `base_built`), recording them in `result` (and `base`).
    fn target(
        &self,
        s: &Selected,
        (built, base_built): (&Built, Option<&Built>),
        result: &mut TargetResult,
        base: Option<&mut TargetResult>,
    ) -> Result<()> {
        let t = &s.target;
        // A target without a Rust backend runs only the C suites.
        let (names, _) = crate::select::for_target(self.names, t);
        result.build_secs = Some(built.secs);
        let binaries = built_binaries(built, result);
        let mut base = base;
        let base_binaries = match (base_built, base.as_deref_mut()) {
            (Some(b), Some(br)) => {
                br.build_secs = Some(b.secs);
                Some(built_binaries(b, br).map_err(|f| Failure::Build {
                    error: format!(
                        "base {}: {f}",
                        self.opts.against.as_deref().unwrap_or_default()
                    ),
                    log: None,
                }))
            }
            _ => None,
        };
        let (binaries, base_binaries) = match (binaries, base_binaries.transpose()) {
            (Ok(b), Ok(bb)) => (b, bb),
            (Err(f), _) | (_, Err(f)) => {
                let status = match self
                    .prepared
                    .subject
                    .as_ref()
                    .and_then(|s| crate_build_failure(s, &t.name, &f))
                {
                    Some((why, log)) => cannot_build(self.prepared, why, log),
                    None => Status::Failed(f),
                };
                result.status = status.clone();
                if let Some(br) = base {
                    br.status = status;
                }
                return Ok(());
            }
        };
        let remote = match (&t.ssh, ssh::key_for(t)) {
            (Some(host), Some(key)) if t.runner == RunnerKind::Ssh => {
                match ssh::Remote::open(host, &key) {
                    Ok(r) => {
                        result.cpu_model = r.cpu_model();
                        result.machine = r.machine();
                        result.kernel = r.kernel();
                        result.virtualization = r.virtualization();
                        Some(r)
                    }
                    Err(message) => {
                        result.status = Status::Failed(Failure::Ssh {
                            message: message.to_string(),
                        });
                        return Ok(());
                    }
                }
            }
            _ => None,
        };
        // Comparable stored baselines of a real-hardware target: its rounds
        // go on while a family cell is undecided, to the planned last look.
        let stored = match (&self.opts.stored, t.runner) {
            (Some(_), RunnerKind::Qemu) | (None, _) => None,
            (Some(f), _) if self.opts.against.is_none() && self.opts.rounds.is_none() => {
                f(self.host, result)
            }
            _ => None,
        };
        let stored_max = plan::stored_max(self.opts.profile);
        if stored
            .as_ref()
            .is_some_and(|s| s.suites.values().any(|c| !c.is_empty()))
        {
            result.stored_rounds = Some(stored_max as u32);
        }
        let site = Site {
            target: t,
            binaries,
            base_binaries,
            remote: remote.as_ref(),
            plugin: self.plugin,
            timeout: Duration::from_secs(
                self.opts
                    .timeout_secs
                    .unwrap_or(self.config.timeout_secs(t)),
            ),
            profile: self.opts.profile,
            rounds: self.opts.rounds,
            counts_only: self.opts.counts_only,
            stop_when_decided: self.opts.stop_when_decided,
            suites: names.len(),
            stored: stored.as_ref().map(|s| (s, stored_max)),
        };
        let sides = Sides {
            head: (self.dir, result),
            base: base.map(|b| (self.base_dir, b)),
        };
        run_target(&site, &names, sides, self.observer)
    }
}

/// Builds and runs `suites` on every `selected` target, as [`prepare`]d.
/// Writes `run.json` at once, without `finished` (a run cut short stays
/// marked incomplete), after every target, and at the end.
pub fn run(
    root: &Path,
    config: &Config,
    selected: &[Selected],
    suites: &[Suite],
    opts: &Options,
    prepared: &Prepared,
    observer: &dyn Observer,
) -> Result<Outcome> {
    let need = toolchain::rust_version(&root.join("Cargo.toml"));
    let head_tree = prepared.subject.as_ref().map(|s| s.head_tree.as_path());
    let tree = opts.tree.as_deref().or(head_tree).unwrap_or(root);
    // Another commit's tree (a baseline's, counted again) runs the suites
    // it has: one added since is not there to build.
    let names: Vec<&str> = suites
        .iter()
        .map(|s| s.name)
        .filter(|n| opts.tree.is_none() || tree.join("suites").join(n).is_dir())
        .collect();
    // Before the run directory: an unknown CPU choice writes nothing.
    let (targets, jobs, job_of) =
        set_up(config, selected, (need, &opts.toolchain, &names), prepared)?;
    let started = host::utc(host::now_secs());
    let (run_id, dir) = results::new_run_dir(&opts.results_dir, &started)?;
    std::fs::create_dir_all(dir.join("logs"))?;
    observer.event(Event::RunStarted {
        run_id: &run_id,
        targets: selected.len(),
        suites: suites.len(),
        dir: &dir,
    });
    let mut run = Run {
        format: results::FORMAT_VERSION,
        run_id,
        started,
        finished: None,
        // Credentials in a URL never leave the command line.
        command: std::env::args()
            .skip(1)
            .map(|a| crate::subject::spec::redact(&a))
            .collect(),
        profile: opts.profile,
        // A crate's tree is a copy of this checkout, not a git worktree.
        host: host::collect(if head_tree.is_some() { root } else { tree }),
        insns_plugin: None,
        lock_crates: Default::default(),
        models: None,
        miri: None,
        subject: prepared.subject.as_ref().map(|s| s.head.clone()),
        against: opts
            .against
            .as_ref()
            .zip(prepared.base.as_ref())
            .map(|(rev, w)| -> Result<Against> {
                // Two versions of a crate: the trailers of its own history.
                let acknowledged = match &prepared.subject {
                    Some(s) => s.acknowledged.clone(),
                    None => match &w.commit {
                        Some(c) => crate::acknowledge::in_range(root, c, "HEAD")?,
                        None => Vec::new(),
                    },
                };
                Ok(Against {
                    rev: rev.clone(),
                    commit: w.commit.clone(),
                    acknowledged,
                    pairs: Some(plan::rounds(opts.profile, opts.rounds, true)),
                })
            })
            .transpose()?,
        targets,
    };
    results::write(&dir, &run)?;
    let host = run.host.clone();

    let base_dir = dir.join("base");
    let plugin = plugin(root, &jobs, opts, &mut run, observer);
    let against = opts.against.as_deref().zip(prepared.base.as_ref());
    let mut base_run = against.map(|_| {
        let mut b = base_run_of(&run);
        b.subject = prepared.subject.as_ref().and_then(|s| s.base.clone());
        b
    });
    let ctx = Runs {
        config,
        opts,
        prepared,
        plugin: plugin.as_deref(),
        dir: &dir,
        base_dir: &base_dir,
        names: &names,
        observer,
        host: &host,
    };
    let head_tree = Tree {
        root: tree,
        logs: dir.join("logs"),
        bins: dir.join("bin"),
    };
    let base_tree = against.map(|(_, w)| Tree {
        root: &w.path,
        logs: base_dir.join("logs"),
        bins: base_dir.join("bin"),
    });
    if let Some((rev, w)) = against {
        std::fs::create_dir_all(base_dir.join("logs"))?;
        observer.event(Event::BuildingBase { rev, tree: &w.path });
    }
    let head_builder = build::TreeBuilder::new(&head_tree, &names, &opts.features);
    let base_builder = base_tree
        .as_ref()
        .map(|t| build::TreeBuilder::new(t, &names, &opts.features));
    // Emulated targets run as soon as their job is built, beside the other
    // builds: their counts and checks do not depend on the load, their
    // times are advisory anyway. Real hardware runs afterwards, one target
    // at a time, on a quiet machine.
    let runnable = |i: &usize| job_of[*i].is_some();
    let (emulated, real): (Vec<usize>, Vec<usize>) = (0..selected.len())
        .filter(runnable)
        .partition(|&i| selected[i].target.runner == RunnerKind::Qemu);
    let mut runs_after = vec![Vec::new(); jobs.len()];
    for &i in &emulated {
        runs_after[job_of[i].expect("runnable")].push(i);
    }
    observer.event(Event::Phase {
        name: "build+run",
        steps: jobs.len() * (1 + usize::from(against.is_some()))
            + emulated
                .iter()
                .map(|&i| {
                    crate::select::for_target(&names, &selected[i].target)
                        .0
                        .len()
                })
                .sum::<usize>(),
    });
    let shared = std::sync::Mutex::new((&mut run, base_run.as_mut()));
    let builds = pipeline::run(
        &jobs,
        pipeline::Trees {
            head: &head_builder,
            base: base_builder.as_ref().zip(against.map(|(rev, _)| rev)),
        },
        &runs_after,
        observer,
        |i, built, base_built| {
            let (mut head, mut base) = {
                let both = shared.lock().unwrap_or_else(|e| e.into_inner());
                (
                    both.0.targets[i].clone(),
                    both.1.as_ref().map(|b| b.targets[i].clone()),
                )
            };
            let ran = ctx.target(&selected[i], (built, base_built), &mut head, base.as_mut());
            let mut both = shared.lock().unwrap_or_else(|e| e.into_inner());
            both.0.targets[i] = head;
            if let (Some(b), Some(r)) = (base, both.1.as_mut()) {
                r.targets[i] = b;
            }
            ran?;
            results::write(&dir, both.0)
        },
    )?;
    observer.event(Event::PhaseDone);
    let (built, base_built) = (builds.head, builds.base);
    if !real.is_empty() {
        observer.event(Event::Phase {
            name: "run",
            steps: real.len() * names.len(),
        });
        for i in real {
            let j = job_of[i].expect("runnable");
            let base = base_run.as_mut().map(|b| &mut b.targets[i]);
            let b = base_built.as_ref().map(|b| &b[j]);
            ctx.target(&selected[i], (&built[j], b), &mut run.targets[i], base)?;
            results::write(&dir, &run)?;
        }
        observer.event(Event::PhaseDone);
    }

    let sides = |results: &'_ mut [TargetResult], built: &'_ [Built]| {
        let sides: Vec<ordering::Side> = results
            .iter_mut()
            .enumerate()
            .filter_map(|(i, result)| {
                let j = job_of[i]?;
                Some(ordering::Side {
                    target: &selected[i].target,
                    built: &built[j],
                    result,
                })
            })
            .collect();
        ordering::static_footprints(sides, observer);
    };
    sides(&mut run.targets, &built);
    if let (Some(b), Some(br)) = (&base_built, base_run.as_mut()) {
        sides(&mut br.targets, b);
    }
    // A crate's locks are not made of the suites' atomics: loom cannot
    // check them, and the suites' own locks did not run.
    if !opts.counts_only && prepared.subject.is_none() {
        // The suites some target ran: alpha alone runs no lock of a model.
        let ran: Vec<&str> = names
            .iter()
            .copied()
            .filter(|n| {
                (selected.iter()).any(|s| crate::select::for_target(&[n], &s.target).0.contains(n))
            })
            .collect();
        run.models = ordering::models(root, &ran, &opts.features, observer);
    }
    // The locks loom cannot see, on both sides: a race only in the head
    // is a regression, one in both is there in the base too.
    if !opts.counts_only {
        run.miri = ordering::miri(tree, &names, "head", observer);
        if let (Some(b), Some(w)) = (base_run.as_mut(), &prepared.base) {
            b.miri = ordering::miri(&w.path, &names, "base", observer);
        }
    }

    run.finished = Some(host::utc(host::now_secs()));
    run.lock_crates = results::lock_crates(&run, &tree.join("Cargo.lock"));
    // The suites' own spin or parking_lot may be pinned beside it.
    let pin = |r: &mut Run| {
        if let Some(s) = r.subject.clone() {
            r.lock_crates.insert(s.name.to_string(), s.version);
        }
    };
    pin(&mut run);
    if let (Some(base), Some(w)) = (&mut base_run, &prepared.base) {
        base.finished = run.finished.clone();
        base.lock_crates = results::lock_crates(base, &w.path.join("Cargo.lock"));
        pin(base);
        results::write(&base_dir, base)?;
    }
    results::write(&dir, &run)?;
    Ok(Outcome {
        run,
        dir,
        base: base_run,
    })
}
