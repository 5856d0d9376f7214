//! lockmatrix's core: everything between `targets.yaml` and a verdict,
//! with no terminal output and no package installation (the `xtask` binary
//! does both). The pipeline, in the order a run goes through it:
//!
//! - [`config`]: `targets.yaml`; [`select`]: `--targets` and `--suites`;
//! - [`toolchain`] and [`readiness`]: what builds and runs each target, or
//!   what is missing; [`cpu`]: whether those tools know its CPU choices;
//! - [`build`]: cross-building the suites (and [`plugin`], the QEMU
//!   instruction counter);
//! - [`runner`]: running a suite binary natively, under QEMU or over ssh;
//!   [`protocol`]: reading what it prints;
//! - [`matrix`]: the whole run, every target and suite, with `--against`
//!   the base revision beside it;
//! - [`results`]: what a run leaves in `results/<run-id>/`;
//! - [`model`]: the locks written here model-checked with loom on the
//!   host, which no emulator run can replace; [`miri`]: the locks loom
//!   cannot see (shipped, std's, a `--crate`'s) run under Miri;
//!   [`contention`]: the same locks on a simulated 64-CPU machine, their
//!   coherence traffic counted exactly;
//! - [`baseline`]: the stored baselines' format, their testbed, and what
//!   a run compares with them; [`gate`]: the verdict, against stored
//!   baselines or the base revision;
//! - [`footprint`]: the ordering footprint of each lock operation, executed
//!   (the plugin's records) and static (the binaries' disassembly);
//! - [`report`]: the terminal tables, the seeds' tables, the HTML report,
//!   the history across runs and the Bencher export;
//! - [`ci`]: the GitHub Actions workflows rendered from `targets.yaml`;
//! - [`container`]: the whole matrix inside a Podman or Docker image that
//!   carries the apt path's toolchain, for hosts apt-get cannot serve.
//!
//! [`observe`] carries progress out to whoever shows it; [`scratch`] is
//! what a run makes that must not outlive it; [`host`] records
//! the machine a run happened on; [`file`] writes files whole; [`commit`]
//! is a commit id read from a file, and whether it is in HEAD's history;
//! [`error`] prints a typed error with its causes, as the command line does.

pub mod acknowledge;
pub mod baseline;
pub mod build;
pub mod cache;
pub mod cells;
pub mod ci;
pub mod commit;
pub mod config;
pub mod container;
pub mod contention;
pub mod cpu;
pub mod error;
pub mod escape;
pub mod family;
pub mod file;
pub mod footprint;
pub mod gate;
pub mod host;
pub mod job;
pub mod matrix;
pub mod miri;
pub mod model;
pub mod name;
pub mod observe;
pub mod plugin;
pub mod policy;
pub mod protocol;
pub mod readiness;
pub mod report;
pub mod results;
pub mod runner;
pub mod scratch;
pub mod select;
pub mod strictness;
pub mod subject;
pub mod toolchain;

#[cfg(test)]
mod tidy;
