//! The suite's correctness invariants, shared by the binary and the tests.
//!
//! Every critical section checks an `owner` word (see
//! [`crate::workload::Arena::critical`]) and increments a plain counter;
//! each thread keeps a [`Tally`]. After a run, [`Verdict::of`] judges it:
//! - `mutual_exclusion`: no thread ever found another owner inside;
//! - `counter_total`: the plain counter equals the acquisitions counted by
//!   the threads (lost updates mean two threads were inside at once, or the
//!   lock's ordering let a stale value through);
//! - `lock_events`: the lock's event counts (`crate::events`) keep its
//!   invariants ([`crate::locks::RawLock::check_events`]), and one thread
//!   alone counted none (it never leaves the fast path, which is what the
//!   one-thread cells count instruction by instruction).
//!
//! The two overlap: a short overlap of two critical sections often escapes
//! the owner word (each thread reads its own store from its store buffer)
//! but loses an increment; a longer one is seen in the owner word, which
//! names the threads involved.
//!
//! [`CellChecks`] folds the verdicts of a cell's rounds into the three
//! check records the binary prints.

use crate::events::Events;
use harness::json::{obj, J};

/// What one thread did and saw in its critical sections.
#[derive(Clone, Debug, Default)]
pub struct Tally {
    pub acquisitions: u64,
    /// Critical sections in which the owner word was not as expected.
    pub violations: u64,
    /// The owner word found at the first violation (0: free, else thread
    /// index + 1).
    pub first_seen: Option<usize>,
    /// Timer ticks spent in timed batches (lock_unlock only).
    pub ticks: u64,
    /// The lock events this thread counted in the run.
    pub events: Events,
}

impl Tally {
    #[cold]
    #[inline(never)]
    pub fn violation(&mut self, seen: usize) {
        self.violations += 1;
        self.first_seen.get_or_insert(seen);
    }
}

/// A violation: the thread that saw it and the owner it found (None: the
/// lock word said "free" while the thread was inside).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Violation {
    pub thread: usize,
    pub saw_owner: Option<usize>,
}

/// The judgement of one run.
#[derive(Clone, Debug)]
pub struct Verdict {
    pub acquisitions: u64,
    pub counter: u64,
    pub violations: u64,
    pub first: Option<Violation>,
    /// The lock's events summed over the threads, and whether they keep
    /// the lock's invariants (`Err` says which broke).
    pub events: Events,
    pub events_ok: Result<(), String>,
}

impl Verdict {
    /// Judges a run from the final counter and each thread's tally.
    pub fn of(counter: u64, tallies: &[Tally]) -> Verdict {
        let first = tallies.iter().enumerate().find_map(|(thread, t)| {
            t.first_seen.map(|seen| Violation {
                thread,
                saw_owner: seen.checked_sub(1),
            })
        });
        Verdict {
            acquisitions: tallies.iter().map(|t| t.acquisitions).sum(),
            counter,
            violations: tallies.iter().map(|t| t.violations).sum(),
            first,
            events: tallies.iter().map(|t| t.events).sum(),
            events_ok: Ok(()),
        }
    }

    pub fn mutual_exclusion_ok(&self) -> bool {
        self.violations == 0
    }

    pub fn counter_ok(&self) -> bool {
        self.counter == self.acquisitions
    }
}

/// The checks of one cell (bench, lock, threads) over all its rounds.
#[derive(Clone, Debug, Default)]
pub struct CellChecks {
    rounds: usize,
    acquisitions: u64,
    counter: u64,
    violations: u64,
    first: Option<(usize, Violation)>,
    exclusion_failed: Vec<usize>,
    counter_failed: Vec<usize>,
    /// Rounds whose lock events broke an invariant, and the first's why.
    events_failed: Vec<usize>,
    events_why: Option<String>,
}

impl CellChecks {
    pub fn add(&mut self, round: usize, v: &Verdict) {
        self.rounds += 1;
        self.acquisitions += v.acquisitions;
        self.counter += v.counter;
        self.violations += v.violations;
        if !v.mutual_exclusion_ok() {
            self.exclusion_failed.push(round);
            if self.first.is_none() {
                self.first = v.first.map(|f| (round, f));
            }
        }
        if !v.counter_ok() {
            self.counter_failed.push(round);
        }
        if let Err(why) = &v.events_ok {
            self.events_failed.push(round);
            self.events_why.get_or_insert_with(|| why.clone());
        }
    }

    /// `mutual_exclusion`: ok and the details of the check record.
    pub fn mutual_exclusion(&self) -> (bool, J) {
        let opt = |v: Option<usize>| v.map_or(J::Null, J::from);
        let details = obj([
            ("rounds", self.rounds.into()),
            ("violations", self.violations.into()),
            ("failed_rounds", self.exclusion_failed.clone().into()),
            ("round", opt(self.first.map(|f| f.0))),
            ("thread", opt(self.first.map(|f| f.1.thread))),
            ("saw_owner", opt(self.first.and_then(|f| f.1.saw_owner))),
        ]);
        (self.exclusion_failed.is_empty(), details)
    }

    /// `counter_total`: ok and the details of the check record.
    pub fn counter_total(&self) -> (bool, J) {
        let details = obj([
            ("expected", self.acquisitions.into()),
            ("seen", self.counter.into()),
            ("rounds", self.rounds.into()),
            ("failed_rounds", self.counter_failed.clone().into()),
        ]);
        (self.counter_failed.is_empty(), details)
    }

    /// `lock_events`: ok and the details of the check record.
    pub fn lock_events(&self) -> (bool, J) {
        let details = obj([
            ("rounds", self.rounds.into()),
            ("failed_rounds", self.events_failed.clone().into()),
            ("first", self.events_why.clone().map_or(J::Null, J::from)),
        ]);
        (self.events_failed.is_empty(), details)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tally(acquisitions: u64, seen: &[usize]) -> Tally {
        let mut t = Tally {
            acquisitions,
            ..Tally::default()
        };
        seen.iter().for_each(|&s| t.violation(s));
        t
    }

    #[test]
    fn a_clean_run_passes() {
        let v = Verdict::of(30, &[tally(10, &[]), tally(20, &[])]);
        assert!(v.mutual_exclusion_ok() && v.counter_ok());
        let mut c = CellChecks::default();
        c.add(0, &v);
        assert!(c.mutual_exclusion().0 && c.counter_total().0);
    }

    #[test]
    fn violations_and_lost_updates_fail() {
        let v = Verdict::of(29, &[tally(10, &[]), tally(20, &[1, 0])]);
        assert!(!v.mutual_exclusion_ok() && !v.counter_ok());
        assert_eq!(
            v.first,
            Some(Violation {
                thread: 1,
                saw_owner: Some(0)
            })
        );
        let mut c = CellChecks::default();
        c.add(0, &Verdict::of(3, &[tally(3, &[])]));
        c.add(1, &v);
        let (ok, details) = c.mutual_exclusion();
        assert!(!ok);
        assert_eq!(
            details.to_string(),
            r#"{"rounds":2,"violations":2,"failed_rounds":[1],"round":1,"thread":1,"saw_owner":0}"#
        );
        let (ok, details) = c.counter_total();
        assert!(!ok);
        assert_eq!(
            details.to_string(),
            r#"{"expected":33,"seen":32,"rounds":2,"failed_rounds":[1]}"#
        );
    }
}
