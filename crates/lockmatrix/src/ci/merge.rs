//! Merging the runs CI's target jobs leave (one target each) into one run,
//! so one gate decides over every cell (one Holm family) and writes one
//! report.

use crate::error::doing;
use crate::results::{self, Run};
use std::path::{Path, PathBuf};

/// Why runs cannot be merged; each names the run directory or file.
#[derive(Debug, thiserror::Error)]
pub enum MergeError {
    #[error("nothing to merge: name at least one run directory")]
    Nothing,
    #[error("{}: already holds a run; merge into a new directory", .out.display())]
    AlreadyARun { out: PathBuf },
    #[error(transparent)]
    Read(#[from] results::RunError),
    #[error("target '{target}' is in both {} and {}: merge runs of different targets", .first.display(), .second.display())]
    TargetTwice {
        target: String,
        first: PathBuf,
        second: PathBuf,
    },
    #[error("{}: {what} is `{theirs}`, but {} has `{ours}`: runs with different {what}s cannot be gated together", .file.display(), .first_file.display())]
    Differs {
        file: PathBuf,
        what: String,
        theirs: String,
        first_file: PathBuf,
        ours: String,
    },
    #[error("{} and {} would both be {}: merge runs of different targets", .one.display(), .other.display(), .to.display())]
    SameDestination {
        one: PathBuf,
        other: PathBuf,
        to: PathBuf,
    },
    #[error("{}: already exists: merge into a new directory", .0.display())]
    Exists(PathBuf),
    #[error("{}: is {kind}: refused (a run directory holds only directories and regular files)", .path.display())]
    NotAFile { path: PathBuf, kind: String },
    #[error("{}: larger than {} MiB: refused", .0.display(), FILE_LIMIT >> 20)]
    TooLarge(PathBuf),
    /// What was being done when the system refused.
    #[error(transparent)]
    While(#[from] crate::error::Doing),
    #[error(transparent)]
    File(#[from] crate::file::FileError),
    #[error(transparent)]
    Write(#[from] results::WriteError),
}

type Result<T, E = MergeError> = std::result::Result<T, E>;

/// Combines the runs in `dirs` into one run written to `out` (`run.json`
/// plus every other file of each run: suites' output and build logs).
///
/// The runs must have the same format, profile and lockmatrix commit, and
/// no target may appear in two of them. The merged run's id is `out`'s file
/// name; it starts when the first run started and finishes when the last
/// finished; its targets are the runs' targets in the order of `dirs`.
/// `host` is the first run's, except that `lockmatrix_dirty` is set when any
/// run was dirty; each target keeps its own job's CPU model in `cpu_model`,
/// which the gate's testbed comparison uses.
///
/// Runs made with `--against` must name the same base commit; their base
/// runs (`<dir>/base`) are merged the same way into `<out>/base`, so the
/// merged run gates paired against its base.
pub fn merge_runs(dirs: &[PathBuf], out: &Path) -> Result<()> {
    let Some((first_dir, rest)) = dirs.split_first() else {
        return Err(MergeError::Nothing);
    };
    if out.join("run.json").exists() {
        return Err(MergeError::AlreadyARun { out: out.into() });
    }
    let first = results::read(first_dir)?;
    let mut merged = Run {
        run_id: out
            .file_name()
            .map_or_else(|| "merged".into(), |n| n.to_string_lossy().into_owned()),
        command: vec!["ci".into(), "merge".into()],
        targets: Vec::new(),
        ..first.clone()
    };
    let mut runs = vec![(first_dir, first)];
    for dir in rest {
        runs.push((dir, results::read(dir)?));
    }
    let mut seen: Vec<(String, PathBuf)> = Vec::new();
    for (dir, run) in &runs {
        check_alike((first_dir, &merged), (dir, run))?;
        for t in &run.targets {
            if let Some((_, prev)) = seen.iter().find(|(name, _)| *name == t.name) {
                return Err(MergeError::TargetTwice {
                    target: t.name.to_string(),
                    first: prev.clone(),
                    second: dir.to_path_buf(),
                });
            }
            seen.push((t.name.to_string(), dir.to_path_buf()));
        }
        add_run(&mut merged, dir, run);
    }
    merged
        .command
        .extend(["--out".into(), out.display().to_string()]);
    let files = planned_files(&runs, out)?;
    let created = !out.exists();
    let written = write_merged(out, &files, &runs, &merged);
    if written.is_err() && created {
        let _ = std::fs::remove_dir_all(out);
    }
    written
}

/// Refuses a run that cannot be gated together with the first: another
/// format, profile, base revision, lock crate or lockmatrix commit.
/// `merged` holds the first run's values, read from `first_dir`.
fn check_alike((first_dir, merged): (&Path, &Run), (dir, run): (&Path, &Run)) -> Result<()> {
    let differs = |what: &str, a: &str, b: &str| -> Result<()> {
        Err(MergeError::Differs {
            file: dir.join("run.json"),
            what: what.into(),
            theirs: b.into(),
            first_file: first_dir.join("run.json"),
            ours: a.into(),
        })
    };
    if run.format != merged.format {
        differs(
            "format",
            &merged.format.to_string(),
            &run.format.to_string(),
        )?;
    }
    if run.profile != merged.profile {
        differs("profile", merged.profile.name(), run.profile.name())?;
    }
    let base = |r: &Run| {
        r.against.as_ref().map_or("none".to_string(), |a| {
            crate::commit::shown(a.commit.as_ref()).to_string()
        })
    };
    if base(run) != base(merged) {
        differs("base revision (--against)", &base(merged), &base(run))?;
    }
    // `--crate` runs: one version of one crate, built alike everywhere.
    let subject = |r: &Run| {
        r.subject.as_ref().map_or("none".to_string(), |c| {
            format!("{} ({})", c.label(), c.source)
        })
    };
    if subject(run) != subject(merged) {
        differs("lock crate (--crate)", &subject(merged), &subject(run))?;
    }
    if run.host.lockmatrix_commit != merged.host.lockmatrix_commit {
        differs(
            "lockmatrix commit",
            crate::commit::shown(merged.host.lockmatrix_commit.as_ref()),
            crate::commit::shown(run.host.lockmatrix_commit.as_ref()),
        )?;
    }
    Ok(())
}

/// Adds `run` (read from `dir`) to `merged`: its targets, each with its
/// own job's machine; its span of time; whether it was dirty; its
/// directory in the merge's command.
fn add_run(merged: &mut Run, dir: &Path, run: &Run) {
    merged.host.lockmatrix_dirty |= run.host.lockmatrix_dirty;
    if run.started < merged.started {
        merged.started = run.started.clone();
    }
    merged.finished = match (&merged.finished, &run.finished) {
        (Some(a), Some(b)) => Some(a.max(b).clone()),
        _ => None,
    };
    merged.command.push(dir.display().to_string());
    // Each job ran on its own machine: keep its CPU with its targets.
    merged
        .targets
        .extend(run.targets.iter().cloned().map(|mut t| {
            t.cpu_model
                .get_or_insert_with(|| run.host.cpu_model.clone());
            // A kernel marks a target that records its own machine
            // (`Testbed::of`): an ssh host's, or a job's from an
            // earlier merge.
            if t.kernel.is_none() {
                t.machine = run.host.machine.clone();
                t.kernel = Some(run.host.kernel.clone());
                t.virtualization = run.host.virtualization.clone();
                t.declared_testbed = run.host.declared_testbed.clone();
            }
            t
        }));
}

/// Every file of every run to copy into `out`, `(source, destination)`.
/// Every entry of every input is checked before anything is written: a
/// refused entry, or two runs' files with one destination, leaves no
/// partial output behind.
fn planned_files(runs: &[(&PathBuf, Run)], out: &Path) -> Result<Vec<(PathBuf, PathBuf)>> {
    let mut files = Vec::new();
    for (dir, _) in runs {
        plan_copy(dir, out, true, &mut files)?;
    }
    let mut seen = std::collections::BTreeMap::new();
    for (src, dst) in &files {
        if let Some(other) = seen.insert(dst, src) {
            return Err(MergeError::SameDestination {
                one: other.to_path_buf(),
                other: src.clone(),
                to: dst.clone(),
            });
        }
    }
    Ok(files)
}

/// Writes the merged run into `out`: the runs' files, the merge of their
/// base runs (`--against`), and its `run.json` last.
fn write_merged(
    out: &Path,
    files: &[(PathBuf, PathBuf)],
    runs: &[(&PathBuf, Run)],
    merged: &Run,
) -> Result<()> {
    std::fs::create_dir_all(out).map_err(doing(format!("creating {}", out.display())))?;
    for (src, dst) in files {
        copy_file(src, dst)?;
    }
    if merged.against.is_some() {
        let bases: Vec<PathBuf> = runs.iter().map(|(d, _)| d.join("base")).collect();
        merge_runs(&bases, &out.join("base"))?;
    }
    Ok(results::write(out, merged)?)
}

/// The largest file a run directory holds honestly: a suite binary or a
/// suite's output (see [`crate::file::OUTPUT_LIMIT`]).
const FILE_LIMIT: u64 = 256 << 20;

/// Lists every file under `from` to copy into `to`, except the top-level
/// `run.json` (and a half-written one) and `base/` (merged on its own).
/// Only directories and regular files are taken: a symbolic link, a FIFO,
/// a device or a socket in an artifact is refused, naming it, so a merged
/// output holds only files that were inside its inputs.
fn plan_copy(from: &Path, to: &Path, top: bool, out: &mut Vec<(PathBuf, PathBuf)>) -> Result<()> {
    let reading = || doing(format!("reading {}", from.display()));
    let entries = std::fs::read_dir(from).map_err(reading())?;
    let mut entries: Vec<_> = entries.collect::<std::io::Result<_>>().map_err(reading())?;
    entries.sort_by_key(|e| e.file_name());
    for entry in entries {
        let name = entry.file_name();
        let partial = name.to_string_lossy().starts_with(".run.json.tmp-");
        if top && (name == "run.json" || partial || name == "base") {
            continue;
        }
        let (src, dst) = (entry.path(), to.join(&name));
        let kind = entry
            .file_type()
            .map_err(doing(format!("reading {}", src.display())))?;
        if kind.is_dir() {
            plan_copy(&src, &dst, false, out)?;
        } else if kind.is_file() {
            if dst.symlink_metadata().is_ok() {
                return Err(MergeError::Exists(dst));
            }
            out.push((src, dst));
        } else {
            return Err(MergeError::NotAFile {
                path: src,
                kind: crate::file::kind_of(kind).to_string(),
            });
        }
    }
    Ok(())
}

/// Copies one regular file, opened without following a link and never
/// writing through one at the destination.
fn copy_file(src: &Path, dst: &Path) -> Result<()> {
    use std::io::Read;
    let mut from = crate::file::open_regular(src)?.take(FILE_LIMIT + 1);
    if let Some(dir) = dst.parent() {
        std::fs::create_dir_all(dir).map_err(doing(format!("creating {}", dir.display())))?;
    }
    let mut to = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(dst)
        .map_err(doing(format!("creating {}", dst.display())))?;
    let n = std::io::copy(&mut from, &mut to).map_err(doing(format!(
        "copying {} to {}",
        src.display(),
        dst.display()
    )))?;
    if n > FILE_LIMIT {
        return Err(MergeError::TooLarge(src.into()));
    }
    Ok(())
}
