//! The pull-request gate end to end: `matrix --against` on real commits
//! of a scratch copy of this repository, with real changes to a lock.
//!
//! - A commit that adds work to the ticket lock's fast path fails through
//!   the instruction counts on every QEMU target and on x86_64 (counted
//!   under qemu-x86_64), whatever the files' timestamps say.
//! - A commit that makes the uncontended ticket lock far slower fails the
//!   timing gate natively.
//! - The unchanged tree against itself (A/A) passes.
//!
//! One test, in steps: every step builds in the same shared cache.

use crate::common::*;
use crate::scratch::*;

#[test]
fn against_catches_real_regressions_in_counts_and_time_and_passes_a_a() {
    let _cpus = exclusive_cpus();
    let work = scratch_dir("against");
    let repo = work.join("repo");
    let results = work.join("results");
    let base = scratch_repo(&repo);
    let ticket = "suites/spinlock/src/locks/ticket.rs";
    let fast_path = "        let ticket = self.next.fetch_add(1, Relaxed);";

    // 1. More instructions on the fast path: one more load.
    commit_edit(
        &repo,
        ticket,
        fast_path,
        &format!("        std::hint::black_box(self.owner.load(Relaxed));\n{fast_path}"),
        "ticket: one more load on the fast path",
    );
    age_every_file(&repo);
    let json = work.join("counts.json");
    let targets = format!("x86_64,{QEMU_TARGETS}");
    let (out, run) = matrix_in(
        &repo,
        &results,
        &[
            "--against",
            &base,
            "--targets",
            &targets,
            "--suites",
            "spinlock",
            "--rounds",
            "1",
            "--json",
            s(&json),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let report = read_json(&json);
    assert_eq!(report["paired"], true);
    assert_gate_agrees(&repo, &run, &out, &report, &[]);
    let want: Vec<String> = targets
        .split(',')
        .map(|t| format!("{t} lock_unlock {{\"lock\":\"ticket\",\"threads\":1}} insns_per_op"))
        .collect();
    let found = regressions(&report);
    for w in &want {
        assert!(found.contains(w), "not caught: {w}\nregressions: {found:?}");
    }
    let counts: Vec<&String> = found
        .iter()
        .filter(|r| r.ends_with("insns_per_op"))
        .collect();
    assert_eq!(
        counts.len(),
        want.len(),
        "only the ticket fast path changed: {found:?}"
    );
    // Base and head ran distinct binaries, built from distinct sources.
    let (head_run, base_run) = (
        read_json(&run.join("run.json")),
        read_json(&run.join("base/run.json")),
    );
    for (h, b) in head_run["targets"]
        .as_array()
        .unwrap()
        .iter()
        .zip(base_run["targets"].as_array().unwrap())
    {
        assert_eq!(h["name"], b["name"]);
        assert_ne!(h["sources_sha256"], b["sources_sha256"], "{}", h["name"]);
        assert_ne!(
            h["binaries"]["spinlock"], b["binaries"]["spinlock"],
            "{}",
            h["name"]
        );
        let kept = run
            .join("bin")
            .join(h["name"].as_str().unwrap())
            .join("spinlock");
        let bytes = std::fs::read(kept).unwrap();
        assert_eq!(h["binaries"]["spinlock"], sha256_hex(&bytes).as_str());
    }
    assert!(
        text(&out).contains("lock=ticket threads=1"),
        "{}",
        text(&out)
    );

    // 2. Far slower natively: a busy loop in lock().
    git(&repo, &["checkout", "-q", "-b", "slow", &base]);
    commit_edit(
        &repo,
        ticket,
        fast_path,
        &format!("        for i in 0..64u32 {{\n            std::hint::black_box(i);\n        }}\n{fast_path}"),
        "ticket: a busy loop before taking a ticket",
    );
    // The timing gate alone (no counts), at the family-wise alpha the
    // A/A below uses.
    let json = work.join("timing.json");
    let (out, _) = matrix_in(
        &repo,
        &results,
        &[
            "--against",
            &base,
            "--targets",
            "x86_64",
            "--suites",
            "spinlock",
            "--no-insns",
            "--alpha",
            "0.01",
            "--json",
            s(&json),
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let report = read_json(&json);
    assert_eq!(report["timing"]["gated"], true, "{report}");
    let found = regressions(&report);
    assert!(
        found.contains(
            &"x86_64 lock_unlock {\"lock\":\"ticket\",\"threads\":1} ticks_per_acquire".to_string()
        ),
        "{found:?}\n{}",
        text(&out)
    );
    // Decided at a look, within the pairs the plan allows.
    let slow = report["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["verdict"] == "regression" && c["case"]["lock"] == "ticket")
        .unwrap();
    let pairs = slow["look"]["pairs"].as_u64().unwrap();
    let most = u64::from(lockmatrix::policy::AB_ROUNDS.0);
    assert!(pairs % 10 == 0 && pairs <= most, "{slow}");

    // 3. A/A: the same tree against itself passes (a false alarm here has
    // probability below alpha = 1%; validate-gate measures the rate).
    let json = work.join("aa.json");
    let (out, run) = matrix_in(
        &repo,
        &results,
        &[
            "--against",
            "HEAD",
            "--targets",
            "x86_64",
            "--suites",
            "spinlock",
            "--no-insns",
            "--alpha",
            "0.01",
            "--json",
            s(&json),
        ],
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let report = read_json(&json);
    assert!(regressions(&report).is_empty());
    // Every timing cell ended with one of the three verdicts at a look,
    // or too noisy for 2x here once its pilot's pairs were in.
    for c in report["cells"].as_array().unwrap() {
        if c["family"] == true {
            let v = c["verdict"].as_str().unwrap();
            assert!(
                ["cleared", "improvement", "inconclusive", "too_noisy"].contains(&v),
                "{c}"
            );
            match v {
                "too_noisy" => assert_eq!(c["strictness"]["measured"], 10, "{c}"),
                _ => assert!(c["look"]["pairs"].as_u64().unwrap() >= 10, "{c}"),
            }
        }
    }
    // A cell's pairs stop at the look that settled its case's last cell,
    // whatever the other cases still need (pairs narrow to the undecided
    // cells, not their whole lock): on both sides, a decided cell's
    // timing rounds run from 0 to a look at or past its own. A round is
    // its bench and case's (stress and lock_unlock share cases and metric
    // names; a stress round without a fairness window has no
    // acquisitions metrics).
    for (file, side) in [("run.json", "head"), ("base/run.json", "base")] {
        let samples = read_json(&run.join(file))["targets"][0]["suites"][0]["samples"].clone();
        for c in report["cells"].as_array().unwrap() {
            if c["family"] != true
                || ["inconclusive", "too_noisy"].contains(&c["verdict"].as_str().unwrap())
            {
                continue;
            }
            let rounds: std::collections::BTreeSet<u64> = samples
                .as_array()
                .unwrap()
                .iter()
                .filter(|x| x["bench"] == c["bench"] && x["case"] == c["case"])
                .map(|x| x["round"].as_u64().unwrap())
                .collect();
            let pairs = c["look"]["pairs"].as_u64().unwrap();
            let ran = rounds.len() as u64;
            assert_eq!(rounds, (0..ran).collect(), "{side}: {c}");
            assert!(ran >= pairs && ran % 10 == 0, "{side}: {ran} rounds: {c}");
        }
    }
    std::fs::remove_dir_all(&work).unwrap();
}
