//! What the counts leave out, because where the linker placed the code
//! decides it rather than what the code does; counted, a lock nobody
//! touched gains an instruction when another lock in the same binary
//! grows. Two things:
//!
//! - **padding** ([`is_padding`]): compilers align loops and jump targets
//!   with no-op instructions, and a block that falls into an aligned loop
//!   executes them. Only encodings that are no-ops by definition are left
//!   out; a real instruction never is.
//! - **a partial copy of a page-crossing instruction**
//!   ([`is_partial_copy`]): QEMU 7.2 ends a block with the first bytes of
//!   an instruction that crosses into the next page (undecodable:
//!   `.byte 0x8d`), then translates the whole instruction again as the
//!   next block's first, so it executed twice in the counts. Seen: i686
//!   parking_lot's FairMutex 9 -> 10 insns/op when the ticket lock gained
//!   a load and its loop's `lea` came to straddle a page.

/// The guest's instruction set, from QEMU's target name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Isa {
    I386,
    X86_64,
    Aarch64,
    /// Big- or little-endian.
    Power {
        big: bool,
    },
    Mips,
    Riscv,
    Sparc,
    S390x,
    Other,
}

impl Isa {
    /// `i386`, `x86_64`, `aarch64`, `ppc64`, `ppc64le`, `mips`, `mips64el`,
    /// `riscv64`, `sparc64`, `s390x`, ... (QEMU's `TARGET_NAME`).
    pub fn from_target_name(name: &str) -> Isa {
        match name {
            "i386" => Isa::I386,
            "x86_64" => Isa::X86_64,
            "aarch64" | "aarch64_be" => Isa::Aarch64,
            n if n.starts_with("ppc") => Isa::Power {
                big: !n.ends_with("le"),
            },
            n if n.starts_with("mips") => Isa::Mips,
            n if n.starts_with("riscv") => Isa::Riscv,
            n if n.starts_with("sparc") => Isa::Sparc,
            "s390x" => Isa::S390x,
            _ => Isa::Other,
        }
    }
}

/// Whether the instruction encoded in `bytes` is a no-op used as padding.
pub fn is_padding(isa: Isa, bytes: &[u8]) -> bool {
    match isa {
        Isa::I386 | Isa::X86_64 => x86(bytes, isa == Isa::I386),
        Isa::Aarch64 => bytes == [0x1f, 0x20, 0x03, 0xd5],
        // ori 0,0,0
        Isa::Power { big: true } => bytes == [0x60, 0, 0, 0],
        Isa::Power { big: false } => bytes == [0, 0, 0, 0x60],
        // sll $0,$0,0 in either byte order.
        Isa::Mips => bytes == [0, 0, 0, 0],
        // addi x0,x0,0 and c.nop.
        Isa::Riscv => bytes == [0x13, 0, 0, 0] || bytes == [0x01, 0],
        // sethi 0,%g0
        Isa::Sparc => bytes == [0x01, 0, 0, 0],
        // bcr 0,rX and bc 0,d(x,b): branches on an empty mask never go.
        // (bcr 14,0 and 15,0 are barriers: their mask is not 0.)
        Isa::S390x => match bytes {
            [0x07, r] => r >> 4 == 0,
            [0x47, m, _, _] => m >> 4 == 0,
            _ => false,
        },
        Isa::Other => false,
    }
}

/// Whether the last instruction of a block (at `vaddr`, `size` bytes,
/// disassembled as `text`) is a partial copy that the next block executes
/// whole: it ends exactly at a page boundary and could not be decoded
/// (a data directive in place of an instruction).
pub fn is_partial_copy(vaddr: u64, size: usize, text: &str) -> bool {
    const PAGE: u64 = 4096;
    let undecoded = [".byte", ".short", ".hword", ".word", ".long", "(bad)"]
        .iter()
        .any(|d| text.trim_start().starts_with(d));
    size > 0 && (vaddr + size as u64).is_multiple_of(PAGE) && undecoded
}

/// x86's no-ops: `nop` (0x90, with operand-size or segment prefixes),
/// the multi-byte `nop r/m` (0f 1f), and on i386 the classic padding that
/// moves a register to itself: `mov %esi,%esi` and `lea 0(%esi),%esi`
/// with any zero displacement and no index. (In 64-bit mode a 32-bit move
/// clears the upper half, so those are real there.)
fn x86(bytes: &[u8], i386: bool) -> bool {
    let body = {
        let mut b = bytes;
        while let [0x66 | 0x2e | 0x3e, rest @ ..] = b {
            b = rest;
        }
        b
    };
    match body {
        [0x90] => true,
        [0x0f, 0x1f, ..] => true,
        [0x89 | 0x8b, modrm] if i386 => modrm >> 6 == 3 && (modrm >> 3) & 7 == modrm & 7,
        [0x8d, modrm, rest @ ..] if i386 => lea_to_itself(*modrm, rest),
        _ => false,
    }
}

/// `lea disp(%r[,%eiz,1]),%r` with a zero displacement.
fn lea_to_itself(modrm: u8, rest: &[u8]) -> bool {
    let (mode, reg, rm) = (modrm >> 6, (modrm >> 3) & 7, modrm & 7);
    if mode == 3 {
        return false;
    }
    let (base, disp) = if rm == 4 {
        // A SIB byte: no index (4) and scale 1 only.
        let Some((&sib, disp)) = rest.split_first() else {
            return false;
        };
        if (sib >> 3) & 7 != 4 || sib >> 6 != 0 {
            return false;
        }
        (sib & 7, disp)
    } else {
        (rm, rest)
    };
    // Mode 0 with base 5 is an absolute address, not a register.
    if mode == 0 && base == 5 {
        return false;
    }
    let want = match mode {
        0 => 0,
        1 => 1,
        _ => 4,
    };
    base == reg && disp.len() == want && disp.iter().all(|&b| b == 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Padding as the assemblers and LLVM emit it (`objdump -d` of each
    /// target's suite binaries), and real instructions next to it.
    #[test]
    fn each_architectures_no_ops_and_only_them() {
        let i386 = Isa::from_target_name("i386");
        for pad in [
            &[0x90][..],
            &[0x66, 0x90],
            &[0x0f, 0x1f, 0x00],
            &[0x0f, 0x1f, 0x40, 0x00],
            &[0x0f, 0x1f, 0x44, 0x00, 0x00],
            &[0x66, 0x0f, 0x1f, 0x44, 0x00, 0x00],
            &[0x0f, 0x1f, 0x80, 0, 0, 0, 0],
            &[0x66, 0x2e, 0x0f, 0x1f, 0x84, 0, 0, 0, 0, 0],
            // lea 0x0(%esi,%eiz,1),%esi; lea 0x0(%esi),%esi; mov %esi,%esi
            &[0x8d, 0xb4, 0x26, 0, 0, 0, 0],
            &[0x8d, 0x74, 0x26, 0x00],
            &[0x8d, 0x76, 0x00],
            &[0x8d, 0xb6, 0, 0, 0, 0],
            &[0x8d, 0xbc, 0x27, 0, 0, 0, 0],
            &[0x89, 0xf6],
        ] {
            assert!(is_padding(i386, pad), "{pad:x?}");
        }
        for real in [
            &[0x8d, 0x74, 0x26, 0x01][..], // lea 1(%esi),%esi
            &[0x8d, 0x76, 0x04],           // lea 4(%esi),%esi
            &[0x8d, 0x44, 0x24, 0x10],     // lea 0x10(%esp),%eax
            &[0x8d, 0x04, 0x36],           // lea (%esi,%esi,1),%eax
            &[0x89, 0xc7],                 // mov %eax,%edi
            &[0xf0, 0x0f, 0xb0, 0x0e],     // lock cmpxchg %cl,(%esi)
            &[0x0f, 0xae, 0xf0],           // mfence
        ] {
            assert!(!is_padding(i386, real), "{real:x?}");
        }
        let x64 = Isa::from_target_name("x86_64");
        assert!(is_padding(x64, &[0x66, 0x0f, 0x1f, 0x44, 0, 0]));
        // In 64-bit mode mov %esi,%esi zero-extends: real.
        assert!(!is_padding(x64, &[0x89, 0xf6]));
        assert!(!is_padding(x64, &[0xf0, 0x83, 0x0c, 0x24, 0x00])); // lock orl $0,(%rsp)

        let a64 = Isa::from_target_name("aarch64");
        assert!(is_padding(a64, &[0x1f, 0x20, 0x03, 0xd5]));
        assert!(!is_padding(a64, &[0xbf, 0x3b, 0x03, 0xd5])); // dmb ish
        let be = Isa::from_target_name("ppc64");
        let le = Isa::from_target_name("ppc64le");
        assert!(is_padding(be, &[0x60, 0, 0, 0]) && is_padding(le, &[0, 0, 0, 0x60]));
        assert!(!is_padding(be, &[0x7c, 0x20, 0x04, 0xac])); // lwsync
        assert!(!is_padding(le, &[0x60, 0, 0, 0]));
        let mips = Isa::from_target_name("mips64el");
        assert!(is_padding(mips, &[0, 0, 0, 0]));
        assert!(!is_padding(mips, &[0x0f, 0, 0, 0])); // sync
        let rv = Isa::from_target_name("riscv64");
        assert!(is_padding(rv, &[0x13, 0, 0, 0]) && is_padding(rv, &[0x01, 0]));
        assert!(!is_padding(rv, &[0x0f, 0x00, 0x30, 0x03])); // fence rw,rw
        let sparc = Isa::from_target_name("sparc64");
        assert!(is_padding(sparc, &[0x01, 0, 0, 0]));
        assert!(!is_padding(sparc, &[0x81, 0x43, 0xe0, 0x0f])); // membar
        let z = Isa::from_target_name("s390x");
        assert!(is_padding(z, &[0x07, 0x00]) && is_padding(z, &[0x07, 0x07]));
        assert!(is_padding(z, &[0x47, 0x00, 0x00, 0x00]));
        assert!(!is_padding(z, &[0x07, 0xe0])); // bcr 14,0: a barrier
        assert!(!is_padding(z, &[0x07, 0xf0])); // bcr 15,0
        assert!(!is_padding(z, &[0x47, 0xf0, 0x10, 0x00])); // b 0(%r1)
        assert!(!is_padding(Isa::Other, &[0x90]));
    }

    /// As QEMU 7.2 showed them: a block ending at 0x80ccffe with two bytes
    /// of `lea 4(%esp),%ecx`, whose next block starts at 0x80ccffe.
    #[test]
    fn a_partial_copy_ends_on_a_page_and_does_not_decode() {
        assert!(is_partial_copy(0x080c_cffe, 2, ".byte 0x8d"));
        assert!(is_partial_copy(0x0805_2fff, 1, ".byte 0x8d"));
        // Decoded, or not at a page's end: a real instruction.
        assert!(!is_partial_copy(0x080c_cffe, 2, "movl %ebx, (%edx)"));
        assert!(!is_partial_copy(0x080c_cffa, 2, ".byte 0x8d"));
        assert!(!is_partial_copy(0x080c_cffc, 0, ".byte 0x8d"));
    }
}
