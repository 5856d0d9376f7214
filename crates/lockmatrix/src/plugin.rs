//! The QEMU instruction-counting plugin (`qemu-plugin/`): built for the host
//! as its own cdylib, never linked into the xtask, and loaded into
//! `qemu-<arch>` with `-plugin` so the suites can report `insns_per_op`.

use crate::toolchain;
use std::path::{Path, PathBuf};

/// The plugin API version the crate is built for: QEMU 6.0 to 8.2 load v1
/// (Debian 12's qemu-user is 7.2); see qemu-plugin/Cargo.toml.
pub const API: &str = "v1";

/// Where the plugin of the checkout at `root` is built: its own target dir
/// (the xtask's cargo holds the workspace's lock), one per checkout. One
/// shared by every checkout would be rebuilt by each from its own sources,
/// and a run from one tree could load the plugin another tree just built,
/// which speaks another version of the marker protocol.
pub fn target_dir(root: &Path) -> Result<PathBuf, PluginError> {
    let root = root.canonicalize().unwrap_or_else(|_| root.to_path_buf());
    let key = crate::file::sha256(root.to_string_lossy().as_bytes());
    let cache = crate::cache::dir()?;
    Ok(cache.join("plugin").join(&key[..16]))
}

/// Why the plugin was not built (the run goes on without counts).
#[derive(Debug)]
pub enum PluginError {
    Toolchain(toolchain::NoToolchain),
    Cache(crate::cache::CacheError),
    /// cargo could not be started.
    Cargo {
        cargo: PathBuf,
        error: std::io::Error,
    },
    /// cargo failed: its first error line.
    Build {
        error: String,
    },
}

impl std::fmt::Display for PluginError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PluginError::Toolchain(e) => e.fmt(f),
            PluginError::Cache(e) => e.fmt(f),
            PluginError::Cargo { cargo, error } => {
                write!(f, "cannot run {}: {error}", cargo.display())
            }
            PluginError::Build { error } => write!(f, "building insns-plugin failed: {error}"),
        }
    }
}

impl std::error::Error for PluginError {}

impl From<crate::cache::CacheError> for PluginError {
    fn from(e: crate::cache::CacheError) -> PluginError {
        PluginError::Cache(e)
    }
}

/// A toolchain for the plugin alone (a directory with `bin/cargo` and
/// `bin/rustc`): the container image sets it, where the suites' pinned
/// compiler is older than the plugin needs (containers/Containerfile).
pub const TOOLCHAIN_VARIABLE: &str = "LOCKMATRIX_PLUGIN_TOOLCHAIN";

/// The toolchain [`TOOLCHAIN_VARIABLE`] names, when it has one.
fn named_toolchain() -> Option<toolchain::Toolchain> {
    let dir = PathBuf::from(std::env::var_os(TOOLCHAIN_VARIABLE)?);
    let (cargo, rustc) = (dir.join("bin/cargo"), dir.join("bin/rustc"));
    (cargo.is_file() && rustc.is_file()).then(|| toolchain::Toolchain {
        label: format!("{TOOLCHAIN_VARIABLE} {}", dir.display()),
        cargo,
        rustc,
        build_std: false,
    })
}

/// Builds the plugin with the host's toolchain; returns the `.so` or why not.
pub fn build(root: &Path) -> Result<PathBuf, PluginError> {
    let host = format!("{}-unknown-linux-gnu", std::env::consts::ARCH);
    let need = toolchain::rust_version(&root.join("qemu-plugin/Cargo.toml"));
    let tc = match named_toolchain() {
        Some(tc) => tc,
        None => toolchain::discover(&host, need).map_err(PluginError::Toolchain)?,
    };
    let target_dir = target_dir(root)?;
    let out = crate::build::cargo(&tc.cargo)
        .current_dir(root)
        .args(["build", "--release", "--locked", "-p", "insns-plugin"])
        .env("CARGO_TARGET_DIR", &target_dir)
        .env("RUSTC", &tc.rustc)
        .output()
        .map_err(|error| PluginError::Cargo {
            cargo: tc.cargo.clone(),
            error,
        })?;
    let so = target_dir.join("release/libinsns_plugin.so");
    if out.status.success() && so.is_file() {
        Ok(so)
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        Err(PluginError::Build {
            error: err
                .lines()
                .find(|l| l.starts_with("error"))
                .unwrap_or("see cargo")
                .to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_checkout_builds_its_own_plugin() {
        let here = Path::new(env!("CARGO_MANIFEST_DIR"));
        let a = target_dir(here).unwrap();
        assert_eq!(a, target_dir(&here.join("../lockmatrix")).unwrap());
        assert_ne!(a, target_dir(Path::new("/tmp")).unwrap());
        assert!(a.starts_with(crate::cache::dir().unwrap().join("plugin")));
    }
}
