//! The Miri clients of the reader-writer locks loom cannot check: other
//! crates' locks (parking_lot, spin, the crate under test) and std's, run
//! unmodified under Miri (`harness::miri`). Writers add one to a plain
//! counter and readers read it twice, each yielding inside its critical
//! section, so that writers wait for readers and readers for writers (the
//! slow paths); Miri reports a race on the counter when an unlock does not
//! happen-before the next conflicting lock. The clients were chosen against
//! published bugs (`docs/ordering.md`, "Miri"): parking_lot's RwLock bugs
//! of 0.11.0 and 0.12.0 are in the writer's wait for readers to leave,
//! which readers and a writer meeting by chance reached on 2-11 of 32 seeds
//! (0.11.0) and which [`meeting`] makes every acquisition go through.

use crate::locks::{self, RawRwLock};
use harness::miri::{Client, Plain, PREEMPTION_RATE};
use std::process::ExitCode;
use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

/// The clients, with the Miri flags each runs with.
pub const CLIENTS: &[Client] = &[
    Client {
        name: "2 writers x 10",
        covers: "writer-writer exclusion and unlock-to-lock happens-before, the lock handed back and forth",
        seeds: 8,
        preemption_rate: PREEMPTION_RATE,
    },
    Client {
        name: "2 readers + 1 writer x 5",
        covers: "readers and a writer meeting as the schedule has it; each unlock happens-before the next conflicting lock",
        seeds: 8,
        preemption_rate: PREEMPTION_RATE,
    },
    Client {
        name: "a writer waits for a reader x 10",
        covers: "the writer asks for the lock only while the reader holds it, longer each time: its wait for the reader to leave (spinning, then parked) is ordered after the reader's section",
        seeds: 16,
        preemption_rate: PREEMPTION_RATE,
    },
    Client {
        name: "2 readers wait for a writer x 10",
        covers: "readers ask for the lock only while the writer holds it, longer each time: their wait for it to leave (spinning, then parked) is ordered after its section",
        seeds: 8,
        preemption_rate: PREEMPTION_RATE,
    },
    Client {
        name: "try_lock x lock",
        covers: "critical sections entered by try_lock_exclusive and try_lock_shared are ordered against the waiting calls'",
        seeds: 8,
        preemption_rate: PREEMPTION_RATE,
    },
];

/// A lock's clients, by name.
type Clients = fn(&str) -> Option<()>;

const fn lock<L: RawRwLock>() -> (&'static str, &'static str, Clients) {
    (L::NAME, L::CRATE, run::<L>)
}

/// The locks checked: the crate under test's when there is one, else the
/// shipped locks and std's (every lock of the binary not written here).
fn checked() -> Vec<(&'static str, &'static str, Clients)> {
    struct Of;
    impl subject::RwLockVisitor for Of {
        type Output = (&'static str, &'static str, Clients);
        fn visit<R: subject::RwLock>(self) -> Self::Output {
            lock::<locks::subject::Subject<R>>()
        }
    }
    match subject::RWLOCKS {
        [] => vec![
            lock::<locks::StdRwLock>(),
            lock::<locks::ParkingLotRwLock>(),
            lock::<locks::SpinRwLock>(),
        ],
        crate_locks => crate_locks
            .iter()
            .filter_map(|name| subject::visit_rwlock(name, Of))
            .collect(),
    }
}

pub fn main() -> ExitCode {
    let all = checked();
    let names: Vec<_> = all.iter().map(|&(n, c, _)| (n, c)).collect();
    harness::miri::main("rwsem", &names, CLIENTS, |lock, client| {
        let &(_, _, run) = all.iter().find(|(n, _, _)| *n == lock)?;
        run(client)
    })
}

fn run<L: RawRwLock>(client: &str) -> Option<()> {
    match client {
        "2 writers x 10" => writers::<L>(2, 10),
        "2 readers + 1 writer x 5" => readers_and_writer::<L>(2, 5),
        "a writer waits for a reader x 10" => meeting::<L>(Waits::Writer, 1, 10),
        "2 readers wait for a writer x 10" => meeting::<L>(Waits::Readers, 2, 10),
        "try_lock x lock" => try_against_lock::<L>(6),
        _ => return None,
    }
    Some(())
}

/// `threads` writers each add one `iterations` times.
fn writers<L: RawRwLock>(threads: u64, iterations: u64) {
    let (lock, data) = (L::new(), Plain::new());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                for _ in 0..iterations {
                    lock.write_lock();
                    // SAFETY: we hold the lock exclusively.
                    unsafe { data.bump() };
                    lock.write_unlock();
                }
            });
        }
    });
    assert_eq!(data.into_inner(), threads * iterations, "lost updates");
}

/// One writer adds one `iterations` times while `readers` readers each
/// read the counter twice `iterations` times: it must not move under them.
fn readers_and_writer<L: RawRwLock>(readers: u64, iterations: u64) {
    let (lock, data) = (L::new(), Plain::new());
    std::thread::scope(|s| {
        s.spawn(|| {
            for _ in 0..iterations {
                lock.write_lock();
                // SAFETY: we hold the lock exclusively.
                unsafe { data.bump() };
                lock.write_unlock();
            }
        });
        for _ in 0..readers {
            s.spawn(|| {
                for _ in 0..iterations {
                    lock.read_lock();
                    // SAFETY: we hold the lock shared.
                    let (a, b) = unsafe { data.read_twice() };
                    lock.read_unlock();
                    assert_eq!(a, b, "a writer ran inside a read lock");
                }
            });
        }
    });
    assert_eq!(data.into_inner(), iterations, "lost updates");
}

/// Which side of [`meeting`] asks for the lock only while the other holds it.
#[derive(Clone, Copy, PartialEq)]
enum Waits {
    Writer,
    Readers,
}

/// Yields `1 + 4 * i` times more in the `i`th critical section of the side
/// waited for: a waiter that spins a while and then parks (parking_lot's
/// RwLock) sees the holder leave early in its spin, late in it, and after
/// it parked, whatever the length of its spin.
fn linger(i: u64) {
    for _ in 0..1 + 4 * i {
        std::thread::yield_now();
    }
}

/// One writer adds one and `readers` readers read, `iterations` times each,
/// as in [`readers_and_writer`], but the side that `waits` asks for the
/// lock only once the other side holds it (or is done), and the other side
/// holds it longer each time ([`linger`]): every acquisition goes through
/// the wait for the other side to leave, the path a lock orders with its
/// slow-path loads, which chance alone met on a few seeds in 32. Who holds
/// the lock is told through `Relaxed` atomics, which order nothing: the
/// lock alone must.
fn meeting<L: RawRwLock>(waits: Waits, readers: u64, iterations: u64) {
    let (lock, data) = (L::new(), Plain::new());
    // Holders inside the lock, per side; threads of a side that finished.
    let (readers_in, writer_in) = (AtomicU64::new(0), AtomicU64::new(0));
    let (readers_done, writer_done) = (AtomicU64::new(0), AtomicU64::new(0));
    let wait_for = |inside: &AtomicU64, done: &AtomicU64, all: u64| {
        while inside.load(Relaxed) == 0 && done.load(Relaxed) < all {
            std::thread::yield_now();
        }
    };
    std::thread::scope(|s| {
        s.spawn(|| {
            for i in 0..iterations {
                if waits == Waits::Writer {
                    wait_for(&readers_in, &readers_done, readers);
                }
                lock.write_lock();
                writer_in.fetch_add(1, Relaxed);
                // SAFETY: we hold the lock exclusively.
                unsafe { data.bump() };
                if waits == Waits::Readers {
                    linger(i);
                }
                writer_in.fetch_sub(1, Relaxed);
                lock.write_unlock();
            }
            writer_done.fetch_add(1, Relaxed);
        });
        for _ in 0..readers {
            s.spawn(|| {
                for i in 0..iterations {
                    if waits == Waits::Readers {
                        wait_for(&writer_in, &writer_done, 1);
                    }
                    lock.read_lock();
                    readers_in.fetch_add(1, Relaxed);
                    // SAFETY: we hold the lock shared.
                    let (a, b) = unsafe { data.read_twice() };
                    if waits == Waits::Writer {
                        linger(i);
                    }
                    // SAFETY: as above.
                    let (c, _) = unsafe { data.read_twice() };
                    readers_in.fetch_sub(1, Relaxed);
                    lock.read_unlock();
                    assert!(a == b && b == c, "a writer ran inside a read lock");
                }
                readers_done.fetch_add(1, Relaxed);
            });
        }
    });
    assert_eq!(data.into_inner(), iterations, "lost updates");
}

/// One thread takes the lock with the try calls (yielding while it cannot),
/// exclusively and shared in turn; the other with the waiting calls.
fn try_against_lock<L: RawRwLock>(iterations: u64) {
    let (lock, data) = (L::new(), Plain::new());
    let section = |write: bool| {
        // SAFETY: the caller holds the lock, exclusively when `write`.
        unsafe {
            match write {
                true => data.bump(),
                false => {
                    let (a, b) = data.read_twice();
                    assert_eq!(a, b, "a writer ran inside a read lock");
                }
            }
        }
    };
    std::thread::scope(|s| {
        s.spawn(|| {
            for i in 0..iterations {
                let write = i % 2 == 0;
                while lock.try_lock(write) != Some(true) {
                    std::thread::yield_now();
                }
                section(write);
                match write {
                    true => lock.write_unlock(),
                    false => lock.read_unlock(),
                }
            }
        });
        s.spawn(|| {
            for i in 0..iterations {
                let write = i % 2 == 1;
                match write {
                    true => lock.write_lock(),
                    false => lock.read_lock(),
                }
                section(write);
                match write {
                    true => lock.write_unlock(),
                    false => lock.read_unlock(),
                }
            }
        });
    });
    assert_eq!(data.into_inner(), iterations, "lost updates");
}
