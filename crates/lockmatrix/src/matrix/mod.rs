//! The matrix: build every selected suite for every selected target, run
//! them, and record everything in a run directory. One target's failure
//! never stops the others.
//!
//! With `--against REV` the base revision is built too ([`worktree`]) and
//! runs beside this tree, round for round ([`plan`]); its run is kept as
//! `base/run.json` in the run directory. The steps: [`prepare`] (checks
//! that need nothing installed), [`packages_needed`] (for the caller to
//! install), [`run`].

mod contention;
mod options;
mod ordering;
mod pipeline;
mod plan;
mod prepare;
mod session;
mod setup;
mod site;
mod target;
mod unit;
pub mod worktree;

pub use options::{Crates, Options};
pub use plan::rounds;
pub use prepare::{packages_needed, prepare, PrepareError, Prepared, Subjects};
pub use session::{run, Outcome, SessionError};
#[cfg(test)]
pub(crate) use unit::{units, Narrowing};
