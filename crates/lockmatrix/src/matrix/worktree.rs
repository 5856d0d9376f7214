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
    // One directory per repository: two clones on a machine (CI jobs, a
    // test's scratch repositories) each register their own worktrees.
    let common = xshell::cmd!(sh, "git rev-parse --path-format=absolute --git-common-dir")
        .quiet()
        .read()?;
    let all = crate::cache::dir()?.join("worktrees");
    let mine = all.join(repository_key(Path::new(&common)));
    let path = mine.join(&commit);
    prune_orphans(&all);
    if !reusable(&sh, &path, &commit) {
        let _ = std::fs::remove_dir_all(&path);
        xshell::cmd!(sh, "git worktree prune").quiet().run()?;
        xshell::cmd!(sh, "git worktree add --detach {path} {commit}")
            .quiet()
            .ignore_stderr()
            .run()?;
    }
    let _ = std::fs::File::open(&path).and_then(|d| d.set_modified(SystemTime::now()));
    let removed = stale(&mine, KEEP);
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

/// The name of a repository's directory of worktrees: a hash of where
/// its git directory is.
fn repository_key(git_dir: &Path) -> String {
    use sha2::Digest;
    let real = std::fs::canonicalize(git_dir).unwrap_or_else(|_| git_dir.to_path_buf());
    let digest = sha2::Sha256::digest(real.as_os_str().as_encoded_bytes());
    digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
}

/// Removes the worktrees whose repository is gone (their `.git` file
/// points to a directory that no longer exists: a deleted clone's), and
/// repositories' directories left empty. (Worktrees directly under `all`
/// are the layout before one directory per repository.)
fn prune_orphans(all: &Path) {
    let dirs = |d: &Path| -> Vec<PathBuf> {
        std::fs::read_dir(d)
            .into_iter()
            .flatten()
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir() && !p.is_symlink())
            .collect()
    };
    let orphan = |tree: &Path| {
        let gitdir = std::fs::read_to_string(tree.join(".git"))
            .ok()
            .and_then(|t| t.strip_prefix("gitdir: ").map(|g| PathBuf::from(g.trim())));
        !gitdir.is_some_and(|g| g.is_dir())
    };
    for repo in dirs(all) {
        let trees = match repo.join(".git").exists() {
            true => vec![repo.clone()],
            false => dirs(&repo),
        };
        for tree in trees.iter().filter(|t| orphan(t)) {
            let _ = std::fs::remove_dir_all(tree);
        }
        let _ = std::fs::remove_dir(&repo);
    }
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

    fn git(dir: &Path, args: &[&str]) -> String {
        let out = std::process::Command::new("git")
            .args(["-c", "user.name=t", "-c", "user.email=t@t"])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// A repository with one commit in `dir`, and that commit.
    fn repo(dir: &Path) -> String {
        std::fs::create_dir_all(dir).unwrap();
        git(dir, &["init", "-q"]);
        std::fs::write(dir.join("Cargo.toml"), "[workspace]\n").unwrap();
        git(dir, &["add", "-A"]);
        git(dir, &["commit", "-qm", "one"]);
        git(dir, &["rev-parse", "HEAD"])
    }

    /// Only this repository's clean worktree of the commit is reused; one
    /// a deleted clone registered (what a stale cache holds) is pruned.
    #[test]
    fn a_worktree_is_reused_only_when_registered_here_clean_at_its_commit() {
        let dir = std::env::temp_dir().join(format!("lockmatrix-reuse-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (a, b, all) = (dir.join("a"), dir.join("b"), dir.join("worktrees"));
        let commit = repo(&a);
        git(
            &dir,
            &["clone", "-q", a.to_str().unwrap(), b.to_str().unwrap()],
        );
        let in_a = all.join("ka").join(&commit);
        let in_b = all.join("kb").join(&commit);
        git(
            &a,
            &[
                "worktree",
                "add",
                "-q",
                "--detach",
                in_a.to_str().unwrap(),
                &commit,
            ],
        );
        git(
            &b,
            &[
                "worktree",
                "add",
                "-q",
                "--detach",
                in_b.to_str().unwrap(),
                &commit,
            ],
        );
        let sh_a = xshell::Shell::new().unwrap();
        sh_a.change_dir(&a);
        assert!(reusable(&sh_a, &in_a, &commit));
        // Another repository's worktree of the same commit is not this one's.
        assert!(!reusable(&sh_a, &in_b, &commit));
        assert!(!reusable(&sh_a, &in_a, &"0".repeat(40)));
        std::fs::write(in_a.join("Cargo.toml"), "changed").unwrap();
        assert!(!reusable(&sh_a, &in_a, &commit), "a dirty worktree");
        // b's clone deleted: its worktree is an orphan, pruned; a's stays.
        std::fs::remove_dir_all(&b).unwrap();
        prune_orphans(&all);
        assert!(in_a.is_dir());
        assert!(!in_b.exists() && !all.join("kb").exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }

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
