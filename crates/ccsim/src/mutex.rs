//! A mutex for the simulated machine: std's own Linux algorithm
//! (`library/std/src/sys/sync/mutex/futex.rs`: 0 unlocked, 1 locked, 2
//! locked with sleepers; a bounded spin of 100 polls, then `FUTEX_WAIT`),
//! made of this crate's atomics and futex, so the lock word's traffic and
//! the sleeps are priced like the rest.

use crate::atomic::{AtomicU32, Ordering::*};
use std::cell::UnsafeCell;
use std::ops::{Deref, DerefMut};
use std::sync::{LockResult, PoisonError};

pub struct Mutex<T> {
    state: AtomicU32,
    data: UnsafeCell<T>,
}

// SAFETY: the data is reached only through a guard, one at a time.
unsafe impl<T: Send> Sync for Mutex<T> {}
unsafe impl<T: Send> Send for Mutex<T> {}

pub struct MutexGuard<'a, T> {
    lock: &'a Mutex<T>,
}

impl<T> Mutex<T> {
    pub const fn new(t: T) -> Mutex<T> {
        Mutex {
            state: AtomicU32::new(0),
            data: UnsafeCell::new(t),
        }
    }

    /// Never poisoned: a panicking vCPU aborts the whole simulation.
    pub fn lock(&self) -> LockResult<MutexGuard<'_, T>> {
        if self.state.compare_exchange(0, 1, Acquire, Relaxed).is_err() {
            self.lock_contended();
        }
        Ok::<_, PoisonError<MutexGuard<'_, T>>>(MutexGuard { lock: self })
    }

    #[cold]
    fn lock_contended(&self) {
        let mut state = self.spin();
        if state == 0 {
            match self.state.compare_exchange(0, 1, Acquire, Relaxed) {
                Ok(_) => return,
                Err(s) => state = s,
            }
        }
        loop {
            if state != 2 && self.state.swap(2, Acquire) == 0 {
                return;
            }
            crate::futex::wait(&self.state, 2);
            state = self.spin();
        }
    }

    fn spin(&self) -> u32 {
        let mut spin = 100;
        loop {
            let state = self.state.load(Relaxed);
            if state != 1 || spin == 0 {
                return state;
            }
            // std's bounded spin: its hint is not a wait for a write (it
            // gives up after 100 polls), so not the sleeping one.
            core::hint::spin_loop();
            spin -= 1;
        }
    }

    fn unlock(&self) {
        if self.state.swap(0, Release) == 2 {
            crate::futex::wake_one(&self.state);
        }
    }
}

impl<T: Default> Default for Mutex<T> {
    fn default() -> Mutex<T> {
        Mutex::new(T::default())
    }
}

impl<T> Deref for MutexGuard<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        // SAFETY: the guard holds the lock.
        unsafe { &*self.lock.data.get() }
    }
}

impl<T> DerefMut for MutexGuard<'_, T> {
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: the guard holds the lock.
        unsafe { &mut *self.lock.data.get() }
    }
}

impl<T> Drop for MutexGuard<'_, T> {
    fn drop(&mut self) {
        self.lock.unlock();
    }
}
