//! The third-party actions the workflows use, each pinned by the commit its
//! release tag named, and the rules every workflow is checked against: a
//! tag can be moved to other code, a commit cannot; and a checkout keeps
//! no credential in `.git/config` for later steps (or a pull request's own
//! build scripts) to read, unless its job pushes with it.
//!
//! The commits were read from the actions' repositories (the commit each
//! major tag pointed to, and the release tag at the same commit). To move
//! one: take the commit of the new release tag, change it and the version
//! here, `cargo xtask ci generate`.

use std::fmt;
use std::path::{Path, PathBuf};

/// One action at one commit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Action {
    /// `owner/repo`.
    pub name: &'static str,
    /// The full commit SHA, 40 lower-case hex digits.
    pub commit: &'static str,
    /// The release tag at that commit, for people and for updates.
    pub version: &'static str,
}

impl Action {
    /// The `uses:` value with its version comment:
    /// `actions/checkout@<commit> # v4.4.0`.
    pub fn uses(&self) -> String {
        format!("{}@{} # {}", self.name, self.commit, self.version)
    }
}

/// Every action the templates use, by the key they use it with
/// (`[[ actions.checkout ]]`).
pub const ACTIONS: &[(&str, Action)] = &[
    (
        "checkout",
        Action {
            name: "actions/checkout",
            commit: "11d5960a326750d5838078e36cf38b85af677262",
            version: "v4.4.0",
        },
    ),
    (
        "cache",
        Action {
            name: "actions/cache",
            commit: "0057852bfaa89a56745cba8c7296529d2fc39830",
            version: "v4.3.0",
        },
    ),
    (
        "upload_artifact",
        Action {
            name: "actions/upload-artifact",
            commit: "ea165f8d65b6e75b540449e92b4886f43607fa02",
            version: "v4.6.2",
        },
    ),
    (
        "download_artifact",
        Action {
            name: "actions/download-artifact",
            commit: "d3f86a106a0bac45b974a628896c90dbdf5c8093",
            version: "v4.3.0",
        },
    ),
    (
        "create_pull_request",
        Action {
            name: "peter-evans/create-pull-request",
            commit: "22a9089034f40e5a961c8808d113e2c98fb63676",
            version: "v7.0.11",
        },
    ),
];

/// A script a job downloads and runs, pinned by the sha256 of its bytes:
/// the job checks the hash before it runs a byte of it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
pub struct Installer {
    pub url: &'static str,
    pub sha256: &'static str,
    /// The release it is, for people and for updates.
    pub version: &'static str,
}

/// rustup's installer as `https://sh.rustup.rs` serves it, at the commit
/// of rustup's release tag 1.29.0 (28d1352dbcb4), and the sha256 of
/// `rustup-init.sh` there (`git show 1.29.0:rustup-init.sh | sha256sum`
/// in a clone of rust-lang/rustup). It fetches rustup itself from
/// static.rust-lang.org over TLS, and rustup checks every toolchain
/// component against the channel's hashes. To move it: the new tag's
/// commit and hash, then `cargo xtask ci generate`.
pub const RUSTUP_INIT: Installer = Installer {
    url: "https://raw.githubusercontent.com/rust-lang/rustup/28d1352dbcb436d3111c3594b9e1588e94950464/rustup-init.sh",
    sha256: "6c30b75a75b28a96fd913a037c8581b580080b6ee9b8169a3c0feb1af7fe8caf",
    version: "1.29.0",
};

/// The jobs whose checkout keeps its credential because a later step
/// pushes with it: none. The baselines workflow's `update` job pushes a
/// branch through peter-evans/create-pull-request, which sets its own
/// credential from its `token` input for the push (and sets aside any
/// that checkout left while it runs: its `src/git-config-helper.ts`), so
/// its checkout persists nothing either.
pub const PERSIST_CREDENTIALS: &[&str] = &[];

/// A workflow that breaks a rule of this module.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Problem {
    /// A `uses:` that does not name a commit: `owner/repo@<40 hex>`.
    NotPinned {
        file: PathBuf,
        line: usize,
        uses: String,
    },
    /// A pinned `uses:` without `# v<version>` after it.
    NoVersion {
        file: PathBuf,
        line: usize,
        uses: String,
    },
    /// A checkout in `job` that keeps its credential (no
    /// `persist-credentials: false`), and `job` does not push.
    Persists { file: PathBuf, job: String },
    /// The file is not YAML that GitHub could read.
    Unreadable { file: PathBuf, why: String },
    /// A job's container image named by tag alone, not by digest.
    ImageByTag {
        file: PathBuf,
        line: usize,
        image: String,
    },
    /// A download piped into a shell: its bytes run unchecked.
    PipedToShell { file: PathBuf, line: usize },
}

impl fmt::Display for Problem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Problem::NotPinned { file, line, uses } => write!(
                f,
                "{}:{line}: `uses: {uses}` is not pinned: expected owner/repo@<40-hex commit> # v<version> (ci/actions.rs)",
                file.display()
            ),
            Problem::NoVersion { file, line, uses } => write!(
                f,
                "{}:{line}: `uses: {uses}` has no version comment: expected `# v<version>` after it",
                file.display()
            ),
            Problem::Persists { file, job } => write!(
                f,
                "{}: job `{job}` checks out without `persist-credentials: false`, and it is not a job that pushes (ci/actions.rs PERSIST_CREDENTIALS)",
                file.display()
            ),
            Problem::Unreadable { file, why } => {
                write!(f, "{}: not a readable workflow: {why}", file.display())
            }
            Problem::ImageByTag { file, line, image } => write!(
                f,
                "{}:{line}: container image `{image}` is not pinned: expected name:tag@sha256:<64 hex> (ci/jobs.rs DEBIAN_IMAGE)",
                file.display()
            ),
            Problem::PipedToShell { file, line } => write!(
                f,
                "{}:{line}: a download piped into a shell: download it to a file, check its sha256, then run it (ci/actions.rs RUSTUP_INIT)",
                file.display()
            ),
        }
    }
}

impl std::error::Error for Problem {}

/// Whether `s` is a full commit SHA.
fn is_commit(s: &str) -> bool {
    s.len() == 40
        && s.bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
}

/// Whether `s` is a version tag: `v` and digits joined by dots.
fn is_version(s: &str) -> bool {
    s.strip_prefix('v').is_some_and(|v| {
        !v.is_empty()
            && v.split('.')
                .all(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
    })
}

/// Whether `image` names its bytes: `...@sha256:<64 hex>`.
fn is_pinned_image(image: &str) -> bool {
    image.rsplit_once("@sha256:").is_some_and(|(_, d)| {
        d.len() == 64
            && d.bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// Every problem of the workflow `text` (named `file` in messages).
pub fn check(file: &Path, text: &str) -> Vec<Problem> {
    let mut problems = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let code = line.split(" #").next().unwrap_or(line);
        let fetches = ["curl ", "wget "].iter().any(|c| code.contains(c));
        let piped = code.split('|').skip(1).any(|after| {
            let word = after.split_whitespace().next().unwrap_or("");
            matches!(word, "sh" | "bash" | "dash" | "zsh" | "sudo")
        });
        if fetches && piped && !line.trim_start().starts_with('#') {
            problems.push(Problem::PipedToShell {
                file: file.to_path_buf(),
                line: i + 1,
            });
        }
        let trimmed = line.trim_start();
        if let Some(image) = trimmed
            .strip_prefix("container:")
            .or_else(|| trimmed.strip_prefix("image:"))
        {
            let image = image.trim().trim_matches(['"', '\'']);
            if !image.is_empty() && !is_pinned_image(image) {
                problems.push(Problem::ImageByTag {
                    file: file.to_path_buf(),
                    line: i + 1,
                    image: image.to_string(),
                });
            }
        }
        let step = line.trim_start();
        let step = step.strip_prefix("- ").unwrap_or(step).trim_start();
        let Some(rest) = step.strip_prefix("uses:") else {
            continue;
        };
        let (uses, comment) = match rest.trim().split_once(char::is_whitespace) {
            Some((u, c)) => (u, c.trim()),
            None => (rest.trim(), ""),
        };
        let uses = uses.trim_matches(['"', '\'']);
        // An action in this repository is not third-party.
        if uses.starts_with("./") {
            continue;
        }
        let at = |problem: fn(PathBuf, usize, String) -> Problem| {
            problem(file.to_path_buf(), i + 1, uses.to_string())
        };
        let pinned = uses
            .split_once('@')
            .is_some_and(|(name, rev)| name.contains('/') && is_commit(rev));
        if !pinned {
            problems.push(at(|file, line, uses| Problem::NotPinned {
                file,
                line,
                uses,
            }));
        } else if !comment
            .strip_prefix('#')
            .is_some_and(|c| is_version(c.trim()))
        {
            problems.push(at(|file, line, uses| Problem::NoVersion {
                file,
                line,
                uses,
            }));
        }
    }
    let yaml: serde_norway::Value = match serde_norway::from_str(text) {
        Ok(v) => v,
        Err(e) => {
            problems.push(Problem::Unreadable {
                file: file.to_path_buf(),
                why: e.to_string(),
            });
            return problems;
        }
    };
    let Some(jobs) = yaml.get("jobs").and_then(|j| j.as_mapping()) else {
        return problems;
    };
    for (id, job) in jobs {
        let id = id.as_str().unwrap_or_default();
        let steps = job.get("steps").and_then(|s| s.as_sequence());
        let persists = steps.into_iter().flatten().any(|step| {
            let checkout = step
                .get("uses")
                .and_then(|u| u.as_str())
                .is_some_and(|u| u.starts_with("actions/checkout@"));
            let kept = step
                .get("with")
                .and_then(|w| w.get("persist-credentials"))
                .and_then(|p| p.as_bool())
                != Some(false);
            checkout && kept
        });
        if persists && !PERSIST_CREDENTIALS.contains(&id) {
            problems.push(Problem::Persists {
                file: file.to_path_buf(),
                job: id.to_string(),
            });
        }
    }
    problems
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_pin_is_a_commit_with_its_version() {
        for (key, a) in ACTIONS {
            assert!(is_commit(a.commit), "{key}: {a:?}");
            assert!(is_version(a.version), "{key}: {a:?}");
            assert!(a.uses().starts_with(&format!("{}@", a.name)), "{key}");
        }
        assert!(!is_commit("v4") && !is_commit(&"A".repeat(40)) && !is_commit(&"a".repeat(39)));
        assert!(
            is_version("v7.0.11") && is_version("v4") && !is_version("v") && !is_version("4.2")
        );
    }

    #[test]
    fn every_rendered_workflow_pins_every_action_and_keeps_no_credential() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let config = crate::config::load(&root.join("targets.yaml")).unwrap();
        let files = crate::ci::render(&config).unwrap();
        let mut uses = 0;
        for (rel, text) in &files {
            assert_eq!(check(rel, text), [], "{}", rel.display());
            uses += text.matches("uses: ").count();
            // Each pin is the table's, with its comment.
            for line in text.lines().filter(|l| l.contains("uses: ")) {
                let value = line.split("uses: ").nth(1).unwrap();
                assert!(
                    ACTIONS.iter().any(|(_, a)| a.uses() == value),
                    "{}: {line}",
                    rel.display()
                );
            }
            for (i, _) in text.match_indices("uses: actions/checkout@") {
                let step: String = text[i..].lines().take(6).collect::<Vec<_>>().join("\n");
                assert!(step.contains("persist-credentials: false"), "{step}");
            }
        }
        assert!(uses > 50, "{uses}");
        // And the committed ones, which ci check holds to the same rules.
        assert_eq!(
            crate::ci::check(&root, &config).unwrap(),
            Vec::<String>::new()
        );
    }

    #[test]
    fn an_image_by_tag_and_a_download_piped_to_a_shell_are_named() {
        let digest = "813017f3d62be4b5891a7acca6a01bdcd4b8513daa81b1ab99d3a50385b26931";
        let text = format!(
            "jobs:\n  a:\n    container: debian:12.11\n    steps:\n      - run: curl -sSf https://sh.rustup.rs | sh -s -- -y\n  b:\n    container: debian:12.15@sha256:{digest}\n    steps:\n      - run: curl -sSf -o x.sh https://x && echo \"h  x.sh\" | sha256sum -c - && sh x.sh\n"
        );
        let shown: Vec<String> = check(Path::new("w.yml"), &text)
            .iter()
            .map(|p| p.to_string())
            .collect();
        assert_eq!(
            shown,
            [
                "w.yml:3: container image `debian:12.11` is not pinned: expected name:tag@sha256:<64 hex> (ci/jobs.rs DEBIAN_IMAGE)",
                "w.yml:5: a download piped into a shell: download it to a file, check its sha256, then run it (ci/actions.rs RUSTUP_INIT)",
            ]
        );
        assert!(is_pinned_image(crate::ci::jobs::DEBIAN_IMAGE));
        assert_eq!(RUSTUP_INIT.sha256.len(), 64);
        assert!(RUSTUP_INIT
            .url
            .contains("/28d1352dbcb436d3111c3594b9e1588e94950464/"));
    }

    #[test]
    fn tags_unversioned_pins_and_kept_credentials_are_named() {
        let sha = "11d5960a326750d5838078e36cf38b85af677262";
        let text = format!(
            "jobs:\n  a:\n    steps:\n      - uses: actions/checkout@v4\n      - uses: actions/cache@{sha}\n      - name: x\n        uses: peter-evans/create-pull-request@{sha} # v7.0.11\n      - uses: ./local\n  b:\n    steps:\n      - uses: actions/checkout@{sha} # v4.4.0\n        with:\n          persist-credentials: false\n  c:\n    steps:\n      - uses: actions/checkout@{sha} # v4.4.0\n        with:\n          fetch-depth: 0\n"
        );
        let shown: Vec<String> = check(Path::new("w.yml"), &text)
            .iter()
            .map(|p| p.to_string())
            .collect();
        assert_eq!(
            shown,
            [
                "w.yml:4: `uses: actions/checkout@v4` is not pinned: expected owner/repo@<40-hex commit> # v<version> (ci/actions.rs)".to_string(),
                format!("w.yml:5: `uses: actions/cache@{sha}` has no version comment: expected `# v<version>` after it"),
                "w.yml: job `a` checks out without `persist-credentials: false`, and it is not a job that pushes (ci/actions.rs PERSIST_CREDENTIALS)".to_string(),
                "w.yml: job `c` checks out without `persist-credentials: false`, and it is not a job that pushes (ci/actions.rs PERSIST_CREDENTIALS)".to_string(),
            ]
        );
    }
}
