//! Drift between the committed workflows and what targets.yaml renders to.

use super::render::{HEADER, WORKFLOWS_DIR};
use std::path::{Path, PathBuf};

/// A committed workflow, or their directory, that could not be read.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error("reading {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        error: std::io::Error,
    },
    /// An entry of the workflows' directory could not be listed.
    #[error(transparent)]
    Entry(std::io::Error),
}

/// `path` could not be read.
fn reading(path: &Path) -> impl FnOnce(std::io::Error) -> CheckError + '_ {
    move |error| CheckError::Read {
        path: path.to_path_buf(),
        error,
    }
}

const FIX: &str = "run `cargo xtask ci generate`";

/// A line for a message: at most 120 characters, and visible when empty.
fn shown(line: Option<&str>) -> String {
    match line {
        None => "(end of file)".into(),
        Some(l) => {
            let mut s: String = l.chars().take(120).collect();
            if s.len() < l.len() {
                s.push('…');
            }
            format!("`{s}`")
        }
    }
}

/// One line saying where `committed` first differs from `rendered`, or
/// `None` when they are identical.
pub fn difference(path: &Path, committed: &str, rendered: &str) -> Option<String> {
    if committed == rendered {
        return None;
    }
    let (mut a, mut b) = (committed.split('\n'), rendered.split('\n'));
    let mut n = 1;
    loop {
        let (x, y) = (a.next(), b.next());
        if x != y {
            return Some(format!(
                "{}: differs from targets.yaml's rendering at line {n}: committed {}, rendered {}; {FIX}",
                path.display(),
                shown(x),
                shown(y)
            ));
        }
        n += 1;
    }
}

/// Compares the rendered `files` (paths relative to `root`) with what is
/// on disk, and reports generated workflow files that are no longer
/// rendered.
pub fn check_files(root: &Path, files: &[(PathBuf, String)]) -> Result<Vec<String>, CheckError> {
    let mut lines = Vec::new();
    for (rel, rendered) in files {
        let path = root.join(rel);
        match std::fs::read_to_string(&path) {
            Ok(committed) => lines.extend(difference(rel, &committed, rendered)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                lines.push(format!("{}: missing; {FIX}", rel.display()))
            }
            Err(e) => return Err(reading(&path)(e)),
        }
    }
    let dir = root.join(WORKFLOWS_DIR);
    let mut extra = Vec::new();
    if dir.is_dir() {
        for entry in std::fs::read_dir(&dir).map_err(reading(&dir))? {
            let rel = Path::new(WORKFLOWS_DIR).join(entry.map_err(CheckError::Entry)?.file_name());
            if files.iter().any(|(p, _)| *p == rel) {
                continue;
            }
            let generated = std::fs::read_to_string(root.join(&rel))
                .is_ok_and(|t| t.lines().next() == Some(HEADER));
            if generated {
                extra.push(format!(
                    "{}: generated, but targets.yaml no longer renders it; delete it",
                    rel.display()
                ));
            }
        }
    }
    extra.sort();
    lines.extend(extra);
    Ok(lines)
}

/// Holds every committed workflow under `root` (generated or not) and every
/// rendered one in `files` to the rules of [`super::actions`]: actions
/// pinned by commit with a version comment, no checkout that keeps its
/// credential in a job that does not push. A rendered file that is
/// committed as it is rendered is reported once.
pub fn check_rules(root: &Path, files: &[(PathBuf, String)]) -> Result<Vec<String>, CheckError> {
    let mut lines = Vec::new();
    let dir = root.join(WORKFLOWS_DIR);
    let mut committed: Vec<(PathBuf, String)> = Vec::new();
    if dir.is_dir() {
        for entry in std::fs::read_dir(&dir).map_err(reading(&dir))? {
            let name = entry.map_err(CheckError::Entry)?.file_name();
            let rel = Path::new(WORKFLOWS_DIR).join(&name);
            let yaml = Path::new(&name)
                .extension()
                .is_some_and(|e| e == "yml" || e == "yaml");
            if !yaml {
                continue;
            }
            let text = std::fs::read_to_string(root.join(&rel)).map_err(reading(&rel))?;
            committed.push((rel, text));
        }
    }
    committed.sort();
    for (rel, text) in &committed {
        lines.extend(
            super::actions::check(rel, text)
                .iter()
                .map(|p| p.to_string()),
        );
    }
    for (rel, text) in files {
        if committed.iter().any(|(r, t)| r == rel && t == text) {
            continue;
        }
        let shown = PathBuf::from(format!("{} (as rendered)", rel.display()));
        lines.extend(
            super::actions::check(&shown, text)
                .iter()
                .map(|p| p.to_string()),
        );
    }
    Ok(lines)
}
