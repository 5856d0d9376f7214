//! Function names: demangled for people, and which callees a lock
//! operation's static footprint follows.
//!
//! An operation's code is its probe and every function it reaches through
//! direct calls and tail jumps that is the lock's: the suite's own code
//! (slow paths the compiler kept out of line: `lock_slowpath`, `wait`,
//! `wait_for_readers`), the lock crates' (`parking_lot`, `parking_lot_core`,
//! `lock_api`, `spin`), std's synchronization internals (its `Mutex` and
//! `RwLock` are locks under test: `std::sync`, `std::sys::sync`, the futex
//! wrappers), `core::sync::atomic`, and the atomic helpers
//! (`__aarch64_cas4_acq`, `__sync_*`, `__atomic_*`). The walk stops at
//! everything else: the harness, std's I/O, allocation, formatting, panics
//! and threads, the rest of `core`, `compiler_builtins`, and C functions
//! (libc: `syscall`, `sched_yield`, `memcpy`). A function it stops at is
//! named in the footprint, never counted.

use super::classify::Isa;

/// Whether a callee's code counts for the operation that calls it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Callee {
    Follow,
    Stop,
}

/// Paths of std and core that are lock code, followed although their crate
/// is not.
const STD_FOLLOWED: [&str; 6] = [
    "core::sync::atomic::",
    "core::hint::",
    "std::sync::",
    "std::sys::sync::",
    "std::sys::pal::unix::futex::",
    "std::sys::futex::",
];

/// Crates whose code is never the lock's. (`__rustc` is where newer
/// compilers put the allocator shims: `__rustc::__rust_alloc`.)
const STOP_CRATES: [&str; 8] = [
    "std",
    "core",
    "alloc",
    "harness",
    "compiler_builtins",
    "libc",
    "panic_abort",
    "__rustc",
];

/// The C names of atomic helpers: outlined atomics and libatomic-style
/// calls.
const HELPERS: [&str; 3] = ["__aarch64_", "__sync_", "__atomic_"];

/// The name to show for a label: demangled, without its hash.
pub fn display(isa: Isa, label: &str) -> String {
    let symbol = isa.symbol(label);
    match rustc_demangle::try_demangle(symbol) {
        Ok(d) => format!("{d:#}"),
        Err(_) => symbol.to_string(),
    }
}

/// Whether the footprint follows a call to `label`.
pub fn callee(isa: Isa, label: &str) -> Callee {
    let symbol = isa.symbol(label);
    if HELPERS.iter().any(|h| symbol.starts_with(h)) {
        return Callee::Follow;
    }
    let Ok(demangled) = rustc_demangle::try_demangle(symbol) else {
        // C: libc and the runtime.
        return Callee::Stop;
    };
    let path = format!("{demangled:#}");
    let path = path.trim_start_matches(['<', '&', '*', '(', '[']);
    let path = path
        .strip_prefix("mut ")
        .or_else(|| path.strip_prefix("const "))
        .unwrap_or(path);
    let krate = path.split("::").next().unwrap_or(path);
    if STD_FOLLOWED.iter().any(|p| path.starts_with(p)) {
        Callee::Follow
    } else if STOP_CRATES.contains(&krate) {
        Callee::Stop
    } else {
        Callee::Follow
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn isa(triple: &str) -> Isa {
        Isa::from_triple(triple).unwrap()
    }

    #[test]
    fn lock_code_is_followed_and_the_rest_is_not() {
        let a64 = isa("aarch64-unknown-linux-gnu");
        // Labels from the aarch64 spinlock and rwsem binaries.
        for (label, expected) in [
            (
                "_ZN8spinlock5locks6ticket6Ticket4wait17h3a7484c873113981E",
                Callee::Follow,
            ),
            (
                "_ZN8spinlock5locks9yield_now17hfc6ff4f2fcc6d2d6E",
                Callee::Follow,
            ),
            ("__aarch64_cas4_acq", Callee::Follow),
            ("_ZN3std6thread9yield_now17h1a2b3c4d5e6f7a8bE", Callee::Stop),
            ("_ZN7harness6marker5begin17h0123456789abcdefE", Callee::Stop),
            ("_ZN4core9panicking5panic17h0123456789abcdefE", Callee::Stop),
            (
                "_ZN4core4sync6atomic23atomic_compare_exchange17h0123456789abcdefE",
                Callee::Follow,
            ),
            (
                "_ZN3std3sys4sync5mutex5futex5Mutex14lock_contended17h0123456789abcdefE",
                Callee::Follow,
            ),
            (
                "_ZN16parking_lot_core11parking_lot4park17h0123456789abcdefE",
                Callee::Follow,
            ),
            ("syscall", Callee::Stop),
            ("sched_yield", Callee::Stop),
            // The allocator shim as rustc 1.95 names it (x86_64 binary).
            ("_RNvCsfLfy6EI15iL_7___rustc14___rust_dealloc", Callee::Stop),
        ] {
            assert_eq!(callee(a64, label), expected, "{label}");
        }
        assert_eq!(
            display(
                a64,
                "_ZN8spinlock5locks6ticket6Ticket4wait17h3a7484c873113981E"
            ),
            "spinlock::locks::ticket::Ticket::wait"
        );
    }

    #[test]
    fn elfv1_code_labels_lose_their_dot() {
        let be = isa("powerpc64-unknown-linux-gnu");
        let label = "._ZN8spinlock5locks9yield_now17hfc6ff4f2fcc6d2d6E";
        assert_eq!(display(be, label), "spinlock::locks::yield_now");
        assert_eq!(callee(be, ".syscall"), Callee::Stop);
        assert_eq!(callee(be, ".__atomic_compare_exchange_4"), Callee::Follow);
        // Little-endian POWER (ELFv2) has no dot labels.
        assert_eq!(display(isa("powerpc64le-unknown-linux-gnu"), ".x"), ".x");
    }
}
