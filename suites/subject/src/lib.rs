//! The lock crate under test, seen by the suites through one small
//! interface of its own.
//!
//! `cargo xtask matrix --crate NAME@VERSION` measures another crate's
//! locks on every target. Its locks are known only when lockmatrix runs,
//! so they cannot be written into the suites: lockmatrix generates
//! `locks.rs` (one wrapper type per `lock_api::RawMutex` or `RawRwLock`
//! the crate exposes) in a copy of this crate, and the suites measure
//! whatever [`MUTEXES`] and [`RWLOCKS`] list, through [`visit_mutex`] and
//! [`visit_rwlock`]. The traits here are this crate's own, not
//! `lock_api`'s, so the suites build the same whether the crate under test
//! follows `lock_api` 0.4 or 0.5. As committed, `locks.rs` lists none.
#![no_std]

mod locks;

pub use locks::{visit_mutex, visit_rwlock, MUTEXES, RWLOCKS};

/// A mutex of the crate under test: its `lock_api::RawMutex`, called as
/// its `Mutex` calls it.
pub trait Mutex: Sync + Send + 'static {
    /// `<crate>.<type>`, e.g. `spin.TicketMutex`: the name the suites'
    /// cases carry, the same in every version of the crate.
    const NAME: &'static str;
    /// The crate's name.
    const CRATE: &'static str;
    fn new() -> Self;
    fn lock(&self);
    /// Takes the lock if it is free; whether it did.
    fn try_lock(&self) -> bool;
    /// # Safety
    /// The calling thread holds the lock.
    unsafe fn unlock(&self);
}

/// A reader-writer lock of the crate under test: its `lock_api::RawRwLock`.
pub trait RwLock: Sync + Send + 'static {
    const NAME: &'static str;
    const CRATE: &'static str;
    fn new() -> Self;
    fn lock_shared(&self);
    fn try_lock_shared(&self) -> bool;
    /// # Safety
    /// The calling thread holds a shared lock.
    unsafe fn unlock_shared(&self);
    fn lock_exclusive(&self);
    fn try_lock_exclusive(&self) -> bool;
    /// # Safety
    /// The calling thread holds the exclusive lock.
    unsafe fn unlock_exclusive(&self);
}

/// Something to do with one mutex type, picked by name ([`visit_mutex`]).
pub trait MutexVisitor {
    type Output;
    fn visit<M: Mutex>(self) -> Self::Output;
}

/// Something to do with one reader-writer lock type ([`visit_rwlock`]).
pub trait RwLockVisitor {
    type Output;
    fn visit<R: RwLock>(self) -> Self::Output;
}
