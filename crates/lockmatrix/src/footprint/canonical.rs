//! One instruction's canonical name, from either disassembler's text:
//! GNU objdump's (`dmb\tish`, `lock cmpxchg %rsi,(%rdi)`, `hwsync`,
//! `sync_mb`, `fence`) or what QEMU 7.2 gives plugins (capstone's
//! `lock cmpxchgq %rsi, (%rdi)`, `sync 0`, `.byte 0x02, 0x7c, 0xa1, 0xc8`;
//! QEMU's own `sync.p`, `0x44f`, `8330000f  fence  rw,rw`). Both sides of
//! a comparison name an instruction the same way, and a footprint reads
//! like Linux's `barrier.h`: `sync`, `lwsync`, `dmb ishld`, `fence r,rw`,
//! `membar #StoreLoad`, `bcr 14,0`, `casal`, `lock xadd`.
//!
//! The operands are kept only where they say how strong a barrier is;
//! registers and addresses never are. Names for which no rule exists are
//! returned too (the mnemonic): the table decides what is plain.

use super::decode;
use super::isa::{Arch, Isa};

/// The canonical name of `text`, an instruction's disassembly without its
/// address; `None` for an empty line.
pub fn canonical(isa: Isa, text: &str) -> Option<String> {
    let (word, text) = leading_word(isa, text);
    let text = strip_comment(isa.arch, text);
    let mut words = text.split_whitespace();
    let mut mnemonic = words.next()?.to_ascii_lowercase();
    let mut rest = text.trim_start()[mnemonic.len()..].trim();
    if isa.arch == Arch::X86 {
        // Prefixes come first; only `lock` matters.
        let mut locked = false;
        while let "lock" | "xacquire" | "xrelease" = mnemonic.as_str() {
            locked |= mnemonic == "lock";
            let Some(next) = words.next() else { break };
            rest = rest.trim_start()[next.len()..].trim();
            mnemonic = next.to_ascii_lowercase();
        }
        return Some(x86(&mnemonic, rest, locked));
    }
    let ops: String = rest.split_whitespace().collect();
    let name = match isa.arch {
        Arch::X86 => unreachable!("handled above"),
        Arch::Aarch64 => aarch64(&mnemonic, &ops),
        Arch::Power => power(&mnemonic, &ops, isa.big_endian),
        Arch::Mips => mips(&mnemonic, &ops),
        Arch::Riscv => riscv(&mnemonic, &ops, word),
        Arch::Sparc => sparc(&mnemonic, &ops),
        Arch::S390x => s390x(&mnemonic, &ops),
        // Alpha's mnemonics say all there is (`mb`, `wmb`, `ldq_l`).
        Arch::Alpha => None,
    };
    Some(name.unwrap_or(mnemonic))
}

/// QEMU's RISC-V disassembler starts a line with the instruction word in
/// hex (`0330000f    fence   rw,rw`); objdump with `--no-show-raw-insn`
/// never does. Returns the word and the rest.
fn leading_word(isa: Isa, text: &str) -> (Option<u32>, &str) {
    let trimmed = text.trim_start();
    if isa.arch != Arch::Riscv {
        return (None, trimmed);
    }
    let first = trimmed.split_whitespace().next().unwrap_or("");
    let rest = trimmed[first.len()..].trim_start();
    if matches!(first.len(), 4 | 8)
        && first.chars().all(|c| c.is_ascii_hexdigit())
        && !rest.is_empty()
    {
        return (u32::from_str_radix(first, 16).ok(), rest);
    }
    (None, trimmed)
}

/// objdump's trailing comments: `// #2` on arm64, `# 4c4d... <sym>` on
/// RISC-V, x86 and MIPS (SPARC's `#LoadLoad` is an operand, and arm64's
/// `#0x60` an immediate).
fn strip_comment(arch: Arch, text: &str) -> &str {
    let marker = match arch {
        Arch::Aarch64 => "//",
        Arch::Riscv | Arch::X86 | Arch::Mips => " #",
        _ => return text,
    };
    text.find(marker).map_or(text, |i| &text[..i])
}

/// The instructions a `lock` prefix applies to, by their base mnemonic:
/// AT&T syntax adds a size suffix (`cmpxchgq`), objdump often does not.
const X86_LOCKABLE: [&str; 19] = [
    "add",
    "adc",
    "and",
    "btc",
    "btr",
    "bts",
    "cmpxchg",
    "cmpxchg8b",
    "cmpxchg16b",
    "dec",
    "inc",
    "neg",
    "not",
    "or",
    "sbb",
    "sub",
    "xor",
    "xadd",
    "xchg",
];

fn x86(mnemonic: &str, operands: &str, locked: bool) -> String {
    let base = X86_LOCKABLE
        .iter()
        .find(|&&b| {
            mnemonic == b
                || mnemonic
                    .strip_prefix(b)
                    .is_some_and(|s| matches!(s, "b" | "w" | "l" | "q"))
        })
        .copied();
    match base {
        // A locked no-op on the stack is a fence: LLVM's SeqCst fence on
        // x86_64 (`lock orl $0x0,-0x40(%rsp)`), Linux's smp_mb() (`lock;
        // addl $0,-4(%rsp)`).
        Some(b @ ("or" | "add")) if locked && stack_zero(operands) => format!("lock {b} $0,(sp)"),
        Some(b) if locked => format!("lock {b}"),
        // `xchg` with a memory operand is locked whether it says so or not.
        Some("xchg") if operands.contains(['(', '[']) => "xchg".to_string(),
        Some("xchg") => "xchg reg".to_string(),
        _ if locked => format!("lock {mnemonic}"),
        _ => mnemonic.to_string(),
    }
}

/// Whether AT&T operands are `$0` into a stack slot (`$0x0,-0x40(%rsp)`,
/// `$0, -8(%rsp)`, `$0x0,(%esp)`).
fn stack_zero(operands: &str) -> bool {
    let ops: String = operands.split_whitespace().collect();
    let Some((imm, mem)) = ops.split_once(',') else {
        return false;
    };
    matches!(imm, "$0" | "$0x0") && (mem.ends_with("(%rsp)") || mem.ends_with("(%esp)"))
}

fn aarch64(mnemonic: &str, ops: &str) -> Option<String> {
    match mnemonic {
        ".byte" => decode::aarch64(decode::word(&decode::byte_list(ops)?, false)?),
        "dmb" | "dsb" if !ops.is_empty() => Some(format!("{mnemonic} {}", ops.to_lowercase())),
        _ => None,
    }
}

fn power(mnemonic: &str, ops: &str, big_endian: bool) -> Option<String> {
    let name = match (mnemonic, ops) {
        (".byte", _) => return decode::power(decode::word(&decode::byte_list(ops)?, big_endian)?),
        ("hwsync", "") | ("sync", "" | "0") => "sync",
        ("sync", "1") => "lwsync",
        ("sync", "2") => "ptesync",
        ("sync", _) => return Some(format!("sync {ops}")),
        _ => return None,
    };
    Some(name.to_string())
}

/// A number as objdump or QEMU print it: `0x10` or `16`.
fn number(text: &str) -> Option<u32> {
    match text.strip_prefix("0x") {
        Some(hex) => u32::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

fn mips(mnemonic: &str, ops: &str) -> Option<String> {
    let stype = match (mnemonic, ops) {
        // QEMU prints a `sync` it has no name for as the bare word.
        (m, "") if m.starts_with("0x") => return decode::mips_sync(number(m)?),
        ("sync" | "sync.l", "") => 0,
        ("sync.p", "") => 0x10,
        ("sync_wmb", "") => 0x4,
        ("sync_mb", "") => 0x10,
        ("sync_acquire", "") => 0x11,
        ("sync_release", "") => 0x12,
        ("sync_rmb", "") => 0x13,
        ("sync_ginv", "") => 0x14,
        ("sync", n) => number(n)?,
        _ => return None,
    };
    Some(match stype {
        0 => "sync".to_string(),
        s => format!("sync {s:#x}"),
    })
}

fn riscv(mnemonic: &str, ops: &str, word: Option<u32>) -> Option<String> {
    if let Some(fence) = word.and_then(decode::riscv_fence) {
        return Some(fence);
    }
    match mnemonic {
        // objdump prints `fence iorw,iorw` as a bare `fence`.
        "fence" if ops.is_empty() => Some("fence iorw,iorw".to_string()),
        "fence" => {
            let (pred, succ) = ops.split_once(',')?;
            let (pred, succ) = (
                decode::riscv_fence_set(pred)?,
                decode::riscv_fence_set(succ)?,
            );
            Some(decode::riscv_fence_name(0, pred, succ))
        }
        // QEMU spells `.aqrl` as `.aq.rl`.
        m if m.ends_with(".aq.rl") => Some(m.replace(".aq.rl", ".aqrl")),
        _ => None,
    }
}

/// SPARC `membar`'s mask bits, in bit order.
const MEMBAR: [&str; 7] = [
    "#LoadLoad",
    "#StoreLoad",
    "#LoadStore",
    "#StoreStore",
    "#Lookaside",
    "#MemIssue",
    "#Sync",
];

fn sparc(mnemonic: &str, ops: &str) -> Option<String> {
    if mnemonic != "membar" {
        return None;
    }
    let mask = match number(ops) {
        Some(n) => n,
        None => ops.split('|').try_fold(0u32, |mask, flag| {
            let bit = MEMBAR.iter().position(|m| m.eq_ignore_ascii_case(flag))?;
            Some(mask | 1 << bit)
        })?,
    };
    let flags: Vec<&str> = MEMBAR
        .iter()
        .enumerate()
        .filter(|&(i, _)| mask & 1 << i != 0)
        .map(|(_, f)| *f)
        .collect();
    Some(format!("membar {}", flags.join("|")))
}

fn s390x(mnemonic: &str, ops: &str) -> Option<String> {
    let reg = |r: &str| r.strip_prefix("%r").unwrap_or(r).parse::<u32>().ok();
    match mnemonic {
        ".byte" => decode::s390x(&decode::byte_list(ops)?),
        "bcr" => {
            let (mask, r) = ops.split_once(',')?;
            Some(format!("bcr {},{}", number(mask)?, reg(r)?))
        }
        // Extended mnemonics of `bcr M,%r0`: branch to register 0 never
        // branches, 15 and 14 serialize.
        "br" if reg(ops) == Some(0) => Some("bcr 15,0".to_string()),
        "bnor" if reg(ops) == Some(0) => Some("bcr 14,0".to_string()),
        _ => None,
    }
}
