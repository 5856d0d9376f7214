//! A suite binary's disassembly: GNU objdump run once over the whole
//! binary (`-d --no-show-raw-insn`), parsed into functions and their
//! instructions, with each direct branch's target; and its dynamic
//! relocations (`-R`), which say where a static-pie binary's GOT slots
//! point (x86_64 reaches other crates' functions through them).

use super::error::FootprintError;
use super::isa::{Arch, Isa};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The objdump that reads `triple`'s binaries: the cross binutils beside
/// the target's gcc (`aarch64-linux-gnu-gcc` -> `aarch64-linux-gnu-objdump`,
/// from `binutils-aarch64-linux-gnu`, which the gcc package depends on),
/// or the host's `objdump` (package `binutils`) for a host-compiler linker
/// such as `cc`.
pub fn program(linker: &str) -> (PathBuf, String) {
    let name = Path::new(linker)
        .file_name()
        .map_or(linker.to_string(), |n| n.to_string_lossy().into_owned());
    let program = match name.strip_suffix("-gcc") {
        Some(prefix) => PathBuf::from(format!("{prefix}-objdump")),
        None => PathBuf::from("objdump"),
    };
    let package = package_of(&program);
    (program, package)
}

/// The Debian package of an objdump [`program`] names.
pub fn package_of(objdump: &Path) -> String {
    let name = objdump
        .file_name()
        .map_or(String::new(), |n| n.to_string_lossy().into_owned());
    match name.strip_suffix("-objdump") {
        Some(prefix) => format!("binutils-{prefix}"),
        None => "binutils".to_string(),
    }
}

/// One instruction: its address and its text (mnemonic and operands, with
/// objdump's `<symbol+offset>` annotations and comments).
#[derive(Clone, Debug)]
pub struct Insn {
    pub addr: u64,
    pub text: String,
}

/// A function as objdump labels it: from its label to the next one.
#[derive(Clone, Debug)]
pub struct Function {
    /// The label, as objdump prints it (mangled; `.name` for ELFv1 code).
    pub name: String,
    pub start: u64,
    pub insns: Vec<Insn>,
}

/// A binary's functions, sorted by address, and the targets of its
/// relocated pointer slots.
#[derive(Clone, Debug, Default)]
pub struct Disassembly {
    pub functions: Vec<Function>,
    /// Slot address -> the address it holds once relocated (`R_*_RELATIVE`
    /// relocations of a static-pie binary); empty for a fixed-address one.
    pub slots: BTreeMap<u64, u64>,
}

impl Disassembly {
    /// Runs `objdump` over `binary` and parses its output.
    pub fn of(objdump: &Path, binary: &Path) -> Result<Disassembly, FootprintError> {
        let run = |flags: &[&str]| {
            Command::new(objdump)
                .args(flags)
                .arg(binary)
                .env("LC_ALL", "C")
                .output()
                .map_err(|source| FootprintError::Objdump {
                    program: objdump.to_path_buf(),
                    package: package_of(objdump),
                    source,
                })
        };
        let out = run(&["-d", "--no-show-raw-insn"])?;
        if !out.status.success() {
            return Err(FootprintError::ObjdumpFailed {
                program: objdump.to_path_buf(),
                binary: binary.to_path_buf(),
                stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
            });
        }
        let mut d = Disassembly::parse(&String::from_utf8_lossy(&out.stdout));
        // A fixed-address binary has none ("not a dynamic object", status 1).
        let relocs = run(&["-R"])?;
        if relocs.status.success() {
            d.slots = relative_slots(&String::from_utf8_lossy(&relocs.stdout));
        }
        Ok(d)
    }

    /// Parses `objdump -d --no-show-raw-insn` output.
    pub fn parse(text: &str) -> Disassembly {
        let mut functions: Vec<Function> = Vec::new();
        for line in text.lines() {
            if let Some((start, name)) = label(line) {
                functions.push(Function {
                    name: name.to_string(),
                    start,
                    insns: Vec::new(),
                });
            } else if let (Some((addr, text)), Some(f)) = (insn(line), functions.last_mut()) {
                f.insns.push(Insn {
                    addr,
                    text: text.to_string(),
                });
            }
        }
        functions.sort_by_key(|f| f.start);
        Disassembly {
            functions,
            slots: BTreeMap::new(),
        }
    }

    /// The function whose code holds `addr`.
    pub fn containing(&self, addr: u64) -> Option<usize> {
        let i = self.functions.partition_point(|f| f.start <= addr);
        let f = self.functions.get(i.checked_sub(1)?)?;
        let last = f.insns.last().map_or(f.start, |i| i.addr);
        (addr <= last).then_some(i - 1)
    }

    /// The function labelled `name` (or `.name`, ELFv1's code label).
    pub fn by_name(&self, name: &str) -> Option<usize> {
        self.functions
            .iter()
            .position(|f| f.name == name || f.name.strip_prefix('.') == Some(name))
    }
}

/// `objdump -R`'s `0000000000173540 R_X86_64_RELATIVE  *ABS*+0x00000000000ae200`
/// lines: slot -> value. (IRELATIVE slots are resolved at run time by an
/// ifunc resolver: left out, unknown.)
pub fn relative_slots(text: &str) -> BTreeMap<u64, u64> {
    text.lines()
        .filter_map(|line| {
            let mut words = line.split_whitespace();
            let slot = u64::from_str_radix(words.next()?, 16).ok()?;
            if !words.next()?.ends_with("_RELATIVE") {
                return None;
            }
            let value = words.next()?.strip_prefix("*ABS*+0x")?;
            Some((slot, u64::from_str_radix(value, 16).ok()?))
        })
        .collect()
}

/// `0000000000400340 <name>:`
fn label(line: &str) -> Option<(u64, &str)> {
    let (addr, rest) = line.split_once(' ')?;
    let name = rest.strip_prefix('<')?.strip_suffix(">:")?;
    Some((u64::from_str_radix(addr, 16).ok()?, name))
}

/// `  400340:\tmnemonic\toperands`
fn insn(line: &str) -> Option<(u64, &str)> {
    let (addr, text) = line.split_once(':')?;
    let addr = u64::from_str_radix(addr.trim_start(), 16).ok()?;
    let text = text.trim();
    (!text.is_empty()).then_some((addr, text))
}

/// What a control transfer does, as far as following calls goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transfer {
    /// A direct branch or call to this address (a local branch, a call or
    /// a tail call: the caller tells by the target).
    Direct(u64),
    /// A call or jump through the pointer at this address (x86's
    /// `call *0x1222(%rip)  # 173328`): followed when the slot is a known
    /// relocated one ([`Disassembly::slots`]).
    Slot(u64),
    /// A call through a register: not followed, counted.
    IndirectCall,
}

/// The control transfer `text` is on `arch`, if any.
pub fn transfer(arch: Arch, text: &str) -> Option<Transfer> {
    let mnemonic = text.split_whitespace().next()?;
    let target = annotated_target(text);
    // RISC-V's far call is `auipc ra,..` + `jalr ..(ra)`, and objdump
    // annotates the `jalr` with the address it reaches.
    if let (Arch::Riscv, "jalr" | "jr", Some(t)) = (arch, mnemonic, target) {
        return Some(Transfer::Direct(t));
    }
    // x86's `call *slot(%rip)` and `jmp *slot(%rip)`, annotated with the
    // slot's address.
    let ops = text[mnemonic.len()..].trim_start();
    if arch == Arch::X86
        && (mnemonic.starts_with("call") || mnemonic.starts_with("jmp"))
        && ops.starts_with('*')
        && ops.contains("(%rip)")
    {
        return Some(target.map_or(Transfer::IndirectCall, Transfer::Slot));
    }
    if indirect_call(arch, mnemonic, text) {
        return Some(Transfer::IndirectCall);
    }
    if !direct_branch(arch, mnemonic) {
        return None;
    }
    target.map(Transfer::Direct)
}

/// `bl\t41aac0 <syscall>`, `brasl\t%r14,101a920 <syscall>`: the hex
/// address just before ` <`.
fn annotated_target(text: &str) -> Option<u64> {
    let before = &text[..text.find(" <")?];
    let hex = before.rsplit([' ', '\t', ',']).next()?;
    u64::from_str_radix(hex, 16).ok()
}

/// Mnemonics of direct branches and calls: everything that takes a code
/// address. Address computations (`adrp`, `lea`, `larl`) never start so.
fn direct_branch(arch: Arch, m: &str) -> bool {
    match arch {
        Arch::X86 => m.starts_with('j') || m.starts_with("call"),
        Arch::Aarch64 => m.starts_with('b') || m.starts_with("cb") || m.starts_with("tb"),
        Arch::Power => m.starts_with('b'),
        Arch::Mips | Arch::Riscv => m.starts_with('b') || m.starts_with('j'),
        Arch::Sparc => m.starts_with('b') || m == "call" || m.starts_with("fb"),
        Arch::S390x => m.starts_with('b') || m.starts_with('j'),
        // `br`, `bsr`, `beq`... and `fbeq`...; `jsr` and `jmp` take a register.
        Arch::Alpha => m.starts_with('b') || m.starts_with("fb"),
    }
}

fn indirect_call(arch: Arch, m: &str, text: &str) -> bool {
    let ops = text[m.len()..].trim();
    match arch {
        Arch::X86 => m.starts_with("call") && ops.starts_with('*'),
        Arch::Aarch64 => matches!(m, "blr" | "blraa" | "blrab" | "blraaz" | "blrabz"),
        Arch::Power => matches!(m, "bctrl" | "blrl"),
        Arch::Mips => m == "jalr" || m == "jalr.hb",
        // `jalr ra,...` (objdump: `jalr\ta5` links ra too); `jr` is a jump.
        Arch::Riscv => m == "jalr" && !ops.starts_with("zero"),
        Arch::Sparc => (m == "call" && ops.starts_with('%')) || m == "jmpl" && ops.ends_with("%o7"),
        Arch::S390x => matches!(m, "basr" | "balr") && !ops.ends_with(",%r0"),
        Arch::Alpha => m == "jsr" || m == "jsr_coroutine",
    }
}

impl Isa {
    /// A label as a symbol: ELFv1 (big-endian POWER) labels its code with
    /// a dot before the function descriptor's name.
    pub fn symbol<'a>(&self, label: &'a str) -> &'a str {
        if self.arch == Arch::Power && self.big_endian {
            label.strip_prefix('.').unwrap_or(label)
        } else {
            label
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn objdump_for_a_linker() {
        assert_eq!(
            program("aarch64-linux-gnu-gcc"),
            (
                PathBuf::from("aarch64-linux-gnu-objdump"),
                "binutils-aarch64-linux-gnu".to_string()
            )
        );
        assert_eq!(
            program("/usr/bin/mips64el-linux-gnuabi64-gcc").0,
            PathBuf::from("mips64el-linux-gnuabi64-objdump")
        );
        assert_eq!(
            program("cc"),
            (PathBuf::from("objdump"), "binutils".to_string())
        );
    }
}
