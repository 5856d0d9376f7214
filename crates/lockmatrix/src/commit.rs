//! Commit ids read from files: a baseline's `commit`, a run's
//! `host.lockmatrix_commit` and `against.commit`.
//!
//! Baselines and runs may come from a stranger's CI artifact, and these
//! values reach `git` (the trailer range, the recount's checkout). A
//! [`CommitId`] can only be made by [`CommitId::parse`]: 40 or 64 hex
//! digits (SHA-1 or SHA-256 object names), nothing else, so no value read
//! from a file is ever an option (`--output=...`), a range or a revision
//! expression; and every git command that takes one still puts it after
//! `--end-of-options`. Which commit may choose code to build is a second
//! question, [`ancestry`]: only ancestors of HEAD.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::path::Path;
use std::process::Command;

/// A full commit id: 40 (SHA-1) or 64 (SHA-256) lower-case hex digits.
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(into = "String")]
pub struct CommitId(String);

/// Why a string is not a [`CommitId`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadCommit {
    /// The string, shortened and escaped: safe to print.
    pub shown: String,
}

impl fmt::Display for BadCommit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "commit `{}`: not a commit id; expected 40 or 64 hex digits",
            self.shown
        )
    }
}

impl std::error::Error for BadCommit {}

impl CommitId {
    /// Upper-case digits are taken and written lower-case, as git does.
    pub fn parse(s: &str) -> Result<CommitId, BadCommit> {
        if (s.len() == 40 || s.len() == 64) && s.bytes().all(|b| b.is_ascii_hexdigit()) {
            Ok(CommitId(s.to_ascii_lowercase()))
        } else {
            Err(BadCommit {
                shown: crate::name::shown(s),
            })
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The first 12 digits, as reports show a commit.
    pub fn short(&self) -> &str {
        &self.0[..12]
    }
}

impl fmt::Display for CommitId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for CommitId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:?}", self.0)
    }
}

impl From<CommitId> for String {
    fn from(c: CommitId) -> String {
        c.0
    }
}

impl AsRef<std::ffi::OsStr> for CommitId {
    fn as_ref(&self) -> &std::ffi::OsStr {
        self.0.as_ref()
    }
}

/// Checked as it is read: the error carries its place (line and column).
impl<'de> Deserialize<'de> for CommitId {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<CommitId, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = CommitId;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a commit id (40 or 64 hex digits)")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<CommitId, E> {
                CommitId::parse(s).map_err(E::custom)
            }
        }
        d.deserialize_str(V)
    }
}

/// What a run records where it was not made in a git checkout.
pub const UNKNOWN: &str = "unknown";

/// A commit a run records (`host.lockmatrix_commit`, `against.commit`): a
/// [`CommitId`], or `"unknown"` where there was none; anything else is
/// refused as it is read. Use with `#[serde(with = "crate::commit::or_unknown")]`.
pub mod or_unknown {
    use super::{CommitId, UNKNOWN};
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(c: &Option<CommitId>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(c.as_ref().map_or(UNKNOWN, CommitId::as_str))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Option<CommitId>, D::Error> {
        let text = std::borrow::Cow::<str>::deserialize(d)?;
        if text == UNKNOWN {
            return Ok(None);
        }
        CommitId::parse(&text)
            .map(Some)
            .map_err(serde::de::Error::custom)
    }
}

/// A recorded commit as reports show it: 12 digits, or `unknown`.
pub fn shown(c: Option<&CommitId>) -> &str {
    c.map_or(UNKNOWN, CommitId::short)
}

/// Whether a commit is in the history of another, as git answers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ancestry {
    /// It is (or is the same commit).
    Ancestor,
    /// Both are in the repository, and it is not.
    NotAncestor,
    /// git could not tell: a commit this clone lacks (a shallow clone, an
    /// artifact from another fork), or no repository; git's words.
    Unknown(String),
}

/// Whether `commit` is an ancestor of `of` (`HEAD`, or a commit) in the
/// repository at `root`: `git merge-base --is-ancestor`.
pub fn ancestry(root: &Path, commit: &CommitId, of: &str) -> Ancestry {
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args(["merge-base", "--is-ancestor", "--end-of-options"])
        .arg(commit)
        .arg(of)
        .output();
    match out {
        Ok(o) if o.status.code() == Some(0) => Ancestry::Ancestor,
        Ok(o) if o.status.code() == Some(1) => Ancestry::NotAncestor,
        Ok(o) => Ancestry::Unknown(String::from_utf8_lossy(&o.stderr).trim().to_string()),
        Err(e) => Ancestry::Unknown(format!("cannot run git: {e}")),
    }
}

/// For tests: a commit id made from `tag` (the first 40 digits of its
/// SHA-256), so that two tags are two commits.
#[cfg(test)]
pub(crate) fn test_id(tag: &str) -> CommitId {
    CommitId::parse(&crate::file::sha256(tag.as_bytes())[..40]).expect("hex")
}

#[cfg(test)]
mod tests {
    use super::*;

    const SHA1: &str = "0123456789abcdef0123456789abcdef01234567";

    #[test]
    fn only_full_hex_ids_are_commits() {
        assert_eq!(CommitId::parse(SHA1).unwrap().as_str(), SHA1);
        let sha256 = "ab".repeat(32);
        assert_eq!(CommitId::parse(&sha256).unwrap().as_str(), sha256);
        assert_eq!(
            CommitId::parse(&SHA1.to_uppercase()).unwrap().as_str(),
            SHA1
        );
        assert_eq!(CommitId::parse(SHA1).unwrap().short(), "0123456789ab");
        for bad in [
            "",
            "HEAD",
            "abc123",
            "--output=/tmp/x/pwned",
            "0123456789abcdef0123456789abcdef0123456g",
            "0123456789abcdef0123456789abcdef012345678",
            "HEAD~1..HEAD",
        ] {
            let e = CommitId::parse(bad).unwrap_err();
            assert!(
                e.to_string().contains("expected 40 or 64 hex digits"),
                "{e}"
            );
        }
    }

    #[test]
    fn a_huge_value_is_shown_short_and_escaped() {
        let e = CommitId::parse(&format!("\u{1b}[2J{}", "a".repeat(10 << 20))).unwrap_err();
        let text = e.to_string();
        assert!(text.len() < 200, "{} bytes", text.len());
        assert!(!text.contains('\u{1b}'), "{text}");
    }

    #[test]
    fn a_recorded_commit_is_an_id_or_unknown() {
        #[derive(Deserialize, Serialize)]
        struct H {
            #[serde(with = "or_unknown")]
            c: Option<CommitId>,
        }
        let h: H = serde_json::from_str(&format!("{{\"c\":\"{SHA1}\"}}")).unwrap();
        assert_eq!(h.c.as_ref().map(CommitId::as_str), Some(SHA1));
        let h: H = serde_json::from_str("{\"c\":\"unknown\"}").unwrap();
        assert!(h.c.is_none());
        assert_eq!(serde_json::to_string(&h).unwrap(), "{\"c\":\"unknown\"}");
        let e = serde_json::from_str::<H>("{\"c\":\"--output=/tmp/x\"}")
            .err()
            .unwrap();
        assert!(e.to_string().contains("not a commit id"), "{e}");
    }

    /// A real repository: its first commit is an ancestor of HEAD, a side
    /// commit is not, and a commit it lacks is unknown.
    #[test]
    fn ancestry_is_git_merge_base() {
        let dir = std::env::temp_dir().join(format!("lm-ancestry-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let git = |args: &[&str]| {
            let out = Command::new("git")
                .arg("-C")
                .arg(&dir)
                .args(["-c", "user.name=t", "-c", "user.email=t@t"])
                .args(args)
                .output()
                .unwrap();
            assert!(out.status.success(), "{out:?}");
            String::from_utf8(out.stdout).unwrap().trim().to_string()
        };
        git(&["init", "-q", "-b", "main"]);
        git(&["commit", "-q", "--allow-empty", "-m", "first"]);
        let first = CommitId::parse(&git(&["rev-parse", "HEAD"])).unwrap();
        git(&["checkout", "-q", "-b", "side"]);
        git(&["commit", "-q", "--allow-empty", "-m", "side"]);
        let side = CommitId::parse(&git(&["rev-parse", "HEAD"])).unwrap();
        git(&["checkout", "-q", "main"]);
        git(&["commit", "-q", "--allow-empty", "-m", "second"]);
        assert_eq!(ancestry(&dir, &first, "HEAD"), Ancestry::Ancestor);
        assert_eq!(ancestry(&dir, &side, "HEAD"), Ancestry::NotAncestor);
        let absent = CommitId::parse(SHA1).unwrap();
        assert!(matches!(
            ancestry(&dir, &absent, "HEAD"),
            Ancestry::Unknown(_)
        ));
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
