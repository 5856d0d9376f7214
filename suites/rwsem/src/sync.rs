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
//! `Arc` is std's in both builds: the reference count is not what the
//! models check, and loom's would have to outlive the thread-local parker
//! that holds one.

pub mod atomic {
    #[cfg(loom)]
    pub use loom::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
    #[cfg(not(loom))]
    pub use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};
}

pub mod hint {
    #[cfg(not(loom))]
    pub use core::hint::spin_loop;
    #[cfg(loom)]
    pub use loom::hint::spin_loop;
}

pub mod thread {
    #[cfg(loom)]
    pub use loom::thread::yield_now;
    #[cfg(not(loom))]
    pub use std::thread::yield_now;
}

pub mod time {
    #[cfg(loom)]
    pub use super::clock::Instant;
    pub use std::time::Duration;
    #[cfg(not(loom))]
    pub use std::time::Instant;
}

#[cfg(loom)]
pub use loom::sync::{Mutex, MutexGuard};
#[cfg(loom)]
pub use loom::thread_local;
pub use std::sync::{Arc, PoisonError};
#[cfg(not(loom))]
pub use std::sync::{Mutex, MutexGuard};
#[cfg(not(loom))]
pub use std::thread_local;

#[cfg(not(loom))]
pub use crate::locks::futex;

#[cfg(loom)]
pub mod clock;
#[cfg(loom)]
pub mod futex;
