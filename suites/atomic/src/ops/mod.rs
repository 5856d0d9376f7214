//! The operations seed 000 compares, one function per variant.
//!
//! "sync" is the fully ordered form a lock or a cross-CPU counter needs;
//! "local" is the cheapest form that is still atomic with respect to the
//! same CPU (interrupts, signals), which is all per-CPU data needs. On x86
//! that is the instruction without its `lock` prefix; elsewhere the best
//! portable stand-in is relaxed ordering, and on arm64 both the LL/SC and
//! the LSE (single-instruction) forms are measured where the CPU has LSE.

use std::sync::atomic::{fence, AtomicUsize, Ordering};

#[cfg(target_arch = "aarch64")]
pub mod aarch64;
#[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
pub mod x86;

/// A compare-and-swap variant: returns the previous value.
pub type Cas = fn(&AtomicUsize, usize, usize) -> usize;
/// An add-and-return variant: returns the new value.
pub type AddReturn = fn(&AtomicUsize, usize) -> usize;

#[inline(always)]
pub fn cas_sync(a: &AtomicUsize, old: usize, new: usize) -> usize {
    // SeqCst (on failure too): the fully ordered CAS seed 000 measures,
    // Linux's cmpxchg().
    a.compare_exchange(old, new, Ordering::SeqCst, Ordering::SeqCst)
        .unwrap_or_else(|v| v)
}

#[inline(always)]
pub fn cas_relaxed(a: &AtomicUsize, old: usize, new: usize) -> usize {
    a.compare_exchange(old, new, Ordering::Relaxed, Ordering::Relaxed)
        .unwrap_or_else(|v| v)
}

#[inline(always)]
pub fn add_return_sync(a: &AtomicUsize, v: usize) -> usize {
    // SeqCst: the fully ordered add-and-return seed 000 measures, Linux's
    // atomic_add_return().
    a.fetch_add(v, Ordering::SeqCst).wrapping_add(v)
}

#[inline(always)]
pub fn add_return_relaxed(a: &AtomicUsize, v: usize) -> usize {
    a.fetch_add(v, Ordering::Relaxed).wrapping_add(v)
}

#[inline(always)]
pub fn fence_seqcst() {
    // SeqCst: the full barrier seed 000 measures, Linux's smp_mb().
    fence(Ordering::SeqCst);
}

/// The local CAS of this architecture and the name of what it compiles to.
pub fn cas_local() -> (Cas, &'static str) {
    #[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
    return (x86::cas_nolock, "cmpxchg without lock prefix");
    #[allow(unreachable_code)]
    (cas_relaxed, "relaxed compare_exchange")
}

/// The local add-and-return of this architecture and its name.
pub fn add_return_local() -> (AddReturn, &'static str) {
    #[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
    return (x86::xadd_nolock, "xadd without lock prefix");
    #[allow(unreachable_code)]
    (add_return_relaxed, "relaxed fetch_add")
}

/// Every CAS this build and CPU can run, by op name, in table order.
#[cfg_attr(not(target_arch = "aarch64"), allow(unused_mut))]
pub fn cas_variants() -> Vec<(&'static str, Cas)> {
    let mut v: Vec<(&'static str, Cas)> =
        vec![("cas_local", cas_local().0), ("cas_sync", cas_sync)];
    #[cfg(target_arch = "aarch64")]
    {
        v.push(("cas_local_llsc", aarch64::cas_llsc_relaxed));
        v.push(("cas_sync_llsc", aarch64::cas_llsc_sync));
        if aarch64::has_lse() {
            v.push(("cas_local_lse", aarch64::cas_lse_relaxed));
            v.push(("cas_sync_lse", aarch64::cas_lse_sync));
        }
    }
    v
}

pub fn add_return_variants() -> Vec<(&'static str, AddReturn)> {
    vec![
        ("add_return_local", add_return_local().0),
        ("add_return_sync", add_return_sync),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_cas_swaps_only_on_match() {
        for (name, cas) in cas_variants() {
            let a = AtomicUsize::new(5);
            assert_eq!(cas(&a, 4, 9), 5, "{name}");
            assert_eq!(a.load(Ordering::Relaxed), 5, "{name}");
            assert_eq!(cas(&a, 5, 9), 5, "{name}");
            assert_eq!(a.load(Ordering::Relaxed), 9, "{name}");
        }
    }

    #[test]
    fn every_add_returns_the_new_value() {
        for (name, add) in add_return_variants() {
            let a = AtomicUsize::new(5);
            assert_eq!(add(&a, 3), 8, "{name}");
            assert_eq!(a.load(Ordering::Relaxed), 8, "{name}");
        }
    }
}
