//! The mutexes of the lock crate under test (`cargo xtask matrix --crate`),
//! as [`RawLock`]s. The `subject` crate lists them and wraps each crate's
//! `lock_api::RawMutex`; this adapts its visitor to the suite's, so they
//! run through the same benchmarks, checks and probes as every other lock.

use super::{LockVisitor, RawLock};

/// Mutex `M` of the crate under test.
pub struct Subject<M>(M);

impl<M: subject::Mutex> RawLock for Subject<M> {
    const NAME: &'static str = M::NAME;
    const CRATE: &'static str = M::CRATE;
    type Node = ();

    fn new() -> Self {
        Subject(M::new())
    }

    #[inline]
    unsafe fn lock(&self, _: &()) {
        self.0.lock();
    }

    #[inline]
    unsafe fn unlock(&self, _: &()) {
        // SAFETY: RawLock's contract: the caller holds the lock.
        unsafe { self.0.unlock() }
    }

    #[inline]
    unsafe fn try_lock(&self, _: &()) -> Option<bool> {
        Some(self.0.try_lock())
    }
}

struct Adapt<V>(V);

impl<V: LockVisitor> subject::MutexVisitor for Adapt<V> {
    type Output = V::Output;
    fn visit<M: subject::Mutex>(self) -> V::Output {
        self.0.visit::<Subject<M>>()
    }
}

/// Calls `v.visit::<L>()` for the crate under test's mutex named `name`.
pub fn visit<V: LockVisitor>(name: &str, v: V) -> Option<V::Output> {
    subject::visit_mutex(name, Adapt(v))
}
