//! The classification on real disassembled lines, one test per
//! architecture. Every line below was printed by one of the two
//! disassemblers the footprint reads, and is copied as it came:
//!
//! - "objdump": `<prefix>-objdump -d --no-show-raw-insn` (GNU binutils 2.40,
//!   Debian 12), the text after the address column;
//! - "the plugin": the disassembly QEMU 7.2.22 (Debian's qemu-user) gives
//!   the insns-plugin (`qemu_plugin_insn_disas`), as it appears as a key of
//!   an `executed` record or of a histogram in the plugin's `out=` file.
//!
//! Each target has lines of the spinlock suite (the ticket and qspinlock
//! probes, and their `lock_unlock` cells' `executed` records, from a
//! 16-target `cargo xtask matrix` run of this branch) and of a C program
//! that executes every ordering instruction of its architecture once
//! (`asm/`, whose README gives the commands). The lines of the plain
//! instructions kept here are the ones most easily mistaken for ordering
//! ones (`isb`, `pause`, `xchg` of registers, `cmpxchg` without `lock`,
//! POWER's `sc`, s390x's `br %r14`, `fence.i`, RISC-V's `pause`).

use super::classify::{classify, Class, Isa};

use Class::{AtomicRmw as Rmw, FullBarrier as Full, OneWay as One};

fn check(triple: &str, lines: &[(&str, Option<(Class, &str)>)]) {
    let isa = Isa::from_triple(triple).unwrap();
    let mut wrong = Vec::new();
    for &(line, expected) in lines {
        let got = classify(isa, line).map(|c| (c.class, c.insn));
        let expected = expected.map(|(class, insn)| (class, insn.to_string()));
        if got != expected {
            wrong.push(format!("{line:?}: {got:?}, expected {expected:?}"));
        }
    }
    assert!(wrong.is_empty(), "{triple}:\n{}", wrong.join("\n"));
}

#[test]
fn x86() {
    check(
        "x86_64-unknown-linux-gnu",
        &[
            // objdump of the atomic suite's fence probe (atomic::ops::fence_seqcst),
            // then the plugin: the fence cell's executed record
            ("lock orl $0x0,-0x40(%rsp)", Some((Full, "lock or $0,(sp)"))),
            ("lock orl $0, -0x40(%rsp)", Some((Full, "lock or $0,(sp)"))),
            // objdump -d --no-show-raw-insn (binutils 2.40) of the spinlock suite, ticket lock and unlock probes
            ("mov    $0x1,%esi", None),
            ("lock xadd %esi,(%rdi)", Some((Rmw, "lock xadd"))),
            ("mov    0x4(%rdi),%eax", None),
            ("cmp    %esi,%eax", None),
            // the plugin under qemu-x86_64 (the counted run) (QEMU 7.2.22): the ticket lock_unlock cell's executed record
            ("cmpl %esi, %eax", None),
            ("cmpq %rax, %r12", None),
            ("cmpq %rbx, %r13", None),
            ("lock xaddl %esi, (%r15)", Some((Rmw, "lock xadd"))),
            // objdump -d --no-show-raw-insn (binutils 2.40) of the spinlock suite, qspinlock lock and unlock probes
            ("mov    $0x1,%ecx", None),
            ("xor    %eax,%eax", None),
            ("lock cmpxchg %ecx,(%rdi)", Some((Rmw, "lock cmpxchg"))),
            (
                "jne    783ee <_ZN8spinlock6probes4lock17haf572328b725f8f5E+0xe>",
                None,
            ),
            // the plugin under qemu-x86_64 (the counted run) (QEMU 7.2.22): the qspinlock lock_unlock cell's executed record
            ("cmpq %rax, %r12", None),
            ("cmpq %rbx, %r13", None),
            ("incq %rax", None),
            ("lock cmpxchgl %r12d, (%r15)", Some((Rmw, "lock cmpxchg"))),
            // objdump of a C program executing each instruction in inline asm (gcc -static)
            ("push   %rbx", None),
            ("mov    $0xffffffffffffffff,%r8", None),
            ("mov    $0x2,%ecx", None),
            ("mfence", Some((Full, "mfence"))),
            ("lfence", Some((Full, "lfence"))),
            ("sfence", Some((Full, "sfence"))),
            ("lock cmpxchg %rsi,(%rdi)", Some((Rmw, "lock cmpxchg"))),
            ("lock xadd %rax,(%rdi)", Some((Rmw, "lock xadd"))),
            ("xchg   %rax,(%rdi)", Some((Rmw, "xchg"))),
            ("xchg   %rax,%rsi", None),
            ("lock addl $0x1,(%rdi)", Some((Rmw, "lock add"))),
            ("lock orq $0x0,(%rdi)", Some((Rmw, "lock or"))),
            ("lock btsl $0x1,(%rdi)", Some((Rmw, "lock bts"))),
            ("lock incl (%rdi)", Some((Rmw, "lock inc"))),
            ("lock decq (%rdi)", Some((Rmw, "lock dec"))),
            ("cmpxchg %rsi,(%rdi)", None),
            ("xadd   %rax,(%rdi)", None),
            ("lock cmpxchg16b (%rdi)", Some((Rmw, "lock cmpxchg16b"))),
            (
                "lock addl $0x0,-0x8(%rsp)",
                Some((Full, "lock add $0,(sp)")),
            ),
            ("pause", None),
            // the plugin under qemu (QEMU 7.2.22) executing that program
            ("callq 0x431390", None),
            ("cmpq $-0xfff, %rax", None),
            ("cmpxchgq %rsi, (%rdi)", None),
            ("jae 0x4313b2", None),
            ("lfence ", Some((Full, "lfence"))),
            ("lock addl $0, -8(%rsp)", Some((Full, "lock add $0,(sp)"))),
            ("lock addl $1, (%rdi)", Some((Rmw, "lock add"))),
            ("lock btsl $1, (%rdi)", Some((Rmw, "lock bts"))),
            ("lock cmpxchg16b (%rdi)", Some((Rmw, "lock cmpxchg16b"))),
            ("lock cmpxchgq %rsi, (%rdi)", Some((Rmw, "lock cmpxchg"))),
            ("lock decq (%rdi)", Some((Rmw, "lock dec"))),
            ("lock incl (%rdi)", Some((Rmw, "lock inc"))),
            ("lock orq $0, (%rdi)", Some((Rmw, "lock or"))),
            ("lock xaddq %rax, (%rdi)", Some((Rmw, "lock xadd"))),
            ("mfence ", Some((Full, "mfence"))),
            ("pause ", None),
            ("sfence ", Some((Full, "sfence"))),
            ("xaddq %rax, (%rdi)", None),
            ("xchgq %rax, (%rdi)", Some((Rmw, "xchg"))),
            ("xchgq %rsi, %rax", None),
        ],
    );
    check(
        "i686-unknown-linux-gnu",
        &[
            // objdump of the atomic suite's fence probe, then the plugin
            ("mfence", Some((Full, "mfence"))),
            ("mfence ", Some((Full, "mfence"))),
            // objdump -d --no-show-raw-insn (binutils 2.40) of the spinlock suite, ticket lock and unlock probes
            ("push   %ebx", None),
            ("sub    $0x8,%esp", None),
            ("mov    0x10(%esp),%ecx", None),
            ("lock xadd %edx,(%ecx)", Some((Rmw, "lock xadd"))),
            ("xchg   %ax,%ax", None),
            ("nop", None),
            // the plugin under qemu-i386 (QEMU 7.2.22): the ticket lock_unlock cell's executed record
            ("adcl $0, %ecx", None),
            ("adcl $0, %edi", None),
            ("addl $1, %edx", None),
            ("lock xaddl %edx, (%ebp)", Some((Rmw, "lock xadd"))),
            // objdump -d --no-show-raw-insn (binutils 2.40) of the spinlock suite, qspinlock lock and unlock probes
            ("push   %ebx", None),
            ("sub    $0x8,%esp", None),
            ("mov    0x10(%esp),%ecx", None),
            ("lock cmpxchg %edx,(%ecx)", Some((Rmw, "lock cmpxchg"))),
            ("xchg   %ax,%ax", None),
            // the plugin under qemu-i386 (QEMU 7.2.22): the qspinlock lock_unlock cell's executed record
            ("adcl $0, %ecx", None),
            ("adcl $0, %edi", None),
            ("addl $1, %edx", None),
            ("lock cmpxchgl %edx, (%ebp)", Some((Rmw, "lock cmpxchg"))),
            // objdump of a C program executing each instruction in inline asm (gcc -static)
            ("lea    0x4(%esp),%ecx", None),
            ("and    $0xfffffff0,%esp", None),
            ("push   -0x4(%ecx)", None),
            ("mfence", Some((Full, "mfence"))),
            ("lfence", Some((Full, "lfence"))),
            ("sfence", Some((Full, "sfence"))),
            ("lock cmpxchg %esi,(%edi)", Some((Rmw, "lock cmpxchg"))),
            ("lock xadd %eax,(%edi)", Some((Rmw, "lock xadd"))),
            ("xchg   %eax,(%edi)", Some((Rmw, "xchg"))),
            ("xchg   %eax,%esi", None),
            ("lock addl $0x1,(%edi)", Some((Rmw, "lock add"))),
            ("lock orl $0x0,(%edi)", Some((Rmw, "lock or"))),
            ("lock btsl $0x1,(%edi)", Some((Rmw, "lock bts"))),
            ("lock incl (%edi)", Some((Rmw, "lock inc"))),
            ("lock decl (%edi)", Some((Rmw, "lock dec"))),
            ("cmpxchg %esi,(%edi)", None),
            ("xadd   %eax,(%edi)", None),
            ("lock cmpxchg8b (%edi)", Some((Rmw, "lock cmpxchg8b"))),
            (
                "lock addl $0x0,-0x4(%esp)",
                Some((Full, "lock add $0,(sp)")),
            ),
            ("pause", None),
            // the plugin under qemu (QEMU 7.2.22) executing that program
            ("addl $0x14, %esp", None),
            ("addl $0x7856f, %edx", None),
            ("calll *%gs:0x10", None),
            ("cmpxchgl %esi, (%edi)", None),
            ("lfence ", Some((Full, "lfence"))),
            ("lock addl $0, -4(%esp)", Some((Full, "lock add $0,(sp)"))),
            ("lock addl $1, (%edi)", Some((Rmw, "lock add"))),
            ("lock btsl $1, (%edi)", Some((Rmw, "lock bts"))),
            ("lock cmpxchg8b (%edi)", Some((Rmw, "lock cmpxchg8b"))),
            ("lock cmpxchgl %esi, (%edi)", Some((Rmw, "lock cmpxchg"))),
            ("lock decl (%edi)", Some((Rmw, "lock dec"))),
            ("lock incl (%edi)", Some((Rmw, "lock inc"))),
            ("lock orl $0, (%edi)", Some((Rmw, "lock or"))),
            ("lock xaddl %eax, (%edi)", Some((Rmw, "lock xadd"))),
            ("mfence ", Some((Full, "mfence"))),
            ("pause ", None),
            ("sfence ", Some((Full, "sfence"))),
            ("xaddl %eax, (%edi)", None),
            ("xchgl %eax, (%edi)", Some((Rmw, "xchg"))),
            ("xchgl %esi, %eax", None),
        ],
    );
}

#[test]
fn aarch64() {
    check(
        "aarch64-unknown-linux-gnu",
        &[
            // objdump -d --no-show-raw-insn (binutils 2.40) of the spinlock suite, ticket lock and unlock probes
            ("stp\tx30, x19, [sp, #-16]!", None),
            ("mov\tx19, x0", None),
            ("mov\tw0, #0x1                   \t// #1", None),
            ("ldar\tw8, [x8]", Some((One, "ldar"))),
            ("stlr\tw8, [x9]", Some((One, "stlr"))),
            // the plugin under qemu-aarch64 (default CPU: LSE) (QEMU 7.2.22): the ticket lock_unlock cell's executed record
            (".byte 0x20, 0x00, 0x20, 0xb8", Some((Rmw, "ldadd"))),
            ("add w8, w8, #1", None),
            ("add x25, x25, #1", None),
            ("add x27, x24, #4", None),
            ("hint #0x22", None),
            ("ldar w8, [x27]", Some((One, "ldar"))),
            ("stlr w8, [x27]", Some((One, "stlr"))),
            // objdump -d --no-show-raw-insn (binutils 2.40) of the spinlock suite, qspinlock lock and unlock probes
            ("stp\tx30, x19, [sp, #-16]!", None),
            ("mov\tx19, x0", None),
            ("mov\tw0, wzr", None),
            ("stlrb\twzr, [x0]", Some((One, "stlrb"))),
            // the plugin under qemu-aarch64 (default CPU: LSE) (QEMU 7.2.22): the qspinlock lock_unlock cell's executed record
            (".byte 0x41, 0x7c, 0xe0, 0x88", Some((One, "casa"))),
            ("add x25, x25, #1", None),
            ("add x9, x9, #1", None),
            ("adrp x16, #0x538000", None),
            ("hint #0x22", None),
            ("stlrb wzr, [x24]", Some((One, "stlrb"))),
            // objdump of a C program executing each instruction in inline asm (gcc -static)
            ("stp\tx29, x30, [sp, #-32]!", None),
            ("mov\tx29, sp", None),
            ("str\tx19, [sp, #16]", None),
            ("dmb\tish", Some((Full, "dmb ish"))),
            ("dmb\tishld", Some((Full, "dmb ishld"))),
            ("dmb\tishst", Some((Full, "dmb ishst"))),
            ("dmb\tsy", Some((Full, "dmb sy"))),
            ("dmb\tld", Some((Full, "dmb ld"))),
            ("dsb\tsy", Some((Full, "dsb sy"))),
            ("dsb\tish", Some((Full, "dsb ish"))),
            ("isb", None),
            ("ldar\tx1, [x0]", Some((One, "ldar"))),
            ("stlr\tx1, [x0]", Some((One, "stlr"))),
            ("ldapr\tx1, [x0]", Some((One, "ldapr"))),
            ("ldarb\tw1, [x0]", Some((One, "ldarb"))),
            ("stlrh\tw1, [x0]", Some((One, "stlrh"))),
            ("ldaxr\tx1, [x0]", Some((One, "ldaxr"))),
            ("stlxr\tw2, x1, [x0]", Some((One, "stlxr"))),
            ("ldxr\tx1, [x0]", Some((Rmw, "ldxr"))),
            ("stxr\tw2, x1, [x0]", Some((Rmw, "stxr"))),
            ("ldaxp\tx1, x2, [x0]", Some((One, "ldaxp"))),
            ("stlxp\tw3, x1, x2, [x0]", Some((One, "stlxp"))),
            ("cas\tx1, x2, [x0]", Some((Rmw, "cas"))),
            ("casa\tx1, x2, [x0]", Some((One, "casa"))),
            ("casl\tx1, x2, [x0]", Some((One, "casl"))),
            ("casal\tx1, x2, [x0]", Some((One, "casal"))),
            ("casab\tw1, w2, [x0]", Some((One, "casab"))),
            ("casalh\tw1, w2, [x0]", Some((One, "casalh"))),
            ("ldadd\tx1, x2, [x0]", Some((Rmw, "ldadd"))),
            ("ldadda\tx1, x2, [x0]", Some((One, "ldadda"))),
            ("ldaddl\tx1, x2, [x0]", Some((One, "ldaddl"))),
            ("ldaddal\tx1, x2, [x0]", Some((One, "ldaddal"))),
            ("swp\tx1, x2, [x0]", Some((Rmw, "swp"))),
            ("swpal\tx1, x2, [x0]", Some((One, "swpal"))),
            ("swpa\tx1, x2, [x0]", Some((One, "swpa"))),
            ("ldset\tx1, x2, [x0]", Some((Rmw, "ldset"))),
            ("ldclral\tx1, x2, [x0]", Some((One, "ldclral"))),
            ("ldeora\tx1, x2, [x0]", Some((One, "ldeora"))),
            ("stadd\tx1, [x0]", Some((Rmw, "stadd"))),
            ("stsetl\tx1, [x0]", Some((One, "stsetl"))),
            ("ldsmaxal\tx1, x2, [x0]", Some((One, "ldsmaxal"))),
            // the plugin under qemu (QEMU 7.2.22) executing that program
            (".byte 0x01, 0xc0, 0xbf, 0xf8", Some((One, "ldapr"))),
            (".byte 0x02, 0x00, 0x21, 0xf8", Some((Rmw, "ldadd"))),
            (".byte 0x02, 0x00, 0x61, 0xf8", Some((One, "ldaddl"))),
            (".byte 0x02, 0x00, 0xa1, 0xf8", Some((One, "ldadda"))),
            (".byte 0x02, 0x00, 0xe1, 0xf8", Some((One, "ldaddal"))),
            (".byte 0x02, 0x10, 0xe1, 0xf8", Some((One, "ldclral"))),
            (".byte 0x02, 0x20, 0xa1, 0xf8", Some((One, "ldeora"))),
            (".byte 0x02, 0x30, 0x21, 0xf8", Some((Rmw, "ldset"))),
            (".byte 0x02, 0x40, 0xe1, 0xf8", Some((One, "ldsmaxal"))),
            (".byte 0x02, 0x7c, 0xa1, 0xc8", Some((Rmw, "cas"))),
            (".byte 0x02, 0x7c, 0xe1, 0x08", Some((One, "casab"))),
            (".byte 0x02, 0x7c, 0xe1, 0xc8", Some((One, "casa"))),
            (".byte 0x02, 0x80, 0x21, 0xf8", Some((Rmw, "swp"))),
            (".byte 0x02, 0x80, 0xa1, 0xf8", Some((One, "swpa"))),
            (".byte 0x02, 0x80, 0xe1, 0xf8", Some((One, "swpal"))),
            (".byte 0x02, 0xfc, 0xa1, 0xc8", Some((One, "casl"))),
            (".byte 0x02, 0xfc, 0xe1, 0x48", Some((One, "casalh"))),
            (".byte 0x02, 0xfc, 0xe1, 0xc8", Some((One, "casal"))),
            (".byte 0x1f, 0x00, 0x21, 0xf8", Some((Rmw, "stadd"))),
            (".byte 0x1f, 0x30, 0x61, 0xf8", Some((One, "stsetl"))),
            ("add x0, x0, #0x60", None),
            ("adrp x0, #0x492000", None),
            ("b #0x41eb10", None),
            ("dmb ish", Some((Full, "dmb ish"))),
            ("dmb ishld", Some((Full, "dmb ishld"))),
            ("dmb ishst", Some((Full, "dmb ishst"))),
            ("dmb ld", Some((Full, "dmb ld"))),
            ("dmb sy", Some((Full, "dmb sy"))),
            ("dsb ish", Some((Full, "dsb ish"))),
            ("dsb sy", Some((Full, "dsb sy"))),
            ("isb ", None),
            ("ldar x1, [x0]", Some((One, "ldar"))),
            ("ldarb w1, [x0]", Some((One, "ldarb"))),
            ("ldaxp x1, x2, [x0]", Some((One, "ldaxp"))),
            ("ldaxr x1, [x0]", Some((One, "ldaxr"))),
            ("ldxr x1, [x0]", Some((Rmw, "ldxr"))),
            ("nop ", None),
            ("stlr x1, [x0]", Some((One, "stlr"))),
            ("stlrh w1, [x0]", Some((One, "stlrh"))),
            ("stlxp w3, x1, x2, [x0]", Some((One, "stlxp"))),
            ("stlxr w2, x1, [x0]", Some((One, "stlxr"))),
            ("stxr w2, x1, [x0]", Some((Rmw, "stxr"))),
        ],
    );
    check(
        "aarch64-unknown-linux-gnu",
        &[
            // objdump -d --no-show-raw-insn (binutils 2.40) of the spinlock suite, ticket lock and unlock probes
            ("mov\tw8, #0x1                   \t// #1", None),
            ("ldadd\tw8, w1, [x0]", Some((Rmw, "ldadd"))),
            ("add\tx8, x0, #0x4", None),
            ("ldar\tw8, [x8]", Some((One, "ldar"))),
            ("cmp\tw8, w1", None),
            ("stlr\tw8, [x9]", Some((One, "stlr"))),
            // the plugin under qemu-aarch64 -cpu neoverse-n1 (+lse build) (QEMU 7.2.22): the ticket lock_unlock cell's executed record
            (".byte 0x01, 0x03, 0x3b, 0xb8", Some((Rmw, "ldadd"))),
            ("add w8, w8, #1", None),
            ("add x25, x25, #1", None),
            ("add x28, x24, #4", None),
            ("ldar w8, [x28]", Some((One, "ldar"))),
            ("stlr w8, [x28]", Some((One, "stlr"))),
            // objdump -d --no-show-raw-insn (binutils 2.40) of the spinlock suite, qspinlock lock and unlock probes
            ("mov\tw1, wzr", None),
            ("mov\tw8, #0x1                   \t// #1", None),
            ("casa\tw1, w8, [x0]", Some((One, "casa"))),
            ("cmp\tw1, #0x0", None),
            ("stlrb\twzr, [x0]", Some((One, "stlrb"))),
            // the plugin under qemu-aarch64 -cpu neoverse-n1 (+lse build) (QEMU 7.2.22): the qspinlock lock_unlock cell's executed record
            (".byte 0x1b, 0x7f, 0xe1, 0x88", Some((One, "casa"))),
            ("add x25, x25, #1", None),
            ("add x9, x9, #1", None),
            ("b.eq #0x408bfc", None),
            ("stlrb wzr, [x24]", Some((One, "stlrb"))),
        ],
    );
}

#[test]
fn power() {
    check(
        "powerpc64le-unknown-linux-gnu",
        &[
            // objdump -d --no-show-raw-insn (binutils 2.40) of the spinlock suite, ticket lock and unlock probes
            ("lis     r2,4124", None),
            ("addi    r2,r2,31488", None),
            ("lwarx   r4,0,r3", Some((Rmw, "lwarx"))),
            ("addi    r5,r4,1", None),
            ("stwcx.  r5,0,r3", Some((Rmw, "stwcx."))),
            ("isync", Some((Full, "isync"))),
            ("nop", None),
            ("lwsync", Some((Full, "lwsync"))),
            // the plugin under qemu-ppc64le (QEMU 7.2.22): the ticket lock_unlock cell's executed record
            ("addi r23, r23, 1", None),
            ("addi r26, r26, 0xffff", None),
            ("addi r3, r3, 1", None),
            ("isync ", Some((Full, "isync"))),
            ("lwarx r3, 0, r25", Some((Rmw, "lwarx"))),
            ("lwsync ", Some((Full, "lwsync"))),
            ("stwcx. r4, 0, r25", Some((Rmw, "stwcx."))),
            // objdump -d --no-show-raw-insn (binutils 2.40) of the spinlock suite, qspinlock lock and unlock probes
            ("lis     r2,4124", None),
            ("addi    r2,r2,31488", None),
            ("li      r5,1", None),
            ("lwarx   r4,0,r3", Some((Rmw, "lwarx"))),
            ("stwcx.  r5,0,r3", Some((Rmw, "stwcx."))),
            ("lwsync", Some((Full, "lwsync"))),
            ("nop", None),
            // the plugin under qemu-ppc64le (QEMU 7.2.22): the qspinlock lock_unlock cell's executed record
            ("addi r21, r21, 1", None),
            ("addi r26, r26, 0xffff", None),
            ("addi r4, r4, 1", None),
            ("lwarx r3, 0, r25", Some((Rmw, "lwarx"))),
            ("lwsync ", Some((Full, "lwsync"))),
            ("stwcx. r23, 0, r25", Some((Rmw, "stwcx."))),
            // objdump of a C program executing each instruction in inline asm (gcc -static)
            ("lis     r2,4110", None),
            ("addi    r2,r2,31488", None),
            ("mflr    r0", None),
            ("nop", None),
            ("hwsync", Some((Full, "sync"))),
            ("lwsync", Some((Full, "lwsync"))),
            ("isync", Some((Full, "isync"))),
            ("eieio", Some((Full, "eieio"))),
            ("ptesync", Some((Full, "ptesync"))),
            ("lwarx   r9,0,r10", Some((Rmw, "lwarx"))),
            ("stwcx.  r9,0,r10", Some((Rmw, "stwcx."))),
            ("ldarx   r9,0,r10", Some((Rmw, "ldarx"))),
            ("stdcx.  r9,0,r10", Some((Rmw, "stdcx."))),
            ("lbarx   r9,0,r10", Some((Rmw, "lbarx"))),
            ("stbcx.  r9,0,r10", Some((Rmw, "stbcx."))),
            ("lharx   r9,0,r10", Some((Rmw, "lharx"))),
            ("sthcx.  r9,0,r10", Some((Rmw, "sthcx."))),
            ("lwarx   r9,0,r10,1", Some((Rmw, "lwarx"))),
            // the plugin under qemu (QEMU 7.2.22) executing that program
            (".byte 0x29, 0x50, 0x20, 0x7d", Some((Rmw, "lwarx"))),
            (".byte 0x68, 0x50, 0x20, 0x7d", Some((Rmw, "lbarx"))),
            (".byte 0x6d, 0x55, 0x20, 0x7d", Some((Rmw, "stbcx."))),
            (".byte 0xad, 0x55, 0x20, 0x7d", Some((Rmw, "sthcx."))),
            (".byte 0xe8, 0x50, 0x20, 0x7d", Some((Rmw, "lharx"))),
            ("addi r1, r1, 0x20", None),
            ("addi r10, r2, 0xa6d0", None),
            ("addi r9, r13, 0x9018", None),
            ("eieio ", Some((Full, "eieio"))),
            ("isync ", Some((Full, "isync"))),
            ("ldarx r9, 0, r10", Some((Rmw, "ldarx"))),
            ("lwarx r9, 0, r10", Some((Rmw, "lwarx"))),
            ("lwsync ", Some((Full, "lwsync"))),
            ("nop ", None),
            ("ptesync ", Some((Full, "ptesync"))),
            ("sc ", None),
            ("stdcx. r9, 0, r10", Some((Rmw, "stdcx."))),
            ("stwcx. r9, 0, r10", Some((Rmw, "stwcx."))),
            ("sync 0", Some((Full, "sync"))),
        ],
    );
    check(
        "powerpc64-unknown-linux-gnu",
        &[
            // objdump -d --no-show-raw-insn (binutils 2.40) of the spinlock suite, ticket lock and unlock probes
            ("lwarx   r4,0,r3", Some((Rmw, "lwarx"))),
            ("addi    r5,r4,1", None),
            ("stwcx.  r5,0,r3", Some((Rmw, "stwcx."))),
            (
                "bne     1000e9a8 <._ZN8spinlock6probes4lock17he46d4687fdf034daE>",
                None,
            ),
            ("lwz     r5,4(r3)", None),
            ("isync", Some((Full, "isync"))),
            ("lwsync", Some((Full, "lwsync"))),
            // the plugin under qemu-ppc64 (QEMU 7.2.22): the ticket lock_unlock cell's executed record
            ("addi r23, r23, 1", None),
            ("addi r26, r26, 0xffff", None),
            ("addi r3, r3, 1", None),
            ("isync ", Some((Full, "isync"))),
            ("lwarx r3, 0, r25", Some((Rmw, "lwarx"))),
            ("lwsync ", Some((Full, "lwsync"))),
            ("stwcx. r4, 0, r25", Some((Rmw, "stwcx."))),
            // objdump -d --no-show-raw-insn (binutils 2.40) of the spinlock suite, qspinlock lock and unlock probes
            ("li      r5,1", None),
            ("lwarx   r4,0,r3", Some((Rmw, "lwarx"))),
            ("cmpwi   r4,0", None),
            (
                "bne     1000e940 <._ZN8spinlock6probes4lock17hbb9a940e8c2835deE+0x18>",
                None,
            ),
            ("stwcx.  r5,0,r3", Some((Rmw, "stwcx."))),
            ("lwsync", Some((Full, "lwsync"))),
            // the plugin under qemu-ppc64 (QEMU 7.2.22): the qspinlock lock_unlock cell's executed record
            ("addi r22, r22, 1", None),
            ("addi r26, r26, 0xffff", None),
            ("addi r4, r4, 1", None),
            ("lwarx r3, 0, r25", Some((Rmw, "lwarx"))),
            ("lwsync ", Some((Full, "lwsync"))),
            ("stwcx. r23, 0, r25", Some((Rmw, "stwcx."))),
            // objdump of a C program executing each instruction in inline asm (gcc -static)
            ("mflr    r0", None),
            ("std     r0,16(r1)", None),
            ("stdu    r1,-112(r1)", None),
            ("nop", None),
            ("hwsync", Some((Full, "sync"))),
            ("lwsync", Some((Full, "lwsync"))),
            ("isync", Some((Full, "isync"))),
            ("eieio", Some((Full, "eieio"))),
            ("ptesync", Some((Full, "ptesync"))),
            ("lwarx   r9,0,r10", Some((Rmw, "lwarx"))),
            ("stwcx.  r9,0,r10", Some((Rmw, "stwcx."))),
            ("ldarx   r9,0,r10", Some((Rmw, "ldarx"))),
            ("stdcx.  r9,0,r10", Some((Rmw, "stdcx."))),
            ("lbarx   r9,0,r10", Some((Rmw, "lbarx"))),
            ("stbcx.  r9,0,r10", Some((Rmw, "stbcx."))),
            ("lharx   r9,0,r10", Some((Rmw, "lharx"))),
            ("sthcx.  r9,0,r10", Some((Rmw, "sthcx."))),
            ("lwarx   r9,0,r10,1", Some((Rmw, "lwarx"))),
            // the plugin under qemu (QEMU 7.2.22) executing that program
            (".byte 0x7d, 0x20, 0x50, 0x29", Some((Rmw, "lwarx"))),
            (".byte 0x7d, 0x20, 0x50, 0x68", Some((Rmw, "lbarx"))),
            (".byte 0x7d, 0x20, 0x50, 0xe8", Some((Rmw, "lharx"))),
            (".byte 0x7d, 0x20, 0x55, 0x6d", Some((Rmw, "stbcx."))),
            (".byte 0x7d, 0x20, 0x55, 0xad", Some((Rmw, "sthcx."))),
            ("addi r1, r1, 0x70", None),
            ("addi r10, r2, 0xa3c0", None),
            ("addi r9, r13, 0x9018", None),
            ("eieio ", Some((Full, "eieio"))),
            ("isync ", Some((Full, "isync"))),
            ("ldarx r9, 0, r10", Some((Rmw, "ldarx"))),
            ("lwarx r9, 0, r10", Some((Rmw, "lwarx"))),
            ("lwsync ", Some((Full, "lwsync"))),
            ("nop ", None),
            ("ptesync ", Some((Full, "ptesync"))),
            ("sc ", None),
            ("stdcx. r9, 0, r10", Some((Rmw, "stdcx."))),
            ("stwcx. r9, 0, r10", Some((Rmw, "stwcx."))),
            ("sync 0", Some((Full, "sync"))),
        ],
    );
}

#[test]
fn mips() {
    check(
        "mips-unknown-linux-gnu",
        &[
            // objdump -d --no-show-raw-insn (binutils 2.40) of the spinlock suite, ticket lock and unlock probes
            ("lui\tv0,0x16", None),
            ("addiu\tv0,v0,30220", None),
            ("li\tat,1", None),
            ("ll\ta1,0(a0)", Some((Rmw, "ll"))),
            ("sc\tv1,0(a0)", Some((Rmw, "sc"))),
            ("nop", None),
            ("sync", Some((Full, "sync"))),
            // the plugin under qemu-mips (QEMU 7.2.22): the ticket lock_unlock cell's executed record
            ("addiu\ta0,a0,1", None),
            ("addiu\tat,at,1", None),
            ("addiu\ts4,s4,1", None),
            ("ll\ta1,0(s7)", Some((Rmw, "ll"))),
            ("nop", None),
            ("sc\tat,0(s7)", Some((Rmw, "sc"))),
            ("sync", Some((Full, "sync"))),
            // objdump -d --no-show-raw-insn (binutils 2.40) of the spinlock suite, qspinlock lock and unlock probes
            ("lui\tv0,0x16", None),
            ("addiu\tv0,v0,30324", None),
            ("li\tat,1", None),
            ("ll\ta1,0(a0)", Some((Rmw, "ll"))),
            ("nop", None),
            ("sc\ta2,0(a0)", Some((Rmw, "sc"))),
            ("sync", Some((Full, "sync"))),
            // the plugin under qemu-mips (QEMU 7.2.22): the qspinlock lock_unlock cell's executed record
            ("addiu\ta0,a0,1", None),
            ("addiu\ts3,s3,1", None),
            ("addu\ts8,s8,at", None),
            ("ll\ta1,0(s7)", Some((Rmw, "ll"))),
            ("nop", None),
            ("sc\tat,0(s7)", Some((Rmw, "sc"))),
            ("sync", Some((Full, "sync"))),
            // objdump of a C program executing each instruction in inline asm (gcc -static)
            ("lui\tgp,0xa", None),
            ("addiu\tgp,gp,23536", None),
            ("addu\tgp,gp,t9", None),
            ("nop", None),
            ("sync", Some((Full, "sync"))),
            ("sync_mb", Some((Full, "sync 0x10"))),
            ("sync_wmb", Some((Full, "sync 0x4"))),
            ("sync_acquire", Some((Full, "sync 0x11"))),
            ("sync_release", Some((Full, "sync 0x12"))),
            ("sync_rmb", Some((Full, "sync 0x13"))),
            ("ll\tv1,0(v0)", Some((Rmw, "ll"))),
            ("sc\tv1,0(v0)", Some((Rmw, "sc"))),
            // the plugin under qemu (QEMU 7.2.22) executing that program
            ("0x10f", Some((Full, "sync 0x4"))),
            ("0x44f", Some((Full, "sync 0x11"))),
            ("0x48f", Some((Full, "sync 0x12"))),
            ("0x4cf", Some((Full, "sync 0x13"))),
            ("addiu\tgp,gp,27264", None),
            ("addiu\tsp,sp,-56", None),
            ("addiu\tsp,sp,56", None),
            ("ll\tv1,0(v0)", Some((Rmw, "ll"))),
            ("nop", None),
            ("sc\tv1,0(v0)", Some((Rmw, "sc"))),
            ("sync", Some((Full, "sync"))),
            ("sync.p", Some((Full, "sync 0x10"))),
        ],
    );
    check(
        "mips64el-unknown-linux-gnuabi64",
        &[
            // objdump -d --no-show-raw-insn (binutils 2.40) of the spinlock suite, ticket lock and unlock probes
            ("lui\tat,0x17", None),
            ("daddu\tv0,at,t9", None),
            ("li\tat,1", None),
            ("ll\ta1,0(a0)", Some((Rmw, "ll"))),
            ("sc\tv1,0(a0)", Some((Rmw, "sc"))),
            ("nop", None),
            ("sync", Some((Full, "sync"))),
            // the plugin under qemu-mips64el (QEMU 7.2.22): the ticket lock_unlock cell's executed record
            ("addiu\tat,at,1", None),
            ("addu\tat,a1,s6", None),
            ("beqz\tat,", None),
            ("ll\ta1,0(s5)", Some((Rmw, "ll"))),
            ("nop", None),
            ("sc\tat,0(s5)", Some((Rmw, "sc"))),
            ("sync", Some((Full, "sync"))),
            // objdump -d --no-show-raw-insn (binutils 2.40) of the spinlock suite, qspinlock lock and unlock probes
            ("lui\tat,0x17", None),
            ("li\tv1,0", None),
            ("daddu\tv0,at,t9", None),
            ("ll\ta1,0(a0)", Some((Rmw, "ll"))),
            ("nop", None),
            ("sc\ta2,0(a0)", Some((Rmw, "sc"))),
            ("sync", Some((Full, "sync"))),
            // the plugin under qemu-mips64el (QEMU 7.2.22): the qspinlock lock_unlock cell's executed record
            ("beq\ts4,s7,", None),
            ("beqz\ta1,", None),
            ("beqz\tat,", None),
            ("ll\ta1,0(s5)", Some((Rmw, "ll"))),
            ("nop", None),
            ("sc\tat,0(s5)", Some((Rmw, "sc"))),
            ("sync", Some((Full, "sync"))),
            // objdump of a C program executing each instruction in inline asm (gcc -static)
            ("daddiu\tsp,sp,-32", None),
            ("sd\tra,24(sp)", None),
            ("sd\tgp,16(sp)", None),
            ("sync", Some((Full, "sync"))),
            ("sync_mb", Some((Full, "sync 0x10"))),
            ("sync_wmb", Some((Full, "sync 0x4"))),
            ("sync_acquire", Some((Full, "sync 0x11"))),
            ("sync_release", Some((Full, "sync 0x12"))),
            ("sync_rmb", Some((Full, "sync 0x13"))),
            ("ll\tv1,0(v0)", Some((Rmw, "ll"))),
            ("sc\tv1,0(v0)", Some((Rmw, "sc"))),
            ("lld\tv1,0(v0)", Some((Rmw, "lld"))),
            ("scd\tv1,0(v0)", Some((Rmw, "scd"))),
            // the plugin under qemu (QEMU 7.2.22) executing that program
            ("0x10f", Some((Full, "sync 0x4"))),
            ("0x44f", Some((Full, "sync 0x11"))),
            ("0x48f", Some((Full, "sync 0x12"))),
            ("0x4cf", Some((Full, "sync 0x13"))),
            ("addiu\tgp,gp,-22448", None),
            ("addiu\tgp,gp,-2704", None),
            ("bal\t", None),
            ("ll\tv1,0(v0)", Some((Rmw, "ll"))),
            ("lld\tv1,0(v0)", Some((Rmw, "lld"))),
            ("nop", None),
            ("sc\tv1,0(v0)", Some((Rmw, "sc"))),
            ("scd\tv1,0(v0)", Some((Rmw, "scd"))),
            ("sync", Some((Full, "sync"))),
            ("sync.p", Some((Full, "sync 0x10"))),
        ],
    );
}

#[test]
fn riscv() {
    check(
        "riscv64gc-unknown-linux-gnu",
        &[
            // objdump -d --no-show-raw-insn (binutils 2.40) of the spinlock suite, ticket lock and unlock probes
            ("li\ta1,1", None),
            ("amoadd.w\ta1,a1,(a0)", Some((Rmw, "amoadd.w"))),
            ("lw\ta2,4(a0)", None),
            ("fence\tr,rw", Some((Full, "fence r,rw"))),
            (
                "bne\ta2,a1,1876a <_ZN8spinlock6probes4lock17h356ad0f23d77232cE+0x12>",
                None,
            ),
            ("fence\trw,w", Some((Full, "fence rw,w"))),
            // the plugin under qemu-riscv64 (QEMU 7.2.22): the ticket lock_unlock cell's executed record
            ("00158613          addi                    a2,a1,1", None),
            (
                "00b51b63          bne                     a0,a1,22                # 0x18044",
                None,
            ),
            (
                "018425af          amoadd.w                a1,s8,(s0)",
                Some((Rmw, "amoadd.w")),
            ),
            (
                "0230000f          fence                   r,rw",
                Some((Full, "fence r,rw")),
            ),
            (
                "0310000f          fence                   rw,w",
                Some((Full, "fence rw,w")),
            ),
            ("0485              addi                    s1,s1,1", None),
            // objdump -d --no-show-raw-insn (binutils 2.40) of the spinlock suite, qspinlock lock and unlock probes
            ("li\ta2,1", None),
            ("lr.w.aq\ta1,(a0)", Some((One, "lr.w.aq"))),
            (
                "bnez\ta1,1882e <_ZN8spinlock6probes4lock17h91b244c69ce70bcbE+0x10>",
                None,
            ),
            ("sc.w\ta3,a2,(a0)", Some((Rmw, "sc.w"))),
            (
                "bnez\ta3,18820 <_ZN8spinlock6probes4lock17h91b244c69ce70bcbE+0x2>",
                None,
            ),
            ("fence\trw,w", Some((Full, "fence rw,w"))),
            // the plugin under qemu-riscv64 (QEMU 7.2.22): the qspinlock lock_unlock cell's executed record
            ("00040023          sb                      zero,0(s0)", None),
            ("00158613          addi                    a2,a1,1", None),
            (
                "029b0063          beq                     s6,s1,32                # 0x17b6a",
                None,
            ),
            (
                "0310000f          fence                   rw,w",
                Some((Full, "fence rw,w")),
            ),
            (
                "140425af          lr.w.aq                 a1,(s0)",
                Some((One, "lr.w.aq")),
            ),
            (
                "1984252f          sc.w                    a0,s8,(s0)",
                Some((Rmw, "sc.w")),
            ),
            // objdump of a C program executing each instruction in inline asm (gcc -static)
            ("add\tsp,sp,-32", None),
            ("sd\tra,24(sp)", None),
            ("sd\ts0,16(sp)", None),
            ("fence\trw,rw", Some((Full, "fence rw,rw"))),
            ("fence\tr,rw", Some((Full, "fence r,rw"))),
            ("fence\trw,w", Some((Full, "fence rw,w"))),
            ("fence\tr,r", Some((Full, "fence r,r"))),
            ("fence\tw,w", Some((Full, "fence w,w"))),
            ("fence", Some((Full, "fence iorw,iorw"))),
            ("fence.tso", Some((Full, "fence.tso"))),
            ("fence.i", None),
            ("lr.w\ta5,(a3)", Some((Rmw, "lr.w"))),
            ("sc.w\ta5,a4,(a3)", Some((Rmw, "sc.w"))),
            ("lr.w.aq\ta5,(a3)", Some((One, "lr.w.aq"))),
            ("sc.w.rl\ta5,a4,(a3)", Some((One, "sc.w.rl"))),
            ("lr.d.aqrl\ta5,(a3)", Some((One, "lr.d.aqrl"))),
            ("sc.d.aqrl\ta5,a4,(a3)", Some((One, "sc.d.aqrl"))),
            ("amoswap.w.aq\ta5,a4,(a3)", Some((One, "amoswap.w.aq"))),
            ("amoadd.d\ta5,a4,(a3)", Some((Rmw, "amoadd.d"))),
            ("amoor.w.aqrl\ta5,a4,(a3)", Some((One, "amoor.w.aqrl"))),
            ("amoand.d.rl\ta5,a4,(a3)", Some((One, "amoand.d.rl"))),
            ("amomaxu.w\ta5,a4,(a3)", Some((Rmw, "amomaxu.w"))),
            // the plugin under qemu (QEMU 7.2.22) executing that program
            ("00000073          ecall                   ", None),
            ("0000100f          fence.i                 ", None),
            ("0001              nop                     ", None),
            (
                "00e6b7af          amoadd.d                a5,a4,(a3)",
                Some((Rmw, "amoadd.d")),
            ),
            (
                "0110000f          fence                   w,w",
                Some((Full, "fence w,w")),
            ),
            (
                "0220000f          fence                   r,r",
                Some((Full, "fence r,r")),
            ),
            (
                "0230000f          fence                   r,rw",
                Some((Full, "fence r,rw")),
            ),
            (
                "0310000f          fence                   rw,w",
                Some((Full, "fence rw,w")),
            ),
            (
                "0330000f          fence                   rw,rw",
                Some((Full, "fence rw,rw")),
            ),
            (
                "0ce6a7af          amoswap.w.aq            a5,a4,(a3)",
                Some((One, "amoswap.w.aq")),
            ),
            (
                "0ff0000f          fence                   iorw,iorw",
                Some((Full, "fence iorw,iorw")),
            ),
            (
                "1006a7af          lr.w                    a5,(a3)",
                Some((Rmw, "lr.w")),
            ),
            (
                "1406a7af          lr.w.aq                 a5,(a3)",
                Some((One, "lr.w.aq")),
            ),
            (
                "1606b7af          lr.d.aq.rl              a5,(a3)",
                Some((One, "lr.d.aqrl")),
            ),
            (
                "18e6a7af          sc.w                    a5,a4,(a3)",
                Some((Rmw, "sc.w")),
            ),
            (
                "1ae6a7af          sc.w.rl                 a5,a4,(a3)",
                Some((One, "sc.w.rl")),
            ),
            (
                "1ee6b7af          sc.d.aq.rl              a5,a4,(a3)",
                Some((One, "sc.d.aqrl")),
            ),
            (
                "46e6a7af          amoor.w.aq.rl           a5,a4,(a3)",
                Some((One, "amoor.w.aqrl")),
            ),
            (
                "62e6b7af          amoand.d.rl             a5,a4,(a3)",
                Some((One, "amoand.d.rl")),
            ),
            (
                "8330000f          fence                   rw,rw",
                Some((Full, "fence.tso")),
            ),
            (
                "e0e6a7af          amomaxu.w               a5,a4,(a3)",
                Some((Rmw, "amomaxu.w")),
            ),
        ],
    );
}

#[test]
fn sparc() {
    check(
        "sparc64-unknown-linux-gnu",
        &[
            // objdump -d --no-show-raw-insn (binutils 2.40) of the spinlock suite, ticket lock and unlock probes
            ("save  %sp, -176, %sp", None),
            ("ld  [ %i0 ], %o1", None),
            ("mov  %o1, %i1", None),
            ("cas  [ %i0 ], %i1, %o1", Some((Rmw, "cas"))),
            ("nop", None),
            (
                "membar  #StoreStore|#LoadStore|#StoreLoad|#LoadLoad",
                Some((Full, "membar #LoadLoad|#StoreLoad|#LoadStore|#StoreStore")),
            ),
            // the plugin under qemu-sparc64 (QEMU 7.2.22): the ticket lock_unlock cell's executed record
            ("bne  %icc, ", None),
            ("cas  [ %i3 ], %g2, %o1", Some((Rmw, "cas"))),
            ("cmp  %g2, %o1", None),
            ("cmp  %g3, 1", None),
            (
                "membar  #StoreStore|#LoadStore|#StoreLoad|#LoadLoad",
                Some((Full, "membar #LoadLoad|#StoreLoad|#LoadStore|#StoreStore")),
            ),
            ("nop ", None),
            // objdump -d --no-show-raw-insn (binutils 2.40) of the spinlock suite, qspinlock lock and unlock probes
            ("save  %sp, -176, %sp", None),
            ("mov  1, %o1", None),
            ("cas  [ %i0 ], %g0, %o1", Some((Rmw, "cas"))),
            ("mov  %g0, %i1", None),
            (
                "membar  #StoreStore|#LoadStore|#StoreLoad|#LoadLoad",
                Some((Full, "membar #LoadLoad|#StoreLoad|#LoadStore|#StoreStore")),
            ),
            ("nop", None),
            // the plugin under qemu-sparc64 (QEMU 7.2.22): the qspinlock lock_unlock cell's executed record
            ("be  %xcc, ", None),
            ("bne  %icc, ", None),
            ("bne  %xcc, ", None),
            ("cas  [ %i3 ], %g0, %o1", Some((Rmw, "cas"))),
            (
                "membar  #StoreStore|#LoadStore|#StoreLoad|#LoadLoad",
                Some((Full, "membar #LoadLoad|#StoreLoad|#LoadStore|#StoreStore")),
            ),
            // objdump of a C program executing each instruction in inline asm (gcc -static)
            ("save  %sp, -176, %sp", None),
            ("sethi  %hi(0x1ff400), %l7", None),
            ("call  100620 <__sparc_get_pc_thunk.l7>", None),
            ("membar  #LoadLoad", Some((Full, "membar #LoadLoad"))),
            ("membar  #StoreLoad", Some((Full, "membar #StoreLoad"))),
            (
                "membar  #StoreStore|#LoadStore|#StoreLoad|#LoadLoad",
                Some((Full, "membar #LoadLoad|#StoreLoad|#LoadStore|#StoreStore")),
            ),
            ("membar  #StoreStore", Some((Full, "membar #StoreStore"))),
            (
                "membar  #StoreStore|#LoadStore",
                Some((Full, "membar #LoadStore|#StoreStore")),
            ),
            ("membar  #Sync", Some((Full, "membar #Sync"))),
            (
                "membar  #MemIssue|#Lookaside",
                Some((Full, "membar #Lookaside|#MemIssue")),
            ),
            ("stbar ", Some((Full, "stbar"))),
            ("cas  [ %l7 ], %g2, %g1", Some((Rmw, "cas"))),
            ("casx  [ %l7 ], %g2, %g1", Some((Rmw, "casx"))),
            ("swap  [ %l7 ], %g1", Some((Rmw, "swap"))),
            ("ldstub  [ %l7 ], %g1", Some((Rmw, "ldstub"))),
            // the plugin under qemu (QEMU 7.2.22) executing that program
            ("add  %l7, %g1, %l7", None),
            ("b  %xcc, ", None),
            ("bcc  %xcc, ", None),
            ("cas  [ %l7 ], %g2, %g1", Some((Rmw, "cas"))),
            ("casx  [ %l7 ], %g2, %g1", Some((Rmw, "casx"))),
            ("ldstub  [ %l7 ], %g1", Some((Rmw, "ldstub"))),
            ("membar  #LoadLoad", Some((Full, "membar #LoadLoad"))),
            (
                "membar  #MemIssue|#Lookaside",
                Some((Full, "membar #Lookaside|#MemIssue")),
            ),
            ("membar  #StoreLoad", Some((Full, "membar #StoreLoad"))),
            ("membar  #StoreStore", Some((Full, "membar #StoreStore"))),
            (
                "membar  #StoreStore|#LoadStore",
                Some((Full, "membar #LoadStore|#StoreStore")),
            ),
            (
                "membar  #StoreStore|#LoadStore|#StoreLoad|#LoadLoad",
                Some((Full, "membar #LoadLoad|#StoreLoad|#LoadStore|#StoreStore")),
            ),
            ("membar  #Sync", Some((Full, "membar #Sync"))),
            ("stbar ", Some((Full, "stbar"))),
            ("swap  [ %l7 ], %g1", Some((Rmw, "swap"))),
        ],
    );
}

#[test]
fn s390x() {
    check(
        "s390x-unknown-linux-gnu",
        &[
            // objdump -d --no-show-raw-insn (binutils 2.40) of the spinlock suite, ticket lock and unlock probes
            ("l\t%r3,0(%r2)", None),
            ("lr\t%r0,%r3", None),
            ("ahi\t%r0,1", None),
            ("cs\t%r3,%r0,0(%r2)", Some((Rmw, "cs"))),
            ("nopr\t%r7", None),
            ("br\t%r14", None),
            // the plugin under qemu-s390x (QEMU 7.2.22): the ticket lock_unlock cell's executed record
            ("ahi %r0, 1", None),
            ("asi 4(%r9), 1", None),
            ("cgrjlh %r11, %r1, 0x103b18e", None),
            ("cs %r3, %r0, 0(%r9)", Some((Rmw, "cs"))),
            // objdump -d --no-show-raw-insn (binutils 2.40) of the spinlock suite, qspinlock lock and unlock probes
            ("lhi\t%r0,1", None),
            ("lhi\t%r3,0", None),
            ("cs\t%r3,%r0,0(%r2)", Some((Rmw, "cs"))),
            ("ber\t%r14", None),
            ("nopr\t%r7", None),
            ("br\t%r14", None),
            // the plugin under qemu-s390x (QEMU 7.2.22): the qspinlock lock_unlock cell's executed record
            ("cgrje %r11, %r8, 0x100bb00", None),
            ("cgrjlh %r11, %r1, 0x103b18e", None),
            ("cs %r3, %r13, 0(%r9)", Some((Rmw, "cs"))),
            ("je 0x100bad2", None),
            // objdump of a C program executing each instruction in inline asm (gcc -static)
            ("stmg\t%r6,%r15,48(%r15)", None),
            ("lay\t%r15,-160(%r15)", None),
            ("lghi\t%r6,-1", None),
            ("bnor\t%r0", Some((Full, "bcr 14,0"))),
            ("br\t%r0", Some((Full, "bcr 15,0"))),
            ("cs\t%r1,%r1,0(%r11)", Some((Rmw, "cs"))),
            ("csg\t%r2,%r3,0(%r11)", Some((Rmw, "csg"))),
            ("csy\t%r1,%r1,0(%r11)", Some((Rmw, "csy"))),
            ("cdsg\t%r4,%r6,0(%r11)", Some((Rmw, "cdsg"))),
            ("laa\t%r1,%r1,0(%r11)", Some((Rmw, "laa"))),
            ("laag\t%r2,%r3,0(%r11)", Some((Rmw, "laag"))),
            ("lan\t%r1,%r1,0(%r11)", Some((Rmw, "lan"))),
            ("br\t%r14", None),
            // the plugin under qemu (QEMU 7.2.22) executing that program
            (".byte 0x0a, 0x00", None),
            (
                ".byte 0xeb, 0x46, 0xb0, 0x00, 0x00, 0x3e",
                Some((Rmw, "cdsg")),
            ),
            ("bnor %r0", Some((Full, "bcr 14,0"))),
            ("br %r0", Some((Full, "bcr 15,0"))),
            ("br %r14", None),
            ("brasl %r14, 0x101a920", None),
            ("clgr %r2, %r0", None),
            ("cs %r1, %r1, 0(%r11)", Some((Rmw, "cs"))),
            ("csg %r2, %r3, 0(%r11)", Some((Rmw, "csg"))),
            ("csy %r1, %r1, 0(%r11)", Some((Rmw, "csy"))),
            ("laa %r1, %r1, 0(%r11)", Some((Rmw, "laa"))),
            ("laag %r2, %r3, 0(%r11)", Some((Rmw, "laag"))),
            ("lan %r1, %r1, 0(%r11)", Some((Rmw, "lan"))),
        ],
    );
}

#[test]
fn alpha() {
    check(
        "alpha-linux-gnu",
        &[
            // objdump -d --no-show-raw-insn (binutils 2.40) of the atomic-c suite, cas_sync and add_return_local probes
            ("mb", Some((Full, "mb"))),
            ("ldq_l\tv0,0(a0)", Some((Rmw, "ldq_l"))),
            ("cmpeq\tv0,a1,t0", None),
            ("beq\tt0,12000690c <cas_sync+0x1c>", None),
            ("mov\ta2,t0", None),
            ("stq_c\tt0,0(a0)", Some((Rmw, "stq_c"))),
            ("ret", None),
            ("unop\t", None),
            ("addq\tt0,a1,v0", None),
            // the plugin under qemu-alpha (QEMU 7.2.22): the cas_sync cell's executed record
            ("beq\tt0,", None),
            ("jsr\tra,(t12),", None),
            ("ldq_l\tv0,0(a0)", Some((Rmw, "ldq_l"))),
            ("stq_c\tt0,0(a0)", Some((Rmw, "stq_c"))),
            ("mb", Some((Full, "mb"))),
            // objdump of a C program executing each instruction in inline asm (asm/alpha.c)
            ("wmb", Some((Full, "wmb"))),
            ("ldq_l\tt1,0(t0)", Some((Rmw, "ldq_l"))),
            ("stq_c\tt2,0(t0)", Some((Rmw, "stq_c"))),
            ("ldl_l\tt1,8(t0)", Some((Rmw, "ldl_l"))),
            ("stl_c\tt2,8(t0)", Some((Rmw, "stl_c"))),
            ("ldq\tt1,0(t0)", None),
            ("trapb", None),
            ("jsr\tra,(t12),1200005f8 <main+0x38>", None),
            // the plugin under qemu-alpha executing that program
            ("ldl_l\tt1,8(t0)", Some((Rmw, "ldl_l"))),
            ("stl_c\tt2,8(t0)", Some((Rmw, "stl_c"))),
            ("wmb", Some((Full, "wmb"))),
            ("rduniq", None),
            ("callsys", None),
            ("stl\tt0,0(t1)", None),
        ],
    );
}
