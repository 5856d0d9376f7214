//! The base revision of `--against` (and a baseline's commit counted
//! again), checked out as a git worktree under the cache and reused across
//! runs; only the newest few are kept.
//!
//! The cache is not believed: a directory there is reused only if git has
//! it registered as a worktree of this repository, at the expected commit,
//! with a clean status. Anything else under that name (a plain directory
//! someone planted, a worktree moved to another commit or edited) is
//! removed and checked out again, so its `build.rs` never runs.

use crate::cache::CacheError;
use crate::commit::CommitId;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::SystemTime;

/// Base revisions whose worktrees stay checked out in the cache.
const KEEP: usize = 3;

/// Why a revision could not be checked out: `--against` names none here
/// (bad input), or git or the cache failed.
#[derive(Debug, thiserror::Error)]
pub enum WorktreeError {
    #[error("running git")]
    Spawn(#[source] std::io::Error),
    /// `rev` is cut short, what is not printable ASCII escaped.
    #[error("--against {rev}: not in this clone's history, which is shallow: fetch it with `git fetch --unshallow` (or `git fetch --deepen=<commits>`)")]
    Shallow { rev: String },
    #[error("--against {rev}: not a revision of this repository")]
    NotARevision { rev: String },
    #[error(transparent)]
    Git(#[from] GitFailed),
    #[error(transparent)]
    Cache(#[from] CacheError),
    /// What was in the worktree's place could not be removed.
    #[error("removing {} ({why})", path.display())]
    Remove {
        path: PathBuf,
        why: NotReusable,
        #[source]
        error: std::io::Error,
    },
    #[error("checking out {commit} as {}", path.display())]
    CheckOut {
        commit: CommitId,
        path: PathBuf,
        #[source]
        error: GitFailed,
    },
    /// A fresh checkout git does not vouch for.
    #[error("{}: just checked out, yet {why}", path.display())]
    NotReusable { path: PathBuf, why: NotReusable },
}

/// A checked-out base revision.
pub struct Worktree {
    pub path: PathBuf,
    /// The commit checked out; for a `--crate` base (a tree, not a
    /// worktree) this checkout's, `None` outside git.
    pub commit: Option<CommitId>,
    /// Older worktrees removed to keep [`KEEP`].
    pub removed: Vec<PathBuf>,
}

/// The commit `rev` (`--against REV`: a branch, `HEAD~1`, a sha) names in
/// the repository at `root`, or an error naming it.
pub fn resolve(root: &Path, rev: &str) -> Result<CommitId, WorktreeError> {
    let out = git(
        root,
        &["rev-parse", "--verify", "--quiet", "--end-of-options"],
    )
    .arg(format!("{rev}^{{commit}}"))
    .output()
    .map_err(WorktreeError::Spawn)?;
    let found = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if out.status.success() {
        if let Ok(c) = CommitId::parse(&found) {
            return Ok(c);
        }
    }
    let shallow = git(root, &["rev-parse", "--is-shallow-repository"])
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "true");
    let rev = crate::name::shown(rev);
    if shallow {
        return Err(WorktreeError::Shallow { rev });
    }
    Err(WorktreeError::NotARevision { rev })
}

/// Checks out `commit` of the repository at `root` (reusing its worktree
/// only where [`reusable`]), marks it the newest, and removes the
/// worktrees beyond the newest [`KEEP`].
pub fn check_out(root: &Path, commit: &CommitId) -> Result<Worktree, WorktreeError> {
    // One directory per repository: two clones on a machine (CI jobs, a
    // test's scratch repositories) each register their own worktrees.
    let common = read(git(
        root,
        &["rev-parse", "--path-format=absolute", "--git-common-dir"],
    ))?;
    let all = crate::cache::check()?.join("worktrees");
    let mine = all.join(repository_key(Path::new(common.trim())));
    let path = mine.join(commit.as_str());
    prune_orphans(&all);
    if let Err(why) = reusable(root, &path, commit) {
        if path.symlink_metadata().is_ok() {
            remove(&path).map_err(|error| WorktreeError::Remove {
                path: path.clone(),
                why,
                error,
            })?;
        }
        run(git(root, &["worktree", "prune"]))?;
        let mut add = git(root, &["worktree", "add", "--detach", "--end-of-options"]);
        add.arg(&path).arg(commit);
        run(add).map_err(|error| WorktreeError::CheckOut {
            commit: commit.clone(),
            path: path.clone(),
            error,
        })?;
        reusable(root, &path, commit).map_err(|why| WorktreeError::NotReusable {
            path: path.clone(),
            why,
        })?;
    }
    let _ = std::fs::File::open(&path).and_then(|d| d.set_modified(SystemTime::now()));
    let removed = stale(&mine, KEEP);
    for old in &removed {
        let _ = remove(old);
    }
    run(git(root, &["worktree", "prune"]))?;
    Ok(Worktree {
        path,
        commit: Some(commit.clone()),
        removed,
    })
}

/// `--against REV`: [`resolve`] then [`check_out`].
pub fn against(root: &Path, rev: &str) -> Result<Worktree, WorktreeError> {
    check_out(root, &resolve(root, rev)?)
}

/// Whether `path` is this repository's worktree of `commit`, untouched:
/// registered with git (`git worktree list`), its own top level and
/// repository, at `commit`, with nothing modified or added. `Err` says why
/// not.
fn reusable(root: &Path, path: &Path, commit: &CommitId) -> Result<(), NotReusable> {
    let meta = path.symlink_metadata().map_err(|_| NotReusable::Absent)?;
    if !meta.is_dir() {
        return Err(NotReusable::NotADirectory(crate::file::kind_of(
            meta.file_type(),
        )));
    }
    let real = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
    let listed = read(git(root, &["worktree", "list", "--porcelain", "-z"]))?;
    let registered = listed.split("\0\0").any(|record| {
        let mut fields = record.split('\0');
        let at = fields.next().and_then(|f| f.strip_prefix("worktree "));
        at.is_some_and(|p| real(Path::new(p)) == real(path))
            && fields.any(|f| f == format!("HEAD {commit}"))
    });
    if !registered {
        return Err(NotReusable::NotRegistered(commit.short().to_string()));
    }
    let facts = read(git(
        path,
        &[
            "rev-parse",
            "--show-toplevel",
            "--git-common-dir",
            "--verify",
            "HEAD",
        ],
    ))?;
    let common = read(git(root, &["rev-parse", "--git-common-dir"]))?;
    let facts: Vec<&str> = facts.lines().collect();
    let ours = |p: &str, base: &Path| real(&base.join(p));
    match facts.as_slice() {
        [top, dir, head]
            if ours(top, path) == real(path)
                && ours(dir, path) == ours(common.trim(), root)
                && *head == commit.as_str() => {}
        _ => return Err(NotReusable::NotOurs),
    }
    let status = read(git(
        path,
        &[
            "status",
            "--porcelain",
            "--untracked-files=all",
            "--ignored=no",
        ],
    ))?;
    if !status.trim().is_empty() {
        return Err(NotReusable::Changed);
    }
    Ok(())
}

/// Why a directory in the cache is not taken as a worktree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum NotReusable {
    Absent,
    NotADirectory(&'static str),
    NotRegistered(String),
    NotOurs,
    Changed,
    Git(GitFailed),
}

impl From<GitFailed> for NotReusable {
    fn from(e: GitFailed) -> NotReusable {
        NotReusable::Git(e)
    }
}

impl std::fmt::Display for NotReusable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NotReusable::Absent => f.write_str("it is not there"),
            NotReusable::NotADirectory(kind) => write!(f, "it is {kind}"),
            NotReusable::NotRegistered(short) => write!(f, "git has no worktree of {short} there"),
            NotReusable::NotOurs => {
                f.write_str("it is not this repository's checkout of that commit")
            }
            NotReusable::Changed => f.write_str("its files were changed or added to"),
            NotReusable::Git(e) => e.fmt(f),
        }
    }
}

/// A git command that could not run or failed: git's words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitFailed(String);

impl std::fmt::Display for GitFailed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for GitFailed {}

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

/// `git -C dir ARGS`.
fn git(dir: &Path, args: &[&str]) -> Command {
    let mut c = Command::new("git");
    c.arg("-C").arg(dir).args(args);
    c
}

/// stdout of a git command that succeeded, or git's words.
fn read(mut cmd: Command) -> Result<String, GitFailed> {
    let out = cmd
        .output()
        .map_err(|e| GitFailed(format!("cannot run git: {e}")))?;
    if !out.status.success() {
        return Err(GitFailed(
            String::from_utf8_lossy(&out.stderr).trim().to_string(),
        ));
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

fn run(cmd: Command) -> Result<(), GitFailed> {
    read(cmd).map(drop)
}

/// Removes a directory tree, or a link or file in its place (never what
/// a link points to).
fn remove(path: &Path) -> std::io::Result<()> {
    match path.symlink_metadata()?.is_dir() {
        true => std::fs::remove_dir_all(path),
        false => std::fs::remove_file(path),
    }
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

    fn sh(dir: &Path, args: &[&str]) -> String {
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
        sh(dir, &["init", "-q"]);
        std::fs::write(dir.join("Cargo.toml"), "[workspace]\n").unwrap();
        sh(dir, &["add", "-A"]);
        sh(dir, &["commit", "-qm", "one"]);
        sh(dir, &["rev-parse", "HEAD"])
    }

    /// Only this repository's clean worktree of the commit is reused; one
    /// a deleted clone registered (what a stale cache holds) is pruned.
    #[test]
    fn a_worktree_is_reused_only_when_registered_here_clean_at_its_commit() {
        let dir = std::env::temp_dir().join(format!("lockmatrix-reuse-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (a, b, all) = (dir.join("a"), dir.join("b"), dir.join("worktrees"));
        let commit = repo(&a);
        sh(
            &dir,
            &["clone", "-q", a.to_str().unwrap(), b.to_str().unwrap()],
        );
        let in_a = all.join("ka").join(&commit);
        let in_b = all.join("kb").join(&commit);
        sh(
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
        sh(
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
        let id = CommitId::parse(&commit).unwrap();
        assert_eq!(reusable(&a, &in_a, &id), Ok(()));
        // Another repository's worktree of the same commit is not this one's.
        assert!(reusable(&a, &in_b, &id).is_err());
        let other = CommitId::parse(&"0".repeat(40)).unwrap();
        assert!(reusable(&a, &in_a, &other).is_err());
        std::fs::write(in_a.join("Cargo.toml"), "changed").unwrap();
        assert!(reusable(&a, &in_a, &id).is_err(), "a dirty worktree");
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
