//! The benchmark harness every suite is built on.
//!
//! Suites are cross-built with `-Zbuild-std` for ten targets, so the harness
//! stays dependency-light (only `libc`): each extra crate is compiled once per
//! target. It provides the timer of each architecture, thread start-up with a
//! barrier and pinning, batch measurement with the empty-loop baseline
//! subtracted, command-line parsing, and the JSON-lines result protocol that
//! the xtask reads (see docs/protocol.md). Under `--cfg loom`
//! (never in a matrix build) it also runs the suites' loom models
//! ([`model`]), and only then depends on loom. Under Miri (`cargo miri run`)
//! it runs a suite's Miri clients instead ([`miri`]). Under
//! `--cfg lockmatrix_sim` (never in a matrix build either) it runs a
//! suite's own locks on the simulated machine of the `ccsim` crate
//! ([`sim`]), and only then depends on it.

pub mod args;
pub mod canary;
pub mod events;
pub mod fairness;
pub mod json;
pub mod marker;
pub mod measure;
#[cfg(miri)]
pub mod miri;
#[cfg(loom)]
pub mod model;
pub mod out;
pub mod probe;
#[cfg(lockmatrix_sim)]
pub mod sim;
pub mod threads;
pub mod timer;
pub mod work;

pub use args::{Args, Profile};
pub use json::J;
pub use out::Out;
