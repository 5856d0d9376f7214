//! Every lock through the same workloads and checks the binary runs.

use crate::check::CellChecks;
use crate::events::{Event, Events};
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

/// Panics with the check details unless every check passed.
fn exercise(name: &str, threads: usize, loops: u64, ms: u64) {
    let c = checks(name, threads, loops, ms);
    let ((me_ok, me), (ct_ok, ct)) = (c.mutual_exclusion(), c.counter_total());
    let (ev_ok, ev) = c.lock_events();
    assert!(
        me_ok && ct_ok && ev_ok,
        "{name} on {threads} threads: mutual_exclusion {me}, counter_total {ct}, lock_events {ev}"
    );
}

/// A lock's events over a short `lock_unlock` round and a short S1 run.
struct RoundEvents {
    threads: usize,
}

impl LockVisitor for RoundEvents {
    type Output = (Events, u64);

    fn visit<L: RawLock>(self) -> (Events, u64) {
        let run = workload::lock_unlock::<L>(self.threads, Duration::from_millis(30));
        let loops = loops_for(self.threads, 5_000);
        let stress = workload::stress::<L>(self.threads, loops, Scenario::S1);
        // The round's events are its threads' summed.
        let summed: Events = run.tallies.iter().map(|t| t.events).sum();
        assert_eq!(run.events(), summed, "{}", L::NAME);
        let acquisitions = run.verdict.acquisitions + stress.verdict.acquisitions;
        (run.events() + stress.verdict.events, acquisitions)
    }
}

fn round_events(name: &str, threads: usize) -> (Events, u64) {
    locks::visit(name, RoundEvents { threads }).expect("lock in names()")
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

/// Runs `name` on `threads` threads until `event` is counted, at most five
/// times (on a machine busy with other work, two threads may seldom run at
/// once); returns the events of the last run.
fn until_counted(name: &str, threads: usize, event: Event) -> (Events, u64) {
    let mut last = round_events(name, threads);
    for _ in 1..5 {
        if event.of(&last.0) > 0 {
            break;
        }
        last = round_events(name, threads);
    }
    last
}

#[test]
fn qspinlock_takes_the_pending_and_the_queue_paths() {
    // Two threads take the pending path; a third has to queue.
    let (two, _) = until_counted("qspinlock", 2, Event::Pending);
    assert!(
        Event::Pending.of(&two) > 0,
        "pending path never taken: {two:?}"
    );
    let (three, n) = until_counted("qspinlock", 3, Event::Queued);
    assert!(
        Event::Queued.of(&three) > 0,
        "queue path never taken: {three:?}"
    );
    assert_eq!(
        locks::qspinlock::QSpinLock::check_events(&three, n, 3),
        Ok(())
    );
}

#[test]
fn contended_locks_count_their_slow_paths() {
    // Two threads on one lock, for 30 ms and then 5,000 acquisitions
    // each: every lock that counts events leaves its fast path.
    for (name, event) in [
        ("tas", Event::FailedSwap),
        ("ttas", Event::FailedSwap),
        ("ticket", Event::Wait),
        ("ticket", Event::WaitersAhead),
        ("mcs", Event::Queued),
    ] {
        let (e, _) = until_counted(name, 2, event);
        assert!(event.of(&e) > 0, "{name}: no {event:?} in {e:?}");
    }
}

#[test]
fn one_thread_counts_no_lock_events() {
    for name in correct_locks() {
        let (e, n) = round_events(name, 1);
        assert!(n > 0);
        assert!(e.is_zero(), "{name} alone counted {e:?}");
    }
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
