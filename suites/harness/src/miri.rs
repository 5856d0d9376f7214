//! The Miri clients' runner: a suite binary run under Miri (`cargo miri
//! run`, which sets `cfg(miri)`) runs one client of one lock instead of its
//! benchmarks. Miri's data-race detector reports two accesses to plain
//! memory with no happens-before between them, and its weak-memory
//! emulation lets a load return a stale value a weak machine could, so a
//! lock that orders too little shows as a race on the data it protects.
//!
//! - `--list`: one JSON line per lock and client, for the tool to read:
//!   `miri_client` with `suite`, `lock`, `crate`, `client`, `covers`,
//!   `seeds` and `preemption_rate` (the Miri flags the client was chosen
//!   with, `docs/ordering.md`);
//! - `--lock NAME --client NAME`: runs that client once; the tool runs it
//!   under `-Zmiri-many-seeds`, one interpretation per seed.
//!
//! Exit status 0 when the client finished and its data adds up, 2 for bad
//! flags; a race or a deadlock is Miri's error (exit 1), a wrong total or
//! a lock's own assertion a panic that aborts the seed.
//! Nothing else is printed: what Miri reports is the result.

use crate::json::obj;
use std::cell::UnsafeCell;
use std::process::ExitCode;

/// One client: a shape of threads and critical sections run on a lock.
pub struct Client {
    /// e.g. "2 threads x 10".
    pub name: &'static str,
    /// What it exercises, in a sentence.
    pub covers: &'static str,
    /// Seeds to run it with (`-Zmiri-many-seeds=0..seeds`).
    pub seeds: u32,
    /// `-Zmiri-preemption-rate`: how often Miri switches threads where
    /// the program does not yield (0: only at yields and blocking calls).
    pub preemption_rate: f64,
}

/// `-Zmiri-preemption-rate` of every client: Miri's own default. At 0
/// Miri switches threads only where one yields or blocks, and a waiter
/// that spins without a spin hint (spin 0.5.0's writer retrying its
/// compare-exchange) then never lets the holder run: one seed did not end
/// in 300 s, where at 0.01 it raced in under a second. Against parking_lot
/// 0.11.0's RwLock bug 0 and 0.01 caught alike (31 of 32 seeds).
pub const PREEMPTION_RATE: f64 = 0.01;

/// The data a lock protects: plain memory, so that two critical sections
/// with no happens-before between them are a race Miri reports, not luck.
pub struct Plain(UnsafeCell<u64>);

// SAFETY: shared only under the lock being checked; a lock that fails to
// serialise the accesses is exactly what Miri is asked to report.
unsafe impl Sync for Plain {}

impl Plain {
    pub const fn new() -> Plain {
        Plain(UnsafeCell::new(0))
    }

    /// Adds one, yielding between the read and the write: the holder
    /// leaves the CPU inside its critical section, so the waiters reach
    /// the lock's slow paths (queueing, parking, hand-off).
    ///
    /// # Safety
    /// The caller holds the lock exclusively.
    pub unsafe fn bump(&self) {
        // SAFETY: the caller's exclusive lock serialises the accesses.
        let v = unsafe { self.0.get().read() };
        std::thread::yield_now();
        unsafe { self.0.get().write(v + 1) };
    }

    /// Reads twice with a yield between: a reader's view, which no writer
    /// may change while it holds the lock shared.
    ///
    /// # Safety
    /// The caller holds the lock, shared or exclusively.
    pub unsafe fn read_twice(&self) -> (u64, u64) {
        // SAFETY: the caller's lock excludes writers.
        let a = unsafe { self.0.get().read() };
        std::thread::yield_now();
        (a, unsafe { self.0.get().read() })
    }

    pub fn into_inner(self) -> u64 {
        self.0.into_inner()
    }
}

impl Default for Plain {
    fn default() -> Plain {
        Plain::new()
    }
}

/// Runs the binary's Miri mode: `locks` are (name, crate) of the locks
/// checked, `clients` the suite's, and `run(lock, client)` runs one
/// (`None`: no such lock). A client asserts its own totals.
pub fn main(
    suite: &str,
    locks: &[(&'static str, &'static str)],
    clients: &[Client],
    run: impl Fn(&str, &str) -> Option<()>,
) -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let value = |flag: &str| {
        args.iter()
            .position(|a| a == flag)
            .and_then(|i| args.get(i + 1))
    };
    if args.iter().any(|a| a == "--list") {
        for &(lock, krate) in locks {
            for c in clients {
                let record = obj([
                    ("type", "miri_client".into()),
                    ("suite", suite.into()),
                    ("lock", lock.into()),
                    ("crate", krate.into()),
                    ("client", c.name.into()),
                    ("covers", c.covers.into()),
                    ("seeds", u64::from(c.seeds).into()),
                    ("preemption_rate", c.preemption_rate.into()),
                ]);
                println!("{record}");
            }
        }
        return ExitCode::SUCCESS;
    }
    // A client thread that panics (a wrong total, an assertion in the lock)
    // ends the seed there: unwinding, it would leave the lock held and the
    // other threads waiting for ever, a time-out instead of the message.
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        report(info);
        std::process::abort();
    }));
    let (Some(lock), Some(client)) = (value("--lock"), value("--client")) else {
        eprintln!("usage: --list | --lock NAME --client NAME");
        return ExitCode::from(2);
    };
    if !locks.iter().any(|&(l, _)| l == lock) || !clients.iter().any(|c| c.name == client) {
        eprintln!("no lock {lock:?} with client {client:?} here (see --list)");
        return ExitCode::from(2);
    }
    match run(lock, client) {
        Some(()) => ExitCode::SUCCESS,
        None => {
            eprintln!("lock {lock:?} has no client {client:?}");
            ExitCode::from(2)
        }
    }
}
