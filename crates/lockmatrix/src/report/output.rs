//! Where a report goes: standard output (`-`) or a file, written through a
//! temporary file and a rename, never read back whole.
//!
//! A destination is checked before any work: one that exists must be a
//! regular file (a FIFO would hang the write, a device such as `/dev/full`
//! or `/dev/zero` cannot be replaced, a directory is a mistake), and a
//! report (HTML, Bencher export) never replaces a file lockmatrix did not
//! write, which its first bytes tell.

use super::{bmf, html};
use crate::file::{self, FileError};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Why a report may not be written where it was asked to go (bad input,
/// exit status 2); each names the path.
#[derive(Debug, thiserror::Error)]
pub enum DestinationError {
    #[error("{}: its directory does not exist; expected a file to write (or - for standard output)", path.display())]
    NoDirectory { path: PathBuf },
    #[error("{}: cannot look at it: {error}", path.display())]
    Unseen {
        path: PathBuf,
        error: std::io::Error,
    },
    /// A directory, a FIFO, a device: `kind` says which.
    #[error("{}: is {kind}; expected a regular file to write (or - for standard output)", path.display())]
    NotRegular { path: PathBuf, kind: &'static str },
    /// Its first bytes could not be read to tell whose it is.
    #[error("{error}: not overwritten")]
    Unreadable { error: FileError },
    #[error("{}: exists and is not a report lockmatrix wrote: not overwritten (remove it, or choose another file)", path.display())]
    NotOurs { path: PathBuf },
}

#[derive(Debug, Clone, PartialEq)]
pub enum Destination {
    Stdout,
    File(PathBuf),
}

/// What may be replaced at a destination that exists.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Replaces {
    /// Only a report lockmatrix wrote (`report --html`, `--bmf`).
    OwnReport,
    /// Any regular file (the gate's `--json` and `--markdown`, which CI
    /// points at its own files such as `$GITHUB_STEP_SUMMARY`).
    AnyFile,
}

impl Destination {
    /// `-` is standard output; anything else a path, made absolute with
    /// `resolve`.
    pub fn new(arg: &Path, resolve: impl Fn(&Path) -> PathBuf) -> Destination {
        if arg == Path::new("-") {
            Destination::Stdout
        } else {
            Destination::File(resolve(arg))
        }
    }

    /// Whether the report may be written here; an error (bad input) says
    /// why not. Reads at most the first [`file::HEAD_LIMIT`] bytes.
    pub fn check(&self, replaces: Replaces) -> Result<(), DestinationError> {
        let Destination::File(path) = self else {
            return Ok(());
        };
        let meta = match path.symlink_metadata() {
            Ok(m) => m,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                let dir = path.parent().filter(|d| !d.as_os_str().is_empty());
                if dir.is_some_and(|d| !d.is_dir()) {
                    return Err(DestinationError::NoDirectory { path: path.clone() });
                }
                return Ok(());
            }
            Err(error) => {
                return Err(DestinationError::Unseen {
                    path: path.clone(),
                    error,
                })
            }
        };
        if !meta.file_type().is_file() {
            return Err(DestinationError::NotRegular {
                path: path.clone(),
                kind: file::kind_of(meta.file_type()),
            });
        }
        if replaces == Replaces::AnyFile || meta.len() == 0 {
            return Ok(());
        }
        let head = match file::read_head(path, file::HEAD_LIMIT) {
            Ok(head) => head,
            Err(error) => return Err(DestinationError::Unreadable { error }),
        };
        if !ours(&String::from_utf8_lossy(&head)) {
            return Err(DestinationError::NotOurs { path: path.clone() });
        }
        Ok(())
    }

    /// Writes `text` whole: to standard output, or to a temporary file
    /// beside the destination, renamed into place.
    pub fn write(&self, text: &str) -> Result<(), FileError> {
        match self {
            Destination::Stdout => {
                let mut out = std::io::stdout().lock();
                out.write_all(text.as_bytes())
                    .and_then(|()| out.flush())
                    .map_err(|error| FileError::Io {
                        path: "standard output".into(),
                        doing: "cannot write",
                        error,
                    })
            }
            Destination::File(path) => file::replace(path, text),
        }
    }

    /// How messages name it.
    pub fn shown(&self) -> String {
        match self {
            Destination::Stdout => "standard output".into(),
            Destination::File(p) => p.display().to_string(),
        }
    }
}

/// Whether `head`, a file's first bytes, is a report lockmatrix wrote: an
/// HTML page with lockmatrix's generator tag in its head, or a Bencher
/// Metric Format file as [`bmf`] writes it.
fn ours(head: &str) -> bool {
    head.contains(html::GENERATOR) || bmf::looks_written(head)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("lm-output-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&d);
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn special_files_are_refused_before_any_work() {
        for (path, kind) in [
            ("/dev/full", "a device"),
            ("/dev/zero", "a device"),
            ("/tmp", "a directory"),
        ] {
            let e = Destination::new(Path::new(path), |p| p.into())
                .check(Replaces::AnyFile)
                .unwrap_err()
                .to_string();
            assert_eq!(
                e,
                format!("{path}: is {kind}; expected a regular file to write (or - for standard output)")
            );
        }
        let d = scratch("fifo");
        let fifo = d.join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo on a path in our scratch directory.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let e = Destination::File(fifo)
            .check(Replaces::OwnReport)
            .unwrap_err();
        assert!(e.to_string().contains("is a FIFO"), "{e}");
        let link = d.join("link");
        std::os::unix::fs::symlink("/etc/passwd", &link).unwrap();
        let e = Destination::File(link)
            .check(Replaces::AnyFile)
            .unwrap_err();
        assert!(e.to_string().contains("is a symbolic link"), "{e}");
        assert_eq!(
            Destination::new(Path::new("-"), |p| p.into()),
            Destination::Stdout
        );
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn a_report_replaces_only_its_own_kind() {
        let d = scratch("own");
        let page = d.join("r.html");
        std::fs::write(
            &page,
            format!("<!DOCTYPE html><head>{}</head>", html::GENERATOR),
        )
        .unwrap();
        assert!(Destination::File(page).check(Replaces::OwnReport).is_ok());
        let notes = d.join("notes.txt");
        std::fs::write(&notes, "my notes").unwrap();
        let e = Destination::File(notes.clone())
            .check(Replaces::OwnReport)
            .unwrap_err();
        assert!(
            e.to_string().contains("not a report lockmatrix wrote"),
            "{e}"
        );
        assert!(Destination::File(notes.clone())
            .check(Replaces::AnyFile)
            .is_ok());
        // A huge file is judged by its head: the check reads 4 KiB of it.
        let big = d.join("big.json");
        let f = std::fs::File::create(&big).unwrap();
        f.set_len(1 << 40).unwrap();
        assert!(Destination::File(big).check(Replaces::OwnReport).is_err());
        Destination::File(notes.clone()).write("new").unwrap();
        assert_eq!(std::fs::read_to_string(&notes).unwrap(), "new");
        std::fs::remove_dir_all(d).unwrap();
    }
}
