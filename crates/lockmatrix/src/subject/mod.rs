//! The lock crate under test: `cargo xtask matrix --crate NAME@VERSION`
//! measures another crate's locks on every target, and with
//! `--against-crate` compares two versions of it as the gate compares two
//! revisions. `spec.rs` reads the command line, `declared.rs` says which
//! locks a crate has, `generate.rs` writes the `subject` crate for it and
//! `derive.rs` the tree it is built in, `package.rs` a path crate's copy
//! in it, `resolved.rs` the crate as built, `credentials.rs` a git URL's
//! user-info carried into the container by a private file.

pub mod credentials;
pub mod declared;
pub mod derive;
mod error;
pub mod generate;
pub mod package;
mod resolved;
pub mod spec;

pub use derive::{derive, DeriveError, Derived};
pub use error::SubjectError;
pub use resolved::Subject;
pub use spec::{parse, Source, Spec};

/// The `Lockmatrix-Ordering:` trailers of a crate's own history between
/// two working copies of it (a maintainer's pull request: base and head
/// checkouts of one repository), so its intended ordering changes pass as
/// lockmatrix's own do. Empty unless both are git checkouts and the base's
/// commit is in the head's history.
pub fn acknowledgements(head: &Spec, base: &Spec) -> Vec<crate::acknowledge::Acknowledgement> {
    let (Source::Path(h), Source::Path(b)) = (&head.source, &base.source) else {
        return Vec::new();
    };
    let base_commit = std::process::Command::new("git")
        .args(["rev-parse", "--verify", "--quiet", "HEAD"])
        .current_dir(b)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .and_then(|o| {
            crate::commit::CommitId::parse(String::from_utf8_lossy(&o.stdout).trim()).ok()
        });
    match base_commit {
        Some(c) => crate::acknowledge::in_range(h, &c, "HEAD").unwrap_or_default(),
        None => Vec::new(),
    }
}
