//! x86's local atomics: `cmpxchg` and `xadd` without the `lock` prefix.
//! Without `lock` the read-modify-write is still one instruction, so it is
//! atomic against interrupts and signals on this CPU but not against other
//! CPUs: exactly Linux's `local_cmpxchg` that seed 000 measures.

use std::sync::atomic::AtomicUsize;

#[inline(always)]
pub fn cas_nolock(a: &AtomicUsize, old: usize, new: usize) -> usize {
    let prev: usize;
    // SAFETY: `a` is a valid, aligned usize; cmpxchg compares [a] with
    // eax/rax and stores `new` on a match, leaving the old value in eax/rax.
    unsafe {
        #[cfg(target_arch = "x86_64")]
        core::arch::asm!("cmpxchg qword ptr [{p}], {new}", p = in(reg) a.as_ptr(),
            new = in(reg) new, inout("rax") old => prev, options(nostack));
        #[cfg(target_arch = "x86")]
        core::arch::asm!("cmpxchg dword ptr [{p}], {new}", p = in(reg) a.as_ptr(),
            new = in(reg) new, inout("eax") old => prev, options(nostack));
    }
    prev
}

#[inline(always)]
pub fn xadd_nolock(a: &AtomicUsize, v: usize) -> usize {
    let mut prev = v;
    // SAFETY: `a` is a valid, aligned usize; xadd swaps the register with
    // [a] and stores the sum.
    unsafe {
        #[cfg(target_arch = "x86_64")]
        core::arch::asm!("xadd qword ptr [{p}], {v}", p = in(reg) a.as_ptr(),
            v = inout(reg) prev, options(nostack));
        #[cfg(target_arch = "x86")]
        core::arch::asm!("xadd dword ptr [{p}], {v}", p = in(reg) a.as_ptr(),
            v = inout(reg) prev, options(nostack));
    }
    prev.wrapping_add(v)
}
