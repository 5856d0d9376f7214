//! The Miri to run: a rustup nightly with the `miri` and `rust-src`
//! components. Where there is none the check is NOT CHECKED, with the
//! command that installs it; nothing is installed from here (the library
//! installs nothing: `cargo xtask test` and the user do).

use std::path::PathBuf;
use std::process::Command;

/// The command that installs what the check needs.
pub const INSTALL: &str = "rustup component add miri rust-src --toolchain nightly";

/// The rustup toolchain Miri runs from.
pub const TOOLCHAIN: &str = "nightly";

/// A Miri that can run.
#[derive(Debug, Clone)]
pub struct Miri {
    pub rustup: PathBuf,
    /// `miri 0.1.0 (e50aa6fba4 2026-05-19); rustc 1.97.0-nightly (...)`:
    /// part of every cache key, since Miri's checks change with it.
    pub version: String,
}

/// Why Miri cannot run here, with what would make it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unavailable(pub String);

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Unavailable {}

impl Miri {
    /// `rustup run nightly ARGS`, with nothing of the calling cargo's or
    /// the user's build settings that would steer it.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = crate::build::cargo(&self.rustup);
        cmd.args(["run", TOOLCHAIN]).args(args);
        for var in ["MIRIFLAGS", "MIRI_SYSROOT", "CARGO_TARGET_DIR", "RUSTC"] {
            cmd.env_remove(var);
        }
        cmd
    }
}

/// Finds rustup's nightly with Miri, or says what to install.
pub fn find() -> Result<Miri, Unavailable> {
    let Some(rustup) = crate::toolchain::which("rustup") else {
        return Err(Unavailable(format!(
            "no rustup on PATH: install rustup (https://rustup.rs), then `{INSTALL}`"
        )));
    };
    let probe = Miri {
        rustup,
        version: String::new(),
    };
    let out = |args: &[&str]| {
        probe
            .command(args)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    let miri = out(&["cargo", "miri", "--version"]);
    let rustc = out(&["rustc", "--version"]);
    match (miri, rustc) {
        (Some(miri), Some(rustc)) if miri.starts_with("miri ") => Ok(Miri {
            version: format!("{miri}; {rustc}"),
            ..probe
        }),
        _ => Err(Unavailable(format!(
            "no Miri in rustup's {TOOLCHAIN} toolchain: `{INSTALL}`"
        ))),
    }
}
