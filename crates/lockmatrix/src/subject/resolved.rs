//! The crate a run measured, as cargo resolved it and `run.json` records it.

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
