//! What the gate is given, read before it runs: the stored baselines of a
//! run's targets and suites, the recounts a matrix made of their commits,
//! the `Lockmatrix-Ordering:` trailers since them, or the base revision's
//! run. Every file and git read of the gate is here; [`super::evaluate`]
//! only judges what this gives it.

use super::evaluate::{evaluate, GateReport};
use super::reference::Reference;
use super::GateOptions;
use crate::baseline;
use crate::commit::{ancestry, Ancestry, CommitId};
use crate::family::BadGateOption;
use crate::results::{self, Run};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Why a run could not be gated: a bad option, or what the gate is given
/// cannot be read or used (bad input, exit status 2).
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    #[error(transparent)]
    Options(#[from] BadGateOption),
    /// `--baselines` (or `baselines/`) is a file.
    #[error("{}: not a directory (expected baselines/<target>/<suite>.json)", dir.display())]
    NotADirectory { dir: PathBuf },
    #[error(transparent)]
    Baseline(#[from] baseline::BaselineError),
    /// The base revision's run (`<dir>/base`).
    #[error(transparent)]
    Run(#[from] results::RunError),
    /// The recounts' directory (`<dir>/recount`).
    #[error(transparent)]
    Results(#[from] results::ResultsError),
    /// `baselines/contention.json`.
    #[error(transparent)]
    Contention(#[from] super::contention_file::Corrupt),
    /// A baseline's commit is not in the history it is compared with;
    /// `files` names (some of) the baselines recorded at it.
    #[error(
        "{files}: commit {commit}: not an ancestor of {head}: a baseline's commit must be in the history it is compared with (recorded on another branch? record the baselines again on this one)"
    )]
    NotAncestor {
        files: String,
        commit: String,
        head: String,
    },
}

/// Why a `--crate` run without `--against-crate` is compared with
/// nothing, and what would compare it.
pub const MEASURED_ALONE: &str =
    "--crate without --against-crate; give --against-crate SPEC for a gated A/B";

/// A run to gate: the checkout it belongs to, where it is recorded, the
/// base revision's run made beside it (if the caller has it), and the
/// baselines to use instead of the run's own reference.
pub struct Gating<'a> {
    pub root: &'a Path,
    pub run: &'a Run,
    pub dir: &'a Path,
    pub base: Option<&'a Run>,
    pub baselines: Option<&'a Path>,
}

/// The gate's verdict, and what it could not read (said, never fatal).
pub struct Gated {
    pub report: GateReport,
    pub warnings: Vec<String>,
}

/// Gates `g.run`: against `g.baselines` when given, else the base revision
/// of an `--against` run (`g.base`, or read from `<dir>/base`), else the
/// committed `baselines/`, with the recounts in `<dir>/recount` standing
/// in for counts another compiler made.
pub fn gate(g: &Gating, opts: &GateOptions) -> Result<Gated, LoadError> {
    opts.check()?;
    let mut warnings = Vec::new();
    let run = g.run;
    let read_base;
    // The contention model's stored records, where the reference is the
    // stored baselines.
    let mut contention = None;
    let reference = match (g.baselines, g.base, &run.against) {
        (Some(b), _, _) => {
            contention = Some(super::contention_file::read(b)?);
            stored(run, b)?
        }
        (None, Some(base), _) => Reference::Base(base),
        (None, None, Some(_)) => {
            read_base = results::read(&g.dir.join("base"))?;
            Reference::Base(&read_base)
        }
        // A crate measured alone: the baselines hold the suites' own
        // locks, not the crate's, so nothing is compared, and what needs
        // no reference is still judged.
        (None, None, None) if run.subject.is_some() => Reference::Nothing {
            why: MEASURED_ALONE.into(),
        },
        (None, None, None) => {
            contention = Some(super::contention_file::read(&g.root.join("baselines"))?);
            stored(run, &g.root.join("baselines"))?
        }
    };
    let recounts = recounts(g.dir)?;
    let mut reference = reference.recounted(&recounts);
    // Trailers between the baselines' commits and the run's acknowledge
    // ordering changes against them (an --against run recorded its own).
    for commit in reference.baseline_commits() {
        let Some(head) = &run.host.lockmatrix_commit else {
            warnings.push(
                "no Lockmatrix-Ordering trailers read: the run records no commit (made outside git)"
                    .into(),
            );
            break;
        };
        if let InHistory::NotHere(why) = in_history(g.root, &reference, &commit, head.as_str())? {
            warnings.push(why);
            continue;
        }
        match crate::acknowledge::in_range(g.root, &commit, head.as_str()) {
            Ok(acks) => reference.acknowledge(acks),
            Err(e) => warnings.push(format!(
                "no Lockmatrix-Ordering trailers read since the baselines' commit {}: {e}",
                commit.short()
            )),
        }
    }
    let mut report = evaluate(run, &reference, opts)?;
    if let Some(stored) = contention {
        report.contention = super::contention::ContentionGate::of(
            run.contention.as_ref(),
            stored.as_ref().map(|s| {
                (
                    &s.records[..],
                    format!(
                        "baselines/{} ({})",
                        super::contention_file::FILE,
                        crate::escape::prefix(&s.commit, 12)
                    ),
                )
            }),
        );
    }
    Ok(Gated { report, warnings })
}

/// The baselines of every `(target, suite)` of `run` in `dir`
/// (`<dir>/<target>/<suite>.json`). A file that cannot be read is an error
/// naming it (bad input); nothing is ever written.
pub fn stored(run: &Run, dir: &Path) -> Result<Reference<'static>, LoadError> {
    if dir.exists() && !dir.is_dir() {
        return Err(LoadError::NotADirectory { dir: dir.into() });
    }
    let mut files = BTreeMap::new();
    for t in &run.targets {
        for s in &t.suites {
            // A corrupt baseline is bad input: nothing is compared.
            let read = baseline::read(dir, &t.name, &s.suite)?;
            files.insert((t.name.clone(), s.suite.clone()), read);
        }
    }
    Ok(Reference::Stored {
        dir: dir.display().to_string(),
        files,
        acknowledged: Vec::new(),
        recounts: Vec::new(),
    })
}

/// The runs a matrix made of the baselines' commits with its own
/// toolchain (`<dir>/recount/`), where another compiler counted them.
pub fn recounts(dir: &Path) -> Result<Vec<Run>, LoadError> {
    let at: PathBuf = dir.join("recount");
    if !at.is_dir() {
        return Ok(Vec::new());
    }
    Ok(results::all(&[at])?
        .runs
        .into_iter()
        .map(|(_, r)| r)
        .collect())
}

/// Whether a baseline's `commit` may be used with `head` (`HEAD`, or the
/// run's commit): only an ancestor may start a trailer range or be built
/// for a recount, as a baseline file is reviewed as data and must not
/// choose which code runs or which commits acknowledge a change. One that
/// is not is bad input naming its files; one this clone lacks (a shallow
/// clone) is not used, and said.
pub fn in_history(
    root: &Path,
    reference: &Reference,
    commit: &CommitId,
    head: &str,
) -> Result<InHistory, LoadError> {
    let files = || -> String {
        let files = reference.files_at(commit);
        let mut shown: Vec<String> = files
            .iter()
            .take(3)
            .map(|f| f.display().to_string())
            .collect();
        if files.len() > 3 {
            shown.push(format!("and {} more", files.len() - 3));
        }
        shown.join(", ")
    };
    match ancestry(root, commit, head) {
        Ancestry::Ancestor => Ok(InHistory::Yes),
        Ancestry::NotAncestor => Err(LoadError::NotAncestor {
            files: files(),
            commit: commit.to_string(),
            head: if head == "HEAD" {
                "HEAD"
            } else {
                &head[..head.len().min(12)]
            }
            .to_string(),
        }),
        Ancestry::Unknown(why) => Ok(InHistory::NotHere(format!(
            "the baselines' commit {} is not in this clone ({why}): it is not used (fetch it, e.g. `git fetch --unshallow`)",
            commit.short()
        ))),
    }
}

/// Whether a baseline's commit may be used ([`in_history`]).
pub enum InHistory {
    Yes,
    /// This clone lacks it: why, to say.
    NotHere(String),
}
