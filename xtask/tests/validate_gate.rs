//! `cargo xtask validate-gate` on a real native run: the JSON report's
//! fields, determinism for a seed, and clear errors for bad input.

use serde_json::Value;
use std::path::{Path, PathBuf};

mod common;
use common::*;

#[test]
fn validate_gate_on_a_recorded_native_run() {
    let dir: PathBuf =
        std::env::temp_dir().join(format!("lockmatrix-validate-gate-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let results = dir.join("results");
    let out = xtask(&[
        "matrix",
        "--no-install",
        "--no-gate",
        "--targets",
        "x86_64",
        "--suites",
        "atomic",
        "--rounds",
        "12",
        "--results",
        s(&results),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let run = std::fs::read_dir(&results)
        .unwrap()
        .next()
        .unwrap()
        .unwrap()
        .path();

    let validate = |json: &Path, seed: &str| {
        xtask(&[
            "validate-gate",
            "--from",
            s(&run),
            "--json",
            s(json),
            "--evaluations",
            "60",
            "--seed",
            seed,
        ])
    };
    let (a, b) = (dir.join("a.json"), dir.join("b.json"));
    let out = validate(&a, "3");
    assert_ne!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("false alarms in 60 evaluations"),
        "{}",
        text(&out)
    );
    let report = read_json(&a);
    assert_eq!(report["evaluations"], 60, "{report}");
    let alarms = report["false_alarms"].as_u64().unwrap();
    assert!(alarms <= 60);
    let rate = report["false_alarm_rate"].as_f64().unwrap();
    assert!((rate - alarms as f64 / 60.0).abs() < 1e-12, "{report}");
    let upper = report["false_alarm_upper95"].as_f64().unwrap();
    assert!(upper > rate && upper <= 1.0, "{report}");
    if alarms == 0 {
        // One-sided 95% Clopper-Pearson for 0 of 60: 1 - 0.05^(1/60).
        assert!((upper - 0.0487).abs() < 1e-4, "{report}");
    }
    for slowdown in ["0.05", "0.10"] {
        let p = report["power"][slowdown].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&p), "{report}");
    }
    let details = &report["details"];
    assert_eq!(details["rounds_per_side"]["base"]["min"], 6, "{report}");
    assert_eq!(details["rounds_per_side"]["head"]["max"], 6, "{report}");
    assert!(details["cells_per_evaluation"]["min"].as_u64().unwrap() >= 1);
    assert_eq!(details["method"], "resample");
    assert_eq!(details["targets"][0], "x86_64");

    // The same seed gives the same report.
    let out = validate(&b, "3");
    assert_ne!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(read_json(&b), report);

    // Bad input: no evaluations, and a run with nothing that gates.
    let out = xtask(&["validate-gate", "--from", s(&run), "--evaluations", "0"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("--evaluations"), "{}", text(&out));
    let qemu = dir.join("qemu");
    std::fs::create_dir_all(&qemu).unwrap();
    let mut json = read_json(&run.join("run.json"));
    for t in json["targets"].as_array_mut().unwrap() {
        t["runner"] = Value::from("qemu");
    }
    std::fs::write(qemu.join("run.json"), json.to_string()).unwrap();
    let out = xtask(&["validate-gate", "--from", s(&qemu)]);
    assert!(!out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains("no suite run ok on a target whose timings gate"),
        "{}",
        text(&out)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
