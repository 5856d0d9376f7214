//! Loom's `AtomicU32`, with every store done as a swap: the word of a lock
//! whose waiters spin with an RMW (test-and-set's `swap(1)`).
//!
//! It works around a loom 0.7 bug (tokio-rs/loom#254, #389: loom does not
//! order a plain store after an RMW that read a value before it, so the
//! store may fall between the RMW's read and its write). A waiter's failed
//! swap writes 1 back; loom leaves that write unordered against the
//! holder's unlock store, so the waiter may go on reading its own writes
//! for ever: loom explores a spin C11 forbids and stops with "exceeded
//! maximum number of branches". On a location that only RMWs write, loom
//! keeps one modification order and is exact, so the unlock store is a
//! swap here.
//!
//! That checks a slightly stronger program: the store reads the latest
//! value (which nothing uses) and, being an RMW, continues the release
//! sequence of an earlier release store to the word. A missing Release or
//! Acquire is still found: the next holder then synchronises with no
//! store of the holder before it.

use loom::sync::atomic::{self, Ordering};
use std::ops::Deref;

pub struct AtomicU32(atomic::AtomicU32);

impl AtomicU32 {
    #[track_caller]
    pub fn new(v: u32) -> AtomicU32 {
        AtomicU32(atomic::AtomicU32::new(v))
    }

    /// A store, as a swap (with the store's ordering, which a swap takes).
    #[track_caller]
    pub fn store(&self, v: u32, order: Ordering) {
        self.0.swap(v, order);
    }
}

/// Every other operation is loom's.
impl Deref for AtomicU32 {
    type Target = atomic::AtomicU32;

    fn deref(&self) -> &atomic::AtomicU32 {
        &self.0
    }
}
