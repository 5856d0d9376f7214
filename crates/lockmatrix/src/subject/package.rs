//! A path crate (`--crate NAME@path:DIR`) copied as its package would be
//! published, not as a directory: the files `cargo package --list` names
//! for the crate and for each path dependency of it in its workspace, and
//! the workspace's root manifest (which members inherit from). In a git
//! checkout that is what git tracks, plus what the manifest's `include`
//! names: `cargo package --list --allow-dirty` adds untracked files that
//! are not ignored (a `.env`), and those are left out and named
//! ([`Packaged::left_out`]); build output and anything cargo would not
//! publish stay where they are too. Each file keeps its permissions; a
//! file over [`FILE_LIMIT`], or a crate over [`TOTAL_LIMIT`], is refused
//! before anything is read.

use serde_json::Value;
use std::collections::BTreeSet;
use std::fmt;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The largest file copied: larger than any source file of a lock crate.
pub const FILE_LIMIT: u64 = 16 << 20;
/// The most copied in all.
pub const TOTAL_LIMIT: u64 = 128 << 20;

/// Why a path crate could not be packaged.
#[derive(Debug)]
pub enum PackageError {
    /// cargo could not list it: its first error lines.
    Cargo { dir: PathBuf, error: String },
    /// A path dependency outside the crate's workspace.
    Outside { dependency: PathBuf, root: PathBuf },
    /// A file over [`FILE_LIMIT`], or all of them over [`TOTAL_LIMIT`].
    TooLarge { path: PathBuf, limit: u64 },
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
}

impl fmt::Display for PackageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PackageError::Cargo { dir, error } => {
                write!(f, "{}: cargo cannot package it: {error}", dir.display())
            }
            PackageError::Outside { dependency, root } => write!(
                f,
                "{}: a path dependency outside the crate's workspace {}: not copied (make it a member, or depend on a version)",
                dependency.display(),
                root.display()
            ),
            PackageError::TooLarge { path, limit } => write!(
                f,
                "{}: over {} MiB, the most lockmatrix copies of a path crate: refused (leave it out of the package with `exclude` in Cargo.toml)",
                path.display(),
                limit >> 20
            ),
            PackageError::Io { path, error } => write!(f, "{}: {error}", path.display()),
        }
    }
}

impl std::error::Error for PackageError {}

/// What was copied: the crate's directory relative to the copy, and the
/// sha256 over every file copied (paths and contents).
pub struct Packaged {
    pub rel: PathBuf,
    pub sha256: String,
    /// Untracked files cargo would have packaged from a dirty checkout,
    /// left out (relative to the workspace's root).
    pub left_out: Vec<PathBuf>,
}

/// Copies the crate at `dir` (canonical) to `to`, as packaged.
pub fn package(dir: &Path, to: &Path) -> Result<Packaged, PackageError> {
    // cargo package writes into its target dir: one of ours, never the
    // working copy's, and gone however the run ends.
    let scratch = crate::scratch::Scratch::new(to.with_extension("package-target"));
    package_with(dir, to, scratch.path())
}

fn package_with(dir: &Path, to: &Path, scratch: &Path) -> Result<Packaged, PackageError> {
    let meta = cargo_json(
        dir,
        scratch,
        &["metadata", "--no-deps", "--format-version", "1"],
    )?;
    let root = PathBuf::from(meta["workspace_root"].as_str().unwrap_or_default());
    let root = root.canonicalize().unwrap_or(root);
    let packages = meta["packages"].as_array().cloned().unwrap_or_default();
    let dir_of = |p: &Value| {
        Path::new(p["manifest_path"].as_str().unwrap_or_default())
            .parent()
            .map(|d| d.canonicalize().unwrap_or_else(|_| d.to_path_buf()))
    };
    // The crate and, transitively, its path dependencies.
    let mut dirs: BTreeSet<PathBuf> = BTreeSet::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        if !d.starts_with(&root) {
            return Err(PackageError::Outside {
                dependency: d,
                root: root.clone(),
            });
        }
        if !dirs.insert(d.clone()) {
            continue;
        }
        let Some(pkg) = packages.iter().find(|p| dir_of(p).as_ref() == Some(&d)) else {
            continue;
        };
        for dep in pkg["dependencies"].as_array().into_iter().flatten() {
            if let Some(p) = dep["path"].as_str() {
                let p = Path::new(p);
                todo.push(p.canonicalize().unwrap_or_else(|_| p.to_path_buf()));
            }
        }
    }
    let mut files: BTreeSet<PathBuf> = BTreeSet::new();
    if root != dir {
        files.insert(PathBuf::from("Cargo.toml"));
    }
    let mut left_out = Vec::new();
    for d in &dirs {
        let rel = d.strip_prefix(&root).unwrap_or(Path::new(""));
        let untracked = untracked(d);
        for f in list(d, scratch)? {
            if untracked.contains(&f) {
                left_out.push(rel.join(f));
            } else {
                files.insert(rel.join(f));
            }
        }
    }
    let sha256 = copy(&root, &files, to)?;
    Ok(Packaged {
        rel: dir
            .strip_prefix(&root)
            .unwrap_or(Path::new(""))
            .to_path_buf(),
        sha256,
        left_out,
    })
}

/// The files under `dir` (relative to it) that git does not track and
/// does not ignore, unless the manifest names its files with `include`
/// (then cargo lists what it names, tracked or not, and that is the
/// author's choice). Empty outside git.
fn untracked(dir: &Path) -> BTreeSet<PathBuf> {
    let manifest = std::fs::read_to_string(dir.join("Cargo.toml")).unwrap_or_default();
    if includes(&manifest) {
        return BTreeSet::new();
    }
    let out = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--others",
            "--exclude-standard",
            "--",
            ".",
        ])
        .current_dir(dir)
        .output();
    let untracked: BTreeSet<PathBuf> = match out {
        Ok(o) if o.status.success() => o
            .stdout
            .split(|&b| b == 0)
            .filter(|p| !p.is_empty())
            .map(|p| PathBuf::from(String::from_utf8_lossy(p).into_owned()))
            .collect(),
        _ => BTreeSet::new(),
    };
    // A crate whose manifest git does not track is not in that checkout
    // (a directory inside someone's repository): cargo then lists it as
    // outside git, and so does this.
    if untracked.contains(Path::new("Cargo.toml")) {
        return BTreeSet::new();
    }
    untracked
}

/// Whether the manifest `text` gives `[package]` an `include` list (or
/// takes the workspace's: `include.workspace = true`).
fn includes(text: &str) -> bool {
    let mut table = String::new();
    for line in text.lines() {
        let line = line.trim();
        if let Some(header) = line.strip_prefix('[') {
            table = header.trim_end_matches(']').trim().to_string();
            continue;
        }
        let key = line
            .split(['=', '.'])
            .next()
            .unwrap_or("")
            .trim()
            .trim_matches('"');
        let key = match (table.as_str(), key) {
            ("", "package") => line
                .strip_prefix("package.")
                .map_or("", |r| r.split(['=', '.']).next().unwrap_or("").trim()),
            ("package", k) => k,
            _ => "",
        };
        if key == "include" {
            return true;
        }
    }
    false
}

/// The files of the package at `dir`, relative to it, as `cargo package
/// --list` names them; the manifest cargo would write in their place
/// (`Cargo.toml` normalised) is the original one on disk.
fn list(dir: &Path, scratch: &Path) -> Result<Vec<PathBuf>, PackageError> {
    let text = cargo_text(
        dir,
        scratch,
        &["package", "--list", "--allow-dirty", "--quiet"],
    )?;
    Ok(text
        .lines()
        .filter(|l| !l.is_empty())
        .filter(|l| {
            !matches!(
                *l,
                "Cargo.toml.orig" | ".cargo_vcs_info.json" | "Cargo.lock"
            )
        })
        .map(PathBuf::from)
        .collect())
}

fn cargo_text(dir: &Path, scratch: &Path, args: &[&str]) -> Result<String, PackageError> {
    let out = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
        .args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", scratch)
        .output()
        .map_err(|error| PackageError::Io {
            path: "cargo".into(),
            error,
        })?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let first: Vec<&str> = err
            .lines()
            .filter(|l| l.trim_start().starts_with("error") || l.starts_with("  "))
            .take(4)
            .collect();
        return Err(PackageError::Cargo {
            dir: dir.to_path_buf(),
            error: first.join(" "),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn cargo_json(dir: &Path, scratch: &Path, args: &[&str]) -> Result<Value, PackageError> {
    let text = cargo_text(dir, scratch, args)?;
    Ok(serde_json::from_str(&text).unwrap_or(Value::Null))
}

/// Copies `files` (relative to `from`: regular files only, never through
/// a link) to `to` with their permissions, within the limits; returns
/// the sha256 over paths and contents.
fn copy(from: &Path, files: &BTreeSet<PathBuf>, to: &Path) -> Result<String, PackageError> {
    let io = |path: &Path| {
        let path = path.to_path_buf();
        move |error| PackageError::Io { path, error }
    };
    // Sizes first: a sparse 2 GB file is refused before a byte is read.
    let mut chosen = Vec::new();
    let mut total = 0;
    for rel in files {
        let src = from.join(rel);
        let Ok(m) = std::fs::symlink_metadata(&src) else {
            continue;
        };
        if !m.is_file() {
            continue;
        }
        if m.len() > FILE_LIMIT {
            return Err(PackageError::TooLarge {
                path: src,
                limit: FILE_LIMIT,
            });
        }
        total += m.len();
        if total > TOTAL_LIMIT {
            return Err(PackageError::TooLarge {
                path: from.to_path_buf(),
                limit: TOTAL_LIMIT,
            });
        }
        chosen.push((rel, src, m.permissions().mode() & 0o777));
    }
    let mut all = Vec::new();
    for (rel, src, mode) in chosen {
        let bytes = crate::file::read_limited(&src, FILE_LIMIT).map_err(|e| PackageError::Io {
            path: src.clone(),
            error: std::io::Error::other(e.to_string()),
        })?;
        let dst = to.join(rel);
        // Each file whole, or not at all once the run is being stopped.
        let Some(_writing) = crate::scratch::writing() else {
            return Err(io(&dst)(std::io::Error::other("the run is being stopped")));
        };
        if let Some(d) = dst.parent() {
            std::fs::create_dir_all(d).map_err(io(d))?;
        }
        std::fs::write(&dst, &bytes).map_err(io(&dst))?;
        std::fs::set_permissions(&dst, std::fs::Permissions::from_mode(mode)).map_err(io(&dst))?;
        all.extend_from_slice(rel.to_string_lossy().as_bytes());
        all.push(0);
        all.extend_from_slice(crate::file::sha256(&bytes).as_bytes());
        all.push(0);
    }
    Ok(crate::file::sha256(&all))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn write(p: &Path, text: &str) {
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    }

    #[test]
    fn an_include_list_is_found_in_the_package_table_only() {
        assert!(includes(
            "[package]\nname = \"x\"\ninclude = [\"src/**\"]\n"
        ));
        assert!(includes("[package]\ninclude.workspace = true\n"));
        assert!(includes("package.include = [\"a\"]\n"));
        assert!(!includes(
            "[package]\nname = \"x\"\n[features]\ninclude = []\n"
        ));
        assert!(!includes("[package]\nexclude = [\"x\"]\n"));
    }

    /// In a git checkout, an untracked file that is not ignored is left
    /// out and named; a tracked one, modified, is copied as it is.
    #[test]
    fn an_untracked_file_is_left_out_of_a_git_checkout() {
        let d = std::env::temp_dir().join(format!("lm-package-git-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        write(
            &d.join("Cargo.toml"),
            "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        );
        write(&d.join("src/lib.rs"), "");
        let git = |args: &[&str]| {
            let ok = Command::new("git")
                .args(["-c", "user.name=t", "-c", "user.email=t@t"])
                .args(args)
                .current_dir(&d)
                .output()
                .unwrap()
                .status
                .success();
            assert!(ok, "git {args:?}");
        };
        git(&["init", "-q"]);
        git(&["add", "-A"]);
        git(&["commit", "-q", "-m", "x"]);
        write(&d.join(".env"), "TOKEN=hunter2");
        write(&d.join("src/lib.rs"), "// modified");
        let to = d.join("copy");
        let p = package(&d.canonicalize().unwrap(), &to).unwrap();
        assert_eq!(p.left_out, [PathBuf::from(".env")]);
        assert!(!to.join(".env").exists());
        assert_eq!(
            std::fs::read_to_string(to.join("src/lib.rs")).unwrap(),
            "// modified"
        );
        // A crate inside a checkout that does not track it is taken as
        // cargo takes it: outside git.
        let inner = d.join("inner");
        write(
            &inner.join("Cargo.toml"),
            "[package]\nname = \"inner\"\nversion = \"0.1.0\"\nedition = \"2021\"\n[workspace]\n",
        );
        write(&inner.join("src/lib.rs"), "");
        let p = package(&inner.canonicalize().unwrap(), &d.join("copy-inner")).unwrap();
        assert!(p.left_out.is_empty(), "{:?}", p.left_out);
        assert!(d.join("copy-inner/src/lib.rs").exists());
        // Named in `include`, it is the author's to publish.
        write(
            &d.join("Cargo.toml"),
            "[package]\nname = \"tiny\"\nversion = \"0.1.0\"\nedition = \"2021\"\ninclude = [\"src/**\", \".env\", \"Cargo.toml\"]\n",
        );
        let p = package(&d.canonicalize().unwrap(), &d.join("copy2")).unwrap();
        assert!(p.left_out.is_empty());
        assert!(d.join("copy2/.env").exists());
        std::fs::remove_dir_all(&d).unwrap();
    }

    /// A workspace member with a path dependency: the two packages and the
    /// root manifest are copied, a secret, build output and another member
    /// are not, and a private file stays private.
    #[test]
    fn a_member_is_copied_with_its_path_dependencies_and_nothing_else() {
        let d = std::env::temp_dir().join(format!("lm-package-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        let ws = d.join("ws");
        write(
            &ws.join("Cargo.toml"),
            "[workspace]\nmembers = [\"member\", \"helper\", \"other\"]\n[workspace.package]\nversion = \"0.3.0\"\n",
        );
        write(
            &ws.join("member/Cargo.toml"),
            "[package]\nname = \"member\"\nversion.workspace = true\nedition = \"2021\"\n[dependencies]\nhelper = { path = \"../helper\" }\n",
        );
        write(&ws.join("member/src/lib.rs"), "");
        write(&ws.join("member/.env"), "SECRET=1");
        write(&ws.join("member/target/big"), "build output");
        write(
            &ws.join("helper/Cargo.toml"),
            "[package]\nname = \"helper\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        );
        write(&ws.join("helper/src/lib.rs"), "// helper");
        std::fs::set_permissions(
            ws.join("helper/src/lib.rs"),
            std::fs::Permissions::from_mode(0o600),
        )
        .unwrap();
        write(
            &ws.join("other/Cargo.toml"),
            "[package]\nname = \"other\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
        );
        write(&ws.join("other/src/lib.rs"), "");
        let to = d.join("copy");
        let p = package(&ws.join("member").canonicalize().unwrap(), &to).unwrap();
        assert_eq!(p.rel, Path::new("member"));
        let mut got: Vec<String> = Vec::new();
        let mut dirs = vec![to.clone()];
        while let Some(x) = dirs.pop() {
            for e in std::fs::read_dir(&x).unwrap() {
                let e = e.unwrap().path();
                if e.is_dir() {
                    dirs.push(e);
                } else {
                    got.push(e.strip_prefix(&to).unwrap().display().to_string());
                }
            }
        }
        got.sort();
        assert_eq!(
            got,
            [
                "Cargo.toml",
                "helper/Cargo.toml",
                "helper/src/lib.rs",
                "member/Cargo.toml",
                "member/src/lib.rs"
            ]
        );
        let mode = std::fs::metadata(to.join("helper/src/lib.rs"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        // A sparse file far over the limit is refused unread.
        let big = std::fs::File::create(ws.join("member/src/huge.rs")).unwrap();
        big.set_len(2 << 30).unwrap();
        let e = package(&ws.join("member").canonicalize().unwrap(), &d.join("copy2"))
            .err()
            .unwrap();
        assert!(matches!(e, PackageError::TooLarge { .. }), "{e}");
        assert!(!d.join("copy2").exists());
        // Nothing was written into the working copy.
        assert!(!ws.join("target").exists() && !ws.join("member/target/debug").exists());
        std::fs::remove_dir_all(&d).unwrap();
    }
}
