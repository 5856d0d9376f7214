//! The lock algorithms under test, one per file, behind one trait.
//!
//! Every lock is a plain value with `lock` / `unlock` (and, if it needs
//! one, a per-acquisition node the caller owns); the suite is generic over
//! the lock type (see [`visit`]) so each algorithm's fast path is inlined
//! into the benchmark loop instead of called through a vtable, as the
//! kernel's `arch_spin_lock()` is in seed 001.
//!
//! No atomics wider than 32 bits or a pointer are used (32-bit mips has no
//! 64-bit atomics), and no inline assembly. Only qspinlock uses two atomic
//! sizes on one location (Rust's memory model has no mixed-size atomics):
//! byte and halfword accesses to its 32-bit word, as Linux does; its module
//! doc says what that assumes. `shipped.rs` measures other crates' locks
//! (parking_lot, spin) through `lock_api`.

use crate::events::{Event, Events};

#[cfg(feature = "broken-lock")]
pub mod broken;
pub mod mcs;
pub mod qspinlock;
// The lock crate under test (`--crate`): not built under loom, as shipped.
#[cfg(not(loom))]
pub mod subject;
// Not model-checked, so not built under loom: std's and other crates' locks
// are not made of `crate::sync`'s atomics, so loom cannot see inside them,
// and swapping in loom's own Mutex would check loom, not them.
#[cfg(not(loom))]
pub mod shipped;
#[cfg(not(loom))]
pub mod std_mutex;
pub mod tas;
pub mod ticket;
pub mod ttas;

/// A mutual-exclusion lock with no data attached.
///
/// Some locks need state per acquisition that the caller owns and keeps in
/// place until unlock: an MCS or CLH queue node, ck's `LOCK_STATE`. That is
/// [`RawLock::Node`]; locks that need none use `()`. The benchmark gives
/// each thread one node, created once, for all its acquisitions.
pub trait RawLock: Sync + Send + Sized {
    /// The name used in `--lock`, case objects and the `env` record.
    const NAME: &'static str;
    /// The crate the algorithm comes from, for the report ("lockmatrix" for
    /// the locks written here): the xtask looks its version up in
    /// Cargo.lock.
    const CRATE: &'static str = "lockmatrix";
    /// What one acquisition needs besides the lock (`()` for most).
    type Node: Default;
    /// The events this lock counts on its slow paths, printed per
    /// acquisition (`crate::events`); none for a lock whose insides are
    /// not ours to count.
    const EVENTS: &'static [Event] = &[];
    /// What a round's event counts of this lock must satisfy, beside
    /// nothing counted on one thread (`check.rs`): `Err` says which
    /// invariant broke.
    fn check_events(events: &Events, acquisitions: u64, threads: usize) -> Result<(), String> {
        let _ = (events, acquisitions, threads);
        Ok(())
    }
    fn new() -> Self;
    /// Acquires the lock (Acquire ordering at least).
    ///
    /// # Safety
    /// `node` stays where it is, used by nothing else, until the matching
    /// [`RawLock::unlock`] with the same node has returned.
    unsafe fn lock(&self, node: &Self::Node);
    /// Releases the lock (Release ordering at least).
    ///
    /// # Safety
    /// The calling thread holds the lock, taken with this `node`.
    unsafe fn unlock(&self, node: &Self::Node);
    /// Takes the lock if it is free, without waiting: whether it did, or
    /// `None` for a lock without one here. The Miri clients run it
    /// against `lock` (the locks written here are loom's to check).
    ///
    /// # Safety
    /// As [`RawLock::lock`]; on `Some(true)` the caller holds the lock.
    // Only Miri's clients call it.
    #[cfg_attr(not(miri), allow(dead_code))]
    unsafe fn try_lock(&self, node: &Self::Node) -> Option<bool> {
        let _ = node;
        None
    }
}

/// The locks of this suite, in the order it runs them: adding one is its
/// file and one line here. Builds [`OWN_NAMES`] and [`visit_own`].
macro_rules! locks {
    ($($(#[$cfg:meta])* $lock:ty),* $(,)?) => {
        /// The suite's own locks built into this binary, in the order the
        /// suite runs them.
        pub const OWN_NAMES: &[&str] = &[$($(#[$cfg])* <$lock>::NAME),*];

        /// Calls `v.visit::<L>()` for the suite's own lock named `name`.
        pub fn visit_own<V: LockVisitor>(name: &str, v: V) -> Option<V::Output> {
            $(
                $(#[$cfg])*
                if name == <$lock>::NAME {
                    return Some(v.visit::<$lock>());
                }
            )*
            None
        }
    };
}

locks! {
    tas::Tas,
    ttas::Ttas,
    ticket::Ticket,
    mcs::Mcs,
    qspinlock::QSpinLock,
    #[cfg(not(loom))]
    std_mutex::StdMutex,
    #[cfg(not(loom))]
    shipped::ParkingLotMutex,
    #[cfg(not(loom))]
    shipped::ParkingLotFairMutex,
    #[cfg(not(loom))]
    shipped::SpinMutex,
    #[cfg(not(loom))]
    shipped::SpinTicketMutex,
    #[cfg(feature = "broken-lock")]
    broken::Broken,
}

/// The locks this binary runs, in order: the mutexes of the lock crate
/// under test when it was built with one (`--crate`: the comparison is
/// about that crate, and the suite's own locks would only cost time), else
/// the suite's own.
pub fn names() -> &'static [&'static str] {
    #[cfg(not(loom))]
    if !::subject::MUTEXES.is_empty() {
        return ::subject::MUTEXES;
    }
    OWN_NAMES
}

/// The crate lock `name` comes from ("lockmatrix" for the suite's own).
pub fn crate_of(name: &str) -> &'static str {
    struct Crate;
    impl LockVisitor for Crate {
        type Output = &'static str;
        fn visit<L: RawLock>(self) -> &'static str {
            L::CRATE
        }
    }
    visit(name, Crate).unwrap_or("?")
}

/// Calls `v.visit::<L>()` for the lock named `name` (one of [`names`] or
/// the suite's own); `None` if there is none.
pub fn visit<V: LockVisitor>(name: &str, v: V) -> Option<V::Output> {
    #[cfg(not(loom))]
    if ::subject::MUTEXES.contains(&name) {
        return subject::visit(name, v);
    }
    visit_own(name, v)
}

/// Something to do with one lock type: the suite's benchmarks implement it
/// and [`visit`] picks the type by name.
pub trait LockVisitor {
    type Output;
    fn visit<L: RawLock>(self) -> Self::Output;
}

/// Spin-waits this many iterations before yielding the CPU once (tens of
/// microseconds natively). Well above the wait of a lock handed between
/// running threads, so it does not change what is measured; it keeps a
/// waiter from burning whole time slices when the thread it waits for was
/// preempted (more threads than CPUs, or QEMU's vCPUs shared with other
/// work), where a FIFO lock would otherwise pay a time slice per hand-over.
/// Linux's paravirt locks do the same with `SPIN_THRESHOLD` (1 << 15) and a
/// halt; a user-space yield is cheaper and preemption far more common, so
/// the threshold is lower.
pub const SPIN_THRESHOLD: u32 = 1 << 12;

/// One spin-wait: the architecture's relax hint per iteration, and a yield
/// every [`SPIN_THRESHOLD`] iterations.
pub struct Spin(u32);

impl Spin {
    #[inline(always)]
    pub const fn new() -> Spin {
        Spin(0)
    }

    #[inline(always)]
    pub fn relax(&mut self) {
        // Under loom both are loom's yield (see `crate::sync`).
        crate::sync::hint::spin_loop();
        self.0 += 1;
        if self.0 >= SPIN_THRESHOLD {
            self.0 = 0;
            yield_now();
        }
    }
}

#[cold]
#[inline(never)]
fn yield_now() {
    crate::sync::thread::yield_now();
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    struct Name;
    impl LockVisitor for Name {
        type Output = &'static str;
        fn visit<L: RawLock>(self) -> &'static str {
            L::NAME
        }
    }

    #[test]
    fn every_name_dispatches_to_its_lock() {
        for &name in OWN_NAMES {
            assert_eq!(visit(name, Name), Some(name));
        }
        assert_eq!(visit("no_such_lock", Name), None);
        assert_eq!(OWN_NAMES.contains(&"broken"), cfg!(feature = "broken-lock"));
        // Built without a crate under test, the suite runs its own locks.
        assert_eq!(names(), OWN_NAMES);
        assert_eq!(crate_of("spin_mutex"), "spin");
    }
}
