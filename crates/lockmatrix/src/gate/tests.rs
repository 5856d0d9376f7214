//! The gate end to end on synthetic runs: baselines recorded with
//! `update_baselines`, then a head run evaluated against them; and paired
//! against a base run, as `--against` gates. The builders here are shared
//! with `validate`'s tests.

use super::evaluate::{GateReport, Reference, Verdict};
use super::*;
use crate::baseline;
use crate::config::RunnerKind;
use crate::host::Host;
use crate::protocol::{Better, Check, Sample};
use crate::results::{Failure, Run, Status, SuiteRun, TargetResult, ToolInfo};
use crate::runner::Exit;
use serde_json::{json, Value};
use std::path::{Path, PathBuf};

/// The seeded generator the tests draw noise from.
pub(super) type Rng = super::validate::SplitMix64;

impl Rng {
    /// Uniform in (0, 1).
    fn uniform(&mut self) -> f64 {
        ((self.next() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }

    /// Standard normal (Box-Muller).
    fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (2.0 * std::f64::consts::PI * v).cos()
    }

    /// A noisy timing round: log-normal spread `sigma` around `center`, and
    /// one round in twenty an outlier 20-60% slow (an interrupt, a migration).
    pub(super) fn timing(&mut self, center: f64, sigma: f64) -> f64 {
        let outlier = if self.uniform() < 0.05 {
            1.2 + 0.4 * self.uniform()
        } else {
            1.0
        };
        center * (sigma * self.normal()).exp() * outlier
    }
}

/// One cell's samples.
pub(super) struct Cell {
    pub(super) bench: &'static str,
    pub(super) case: Value,
    pub(super) metric: &'static str,
    pub(super) better: Better,
    /// In its suite's timing cells.
    pub(super) gating: bool,
    pub(super) values: Vec<Option<f64>>,
}

/// A timing cell of the family, lower is better.
pub(super) fn cell(bench: &'static str, case: Value, values: Vec<f64>) -> Cell {
    Cell {
        bench,
        case,
        metric: "ticks_per_op",
        better: Better::Lower,
        gating: true,
        values: values.into_iter().map(Some).collect(),
    }
}

pub(super) fn suite_run(suite: &str, cells: &[Cell], checks: Vec<Check>) -> SuiteRun {
    let mut samples = Vec::new();
    for c in cells {
        for (round, v) in c.values.iter().enumerate() {
            samples.push(Sample {
                suite: suite.into(),
                bench: c.bench.into(),
                case: c.case.as_object().unwrap().clone(),
                metric: c.metric.into(),
                // Timings in ns; the spinlock suite's fairness cv is a
                // ratio; instruction counts in insns, as the suites print.
                unit: match c.metric {
                    "fairness_cv" => "ratio",
                    "insns_per_op" => "insns",
                    _ => "ns",
                }
                .into(),
                better: c.better,
                gating: c.gating,
                round: round as u32,
                value: *v,
            });
        }
    }
    let status = match checks.iter().find(|c| !c.ok) {
        Some(c) => Status::Failed(Failure::Check {
            name: c.name.clone(),
            bench: c.bench.clone(),
            case: crate::protocol::case_label(&c.case),
            details: c.details.clone(),
            more: 0,
        }),
        None => Status::Ok,
    };
    SuiteRun {
        suite: suite.into(),
        static_footprint: Vec::new(),
        footprint_error: None,
        command: format!("./{suite}"),
        status,
        exit: Exit::Code(0),
        secs: 1.0,
        env: None,
        samples,
        checks,
        executed: vec![],
        probes: None,
        bad_lines: vec![],
        stderr_tail: vec![],
        stdout_sha256: None,
        counted_command: None,
    }
}

pub(super) fn target(name: &str, runner: &str, suites: Vec<SuiteRun>) -> TargetResult {
    let status = if suites.iter().all(|s| s.status == Status::Ok) {
        Status::Ok
    } else {
        Status::Failed(Failure::Other {
            reason: "a suite failed".into(),
        })
    };
    TargetResult {
        name: name.into(),
        triple: crate::name::known(&format!("{name}-unknown-linux-gnu")),
        class: name.into(),
        runner: match runner {
            "qemu" => RunnerKind::Qemu,
            "ssh" => RunnerKind::Ssh,
            _ => RunnerKind::Native,
        },
        status,
        toolchain: Some(ToolInfo {
            what: "stable".into(),
            version: "rustc 1.96.0".into(),
        }),
        build_std: false,
        linker: None,
        emulator: (runner == "qemu").then(|| ToolInfo {
            what: format!("/usr/bin/qemu-{name}"),
            version: "qemu 7.2.15".into(),
        }),
        build_secs: Some(1.0),
        run_secs: Some(1.0),
        counter: None,
        cpu: None,
        insns_tolerance: 0.0,
        stored_rounds: None,
        cpu_model: None,
        machine: None,
        kernel: None,
        virtualization: None,
        declared_testbed: None,
        sources_sha256: None,
        binaries: Default::default(),
        compilers: Default::default(),
        not_built: None,
        suites,
    }
}

pub(super) fn run_on(cpu: &str, targets: Vec<TargetResult>) -> Run {
    Run {
        models: None,
        miri: None,
        contention: None,
        subject: None,
        format: crate::results::FORMAT_VERSION,
        run_id: "20261130T020000Z".into(),
        started: "2026-11-30T02:00:00Z".into(),
        finished: Some("2026-11-30T02:05:00Z".into()),
        command: vec!["matrix".into()],
        profile: crate::results::Profile::Quick,
        host: Host {
            cpu_model: cpu.into(),
            cpus: 2,
            kernel: "6.1".into(),
            os: "Debian 12".into(),
            lockmatrix_commit: Some(crate::commit::test_id("abc123")),
            lockmatrix_dirty: false,
            machine: Some("m1".into()),
            virtualization: Some("kvm".into()),
            declared_testbed: None,
            image: None,
        },
        insns_plugin: None,
        against: None,
        lock_crates: Default::default(),
        targets,
    }
}

pub(super) fn run(targets: Vec<TargetResult>) -> Run {
    run_on("Test CPU @ 2.0GHz", targets)
}

/// A run of one target with one suite of `cells` and no checks.
pub(super) fn one_suite(target_name: &str, runner: &str, suite: &str, cells: &[Cell]) -> Run {
    run(vec![target(
        target_name,
        runner,
        vec![suite_run(suite, cells, vec![])],
    )])
}

fn last_line(text: &str) -> &str {
    text.trim_end().lines().last().unwrap_or_default()
}

fn temp_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lockmatrix-gate-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `n` cells of `rounds` noisy rounds each; `slow(i)` scales cell `i`.
pub(super) fn noisy_cells(
    rng: &mut Rng,
    n: usize,
    rounds: usize,
    sigma: f64,
    slow: impl Fn(usize) -> f64,
) -> Vec<Cell> {
    (0..n)
        .map(|i| {
            let center = 50.0 + (i % 17) as f64 * 10.0;
            cell(
                "single_thread",
                json!({"op": format!("op{i:03}")}),
                (0..rounds)
                    .map(|_| rng.timing(center * slow(i), sigma))
                    .collect(),
            )
        })
        .collect()
}

/// Records `base` as the baselines in a fresh directory, then evaluates `head`.
fn gate(name: &str, base: &Run, head: &Run) -> (GateReport, PathBuf) {
    let dir = temp_dir(name);
    update::record_as_is(
        base,
        &dir,
        None,
        None,
        &crate::commit::test_id("base-commit"),
    )
    .unwrap();
    (stored(head, &dir), dir)
}

/// `head` gated against the baselines under `dir`.
fn stored(head: &Run, dir: &Path) -> GateReport {
    let reference = super::load::stored(head, dir).unwrap();
    evaluate(head, &reference, &GateOptions::default()).unwrap()
}

#[test]
fn gate_a_20_percent_regression_in_one_native_cell_fails_and_is_named() {
    let mut rng = Rng::new(1);
    let base = one_suite(
        "x86_64",
        "native",
        "atomic",
        &noisy_cells(&mut rng, 12, 10, 0.01, |_| 1.0),
    );
    let head = one_suite(
        "x86_64",
        "native",
        "atomic",
        &noisy_cells(&mut rng, 12, 10, 0.01, |i| if i == 7 { 1.2 } else { 1.0 }),
    );
    let (report, dir) = gate("regression", &base, &head);
    assert!(report.failed());
    let regressions: Vec<_> = report.with(Verdict::Regression).collect();
    assert_eq!(regressions.len(), 1, "{}", report.terminal());
    let r = regressions[0];
    assert_eq!(r.case_label(), "op=op007");
    let e = r.effect.unwrap();
    assert!((1.15..1.25).contains(&e.ratio) && e.lo > 1.05, "{e:?}");
    let text = report.terminal();
    assert!(text.starts_with("REGRESSIONS (1)"), "{text}");
    assert!(
        text.contains("x86_64/atomic  single_thread  op=op007  ticks_per_op"),
        "{text}"
    );
    assert!(last_line(&text).starts_with("FAIL: "), "{text}");
    assert!(text.contains("problems => FAIL"), "{text}");
    assert!(
        text.contains(
            "gate: 12 timing cells (11 cleared, 0 inconclusive, 1 regressions, 0 improvements), 0 instruction counts and 0 ordering footprints compared"
        ),
        "{text}"
    );
    let md = report.markdown(64 * 1024);
    assert!(
        md.contains("## lockmatrix gate: **FAIL**") && md.contains("op=op007"),
        "{md}"
    );
    let j = report.json();
    assert_eq!(j["result"], "fail");
    assert_eq!(j["counts"]["regression"], 1);
    assert!(j["cells"]
        .as_array()
        .unwrap()
        .iter()
        .any(|c| c["verdict"] == "regression" && c["case"]["op"] == "op007"));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn gate_identical_samples_pass() {
    let mut rng = Rng::new(2);
    let base = one_suite(
        "x86_64",
        "native",
        "atomic",
        &noisy_cells(&mut rng, 20, 10, 0.02, |_| 1.0),
    );
    let (report, dir) = gate("identical", &base, &base);
    assert!(!report.failed(), "{}", report.terminal());
    assert_eq!(report.family, 20);
    // Outlier rounds leave some cells without the power to rule out a 5%
    // change: inconclusive, never a regression.
    assert_eq!(
        report.count(Verdict::Cleared) + report.count(Verdict::Inconclusive),
        20,
        "{}",
        report.terminal()
    );
    for c in &report.cells {
        assert_eq!(c.effect.unwrap().ratio, 1.0);
    }
    assert!(last_line(&report.terminal()).starts_with("PASS: "));
    assert_eq!(report.json()["result"], "pass");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn gate_300_null_native_cells_stay_green() {
    // Base and head drawn from the same noisy distribution (5% log-normal
    // spread, 5% outlier rounds), several independent runs of 300 cells.
    let mut cleared = 0;
    for seed in 0..5 {
        let mut rng = Rng::new(1000 + seed);
        let base = one_suite(
            "x86_64",
            "native",
            "spinlock",
            &noisy_cells(&mut rng, 300, 12, 0.05, |_| 1.0),
        );
        let head = one_suite(
            "x86_64",
            "native",
            "spinlock",
            &noisy_cells(&mut rng, 300, 12, 0.05, |_| 1.0),
        );
        let (report, dir) = gate(&format!("null{seed}"), &base, &head);
        assert_eq!(report.family, 300);
        assert!(!report.failed(), "seed {seed}:\n{}", report.terminal());
        assert_eq!(report.count(Verdict::Regression), 0);
        assert_eq!(
            report.count(Verdict::Cleared) + report.count(Verdict::Inconclusive),
            300
        );
        cleared += report.count(Verdict::Cleared);
        std::fs::remove_dir_all(dir).unwrap();
    }
    // Unchanged cells are mostly cleared, not left inconclusive.
    assert!(cleared > 750, "{cleared} of 1500 null cells cleared");
}

#[test]
fn gate_a_qemu_cell_50_percent_slower_is_advisory_not_failing() {
    let mut rng = Rng::new(3);
    let base = one_suite(
        "aarch64",
        "qemu",
        "atomic",
        &noisy_cells(&mut rng, 4, 10, 0.01, |_| 1.0),
    );
    let head = one_suite(
        "aarch64",
        "qemu",
        "atomic",
        &noisy_cells(&mut rng, 4, 10, 0.01, |i| if i == 2 { 1.5 } else { 1.0 }),
    );
    let (report, dir) = gate("qemu", &base, &head);
    assert!(!report.failed(), "{}", report.terminal());
    assert_eq!(report.family, 0);
    assert_eq!(report.count(Verdict::Advisory), 4);
    let slow: Vec<_> = report
        .with(Verdict::Advisory)
        .filter(|c| c.clearly_slower(0.05))
        .collect();
    assert_eq!(slow.len(), 1);
    assert_eq!(slow[0].case_label(), "op=op002");
    let text = report.terminal();
    assert!(
        text.contains(
            "ADVISORY CELLS: QEMU TIMINGS AND METRICS SHOWN, NOT GATED (1 of 4 outside ±25%)"
        ),
        "{text}"
    );
    assert!(
        text.contains("op=op002") && slow[0].effect.unwrap().ratio > 1.4,
        "{text}"
    );
    assert!(last_line(&text).starts_with("PASS: "), "{text}");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn gate_a_corrupt_baseline_is_a_named_error_and_is_never_modified() {
    let mut rng = Rng::new(4);
    let r = one_suite(
        "x86_64",
        "native",
        "atomic",
        &noisy_cells(&mut rng, 3, 5, 0.01, |_| 1.0),
    );
    let dir = temp_dir("corrupt");
    let path = dir.join("x86_64").join("atomic.json");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let garbage = b"{\"format\": 1, \"target\": \"x86_64\", oops\n\xff";
    std::fs::write(&path, garbage).unwrap();

    // Bad input: nothing is compared, and the error names the file.
    let what = format!("{:#}", super::load::stored(&r, &dir).err().unwrap());
    assert!(
        what.starts_with(&format!("{}: corrupt baseline", path.display())),
        "{what}"
    );

    let err = update::record_as_is(&r, &dir, None, None, &crate::commit::test_id("c")).unwrap_err();
    let msg = format!("{err:#}");
    assert!(
        msg.contains("refusing to overwrite") && msg.contains(&path.display().to_string()),
        "{msg}"
    );
    assert_eq!(std::fs::read(&path).unwrap(), garbage);
    assert_eq!(
        std::fs::read_dir(path.parent().unwrap()).unwrap().count(),
        1
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn gate_update_refuses_when_a_check_failed_and_writes_nothing() {
    let mut rng = Rng::new(5);
    let bad = Check {
        suite: "spinlock".into(),
        bench: "contended".into(),
        case: json!({"lock": "broken"}).as_object().unwrap().clone(),
        name: "mutual_exclusion".into(),
        ok: false,
        details: json!({"violations": 2}),
    };
    let r = run(vec![
        target(
            "x86_64",
            "native",
            vec![suite_run(
                "atomic",
                &noisy_cells(&mut rng, 3, 5, 0.01, |_| 1.0),
                vec![],
            )],
        ),
        target(
            "aarch64",
            "qemu",
            vec![suite_run(
                "spinlock",
                &noisy_cells(&mut rng, 3, 5, 0.01, |_| 1.0),
                vec![bad],
            )],
        ),
    ]);
    let dir = temp_dir("refuse");
    let err = format!(
        "{:#}",
        update::record_as_is(&r, &dir, None, None, &crate::commit::test_id("c")).unwrap_err()
    );
    assert!(
        err.contains("nothing written")
            && err.contains("aarch64/spinlock: 1 failed check(s), e.g. mutual_exclusion"),
        "{err}"
    );
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "nothing at all is written"
    );
    // Leaving the broken target out records the other.
    let lines = update::record_as_is(
        &r,
        &dir,
        Some(&["x86_64".into()]),
        None,
        &crate::commit::test_id("c"),
    )
    .unwrap();
    assert_eq!(lines.len(), 1);
    // A failed check also fails the gate, listed first.
    let report = stored(&r, &dir);
    assert!(report.failed());
    let text = report.terminal();
    assert!(text.starts_with("FAILED CHECKS (1)\n  aarch64/spinlock  contended [lock=broken]  mutual_exclusion: {\"violations\":2}"), "{text}");
    assert!(
        report.problems.is_empty(),
        "the failed check is not repeated: {:?}",
        report.problems
    );
    // Unknown names are exit-status-2 errors naming the valid ones.
    let err = update::record_as_is(
        &r,
        &dir,
        Some(&["sparc".into()]),
        None,
        &crate::commit::test_id("c"),
    )
    .unwrap_err();
    assert!(
        err.to_string()
            .contains("unknown target `sparc` for this run; it has: aarch64, x86_64"),
        "{err}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn gate_update_writes_sorted_stable_json_and_a_second_update_changes_nothing() {
    let mut rng = Rng::new(6);
    let mut cells = noisy_cells(&mut rng, 3, 4, 0.01, |_| 1.0);
    cells.reverse();
    cells.push(Cell {
        bench: "contended",
        case: json!({"threads": 2, "lock": "ticket"}),
        metric: "ops_per_sec",
        gating: true,
        better: Better::Higher,
        values: vec![Some(1e6), None, Some(2e6)],
    });
    let r = one_suite("x86_64", "native", "atomic", &cells);
    let dir = temp_dir("update");
    let path = dir.join("x86_64").join("atomic.json");
    let lines = update::record_as_is(&r, &dir, None, None, &crate::commit::test_id("c1")).unwrap();
    assert_eq!(lines, [format!("{}: 4 cells (new file)", path.display())]);
    let text = std::fs::read_to_string(&path).unwrap();
    let b: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(b["format"], 3);
    assert_eq!(b["testbed"]["cpu_model"], "Test CPU @ 2.0GHz");
    assert_eq!(b["testbed"]["triple"], "x86_64-unknown-linux-gnu");
    assert_eq!(b["testbed"]["emulator_version"], Value::Null);
    assert_eq!(b["testbed"]["compiler_version"], "rustc 1.96.0");
    assert_eq!(b["commit"], crate::commit::test_id("c1").as_str());
    assert_eq!(b["date"], "2026-11-30T02:00:00Z");
    let order: Vec<String> = b["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| format!("{} {}", c["bench"].as_str().unwrap(), c["case"]))
        .collect();
    assert_eq!(
        order,
        [
            r#"contended {"lock":"ticket","threads":2}"#,
            r#"single_thread {"op":"op000"}"#,
            r#"single_thread {"op":"op001"}"#,
            r#"single_thread {"op":"op002"}"#
        ]
    );
    assert!(
        text.contains("      \"samples\": [1000000.0, null, 2000000.0],\n"),
        "{text}"
    );
    assert!(
        text.contains(
            "\"summary\": {\"n\":2,\"median\":1500000.0,\"min\":1000000.0,\"max\":2000000.0}"
        ),
        "{text}"
    );

    let again = update::record_as_is(&r, &dir, None, None, &crate::commit::test_id("c1")).unwrap();
    assert_eq!(again, [format!("{}: 4 cells, unchanged", path.display())]);
    assert_eq!(std::fs::read_to_string(&path).unwrap(), text);

    // One cell gone, one new, one with new samples, on another CPU.
    let mut changed = noisy_cells(&mut Rng::new(60), 3, 4, 0.01, |_| 1.0);
    changed.remove(0);
    changed.push(cell("new_bench", json!({}), vec![1.0, 2.0]));
    let mut cells2 = vec![];
    cells2.extend(changed);
    let r2 = run_on(
        "Other CPU",
        vec![target(
            "x86_64",
            "native",
            vec![suite_run("atomic", &cells2, vec![])],
        )],
    );
    let lines = update::record_as_is(&r2, &dir, None, None, &crate::commit::test_id("c2")).unwrap();
    assert_eq!(
        lines,
        [format!(
            "{}: 3 cells (1 new, 2 removed, 2 updated); testbed changed: cpu_model: baseline `Test CPU @ 2.0GHz`, run `Other CPU`",
            path.display()
        )]
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn gate_a_baseline_from_another_cpu_model_is_incomparable() {
    let mut rng = Rng::new(7);
    let base = run_on(
        "Intel Xeon",
        vec![target(
            "x86_64",
            "native",
            vec![suite_run(
                "atomic",
                &noisy_cells(&mut rng, 5, 10, 0.01, |_| 1.0),
                vec![],
            )],
        )],
    );
    let head = run_on(
        "AMD EPYC",
        vec![target(
            "x86_64",
            "native",
            vec![suite_run(
                "atomic",
                &noisy_cells(&mut rng, 5, 10, 0.01, |_| 1.5),
                vec![],
            )],
        )],
    );
    let (report, dir) = gate("cpu", &base, &head);
    assert!(!report.failed(), "{}", report.terminal());
    assert_eq!(report.count(Verdict::Incomparable), 5);
    assert_eq!(report.family, 0);
    // The timing is still shown.
    assert!(report.cells.iter().all(|c| c.effect.unwrap().ratio > 1.4));
    let text = report.terminal();
    assert!(
        text.contains("cpu_model: baseline `Intel Xeon`, run `AMD EPYC`: 5 timing cells on x86_64"),
        "{text}"
    );
    assert!(text.contains("5 incomparable"));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn gate_higher_is_better_metrics_compare_as_costs() {
    let mut rng = Rng::new(8);
    let ops = |rng: &mut Rng, scale: f64| Cell {
        bench: "contended",
        case: json!({"threads": 2}),
        metric: "ops_per_sec",
        gating: true,
        better: Better::Higher,
        values: (0..10)
            .map(|_| Some(rng.timing(1e6 * scale, 0.01)))
            .collect(),
    };
    let base = one_suite("x86_64", "native", "spinlock", &[ops(&mut rng, 1.0)]);
    // Throughput down to 1/1.6: costs 60% more, past a contended cell's
    // 25% threshold.
    let head = one_suite("x86_64", "native", "spinlock", &[ops(&mut rng, 0.625)]);
    let (report, dir) = gate("higher", &base, &head);
    assert!(report.failed(), "{}", report.terminal());
    let e = report.cells[0].effect.unwrap();
    assert!((1.5..1.7).contains(&e.ratio), "{e:?}");
    // The other way round it is an improvement.
    let back = stored(&base, &dir);
    assert_eq!(back.count(Verdict::Cleared), 1);
    update::record_as_is(&head, &dir, None, None, &crate::commit::test_id("c")).unwrap();
    let better = stored(&base, &dir);
    assert_eq!(
        better.count(Verdict::Improvement),
        1,
        "{}",
        better.terminal()
    );
    assert!(better.terminal().contains("IMPROVEMENTS (1)"));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn gate_non_positive_or_missing_values_are_not_comparable_and_never_fail() {
    let base_cells = vec![
        cell("a", json!({}), vec![1.0, 1.0, 1.0]),
        cell("b", json!({}), vec![1.0, 1.0, 2.0]),
    ];
    // Suites print null for what they cannot tell from zero.
    let mut base_cells = base_cells;
    base_cells[1].values[0] = None;
    let mut head_cells = vec![
        cell("a", json!({}), vec![5.0, 5.0, 5.0]),
        cell("b", json!({}), vec![9.0, 9.0, 9.0]),
    ];
    head_cells[0].values[1] = None;
    let base = one_suite("x86_64", "native", "atomic", &base_cells);
    let head = one_suite("x86_64", "native", "atomic", &head_cells);
    let (report, dir) = gate("nonpositive", &base, &head);
    assert!(!report.failed());
    assert_eq!(report.count(Verdict::NotComparable), 2);
    assert!(report.terminal().contains(
        "x86_64/atomic a [] ticks_per_op: not comparable (missing or non-positive values)"
    ));
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn gate_a_fairness_metric_without_log_values_is_advisory() {
    // A fairness cv is 0 with one thread: not comparable on a log scale,
    // and not a timing either, so it is shown as advisory, not as a problem.
    let cv = |v: f64| Cell {
        bench: "lock_unlock",
        case: json!({"lock": "tas", "threads": 1}),
        metric: "fairness_cv",
        better: Better::Lower,
        gating: false,
        values: vec![Some(v); 3],
    };
    let one = |c: Cell| one_suite("x86_64", "native", "spinlock", &[c]);
    let (report, dir) = gate("fairness", &one(cv(0.0)), &one(cv(0.0)));
    assert!(!report.failed());
    assert_eq!(
        (
            report.count(Verdict::Advisory),
            report.count(Verdict::NotComparable)
        ),
        (1, 0)
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn gate_few_rounds_are_inconclusive_with_the_rounds_needed() {
    let mut rng = Rng::new(9);
    let base = one_suite(
        "x86_64",
        "native",
        "atomic",
        &noisy_cells(&mut rng, 50, 3, 0.02, |_| 1.0),
    );
    let head = one_suite(
        "x86_64",
        "native",
        "atomic",
        &noisy_cells(&mut rng, 50, 3, 0.02, |_| 1.0),
    );
    let (report, dir) = gate("inconclusive", &base, &head);
    assert!(!report.failed());
    let text = report.terminal();
    // Three rounds can rule out a 5% slowdown of a quiet cell (cleared) but
    // never show one at alpha / 50 = 0.001: the rest are inconclusive, and
    // Mann-Whitney needs 6 rounds a side to get there.
    let inconclusive = report.count(Verdict::Inconclusive);
    assert!(inconclusive > 0, "{text}");
    assert_eq!(inconclusive + report.count(Verdict::Cleared), 50, "{text}");
    assert!(report
        .with(Verdict::Inconclusive)
        .all(|c| c.rounds_needed.unwrap() >= 6));
    assert!(
        text.contains(&format!("INCONCLUSIVE ({inconclusive})"))
            && text.contains("3 rounds; needs about"),
        "{text}"
    );
    assert_eq!(
        report.outcome(),
        super::verdict::Outcome::NotGated,
        "{text}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn gate_new_cells_and_not_run_targets_are_shown_and_pass() {
    let mut rng = Rng::new(10);
    let mut skipped = target("sparc64", "ssh", vec![]);
    skipped.status = Status::NotRun("no runner".into());
    let r = run(vec![
        target(
            "x86_64",
            "native",
            vec![suite_run(
                "atomic",
                &noisy_cells(&mut rng, 2, 5, 0.01, |_| 1.0),
                vec![],
            )],
        ),
        skipped,
    ]);
    let dir = temp_dir("new");
    let report = stored(&r, &dir);
    assert!(!report.failed());
    assert_eq!(report.count(Verdict::NoBaseline), 2);
    let text = report.terminal();
    assert!(
        text.contains("x86_64/atomic: 2 cells without a baseline"),
        "{text}"
    );
    assert!(text.contains("sparc64: not run: no runner"), "{text}");
    // A broken target fails the gate.
    let mut broken = target("mips", "qemu", vec![]);
    broken.status = Status::Failed(Failure::SetUp {
        missing: "linker not found".into(),
    });
    let r = run(vec![broken]);
    let report = stored(&r, &dir);
    assert!(report.failed());
    assert_eq!(report.problems[0].what, "failed: set-up: linker not found");
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn gate_markdown_fits_its_budget_and_keeps_the_verdict() {
    let mut rng = Rng::new(11);
    let base = one_suite(
        "aarch64",
        "qemu",
        "atomic",
        &noisy_cells(&mut rng, 400, 10, 0.01, |_| 1.0),
    );
    let head = one_suite(
        "aarch64",
        "qemu",
        "atomic",
        &noisy_cells(&mut rng, 400, 10, 0.01, |_| 1.3),
    );
    let (report, dir) = gate("markdown", &base, &head);
    let full = report.markdown(1 << 20);
    assert!(!full.contains("Report cut"));
    assert_eq!(
        full.matches("<details>").count(),
        full.matches("</details>").count()
    );
    let small = report.markdown(4096);
    assert!(small.len() <= 4096, "{}", small.len());
    assert!(small.starts_with("## lockmatrix gate: **PASS**"), "{small}");
    assert!(small.contains("Report cut to 4096 bytes"), "{small}");
    assert_eq!(
        small.matches("<details>").count(),
        small.matches("</details>").count(),
        "{small}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

#[test]
fn gate_bad_options_are_exit_2() {
    let r = run(vec![]);
    for opts in [
        GateOptions {
            threshold: Some(0.0),
            ..Default::default()
        },
        GateOptions {
            alpha: 0.7,
            ..Default::default()
        },
        GateOptions {
            clear_alpha: 1.0,
            ..Default::default()
        },
    ] {
        let reference = super::load::stored(&r, Path::new("/nonexistent")).unwrap();
        let err = evaluate(&r, &reference, &opts).unwrap_err();
        assert!(err.to_string().starts_with("gate "), "{err}");
    }
}

/// `head` gated against `base` as `--against` does: pairs, round by round.
fn paired(head: &Run, base: &Run) -> GateReport {
    evaluate(head, &Reference::Base(base), &GateOptions::default()).unwrap()
}

#[test]
fn gate_paired_a_12_percent_slower_family_cell_fails_and_drift_cancels() {
    // Both sides drift by up to 30% over the rounds (the host's state), in
    // step; head's op004 is 12% slower in every pair.
    let mut rng = Rng::new(20);
    let mut side = |slow: f64| {
        let cells: Vec<Cell> = (0..8)
            .map(|i| {
                let values = (0..30)
                    .map(|r| {
                        let drift = 1.0 + 0.01 * r as f64;
                        let s = if i == 4 { slow } else { 1.0 };
                        rng.timing(100.0 * drift * s, 0.01)
                    })
                    .collect();
                cell("single_thread", json!({"op": format!("op{i:03}")}), values)
            })
            .collect();
        one_suite("x86_64", "native", "atomic", &cells)
    };
    let base = side(1.0);
    let head = side(1.12);
    let report = paired(&head, &base);
    assert!(report.paired && report.reference.contains("base run"));
    let regressions: Vec<String> = report
        .with(Verdict::Regression)
        .map(|c| c.case_label())
        .collect();
    assert_eq!(regressions, ["op=op004"], "{}", report.terminal());
    assert!(report.timing.gated, "{}", report.timing.line());
    // How strict each suite's cells were, by kind and threshold: eight
    // quiet cells of 1% noise, all at the finest rung.
    assert_eq!(report.strictness_lines(), ["x86_64/atomic: 1-thread 5%: 8"]);
    assert!(report
        .terminal()
        .contains("STRICTNESS: what each suite's timing cells"));
    let aa = paired(&base, &base);
    assert!(!aa.failed(), "{}", aa.terminal());
}

#[test]
fn gate_a_crafted_planned_pair_count_is_bounded() {
    let mut rng = Rng::new(24);
    let mut side = || {
        let values = (0..20).map(|_| rng.timing(100.0, 0.01)).collect();
        one_suite(
            "x86_64",
            "native",
            "atomic",
            &[cell("single_thread", json!({"op": "op000"}), values)],
        )
    };
    let base = side();
    let mut head = side();
    head.against = Some(crate::results::Against {
        rev: "main".into(),
        commit: Some(crate::commit::test_id("abc")),
        acknowledged: Vec::new(),
        pairs: Some(u32::MAX),
    });
    let report = paired(&head, &base);
    let look = report.cells[0].look.unwrap();
    assert_eq!(
        look.looks,
        crate::family::MAX_PAIRS / crate::family::LOOK_EVERY
    );
}

#[test]
fn gate_paired_a_bad_value_drops_its_pair_not_the_cell() {
    let mut rng = Rng::new(23);
    let mut side = |slow: f64| {
        let values = (0..30).map(|_| rng.timing(100.0 * slow, 0.01)).collect();
        one_suite(
            "x86_64",
            "native",
            "atomic",
            &[cell("single_thread", json!({"op": "op000"}), values)],
        )
    };
    let base = side(1.0);
    let mut head = side(1.5);
    // One round of head without a value: that pair goes, the other 29 gate.
    head.targets[0].suites[0].samples[7].value = None;
    let report = paired(&head, &base);
    let c = &report.cells[0];
    assert_eq!(c.verdict, Verdict::Regression, "{}", report.terminal());
    assert_eq!(
        c.note.as_deref(),
        Some("1 pairs dropped (a missing or non-positive value)")
    );
    // A 50% slowdown of a quiet cell stops at an early look.
    assert!(c.look.unwrap().pairs < 30, "{:?}", c.look);
}

#[test]
fn gate_paired_counts_compare_exactly_and_qemu_timings_never_gate() {
    let mut rng = Rng::new(21);
    let mut side = |extra: f64, outside: f64| {
        let mut cells = noisy_cells(&mut rng, 2, 3, 0.01, |_| 1.0);
        let mut count = cell(
            "lock_unlock",
            json!({"lock": "ticket", "threads": 1}),
            vec![16.0 + extra],
        );
        count.metric = "insns_per_op";
        count.gating = false;
        let mut stress = cell("stress_s1", json!({"lock": "tas"}), vec![outside; 3]);
        stress.gating = false;
        cells.extend([count, stress]);
        one_suite("aarch64", "qemu", "spinlock", &cells)
    };
    let base = side(0.0, 100.0);
    // One more instruction: a regression even with three rounds, under
    // QEMU; a timing 3x slower there is advisory (emulator time).
    let head = side(1.0, 300.0);
    let report = paired(&head, &base);
    let failed: Vec<&str> = report
        .with(Verdict::Regression)
        .map(|c| c.metric.as_str())
        .collect();
    assert_eq!(failed, ["insns_per_op"], "{}", report.terminal());
    assert_eq!(report.counts_compared, 1);
    let text = report.terminal();
    assert!(
        text.contains("timing not gated: no timing cell on real hardware"),
        "{text}"
    );
    assert!(
        text.contains(
            "gate: 0 timing cells (0 cleared, 0 inconclusive, 0 regressions, 0 improvements), 1 instruction counts and 0 ordering footprints compared"
        ),
        "{text}"
    );
    // A native run with too few pairs says it cannot gate timing.
    let mut rng = Rng::new(22);
    let mut native = || {
        one_suite(
            "x86_64",
            "native",
            "atomic",
            &noisy_cells(&mut rng, 4, 3, 0.01, |_| 1.0),
        )
    };
    let (b, h) = (native(), native());
    let r = paired(&h, &b);
    assert!(!r.timing.gated);
    assert!(
        r.terminal()
            .contains("timing not gated: 3 pairs cannot reach p < 6.3e-3"),
        "{}",
        r.terminal()
    );
}

/// Any number a run or a baseline could hold in memory, finite or not.
fn any_value() -> impl proptest::strategy::Strategy<Value = Option<f64>> {
    use proptest::prelude::*;
    prop_oneof![
        3 => (1.0f64..1e3).prop_map(Some),
        1 => Just(None),
        1 => any::<f64>().prop_map(Some),
        1 => prop_oneof![Just(0.0), Just(-1.0), Just(f64::NAN), Just(f64::INFINITY), Just(1e100), Just(f64::MAX), Just(5e-324)].prop_map(Some),
    ]
}

/// A cell of the property test: metric, in the timing cells, head's and
/// base's values.
type AnyCell = (&'static str, bool, Vec<Option<f64>>, Vec<Option<f64>>);

/// One side of the property test's run: head (`0`) or base (`1`).
fn any_run(cells: &[AnyCell], qemu: bool, side: usize) -> Run {
    let cs: Vec<Cell> = cells
        .iter()
        .enumerate()
        .map(|(i, c)| Cell {
            bench: "b",
            case: json!({ "i": i }),
            metric: c.0,
            better: if c.0.ends_with("_avg") {
                Better::Higher
            } else {
                Better::Lower
            },
            gating: c.1,
            values: if side == 0 { c.2.clone() } else { c.3.clone() },
        })
        .collect();
    let runner = if qemu { "qemu" } else { "native" };
    run(vec![target("t", runner, vec![suite_run("s", &cs, vec![])])])
}

#[test]
fn gate_any_numbers_on_either_side_end_quickly_and_never_panic() {
    use proptest::prelude::*;
    let metric = prop_oneof![
        Just("ticks_per_op"),
        Just("insns_per_op"),
        Just("writer_ops_avg")
    ];
    let side = || prop::collection::vec(any_value(), 0..12);
    let cells = prop::collection::vec((metric, any::<bool>(), side(), side()), 1..4);
    let config = proptest::test_runner::Config {
        cases: 500,
        failure_persistence: None,
        ..Default::default()
    };
    let longest = std::cell::Cell::new(std::time::Duration::ZERO);
    proptest::test_runner::TestRunner::new(config)
        .run(&(cells, any::<bool>()), |(cells, qemu)| {
            let (head, base) = (any_run(&cells, qemu, 0), any_run(&cells, qemu, 1));
            let (tx, rx) = std::sync::mpsc::channel();
            let start = std::time::Instant::now();
            std::thread::spawn(move || {
                let opts = GateOptions::default();
                let _ = evaluate(&head, &Reference::Base(&base), &opts).map(|r| r.terminal());
                let t = &base.targets[0];
                let file =
                    update::baseline_of(&base, t, &t.suites[0], &crate::commit::test_id("c"));
                let key = (t.name.clone(), t.suites[0].suite.clone());
                let stored = Reference::Stored {
                    dir: "mem".into(),
                    files: [(key, Some(file))].into_iter().collect(),
                    acknowledged: Vec::new(),
                    recounts: Vec::new(),
                };
                let _ = evaluate(&head, &stored, &opts).map(|r| (r.markdown(64_000), r.json()));
                let _ = tx.send(());
            });
            match rx.recv_timeout(std::time::Duration::from_secs(5)) {
                Ok(()) => longest.set(longest.get().max(start.elapsed())),
                Err(e) => panic!("the gate hung or panicked ({e:?}) on {cells:?}"),
            }
            Ok(())
        })
        .unwrap();
    eprintln!("gate property test: 500 cases, longest {:?}", longest.get());
}

#[test]
fn a_format_1_runs_non_positive_times_read_as_null_a_newer_runs_are_refused() {
    let dir = temp_dir("format-1");
    let mut run = one_suite(
        "x86_64",
        "native",
        "atomic",
        &[cell(
            "single_thread",
            json!({"op": "fence"}),
            vec![3.0, 2.0],
        )],
    );
    run.targets[0].suites[0].samples[1].value = Some(-0.24);
    run.finished = Some("2030-01-01T00:00:00Z".into());
    for format in [1, crate::results::FORMAT_VERSION] {
        run.format = format;
        crate::results::write(&dir, &run).unwrap();
        let read = crate::results::read(&dir);
        if format == 1 {
            let samples = &read.unwrap().targets[0].suites[0].samples;
            assert_eq!(samples[0].value, Some(3.0));
            assert_eq!(samples[1].value, None);
        } else {
            let e = format!("{:#}", read.unwrap_err());
            assert!(
                e.contains("round 1 is -0.24: expected a positive time"),
                "{e}"
            );
        }
    }
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The ordering gate on a pair of runs whose ticket unlock lost its
/// `lwsync` (executed and static): the count fell, yet the cell is
/// `ordering_changed` and the gate fails, naming the change; a trailer
/// naming the lock makes it pass and shows it; a violated model fails
/// whatever the trailers say.
#[test]
fn gate_a_lost_barrier_is_an_ordering_change_never_an_improvement() {
    use crate::footprint::{Class, Entry, StaticFootprint};
    use crate::protocol::Executed;
    let side = |barriers: u32| {
        let mut count = cell(
            "lock_unlock",
            json!({"lock": "ticket", "threads": 1}),
            vec![12.0 + 2.0 * barriers as f64],
        );
        count.metric = "insns_per_op";
        count.gating = false;
        let mut run = one_suite("powerpc64le", "qemu", "spinlock", &[count]);
        let s = &mut run.targets[0].suites[0];
        let mut per_op = std::collections::BTreeMap::new();
        per_op.insert("lwarx r9,0,r3".to_string(), 1.0);
        if barriers > 0 {
            per_op.insert("lwsync".to_string(), barriers as f64);
        }
        s.executed.push(Executed {
            suite: "spinlock".into(),
            bench: "lock_unlock".into(),
            case: json!({"lock": "ticket", "threads": 1})
                .as_object()
                .unwrap()
                .clone(),
            round: 0,
            per_op,
            entered: Default::default(),
        });
        let entries = (0..barriers.min(1))
            .map(|_| Entry {
                class: Class::FullBarrier,
                insn: "lwsync".into(),
                count: 1,
            })
            .collect();
        s.static_footprint.push(crate::results::StaticOp {
            unit: "ticket".into(),
            op: "unlock".into(),
            footprint: StaticFootprint {
                entries,
                followed: vec!["ticket_unlock".into()],
                stopped: vec![],
                indirect_calls: 0,
                insns: 4,
            },
        });
        run
    };
    let (base, mut head) = (side(2), side(0));
    let report = paired(&head, &base);
    let text = report.terminal();
    assert!(report.failed(), "{text}");
    assert_eq!(report.count(Verdict::Improvement), 0, "{text}");
    assert_eq!(report.count(Verdict::OrderingChanged), 1, "{text}");
    assert_eq!(report.footprints_compared, 2);
    assert!(
        text.contains("powerpc64le/spinlock ticket unlock (static): lwsync 1 -> 0"),
        "{text}"
    );
    assert!(text.contains("lock_unlock [lock=ticket threads=1] (executed): lwsync 2 -> 0"));
    // The same footprints compare equal.
    assert!(paired(&base, &base).ordering.is_empty());

    head.against = Some(crate::results::Against {
        rev: "main".into(),
        commit: Some(crate::commit::test_id("abc")),
        acknowledged: vec![crate::acknowledge::Acknowledgement::parse(
            "def",
            "ticket weaker on purpose",
        )],
        pairs: None,
    });
    let acked = paired(&head, &base);
    let text = acked.terminal();
    assert!(!acked.failed(), "{text}");
    assert!(
        text.contains("ORDERING CHANGED, ACKNOWLEDGED (2)"),
        "{text}"
    );
    assert!(text.contains("[ticket (def): weaker on purpose]"), "{text}");
    assert!(acked.markdown(64_000).contains("weaker on purpose"));

    // A violated model is never acknowledged.
    head.models = Some(crate::results::violated_ticket("Causality violation"));
    let violated = paired(&head, &base);
    let text = violated.terminal();
    assert!(violated.failed(), "{text}");
    assert!(text.contains("MODEL CHECK VIOLATED (1)"), "{text}");
    assert!(text.contains("spinlock/ticket `2 threads x 2 acquisitions`: Causality violation"));
    assert!(
        text.contains("models: 1 of 1 VIOLATED: spinlock/ticket"),
        "{text}"
    );
}

/// PASS says what it rests on; a run whose counts or timing cells could
/// not be compared (another compiler, another machine) is NOT GATED, not
/// PASS, and says how to gate.
#[test]
fn gate_a_verdict_that_compared_less_than_everything_is_not_gated() {
    let side = |insns: f64| {
        let mut count = cell("lock_unlock", json!({"lock": "ticket"}), vec![insns]);
        count.metric = "insns_per_op";
        count.gating = false;
        one_suite("aarch64", "qemu", "spinlock", &[count])
    };
    let (same, dir) = gate("verdict-counts", &side(16.0), &side(16.0));
    assert_eq!(
        same.outcome(),
        verdict::Outcome::Pass,
        "{}",
        same.terminal()
    );
    assert!(
        last_line(&same.terminal()).starts_with("PASS: 1/1 instruction counts compared exactly"),
        "{}",
        same.terminal()
    );
    // The same counts from another compiler: nothing failed, nothing
    // compared.
    let mut newer = side(16.0);
    newer.targets[0].toolchain.as_mut().unwrap().version = "rustc 1.97.0".into();
    let report = stored(&newer, &dir);
    assert_eq!(report.outcome(), verdict::Outcome::NotGated);
    assert!(!report.failed());
    let text = report.terminal();
    assert!(text.contains("problems => NOT GATED"), "{text}");
    assert!(
        text.contains("NOT GATED: 1 of 1 instruction counts not compared (1 incomparable: compiler: baseline `rustc 1.96.0`, run `rustc 1.97.0`)"),
        "{text}"
    );
    assert!(text.contains("--against"), "{text}");
    assert_eq!(report.json()["result"], "not_gated");
    std::fs::remove_dir_all(dir).unwrap();

    // Timing cells measured on another machine cannot gate.
    let mut rng = Rng::new(31);
    let cells = noisy_cells(&mut rng, 3, 10, 0.01, |_| 1.0);
    let base = one_suite("x86_64", "native", "atomic", &cells);
    let (same, dir) = gate("verdict-timing", &base, &base);
    assert!(
        last_line(&same.terminal())
            .starts_with("PASS: 0/0 instruction counts compared exactly, 3/3 timing cells gated"),
        "{}",
        same.terminal()
    );
    let mut elsewhere = base.clone();
    elsewhere.host.machine = Some("m2".into());
    let report = stored(&elsewhere, &dir);
    assert_eq!(
        report.outcome(),
        verdict::Outcome::NotGated,
        "{}",
        report.terminal()
    );
    assert!(report.terminal().contains(
        "none of the 3 timing cells gated (3 incomparable: machine: baseline `m1`, run `m2`)"
    ));
    std::fs::remove_dir_all(dir).unwrap();
}

/// `run` with every value of its first suite multiplied by `factor`.
fn slowed(run: &Run, factor: f64) -> Run {
    let mut slow = run.clone();
    for s in &mut slow.targets[0].suites[0].samples {
        s.value = s.value.map(|v| v * factor);
    }
    slow
}

/// Two containers of one image share a machine id on any host: equal
/// testbed fields prove nothing there, so their timings never gate
/// against stored baselines (the output says how to gate: `--against`),
/// unless the operator names the testbed; counts still gate.
#[test]
fn gate_timings_from_a_container_gate_only_on_a_declared_testbed() {
    let mut rng = Rng::new(32);
    let cells = noisy_cells(&mut rng, 3, 10, 0.01, |_| 1.0);
    let mut base = one_suite("x86_64", "native", "atomic", &cells);
    base.host.virtualization = Some("kvm, container docker".into());
    let (report, dir) = gate("container-testbed", &base, &base);
    assert_eq!(
        report.outcome(),
        verdict::Outcome::NotGated,
        "{}",
        report.terminal()
    );
    let text = report.terminal();
    assert!(
        text.contains(
            "the baseline's testbed is unknown: it ran in a container (kvm, container docker)"
        ),
        "{text}"
    );
    assert!(text.contains("LOCKMATRIX_TESTBED=<name>"), "{text}");
    assert!(text.contains("--against"), "{text}");
    // A 40% slowdown there does not fail either: it is not measured
    // against anything known.
    assert!(!stored(&slowed(&base, 1.4), &dir).failed());
    std::fs::remove_dir_all(dir).unwrap();

    // Declared on both sides: the same container gates its timings.
    let mut declared = base.clone();
    declared.host.declared_testbed = Some("rack-3".into());
    let (same, dir) = gate("declared-testbed", &declared, &declared);
    assert_eq!(
        same.outcome(),
        verdict::Outcome::Pass,
        "{}",
        same.terminal()
    );
    assert!(stored(&slowed(&declared, 1.4), &dir).failed());
    // Another declared name is another testbed.
    let mut other = declared.clone();
    other.host.declared_testbed = Some("rack-4".into());
    assert!(stored(&other, &dir)
        .terminal()
        .contains("declared testbed: baseline `rack-3`, run `rack-4`"));
    std::fs::remove_dir_all(dir).unwrap();
}

/// `baseline update --counts-only` after a compiler update: the counts
/// and the counting testbed are the new run's, every timing cell and the
/// compiler it was measured with stay, so the counts compare again and the
/// timings say they came from the other compiler.
#[test]
fn gate_a_counts_only_update_keeps_every_timing_and_its_compiler() {
    let side = |insns: f64, ns: f64, compiler: &str| {
        let mut count = cell("lock_unlock", json!({"lock": "ticket"}), vec![insns]);
        count.metric = "insns_per_op";
        count.gating = false;
        let time = cell("lock_unlock", json!({"lock": "ticket"}), vec![ns; 10]);
        let mut run = one_suite("x86_64", "native", "spinlock", &[count, time]);
        run.targets[0].toolchain.as_mut().unwrap().version = compiler.into();
        run
    };
    let dir = temp_dir("counts-only");
    update::record_as_is(
        &side(16.0, 10.0, "rustc 1.85.0"),
        &dir,
        None,
        None,
        &crate::commit::test_id("old"),
    )
    .unwrap();
    let newer = side(15.0, 20.0, "rustc 1.96.0");
    let lines =
        update::update_counts(&newer, &dir, None, None, &crate::commit::test_id("new")).unwrap();
    assert_eq!(lines.len(), 1, "{lines:?}");
    let b = baseline::read(&dir, &"x86_64".into(), &"spinlock".into())
        .unwrap()
        .unwrap();
    let value = |metric: &str| {
        b.cells
            .iter()
            .find(|c| c.metric == metric)
            .and_then(|c| c.summary.median)
    };
    assert_eq!(value("insns_per_op"), Some(15.0));
    assert_eq!(value("ticks_per_op"), Some(10.0), "the timing stays");
    assert_eq!(b.testbed.compiler_version.as_deref(), Some("rustc 1.96.0"));
    assert_eq!(b.testbed.timings_compiler.as_deref(), Some("rustc 1.85.0"));
    assert_eq!(b.commit, crate::commit::test_id("new"));
    let report = stored(&newer, &dir);
    assert_eq!(report.counts_compared, 1, "{}", report.terminal());
    let timing = report
        .cells
        .iter()
        .find(|c| c.metric == "ticks_per_op")
        .unwrap();
    assert_eq!(timing.verdict, Verdict::Incomparable);
    assert!(
        timing
            .note
            .as_deref()
            .unwrap_or_default()
            .contains("compiler: baseline `rustc 1.85.0`"),
        "{timing:?}"
    );
    std::fs::remove_dir_all(dir).unwrap();
}

/// What decides whether counts compare is the binary: the same one counts
/// the same whatever compiler label the baseline carries, and a baseline
/// from another compiler with another binary is what `to_recount` names.
#[test]
fn gate_the_same_binary_compares_whatever_the_labels_say() {
    let side = |compiler: &str, binary: &str| {
        let mut count = cell("lock_unlock", json!({"lock": "ticket"}), vec![16.0]);
        count.metric = "insns_per_op";
        count.gating = false;
        let mut run = one_suite("aarch64", "qemu", "spinlock", &[count]);
        run.targets[0].toolchain.as_mut().unwrap().version = compiler.into();
        run.targets[0]
            .binaries
            .insert("spinlock".into(), binary.into());
        run
    };
    let dir = temp_dir("same-binary");
    update::record_as_is(
        &side("rustc 1.85.0", "aaaa"),
        &dir,
        None,
        None,
        &crate::commit::test_id("old"),
    )
    .unwrap();
    let relabelled = side("rustc 1.96.0", "aaaa");
    let report = stored(&relabelled, &dir);
    assert_eq!(report.counts_compared, 1, "{}", report.terminal());
    let reference = super::load::stored(&relabelled, &dir).unwrap();
    assert!(reference.to_recount(&relabelled).is_empty());
    let rebuilt = side("rustc 1.96.0", "bbbb");
    assert_eq!(stored(&rebuilt, &dir).counts_compared, 0);
    let reference = super::load::stored(&rebuilt, &dir).unwrap();
    let want: std::collections::BTreeMap<crate::commit::CommitId, Vec<crate::name::Name>> =
        [(crate::commit::test_id("old"), vec!["aarch64".into()])].into();
    assert_eq!(reference.to_recount(&rebuilt), want);
    std::fs::remove_dir_all(dir).unwrap();
}

/// Against stored baselines a native run's rounds are judged at the looks
/// it planned (`stored_rounds`): an unchanged family clears at the first
/// look, a slowed cell is a regression, and the two verdict lines count
/// the same cells.
#[test]
fn stored_baselines_decide_a_native_family_look_by_look() {
    let mut rng = Rng::new(41);
    let base = one_suite(
        "x86_64",
        "native",
        "atomic",
        &noisy_cells(&mut rng, 4, 20, 0.01, |_| 1.0),
    );
    let planned = |mut run: Run| {
        run.targets[0].stored_rounds = Some(30);
        run
    };
    // Five rounds: the first look; the run stopped there, decided.
    let same = planned(one_suite(
        "x86_64",
        "native",
        "atomic",
        &noisy_cells(&mut rng, 4, 5, 0.01, |_| 1.0),
    ));
    let (report, dir) = gate("stored-looks", &base, &same);
    let text = report.terminal();
    assert_eq!(report.count(Verdict::Cleared), 4, "{text}");
    for c in report.cells.iter().filter(|c| c.family) {
        let look = c.look.unwrap();
        assert_eq!((look.look, look.looks, look.pairs), (1, 6, 5), "{text}");
        assert!(c.gated);
    }
    assert!(
        last_line(&text).starts_with(
            "PASS: 0/0 instruction counts compared exactly, 4/4 timing cells gated (4 cleared, 0 regressions, 0 inconclusive)"
        ),
        "{text}"
    );
    // One cell 30% slower, ten rounds recorded: a regression by then.
    let slower = planned(one_suite(
        "x86_64",
        "native",
        "atomic",
        &noisy_cells(&mut rng, 4, 10, 0.01, |i| if i == 2 { 1.3 } else { 1.0 }),
    ));
    let report = stored(&slower, &dir);
    let text = report.terminal();
    let regressions: Vec<_> = report.with(Verdict::Regression).collect();
    assert_eq!(regressions.len(), 1, "{text}");
    assert_eq!(regressions[0].case_label(), "op=op002");
    assert!(last_line(&text).starts_with("FAIL: "), "{text}");
    // The same rounds without a plan are one look at ten rounds: the
    // fixed design of a run made with --rounds.
    let mut fixed = slower.clone();
    fixed.targets[0].stored_rounds = None;
    let report = stored(&fixed, &dir);
    let looks: Vec<usize> = report
        .cells
        .iter()
        .filter_map(|c| c.look.map(|l| l.looks))
        .collect();
    assert_eq!(looks, [1, 1, 1, 1]);
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The canary guards a stored comparison: a busier machine (a slower
/// 1-thread canary) compares no cell, never a FAIL even where one got
/// slower; a quieter one (a faster 1-thread canary) would hide a slower
/// 1-thread cell, never invent one, so its regression still fails and the
/// cells that would have cleared are not compared. The 2-thread canary
/// speaks for the contended cells alone, in either direction (on a VM it
/// moves with where the host placed the vCPUs, which moves a contended
/// cell either way).
#[test]
fn a_busier_canary_fails_nothing_and_a_quieter_one_keeps_a_regression() {
    let mut rng = Rng::new(43);
    let canary = |rng: &mut Rng, threads: u32, rounds: usize, at: f64| Cell {
        bench: "canary",
        case: json!({ "threads": threads }),
        metric: "canary_ticks_per_op",
        better: Better::Lower,
        gating: false,
        values: (0..rounds).map(|_| Some(rng.timing(at, 0.01))).collect(),
    };
    // Four 1-thread cells (op002 slowed by `slow`), a contended one
    // (slowed by `contended`), and the two canaries at `(alone, shared)`
    // ticks.
    let run = |rng: &mut Rng,
               rounds: usize,
               (alone, shared): (f64, f64),
               (slow, contended): (f64, f64)| {
        let mut cells = noisy_cells(rng, 4, rounds, 0.01, |i| if i == 2 { slow } else { 1.0 });
        let values = (0..rounds)
            .map(|_| rng.timing(300.0 * contended, 0.01))
            .collect();
        cells.push(cell("lock_unlock", json!({"threads": 2}), values));
        cells.push(canary(rng, 1, rounds, alone));
        cells.push(canary(rng, 2, rounds, shared));
        let mut run = one_suite("x86_64", "native", "atomic", &cells);
        run.targets[0].stored_rounds = Some(30);
        run
    };
    let base = run(&mut rng, 20, (5.0, 60.0), (1.0, 1.0));
    let (report, dir) = gate(
        "canary-direction",
        &base,
        &run(&mut rng, 10, (5.0, 60.0), (1.3, 1.0)),
    );
    assert_eq!(
        report.count(Verdict::Regression),
        1,
        "{}",
        report.terminal()
    );
    let noted = |report: &GateReport, what: &str| {
        report
            .cells
            .iter()
            .filter(|c| c.family && c.note.as_deref().is_some_and(|n| n.contains(what)))
            .count()
    };

    // Busier by the 1-thread canary (x1.3), op002 30% slower: nothing
    // compared, no FAIL.
    let report = stored(&run(&mut rng, 10, (6.5, 60.0), (1.3, 1.0)), &dir);
    let text = report.terminal();
    assert_eq!(report.count(Verdict::Regression), 0, "{text}");
    assert_eq!(report.count(Verdict::Cleared), 0, "{text}");
    assert_eq!(
        noted(&report, "a busier machine, not the code"),
        5,
        "{text}"
    );
    assert!(!last_line(&text).starts_with("FAIL"), "{text}");
    // Its advice is the testbed's, never rounds to record.
    let advice = report.not_gated().join("\n") + &text;
    assert!(advice.contains("its canary moved"), "{text}");
    assert!(!advice.contains("--rounds"), "{text}");

    // The 2-thread canary alone, slower or faster, the contended cell
    // twice as slow: it is not compared either way; the 1-thread cells
    // are, and op002 fails.
    for shared in [90.0, 35.0] {
        let report = stored(&run(&mut rng, 10, (5.0, shared), (1.3, 2.0)), &dir);
        let text = report.terminal();
        let regressions: Vec<_> = report.with(Verdict::Regression).collect();
        assert_eq!(regressions.len(), 1, "{text}");
        assert_eq!(regressions[0].case_label(), "op=op002");
        assert_eq!(report.count(Verdict::Cleared), 3, "{text}");
        assert_eq!(noted(&report, "canary [threads=2]"), 1, "{text}");
        assert!(last_line(&text).starts_with("FAIL: "), "{text}");
    }

    // Quieter by the 1-thread canary (x0.7): the slower 1-thread cell
    // still fails, the unchanged cells are not cleared, and the contended
    // cell twice as slow is not compared.
    let report = stored(&run(&mut rng, 10, (3.5, 60.0), (1.3, 2.0)), &dir);
    let text = report.terminal();
    let regressions: Vec<_> = report.with(Verdict::Regression).collect();
    assert_eq!(regressions.len(), 1, "{text}");
    assert_eq!(regressions[0].case_label(), "op=op002");
    assert_eq!(report.count(Verdict::Cleared), 0, "{text}");
    assert_eq!(
        noted(&report, "a quieter machine could hide a slower lock"),
        4,
        "{text}"
    );
    assert!(last_line(&text).starts_with("FAIL: "), "{text}");
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A stored baseline whose rounds can never reach the per-cell level
/// does not pass quietly: NOT GATED, with the rounds to record it with,
/// and no line counting a cell as gated that the verdict says is not.
#[test]
fn a_stored_baseline_too_short_to_gate_says_the_rounds_to_record() {
    let mut rng = Rng::new(43);
    let base = one_suite(
        "x86_64",
        "native",
        "atomic",
        &noisy_cells(&mut rng, 6, 3, 0.05, |_| 1.0),
    );
    let head = one_suite(
        "x86_64",
        "native",
        "atomic",
        &noisy_cells(&mut rng, 6, 5, 0.05, |_| 1.0),
    );
    let (report, dir) = gate("stored-short", &base, &head);
    let text = report.terminal();
    assert_eq!(
        report.outcome(),
        super::verdict::Outcome::NotGated,
        "{text}"
    );
    assert!(
        text.contains("record the baselines with at least ")
            && text.contains("`cargo xtask matrix --targets x86_64 --rounds "),
        "{text}"
    );
    let gated = report.cells.iter().filter(|c| c.family && c.gated).count();
    let cleared = report.count(Verdict::Cleared) + report.count(Verdict::Improvement);
    assert!(cleared <= gated, "a cleared cell is gated: {text}");
    assert!(
        text.contains(&format!("{gated}/6 timing cells gated")),
        "{text}"
    );
    assert!(!text.contains("record this testbed's baselines (`cargo xtask baseline update`)"));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `baseline update` refuses real-hardware timing cells too short for
/// a later run to decide against, with the rounds to record; a long
/// enough one, or QEMU timings (advisory), or the counts alone, are
/// recorded.
#[test]
fn baseline_update_refuses_a_native_family_too_short_to_decide_a_later_run() {
    let mut rng = Rng::new(47);
    let dir = temp_dir("update-short");
    let short = one_suite(
        "x86_64",
        "native",
        "atomic",
        &noisy_cells(&mut rng, 4, 3, 0.02, |_| 1.0),
    );
    let err = update_baselines(&short, &dir, None, None, &crate::commit::test_id("c"))
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("x86_64/atomic: its timing cells have 3 rounds; a later run can decide it against them only from ")
            && err.contains("`cargo xtask matrix --targets x86_64 --rounds ")
            && err.contains("nothing written"),
        "{err}"
    );
    assert!(
        std::fs::read_dir(&dir).unwrap().next().is_none(),
        "nothing written"
    );
    // The rounds it asked for are enough.
    let n: usize = err
        .split("--rounds ")
        .nth(1)
        .and_then(|t| t.split('`').next())
        .and_then(|n| n.parse().ok())
        .unwrap();
    let long = one_suite(
        "x86_64",
        "native",
        "atomic",
        &noisy_cells(&mut rng, 4, n.max(20), 0.02, |_| 1.0),
    );
    update_baselines(&long, &dir, None, None, &crate::commit::test_id("c")).unwrap();
    // Under QEMU timings are advisory: any rounds are recorded.
    let qemu = one_suite(
        "aarch64",
        "qemu",
        "atomic",
        &noisy_cells(&mut rng, 4, 1, 0.02, |_| 1.0),
    );
    update_baselines(&qemu, &dir, None, None, &crate::commit::test_id("c")).unwrap();
    update::update_counts(&short, &dir, None, None, &crate::commit::test_id("c")).unwrap();
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A timing cell with values in only some rounds (a stress run whose
/// threads never all ran at once has no per-thread shares) asks for the
/// rounds that give it the values it needs, and those are enough; at the
/// most rounds ever asked for it is recorded and said, never refused, so
/// that recording what `baseline update` names always ends.
#[test]
fn baseline_update_asks_a_sparse_cell_for_rounds_not_values() {
    let mut rng = Rng::new(59);
    let dir = temp_dir("update-sparse");
    // Cell `op000` has a value in every `every`-th round only.
    let recording = |rng: &mut Rng, rounds: usize, every: u32| {
        let mut run = one_suite(
            "x86_64",
            "native",
            "atomic",
            &noisy_cells(rng, 4, rounds, 0.02, |_| 1.0),
        );
        run.targets[0].suites[0]
            .samples
            .retain(|s| s.case["op"] != "op000" || s.round % every == 0);
        run
    };
    let update = |run: &Run| update_baselines(run, &dir, None, None, &crate::commit::test_id("c"));
    // 12 rounds, 6 values: at least the fewest values a baseline holds,
    // at the rate it has them.
    let err = update(&recording(&mut rng, 12, 2)).unwrap_err().to_string();
    let named: usize = err
        .split("--rounds ")
        .nth(1)
        .and_then(|t| t.split('`').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("{err}"));
    assert!(
        named >= 2 * crate::family::STORED_BASELINE_LEAST,
        "{named}: {err}"
    );
    assert!(err.contains("its timing cells have 12 rounds"), "{err}");
    update(&recording(&mut rng, named, 2)).unwrap();
    // The most rounds ever asked for, and still 6 values: recorded, said.
    let most = crate::family::STORED_BASELINE_MOST;
    let lines = update(&recording(&mut rng, most, 10)).unwrap();
    assert!(
        lines
            .iter()
            .any(|l| l.contains("values in too few of its rounds")
                && l.contains(&format!("(6 of {most} rounds, "))),
        "{lines:?}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// `baseline update` says when a recording's 1-thread canary spread
/// wide (the machine was busy while it recorded), and only then: a tight
/// one, or a wide 2-thread one (which moves with where the host placed
/// the vCPUs), says nothing.
#[test]
fn baseline_update_says_when_its_recording_was_busy() {
    let mut rng = Rng::new(53);
    // 30 rounds of the 1-thread canary, from 5 ticks up to `5 * busy` (a
    // machine preempting the canary more or less from round to round).
    let recording = |rng: &mut Rng, busy: f64, shared_spread: f64| {
        let mut cells = noisy_cells(rng, 4, 30, 0.02, |_| 1.0);
        let alone = (0..30)
            .map(|i| Some(rng.timing(5.0 * busy.powf(i as f64 / 29.0), 0.01)))
            .collect();
        let shared = (0..30)
            .map(|_| Some(rng.timing(60.0, shared_spread)))
            .collect();
        for (threads, values) in [(1, alone), (2, shared)] {
            cells.push(Cell {
                bench: "canary",
                case: json!({ "threads": threads }),
                metric: "canary_ticks_per_op",
                better: Better::Lower,
                gating: false,
                values,
            });
        }
        one_suite("x86_64", "native", "atomic", &cells)
    };
    let said = |run: &Run, name: &str| {
        let dir = temp_dir(name);
        let lines = update_baselines(run, &dir, None, None, &crate::commit::test_id("c")).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
        lines.into_iter().find(|l| l.contains("canary spread"))
    };
    assert_eq!(said(&recording(&mut rng, 1.0, 0.01), "update-quiet"), None);
    assert_eq!(said(&recording(&mut rng, 1.0, 0.5), "update-shared"), None);
    let line =
        said(&recording(&mut rng, 2.0, 0.01), "update-busy").expect("a busy recording is named");
    assert!(
        line.starts_with("x86_64/atomic: recorded, but its 1-thread canary spread ")
            && line.contains("record again on a quiet testbed"),
        "{line}"
    );
}

/// A Miri record of one lock: its clients raced on `failing` seeds, or
/// were not checked.
fn miri_of(failing: &[u32], not_checked: Option<&str>) -> crate::results::MiriRun {
    crate::results::MiriRun {
        results: vec![crate::miri::MiriResult {
            suite: "spinlock".into(),
            lock: "relaxedlock.RawTicketLock".into(),
            krate: "relaxedlock".into(),
            client: "2 threads x 10".into(),
            covers: "exclusion".into(),
            seeds: 32,
            preemption_rate: 0.0,
            failing_seeds: failing.to_vec(),
            first: failing.first().map(|&seed| crate::miri::Failure {
                seed,
                error: "error: Undefined Behavior: Data race detected".into(),
                at: Some("src/lib.rs:9:5".into()),
            }),
            not_checked: not_checked.map(str::to_string),
            secs: 2.0,
            cached: false,
        }],
        not_checked: None,
        toolchain: Some("miri 0.1.0".into()),
        setup_secs: None,
        build_secs: None,
        secs: 2.0,
    }
}

#[test]
fn with_nothing_to_compare_a_race_still_fails_and_only_its_flag_silences_it() {
    let mut run = one_suite("x86_64", "native", "spinlock", &[]);
    let nothing = Reference::Nothing {
        why: super::load::MEASURED_ALONE.into(),
    };
    let verdict = |run: &Run, opts: &GateOptions| evaluate(run, &nothing, opts).unwrap();
    // Clean: a pass that says it compared nothing, not NOT GATED.
    run.miri = Some(miri_of(&[], None));
    let clean = verdict(&run, &GateOptions::default());
    assert_eq!(
        clean.outcome(),
        verdict::Outcome::Pass,
        "{}",
        clean.verdict_line()
    );
    assert!(clean
        .verdict_line()
        .contains("measured, not compared (--crate without --against-crate"));
    assert!(clean
        .verdict_line()
        .contains("1/1 locks race-free under Miri"));
    // A race fails, whatever --no-gate says.
    run.miri = Some(miri_of(&[0, 3], None));
    for no_gate in [false, true] {
        let opts = GateOptions {
            no_gate,
            ..Default::default()
        };
        let raced = verdict(&run, &opts);
        assert_eq!(
            raced.outcome(),
            verdict::Outcome::Fail,
            "{}",
            raced.verdict_line()
        );
        assert!(raced.brief().contains("RACE"), "{}", raced.brief());
        assert!(
            raced
                .brief()
                .contains("reproduce: MIRIFLAGS=\"-Zmiri-seed=0"),
            "{}",
            raced.brief()
        );
    }
    // --allow-races shows it, passes, and says it did.
    let allowed = verdict(
        &run,
        &GateOptions {
            allow_races: true,
            ..Default::default()
        },
    );
    assert_eq!(allowed.outcome(), verdict::Outcome::Pass);
    assert!(
        allowed
            .verdict_line()
            .contains("--allow-races: races under Miri in 1 locks shown, not failing"),
        "{}",
        allowed.verdict_line()
    );
    assert_eq!(allowed.json()["waived"].as_array().unwrap().len(), 1);
    // What was not checked is NOT GATED (exit 1 under --require-gate).
    run.miri = Some(miri_of(&[], Some("timed out")));
    let unchecked = verdict(&run, &GateOptions::default());
    assert_eq!(unchecked.outcome(), verdict::Outcome::NotGated);
    assert_eq!(
        unchecked.not_gated(),
        ["1 locks not wholly checked under Miri"]
    );
}

#[test]
fn no_gate_waives_what_the_comparison_found_and_never_a_failed_check() {
    let mut rng = Rng::new(7);
    let mut side = |slow: f64| {
        let values = (0..30).map(|_| rng.timing(100.0 * slow, 0.01)).collect();
        one_suite(
            "x86_64",
            "native",
            "atomic",
            &[cell("single_thread", json!({"op": "cas"}), values)],
        )
    };
    let (base, head) = (side(1.0), side(1.3));
    let no_gate = GateOptions {
        no_gate: true,
        ..Default::default()
    };
    let strict = evaluate(&head, &Reference::Base(&base), &GateOptions::default()).unwrap();
    assert_eq!(
        strict.count(Verdict::Regression),
        1,
        "{}",
        strict.terminal()
    );
    assert_eq!(strict.outcome(), verdict::Outcome::Fail);
    let waived = evaluate(&head, &Reference::Base(&base), &no_gate).unwrap();
    assert_eq!(waived.count(Verdict::Regression), 1);
    assert_ne!(
        waived.outcome(),
        verdict::Outcome::Fail,
        "{}",
        waived.verdict_line()
    );
    assert!(waived.verdict_line().contains("--no-gate: 1 regressions"));
    // A failed check is no comparison: --no-gate does not hide it.
    let mut broken = head.clone();
    broken.targets[0].suites[0] = suite_run(
        "atomic",
        &[],
        vec![Check {
            suite: "atomic".into(),
            bench: "single_thread".into(),
            case: json!({"op": "cas"}).as_object().unwrap().clone(),
            name: "result".into(),
            ok: false,
            details: json!("3 != 4"),
        }],
    );
    broken.targets[0].status = broken.targets[0].suites[0].status.clone();
    let failed = evaluate(&broken, &Reference::Base(&base), &no_gate).unwrap();
    assert_eq!(
        failed.outcome(),
        verdict::Outcome::Fail,
        "{}",
        failed.verdict_line()
    );
}

#[test]
fn a_timing_cells_brief_line_gives_the_judged_estimate_and_its_interval() {
    let mut rng = Rng::new(21);
    let suite = |rng: &mut Rng, slow: f64| {
        one_suite(
            "x86_64",
            "native",
            "atomic",
            &noisy_cells(rng, 1, 20, 0.02, |_| slow),
        )
    };
    let base = suite(&mut rng, 1.0);
    let head = suite(&mut rng, 1.3);
    let (report, dir) = gate("brief-estimate", &base, &head);
    assert!(report.failed(), "{}", report.terminal());
    let brief = report.brief();
    let line = (brief.lines())
        .find(|l| l.contains("single_thread"))
        .unwrap_or_else(|| panic!("no line for the cell: {brief}"));
    // `(+31.0% [+29.4%, +32.8%])`
    let numbers: Vec<f64> = (line.split(['(', ')', '[', ']', ',', ' ']))
        .filter_map(|w| w.strip_suffix('%')?.parse().ok())
        .collect();
    let [estimate, lo, hi] = numbers[..] else {
        panic!("no estimate and interval: {line}")
    };
    assert!((20.0..40.0).contains(&estimate), "{line}");
    assert!(lo < estimate && estimate < hi, "{line}");
    std::fs::remove_dir_all(dir).unwrap();
}
