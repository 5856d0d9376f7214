//! Instructions per operation under QEMU: exact counts that repeat from run
//! to run on every emulated target, and a gate that catches one extra
//! instruction on the ticket lock's fast path.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

mod common;
use common::*;

const QEMU_TARGETS: &str =
    "i686,aarch64,powerpc64,powerpc64le,mips32,mips64el,riscv64,sparc64,s390x";

/// Every insns_per_op value of a run: (target, suite, bench, case) -> value.
fn counts(run_dir: &Path) -> BTreeMap<String, f64> {
    let run: Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("run.json")).unwrap()).unwrap();
    let mut out = BTreeMap::new();
    for t in run["targets"].as_array().unwrap() {
        for s in t["suites"].as_array().unwrap() {
            for x in s["samples"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|x| x["metric"] == "insns_per_op")
            {
                let key = format!("{}/{}/{}/{}", t["name"], s["suite"], x["bench"], x["case"]);
                out.insert(key, x["value"].as_f64().unwrap());
            }
        }
    }
    out
}

#[test]
fn counts_repeat_exactly_and_one_extra_instruction_fails_the_gate() {
    let dir = std::env::temp_dir().join(format!("lockmatrix-insns-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let (results, baselines) = (dir.join("results"), dir.join("baselines"));
    let r = results.to_str().unwrap();
    let common = [
        "matrix",
        "--no-install",
        "--targets",
        QEMU_TARGETS,
        "--suites",
        "atomic,spinlock",
        "--rounds",
        "1",
        "--results",
        r,
    ];

    let mut first: Option<BTreeMap<String, f64>> = None;
    for i in 0..5 {
        let out = xtask(&[&common[..], &["--no-gate"]].concat());
        assert!(out.status.success(), "run {i}: {}", text(&out));
        let c = counts(&newest(&results));
        match &first {
            None => first = Some(c),
            Some(f) => assert_eq!(&c, f, "run {i} counted differently"),
        }
    }
    let first = first.unwrap();
    for t in QEMU_TARGETS.split(',') {
        // Every single-threaded cell is counted: the atomic ops and each
        // lock's uncontended lock+unlock.
        let name =
            format!("\"{t}\"/\"spinlock\"/\"lock_unlock\"/{{\"lock\":\"ticket\",\"threads\":1}}");
        assert!(
            first.contains_key(&name),
            "no ticket count on {t}: {:?}",
            first.keys().take(5).collect::<Vec<_>>()
        );
        let cas = format!("\"{t}\"/\"atomic\"/\"single_thread\"/{{\"op\":\"cas_sync\"}}");
        assert!(first[&cas] >= 1.0, "{t}: {}", first[&cas]);
    }

    let out = xtask(&[
        "baseline",
        "update",
        "--from",
        newest(&results).to_str().unwrap(),
        "--baselines",
        baselines.to_str().unwrap(),
    ]);
    assert!(out.status.success(), "{}", text(&out));

    let json = dir.join("gate.json");
    let b = baselines.to_str().unwrap();
    let out = xtask(
        &[
            &common[..],
            &[
                "--features",
                "spinlock/ticket-extra-insn",
                "--baselines",
                b,
                "--json",
                json.to_str().unwrap(),
            ],
        ]
        .concat(),
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
    let regressions: Vec<String> = report["cells"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["verdict"] == "regression")
        .map(|c| {
            format!(
                "{} {} {} {}",
                c["target"], c["bench"], c["case"], c["metric"]
            )
        })
        .collect();
    for t in QEMU_TARGETS.split(',') {
        let want = format!(
            "\"{t}\" \"lock_unlock\" {{\"lock\":\"ticket\",\"threads\":1}} \"insns_per_op\""
        );
        assert!(
            regressions.contains(&want),
            "{t} not caught: {regressions:?}"
        );
    }
    assert_eq!(
        regressions.len(),
        9,
        "only the ticket fast path changed: {regressions:?}"
    );
    assert!(
        String::from_utf8_lossy(&out.stdout).contains("lock=ticket threads=1"),
        "{}",
        text(&out)
    );
    std::fs::remove_dir_all(&dir).unwrap();
}
