//! lockmatrix's cache: cross-built std (`sysroot/`, one per triple,
//! toolchain and base flags, see `build::sysroot_dir`) and suites
//! (`target/`), the stored binaries, the QEMU plugin, `--against`
//! worktrees, ssh host keys. Outside the clone, so every checkout on the
//! machine (and every CI run) reuses the same std builds; per user, so no
//! other user's files are ever run.

use std::fmt;
use std::path::PathBuf;

/// Why there is no usable cache directory.
#[derive(Debug, Clone, PartialEq)]
pub enum CacheError {
    /// Neither `LOCKMATRIX_CACHE`, `XDG_CACHE_HOME` nor `HOME` is set.
    Unset,
    /// The directory cannot be created or written.
    NotWritable { dir: PathBuf, why: String },
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
        }
    }
}

impl std::error::Error for CacheError {}

/// `$LOCKMATRIX_CACHE`, else `$XDG_CACHE_HOME/lockmatrix`, else
/// `$HOME/.cache/lockmatrix`. Empty variables count as unset, as the XDG
/// specification says.
pub fn dir() -> Result<PathBuf, CacheError> {
    let var = |k| {
        std::env::var_os(k)
            .filter(|v| !v.is_empty())
            .map(PathBuf::from)
    };
    if let Some(d) = var("LOCKMATRIX_CACHE") {
        return Ok(d);
    }
    var("XDG_CACHE_HOME")
        .or_else(|| var("HOME").map(|h| h.join(".cache")))
        .map(|base| base.join("lockmatrix"))
        .ok_or(CacheError::Unset)
}

/// The cache directory, created if need be and checked writable: for the
/// commands that build, before anything is installed or built.
pub fn check() -> Result<PathBuf, CacheError> {
    let dir = dir()?;
    let not = |e: std::io::Error| CacheError::NotWritable {
        dir: dir.clone(),
        why: e.to_string(),
    };
    std::fs::create_dir_all(&dir).map_err(not)?;
    let probe = dir.join(format!(".probe-{}", std::process::id()));
    std::fs::write(&probe, b"").map_err(not)?;
    let _ = std::fs::remove_file(&probe);
    Ok(dir)
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
}
