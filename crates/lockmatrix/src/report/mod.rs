//! What people read: the terminal tables of a run ([`table`]), the seeds'
//! tables in the shapes their threads used ([`seeds`]), the HTML report
//! ([`html`]), every operation's ordering footprint per target
//! ([`footprints`]), the gating cells across runs ([`history`]) and the Bencher
//! Metric Format export ([`bmf`]); [`output`] says where one may be
//! written.

pub mod bmf;
pub mod contention;
pub mod footprints;
pub mod history;
pub mod html;
pub mod output;
pub mod seeds;
pub mod table;

#[cfg(test)]
pub(crate) mod tests;
