//! Lock events: how often a lock left its uncontended fast path and what it
//! did instead (waited, queued, slept, handed the lock on), the user-space
//! counterpart of Linux's `CONFIG_LOCK_EVENT_COUNTS`.
//!
//! Each thread counts in plain cells of its own, a suite's thread-local
//! [`Counters`]: no shared atomic, so counting adds no coherence traffic to
//! what is measured and no ordering instruction to a lock's footprint. A
//! lock counts only on its slow paths, so its uncontended fast path is the
//! code it was (the instruction counts and footprints gate that). A
//! workload takes each thread's [`Counts`] before and after its work and
//! sums the differences once it has joined its threads: exact, whatever
//! the threads' interleaving.
//!
//! Under loom every thread of a model runs on the one OS thread checking
//! it, so a model reads the counts of all its threads from its own.

use std::cell::Cell;
use std::ops::{Add, Index};

/// One thread's counts of a suite's `N` events, indexed by the suite's
/// event enum; held in a `thread_local!` with a `const` initialiser (no
/// lazy initialisation, no destructor: an access is one thread-pointer
/// relative load and store).
pub struct Counters<const N: usize>([Cell<u64>; N]);

impl<const N: usize> Counters<N> {
    #[allow(clippy::new_without_default)] // built in a const thread_local
    pub const fn new() -> Counters<N> {
        Counters([const { Cell::new(0) }; N])
    }

    #[inline(always)]
    pub fn add(&self, event: usize, n: u64) {
        let c = &self.0[event];
        c.set(c.get().wrapping_add(n));
    }

    /// The counts so far.
    pub fn get(&self) -> Counts<N> {
        Counts(std::array::from_fn(|i| self.0[i].get()))
    }
}

/// Counts of `N` events: one thread's, or the sum over a round's threads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counts<const N: usize>(pub [u64; N]);

impl<const N: usize> Default for Counts<N> {
    fn default() -> Counts<N> {
        Counts([0; N])
    }
}

impl<const N: usize> Counts<N> {
    /// What was counted since `before` (a snapshot of the same thread).
    pub fn since(self, before: Counts<N>) -> Counts<N> {
        Counts(std::array::from_fn(|i| self.0[i].wrapping_sub(before.0[i])))
    }

    /// Whether nothing was counted.
    pub fn is_zero(&self) -> bool {
        self.0.iter().all(|&c| c == 0)
    }
}

impl<const N: usize> Add for Counts<N> {
    type Output = Counts<N>;
    fn add(self, other: Counts<N>) -> Counts<N> {
        Counts(std::array::from_fn(|i| self.0[i] + other.0[i]))
    }
}

impl<const N: usize> std::iter::Sum for Counts<N> {
    fn sum<I: Iterator<Item = Counts<N>>>(iter: I) -> Counts<N> {
        iter.fold(Counts::default(), Add::add)
    }
}

impl<const N: usize> Index<usize> for Counts<N> {
    type Output = u64;
    fn index(&self, event: usize) -> &u64 {
        &self.0[event]
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    std::thread_local! {
        static COUNTERS: Counters<2> = const { Counters::new() };
    }

    #[test]
    fn each_thread_counts_its_own_and_the_sum_is_the_total() {
        let per: Vec<Counts<2>> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4u64)
                .map(|t| {
                    s.spawn(move || {
                        let before = COUNTERS.with(Counters::get);
                        for _ in 0..1000 * (t + 1) {
                            COUNTERS.with(|c| c.add(0, 1));
                        }
                        COUNTERS.with(|c| c.add(1, t));
                        COUNTERS.with(Counters::get).since(before)
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        assert_eq!(per[0], Counts([1000, 0]));
        assert_eq!(per[3], Counts([4000, 3]));
        let total: Counts<2> = per.into_iter().sum();
        assert_eq!(total, Counts([10_000, 6]));
        // Nothing leaked into this thread's counters.
        assert!(COUNTERS.with(Counters::get).is_zero());
    }

    #[test]
    fn since_takes_the_difference_across_a_wrap() {
        let before = Counts([u64::MAX - 1, 5]);
        assert_eq!(Counts([1, 5]).since(before), Counts([3, 0]));
    }
}
