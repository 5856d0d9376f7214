//! The Miri clients of the reader-writer locks loom cannot check: other
//! crates' locks (parking_lot, spin, the crate under test) and std's, run
//! unmodified under Miri (`harness::miri`). Writers add one to a plain
//! counter and readers read it twice, each yielding inside its critical
//! section, so that writers wait for readers and readers for writers (the
//! slow paths); Miri reports a race on the counter when an unlock does not
//! happen-before the next conflicting lock. Seeds and preemption rates
//! were chosen against published bugs (`docs/ordering.md`, "Miri"):
//! parking_lot 0.11.0's RwLock ordering bug raced only where readers
//! meet a writer (1 of 8 seeds each), never with writers alone (0 of 24),
//! so the reader-writer clients get the seeds.

use crate::locks::{self, RawRwLock};
use harness::miri::{Client, Plain};
use std::process::ExitCode;

/// The clients, with the Miri flags each runs with.
pub const CLIENTS: &[Client] = &[
    Client {
        name: "2 writers x 10",
        covers: "writer-writer exclusion and unlock-to-lock happens-before, the lock handed back and forth",
        seeds: 8,
        preemption_rate: 0.0,
    },
    Client {
        name: "2 readers + 1 writer x 5",
        covers: "a writer waiting for readers and readers for a writer; each unlock happens-before the next conflicting lock",
        seeds: 16,
        preemption_rate: 0.0,
    },
    Client {
        name: "try_lock x lock",
        covers: "critical sections entered by try_lock_exclusive and try_lock_shared are ordered against the waiting calls'",
        seeds: 16,
        preemption_rate: 0.0,
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
