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

/// Whether Podman answers here; when it does not, the test says why it
/// did not run.
fn podman_runs() -> bool {
    let why = match std::process::Command::new("podman").arg("info").output() {
        Err(e) => format!("podman: {e}"),
        Ok(o) if !o.status.success() => {
            format!("podman info: {}", String::from_utf8_lossy(&o.stderr).trim())
        }
        Ok(_) => return true,
    };
    eprintln!("container: not run here: {why}");
    false
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
        assert_eq!(t["status"]["state"], "ok", "{backend}: {}", t["name"]);
    }
    run
}

#[test]
fn the_container_counts_and_footprints_equal_the_apt_paths() {
    if !podman_runs() {
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

    // doctor names the engine, the image the run used, its age and compilers.
    let doctor = xtask(&["doctor", "--targets", "aarch64"]);
    let said = String::from_utf8_lossy(&doctor.stdout);
    let image = container["host"]["image"].as_str().unwrap_or("?");
    assert!(said.contains("[podman version"), "{said}");
    assert!(
        said.contains(&format!("image      {image}, built ")),
        "{said}"
    );
    assert!(said.contains(&format!("suites {version}")), "{said}");

    // Two sides that differ where they ran, and agree on the compiler.
    let image = container["host"]["image"].as_str().unwrap_or("");
    assert!(
        image.starts_with("localhost/lockmatrix:"),
        "{}",
        container["host"]
    );
    assert!(apt["host"].get("image").is_none(), "{}", apt["host"]);
    for (a, c) in apt["targets"]
        .as_array()
        .unwrap()
        .iter()
        .zip(container["targets"].as_array().unwrap())
    {
        assert_eq!(a["name"], c["name"]);
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
        eprintln!("container: {target}: {} records equal", a.len());
    }
    std::fs::remove_dir_all(&work).unwrap();
}

/// Runs `matrix --backend container` for aarch64 with `env`; asserts exit
/// status 2, that nothing was built (no run directory) and that the
/// error says `fix`.
fn refused(env: &[(&str, &str)], more: &[&str], fix: &str) -> String {
    let results = scratch_dir("container-refused");
    let mut args = vec![
        "matrix",
        "--backend",
        "container",
        "--targets",
        "aarch64",
        "--results",
        s(&results),
    ];
    args.extend_from_slice(more);
    let out = xtask_env(&args, env);
    let all = text(&out);
    assert_eq!(out.status.code(), Some(2), "{all}");
    assert!(all.contains(fix), "no {fix:?} in: {all}");
    assert_eq!(
        std::fs::read_dir(&results).unwrap().count(),
        0,
        "something was run: {all}"
    );
    std::fs::remove_dir_all(&results).unwrap();
    all
}

#[test]
fn set_up_errors_are_exit_2_with_their_fix_before_anything_is_built() {
    // No engine on PATH.
    refused(
        &[("PATH", "/nonexistent")],
        &[],
        "install Podman (Fedora: `sudo dnf install podman`",
    );
    refused(
        &[("LOCKMATRIX_ENGINE", "nerdctl")],
        &[],
        "set it to podman or docker",
    );
    // Bad input is said before the backend is even chosen.
    let all = refused(&[], &["--suites", "nonsense"], "nonsense");
    assert!(!all.contains("backend: container"), "{all}");
    // A docker client whose daemon does not answer, where this machine
    // has one (this VM's `docker` is a client only).
    let daemonless = std::process::Command::new("docker")
        .arg("info")
        .output()
        .is_ok_and(|o| !o.status.success());
    if daemonless {
        refused(
            &[("LOCKMATRIX_ENGINE", "docker")],
            &[],
            "`sudo systemctl start docker`, or install Podman",
        );
    } else {
        eprintln!("container: no daemonless docker client here: that case not run");
    }
}

#[test]
fn a_failing_image_build_is_exit_2_with_its_log_and_command() {
    if !podman_runs() {
        return;
    }
    let _cpus = shared_cpus();
    let work = scratch_dir("container-build");
    let repo = work.join("repo");
    crate::scratch::scratch_repo(&repo);
    // A package Debian does not have: a new image, whose apt-get fails.
    crate::scratch::commit_edit(
        &repo,
        "targets.yaml",
        "gcc-aarch64-linux-gnu,",
        "gcc-aarch64-linux-gnu, gcc-nonsense-linux-gnu,",
        "a package Debian lacks",
    );
    let results = work.join("results");
    let out = xtask_in(
        &repo,
        &[
            "matrix",
            "--backend",
            "container",
            "--targets",
            "aarch64",
            "--results",
            s(&results),
        ],
    );
    let all = text(&out);
    // What matters, not another program's words or option order: exit 2
    // before anything ran, the log named and holding the failure (the
    // package), and the command shown being one that fails the same way.
    assert_eq!(out.status.code(), Some(2), "{all}");
    assert!(all.contains("building the image failed"), "{all}");
    assert_eq!(
        std::fs::read_dir(&results).map_or(0, |d| d.count()),
        0,
        "{all}"
    );
    let log = all
        .split("its log is ")
        .nth(1)
        .and_then(|r| r.split(" and ends").next())
        .unwrap_or_else(|| panic!("no log named: {all}"));
    let logged = std::fs::read_to_string(log).unwrap_or_else(|e| panic!("{log}: {e}"));
    assert!(logged.contains("gcc-nonsense-linux-gnu"), "{log}: {logged}");
    let command = all
        .lines()
        .skip_while(|l| !l.starts_with("run it again to see it whole:"))
        .nth(1)
        .unwrap_or_else(|| panic!("no command shown: {all}"))
        .trim();
    assert!(
        command.contains("gcc-nonsense-linux-gnu") && command.contains("Containerfile"),
        "{command}"
    );
    let again = std::process::Command::new("sh")
        .args(["-c", command])
        .current_dir(&repo)
        .output()
        .unwrap();
    assert!(!again.status.success(), "{command}: {}", text(&again));
    assert!(
        text(&again).contains("gcc-nonsense-linux-gnu"),
        "{command}: {}",
        text(&again)
    );
    std::fs::remove_dir_all(&work).unwrap();
}
