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
mod entry;
mod error;
pub mod executed;
pub mod isa;
pub mod objdump;
#[cfg(test)]
mod real_lines;
pub mod static_code;
pub mod symbols;

pub use classify::{classify, classify_call, Class, Classified};
pub use entry::{changes, Change, Entry, Key};
pub use error::FootprintError;
pub use executed::{executed, ExecutedFootprint};
pub use isa::{Arch, Isa};
pub use static_code::{
    for_target, static_footprint, static_footprints, StaticFootprint, StaticJob,
};

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
