//! Why a `matrix` command stopped: its own refusals, and each lower
//! module's error kept whole, so the text is that module's own.

/// Why a `matrix` command stopped (bad input, missing set-up or an
/// internal error: exit status 2). A target that failed, a check that
/// failed or a regression is in the finished run, never one of these.
/// Each lower module's error is kept whole, so the text is its own.
#[derive(Debug, thiserror::Error)]
pub enum JobError {
    #[error(transparent)]
    GateOption(#[from] crate::family::BadGateOption),
    /// `shown` is the name cut to 80 characters, escaped for a terminal.
    #[error("--features `{shown}`: not a feature name; expected letters, digits, `_`, `-` and `/` (e.g. spinlock/broken-lock), comma-separated")]
    Feature { shown: String },
    /// `LOCKMATRIX_TESTBED` is not a testbed's name.
    #[error(transparent)]
    Host(#[from] crate::host::HostError),
    #[error(transparent)]
    Config(#[from] crate::config::ConfigError),
    /// `--targets` or `--suites`.
    #[error(transparent)]
    Select(#[from] crate::select::SelectError),
    /// `--crate`.
    #[error(transparent)]
    Crate(#[from] crate::subject::SubjectError),
    /// `--against-crate`: the error's words, of the flag given.
    #[error("{}", .0.to_string().replacen("--crate", "--against-crate", 1))]
    AgainstCrate(crate::subject::SubjectError),
    #[error("--against-crate {base}: a different crate than --crate {head}: compare two versions of one crate (lock names are the crate's name and type)")]
    /// `base` and `head` are the specs as given (credentials redacted).
    OtherCrate { base: String, head: String },
    /// `--toolchain`.
    #[error(transparent)]
    Toolchain(#[from] crate::toolchain::BadToolchain),
    /// A stored baseline the run would be gated against is corrupt.
    #[error(transparent)]
    Baseline(#[from] crate::baseline::BaselineError),
    /// `which` is "selected" with `--suites`, else empty.
    #[error("--crate {label}: none of the {which} suites measures its locks (mutexes: spinlock, rwlocks: rwsem)")]
    NoCrateSuites { label: String, which: &'static str },
    #[error(transparent)]
    Prepare(#[from] crate::matrix::PrepareError),
    /// Installing failed: the caller's own error (`SetUp::packages`).
    #[error(transparent)]
    Packages(SetUpError),
    #[error(transparent)]
    Session(#[from] crate::matrix::SessionError),
    /// The stored baselines or the gate's reference could not be loaded.
    #[error(transparent)]
    Load(#[from] crate::gate::load::LoadError),
    /// Under `--require-gate`: a baseline commit to count again that this
    /// clone lacks (`short`: its short id).
    #[error("counts: the baselines were counted by another compiler and their commit {short} is not in this clone")]
    NotInClone { short: String },
    /// Under `--require-gate`: a baseline commit that cannot be checked
    /// out to be counted again.
    #[error("counts: the baselines were counted by another compiler and their commit {short} cannot be rebuilt here")]
    CannotRebuild {
        short: String,
        #[source]
        error: crate::matrix::worktree::WorktreeError,
    },
}

/// An error of the caller's `SetUp`, kept with its causes.
pub type SetUpError = Box<dyn std::error::Error + Send + Sync>;
