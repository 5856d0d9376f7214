//! Names for encodings a disassembler printed as raw bytes or a raw word.
//!
//! QEMU 7.2 disassembles for plugins with capstone where it has it
//! (Debian links capstone 4: x86, arm64, POWER, s390x) and with its own
//! old binutils-derived disassemblers elsewhere (MIPS, RISC-V, SPARC).
//! Capstone 4 predates several atomics and prints them as `.byte ...`:
//! arm64's LSE (`cas`, `ldadd`, `swp`...) and RCpc (`ldapr`) instructions,
//! POWER's byte and halfword reservations (`lbarx`, `sthcx.`), s390x's
//! `cdsg`. QEMU's MIPS disassembler prints `sync` with a nonzero stype as
//! a bare word (`0x44f`), and its RISC-V one prints `fence.tso` as
//! `fence rw,rw` (only the word, which it prints first, tells them apart).
//! These functions name exactly the encodings the table classifies and
//! return `None` for everything else.

/// Bytes of `.byte 0x02, 0x7c, 0xa1, 0xc8`, `None` if not that form.
pub fn byte_list(operands: &str) -> Option<Vec<u8>> {
    operands
        .split(',')
        .map(|b| {
            let b = b.trim();
            u8::from_str_radix(b.strip_prefix("0x")?, 16).ok()
        })
        .collect()
}

/// A 32-bit instruction word from its bytes in memory order.
pub fn word(bytes: &[u8], big_endian: bool) -> Option<u32> {
    let b: [u8; 4] = bytes.try_into().ok()?;
    Some(if big_endian {
        u32::from_be_bytes(b)
    } else {
        u32::from_le_bytes(b)
    })
}

const A64_OPS: [&str; 8] = ["add", "clr", "eor", "set", "smax", "smin", "umax", "umin"];

/// arm64 LSE atomics and RCpc loads (always little-endian words).
pub fn aarch64(w: u32) -> Option<String> {
    let size = match w >> 30 {
        0 => "b",
        1 => "h",
        _ => "",
    };
    let bit = |n: u32| (w >> n) & 1 == 1;
    let order = |acquire: bool, release: bool| match (acquire, release) {
        (false, false) => "",
        (true, false) => "a",
        (false, true) => "l",
        (true, true) => "al",
    };
    // CAS{A,L,AL}{B,H}: size 0010001 L 1 Rs o0 11111 Rn Rt.
    if w & 0x3fa0_7c00 == 0x08a0_7c00 {
        return Some(format!("cas{}{size}", order(bit(22), bit(15))));
    }
    // CASP{A,L,AL}: 0 sz 0010000 L 1 Rs o0 11111 Rn Rt.
    if w & 0xbfa0_7c00 == 0x0820_7c00 {
        return Some(format!("casp{}", order(bit(22), bit(15))));
    }
    // LD<op>, ST<op>, SWP, LDAPR: size 111 0 00 A R 1 Rs o3 opc 00 Rn Rt.
    if w & 0x3f20_0c00 == 0x3820_0000 {
        let (acquire, release) = (bit(23), bit(22));
        let (o3, opc, rs, rt) = (bit(15), (w >> 12) & 7, (w >> 16) & 31, w & 31);
        return match (o3, opc) {
            (false, _) if rt == 31 && !acquire => Some(format!(
                "st{}{}{size}",
                A64_OPS[opc as usize],
                order(false, release)
            )),
            (false, _) => Some(format!(
                "ld{}{}{size}",
                A64_OPS[opc as usize],
                order(acquire, release)
            )),
            (true, 0) => Some(format!("swp{}{size}", order(acquire, release))),
            (true, 4) if acquire && !release && rs == 31 => Some(format!("ldapr{size}")),
            _ => None,
        };
    }
    // LDAPUR*, STLUR* (RCpc2): size 011001 opc 0 imm9 00 Rn Rt.
    if w & 0x3f20_0c00 == 0x1900_0000 {
        return Some(match (w >> 22) & 3 {
            0 => format!("stlur{size}"),
            1 => format!("ldapur{size}"),
            _ if size.is_empty() => "ldapursw".to_string(),
            _ => format!("ldapurs{size}"),
        });
    }
    None
}

/// POWER reservations and barriers.
pub fn power(w: u32) -> Option<String> {
    let primary = w >> 26;
    let xo = (w >> 1) & 0x3ff;
    let name = match (primary, xo) {
        (31, 20) => "lwarx",
        (31, 84) => "ldarx",
        (31, 52) => "lbarx",
        (31, 116) => "lharx",
        (31, 276) => "lqarx",
        (31, 150) => "stwcx.",
        (31, 214) => "stdcx.",
        (31, 694) => "stbcx.",
        (31, 726) => "sthcx.",
        (31, 182) => "stqcx.",
        (31, 854) => "eieio",
        (31, 598) => {
            return Some(
                match (w >> 21) & 3 {
                    0 => "sync",
                    1 => "lwsync",
                    2 => "ptesync",
                    _ => return None,
                }
                .to_string(),
            )
        }
        (19, 150) => "isync",
        _ => return None,
    };
    Some(name.to_string())
}

/// MIPS `sync` with its stype: `sync` for 0, else `sync 0x10` and so on.
pub fn mips_sync(w: u32) -> Option<String> {
    if w & 0xffff_f83f != 0x0000_000f {
        return None;
    }
    Some(match (w >> 6) & 0x1f {
        0 => "sync".to_string(),
        stype => format!("sync {stype:#x}"),
    })
}

/// A RISC-V `fence` word (MISC-MEM, funct3 0): see [`riscv_fence_name`].
pub fn riscv_fence(w: u32) -> Option<String> {
    if w & 0x707f != 0x000f {
        return None;
    }
    Some(riscv_fence_name(
        (w >> 28) & 0xf,
        (w >> 24) & 0xf,
        (w >> 20) & 0xf,
    ))
}

/// The RISC-V fence letters, most significant bit first.
const FENCE_SETS: &str = "iorw";

/// A fence's name from its fm field and predecessor and successor sets
/// (bits `iorw`): `fence.tso`; `pause` (Zihintpause: `fence w,0`, a hint
/// that orders nothing; objdump prints it `fence w,unknown`); `fence.hint`
/// for any other fence with an empty set (no rule matches it: it orders
/// nothing either); else `fence <pred>,<succ>`.
pub fn riscv_fence_name(fm: u32, pred: u32, succ: u32) -> String {
    if fm == 0b1000 && pred == 0b0011 && succ == 0b0011 {
        return "fence.tso".to_string();
    }
    if fm == 0 && pred == 0b0001 && succ == 0 {
        return "pause".to_string();
    }
    if pred == 0 || succ == 0 {
        return "fence.hint".to_string();
    }
    let set = |bits: u32| -> String {
        FENCE_SETS
            .chars()
            .enumerate()
            .filter(|&(i, _)| bits & (8 >> i) != 0)
            .map(|(_, c)| c)
            .collect()
    };
    format!("fence {},{}", set(pred), set(succ))
}

/// A fence set written as letters (`rw`, `iorw`; objdump's `unknown` for
/// the empty set) as bits.
pub fn riscv_fence_set(letters: &str) -> Option<u32> {
    if letters == "unknown" {
        return Some(0);
    }
    letters.chars().try_fold(0, |bits, c| {
        let i = FENCE_SETS.find(c)?;
        Some(bits | 8 >> i)
    })
}

/// s390x compare-and-swap, interlocked-access and serialization
/// encodings (big-endian bytes, 2, 4 or 6 of them).
pub fn s390x(b: &[u8]) -> Option<String> {
    let name = match (b.len(), b.first()?) {
        (2, 0x07) if b[1] & 0x0f == 0 && b[1] >> 4 >= 14 => {
            return Some(format!("bcr {},0", b[1] >> 4))
        }
        (4, 0xba) => "cs",
        (4, 0xbb) => "cds",
        (4, 0x93) => "ts",
        (6, 0xeb) => match b[5] {
            0x14 => "csy",
            0x30 => "csg",
            0x31 => "cdsy",
            0x3e => "cdsg",
            0xf8 => "laa",
            0xe8 => "laag",
            0xfa => "laal",
            0xea => "laalg",
            0xf4 => "lan",
            0xe4 => "lang",
            0xf6 => "lao",
            0xe6 => "laog",
            0xf7 => "lax",
            0xe7 => "laxg",
            _ => return None,
        },
        (6, 0xc8) => match b[1] & 0x0f {
            2 => "csst",
            4 => "lpd",
            5 => "lpdg",
            _ => return None,
        },
        _ => return None,
    };
    Some(name.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn riscv_fence_sets_and_tso() {
        assert_eq!(riscv_fence(0x0330_000f).unwrap(), "fence rw,rw");
        assert_eq!(riscv_fence(0x8330_000f).unwrap(), "fence.tso");
        assert_eq!(riscv_fence(0x0230_000f).unwrap(), "fence r,rw");
        assert_eq!(riscv_fence(0x0ff0_000f).unwrap(), "fence iorw,iorw");
        // Zihintpause's `pause`, Rust's spin-loop hint here.
        assert_eq!(riscv_fence(0x0100_000f).unwrap(), "pause");
        assert_eq!(riscv_fence_set("unknown"), Some(0));
        assert_eq!(riscv_fence_set("rw"), Some(0b0011));
        // fence.i is funct3 1: not a memory fence.
        assert_eq!(riscv_fence(0x0000_100f), None);
    }

    #[test]
    fn mips_sync_stypes() {
        assert_eq!(mips_sync(0x0000_000f).unwrap(), "sync");
        assert_eq!(mips_sync(0x0000_040f).unwrap(), "sync 0x10");
        assert_eq!(mips_sync(0x0000_010f).unwrap(), "sync 0x4");
        assert_eq!(mips_sync(0x0000_0010), None);
    }
}
