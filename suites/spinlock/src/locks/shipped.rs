//! The locks people ship, measured beside the ones written here: each
//! crate's own `lock_api::RawMutex`, called as its `Mutex` calls it, with
//! nothing added. (std's `Mutex` is `std_mutex.rs`: std exposes no raw
//! interface.) Adding another `lock_api` lock is one line here and one in
//! `mod.rs`.
//!
//! - parking_lot's `Mutex`: one byte, a spin-then-park slow path through a
//!   global hash table of wait queues (parking_lot#338 asks why it is slower
//!   than std's on Intel and ARM);
//! - parking_lot's `FairMutex`: the same, but every unlock hands the lock to
//!   the next waiter (`unlock_fair`);
//! - spin's `SpinMutex`: a test-and-set spinlock (compare-exchange loop);
//! - spin's `TicketMutex`: a ticket lock.

use super::RawLock;
use lock_api::RawMutex;

/// A `lock_api::RawMutex` as a [`RawLock`] named `$name`, from `$krate`.
macro_rules! raw_mutex {
    ($ty:ident, $raw:ty, $name:literal, $krate:literal) => {
        pub struct $ty($raw);

        impl RawLock for $ty {
            const NAME: &'static str = $name;
            const CRATE: &'static str = $krate;
            type Node = ();

            fn new() -> $ty {
                $ty(<$raw as RawMutex>::INIT)
            }

            // The trait's methods by name: spin's types also have an
            // inherent `lock` that returns a guard, which would unlock
            // again as soon as it is dropped.
            #[inline]
            unsafe fn lock(&self, _: &()) {
                <$raw as RawMutex>::lock(&self.0);
            }

            #[inline]
            unsafe fn unlock(&self, _: &()) {
                // SAFETY: RawLock's contract: the caller holds the lock.
                unsafe { <$raw as RawMutex>::unlock(&self.0) }
            }

            #[inline]
            unsafe fn try_lock(&self, _: &()) -> Option<bool> {
                Some(<$raw as RawMutex>::try_lock(&self.0))
            }
        }
    };
}

raw_mutex!(
    ParkingLotMutex,
    parking_lot::RawMutex,
    "parking_lot_mutex",
    "parking_lot"
);
raw_mutex!(
    ParkingLotFairMutex,
    parking_lot::RawFairMutex,
    "parking_lot_fair_mutex",
    "parking_lot"
);
raw_mutex!(SpinMutex, spin::mutex::SpinMutex<()>, "spin_mutex", "spin");
raw_mutex!(
    SpinTicketMutex,
    spin::mutex::TicketMutex<()>,
    "spin_ticket_mutex",
    "spin"
);
