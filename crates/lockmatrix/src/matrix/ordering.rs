//! The two checks of memory ordering a run makes besides running the
//! suites, since no run under QEMU on an x86 host can show a missing
//! barrier: the static ordering footprint of every binary that ran
//! (objdump of each lock operation's code), the loom model check of
//! this tree's locks under the C11 memory model, and the Miri check of
//! the locks loom cannot see (other crates', std's, a `--crate`'s).

use crate::build::{Binary, Built};
use crate::config::Target;
use crate::footprint::{self, FootprintError, StaticJob};
use crate::observe::{Event, Observer};
use crate::results::{MiriRun, ModelRun, StaticOp, TargetResult};
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Instant;

/// Binaries disassembled at once (the machine's two cores).
const PARALLEL: usize = 2;

/// One target's binaries and where its suite runs are recorded.
pub struct Side<'a> {
    pub target: &'a Target,
    pub built: &'a Built,
    pub result: &'a mut TargetResult,
}

/// Fills in each suite run's `static_footprint` from the binary that ran
/// and the probes it printed. A binary shared by several targets (a CPU
/// variant that changes only the emulated CPU) is disassembled once.
pub fn static_footprints(sides: Vec<Side>, observer: &dyn Observer) {
    let mut jobs: Vec<StaticJob> = Vec::new();
    // sha256 -> index in `jobs`; (side, suite run) -> job or why none.
    let mut by_binary: BTreeMap<String, usize> = BTreeMap::new();
    let mut wanted: Vec<(usize, usize, Result<usize, FootprintError>)> = Vec::new();
    for (i, side) in sides.iter().enumerate() {
        let Ok(bins) = &side.built.binaries else {
            continue;
        };
        for (k, s) in side.result.suites.iter().enumerate() {
            let (Some(probes), Some(Binary { path, sha256, .. })) =
                (&s.probes, bins.get(s.suite.as_str()))
            else {
                continue;
            };
            let job = match by_binary.get(sha256) {
                Some(&j) => Ok(j),
                None => match StaticJob::for_target(side.target, path, probes) {
                    Ok(job) => {
                        jobs.push(job);
                        by_binary.insert(sha256.clone(), jobs.len() - 1);
                        Ok(jobs.len() - 1)
                    }
                    Err(e) => Err(e),
                },
            };
            wanted.push((i, k, job));
        }
    }
    if wanted.is_empty() {
        return;
    }
    observer.event(Event::Phase {
        name: "footprint",
        steps: jobs.len(),
    });
    let found = footprint::static_footprints(&jobs, PARALLEL);
    observer.event(Event::PhaseDone);
    let mut sides = sides;
    for (i, k, job) in wanted {
        let run = &mut sides[i].result.suites[k];
        match job.map(|j| &found[j]) {
            Ok(Ok(ops)) => {
                run.static_footprint = ops
                    .iter()
                    .map(|((_, unit, op), f)| StaticOp {
                        unit: unit.clone(),
                        op: op.clone(),
                        footprint: f.clone(),
                    })
                    .collect()
            }
            Ok(Err(e)) => run.footprint_error = Some(e.to_string()),
            Err(e) => run.footprint_error = Some(e.to_string()),
        }
    }
}

/// The loom model check of `suites`' locks in the tree at `root` (those
/// with models: spinlock and rwsem), with `features`; unchanged locks come
/// from the cache. `None` when no selected suite has models.
pub fn models(
    root: &Path,
    suites: &[&str],
    features: &[String],
    observer: &dyn Observer,
) -> Option<ModelRun> {
    let modelled: Vec<&str> = crate::model::SUITES
        .iter()
        .copied()
        .filter(|s| suites.contains(s))
        .collect();
    if modelled.is_empty() {
        return None;
    }
    let start = Instant::now();
    observer.event(Event::Phase {
        name: "model",
        steps: 1,
    });
    observer.event(Event::StepStarted("loom"));
    let checked = crate::model::host_toolchain(root).and_then(|tc| {
        let mut req = crate::model::Request::all(root, &tc);
        req.suites = &modelled;
        req.features = features;
        crate::model::check(&req)
    });
    let run = match checked {
        Ok(c) => {
            let mut unmodelled = c.unmodelled;
            unmodelled.extend(crate::model::unmodelled_elsewhere());
            ModelRun {
                results: c.results,
                unmodelled,
                error: None,
                build_secs: c.build_secs,
                secs: start.elapsed().as_secs_f64(),
            }
        }
        Err(e) => ModelRun {
            results: Vec::new(),
            unmodelled: Vec::new(),
            error: Some(e.to_string()),
            build_secs: None,
            secs: start.elapsed().as_secs_f64(),
        },
    };
    let outcome = match (&run.error, run.results.iter().filter(|r| !r.ok).count()) {
        (Some(e), _) => format!("not checked: {e}"),
        (None, 0) => format!("{} models ok in {:.1}s", run.results.len(), run.secs),
        (None, n) => format!("{n} of {} models violated", run.results.len()),
    };
    observer.event(Event::StepDone {
        step: "loom",
        outcome: &outcome,
    });
    observer.event(Event::PhaseDone);
    Some(run)
}

/// The Miri check of the locks of `suites` in the tree at `tree` that loom
/// cannot see (`side`: "head" or "base", for the progress line);
/// unchanged suites come from the cache. `None` when no selected suite has
/// Miri clients. Where Miri cannot be had, or a suite does not build
/// under it, the run records why (NOT CHECKED) and goes on.
pub fn miri(tree: &Path, suites: &[&str], side: &str, observer: &dyn Observer) -> Option<MiriRun> {
    let chosen: Vec<&str> = crate::miri::SUITES
        .iter()
        .copied()
        .filter(|s| suites.contains(s))
        .collect();
    if chosen.is_empty() {
        return None;
    }
    let start = Instant::now();
    let step = format!("miri ({side})");
    observer.event(Event::Phase {
        name: "miri",
        steps: 1,
    });
    observer.event(Event::StepStarted(&step));
    let mut run = MiriRun {
        results: Vec::new(),
        not_checked: None,
        toolchain: None,
        setup_secs: None,
        build_secs: None,
        secs: 0.0,
    };
    match crate::miri::find() {
        Err(why) => run.not_checked = Some(why.to_string()),
        Ok(miri) => {
            run.toolchain = Some(miri.version.clone());
            let req = crate::miri::Request {
                tree,
                suites: &chosen,
                use_cache: true,
                client_timeout: crate::miri::CLIENT_TIMEOUT,
            };
            match crate::miri::check(&req, &miri) {
                Ok(c) => {
                    run.results = c.results;
                    run.setup_secs = c.setup_secs;
                    run.build_secs = c.build_secs;
                }
                Err(e) => run.not_checked = Some(e.to_string()),
            }
        }
    }
    run.secs = start.elapsed().as_secs_f64();
    let raced = run.results.iter().filter(|r| r.raced()).count();
    let unchecked = run
        .results
        .iter()
        .filter(|r| r.not_checked.is_some())
        .count();
    let (n, secs) = (run.results.len(), run.secs);
    let outcome = match &run.not_checked {
        Some(why) => format!("NOT CHECKED: {why}"),
        None if raced > 0 => format!("{raced} of {n} clients raced in {secs:.1}s"),
        None if unchecked > 0 => format!("{unchecked} of {n} clients NOT CHECKED in {secs:.1}s"),
        None => format!("{n} clients clean in {secs:.1}s"),
    };
    observer.event(Event::StepDone {
        step: &step,
        outcome: &outcome,
    });
    observer.event(Event::PhaseDone);
    Some(run)
}
