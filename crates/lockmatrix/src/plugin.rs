//! The QEMU instruction-counting plugin (`qemu-plugin/`): built for the host
//! as its own cdylib, never linked into the xtask, and loaded into
//! `qemu-<arch>` with `-plugin` so the suites can report `insns_per_op`.

use crate::toolchain;
use std::path::{Path, PathBuf};

/// The plugin API version the crate is built for: QEMU 6.0 to 8.2 load v1
/// (Debian 12's qemu-user is 7.2); see qemu-plugin/Cargo.toml.
pub const API: &str = "v1";

/// Builds the plugin with the host's toolchain; returns the `.so` or why not.
pub fn build(root: &Path) -> Result<PathBuf, String> {
    let host = format!("{}-unknown-linux-gnu", std::env::consts::ARCH);
    let need = toolchain::rust_version(&root.join("qemu-plugin/Cargo.toml"));
    let tc = toolchain::discover(&host, need)?;
    // Its own target dir: the xtask's cargo holds the workspace's lock.
    let target_dir = crate::cache::dir()
        .map_err(|e| e.to_string())?
        .join("plugin");
    let out = crate::build::cargo(&tc.cargo)
        .current_dir(root)
        .args(["build", "--release", "--locked", "-p", "insns-plugin"])
        .env("CARGO_TARGET_DIR", &target_dir)
        .env("RUSTC", &tc.rustc)
        .output()
        .map_err(|e| format!("cannot run {}: {e}", tc.cargo.display()))?;
    let so = target_dir.join("release/libinsns_plugin.so");
    if out.status.success() && so.is_file() {
        Ok(so)
    } else {
        let err = String::from_utf8_lossy(&out.stderr);
        Err(format!(
            "building insns-plugin failed: {}",
            err.lines()
                .find(|l| l.starts_with("error"))
                .unwrap_or("see cargo")
        ))
    }
}
