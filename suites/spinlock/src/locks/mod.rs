//! The lock algorithms under test, one per file, behind one trait.
//!
//! Every lock is a plain value with `lock(&self)` / `unlock(&self)`; the
//! suite is generic over the lock type (see [`visit`]) so each algorithm's
//! fast path is inlined into the benchmark loop instead of called through a
//! vtable, as the kernel's `arch_spin_lock()` is in seed 001.
//!
//! Only 32-bit and pointer-sized atomics are used (32-bit mips has no 64-bit
//! atomics), never two atomic sizes on one location (Rust's memory model has
//! no mixed-size atomics), and no inline assembly.

#[cfg(feature = "broken-lock")]
pub mod broken;
pub mod mcs;
pub mod qspinlock;
pub mod std_mutex;
pub mod tas;
pub mod ticket;
pub mod ttas;

/// A mutual-exclusion lock with no data attached.
///
/// `unlock` must be called by the thread that called `lock`, once per
/// `lock`; locks with per-thread queue nodes (MCS, qspinlock) and the
/// std mutex rely on it.
pub trait RawLock: Sync + Send + Sized {
    /// The name used in `--lock`, case objects and the `env` record.
    const NAME: &'static str;
    fn new() -> Self;
    /// Acquires the lock (Acquire ordering at least).
    fn lock(&self);
    /// Releases the lock (Release ordering at least).
    fn unlock(&self);
}

/// Every lock built into this binary, in the order the suite runs them.
pub const NAMES: &[&str] = &[
    tas::Tas::NAME,
    ttas::Ttas::NAME,
    ticket::Ticket::NAME,
    mcs::Mcs::NAME,
    qspinlock::QSpinLock::NAME,
    std_mutex::StdMutex::NAME,
    #[cfg(feature = "broken-lock")]
    broken::Broken::NAME,
];

/// Something to do with one lock type: the suite's benchmarks implement it
/// and [`visit`] picks the type by name.
pub trait LockVisitor {
    type Output;
    fn visit<L: RawLock>(self) -> Self::Output;
}

/// Calls `v.visit::<L>()` for the lock named `name`; `None` if there is none.
pub fn visit<V: LockVisitor>(name: &str, v: V) -> Option<V::Output> {
    macro_rules! by_name {
        ($($lock:ty),* $(,)?) => {$(
            if name == <$lock>::NAME {
                return Some(v.visit::<$lock>());
            }
        )*};
    }
    by_name!(
        tas::Tas,
        ttas::Ttas,
        ticket::Ticket,
        mcs::Mcs,
        qspinlock::QSpinLock,
        std_mutex::StdMutex,
    );
    #[cfg(feature = "broken-lock")]
    by_name!(broken::Broken);
    None
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
        core::hint::spin_loop();
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
    std::thread::yield_now();
}

#[cfg(test)]
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
        for &name in NAMES {
            assert_eq!(visit(name, Name), Some(name));
        }
        assert_eq!(visit("no_such_lock", Name), None);
        assert_eq!(NAMES.contains(&"broken"), cfg!(feature = "broken-lock"));
    }
}
