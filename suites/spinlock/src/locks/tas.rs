//! Test-and-set: every attempt is an atomic swap on the lock word.
//!
//! The smallest and simplest lock, and the fastest uncontended (one RMW to
//! lock, one store to unlock). It trades everything else for that: waiters
//! hammer the line with RMWs, so the holder's own unlock competes with them
//! for the cache line, and there is no order among waiters (no fairness; a
//! thread can starve).
//!
//! Model-checked under `--cfg loom` (`model/tas.rs`) as it is, with one
//! difference: the lock word is `sync::atomic::rmw::AtomicU32`, whose
//! unlock store loom does as a swap (a workaround for a loom bug that a
//! swap spin trips over; see `sync/rmw.rs`), a slightly stronger program.
//!
//! Events: each failed swap (`FailedSwap`), the RMW storm of the lock word
//! that TTAS exists to avoid.

use super::{RawLock, Spin};
use crate::events::{self, Event};
use crate::sync::atomic::{rmw::AtomicU32, Ordering::*};

pub struct Tas {
    locked: AtomicU32,
}

impl RawLock for Tas {
    const NAME: &'static str = "tas";
    type Node = ();
    const EVENTS: &'static [Event] = &[Event::FailedSwap];

    fn new() -> Tas {
        Tas {
            locked: AtomicU32::new(0),
        }
    }

    #[inline]
    unsafe fn lock(&self, _: &()) {
        // Acquire: pairs with the Release in unlock(), so the previous
        // holder's critical section happens before ours.
        let mut spin = Spin::new();
        while self.locked.swap(1, Acquire) != 0 {
            // Inline: a call here made LLVM merge two of this loop's
            // three copies of the swap (one `xchg` fewer in the footprint).
            events::count(Event::FailedSwap);
            spin.relax();
        }
    }

    #[inline]
    unsafe fn unlock(&self, _: &()) {
        // Release: pairs with the Acquire swap in lock(), so our critical
        // section happens before the next holder's.
        self.locked.store(0, Release);
    }
}
