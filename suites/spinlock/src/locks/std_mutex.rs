//! `std::sync::Mutex<()>`, the reference every spinlock is measured against.
//!
//! On Linux it is a futex word: one compare-exchange to lock and one swap to
//! unlock when uncontended, a short spin, then sleeping in the kernel. It
//! trades raw hand-over latency (a futex wake is a system call and a
//! context switch) for not burning CPUs while waiting, which is what wins
//! once threads outnumber CPUs.
//!
//! `Mutex` only unlocks by dropping its guard, so `lock` stores the guard in
//! the lock and `unlock` takes it out and drops it. The mutex lives on the
//! heap, at an address that does not move with the lock value, so the guard
//! may borrow it for as long as the lock exists.

use super::RawLock;
use std::cell::UnsafeCell;
use std::ptr::NonNull;
use std::sync::{Mutex, MutexGuard, PoisonError, TryLockError};

pub struct StdMutex {
    /// The holder's guard; written only by the holder. Declared before
    /// `mutex` and dropped first (see `Drop`).
    guard: UnsafeCell<Option<MutexGuard<'static, ()>>>,
    /// From `Box::into_raw`; freed in `Drop`.
    mutex: NonNull<Mutex<()>>,
}

// SAFETY: `guard` is only touched by the thread holding the mutex (written
// after locking, taken before unlocking), so the mutex serialises all access
// to it; `unlock` runs on the thread that locked (a `RawLock` rule), so the
// guard is dropped on the thread that created it.
unsafe impl Sync for StdMutex {}
unsafe impl Send for StdMutex {}

impl RawLock for StdMutex {
    const NAME: &'static str = "std_mutex";
    const CRATE: &'static str = "std";
    type Node = ();

    fn new() -> StdMutex {
        StdMutex {
            guard: UnsafeCell::new(None),
            mutex: NonNull::from(Box::leak(Box::new(Mutex::new(())))),
        }
    }

    #[inline]
    unsafe fn lock(&self, _: &()) {
        // SAFETY: the mutex outlives every guard: `Drop` drops the guard
        // before freeing it.
        let mutex: &'static Mutex<()> = unsafe { self.mutex.as_ref() };
        let guard = mutex.lock().unwrap_or_else(PoisonError::into_inner);
        // SAFETY: we hold the mutex, so nobody else touches `guard`.
        unsafe { *self.guard.get() = Some(guard) };
    }

    #[inline]
    unsafe fn unlock(&self, _: &()) {
        // SAFETY: we hold the mutex (the caller locked it); the guard is
        // moved out before the mutex is released by dropping it.
        let guard = unsafe { (*self.guard.get()).take() };
        debug_assert!(guard.is_some(), "unlock of an unlocked StdMutex");
        drop(guard);
    }

    #[inline]
    unsafe fn try_lock(&self, _: &()) -> Option<bool> {
        // SAFETY: as in `lock`.
        let mutex: &'static Mutex<()> = unsafe { self.mutex.as_ref() };
        let guard = match mutex.try_lock() {
            Ok(guard) => guard,
            Err(TryLockError::Poisoned(p)) => p.into_inner(),
            Err(TryLockError::WouldBlock) => return Some(false),
        };
        // SAFETY: as in `lock`: we hold the mutex now.
        unsafe { *self.guard.get() = Some(guard) };
        Some(true)
    }
}

impl Drop for StdMutex {
    fn drop(&mut self) {
        drop(self.guard.get_mut().take());
        // SAFETY: allocated by `Box::leak` in `new`, no guard borrows it now.
        drop(unsafe { Box::from_raw(self.mutex.as_ptr()) });
    }
}
