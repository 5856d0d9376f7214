//! Finding a Rust toolchain that can build for a target, in this order:
//! a rustup toolchain with the target's std; a rustup toolchain with
//! `rust-src` (build-std); Debian's `rustc-web` with `rust-web-src`
//! (build-std). Hosts without these run the matrix inside a container
//! image that has Debian's (`container`); cross-rs is not used (ARCHITECTURE.md).

use std::path::{Path, PathBuf};
use std::process::Command;

/// Debian packages that provide the build-std toolchain.
pub const DEBIAN_RUST: &[&str] = &["rustc-web", "cargo-web", "rust-web-src"];

/// A tool a run used, as run.json records it: a toolchain, a linker, an
/// emulator, a C compiler.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ToolInfo {
    /// What it is or where it lives (toolchain label, emulator path, ...).
    pub what: String,
    pub version: String,
}

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

    /// A nightly building std from its rust-src: the last resort, after
    /// Debian's rustc-web.
    pub fn nightly_build_std(&self) -> bool {
        self.build_std && self.label.starts_with("rustup nightly")
    }
}

/// First line of a `--version`-style command's stdout. Asked once per
/// program and arguments in a process: every target that shares a
/// compiler, linker or emulator shares its answer. A failure is not kept:
/// the program may be installed later in the run.
pub fn command_version(cmd: &mut Command) -> String {
    use std::collections::HashMap;
    use std::ffi::OsString;
    use std::sync::{Mutex, OnceLock};
    static CACHE: OnceLock<Mutex<HashMap<Vec<OsString>, String>>> = OnceLock::new();
    let key: Vec<OsString> = std::iter::once(cmd.get_program())
        .chain(cmd.get_args())
        .map(OsString::from)
        .collect();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(v) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return v.clone();
    }
    let version = match cmd.output() {
        Ok(o) if o.status.success() => String::from_utf8_lossy(&o.stdout)
            .lines()
            .next()
            .unwrap_or("")
            .trim()
            .to_string(),
        Ok(o) => return format!("unknown ({})", o.status),
        Err(e) => return format!("unknown ({e})"),
    };
    cache
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, version.clone());
    version
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

/// A Rust release, as `rust-version` and `rustc -V` name it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Version(pub u32, pub u32, pub u32);

impl Version {
    /// `1.85`, `1.85.0`, `rustc 1.85.0 (4d91de4e4 2025-02-17)` or
    /// `1.96.0-nightly`: the first word that starts with a digit.
    pub fn parse(text: &str) -> Option<Version> {
        let word = text
            .split_whitespace()
            .find(|w| w.starts_with(|c: char| c.is_ascii_digit()))?;
        let mut parts = word
            .split(['.', '-'])
            .map(|p| p.parse::<u32>().ok())
            .chain(std::iter::repeat(Some(0)));
        Some(Version(
            parts.next()??,
            parts.next()??,
            parts.next()?.unwrap_or(0),
        ))
    }
}

impl std::fmt::Display for Version {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}.{}.{}", self.0, self.1, self.2)
    }
}

/// The `rust-version` a manifest declares (`rust-version = "1.85"`, in
/// `[package]` or `[workspace.package]`), or 0.0.0 when it declares none.
pub fn rust_version(manifest: &Path) -> Version {
    std::fs::read_to_string(manifest)
        .ok()
        .and_then(|text| {
            text.lines().find_map(|l| {
                let (key, value) = l.split_once('=')?;
                (key.trim() == "rust-version")
                    .then(|| Version::parse(value.trim().trim_matches('"')))?
            })
        })
        .unwrap_or(Version(0, 0, 0))
}

/// What one rustc reports of itself, asked once per process.
#[derive(Clone)]
struct RustcFacts {
    version: String,
    targets: Vec<String>,
}

fn facts(rustc: &Path) -> RustcFacts {
    use std::collections::HashMap;
    use std::sync::{Mutex, OnceLock};
    static CACHE: OnceLock<Mutex<HashMap<PathBuf, RustcFacts>>> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    if let Some(f) = cache.lock().unwrap().get(rustc) {
        return f.clone();
    }
    let targets = Command::new(rustc)
        .args(["--print", "target-list"])
        .output()
        .map(|o| {
            String::from_utf8_lossy(&o.stdout)
                .lines()
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    let f = RustcFacts {
        version: command_version(Command::new(rustc).arg("-V")),
        targets,
    };
    cache.lock().unwrap().insert(rustc.to_path_buf(), f.clone());
    f
}

/// Every toolchain that could build `triple`, best first: a rustup
/// toolchain with the triple's std; one with rust-src (build-std);
/// Debian's rustc-web under `debian` (`/usr`); last a nightly's rust-src
/// (Miri needs one): a suite built by a nightly counts differently every
/// day, so no stored baseline would compare without a recount.
fn candidates(rustup: &[(String, PathBuf)], debian: &Path, triple: &str) -> Vec<Toolchain> {
    let rustup_pick = |name: &str, dir: &Path, build_std: bool| Toolchain {
        label: format!("rustup {name}"),
        cargo: dir.join("bin/cargo"),
        rustc: dir.join("bin/rustc"),
        build_std,
    };
    let mut out: Vec<Toolchain> = rustup
        .iter()
        .filter(|(_, d)| has_std(d, triple))
        .map(|(name, dir)| rustup_pick(name, dir, false))
        .collect();
    let (nightly, released): (Vec<_>, Vec<_>) = rustup
        .iter()
        .filter(|(_, d)| has_src(d))
        .partition(|(name, _)| name.starts_with("nightly"));
    out.extend(released.iter().map(|(n, d)| rustup_pick(n, d, true)));
    if debian.join("bin/rustc").is_file() && has_src(debian) {
        let cargo = match debian.join("bin/cargo") {
            c if c.is_file() => c,
            _ => rustup
                .first()
                .map(|(_, d)| d.join("bin/cargo"))
                .unwrap_or_else(|| "cargo".into()),
        };
        out.push(Toolchain {
            label: "debian rustc-web".into(),
            cargo,
            rustc: debian.join("bin/rustc"),
            build_std: true,
        });
    }
    out.extend(nightly.iter().map(|(n, d)| rustup_pick(n, d, true)));
    out
}

/// The toolchain that will build `triple` with at least `need` (the
/// `rust-version` of what it builds), or what is missing. A candidate too
/// old, or one that does not know the triple, is passed over, and named
/// in the error when no candidate is left.
pub fn discover(triple: &str, need: Version) -> Result<Toolchain, NoToolchain> {
    discover_only(triple, need, &Only::Any)
}

/// Which toolchains may build the suites (`--toolchain`): the first that
/// works, or one named, so that a run's counts come from the compiler a
/// user chose (the one the baselines were recorded with, say).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub enum Only {
    #[default]
    Any,
    /// Debian's rustc-web (`debian`).
    Debian,
    /// A rustup toolchain, as `rustup toolchain list` names it, or its
    /// channel without the host (`stable`, `nightly`, `1.85.0`).
    Rustup(String),
}

impl Only {
    /// `--toolchain`'s value: `debian` or a rustup toolchain's name,
    /// checked to be one.
    pub fn parse(s: &str) -> Result<Only, BadToolchain> {
        if s == "debian" {
            return Ok(Only::Debian);
        }
        let plain = !s.is_empty()
            && s.len() <= 100
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'-' | b'_'))
            && !s.starts_with('-');
        if !plain {
            return Err(BadToolchain::NotAName(crate::escape::terminal(s)));
        }
        let installed: Vec<String> = rustup_toolchains().into_iter().map(|(n, _)| n).collect();
        let only = Only::Rustup(s.to_string());
        if !installed
            .iter()
            .any(|n| only.admits(&format!("rustup {n}")))
        {
            return Err(BadToolchain::NotInstalled {
                name: s.to_string(),
                installed,
            });
        }
        Ok(only)
    }

    /// Whether the toolchain labelled `label` may be used.
    fn admits(&self, label: &str) -> bool {
        match self {
            Only::Any => true,
            Only::Debian => label == "debian rustc-web",
            Only::Rustup(name) => label
                .strip_prefix("rustup ")
                .is_some_and(|n| n == name || n.starts_with(&format!("{name}-"))),
        }
    }
}

/// A `--toolchain` that names no toolchain here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum BadToolchain {
    NotAName(String),
    NotInstalled {
        name: String,
        installed: Vec<String>,
    },
}

impl std::fmt::Display for BadToolchain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            BadToolchain::NotAName(s) => write!(
                f,
                "--toolchain {s}: expected `debian` or a rustup toolchain name (letters, digits, `.`, `-`, `_`)"
            ),
            BadToolchain::NotInstalled { name, installed } => write!(
                f,
                "--toolchain {name}: no such rustup toolchain here (installed: {}); `debian` names Debian's rustc-web",
                if installed.is_empty() {
                    "none".to_string()
                } else {
                    installed.join(", ")
                }
            ),
        }
    }
}

impl std::error::Error for BadToolchain {}

/// [`discover`] among the toolchains `only` admits.
pub fn discover_only(triple: &str, need: Version, only: &Only) -> Result<Toolchain, NoToolchain> {
    let rustup = rustup_toolchains();
    let candidates: Vec<Toolchain> = candidates(&rustup, Path::new("/usr"), triple)
        .into_iter()
        .filter(|tc| only.admits(&tc.label))
        .collect();
    let mut passed_over: Vec<String> = Vec::new();
    match only {
        Only::Rustup(name) if candidates.is_empty() => passed_over.push(format!(
            "--toolchain {name} has neither {triple}'s std nor rust-src (`rustup target add {triple} --toolchain {name}` or `rustup component add rust-src --toolchain {name}`)"
        )),
        Only::Debian if candidates.is_empty() => passed_over.push(format!(
            "--toolchain debian: Debian's rustc-web with rust-web-src is not installed (packages: {})",
            DEBIAN_RUST.join(" ")
        )),
        _ => {}
    }
    let no = |passed_over| NoToolchain {
        triple: triple.to_string(),
        passed_over,
    };
    for tc in candidates {
        let facts = facts(&tc.rustc);
        match Version::parse(&facts.version) {
            Some(v) if v >= need => {}
            _ => {
                passed_over.push(format!(
                    "{} [{}] is older than rust-version {need}",
                    tc.label, facts.version
                ));
                continue;
            }
        }
        if tc.build_std && !facts.targets.iter().any(|t| t == triple) {
            passed_over.push(format!(
                "{} [{}] does not know the target {triple} (rustc --print target-list)",
                tc.label, facts.version
            ));
            continue;
        }
        return Ok(tc);
    }
    Err(no(passed_over))
}

/// No toolchain builds a triple: none was found, or each found was passed
/// over (too old, or it does not know the triple), said per toolchain.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoToolchain {
    pub triple: String,
    pub passed_over: Vec<String>,
}

impl std::fmt::Display for NoToolchain {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let triple = &self.triple;
        if self.passed_over.is_empty() {
            write!(
                f,
                "no toolchain for {triple}: no rustup toolchain has its std or rust-src, and Debian's build-std toolchain is missing (packages: {})",
                DEBIAN_RUST.join(" ")
            )
        } else {
            write!(
                f,
                "no usable toolchain for {triple}: {}",
                self.passed_over.join("; ")
            )
        }
    }
}

impl std::error::Error for NoToolchain {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_read_from_manifests_and_compilers() {
        assert_eq!(Version::parse("1.85"), Some(Version(1, 85, 0)));
        assert_eq!(
            Version::parse("rustc 1.85.0 (4d91de4e4 2025-02-17) (built from a source tarball)"),
            Some(Version(1, 85, 0))
        );
        assert_eq!(
            Version::parse("rustc 1.96.0-nightly (abc 2026-01-01)"),
            Some(Version(1, 96, 0))
        );
        assert_eq!(Version::parse("unknown (No such file)"), None);
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        assert_eq!(rust_version(&root.join("Cargo.toml")), Version(1, 85, 0));
        assert!(rust_version(&root.join("qemu-plugin/Cargo.toml")) > Version(1, 85, 0));
    }

    #[test]
    fn too_old_or_unknown_is_passed_over_and_named() {
        let e = discover("sparc64-unknown-linux-gnu", Version(99, 0, 0)).unwrap_err();
        assert!(
            e.to_string().contains("older than rust-version 99.0.0"),
            "{e}"
        );
        let e = discover("nonsense-unknown-linux-gnu", Version(0, 0, 0))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("does not know the target nonsense-unknown-linux-gnu")
                || e.contains("rustc-web"),
            "{e}"
        );
    }

    #[test]
    fn host_triple_has_a_toolchain_without_build_std() {
        let t = discover("x86_64-unknown-linux-gnu", Version(1, 85, 0)).unwrap();
        assert!(!t.build_std, "{t:?}");
        assert!(t.version().starts_with("rustc "), "{}", t.version());
    }

    #[test]
    fn a_triple_nobody_has_needs_build_std_or_is_missing() {
        match discover("sparc64-unknown-linux-gnu", Version(1, 85, 0)) {
            Ok(t) => assert!(t.build_std, "{t:?}"),
            Err(e) => assert!(e.to_string().contains("rustc-web"), "{e}"),
        }
    }

    #[test]
    fn a_nightly_rust_src_comes_after_debian_and_a_target_std_first() {
        let dir = std::env::temp_dir().join(format!("lm-toolchains-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let make = |name: &str, std_for: Option<&str>| {
            let d = dir.join(name);
            std::fs::create_dir_all(d.join("bin")).unwrap();
            std::fs::write(d.join("bin/rustc"), "").unwrap();
            std::fs::write(d.join("bin/cargo"), "").unwrap();
            let src = d.join("lib/rustlib/src/rust/library/std");
            std::fs::create_dir_all(&src).unwrap();
            std::fs::write(src.join("Cargo.toml"), "").unwrap();
            if let Some(t) = std_for {
                let lib = d.join("lib/rustlib").join(t).join("lib");
                std::fs::create_dir_all(&lib).unwrap();
                std::fs::write(lib.join("libstd-0123.rlib"), "").unwrap();
            }
            (name.to_string(), d)
        };
        let triple = "aarch64-unknown-linux-gnu";
        let rustup = [
            make("nightly-x86_64-unknown-linux-gnu", Some(triple)),
            make("stable-x86_64-unknown-linux-gnu", None),
        ];
        let debian = make("usr", None).1;
        let labels: Vec<(String, bool)> = candidates(&rustup, &debian, triple)
            .into_iter()
            .map(|t| (t.label, t.build_std))
            .collect();
        let want = [
            ("rustup nightly-x86_64-unknown-linux-gnu", false),
            ("rustup stable-x86_64-unknown-linux-gnu", true),
            ("debian rustc-web", true),
            ("rustup nightly-x86_64-unknown-linux-gnu", true),
        ];
        assert_eq!(
            labels,
            want.map(|(l, b)| (l.to_string(), b)).to_vec(),
            "a nightly's std for the triple is used as is; its rust-src only last"
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn which_finds_sh_and_not_nonsense() {
        assert!(which("sh").is_some());
        assert!(which("no-such-program-lockmatrix").is_none());
    }
}
