//! Instructions per operation under QEMU: exact counts that repeat from run
//! to run on every emulated target and on x86_64's counted run. (That the
//! gate catches a changed count is `against.rs`'s test.)

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

use crate::common::*;

const COUNTED_TARGETS: &str =
    "x86_64,i686,aarch64,powerpc64,powerpc64le,mips32,mips64el,riscv64,sparc64,s390x";

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
fn counts_repeat_exactly_on_every_counted_target() {
    let _cpus = shared_cpus();
    let dir = std::env::temp_dir().join(format!("lockmatrix-insns-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let results = dir.join("results");
    let r = results.to_str().unwrap();
    let common = [
        "matrix",
        "--no-install",
        "--targets",
        COUNTED_TARGETS,
        "--suites",
        "atomic,spinlock",
        "--rounds",
        "1",
        "--results",
        r,
    ];

    let mut first: Option<BTreeMap<String, f64>> = None;
    for i in 0..3 {
        let out = xtask(&[&common[..], &["--no-gate"]].concat());
        assert!(out.status.success(), "run {i}: {}", text(&out));
        let c = counts(&newest(&results));
        match &first {
            None => first = Some(c),
            Some(f) => assert_eq!(&c, f, "run {i} counted differently"),
        }
    }
    let first = first.unwrap();
    for t in COUNTED_TARGETS.split(',') {
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

    std::fs::remove_dir_all(&dir).unwrap();
}
