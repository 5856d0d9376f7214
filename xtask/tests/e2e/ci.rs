//! `cargo xtask ci check`: the committed workflows match targets.yaml, and
//! an edit to targets.yaml without regeneration is caught.

use crate::common::*;
use std::path::Path;

fn ci_check(config: &Path) -> std::process::Output {
    xtask(&["ci", "check", "--config", s(config)])
}

#[test]
fn committed_workflows_match_and_drift_is_named() {
    let _cpus = shared_cpus();
    let root = repo_root();
    let out = ci_check(&root.join("targets.yaml"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );

    let edited = std::env::temp_dir().join(format!("lockmatrix-ci-{}.yaml", std::process::id()));
    let text = std::fs::read_to_string(root.join("targets.yaml")).unwrap();
    let disabled = text.replace(
        "packages: [qemu-user, gcc-s390x-linux-gnu, libc6-dev-s390x-cross]\n    enabled: true",
        "packages: [qemu-user, gcc-s390x-linux-gnu, libc6-dev-s390x-cross]\n    enabled: false",
    );
    assert_ne!(disabled, text);
    std::fs::write(&edited, disabled).unwrap();
    let out = ci_check(&edited);
    assert_eq!(out.status.code(), Some(1));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains(".github/workflows/lockmatrix.yml: differs")
            && stdout.contains("cargo xtask ci generate"),
        "{stdout}"
    );
    std::fs::remove_file(edited).unwrap();
}
