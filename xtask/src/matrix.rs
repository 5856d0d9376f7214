//! `cargo xtask matrix`: set up, build every selected suite for every
//! selected target, run them, and report. One target's failure never stops
//! the others; the exit status is 1 if any target failed.
//!
//! With `--against REV` the base revision is built too, in a worktree under
//! the cache, and runs beside this tree, round for round: on real hardware
//! base and head alternate one invocation each (base first in even rounds,
//! head first in odd ones, so neither side always runs warm); under QEMU,
//! where only instruction counts gate, each side runs once. The base run is
//! kept as `base/run.json` in the run directory.

use crate::build::{self, Job};
use crate::config::{Config, RunnerKind, Target};
use crate::doctor;
use crate::host;
use crate::packages;
use crate::protocol;
use crate::results::{self, Against, Run, Status, TargetResult, ToolInfo};
use crate::runner;
use crate::select::{Selected, Suite};
use crate::table;
use crate::toolchain;
use anyhow::Result;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub struct Options {
    pub profile: String,
    pub rounds: Option<u32>,
    pub timeout_secs: Option<u64>,
    pub results_dir: PathBuf,
    pub features: Vec<String>,
    pub install: bool,
    /// A git revision to build as well and interleave with this tree's
    /// rounds (`--against`).
    pub against: Option<String>,
    /// Do not load the instruction-counting plugin under QEMU.
    pub no_insns: bool,
}

/// A matrix run, and with `--against` the base revision's run made in the
/// same session, round for round.
pub struct Outcome {
    pub run: Run,
    pub dir: PathBuf,
    pub base: Option<Run>,
}

/// Rounds per side on real hardware with `--against` (quick, full). Chosen
/// by `validate-gate` on a 2-vCPU VM: see the README's "The regression
/// gate".
pub const AB_ROUNDS: (u32, u32) = (30, 40);

/// Checks out `rev` in a worktree under the cache (reused across runs);
/// returns it and the commit it names.
fn worktree(root: &Path, rev: &str) -> Result<(PathBuf, String)> {
    let sh = xshell::Shell::new()?;
    sh.change_dir(root);
    let spec = format!("{rev}^{{commit}}");
    let sha = match xshell::cmd!(sh, "git rev-parse --verify --quiet {spec}")
        .quiet()
        .ignore_stderr()
        .read()
    {
        Ok(sha) => sha,
        Err(_) => crate::error::exit2!("--against {rev}: not a revision of this repository"),
    };
    let all = build::cache_dir().join("worktrees");
    let path = all.join(&sha);
    if !path.join("Cargo.toml").is_file() {
        let _ = std::fs::remove_dir_all(&path);
        xshell::cmd!(sh, "git worktree prune").quiet().run()?;
        xshell::cmd!(sh, "git worktree add --detach {path} {sha}")
            .quiet()
            .ignore_stderr()
            .run()?;
    }
    // Used now: newest. Only the newest few are kept.
    let _ = std::fs::File::open(&path).and_then(|d| d.set_modified(std::time::SystemTime::now()));
    for old in stale_worktrees(&all, KEEP_WORKTREES) {
        eprintln!("removing the old --against worktree {}", old.display());
        let _ = std::fs::remove_dir_all(&old);
    }
    xshell::cmd!(sh, "git worktree prune").quiet().run()?;
    Ok((path, sha))
}

/// Base revisions whose worktrees stay checked out in the cache.
const KEEP_WORKTREES: usize = 3;

/// The worktrees under `dir` beyond the `keep` most recently used.
fn stale_worktrees(dir: &Path, keep: usize) -> Vec<PathBuf> {
    let mut trees: Vec<(std::time::SystemTime, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    trees.sort_by_key(|t| std::cmp::Reverse(t.0));
    trees.into_iter().skip(keep).map(|(_, p)| p).collect()
}

/// Installs what the selected targets need: their packages, and Debian's
/// build-std toolchain when some target has no toolchain yet.
fn setup(selected: &[Selected], need: toolchain::Version) -> Result<()> {
    let active: Vec<&Selected> = selected.iter().filter(|s| s.skip.is_none()).collect();
    let mut wanted: Vec<String> = active
        .iter()
        .flat_map(|s| s.target.packages.clone())
        .collect();
    if active
        .iter()
        .any(|s| toolchain::discover(&s.target.triple, need).is_err())
    {
        wanted.extend(toolchain::DEBIAN_RUST.iter().map(|s| s.to_string()));
    }
    packages::ensure(&wanted)
}

/// Which build a step runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Side {
    Head,
    Base,
}

/// One invocation of a suite.
#[derive(Debug, Clone, PartialEq)]
struct Step {
    side: Side,
    args: Vec<String>,
    /// The round number its samples get (one-round invocations).
    round: Option<u32>,
    /// Under the target's `counted_under` emulator, for `insns_per_op` only.
    counted: bool,
}

/// Rounds per side: the profile's, or with `--against` on real hardware
/// the paired test's ([`AB_ROUNDS`]); `--rounds` overrides both.
fn rounds(opts: &Options, paired: bool) -> u32 {
    let full = opts.profile == "full";
    opts.rounds.unwrap_or(match (paired, full) {
        (false, false) => 5,
        (false, true) => 15,
        (true, false) => AB_ROUNDS.0,
        (true, true) => AB_ROUNDS.1,
    })
}

/// The invocations of one suite on `t`. Under QEMU (timing advisory, slow
/// start-up) one invocation per side does all rounds. Elsewhere each round
/// is its own invocation: contended cells jump between levels from one
/// process to the next (the host moves the vCPUs), so rounds from one
/// process understate the noise a later run sees. With `--against` the
/// sides alternate, base first in even rounds, head first in odd ones.
/// Last, with `counted`, one counting invocation per side.
fn plan(t: &Target, opts: &Options, against: bool, counted: bool) -> Vec<Step> {
    let sides: &[Side] = if against {
        &[Side::Base, Side::Head]
    } else {
        &[Side::Head]
    };
    let profile = ["--profile".to_string(), opts.profile.clone()];
    let mut steps = Vec::new();
    if t.runner == RunnerKind::Qemu {
        let mut args = profile.to_vec();
        if let Some(r) = opts.rounds {
            args.extend(["--rounds".to_string(), r.to_string()]);
        }
        steps.extend(sides.iter().map(|&side| Step {
            side,
            args: args.clone(),
            round: None,
            counted: false,
        }));
    } else {
        for r in 0..rounds(opts, against) {
            let mut order = sides.to_vec();
            if r % 2 == 1 {
                order.reverse();
            }
            for side in order {
                let mut args = profile.to_vec();
                args.extend(["--rounds", "1", "--seed"].map(String::from));
                args.push((r + 1).to_string());
                steps.push(Step {
                    side,
                    args,
                    round: Some(r),
                    counted: false,
                });
            }
        }
    }
    if counted {
        let mut args = profile.to_vec();
        args.extend(["--rounds", "1"].map(String::from));
        steps.extend(sides.iter().map(|&side| Step {
            side,
            args: args.clone(),
            round: None,
            counted: true,
        }));
    }
    steps
}

/// Where one target's suites run: its binaries (and the base revision's),
/// the ssh session, the plugin and the timeout.
struct Site<'a> {
    target: &'a Target,
    binaries: &'a BTreeMap<String, PathBuf>,
    base_binaries: Option<&'a BTreeMap<String, PathBuf>>,
    remote: Option<&'a crate::ssh::Remote>,
    plugin: Option<&'a Path>,
    timeout: Duration,
}

/// One side's invocations of a suite, folded into one outcome and its
/// records, with the commands that reproduce them.
struct Folded {
    outcome: runner::Outcome,
    parsed: protocol::Parsed,
    command: String,
    counted_command: Option<String>,
}

impl Folded {
    /// Adds one invocation; an invocation of one round gets that round's
    /// number.
    fn add(
        acc: &mut Option<Folded>,
        o: runner::Outcome,
        mut p: protocol::Parsed,
        step: &Step,
        command: String,
    ) {
        if let Some(round) = step.round {
            for s in &mut p.samples {
                s.round = round;
            }
        }
        if step.counted {
            // Emulated time means nothing here: only the counts are kept.
            p.samples.retain(|s| s.metric == "insns_per_op");
        }
        let Some(f) = acc else {
            let counted = step.counted.then(|| command.clone());
            *acc = Some(Folded {
                outcome: o,
                parsed: p,
                command: if step.counted { String::new() } else { command },
                counted_command: counted,
            });
            return;
        };
        if step.counted {
            f.counted_command = Some(command);
        } else if f.command.is_empty() {
            f.command = command;
        }
        if f.outcome.exit == runner::Exit::Code(0) {
            f.outcome.exit = o.exit;
        }
        f.outcome.stdout.push_str(&o.stdout);
        f.outcome.stderr.push_str(&o.stderr);
        f.outcome.secs += o.secs;
        f.parsed.env = f.parsed.env.take().or(p.env);
        f.parsed.samples.extend(p.samples);
        f.parsed.checks.extend(p.checks);
        f.parsed.bad_lines.extend(p.bad_lines);
    }
}

/// One suite's runs on a site: this tree's and, with `--against`, the
/// base revision's.
struct SuiteRuns {
    head: Folded,
    base: Option<Folded>,
}

/// Runs one suite on one site, step by step ([`plan`]). Stops at the first
/// crash, hang or failed exit, which is then reported once.
fn run_suite(site: &Site, suite: &str, opts: &Options) -> Result<SuiteRuns, String> {
    let t = site.target;
    // On an ssh host each binary is copied once, then run per round.
    let mut copied: Vec<PathBuf> = Vec::new();
    let mut exec = |step: &Step, binary: &Path| {
        if step.counted {
            let emulator = t.counted_under.as_deref().unwrap_or_default();
            let inv = runner::under_qemu(emulator, binary, &step.args, site.plugin);
            return runner::execute(&inv, Path::new("/"), site.timeout)
                .map(|o| (o, inv.shell()))
                .map_err(|e| format!("cannot start {}: {e}", inv.program));
        }
        match site.remote {
            Some(r) => {
                let name = match step.side {
                    Side::Base => format!("{suite}.base"),
                    Side::Head => suite.to_string(),
                };
                if !copied.iter().any(|c| c == binary) {
                    r.copy(binary, &name)?;
                    copied.push(binary.to_path_buf());
                }
                r.run(&name, &step.args, site.timeout)
            }
            None => {
                let inv = runner::invocation(t, binary, &step.args, site.plugin);
                // A fixed working directory: the run's own differs every time.
                runner::execute(&inv, Path::new("/"), site.timeout)
                    .map(|o| (o, inv.shell()))
                    .map_err(|e| format!("cannot start {}: {e}", inv.program))
            }
        }
    };
    let counted = site.plugin.is_some() && t.counted_under.is_some();
    let (mut head, mut base) = (None, None);
    for step in plan(t, opts, site.base_binaries.is_some(), counted) {
        let binaries = match step.side {
            Side::Head => site.binaries,
            Side::Base => site.base_binaries.expect("a base step has base binaries"),
        };
        let (o, command) = exec(&step, &binaries[suite])?;
        let parsed = protocol::parse(&o.stdout);
        let ended_badly = o.exit != runner::Exit::Code(0);
        let acc = match step.side {
            Side::Head => &mut head,
            Side::Base => &mut base,
        };
        Folded::add(acc, o, parsed, &step, command);
        if ended_badly {
            break;
        }
    }
    Ok(SuiteRuns {
        head: head.ok_or("nothing ran")?,
        base,
    })
}

/// Records one side's suite run in its run and its directory
/// (`<dir>/<target>/<suite>.jsonl` and `.stderr`); returns its status.
fn record(
    dir: &Path,
    target: &mut TargetResult,
    suite: &str,
    folded: Folded,
    timeout_secs: u64,
) -> Result<Status> {
    let out_dir = dir.join(&target.name);
    std::fs::create_dir_all(&out_dir)?;
    let Folded {
        outcome,
        parsed,
        command,
        counted_command,
    } = folded;
    std::fs::write(out_dir.join(format!("{suite}.jsonl")), &outcome.stdout)?;
    std::fs::write(out_dir.join(format!("{suite}.stderr")), &outcome.stderr)?;
    let status = results::judge(&outcome, &parsed, timeout_secs);
    let mut run = results::suite_run(suite, command, &outcome, parsed, status.clone());
    run.counted_command = counted_command;
    target.suites.push(run);
    target.run_secs = Some(target.run_secs.unwrap_or(0.0) + outcome.secs);
    Ok(status)
}

/// What `doctor` found for `t`, as the run records it.
fn target_result(t: &Target, ready: &doctor::Readiness) -> TargetResult {
    let tool = |p: &PathBuf, version: String| ToolInfo {
        what: p.display().to_string(),
        version,
    };
    TargetResult {
        name: t.name.clone(),
        triple: t.triple.clone(),
        class: t.class.clone(),
        runner: t.runner,
        status: Status::Ok,
        toolchain: ready.toolchain.as_ref().ok().map(|tc| ToolInfo {
            what: tc.label.clone(),
            version: tc.version(),
        }),
        build_std: ready.toolchain.as_ref().is_ok_and(|tc| tc.build_std),
        linker: ready
            .linker
            .as_ref()
            .ok()
            .map(|p| tool(p, doctor::linker_version(p))),
        emulator: ready
            .emulator
            .as_ref()
            .and_then(|e| e.as_ref().ok())
            .map(|p| tool(p, doctor::emulator_version(p))),
        counter: ready
            .counter
            .as_ref()
            .and_then(|e| e.as_ref().ok())
            .map(|p| tool(p, doctor::emulator_version(p))),
        build_secs: None,
        run_secs: None,
        insns_tolerance: t.insns_tolerance,
        cpu_model: None,
        sources_sha256: None,
        binaries: BTreeMap::new(),
        suites: Vec::new(),
    }
}

/// The binaries of one build, with their hashes recorded in `target`.
fn built_binaries<'a>(
    built: &'a build::Built,
    target: &mut TargetResult,
) -> Result<&'a BTreeMap<String, PathBuf>, String> {
    let bins = built.binaries.as_ref().map_err(Clone::clone)?;
    target.sources_sha256 = Some(built.sources.clone());
    for (suite, path) in bins {
        let bytes = std::fs::read(path).map_err(|e| format!("reading {}: {e}", path.display()))?;
        target
            .binaries
            .insert(suite.clone(), results::sha256(&bytes));
    }
    Ok(bins)
}

pub fn run(
    root: &Path,
    config: &Config,
    selected: Vec<Selected>,
    suites: &[Suite],
    opts: &Options,
) -> Result<Outcome> {
    results::check_writable(&opts.results_dir)?;
    let base_tree = match &opts.against {
        Some(rev) => Some(worktree(root, rev)?),
        None => None,
    };
    let need = toolchain::rust_version(&root.join("Cargo.toml"));
    if opts.install {
        setup(&selected, need)?;
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
        insns_plugin: None,
        against: opts
            .against
            .as_ref()
            .zip(base_tree.as_ref())
            .map(|(rev, (_, sha))| Against {
                rev: rev.clone(),
                commit: sha.clone(),
            }),
        targets: Vec::new(),
    };
    // Written at once, without `finished`: a run cut short (Ctrl-C, a
    // killed CI job) stays marked incomplete, and readers skip it by name.
    results::write(&dir, &run)?;

    // Set-up per target: what is missing marks that target failed, not the run.
    let mut jobs: Vec<Job> = Vec::new();
    let mut job_of: Vec<Option<usize>> = Vec::new();
    for s in &selected {
        let t = &s.target;
        let ready = doctor::check(t, need);
        let mut result = target_result(t, &ready);
        let mut job = None;
        if let Some(why) = &s.skip {
            result.status = Status::NotRun(why.clone());
        } else if t.runner == RunnerKind::Ssh && crate::ssh::key_for(t).is_none() {
            result.status = Status::NotRun(format!(
                "no runner: set LOCKMATRIX_SSH_KEY (or {}) to the private key for {}",
                crate::ssh::key_variable(&t.name),
                t.ssh
                    .as_ref()
                    .map_or("?".into(), |h| format!("{}@{}:{}", h.user, h.host, h.port))
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
    // The base revision builds first, into the same cache (std is shared;
    // the suites are rebuilt for each tree, see build.rs), and keeps its
    // binaries in base/bin.
    let base_dir = dir.join("base");
    let base_built: Option<Vec<build::Built>> = match (&opts.against, &base_tree) {
        (Some(rev), Some((tree, _))) => {
            std::fs::create_dir_all(base_dir.join("logs"))?;
            eprintln!("building the base revision {rev} ({})", tree.display());
            Some(build::build_all(
                tree,
                &jobs,
                &names,
                &opts.features,
                &base_dir.join("logs"),
                &base_dir.join("bin"),
                2,
            ))
        }
        _ => None,
    };
    let built = build::build_all(
        root,
        &jobs,
        &names,
        &opts.features,
        &dir.join("logs"),
        &dir.join("bin"),
        2,
    );
    let counts = |t: &Target| t.runner == RunnerKind::Qemu || t.counted_under.is_some();
    let plugin = if opts.no_insns || !jobs.iter().any(|j| counts(j.target)) {
        None
    } else {
        match crate::plugin::build(root) {
            Ok(so) => {
                run.insns_plugin = Some(ToolInfo {
                    what: so.display().to_string(),
                    version: format!("insns-plugin, QEMU plugin API {}", crate::plugin::API),
                });
                Some(so)
            }
            Err(why) => {
                eprintln!("warning: no insns_per_op this run: {why}");
                None
            }
        }
    };
    let mut base_run = base_built.as_ref().map(|_| {
        let mut b = run.clone();
        b.run_id = format!("{}/base", run.run_id);
        b.against = None;
        b.host.lockmatrix_commit = run
            .against
            .as_ref()
            .map_or_else(String::new, |a| a.commit.clone());
        b.host.lockmatrix_dirty = false;
        b
    });

    let progress = crate::progress::Progress::new("run", jobs.len());
    for (i, s) in selected.iter().enumerate() {
        let Some(j) = job_of[i] else { continue };
        let t = &s.target;
        let result = &mut run.targets[i];
        result.build_secs = Some(built[j].secs);
        let binaries = built_binaries(&built[j], result);
        let base_binaries = match (&base_built, base_run.as_mut()) {
            (Some(b), Some(br)) => {
                br.targets[i].build_secs = Some(b[j].secs);
                Some(built_binaries(&b[j], &mut br.targets[i]).map_err(|e| {
                    let rev = opts.against.as_deref().unwrap_or_default();
                    format!("base {rev}: {e}")
                }))
            }
            _ => None,
        };
        let (binaries, base_binaries) = match (binaries, base_binaries.transpose()) {
            (Ok(b), Ok(bb)) => (b, bb),
            (Err(e), _) | (_, Err(e)) => {
                result.status = Status::Failed(e.clone());
                if let Some(br) = base_run.as_mut() {
                    br.targets[i].status = Status::Failed(e);
                }
                continue;
            }
        };
        let timeout = Duration::from_secs(opts.timeout_secs.unwrap_or(config.timeout_secs(t)));
        let remote = match (&t.ssh, crate::ssh::key_for(t)) {
            (Some(host), Some(key)) if t.runner == RunnerKind::Ssh => {
                match crate::ssh::Remote::open(host, &key) {
                    Ok(r) => {
                        result.cpu_model = r.cpu_model();
                        Some(r)
                    }
                    Err(why) => {
                        progress.finish(&t.name, &format!("failed: {why}"));
                        result.status = Status::Failed(why);
                        continue;
                    }
                }
            }
            _ => None,
        };
        let site = Site {
            target: t,
            binaries,
            base_binaries,
            remote: remote.as_ref(),
            plugin: plugin.as_deref(),
            timeout,
        };
        let mut failures: Vec<String> = Vec::new();
        for suite in &names {
            let item = format!("{}/{suite}", t.name);
            progress.start(&item);
            let SuiteRuns { head, base } = match run_suite(&site, suite, opts) {
                Ok(ran) => ran,
                Err(why) => {
                    progress.finish(&item, &format!("failed: {why}"));
                    failures.push(format!("{suite}: {why}"));
                    continue;
                }
            };
            if let (Some(b), Some(br)) = (base, base_run.as_mut()) {
                let status = record(&base_dir, &mut br.targets[i], suite, b, timeout.as_secs())?;
                if let Status::Failed(why) = status {
                    br.targets[i].status = Status::Failed(format!("{suite}: {why}"));
                }
            }
            let secs = head.outcome.secs;
            let status = record(&dir, result, suite, head, timeout.as_secs())?;
            progress.finish(&item, &format!("{} in {secs:.1}s", status.label()));
            if let Status::Failed(why) = &status {
                failures.push(format!("{suite}: {why}"));
            }
        }
        result.run_secs.get_or_insert(0.0);
        if !failures.is_empty() {
            result.status = Status::Failed(failures.join("; "));
        }
        results::write(&dir, &run)?;
    }
    progress.done();

    run.finished = Some(host::utc(host::now_secs()));
    if let Some(base) = &mut base_run {
        base.finished = run.finished.clone();
        results::write(&base_dir, base)?;
    }
    results::write(&dir, &run)?;
    print!("{}", table::timings(&run));
    println!("\n{}", table::status(&run));
    println!("{}", table::summary(&run));
    println!("results: {}", dir.join("run.json").display());
    Ok(Outcome {
        run,
        dir,
        base: base_run,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(runner: RunnerKind) -> Target {
        let text = format!(
            "name: t\nclass: c\ntriple: x86_64-unknown-linux-gnu\nrunner: {}\n{}packages: []\nenabled: true\n",
            runner.name(),
            if runner == RunnerKind::Qemu { "emulator: qemu-x86_64\n" } else { "" }
        );
        serde_norway::from_str(&text).unwrap()
    }

    fn opts(rounds: Option<u32>) -> Options {
        Options {
            profile: "quick".into(),
            rounds,
            timeout_secs: None,
            results_dir: PathBuf::new(),
            features: vec![],
            install: false,
            against: None,
            no_insns: false,
        }
    }

    fn shape(steps: &[Step]) -> Vec<(Side, Option<u32>, bool)> {
        steps.iter().map(|s| (s.side, s.round, s.counted)).collect()
    }

    #[test]
    fn native_rounds_are_invocations_and_against_alternates_which_side_goes_first() {
        let t = target(RunnerKind::Native);
        let alone = plan(&t, &opts(Some(3)), false, false);
        assert_eq!(
            shape(&alone),
            [
                (Side::Head, Some(0), false),
                (Side::Head, Some(1), false),
                (Side::Head, Some(2), false)
            ]
        );
        assert!(alone[1].args.ends_with(&[
            "--rounds".into(),
            "1".into(),
            "--seed".into(),
            "2".into()
        ]));
        let ab = plan(&t, &opts(Some(2)), true, true);
        assert_eq!(
            shape(&ab),
            [
                (Side::Base, Some(0), false),
                (Side::Head, Some(0), false),
                (Side::Head, Some(1), false),
                (Side::Base, Some(1), false),
                (Side::Base, None, true),
                (Side::Head, None, true),
            ]
        );
        // Both sides of a pair run the same arguments.
        assert_eq!(ab[0].args, ab[1].args);
        assert_eq!(
            plan(&t, &opts(None), true, false).len(),
            2 * AB_ROUNDS.0 as usize
        );
    }

    #[test]
    fn qemu_runs_each_side_once_with_all_its_rounds() {
        let t = target(RunnerKind::Qemu);
        let ab = plan(&t, &opts(Some(4)), true, false);
        assert_eq!(
            shape(&ab),
            [(Side::Base, None, false), (Side::Head, None, false)]
        );
        assert!(ab[0].args.ends_with(&["--rounds".into(), "4".into()]));
    }

    fn outcome(stdout: &str) -> runner::Outcome {
        runner::Outcome {
            exit: runner::Exit::Code(0),
            stdout: stdout.into(),
            stderr: String::new(),
            secs: 1.0,
        }
    }

    const ENV: &str = r#"{"type":"env","protocol":2,"suite":"s","arch":"x","endian":"little","pointer_width":64,"cpus":2,"timer":"t","timer_unit":"ns","timer_hz":1e9,"relax":"none","profile":"quick","seed":1,"pinned":true,"variants":{}}"#;

    fn sample(metric: &str, value: f64) -> String {
        format!(
            r#"{{"type":"sample","suite":"s","bench":"b","case":{{}},"metric":"{metric}","unit":"ns","better":"lower","gating":true,"round":0,"value":{value}}}"#
        )
    }

    #[test]
    fn folding_numbers_rounds_and_keeps_only_counts_from_a_counted_run() {
        let t = target(RunnerKind::Native);
        let steps = plan(&t, &opts(Some(2)), false, true);
        let mut acc = None;
        for (i, step) in steps.iter().enumerate() {
            let text = format!(
                "{ENV}\n{}\n{}\n",
                sample("ticks_per_op", 10.0 + i as f64),
                sample("insns_per_op", 7.0)
            );
            let o = outcome(&text);
            let p = protocol::parse(&o.stdout);
            Folded::add(&mut acc, o, p, step, format!("cmd{i}"));
        }
        let f = acc.unwrap();
        let ticks: Vec<(u32, Option<f64>)> = f
            .parsed
            .samples
            .iter()
            .filter(|s| s.metric == "ticks_per_op")
            .map(|s| (s.round, s.value))
            .collect();
        // The counted run's emulated time is dropped; its count kept.
        assert_eq!(ticks, [(0, Some(10.0)), (1, Some(11.0))]);
        let insns = f
            .parsed
            .samples
            .iter()
            .filter(|s| s.metric == "insns_per_op")
            .count();
        assert_eq!(insns, 3);
        assert_eq!(
            (f.command.as_str(), f.counted_command.as_deref()),
            ("cmd0", Some("cmd2"))
        );
        assert_eq!(f.outcome.secs, 3.0);
        assert!(f.parsed.bad_lines.is_empty());
    }
}
