//! The two futex operations, in the simulated machine: a sleeper costs no
//! host time and is woken in the order it slept, at the waker's time plus
//! the machine's wake-up latency. The same functions as the rwsem suite's
//! `locks/futex.rs`, on this crate's `AtomicU32`.

use crate::atomic::{AtomicU32, Ordering};
use std::panic::Location;

/// Sleeps while `*word == expected` (checked once, as the kernel does).
#[track_caller]
pub fn wait(word: &AtomicU32, expected: u32) {
    let site = Location::caller();
    let p = word.as_ptr();
    if crate::world::me().is_none() {
        return;
    }
    // SAFETY: read under the baton (see `atomic`).
    crate::world::futex_wait(p as usize, || unsafe { p.read() } == expected, site);
    let _ = Ordering::Relaxed;
}

/// Wakes at most one thread sleeping on `word`.
pub fn wake_one(word: &AtomicU32) {
    crate::world::futex_wake(word.as_ptr() as usize);
}
