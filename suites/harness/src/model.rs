//! The model runner of `--cfg loom` builds: a suite binary built so runs
//! its locks' loom models instead of its benchmarks, and prints one JSON
//! line per model on stdout for the tool to read:
//!
//! - `model`: `suite`, `lock`, `model` (its name), `covers` (what it
//!   checks), `ok`, `interleavings` (executions loom explored),
//!   `preemption_bound`, `secs`, `reached` (how many executions took each
//!   path the model claims to reach), and when not ok `failure` (loom's
//!   panic message, or the model's own assertion) and `trace` (the model's
//!   notes of the failing execution, then the message's lines);
//! - `unmodelled`: `suite`, `lock`, `why`: a lock of the suite that is
//!   deliberately not model-checked.
//!
//! `--lock NAME[,NAME..]` (repeatable) selects locks, `--list` prints the
//! modelled locks' names. Exit status 0 when every model passed, 1 when
//! one failed, 2 for bad flags. A model that fails does not stop the
//! others: loom's panic is caught and becomes the record. That needs the
//! unwinding panic strategy (the library builds the models so); built with
//! the workspace's release profile (`panic = "abort"`) the first failure
//! is printed from the panic hook and ends the run.
//!
//! Bookkeeping (interleaving counts, notes, paths reached) is std's, not
//! loom's: loom runs every thread of an execution on this one OS thread,
//! and none of it is part of what is checked.

use crate::json::{obj, J};
use std::cell::RefCell;
use std::process::ExitCode;
use std::sync::Once;
use std::time::Instant;

/// One model of one lock.
pub struct Model {
    pub lock: &'static str,
    /// e.g. "2 threads x 2 acquisitions".
    pub name: &'static str,
    /// What a pass shows, in a sentence.
    pub covers: &'static str,
    /// Loom's preemption bound: at most this many times per execution a
    /// running thread is switched out where it could have gone on.
    pub preemption_bound: usize,
    /// The model, run once per execution loom explores.
    pub body: fn(),
    /// Paths the model claims to reach (counted with [`reached`]): each
    /// must be taken in at least one execution, or the model fails as one
    /// that checks less than it says.
    pub reaches: &'static [&'static str],
}

/// A lock of the suite that is deliberately not model-checked, and why.
pub struct Unmodelled {
    pub lock: &'static str,
    pub why: &'static str,
}

/// What checking one model found.
#[derive(Debug)]
pub struct Outcome {
    pub ok: bool,
    pub interleavings: usize,
    pub secs: f64,
    pub failure: Option<String>,
    pub trace: Vec<String>,
    /// Executions that took each path of [`Model::reaches`].
    pub reached: Vec<(&'static str, usize)>,
}

/// The runner's state, one per OS thread: loom runs all the threads of a
/// model on the one that checks it, and tests check models in parallel.
#[derive(Default)]
struct State {
    checking: bool,
    interleavings: usize,
    /// What the current execution noted, and the paths it took.
    notes: Vec<(usize, &'static str)>,
    paths: Vec<&'static str>,
    /// The model's paths, and in how many executions each was taken.
    reached: Vec<(&'static str, usize)>,
    /// The first panic of the model being checked, with its location.
    panic: Option<String>,
}

thread_local! {
    static STATE: RefCell<State> = RefCell::new(State::default());
}

fn with<R>(f: impl FnOnce(&mut State) -> R) -> R {
    STATE.with_borrow_mut(f)
}

/// Notes that model thread `thread` did `what`, for the trace of a failing
/// execution (the last notes are the ones shown).
pub fn note(thread: usize, what: &'static str) {
    with(|s| s.notes.push((thread, what)));
}

/// Counts `path` as taken in this execution (once, however often called).
pub fn reached(path: &'static str) {
    with(|s| {
        if !s.paths.contains(&path) {
            s.paths.push(path);
        }
    });
}

/// Notes kept in a trace: the end of the failing execution.
const TRACE_NOTES: usize = 24;

/// Installs, once, a panic hook that keeps the first panic of a model being
/// checked instead of printing it; other panics print as usual.
fn hook() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        let default = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if !with(|s| s.checking) {
                return default(info);
            }
            let payload = info.payload();
            let msg = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "panic with a non-string payload".to_string());
            // Where a model's own assertion failed; loom's panics come from
            // its sources (absolute paths), and their message says where.
            let at = info
                .location()
                .filter(|l| !l.file().starts_with('/'))
                .map(|l| format!(" (at {}:{})", l.file(), l.line()))
                .unwrap_or_default();
            let msg = format!("{}{at}", msg.trim());
            let first = with(|s| s.panic.get_or_insert(msg).clone());
            if cfg!(panic = "abort") {
                // The process ends after this hook: say what failed first.
                eprintln!("model failed: {first}");
            }
        }));
    });
}

/// Checks `model` with loom: every execution within its preemption bound.
pub fn check(model: &Model) -> Outcome {
    hook();
    with(|s| {
        *s = State {
            reached: model.reaches.iter().map(|&p| (p, 0)).collect(),
            ..State::default()
        }
    });
    let mut builder = loom::model::Builder::new();
    // Everything explicit: loom's defaults read LOOM_* variables.
    builder.preemption_bound = Some(model.preemption_bound);
    // Long enough for a 3-thread execution with its spin-wait yields; a
    // spin that never ends still stops there.
    builder.max_branches = 10_000;
    builder.max_permutations = None;
    builder.max_duration = None;
    builder.checkpoint_file = None;
    builder.location = true;
    builder.log = std::env::var_os("LOOM_LOG").is_some();
    let body = model.body;
    let start = Instant::now();
    with(|s| s.checking = true);
    let result = std::panic::catch_unwind(|| {
        builder.check(move || {
            with(|s| {
                s.interleavings += 1;
                s.notes.clear();
                s.paths.clear();
            });
            body();
            with(|s| {
                let paths = std::mem::take(&mut s.paths);
                for (path, n) in s.reached.iter_mut() {
                    *n += usize::from(paths.contains(path));
                }
            });
        })
    });
    let secs = start.elapsed().as_secs_f64();
    let (interleavings, reached, panic, notes) = with(|s| {
        s.checking = false;
        (
            s.interleavings,
            std::mem::take(&mut s.reached),
            s.panic.take(),
            std::mem::take(&mut s.notes),
        )
    });
    let (failure, trace) = match result {
        Err(payload) => {
            let msg = panic
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "the model panicked".to_string());
            let trace = trace(&notes, &msg);
            (Some(msg), trace)
        }
        Ok(()) => match reached.iter().find(|(_, n)| *n == 0) {
            Some((path, _)) => (
                Some(format!(
                    "no explored execution reached the {path} path: the model checks less than it claims"
                )),
                Vec::new(),
            ),
            None => (None, Vec::new()),
        },
    };
    Outcome {
        ok: failure.is_none(),
        interleavings,
        secs,
        failure,
        trace,
        reached,
    }
}

/// The failing execution's last notes, then the lines of loom's message
/// (with locations of the accesses involved, where loom names them).
fn trace(notes: &[(usize, &str)], msg: &str) -> Vec<String> {
    let skip = notes.len().saturating_sub(TRACE_NOTES);
    let mut lines: Vec<String> = Vec::new();
    if skip > 0 {
        lines.push(format!("... {skip} earlier steps"));
    }
    lines.extend(
        notes[skip..]
            .iter()
            .map(|(thread, what)| format!("thread {thread}: {what}")),
    );
    lines.extend(
        msg.lines()
            .map(str::trim_end)
            .filter(|l| !l.trim().is_empty())
            .map(str::to_string),
    );
    lines
}

/// The `model` record of `outcome`.
pub fn record(suite: &str, model: &Model, outcome: &Outcome) -> J {
    let mut reached = obj([]);
    for (path, n) in &outcome.reached {
        reached.set(path, *n);
    }
    let mut r = obj([
        ("type", "model".into()),
        ("suite", suite.into()),
        ("lock", model.lock.into()),
        ("model", model.name.into()),
        ("covers", model.covers.into()),
        ("ok", outcome.ok.into()),
        ("interleavings", outcome.interleavings.into()),
        ("preemption_bound", model.preemption_bound.into()),
        ("secs", outcome.secs.into()),
        ("reached", reached),
    ]);
    if let Some(failure) = &outcome.failure {
        r.set("failure", failure.as_str());
        r.set("trace", outcome.trace.clone());
    }
    r
}

/// The suite binary's `main` under `--cfg loom`.
pub fn main(suite: &str, models: &[&Model], unmodelled: &[Unmodelled]) -> ExitCode {
    let args = crate::Args::from_env(&[]);
    let mut names: Vec<&str> = Vec::new();
    for m in models {
        if !names.contains(&m.lock) {
            names.push(m.lock);
        }
    }
    if args.list {
        names.iter().for_each(|n| println!("{n}"));
        return ExitCode::SUCCESS;
    }
    args.check_locks(&names);
    let mut failed = false;
    for u in unmodelled {
        let r = obj([
            ("type", "unmodelled".into()),
            ("suite", suite.into()),
            ("lock", u.lock.into()),
            ("why", u.why.into()),
        ]);
        println!("{r}");
    }
    for m in models.iter().filter(|m| args.wants_lock(m.lock)) {
        let outcome = check(m);
        failed |= !outcome.ok;
        println!("{}", record(suite, m, &outcome));
    }
    if failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}
