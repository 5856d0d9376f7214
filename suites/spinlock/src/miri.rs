//! The Miri clients of the mutexes loom cannot check: other crates' locks
//! (parking_lot, spin, the crate under test) and std's, run unmodified
//! under Miri (`harness::miri`). Each client takes the lock around a
//! plain counter and yields inside the critical section, so that waiters
//! queue, spin or park (the slow paths) and the holder hands the lock on;
//! Miri reports a race on the counter when an unlock does not
//! happen-before the next lock. Seeds and the preemption rate were chosen
//! against published bugs (`docs/ordering.md`, "Miri").

use crate::locks::{self, LockVisitor, RawLock};
use harness::miri::{Client, Plain, PREEMPTION_RATE};
use std::process::ExitCode;

/// The clients, with the Miri flags each runs with.
pub const CLIENTS: &[Client] = &[
    Client {
        name: "2 threads x 10",
        covers: "mutual exclusion and unlock-to-lock happens-before, two threads handing the lock back and forth",
        seeds: 16,
        preemption_rate: PREEMPTION_RATE,
    },
    Client {
        name: "3 threads x 4",
        covers: "two waiters queued behind the holder (spinning or parked), woken in turn",
        seeds: 8,
        preemption_rate: PREEMPTION_RATE,
    },
    Client {
        name: "try_lock x lock",
        covers: "a critical section entered by try_lock is ordered after the last unlock, and the other way round",
        seeds: 8,
        preemption_rate: PREEMPTION_RATE,
    },
];

/// The locks checked: every lock of the binary not written here.
fn checked() -> Vec<(&'static str, &'static str)> {
    locks::names()
        .iter()
        .map(|&n| (n, locks::crate_of(n)))
        .filter(|&(_, krate)| krate != "lockmatrix")
        .collect()
}

pub fn main() -> ExitCode {
    harness::miri::main("spinlock", &checked(), CLIENTS, |lock, client| {
        locks::visit(lock, Run(client))?
    })
}

struct Run<'a>(&'a str);

impl LockVisitor for Run<'_> {
    type Output = Option<()>;
    fn visit<L: RawLock>(self) -> Option<()> {
        match self.0 {
            "2 threads x 10" => contended::<L>(2, 10),
            "3 threads x 4" => contended::<L>(3, 4),
            "try_lock x lock" => try_against_lock::<L>(10),
            _ => return None,
        }
        Some(())
    }
}

/// `threads` threads each add one `iterations` times under the lock.
fn contended<L: RawLock>(threads: u64, iterations: u64) {
    let (lock, data) = (L::new(), Plain::new());
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                let node = L::Node::default();
                for _ in 0..iterations {
                    // SAFETY: the node stays here until unlock; we hold the lock.
                    unsafe {
                        lock.lock(&node);
                        data.bump();
                        lock.unlock(&node);
                    }
                }
            });
        }
    });
    assert_eq!(data.into_inner(), threads * iterations, "lost updates");
}

/// One thread takes the lock with try_lock (yielding while it is held),
/// the other with lock, `iterations` times each.
fn try_against_lock<L: RawLock>(iterations: u64) {
    let (lock, data) = (L::new(), Plain::new());
    std::thread::scope(|s| {
        s.spawn(|| {
            let node = L::Node::default();
            for _ in 0..iterations {
                // SAFETY: as in `contended`; on true we hold the lock.
                unsafe {
                    while lock.try_lock(&node) != Some(true) {
                        std::thread::yield_now();
                    }
                    data.bump();
                    lock.unlock(&node);
                }
            }
        });
        s.spawn(|| {
            let node = L::Node::default();
            for _ in 0..iterations {
                // SAFETY: as in `contended`.
                unsafe {
                    lock.lock(&node);
                    data.bump();
                    lock.unlock(&node);
                }
            }
        });
    });
    assert_eq!(data.into_inner(), 2 * iterations, "lost updates");
}
