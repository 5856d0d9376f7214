//! `cargo xtask validate-gate` on a real A/A recording of the native
//! target: the JSON report's fields, determinism for a seed, and clear
//! errors for bad input.

use std::path::{Path, PathBuf};

use crate::common::*;

#[test]
fn validate_gate_on_a_recorded_a_a_run() {
    let _cpus = shared_cpus();
    let dir: PathBuf =
        std::env::temp_dir().join(format!("lockmatrix-validate-gate-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let results = dir.join("results");
    let run = native_atomic_run(&results, &["--against", "HEAD", "--rounds", "12"]);

    // 100 evaluations of 10 pairs from `from`, with `more` flags.
    let validate_from = |from: &Path, json: &Path, seed: &str, more: &[&str]| {
        let mut args = vec![
            "validate-gate",
            "--from",
            s(from),
            "--json",
            s(json),
            "--evaluations",
            "100",
            "--pairs",
            "10",
            "--seed",
            seed,
        ];
        args.extend(more);
        xtask(&args)
    };
    let validate = |json: &Path, seed: &str| validate_from(&run, json, seed, &[]);
    let (a, b) = (dir.join("a.json"), dir.join("b.json"));
    let out = validate(&a, "3");
    assert!(out.status.success(), "{}", text(&out));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("false alarms in 100 evaluations"),
        "{stdout}"
    );
    assert!(
        stdout.contains("end to end: 1 separate recordings"),
        "{stdout}"
    );
    let report = read_json(&a);
    assert_eq!(report["evaluations"], 100, "{report}");
    assert_eq!(report["rounds_per_side"], 10, "{report}");
    let alarms = report["false_alarms"].as_u64().unwrap();
    let rate = report["false_alarm_rate"].as_f64().unwrap();
    assert!((rate - alarms as f64 / 100.0).abs() < 1e-12, "{report}");
    let upper = report["false_alarm_upper95"].as_f64().unwrap();
    assert!(upper > rate && upper <= 1.0, "{report}");
    for slowdown in ["0.05", "0.10", "0.25", "0.50", "1.00"] {
        let p = report["power"][slowdown].as_f64().unwrap();
        assert!((0.0..=1.0).contains(&p), "{report}");
    }
    let details = &report["details"];
    assert_eq!(details["rounds_per_side"]["head"]["max"], 10, "{report}");
    // The atomic suite's timing cells, at most: every one on real hardware.
    let cells = details["cells_per_evaluation"]["max"].as_u64().unwrap();
    assert!((1..=12).contains(&cells), "{report}");
    assert_eq!(details["method"], "resample");
    assert_eq!(details["targets"][0], "x86_64");
    assert_eq!(report["end_to_end"]["evaluations"], 1);

    // The same seed gives the same report.
    let out = validate(&b, "3");
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(read_json(&b), report);

    // The recording's summary (its family values only) gives the same
    // report as the recording itself, and is smaller (this recording is
    // mostly family rounds already).
    let kept = dir.join("kept");
    let keep = |json: &Path| validate_from(&run, json, "3", &["--keep-summaries", s(&kept)]);
    let out = keep(&dir.join("c.json"));
    assert!(out.status.success(), "{}", text(&out));
    let summaries: Vec<PathBuf> = std::fs::read_dir(&kept)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(summaries.len(), 1, "{summaries:?}");
    let size = |p: &Path| std::fs::metadata(p.join("run.json")).unwrap().len();
    assert!(
        size(&summaries[0]) < size(&run),
        "{} vs {}",
        size(&summaries[0]),
        size(&run)
    );
    assert!(summaries[0].join("base/run.json").is_file());
    let d = dir.join("d.json");
    let out = validate_from(&summaries[0], &d, "3", &[]);
    assert!(out.status.success(), "{}", text(&out));
    assert_eq!(read_json(&d), report);
    // Kept once: a second time into the same place writes nothing.
    let before = std::fs::read(summaries[0].join("run.json")).unwrap();
    let out = keep(&dir.join("e.json"));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("already there"), "{}", text(&out));
    assert_eq!(
        std::fs::read(summaries[0].join("run.json")).unwrap(),
        before
    );

    // Bad input: no evaluations, a run that is not an A/A recording.
    let out = xtask(&["validate-gate", "--from", s(&run), "--evaluations", "0"]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("--evaluations"), "{}", text(&out));
    let plain = native_atomic_run(&dir.join("plain"), &["--rounds", "2"]);
    let out = xtask(&["validate-gate", "--from", s(&plain)]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("not an A/A recording"),
        "{}",
        text(&out)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
