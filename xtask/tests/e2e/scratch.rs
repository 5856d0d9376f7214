//! Scratch repositories for the end-to-end tests that gate real commits:
//! a copy of this checkout committed once, edits committed on top, and the
//! matrix run in it as a user in that checkout would.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::common::*;

/// The QEMU targets of targets.yaml, one per architecture (no CPU variants).
pub const QEMU_TARGETS: &str =
    "i686,aarch64,powerpc64,powerpc64le,mips32,mips64el,riscv64,sparc64,s390x";

pub fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args([
            "-c",
            "user.name=lockmatrix test",
            "-c",
            "user.email=test@lockmatrix",
        ])
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {}", text(&out));
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// A git repository holding this checkout's files as they are in the work
/// tree (tracked and new, not ignored), committed once.
pub fn scratch_repo(dir: &Path) -> String {
    let root = repo_root();
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir).unwrap();
    let files = git(
        &root,
        &["ls-files", "--cached", "--others", "--exclude-standard"],
    );
    for f in files.lines() {
        let (from, to) = (root.join(f), dir.join(f));
        if from.is_file() {
            std::fs::create_dir_all(to.parent().unwrap()).unwrap();
            std::fs::copy(&from, &to).unwrap();
        }
    }
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "base"]);
    git(dir, &["rev-parse", "HEAD"])
}

/// Replaces `from` with `to` in `file` and commits it as `message`.
pub fn commit_edit(dir: &Path, file: &str, from: &str, to: &str, message: &str) {
    let path = dir.join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(text.contains(from), "{file} has no `{from}`");
    std::fs::write(&path, text.replacen(from, to, 1)).unwrap();
    git(dir, &["commit", "-q", "-am", message]);
}

/// Sets every file of the work tree to an old time: the head's sources
/// then look older than anything built from the base.
pub fn age_every_file(dir: &Path) {
    let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(946_684_800);
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.file_name().is_some_and(|n| n == ".git") {
                continue;
            }
            if p.is_dir() {
                dirs.push(p);
            } else {
                std::fs::File::options()
                    .write(true)
                    .open(&p)
                    .unwrap()
                    .set_modified(old)
                    .unwrap();
            }
        }
    }
}

/// `cargo xtask matrix ARGS` run from `dir`, writing into `results`;
/// returns the output and the run directory.
pub fn matrix_in(dir: &Path, results: &Path, args: &[&str]) -> (Output, PathBuf) {
    let mut all = vec!["matrix", "--no-install", "--results", s(results)];
    all.extend_from_slice(args);
    let out = xtask_in(dir, &all);
    (out, newest(results))
}

/// [`matrix_in`] with `--json FILE` added, and the gate's JSON report from
/// it (null when none was written).
pub fn matrix_report(dir: &Path, results: &Path, json: &Path, args: &[&str]) -> (Output, Value) {
    let mut all = args.to_vec();
    all.extend(["--json", s(json)]);
    let (out, _) = matrix_in(dir, results, &all);
    let report = std::fs::read_to_string(json)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    (out, report)
}

/// The regressions the gate's JSON report gave: `target bench case metric`.
pub fn regressions(report: &Value) -> Vec<String> {
    report["cells"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["verdict"] == "regression")
        .map(|c| {
            format!(
                "{} {} {} {}",
                c["target"].as_str().unwrap(),
                c["bench"].as_str().unwrap(),
                c["case"],
                c["metric"].as_str().unwrap()
            )
        })
        .collect()
}
