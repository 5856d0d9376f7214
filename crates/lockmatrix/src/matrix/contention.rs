//! The contention model's phase of a run: the tree's own locks on the
//! simulated 64-CPU machine, once per side (`--against` runs the base's
//! too, so the gate compares the two exactly). Unchanged suites come from
//! the cache; a model that cannot be built or run is recorded with why,
//! and the gate says so.

use crate::contention::{self, ContentionRun};
use crate::observe::{Event, Observer};
use std::path::Path;
use std::time::Instant;

/// The model of `suites`' locks in the tree at `tree` (`side`: "head" or
/// "base", for the progress line); `None` when no selected suite has
/// locks written here.
pub fn run(
    tree: &Path,
    suites: &[&str],
    side: &str,
    observer: &dyn Observer,
) -> Option<ContentionRun> {
    let chosen: Vec<&str> = contention::SUITES
        .iter()
        .copied()
        .filter(|s| suites.contains(s))
        .collect();
    if chosen.is_empty() {
        return None;
    }
    let start = Instant::now();
    let step = format!("contention ({side})");
    observer.event(Event::Phase {
        name: "contention",
        steps: 1,
    });
    observer.event(Event::StepStarted(&step));
    let run = crate::model::host_toolchain(tree)
        .map_err(|e| e.to_string())
        .and_then(|tc| contention::check(tree, &tc, &chosen).map_err(|e| crate::error::chain(&e)))
        .unwrap_or_else(|error| ContentionRun {
            error: Some(error),
            secs: start.elapsed().as_secs_f64(),
            ..ContentionRun::default()
        });
    let outcome = match (&run.error, run.failed().count()) {
        (Some(e), _) => format!("NOT RUN: {e}"),
        (None, 0) => format!(
            "{} runs in {:.1}s{}",
            run.records.len(),
            run.secs,
            if run.build_secs.is_none() {
                " (cached)"
            } else {
                ""
            }
        ),
        (None, n) => format!("{n} of {} runs FAILED", run.records.len()),
    };
    observer.event(Event::StepDone {
        step: &step,
        outcome: &outcome,
    });
    observer.event(Event::PhaseDone);
    Some(run)
}
