//! Installing what the Miri check needs, as docs/ordering.md ("Installing
//! it") says: rustup's nightly with the `miri` and `rust-src` components.
//! `cargo xtask matrix` (unless `--no-install`) and `cargo xtask test` both
//! call [`install`] beside the Debian packages; where it fails they say
//! NOT CHECKED and go on, and the run's Miri check says it again with the
//! command to install it.

use anyhow::{bail, Result};
use lockmatrix::miri;
use lockmatrix::toolchain::which;
use std::process::Command;

/// Installs Miri where there is none: only the components where a nightly
/// is there (updating it would move every Miri cache key and change what
/// every nightly build makes), else a minimal nightly with them. Miri's
/// own std is built by the check itself (`cargo miri setup`).
pub fn install() -> Result<()> {
    let missing = match miri::find() {
        Ok(_) => return Ok(()),
        Err(why) => why,
    };
    let Some(rustup) = which("rustup") else {
        bail!("{missing}");
    };
    let have_nightly = Command::new(&rustup)
        .args(["run", miri::TOOLCHAIN, "rustc", "--version"])
        .output()
        .is_ok_and(|o| o.status.success());
    let args: &[&str] = match have_nightly {
        true => &[
            "component",
            "add",
            "miri",
            "rust-src",
            "--toolchain",
            miri::TOOLCHAIN,
        ],
        false => &[
            "toolchain",
            "install",
            miri::TOOLCHAIN,
            "--profile",
            "minimal",
            "--component",
            "miri,rust-src",
        ],
    };
    let line = format!("rustup {}", args.join(" "));
    errln!("installing Miri: {line}");
    let out = Command::new(&rustup).args(args).output()?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let why = stderr
            .lines()
            .rfind(|l| l.starts_with("error"))
            .or_else(|| stderr.lines().rfind(|l| !l.trim().is_empty()))
            .unwrap_or("no output");
        bail!(
            "`{line}` failed ({}): {}",
            out.status,
            lockmatrix::escape::terminal(why)
        );
    }
    miri::find()?;
    Ok(())
}
