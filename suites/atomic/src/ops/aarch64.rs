//! arm64's two ways to do a compare-and-swap.
//!
//! ARMv8.0 has only load-exclusive/store-exclusive (LL/SC) loops; ARMv8.1
//! added LSE single-instruction atomics (`cas`, `casal`). Rust's default
//! build calls out-of-line helpers that pick one at run time, which hides
//! the difference users ask about, so both are written out here. The
//! "local" forms have no ordering; the "sync" forms acquire and release.

use std::sync::atomic::AtomicUsize;

pub fn has_lse() -> bool {
    std::arch::is_aarch64_feature_detected!("lse")
}

macro_rules! llsc_cas {
    ($name:ident, $ld:literal, $st:literal) => {
        #[inline(always)]
        pub fn $name(a: &AtomicUsize, old: usize, new: usize) -> usize {
            let prev: usize;
            // SAFETY: `a` is a valid, aligned usize; the loop retries only
            // when the exclusive store loses its reservation.
            unsafe {
                core::arch::asm!(
                    "2:",
                    concat!($ld, " {prev}, [{p}]"),
                    "cmp {prev}, {old}",
                    "b.ne 3f",
                    concat!($st, " {fail:w}, {new}, [{p}]"),
                    "cbnz {fail:w}, 2b",
                    "3:",
                    p = in(reg) a.as_ptr(), old = in(reg) old, new = in(reg) new,
                    prev = out(reg) prev, fail = out(reg) _,
                    options(nostack),
                );
            }
            prev
        }
    };
}

llsc_cas!(cas_llsc_relaxed, "ldxr", "stxr");
// ldaxr/stlxr: load-acquire and store-release exclusives, the ordered LL/SC
// CAS seed 000 measures (what a SeqCst compare_exchange compiles to).
llsc_cas!(cas_llsc_sync, "ldaxr", "stlxr");

macro_rules! lse_cas {
    ($name:ident, $inner:ident, $insn:literal) => {
        #[inline(always)]
        pub fn $name(a: &AtomicUsize, old: usize, new: usize) -> usize {
            #[target_feature(enable = "lse")]
            unsafe fn $inner(a: &AtomicUsize, old: usize, new: usize) -> usize {
                let mut prev = old;
                // SAFETY: `a` is a valid, aligned usize; cas leaves the old
                // memory value in the compare register.
                unsafe {
                    core::arch::asm!(concat!($insn, " {prev}, {new}, [{p}]"),
                        p = in(reg) a.as_ptr(), new = in(reg) new, prev = inout(reg) prev,
                        options(nostack));
                }
                prev
            }
            // SAFETY: only offered by `cas_variants` when `has_lse()`.
            unsafe { $inner(a, old, new) }
        }
    };
}

lse_cas!(cas_lse_relaxed, cas_lse_relaxed_inner, "cas");
// casal: CAS with acquire and release, the ordered LSE CAS seed 000
// measures (what a SeqCst compare_exchange compiles to with LSE).
lse_cas!(cas_lse_sync, cas_lse_sync_inner, "casal");
