//! Ctrl-C, `kill` and a CI's cancel end a command as they would without
//! this, by the same signal, but not before what the run made that must
//! not outlive it is removed (a path crate's copy, a credentials file:
//! `lockmatrix::scratch`). SIGINT, SIGTERM and SIGHUP are blocked in every
//! thread (this runs first in `main`, and threads inherit the mask; a
//! child gets a clean mask from `std::process::Command`) and taken by one
//! thread, which:
//!
//! 1. passes the signal on to the process group when this process leads
//!    it (a shell's job: `cargo xtask` and its children), so that a
//!    build or a container started by the run stops too;
//! 2. waits for what must not be cut short (a baseline update's renames,
//!    a file being copied into a scratch path), then removes every scratch
//!    path and keeps writers out;
//! 3. dies of the signal, as an unhandled one would have killed it.

const SIGNALS: [libc::c_int; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGHUP];

/// Blocks [`SIGNALS`] in this thread and every thread it starts, and
/// starts the thread that takes them. Call before any other thread.
pub fn install() {
    // SAFETY: a local signal set, filled and applied to this thread.
    let set = unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        for sig in SIGNALS {
            libc::sigaddset(&mut set, sig);
        }
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        set
    };
    std::thread::spawn(move || {
        let mut sig: libc::c_int = 0;
        // SAFETY: waits on the set blocked above.
        if unsafe { libc::sigwait(&set, &mut sig) } != 0 {
            return;
        }
        // SAFETY: getpgrp and getpid have no preconditions; the group is
        // this process's own when it leads it.
        unsafe {
            if libc::getpgrp() == libc::getpid() {
                libc::kill(0, sig);
            }
        }
        // Held until the process is gone: nothing is written after it.
        let _removed = lockmatrix::scratch::remove_all();
        // SAFETY: the default action for `sig`, unblocked in this thread
        // alone, then raised in it: the process ends as by the signal.
        unsafe {
            libc::signal(sig, libc::SIG_DFL);
            let mut one: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut one);
            libc::sigaddset(&mut one, sig);
            libc::pthread_sigmask(libc::SIG_UNBLOCK, &one, std::ptr::null_mut());
            libc::raise(sig);
        }
        std::process::exit(128 + sig);
    });
}
