//! How a run is asked for: the flags as the library takes them.

use crate::results::Profile;
use crate::toolchain;
use std::path::PathBuf;

pub struct Options {
    pub profile: Profile,
    pub rounds: Option<u32>,
    pub timeout_secs: Option<u64>,
    pub results_dir: PathBuf,
    pub features: Vec<String>,
    /// A git revision to build as well and interleave with this tree's
    /// rounds (`--against`).
    pub against: Option<String>,
    /// Do not count instructions (no plugin, no counted runs).
    pub no_insns: bool,
    /// Only count instructions (and take the static footprints): one
    /// counting invocation per suite, no timed rounds, no model check. A
    /// baseline's commit is recounted so ([`recount`]).
    pub counts_only: bool,
    /// Build the suites from this tree (a worktree of another commit)
    /// rather than the checkout; the plugin that counts is the checkout's.
    pub tree: Option<PathBuf>,
    /// `--crate` (and `--against-crate`): measure a lock crate's locks.
    pub crates: Option<Crates>,
    /// `--toolchain`: the toolchains that may build the suites.
    pub toolchain: toolchain::Only,
    /// The stored baselines' directory, when the run gates against them:
    /// a real-hardware target whose baselines compare ([`crate::baseline::stored_timings`])
    /// then runs its rounds look by look.
    pub stored: Option<PathBuf>,
    /// With `--against`: stop a suite's pairs at the first look where the
    /// gate with these options has decided every timing cell
    /// ([`crate::family`]). `None` records every round (the
    /// recordings `validate-gate` resamples).
    pub stop_when_decided: Option<crate::family::GateOptions>,
}

/// The lock crate under test and the version to compare it with.
#[derive(Clone)]
pub struct Crates {
    pub head: crate::subject::Spec,
    /// `--against-crate`: built and run beside the head as `--against`'s
    /// base revision is.
    pub base: Option<crate::subject::Spec>,
    /// A target the crate does not build for fails the run (`--require-build`)
    /// rather than being not run, with the reason.
    pub require_build: bool,
}

impl Options {
    /// The options of a recount of `tree` (a baseline's commit) into
    /// `results_dir`, beside a run made with `self`.
    pub fn recount(&self, tree: PathBuf, results_dir: PathBuf) -> Options {
        Options {
            profile: self.profile,
            rounds: Some(1),
            timeout_secs: self.timeout_secs,
            results_dir,
            features: self.features.clone(),
            against: None,
            no_insns: false,
            counts_only: true,
            tree: Some(tree),
            crates: None,
            toolchain: self.toolchain.clone(),
            stored: None,
            stop_when_decided: None,
        }
    }
}
