//! Atomics whose every access goes through the simulated machine: the
//! `std::sync::atomic` API the locks use, with the value kept in place
//! (so `as_ptr` and `from_ptr` give mixed-size views of one word, on one
//! line, as qspinlock's byte and halfword accesses need). Outside a
//! simulation (a lock built on the main thread) they are plain memory.
//!
//! Accesses are sequentially consistent: one vCPU touches memory at a
//! time, in virtual-time order, so the orderings are accepted and
//! ignored (weak memory is loom's to check, not this model's).

use crate::coherence::Kind;
use crate::world::access;
use std::cell::UnsafeCell;
use std::panic::Location;
pub use std::sync::atomic::Ordering;

macro_rules! atomic_int {
    ($name:ident, $t:ty) => {
        #[repr(transparent)]
        pub struct $name(UnsafeCell<$t>);

        // SAFETY: only the vCPU holding the baton touches the value, and
        // the baton passes through a mutex (happens-before); outside a
        // simulation the crate's users touch it from one thread, or from
        // threads a spawn or join orders.
        unsafe impl Sync for $name {}

        impl $name {
            pub const fn new(v: $t) -> $name {
                $name(UnsafeCell::new(v))
            }

            pub const fn as_ptr(&self) -> *mut $t {
                self.0.get()
            }

            /// # Safety
            /// As `std`'s: `ptr` is aligned, valid for the lifetime and only
            /// accessed through these atomics meanwhile.
            pub unsafe fn from_ptr<'a>(ptr: *mut $t) -> &'a $name {
                // SAFETY: repr(transparent) over the value; the caller's
                // promise is std's.
                unsafe { &*ptr.cast::<$name>() }
            }

            fn rmw(
                &self,
                site: &'static Location<'static>,
                f: impl FnOnce($t) -> Option<$t>,
            ) -> Result<$t, $t> {
                let p = self.0.get();
                access(p as usize, Kind::Rmw, site, || {
                    // SAFETY: see the Sync impl: we hold the baton.
                    let old = unsafe { p.read() };
                    match f(old) {
                        Some(new) => {
                            unsafe { p.write(new) };
                            (Ok(old), true)
                        }
                        None => (Err(old), false),
                    }
                })
            }

            #[track_caller]
            pub fn load(&self, _: Ordering) -> $t {
                let p = self.0.get();
                // SAFETY: see the Sync impl.
                access(p as usize, Kind::Load, Location::caller(), || {
                    (unsafe { p.read() }, false)
                })
            }

            #[track_caller]
            pub fn store(&self, v: $t, _: Ordering) {
                let p = self.0.get();
                // SAFETY: see the Sync impl.
                access(p as usize, Kind::Store, Location::caller(), || {
                    (unsafe { p.write(v) }, true)
                })
            }

            #[track_caller]
            pub fn swap(&self, v: $t, _: Ordering) -> $t {
                self.rmw(Location::caller(), |_| Some(v))
                    .unwrap_or_else(|x| x)
            }

            #[track_caller]
            pub fn compare_exchange(
                &self,
                current: $t,
                new: $t,
                _: Ordering,
                _: Ordering,
            ) -> Result<$t, $t> {
                self.rmw(Location::caller(), |old| (old == current).then_some(new))
            }

            #[track_caller]
            pub fn compare_exchange_weak(
                &self,
                current: $t,
                new: $t,
                _: Ordering,
                _: Ordering,
            ) -> Result<$t, $t> {
                self.rmw(Location::caller(), |old| (old == current).then_some(new))
            }

            #[track_caller]
            pub fn fetch_add(&self, v: $t, _: Ordering) -> $t {
                self.rmw(Location::caller(), |old| Some(old.wrapping_add(v)))
                    .unwrap_or_else(|x| x)
            }

            #[track_caller]
            pub fn fetch_sub(&self, v: $t, _: Ordering) -> $t {
                self.rmw(Location::caller(), |old| Some(old.wrapping_sub(v)))
                    .unwrap_or_else(|x| x)
            }

            #[track_caller]
            pub fn fetch_or(&self, v: $t, _: Ordering) -> $t {
                self.rmw(Location::caller(), |old| Some(old | v))
                    .unwrap_or_else(|x| x)
            }

            #[track_caller]
            pub fn fetch_and(&self, v: $t, _: Ordering) -> $t {
                self.rmw(Location::caller(), |old| Some(old & v))
                    .unwrap_or_else(|x| x)
            }

            pub fn into_inner(self) -> $t {
                self.0.into_inner()
            }
        }

        impl Default for $name {
            fn default() -> $name {
                $name::new(0)
            }
        }

        impl std::fmt::Debug for $name {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                // SAFETY: see the Sync impl (a debug print, unpriced).
                write!(f, "{}", unsafe { self.0.get().read() })
            }
        }
    };
}

atomic_int!(AtomicU8, u8);
atomic_int!(AtomicU16, u16);
atomic_int!(AtomicU32, u32);
atomic_int!(AtomicU64, u64);
atomic_int!(AtomicUsize, usize);

#[repr(transparent)]
pub struct AtomicPtr<T>(UnsafeCell<*mut T>);

// SAFETY: as the integers'.
unsafe impl<T> Sync for AtomicPtr<T> {}
// SAFETY: a pointer value; what it points to is the user's.
unsafe impl<T> Send for AtomicPtr<T> {}

// Clippy takes the pointer values stored for pointers dereferenced: only
// the cell is written, never what a value points to.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
impl<T> AtomicPtr<T> {
    pub const fn new(p: *mut T) -> AtomicPtr<T> {
        AtomicPtr(UnsafeCell::new(p))
    }

    #[track_caller]
    pub fn load(&self, _: Ordering) -> *mut T {
        let p = self.0.get();
        // SAFETY: see the integers' Sync impl.
        access(p as usize, Kind::Load, Location::caller(), || {
            (unsafe { p.read() }, false)
        })
    }

    #[track_caller]
    pub fn store(&self, v: *mut T, _: Ordering) {
        let p = self.0.get();
        // SAFETY: as in load.
        access(p as usize, Kind::Store, Location::caller(), || {
            (unsafe { p.write(v) }, true)
        })
    }

    #[track_caller]
    pub fn swap(&self, v: *mut T, _: Ordering) -> *mut T {
        let p = self.0.get();
        // SAFETY: as in load.
        access(p as usize, Kind::Rmw, Location::caller(), || {
            (unsafe { p.replace(v) }, true)
        })
    }

    #[track_caller]
    pub fn compare_exchange(
        &self,
        current: *mut T,
        new: *mut T,
        _: Ordering,
        _: Ordering,
    ) -> Result<*mut T, *mut T> {
        let p = self.0.get();
        // SAFETY: as in load.
        access(p as usize, Kind::Rmw, Location::caller(), || {
            let old = unsafe { p.read() };
            if std::ptr::eq(old, current) {
                unsafe { p.write(new) };
                (Ok(old), true)
            } else {
                (Err(old), false)
            }
        })
    }
}

impl<T> Default for AtomicPtr<T> {
    fn default() -> AtomicPtr<T> {
        AtomicPtr::new(std::ptr::null_mut())
    }
}
