//! Test-and-test-and-set with exponential backoff.
//!
//! Waiters spin on a plain load, which stays in their cache as a shared
//! copy, and only try the swap when the lock looks free; after a failed swap
//! they back off for a doubling (capped) number of relax hints. That cuts
//! the RMW storm of plain test-and-set, at the price of latency: a waiter
//! that is backing off notices a release late, and there is still no order
//! among waiters (unfair; the thread that just unlocked often wins again).
//!
//! Model-checked under `--cfg loom` (`model/ttas.rs`) as it is, with one
//! difference: the lock word is `sync::atomic::rmw::AtomicU32`, whose
//! unlock store loom does as a swap (a workaround for a loom bug that a
//! swap spin trips over; see `sync/rmw.rs`), a slightly stronger program.
//!
//! Events: each failed swap (`FailedSwap`), the fast path's included (it
//! enters the slow path by `lock_slow_after_failed_swap`): the test before
//! each swap is what keeps them few.

use super::{RawLock, Spin};
use crate::events::{self, Event};
use crate::sync::atomic::{rmw::AtomicU32, Ordering::*};

/// Relax hints after the first failed swap, doubling up to [`MAX_BACKOFF`].
pub const MIN_BACKOFF: u32 = 4;
pub const MAX_BACKOFF: u32 = 1024;

pub struct Ttas {
    locked: AtomicU32,
}

impl Ttas {
    #[cold]
    #[inline(never)]
    fn lock_slow(&self) {
        let mut spin = Spin::new();
        let mut backoff = MIN_BACKOFF;
        loop {
            // Relaxed: only a test; the swap re-checks and acquires.
            while self.locked.load(Relaxed) != 0 {
                spin.relax();
            }
            // Acquire: pairs with the Release in unlock(), so the previous
            // holder's critical section happens before ours.
            if self.locked.swap(1, Acquire) == 0 {
                return;
            }
            events::count(Event::FailedSwap);
            for _ in 0..backoff {
                spin.relax();
            }
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }

    /// The fast path's swap found the lock taken: a slow path entry of its
    /// own, so that the fast path computes nothing to say so.
    #[cold]
    #[inline(never)]
    fn lock_slow_after_failed_swap(&self) {
        events::count(Event::FailedSwap);
        self.lock_slow();
    }
}

impl RawLock for Ttas {
    const NAME: &'static str = "ttas";
    type Node = ();
    const EVENTS: &'static [Event] = &[Event::FailedSwap];

    fn new() -> Ttas {
        Ttas {
            locked: AtomicU32::new(0),
        }
    }

    #[inline]
    unsafe fn lock(&self, _: &()) {
        // Acquire: pairs with the Release in unlock(), so the previous
        // holder's critical section happens before ours. The Relaxed load is
        // only a test; the swap re-checks.
        if self.locked.load(Relaxed) != 0 {
            self.lock_slow();
        } else if self.locked.swap(1, Acquire) != 0 {
            self.lock_slow_after_failed_swap();
        }
    }

    #[inline]
    unsafe fn unlock(&self, _: &()) {
        // Release: pairs with the Acquire swap in lock(), so our critical
        // section happens before the next holder's.
        self.locked.store(0, Release);
    }
}
