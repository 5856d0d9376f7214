//! lockmatrix end to end, run as a user would: the built `xtask` binary
//! with real cross compilers, real `qemu-<arch>`, a real sshd on
//! 127.0.0.1, and real git commits. One test binary, so the helpers in
//! `common` are shared without copies; `cargo xtask test` installs what
//! the tests need, the tests install nothing.

// The xtask's own output goes through its escaping macros (clippy.toml);
// a test's progress lines are the test's.
#![allow(clippy::disallowed_macros)]

mod common;
mod lab;
mod scratch;

mod against;
mod alpha;
mod bad_input;
mod ci;
mod container;
mod contended;
mod contention;
mod gate;
mod hostile_config;
mod hostile_round4;
mod hostile_round5;
mod html;
mod insns;
mod lock_crate;
mod matrix;
mod miri;
mod ordering;
mod recount;
mod ssh;
mod stored;
mod validate_gate;
mod verdicts;
