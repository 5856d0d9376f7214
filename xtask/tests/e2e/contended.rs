//! Contention-only regressions gate on real hardware: a change that moves
//! no instruction count, no ordering footprint and no model, committed on
//! a scratch copy of this repository, fails `matrix --against` by the
//! name of the contended cell it slowed, while the same lock's 1-thread
//! cell and every other lock pass.
//!
//! The change is a wait policy: a ticket-lock waiter that, after each
//! look at `owner`, does twenty thousand iterations of nothing before it
//! looks again. Uncontended, the waiter's loop never runs; contended,
//! every hand-over waits for the waiter's next look. (The A/A run of the
//! same suite is `against.rs`'s.)

use serde_json::Value;

use crate::common::*;
use crate::scratch::*;

const WAIT: &str =
    "        while self.owner.load(Acquire) != ticket {\n            spin.relax();\n        }";

#[test]
fn a_ticket_waiter_that_polls_late_fails_by_its_contended_cell_alone() {
    let _cpus = exclusive_cpus();
    let work = scratch_dir("contended");
    let (repo, results) = (work.join("repo"), work.join("results"));
    let base = scratch_repo(&repo);
    commit_edit(
        &repo,
        "suites/spinlock/src/locks/ticket.rs",
        WAIT,
        "        while self.owner.load(Acquire) != ticket {\n            spin.relax();\n            // Polls late: a long pause before each look.\n            for i in 0..20_000u32 {\n                std::hint::black_box(i);\n            }\n        }",
        "ticket: a waiter polls late",
    );
    let json = work.join("gate.json");
    let (out, run) = matrix_in(
        &repo,
        &results,
        &[
            "--against",
            &base,
            "--targets",
            "x86_64",
            "--suites",
            "spinlock",
            "--json",
            s(&json),
        ],
    );
    let shown = text(&out);
    let report = read_json(&json);

    // The two sides ran different binaries, built from different sources.
    let (head, base_run) = (
        read_json(&run.join("run.json")),
        read_json(&run.join("base/run.json")),
    );
    assert_ne!(
        head["targets"][0]["binaries"], base_run["targets"][0]["binaries"],
        "the change reached the head's binary"
    );
    // Nothing exact moved: every count compared and equal, no ordering
    // change, every model passed.
    let counts: Vec<&Value> = cells(&report)
        .into_iter()
        .filter(|c| c["metric"] == "insns_per_op")
        .collect();
    assert!(!counts.is_empty(), "{shown}");
    assert!(
        counts.iter().all(|c| c["verdict"] == "unchanged"),
        "{counts:?}"
    );
    assert_eq!(
        report["ordering"].as_array().map(Vec::len),
        Some(0),
        "{shown}"
    );
    assert!(
        report["models"]["violated"].as_array().unwrap().is_empty(),
        "{shown}"
    );
    assert!(report["models"]["passed"].as_u64().unwrap() > 0, "{shown}");

    // The gate fails, by the ticket lock's contended cells only.
    assert_eq!(out.status.code(), Some(1), "{shown}");
    let regressions: Vec<&Value> = cells(&report)
        .into_iter()
        .filter(|c| c["verdict"] == "regression")
        .collect();
    assert!(
        regressions
            .iter()
            .any(|c| c["case"]["lock"] == "ticket" && c["case"]["threads"].as_u64() >= Some(2)),
        "{shown}"
    );
    for c in &regressions {
        assert_eq!(c["case"]["lock"], "ticket", "only the changed lock: {c}");
        assert_ne!(c["case"]["threads"], 1, "not its uncontended cell: {c}");
    }
    assert!(
        shown.contains("REGRESSION") && shown.contains("lock=ticket threads=2"),
        "{shown}"
    );
    std::fs::remove_dir_all(&work).unwrap();
}

fn cells(report: &Value) -> Vec<&Value> {
    report["cells"].as_array().unwrap().iter().collect()
}
