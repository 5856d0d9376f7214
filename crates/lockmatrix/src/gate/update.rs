//! `baseline update`: records a run's cells as the new baselines.
//!
//! All or nothing: every selected suite run must be ok with every check
//! passed, and every existing baseline file it would replace must be
//! readable, before any file is written; then every file is staged and
//! renamed into place together ([`baseline::write_all`]). A file whose
//! content would not change is left as it is. One update at a time per
//! baselines directory ([`baseline::UpdateLock`]); a second one is refused.

use crate::baseline::{self, Baseline, BaselineCell, Testbed, FORMAT};
use crate::cells::{self, CellKey};
use crate::commit::CommitId;
use crate::results::{Run, Status, SuiteRun, TargetResult};
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Why `baseline update` wrote nothing (exit status 2).
#[derive(Debug, thiserror::Error)]
pub enum UpdateError {
    /// `--targets` or `--suites` names one the run does not have; `valid`
    /// lists the run's, comma-separated.
    #[error("unknown {what} `{name}` for this run; it has: {valid}")]
    UnknownName {
        what: &'static str,
        name: String,
        valid: String,
    },
    #[error("nothing to record: the selection holds no suite runs")]
    NothingToRecord,
    /// What stops the update, one line each: a suite run not ok, a failed
    /// check, too few rounds, an existing file that cannot be read.
    #[error("baseline update refused, nothing written:\n  - {}", .0.join("\n  - "))]
    Refused(Vec<String>),
    /// Locking, reading or writing the baselines.
    #[error(transparent)]
    Baseline(#[from] baseline::BaselineError),
}

/// Writes `baselines/<target>/<suite>.json` for each selected target and
/// suite of `run` (all of them when a filter is `None`), recording `commit`.
/// Returns one line per file (or skipped target) saying what changed, e.g.
/// `baselines/aarch64/atomic.json: 12 cells (3 new, 1 removed, 8 updated)`.
pub fn update_baselines(
    run: &Run,
    baselines: &Path,
    targets: Option<&[String]>,
    suites: Option<&[String]>,
    commit: &CommitId,
) -> Result<Vec<String>, UpdateError> {
    let which = Which { targets, suites };
    update(run, baselines, which, commit, Scope::All)
}

/// [`update_baselines`] without asking whether a real-hardware timing
/// family could be decided against what is recorded: the gate's tests
/// record short baselines (as older versions of this command did) on
/// purpose.
#[cfg(test)]
pub fn record_as_is(
    run: &Run,
    baselines: &Path,
    targets: Option<&[String]>,
    suites: Option<&[String]>,
    commit: &CommitId,
) -> Result<Vec<String>, UpdateError> {
    let which = Which { targets, suites };
    update(run, baselines, which, commit, Scope::AsIs)
}

/// [`update_baselines`] of the instruction counts and ordering footprints
/// only (`baseline update --counts-only`), after a compiler update: every
/// timing cell stays as it was, with the compiler it was measured with
/// (`Testbed::timings_compiler`), so that the diff touches only the count
/// cells, the footprints and the testbed.
pub fn update_counts(
    run: &Run,
    baselines: &Path,
    targets: Option<&[String]>,
    suites: Option<&[String]>,
    commit: &CommitId,
) -> Result<Vec<String>, UpdateError> {
    let which = Which { targets, suites };
    update(run, baselines, which, commit, Scope::Counts)
}

/// Whether a suite run's timing cells, recorded as a baseline, could
/// decide a later run's (on real hardware, where timings gate).
enum Undecidable {
    No,
    /// Too few rounds: refused, with the rounds to record.
    Rounds(String),
    /// Too noisy for its threshold whatever the rounds, or short of
    /// values at the most rounds ever asked for: recorded, said.
    Said(Vec<String>),
}

/// [`Undecidable`] for suite run `s` of `t` (its cells, `collected`), at the default thresholds
/// and the most rounds a later run plans against it.
///
/// A cell may have values in fewer rounds than were recorded (a stress
/// run whose threads never all ran at once has no per-thread shares): it
/// asks for as many more rounds as it lacks values, and once the
/// recording has [`crate::family::STORED_BASELINE_MOST`] rounds, the most
/// ever asked for, it is recorded as it is and said, never refused.
fn undecidable(t: &TargetResult, s: &SuiteRun, collected: Vec<cells::RunCell>) -> Undecidable {
    let opts = crate::family::GateOptions::default();
    let recorded =
        cells::timing_rounds(collected.iter().map(|c| (c.unit.as_str(), c.samples.len())));
    let (timed, counts) = crate::family::timed(collected, t.runner);
    let max = crate::family::STORED_ROUNDS.0 as usize;
    let most = crate::family::STORED_BASELINE_MOST;
    let label =
        |c: &cells::RunCell| format!("{} [{}]", c.key.bench, crate::protocol::case_label(&c.case));
    let (mut short, mut noisy, mut sparse) = (Vec::new(), Vec::new(), Vec::new());
    for (c, budget) in &timed {
        let Some(values) = cells::lower_is_better(&c.samples, c.better) else {
            continue;
        };
        let needed = crate::family::stored_rounds_needed(
            &opts,
            (*budget, counts, t.suites.len()),
            &values,
            max,
        );
        match needed {
            Some(n) if n > values.len() => {
                // `n` values, at the rate this cell had them.
                let rate = crate::strictness::Recorded {
                    values: &values,
                    rounds: recorded,
                };
                let rounds = rate.rounds_for(n).min(most);
                match recorded < rounds {
                    true => short.push((rounds, recorded)),
                    false => sparse.push(format!(
                        "{} ({} of {recorded} rounds, {n} needed)",
                        label(c),
                        values.len()
                    )),
                }
            }
            Some(_) => {}
            None => noisy.push(label(c)),
        }
    }
    let place = format!("{}/{}", t.name, s.suite);
    if let Some(&(n, have)) = short.iter().max() {
        return Undecidable::Rounds(format!(
            "{place}: its timing cells have {have} rounds; a later run can decide it against them only from {n} (the recorded spread, {max} rounds at most): record with `cargo xtask matrix --targets {} --rounds {n}`, or record its counts alone with `baseline update --counts-only`",
            t.name
        ));
    }
    let mut said = Vec::new();
    if !noisy.is_empty() {
        said.push(format!(
            "{place}: recorded, but {} too noisy for the threshold to be decided against stored baselines (later verdicts inconclusive; gate with --against): {}",
            if noisy.len() == 1 { "1 timing cell is" } else { "some timing cells are" },
            noisy.join(", ")
        ));
    }
    if !sparse.is_empty() {
        said.push(format!(
            "{place}: recorded, but {} values in too few of its rounds to be decided against stored baselines (later verdicts may be inconclusive; gate with --against): {}",
            if sparse.len() == 1 { "1 timing cell has" } else { "some timing cells have" },
            sparse.join(", ")
        ));
    }
    match said.is_empty() {
        true => Undecidable::No,
        false => Undecidable::Said(said),
    }
}

/// What an update records.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Scope {
    All,
    Counts,
    /// Everything, decidable or not (tests).
    #[cfg(test)]
    AsIs,
}

/// The targets and suites of a run to record (`None`: all of them).
#[derive(Clone, Copy)]
struct Which<'a> {
    targets: Option<&'a [String]>,
    suites: Option<&'a [String]>,
}

fn update(
    run: &Run,
    baselines: &Path,
    which: Which,
    commit: &CommitId,
    scope: Scope,
) -> Result<Vec<String>, UpdateError> {
    let Which { targets, suites } = which;
    check_names(
        "target",
        targets,
        run.targets.iter().map(|t| t.name.as_str()).collect(),
    )?;
    check_names(
        "suite",
        suites,
        run.targets
            .iter()
            .flat_map(|t| &t.suites)
            .map(|s| s.suite.as_str())
            .collect(),
    )?;
    let Selection {
        selected,
        mut refusals,
        mut lines,
    } = select(run, which, scope);
    if refusals.is_empty() && selected.is_empty() {
        return Err(UpdateError::NothingToRecord);
    }
    // Held until every file is renamed into place: a second update would
    // otherwise interleave its renames with these.
    let _lock = baseline::UpdateLock::take(baselines)?;
    // Every existing file must be readable before anything is written.
    let mut plans = Vec::new();
    for (t, s) in &selected {
        let path = baseline::path(baselines, &t.name, &s.suite);
        match baseline::read(baselines, &t.name, &s.suite) {
            Ok(old) => plans.push(plan(run, (t, s), (path, old), commit, scope)),
            Err(e) => refusals.push(format!(
                "refusing to overwrite {}: {}",
                path.display(),
                crate::error::chain(&e)
            )),
        }
    }
    // The model's file is merged, not replaced: read it first too.
    let contention = super::contention_file::read(baselines);
    if let Err(e) = &contention {
        refusals.push(format!("refusing to overwrite {e}"));
    }
    if !refusals.is_empty() {
        return Err(UpdateError::Refused(refusals));
    }
    for stale in baseline::remove_stale_temps(baselines) {
        lines.push(format!(
            "removed {}, left by an interrupted update",
            stale.display()
        ));
    }
    let mut files: Vec<(PathBuf, String)> = plans
        .iter()
        .filter_map(|p| p.text.clone().map(|t| (p.path.clone(), t)))
        .collect();
    // The contention model's records, with everything else or not at all.
    let old = contention.ok().flatten();
    match super::contention_file::text(run, &commit.to_string(), old.as_ref(), suites) {
        Some(Ok((text, line))) => {
            files.push((baselines.join(super::contention_file::FILE), text));
            lines.push(line);
        }
        Some(Err(why)) => lines.push(why.to_string()),
        None => {}
    }
    baseline::write_all(&files)?;
    lines.extend(plans.into_iter().map(|p| p.line));
    Ok(lines)
}

/// What an update of `run` records and refuses: the selected suite runs,
/// why any cannot be recorded, and what is said of the others.
struct Selection<'r> {
    selected: Vec<(&'r TargetResult, &'r SuiteRun)>,
    refusals: Vec<String>,
    lines: Vec<String>,
}

/// The suite runs of `run` that `which` names, each checked: passed, ok,
/// and (in [`Scope::All`]) with timing cells a later run can decide.
fn select<'r>(run: &'r Run, which: Which, scope: Scope) -> Selection<'r> {
    let named =
        |list: Option<&[String]>, name: &str| list.is_some_and(|l| l.iter().any(|n| n == name));
    let Which { targets, suites } = which;
    let mut out = Selection {
        selected: Vec::new(),
        refusals: Vec::new(),
        lines: Vec::new(),
    };
    let (lines, refusals, selected) = (&mut out.lines, &mut out.refusals, &mut out.selected);
    for t in &run.targets {
        if targets.is_some() && !named(targets, &t.name) {
            continue;
        }
        let runs: Vec<&SuiteRun> = t
            .suites
            .iter()
            .filter(|s| suites.is_none() || named(suites, &s.suite))
            .collect();
        match &t.status {
            Status::NotRun(why) if named(targets, &t.name) => {
                refusals.push(format!("{}: not run: {why}", t.name))
            }
            Status::NotRun(why) => {
                lines.push(format!("{}: not run ({why}): no baseline written", t.name))
            }
            Status::Failed(why) if t.suites.is_empty() => refusals.push(format!(
                "{}: failed before its suites ran: {why} (leave it out with --targets)",
                t.name
            )),
            _ => {}
        }
        for s in runs {
            let failed: Vec<_> = s.checks.iter().filter(|c| !c.ok).collect();
            if let Some(c) = failed.first() {
                refusals.push(format!(
                    "{}/{}: {} failed check(s), e.g. {} in {} [{}]: {}",
                    t.name,
                    s.suite,
                    failed.len(),
                    c.name,
                    c.bench,
                    crate::protocol::case_label(&c.case),
                    c.details
                ));
            } else if s.status != Status::Ok {
                refusals.push(format!("{}/{}: {}", t.name, s.suite, s.status.label()));
            } else if scope == Scope::All {
                let collected = cells::collect(&s.samples);
                let place = format!("{}/{}", t.name, s.suite);
                let busy = super::canary::busy_recording(&collected, &place);
                match undecidable(t, s, collected) {
                    Undecidable::No => {}
                    Undecidable::Rounds(why) => refusals.push(why),
                    Undecidable::Said(why) => lines.extend(why),
                }
                lines.extend(busy);
            }
            selected.push((t, s));
        }
    }
    out
}

fn check_names(
    what: &'static str,
    given: Option<&[String]>,
    valid: BTreeSet<&str>,
) -> Result<(), UpdateError> {
    for name in given.unwrap_or_default() {
        if !valid.contains(name.as_str()) {
            let valid: Vec<&str> = valid.iter().copied().collect();
            return Err(UpdateError::UnknownName {
                what,
                name: name.clone(),
                valid: valid.join(", "),
            });
        }
    }
    Ok(())
}

/// The baseline that records suite run `s` of target `t` of `run`.
pub fn baseline_of(run: &Run, t: &TargetResult, s: &SuiteRun, commit: &CommitId) -> Baseline {
    Baseline {
        format: FORMAT,
        target: t.name.clone(),
        suite: s.suite.clone(),
        testbed: Testbed::of_suite(run, t, &s.suite),
        commit: commit.clone(),
        date: run.started.clone(),
        cells: cells::collect(&s.samples)
            .iter()
            .map(BaselineCell::from_run)
            .collect(),
        footprint: super::ordering::Footprints::of(&t.triple, s),
        binary: t.binaries.get(&s.suite).cloned(),
    }
}

/// `old` with `new`'s counts, footprints and counting testbed; its timing
/// cells and the testbed they were measured on stay.
fn counts_into(old: &Baseline, new: Baseline) -> Baseline {
    let timings_compiler = old
        .testbed
        .timings_compiler
        .clone()
        .or_else(|| old.testbed.compiler_version.clone())
        .filter(|c| Some(c) != new.testbed.compiler_version.as_ref());
    let testbed = Testbed {
        runner: old.testbed.runner,
        cpu_model: old.testbed.cpu_model.clone(),
        emulator_version: old.testbed.emulator_version.clone(),
        machine: old.testbed.machine.clone(),
        kernel: old.testbed.kernel.clone(),
        virtualization: old.testbed.virtualization.clone(),
        declared_testbed: old.testbed.declared_testbed.clone(),
        timings_compiler,
        ..new.testbed
    };
    let mut cells: Vec<BaselineCell> = old
        .cells
        .iter()
        .filter(|c| !c.kind().exact())
        .cloned()
        .collect();
    cells.extend(new.cells.into_iter().filter(|c| c.kind().exact()));
    Baseline {
        testbed,
        cells,
        ..new
    }
}

struct Plan {
    path: PathBuf,
    /// The new text, `None` when the file stays as it is.
    text: Option<String>,
    line: String,
}

fn plan(
    run: &Run,
    (t, s): (&TargetResult, &SuiteRun),
    (path, old): (PathBuf, Option<Baseline>),
    commit: &CommitId,
    scope: Scope,
) -> Plan {
    let mut new = baseline_of(run, t, s, commit);
    if let (Scope::Counts, Some(old)) = (scope, &old) {
        new = counts_into(old, new);
    }
    let n = new.cells.len();
    let shown = path.display().to_string();
    let Some(old) = old else {
        return Plan {
            text: Some(baseline::to_text(&new)),
            line: format!("{shown}: {n} cells (new file)"),
            path,
        };
    };
    let before: BTreeMap<CellKey, &BaselineCell> = old.cells.iter().map(|c| (c.key(), c)).collect();
    let after: BTreeMap<CellKey, &BaselineCell> = new.cells.iter().map(|c| (c.key(), c)).collect();
    let added = after.keys().filter(|k| !before.contains_key(k)).count();
    let removed = before.keys().filter(|k| !after.contains_key(k)).count();
    let updated = after
        .iter()
        .filter(|(k, c)| before.get(k).is_some_and(|b| b != *c))
        .count();
    let testbed = old.testbed.differences(&new.testbed);
    // The footprints, the binary and the format count as content too: a
    // file from before footprints were recorded is rewritten with them.
    let footprint = old.footprint != new.footprint;
    let rest = footprint || old.binary != new.binary || old.format != new.format;
    if added + removed + updated == 0 && testbed.is_empty() && !rest {
        return Plan {
            text: None,
            line: format!("{shown}: {n} cells, unchanged"),
            path,
        };
    }
    let mut line =
        format!("{shown}: {n} cells ({added} new, {removed} removed, {updated} updated)");
    if !testbed.is_empty() {
        line.push_str(&format!("; testbed changed: {}", testbed.join("; ")));
    }
    if footprint {
        line.push_str("; ordering footprint changed");
    }
    Plan {
        text: Some(baseline::to_text(&new)),
        line,
        path,
    }
}
