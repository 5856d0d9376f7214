//! Atomics whose every access goes through the simulated machine: the
//! `std::sync::atomic` API the locks use, with the value kept in place
//! (so `as_ptr` and `from_ptr` give mixed-size views of one word, on one
//! line, as qspinlock's byte and halfword accesses need). Outside a
//! simulation (a lock built on the main thread) they are plain memory.
//!
//! Accesses are sequentially consistent: one vCPU touches memory at a
//! time, in virtual-time order, so the orderings are accepted and
//! ignored (weak memory is loom's to check, not this model's). The value
//! is a std atomic all the same, so a thread outside the simulation (a
//! thread-local's destructor as a vCPU's thread exits) never races it.

use crate::coherence::Kind;
use crate::world::access;
use std::panic::Location;
use std::sync::atomic as std_atomic;
pub use std::sync::atomic::Ordering;
use std::sync::atomic::Ordering::SeqCst;

macro_rules! atomic_int {
    ($name:ident, $std:ident, $t:ty) => {
        #[repr(transparent)]
        pub struct $name(std_atomic::$std);

        impl $name {
            pub const fn new(v: $t) -> $name {
                $name(std_atomic::$std::new(v))
            }

            pub const fn as_ptr(&self) -> *mut $t {
                self.0.as_ptr()
            }

            /// # Safety
            /// As `std`'s: `ptr` is aligned, valid for the lifetime and only
            /// accessed through atomics meanwhile.
            pub unsafe fn from_ptr<'a>(ptr: *mut $t) -> &'a $name {
                // SAFETY: repr(transparent) over std's atomic, itself over
                // the value; the caller's promise is std's.
                unsafe { &*ptr.cast::<$name>() }
            }

            /// A read-modify-write: `f` maps the old value to the new one,
            /// or to `None` (a compare-exchange that fails, which writes
            /// nothing). One vCPU at a time runs it; outside a simulation
            /// it is a CAS loop.
            fn rmw(
                &self,
                site: &'static Location<'static>,
                f: impl Fn($t) -> Option<$t>,
            ) -> Result<$t, $t> {
                access(self.0.as_ptr() as usize, Kind::Rmw, site, || {
                    let mut old = self.0.load(SeqCst);
                    loop {
                        match f(old) {
                            Some(new) => match self.0.compare_exchange(old, new, SeqCst, SeqCst) {
                                Ok(_) => return (Ok(old), true),
                                Err(now) => old = now,
                            },
                            None => return (Err(old), false),
                        }
                    }
                })
            }

            #[track_caller]
            pub fn load(&self, _: Ordering) -> $t {
                access(
                    self.0.as_ptr() as usize,
                    Kind::Load,
                    Location::caller(),
                    || (self.0.load(SeqCst), false),
                )
            }

            #[track_caller]
            pub fn store(&self, v: $t, _: Ordering) {
                access(
                    self.0.as_ptr() as usize,
                    Kind::Store,
                    Location::caller(),
                    || (self.0.store(v, SeqCst), true),
                )
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
                // A debug print is not an access: unpriced.
                write!(f, "{}", self.0.load(SeqCst))
            }
        }
    };
}

atomic_int!(AtomicU8, AtomicU8, u8);
atomic_int!(AtomicU16, AtomicU16, u16);
atomic_int!(AtomicU32, AtomicU32, u32);
atomic_int!(AtomicU64, AtomicU64, u64);
atomic_int!(AtomicUsize, AtomicUsize, usize);

#[repr(transparent)]
pub struct AtomicPtr<T>(std_atomic::AtomicPtr<T>);

impl<T> AtomicPtr<T> {
    pub const fn new(p: *mut T) -> AtomicPtr<T> {
        AtomicPtr(std_atomic::AtomicPtr::new(p))
    }

    fn addr(&self) -> usize {
        self.0.as_ptr() as usize
    }

    #[track_caller]
    pub fn load(&self, _: Ordering) -> *mut T {
        access(self.addr(), Kind::Load, Location::caller(), || {
            (self.0.load(SeqCst), false)
        })
    }

    #[track_caller]
    pub fn store(&self, v: *mut T, _: Ordering) {
        access(self.addr(), Kind::Store, Location::caller(), || {
            (self.0.store(v, SeqCst), true)
        })
    }

    #[track_caller]
    pub fn swap(&self, v: *mut T, _: Ordering) -> *mut T {
        access(self.addr(), Kind::Rmw, Location::caller(), || {
            (self.0.swap(v, SeqCst), true)
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
        access(self.addr(), Kind::Rmw, Location::caller(), || {
            let r = self.0.compare_exchange(current, new, SeqCst, SeqCst);
            let wrote = r.is_ok();
            (r, wrote)
        })
    }
}

impl<T> Default for AtomicPtr<T> {
    fn default() -> AtomicPtr<T> {
        AtomicPtr::new(std::ptr::null_mut())
    }
}
