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

/// Seed 000's arm64 question from the committed variants: the same atomic
/// costs other instructions with LL/SC (Cortex-A53, no LSE) and with LSE
/// inline (`+lse`), and each variant records what it chose.
#[test]
fn cpu_variants_count_their_own_code() {
    let _cpus = shared_cpus();
    let dir = scratch_dir("variants");
    let results = dir.join("results");
    let out = xtask(&[
        "matrix",
        "--no-install",
        "--no-gate",
        "--targets",
        "arm64",
        "--suites",
        "atomic",
        "--rounds",
        "1",
        "--results",
        s(&results),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let run_dir = newest(&results);
    let run = read_json(&run_dir.join("run.json"));
    let target = |name: &str| {
        run["targets"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == name)
            .unwrap_or_else(|| panic!("no {name} in the run"))
            .clone()
    };
    let (base, llsc, lse) = (
        target("aarch64"),
        target("aarch64-llsc"),
        target("aarch64-lse"),
    );
    // What ran: a CPU-only variant runs its target's binary; +lse is
    // another build.
    let binary = |t: &Value| t["binaries"]["atomic"].as_str().unwrap().to_string();
    assert_eq!(binary(&base), binary(&llsc));
    assert_ne!(binary(&base), binary(&lse));
    assert!(base["cpu"].is_null(), "{}", base["cpu"]);
    assert_eq!(llsc["cpu"]["qemu_cpu"], "cortex-a53");
    assert_eq!(lse["cpu"]["codegen"], "-C target-feature=+crt-static,+lse");
    let command = llsc["suites"][0]["command"].as_str().unwrap();
    assert!(command.contains("-cpu cortex-a53"), "{command}");

    let c = counts(&run_dir);
    let cas = |t: &str| c[&format!("\"{t}\"/\"atomic\"/\"single_thread\"/{{\"op\":\"cas_sync\"}}")];
    let (b, l, e) = (cas("aarch64"), cas("aarch64-llsc"), cas("aarch64-lse"));
    // The outline-atomics helper costs a call over inline CAS, and its
    // LDXR/STXR fallback more than its CAS path.
    assert!(e < b && b < l, "cas_sync: lse {e}, default {b}, llsc {l}");
    std::fs::remove_dir_all(&dir).unwrap();
}
