//! The instruction sets the footprint knows, and a target's: what both the
//! canonical names ([`super::canonical`]) and the classification table
//! ([`super::classify`]) are per.

use serde::{Deserialize, Serialize};

/// The instruction sets of the matrix's targets.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Arch {
    X86,
    Aarch64,
    Power,
    Mips,
    Riscv,
    Sparc,
    S390x,
    Alpha,
}

impl Arch {
    pub const ALL: [Arch; 8] = [
        Arch::X86,
        Arch::Aarch64,
        Arch::Power,
        Arch::Mips,
        Arch::Riscv,
        Arch::Sparc,
        Arch::S390x,
        Arch::Alpha,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Arch::X86 => "x86 (x86_64, i686)",
            Arch::Aarch64 => "arm64 (aarch64)",
            Arch::Power => "POWER (powerpc64, powerpc64le)",
            Arch::Mips => "MIPS (mips32, mips64el)",
            Arch::Riscv => "RISC-V (riscv64)",
            Arch::Sparc => "SPARC (sparc64)",
            Arch::S390x => "s390x",
            Arch::Alpha => "Alpha (alpha, C suites only)",
        }
    }
}

/// An instruction set and its byte order: raw encodings (capstone's
/// `.byte` lines) are read in it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Isa {
    pub arch: Arch,
    pub big_endian: bool,
}

impl Isa {
    /// The instruction set of a Rust target triple, `None` for one the
    /// table does not cover.
    pub fn from_triple(triple: &str) -> Option<Isa> {
        let cpu = triple.split('-').next()?;
        let (arch, big_endian) = match cpu {
            "x86_64" | "i686" | "i586" | "i386" => (Arch::X86, false),
            "aarch64" => (Arch::Aarch64, false),
            "aarch64_be" => (Arch::Aarch64, true),
            "powerpc64" | "powerpc" => (Arch::Power, true),
            "powerpc64le" => (Arch::Power, false),
            "mips" | "mips64" | "mipsisa32r6" | "mipsisa64r6" => (Arch::Mips, true),
            "mipsel" | "mips64el" | "mipsisa32r6el" | "mipsisa64r6el" => (Arch::Mips, false),
            c if c.starts_with("riscv") => (Arch::Riscv, false),
            "sparc64" | "sparc" | "sparcv9" => (Arch::Sparc, true),
            "s390x" => (Arch::S390x, true),
            // GCC's triple: rustc has no alpha target.
            "alpha" | "alphaev56" | "alphaev6" | "alphaev67" => (Arch::Alpha, false),
            _ => return None,
        };
        Some(Isa { arch, big_endian })
    }
}
