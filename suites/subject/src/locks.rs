//! No lock crate under test: lockmatrix generates this file, listing the
//! crate's locks, in its own copy of this crate for `--crate`.

use crate::{MutexVisitor, RwLockVisitor};

/// The crate's mutexes, by name.
pub const MUTEXES: &[&str] = &[];
/// The crate's reader-writer locks, by name.
pub const RWLOCKS: &[&str] = &[];

/// Calls `v.visit::<M>()` for the mutex named `name`.
pub fn visit_mutex<V: MutexVisitor>(name: &str, v: V) -> Option<V::Output> {
    let _ = (name, v);
    None
}

/// Calls `v.visit::<R>()` for the reader-writer lock named `name`.
pub fn visit_rwlock<V: RwLockVisitor>(name: &str, v: V) -> Option<V::Output> {
    let _ = (name, v);
    None
}
