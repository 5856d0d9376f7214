//! Builds and emulated runs as one pipeline in two lanes: builds
//! ([`build::PARALLEL`] at a time) and emulated runs ([`RUNS`] at a time),
//! each emulated target run as soon as its binaries exist. A suite under
//! QEMU runs for a fixed time (its measurement windows), whatever CPU it
//! gets, so its runs overlap the builds instead of waiting for the last
//! std build. Targets on real hardware are not run here: their timings
//! need the machine quiet (the caller runs them afterwards).

use crate::build::{self, Built, Job, TreeBuilder};
use crate::observe::{Event, Observer};
use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::Instant;

/// Emulated targets run at once, beside the builds.
pub const RUNS: usize = 2;

/// What a worker does next.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Task {
    /// Build job `j`: the base tree's first with `--against` (one target
    /// dir, one build at a time), then the head's.
    Build(usize),
    /// Run selected target `i` (an emulated one) on its job's binaries.
    Run(usize),
}

/// Which tasks a worker takes.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Lane {
    Builds,
    Runs,
}

/// The trees to build from: the head's and, with `--against`, the base's.
pub struct Trees<'a> {
    pub head: &'a TreeBuilder<'a>,
    pub base: Option<(&'a TreeBuilder<'a>, &'a str)>,
}

/// Each job's builds, once done.
pub struct Builds {
    pub head: Vec<Built>,
    pub base: Option<Vec<Built>>,
}

/// The two queues and what is known of the tasks' durations, and the
/// first error of a run (`E`, the caller's).
struct State<E> {
    builds_queued: VecDeque<usize>,
    runs_queued: VecDeque<usize>,
    /// Builds under way: the runs lane ends only when none is left.
    building: usize,
    /// Tasks of each kind in all: builds (jobs), runs (emulated targets).
    builds: usize,
    runs: usize,
    build_secs: Vec<f64>,
    run_secs: Vec<f64>,
    failed: Option<E>,
}

impl<E> State<E> {
    fn done(&self) -> usize {
        self.build_secs.len() + self.run_secs.len()
    }

    /// The next task for a worker of `lane`, or `None` when there is none
    /// yet (`Some(None)`: the lane is finished).
    fn next(&mut self, lane: Lane) -> Option<Option<Task>> {
        if self.failed.is_some() {
            return Some(None);
        }
        match lane {
            Lane::Builds => Some(self.builds_queued.pop_front().map(|j| {
                self.building += 1;
                Task::Build(j)
            })),
            Lane::Runs => match self.runs_queued.pop_front() {
                Some(i) => Some(Some(Task::Run(i))),
                None if self.building == 0 && self.builds_queued.is_empty() => Some(None),
                None => None,
            },
        }
    }

    /// Seconds left: each lane's tasks not done (under way or not yet
    /// queued included) times its mean duration so far, over the workers
    /// they can keep busy (one task left takes its whole mean, not half);
    /// the lanes run side by side, but while builds are left a run of
    /// the last one still follows it. `None` until each kind still to do
    /// has been timed once.
    fn left(&self) -> Option<f64> {
        let mean = |secs: &[f64]| secs.iter().sum::<f64>() / secs.len().max(1) as f64;
        let part = |secs: &[f64], all: usize, workers: usize| match (all - secs.len(), secs.len()) {
            (0, _) => Some(0.0),
            (_, 0) => None,
            (n, _) => Some(mean(secs) * n as f64 / workers.min(n) as f64),
        };
        let builds = part(&self.build_secs, self.builds, build::PARALLEL)?;
        let runs = part(&self.run_secs, self.runs, RUNS)?;
        let last_run = if builds > 0.0 && runs > 0.0 {
            builds + mean(&self.run_secs)
        } else {
            0.0
        };
        Some(builds.max(runs).max(last_run))
    }
}

/// Builds every job in [`build::order`] and runs each of `runs_after[j]`
/// (selected targets, emulated) once job `j` is built, with
/// `run(i, head, base)`. An error from `run` (writing run.json) stops the
/// pipeline and is returned; a failed build is recorded in its `Built`.
pub fn run<E: Send>(
    jobs: &[Job],
    trees: Trees,
    runs_after: &[Vec<usize>],
    observer: &dyn Observer,
    run: impl Fn(usize, &Built, Option<&Built>) -> Result<(), E> + Sync,
) -> Result<Builds, E> {
    build::prune(jobs);
    let head: Vec<OnceLock<Built>> = jobs.iter().map(|_| OnceLock::new()).collect();
    let base: Vec<OnceLock<Built>> = jobs.iter().map(|_| OnceLock::new()).collect();
    let job_of_run = |i: usize| runs_after.iter().position(|r| r.contains(&i));
    let state = Mutex::new(State {
        builds_queued: build::order(jobs).into(),
        runs_queued: VecDeque::new(),
        building: 0,
        builds: jobs.len(),
        runs: runs_after.iter().map(Vec::len).sum(),
        build_secs: Vec::new(),
        run_secs: Vec::new(),
        failed: None,
    });
    let wake = Condvar::new();
    let lock = || state.lock().unwrap_or_else(|e| e.into_inner());
    let work = |task: Task| -> Result<(), E> {
        match task {
            Task::Build(j) => {
                let name = &jobs[j].target.name;
                if let Some((tree, rev)) = trees.base {
                    let step = format!("build {name} (base {rev})");
                    let _ = base[j].set(build::build_step(tree, &jobs[j], &step, observer));
                }
                let step = format!("build {name}");
                let _ = head[j].set(build::build_step(trees.head, &jobs[j], &step, observer));
                Ok(())
            }
            Task::Run(i) => {
                let j = job_of_run(i).expect("a run follows its build");
                let b = trees.base.and_then(|_| base[j].get());
                run(i, head[j].get().expect("built"), b)
            }
        }
    };
    let worker = |lane: Lane| loop {
        let task = {
            let mut s = lock();
            loop {
                match s.next(lane) {
                    Some(Some(t)) => break t,
                    Some(None) => return,
                    None => s = wake.wait(s).unwrap_or_else(|e| e.into_inner()),
                }
            }
        };
        let start = Instant::now();
        let outcome = work(task);
        let mut s = lock();
        let secs = start.elapsed().as_secs_f64();
        match task {
            Task::Build(j) => {
                s.building -= 1;
                s.build_secs.push(secs);
                s.runs_queued.extend(&runs_after[j]);
            }
            Task::Run(_) => s.run_secs.push(secs),
        }
        if let Err(e) = outcome {
            s.failed.get_or_insert(e);
        }
        observer.event(Event::TimeLeft {
            done: s.done(),
            total: s.builds + s.runs,
            secs: s.left(),
        });
        wake.notify_all();
    };
    std::thread::scope(|scope| {
        let lanes = [(Lane::Builds, build::PARALLEL), (Lane::Runs, RUNS)];
        for (lane, workers) in lanes {
            for _ in 0..workers {
                scope.spawn(move || worker(lane));
            }
        }
    });
    let s = state.into_inner().unwrap_or_else(|e| e.into_inner());
    if let Some(e) = s.failed {
        return Err(e);
    }
    let all = |v: Vec<OnceLock<Built>>| -> Vec<Built> {
        v.into_iter()
            .map(|b| b.into_inner().expect("every job built"))
            .collect()
    };
    Ok(Builds {
        head: all(head),
        base: trees.base.map(|_| all(base)),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn state(builds: (usize, Vec<f64>), runs: (usize, Vec<f64>)) -> State<&'static str> {
        State {
            builds_queued: VecDeque::new(),
            runs_queued: VecDeque::new(),
            building: 0,
            builds: builds.0,
            runs: runs.0,
            build_secs: builds.1,
            run_secs: runs.1,
            failed: None,
        }
    }

    #[test]
    fn time_left_is_the_longer_lane() {
        // Two of four builds done (100 s, 60 s): 2 x 80 / 2 workers; one
        // of three runs (20 s): 2 x 20 / 2.
        let s = state((4, vec![100.0, 60.0]), (3, vec![20.0]));
        // The last build's run follows it: 80 + 20.
        assert_eq!(s.left(), Some(100.0));
        assert_eq!(s.done(), 3);
        // One build left alone takes its whole mean, and so does one run.
        assert_eq!(
            state((3, vec![100.0, 60.0]), (0, vec![])).left(),
            Some(80.0)
        );
        assert_eq!(
            state((3, vec![100.0, 60.0, 90.0]), (3, vec![20.0, 30.0])).left(),
            Some(25.0)
        );
        // Runs still to come, none timed yet: not known, even before
        // any is queued.
        assert_eq!(state((2, vec![100.0]), (1, vec![])).left(), None);
        assert_eq!(state((1, vec![9.0]), (0, vec![])).left(), Some(0.0));
    }

    #[test]
    fn the_runs_lane_waits_for_builds_and_ends_after_them() {
        let mut s = state((2, vec![]), (1, vec![]));
        s.builds_queued = [0, 1].into();
        assert_eq!(s.next(Lane::Runs), None, "builds to come: wait");
        assert_eq!(s.next(Lane::Builds), Some(Some(Task::Build(0))));
        assert_eq!(s.next(Lane::Builds), Some(Some(Task::Build(1))));
        assert_eq!(s.next(Lane::Builds), Some(None));
        assert_eq!(s.next(Lane::Runs), None, "builds under way: wait");
        s.building = 0;
        s.runs_queued.push_back(3);
        assert_eq!(s.next(Lane::Runs), Some(Some(Task::Run(3))));
        assert_eq!(s.next(Lane::Runs), Some(None));
        s.failed = Some("run.json not written");
        s.runs_queued.push_back(4);
        assert_eq!(s.next(Lane::Runs), Some(None), "a failure ends every lane");
    }
}
