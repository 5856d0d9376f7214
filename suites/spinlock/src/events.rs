//! The spinlocks' lock events (`harness::events`): what an acquisition did
//! when it could not take its lock at once. Each lock counts its own on its
//! slow paths only, in this thread's counters; the workload sums them over
//! a round's threads and the suite prints each event of a lock as a rate per
//! acquisition ([`Event::metric`]).
//!
//! Where a count goes moves what LLVM makes of the code around it, even
//! off the fast path: a call to count tas's failed swaps made it merge two
//! of the retry loop's three copies of the swap, and a count before
//! qspinlock's `xchg_tail` instead of after it one of the queue head's
//! load-acquires, each one ordering instruction fewer in a footprint. So
//! a count is inline, and placed where every target's counts and
//! footprints stay as they were (the matrix compares them).

use crate::locks::RawLock;
use harness::events::{Counters, Counts};
use harness::json::J;
use harness::out::{Better, Metric};
use harness::Out;

/// An event a lock counts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// tas, ttas: a swap that found the lock taken.
    FailedSwap,
    /// ticket: an acquisition that had to wait for its turn.
    Wait,
    /// ticket: the tickets ahead of ours (the holder's and the waiters')
    /// when we took ours; summed over the waits.
    WaitersAhead,
    /// mcs, qspinlock: an acquisition that queued its node (qspinlock:
    /// Linux's `lock_slowpath`, counted once the node is published).
    Queued,
    /// qspinlock: a queued node that found another node queued ahead of it.
    QueuedBehind,
    /// qspinlock: an acquisition by the pending bit (Linux's
    /// `lock_pending`).
    Pending,
    /// qspinlock: a queue head that took the lock and made its successor
    /// the head.
    HandedOn,
    /// mcs: an unlock that found a successor queued but not yet linked in,
    /// and waited for it.
    SuccessorWait,
}

const N: usize = 8;

/// Counts of every event: one thread's, or a round's.
pub type Events = Counts<N>;

impl Event {
    /// The sample's metric: this event per acquisition.
    pub fn metric(self) -> &'static str {
        match self {
            Event::FailedSwap => "failed_swaps_per_acquire",
            Event::Wait => "waits_per_acquire",
            Event::WaitersAhead => "waiters_ahead_per_acquire",
            Event::Queued => "queued_per_acquire",
            Event::QueuedBehind => "queued_behind_per_acquire",
            Event::Pending => "pending_per_acquire",
            Event::HandedOn => "handed_on_per_acquire",
            Event::SuccessorWait => "successor_waits_per_acquire",
        }
    }

    pub fn unit(self) -> &'static str {
        match self {
            Event::WaitersAhead => "waiters_per_acquire",
            _ => "events_per_acquire",
        }
    }

    /// Every event is a cost (a retry, a wait, a queue, a hand-over that
    /// touches another thread's line), so fewer is better, except pending:
    /// an acquisition takes the pending path only when it found the lock
    /// held, and then pending is the cheap way to wait (one spinning
    /// waiter, no queue node, no hand-over). At a given contention, fewer
    /// pending acquisitions mean more of them queued, and a qspinlock that
    /// stops taking its pending path (seed 001's two-contender case) is
    /// the regression to see. Contention itself shows in `queued`.
    pub fn lower_is_better(self) -> bool {
        self != Event::Pending
    }
}

std::thread_local! {
    static COUNTERS: Counters<N> = const { Counters::new() };
}

/// Counts `n` of `event` on this thread.
#[inline(always)]
pub fn add(event: Event, n: u64) {
    COUNTERS.with(|c| c.add(event as usize, n));
}

/// Counts one `event` on this thread.
#[inline(always)]
pub fn count(event: Event) {
    add(event, 1);
}

/// This thread's counts so far.
pub fn counts() -> Events {
    COUNTERS.with(Counters::get)
}

impl Event {
    /// This event's count in `e`.
    pub fn of(self, e: &Events) -> u64 {
        e[self as usize]
    }
}

/// Prints the events `L` counts in one round of a cell, each per
/// acquisition of the round.
pub fn emit<L: RawLock>(
    out: &Out,
    (bench, case): (&str, &J),
    round: usize,
    events: &Events,
    acquisitions: u64,
) {
    for &e in L::EVENTS {
        let better = if e.lower_is_better() {
            Better::Lower
        } else {
            Better::Higher
        };
        let per = e.of(events) as f64 / acquisitions as f64;
        out.sample(
            bench,
            case,
            &Metric::new(e.metric(), e.unit(), better),
            round,
            per,
        );
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// Every event, in the order of the counters.
    const ALL: [Event; N] = [
        Event::FailedSwap,
        Event::Wait,
        Event::WaitersAhead,
        Event::Queued,
        Event::QueuedBehind,
        Event::Pending,
        Event::HandedOn,
        Event::SuccessorWait,
    ];

    #[test]
    fn every_event_has_its_counter_and_a_metric_of_its_own() {
        for (i, e) in ALL.iter().enumerate() {
            assert_eq!(*e as usize, i);
            assert!(e.metric().ends_with("_per_acquire"));
        }
        let mut names: Vec<_> = ALL.iter().map(|e| e.metric()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), N);
    }

    #[test]
    fn counts_are_this_threads() {
        let before = counts();
        count(Event::Wait);
        add(Event::WaitersAhead, 3);
        count(Event::Wait);
        let mine = counts().since(before);
        assert_eq!(
            (Event::Wait.of(&mine), Event::WaitersAhead.of(&mine)),
            (2, 3)
        );
        let other = std::thread::spawn(counts).join().unwrap();
        assert!(other.is_zero());
    }
}
