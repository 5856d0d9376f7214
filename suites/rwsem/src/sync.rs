//! What the locks written here are made of: their atomics, the wait-list
//! mutex, the futex, the clock and the spin-wait steps. std's (and the
//! kernel's futex) in every build the matrix runs; loom's under
//! `--cfg loom`, where `model/` checks the same lock source under the C11
//! memory model. A lock takes them from here by its `use` lines and from
//! nowhere else, so the code measured and the code checked are one.
//!
//! Under loom:
//! - a spin-wait step is `loom::thread::yield_now` (loom's
//!   `hint::spin_loop`), which tells loom's scheduler that the thread waits
//!   for another; without it a spinning thread is explored for ever;
//! - `futex` sleeps with loom's park and unpark ([`futex`]);
//! - `time::Instant` is a counter that every `now()` moves on ([`clock`]).
//!
//! Under `--cfg lockmatrix_sim` (the contention model, `sim.rs`) the
//! atomics, spin hint, yield, futex, clock and `wait_lock`'s mutex are the
//! `ccsim` crate's: every access and sleep is priced on a simulated
//! machine, and `Instant` is virtual time, so the hand-off timeout fires
//! after as many simulated cycles as it has nanoseconds. The mutex is
//! std's Linux algorithm on ccsim's atomics and futex.
//!
//! `Arc` is std's in every build: the reference count is not what the
//! models check, and loom's would have to outlive the thread-local parker
//! that holds one.

pub mod atomic {
    #[cfg(lockmatrix_sim)]
    pub use ccsim::atomic::{AtomicU32, AtomicUsize, Ordering};
    #[cfg(loom)]
    pub use loom::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
    #[cfg(not(any(loom, lockmatrix_sim)))]
    pub use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
}

pub mod hint {
    #[cfg(lockmatrix_sim)]
    pub use ccsim::hint::spin_loop;
    #[cfg(not(any(loom, lockmatrix_sim)))]
    pub use core::hint::spin_loop;
    #[cfg(loom)]
    pub use loom::hint::spin_loop;
}

pub mod thread {
    #[cfg(lockmatrix_sim)]
    pub use ccsim::thread::yield_now;
    #[cfg(loom)]
    pub use loom::thread::yield_now;
    #[cfg(not(any(loom, lockmatrix_sim)))]
    pub use std::thread::yield_now;
}

pub mod time {
    #[cfg(loom)]
    pub use super::clock::Instant;
    #[cfg(lockmatrix_sim)]
    pub use ccsim::time::Instant;
    pub use std::time::Duration;
    #[cfg(not(any(loom, lockmatrix_sim)))]
    pub use std::time::Instant;
}

#[cfg(lockmatrix_sim)]
pub use ccsim::{Mutex, MutexGuard};
#[cfg(loom)]
pub use loom::sync::{Mutex, MutexGuard};
#[cfg(loom)]
pub use loom::thread_local;
pub use std::sync::{Arc, PoisonError};
#[cfg(not(any(loom, lockmatrix_sim)))]
pub use std::sync::{Mutex, MutexGuard};
#[cfg(not(loom))]
pub use std::thread_local;

#[cfg(not(any(loom, lockmatrix_sim)))]
pub use crate::locks::futex;
#[cfg(lockmatrix_sim)]
pub use ccsim::futex;

#[cfg(loom)]
pub mod clock;
#[cfg(loom)]
pub mod futex;
