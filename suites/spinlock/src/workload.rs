//! The threads' loops: seed 001's timed lock+unlock and seed 003's S1/S2
//! stress runs, all around one checked critical section. Each thread's
//! lock events are what it counted between its start and its end; a round's
//! are their sum.

use crate::check::{Tally, Verdict};
use crate::events::{self, Events};
use crate::locks::RawLock;
use harness::fairness::Spread;
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
/// A stress thread reads the timer after each of this many equal parts of
/// its loops (one read per hundreds of acquisitions or more): where each
/// thread was when the first one finished, for its fairness.
pub const STRESS_MARKS: u64 = 64;

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

    /// Judges the run of `tallies.len()` threads once every one has
    /// finished: the counter, and the lock events, which one thread alone
    /// never counts (it never leaves the fast path).
    pub fn verdict(&mut self, tallies: &[Tally]) -> Verdict {
        let mut v = Verdict::of(*self.data.0.counter.get_mut(), tallies);
        let threads = tallies.len();
        v.events_ok = if threads == 1 && !v.events.is_zero() {
            Err(format!("one thread alone counted {:?}", v.events.0))
        } else {
            L::check_events(&v.events, v.acquisitions, threads)
        };
        v
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

    /// The lock events of every thread.
    pub fn events(&self) -> Events {
        self.verdict.events
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
        let before = events::counts();
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
        tally.events = events::counts().since(before);
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
    /// Per-thread acquisitions while every thread ran (from the last start
    /// to the first finish): `None` when the threads never all ran at once.
    pub shares: Option<Spread>,
}

/// One stress thread's progress: (acquisitions done, timer) after each
/// part of its loops, the first `(0, start)`.
type Marks = Vec<(u64, u64)>;

/// Runs `loops` iterations of `one` in at most [`STRESS_MARKS`] parts, reading the
/// timer after each; the loop that runs a part is the stress loop itself.
#[inline(always)]
fn marked(loops: u64, mut one: impl FnMut()) -> Marks {
    let part = loops.div_ceil(STRESS_MARKS).max(1);
    let mut marks = Vec::with_capacity(STRESS_MARKS as usize + 2);
    marks.push((0, timer::now()));
    let mut done = 0;
    while done < loops {
        let n = part.min(loops - done);
        for _ in 0..n {
            one();
        }
        done += n;
        marks.push((done, timer::now()));
    }
    marks
}

/// Acquisitions a thread had done at time `t`, interpolated between its
/// marks (its first before `t`, its last after `t` or at its end). A timer
/// that stepped back between two marks gives the part's start, never a
/// wrapped difference.
fn done_at(marks: &Marks, t: u64) -> f64 {
    let after = marks.partition_point(|&(_, at)| at <= t);
    match (after.checked_sub(1).map(|i| marks[i]), marks.get(after)) {
        (None, _) => 0.0,
        (Some((done, _)), None) => done as f64,
        (Some((d0, t0)), Some(&(d1, t1))) => {
            let part = t1.saturating_sub(t0) as f64;
            let into = t.saturating_sub(t0) as f64;
            let frac = if part > 0.0 {
                (into / part).min(1.0)
            } else {
                0.0
            };
            d0 as f64 + d1.saturating_sub(d0) as f64 * frac
        }
    }
}

/// Each thread's acquisitions while every thread ran.
fn shares(marks: &[Marks]) -> Option<Spread> {
    let started = marks.iter().filter_map(|m| m.first()).map(|m| m.1).max()?;
    let finished = marks.iter().filter_map(|m| m.last()).map(|m| m.1).min()?;
    if finished <= started {
        return None;
    }
    let per: Vec<f64> = marks
        .iter()
        .map(|m| done_at(m, finished) - done_at(m, started))
        .collect();
    Spread::of(&per)
}

/// Seed 003: `threads` threads each do `loops` iterations of `scenario`.
pub fn stress<L: RawLock>(threads: usize, loops: u64, scenario: Scenario) -> StressRun {
    let mut arena = Arena::<L>::default();
    let per = threads::run(threads, |i| {
        let mut tally = Tally::default();
        let node = L::Node::default();
        let before = events::counts();
        let marks = match scenario {
            Scenario::S1 => marked(loops, || arena.critical(i, &node, &mut tally, || {})),
            Scenario::S2 { seed } => {
                let mut rng = Rng::new(seed ^ (i as u64 + 1).wrapping_mul(0x9e37_79b9_7f4a_7c15));
                marked(loops, || {
                    work(S2_OUTSIDE_UNITS);
                    let hold = rng.below(S2_INSIDE_MAX_UNITS) as u32;
                    arena.critical(i, &node, &mut tally, || {
                        work(hold);
                    });
                })
            }
        };
        tally.events = events::counts().since(before);
        (marks, tally)
    });
    let first = per.iter().filter_map(|p| p.0.first()).map(|m| m.1).min();
    let last = per.iter().filter_map(|p| p.0.last()).map(|m| m.1).max();
    let (marks, tallies): (Vec<Marks>, Vec<Tally>) = per.into_iter().unzip();
    let verdict = arena.verdict(&tallies);
    StressRun {
        total_ticks: last.unwrap_or(0).wrapping_sub(first.unwrap_or(0)),
        verdict,
        shares: shares(&marks),
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn marks_split_the_loops_and_interpolate() {
        let mut n = 0;
        let marks = marked(1000, || n += 1);
        assert_eq!(n, 1000);
        // Parts of 16 (1000 / 64, rounded up): 62 whole and one of 8.
        assert_eq!(marks.len(), 1 + 63);
        assert_eq!(marks[1].0, 16);
        assert_eq!(marks.last().unwrap().0, 1000);
        let m = vec![(0, 100), (10, 200), (20, 400)];
        assert_eq!(done_at(&m, 50), 0.0);
        assert_eq!(done_at(&m, 150), 5.0);
        assert_eq!(done_at(&m, 300), 15.0);
        assert_eq!(done_at(&m, 500), 20.0);
        // A timer that stepped back: no wrapped difference.
        let back = vec![(0, 100), (10, 90), (20, 400)];
        assert!((0.0..=20.0).contains(&done_at(&back, 95)));
    }

    #[test]
    fn shares_count_only_the_window_where_all_ran() {
        // B starts at 200 and A finishes at 400: A did 15 (20 - 5) in that
        // window, B 20 (20 - 0).
        let a = vec![(0, 100), (10, 300), (20, 400)];
        let b = vec![(0, 200), (40, 600)];
        let s = shares(&[a.clone(), b]).unwrap();
        assert_eq!((s.min, s.max), (15.0, 20.0));
        // Threads that never overlapped have no shares.
        assert_eq!(shares(&[a, vec![(0, 500), (5, 600)]]), None);
    }
}
