//! The stored baselines' commits counted again with this run's toolchain,
//! where another compiler (or emulator release, or CPU choice) counted
//! them: into `<run>/recount/`, where the gate takes their counts and
//! footprints for the stored ones. A baseline file is data: only a commit
//! of this history is built.

use super::check::Job;
use super::error::JobError;
use crate::gate::load::{in_history, stored, InHistory};
use crate::matrix::{self, Prepared};
use crate::observe::{Event, Observer};
use crate::results::{Run, TargetResult};
use crate::select::Selected;
use std::path::Path;

/// What a recount needs of the job it is for.
pub(super) struct Recount<'a> {
    pub job: &'a Job,
    pub cache: &'a Path,
}

impl Recount<'_> {
    /// Counts again every commit whose stored counts do not compare with
    /// `run`'s. A commit this clone lacks, or cannot check out, is said
    /// and its counts stay incomparable; under `--require-gate` it is bad
    /// input.
    pub fn baselines(
        &self,
        run: &Run,
        dir: &Path,
        observer: &dyn Observer,
    ) -> Result<(), JobError> {
        let (job, r) = (self.job, &self.job.request);
        let reference = stored(run, &r.baselines)?;
        for (commit, targets) in reference.to_recount(run) {
            let short = commit.short();
            if let InHistory::NotHere(why) = in_history(&r.root, &reference, &commit, "HEAD")? {
                observer.event(Event::Warning(&why));
                if r.require_gate {
                    return Err(JobError::NotInClone {
                        short: short.to_string(),
                    });
                }
                continue;
            }
            let worktree = match matrix::worktree::check_out(&r.root, &commit) {
                Ok(w) => w,
                Err(error) if r.require_gate => {
                    return Err(JobError::CannotRebuild {
                        short: short.to_string(),
                        error,
                    })
                }
                Err(e) => {
                    let e = crate::error::chain(&e);
                    observer.event(Event::Note(&format!("counts: the baselines' commit {short} cannot be rebuilt here, so their counts stay incomparable: {e}")));
                    continue;
                }
            };
            observer.event(Event::Note(&format!(
                "counts: the baselines were counted by another compiler: counting their commit {short} again with this one on {} targets",
                targets.len()
            )));
            let subset: Vec<Selected> = (job.selected.iter())
                .filter(|s| targets.contains(&s.target.name))
                .cloned()
                .collect();
            let opts = job.opts.recount(worktree.path, dir.join("recount"));
            let prepared = Prepared {
                base: None,
                cache: self.cache.to_path_buf(),
                subject: None,
            };
            let started = std::time::Instant::now();
            let recount = matrix::run(
                &r.root,
                &job.config,
                &subset,
                &job.suites,
                &opts,
                &prepared,
                observer,
            )?;
            // Where its time went: the builds (of another commit's
            // sources; from the store when built before) and the counted
            // runs.
            let sum = |f: fn(&TargetResult) -> Option<f64>| -> f64 {
                recount.run.targets.iter().filter_map(f).sum()
            };
            observer.event(Event::Note(&format!(
                "counts: the recount of {short} took {:.0}s ({:.0}s of builds, {:.0}s of counted runs, two at a time)",
                started.elapsed().as_secs_f64(),
                sum(|t| t.build_secs),
                sum(|t| t.run_secs)
            )));
        }
        Ok(())
    }
}
