//! The threads' loops: seed 001's timed lock+unlock and seed 003's S1/S2
//! stress runs, all around one checked critical section.

use crate::check::{Tally, Verdict};
use crate::locks::RawLock;
use harness::work::{work, Rng};
use harness::{threads, timer};
use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::Duration;

/// Acquisitions timed as one batch in `lock_unlock` (one timer read pair per
/// batch, never per acquisition).
pub const BATCH: u64 = 64;
/// S2's `do_somework()` outside the lock, in `harness::work` units.
pub const S2_OUTSIDE_UNITS: u32 = 200;
/// S2's `do_conditional_work()` inside the lock: uniform in `0..` this.
pub const S2_INSIDE_MAX_UNITS: u64 = 100;

/// Keeps a value on cache lines of its own (128 bytes: adjacent-line
/// prefetch pairs 64-byte lines on x86, and some arm64 and ppc64 parts have
/// 128-byte lines).
#[repr(align(128))]
struct Padded<T>(T);

/// What the lock protects: the owner word and the plain counter.
struct Protected {
    /// 0 when nobody is inside, else the owner's thread index + 1.
    owner: AtomicUsize,
    counter: UnsafeCell<u64>,
}

/// A lock and the data it protects, on separate lines so waiters spinning
/// on the lock word do not also steal the data line from the holder.
pub struct Arena<L> {
    lock: Padded<L>,
    data: Padded<Protected>,
}

// SAFETY: `counter` is only accessed inside the lock (`critical`) or through
// `&mut self`.
unsafe impl<L: RawLock> Sync for Arena<L> {}

impl<L: RawLock> Default for Arena<L> {
    fn default() -> Self {
        Arena {
            lock: Padded(L::new()),
            data: Padded(Protected {
                owner: AtomicUsize::new(0),
                counter: UnsafeCell::new(0),
            }),
        }
    }
}

impl<L: RawLock> Arena<L> {
    /// One acquisition by thread `index`: lock, check nobody else is inside,
    /// claim the owner word, increment the counter, run `inside`, check we
    /// still own it, release it, unlock.
    ///
    /// The owner word is accessed with relaxed loads and stores (plain
    /// moves): only the lock's own acquire and release order them, so a
    /// lock that does not exclude, or orders too weakly, shows up here.
    #[inline(always)]
    pub fn critical(&self, index: usize, node: &L::Node, tally: &mut Tally, inside: impl FnOnce()) {
        let me = index + 1;
        let data = &self.data.0;
        // SAFETY: `node` is this thread's, in place for the whole run, and
        // serves one acquisition at a time (unlock below comes first).
        unsafe { self.lock.0.lock(node) };
        let seen = data.owner.load(Relaxed);
        if seen != 0 {
            tally.violation(seen);
        }
        data.owner.store(me, Relaxed);
        // SAFETY: the lock makes this thread the only one here. (With the
        // test-only broken lock it is a data race; the lost updates it
        // causes are what `counter_total` detects.)
        unsafe { *data.counter.get() += 1 };
        inside();
        let seen = data.owner.load(Relaxed);
        if seen != me {
            tally.violation(seen);
        }
        data.owner.store(0, Relaxed);
        // SAFETY: this thread took the lock above with `node`.
        unsafe { self.lock.0.unlock(node) };
        tally.acquisitions += 1;
    }

    /// Judges the run once every thread has finished.
    pub fn verdict(&mut self, tallies: &[Tally]) -> Verdict {
        Verdict::of(*self.data.0.counter.get_mut(), tallies)
    }
}

/// One round of `lock_unlock`.
pub struct LockUnlockRun {
    pub tallies: Vec<Tally>,
    pub verdict: Verdict,
}

impl LockUnlockRun {
    /// Ticks per acquisition (lock + critical section + unlock), the mean
    /// of each thread's batch ticks / acquisitions.
    pub fn ticks_per_acquire(&self) -> f64 {
        let per: Vec<f64> = self
            .tallies
            .iter()
            .map(|t| t.ticks as f64 / t.acquisitions as f64)
            .collect();
        per.iter().sum::<f64>() / per.len() as f64
    }

    /// Per-thread acquisitions: (min, mean, max, stddev / mean).
    pub fn fairness(&self) -> (u64, f64, u64, f64) {
        let acq: Vec<u64> = self.tallies.iter().map(|t| t.acquisitions).collect();
        let n = acq.len() as f64;
        let mean = acq.iter().sum::<u64>() as f64 / n;
        let var = acq.iter().map(|&a| (a as f64 - mean).powi(2)).sum::<f64>() / n;
        let min = acq.iter().copied().min().unwrap_or(0);
        let max = acq.iter().copied().max().unwrap_or(0);
        (min, mean, max, var.sqrt() / mean)
    }
}

/// Seed 001: `threads` threads lock and unlock for `duration`, timing
/// batches of [`BATCH`] acquisitions. Every thread completes at least one
/// batch.
pub fn lock_unlock<L: RawLock>(threads: usize, duration: Duration) -> LockUnlockRun {
    let mut arena = Arena::<L>::default();
    let tallies = threads::run_for(threads, duration, |i, stop| {
        let mut tally = Tally::default();
        let node = L::Node::default();
        loop {
            let t0 = timer::now();
            for _ in 0..BATCH {
                arena.critical(i, &node, &mut tally, || {});
            }
            tally.ticks += timer::now().wrapping_sub(t0);
            if stop.load(Relaxed) {
                break;
            }
        }
        tally
    });
    let verdict = arena.verdict(&tallies);
    LockUnlockRun { tallies, verdict }
}

/// Seed 003's scenarios.
#[derive(Clone, Copy, Debug)]
pub enum Scenario {
    /// lock(); counter += 1; unlock()
    S1,
    /// do_somework(); lock(); do_conditional_work(); unlock(), the hold
    /// time drawn from a generator seeded with `seed` and the thread index.
    S2 { seed: u64 },
}

/// One run of seed 003.
pub struct StressRun {
    /// Ticks from the first thread's start to the last thread's finish.
    pub total_ticks: u64,
    pub verdict: Verdict,
}

/// Seed 003: `threads` threads each do `loops` iterations of `scenario`.
pub fn stress<L: RawLock>(threads: usize, loops: u64, scenario: Scenario) -> StressRun {
    let mut arena = Arena::<L>::default();
    let per = threads::run(threads, |i| {
        let mut tally = Tally::default();
        let node = L::Node::default();
        let start = timer::now();
        match scenario {
            Scenario::S1 => {
                for _ in 0..loops {
                    arena.critical(i, &node, &mut tally, || {});
                }
            }
            Scenario::S2 { seed } => {
                let mut rng = Rng::new(seed ^ (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
                for _ in 0..loops {
                    work(S2_OUTSIDE_UNITS);
                    let hold = rng.below(S2_INSIDE_MAX_UNITS) as u32;
                    arena.critical(i, &node, &mut tally, || {
                        work(hold);
                    });
                }
            }
        }
        (start, timer::now(), tally)
    });
    let first = per.iter().map(|p| p.0).min().unwrap_or(0);
    let last = per.iter().map(|p| p.1).max().unwrap_or(0);
    let tallies: Vec<Tally> = per.into_iter().map(|p| p.2).collect();
    let verdict = arena.verdict(&tallies);
    StressRun {
        total_ticks: last.wrapping_sub(first),
        verdict,
    }
}
