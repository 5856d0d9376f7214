//! What the locks written here are made of: their atomics and spin-wait
//! steps. std's and core's in every build the matrix runs; loom's under
//! `--cfg loom`, where `model/` checks the same lock source under the C11
//! memory model. A lock takes them from here by its `use` line and from
//! nowhere else, so the code measured and the code checked are one.
//!
//! Under loom a spin-wait step is `loom::thread::yield_now` (loom's
//! `hint::spin_loop`): it tells loom's scheduler that the thread waits for
//! another, without which a spinning thread is explored forever.
//!
//! Under loom, `atomic::AtomicU8` and `atomic::AtomicU16` are not atomics of
//! their own. Loom has no mixed-size atomics, so they are views of a byte or
//! halfword of an `AtomicU32` (qspinlock's `byte()` and `half()`), every
//! access a read-modify-write of the whole word: see [`subword`].
//!
//! `atomic::rmw::AtomicU32` is for a lock word its waiters spin on with an
//! RMW (test-and-set): std's, and under loom loom's with its stores done
//! as swaps, a workaround for a loom bug such a spin trips over: see
//! [`rmw`].
//!
//! Thread-local bookkeeping (qspinlock's nesting count) stays `std::cell`:
//! no other thread can see it, so there is nothing for loom to check.
//!
//! Under `--cfg lockmatrix_sim` (the contention model, `sim.rs`) the
//! atomics and the spin hint and yield are the `ccsim` crate's: every
//! access is priced on a simulated machine. Its atomics keep the value in
//! place, so qspinlock's byte and halfword views are its real sub-word
//! accesses of one word on one line (no stand-in); `thread_local` stays
//! std's, as each virtual CPU is a thread of its own.

pub mod atomic {
    #[cfg(loom)]
    pub use super::subword::{AtomicU16, AtomicU8};
    #[cfg(lockmatrix_sim)]
    pub use ccsim::atomic::{AtomicPtr, AtomicU16, AtomicU32, AtomicU8, Ordering};
    #[cfg(loom)]
    pub use loom::sync::atomic::{AtomicPtr, AtomicU32, Ordering};
    #[cfg(not(any(loom, lockmatrix_sim)))]
    pub use std::sync::atomic::{AtomicPtr, AtomicU16, AtomicU32, AtomicU8, Ordering};

    /// The word of a lock whose waiters spin with an RMW; under loom its
    /// stores are swaps (see [`super::rmw`]).
    pub mod rmw {
        #[cfg(loom)]
        pub use crate::sync::rmw::AtomicU32;
        #[cfg(lockmatrix_sim)]
        pub use ccsim::atomic::AtomicU32;
        #[cfg(not(any(loom, lockmatrix_sim)))]
        pub use std::sync::atomic::AtomicU32;
    }
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

/// The architecture the lock runs on, as `target_arch` names it: the
/// target's, or under the model the simulated machine's (an arm64 machine
/// simulated on an x86 host takes arm64's constants).
pub mod arch {
    #[cfg(lockmatrix_sim)]
    pub use ccsim::target_arch;

    #[cfg(not(lockmatrix_sim))]
    pub fn target_arch() -> &'static str {
        std::env::consts::ARCH
    }
}

#[cfg(loom)]
pub use loom::thread_local;
#[cfg(not(loom))]
pub use std::thread_local;

#[cfg(loom)]
pub mod rmw;
#[cfg(loom)]
pub mod subword;
