//! `Lockmatrix-Ordering:` trailers: how a commit says that it changes a
//! lock's memory ordering on purpose. The ordering gate fails on every
//! change of an operation's ordering footprint unless a commit in the
//! compared range (the base revision, or the baselines' commit, up to the
//! head) carries one naming that lock:
//!
//! ```text
//! Lockmatrix-Ordering: ticket weaker on purpose, model-checked
//! ```
//!
//! The first word names the lock or atomic primitive (`*`: every one), the
//! rest says why; the report shows it beside the change it covers.

use crate::commit::CommitId;
use crate::name::Name;
use serde::{Deserialize, Serialize};
use std::path::Path;
use std::process::Command;

/// The trailer's key, as `git interpret-trailers` writes it.
pub const TRAILER: &str = "Lockmatrix-Ordering";

/// One trailer found in the compared range.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Acknowledgement {
    /// The commit that carries it.
    pub commit: String,
    /// The lock or primitive it covers; `None` for `*` (every one).
    pub unit: Option<Name>,
    /// Its words after the name.
    pub reason: String,
    /// The trailer as written, when its first word is not a name (it
    /// then covers nothing, and the report says so).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_understood: Option<String>,
}

impl Acknowledgement {
    /// Reads one trailer value of `commit`.
    pub fn parse(commit: &str, value: &str) -> Acknowledgement {
        let value = value.trim();
        let (first, rest) = value.split_once(char::is_whitespace).unwrap_or((value, ""));
        let first = first.trim_end_matches([':', ',']);
        let reason = rest.trim().to_string();
        let mut ack = Acknowledgement {
            commit: commit.to_string(),
            unit: None,
            reason,
            not_understood: None,
        };
        if first != "*" {
            match Name::parse(first) {
                Ok(n) => ack.unit = Some(n),
                Err(_) => ack.not_understood = Some(value.to_string()),
            }
        }
        ack
    }

    /// Whether it covers a change of `unit`'s ordering.
    pub fn covers(&self, unit: &str) -> bool {
        self.not_understood.is_none() && self.unit.as_ref().is_none_or(|u| u.as_str() == unit)
    }

    /// `ticket (a1b2c3d4e5f6): weaker on purpose, model-checked`.
    pub fn describe(&self) -> String {
        let short = crate::escape::prefix(&self.commit, 12);
        match (&self.not_understood, &self.unit) {
            (Some(raw), _) => format!("{short}: `{raw}` names no lock: covers nothing"),
            (None, Some(u)) => format!("{u} ({short}): {}", self.reason),
            (None, None) => format!("every lock ({short}): {}", self.reason),
        }
    }
}

/// The first acknowledgement among `acks` that covers `unit`.
pub fn covering<'a>(acks: &'a [Acknowledgement], unit: &str) -> Option<&'a Acknowledgement> {
    acks.iter().find(|a| a.covers(unit))
}

/// Why the trailers of a range could not be read.
#[derive(Debug)]
pub enum TrailerError {
    Git { range: String, stderr: String },
    Spawn(std::io::Error),
}

impl std::fmt::Display for TrailerError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TrailerError::Git { range, stderr } => {
                write!(f, "git log {range} failed: {}", stderr.trim())
            }
            TrailerError::Spawn(e) => write!(f, "cannot run git: {e}"),
        }
    }
}

impl std::error::Error for TrailerError {}

/// Every `Lockmatrix-Ordering:` trailer on the commits reachable from `to`
/// (`HEAD`, or a commit id) and not from `from`, in `git log` order (newest
/// first), read in the repository at `root`. The range comes after
/// `--end-of-options`: whatever it holds, git reads it as a revision.
pub fn in_range(
    root: &Path,
    from: &CommitId,
    to: &str,
) -> Result<Vec<Acknowledgement>, TrailerError> {
    let range = format!("{from}..{to}");
    let format = format!("--format=%H%x00%(trailers:key={TRAILER},valueonly,separator=%x00)%x01");
    let out = Command::new("git")
        .arg("-C")
        .arg(root)
        .args([
            "log",
            "--no-color",
            &format,
            "--end-of-options",
            &range,
            "--",
        ])
        .output()
        .map_err(TrailerError::Spawn)?;
    if !out.status.success() {
        return Err(TrailerError::Git {
            range,
            stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
        });
    }
    Ok(parse_log(&String::from_utf8_lossy(&out.stdout)))
}

/// `git log`'s records: `<sha>\0<value>\0<value>...\x01`.
fn parse_log(text: &str) -> Vec<Acknowledgement> {
    let mut acks = Vec::new();
    for record in text.split('\x01') {
        let mut fields = record.trim_start_matches('\n').split('\0');
        let Some(commit) = fields.next().filter(|c| !c.is_empty()) else {
            continue;
        };
        for value in fields.map(str::trim).filter(|v| !v.is_empty()) {
            acks.push(Acknowledgement::parse(commit, value));
        }
    }
    acks
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_trailer_names_its_lock_then_says_why() {
        let a = Acknowledgement::parse("abc", "ticket weaker on purpose, model-checked");
        assert_eq!(a.unit.as_deref(), Some("ticket"));
        assert_eq!(a.reason, "weaker on purpose, model-checked");
        assert!(a.covers("ticket"));
        assert!(!a.covers("mcs"));
        let colon = Acknowledgement::parse("abc", "mcs: hand-over made Release");
        assert_eq!(colon.unit.as_deref(), Some("mcs"));
        let all = Acknowledgement::parse("abc", "* new compiler");
        assert!(all.covers("ticket") && all.covers("cas_sync"));
        let junk = Acknowledgement::parse("abc", "<b>ticket</b> hi");
        assert!(!junk.covers("ticket"));
        assert!(junk.describe().contains("names no lock"));
    }

    #[test]
    fn git_log_records_split_into_one_acknowledgement_per_trailer() {
        let log = "aaa\0ticket weaker\0mcs too\x01\nbbb\0\x01\nccc\0* all\x01\n";
        let acks = parse_log(log);
        let got: Vec<(&str, Option<&str>)> = acks
            .iter()
            .map(|a| (a.commit.as_str(), a.unit.as_deref()))
            .collect();
        assert_eq!(
            got,
            [("aaa", Some("ticket")), ("aaa", Some("mcs")), ("ccc", None)]
        );
    }

    /// A real repository: the trailer of a commit in the range is found,
    /// one outside it is not.
    #[test]
    fn trailers_are_read_from_the_range_only() {
        let dir = std::env::temp_dir().join(format!("lm-trailers-{}", std::process::id()));
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
            assert!(
                out.status.success(),
                "{}",
                String::from_utf8_lossy(&out.stderr)
            );
            String::from_utf8(out.stdout).unwrap().trim().to_string()
        };
        git(&["init", "-q"]);
        git(&[
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "old\n\nLockmatrix-Ordering: mcs old",
        ]);
        let base = CommitId::parse(&git(&["rev-parse", "HEAD"])).unwrap();
        git(&["commit", "-q", "--allow-empty", "-m", "plain"]);
        git(&[
            "commit",
            "-q",
            "--allow-empty",
            "-m",
            "weaken\n\nbody\n\nLockmatrix-Ordering: ticket weaker on purpose\nSigned-off-by: t <t@t>",
        ]);
        let acks = in_range(&dir, &base, "HEAD").unwrap();
        assert_eq!(acks.len(), 1, "{acks:?}");
        assert_eq!(acks[0].unit.as_deref(), Some("ticket"));
        assert_eq!(acks[0].reason, "weaker on purpose");
        let head = CommitId::parse(&git(&["rev-parse", "HEAD"])).unwrap();
        assert!(in_range(&dir, &head, "HEAD").unwrap().is_empty());
        let absent = CommitId::parse(&"0".repeat(40)).unwrap();
        assert!(in_range(&dir, &absent, "HEAD").is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
