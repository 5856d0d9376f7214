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

/// Checks out `rev` in a worktree under the cache (reused across runs).
fn worktree(root: &Path, rev: &str) -> Result<PathBuf> {
    let sh = xshell::Shell::new()?;
    sh.change_dir(root);
    let spec = format!("{rev}^{{commit}}");
    let sha = match xshell::cmd!(sh, "git rev-parse --verify {spec}")
        .quiet()
        .read()
    {
        Ok(sha) => sha,
        Err(_) => crate::error::exit2!("--against {rev}: not a revision of this repository"),
    };
    let path = build::cache_dir().join("worktrees").join(&sha);
    if !path.join("Cargo.toml").is_file() {
        let _ = std::fs::remove_dir_all(&path);
        xshell::cmd!(sh, "git worktree prune").quiet().run()?;
        xshell::cmd!(sh, "git worktree add --detach {path} {sha}")
            .quiet()
            .ignore_stderr()
            .run()?;
    }
    Ok(path)
}

/// Folds one invocation into the accumulated run of a suite; an
/// invocation of one round gets that round's number.
fn fold(
    acc: &mut Option<(runner::Outcome, protocol::Parsed)>,
    o: runner::Outcome,
    mut p: protocol::Parsed,
    round: Option<u32>,
) {
    if let Some(round) = round {
        for s in &mut p.samples {
            s.round = round;
        }
    }
    let Some((ao, ap)) = acc else {
        *acc = Some((o, p));
        return;
    };
    if ao.exit == runner::Exit::Code(0) {
        ao.exit = o.exit;
    }
    ao.stdout.push_str(&o.stdout);
    ao.stderr.push_str(&o.stderr);
    ao.secs += o.secs;
    ap.env = ap.env.take().or(p.env);
    ap.samples.extend(p.samples);
    ap.checks.extend(p.checks);
    ap.bad_lines.extend(p.bad_lines);
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

/// Rounds when each round is its own invocation: on targets whose timing
/// gates, and with `--against`. Contended cells jump between levels from
/// one process to the next (the host moves the vCPUs), so rounds from one
/// process understate the noise a later run will see; rounds from separate
/// processes do not.
fn invocation_rounds(opts: &Options) -> u32 {
    opts.rounds
        .unwrap_or(if opts.profile == "full" { 15 } else { 5 })
}

/// Where one target's suites run: its binaries (and the base revision's),
/// the ssh session or the plugin, and the timeout.
struct Site<'a> {
    target: &'a crate::config::Target,
    binaries: &'a BTreeMap<String, PathBuf>,
    base_binaries: Option<&'a BTreeMap<String, PathBuf>>,
    remote: Option<&'a crate::ssh::Remote>,
    plugin: Option<&'a Path>,
    timeout: Duration,
}

/// A suite's invocations folded into one outcome and its records.
type Folded = (runner::Outcome, protocol::Parsed);

/// One suite's run on a site: this tree's, the command that reproduces
/// it, and with `--against` the base revision's.
struct SuiteRuns {
    head: Folded,
    command: String,
    base: Option<Folded>,
}

/// Runs one suite on one site: one invocation for all rounds under QEMU
/// (advisory timing, slow start-up); elsewhere one per round, and with
/// `--against` base and head alternating, base first. Stops at the first
/// crash, hang or failed exit, which is then reported once.
fn run_suite(
    site: &Site,
    suite: &str,
    opts: &Options,
    args: &[String],
) -> Result<SuiteRuns, String> {
    let t = site.target;
    // On an ssh host each binary is copied once, then run per round.
    let mut copied: Vec<PathBuf> = Vec::new();
    let mut exec = |binary: &Path, args: &[String], is_base: bool| match site.remote {
        Some(r) => {
            let name = if is_base {
                format!("{suite}.base")
            } else {
                suite.to_string()
            };
            if !copied.iter().any(|c| c == binary) {
                r.copy(binary, &name)?;
                copied.push(binary.to_path_buf());
            }
            r.run(&name, args, site.timeout)
        }
        None => {
            let inv = runner::invocation(t, binary, args, site.plugin);
            // A fixed working directory: the run's own differs every time.
            runner::execute(&inv, Path::new("/"), site.timeout)
                .map(|o| (o, inv.shell()))
                .map_err(|e| format!("cannot start {}: {e}", inv.program))
        }
    };
    // (side is base, binary, args, round)
    let mut plan: Vec<(bool, &Path, Vec<String>, Option<u32>)> = Vec::new();
    if site.base_binaries.is_none() && t.runner == RunnerKind::Qemu {
        plan.push((false, &site.binaries[suite], args.to_vec(), None));
    } else {
        for r in 0..invocation_rounds(opts) {
            let one = vec![
                "--profile".into(),
                opts.profile.clone(),
                "--rounds".into(),
                "1".into(),
                "--seed".into(),
                (r + 1).to_string(),
            ];
            if let Some(base) = site.base_binaries {
                plan.push((true, &base[suite], one.clone(), Some(r)));
            }
            plan.push((false, &site.binaries[suite], one, Some(r)));
        }
    }
    let (mut head, mut base) = (None, None);
    let mut command = String::new();
    for (is_base, binary, args, round) in plan {
        let (o, c) = exec(binary, &args, is_base)?;
        let parsed = protocol::parse(&o.stdout);
        if !is_base {
            command = c;
        }
        let ended_badly = o.exit != runner::Exit::Code(0);
        fold(
            if is_base { &mut base } else { &mut head },
            o,
            parsed,
            round,
        );
        if ended_badly {
            break;
        }
    }
    let head = head.ok_or("nothing ran")?;
    Ok(SuiteRuns {
        head,
        command,
        base,
    })
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
        insns_plugin: None,
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
            insns_tolerance: t.insns_tolerance,
            cpu_model: None,
            suites: Vec::new(),
        };
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
    // The base revision builds first into the same cache (std is shared);
    // each build keeps its binaries in the run directory.
    let mut base_built: Vec<Result<BTreeMap<String, PathBuf>, String>> = Vec::new();
    if let (Some(rev), Some(tree)) = (&opts.against, &base_tree) {
        let logs = dir.join("logs/base");
        std::fs::create_dir_all(&logs)?;
        eprintln!("building the base revision {rev} ({})", tree.display());
        let base_bins = dir.join("base-bin");
        for b in build::build_all(tree, &jobs, &names, &opts.features, &logs, &base_bins, 2) {
            base_built.push(b.binaries.map_err(|e| format!("base {rev}: {e}")));
        }
    }
    let built = build::build_all(
        root,
        &jobs,
        &names,
        &opts.features,
        &dir.join("logs"),
        &dir.join("bin"),
        2,
    );
    let plugin = if opts.no_insns || !jobs.iter().any(|j| j.target.runner == RunnerKind::Qemu) {
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
    let mut base_run = opts.against.as_ref().map(|_| run.clone());

    let progress = crate::progress::Progress::new("run", jobs.len());
    let args = suite_args(opts);
    for (i, s) in selected.iter().enumerate() {
        let Some(j) = job_of[i] else { continue };
        let result = &mut run.targets[i];
        result.build_secs = Some(built[j].secs);
        let binaries = match (&built[j].binaries, base_built.get(j)) {
            (Ok(b), None | Some(Ok(_))) => b,
            (Err(e), _) | (_, Some(Err(e))) => {
                result.status = Status::Failed(e.clone());
                continue;
            }
        };
        let base_binaries = base_built.get(j).and_then(|b| b.as_ref().ok());
        let t = &s.target;
        let timeout = Duration::from_secs(opts.timeout_secs.unwrap_or(config.timeout_secs(t)));
        let out_dir = dir.join(&t.name);
        std::fs::create_dir_all(&out_dir)?;
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
        let mut failures: Vec<String> = Vec::new();
        let mut run_secs = 0.0;
        let site = Site {
            target: t,
            binaries,
            base_binaries,
            remote: remote.as_ref(),
            plugin: plugin.as_deref(),
            timeout,
        };
        for suite in &names {
            let item = format!("{}/{suite}", t.name);
            progress.start(&item);
            let SuiteRuns {
                head: (outcome, parsed),
                command,
                base,
            } = match run_suite(&site, suite, opts, &args) {
                Ok(ran) => ran,
                Err(why) => {
                    progress.finish(&item, &format!("failed: {why}"));
                    failures.push(format!("{suite}: {why}"));
                    continue;
                }
            };
            if let (Some((bo, bp)), Some(b)) = (base, base_run.as_mut()) {
                let status = results::judge(&bo, &bp, timeout.as_secs());
                b.targets[i]
                    .suites
                    .push(results::suite_run(suite, String::new(), &bo, bp, status));
            }
            std::fs::write(out_dir.join(format!("{suite}.jsonl")), &outcome.stdout)?;
            std::fs::write(out_dir.join(format!("{suite}.stderr")), &outcome.stderr)?;
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
    if let Some(base) = &mut base_run {
        base.finished = run.finished.clone();
        std::fs::write(dir.join("base.json"), serde_json::to_string_pretty(base)?)?;
    }
    Ok(Outcome {
        run,
        dir,
        base: base_run,
    })
}
