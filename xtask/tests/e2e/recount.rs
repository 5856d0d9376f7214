//! Stored baselines gate on every machine: when their counts came from
//! another compiler (Debian moves `rustc-web` within a release), the
//! matrix counts the baselines' commit again with this machine's toolchain
//! and compares every count exactly, on real commits of a scratch copy of
//! this repository. The other compiler is a fixture (the baselines'
//! recorded compiler and binary hash edited): one machine has one Debian
//! compiler.

use serde_json::Value;

use crate::common::*;
use crate::scratch::*;

const TARGETS: &str = "aarch64,riscv64";
const TICKET: &str = "lock_unlock {\"lock\":\"ticket\",\"threads\":1} insns_per_op";

fn matrix(
    dir: &std::path::Path,
    results: &std::path::Path,
    json: &std::path::Path,
    more: &[&str],
) -> (std::process::Output, Value) {
    let mut args = vec![
        "--targets",
        TARGETS,
        "--suites",
        "spinlock",
        "--rounds",
        "1",
    ];
    args.extend_from_slice(more);
    matrix_report(dir, results, json, &args)
}

#[test]
fn baselines_from_another_compiler_are_recounted_and_every_count_gates() {
    let _cpus = shared_cpus();
    let work = scratch_dir("recount");
    let (repo, results) = (work.join("repo"), work.join("results"));
    let base = scratch_repo(&repo);

    // Baselines of `base`, said to come from another compiler.
    let (out, run) = matrix_in(
        &repo,
        &results,
        &[
            "--targets",
            TARGETS,
            "--suites",
            "spinlock",
            "--rounds",
            "1",
            "--no-gate",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let update = xtask_in(&repo, &["baseline", "update", "--from", s(&run)]);
    assert!(update.status.success(), "{}", text(&update));
    for t in TARGETS.split(',') {
        let file = repo.join("baselines").join(t).join("spinlock.json");
        let text = std::fs::read_to_string(&file).unwrap();
        let mut b: Value = serde_json::from_str(&text).unwrap();
        assert_eq!(b["commit"], base.as_str());
        let compiler = b["testbed"]["compiler_version"]
            .as_str()
            .unwrap()
            .to_string();
        // Another compiler builds another binary: the one recorded is not
        // this machine's (were it, the counts would compare as they are).
        let binary = b["binary"].as_str().unwrap().to_string();
        let older = text
            .replace(&compiler, "rustc 1.84.0 (a fixture)")
            .replace(&binary, &"0".repeat(64));
        b = serde_json::from_str(&older).unwrap();
        assert_eq!(b["testbed"]["compiler_version"], "rustc 1.84.0 (a fixture)");
        std::fs::write(&file, older).unwrap();
    }
    git(
        &repo,
        &["commit", "-qam", "baselines from an older compiler"],
    );
    let recorded = git(&repo, &["rev-parse", "HEAD"]);

    // 1. The unchanged tree: every count compared through the recount.
    let (out, report) = matrix(&repo, &results, &work.join("same.json"), &[]);
    let shown = text(&out);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    assert!(
        shown.contains(&format!(
            "counting their commit {} again with this one on 2 targets",
            &base[..12]
        )),
        "{shown}"
    );
    let recounted = &report["recounted"][0];
    assert_eq!(
        recounted["recorded_with"], "rustc 1.84.0 (a fixture)",
        "{report}"
    );
    let counts = report["counts_with_reference"].as_u64().unwrap();
    assert!(counts >= 20, "{report}");
    assert_eq!(report["counts_compared"].as_u64(), Some(counts), "{shown}");
    assert_eq!(recounted["counts"].as_u64(), Some(counts));
    assert!(
        shown.contains(&format!(
            "counts: baseline {} recounted with rustc",
            &base[..12]
        )),
        "{shown}"
    );
    assert!(
        shown.contains(&format!(
            "PASS: {counts}/{counts} instruction counts compared exactly"
        )),
        "{shown}"
    );

    // 2. One more instruction on the ticket lock's fast path fails on
    // both targets, through the recounted baseline.
    let fast_path = "        let ticket = self.next.fetch_add(1, Relaxed);";
    commit_edit(
        &repo,
        "suites/spinlock/src/locks/ticket.rs",
        fast_path,
        &format!("        std::hint::black_box(self.owner.load(Relaxed));\n{fast_path}"),
        "ticket: one more load on the fast path",
    );
    let (out, report) = matrix(&repo, &results, &work.join("slower.json"), &[]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let regressed = regressions(&report);
    assert_eq!(
        regressed,
        [format!("aarch64 {TICKET}"), format!("riscv64 {TICKET}")],
        "{}",
        text(&out)
    );

    // 3. A clone without the baselines' commit says what to fetch: exit 2
    // under --require-gate, NOT GATED without it.
    git(&repo, &["branch", "recorded", &recorded]);
    let shallow = work.join("shallow");
    let url = format!("file://{}", repo.display());
    git(
        &work,
        &[
            "clone",
            "-q",
            "--depth",
            "1",
            "--branch",
            "recorded",
            &url,
            s(&shallow),
        ],
    );
    let (out, _) = matrix(
        &shallow,
        &results,
        &work.join("shallow.json"),
        &["--require-gate"],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("git fetch --unshallow"),
        "{}",
        text(&out)
    );
    let (out, report) = matrix(&shallow, &results, &work.join("shallow2.json"), &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(report["result"], "not_gated", "{}", text(&out));
    assert!(text(&out).contains("NOT GATED: "), "{}", text(&out));
    std::fs::remove_dir_all(&work).unwrap();
}
