//! The spinlock suite: seed 001 (qspinlock vs ticket lock: cost of
//! lock+unlock by thread count) and seed 003 (the paravirt spinlock stress
//! driver's S1 and S2 scenarios), over every lock in `locks/`.
//!
//! Benchmarks (case `{lock, threads}` for all):
//! - `lock_unlock`: every thread locks and unlocks for a fixed duration,
//!   timing batches of acquisitions. Metrics per round: `ticks_per_acquire`
//!   (timer unit, lower), `acquisitions_min`, `acquisitions_avg`,
//!   `acquisitions_max` (ops, higher), `fairness_cv` (ratio, lower).
//!   Thread counts: seed 001's ladder up to the CPU count.
//! - `stress_s1`: each thread does `loop_count` lock(); counter += 1;
//!   unlock(). Metric per round (a "run" of seed 003): `total_ticks`.
//! - `stress_s2`: each thread does `loop_count` do_somework(); lock();
//!   variable work; unlock(). Metric: `total_ticks`.
//!   Both stress benchmarks use the largest thread count, and also print
//!   `acquisitions_min`/`_avg`/`_max` and `fairness_cv` (`ops`, `ratio`)
//!   of the window in which every thread ran (`workload::STRESS_MARKS`).
//!
//! `fairness_cv` is lockhammer's `lasom`: the per-thread acquisitions'
//! standard deviation over their mean. Every cell of a lock that counts
//! lock events (`events.rs`) also prints each as a rate per acquisition:
//! tas and ttas `failed_swaps_per_acquire`; ticket `waits_per_acquire` and
//! `waiters_ahead_per_acquire`; mcs `queued_per_acquire` and
//! `successor_waits_per_acquire`; qspinlock `pending_per_acquire`,
//! `queued_per_acquire` and `handed_on_per_acquire`.
//!
//! Checks for every cell, over all its rounds: `mutual_exclusion`,
//! `counter_total` and `lock_events` (see `check.rs`).
//!
//! Built with `--cfg loom`, the binary runs the locks' loom models instead
//! (`model/`); the benchmarks still compile then, but do not run. Run
//! under Miri, it runs the Miri clients of the locks loom cannot see
//! (`miri.rs`).

// Under loom, `main` is the model runner's and the benchmarks are unused.
#![cfg_attr(loom, allow(dead_code, unused_imports))]
// Under the contention model, `main` is `sim.rs`'s and the benchmarks are
// unused.
#![cfg_attr(lockmatrix_sim, allow(dead_code, unused_imports))]

mod check;
mod events;
mod locks;
#[cfg(miri)]
mod miri;
#[cfg(loom)]
#[warn(dead_code, unused_imports)]
mod model;
#[cfg(not(loom))]
mod probes;
#[cfg(lockmatrix_sim)]
mod sim;
mod sync;
mod workload;

use check::CellChecks;
use harness::fairness::Spread;
use harness::json::{obj, J};
use harness::out::{Better, Metric};
use harness::{timer, Args, Out};
use locks::{LockVisitor, RawLock};
use std::process::ExitCode;
use std::time::Duration;
use workload::Scenario;

const BENCHES: &[&str] = &["lock_unlock", "stress_s1", "stress_s2"];

/// Quick and full values of the knobs (`--rounds`, `--duration-ms` and
/// `--iters` override them).
const LOCK_UNLOCK_ROUNDS: (usize, usize) = (3, 10);
/// Quick: 30 ms, measured against 60 in A/A pull-request jobs on a 2-vCPU
/// VM: the suite's phase 0.66-0.82 of the time, no cell's threshold
/// coarser (docs/gate.md, "spinlock's window halved").
const LOCK_UNLOCK_MS: (u64, u64) = (30, 1000);
const STRESS_ROUNDS: (usize, usize) = (3, 10);
/// Seed 003's loop_count is 4,000,000; quick keeps one emulated run short.
const S1_LOOPS: (u64, u64) = (50_000, 4_000_000);
const S2_LOOPS: (u64, u64) = (10_000, 4_000_000);

/// One lock_unlock round's window, as measured and as recorded.
fn lock_unlock_window(args: &Args) -> Duration {
    Duration::from_millis(args.duration_ms(LOCK_UNLOCK_MS.0, LOCK_UNLOCK_MS.1))
}

fn variants(args: &Args) -> J {
    obj([
        (
            "lock_unlock_window_ms",
            (lock_unlock_window(args).as_millis() as u64).into(),
        ),
        ("locks", locks::names().to_vec().into()),
        ("lock_crates", lock_crates()),
        ("broken_lock_built", cfg!(feature = "broken-lock").into()),
        ("lock_unlock_batch", workload::BATCH.into()),
        ("spin_yield_threshold", locks::SPIN_THRESHOLD.into()),
        (
            "ttas_backoff",
            format!(
                "{}..{} relax",
                locks::ttas::MIN_BACKOFF,
                locks::ttas::MAX_BACKOFF
            )
            .into(),
        ),
        (
            "qspinlock_word_ops",
            "Linux's: byte store-release unlock, byte set_locked and clear_pending, \
             16-bit clear_pending_set_locked store and xchg_tail swap (mixed-size views)"
                .into(),
        ),
        ("qspinlock_tail_slots", locks::qspinlock::MAX_THREADS.into()),
        ("s2_outside_units", workload::S2_OUTSIDE_UNITS.into()),
        ("s2_inside_max_units", workload::S2_INSIDE_MAX_UNITS.into()),
        ("stress_marks", workload::STRESS_MARKS.into()),
    ])
}

/// Each lock's crate, `{"parking_lot_mutex": "parking_lot", ...}`: the
/// xtask adds the version from Cargo.lock.
fn lock_crates() -> J {
    let mut crates = obj([]);
    for name in locks::names() {
        crates.set(name, locks::crate_of(name));
    }
    crates
}

fn case(lock: &str, threads: usize) -> J {
    obj([("lock", lock.into()), ("threads", threads.into())])
}

fn emit_checks(out: &Out, bench: &str, case: &J, checks: &CellChecks) {
    let (ok, details) = checks.mutual_exclusion();
    out.check(bench, case, "mutual_exclusion", ok, details);
    let (ok, details) = checks.counter_total();
    out.check(bench, case, "counter_total", ok, details);
    let (ok, details) = checks.lock_events();
    out.check(bench, case, "lock_events", ok, details);
}

struct LockUnlock<'a> {
    out: &'a Out,
    args: &'a Args,
}

impl LockVisitor for LockUnlock<'_> {
    type Output = ();

    fn visit<L: RawLock>(self) {
        let (out, args) = (self.out, self.args);
        let bench = "lock_unlock";
        let rounds = args.rounds(LOCK_UNLOCK_ROUNDS.0, LOCK_UNLOCK_ROUNDS.1);
        let duration = lock_unlock_window(args);
        for threads in args.thread_counts() {
            let case = case(L::NAME, threads);
            if !args.wants_case(bench, &case) {
                continue;
            }
            let mut checks = CellChecks::default();
            for round in 0..rounds {
                let run = workload::lock_unlock::<L>(threads, duration);
                let (min, avg, max, cv) = run.fairness();
                let sample = |metric, unit, better, value| {
                    out.sample(
                        bench,
                        &case,
                        &Metric::new(metric, unit, better),
                        round,
                        value,
                    )
                };
                sample(
                    "ticks_per_acquire",
                    timer::UNIT,
                    Better::Lower,
                    run.ticks_per_acquire(),
                );
                sample("acquisitions_min", "ops", Better::Higher, min as f64);
                sample("acquisitions_avg", "ops", Better::Higher, avg);
                sample("acquisitions_max", "ops", Better::Higher, max as f64);
                sample("fairness_cv", "ratio", Better::Lower, cv);
                let acquisitions = run.verdict.acquisitions;
                events::emit::<L>(out, (bench, &case), round, &run.events(), acquisitions);
                checks.add(round, &run.verdict);
            }
            if threads == 1 {
                // The uncontended fast path, counted exactly under QEMU.
                let (lock, node) = (L::new(), L::Node::default());
                harness::measure::insns_sample(out, bench, &case, |_| {
                    // SAFETY: one thread, one node, lock then unlock.
                    unsafe {
                        lock.lock(&node);
                        lock.unlock(&node);
                    }
                });
            }
            emit_checks(out, bench, &case, &checks);
        }
    }
}

struct Stress<'a> {
    out: &'a Out,
    args: &'a Args,
    bench: &'static str,
}

impl LockVisitor for Stress<'_> {
    type Output = ();

    fn visit<L: RawLock>(self) {
        let (out, args) = (self.out, self.args);
        let (scenario, loops) = match self.bench {
            "stress_s1" => (Scenario::S1, S1_LOOPS),
            _ => (Scenario::S2 { seed: args.seed }, S2_LOOPS),
        };
        let loops = args.iters(loops.0, loops.1);
        let rounds = args.rounds(STRESS_ROUNDS.0, STRESS_ROUNDS.1);
        let threads = args.thread_counts().into_iter().max().unwrap_or(1);
        let case = case(L::NAME, threads);
        if !args.wants_case(self.bench, &case) {
            return;
        }
        let mut checks = CellChecks::default();
        for round in 0..rounds {
            let run = workload::stress::<L>(threads, loops, scenario);
            let metric = Metric::new("total_ticks", timer::UNIT, Better::Lower);
            out.sample(self.bench, &case, &metric, round, run.total_ticks as f64);
            let at = (self.bench, &case);
            if let Some(s) = run.shares {
                emit_shares(out, at, round, s);
            }
            events::emit::<L>(
                out,
                at,
                round,
                &run.verdict.events,
                run.verdict.acquisitions,
            );
            checks.add(round, &run.verdict);
        }
        emit_checks(out, self.bench, &case, &checks);
    }
}

/// A stress run's fairness: the per-thread acquisitions of the window in
/// which every thread ran, named as `lock_unlock`'s.
fn emit_shares(out: &Out, (bench, case): (&str, &J), round: usize, s: Spread) {
    for (metric, unit, better, value) in [
        ("acquisitions_min", "ops", Better::Higher, s.min),
        ("acquisitions_avg", "ops", Better::Higher, s.mean),
        ("acquisitions_max", "ops", Better::Higher, s.max),
        ("fairness_cv", "ratio", Better::Lower, s.lasom),
    ] {
        out.sample(
            bench,
            case,
            &Metric::new(metric, unit, better),
            round,
            value,
        );
    }
}

#[cfg(loom)]
fn main() -> ExitCode {
    model::main()
}

#[cfg(not(loom))]
fn main() -> ExitCode {
    #[cfg(miri)]
    return miri::main();
    #[cfg(lockmatrix_sim)]
    return sim::main();
    #[cfg(not(any(miri, lockmatrix_sim)))]
    bench_main()
}

#[cfg(not(loom))]
#[cfg_attr(miri, allow(dead_code))]
fn bench_main() -> ExitCode {
    let args = Args::from_env(BENCHES);
    if args.list {
        BENCHES.iter().for_each(|b| println!("{b}"));
        return ExitCode::SUCCESS;
    }
    args.check_locks(locks::names());
    let out = Out::new("spinlock");
    out.env(&args, variants(&args));
    out.probes(&probes::all());
    let selected = || locks::names().iter().filter(|l| args.wants_lock(l));
    for &bench in BENCHES.iter().filter(|b| args.wants(b)) {
        for name in selected() {
            let (out, args) = (&out, &args);
            let done = match bench {
                "lock_unlock" => locks::visit(name, LockUnlock { out, args }),
                _ => locks::visit(name, Stress { out, args, bench }),
            };
            debug_assert!(done.is_some(), "lock {name} in names() but not in visit");
        }
    }
    out.finish()
}

#[cfg(all(test, not(loom)))]
mod tests;
