//! spin 0.5's `RwLock<()>` as a `lock_api::RawRwLock`. A read lock takes a
//! guard and forgets it, and its unlock is spin's `force_read_decrement`,
//! which does what dropping the guard does. A write lock keeps its guard
//! until the unlock drops it: spin 0.5.2's `force_write_unlock` asserts
//! (debug builds, as Miri runs) that no reader is even trying, which a
//! reader's `try_read` in flight (its increment, then its undo) breaks,
//! where dropping the guard asserts only what holds.
#![no_std]

use core::cell::UnsafeCell;

pub struct RawSpinRwLock {
    lock: spin::RwLock<()>,
    /// The writer's guard, written and taken by the writer alone while it
    /// holds the lock exclusively.
    writer: UnsafeCell<Option<spin::RwLockWriteGuard<'static, ()>>>,
}

// SAFETY: `writer` is touched only by the thread holding the lock
// exclusively; the guard inside borrows `lock`, which lives as long.
unsafe impl Sync for RawSpinRwLock {}
unsafe impl Send for RawSpinRwLock {}

unsafe impl lock_api::RawRwLock for RawSpinRwLock {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: RawSpinRwLock = RawSpinRwLock {
        lock: spin::RwLock::new(()),
        writer: UnsafeCell::new(None),
    };
    type GuardMarker = lock_api::GuardSend;

    fn lock_shared(&self) {
        core::mem::forget(self.lock.read());
    }

    fn try_lock_shared(&self) -> bool {
        self.lock.try_read().map(core::mem::forget).is_some()
    }

    unsafe fn unlock_shared(&self) {
        self.lock.force_read_decrement();
    }

    fn lock_exclusive(&self) {
        let guard = self.lock.write();
        // SAFETY: we hold the lock exclusively (see `keep`).
        unsafe { self.keep(guard) };
    }

    fn try_lock_exclusive(&self) -> bool {
        match self.lock.try_write() {
            // SAFETY: as in `lock_exclusive`.
            Some(guard) => unsafe { self.keep(guard) },
            None => return false,
        }
        true
    }

    unsafe fn unlock_exclusive(&self) {
        // SAFETY: the caller holds the lock exclusively; dropping the
        // guard is spin's own unlock.
        drop(unsafe { (*self.writer.get()).take() });
    }
}

impl RawSpinRwLock {
    /// Keeps the writer's guard until `unlock_exclusive`.
    ///
    /// # Safety
    /// The caller holds the lock exclusively, through `guard`, and the
    /// lock does not move until the guard is dropped (a lock is not moved
    /// while locked: it is borrowed).
    unsafe fn keep(&self, guard: spin::RwLockWriteGuard<'_, ()>) {
        // SAFETY: the guard borrows `self.lock` and is dropped in
        // `unlock_exclusive`, before the lock can move or be dropped.
        let guard: spin::RwLockWriteGuard<'static, ()> = unsafe { core::mem::transmute(guard) };
        unsafe { *self.writer.get() = Some(guard) };
    }
}
