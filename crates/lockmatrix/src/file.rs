//! Writing a file so that a reader never sees half of it.

use anyhow::{Context, Result};
use std::io::Write;
use std::path::{Path, PathBuf};

/// Writes `text` to a temporary file beside `path`, then renames it into
/// place: a reader sees the old file or the new one, and a failed write
/// leaves the old one (and no temporary file) behind.
pub fn replace(path: &Path, text: &str) -> Result<()> {
    let tmp = stage(path, text)?;
    std::fs::rename(&tmp, path).map_err(|e| {
        let _ = std::fs::remove_file(&tmp);
        anyhow::anyhow!("{}: cannot replace: {e}", path.display())
    })
}

/// Writes `text`, synced to disk, to `.<name>.tmp-<pid>` beside `path` and
/// returns that path, for the caller to rename into place (several files
/// can be staged first, then renamed together). A failed write leaves no
/// temporary file.
pub fn stage(path: &Path, text: &str) -> Result<PathBuf> {
    let name = path
        .file_name()
        .with_context(|| format!("{}: no file name", path.display()))?
        .to_string_lossy();
    let tmp = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
    let written = std::fs::File::create(&tmp)
        .and_then(|mut f| {
            f.write_all(text.as_bytes())?;
            f.sync_all()
        })
        .with_context(|| format!("{}: cannot write", path.display()));
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written.map(|()| tmp)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_whole_and_leaves_no_temporary_file() {
        let dir = std::env::temp_dir().join(format!("lm-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
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
}
