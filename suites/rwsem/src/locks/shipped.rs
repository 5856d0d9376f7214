//! The reader-writer locks people ship, measured beside the ones written
//! here: each crate's own `lock_api::RawRwLock`, called as its `RwLock`
//! calls it. (std's `RwLock` is `std_rwlock.rs`.) Adding another is one
//! line here and one in `main.rs`'s `LOCKS`.
//!
//! - parking_lot's `RwLock`: task-fair, a writer waiting blocks new readers,
//!   parking through a global table of wait queues;
//! - spin's `RwLock`: a spinning reader count with a writer bit, readers
//!   preferred.

use super::{RawRwLock, Slowpaths};

/// A `lock_api::RawRwLock` as a [`RawRwLock`] named `$name`, from `$krate`.
/// The trait's methods are called by name, never a type's inherent ones.
macro_rules! raw_rwlock {
    ($ty:ident, $raw:ty, $name:literal, $krate:literal) => {
        pub struct $ty($raw);

        impl RawRwLock for $ty {
            const NAME: &'static str = $name;
            const CRATE: &'static str = $krate;

            fn new() -> $ty {
                $ty(<$raw as lock_api::RawRwLock>::INIT)
            }

            fn read_lock(&self) {
                <$raw as lock_api::RawRwLock>::lock_shared(&self.0);
            }

            fn read_unlock(&self) {
                // SAFETY: the caller holds a read lock (RawRwLock's contract:
                // this suite unlocks only what it locked).
                unsafe { <$raw as lock_api::RawRwLock>::unlock_shared(&self.0) }
            }

            fn write_lock(&self) {
                <$raw as lock_api::RawRwLock>::lock_exclusive(&self.0);
            }

            fn write_unlock(&self) {
                // SAFETY: the caller holds the write lock.
                unsafe { <$raw as lock_api::RawRwLock>::unlock_exclusive(&self.0) }
            }

            fn slowpaths(&self) -> Option<Slowpaths> {
                None
            }

            fn try_lock(&self, write: bool) -> Option<bool> {
                Some(match write {
                    true => <$raw as lock_api::RawRwLock>::try_lock_exclusive(&self.0),
                    false => <$raw as lock_api::RawRwLock>::try_lock_shared(&self.0),
                })
            }
        }
    };
}

raw_rwlock!(
    ParkingLotRwLock,
    parking_lot::RawRwLock,
    "parking_lot_rwlock",
    "parking_lot"
);
raw_rwlock!(SpinRwLock, spin::RwLock<()>, "spin_rwlock", "spin");
