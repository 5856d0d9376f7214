//! `cargo xtask matrix`: check every option, install what is missing,
//! build and run the matrix, print its tables, and gate it.

use super::{gate_run, resolve};
use crate::flags::MatrixArgs;
use crate::{miri_setup, packages, progress};
use anyhow::{bail, Result};
use lockmatrix::report::table;
use lockmatrix::results::{Run, Status, TargetResult};
use lockmatrix::{config, matrix, select, toolchain};
use std::path::Path;

pub fn run(root: &Path, args: MatrixArgs) -> Result<bool> {
    // Every option is checked before anything is installed or built.
    args.gate.options().check()?;
    args.gate.outputs(|p| resolve(root, p))?;
    for f in &args.features {
        let ok = !f.is_empty()
            && f.len() <= 64
            && f.chars()
                .all(|c| c.is_ascii_alphanumeric() || "_-/".contains(c));
        if !ok {
            bail!(
                "--features `{}`: not a feature name; expected letters, digits, `_`, `-` and `/` (e.g. spinlock/broken-lock), comma-separated",
                lockmatrix::escape::terminal(&f.chars().take(80).collect::<String>()).replace('\n', "\\n")
            );
        }
    }
    if args.krate.is_some() && args.against_crate.is_none() {
        // Measured, not compared: nothing to gate or to report as a gate.
        let gated = [
            ("--json", args.gate.json.is_some()),
            ("--markdown", args.gate.markdown.is_some()),
            ("--pr-comment", args.gate.pr_comment.is_some()),
            ("--require-gate", args.gate.require_gate),
        ];
        if let Some((flag, _)) = gated.iter().find(|(_, given)| *given) {
            bail!(
                "{flag}: --crate without --against-crate measures the crate, it does not compare it, so there is no gate to report or require; give --against-crate SPEC for a gated A/B"
            );
        }
    }
    lockmatrix::host::declared()?;
    let config = config::load(&resolve(root, &args.selection.config))?;
    let selected = select::targets(&config, args.selection.targets.as_deref())?;
    let crates = crates(root, &args)?;
    let only = match &args.toolchain {
        Some(t) => toolchain::Only::parse(t)?,
        None => toolchain::Only::Any,
    };
    // A crate's locks are in the spinlock (mutexes) and rwsem (rwlocks)
    // suites; which of them runs is known once cargo resolved it.
    let mut suites = select::suites(args.suites.as_deref())?;
    let need = toolchain::rust_version(&root.join("Cargo.toml"));
    let container = super::container::choose(root, &args, &selected, need)?;
    let opts = matrix::Options {
        profile: args.profile,
        rounds: args.rounds,
        timeout_secs: args.timeout,
        results_dir: resolve(root, &args.results),
        features: args.features,
        against: args
            .against
            .or_else(|| crates.as_ref()?.base.as_ref().map(|b| b.to_string())),
        no_insns: args.no_insns,
        counts_only: false,
        tree: None,
        crates,
        stop_when_decided: Some(args.gate.options()),
        toolchain: only,
        stored: None,
    };
    // A corrupt baseline is bad input: said before anything is built.
    let mut opts = opts;
    if opts.against.is_none() && opts.crates.is_none() {
        let baselines = resolve(
            root,
            args.gate
                .baselines
                .as_deref()
                .unwrap_or(Path::new("baselines")),
        );
        let names: Vec<&lockmatrix::name::Name> = selected.iter().map(|s| &s.target.name).collect();
        let suite_names: Vec<&str> = suites.iter().map(|s| s.name).collect();
        lockmatrix::gate::baseline::check_readable(&baselines, &names, &suite_names)?;
        // A real-hardware target whose stored baselines compare takes the
        // rounds its timing family needs to decide, look by look.
        let names: Vec<String> = suite_names.iter().map(|s| s.to_string()).collect();
        opts.stored = Some(std::sync::Arc::new(move |host, target| {
            let suites: Vec<&str> = names.iter().map(String::as_str).collect();
            Some(lockmatrix::gate::baseline::stored_timings(
                &baselines, host, target, &suites,
            ))
        }));
    }
    // Checked here, the same matrix runs inside the image.
    if let Some(plan) = container {
        return plan.run(root, &config);
    }
    let prepared = matrix::prepare(root, &opts)?;
    if let Some(s) = &prepared.subject {
        suites = crate_suites(&s.head, s.base.as_ref(), suites, args.suites.is_some())?;
        let versus = s
            .base
            .as_ref()
            .map_or(String::new(), |b| format!(" against {}", b.label()));
        errln!(
            "crate: {}{versus}: {} locks ({}), lock_api {}, {}",
            s.head.label(),
            s.head.mutexes.len() + s.head.rwlocks.len(),
            s.head
                .mutexes
                .iter()
                .chain(&s.head.rwlocks)
                .map(|n| n.as_str())
                .collect::<Vec<_>>()
                .join(", "),
            s.head.lock_api,
            s.head.source
        );
    }
    if let (Some(base), None) = (&prepared.base, &prepared.subject) {
        if lockmatrix::host::dirty(root) {
            errln!(
                "note: the working tree has uncommitted changes: the head side is this tree as it is, not a commit; run.json records it (lockmatrix_dirty), and --against {} is compared with it",
                lockmatrix::commit::shown(base.commit.as_ref())
            );
        }
    }
    for old in prepared.removed_worktrees() {
        errln!("removed the old --against worktree {}", old.display());
    }
    if !args.no_install {
        packages::ensure(&matrix::packages_needed(&selected, need, &opts.toolchain))?;
        // The Miri check's toolchain, where a selected suite has clients;
        // where it cannot be had the check says NOT CHECKED, with the
        // command, and the rest of the matrix runs.
        if suites
            .iter()
            .any(|s| lockmatrix::miri::SUITES.contains(&s.name))
        {
            if let Err(e) = miri_setup::install() {
                errln!("miri: NOT CHECKED: {e:#}");
            }
        }
    }
    let observer = progress::Terminal::default();
    let matrix::Outcome { run, dir, base } = matrix::run(
        root, &config, &selected, &suites, &opts, &prepared, &observer,
    )?;
    if base.is_none() && !args.no_insns && prepared.subject.is_none() {
        let to = Recount {
            root,
            config: &config,
            selected: &selected,
            suites: &suites,
            opts: &opts,
            cache: &prepared.cache,
        };
        to.baselines(&run, &dir, &args.gate, &observer)?;
    }
    out!("{}", table::timings(&run));
    out!("{}", table::footprints(&run));
    out!("{}", table::models(&run));
    out!("{}", table::miri(&run));
    out!("{}", table::lock_crates(&run));
    outln!("\n{}", table::status(&run));
    outln!("{}", table::summary(&run));
    outln!("results: {}", dir.join("run.json").display());
    if let Some(why) = nothing_ran(&run) {
        // A crate version that builds for none of the selected targets
        // (one target per CI job, say) has been answered, not refused.
        if !cannot_build_anywhere(&run, base.as_ref()) {
            bail!("nothing ran: {why}");
        }
        outln!("nothing ran: {why}");
        return Ok(true);
    }
    let targets_ok = run
        .targets
        .iter()
        .all(|t| !matches!(t.status, Status::Failed(_)));
    if run.subject.is_some() && base.is_none() {
        outln!("--crate without --against-crate: measured, not compared (the baselines hold the suites' own locks, not the crate's); give --against-crate SPEC for a gated A/B");
        return Ok(targets_ok);
    }
    let gate_ok = gate_run(root, &run, &dir, base.as_ref(), &args.gate)?;
    if args.no_gate && !gate_ok {
        outln!("--no-gate: the comparison above does not change the exit status");
    }
    Ok(targets_ok && (args.no_gate || gate_ok))
}

/// `--crate` and `--against-crate`, read: one crate, two versions.
fn crates(root: &Path, args: &MatrixArgs) -> Result<Option<matrix::Crates>> {
    let Some(head) = &args.krate else {
        return Ok(None);
    };
    let cwd = std::env::current_dir().unwrap_or_else(|_| root.to_path_buf());
    let head = lockmatrix::subject::parse(head, &cwd)?;
    let base = args
        .against_crate
        .as_deref()
        .map(|b| {
            lockmatrix::subject::parse(b, &cwd).map_err(|e| {
                anyhow::anyhow!(e.to_string().replacen("--crate", "--against-crate", 1))
            })
        })
        .transpose()?;
    if let Some(b) = &base {
        if b.name != head.name {
            bail!("--against-crate {b}: a different crate than --crate {head}: compare two versions of one crate (lock names are the crate's name and type)");
        }
    }
    Ok(Some(matrix::Crates {
        head,
        base,
        require_build: args.require_build,
    }))
}

/// The suites that measure a crate's locks: of `asked` (all when
/// `--suites` was not given), those with a lock of the crate on either
/// side. None is bad input.
fn crate_suites(
    head: &lockmatrix::subject::Subject,
    base: Option<&lockmatrix::subject::Subject>,
    asked: Vec<select::Suite>,
    explicit: bool,
) -> Result<Vec<select::Suite>> {
    let has: Vec<&str> = std::iter::once(head)
        .chain(base)
        .flat_map(|s| s.suites())
        .collect();
    let chosen: Vec<select::Suite> = asked
        .into_iter()
        .filter(|s| has.contains(&s.name))
        .collect();
    if chosen.is_empty() {
        bail!(
            "--crate {}: none of the {} suites measures its locks (mutexes: spinlock, rwlocks: rwsem)",
            head.label(),
            if explicit { "selected" } else { "" }
        );
    }
    Ok(chosen)
}

/// What a recount of the baselines' commit needs of the run it is for.
struct Recount<'a> {
    root: &'a Path,
    config: &'a config::Config,
    selected: &'a [select::Selected],
    suites: &'a [select::Suite],
    opts: &'a matrix::Options,
    cache: &'a Path,
}

impl Recount<'_> {
    /// Where the stored baselines' counts come from another compiler (or
    /// emulator release, or CPU choice) than `run`'s, counts their commit
    /// again with this run's toolchain into `<dir>/recount/`, so that every
    /// count still compares exactly (the gate reads it from there). A
    /// commit this clone lacks is one line saying what to fetch; under
    /// `--require-gate` it is exit 2.
    fn baselines(
        &self,
        run: &Run,
        dir: &Path,
        gate: &crate::flags::GateArgs,
        observer: &progress::Terminal,
    ) -> Result<()> {
        let baselines = resolve(
            self.root,
            gate.baselines.as_deref().unwrap_or(Path::new("baselines")),
        );
        let reference = lockmatrix::gate::load::stored(run, &baselines)?;
        for (commit, targets) in reference.to_recount(run) {
            let short = commit.short();
            // A baseline file is data: it builds only a commit of this history.
            use lockmatrix::gate::load::{in_history, InHistory};
            if let InHistory::NotHere(why) = in_history(self.root, &reference, &commit, "HEAD")? {
                errln!("warning: {why}");
                if gate.require_gate {
                    bail!("counts: the baselines were counted by another compiler and their commit {short} is not in this clone");
                }
                continue;
            }
            let worktree = match matrix::worktree::check_out(self.root, &commit) {
                Ok(w) => w,
                Err(e) if gate.require_gate => bail!(
                    "counts: the baselines were counted by another compiler and their commit {short} cannot be rebuilt here: {e:#}"
                ),
                Err(e) => {
                    errln!("counts: the baselines' commit {short} cannot be rebuilt here, so their counts stay incomparable: {e:#}");
                    continue;
                }
            };
            errln!(
                "counts: the baselines were counted by another compiler: counting their commit {short} again with this one on {} targets",
                targets.len()
            );
            let subset: Vec<select::Selected> = self
                .selected
                .iter()
                .filter(|s| targets.contains(&s.target.name))
                .cloned()
                .collect();
            let opts = self.opts.recount(worktree.path, dir.join("recount"));
            let prepared = matrix::Prepared {
                base: None,
                cache: self.cache.to_path_buf(),
                subject: None,
            };
            let started = std::time::Instant::now();
            let recount = matrix::run(
                self.root,
                self.config,
                &subset,
                self.suites,
                &opts,
                &prepared,
                observer,
            )?;
            // Where its time went: the builds (of another commit's
            // sources, so not in the store) and the counted runs.
            let sum = |f: fn(&TargetResult) -> Option<f64>| -> f64 {
                recount.run.targets.iter().filter_map(f).sum()
            };
            errln!(
                "counts: the recount of {short} took {:.0}s ({:.0}s of builds, {:.0}s of counted runs, two at a time)",
                started.elapsed().as_secs_f64(),
                sum(|t| t.build_secs),
                sum(|t| t.run_secs)
            );
        }
        Ok(())
    }
}

/// Whether every target is not run because a version of the crate under
/// test cannot be built for it (the reason starts with the crate's label).
fn cannot_build_anywhere(run: &Run, base: Option<&Run>) -> bool {
    let labels: Vec<String> = [Some(run), base]
        .into_iter()
        .flatten()
        .filter_map(|r| r.subject.as_ref().map(|s| s.label()))
        .collect();
    !labels.is_empty()
        && run.targets.iter().all(|t| match &t.status {
            Status::NotRun(why) => labels.iter().any(|l| why.starts_with(&format!("{l} "))),
            _ => false,
        })
}

/// Why no selected target ran, when none did: a matrix of only "not run"
/// targets has tested nothing and must not pass.
fn nothing_ran(run: &Run) -> Option<String> {
    let reasons: Vec<String> = run
        .targets
        .iter()
        .map(|t| match &t.status {
            Status::NotRun(why) => Some(format!("{}: {why}", t.name)),
            _ => None,
        })
        .collect::<Option<_>>()?;
    Some(reasons.join("; "))
}
