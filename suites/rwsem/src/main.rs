//! The rwsem suite: seed 002, reader-writer semaphores with readers against
//! writers.
//!
//! One benchmark, `rw_mix`. For each lock (`linux_rwsem`, `std_rwlock`,
//! `fair_rwspin`), each critical-section load (`1`, `10`, `50`, `100` units
//! of `harness::work::work`, or `sleep1us`) and each mix (`half`: N/2
//! readers and N/2 writers; `all_writers`: N writers), where N is the
//! largest thread count of the run (at least 2), the threads take their
//! side's lock back to back for a fixed time and count their operations.
//!
//! Samples, per round, with case `{lock, mix, readers, writers, cs_load}`:
//! - `reader_ops_min`, `reader_ops_avg`, `reader_ops_max` (only when the mix
//!   has readers), `writer_ops_min`, `writer_ops_avg`, `writer_ops_max`:
//!   locking operations per thread, unit `ops`, higher is better;
//! - `reader_slowpath` (only when the mix has readers), `writer_slowpath`:
//!   slow-path entries of all threads, unit `count`, lower is better. Only
//!   for locks with a slow path they can count: `linux_rwsem` (fast-path
//!   atomic failed) and `fair_rwspin` (had to wait); omitted for
//!   `std_rwlock`, whose internals std keeps to itself;
//! - `reader_slowpath_per_acquire`, `writer_slowpath_per_acquire`: the
//!   same slow-path entries per locking operation of their side (unit
//!   `events_per_acquire`, lower is better);
//! - the lock events of `events.rs`, per locking operation of their side
//!   (`linux_rwsem` only): `reader_steals_per_acquire`,
//!   `reader_sleeps_per_acquire`, `writer_sleeps_per_acquire`,
//!   `reader_handoffs_per_acquire`, `writer_handoffs_per_acquire`;
//! - `reader_fairness_cv`, `writer_fairness_cv` (a side of two threads or
//!   more): lockhammer's `lasom` of the side's per-thread ops (unit
//!   `ratio`, lower is better).
//!
//! Seed 002's tables follow: reader/writer min/avg/max, the slow-path
//! counts and lock events, and the all-writers vs half-writers change of
//! `writer_ops_avg`.
//!
//! Checks, per case over all its rounds: `writer_exclusive`,
//! `no_writer_with_readers`, `writer_counter_total`, `lock_events` (see
//! `rw_mix`).
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

mod events;
mod locks;
#[cfg(miri)]
mod miri;
#[cfg(loom)]
#[warn(dead_code, unused_imports)]
mod model;
#[cfg(not(loom))]
mod probes;
mod rw_mix;
#[cfg(lockmatrix_sim)]
mod sim;
mod sync;

use harness::fairness::Spread;
use harness::json::{obj, J};
use harness::out::{Better, Metric};
use harness::{Args, Out};
use locks::{linux_rwsem, FairRwSpin, LinuxRwsem, RawRwLock};
#[cfg(not(loom))]
use locks::{ParkingLotRwLock, SpinRwLock, StdRwLock};
use rw_mix::{Load, Round, LOADS, MIXES};
use std::process::ExitCode;
use std::time::Duration;

const BENCHES: [&str; 1] = [rw_mix::BENCH];

type Runner = fn(usize, usize, Load, Duration) -> Round;
/// A lock's probes of the static ordering footprint (`probes.rs`).
type Probes = fn() -> [harness::probe::Probe; 4];

/// A lock by name, with its crate, benchmark round and probes.
type Entry = (&'static str, &'static str, Runner, Probes);

/// The suite's own locks: adding a lock is its file and one line here.
#[cfg(not(loom))]
const LOCKS: [Entry; 5] = [
    lock::<LinuxRwsem>(),
    lock::<StdRwLock>(),
    lock::<FairRwSpin>(),
    lock::<ParkingLotRwLock>(),
    lock::<SpinRwLock>(),
];

#[cfg(not(loom))]
const fn lock<L: RawRwLock>() -> Entry {
    (L::NAME, L::CRATE, rw_mix::run_round::<L>, probes::of::<L>)
}

/// The locks this binary runs: the reader-writer locks of the lock crate
/// under test when it was built with one (`--crate`: the comparison is
/// about that crate), else the suite's own.
#[cfg(not(loom))]
fn locks() -> Vec<Entry> {
    struct Of;
    impl subject::RwLockVisitor for Of {
        type Output = Entry;
        fn visit<R: subject::RwLock>(self) -> Entry {
            lock::<locks::subject::Subject<R>>()
        }
    }
    match subject::RWLOCKS {
        [] => LOCKS.to_vec(),
        crate_locks => crate_locks
            .iter()
            .filter_map(|name| subject::visit_rwlock(name, Of))
            .collect(),
    }
}

/// Round length of the quick profile. 5 locks x 5 loads x 2 mixes x 3
/// rounds x 50 ms is 7.5 s, whatever the machine or emulator. 50 ms, not
/// 100: a pull request's pairs are one round each, and on a 2-vCPU VM the
/// cells' spread per pair did not grow enough at half the window to move
/// their thresholds, while the pairs' time halved (docs/gate.md).
const QUICK_MS: u64 = 50;
const FULL_MS: u64 = 1000;

/// One rw_mix round's window, as measured and as recorded.
fn rw_mix_window(args: &Args) -> Duration {
    Duration::from_millis(args.duration_ms(QUICK_MS, FULL_MS))
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
    let args = Args::from_env(&BENCHES);
    if args.list {
        for bench in BENCHES {
            println!("{bench}");
        }
        return ExitCode::SUCCESS;
    }
    let all = locks();
    let names: Vec<&str> = all.iter().map(|&(name, _, _, _)| name).collect();
    args.check_locks(&names);
    let locks: Vec<(&str, Runner)> = all
        .iter()
        .copied()
        .filter(|&(name, _, _, _)| args.wants_lock(name))
        .map(|(name, _, run, _)| (name, run))
        .collect();
    let mut crates = obj([]);
    for &(name, krate, _, _) in &all {
        crates.set(name, krate);
    }

    let out = Out::new("rwsem");
    out.env(
        &args,
        obj([
            (
                "locks",
                locks
                    .iter()
                    .map(|&(name, _)| name)
                    .collect::<Vec<_>>()
                    .into(),
            ),
            ("lock_crates", crates),
            ("count_word_bits", linux_rwsem::COUNT_WORD_BITS.into()),
            ("rwsem_wait", "futex_private".into()),
            ("rwsem_writer_spin_limit", linux_rwsem::SPIN_LIMIT.into()),
            (
                "rwsem_handoff_timeout_us",
                (linux_rwsem::WAIT_TIMEOUT.as_micros() as u64).into(),
            ),
            ("fair_rwspin", "phase_fair_ticket".into()),
            (
                "rw_mix_window_ms",
                (rw_mix_window(&args).as_millis() as u64).into(),
            ),
        ]),
    );
    let probes: Vec<_> = all.iter().flat_map(|l| (l.3)()).collect();
    out.probes(&probes);
    if args.wants(rw_mix::BENCH) {
        rw_mix_bench(&args, &out, &locks);
    }
    out.finish()
}

fn rw_mix_bench(args: &Args, out: &Out, locks: &[(&str, Runner)]) {
    let n = args.thread_counts().into_iter().max().unwrap_or(2).max(2);
    let rounds = args.rounds(3, 5);
    let duration = rw_mix_window(args);
    for &(lock, run_round) in locks {
        for load in LOADS {
            for mix in MIXES {
                let (readers, writers) = mix.sides(n);
                let case = obj([
                    ("lock", lock.into()),
                    ("mix", mix.name().into()),
                    ("readers", readers.into()),
                    ("writers", writers.into()),
                    ("cs_load", load.name().into()),
                ]);
                if !args.wants_case(rw_mix::BENCH, &case) {
                    continue;
                }
                let results: Vec<Round> = (0..rounds)
                    .map(|round| {
                        let result = run_round(readers, writers, load, duration);
                        emit_samples(out, &case, round, &result);
                        emit_events(out, &case, round, &result);
                        result
                    })
                    .collect();
                for check in rw_mix::checks(&results) {
                    out.check(rw_mix::BENCH, &case, check.name, check.ok, check.details);
                }
            }
        }
    }
}

fn emit_samples(out: &Out, case: &J, round: usize, result: &Round) {
    let sample = |metric: &str, unit: &str, better: Better, value: f64| {
        out.sample(
            rw_mix::BENCH,
            case,
            &Metric::new(metric, unit, better),
            round,
            value,
        );
    };
    for (side, ops) in [
        ("reader", &result.reader_ops),
        ("writer", &result.writer_ops),
    ] {
        if let Some((min, avg, max)) = rw_mix::min_avg_max(ops) {
            sample(&format!("{side}_ops_min"), "ops", Better::Higher, min);
            sample(&format!("{side}_ops_avg"), "ops", Better::Higher, avg);
            sample(&format!("{side}_ops_max"), "ops", Better::Higher, max);
        }
    }
    if let Some(slow) = result.slowpaths {
        if !result.reader_ops.is_empty() {
            sample(
                "reader_slowpath",
                "count",
                Better::Lower,
                slow.reader as f64,
            );
        }
        sample(
            "writer_slowpath",
            "count",
            Better::Lower,
            slow.writer as f64,
        );
    }
}

/// A round's lock events and fairness: slow-path entries, each event the
/// lock counts, per locking operation of its side, and each side's lasom.
fn emit_events(out: &Out, case: &J, round: usize, result: &Round) {
    let sample = |metric: &str, unit: &str, better: Better, value: f64| {
        out.sample(
            rw_mix::BENCH,
            case,
            &Metric::new(metric, unit, better),
            round,
            value,
        );
    };
    let ops = |side: &[u64]| side.iter().sum::<u64>();
    let (reader_ops, writer_ops) = (ops(&result.reader_ops), ops(&result.writer_ops));
    if let Some(slow) = result.slowpaths {
        for (side, n, ops) in [
            ("reader", slow.reader, reader_ops),
            ("writer", slow.writer, writer_ops),
        ] {
            if ops > 0 {
                let metric = format!("{side}_slowpath_per_acquire");
                sample(
                    &metric,
                    "events_per_acquire",
                    Better::Lower,
                    n as f64 / ops as f64,
                );
            }
        }
    }
    for (e, rate) in events::rates(result.counted, &result.events, reader_ops, writer_ops) {
        let better = if e.lower_is_better() {
            Better::Lower
        } else {
            Better::Higher
        };
        sample(e.metric(), "events_per_acquire", better, rate);
    }
    for (side, per_thread) in [
        ("reader", &result.reader_ops),
        ("writer", &result.writer_ops),
    ] {
        let per: Vec<f64> = per_thread.iter().map(|&o| o as f64).collect();
        if let Some(s) = Spread::of(&per).filter(|_| per.len() >= 2) {
            sample(
                &format!("{side}_fairness_cv"),
                "ratio",
                Better::Lower,
                s.lasom,
            );
        }
    }
}
