//! The user-space analogue of seed 000's interrupt disable/enable: blocking
//! and unblocking every signal with `pthread_sigmask`. Like `cli`/`sti`
//! around a per-CPU update, it keeps the only asynchronous interruption a
//! thread has (a signal handler) out of a critical section.

use std::mem::MaybeUninit;

// libc 0.2.191 takes mips64's glibc `how` values from the generic header
// (its cfg names "mips" twice instead of "mips64"), so SIG_BLOCK is 0, which
// the kernel rejects with EINVAL, and SIG_SETMASK is 2, which is MIPS's
// SIG_UNBLOCK. MIPS numbers them 1, 2, 3 (asm/signal.h); so do we.
#[cfg(any(target_arch = "mips64", target_arch = "mips64r6"))]
const SIG_BLOCK: libc::c_int = 1;
#[cfg(any(target_arch = "mips64", target_arch = "mips64r6"))]
const SIG_SETMASK: libc::c_int = 3;
#[cfg(not(any(target_arch = "mips64", target_arch = "mips64r6")))]
use libc::{SIG_BLOCK, SIG_SETMASK};

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

    /// "irq disable": block every signal. Returns pthread_sigmask's result
    /// (0 or an errno), so a call the platform rejects is not timed as work.
    #[inline(always)]
    pub fn disable(&self) -> libc::c_int {
        // SAFETY: valid set pointers; a null old-set pointer is allowed.
        unsafe { libc::pthread_sigmask(SIG_BLOCK, &self.full, std::ptr::null_mut()) }
    }

    /// "irq enable": unblock every signal.
    #[inline(always)]
    pub fn enable(&self) -> libc::c_int {
        // SAFETY: as in `disable`.
        unsafe { libc::pthread_sigmask(SIG_SETMASK, &self.empty, std::ptr::null_mut()) }
    }
}

/// Whether `sig` is blocked in this thread right now.
pub fn is_blocked(sig: libc::c_int) -> bool {
    // SAFETY: a null new-set queries the current mask into `cur`.
    unsafe {
        let mut cur = MaybeUninit::uninit();
        libc::sigemptyset(cur.as_mut_ptr());
        libc::pthread_sigmask(SIG_BLOCK, std::ptr::null(), cur.as_mut_ptr());
        libc::sigismember(cur.as_ptr(), sig) == 1
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn disable_blocks_and_enable_unblocks() {
        let s = SigSets::new();
        assert_eq!(s.disable(), 0);
        assert!(is_blocked(libc::SIGUSR1));
        assert_eq!(s.enable(), 0);
        assert!(!is_blocked(libc::SIGUSR1));
    }
}
