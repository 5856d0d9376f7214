//! The regression gate end to end: a real native run recorded as the
//! baseline with `baseline update`, then gated as is, with an injected
//! slowdown, and against a corrupt baseline file.

use serde_json::Value;
use std::path::{Path, PathBuf};

use crate::common::*;

/// Copies a run directory, multiplying every timing value of `bench` by `factor`.
fn slowed_copy(run: &Path, to: &Path, bench: &str, factor: f64) {
    std::fs::create_dir_all(to).unwrap();
    let mut json: Value =
        serde_json::from_str(&std::fs::read_to_string(run.join("run.json")).unwrap()).unwrap();
    for t in json["targets"].as_array_mut().unwrap() {
        for suite in t["suites"].as_array_mut().unwrap() {
            // A made-up run: no raw output to check it against.
            suite["stdout_sha256"] = Value::Null;
            for sample in suite["samples"].as_array_mut().unwrap() {
                if sample["bench"] == bench && sample["metric"] == "ticks_per_op" {
                    let v = sample["value"].as_f64().unwrap();
                    sample["value"] = Value::from(v * factor);
                }
            }
        }
    }
    std::fs::write(to.join("run.json"), serde_json::to_string(&json).unwrap()).unwrap();
}

#[test]
fn baseline_update_then_gate_identical_slowed_and_corrupt() {
    let _cpus = shared_cpus();
    let dir: PathBuf = scratch_dir("gate");
    let (results, baselines) = (dir.join("results"), dir.join("baselines"));

    // A dedicated testbed, named: this machine may be a container, whose
    // timings are never compared with stored ones otherwise. Sixty rounds:
    // `baseline update` never asks for more.
    let out = xtask_env(
        &[
            "matrix",
            "--no-install",
            "--targets",
            "x86_64",
            "--suites",
            "atomic",
            "--rounds",
            "60",
            "--tables",
            "--results",
            s(&results),
            "--baselines",
            s(&baselines),
        ],
        &[("LOCKMATRIX_TESTBED", "e2e-testbed")],
    );
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("no_baseline") || text(&out).contains("new"),
        "{}",
        text(&out)
    );
    let run = std::fs::read_dir(&results)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();

    record_baselines(&run, &baselines);
    let file = baselines.join("x86_64/atomic.json");
    let recorded: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
    assert_eq!(recorded["format"], 3);
    assert_eq!(recorded["testbed"]["runner"], "native");
    assert_eq!(recorded["testbed"]["declared_testbed"], "e2e-testbed");

    // The same samples pass.
    let out = xtask(&[
        "gate",
        s(&run),
        "--baselines",
        s(&baselines),
        "--json",
        s(&dir.join("same.json")),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let report: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("same.json")).unwrap()).unwrap();
    assert_eq!(report["counts"]["regression"], 0, "{report}");
    // The fence cell is cleared or, with few rounds, inconclusive.
    let family: Vec<&Value> = report["cells"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["family"] == true)
        .collect();
    assert!(!family.is_empty(), "{report}");
    for c in family {
        assert!(
            c["verdict"] == "cleared" || c["verdict"] == "inconclusive",
            "{c}"
        );
    }

    // Every single-thread op 40% slower fails and names a cell.
    let slow = dir.join("slow");
    slowed_copy(&run, &slow, "single_thread", 1.4);
    let md = dir.join("summary.md");
    let out = xtask(&[
        "gate",
        s(&slow),
        "--baselines",
        s(&baselines),
        "--markdown",
        s(&md),
    ]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("regression") && stdout.contains("op=fence"),
        "{stdout}"
    );
    assert!(std::fs::metadata(&md).unwrap().len() < 1 << 20);

    // The same slowdown from a machine that did not name itself, as in
    // a container: its timings are not compared, and the output says how
    // to gate them.
    let unnamed = dir.join("unnamed");
    slowed_copy(&run, &unnamed, "single_thread", 1.4);
    let path = unnamed.join("run.json");
    let mut json: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    json["host"]["declared_testbed"] = Value::Null;
    json["host"]["virtualization"] = Value::from("kvm, container docker");
    std::fs::write(&path, serde_json::to_string(&json).unwrap()).unwrap();
    let out = xtask(&["gate", s(&unnamed), "--baselines", s(&baselines)]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("NOT GATED"), "{stdout}");
    assert!(
        stdout.contains("the run's testbed is unknown: it ran in a container"),
        "{stdout}"
    );
    assert!(stdout.contains("--against"), "{stdout}");
    // A bad name for the testbed is bad input, before anything runs.
    let out = xtask_env(
        &["matrix", "--no-install", "--targets", "x86_64"],
        &[("LOCKMATRIX_TESTBED", "../x")],
    );
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("LOCKMATRIX_TESTBED"), "{}", text(&out));

    // A corrupt baseline is bad input (exit 2), named, and left as it was.
    std::fs::write(&file, "{ not json").unwrap();
    let out = xtask(&["gate", s(&run), "--baselines", s(&baselines)]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains(file.to_str().unwrap()),
        "{}",
        text(&out)
    );
    let out = xtask(&[
        "baseline",
        "update",
        "--from",
        s(&run),
        "--baselines",
        s(&baselines),
    ]);
    assert!(
        !out.status.success(),
        "update must refuse to overwrite a corrupt baseline: {}",
        text(&out)
    );
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "{ not json");
    // The matrix refuses it before it builds or runs anything.
    let runs_before = std::fs::read_dir(&results).unwrap().count();
    let out = xtask(&[
        "matrix",
        "--no-install",
        "--targets",
        "x86_64",
        "--suites",
        "atomic",
        "--results",
        s(&results),
        "--baselines",
        s(&baselines),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("corrupt baseline"), "{}", text(&out));
    assert_eq!(std::fs::read_dir(&results).unwrap().count(), runs_before);
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn against_head_on_an_unchanged_tree_passes() {
    let _cpus = shared_cpus();
    // Its own directory: another test's would be removed under it.
    let dir: PathBuf = scratch_dir("against-head");
    let out = xtask(&[
        "matrix",
        "--no-install",
        "--targets",
        "x86_64",
        "--suites",
        "atomic",
        "--against",
        "HEAD",
        "--rounds",
        "4",
        "--tables",
        "--results",
        s(&dir),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("=> NOT GATED") && stdout.contains("0 new"),
        "{stdout}"
    );
    // Four pairs cannot reach the per-cell level: the report says so, and
    // the verdict is NOT GATED, never a bare PASS.
    assert!(
        stdout.contains("timing not gated: 4 pairs cannot reach"),
        "{stdout}"
    );
    assert!(
        stdout.contains(" timing cells gated (")
            && stdout.contains(" not gated: too few pairs for their thresholds: ")
            && stdout.contains(" pairs would gate them all (--rounds "),
        "{stdout}"
    );
    let run = std::fs::read_dir(&dir)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();
    // Both sides ran one invocation per round.
    for file in ["run.json", "base/run.json"] {
        let json: Value =
            serde_json::from_str(&std::fs::read_to_string(run.join(file)).unwrap()).unwrap();
        let samples = json["targets"][0]["suites"][0]["samples"]
            .as_array()
            .unwrap()
            .clone();
        // Every timing cell in every round: none is decided in 4 pairs.
        let mut rounds: std::collections::BTreeMap<String, std::collections::BTreeSet<u64>> =
            Default::default();
        for s in samples.iter().filter(|s| s["unit"] != "insns") {
            rounds
                .entry(format!("{} {}", s["case"], s["metric"]))
                .or_default()
                .insert(s["round"].as_u64().unwrap());
        }
        assert!(rounds.len() > 10, "{file}: {rounds:?}");
        assert!(rounds.values().all(|r| r.len() == 4), "{file}: {rounds:?}");
    }
    // --require-gate turns NOT GATED into a failure (exit 1).
    let strict = xtask(&["gate", s(&run), "--require-gate"]);
    assert_eq!(strict.status.code(), Some(1), "{}", text(&strict));
    assert!(text(&strict).contains("NOT GATED: "), "{}", text(&strict));
    let lenient = xtask(&["gate", s(&run)]);
    assert_eq!(lenient.status.code(), Some(0), "{}", text(&lenient));
    let out = xtask(&[
        "matrix",
        "--no-install",
        "--targets",
        "x86_64",
        "--suites",
        "atomic",
        "--against",
        "no-such-rev",
        "--results",
        s(&dir),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    std::fs::remove_dir_all(&dir).unwrap();
}
