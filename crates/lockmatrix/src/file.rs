//! Writing a file so that a reader never sees half of it.

use anyhow::{Context, Result};
use std::path::Path;

/// Writes `text` to a temporary file beside `path`, then renames it into
/// place: a reader sees the old file or the new one, and a failed write
/// leaves the old one (and no temporary file) behind.
pub fn replace(path: &Path, text: &str) -> Result<()> {
    let name = path
        .file_name()
        .map_or("file".into(), |n| n.to_string_lossy().into_owned());
    let tmp = path.with_file_name(format!(".{name}.tmp-{}", std::process::id()));
    let written = std::fs::write(&tmp, text)
        .with_context(|| format!("{}: cannot write", path.display()))
        .and_then(|()| {
            std::fs::rename(&tmp, path)
                .with_context(|| format!("{}: cannot replace", path.display()))
        });
    if written.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    written
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
