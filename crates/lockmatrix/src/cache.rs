//! lockmatrix's cache: cross-built std (`sysroot/`, one per triple,
//! toolchain and base flags, see `build::sysroot_dir`) and suites
//! (`target/`), the stored binaries, the QEMU plugin, `--against`
//! worktrees, ssh host keys. Outside the clone, so every checkout on the
//! machine (and every CI run) reuses the same std builds; per user, so no
//! other user's files are ever run.
//!
//! lockmatrix executes what the cache holds (binaries, build scripts of
//! the worktrees), so the cache is verified, not believed: its directory,
//! and each of the directories in it that lockmatrix runs or builds from,
//! must be owned by this user and writable by no one else, checked where
//! a symbolic link leads, never on the link. Whoever else could write
//! there could choose the code a run executes, whatever hash it records.

use std::fmt;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

/// The directories of the cache whose contents are executed or built:
/// checked with the cache itself.
pub const TRUSTED: &[&str] = &[
    "bin",
    "built",
    "crate-trees",
    "model-target",
    "plugin",
    "sysroot",
    "target",
    "worktrees",
];

/// Why there is no usable cache directory.
#[derive(Debug, Clone, PartialEq)]
pub enum CacheError {
    /// Neither `LOCKMATRIX_CACHE`, `XDG_CACHE_HOME` nor `HOME` is set.
    Unset,
    /// The directory cannot be created or written.
    NotWritable { dir: PathBuf, why: String },
    /// Someone else could write there: another owner, group- or
    /// world-writable (`dir` as found; `why` says where a link led).
    Unsafe { dir: PathBuf, why: String },
}

impl fmt::Display for CacheError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CacheError::Unset => f.write_str(
                "no cache directory: set HOME, XDG_CACHE_HOME or LOCKMATRIX_CACHE (lockmatrix never shares one in /tmp between users)",
            ),
            CacheError::NotWritable { dir, why } => write!(
                f,
                "{}: cannot write the cache there: {why} (set LOCKMATRIX_CACHE to a writable directory)",
                dir.display()
            ),
            CacheError::Unsafe { dir, why } => write!(
                f,
                "{}: refused as lockmatrix's cache: {why}; lockmatrix runs what its cache holds, so only you may write there (`chmod go-w`, or set LOCKMATRIX_CACHE to a directory of your own)",
                dir.display()
            ),
        }
    }
}

impl std::error::Error for CacheError {}

/// Where the cache is: `$LOCKMATRIX_CACHE` (a relative one from the
/// current directory), else `$XDG_CACHE_HOME/lockmatrix` where that is
/// absolute, else `$HOME/.cache/lockmatrix`. Empty variables count as
/// unset and a relative `XDG_CACHE_HOME` is ignored, as the XDG
/// specification says.
pub fn location() -> Result<PathBuf, CacheError> {
    let var = |k| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(d) = var("LOCKMATRIX_CACHE") {
        return Ok(std::path::absolute(&d).unwrap_or(d));
    }
    var("XDG_CACHE_HOME")
        .filter(|d| d.is_absolute())
        .or_else(|| var("HOME").map(|h| h.join(".cache")))
        .map(|base| base.join("lockmatrix"))
        .ok_or(CacheError::Unset)
}

/// The cache directory, verified ([`verify`]) where it exists: for the
/// commands that read it. Links are resolved: the path returned is where
/// they led when it was checked.
pub fn dir() -> Result<PathBuf, CacheError> {
    let dir = location()?;
    match dir.symlink_metadata() {
        Ok(_) => verify(&dir),
        Err(_) => Ok(dir),
    }
}

/// The cache directory, created if need be (for this user only), verified
/// and checked writable: for the commands that build, before anything is
/// installed or built.
pub fn check() -> Result<PathBuf, CacheError> {
    let dir = location()?;
    let not = |e: std::io::Error| CacheError::NotWritable {
        dir: dir.clone(),
        why: e.to_string(),
    };
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .map_err(not)?;
    let real = verify(&dir)?;
    let probe = real.join(format!(".probe-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(not)?;
    let _ = std::fs::remove_file(&probe);
    Ok(real)
}

/// Checks the cache at `dir` and its [`TRUSTED`] directories that exist:
/// each a directory (where a link leads), owned by this user, not group-
/// or world-writable. Returns `dir` with its links resolved.
pub fn verify(dir: &Path) -> Result<PathBuf, CacheError> {
    let real = safe_dir(dir, dir)?;
    for sub in TRUSTED {
        let p = real.join(sub);
        if p.symlink_metadata().is_ok() {
            safe_dir(&p, &p)?;
        }
    }
    Ok(real)
}

/// `path` resolved, if it is a directory only this user can write;
/// errors name `shown`.
fn safe_dir(path: &Path, shown: &Path) -> Result<PathBuf, CacheError> {
    let unsafe_ = |why: String| CacheError::Unsafe {
        dir: shown.to_path_buf(),
        why,
    };
    let real = path.canonicalize().map_err(|e| CacheError::NotWritable {
        dir: shown.to_path_buf(),
        why: e.to_string(),
    })?;
    let via = if real != path {
        format!(" (a link to {})", real.display())
    } else {
        String::new()
    };
    let meta = std::fs::metadata(&real).map_err(|e| CacheError::NotWritable {
        dir: shown.to_path_buf(),
        why: e.to_string(),
    })?;
    if !meta.is_dir() {
        return Err(unsafe_(format!("not a directory{via}")));
    }
    // SAFETY: geteuid has no preconditions and cannot fail.
    let me = unsafe { libc::geteuid() };
    if meta.uid() != me {
        return Err(unsafe_(format!(
            "owned by user {}, not you (user {me}){via}",
            meta.uid()
        )));
    }
    let mode = meta.mode() & 0o7777;
    if mode & 0o022 != 0 {
        return Err(unsafe_(format!(
            "{} (mode {mode:04o}){via}",
            if mode & 0o002 != 0 {
                "writable by everyone"
            } else {
                "writable by its group"
            }
        )));
    }
    Ok(real)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_read_only_cache_is_named() {
        // As root a read-only mode is no obstacle; /proc is read-only for all.
        let e = CacheError::NotWritable {
            dir: "/proc/x".into(),
            why: "Read-only file system (os error 30)".into(),
        };
        assert!(e
            .to_string()
            .starts_with("/proc/x: cannot write the cache there"));
        assert!(CacheError::Unset.to_string().contains("HOME"));
    }

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("lm-cache-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    fn chmod(p: &Path, mode: u32) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(p, std::fs::Permissions::from_mode(mode)).unwrap();
    }

    #[test]
    fn a_cache_others_can_write_is_refused_links_checked_where_they_lead() {
        let d = scratch("verify");
        let cache = d.join("cache");
        std::fs::create_dir_all(cache.join("bin")).unwrap();
        chmod(&cache, 0o700);
        chmod(&cache.join("bin"), 0o755);
        assert_eq!(verify(&cache).unwrap(), cache.canonicalize().unwrap());
        // World-writable, the cache or a directory it runs from.
        chmod(&cache, 0o777);
        let e = verify(&cache).unwrap_err().to_string();
        assert!(e.contains("writable by everyone (mode 0777)"), "{e}");
        chmod(&cache, 0o700);
        chmod(&cache.join("bin"), 0o775);
        let e = verify(&cache).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("{}: refused", cache.join("bin").display())),
            "{e}"
        );
        chmod(&cache.join("bin"), 0o755);
        // A link: judged by its target, never its own mode (always 0777).
        let open = d.join("open");
        std::fs::create_dir_all(&open).unwrap();
        chmod(&open, 0o1777);
        let link = d.join("link");
        std::os::unix::fs::symlink(&open, &link).unwrap();
        let e = verify(&link).unwrap_err().to_string();
        assert!(e.contains("(a link to"), "{e}");
        let good = d.join("good");
        std::os::unix::fs::symlink(&cache, &good).unwrap();
        assert_eq!(verify(&good).unwrap(), cache.canonicalize().unwrap());
        // Another user's (as root, chown makes one).
        // SAFETY: geteuid cannot fail.
        if unsafe { libc::geteuid() } == 0 {
            let c = std::ffi::CString::new(cache.to_str().unwrap()).unwrap();
            // SAFETY: chown of our scratch directory to `nobody`.
            assert_eq!(unsafe { libc::chown(c.as_ptr(), 65534, 65534) }, 0);
            let e = verify(&cache).unwrap_err().to_string();
            assert!(e.contains("owned by user 65534, not you"), "{e}");
        }
        std::fs::remove_dir_all(&d).unwrap();
    }
}
