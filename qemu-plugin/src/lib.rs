//! `insns-plugin`: a QEMU TCG plugin that counts the guest instructions
//! executed inside regions a suite marks, for the `insns_per_op` metric of
//! single-threaded cells under qemu-user. Instruction counts, unlike time
//! under an emulator, are deterministic: the same binary and command line
//! give the same counts on every run.
//!
//! The guest marks a region with two system calls (`harness::marker`:
//! number [`protocol::SYSCALL`], Linux answers ENOSYS natively and under
//! QEMU). The plugin adds each executed translation block's instruction
//! count to a counter of the vCPU (guest thread) that runs it; a region's
//! count is its thread's counter at `end` minus the counter at `begin`, so
//! other threads never leak into it. At each `end` the plugin
//!
//! - writes the count to the guest's reply pipe when the marker names one,
//!   so the suite itself can print `insns_per_op` samples, and
//! - appends `{"region":ID,"vcpu":N,"insns":COUNT}` to the file given as
//!   `out=PATH`, if any (markers that do not pair up are written as
//!   `{"region":ID,"vcpu":N,"error":"..."}` and reported on stderr).
//!
//! No-op instructions (alignment padding: `nop`, `0f 1f`, i386's `lea
//! 0(%esi),%esi`, ...) and QEMU 7.2's partial copies of page-crossing
//! instructions are not counted nor listed ([`uncounted`]): how many a path
//! executes depends on where the linker placed the code.
//!
//! Built for the host with `cargo build -p insns-plugin --release` and loaded
//! with `qemu-<arch> -plugin target/release/libinsns_plugin.so[,out=PATH]`.
//! It links QEMU's plugin API and is therefore GPL-2.0-or-later; it is never
//! linked into the xtask.

pub mod executed;
pub mod protocol;
pub mod uncounted;

// The glue calls QEMU's exported functions, which exist only inside QEMU; a
// unit-test executable could not link it.
#[cfg(not(test))]
mod plugin;
