//! The mutation check: every `Acquire`, `Release`, `AcqRel` and `SeqCst`
//! of a modelled lock, weakened to `Relaxed` one at a time in a scratch
//! copy of the workspace, must make one of that lock's models fail. A
//! mutant that survives is an ordering the models do not show is needed:
//! either a model is too weak, or the ordering is stronger than the lock
//! needs, which its comment must then say (see [`Mutant::documented`]).
//!
//! Orderings are found in the lock's own file (`src/locks/<lock>.rs`) in
//! argument position (`load(Acquire)`, `swap(x, AcqRel)`,
//! `Ordering::Release` as an argument), outside comments, strings, `use`
//! lines and the file's `tests` module. The broken control is left out:
//! its model fails already.
//!
//! To keep the builds few, one scratch copy carries one mutant of every
//! lock at once (round k weakens the k-th ordering of each lock that has
//! one), and each lock's verdict is its own models': a lock's models
//! instantiate that lock alone, and no lock calls another's code, so
//! another lock's mutant cannot catch or hide this one's.

use super::{check, modelled_locks, ModelError, Request, SUITES};
use crate::toolchain::Toolchain;
use std::path::{Path, PathBuf};
use std::time::Duration;

const ORDERINGS: &[&str] = &["Acquire", "Release", "AcqRel", "SeqCst"];

/// An ordering in a lock's source.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Site {
    pub suite: String,
    pub lock: String,
    /// Relative to the workspace root.
    pub file: PathBuf,
    /// 1-based.
    pub line: usize,
    pub column: usize,
    pub ordering: String,
    /// The comment just above the statement (or ending its line), which
    /// may say why the ordering is more than needed.
    pub comment: String,
    offset: usize,
}

#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// A model failed: its name and the first line of its failure.
    Caught { model: String, failure: String },
    /// Every model of the lock passed with the ordering weakened.
    Survived,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Mutant {
    pub site: Site,
    pub verdict: Verdict,
}

impl Mutant {
    pub fn caught(&self) -> bool {
        matches!(self.verdict, Verdict::Caught { .. })
    }

    /// The lock's comment on this ordering says it is stronger than
    /// needed ("more than needed", "not needed"): a survivor so documented
    /// is a known, explained one.
    pub fn documented(&self) -> bool {
        let c = self.site.comment.to_lowercase();
        c.contains("more than needed") || c.contains("not needed")
    }
}

/// `text` with comments and string literals blanked to spaces (lines and
/// columns kept), so that only code is searched.
fn code_only(text: &str) -> String {
    let b = text.as_bytes();
    let mut out = b.to_vec();
    let mut i = 0;
    while i < b.len() {
        if b[i..].starts_with(b"//") {
            while i < b.len() && b[i] != b'\n' {
                out[i] = b' ';
                i += 1;
            }
        } else if b[i..].starts_with(b"/*") {
            while i < b.len() && !b[i..].starts_with(b"*/") {
                if b[i] != b'\n' {
                    out[i] = b' ';
                }
                i += 1;
            }
            for _ in 0..2.min(b.len() - i) {
                out[i] = b' ';
                i += 1;
            }
        } else if b[i] == b'"' {
            out[i] = b' ';
            i += 1;
            while i < b.len() && b[i] != b'"' {
                let n = if b[i] == b'\\' { 2 } else { 1 };
                for _ in 0..n.min(b.len() - i) {
                    if b[i] != b'\n' {
                        out[i] = b' ';
                    }
                    i += 1;
                }
            }
            if i < b.len() {
                out[i] = b' ';
                i += 1;
            }
        } else {
            i += 1;
        }
    }
    String::from_utf8(out).expect("only ASCII bytes were replaced")
}

fn is_ident(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_'
}

/// The orderings to weaken in one file's text: `(offset, ordering)`.
pub fn scan(text: &str) -> Vec<(usize, &'static str)> {
    let code = code_only(text);
    let b = code.as_bytes();
    // The tests module is not part of the lock.
    let end = ["#[cfg(all(test, not(loom)))]", "#[cfg(test)]\nmod tests"]
        .iter()
        .filter_map(|m| code.find(m))
        .min()
        .unwrap_or(b.len());
    let mut found = Vec::new();
    let mut in_use = false;
    let mut i = 0;
    while i < end {
        if !is_ident(b[i]) {
            if b[i] == b';' {
                in_use = false;
            }
            i += 1;
            continue;
        }
        let start = i;
        while i < b.len() && is_ident(b[i]) {
            i += 1;
        }
        let word = &code[start..i];
        if word == "use" && (start == 0 || !is_ident(b[start - 1])) {
            in_use = true;
        }
        let Some(&ordering) = ORDERINGS.iter().find(|&&o| o == word) else {
            continue;
        };
        let before = code[..start].trim_end();
        let before = before
            .strip_suffix("Ordering::")
            .unwrap_or(before)
            .trim_end();
        let after = code[i..].trim_start();
        let argument = (before.ends_with('(') || before.ends_with(','))
            && (after.starts_with(')') || after.starts_with(','));
        if argument && !in_use {
            found.push((start, ordering));
        }
    }
    found
}

/// The comment that explains the statement at `offset`: the `//` lines
/// just above the line the statement starts on, and a comment ending the
/// ordering's own line.
fn comment_at(text: &str, offset: usize) -> String {
    let lines: Vec<&str> = text.lines().collect();
    let mut at = text[..offset].matches('\n').count();
    // The statement may start lines above (a call split over lines).
    while at > 0 {
        let prev = lines[at - 1].trim();
        if prev.starts_with("//") || prev.is_empty() || prev.ends_with(';') || prev.ends_with('{') {
            break;
        }
        at -= 1;
    }
    let mut comment: Vec<&str> = lines[..at]
        .iter()
        .rev()
        .take_while(|l| l.trim_start().starts_with("//"))
        .map(|l| l.trim_start().trim_start_matches('/').trim())
        .collect();
    comment.reverse();
    let own = lines[text[..offset].matches('\n').count()];
    if let Some((_, tail)) = own.split_once("//") {
        comment.push(tail.trim());
    }
    comment.join(" ")
}

/// Every ordering of every modelled lock (but the control) of the tree at
/// `root`.
pub fn sites(root: &Path) -> Result<Vec<Site>, ModelError> {
    let mut out = Vec::new();
    for &suite in SUITES {
        for lock in modelled_locks(root, suite)? {
            if lock == "broken" {
                continue;
            }
            let file = Path::new("suites")
                .join(suite)
                .join("src/locks")
                .join(format!("{lock}.rs"));
            let text = std::fs::read_to_string(root.join(&file))
                .map_err(|e| ModelError::io(root.join(&file), e))?;
            for (offset, ordering) in scan(&text) {
                let line_start = text[..offset].rfind('\n').map_or(0, |n| n + 1);
                out.push(Site {
                    suite: suite.to_string(),
                    lock: lock.clone(),
                    file: file.clone(),
                    line: text[..offset].matches('\n').count() + 1,
                    column: offset - line_start + 1,
                    ordering: ordering.to_string(),
                    comment: comment_at(&text, offset),
                    offset,
                });
            }
        }
    }
    Ok(out)
}

/// The workspace members of the manifest `text` (`members = [...]`).
fn members(text: &str) -> Vec<String> {
    let Some(start) = text.find("members") else {
        return Vec::new();
    };
    let list = &text[start..];
    let list = &list[..list.find(']').unwrap_or(list.len())];
    list.split('"')
        .skip(1)
        .step_by(2)
        .map(str::to_string)
        .collect()
}

fn copy_dir(from: &Path, to: &Path) -> Result<(), ModelError> {
    std::fs::create_dir_all(to).map_err(|e| ModelError::io(to, e))?;
    for entry in std::fs::read_dir(from).map_err(|e| ModelError::io(from, e))? {
        let entry = entry.map_err(|e| ModelError::io(from, e))?;
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if src.is_dir() {
            if entry.file_name() != "target" {
                copy_dir(&src, &dst)?;
            }
        } else {
            std::fs::copy(&src, &dst).map_err(|e| ModelError::io(&src, e))?;
        }
    }
    Ok(())
}

/// A scratch copy of the workspace at `root` (its manifest, lock file and
/// members, without build output), at a new path.
pub fn scratch_copy(root: &Path, name: &str) -> Result<PathBuf, ModelError> {
    let to = std::env::temp_dir().join(format!("lockmatrix-{name}-{}", std::process::id()));
    if to.exists() {
        std::fs::remove_dir_all(&to).map_err(|e| ModelError::io(&to, e))?;
    }
    std::fs::create_dir_all(&to).map_err(|e| ModelError::io(&to, e))?;
    let manifest = root.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).map_err(|e| ModelError::io(&manifest, e))?;
    for file in ["Cargo.toml", "Cargo.lock"] {
        std::fs::copy(root.join(file), to.join(file))
            .map_err(|e| ModelError::io(root.join(file), e))?;
    }
    for member in members(&text) {
        copy_dir(&root.join(&member), &to.join(&member))?;
    }
    Ok(to)
}

/// `site`'s ordering made `Relaxed` in the copy at `scratch`.
fn weaken(scratch: &Path, site: &Site) -> Result<(), ModelError> {
    let path = scratch.join(&site.file);
    let text = std::fs::read_to_string(&path).map_err(|e| ModelError::io(&path, e))?;
    let bad = |why: &str| ModelError::Mutation {
        file: site.file.clone(),
        line: site.line,
        why: why.to_string(),
    };
    if text.get(site.offset..site.offset + site.ordering.len()) != Some(site.ordering.as_str()) {
        return Err(bad("the copy differs from the file scanned"));
    }
    let mutated = format!(
        "{}Relaxed{}",
        &text[..site.offset],
        &text[site.offset + site.ordering.len()..]
    );
    std::fs::write(&path, mutated).map_err(|e| ModelError::io(&path, e))
}

/// Runs the mutation check on the tree at `root`: every site of [`sites`],
/// weakened in turn, with the models of its lock. `progress(done, all)`
/// after each round of builds.
pub fn orderings(
    root: &Path,
    toolchain: &Toolchain,
    timeout: Duration,
    progress: &mut dyn FnMut(usize, usize),
) -> Result<Vec<Mutant>, ModelError> {
    let all = sites(root)?;
    let mut locks: Vec<(String, String)> = Vec::new();
    for s in &all {
        if !locks.contains(&(s.suite.clone(), s.lock.clone())) {
            locks.push((s.suite.clone(), s.lock.clone()));
        }
    }
    let per_lock: Vec<Vec<&Site>> = locks
        .iter()
        .map(|(suite, lock)| {
            all.iter()
                .filter(|s| &s.suite == suite && &s.lock == lock)
                .collect()
        })
        .collect();
    let rounds = per_lock.iter().map(Vec::len).max().unwrap_or(0);
    let mut mutants = Vec::new();
    for round in 0..rounds {
        let this: Vec<&Site> = per_lock
            .iter()
            .filter_map(|s| s.get(round).copied())
            .collect();
        let scratch = scratch_copy(root, &format!("mutant-{round}"))?;
        for site in &this {
            weaken(&scratch, site)?;
        }
        let mut suites: Vec<&str> = this.iter().map(|s| s.suite.as_str()).collect();
        suites.dedup();
        let names: Vec<String> = this.iter().map(|s| s.lock.clone()).collect();
        let checked = check(&Request {
            root: &scratch,
            toolchain,
            suites: &suites,
            features: &[],
            locks: Some(&names),
            use_cache: false,
            timeout,
        });
        let _ = std::fs::remove_dir_all(&scratch);
        let checked = checked?;
        for site in this {
            let failed = checked
                .results
                .iter()
                .find(|r| r.suite == site.suite && r.lock == site.lock && !r.ok);
            let verdict = match failed {
                Some(r) => Verdict::Caught {
                    model: r.model.clone(),
                    failure: r
                        .failure
                        .as_deref()
                        .unwrap_or_default()
                        .lines()
                        .next()
                        .unwrap_or_default()
                        .to_string(),
                },
                None => Verdict::Survived,
            };
            mutants.push(Mutant {
                site: site.clone(),
                verdict,
            });
        }
        progress(round + 1, rounds);
    }
    Ok(mutants)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LOCK: &str = r#"//! Acquire in a doc comment.
use crate::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};

fn lock(&self) {
    // Acquire: pairs with the Release in unlock().
    while self.word.swap(1, Acquire) != 0 {}
    let s = "Release, in a string";
    self.word
        .compare_exchange(0, 1, AcqRel, Relaxed)
        .ok();
    match order {
        Ordering::Release => {}
        _ => {}
    }
    // Acquire is more than needed: the RMW below orders it.
    self.other.load(Ordering::SeqCst); /* SeqCst */
}

#[cfg(all(test, not(loom)))]
mod tests {
    fn t() { w.load(Acquire); }
}
"#;

    #[test]
    fn finds_orderings_in_argument_position_only() {
        let found: Vec<(usize, &str)> = scan(LOCK)
            .into_iter()
            .map(|(at, o)| (LOCK[..at].matches('\n').count() + 1, o))
            .collect();
        assert_eq!(found, [(6, "Acquire"), (9, "AcqRel"), (16, "SeqCst")]);
    }

    #[test]
    fn reads_the_comment_of_a_statement() {
        let at = |line: usize| {
            let (offset, _) = scan(LOCK)
                .into_iter()
                .find(|&(o, _)| LOCK[..o].matches('\n').count() + 1 == line)
                .unwrap();
            comment_at(LOCK, offset)
        };
        assert_eq!(at(6), "Acquire: pairs with the Release in unlock().");
        // A call split over lines: the comment above its first line.
        assert_eq!(at(9), "");
        assert_eq!(
            at(16),
            "Acquire is more than needed: the RMW below orders it."
        );
    }

    #[test]
    fn a_survivor_is_documented_by_its_comment() {
        let site = |comment: &str| Site {
            suite: "rwsem".into(),
            lock: "linux_rwsem".into(),
            file: "x.rs".into(),
            line: 1,
            column: 1,
            ordering: "AcqRel".into(),
            comment: comment.into(),
            offset: 0,
        };
        let m = |comment: &str| Mutant {
            site: site(comment),
            verdict: Verdict::Survived,
        };
        assert!(m("AcqRel is more than needed: we entered no critical section").documented());
        assert!(m("Release: not needed, the lock stays read-held").documented());
        assert!(!m("Release: pairs with the Acquire in read_lock()").documented());
    }

    #[test]
    fn the_manifest_names_the_members() {
        let toml = "[workspace]\nresolver = \"2\"\nmembers = [\n    \"xtask\",\n    \"suites/harness\",\n]\n";
        assert_eq!(members(toml), ["xtask", "suites/harness"]);
    }
}
