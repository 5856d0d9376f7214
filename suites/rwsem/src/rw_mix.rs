//! Seed 002's benchmark: readers and writers hammering one lock for a fixed
//! time, each doing a critical-section load inside, counting their locking
//! operations; plus the invariants checked while they do.
//!
//! The invariants are watched through one shared state word: a reader adds
//! `READER` on entry and subtracts it on exit, a writer sets `WRITER` on
//! entry and clears it on exit, and each side looks at what the other left
//! in the word's previous value. All updates are read-modify-writes of one
//! location, so any two overlapping critical sections see each other (one
//! total modification order), without fences beyond the lock's own. Writers
//! also increment a counter with a separate load (on entry) and store (on
//! exit) -- what a plain `counter += 1` does, spread over the critical
//! section so that a broken lock loses updates -- made of relaxed atomics so
//! that a broken lock is a wrong count rather than undefined behaviour.
//!
//! Each thread's lock events (`crate::events`) are what it counted between
//! its start and its end; a round's are their sum, which the lock checks
//! against what it counted itself (`lock_events`).

use crate::events::{self, Event, Events};
use crate::locks::{RawRwLock, Slowpaths};
use harness::json::{obj, J};
use harness::threads;
use std::hint::black_box;
use std::sync::atomic::AtomicUsize;
use std::sync::atomic::Ordering::Relaxed;
use std::time::Duration;

pub const BENCH: &str = "rw_mix";

/// The critical-section loads of seed 002.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Load {
    /// Units of `harness::work::work`.
    Work(u32),
    /// `std::thread::sleep` of 1 µs (in practice the timer slack, ~50 µs).
    Sleep1us,
}

pub const LOADS: [Load; 5] = [
    Load::Work(1),
    Load::Work(10),
    Load::Work(50),
    Load::Work(100),
    Load::Sleep1us,
];

impl Load {
    pub fn name(self) -> String {
        match self {
            Load::Work(units) => units.to_string(),
            Load::Sleep1us => "sleep1us".to_string(),
        }
    }

    #[inline]
    fn run(self) {
        match self {
            Load::Work(units) => {
                black_box(harness::work::work(units));
            }
            Load::Sleep1us => std::thread::sleep(Duration::from_micros(1)),
        }
    }
}

/// Who runs: half readers and half writers, or writers only.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mix {
    Half,
    AllWriters,
}

pub const MIXES: [Mix; 2] = [Mix::Half, Mix::AllWriters];

impl Mix {
    pub fn name(self) -> &'static str {
        match self {
            Mix::Half => "half",
            Mix::AllWriters => "all_writers",
        }
    }

    /// (readers, writers) for `n` threads: `n/2` of each (at least one;
    /// an odd `n` leaves one thread out), or `n` writers.
    pub fn sides(self, n: usize) -> (usize, usize) {
        match self {
            Mix::Half => {
                let k = (n / 2).max(1);
                (k, k)
            }
            Mix::AllWriters => (0, n.max(1)),
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    Reader,
    Writer,
}

/// Thread `i`'s side: readers and writers alternate, so that with pinning
/// both sides are spread over the CPUs; the larger side takes the rest.
fn role(i: usize, readers: usize, writers: usize) -> Role {
    let pairs = readers.min(writers);
    if i < 2 * pairs {
        if i % 2 == 0 {
            Role::Reader
        } else {
            Role::Writer
        }
    } else if readers > writers {
        Role::Reader
    } else {
        Role::Writer
    }
}

/// Violations of one invariant: how many, and the first thread that saw one.
struct Violations {
    count: AtomicUsize,
    first_thread: AtomicUsize,
}

impl Violations {
    fn new() -> Violations {
        Violations {
            count: AtomicUsize::new(0),
            first_thread: AtomicUsize::new(usize::MAX),
        }
    }

    #[cold]
    fn record(&self, thread: usize) {
        self.count.fetch_add(1, Relaxed);
        let _ = self
            .first_thread
            .compare_exchange(usize::MAX, thread, Relaxed, Relaxed);
    }

    fn first(&self) -> Option<usize> {
        Some(self.first_thread.load(Relaxed)).filter(|&t| t != usize::MAX)
    }
}

const WRITER: usize = 1;
const READER: usize = 2;

/// The state every thread of one round checks the lock against.
struct Invariants {
    state: AtomicUsize,
    writer_clashes: Violations,
    mixed: Violations,
    counter: AtomicUsize,
}

impl Invariants {
    fn new() -> Invariants {
        Invariants {
            state: AtomicUsize::new(0),
            writer_clashes: Violations::new(),
            mixed: Violations::new(),
            counter: AtomicUsize::new(0),
        }
    }

    #[inline]
    fn reader_enter(&self, thread: usize) {
        if self.state.fetch_add(READER, Relaxed) & WRITER != 0 {
            self.mixed.record(thread);
        }
    }

    #[inline]
    fn reader_exit(&self, thread: usize) {
        if self.state.fetch_sub(READER, Relaxed) & WRITER != 0 {
            self.mixed.record(thread);
        }
    }

    /// Returns the counter as the writer found it.
    #[inline]
    fn writer_enter(&self, thread: usize) -> usize {
        let prev = self.state.fetch_or(WRITER, Relaxed);
        if prev & WRITER != 0 {
            self.writer_clashes.record(thread);
        }
        if prev >= READER {
            self.mixed.record(thread);
        }
        self.counter.load(Relaxed)
    }

    #[inline]
    fn writer_exit(&self, thread: usize, counter_seen: usize) {
        self.counter.store(counter_seen.wrapping_add(1), Relaxed);
        let prev = self.state.fetch_and(!WRITER, Relaxed);
        if prev & WRITER == 0 {
            // Another writer cleared our bit: it was inside with us.
            self.writer_clashes.record(thread);
        }
        if prev >= READER {
            self.mixed.record(thread);
        }
    }
}

/// What one round measured and saw.
#[derive(Clone, Debug)]
pub struct Round {
    pub reader_ops: Vec<u64>,
    pub writer_ops: Vec<u64>,
    pub slowpaths: Option<Slowpaths>,
    pub writer_clashes: u64,
    pub writer_clash_thread: Option<usize>,
    pub mixed: u64,
    pub mixed_thread: Option<usize>,
    /// The writers' counter at the end (modulo the word size).
    pub counter: u64,
    /// The lock events of every thread, and whether they keep the lock's
    /// invariants (`Err` says which broke).
    pub events: Events,
    pub events_ok: Result<(), String>,
    /// The events the lock counts (`RawRwLock::EVENTS`).
    pub counted: &'static [Event],
}

/// Runs `readers + writers` threads on a fresh `L` for `duration`.
pub fn run_round<L: RawRwLock>(
    readers: usize,
    writers: usize,
    load: Load,
    duration: Duration,
) -> Round {
    let lock = L::new();
    let inv = Invariants::new();
    let per_thread = threads::run_for(readers + writers, duration, |i, stop| {
        let role = role(i, readers, writers);
        let mut ops = 0u64;
        let before = events::counts();
        match role {
            Role::Reader => {
                while !stop.load(Relaxed) {
                    lock.read_lock();
                    inv.reader_enter(i);
                    load.run();
                    inv.reader_exit(i);
                    lock.read_unlock();
                    ops += 1;
                }
            }
            Role::Writer => {
                while !stop.load(Relaxed) {
                    lock.write_lock();
                    let seen = inv.writer_enter(i);
                    load.run();
                    inv.writer_exit(i, seen);
                    lock.write_unlock();
                    ops += 1;
                }
            }
        }
        (role, ops, events::counts().since(before))
    });
    let side = |want: Role| -> Vec<u64> {
        per_thread
            .iter()
            .filter(|(role, _, _)| *role == want)
            .map(|&(_, ops, _)| ops)
            .collect()
    };
    let (reader_ops, writer_ops) = (side(Role::Reader), side(Role::Writer));
    let events: Events = per_thread.iter().map(|&(_, _, e)| e).sum();
    let events_ok = lock.check_events(&events, reader_ops.iter().sum(), writer_ops.iter().sum());
    Round {
        reader_ops,
        writer_ops,
        slowpaths: lock.slowpaths(),
        writer_clashes: inv.writer_clashes.count.load(Relaxed) as u64,
        writer_clash_thread: inv.writer_clashes.first(),
        mixed: inv.mixed.count.load(Relaxed) as u64,
        mixed_thread: inv.mixed.first(),
        counter: inv.counter.load(Relaxed) as u64,
        events,
        events_ok,
        counted: L::EVENTS,
    }
}

/// (min, avg, max) of per-thread ops; `None` for an empty side.
pub fn min_avg_max(ops: &[u64]) -> Option<(f64, f64, f64)> {
    let min = *ops.iter().min()?;
    let max = *ops.iter().max()?;
    let avg = ops.iter().sum::<u64>() as f64 / ops.len() as f64;
    Some((min as f64, avg, max as f64))
}

/// One correctness check over all rounds of a case.
#[derive(Debug)]
pub struct Check {
    pub name: &'static str,
    pub ok: bool,
    pub details: J,
}

fn thread_json(t: Option<usize>) -> J {
    t.map_or(J::Null, J::from)
}

/// The four invariants of a case, over all its rounds.
pub fn checks(rounds: &[Round]) -> [Check; 4] {
    let sum = |f: &dyn Fn(&Round) -> u64| rounds.iter().map(f).sum::<u64>();
    let writer_ops = sum(&|r| r.writer_ops.iter().sum());
    let reader_ops = sum(&|r| r.reader_ops.iter().sum());
    let clashes = sum(&|r| r.writer_clashes);
    let mixed = sum(&|r| r.mixed);
    // The counter lives in a usize: compare each round modulo its width.
    let width_mask = usize::MAX as u64;
    let counted = sum(&|r| r.counter);
    let counter_ok = rounds
        .iter()
        .all(|r| r.counter == r.writer_ops.iter().sum::<u64>() & width_mask);
    [
        Check {
            name: "writer_exclusive",
            ok: clashes == 0,
            details: obj([
                ("violations", clashes.into()),
                (
                    "first_thread",
                    thread_json(rounds.iter().find_map(|r| r.writer_clash_thread)),
                ),
                ("writer_ops", writer_ops.into()),
            ]),
        },
        Check {
            name: "no_writer_with_readers",
            ok: mixed == 0,
            details: obj([
                ("violations", mixed.into()),
                (
                    "first_thread",
                    thread_json(rounds.iter().find_map(|r| r.mixed_thread)),
                ),
                ("reader_ops", reader_ops.into()),
                ("writer_ops", writer_ops.into()),
            ]),
        },
        Check {
            name: "writer_counter_total",
            ok: counter_ok,
            details: obj([("expected", writer_ops.into()), ("seen", counted.into())]),
        },
        events_check(rounds),
    ]
}

/// `lock_events`: every round's events kept the lock's invariants.
fn events_check(rounds: &[Round]) -> Check {
    let failed: Vec<usize> = (0..rounds.len())
        .filter(|&r| rounds[r].events_ok.is_err())
        .collect();
    let first = failed
        .first()
        .and_then(|&r| rounds[r].events_ok.clone().err())
        .map_or(J::Null, J::from);
    Check {
        name: "lock_events",
        ok: failed.is_empty(),
        details: obj([
            ("rounds", rounds.len().into()),
            ("failed_rounds", failed.into()),
            ("first", first),
        ]),
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::locks::{FairRwSpin, LinuxRwsem, StdRwLock};
    use std::sync::atomic::AtomicBool;
    use std::sync::atomic::Ordering::{Acquire, Release};

    #[test]
    fn sides_and_roles() {
        assert_eq!(Mix::Half.sides(2), (1, 1));
        assert_eq!(Mix::Half.sides(36), (18, 18));
        assert_eq!(Mix::Half.sides(3), (1, 1));
        assert_eq!(Mix::AllWriters.sides(4), (0, 4));
        let roles: Vec<Role> = (0..5).map(|i| role(i, 1, 4)).collect();
        assert_eq!(
            roles,
            [
                Role::Reader,
                Role::Writer,
                Role::Writer,
                Role::Writer,
                Role::Writer
            ]
        );
        assert_eq!(role(3, 2, 2), Role::Writer);
    }

    /// A fixed number of operations per thread on 4 threads (2 readers, 2
    /// writers), so totals are exact.
    fn exact_totals<L: RawRwLock>(ops_per_thread: usize) {
        let lock = L::new();
        let inv = Invariants::new();
        let reads = AtomicUsize::new(0);
        threads::run(4, |i| {
            for _ in 0..ops_per_thread {
                if i % 2 == 0 {
                    lock.read_lock();
                    inv.reader_enter(i);
                    black_box(harness::work::work(5));
                    inv.reader_exit(i);
                    lock.read_unlock();
                    reads.fetch_add(1, Relaxed);
                } else {
                    lock.write_lock();
                    let seen = inv.writer_enter(i);
                    black_box(harness::work::work(5));
                    inv.writer_exit(i, seen);
                    lock.write_unlock();
                }
            }
        });
        assert_eq!(inv.writer_clashes.count.load(Relaxed), 0, "{}", L::NAME);
        assert_eq!(inv.mixed.count.load(Relaxed), 0, "{}", L::NAME);
        assert_eq!(inv.counter.load(Relaxed), 2 * ops_per_thread, "{}", L::NAME);
        assert_eq!(reads.load(Relaxed), 2 * ops_per_thread, "{}", L::NAME);
        assert_eq!(inv.state.load(Relaxed), 0, "{}", L::NAME);
    }

    #[test]
    fn linux_rwsem_keeps_the_invariants() {
        exact_totals::<LinuxRwsem>(20_000);
    }

    #[test]
    fn std_rwlock_keeps_the_invariants() {
        exact_totals::<StdRwLock>(20_000);
    }

    #[test]
    fn fair_rwspin_keeps_the_invariants() {
        exact_totals::<FairRwSpin>(20_000);
    }

    #[test]
    fn every_lock_passes_the_checks_of_a_timed_round() {
        // Every registered lock, through its registered round.
        for (name, _, run, _) in crate::LOCKS {
            for mix in MIXES {
                let (r, w) = mix.sides(4);
                let round = run(r, w, Load::Work(10), Duration::from_millis(30));
                assert_eq!(round.reader_ops.len(), r);
                assert_eq!(round.writer_ops.len(), w);
                assert!(round.writer_ops.iter().sum::<u64>() > 0, "{name}");
                for check in checks(&[round]) {
                    assert!(check.ok, "{name} {}: {}", check.name, check.details);
                }
            }
        }
    }

    #[test]
    fn the_sleep_load_is_handed_over_too() {
        let round = run_round::<LinuxRwsem>(2, 2, Load::Sleep1us, Duration::from_millis(30));
        assert!(checks(&[round]).iter().all(|c| c.ok));
    }

    #[test]
    fn oversubscribed_runs_still_progress() {
        let n = 4 * threads::cpus().max(2);
        let round =
            run_round::<LinuxRwsem>(n / 2, n / 2, Load::Work(50), Duration::from_millis(50));
        assert!(round.writer_ops.iter().sum::<u64>() > 0);
        assert!(checks(&[round]).iter().all(|c| c.ok));
        let round =
            run_round::<FairRwSpin>(n / 2, n / 2, Load::Work(50), Duration::from_millis(50));
        assert!(checks(&[round]).iter().all(|c| c.ok));
    }

    /// A "lock" that excludes nobody.
    struct NoLock;

    impl RawRwLock for NoLock {
        const NAME: &'static str = "no_lock";
        fn new() -> Self {
            NoLock
        }
        fn read_lock(&self) {}
        fn read_unlock(&self) {}
        fn write_lock(&self) {}
        fn write_unlock(&self) {}
        fn slowpaths(&self) -> Option<Slowpaths> {
            None
        }
    }

    /// A lock whose writers take the read side: readers exclude nobody
    /// either, and writers run beside each other.
    struct WritersShare(LinuxRwsem);

    impl RawRwLock for WritersShare {
        const NAME: &'static str = "writers_share";
        fn new() -> Self {
            WritersShare(LinuxRwsem::new())
        }
        fn read_lock(&self) {
            self.0.read_lock()
        }
        fn read_unlock(&self) {
            self.0.read_unlock()
        }
        fn write_lock(&self) {
            self.0.read_lock()
        }
        fn write_unlock(&self) {
            self.0.read_unlock()
        }
        fn slowpaths(&self) -> Option<Slowpaths> {
            self.0.slowpaths()
        }
    }

    /// A lock that is a correct spinlock for writers and lets readers in
    /// whenever they like.
    struct ReadersIgnoreWriters(AtomicBool);

    impl RawRwLock for ReadersIgnoreWriters {
        const NAME: &'static str = "readers_ignore_writers";
        fn new() -> Self {
            ReadersIgnoreWriters(AtomicBool::new(false))
        }
        fn read_lock(&self) {}
        fn read_unlock(&self) {}
        fn write_lock(&self) {
            // Acquire: pairs with the Release in write_unlock(); writers
            // exclude each other correctly, only readers are let in.
            while self
                .0
                .compare_exchange_weak(false, true, Acquire, Relaxed)
                .is_err()
            {
                std::thread::yield_now();
            }
        }
        fn write_unlock(&self) {
            // Release: pairs with the Acquire in write_lock().
            self.0.store(false, Release);
        }
        fn slowpaths(&self) -> Option<Slowpaths> {
            None
        }
    }

    fn failed(rounds: &[Round]) -> Vec<&'static str> {
        checks(rounds)
            .iter()
            .filter(|c| !c.ok)
            .map(|c| c.name)
            .collect()
    }

    #[test]
    fn the_checks_catch_a_lock_that_excludes_nobody() {
        let rounds: Vec<Round> = (0..3)
            .map(|_| run_round::<NoLock>(2, 2, Load::Work(100), Duration::from_millis(50)))
            .collect();
        assert_eq!(
            failed(&rounds),
            [
                "writer_exclusive",
                "no_writer_with_readers",
                "writer_counter_total"
            ]
        );
    }

    #[test]
    fn the_checks_catch_writers_sharing_the_lock() {
        let rounds: Vec<Round> = (0..3)
            .map(|_| run_round::<WritersShare>(0, 4, Load::Work(100), Duration::from_millis(50)))
            .collect();
        assert_eq!(
            failed(&rounds),
            ["writer_exclusive", "writer_counter_total"]
        );
    }

    #[test]
    fn the_checks_catch_readers_beside_a_writer() {
        let rounds: Vec<Round> = (0..3)
            .map(|_| {
                run_round::<ReadersIgnoreWriters>(2, 2, Load::Work(100), Duration::from_millis(50))
            })
            .collect();
        assert_eq!(failed(&rounds), ["no_writer_with_readers"]);
    }
}
