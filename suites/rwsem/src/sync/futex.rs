//! `FUTEX_WAIT` and `FUTEX_WAKE` for loom, with its park and unpark: the
//! same contract as `locks/futex.rs`.
//!
//! Like the kernel's futex hash bucket, one lock covers the check of the
//! word and the waiter's entry in the sleepers' list, and the waker's
//! search of that list: a wake that comes after the waiter's check finds
//! it listed, and its unpark token makes the park return even if it comes
//! before the park. A wake-up lost by the rwsem's own protocol leaves a
//! thread parked for ever, which loom reports as a deadlock.

use loom::sync::atomic::{AtomicU32, Ordering::Relaxed};
use loom::sync::Mutex;
use loom::thread::{self, Thread};
use std::sync::PoisonError;

loom::lazy_static! {
    /// Threads asleep, by the address of the word they sleep on.
    static ref SLEEPERS: Mutex<Vec<(usize, Thread)>> = Mutex::new(Vec::new());
}

fn key(word: &AtomicU32) -> usize {
    word as *const AtomicU32 as usize
}

/// Sleeps while `*word == expected`; returns on a wake or at once when the
/// word already differs. Callers loop on their own condition.
pub fn wait(word: &AtomicU32, expected: u32) {
    {
        let mut sleepers = SLEEPERS.lock().unwrap_or_else(PoisonError::into_inner);
        // Relaxed, as the kernel's read of the word: the list's lock orders
        // it against the waker's, which comes after its change of the word.
        if word.load(Relaxed) != expected {
            return;
        }
        sleepers.push((key(word), thread::current()));
    }
    thread::park();
    let me = thread::current().id();
    SLEEPERS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .retain(|(k, t)| !(*k == key(word) && t.id() == me));
}

/// Wakes at most one thread sleeping on `word`.
pub fn wake_one(word: &AtomicU32) {
    let mut sleepers = SLEEPERS.lock().unwrap_or_else(PoisonError::into_inner);
    if let Some(at) = sleepers.iter().position(|(k, _)| *k == key(word)) {
        sleepers.remove(at).1.unpark();
    }
}
