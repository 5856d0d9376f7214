//! The two futex operations the Linux-style rwsem sleeps and wakes with.
//!
//! Called through `libc::syscall` because glibc has no futex wrapper; the
//! private variants skip the cross-process key lookup (every waiter of a lock
//! is in this process). The word is 32 bits on every target, which is what
//! the futex ABI takes even on 64-bit kernels.

use std::sync::atomic::AtomicU32;

/// Sleeps while `*word == expected`. Returns on a wake, a signal, a
/// spurious wake-up or at once when the word already differs: callers loop
/// on their own condition.
pub fn wait(word: &AtomicU32, expected: u32) {
    // SAFETY: the kernel reads the 32-bit word at a valid, aligned address
    // (the reference guarantees it); a null timeout means no timeout.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            expected,
            std::ptr::null::<libc::timespec>(),
        );
    }
}

/// Wakes at most one thread sleeping on `word`.
pub fn wake_one(word: &AtomicU32) {
    // SAFETY: FUTEX_WAKE only uses the address as a key; it never writes it.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            1,
        );
    }
}
