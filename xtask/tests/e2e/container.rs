//! The container backend builds and runs aarch64 and powerpc64le inside
//! the image (containers/Containerfile) and counts exactly what this
//! host's apt path counts: instructions per operation, and the executed
//! and static ordering footprints of every lock operation. Like with
//! like: the image is pinned to the rustc-web the apt path used here.
//! Runs where Podman runs containers (it builds the image the first time,
//! about 6 min); elsewhere it says why it did not run.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::Path;

use crate::common::*;

const TARGETS: &str = "aarch64,powerpc64le";

/// Why this machine cannot run the test, if it cannot.
fn no_podman() -> Option<String> {
    match std::process::Command::new("podman").arg("info").output() {
        Err(e) => Some(format!("podman: {e}")),
        Ok(o) if !o.status.success() => Some(format!(
            "podman info: {}",
            String::from_utf8_lossy(&o.stderr).trim()
        )),
        Ok(_) => None,
    }
}

/// Per target: every count, and every executed and static footprint, keyed
/// by suite and cell or operation.
fn measured(run: &Value) -> BTreeMap<String, BTreeMap<String, Value>> {
    let mut out = BTreeMap::new();
    for t in run["targets"].as_array().unwrap() {
        let mut m = BTreeMap::new();
        for s in t["suites"].as_array().unwrap() {
            let suite = s["suite"].as_str().unwrap();
            for x in s["samples"].as_array().unwrap() {
                if x["metric"] == "insns_per_op" {
                    let key = format!("count {suite} {} {}", x["bench"], x["case"]);
                    m.insert(key, x["value"].clone());
                }
            }
            for (i, e) in s["executed"].as_array().unwrap().iter().enumerate() {
                m.insert(format!("executed {suite} {i}"), e.clone());
            }
            for op in s["static_footprint"].as_array().unwrap() {
                m.insert(
                    format!("static {suite} {} {}", op["unit"], op["op"]),
                    op["footprint"].clone(),
                );
            }
        }
        out.insert(t["name"].as_str().unwrap().to_string(), m);
    }
    out
}

fn matrix(results: &Path, backend: &str, env: &[(&str, &str)]) -> Value {
    let out = xtask_env(
        &[
            "matrix",
            "--backend",
            backend,
            "--no-install",
            "--no-gate",
            "--targets",
            TARGETS,
            "--suites",
            "atomic,spinlock",
            "--rounds",
            "1",
            "--results",
            s(results),
        ],
        env,
    );
    assert!(out.status.success(), "{backend}: {}", text(&out));
    let run = read_json(&newest(results).join("run.json"));
    for t in run["targets"].as_array().unwrap() {
        assert_eq!(t["status"], "ok", "{backend}: {}", t["name"]);
    }
    run
}

#[test]
fn the_container_counts_and_footprints_equal_the_apt_paths() {
    if let Some(why) = no_podman() {
        eprintln!("container: not run here: {why}");
        return;
    }
    let _cpus = shared_cpus();
    let work = scratch_dir("container");
    let apt = matrix(&work.join("apt"), "apt", &[]);
    // The image carries the release of rustc-web the apt path used.
    let version = apt["targets"][0]["toolchain"]["version"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        apt["targets"][0]["toolchain"]["what"] == "debian rustc-web",
        "the apt path here must build with Debian's rustc-web: {}",
        apt["targets"][0]["toolchain"]
    );
    let pin = version.split_whitespace().nth(1).unwrap();
    let container = matrix(
        &work.join("container"),
        "container",
        &[("LOCKMATRIX_IMAGE_RUST", pin)],
    );

    // Two sides that differ where they ran, and agree on the compiler.
    for (a, c) in apt["targets"]
        .as_array()
        .unwrap()
        .iter()
        .zip(container["targets"].as_array().unwrap())
    {
        assert_eq!(a["name"], c["name"]);
        let inside = c["virtualization"].as_str().unwrap_or("");
        assert!(inside.contains("container"), "{}: {inside}", c["name"]);
        assert!(
            !a["virtualization"]
                .as_str()
                .unwrap_or("")
                .contains("container"),
            "{}",
            a["virtualization"]
        );
        assert_eq!(a["toolchain"], c["toolchain"], "like with like");
        assert_eq!(
            a["emulator"]["version"]
                .as_str()
                .unwrap()
                .split(" (")
                .next(),
            c["emulator"]["version"]
                .as_str()
                .unwrap()
                .split(" (")
                .next(),
            "one QEMU release"
        );
    }

    let (apt, container) = (measured(&apt), measured(&container));
    // Not vacuous: every target has counts and footprints, and the
    // comparison tells two architectures apart.
    for (target, m) in &apt {
        for kind in ["count ", "executed ", "static "] {
            assert!(
                m.keys().filter(|k| k.starts_with(kind)).count() > 3,
                "{target}: no {kind}records: {:?}",
                m.keys().take(5).collect::<Vec<_>>()
            );
        }
    }
    assert_ne!(apt["aarch64"], apt["powerpc64le"]);
    for target in TARGETS.split(',') {
        let (a, c) = (&apt[target], &container[target]);
        let differ: Vec<&String> = a
            .keys()
            .chain(c.keys())
            .filter(|k| a.get(*k) != c.get(*k))
            .collect();
        assert!(
            differ.is_empty(),
            "{target}: {} of {} records differ between the apt path and the container, e.g. {:?}: {:?} vs {:?}",
            differ.len(),
            a.len(),
            differ[0],
            a.get(differ[0]),
            c.get(differ[0])
        );
    }
    std::fs::remove_dir_all(&work).unwrap();
}
