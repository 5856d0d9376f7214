//! `--crate`: another crate's locks measured and gated, end to end, with
//! a local path crate (`xtask/tests/fixtures/tinylock`, a `lock_api`
//! test-and-set lock) so nothing is fetched.
//!
//! - Version 0.2.0 adds one instruction to the lock's fast path: `--crate` 0.2.0
//!   `--against-crate` 0.1.0 fails through the instruction counts on every
//!   QEMU target, the two sides' binaries hashed different first.
//! - The same crate against itself passes, with identical binaries.
//! - Version 0.3.0 does not compile for 32-bit targets: those are not
//!   run, each saying which crate failed and cargo's error, the 64-bit
//!   ones run; `--require-build` makes that exit 1.

use serde_json::Value;
use std::path::{Path, PathBuf};

use crate::common::*;
use crate::scratch::*;

/// The fixture, copied to `dir` as `version`, with `edit` (from, to)
/// applied to its lib.rs.
fn tinylock(dir: &Path, version: &str, edit: Option<(&str, &str)>) -> PathBuf {
    let from = repo_root().join("xtask/tests/fixtures/tinylock");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let manifest = std::fs::read_to_string(from.join("Cargo.toml")).unwrap();
    let manifest = manifest.replace("version = \"0.1.0\"", &format!("version = \"{version}\""));
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    let mut lib = std::fs::read_to_string(from.join("src/lib.rs")).unwrap();
    if let Some((a, b)) = edit {
        assert!(lib.contains(a), "tinylock has no `{a}`");
        lib = lib.replacen(a, b, 1);
    }
    std::fs::write(dir.join("src/lib.rs"), lib).unwrap();
    dir.to_path_buf()
}

/// Version 0.2.0: one more instruction on the fast path, a relaxed load
/// (a plain load on every target: no ordering changes).
const SLOWER: (&str, &str) = (
    "let locked = 1;",
    "let locked = 1;\n        let _ = self.0.load(Relaxed);",
);

fn spec(dir: &Path) -> String {
    format!("tinylock@path:{}", dir.display())
}

/// `matrix --crate head [--against-crate base] ARGS`: its output, its
/// gate report (JSON) and run directory.
fn matrix(
    work: &Path,
    head: &Path,
    base: Option<&Path>,
    args: &[&str],
) -> (std::process::Output, Value, PathBuf) {
    let results = work.join("results");
    let json = work.join("gate.json");
    let _ = std::fs::remove_file(&json);
    let head = spec(head);
    let mut all = vec!["--crate", &head];
    let base = base.map(spec);
    if let Some(b) = &base {
        all.extend(["--against-crate", b]);
    }
    all.extend_from_slice(args);
    // Alone, the gate judges what needs no reference: its report too.
    let (out, report) = matrix_report(&repo_root(), &results, &json, &all);
    (out, report, newest(&results))
}

/// `target` to the binary hash of the spinlock suite a run recorded.
fn binaries(run: &Value) -> Vec<(String, String)> {
    run["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let name = t["name"].as_str().unwrap().to_string();
            (
                name,
                t["binaries"]["spinlock"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

#[test]
fn a_slower_fast_path_in_a_path_crate_fails_through_the_counts_on_every_qemu_target() {
    let _cpus = shared_cpus();
    let work = scratch_dir("crate-ab");
    let base = tinylock(&work.join("v1"), "0.1.0", None);
    let head = tinylock(&work.join("v2"), "0.2.0", Some(SLOWER));
    // The head is a maintainer's working copy: a git checkout.
    git(&head, &["init", "-q", "-b", "main"]);
    git(&head, &["add", "-A"]);
    git(&head, &["commit", "-q", "-m", "0.2.0"]);

    let (out, report, dir) = matrix(
        &work,
        &head,
        Some(&base),
        &["--targets", QEMU_TARGETS, "--suites", "spinlock"],
    );
    let shown = text(&out);
    assert_eq!(out.status.code(), Some(1), "{shown}");

    // What ran differs: each target's two binaries hash differently.
    let run = read_json(&dir.join("run.json"));
    let base_run = read_json(&dir.join("base/run.json"));
    let (h, b) = (binaries(&run), binaries(&base_run));
    assert_eq!(h.len(), QEMU_TARGETS.split(',').count());
    for ((target, hh), (_, bh)) in h.iter().zip(&b) {
        assert!(!hh.is_empty() && hh != bh, "{target}: {hh} vs {bh}");
    }
    // Each side records the crate exactly as built.
    assert_eq!(run["subject"]["version"], "0.2.0");
    assert_eq!(base_run["subject"]["version"], "0.1.0");
    let source = run["subject"]["source"].as_str().unwrap();
    assert!(
        source.contains("git ") && source.contains("sha256 "),
        "{source}"
    );
    assert_eq!(run["subject"]["mutexes"][0], "tinylock.RawTinyLock");

    // The counts fail it, on every QEMU target, and nothing else does.
    let regressions = regressions(&report);
    for target in QEMU_TARGETS.split(',') {
        assert!(
            regressions
                .iter()
                .any(|r| r.starts_with(&format!("{target} lock_unlock "))
                    && r.contains("tinylock.RawTinyLock")
                    && r.ends_with("insns_per_op")),
            "{target}: {regressions:?}\n{shown}"
        );
    }
    assert!(
        regressions.iter().all(|r| r.ends_with("insns_per_op")),
        "{regressions:?}"
    );
    assert_eq!(
        report["ordering"].as_array().map(Vec::len),
        Some(0),
        "{shown}"
    );
    // Exactly the one instruction more, everywhere.
    for c in report["cells"].as_array().unwrap() {
        if c["metric"] == "insns_per_op" {
            let (b, h) = (c["base"]["median"].as_f64(), c["head"]["median"].as_f64());
            assert_eq!(h, b.map(|b| b + 1.0), "{}", c["target"]);
        }
    }
    assert!(shown.contains("tinylock 0.1.0 → 0.2.0: "), "{shown}");
    assert!(shown.contains("FAIL"), "{shown}");
}

#[test]
fn a_crate_against_itself_passes_with_the_same_binaries() {
    let _cpus = shared_cpus();
    let work = scratch_dir("crate-aa");
    let v1 = tinylock(&work.join("v1"), "0.1.0", None);
    let (out, report, dir) = matrix(
        &work,
        &v1,
        Some(&v1),
        &["--targets", "aarch64,mips32", "--suites", "spinlock"],
    );
    let shown = text(&out);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    let run = read_json(&dir.join("run.json"));
    let base_run = read_json(&dir.join("base/run.json"));
    assert_eq!(binaries(&run), binaries(&base_run));
    assert!(regressions(&report).is_empty());
    assert_eq!(report["counts_compared"], 2, "{shown}");
    assert!(
        shown.contains("tinylock 0.1.0 → 0.1.0: the same instruction counts in all 2 compared"),
        "{shown}"
    );
}

#[test]
fn a_crate_that_does_not_build_for_a_target_names_itself_and_the_others_run() {
    let _cpus = shared_cpus();
    let work = scratch_dir("crate-broken");
    let broken = tinylock(
        &work.join("v3"),
        "0.3.0",
        Some((
            "#![no_std]",
            "#![no_std]\n#[cfg(target_pointer_width = \"32\")]\ncompile_error!(\"tinylock 0.3.0 supports 64-bit targets only\");",
        )),
    );
    let targets = ["--targets", "aarch64,mips32", "--suites", "spinlock"];
    let (out, _, dir) = matrix(&work, &broken, None, &targets);
    let shown = text(&out);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    let run = read_json(&dir.join("run.json"));
    let status = |t: usize| run["targets"][t]["status"].clone();
    assert_eq!(status(0)["state"], "ok", "{shown}");
    assert_eq!(status(1)["state"], "not_run", "{shown}");
    let why = status(1)["reason"].as_str().unwrap().to_string();
    assert!(
        why.starts_with("tinylock 0.3.0 does not build for mips32: error: tinylock 0.3.0 supports 64-bit targets only"),
        "{why}"
    );
    assert!(shown.contains(&why), "{shown}");

    let mut strict = targets.to_vec();
    strict.push("--require-build");
    let (out, _, _) = matrix(&work, &broken, None, &strict);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));

    // A CI job of one target the crate cannot build for: answered, exit 0
    // (a failure, exit 1, with --require-build).
    let one = ["--targets", "mips32", "--suites", "spinlock"];
    let (out, _, _) = matrix(&work, &broken, None, &one);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(text(&out).contains("nothing ran: mips32: tinylock 0.3.0 does not build for mips32"));
    let (out, _, _) = matrix(
        &work,
        &broken,
        None,
        &[&one[..], &["--require-build"]].concat(),
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
}

#[test]
fn a_git_revision_of_a_crate_is_built_and_recorded_by_its_commit() {
    let _cpus = shared_cpus();
    let work = scratch_dir("crate-git");
    let repo = tinylock(&work.join("repo"), "0.1.0", None);
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "-q", "-m", "0.1.0"]);
    let commit = git(&repo, &["rev-parse", "HEAD"]);
    let spec = format!("tinylock@git:file://{}#{commit}", repo.display());
    let results = work.join("results");
    let (out, dir) = matrix_in(
        &repo_root(),
        &results,
        &[
            "--crate",
            &spec,
            "--targets",
            "aarch64",
            "--suites",
            "spinlock",
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let run = read_json(&dir.join("run.json"));
    let source = run["subject"]["source"].as_str().unwrap();
    assert_eq!(
        source,
        format!("git file://{} commit {commit}", repo.display())
    );
    assert_eq!(run["targets"][0]["status"]["state"], "ok");
}
