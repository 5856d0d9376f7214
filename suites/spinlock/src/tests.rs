//! Every lock through the same workloads and checks the binary runs.

use crate::check::CellChecks;
use crate::locks::{self, LockVisitor, RawLock};
use crate::workload::{self, Scenario};
use std::time::Duration;

/// Runs S1, S2 and a short lock_unlock on `threads` threads and folds their
/// verdicts into one cell's checks, as the binary does.
struct Exercise {
    threads: usize,
    loops: u64,
    duration: Duration,
}

impl LockVisitor for Exercise {
    type Output = CellChecks;

    fn visit<L: RawLock>(self) -> CellChecks {
        let mut checks = CellChecks::default();
        for (round, scenario) in [Scenario::S1, Scenario::S2 { seed: 7 }]
            .into_iter()
            .enumerate()
        {
            let run = workload::stress::<L>(self.threads, self.loops, scenario);
            assert_eq!(run.verdict.acquisitions, self.threads as u64 * self.loops);
            checks.add(round, &run.verdict);
        }
        let run = workload::lock_unlock::<L>(self.threads, self.duration);
        assert!(run
            .tallies
            .iter()
            .all(|t| t.acquisitions >= workload::BATCH));
        assert!(run.ticks_per_acquire() > 0.0);
        checks.add(2, &run.verdict);
        checks
    }
}

fn correct_locks() -> impl Iterator<Item = &'static str> {
    locks::names().iter().copied().filter(|&n| n != "broken")
}

fn checks(name: &str, threads: usize, loops: u64, ms: u64) -> CellChecks {
    let e = Exercise {
        threads,
        loops,
        duration: Duration::from_millis(ms),
    };
    locks::visit(name, e).expect("lock in names()")
}

/// Panics with the check details unless both checks passed.
fn exercise(name: &str, threads: usize, loops: u64, ms: u64) {
    let c = checks(name, threads, loops, ms);
    let ((me_ok, me), (ct_ok, ct)) = (c.mutual_exclusion(), c.counter_total());
    assert!(
        me_ok && ct_ok,
        "{name} on {threads} threads: mutual_exclusion {me}, counter_total {ct}"
    );
}

/// Loop counts: with more threads than CPUs a FIFO lock pays a scheduler
/// round trip per hand-over, so oversubscribed runs are kept short.
fn loops_for(threads: usize, loops: u64) -> u64 {
    if threads <= harness::threads::cpus() {
        loops
    } else {
        loops.min(300)
    }
}

#[test]
fn every_lock_excludes_with_2_to_4_threads() {
    for name in correct_locks() {
        for threads in [2, 3, 4] {
            exercise(name, threads, loops_for(threads, 5_000), 20);
        }
    }
}

#[test]
fn queued_locks_hand_over_with_more_threads_than_cpus() {
    let threads = (2 * harness::threads::cpus()).max(4);
    for name in ["mcs", "qspinlock", "ticket"] {
        exercise(name, threads, loops_for(threads, 300), 30);
    }
}

#[test]
fn qspinlock_takes_the_pending_and_the_queue_paths() {
    use locks::qspinlock::events::{PENDING, QUEUED};
    use std::sync::atomic::Ordering::Relaxed;
    // Counters are shared with tests running in parallel; they only grow.
    for threads in [2, 4] {
        exercise("qspinlock", threads, loops_for(threads, 20_000), 20);
    }
    assert!(PENDING.load(Relaxed) > 0, "pending path never taken");
    assert!(QUEUED.load(Relaxed) > 0, "queue path never taken");
}

#[test]
fn a_single_thread_passes_trivially() {
    for name in correct_locks() {
        exercise(name, 1, 1_000, 5);
    }
}

#[cfg(feature = "broken-lock")]
#[test]
fn the_broken_lock_fails_both_checks() {
    // Detection is statistical; on an idle 2-CPU machine the first run
    // fails both checks. Allow a few runs for a machine busy with other work.
    let caught = (0..10).any(|_| {
        let c = checks("broken", 2, 50_000, 50);
        !c.mutual_exclusion().0 && !c.counter_total().0
    });
    assert!(caught, "the broken lock passed a check in each of 10 runs");
}

#[cfg(not(feature = "broken-lock"))]
#[test]
fn the_broken_lock_exists_only_with_its_feature() {
    assert!(!locks::names().contains(&"broken"));
}
