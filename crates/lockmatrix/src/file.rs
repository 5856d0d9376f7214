//! Reading and writing files that may come from a stranger: a run
//! directory or a baseline from a CI artifact, a report destination on the
//! command line.
//!
//! - A file is read only if it is a regular file reached without a symbolic
//!   link in its last component (`O_NOFOLLOW`), opened without blocking (a
//!   FIFO never hangs a read), and only up to a size limit that says what
//!   the largest honest file of its kind is: a hostile or damaged file costs
//!   bounded memory and time, and a link to `/proc/self/environ` or
//!   `/etc/shadow` is refused, not read.
//! - A file is written whole: a temporary file beside it, synced, renamed
//!   into place; a reader sees the old file or the new one.

use std::fmt;
use std::io::{Read, Write};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The largest `run.json`: a 16-target `--profile full --against` run is
/// about 40 MB. A larger one is refused by its size before a byte is
/// read; one within it costs its text and the run parsed from it.
pub const RUN_LIMIT: u64 = 64 << 20;
/// The largest `<target>/<suite>.jsonl` (one suite run's stdout): the
/// biggest seen is under 3 MB.
pub const OUTPUT_LIMIT: u64 = 64 << 20;
/// The largest baseline file: the biggest committed one is under 100 kB.
pub const BASELINE_LIMIT: u64 = 16 << 20;
/// How much of an existing report destination is read to tell whether
/// lockmatrix wrote it (its generator mark is in the first lines).
pub const HEAD_LIMIT: u64 = 4096;

/// Lower-case hex SHA-256 of `bytes`.
pub fn sha256(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Why a file could not be read or written.
#[derive(Debug)]
pub enum FileError {
    /// It does not exist.
    Missing { path: PathBuf },
    /// A symbolic link, a directory, a FIFO, a device or a socket.
    NotRegular { path: PathBuf, kind: &'static str },
    /// Longer than the limit for its kind.
    TooLarge { path: PathBuf, limit: u64 },
    /// Any other failure of the system call.
    Io {
        path: PathBuf,
        doing: &'static str,
        error: std::io::Error,
    },
}

impl FileError {
    pub fn path(&self) -> &Path {
        match self {
            FileError::Missing { path }
            | FileError::NotRegular { path, .. }
            | FileError::TooLarge { path, .. }
            | FileError::Io { path, .. } => path,
        }
    }

    /// The disk is full or the directory read-only: the fix is the
    /// machine's, not the input's.
    pub fn no_room(&self) -> bool {
        matches!(self, FileError::Io { error, .. }
            if matches!(error.raw_os_error(), Some(libc::ENOSPC | libc::EDQUOT | libc::EROFS)))
    }
}

impl fmt::Display for FileError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FileError::Missing { path } => write!(f, "{}: no such file", path.display()),
            FileError::NotRegular { path, kind } => write!(
                f,
                "{}: is {kind}, not a regular file: refused",
                path.display()
            ),
            FileError::TooLarge { path, limit } => write!(
                f,
                "{}: larger than {} MiB, the most a file of its kind can honestly be: refused",
                path.display(),
                limit >> 20
            ),
            FileError::Io { path, doing, error } => {
                write!(f, "{}: {doing}: {error}", path.display())?;
                match error.raw_os_error() {
                    Some(libc::ENOSPC | libc::EDQUOT) => f.write_str(" (free some space there)"),
                    Some(libc::EROFS) => f.write_str(" (a read-only file system)"),
                    Some(libc::EACCES) => f.write_str(" (no permission)"),
                    _ => Ok(()),
                }
            }
        }
    }
}

impl std::error::Error for FileError {}

/// What a file system entry is, in words, for refusals.
pub fn kind_of(t: std::fs::FileType) -> &'static str {
    if t.is_symlink() {
        "a symbolic link"
    } else if t.is_dir() {
        "a directory"
    } else if t.is_fifo() {
        "a FIFO"
    } else if t.is_char_device() || t.is_block_device() {
        "a device"
    } else if t.is_socket() {
        "a socket"
    } else if t.is_file() {
        "a regular file"
    } else {
        "a special file"
    }
}

/// Opens `path` for reading if it is a regular file and its last component
/// is not a symbolic link.
pub fn open_regular(path: &Path) -> Result<std::fs::File, FileError> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
        .map_err(|error| match error.raw_os_error() {
            Some(libc::ENOENT) => FileError::Missing { path: path.into() },
            // O_NOFOLLOW on a symbolic link.
            Some(libc::ELOOP) => FileError::NotRegular {
                path: path.into(),
                kind: "a symbolic link",
            },
            _ => FileError::Io {
                path: path.into(),
                doing: "cannot open",
                error,
            },
        })?;
    let meta = file.metadata().map_err(|error| FileError::Io {
        path: path.into(),
        doing: "cannot stat",
        error,
    })?;
    if !meta.file_type().is_file() {
        return Err(FileError::NotRegular {
            path: path.into(),
            kind: kind_of(meta.file_type()),
        });
    }
    Ok(file)
}

/// The bytes of the regular file `path`, if it holds at most `limit`.
pub fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>, FileError> {
    let file = open_regular(path)?;
    // A file that says it is too large is refused unread (a sparse 1 TB
    // file costs nothing); one that grows while read stops at the limit.
    if file.metadata().is_ok_and(|m| m.len() > limit) {
        return Err(FileError::TooLarge {
            path: path.into(),
            limit,
        });
    }
    let mut bytes = Vec::new();
    file.take(limit + 1)
        .read_to_end(&mut bytes)
        .map_err(|error| FileError::Io {
            path: path.into(),
            doing: "cannot read",
            error,
        })?;
    if bytes.len() as u64 > limit {
        return Err(FileError::TooLarge {
            path: path.into(),
            limit,
        });
    }
    Ok(bytes)
}

/// The text of the regular file `path` (at most `limit` bytes), with a
/// leading UTF-8 byte-order mark dropped; `Ok(None)` when it is not UTF-8.
pub fn read_text(path: &Path, limit: u64) -> Result<Option<String>, FileError> {
    let mut bytes = read_limited(path, limit)?;
    if bytes.starts_with(b"\xef\xbb\xbf") {
        bytes.drain(..3);
    }
    // The bytes become the text: no copy of a file of up to `limit`.
    Ok(String::from_utf8(bytes).ok())
}

/// The first bytes (at most `limit`) of the regular file `path`.
pub fn read_head(path: &Path, limit: u64) -> Result<Vec<u8>, FileError> {
    let mut bytes = Vec::new();
    open_regular(path)?
        .take(limit)
        .read_to_end(&mut bytes)
        .map_err(|error| FileError::Io {
            path: path.into(),
            doing: "cannot read",
            error,
        })?;
    Ok(bytes)
}

/// Writes `text` to a temporary file beside `path`, then renames it into
/// place: a reader sees the old file or the new one, and a failed write
/// leaves the old one (and no temporary file) behind.
pub fn replace(path: &Path, text: &str) -> Result<(), FileError> {
    let tmp = stage(path, text)?;
    std::fs::rename(&tmp, path).map_err(|error| {
        let _ = std::fs::remove_file(&tmp);
        FileError::Io {
            path: path.into(),
            doing: "cannot replace",
            error,
        }
    })
}

/// The hash of `head` and every file of `files` under `root` (each by its
/// path relative to `root` and its content's hash): a key that moves when
/// any of them changes, and only then.
pub fn files_hash(head: &str, root: &Path, files: &[PathBuf]) -> Result<String, FileError> {
    let mut all = head.to_string();
    for p in files {
        let bytes = std::fs::read(p).map_err(|error| FileError::Io {
            path: p.clone(),
            doing: "cannot read",
            error,
        })?;
        let rel = p.strip_prefix(root).unwrap_or(p);
        all.push_str(&format!("{}\0{}\0", rel.display(), sha256(&bytes)));
    }
    Ok(sha256(all.as_bytes()))
}

/// A JSON value kept under `dir/<key>.json`, if there is a readable one
/// (a damaged entry is as good as none: what it held is made again).
pub fn load_json<T: serde::de::DeserializeOwned>(dir: &Path, key: &str) -> Option<T> {
    let text = std::fs::read_to_string(dir.join(format!("{key}.json"))).ok()?;
    serde_json::from_str(&text).ok()
}

/// Keeps `value` as `dir/<key>.json`, whole ([`replace`]).
pub fn store_json<T: serde::Serialize>(dir: &Path, key: &str, value: &T) -> Result<(), FileError> {
    std::fs::create_dir_all(dir).map_err(|error| FileError::Io {
        path: dir.into(),
        doing: "cannot create",
        error,
    })?;
    let text = serde_json::to_string_pretty(value).expect("a cache entry serialises");
    replace(&dir.join(format!("{key}.json")), &text)
}

/// The marker in the name of a temporary file [`stage`] makes:
/// `.<name>.tmp-<pid>`.
const TMP_MARK: &str = ".tmp-";

/// Writes `text`, synced to disk, to `.<name>.tmp-<pid>` beside `path` and
/// returns that path, for the caller to rename into place (several files
/// can be staged first, then renamed together). A failed write leaves no
/// temporary file. The file is created new (`O_EXCL`): a link planted
/// under that name is never written through.
pub fn stage(path: &Path, text: &str) -> Result<PathBuf, FileError> {
    let name = path
        .file_name()
        .ok_or_else(|| FileError::NotRegular {
            path: path.into(),
            kind: "a directory",
        })?
        .to_string_lossy();
    let tmp = path.with_file_name(format!(".{name}{TMP_MARK}{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .open(&tmp)
        .and_then(|mut f| {
            f.write_all(text.as_bytes())?;
            f.sync_all()
        })
        .map_err(|error| FileError::Io {
            path: path.into(),
            doing: "cannot write",
            error,
        });
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written.map(|()| tmp)
}

/// The process that staged the temporary file named `name`, if `name` is
/// one ([`stage`]'s `.<name>.tmp-<pid>`).
pub fn staged_by(name: &str) -> Option<u32> {
    if !name.starts_with('.') {
        return None;
    }
    name.rsplit_once(TMP_MARK)?.1.parse().ok()
}

/// Whether process `pid` is alive (a temporary file of a live process is
/// its work in progress, never stale).
pub fn process_alive(pid: u32) -> bool {
    // SAFETY: signal 0 checks for existence and permission; it sends nothing.
    let r = unsafe { libc::kill(pid as libc::pid_t, 0) };
    r == 0 || std::io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let dir = std::env::temp_dir().join(format!("lm-file-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[test]
    fn replaces_whole_and_leaves_no_temporary_file() {
        let dir = scratch("replace");
        let path = dir.join("a.json");
        replace(&path, "old").unwrap();
        replace(&path, "new").unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        // A path whose directory does not exist fails, and leaves nothing.
        assert!(replace(&dir.join("no/such.json"), "x").is_err());
        let names: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["a.json"]);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn reads_only_regular_files_and_only_up_to_the_limit() {
        let dir = scratch("read");
        let file = dir.join("f");
        std::fs::write(&file, "\u{feff}hello").unwrap();
        assert_eq!(read_text(&file, 100).unwrap().as_deref(), Some("hello"));
        assert!(matches!(
            read_limited(&file, 3),
            Err(FileError::TooLarge { limit: 3, .. })
        ));
        assert_eq!(read_head(&file, 4).unwrap(), b"\xef\xbb\xbfh");
        let link = dir.join("link");
        std::os::unix::fs::symlink("/etc/passwd", &link).unwrap();
        let e = read_limited(&link, 100).unwrap_err();
        assert_eq!(
            e.to_string(),
            format!(
                "{}: is a symbolic link, not a regular file: refused",
                link.display()
            )
        );
        for (path, kind) in [
            ("/dev/zero", "a device"),
            ("/dev/full", "a device"),
            ("/proc", "a directory"),
        ] {
            match read_limited(Path::new(path), 100) {
                Err(FileError::NotRegular { kind: k, .. }) => assert_eq!(k, kind, "{path}"),
                other => panic!("{path}: {other:?}"),
            }
        }
        // A FIFO neither blocks the open nor the read.
        let fifo = dir.join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo on a path in our scratch directory.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(matches!(
            read_limited(&fifo, 100),
            Err(FileError::NotRegular { kind: "a FIFO", .. })
        ));
        assert!(matches!(
            read_limited(&dir.join("none"), 1),
            Err(FileError::Missing { .. })
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn staging_never_writes_through_a_planted_link() {
        let dir = scratch("stage");
        let victim = dir.join("victim");
        std::fs::write(&victim, "keep").unwrap();
        let path = dir.join("a.json");
        let planted = dir.join(format!(".a.json{TMP_MARK}{}", std::process::id()));
        std::os::unix::fs::symlink(&victim, &planted).unwrap();
        replace(&path, "new").unwrap();
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "keep");
        assert_eq!(std::fs::read_to_string(&path).unwrap(), "new");
        assert_eq!(staged_by(&format!(".rwsem.json{TMP_MARK}8925")), Some(8925));
        assert_eq!(staged_by("rwsem.json"), None);
        assert!(process_alive(std::process::id()));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
