//! The user-space analogue of seed 000's interrupt disable/enable: blocking
//! and unblocking every signal with `pthread_sigmask`. Like `cli`/`sti`
//! around a per-CPU update, it keeps the only asynchronous interruption a
//! thread has (a signal handler) out of a critical section.

use std::mem::MaybeUninit;

pub struct SigSets {
    full: libc::sigset_t,
    empty: libc::sigset_t,
}

impl SigSets {
    pub fn new() -> SigSets {
        // SAFETY: sigfillset/sigemptyset initialise the sets they are given.
        unsafe {
            let mut full = MaybeUninit::uninit();
            let mut empty = MaybeUninit::uninit();
            libc::sigfillset(full.as_mut_ptr());
            libc::sigemptyset(empty.as_mut_ptr());
            SigSets {
                full: full.assume_init(),
                empty: empty.assume_init(),
            }
        }
    }

    /// "irq disable": block every signal.
    #[inline(always)]
    pub fn disable(&self) {
        // SAFETY: valid set pointers; a null old-set pointer is allowed.
        unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &self.full, std::ptr::null_mut()) };
    }

    /// "irq enable": unblock every signal.
    #[inline(always)]
    pub fn enable(&self) {
        // SAFETY: as in `disable`.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.empty, std::ptr::null_mut()) };
    }
}

/// Whether `sig` is blocked in this thread right now.
pub fn is_blocked(sig: libc::c_int) -> bool {
    // SAFETY: a null new-set queries the current mask into `cur`.
    unsafe {
        let mut cur = MaybeUninit::uninit();
        libc::sigemptyset(cur.as_mut_ptr());
        libc::pthread_sigmask(libc::SIG_BLOCK, std::ptr::null(), cur.as_mut_ptr());
        libc::sigismember(cur.as_ptr(), sig) == 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disable_blocks_and_enable_unblocks() {
        let s = SigSets::new();
        s.disable();
        assert!(is_blocked(libc::SIGUSR1));
        s.enable();
        assert!(!is_blocked(libc::SIGUSR1));
    }
}
