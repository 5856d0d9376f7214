//! Stored baselines gate timings on a known testbed at the default
//! settings, as the README's flow does it: record a native target's
//! baselines (`baseline update` says how many rounds they need), run the
//! matrix with no flags, and its timing cells is decided look by look
//! against them; a slowdown committed into a lock fails by name.
//!
//! The thresholds are wide (6: a cell fails only when 4 times slower) so
//! that the load of a shared 2-vCPU machine, which moves single-thread
//! cells by up to 2.3x between runs minutes apart, cannot fail the
//! unchanged tree; the slowdown injected is about a hundredfold. What is
//! tested is the mechanism (the plan, the looks, the verdict lines), not
//! the statistics' power, which `gate::tests` and `validate-gate` measure.

use serde_json::Value;
use std::path::Path;
use std::process::{Command, Output};

use crate::common::*;
use crate::scratch::*;

const TESTBED: &str = "e2e-stored";
const WIDE: [&str; 4] = ["--quiet-threshold", "6", "--threshold", "6"];

/// `cargo xtask ARGS` in `dir` on the declared testbed.
fn on_testbed(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .env("LOCKMATRIX_TESTBED", TESTBED)
        .current_dir(dir)
        .output()
        .expect("xtask runs")
}

/// Records x86_64's spinlock baselines in `repo` and commits them: 10
/// rounds first, which `baseline update` refuses by naming the rounds
/// to record when they are too few; then the most it ever names (60),
/// which it always records (a cell still short of values at 60 rounds is
/// said, not refused). Recording the rounds it names, which a new
/// recording's noise may find short again, is `gate::tests`'; here it
/// would cost a third recording.
fn record(repo: &Path, results: &Path) {
    let most = lockmatrix::family::STORED_BASELINE_MOST;
    let mut refused = None;
    for rounds in [10, most] {
        let rounds = rounds.to_string();
        let out = on_testbed(
            repo,
            &[
                "matrix",
                "--no-install",
                "--no-gate",
                "--targets",
                "x86_64",
                "--suites",
                "spinlock",
                "--rounds",
                &rounds,
                "--results",
                s(results),
            ],
        );
        assert!(out.status.success(), "{}", text(&out));
        let run = newest(results);
        let update = on_testbed(
            repo,
            &[
                "baseline",
                "update",
                "--suites",
                "spinlock",
                "--from",
                s(&run),
            ],
        );
        let said = text(&update);
        if update.status.success() {
            git(repo, &["commit", "-qam", "baselines of this testbed"]);
            return;
        }
        let named: Option<usize> = said
            .split("--rounds ")
            .nth(1)
            .and_then(|t| t.split('`').next())
            .and_then(|n| n.parse().ok());
        assert!(
            named.is_some_and(|n| n > 10 && n <= most),
            "a refusal of {rounds} rounds without the rounds to record: {said}"
        );
        refused = Some(said);
    }
    panic!(
        "baseline update refused {most} rounds: {}",
        refused.unwrap_or_default()
    );
}

/// Whether every count of rounds is one of the stored looks' (every 5,
/// at most the run's 30) and more than half are the first's (5).
fn at_looks_most_at_the_first(rounds: impl Iterator<Item = usize>) -> bool {
    let rounds: Vec<usize> = rounds.collect();
    let at_first = rounds.iter().filter(|n| **n == 5).count();
    !rounds.is_empty()
        && rounds.iter().all(|n| n % 5 == 0 && (5..=30).contains(n))
        && at_first * 2 > rounds.len()
}

/// The rounds each lock's 1-thread lock+unlock cell of `run`'s x86_64
/// spinlock ran.
fn family_rounds(run: &Value) -> Vec<(String, usize)> {
    let mut out: std::collections::BTreeMap<String, std::collections::BTreeSet<u64>> =
        Default::default();
    for t in run["targets"].as_array().unwrap() {
        for s in t["suites"].as_array().unwrap() {
            for x in s["samples"].as_array().unwrap() {
                if x["case"]["threads"] == 1 && x["metric"] == "ticks_per_acquire" {
                    out.entry(x["case"]["lock"].as_str().unwrap().to_string())
                        .or_default()
                        .insert(x["round"].as_u64().unwrap());
                }
            }
        }
    }
    out.into_iter().map(|(k, v)| (k, v.len())).collect()
}

#[test]
fn stored_baselines_gate_a_native_family_at_the_defaults_look_by_look() {
    let _cpus = shared_cpus();
    let work = scratch_dir("stored");
    let (repo, results) = (work.join("repo"), work.join("results"));
    scratch_repo(&repo);
    record(&repo, &results);

    // The unchanged tree, no flags but the wide thresholds: every family
    // cell cleared at the first look (5 rounds), the plan recorded.
    let json = work.join("same.json");
    let mut args = vec![
        "matrix",
        "--no-install",
        "--targets",
        "x86_64",
        "--suites",
        "spinlock",
        "--results",
        s(&results),
        "--json",
        s(&json),
    ];
    args.extend(WIDE);
    // The full report: the gate's line on the looks.
    args.push("--tables");
    let out = on_testbed(&repo, &args);
    let shown = text(&out);
    assert_eq!(out.status.code(), Some(0), "{shown}");
    let report = read_json(&json);
    // The 2-thread canary moves with where the host placed the two vCPUs,
    // from one mode to another between a recording and a check on a
    // shared VM (a CI run here: x1.50, 95% interval x1.12 to x3.75): then
    // the contended cells are not compared, NOT GATED with the shift
    // named, never FAIL, and the 1-thread cells still gate. Anything else
    // but a pass fails the test.
    let family: Vec<&Value> = (report["cells"].as_array().unwrap().iter())
        .filter(|c| c["family"] == true)
        .collect();
    let incomparable: Vec<&&Value> = (family.iter())
        .filter(|c| c["verdict"] == "incomparable")
        .collect();
    let by_canary = !incomparable.is_empty()
        && incomparable.iter().all(|c| {
            c["case"]["threads"] == 2
                && c["note"]
                    .as_str()
                    .is_some_and(|n| n.contains("(canary [threads=2] x"))
        });
    match report["result"].as_str() {
        Some("pass") => {}
        Some("not_gated") if by_canary => {
            let alone = family.iter().filter(|c| c["case"]["threads"] == 1);
            assert!(alone.clone().count() >= 5, "{shown}");
            assert!(alone.clone().all(|c| c["verdict"] == "cleared"), "{shown}");
            eprintln!(
                "stored: the 2-thread canary moved between recording and check ({} contended cells not compared): {}",
                incomparable.len(),
                incomparable[0]["note"]
            );
        }
        _ => panic!("expected a pass: {shown}"),
    }
    assert_gate_agrees(&repo, &newest(&results), &out, &report, &WIDE);
    let run = read_json(&newest(&results).join("run.json"));
    assert_eq!(run["targets"][0]["stored_rounds"], 30, "{shown}");
    let rounds = family_rounds(&run);
    assert!(rounds.len() >= 5, "{rounds:?}");
    assert!(
        at_looks_most_at_the_first(rounds.iter().map(|(_, n)| *n)),
        "{rounds:?}\n{shown}"
    );
    // Every timing cell, 1-thread and contended, decided at a look, most
    // at the first (a CI runner held a contended cell to the second):
    // none regressed, none left undecided.
    assert_eq!(report["counts"]["regression"], 0, "{shown}");
    assert_eq!(report["counts"]["inconclusive"], 0, "{shown}");
    let timed = report["cells"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["family"] == true)
        .count();
    assert!(timed > rounds.len(), "contended cells gate too: {timed}");
    assert!(shown.contains("0 regressions, 0 inconclusive)"), "{shown}");
    let cleared: Vec<usize> = (family.iter())
        .filter(|c| c["verdict"] == "cleared")
        .map(|c| c["look"]["pairs"].as_u64().unwrap() as usize)
        .collect();
    assert!(
        at_looks_most_at_the_first(cleared.iter().copied()),
        "{cleared:?}\n{shown}"
    );
    // The report's line: the cleared cells, by the most rounds one took.
    let line = format!(
        "x86_64/spinlock: {} cells, by {} rounds",
        cleared.len(),
        cleared.iter().max().unwrap()
    );
    assert!(shown.contains(&line), "{line}\n{shown}");

    // About a hundredfold slower ticket lock: a regression at a look, by
    // name, while the other locks stop at the first.
    let fast_path = "        let ticket = self.next.fetch_add(1, Relaxed);";
    commit_edit(
        &repo,
        "suites/spinlock/src/locks/ticket.rs",
        fast_path,
        &format!("        for i in 0..3000u32 {{\n            std::hint::black_box(i);\n        }}\n{fast_path}"),
        "ticket: spin before taking a ticket",
    );
    let json = work.join("slower.json");
    let mut args = vec![
        "matrix",
        "--no-install",
        "--targets",
        "x86_64",
        "--suites",
        "spinlock",
        "--results",
        s(&results),
        "--json",
        s(&json),
    ];
    args.extend(WIDE);
    let out = on_testbed(&repo, &args);
    let shown = text(&out);
    assert_eq!(out.status.code(), Some(1), "{shown}");
    let report = read_json(&json);
    let regressed: Vec<&Value> = report["cells"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["verdict"] == "regression" && c["family"] == true)
        .collect();
    assert!(
        !regressed.is_empty()
            && regressed
                .iter()
                .all(|c| c["case"]["lock"] == "ticket" && c["look"]["unit"] == "rounds"),
        "{shown}"
    );
    let run = read_json(&newest(&results).join("run.json"));
    let rounds = family_rounds(&run);
    let ticket = rounds.iter().find(|(l, _)| l == "ticket").unwrap().1;
    assert!((5..=30).contains(&ticket), "{rounds:?}");
    // The others stop at a look too, most at the first (a busy machine
    // may hold one to the next).
    let others: Vec<usize> = rounds
        .iter()
        .filter(|(l, _)| l != "ticket")
        .map(|(_, n)| *n)
        .collect();
    assert!(
        at_looks_most_at_the_first(others.iter().copied()),
        "{rounds:?}"
    );
    std::fs::remove_dir_all(&work).unwrap();
}

/// A stored comparison is unpaired: a busier machine moves every cell.
/// Recorded on a quiet machine, checked under a CPU hog per CPU (two here;
/// on a bigger runner, two would leave the suites' threads idle CPUs of
/// their own, and nothing would move), the run never
/// fails: its canary moved, and its timings are not compared (NOT GATED,
/// the shift named). Under the same hogs, a real slowdown still fails
/// through `--against`, whose pairs share the machine's state.
#[test]
fn a_busier_testbed_is_never_a_slower_lock_and_against_still_fails_a_real_one() {
    let _cpus = exclusive_cpus();
    let work = scratch_dir("stored-canary");
    let (repo, results) = (work.join("repo"), work.join("results"));
    let base = scratch_repo(&repo);
    record(&repo, &results);
    let recorded = read_json(&repo.join("baselines/x86_64/spinlock.json"));
    assert!(
        recorded.to_string().contains("canary_ticks_per_op"),
        "the baseline records the canary"
    );

    let hog = Hog::start(std::thread::available_parallelism().map_or(2, |n| n.get()));
    let json = work.join("busy.json");
    let out = on_testbed(
        &repo,
        &[
            "matrix",
            "--no-install",
            "--targets",
            "x86_64",
            "--suites",
            "spinlock",
            "--results",
            s(&results),
            "--json",
            s(&json),
        ],
    );
    let shown = text(&out);
    let report = read_json(&json);
    assert_ne!(out.status.code(), Some(1), "{shown}");
    assert_ne!(report["result"], "fail", "{shown}");
    let differs = report["cells"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| {
            c["note"].as_str().is_some_and(|n| {
                n.contains("the testbed's state differs from the baseline's (canary")
            })
        })
        .count();
    assert!(differs > 0, "the canary's move is named: {shown}");

    // The same hogs, a real slowdown, paired with its base: FAIL.
    let fast_path = "        let ticket = self.next.fetch_add(1, Relaxed);";
    commit_edit(
        &repo,
        "suites/spinlock/src/locks/ticket.rs",
        fast_path,
        &format!("        for i in 0..3000u32 {{\n            std::hint::black_box(i);\n        }}\n{fast_path}"),
        "ticket: spin before taking a ticket",
    );
    let json = work.join("against.json");
    let out = on_testbed(
        &repo,
        &[
            "matrix",
            "--no-install",
            "--against",
            &base,
            "--targets",
            "x86_64",
            "--suites",
            "spinlock",
            "--no-insns",
            "--results",
            s(&results),
            "--json",
            s(&json),
        ],
    );
    drop(hog);
    let shown = text(&out);
    assert_eq!(out.status.code(), Some(1), "{shown}");
    let report = read_json(&json);
    assert!(
        report["cells"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["verdict"] == "regression"
                && c["case"]["lock"] == "ticket"
                && c["case"]["threads"] == 1),
        "{shown}"
    );
    std::fs::remove_dir_all(&work).unwrap();
}
