//! The base revision of `--against`, checked out as a git worktree under
//! the cache and reused across runs; only the newest few are kept.

use anyhow::{bail, Result};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

/// Base revisions whose worktrees stay checked out in the cache.
const KEEP: usize = 3;

/// A checked-out base revision.
pub struct Worktree {
    pub path: PathBuf,
    /// The commit the revision named.
    pub commit: String,
    /// Older worktrees removed to keep [`KEEP`].
    pub removed: Vec<PathBuf>,
}

/// Checks out `rev` of the repository at `root` (an error naming it when
/// it is not a revision there), marks it the newest, and removes the
/// worktrees beyond the newest [`KEEP`].
pub fn check_out(root: &Path, rev: &str) -> Result<Worktree> {
    let sh = xshell::Shell::new()?;
    sh.change_dir(root);
    let spec = format!("{rev}^{{commit}}");
    let commit = match xshell::cmd!(sh, "git rev-parse --verify --quiet {spec}")
        .quiet()
        .ignore_stderr()
        .read()
    {
        Ok(sha) => sha,
        Err(_) => {
            let shallow = xshell::cmd!(sh, "git rev-parse --is-shallow-repository")
                .quiet()
                .ignore_stderr()
                .read()
                .is_ok_and(|s| s == "true");
            if shallow {
                bail!(
                    "--against {rev}: not in this clone's history, which is shallow: fetch it with `git fetch --unshallow` (or `git fetch --deepen=<commits>`)"
                );
            }
            bail!("--against {rev}: not a revision of this repository")
        }
    };
    let all = crate::cache::dir()?.join("worktrees");
    let path = all.join(&commit);
    if !reusable(&sh, &path, &commit) {
        let _ = std::fs::remove_dir_all(&path);
        xshell::cmd!(sh, "git worktree prune").quiet().run()?;
        xshell::cmd!(sh, "git worktree add --detach {path} {commit}")
            .quiet()
            .ignore_stderr()
            .run()?;
    }
    let _ = std::fs::File::open(&path).and_then(|d| d.set_modified(SystemTime::now()));
    let removed = stale(&all, KEEP);
    for old in &removed {
        let _ = std::fs::remove_dir_all(old);
    }
    xshell::cmd!(sh, "git worktree prune").quiet().run()?;
    Ok(Worktree {
        path,
        commit,
        removed,
    })
}

/// Whether the directory at `path` is this repository's worktree of
/// `commit`, untouched: registered with `git worktree` here, its HEAD
/// `commit`, its status clean. A directory a deleted clone registered
/// (its `.git` points nowhere) or another repository's is not: git would
/// not even say which commit it holds.
fn reusable(sh: &xshell::Shell, path: &Path, commit: &str) -> bool {
    let Ok(list) = xshell::cmd!(sh, "git worktree list --porcelain")
        .quiet()
        .ignore_stderr()
        .read()
    else {
        return false;
    };
    let entry = format!("worktree {}", path.display());
    let registered = list.split("\n\n").any(|w| {
        w.lines().next() == Some(entry.as_str()) && w.lines().any(|l| l == format!("HEAD {commit}"))
    });
    let in_tree = |args: &[&str]| {
        std::process::Command::new("git")
            .args(args)
            .current_dir(path)
            .output()
            .ok()
            .filter(|o| o.status.success())
            .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    registered
        && in_tree(&["rev-parse", "HEAD"]).as_deref() == Some(commit)
        && in_tree(&["status", "--porcelain"]).is_some_and(|s| s.is_empty())
}

/// The worktrees under `dir` beyond the `keep` most recently used.
fn stale(dir: &Path, keep: usize) -> Vec<PathBuf> {
    let mut trees: Vec<(SystemTime, PathBuf)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .collect();
    trees.sort_by_key(|t| std::cmp::Reverse(t.0));
    trees.into_iter().skip(keep).map(|(_, p)| p).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_the_most_recently_used_worktrees_are_kept() {
        let dir = std::env::temp_dir().join(format!("lockmatrix-worktrees-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for (i, name) in ["a", "b", "c", "d", "e"].iter().enumerate() {
            let p = dir.join(name);
            std::fs::create_dir_all(&p).unwrap();
            let t = SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000 + i as u64);
            std::fs::File::open(&p).unwrap().set_modified(t).unwrap();
        }
        let mut old = stale(&dir, 3);
        old.sort();
        assert_eq!(old, [dir.join("a"), dir.join("b")]);
        assert!(stale(&dir, 10).is_empty());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
