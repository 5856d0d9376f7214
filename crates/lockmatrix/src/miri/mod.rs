//! The Miri check: the locks loom cannot see (other crates' locks through
//! the suites' `lock_api` adapters, std's `Mutex` and `RwLock`, every lock
//! of a `--crate`) run unmodified under Miri, on the host.
//!
//! Loom checks only locks built from its own atomics, the ones written
//! here. Miri interprets any Rust code under the Rust memory model: its
//! data-race detector reports two accesses with no happens-before between
//! them, and its store-buffer emulation lets loads return stale values a
//! weak machine could. Each suite run under Miri (`cargo miri run`) runs
//! one client of one lock (`suites/<suite>/src/miri.rs`): threads that
//! read and write a plain counter under the lock, yielding inside, so a
//! lock that orders too little is a race on the counter. A client runs on
//! a number of seeds (Miri's scheduling and weak-memory choices) with
//! `-Zmiri-many-seeds`; a seed that fails is the seed to reproduce with.
//! Silence is not proof: a pass says no seed tried found a race.
//!
//! [`check`] runs every client of every lock of the suites asked for, each
//! within [`Request::client_timeout`], and keeps each suite's results by
//! the hash of what they were built from (`cache.rs`).
//!
//! - `toolchain.rs`: rustup's nightly with Miri, or what to install;
//! - `run.rs`: `cargo miri setup`, the listing, one client's seeds;
//! - `record.rs`: the listing and Miri's report, read into types;
//! - `cache.rs`: results by the hash of a suite's sources.
//!
//! No terminal output: progress and results are the caller's to show.

mod cache;
mod error;
mod record;
mod run;
mod toolchain;

pub use error::MiriError;
pub use record::{Failure, MiriResult};
pub use run::{miriflags, seed_miriflags};
pub use toolchain::{find, Miri, Unavailable, INSTALL, TOOLCHAIN};

use std::path::Path;
use std::time::Duration;

/// The suites with Miri clients.
pub const SUITES: &[&str] = &["spinlock", "rwsem"];

/// The longest one client may run on its seeds, by default: a client that
/// spins for ever under Miri (a lock that never lets go) must not hold the
/// run, nor take the time of the lock's other clients. A client of a
/// shipped lock takes 1-7 s on its 8-16 seeds on a 2-vCPU VM, a few times
/// that when the machine is loaded (`docs/ordering.md`).
pub const CLIENT_TIMEOUT: Duration = Duration::from_secs(60);

/// What [`check`] checks.
pub struct Request<'a> {
    /// The tree whose suites are run (the checkout, a worktree, a
    /// `--crate` tree).
    pub tree: &'a Path,
    /// Some of [`SUITES`].
    pub suites: &'a [&'a str],
    /// Take unchanged suites' results from the cache, and keep new ones.
    pub use_cache: bool,
    /// Longest one client may run on its seeds.
    pub client_timeout: Duration,
}

/// What [`check`] found.
#[derive(Debug)]
pub struct Checked {
    /// Every client of every lock, suite by suite, lock by lock.
    pub results: Vec<MiriResult>,
    /// Seconds `cargo miri setup` took (`None`: every result from the
    /// cache); it builds Miri's std the first time, then finds it built.
    pub setup_secs: Option<f64>,
    /// Seconds building the suites under Miri and listing their clients.
    pub build_secs: Option<f64>,
}

/// Checks the suites' locks with `miri`: from the cache where nothing
/// they are built from changed, else run now.
pub fn check(req: &Request, miri: &Miri) -> Result<Checked, MiriError> {
    let mut checked = Checked {
        results: Vec::new(),
        setup_secs: None,
        build_secs: None,
    };
    let mut held = None;
    for &suite in req.suites {
        let key = cache::key(req.tree, suite, &miri.version)?;
        if let Some(entry) = req.use_cache.then(|| cache::load(&key)).flatten() {
            checked.results.extend(entry.results);
            continue;
        }
        if held.is_none() {
            held = Some(run::hold()?);
            checked.setup_secs = Some(run::setup(miri)?);
        }
        let held = held.as_ref().expect("held");
        let (listed, secs) = run::list(miri, held, req.tree, suite)?;
        *checked.build_secs.get_or_insert(0.0) += secs;
        let mut results = Vec::new();
        for c in &listed {
            results.push(client(miri, held, req.tree, c, req.client_timeout)?);
        }
        if req.use_cache && results.iter().all(|r| r.not_checked.is_none()) {
            cache::store(&key, &cache::Entry::new(suite, results.clone()))?;
        }
        checked.results.extend(results);
    }
    Ok(checked)
}

/// One client of one lock, for at most `timeout`.
fn client(
    miri: &Miri,
    held: &run::Held,
    tree: &Path,
    c: &record::Listed,
    timeout: Duration,
) -> Result<MiriResult, MiriError> {
    let mut result = MiriResult {
        suite: c.suite.clone(),
        lock: c.lock.clone(),
        krate: c.krate.clone(),
        client: c.client.clone(),
        covers: c.covers.clone(),
        seeds: c.seeds,
        preemption_rate: c.preemption_rate,
        failing_seeds: Vec::new(),
        first: None,
        not_checked: None,
        secs: 0.0,
        cached: false,
    };
    let ran = run::client(miri, held, tree, c, timeout)?;
    result.secs = ran.secs;
    let seeds = ran.seeds;
    let unsupported = seeds.errors.iter().find(|e| record::unsupported(e));
    let only_unsupported = seeds.errors.iter().all(|e| record::unsupported(e));
    let mut cannot_run = None;
    if let (Some(u), true, Some(&lowest)) = (unsupported, only_unsupported, seeds.failing.first()) {
        // Every error printed says Miri could not run the code: no seed
        // found anything about the lock.
        cannot_run = Some(format!("Miri cannot run it (seed {lowest}): {u}"));
    } else if !seeds.failing.is_empty() {
        let start = std::time::Instant::now();
        let (first, unsupported_seeds) =
            first_failure(miri, held, tree, c, &seeds.failing, timeout)?;
        result.secs += start.elapsed().as_secs_f64();
        result.failing_seeds = seeds.failing.clone();
        result
            .failing_seeds
            .retain(|s| !unsupported_seeds.iter().any(|u| u.seed == *s));
        result.first = first;
        if result.failing_seeds.is_empty() {
            cannot_run = unsupported_seeds
                .first()
                .map(|u| format!("Miri cannot run it (seed {}): {}", u.seed, u.error));
        }
    }
    result.not_checked = match (ran.timed_out, cannot_run, seeds.other) {
        (true, _, _) => Some(format!(
            "timed out: {} s were up before its {} seeds were",
            timeout.as_secs(),
            c.seeds
        )),
        (false, Some(why), _) => Some(why),
        (false, None, Some(other)) => Some(format!("Miri failed: {other}")),
        (false, None, None) => None,
    };
    Ok(result)
}

/// Failing seeds run alone, lowest first, until one says what it failed
/// with ([`SOLO_TRIES`] at most): the client's first failure, in that
/// seed's own words, the same on every run; and the seeds that turned out
/// to be Miri's own limits (an unsupported operation), not the lock's.
fn first_failure(
    miri: &Miri,
    held: &run::Held,
    tree: &Path,
    c: &record::Listed,
    failing: &[u32],
    timeout: Duration,
) -> Result<(Option<Failure>, Vec<Failure>), MiriError> {
    let mut unexplained = None;
    let mut unsupported = Vec::new();
    for &seed in failing.iter().take(SOLO_TRIES) {
        let Some(solo) = run::seed(miri, held, tree, c, seed, timeout)? else {
            continue;
        };
        if record::unsupported(&solo.failure.error) {
            unsupported.push(solo.failure);
        } else if solo.known {
            return Ok((Some(solo.failure), unsupported));
        } else {
            unexplained.get_or_insert(solo.failure);
        }
    }
    // No seed tried said why: the lowest stands for the client, plainly
    // unexplained, never another seed's words.
    let first = unexplained.or_else(|| {
        let lowest = *failing
            .iter()
            .find(|s| !unsupported.iter().any(|u| u.seed == **s))?;
        Some(Failure {
            seed: lowest,
            error: "error: the seed failed under Miri, and alone it did not say why".into(),
            at: None,
        })
    });
    Ok((first, unsupported))
}

/// Failing seeds run alone for their own error, at most: each costs a
/// second or so, and the first usually says it.
const SOLO_TRIES: usize = 3;
