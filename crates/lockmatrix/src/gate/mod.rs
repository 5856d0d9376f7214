//! The regression gate: compares a run's cells with the base revision run
//! beside it (`--against`) or the committed baselines in
//! `baselines/<target>/<suite>.json`, and decides whether the run passes.
//!
//! A cell is one `(target, suite, bench, case, metric)`; its samples are one
//! value per round. What fails the gate: a failed correctness check, a target
//! or suite that broke, an unreadable baseline file, an instruction count
//! above the reference, an unacknowledged ordering change, a violated model,
//! a race Miri reported, and a timing cell on real hardware that ends a `regression`.
//! Each timing cell ends `cleared`, `regression` or `inconclusive`
//! ([`crate::family`]). Everything else is shown and never fails: new cells,
//! cells whose baseline was recorded on another testbed, QEMU timings
//! (emulator time), metrics shown rather than gated, cells too noisy to
//! gate here, inconclusive cells.
//!
//! - [`baseline`]: the baseline file format, reading and atomic writing;
//! - [`evaluate`](mod@evaluate): the verdict of every cell;
//! - [`render`]: the terminal, Markdown and JSON reports;
//! - [`update`]: `baseline update`.

mod brief;
mod canary;
pub mod contention;
pub mod contention_file;
pub mod evaluate;
mod events;
mod judge;
pub mod load;
pub mod miri;
pub mod ordering;
mod reference;
pub mod render;
mod report;
pub mod update;
pub mod validate;
pub mod verdict;

#[cfg(test)]
mod tests;

pub use evaluate::{evaluate, Reference};
pub use load::{gate, Gated, Gating};
pub use update::update_baselines;

pub use crate::family::GateOptions;

/// The most bytes of the Markdown report for `$GITHUB_STEP_SUMMARY`
/// (`--markdown`): GitHub's limit for a step's summary, 1 MiB.
pub const SUMMARY_BYTES: usize = 1 << 20;

/// The most bytes of the pull-request comment (`--pr-comment`): GitHub
/// refuses a comment body over 65,536 characters, and 64,000 bytes are
/// never more characters than that.
pub const COMMENT_BYTES: usize = 64_000;
