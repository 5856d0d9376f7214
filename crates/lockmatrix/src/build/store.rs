//! The cache's stored binaries: each a read-only copy named by its
//! content (`bin/<sha256>/<suite>`), what a build key produced before
//! (`built/<key>`), and the lock that keeps two builds out of one dir.

use super::job::{Binary, BuildError};
use crate::observe::{Event, Observer};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// An exclusive lock on `dir` (a `lockmatrix.lock` file in it), held
/// until the file is dropped.
pub(crate) fn lock_dir(dir: &Path) -> Result<std::fs::File, crate::file::FileError> {
    use crate::file::FileError;
    use std::os::fd::AsRawFd;
    let io = |path: &Path, doing, error| FileError::Io {
        path: path.to_path_buf(),
        doing,
        error,
    };
    std::fs::create_dir_all(dir).map_err(|e| io(dir, "cannot create", e))?;
    let path = dir.join("lockmatrix.lock");
    let file = std::fs::File::create(&path).map_err(|e| io(&path, "cannot create", e))?;
    // SAFETY: flock on a file descriptor this function owns.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
        return Err(io(&path, "cannot lock", std::io::Error::last_os_error()));
    }
    Ok(file)
}

/// Where built binaries run from: `<cache>/bin/<sha256>/<suite>`, each a
/// read-only copy named by its content. A later build never replaces one
/// (an `--against` run's base binaries stay while the head is built into
/// the same target dir), and nothing a run directory holds is executed.
pub fn store_dir(cache: &Path) -> PathBuf {
    cache.join("bin")
}

/// How long a stored binary no build has produced is kept: long enough
/// for any `--against` base or rerun of a recent run.
const STORE_DAYS: u64 = 14;

/// Removes the stored binaries no build produced for [`STORE_DAYS`].
pub(super) fn prune_store(cache: &Path) {
    let old = std::time::Duration::from_secs(STORE_DAYS * 86_400);
    for e in std::fs::read_dir(store_dir(cache))
        .into_iter()
        .flatten()
        .flatten()
    {
        let age = e
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| t.elapsed().ok());
        if age.is_some_and(|a| a > old) && e.file_type().is_ok_and(|t| t.is_dir()) {
            let _ = std::fs::remove_dir_all(e.path());
        }
    }
}

/// Copies `bytes` to `to` through a temporary file and a rename, read-only
/// and executable: a full disk leaves no partial binary behind, and the
/// error names the destination.
pub(super) fn write_binary(to: &Path, bytes: &[u8]) -> Result<(), BuildError> {
    use std::os::unix::fs::PermissionsExt;
    let around = |e: &dyn std::fmt::Display| BuildError::Around {
        what: format!("keeping the binary as {}: {e}", to.display()),
    };
    if let Some(dir) = to.parent() {
        std::fs::create_dir_all(dir).map_err(|e| around(&e))?;
    }
    let tmp = crate::file::stage(to, "").map_err(|e| around(&e))?;
    let written = std::fs::write(&tmp, bytes)
        .and_then(|()| std::fs::set_permissions(&tmp, std::fs::Permissions::from_mode(0o555)))
        .and_then(|()| std::fs::rename(&tmp, to));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        return Err(around(&e));
    }
    Ok(())
}

/// Keeps the binary cargo built at `built`: in the store (what runs) and,
/// as a copy the run keeps for its reproducer commands, at `kept`.
pub(super) fn keep(
    cache: &Path,
    built: &Path,
    suite: &str,
    kept: &Path,
    observer: &dyn Observer,
) -> Result<Binary, BuildError> {
    let bytes = std::fs::read(built).map_err(|e| BuildError::Around {
        what: format!("reading {}: {e}", built.display()),
    })?;
    let sha256 = crate::file::sha256(&bytes);
    let path = store_dir(cache).join(&sha256).join(suite);
    // An entry that no longer holds its content is replaced, never run;
    // it is named, as only a hand (or a failing disk) changes one.
    match std::fs::read(&path) {
        Ok(b) if crate::file::sha256(&b) == sha256 => {}
        found => {
            if found.is_ok() {
                observer.event(Event::Warning(&format!(
                    "{}: changed since it was stored (sha256 differs from its name): replaced",
                    path.display()
                )));
            }
            let _ = std::fs::remove_file(&path);
            write_binary(&path, &bytes)?;
        }
    }
    // Used now: kept by [`prune_store`] for another while.
    if let Ok(dir) = std::fs::File::open(store_dir(cache).join(&sha256)) {
        let _ = dir.set_modified(std::time::SystemTime::now());
    }
    let _ = std::fs::remove_file(kept);
    write_binary(kept, &bytes)?;
    Ok(Binary {
        path,
        sha256,
        compiler: None,
    })
}

/// Where each build's binaries are recorded by [`build_key`]: one file
/// per key, `suite sha256` lines naming entries of the store.
pub(super) fn builds_dir(cache: &Path) -> PathBuf {
    cache.join("built")
}

/// The binaries a build with this `key` produced before, when the store
/// still holds every one intact: copied to `kept` as a fresh build's are,
/// and cargo is not run at all (it would rebuild whenever another tree
/// was built last in the target dir). `None`: build.
pub(super) fn built_before(
    cache: &Path,
    key: &str,
    suites: &[&str],
    kept: &Path,
    observer: &dyn Observer,
) -> Result<Option<BTreeMap<String, Binary>>, BuildError> {
    let Ok(record) = std::fs::read_to_string(builds_dir(cache).join(key)) else {
        return Ok(None);
    };
    let recorded: BTreeMap<&str, &str> = record.lines().filter_map(|l| l.split_once(' ')).collect();
    let mut found = Vec::new();
    for s in suites {
        let Some(sha256) = recorded.get(s) else {
            return Ok(None);
        };
        let path = store_dir(cache).join(sha256).join(s);
        match std::fs::read(&path) {
            Ok(bytes) if crate::file::sha256(&bytes) == *sha256 => found.push((s, bytes, path)),
            Ok(_) => {
                // Never run: rebuilt, and the store entry rewritten.
                observer.event(Event::Warning(&format!(
                    "{}: changed since it was built (sha256 differs from the build's record): rebuilding",
                    path.display()
                )));
                let _ = std::fs::remove_file(&path);
                return Ok(None);
            }
            // Pruned: build again.
            Err(_) => return Ok(None),
        }
    }
    let mut binaries = BTreeMap::new();
    for (s, bytes, path) in found {
        let to = kept.join(s);
        let _ = std::fs::remove_file(&to);
        write_binary(&to, &bytes)?;
        if let Some(dir) = path.parent() {
            if let Ok(d) = std::fs::File::open(dir) {
                let _ = d.set_modified(std::time::SystemTime::now());
            }
        }
        let sha256 = crate::file::sha256(&bytes);
        binaries.insert(
            s.to_string(),
            Binary {
                path,
                sha256,
                compiler: None,
            },
        );
    }
    Ok(Some(binaries))
}
