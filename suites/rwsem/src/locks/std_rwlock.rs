//! `std::sync::RwLock<()>` driven through the raw lock/unlock interface.
//!
//! Why it is shaped so: it is the baseline every Rust user has (on Linux a
//! futex-based, writer-preferring lock), so the Linux-style rwsem and the
//! spinlock are measured against it. std only unlocks by dropping a guard,
//! and the benchmark locks and unlocks in separate calls, so the guard must
//! outlive `read_lock`/`write_lock`. Done without `unsafe`:
//!
//! - the `RwLock` is leaked (`Box::leak`, one small allocation per lock
//!   created; the benchmark creates one per round), so its guards are
//!   `'static`;
//! - each thread keeps the guards it holds in a thread-local list, tagged
//!   with the lock, and the unlock call drops the matching one. Guards never
//!   change threads, as std requires.
//!
//! The thread-local bookkeeping (a push and a pop on a short vector) is part
//! of what this lock's numbers measure. std's `RwLock` does not expose its
//! internals, so it reports no slow-path counts.

use super::{RawRwLock, Slowpaths};
use std::cell::RefCell;
use std::sync::{PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard, TryLockError};

/// A held guard; never read, only kept until it is dropped.
#[allow(dead_code)]
enum Guard {
    Read(RwLockReadGuard<'static, ()>),
    Write(RwLockWriteGuard<'static, ()>),
}

thread_local! {
    /// The guards this thread holds, with the lock each belongs to.
    static HELD: RefCell<Vec<(&'static RwLock<()>, Guard)>> = const { RefCell::new(Vec::new()) };
}

pub struct StdRwLock {
    lock: &'static RwLock<()>,
}

impl StdRwLock {
    fn keep(&self, guard: Guard) {
        HELD.with_borrow_mut(|held| held.push((self.lock, guard)));
    }

    /// Takes back the most recent guard of this lock of the given kind.
    fn take(&self, write: bool) -> Guard {
        HELD.with_borrow_mut(|held| {
            let at = held
                .iter()
                .rposition(|(lock, guard)| {
                    std::ptr::eq(*lock, self.lock) && matches!(guard, Guard::Write(_)) == write
                })
                .unwrap_or_else(|| panic!("unlock of a std_rwlock this thread does not hold"));
            held.swap_remove(at).1
        })
    }
}

impl RawRwLock for StdRwLock {
    const NAME: &'static str = "std_rwlock";
    const CRATE: &'static str = "std";

    fn new() -> Self {
        StdRwLock {
            lock: Box::leak(Box::new(RwLock::new(()))),
        }
    }

    fn read_lock(&self) {
        let guard = self.lock.read().unwrap_or_else(PoisonError::into_inner);
        self.keep(Guard::Read(guard));
    }

    fn read_unlock(&self) {
        drop(self.take(false));
    }

    fn write_lock(&self) {
        let guard = self.lock.write().unwrap_or_else(PoisonError::into_inner);
        self.keep(Guard::Write(guard));
    }

    fn write_unlock(&self) {
        drop(self.take(true));
    }

    fn slowpaths(&self) -> Option<Slowpaths> {
        None
    }

    fn try_lock(&self, write: bool) -> Option<bool> {
        let guard = match write {
            true => self
                .lock
                .try_write()
                .map(Guard::Write)
                .map_err(|e| match e {
                    TryLockError::Poisoned(p) => Some(Guard::Write(p.into_inner())),
                    TryLockError::WouldBlock => None,
                }),
            false => self.lock.try_read().map(Guard::Read).map_err(|e| match e {
                TryLockError::Poisoned(p) => Some(Guard::Read(p.into_inner())),
                TryLockError::WouldBlock => None,
            }),
        };
        match guard {
            Ok(g) | Err(Some(g)) => {
                self.keep(g);
                Some(true)
            }
            Err(None) => Some(false),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn guards_live_between_lock_and_unlock() {
        let (a, b) = (StdRwLock::new(), StdRwLock::new());
        a.read_lock();
        a.read_lock();
        b.write_lock();
        assert!(a.lock.try_write().is_err());
        assert!(b.lock.try_read().is_err());
        a.read_unlock();
        assert!(a.lock.try_write().is_err());
        a.read_unlock();
        assert!(a.lock.try_write().is_ok());
        b.write_unlock();
        assert!(b.lock.try_read().is_ok());
        assert_eq!(HELD.with_borrow(Vec::len), 0);
    }

    #[test]
    #[should_panic(expected = "does not hold")]
    fn unlocking_what_is_not_held_panics() {
        StdRwLock::new().read_unlock();
    }
}
