//! The reader-writer locks under test, behind one raw interface.
//!
//! The benchmark needs lock and unlock as separate calls (the critical
//! section is the benchmark's, not the lock's), so the interface is the raw
//! one of `lock_api` rather than guards. Each implementation lives in its own
//! file and says there why it is shaped the way it is.

use crate::events::{Event, Events};

pub mod fair_rwspin;
// Under loom the futex is `crate::sync::futex`, with loom's park and unpark.
#[cfg(not(loom))]
pub mod futex;
pub mod linux_rwsem;
// Not model-checked, so not built under loom: std's and other crates' locks
// are not made of `crate::sync`'s atomics, so loom cannot see inside them,
// and swapping in loom's own RwLock would check loom, not them.
#[cfg(not(loom))]
pub mod shipped;
#[cfg(not(loom))]
pub mod std_rwlock;
// The lock crate under test (`--crate`): not built under loom, as shipped.
#[cfg(not(loom))]
pub mod subject;

pub use fair_rwspin::FairRwSpin;
pub use linux_rwsem::LinuxRwsem;
#[cfg(not(loom))]
pub use shipped::{ParkingLotRwLock, SpinRwLock};
#[cfg(not(loom))]
pub use std_rwlock::StdRwLock;

/// How often each side left its fast path since the lock was created.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Slowpaths {
    pub reader: u64,
    pub writer: u64,
}

/// A reader-writer lock driven by explicit lock and unlock calls.
///
/// Unlocking a lock the calling thread does not hold in that mode is a logic
/// error: for the locks written here it may panic or corrupt the lock's
/// state, never more; the suite only unlocks what it locked, which the
/// adapters of other crates' locks (`shipped.rs`) rely on.
pub trait RawRwLock: Sync {
    /// The name `--lock` selects and the records carry.
    const NAME: &'static str;
    /// The crate the algorithm comes from, for the report ("lockmatrix" for
    /// the locks written here): the xtask looks its version up in
    /// Cargo.lock.
    const CRATE: &'static str = "lockmatrix";

    fn new() -> Self;
    fn read_lock(&self);
    fn read_unlock(&self);
    fn write_lock(&self);
    fn write_unlock(&self);

    /// Slow-path entries per side, or `None` when the lock has no slow path
    /// it can see (std's `RwLock` keeps its own internals).
    fn slowpaths(&self) -> Option<Slowpaths>;

    /// The events this lock counts on its slow paths (`crate::events`),
    /// printed per acquisition of their side; none for a lock whose
    /// insides are not ours to count.
    const EVENTS: &'static [Event] = &[];

    /// What this lock's event counts of a round (`events`, over
    /// `reader_ops` and `writer_ops` acquisitions), with what the lock
    /// counted itself, must satisfy: `Err` says which invariant broke.
    fn check_events(
        &self,
        events: &Events,
        reader_ops: u64,
        writer_ops: u64,
    ) -> Result<(), String> {
        let _ = (events, reader_ops, writer_ops);
        Ok(())
    }

    /// Takes the lock shared or exclusively (`write`) if it can without
    /// waiting: whether it did, or `None` for a lock without a try-lock
    /// here. The Miri clients run it against the waiting calls (the locks
    /// written here are loom's to check).
    // Only Miri's clients call it.
    #[cfg_attr(not(miri), allow(dead_code))]
    fn try_lock(&self, write: bool) -> Option<bool> {
        let _ = write;
        None
    }
}

/// Spin-wait step shared by the spinning locks: a CPU relax hint, and after
/// a while a yield, so that a waiter does not burn a whole time slice while
/// the holder is preempted (more threads than CPUs, or a busy emulator host).
#[inline]
pub(crate) fn relax(spins: &mut u32) {
    const YIELD_AFTER: u32 = 1 << 10;
    // Under loom both are loom's yield (see `crate::sync`).
    if *spins < YIELD_AFTER {
        *spins += 1;
        crate::sync::hint::spin_loop();
    } else {
        crate::sync::thread::yield_now();
    }
}
