//! End-to-end tests of `cargo xtask matrix` with the real thing: real cross
//! compilers, real `qemu-<arch>`, the native host. `cargo xtask test`
//! installs the packages first; these tests never install anything.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Output;

use crate::common::*;

/// Runs the matrix into a fresh results directory and returns the output
/// and the parsed run.json.
fn matrix(name: &str, args: &[&str]) -> (Output, Value, PathBuf) {
    let results = scratch_dir(name);
    // The gate has its own tests; here timing noise must not decide the exit.
    let mut all = vec![
        "matrix",
        "--no-install",
        "--no-gate",
        "--results",
        results.to_str().unwrap(),
    ];
    all.extend_from_slice(args);
    let out = xtask(&all);
    let run_dir = std::fs::read_dir(&results)
        .unwrap()
        .next()
        .expect("a run directory")
        .unwrap()
        .path();
    let run: Value =
        serde_json::from_str(&std::fs::read_to_string(run_dir.join("run.json")).unwrap()).unwrap();
    (out, run, run_dir)
}

fn target<'a>(run: &'a Value, name: &str) -> &'a Value {
    run["targets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("no target {name}"))
}

#[test]
fn atomic_suite_runs_under_qemu_and_natively() {
    let _cpus = shared_cpus();
    let (out, run, _) = matrix(
        "atomic",
        &[
            "--targets",
            "x86_64,aarch64,powerpc64,mips32",
            "--suites",
            "atomic",
            "--rounds",
            "2",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    for (name, arch, endian, bits) in [
        ("x86_64", "x86_64", "little", 64),
        ("aarch64", "aarch64", "little", 64),
        ("powerpc64", "powerpc64", "big", 64),
        ("mips32", "mips", "big", 32),
    ] {
        let t = target(&run, name);
        assert_eq!(t["status"]["state"], "ok", "{name}: {t}");
        let suite = &t["suites"][0];
        let env = &suite["env"];
        assert_eq!(
            (
                env["arch"].as_str(),
                env["endian"].as_str(),
                env["pointer_width"].as_u64()
            ),
            (Some(arch), Some(endian), Some(bits)),
            "{name}"
        );
        // 32-bit MIPS has no 64-bit atomics; the suite must say so, not fake them.
        assert_eq!(
            env["variants"]["atomic_64bit"],
            Value::Bool(bits == 64),
            "{name}"
        );
        let checks = suite["checks"].as_array().unwrap();
        assert!(
            checks.len() >= 10 && checks.iter().all(|c| c["ok"] == true),
            "{name}: {checks:?}"
        );
        let samples = suite["samples"].as_array().unwrap();
        for op in ["cas_local", "cas_sync", "irq_disable", "irq_enable"] {
            let of = |metric: &str| {
                samples
                    .iter()
                    .filter(|s| s["case"]["op"] == op && s["metric"] == metric)
                    .count()
            };
            assert_eq!(
                of("ticks_per_op"),
                2,
                "{name}: {op} should have one sample per round"
            );
            // The plugin counts instructions once per cell: under the QEMU
            // targets' emulator, and x86_64's in its counted run
            // (counted_under: qemu-x86_64).
            assert_eq!(of("insns_per_op"), 1, "{name}: {op}");
        }
        let command = suite["command"].as_str().unwrap();
        if name != "x86_64" {
            assert!(
                command.contains(&format!(
                    "qemu-{}",
                    if name == "mips32" {
                        "mips"
                    } else if name == "powerpc64" {
                        "ppc64"
                    } else {
                        name
                    }
                )),
                "{command}"
            );
        }
    }
    assert_eq!(target(&run, "x86_64")["suites"][0]["env"]["timer"], "rdtsc");
    assert_eq!(
        target(&run, "aarch64")["suites"][0]["env"]["timer"],
        "cntvct_el0"
    );
    assert!(run["host"]["kernel"].is_string() && run["host"]["cpu_model"].is_string());
    assert!(target(&run, "aarch64")["emulator"]["version"]
        .as_str()
        .unwrap()
        .contains("qemu-aarch64 version"));
    let table = String::from_utf8_lossy(&out.stdout);
    assert!(table.contains("4 ok, 0 failed, 0 not run"), "{table}");
}

#[test]
fn a_hang_a_crash_and_garbage_are_reported_and_the_others_still_run() {
    let _cpus = shared_cpus();
    let (out, run, dir) = matrix(
        "faulty",
        &[
            "--targets",
            "aarch64,powerpc64,mips32,x86_64",
            "--suites",
            "faulty",
            "--timeout",
            "5",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let status = |name: &str| target(&run, name)["status"].clone();
    assert_eq!(
        status("aarch64")["reason"],
        "faulty: crashed: signal 11 (SIGSEGV)"
    );
    assert_eq!(
        status("powerpc64")["reason"],
        "faulty: hung: killed after the 5s timeout"
    );
    let garbage = status("mips32")["reason"].as_str().unwrap().to_string();
    assert!(
        garbage.starts_with("faulty: bad output on line 2: `hello from mips, this is not JSON`"),
        "{garbage}"
    );
    assert_eq!(status("x86_64")["state"], "ok");
    // The crash's earlier records were kept.
    assert!(target(&run, "aarch64")["suites"][0]["env"]["arch"] == "aarch64");
    assert!(std::fs::read_to_string(dir.join("powerpc64/faulty.jsonl"))
        .unwrap()
        .contains("\"type\":\"env\""));
    let table = String::from_utf8_lossy(&out.stdout);
    for line in [
        "crashed: signal 11 (SIGSEGV)",
        "hung: killed after the 5s timeout",
        "bad output on line 2",
        "1 ok, 3 failed, 0 not run",
    ] {
        assert!(table.contains(line), "missing {line:?} in\n{table}");
    }
}

#[test]
fn a_second_run_without_changes_rebuilds_nothing() {
    let _cpus = shared_cpus();
    let args = [
        "--targets",
        "x86_64,mips32",
        "--suites",
        "atomic",
        "--rounds",
        "1",
    ];
    let (first, first_run, _) = matrix("rebuild-1", &args);
    assert!(first.status.success(), "{}", text(&first));
    let (second, run, dir) = matrix("rebuild-2", &args);
    assert!(second.status.success(), "{}", text(&second));
    for t in ["x86_64", "mips32"] {
        let log = std::fs::read_to_string(dir.join(format!("logs/build-{t}.log"))).unwrap();
        assert!(!log.contains("Compiling"), "{t} rebuilt:\n{log}");
        assert!(log.starts_with("built before (build key "), "{t}:\n{log}");
        // What ran is what the first run built, by hash (a build time
        // would depend on the machine's load).
        assert_eq!(
            target(&run, t)["binaries"],
            target(&first_run, t)["binaries"],
            "{t}"
        );
    }
}

#[test]
fn bad_targets_file_exits_2_naming_file_line_and_column() {
    let _cpus = shared_cpus();
    let dir = scratch_dir("badconfig");
    let path = dir.join("targets.yaml");
    let good =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../targets.yaml"))
            .unwrap();
    std::fs::write(
        &path,
        good.replacen(
            "    enabled: true\n",
            "    enabled: true\n    speed: fast\n",
            1,
        ),
    )
    .unwrap();
    let out = xtask(&["matrix", "--config", path.to_str().unwrap(), "--no-install"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains(&format!("{}:", path.display())) && err.contains("unknown field `speed`"),
        "{err}"
    );
    // The file is left as the user wrote it.
    assert!(std::fs::read_to_string(&path)
        .unwrap()
        .contains("speed: fast"));
}

#[test]
fn unknown_names_exit_2_listing_the_valid_ones() {
    let _cpus = shared_cpus();
    let out = xtask(&["matrix", "--targets", "ia64", "--no-install"]);
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("unknown target 'ia64'")
            && err.contains("sparc64")
            && err.contains("ia64-class"),
        "{err}"
    );
    let out = xtask(&["matrix", "--suites", "mutex", "--no-install"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("Valid suites: all, atomic, spinlock, rwsem")
    );
}

#[test]
fn doctor_names_toolchain_linker_and_emulator_of_every_target() {
    let _cpus = shared_cpus();
    let out = xtask(&["doctor"]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{stdout}");
    for triple in [
        "x86_64-unknown-linux-gnu",
        "mips-unknown-linux-gnu",
        "s390x-unknown-linux-gnu",
        "sparc64-unknown-linux-gnu",
    ] {
        assert!(stdout.contains(triple), "{stdout}");
    }
    assert!(
        stdout.contains("/usr/bin/qemu-s390x")
            && stdout.contains("-Zbuild-std")
            && stdout.contains("prebuilt std"),
        "{stdout}"
    );
    assert!(
        stdout.contains("suites need Rust 1.85.0 or newer (rust-version)")
            && stdout.contains("counted    /usr/bin/qemu-x86_64"),
        "{stdout}"
    );
}

/// The compiler `doctor` names for a target, e.g. `rustc 1.85.0 (...)`.
fn doctor_compiler(target: &str) -> String {
    let out = xtask(&["doctor", "--targets", target]);
    let stdout = String::from_utf8_lossy(&out.stdout).to_string();
    let line = stdout
        .lines()
        .find(|l| l.trim_start().starts_with("toolchain"))
        .unwrap_or_else(|| panic!("no toolchain line: {stdout}"));
    let start = line.find('[').unwrap() + 1;
    line[start..line.find(']').unwrap()].to_string()
}

#[test]
fn every_suite_builds_with_the_compiler_the_matrix_uses_for_qemu_targets() {
    let _cpus = shared_cpus();
    // The QEMU targets build std and the suites with whatever compiler this
    // machine has (Debian's rustc-web: 1.85 on some machines, 1.96 on
    // others); the suites' rust-version must hold for the oldest.
    let compiler = doctor_compiler("riscv64");
    let (out, run, _) = matrix(
        "msrv",
        &[
            "--targets",
            "riscv64",
            "--suites",
            "all",
            "--rounds",
            "1",
            "--no-insns",
            "--tables",
        ],
    );
    assert!(out.status.success(), "{}", text(&out));
    let t = target(&run, "riscv64");
    assert_eq!(t["toolchain"]["version"], compiler.as_str());
    assert_eq!(t["build_std"], true);
    let ran: Vec<&str> = (t["suites"].as_array().unwrap().iter())
        .map(|s| s["suite"].as_str().unwrap())
        .collect();
    assert_eq!(ran, ["atomic", "spinlock", "rwsem", "atomic-c"]);
    // The C twin was built by the target's gcc, not the toolchain above.
    assert!(t["compilers"]["atomic-c"]["version"]
        .as_str()
        .unwrap()
        .starts_with("riscv64-linux-gnu-gcc"));

    // Every lock, shipped or ours, ran its checks and passed them, and the
    // run names the crates the shipped ones come from at Cargo.lock's pins.
    for suite in (t["suites"].as_array().unwrap().iter())
        .filter(|s| s["suite"] != "atomic" && s["suite"] != "atomic-c")
    {
        let crates = suite["env"]["variants"]["lock_crates"].as_object().unwrap();
        for lock in crates.keys() {
            let checks: Vec<&Value> = suite["checks"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|c| c["case"]["lock"] == lock.as_str())
                .collect();
            assert!(
                !checks.is_empty() && checks.iter().all(|c| c["ok"] == true),
                "{}: {lock}: {checks:?}",
                suite["suite"]
            );
        }
    }
    let lock = std::fs::read_to_string(repo_root().join("Cargo.lock")).unwrap();
    let pinned = |name: &str| {
        let needle = format!("name = \"{name}\"\nversion = \"");
        let v = &lock[lock.find(&needle).unwrap() + needle.len()..];
        v[..v.find('"').unwrap()].to_string()
    };
    assert_eq!(
        run["lock_crates"],
        serde_json::json!({
            "parking_lot": pinned("parking_lot"),
            "spin": pinned("spin"),
            "std": "of each target's toolchain",
        })
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    let line = format!(
        "locks from other crates: parking_lot {} (parking_lot_fair_mutex, parking_lot_mutex, parking_lot_rwlock)",
        pinned("parking_lot")
    );
    assert!(stdout.contains(&line), "{stdout}");
}

#[test]
fn the_broken_lock_is_caught_on_native_x86_64() {
    let _cpus = shared_cpus();
    let (out, run, _) = matrix(
        "broken",
        &[
            "--targets",
            "x86_64",
            "--suites",
            "spinlock",
            "--features",
            "spinlock/broken-lock",
            "--rounds",
            "2",
        ],
    );
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    let suite = &target(&run, "x86_64")["suites"][0];
    let failed: Vec<&Value> = suite["checks"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["ok"] == false)
        .collect();
    assert!(
        !failed.is_empty() && failed.iter().all(|c| c["case"]["lock"] == "broken"),
        "{failed:?}"
    );
    let reason = target(&run, "x86_64")["status"]["reason"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        reason.contains("spinlock: check") && reason.contains("lock=broken"),
        "{reason}"
    );
}

/// The default terminal report is sized for a person: every line at most
/// 160 characters (two rows of an 80-column terminal), no line printed
/// twice, the status table, the verdict and where the HTML report is (the
/// page written, whole); `--tables` adds every table and the gate's full
/// report, which the default leaves out.
#[test]
fn the_default_report_fits_a_terminal_and_names_its_html_page() {
    let _cpus = shared_cpus();
    let args = [
        "--targets",
        "x86_64,aarch64,powerpc64,mips32",
        "--suites",
        "spinlock",
        "--rounds",
        "1",
    ];
    let (out, _, run_dir) = matrix("brief", &args);
    assert!(out.status.success(), "{}", text(&out));
    let shown = String::from_utf8_lossy(&out.stdout).to_string();
    let wide: Vec<&str> = shown.lines().filter(|l| l.chars().count() > 160).collect();
    assert!(wide.is_empty(), "lines wider than 160: {wide:#?}");
    let mut seen = std::collections::BTreeSet::new();
    let twice: Vec<&str> = shown
        .lines()
        .filter(|l| l.chars().any(|c| c.is_alphanumeric()))
        .filter(|l| !seen.insert(*l))
        .collect();
    assert!(twice.is_empty(), "printed twice: {twice:#?}\n{shown}");
    for want in [
        "target",
        "4 ok, 0 failed",
        "40/40 instruction counts compared exactly",
        "models: ",
    ] {
        assert!(shown.contains(want), "no `{want}` in\n{shown}");
    }
    // The seeds' and timing tables are not in the default report.
    assert!(!shown.contains("ticks_per_acquire"), "{shown}");
    let page = run_dir.join("report.html");
    assert!(
        shown.contains(&format!("report: {}", page.display())),
        "{shown}"
    );
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(html.starts_with("<!DOCTYPE html>") && html.trim_end().ends_with("</html>"));
    assert!(html.contains("aarch64") && html.contains("mips32"));
    let lines = shown.lines().count();

    // --tables: today's full output, far longer, the gate's sections in it.
    let mut full = args.to_vec();
    full.push("--tables");
    full.push("--no-html");
    let (out, _, run_dir) = matrix("tables", &full);
    assert!(out.status.success(), "{}", text(&out));
    let tables = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(
        tables.contains("ticks_per_acquire") && tables.contains("gate: "),
        "{tables}"
    );
    assert!(
        tables.lines().count() > 2 * lines,
        "{lines} lines, and with --tables {}",
        tables.lines().count()
    );
    assert!(!run_dir.join("report.html").exists());
}
