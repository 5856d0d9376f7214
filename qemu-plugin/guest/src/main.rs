//! Counts a few operations with `harness::marker::insns_per_op` and prints
//! one line per operation:
//! `{"op":NAME,"iters":N,"per_op":X,"op_loop":X,"empty_loop":X,"regions":[..],"executed":{TEXT:X,..},"entered":{SYMBOL:X,..}}`
//! (`executed` and `entered` per op, `null` without a histogram), or
//! `{"op":NAME,"counted":false}` when not running under the plugin.
//!
//! `plain` and `plain_add` differ by exactly one instruction (one that is
//! not padding: `cld`, `yield`, ...), so their `per_op` must differ by exactly 1 and
//! their op-loop regions by exactly `iters`; `plain_nop` has a `nop` more,
//! which the plugin does not count (padding). The operations are then
//! counted again, named `<op>+spinner`, while a second thread spins: the
//! counts must not move.
//!
//! Usage: `insns-guest [ITERS]` (default 10000), or `insns-guest spin N`:
//! N iterations of the CAS loop and no markers, to time the plugin's
//! overhead on a tight loop (the worst case: one short block per iteration).

// Inline asm is still unstable on powerpc and mips; the guest is built with
// RUSTC_BOOTSTRAP=1 (build-std) there anyway.
#![cfg_attr(
    not(any(
        target_arch = "x86_64",
        target_arch = "x86",
        target_arch = "aarch64",
        target_arch = "arm",
        target_arch = "riscv64",
        target_arch = "loongarch64"
    )),
    feature(asm_experimental_arch)
)]

use harness::json::{obj, J};
use harness::marker::insns_per_op;
use std::hint::black_box;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

#[inline(always)]
fn nop() {
    // SAFETY: one no-op instruction.
    unsafe { std::arch::asm!("nop", options(nomem, nostack, preserves_flags)) };
}

/// One instruction that the plugin counts (not a padding encoding) and
/// that changes nothing the loop around it uses: shaped like `nop()`, so
/// the compiler lays out both loops alike.
#[inline(always)]
fn one_insn() {
    // SAFETY: one instruction with no effect on memory, the stack or any
    // register the compiler uses (x86's direction flag is clear anyway).
    unsafe {
        #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
        std::arch::asm!("cld", options(nomem, nostack));
        #[cfg(target_arch = "aarch64")]
        std::arch::asm!("yield", options(nomem, nostack, preserves_flags));
        #[cfg(any(target_arch = "powerpc", target_arch = "powerpc64"))]
        std::arch::asm!("or 0, 0, 0", options(nomem, nostack, preserves_flags));
        #[cfg(any(target_arch = "mips", target_arch = "mips64"))]
        std::arch::asm!("ssnop", options(nomem, nostack, preserves_flags));
    }
    #[cfg(not(any(
        target_arch = "x86",
        target_arch = "x86_64",
        target_arch = "aarch64",
        target_arch = "powerpc",
        target_arch = "powerpc64",
        target_arch = "mips",
        target_arch = "mips64"
    )))]
    compile_error!("one_insn: name an instruction that is not padding for this architecture");
}

fn report(name: &str, iters: u64, region: u32, op: impl FnMut(u64)) {
    let map = |m: &std::collections::BTreeMap<String, f64>| {
        J::Obj(m.iter().map(|(k, &v)| (k.clone(), J::Num(v))).collect())
    };
    match insns_per_op(region, iters, op) {
        Some(c) => {
            let (executed, entered) = match &c.executed {
                Some(x) => (map(&x.per_op), map(&x.entered)),
                None => (J::Null, J::Null),
            };
            let line = obj([
                ("op", name.into()),
                ("iters", iters.into()),
                ("per_op", c.per_op.into()),
                ("op_loop", c.op_loop.into()),
                ("empty_loop", c.empty_loop.into()),
                ("regions", c.regions.to_vec().into()),
                ("executed", executed),
                ("entered", entered),
            ]);
            println!("{line}");
        }
        None => println!(r#"{{"op":"{name}","counted":false}}"#),
    }
}

fn spin(n: u64) {
    let word = AtomicUsize::new(0);
    let word = black_box(&word);
    harness::marker::begin(9);
    for i in 0..black_box(n) {
        let i = i as usize;
        let _ = black_box(word.compare_exchange(i, i + 1, Ordering::SeqCst, Ordering::SeqCst));
    }
    harness::marker::end(9);
    println!("{}", word.load(Ordering::Relaxed));
}

fn main() {
    if std::env::args().nth(1).as_deref() == Some("spin") {
        let n = std::env::args().nth(2).and_then(|s| s.parse().ok());
        return spin(n.expect("usage: insns-guest spin N"));
    }
    let iters: u64 = std::env::args()
        .nth(1)
        .map(|s| s.parse().expect("ITERS must be a number"))
        .unwrap_or(10_000);
    ops(iters, "", 1);
    // Again while a second thread spins: a region counts only the thread
    // that opened it, so the counts must not change.
    let stop = AtomicBool::new(false);
    std::thread::scope(|scope| {
        scope.spawn(|| {
            while !stop.load(Ordering::Relaxed) {
                std::hint::spin_loop();
            }
        });
        ops(iters, "+spinner", 11);
        stop.store(true, Ordering::Relaxed);
    });
}

/// The five operations, as regions `first..first + 5`.
fn ops(iters: u64, suffix: &str, first: u32) {
    let word = AtomicUsize::new(0);
    report(&format!("plain{suffix}"), iters, first, |i| {
        black_box(i);
    });
    report(&format!("plain_nop{suffix}"), iters, first + 1, |i| {
        black_box(i);
        nop();
    });
    // A CAS that always succeeds: `expected` tracks the word.
    let mut expected = word.load(Ordering::Relaxed);
    report(&format!("cas_seqcst{suffix}"), iters, first + 2, |_| {
        let seen =
            word.compare_exchange(expected, expected + 1, Ordering::SeqCst, Ordering::SeqCst);
        expected = black_box(seen).map_or(expected, |v| v + 1);
    });
    report(
        &format!("fetch_add_relaxed{suffix}"),
        iters,
        first + 3,
        |_| {
            black_box(word.fetch_add(1, Ordering::Relaxed));
        },
    );
    report(&format!("plain_add{suffix}"), iters, first + 4, |i| {
        black_box(i);
        one_insn();
    });
}
