//! The ordering footprint of each lock operation and atomic primitive: the
//! instructions that order memory, by class (full barrier, one-way, atomic
//! RMW; outlined atomics counted in the class their suffix names), each
//! with its canonical name, so that a change reads `ticket unlock lwsync
//! 1 -> 0`. Two views, from one classification table ([`classify::TABLE`]):
//!
//! - **executed** ([`executed()`]): what one operation of a counted cell
//!   executed under the QEMU plugin (the suite's `executed` records, read
//!   into `protocol::Parsed::executed` and `results::SuiteRun::executed`),
//!   per op, exactly: the uncontended fast path;
//! - **static** ([`static_footprint()`], [`for_target`]): every
//!   instruction of each operation's whole code in the suite binary, found
//!   from the suite's `probes` record and disassembled with the target's
//!   binutils objdump, following the calls the lock makes ([`symbols`]),
//!   so the contended and hand-over paths count too.
//!
//! Static attribution: an operation's code is its probe function and every
//! function reached from it by direct calls and tail jumps that is lock
//! code (`symbols::callee`), each counted once per operation however many
//! times it is called, and counted for every operation that reaches it (a
//! slow path shared by lock and unlock counts in both). A call to an
//! outlined atomic counts once per call site as `call __aarch64_cas4_acq`
//! in its suffix's class, and the helper's body counts once, like any
//! callee. [`StaticFootprint::followed`] lists the functions counted,
//! [`StaticFootprint::stopped`] those called and not followed.

pub mod canonical;
pub mod classify;
mod decode;
pub mod executed;
pub mod objdump;
#[cfg(test)]
mod real_lines;
pub mod static_code;
pub mod symbols;

pub use classify::{classify, classify_call, Arch, Class, Classified, Isa};
pub use executed::{executed, ExecutedFootprint};
pub use static_code::{
    for_target, static_footprint, static_footprints, StaticFootprint, StaticJob,
};

use crate::name::Name;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

/// (suite, unit, op): `("spinlock", "ticket", "unlock")`,
/// `("atomic", "cas_sync", "op")`.
pub type Key = (Name, Name, Name);

/// One line of a footprint: how many of one canonical instruction (or
/// outlined call) an operation has, statically (`u32`) or per op as
/// executed (`f64`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entry<N> {
    pub class: Class,
    pub insn: String,
    pub count: N,
}

/// Entries sorted by class and name, from counts by classified instruction.
fn entries<N>(counts: BTreeMap<Classified, N>) -> Vec<Entry<N>> {
    counts
        .into_iter()
        .map(|(c, count)| Entry {
            class: c.class,
            insn: c.insn,
            count,
        })
        .collect()
}

/// One instruction whose count differs between two footprints.
#[derive(Clone, Debug, PartialEq)]
pub struct Change<N> {
    pub class: Class,
    pub insn: String,
    pub before: N,
    pub after: N,
}

impl<N: fmt::Display> fmt::Display for Change<N> {
    /// `lwsync 1 -> 0` (the class is the caller's to show).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} -> {}", self.insn, self.before, self.after)
    }
}

/// Every instruction whose count differs, in class and name order: one
/// footprint absent from the other counts as zero.
pub fn changes<N: Copy + PartialEq + Default>(
    before: &[Entry<N>],
    after: &[Entry<N>],
) -> Vec<Change<N>> {
    let mut both: BTreeMap<(Class, &str), (N, N)> = BTreeMap::new();
    for e in before {
        both.entry((e.class, &e.insn)).or_default().0 = e.count;
    }
    for e in after {
        both.entry((e.class, &e.insn)).or_default().1 = e.count;
    }
    both.into_iter()
        .filter(|(_, (b, a))| b != a)
        .map(|((class, insn), (before, after))| Change {
            class,
            insn: insn.to_string(),
            before,
            after,
        })
        .collect()
}

/// Why a static footprint could not be computed.
#[derive(Debug)]
pub enum FootprintError {
    /// The classification table has no rules for this target.
    UnknownArch { triple: Name },
    /// objdump could not be started (`package` provides it).
    Objdump {
        program: PathBuf,
        source: std::io::Error,
    },
    ObjdumpFailed {
        program: PathBuf,
        binary: PathBuf,
        stderr: String,
    },
    /// The binary has no function labelled as the probes' anchor.
    NoAnchor { anchor: String, binary: PathBuf },
    /// No function starts where a probe's offset leads.
    NoProbe {
        unit: Name,
        op: Name,
        addr: u64,
        binary: PathBuf,
    },
}

impl fmt::Display for FootprintError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FootprintError::UnknownArch { triple } => {
                write!(f, "no ordering classification for {triple}")
            }
            FootprintError::Objdump { program, source } => write!(
                f,
                "cannot run {}: {source} (package {})",
                program.display(),
                objdump::package_of(program)
            ),
            FootprintError::ObjdumpFailed {
                program,
                binary,
                stderr,
            } => write!(
                f,
                "{} -d {} failed: {stderr}",
                program.display(),
                binary.display()
            ),
            FootprintError::NoAnchor { anchor, binary } => write!(
                f,
                "{}: no function {anchor} (a suite from before protocol 3?)",
                binary.display()
            ),
            FootprintError::NoProbe {
                unit,
                op,
                addr,
                binary,
            } => write!(
                f,
                "{}: the probe of {unit} {op} leads to {addr:#x}, where no function starts",
                binary.display()
            ),
        }
    }
}

impl std::error::Error for FootprintError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FootprintError::Objdump { source, .. } => Some(source),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn e<N>(class: Class, insn: &str, count: N) -> Entry<N> {
        Entry {
            class,
            insn: insn.into(),
            count,
        }
    }

    #[test]
    fn changes_read_as_the_issue_writes_them() {
        let relaxed = [e(Class::AtomicRmw, "lwarx", 1u32)];
        let release = [
            e(Class::FullBarrier, "lwsync", 1),
            e(Class::AtomicRmw, "lwarx", 1),
        ];
        let c = changes(&release, &relaxed);
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].to_string(), "lwsync 1 -> 0");
        assert_eq!(c[0].class, Class::FullBarrier);
        assert!(changes(&release, &release).is_empty());
        assert_eq!(changes(&relaxed, &release)[0].to_string(), "lwsync 0 -> 1");
    }
}
