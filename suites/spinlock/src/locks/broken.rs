//! A deliberately broken lock, built only with the `broken-lock` feature.
//!
//! It tests the flag and sets it with two separate operations and spins a
//! little in between, so two threads that both see the lock free both
//! enter. It exists to prove that the suite's checks (mutual exclusion and
//! the counter total) really fail when a lock does not exclude: a check
//! that cannot fail gates nothing. The race it exists for is a data race on
//! the protected counter; that is its point, and it is never built into the
//! binaries the matrix gates on.
//!
//! Model-checked under `--cfg loom` (`model/broken.rs`) as it is, as the
//! control: that model must fail.

use super::{RawLock, Spin};
use crate::sync::atomic::{AtomicU32, Ordering::*};

/// Relax hints between the test and the set: wide enough that two threads
/// on two CPUs overlap reliably.
pub const WINDOW: u32 = 32;

pub struct Broken {
    locked: AtomicU32,
}

impl RawLock for Broken {
    const NAME: &'static str = "broken";
    type Node = ();

    fn new() -> Broken {
        Broken {
            locked: AtomicU32::new(0),
        }
    }

    #[inline]
    unsafe fn lock(&self, _: &()) {
        // Acquire: pairs with the Release in unlock(), as a correct lock's
        // would; what is broken is the separate store below, not the
        // ordering.
        let mut spin = Spin::new();
        while self.locked.load(Acquire) != 0 {
            spin.relax();
        }
        for _ in 0..WINDOW {
            core::hint::spin_loop();
        }
        self.locked.store(1, Relaxed);
    }

    #[inline]
    unsafe fn unlock(&self, _: &()) {
        // Release: pairs with the Acquire load in lock(), so our critical
        // section happens before that of a holder that saw the lock free.
        self.locked.store(0, Release);
    }
}
