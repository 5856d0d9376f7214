//! Finding a Rust toolchain that can build for a target, in DESIGN.md's
//! order: a rustup toolchain with the target's std; a rustup toolchain with
//! `rust-src` (build-std); Debian's `rustc-web` with `rust-web-src`
//! (build-std). `cross` is reported when present but needs a container
//! engine, which these machines lack.

use std::path::{Path, PathBuf};
use std::process::Command;

/// Debian packages that provide the build-std toolchain.
pub const DEBIAN_RUST: &[&str] = &["rustc-web", "cargo-web", "rust-web-src"];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Toolchain {
    /// What it is, for reports: "rustup stable-x86_64-unknown-linux-gnu".
    pub label: String,
    pub cargo: PathBuf,
    pub rustc: PathBuf,
    /// Compile std from source with `-Zbuild-std`.
    pub build_std: bool,
}

impl Toolchain {
    /// `rustc -V` of this toolchain, or why it could not be read.
    pub fn version(&self) -> String {
        command_version(Command::new(&self.rustc).arg("-V"))
    }
}

/// First line of a `--version`-style command's stdout.
pub fn command_version(cmd: &mut Command) -> String {
    match cmd.output() {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout)
            .lines()
            .next()
            .unwrap_or("")
            .trim()
            .to_string(),
        Ok(o) => format!("unknown ({})", o.status),
        Err(e) => format!("unknown ({e})"),
    }
}

/// Looks a program up in `PATH` (or takes it as a path when it has a slash).
pub fn which(program: &str) -> Option<PathBuf> {
    if program.contains('/') {
        return Path::new(program).is_file().then(|| PathBuf::from(program));
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(program))
        .find(|p| p.is_file())
}

fn rustup_home() -> Option<PathBuf> {
    std::env::var_os("RUSTUP_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".rustup")))
}

/// Installed rustup toolchains, the default one first.
fn rustup_toolchains() -> Vec<(String, PathBuf)> {
    let Some(home) = rustup_home() else {
        return Vec::new();
    };
    let default = std::fs::read_to_string(home.join("settings.toml"))
        .ok()
        .and_then(|s| {
            s.lines().find_map(|l| {
                l.strip_prefix("default_toolchain = ")
                    .map(|v| v.trim_matches('"').to_string())
            })
        })
        .unwrap_or_default();
    let mut found: Vec<(String, PathBuf)> = std::fs::read_dir(home.join("toolchains"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
        .filter(|(_, p)| p.join("bin/cargo").is_file() && p.join("bin/rustc").is_file())
        .collect();
    found.sort_by_key(|(name, _)| {
        (
            !name.starts_with(&default) || default.is_empty(),
            name.clone(),
        )
    });
    found
}

fn has_std(sysroot: &Path, triple: &str) -> bool {
    std::fs::read_dir(sysroot.join("lib/rustlib").join(triple).join("lib"))
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| e.file_name().to_string_lossy().starts_with("libstd-"))
}

fn has_src(sysroot: &Path) -> bool {
    sysroot
        .join("lib/rustlib/src/rust/library/std/Cargo.toml")
        .is_file()
}

/// The toolchain that will build `triple`, or what is missing.
pub fn discover(triple: &str) -> Result<Toolchain, String> {
    let rustup = rustup_toolchains();
    let pick = |name: &str, dir: &Path, build_std: bool| Toolchain {
        label: format!("rustup {name}"),
        cargo: dir.join("bin/cargo"),
        rustc: dir.join("bin/rustc"),
        build_std,
    };
    if let Some((name, dir)) = rustup.iter().find(|(_, d)| has_std(d, triple)) {
        return Ok(pick(name, dir, false));
    }
    if let Some((name, dir)) = rustup.iter().find(|(_, d)| has_src(d)) {
        return Ok(pick(name, dir, true));
    }
    let debian = Path::new("/usr");
    if debian.join("bin/rustc").is_file() && has_src(debian) {
        let cargo = match debian.join("bin/cargo") {
            c if c.is_file() => c,
            _ => rustup
                .first()
                .map(|(_, d)| d.join("bin/cargo"))
                .unwrap_or_else(|| "cargo".into()),
        };
        return Ok(Toolchain {
            label: "debian rustc-web".into(),
            cargo,
            rustc: debian.join("bin/rustc"),
            build_std: true,
        });
    }
    Err(format!(
        "no toolchain for {triple}: no rustup toolchain has its std or rust-src, and Debian's build-std toolchain is missing (packages: {})",
        DEBIAN_RUST.join(" ")
    ))
}

/// What `cross` would need, for `doctor`.
pub fn cross_status() -> String {
    match which("cross") {
        None => "not installed (optional)".into(),
        Some(p) => {
            let engine = ["docker", "podman"].iter().any(|e| {
                which(e).is_some()
                    && Command::new(e)
                        .arg("info")
                        .output()
                        .is_ok_and(|o| o.status.success())
            });
            if engine {
                format!(
                    "{} (container engine running; not used: the toolchains above come first)",
                    p.display()
                )
            } else {
                format!(
                    "{} found but unusable: no Docker or Podman engine is running",
                    p.display()
                )
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_triple_has_a_toolchain_without_build_std() {
        let t = discover("x86_64-unknown-linux-gnu").unwrap();
        assert!(!t.build_std, "{t:?}");
        assert!(t.version().starts_with("rustc "), "{}", t.version());
    }

    #[test]
    fn a_triple_nobody_has_needs_build_std_or_is_missing() {
        match discover("sparc64-unknown-linux-gnu") {
            Ok(t) => assert!(t.build_std, "{t:?}"),
            Err(e) => assert!(e.contains("rustc-web"), "{e}"),
        }
    }

    #[test]
    fn which_finds_sh_and_not_nonsense() {
        assert!(which("sh").is_some());
        assert!(which("no-such-program-lockmatrix").is_none());
    }
}
