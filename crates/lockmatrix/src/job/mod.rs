//! `cargo xtask matrix` as one value, entered once: [`Job::check`] reads
//! every flag and file before anything is installed or built;
//! [`Job::run`] sets up (packages and Miri through the caller's
//! [`SetUp`], the worktrees and crate trees), runs the matrix
//! ([`crate::matrix`]: builds and emulated runs, real hardware, ordering),
//! counts the baselines' commits again where another compiler counted
//! them ([`recount`]), and gates ([`crate::gate`]). What it has to say on
//! the way goes to the observer; its answer is a [`Finished`].

mod check;
mod error;
mod recount;

pub use check::{Job, Request};
pub use error::{JobError, SetUpError};

use crate::config::Config;
use crate::gate::{Gated, Gating};
use crate::matrix::{self, Prepared};
use crate::observe::{Event, Observer};
use crate::results::{Run, Status};
use crate::select::Selected;
use crate::toolchain;
use std::path::PathBuf;

/// What the library does not do itself: installing (Debian packages with
/// apt-get, rustup's Miri). `cargo xtask` does it, or `--no-install`
/// skips it.
pub trait SetUp {
    fn packages(&self, wanted: &[String]) -> Result<(), SetUpError>;
    /// Rustup's nightly with Miri, where a selected suite has Miri
    /// clients; where it cannot be had the run says NOT CHECKED.
    fn miri(&self);
}

/// How a run ended.
pub struct Finished {
    pub run: Run,
    pub dir: PathBuf,
    pub base: Option<Run>,
    pub end: End,
}

/// What a finished run comes to.
pub enum End {
    /// No selected target ran (every one not run): why. A matrix that
    /// tested nothing must not pass (bad input), unless a crate under test
    /// builds for none of them (`answered`): that answers the question.
    NothingRan { why: String, answered: bool },
    /// Gated: compared with its reference, or with nothing (`--crate`
    /// without `--against-crate`), where what needs no reference (checks,
    /// models, races) still decides.
    Gated(Box<Gated>),
}

impl Finished {
    /// Every selected target that ran is ok (not failed).
    pub fn targets_ok(&self) -> bool {
        !(self.run.targets.iter()).any(|t| matches!(t.status, Status::Failed(_)))
    }
}

impl Job {
    pub fn config(&self) -> &Config {
        &self.config
    }

    pub fn selected(&self) -> &[Selected] {
        &self.selected
    }

    /// The suites' `rust-version`.
    pub fn need(&self) -> toolchain::Version {
        self.need
    }

    /// Sets up, runs the matrix, recounts and gates.
    pub fn run(mut self, setup: &dyn SetUp, observer: &dyn Observer) -> Result<Finished, JobError> {
        let prepared = self.set_up(setup, observer)?;
        let root = self.request.root.clone();
        let outcome = matrix::run(
            &root,
            &self.config,
            &self.selected,
            &self.suites,
            &self.opts,
            &prepared,
            observer,
        )?;
        if outcome.base.is_none() && !self.opts.no_insns && prepared.subject.is_none() {
            let to = recount::Recount {
                job: &self,
                cache: &prepared.cache,
            };
            to.baselines(&outcome.run, &outcome.dir, observer)?;
        }
        self.finish(outcome)
    }

    /// The worktrees and crate trees, what they say, and what is to be
    /// installed.
    fn set_up(&mut self, setup: &dyn SetUp, observer: &dyn Observer) -> Result<Prepared, JobError> {
        let prepared = matrix::prepare(&self.request.root, &self.opts)?;
        // A native target of another architecture: one line, not a failure.
        if let Some(line) = crate::select::left_out(&self.config, self.request.targets.as_deref()) {
            observer.event(Event::Note(&line));
        }
        if let Some(s) = &prepared.subject {
            self.suites = check::crate_suites(
                &s.head,
                s.base.as_ref(),
                std::mem::take(&mut self.suites),
                self.request.suites.is_some(),
            )?;
            let versus = s
                .base
                .as_ref()
                .map_or(String::new(), |b| format!(" against {}", b.label()));
            let locks: Vec<&str> = (s.head.mutexes.iter().chain(&s.head.rwlocks))
                .map(|n| n.as_str())
                .collect();
            observer.event(Event::Note(&format!(
                "crate: {}{versus}: {} locks ({}), lock_api {}, {}",
                s.head.label(),
                locks.len(),
                locks.join(", "),
                s.head.lock_api,
                s.head.source
            )));
            for note in &s.notes {
                observer.event(Event::Note(note));
            }
        }
        if let (Some(base), None) = (&prepared.base, &prepared.subject) {
            if crate::host::dirty(&self.request.root) {
                observer.event(Event::Note(&format!(
                    "note: the working tree has uncommitted changes: the head side is this tree as it is, not a commit; run.json records it (lockmatrix_dirty), and --against {} is compared with it",
                    crate::commit::shown(base.commit.as_ref())
                )));
            }
        }
        for old in prepared.removed_worktrees() {
            observer.event(Event::Note(&format!(
                "removed the old --against worktree {}",
                old.display()
            )));
        }
        if !self.request.no_install {
            setup
                .packages(&matrix::packages_needed(
                    &self.selected,
                    self.need,
                    &self.opts.toolchain,
                ))
                .map_err(JobError::Packages)?;
            if (self.suites.iter()).any(|s| crate::miri::SUITES.contains(&s.name)) {
                setup.miri();
            }
        }
        Ok(prepared)
    }

    /// What the run comes to: nothing ran, measured, or gated.
    fn finish(&self, outcome: matrix::Outcome) -> Result<Finished, JobError> {
        let matrix::Outcome { run, dir, base } = outcome;
        let end = if let Some(why) = nothing_ran(&run) {
            // A crate version that builds for none of the selected targets
            // (one target per CI job, say) has been answered, not refused.
            let answered = cannot_build_anywhere(&run, base.as_ref());
            End::NothingRan { why, answered }
        } else {
            let g = Gating {
                root: &self.request.root,
                run: &run,
                dir: &dir,
                base: base.as_ref(),
                baselines: self
                    .request
                    .baselines_given
                    .then_some(self.request.baselines.as_path()),
            };
            End::Gated(Box::new(crate::gate::gate(&g, &self.request.gate)?))
        };
        Ok(Finished {
            run,
            dir,
            base,
            end,
        })
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
