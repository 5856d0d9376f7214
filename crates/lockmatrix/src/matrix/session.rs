//! One matrix run, phase by phase: [`Session::start`] (what each target
//! needs, the run directory, `run.json` written at once without
//! `finished`, the QEMU plugin), [`Session::build_and_emulate`] (builds,
//! and each emulated target's runs as soon as its binaries exist),
//! [`Session::run_real`] (native and ssh targets, one at a time, on a
//! quiet machine), [`Session::ordering`] (static footprints, the loom
//! models, Miri), [`Session::finish`] (`run.json` complete). A run cut
//! short stays marked incomplete: `run.json` is rewritten after every
//! target.

use super::contention;
use super::options::Options;
use super::ordering;
use super::pipeline::{self, Builds};
use super::plan;
use super::prepare::Prepared;
use super::setup::{plugin, set_up, Targets, Wanted};
use super::target::Runs;
use crate::build::{self, Built, Tree};
use crate::config::{Config, RunnerKind};
use crate::host;
use crate::observe::{Event, Observer};
use crate::results::{self, Against, Run, TargetResult};
use crate::select::{Selected, Suite};
use crate::toolchain;
use std::path::{Path, PathBuf};

/// An error a matrix run cannot go on after (exit status 2): a target's
/// failure is recorded in the run, never one of these.
#[derive(Debug, thiserror::Error)]
pub enum SessionError {
    /// A CPU choice a selected target's tools do not know (bad input).
    #[error(transparent)]
    Choices(#[from] crate::cpu::BadChoices),
    /// The run directory could not be made.
    #[error(transparent)]
    Results(#[from] results::ResultsError),
    /// Its `logs/` (or the base's) could not be created.
    #[error(transparent)]
    Logs(std::io::Error),
    /// The trailers acknowledging ordering changes since `--against`
    /// could not be read.
    #[error(transparent)]
    Trailers(#[from] crate::acknowledge::TrailerError),
    /// A target's suites ran, but what they left could not be recorded.
    #[error(transparent)]
    Target(std::io::Error),
    /// `run.json` could not be written.
    #[error(transparent)]
    Write(#[from] results::WriteError),
}

/// `results::write`, its error a [`SessionError`].
fn write(dir: &Path, run: &Run) -> Result<(), SessionError> {
    Ok(results::write(dir, run)?)
}

/// Builds and runs `suites` on every `selected` target, as
/// [`prepare`](super::prepare)d: every phase in turn.
pub fn run(
    root: &Path,
    config: &Config,
    selected: &[Selected],
    suites: &[Suite],
    opts: &Options,
    prepared: &Prepared,
    observer: &dyn Observer,
) -> Result<Outcome, SessionError> {
    let what = What {
        root,
        config,
        selected,
        suites,
        opts,
        prepared,
    };
    let mut session = Session::start(what, observer)?;
    let builds = session.build_and_emulate()?;
    session.run_real(&builds)?;
    session.ordering(&builds);
    session.finish()
}

/// An observer for one part of a phase run beside others: the parts'
/// steps show in the one phase their caller opened, and their own phase
/// events are dropped (one bar, not three fighting over it).
struct Within<'a>(&'a dyn Observer);

impl Observer for Within<'_> {
    fn event(&self, event: Event<'_>) {
        if !matches!(event, Event::Phase { .. } | Event::PhaseDone) {
            self.0.event(event);
        }
    }
}

/// What a run is of: the checkout, its targets and suites, as asked and
/// prepared.
#[derive(Clone, Copy)]
pub struct What<'a> {
    pub root: &'a Path,
    pub config: &'a Config,
    pub selected: &'a [Selected],
    pub suites: &'a [Suite],
    pub opts: &'a Options,
    pub prepared: &'a Prepared,
}

/// A run in progress: both sides' records, its directory, and the build
/// jobs each target shares.
pub struct Session<'a> {
    what: What<'a>,
    observer: &'a dyn Observer,
    /// The tree the suites are built from: the checkout, a crate's copy of
    /// it, or (a recount) another commit's worktree.
    tree: &'a Path,
    place: Place<'a>,
    jobs: Vec<build::Job<'a>>,
    /// Each selected target's job, where it can be built.
    job_of: Vec<Option<usize>>,
    run: Run,
    /// With `--against`: the base revision's run, round for round.
    base: Option<Run>,
}

/// Where a run's targets run and are recorded.
struct Place<'a> {
    /// The suites it runs: those asked for that the tree has.
    names: Vec<&'a str>,
    dir: PathBuf,
    base_dir: PathBuf,
    plugin: Option<PathBuf>,
    /// The machine: with a target's own facts, the testbed its stored
    /// baselines must match.
    host: host::Host,
}

/// What running one target's suites needs of the run.
fn runs<'s>(what: &What<'s>, place: &'s Place, observer: &'s dyn Observer) -> Runs<'s> {
    Runs {
        config: what.config,
        opts: what.opts,
        prepared: what.prepared,
        plugin: place.plugin.as_deref(),
        dir: &place.dir,
        base_dir: &place.base_dir,
        names: &place.names,
        observer,
        host: &place.host,
    }
}

impl<'a> Session<'a> {
    /// Settles what each target needs and has, makes the run directory
    /// and writes `run.json` (without `finished`), builds the QEMU plugin
    /// where some target counts. An unknown CPU choice fails before the
    /// directory is made.
    pub fn start(what: What<'a>, observer: &'a dyn Observer) -> Result<Session<'a>, SessionError> {
        let What {
            root,
            opts,
            prepared,
            ..
        } = what;
        let need = toolchain::rust_version(&root.join("Cargo.toml"));
        let head_tree = prepared.subject.as_ref().map(|s| s.head_tree.as_path());
        let tree = opts.tree.as_deref().or(head_tree).unwrap_or(root);
        // Another commit's tree (a baseline's, counted again) runs the
        // suites it has: one added since is not there to build.
        let names: Vec<&str> = what
            .suites
            .iter()
            .map(|s| s.name)
            .filter(|n| opts.tree.is_none() || tree.join("suites").join(n).is_dir())
            .collect();
        let wanted = Wanted {
            need,
            only: &opts.toolchain,
            suites: &names,
        };
        let Targets {
            results,
            jobs,
            job_of,
        } = set_up(what.config, what.selected, wanted, prepared)?;
        let started = host::utc(host::now_secs());
        let (run_id, dir) = results::new_run_dir(&opts.results_dir, &started)?;
        std::fs::create_dir_all(dir.join("logs")).map_err(SessionError::Logs)?;
        observer.event(Event::RunStarted {
            run_id: &run_id,
            targets: what.selected.len(),
            suites: what.suites.len(),
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
            contention: None,
            subject: prepared.subject.as_ref().map(|s| s.head.clone()),
            against: against(what)?,
            targets: results,
        };
        write(&dir, &run)?;
        let plugin = plugin(root, &jobs, opts, &mut run, observer);
        let base = run.against.as_ref().map(|_| {
            let mut b = base_run_of(&run);
            b.subject = prepared.subject.as_ref().and_then(|s| s.base.clone());
            b
        });
        Ok(Session {
            place: Place {
                host: run.host.clone(),
                names,
                base_dir: dir.join("base"),
                dir,
                plugin,
            },
            what,
            observer,
            tree,
            jobs,
            job_of,
            run,
            base,
        })
    }

    /// The selected targets a job builds for, emulated and real.
    fn runnable(&self) -> (Vec<usize>, Vec<usize>) {
        (0..self.what.selected.len())
            .filter(|&i| self.job_of[i].is_some())
            .partition(|&i| self.what.selected[i].target.runner == RunnerKind::Qemu)
    }

    /// Builds every job (and with `--against` the base's), two at a time,
    /// and runs each emulated target as soon as its binaries exist: their
    /// counts and checks do not depend on the load, their times are
    /// advisory anyway.
    pub fn build_and_emulate(&mut self) -> Result<Builds, SessionError> {
        let (opts, selected) = (self.what.opts, self.what.selected);
        let base_dir = &self.place.base_dir;
        let against = opts
            .against
            .as_deref()
            .zip(self.what.prepared.base.as_ref());
        let head_tree = Tree {
            root: self.tree,
            logs: self.place.dir.join("logs"),
            bins: self.place.dir.join("bin"),
        };
        let base_tree = against.map(|(_, w)| Tree {
            root: &w.path,
            logs: base_dir.join("logs"),
            bins: base_dir.join("bin"),
        });
        if let Some((rev, w)) = against {
            std::fs::create_dir_all(base_dir.join("logs")).map_err(SessionError::Logs)?;
            self.observer
                .event(Event::BuildingBase { rev, tree: &w.path });
        }
        let head_builder = build::TreeBuilder::new(&head_tree, &self.place.names, &opts.features);
        let base_builder = base_tree
            .as_ref()
            .map(|t| build::TreeBuilder::new(t, &self.place.names, &opts.features));
        let (emulated, _) = self.runnable();
        let mut runs_after = vec![Vec::new(); self.jobs.len()];
        for &i in &emulated {
            runs_after[self.job_of[i].expect("runnable")].push(i);
        }
        let names = &self.place.names;
        let suites_of = |i: usize| crate::select::for_target(names, &selected[i].target).0;
        self.observer.event(Event::Phase {
            name: "build+run",
            steps: self.jobs.len() * (1 + usize::from(against.is_some()))
                + emulated.iter().map(|&i| suites_of(i).len()).sum::<usize>(),
        });
        let ctx = runs(&self.what, &self.place, self.observer);
        let sides = std::sync::Mutex::new(Both {
            head: &mut self.run,
            base: self.base.as_mut(),
        });
        let dir = &self.place.dir;
        let builds = pipeline::run(
            &self.jobs,
            pipeline::Trees {
                head: &head_builder,
                base: base_builder.as_ref().zip(against.map(|(rev, _)| rev)),
            },
            &runs_after,
            self.observer,
            |i, built, base_built| {
                // Each target's records are worked on outside the lock,
                // and put back with run.json rewritten.
                let (mut head, mut base) = {
                    let both = sides.lock().unwrap_or_else(|e| e.into_inner());
                    (
                        both.head.targets[i].clone(),
                        both.base.as_ref().map(|b| b.targets[i].clone()),
                    )
                };
                let ran = ctx.target(&selected[i], (built, base_built), &mut head, base.as_mut());
                let mut both = sides.lock().unwrap_or_else(|e| e.into_inner());
                both.head.targets[i] = head;
                if let (Some(b), Some(r)) = (base, both.base.as_mut()) {
                    r.targets[i] = b;
                }
                ran.map_err(SessionError::Target)?;
                write(dir, both.head)
            },
        )?;
        self.observer.event(Event::PhaseDone);
        Ok(builds)
    }

    /// Runs the native and ssh targets one at a time, after every build
    /// and emulated run: nothing else on the CPUs while their timings are
    /// taken.
    pub fn run_real(&mut self, builds: &Builds) -> Result<(), SessionError> {
        let (_, real) = self.runnable();
        if real.is_empty() {
            return Ok(());
        }
        self.observer.event(Event::Phase {
            name: "run",
            steps: real.len() * self.place.names.len(),
        });
        let ctx = runs(&self.what, &self.place, self.observer);
        for i in real {
            let j = self.job_of[i].expect("runnable");
            let base = self.base.as_mut().map(|b| &mut b.targets[i]);
            let b = builds.base.as_ref().map(|b| &b[j]);
            let s = &self.what.selected[i];
            ctx.target(s, (&builds.head[j], b), &mut self.run.targets[i], base)
                .map_err(SessionError::Target)?;
            write(&self.place.dir, &self.run)?;
        }
        self.observer.event(Event::PhaseDone);
        Ok(())
    }

    /// What the binaries say of memory ordering: each one's static
    /// footprint (both sides); the loom models of the head's locks; Miri
    /// on the locks loom cannot see (both sides).
    pub fn ordering(&mut self, builds: &Builds) {
        let (opts, prepared) = (self.what.opts, self.what.prepared);
        let (selected, job_of, observer) = (self.what.selected, &self.job_of, self.observer);
        let footprints = |results: &'_ mut [TargetResult], built: &'_ [Built]| {
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
        footprints(&mut self.run.targets, &builds.head);
        if let (Some(b), Some(br)) = (&builds.base, self.base.as_mut()) {
            footprints(&mut br.targets, b);
        }
        if opts.counts_only {
            return;
        }
        // Loom, Miri and the contention model, side by side: each is its
        // own processes and caches, none is timed, and a lock's change
        // makes Miri and the model cold together (on a 2-vCPU VM, 54 s and
        // 23 s one after the other). Their progress is one phase.
        let names = &self.place.names;
        let base = prepared.base.as_ref().map(|w| w.path.as_path());
        let paired = self.base.is_some();
        let (tree, root, own) = (self.tree, self.what.root, prepared.subject.is_none());
        let within = Within(observer);
        let sides = 1 + usize::from(paired && base.is_some());
        observer.event(Event::Phase {
            name: "verify",
            // Loom and the model where the locks are the suites' own; Miri
            // on each side.
            steps: sides + usize::from(own) * (1 + sides),
        });
        let (models, miri, contention) = std::thread::scope(|s| {
            // A crate's locks are not made of the suites' atomics: loom
            // cannot check them, the model cannot run them, and the
            // suites' own locks did not run.
            let models = s.spawn(|| {
                // The suites some target ran: alpha alone runs no lock of a model.
                let ran: Vec<&str> = (names.iter().copied())
                    .filter(|n| {
                        (selected.iter())
                            .any(|s| crate::select::for_target(&[n], &s.target).0.contains(n))
                    })
                    .collect();
                own.then(|| ordering::models(root, &ran, &opts.features, &within))
            });
            // The locks loom cannot see, on both sides: a race only in the
            // head is a regression, one in both is there in the base too.
            let miri = s.spawn(|| {
                let head = ordering::miri(tree, names, "head", &within);
                let base = base
                    .filter(|_| paired)
                    .map(|b| ordering::miri(b, names, "base", &within));
                (head, base)
            });
            // The model of both sides' own locks.
            let contention = s.spawn(|| {
                own.then(|| {
                    let head = contention::run(tree, names, "head", &within);
                    let base = base
                        .filter(|_| paired)
                        .map(|b| contention::run(b, names, "base", &within));
                    (head, base)
                })
            });
            let join = "a verification thread panicked";
            (
                models.join().expect(join),
                miri.join().expect(join),
                contention.join().expect(join),
            )
        });
        observer.event(Event::PhaseDone);
        if let Some(m) = models {
            self.run.models = m;
        }
        self.run.miri = miri.0;
        if let (Some(b), Some(m)) = (self.base.as_mut(), miri.1) {
            b.miri = m;
        }
        if let Some((head, base)) = contention {
            self.run.contention = head;
            if let (Some(b), Some(c)) = (self.base.as_mut(), base) {
                b.contention = c;
            }
        }
    }

    /// Marks the run finished with the lock crates it measured, and writes
    /// `run.json` (and the base's `base/run.json`) a last time.
    pub fn finish(mut self) -> Result<Outcome, SessionError> {
        let run = &mut self.run;
        run.finished = Some(host::utc(host::now_secs()));
        run.lock_crates = results::lock_crates(run, &self.tree.join("Cargo.lock"));
        // The suites' own spin or parking_lot may be pinned beside it.
        let pin = |r: &mut Run| {
            if let Some(s) = r.subject.clone() {
                r.lock_crates.insert(s.name.to_string(), s.version);
            }
        };
        pin(run);
        if let (Some(base), Some(w)) = (&mut self.base, &self.what.prepared.base) {
            base.finished = run.finished.clone();
            base.lock_crates = results::lock_crates(base, &w.path.join("Cargo.lock"));
            pin(base);
            write(&self.place.base_dir, base)?;
        }
        write(&self.place.dir, run)?;
        Ok(Outcome {
            run: self.run,
            dir: self.place.dir,
            base: self.base,
        })
    }
}

/// Both sides' runs, shared by the pipeline's workers.
struct Both<'r> {
    head: &'r mut Run,
    base: Option<&'r mut Run>,
}

/// With `--against`: the base revision, its commit and the trailers that
/// acknowledge ordering changes since it (a crate's own history for two
/// versions of a crate), and the pairs planned.
fn against(what: What) -> Result<Option<Against>, SessionError> {
    let (opts, prepared) = (what.opts, what.prepared);
    let (Some(rev), Some(w)) = (&opts.against, &prepared.base) else {
        return Ok(None);
    };
    let acknowledged = match (&prepared.subject, &w.commit) {
        (Some(s), _) => s.acknowledged.clone(),
        (None, Some(c)) => crate::acknowledge::in_range(what.root, c, "HEAD")?,
        (None, None) => Vec::new(),
    };
    Ok(Some(Against {
        rev: rev.clone(),
        commit: w.commit.clone(),
        acknowledged,
        pairs: Some(plan::rounds(opts.profile, opts.rounds, true)),
    }))
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

/// A matrix run, and with `--against` the base revision's run made in the
/// same session, round for round.
pub struct Outcome {
    pub run: Run,
    pub dir: PathBuf,
    pub base: Option<Run>,
}
