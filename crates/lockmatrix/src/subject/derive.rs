//! The tree a lock crate is measured in: a copy of the checkout's
//! workspace whose `suites/subject` depends on the crate, resolved by
//! cargo, with `locks.rs` generated for the crate's locks. The matrix then
//! builds it like any other tree (`--against`'s base is one too).
//!
//! A path crate is copied beside the tree (`<tree>.crate`: outside it, as
//! the crate may be a workspace of its own) as cargo would package it
//! (`package.rs`), so the build sees the working copy as it was when the
//! run began, and the copy is removed when the run is over, however it
//! ends (`crate::scratch`; [`prune`] takes what a killed run left); the hash of the copy is written into
//! `suites/subject/Cargo.toml`, so the suites' source hash, which keys the
//! build cache, covers the crate's code. A registry or git crate is pinned
//! by the tree's Cargo.lock (checksum or commit), which that hash covers.

use super::declared::{self, Declared};
use super::generate;
use super::resolved::Subject;
use super::spec::{Source, Spec};
use crate::error::doing;
use crate::name::Name;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// Why the tree of a lock crate to measure could not be made; each names
/// the crate's spec or the file, and what was expected.
#[derive(Debug, thiserror::Error)]
pub enum DeriveError {
    /// Reading or writing the tree, as the system said it.
    #[error(transparent)]
    Io(#[from] std::io::Error),
    /// What was being done when the system refused.
    #[error(transparent)]
    While(#[from] crate::error::Doing),
    #[error(transparent)]
    Lock(#[from] crate::file::FileError),
    #[error(transparent)]
    Package(#[from] super::package::PackageError),
    #[error("{spec}: cargo did not resolve it")]
    NotResolved { spec: String },
    #[error("{spec}: cargo cannot resolve it:\n{errors}")]
    Cargo { spec: String, errors: String },
    #[error("{spec}: {} {version} does not depend on lock_api with these features ({}): lockmatrix measures locks through lock_api's RawMutex and RawRwLock", .name, .features.join(", "))]
    NoLockApi {
        spec: String,
        name: String,
        version: String,
        features: Vec<String>,
    },
    #[error("{spec}: its Cargo.toml declares no locks for lockmatrix: add `[package.metadata.lockmatrix]` with `mutex = [\"TypePath\", ...]` and/or `rwlock = [...]` (docs/crates.md)")]
    NoLocksDeclared { spec: String },
    /// Its `[package.metadata.lockmatrix]` (in `manifest`), or the code
    /// generated for its locks, is not what lockmatrix reads.
    #[error("{spec}: {}{error}", .manifest.as_ref().map(|m| format!("{m}: ")).unwrap_or_default())]
    Declared {
        spec: String,
        manifest: Option<String>,
        error: super::error::SubjectError,
    },
    /// A lock type's name (said in full by the error).
    #[error(transparent)]
    LockName(super::error::SubjectError),
    #[error("{}: not a git checkout: {why}", .root.display())]
    NotACheckout { root: PathBuf, why: String },
}

type Result<T, E = DeriveError> = std::result::Result<T, E>;

/// Directories of the checkout the suites' build does not need.
const NOT_COPIED: &[&str] = &["baselines/", "docs/", "results/", ".github/", "target/"];

/// The tree of a spec, and the lock held while a run uses it.
pub struct Derived {
    pub tree: PathBuf,
    pub subject: Subject,
    /// Another run with the same spec waits for this one's builds.
    pub lock: std::fs::File,
    /// A path crate's copy beside its tree (`<tree>.crate`), removed when
    /// dropped (the run is over), or by a signal's end of the process: the
    /// working copy's files do not outlive the run in the cache.
    pub copy: Option<crate::scratch::Scratch>,
    /// A path crate's untracked files that cargo would have packaged from
    /// its dirty checkout, left out (relative to its workspace).
    pub left_out: Vec<PathBuf>,
}

/// Removes the path crates' copies (and cargo's scratch beside them) that
/// no live run holds: what a run killed with SIGKILL left. A run holds
/// `<key>.lock` while its `<key>.crate` exists, so a copy whose lock can
/// be taken is stale. Returns what was removed.
pub fn prune(cache: &Path) -> Vec<PathBuf> {
    use std::os::fd::AsRawFd;
    let all = cache.join("crate-trees");
    let mut removed = Vec::new();
    for e in std::fs::read_dir(&all).into_iter().flatten().flatten() {
        let path = e.path();
        let name = e.file_name().to_string_lossy().into_owned();
        let Some(key) = name
            .strip_suffix(".crate")
            .or_else(|| name.strip_suffix(".package-target"))
        else {
            continue;
        };
        let lock = all.join(format!("{key}.lock/lockmatrix.lock"));
        let free = match std::fs::File::open(&lock) {
            Ok(f) => {
                // SAFETY: flock on a file descriptor owned here; released
                // when it is closed at the end of this arm.
                let r = unsafe { libc::flock(f.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) };
                r == 0
            }
            Err(_) => true,
        };
        if free {
            let _ = std::fs::remove_dir_all(&path);
            removed.push(path);
        }
    }
    removed
}

/// Builds the tree for `spec` under `cache/crate-trees/<hash of spec>`:
/// one path per spec, so that a crate against itself is built from one
/// tree into identical binaries (a binary holds its sources' paths), and
/// the build cache finds it again. Needs the registry (or the git remote)
/// unless cargo has what the crate needs already.
pub fn derive(root: &Path, spec: &Spec, cache: &Path) -> Result<Derived> {
    let all = cache.join("crate-trees");
    let key =
        crate::escape::prefix(&crate::file::sha256(spec.to_string().as_bytes()), 16).to_string();
    let existed = all.exists();
    let lock = crate::build::lock_dir(&all.join(format!("{key}.lock")))?;
    let tree = all.join(&key);
    // Registered before `make` creates it.
    let copy = crate::scratch::Scratch::new(tree.with_extension("crate"));
    let made = make(root, spec, &tree);
    if made.is_err() {
        // A crate that cannot be resolved leaves nothing behind.
        let _ = std::fs::remove_dir_all(&tree);
        let _ = std::fs::remove_dir_all(tree.with_extension("crate"));
        let _ = std::fs::remove_dir_all(all.join(format!("{key}.lock")));
        if !existed {
            let _ = std::fs::remove_dir(&all);
        }
    }
    let (subject, left_out) = made?;
    let copy = if copy.path().exists() {
        Some(copy)
    } else {
        None
    };
    Ok(Derived {
        copy,
        left_out,
        tree,
        subject,
        lock,
    })
}

/// Makes the tree of `spec` at `tree`: [`derive`]'s work. Returns the
/// crate as resolved, and a path crate's untracked files left out.
fn make(root: &Path, spec: &Spec, tree: &Path) -> Result<(Subject, Vec<PathBuf>)> {
    let tree = tree.to_path_buf();
    copy_checkout(root, spec, &tree)?;
    let (copied, path_state, left_out) = copy_path_source(spec, &tree)?;
    let subject_dir = tree.join("suites/subject");
    let git_ref = git_ref(spec);
    let write = |declared: &Declared, lock_api: Option<&str>| -> Result<()> {
        let mut text = generate::cargo_toml(spec, copied.as_deref(), declared, lock_api, git_ref);
        if let Some(state) = &path_state {
            // The copy's hash, so that the build cache tells versions apart.
            text.push_str(&format!("# {state}\n"));
        }
        std::fs::write(subject_dir.join("Cargo.toml"), text)?;
        Ok(())
    };
    // First the crate alone, to learn what it declares; then with the
    // features its locks need, to learn which lock_api it follows.
    let first = declared::known(spec.name.as_str()).unwrap_or(Declared {
        features: Vec::new(),
        default_features: true,
        mutex: Vec::new(),
        rwlock: Vec::new(),
    });
    write(&first, None)?;
    let meta = metadata(&tree, spec)?;
    let pkg =
        dependency(&meta, "subject", generate::EXTERN).ok_or_else(|| DeriveError::NotResolved {
            spec: spec.to_string(),
        })?;
    let version = str_of(pkg, "version");
    let declared = declared_locks(spec, pkg)?;
    write(&declared, None)?;
    let meta = metadata(&tree, spec)?;
    let pkg =
        dependency(&meta, "subject", generate::EXTERN).ok_or_else(|| DeriveError::NotResolved {
            spec: spec.to_string(),
        })?;
    let id = str_of(pkg, "id");
    let lock_api = dependency_by_package(&meta, &id, "lock_api")
        .map(|p| str_of(p, "version"))
        .ok_or_else(|| DeriveError::NoLockApi {
            spec: spec.to_string(),
            name: spec.name.to_string(),
            version: version.clone(),
            features: declared.features.clone(),
        })?;
    let major = lock_api.split('.').take(2).collect::<Vec<_>>().join(".");
    write(&declared, Some(&major))?;
    let locks = generate::locks_rs(spec, &version, &declared, &lock_api).map_err(|error| {
        DeriveError::Declared {
            spec: spec.to_string(),
            manifest: None,
            error,
        }
    })?;
    std::fs::write(subject_dir.join("src/locks.rs"), locks)?;
    metadata(&tree, spec)?;

    let lock_text = std::fs::read_to_string(tree.join("Cargo.lock"))?;
    let source = source_of(spec, pkg, &version, &lock_text, path_state);
    let subject = Subject {
        name: spec.name.clone(),
        version,
        spec: spec.to_string(),
        source,
        lock_api,
        rust_version: pkg
            .get("rust_version")
            .and_then(Value::as_str)
            .map(str::to_string),
        features: declared.features.clone(),
        mutexes: lock_names(spec, &declared.mutex)?,
        rwlocks: lock_names(spec, &declared.rwlock)?,
    };
    Ok((subject, left_out))
}

/// Copies the checkout's tracked files to `tree` (afresh), its manifest
/// building the crate's own code laid out the same from build to build,
/// as the suites' is (one codegen unit).
fn copy_checkout(root: &Path, spec: &Spec, tree: &Path) -> Result<()> {
    if tree.exists() {
        std::fs::remove_dir_all(tree).map_err(doing(format!("removing {}", tree.display())))?;
    }
    copy_files(root, &tracked(root)?, tree, NOT_COPIED)?;
    let mut manifest = std::fs::read_to_string(tree.join("Cargo.toml"))?;
    manifest.push_str(&format!(
        "\n# Added by lockmatrix: the lock crate under test.\n[profile.release.package.{}]\ncodegen-units = 1\n",
        spec.name
    ));
    std::fs::write(tree.join("Cargo.toml"), manifest)?;
    Ok(())
}

/// For a path spec: copies its crate beside `tree` ([`copy_path_crate`]);
/// returns the copy's crate directory, its state and the untracked files
/// left out. `(None, None, [])` for other sources.
type PathSource = (Option<String>, Option<String>, Vec<PathBuf>);
fn copy_path_source(spec: &Spec, tree: &Path) -> Result<PathSource> {
    let Source::Path(dir) = &spec.source else {
        return Ok((None, None, Vec::new()));
    };
    let copy = tree.with_extension("crate");
    let _ = std::fs::remove_dir_all(&copy);
    let (rel, state, left_out) = copy_path_crate(dir, &copy)?;
    Ok((
        Some(copy.join(rel).to_string_lossy().into_owned()),
        Some(state),
        left_out,
    ))
}

/// The locks the resolved crate `pkg` declares in its
/// `[package.metadata.lockmatrix]`, else the ones lockmatrix knows it
/// by; an error saying how to declare them when neither is there.
fn declared_locks(spec: &Spec, pkg: &Value) -> Result<Declared> {
    Ok(match pkg.pointer("/metadata/lockmatrix") {
        Some(v) => Declared::from_metadata(v).map_err(|error| DeriveError::Declared {
            spec: spec.to_string(),
            manifest: Some(str_of(pkg, "manifest_path")),
            error,
        })?,
        None => match declared::known(spec.name.as_str()) {
            Some(d) => d,
            None => {
                return Err(DeriveError::NoLocksDeclared {
                    spec: spec.to_string(),
                })
            }
        },
    })
}

/// Where the crate came from, as the run records it: crates.io and its
/// checksum in `lock_text`, the git commit cargo resolved, or the path
/// and its copy's state.
fn source_of(
    spec: &Spec,
    pkg: &Value,
    version: &str,
    lock_text: &str,
    path_state: Option<String>,
) -> String {
    match (&spec.source, path_state) {
        (Source::Registry(_), _) => match checksum(lock_text, spec.name.as_str(), version) {
            Some(sum) => format!("crates.io, sha256 {sum}"),
            None => "crates.io".into(),
        },
        (Source::Git { url, .. }, _) => {
            // `git+URL?rev=REV#COMMIT`.
            let commit = str_of(pkg, "source")
                .rsplit_once('#')
                .map(|(_, c)| c.chars().take(40).collect::<String>())
                .unwrap_or_default();
            format!("git {url} commit {commit}")
        }
        (Source::Path(p), Some(state)) => format!("path {} ({state})", p.display()),
        (Source::Path(p), None) => format!("path {}", p.display()),
    }
}

/// The names the suites' cases give the crate's lock types at `paths`.
fn lock_names(spec: &Spec, paths: &[String]) -> Result<Vec<Name>> {
    paths
        .iter()
        .map(|path| generate::lock_name(&spec.name, path))
        .collect::<Result<_, _>>()
        .map_err(DeriveError::LockName)
}

/// What a git spec's `#REV` is on its remote (`git ls-remote`, with the
/// URL's credentials from the environment as cargo's fetch has them): a
/// branch, a tag, or else a commit. Unreachable remotes are `rev`, and
/// cargo then says what is wrong.
fn git_ref(spec: &Spec) -> generate::GitRef {
    let Source::Git { url, rev } = &spec.source else {
        return generate::GitRef::Rev;
    };
    let mut cmd = Command::new("git");
    cmd.args(["ls-remote", "--end-of-options"])
        .arg(url)
        .arg(rev)
        .env("GIT_TERMINAL_PROMPT", "0");
    with_credentials(&mut cmd, spec);
    match cmd.output() {
        Ok(o) if o.status.success() => {
            generate::GitRef::of(rev, &String::from_utf8_lossy(&o.stdout))
        }
        _ => generate::GitRef::Rev,
    }
}

/// Gives a git command run for `spec` (git itself, or cargo's fetch with
/// the git CLI) the credentials its URL was given with, from the
/// environment, so that the manifest and every file name the plain URL.
/// An http(s) login goes to a credential helper that reads it from the
/// environment: `url.<with login>.insteadOf` would hand the rewritten URL,
/// password and all, to `git remote-http`'s command line, where `ps` shows
/// it. Other schemes' user-info is a login name only (`parse` refuses a
/// password there), and `insteadOf` restores it.
fn with_credentials(cmd: &mut Command, spec: &Spec) {
    let (Some(c), Source::Git { url, .. }) = (&spec.credentials, &spec.source) else {
        return;
    };
    cmd.env("CARGO_NET_GIT_FETCH_WITH_CLI", "true")
        .env("GIT_TERMINAL_PROMPT", "0");
    match c.http_login() {
        Some((user, password)) => {
            // The empty helper first: the user's own helpers are not asked
            // (nor told this login to store).
            cmd.env("GIT_CONFIG_COUNT", "2")
                .env("GIT_CONFIG_KEY_0", "credential.helper")
                .env("GIT_CONFIG_VALUE_0", "")
                .env("GIT_CONFIG_KEY_1", "credential.helper")
                .env("GIT_CONFIG_VALUE_1", LOGIN_HELPER)
                .env("LOCKMATRIX_GIT_USER", user)
                .env("LOCKMATRIX_GIT_PASSWORD", password)
        }
        None => cmd
            .env("GIT_CONFIG_COUNT", "1")
            .env("GIT_CONFIG_KEY_0", format!("url.{}.insteadOf", c.url))
            .env("GIT_CONFIG_VALUE_0", url),
    };
}

/// A git credential helper (run by `sh`) that answers `get` with the login
/// in the environment, and ignores `store` and `erase`.
const LOGIN_HELPER: &str = "!f() { test \"$1\" = get && printf 'username=%s\\npassword=%s\\n' \"$LOCKMATRIX_GIT_USER\" \"$LOCKMATRIX_GIT_PASSWORD\"; }; f";

/// `cargo metadata` of the tree, which also resolves and writes its
/// Cargo.lock, with a registry crate locked at exactly its version (even
/// a yanked one, as spin 0.9.8 is). New dependencies prefer versions the
/// suites' oldest compiler (`rust-version`) builds.
fn metadata(tree: &Path, spec: &Spec) -> Result<Value> {
    let meta = cargo(tree, spec, &["metadata", "--format-version", "1"])?;
    let Source::Registry(want) = &spec.source else {
        return Ok(meta);
    };
    let got = dependency(&meta, "subject", generate::EXTERN).map(|p| str_of(p, "version"));
    match got {
        Some(got) if got != *want => {
            let pkg = format!("{}@{got}", spec.name);
            cargo(tree, spec, &["update", "-p", &pkg, "--precise", want])?;
            cargo(tree, spec, &["metadata", "--format-version", "1"])
        }
        _ => Ok(meta),
    }
}

/// Runs cargo in the tree: its JSON output, or cargo's errors.
fn cargo(tree: &Path, spec: &Spec, args: &[&str]) -> Result<Value> {
    let mut cmd = Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()));
    cmd.args(args)
        .current_dir(tree)
        .env("CARGO_RESOLVER_INCOMPATIBLE_RUST_VERSIONS", "fallback");
    // The manifest names the URL without its user-info; git (run by
    // cargo) puts it back for this fetch only, so it is in no file.
    with_credentials(&mut cmd, spec);
    let out = cmd.output().map_err(doing("running cargo".into()))?;
    if !out.status.success() {
        let err = super::spec::redact(&String::from_utf8_lossy(&out.stderr));
        let first: Vec<&str> = err
            .lines()
            .filter(|l| l.trim_start().starts_with("error") || l.starts_with("  "))
            .take(6)
            .collect();
        return Err(DeriveError::Cargo {
            spec: spec.to_string(),
            errors: first.join("\n"),
        });
    }
    Ok(serde_json::from_slice(&out.stdout).unwrap_or(Value::Null))
}

fn str_of(v: &Value, key: &str) -> String {
    v.get(key)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string()
}

fn package<'a>(meta: &'a Value, id: &str) -> Option<&'a Value> {
    meta["packages"]
        .as_array()?
        .iter()
        .find(|p| p["id"].as_str() == Some(id))
}

/// The package that the workspace member `of` (by name) depends on as
/// `extern_name`.
fn dependency<'a>(meta: &'a Value, of: &str, extern_name: &str) -> Option<&'a Value> {
    let node = meta["resolve"]["nodes"].as_array()?.iter().find(|n| {
        n["id"]
            .as_str()
            .and_then(|id| package(meta, id))
            .is_some_and(|p| p["name"].as_str() == Some(of) && p["source"].is_null())
    })?;
    let dep = node["deps"]
        .as_array()?
        .iter()
        .find(|d| d["name"].as_str() == Some(extern_name))?;
    package(meta, dep["pkg"].as_str()?)
}

/// The package named `name` that the package with id `of` depends on,
/// whatever it calls it (spin calls lock_api `lock_api_crate`). By id: the
/// suites' own parking_lot or spin may be another version of the crate.
fn dependency_by_package<'a>(meta: &'a Value, of: &str, name: &str) -> Option<&'a Value> {
    let node = meta["resolve"]["nodes"]
        .as_array()?
        .iter()
        .find(|n| n["id"].as_str() == Some(of))?;
    node["deps"]
        .as_array()?
        .iter()
        .filter_map(|d| package(meta, d["pkg"].as_str()?))
        .find(|p| p["name"].as_str() == Some(name))
}

/// The Cargo.lock checksum of `name` `version`.
fn checksum(lock: &str, name: &str, version: &str) -> Option<String> {
    let mut current = (None, None);
    for line in lock.lines() {
        let value = |k: &str| {
            line.strip_prefix(k).map(|v| {
                v.trim()
                    .trim_start_matches('=')
                    .trim()
                    .trim_matches('"')
                    .to_string()
            })
        };
        if line.starts_with("[[package]]") {
            current = (None, None);
        } else if let Some(n) = value("name ") {
            current.0 = Some(n);
        } else if let Some(v) = value("version ") {
            current.1 = Some(v);
        } else if let Some(sum) = value("checksum ") {
            if current.0.as_deref() == Some(name) && current.1.as_deref() == Some(version) {
                return Some(sum);
            }
        }
    }
    None
}

/// The checkout's files, as git sees them: tracked, and new ones not
/// ignored (a working copy's changes are measured as they are).
fn tracked(root: &Path) -> Result<Vec<PathBuf>> {
    let out = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .current_dir(root)
        .output()
        .map_err(doing("running git ls-files".into()))?;
    if !out.status.success() {
        return Err(DeriveError::NotACheckout {
            root: root.into(),
            why: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(out
        .stdout
        .split(|&b| b == 0)
        .filter(|p| !p.is_empty())
        .map(|p| PathBuf::from(String::from_utf8_lossy(p).into_owned()))
        .collect())
}

/// Copies `files` (relative to `from`) to `to`, skipping `skip` prefixes,
/// symbolic links and files that vanished; returns the sha256 over what
/// was copied.
fn copy_files(from: &Path, files: &[PathBuf], to: &Path, skip: &[&str]) -> Result<String> {
    let mut files: Vec<&PathBuf> = files
        .iter()
        .filter(|f| !skip.iter().any(|s| f.to_string_lossy().starts_with(s)))
        .collect();
    files.sort();
    let mut all = Vec::new();
    for rel in files {
        let src = from.join(rel);
        match std::fs::symlink_metadata(&src) {
            Ok(m) if m.is_file() => {}
            _ => continue,
        }
        let dst = to.join(rel);
        if let Some(dir) = dst.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let bytes = std::fs::read(&src).map_err(doing(format!("reading {}", src.display())))?;
        std::fs::write(&dst, &bytes)?;
        all.extend_from_slice(rel.to_string_lossy().as_bytes());
        all.push(0);
        all.extend_from_slice(crate::file::sha256(&bytes).as_bytes());
        all.push(0);
    }
    Ok(crate::file::sha256(&all))
}

/// Copies the crate at `dir` to `to`, as packaged ([`super::package`]).
/// Returns the crate's directory relative to `to`, its state (the commit
/// of the repository it is in and whether it was modified, and the sha256
/// of what was copied) and the untracked files left out.
fn copy_path_crate(dir: &Path, to: &Path) -> Result<(String, String, Vec<PathBuf>)> {
    let git = |args: &[&str]| -> Option<String> {
        let out = Command::new("git")
            .args(args)
            .current_dir(dir)
            .output()
            .ok()?;
        out.status
            .success()
            .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
    };
    let packaged = match super::package::package(dir, to) {
        Ok(p) => p,
        Err(e) => {
            let _ = std::fs::remove_dir_all(to);
            return Err(e.into());
        }
    };
    let rel = packaged.rel.to_string_lossy().into_owned();
    let sum = packaged.sha256;
    let left_out = packaged.left_out;
    let Some(commit) = git(&["rev-parse", "--verify", "--quiet", "HEAD"]) else {
        return Ok((rel, format!("sha256 {sum}"), left_out));
    };
    let dirty = git(&["status", "--porcelain", "--untracked-files=normal", "."])
        .is_some_and(|s| !s.is_empty());
    let state = format!(
        "git {}{}, sha256 {sum}",
        &commit[..commit.len().min(12)],
        if dirty { " modified" } else { "" }
    );
    Ok((rel, state, left_out))
}
