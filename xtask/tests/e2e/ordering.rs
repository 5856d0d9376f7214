//! The ordering gate end to end, on real commits of a scratch copy of this
//! repository: what no run under QEMU on an x86 host can show.
//!
//! - The ticket lock's unlock made `Relaxed` (a real lock bug on weakly
//!   ordered machines) fails `matrix --against`: the loom model of the
//!   ticket lock is violated and named, the unlock's footprint changed on
//!   every weakly ordered target, and its fewer instructions are never an
//!   improvement. x86_64's footprint is unchanged (a release store is a
//!   plain `mov` there).
//! - qspinlock's queue head claiming the lock with a `Relaxed` rather than
//!   an `Acquire` compare-exchange (more than needed, says its comment;
//!   the models still pass) is an ordering change too: it fails without a
//!   `Lockmatrix-Ordering:` trailer and passes with one, the
//!   acknowledgement shown.
//! - The tree against itself passes.

use serde_json::Value;

use crate::common::*;
use crate::scratch::*;

/// One strongly ordered target and three weakly ordered ones.
const TARGETS: &str = "x86_64,aarch64,powerpc64le,riscv64";
const WEAK: [&str; 3] = ["aarch64", "powerpc64le", "riscv64"];

/// The gate's ordering changes: `(target, unit, what, view, acknowledged)`.
fn changes(report: &Value) -> Vec<(String, String, String, String, bool)> {
    report["ordering"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| {
            (
                c["target"].as_str().unwrap().to_string(),
                c["unit"].as_str().unwrap().to_string(),
                c["what"].as_str().unwrap().to_string(),
                c["view"].as_str().unwrap().to_string(),
                !c["acknowledged"].is_null(),
            )
        })
        .collect()
}

fn gate(
    repo: &std::path::Path,
    results: &std::path::Path,
    against: &str,
    json: &std::path::Path,
) -> (std::process::Output, Value) {
    let args = [
        "--against",
        against,
        "--targets",
        TARGETS,
        "--suites",
        "spinlock",
        "--rounds",
        "1",
    ];
    matrix_report(repo, results, json, &args)
}

#[test]
fn weakened_orderings_fail_by_model_and_footprint_and_a_trailer_acknowledges_a_safe_one() {
    let _cpus = shared_cpus();
    let work = scratch_dir("ordering");
    let repo = work.join("repo");
    let results = work.join("results");
    let base = scratch_repo(&repo);

    // 1. The ticket lock's hand-over made Relaxed.
    commit_edit(
        &repo,
        "suites/spinlock/src/locks/ticket.rs",
        "self.owner.store(served.wrapping_add(1), Release);",
        "self.owner.store(served.wrapping_add(1), Relaxed);",
        "ticket: unlock stores Relaxed",
    );
    let (out, report) = gate(&repo, &results, &base, &work.join("weak.json"));
    let shown = text(&out);
    assert_eq!(out.status.code(), Some(1), "{shown}");
    // The model check names the lock, with loom's failure.
    let violated: Vec<&str> = report["models"]["violated"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["lock"].as_str().unwrap())
        .collect();
    assert!(violated.contains(&"ticket"), "{}", report["models"]);
    assert!(violated.iter().all(|l| *l == "ticket"), "{violated:?}");
    assert!(shown.contains("MODEL CHECK VIOLATED"), "{shown}");
    // The unlock's whole code lost its release on every weak target, and
    // only there; nothing else changed.
    let found = changes(&report);
    for t in WEAK {
        assert!(
            found
                .iter()
                .any(|c| c.0 == t && c.1 == "ticket" && c.2 == "unlock" && c.3 == "static"),
            "{t}: no static change of ticket unlock in {found:?}"
        );
    }
    assert!(found.iter().all(|c| c.0 != "x86_64"), "{found:?}");
    assert!(found.iter().all(|c| c.1 == "ticket" && !c.4), "{found:?}");
    assert!(shown.contains("ORDERING CHANGED"), "{shown}");
    // Its count cells fell: ordering changed, never an improvement.
    let ticket_counts: Vec<&Value> = report["cells"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["metric"] == "insns_per_op" && c["case"]["lock"] == "ticket")
        .collect();
    assert!(!ticket_counts.is_empty());
    for c in &ticket_counts {
        let weak = WEAK.contains(&c["target"].as_str().unwrap());
        let want = if weak {
            "ordering_changed"
        } else {
            "unchanged"
        };
        assert_eq!(c["verdict"], want, "{c}");
    }
    assert_eq!(report["counts"]["improvement"], 0, "{shown}");

    // 2. A weakening the models accept: qspinlock's queue head claims the
    // lock Relaxed. Without a trailer it fails on the footprint alone.
    let claim = ".compare_exchange(val, LOCKED_VAL, Acquire, Relaxed)";
    git(&repo, &["checkout", "-q", "-b", "claim", &base]);
    commit_edit(
        &repo,
        "suites/spinlock/src/locks/qspinlock.rs",
        claim,
        ".compare_exchange(val, LOCKED_VAL, Relaxed, Relaxed)",
        "qspinlock: the queue head claims the lock Relaxed",
    );
    let (out, report) = gate(&repo, &results, &base, &work.join("claim.json"));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_eq!(report["models"]["violated"].as_array().unwrap().len(), 0);
    let found = changes(&report);
    assert!(!found.is_empty());
    assert!(
        found.iter().all(|c| c.1 == "qspinlock" && !c.4),
        "{found:?}"
    );
    for t in WEAK {
        assert!(found.iter().any(|c| c.0 == t), "{t}: {found:?}");
    }

    // 3. The same change with a trailer passes, and says so.
    git(
        &repo,
        &[
            "commit",
            "-q",
            "--amend",
            "-m",
            "qspinlock: the queue head claims the lock Relaxed\n\nThe load-acquire of the word before it already orders the last unlock.\n\nLockmatrix-Ordering: qspinlock weaker on purpose, model-checked",
        ],
    );
    let (out, report) = gate(&repo, &results, &base, &work.join("acked.json"));
    let shown = text(&out);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    let acked = changes(&report);
    assert_eq!(
        acked.iter().map(|c| (&c.0, &c.2)).collect::<Vec<_>>(),
        found.iter().map(|c| (&c.0, &c.2)).collect::<Vec<_>>(),
        "the same changes, acknowledged"
    );
    assert!(acked.iter().all(|c| c.4), "{acked:?}");
    assert!(shown.contains("ORDERING CHANGED, ACKNOWLEDGED"), "{shown}");
    assert!(
        shown.contains("weaker on purpose, model-checked"),
        "{shown}"
    );

    // 4. A/A: the base against itself.
    git(&repo, &["checkout", "-q", &base]);
    let (out, report) = gate(&repo, &results, "HEAD", &work.join("aa.json"));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(changes(&report).is_empty());
    assert!(
        report["footprints_compared"].as_u64().unwrap() > 0,
        "{report}"
    );
    std::fs::remove_dir_all(&work).unwrap();
}
