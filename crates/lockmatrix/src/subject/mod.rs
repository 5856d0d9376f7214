//! The lock crate under test: `cargo xtask matrix --crate NAME@VERSION`
//! measures another crate's locks on every target, and with
//! `--against-crate` compares two versions of it as the gate compares two
//! revisions. `spec.rs` reads the command line, `declared.rs` says which
//! locks a crate has, `generate.rs` writes the `subject` crate for it and
//! `derive.rs` the tree it is built in, `package.rs` a path crate's copy
//! in it.

pub mod declared;
pub mod derive;
pub mod generate;
pub mod package;
pub mod spec;

pub use derive::{derive, Derived};
pub use spec::{parse, Source, Spec};

use crate::name::Name;
use serde::{Deserialize, Serialize};

/// The crate a run measured, as `run.json` records it (format 7).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Subject {
    pub name: Name,
    /// The version cargo resolved.
    pub version: String,
    /// As given on the command line.
    pub spec: String,
    /// What exactly was built: the registry checksum, the git commit, or a
    /// path's commit, whether it was modified, and the hash of its files.
    pub source: String,
    /// The lock_api version it implements.
    pub lock_api: String,
    /// Its `rust-version`, if it declares one.
    #[serde(default)]
    pub rust_version: Option<String>,
    /// The features enabled for the measurement.
    #[serde(default)]
    pub features: Vec<String>,
    /// Its mutexes' and reader-writer locks' names in the suites' cases.
    #[serde(default)]
    pub mutexes: Vec<Name>,
    #[serde(default)]
    pub rwlocks: Vec<Name>,
}

impl Subject {
    /// `spin 0.12.3`.
    pub fn label(&self) -> String {
        format!("{} {}", self.name, self.version)
    }

    /// The suites that measure its locks.
    pub fn suites(&self) -> Vec<&'static str> {
        let mut s = Vec::new();
        if !self.mutexes.is_empty() {
            s.push("spinlock");
        }
        if !self.rwlocks.is_empty() {
            s.push("rwsem");
        }
        s
    }

    /// Why a toolchain of `version` cannot build it, if it cannot: the
    /// crate's `rust-version` is newer.
    pub fn too_new_for(&self, toolchain: crate::toolchain::Version) -> Option<String> {
        let need = crate::toolchain::Version::parse(self.rust_version.as_deref()?)?;
        (need > toolchain).then(|| format!("{} needs Rust {need}", self.label()))
    }
}

/// The `Lockmatrix-Ordering:` trailers of a crate's own history between
/// two working copies of it (a maintainer's pull request: base and head
/// checkouts of one repository), so its intended ordering changes pass as
/// lockmatrix's own do. Empty unless both are git checkouts and the base's
/// commit is in the head's history.
pub fn acknowledgements(head: &Spec, base: &Spec) -> Vec<crate::acknowledge::Acknowledgement> {
    let (Source::Path(h), Source::Path(b)) = (&head.source, &base.source) else {
        return Vec::new();
    };
    let base_commit = std::process::Command::new("git")
        .args(["rev-parse", "--verify", "--quiet", "HEAD"])
        .current_dir(b)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| {
            crate::commit::CommitId::parse(String::from_utf8_lossy(&o.stdout).trim()).ok()
        });
    match base_commit {
        Some(c) => crate::acknowledge::in_range(h, &c, "HEAD").unwrap_or_default(),
        None => Vec::new(),
    }
}
