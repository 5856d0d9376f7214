//! Seed 000's alpha, end to end: the C twin of the atomic suite built by
//! Debian's alpha cross gcc and run under qemu-alpha with the counting
//! plugin, as a user runs `cargo xtask matrix --targets alpha`.
//!
//! - The default suites on alpha: only atomic-c runs, its checks pass,
//!   its counts and footprints are there (`mb` twice in the fully ordered
//!   CAS, the `ldq_l`/`stq_c` pair in every CAS), the run says in one line
//!   why the Rust suites are not built, and seed 000's table has the alpha
//!   row and says why ia64 has none.
//! - An extra `mb` in the C fully ordered CAS, committed in a scratch copy
//!   of this repository, fails `--against` its base on alpha: the CAS
//!   counts one instruction more and its footprint one full barrier more,
//!   statically and executed.

use serde_json::Value;

use crate::common::*;
use crate::scratch::*;

/// The C fully ordered CAS's first barrier, as `suites/atomic-c/ops.h`
/// writes it.
const MB_BEFORE: &str = r#""mb\n" /* smp_mb() before */"#;

fn suite<'a>(run: &'a Value, target: &str, name: &str) -> &'a Value {
    let t = run["targets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == target)
        .unwrap_or_else(|| panic!("no target {target}"));
    t["suites"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["suite"] == name)
        .unwrap_or_else(|| panic!("{target} ran no {name}"))
}

/// The static footprint of primitive `unit`: canonical instruction -> count.
fn static_of(s: &Value, unit: &str) -> Vec<(String, u64)> {
    let op = s["static_footprint"]
        .as_array()
        .unwrap()
        .iter()
        .find(|o| o["unit"] == unit)
        .unwrap_or_else(|| panic!("no static footprint of {unit}: {s}"));
    op["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["insn"].as_str().unwrap().to_string(),
                e["count"].as_u64().unwrap(),
            )
        })
        .collect()
}

fn insns_of(s: &Value, op: &str) -> f64 {
    s["samples"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["metric"] == "insns_per_op" && x["case"]["op"] == op)
        .unwrap_or_else(|| panic!("no insns_per_op of {op}"))["value"]
        .as_f64()
        .unwrap()
}

#[test]
fn alpha_runs_the_c_atomic_suite_and_says_why_the_rust_ones_are_not_built() {
    let _cpus = shared_cpus();
    let work = scratch_dir("alpha");
    let results = work.join("results");
    let (out, dir) = matrix_in(
        &repo_root(),
        &results,
        &["--targets", "alpha", "--rounds", "1"],
    );
    let shown = text(&out);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    let run = read_json(&dir.join("run.json"));
    let t = &run["targets"][0];
    assert_eq!(
        (t["name"].as_str(), t["status"]["state"].as_str()),
        (Some("alpha64"), Some("ok"))
    );
    let why =
        "no Rust backend for alpha; the C atomic suite runs (atomic, spinlock, rwsem not built)";
    assert_eq!(t["not_built"], why);
    assert!(shown.contains(&format!("alpha64: {why}")), "{shown}");
    let ran: Vec<&str> = t["suites"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["suite"].as_str().unwrap())
        .collect();
    assert_eq!(ran, ["atomic-c"]);
    // Built by the alpha cross gcc, recorded with its flags and version.
    let gcc = &t["compilers"]["atomic-c"];
    assert!(
        gcc["what"]
            .as_str()
            .unwrap()
            .contains("alpha-linux-gnu-gcc -O2 -std=gnu11"),
        "{gcc}"
    );
    assert!(
        gcc["version"]
            .as_str()
            .unwrap()
            .contains("alpha-linux-gnu-gcc"),
        "{gcc}"
    );
    assert!(t["binaries"]["atomic-c"]
        .as_str()
        .is_some_and(|h| h.len() == 64));
    let c = suite(&run, "alpha64", "atomic-c");
    assert!(c["checks"]
        .as_array()
        .unwrap()
        .iter()
        .all(|c| c["ok"] == true));
    // Counted by the plugin under qemu-alpha; alpha's barriers classified.
    assert_eq!(
        insns_of(c, "cas_sync") - insns_of(c, "cas_local"),
        2.0,
        "two mb"
    );
    assert_eq!(
        static_of(c, "cas_sync"),
        [
            ("mb".to_string(), 2),
            ("ldq_l".into(), 1),
            ("stq_c".into(), 1)
        ]
    );
    assert_eq!(
        static_of(c, "cas_local"),
        [("ldq_l".to_string(), 1), ("stq_c".into(), 1)]
    );
    assert_eq!(static_of(c, "fence"), [("mb".to_string(), 1)]);

    // Seed 000's table: the alpha row, from gcc, and ia64 said plainly.
    let tables = xtask(&["report", s(&dir), "--tables"]);
    let tables = text(&tables);
    let row = tables
        .lines()
        .find(|l| l.starts_with("alpha64 (qemu, gcc)"))
        .unwrap_or_else(|| panic!("no alpha row in {tables}"));
    assert!(
        row.contains("ldq_l/stq_c loop without mb") && row.contains("- / 2"),
        "{row}"
    );
    assert!(
        tables.contains("ia64: not run: Debian 12 has no ia64 cross compiler"),
        "{tables}"
    );
    std::fs::remove_dir_all(&work).unwrap();
}

#[test]
fn an_extra_mb_in_the_c_fully_ordered_cas_fails_against_on_alpha_by_count_and_footprint() {
    let _cpus = shared_cpus();
    let work = scratch_dir("alpha-mb");
    let repo = work.join("repo");
    let results = work.join("results");
    let base = scratch_repo(&repo);
    commit_edit(
        &repo,
        "suites/atomic-c/ops.h",
        MB_BEFORE,
        r#""mb\n" "mb\n" /* smp_mb() before */"#,
        "atomic-c: a second mb before alpha's fully ordered CAS",
    );
    let args = [
        "--against",
        &base,
        "--targets",
        "alpha",
        "--suites",
        "atomic-c",
        "--rounds",
        "1",
    ];
    let (out, report) = matrix_report(&repo, &results, &work.join("mb.json"), &args);
    let shown = text(&out);
    assert_eq!(out.status.code(), Some(1), "{shown}");
    // By count: the CAS is one instruction longer, and that fails.
    let cell = report["cells"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["metric"] == "insns_per_op" && c["case"]["op"] == "cas_sync")
        .unwrap_or_else(|| panic!("no cas_sync count in {report}"));
    let run = read_json(&newest(&results).join("run.json"));
    let base_run = read_json(&newest(&results).join("base/run.json"));
    let (head, before) = (
        insns_of(suite(&run, "alpha64", "atomic-c"), "cas_sync"),
        insns_of(suite(&base_run, "alpha64", "atomic-c"), "cas_sync"),
    );
    assert_eq!(head - before, 1.0, "{cell}");
    assert_eq!(cell["verdict"], "ordering_changed", "{cell}");
    // Nothing else moved.
    for c in report["cells"].as_array().unwrap() {
        if c["metric"] == "insns_per_op" && c["case"]["op"] != "cas_sync" {
            assert_eq!(c["verdict"], "unchanged", "{c}");
        }
    }
    // By footprint: one full barrier more, statically and executed.
    let changes: Vec<&Value> = report["ordering"].as_array().unwrap().iter().collect();
    for view in ["static", "executed"] {
        assert!(
            changes.iter().any(|c| c["target"] == "alpha64"
                && c["unit"] == "cas_sync"
                && c["view"] == view
                && c["acknowledged"].is_null()),
            "no {view} change of cas_sync in {changes:?}"
        );
    }
    assert!(
        changes.iter().all(|c| c["unit"] == "cas_sync"),
        "{changes:?}"
    );
    assert_eq!(
        static_of(suite(&run, "alpha64", "atomic-c"), "cas_sync"),
        [
            ("mb".to_string(), 3),
            ("ldq_l".into(), 1),
            ("stq_c".into(), 1)
        ]
    );
    assert!(shown.contains("ORDERING CHANGED"), "{shown}");
    std::fs::remove_dir_all(&work).unwrap();
}

/// A base revision from before the C twin existed: the head's runs alone,
/// its cells new, and the gate passes (the first pull request that adds a
/// C suite compares it with nothing, and says so).
#[test]
fn a_base_without_the_c_suite_compares_nothing_and_says_so() {
    let _cpus = shared_cpus();
    let work = scratch_dir("alpha-new-suite");
    let repo = work.join("repo");
    let results = work.join("results");
    scratch_repo(&repo);
    git(&repo, &["rm", "-q", "-r", "suites/atomic-c"]);
    git(&repo, &["commit", "-q", "-m", "before atomic-c"]);
    let before = git(&repo, &["rev-parse", "HEAD"]);
    git(&repo, &["revert", "--no-edit", "HEAD"]);
    let args = [
        "--against",
        &before,
        "--targets",
        "alpha,s390x",
        "--suites",
        "atomic-c",
        "--rounds",
        "1",
    ];
    let (out, report) = matrix_report(&repo, &results, &work.join("new.json"), &args);
    let shown = text(&out);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    let notes: Vec<String> = report["notes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["what"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        notes
            .iter()
            .filter(|n| n.contains("has no such suite: every cell is new"))
            .count(),
        2,
        "{notes:?}"
    );
    let verdicts: std::collections::BTreeSet<&str> = (report["cells"].as_array().unwrap().iter())
        .map(|c| c["verdict"].as_str().unwrap())
        .collect();
    assert_eq!(verdicts, ["no_baseline"].into(), "{report}");
    std::fs::remove_dir_all(&work).unwrap();
}
