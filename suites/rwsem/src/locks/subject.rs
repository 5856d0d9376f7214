//! The reader-writer locks of the lock crate under test (`cargo xtask
//! matrix --crate`), as [`RawRwLock`]s: the `subject` crate lists them and
//! wraps each crate's `lock_api::RawRwLock`; they run through the same
//! benchmark, checks and probes as the suite's own.

use super::{RawRwLock, Slowpaths};

/// Reader-writer lock `R` of the crate under test.
pub struct Subject<R>(R);

impl<R: subject::RwLock> RawRwLock for Subject<R> {
    const NAME: &'static str = R::NAME;
    const CRATE: &'static str = R::CRATE;

    fn new() -> Self {
        Subject(R::new())
    }

    fn read_lock(&self) {
        self.0.lock_shared();
    }

    fn read_unlock(&self) {
        // SAFETY: the suite only unlocks what it locked (RawRwLock's doc).
        unsafe { self.0.unlock_shared() }
    }

    fn write_lock(&self) {
        self.0.lock_exclusive();
    }

    fn write_unlock(&self) {
        // SAFETY: as above, the caller holds the write lock.
        unsafe { self.0.unlock_exclusive() }
    }

    fn slowpaths(&self) -> Option<Slowpaths> {
        None
    }

    fn try_lock(&self, write: bool) -> Option<bool> {
        Some(match write {
            true => self.0.try_lock_exclusive(),
            false => self.0.try_lock_shared(),
        })
    }
}
