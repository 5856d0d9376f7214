//! What a long operation reports as it goes. The library never prints: the
//! xtask shows these events as a progress bar on a terminal and as plain
//! lines in CI logs.

use std::path::Path;

/// Something a build or a matrix run has to say.
#[derive(Debug, Clone, Copy)]
pub enum Event<'a> {
    /// A matrix run began: its id, size and directory.
    RunStarted {
        run_id: &'a str,
        targets: usize,
        suites: usize,
        dir: &'a Path,
    },
    /// The base revision of `--against` is about to be built from `tree`.
    BuildingBase { rev: &'a str, tree: &'a Path },
    /// A phase of `steps` steps begins ("build": one per target; "run":
    /// one per target's suite).
    Phase { name: &'static str, steps: usize },
    /// One step of the phase began, e.g. `aarch64` or `aarch64/atomic`.
    StepStarted(&'a str),
    /// One step ended, with a one-line outcome.
    StepDone { step: &'a str, outcome: &'a str },
    /// How far a long phase is: `done` of `total` tasks, and about how
    /// many seconds are left (`None` until it can be estimated).
    TimeLeft {
        done: usize,
        total: usize,
        secs: Option<f64>,
    },
    /// The phase is over.
    PhaseDone,
    /// Something that did not stop the run but the user should know.
    Warning(&'a str),
    /// What the run is doing or did, one line (the crate measured, a
    /// recount and its cost).
    Note(&'a str),
}

/// Receives the events, from several threads at once (two targets build
/// at a time).
pub trait Observer: Sync {
    fn event(&self, event: Event<'_>);
}

/// An observer that ignores everything.
pub struct Quiet;

impl Observer for Quiet {
    fn event(&self, _: Event<'_>) {}
}
