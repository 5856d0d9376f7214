//! End-to-end proof of the instruction-counting plugin: the guest in
//! `qemu-plugin/guest/` (which counts a few operations with
//! `harness::marker::insns_per_op`) is cross-built for a target and run
//! under `qemu-<arch> -plugin libinsns_plugin.so`, and
//!
//! - five runs print identical counts (determinism);
//! - an op with one instruction more (not padding) costs exactly 1.0
//!   more per op, and its op-loop regions exactly `iters` (and
//!   `2 * iters`) more instructions; one with a `nop` more costs nothing
//!   (padding is not counted, `insns_plugin::uncounted`) and lists no `nop`;
//! - counting the same ops while a second thread spins gives the same
//!   counts (a region counts only its own thread);
//! - the plugin's `out=` file holds the same counts the guest read back;
//! - each traced region's histogram sums to its count, and the guest's
//!   per-op executions (differenced from the four histograms it read back)
//!   are exact integers that sum to `per_op`, and equal what the `out=`
//!   file's histograms give;
//! - without the plugin the guest runs and reports nothing counted.
//!
//! Cross-building needs what `cargo xtask test` installs: Debian's
//! `rustc-web`, `cargo-web` and `rust-web-src` (build-std), the gcc cross
//! compilers and `qemu-user`. A missing tool fails the test with its name.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const ITERS: u64 = 10_000;
/// The guest's operations.
const OPS: [&str; 5] = [
    "plain",
    "plain_nop",
    "cas_seqcst",
    "fetch_add_relaxed",
    "plain_add",
];
const RUNS: usize = 5;

/// The environment suites run in (as `xtask/src/runner.rs`).
const CLEAN_ENV: &[(&str, &str)] = &[("PATH", "/usr/local/bin:/usr/bin:/bin"), ("LC_ALL", "C")];

struct Target {
    triple: &'static str,
    linker: &'static str,
    /// The Debian package of the linker.
    linker_package: &'static str,
    emulator: &'static str,
    /// Built with the stable host toolchain, no build-std.
    host: bool,
}

/// `libinsns_plugin.so` of the profile these tests were built with: cargo
/// builds the package's library (cdylib and rlib) into `deps/` before its
/// integration tests, beside the test executable.
fn plugin() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    // target/<profile>/deps/determinism-<hash>
    let deps = exe.parent().unwrap();
    let so = [deps, deps.parent().unwrap()]
        .map(|d| d.join("libinsns_plugin.so"))
        .into_iter()
        .find(|p| p.is_file());
    so.unwrap_or_else(|| {
        panic!(
            "no libinsns_plugin.so in {}: build it with `cargo build -p insns-plugin`",
            deps.display()
        )
    })
}

fn require(tool: &str, package: &str) {
    let found = std::env::var_os("PATH")
        .map(|p| std::env::split_paths(&p).any(|d| d.join(tool).is_file()))
        .unwrap_or(false)
        || Path::new(tool).is_file();
    assert!(
        found,
        "{tool} not found: install the Debian package {package}"
    );
}

/// lockmatrix's cache directory, found as `xtask/src/build.rs` finds it.
fn cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("LOCKMATRIX_CACHE") {
        return d.into();
    }
    std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir)
        .join("lockmatrix")
}

/// Cross-builds the guest for `t` into lockmatrix's per-target cache
/// directory (where the build-std standard library of the suites already
/// is) and returns the binary.
fn build_guest(t: &Target) -> PathBuf {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let target_dir = cache_dir().join("target").join(t.triple);
    let env_key = |key: &str| {
        format!(
            "CARGO_TARGET_{}_{key}",
            t.triple.to_uppercase().replace(['-', '.'], "_")
        )
    };
    require(t.linker, t.linker_package);
    let cargo = if t.host {
        std::env::var("CARGO").unwrap_or_else(|_| "cargo".into())
    } else {
        require("/usr/bin/cargo", "cargo-web");
        require("/usr/bin/rustc", "rustc-web");
        "/usr/bin/cargo".into()
    };
    let mut cmd = Command::new(&cargo);
    for var in [
        "RUSTUP_TOOLCHAIN",
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_BUILD_RUSTFLAGS",
        "RUSTC_WRAPPER",
        "RUSTC_WORKSPACE_WRAPPER",
        "CARGO_BUILD_TARGET",
        "CARGO_BUILD_TARGET_DIR",
        "RUSTC_BOOTSTRAP",
        "RUSTC",
        "CARGO_TARGET_DIR",
        "CARGO_MAKEFLAGS",
        "CARGO_PRIMARY_PACKAGE",
    ] {
        cmd.env_remove(var);
    }
    cmd.current_dir(root.join("guest"))
        .args(["build", "--release", "--locked", "--target", t.triple])
        .env("CARGO_TARGET_DIR", &target_dir)
        .env(env_key("LINKER"), t.linker)
        .env(env_key("RUSTFLAGS"), "-C target-feature=+crt-static");
    if !t.host {
        cmd.arg("-Zbuild-std=std,panic_abort")
            .env("RUSTC", "/usr/bin/rustc")
            .env("RUSTC_BOOTSTRAP", "1");
    }
    let out = cmd.output().expect("run cargo");
    assert!(
        out.status.success(),
        "building the guest for {} failed:\n{}",
        t.triple,
        String::from_utf8_lossy(&out.stderr)
    );
    target_dir
        .join(t.triple)
        .join("release")
        .join("insns-guest")
}

/// Runs the guest under the emulator in a clean environment from `/`;
/// returns its stdout. `extra_env` perturbs the environment (and so the
/// initial stack) for the robustness check.
fn run(t: &Target, guest: &Path, plugin_args: Option<&str>, extra_env: &[(&str, &str)]) -> String {
    let mut cmd = Command::new(t.emulator);
    if let Some(args) = plugin_args {
        cmd.arg("-plugin").arg(args);
    }
    let out = cmd
        .arg(guest)
        .arg(ITERS.to_string())
        .env_clear()
        .envs(CLEAN_ENV.iter().copied())
        .envs(extra_env.iter().copied())
        .current_dir("/")
        .output()
        .expect("run the emulator");
    assert!(
        out.status.success() && out.stderr.is_empty(),
        "{} {} failed ({}):\n{}",
        t.emulator,
        guest.display(),
        out.status,
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn parse(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn op<'a>(records: &'a [Value], name: &str) -> &'a Value {
    records
        .iter()
        .find(|r| r["op"] == name)
        .unwrap_or_else(|| panic!("no op {name} in {records:?}"))
}

fn regions(r: &Value) -> Vec<u64> {
    r["regions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_u64().unwrap())
        .collect()
}

/// An op's per-op executions, text -> count.
fn executed(r: &Value) -> std::collections::BTreeMap<String, f64> {
    r["executed"]
        .as_object()
        .unwrap_or_else(|| panic!("no executed histogram: {r}"))
        .iter()
        .map(|(k, v)| (k.clone(), v.as_f64().unwrap()))
        .collect()
}

/// Per-op executions from an op's four `out=` lines (op loop of ITERS and
/// 2 ITERS, empty loop of ITERS and 2 ITERS), as the harness computes them.
fn per_op_from_file(four: &[Value]) -> std::collections::BTreeMap<String, f64> {
    let mut diff: std::collections::BTreeMap<String, i64> = Default::default();
    for (line, sign) in four.iter().zip([-1i64, 1, 1, -1]) {
        for (text, n) in line["executed"].as_object().unwrap() {
            *diff.entry(text.clone()).or_default() += sign * n.as_i64().unwrap();
        }
    }
    diff.into_iter()
        .filter(|&(_, d)| d != 0)
        .map(|(t, d)| (t, d as f64 / ITERS as f64))
        .collect()
}

fn check(t: &Target) {
    require(t.emulator, "qemu-user");
    let plugin = plugin();
    let guest = build_guest(t);
    let out = std::env::temp_dir().join(format!(
        "insns-plugin-test-{}-{}.jsonl",
        t.triple,
        std::process::id()
    ));
    let with_out = format!("{},out={}", plugin.display(), out.display());
    let plain = plugin.display().to_string();

    // Determinism: five runs, byte-identical output.
    let first = run(t, &guest, Some(&with_out), &[]);
    for _ in 1..RUNS {
        assert_eq!(run(t, &guest, Some(&plain), &[]), first, "{}", t.triple);
    }
    let records = parse(&first);
    eprintln!("{}:\n{first}", t.triple);

    // One instruction more per op: exactly 1 per op, `iters` per region.
    let (a, b) = (op(&records, "plain"), op(&records, "plain_add"));
    assert_eq!(
        b["per_op"].as_f64().unwrap(),
        a["per_op"].as_f64().unwrap() + 1.0,
        "{a} {b}"
    );
    let (ra, rb) = (regions(a), regions(b));
    assert_eq!(rb[0] - ra[0], ITERS, "{a} {b}");
    assert_eq!(rb[1] - ra[1], 2 * ITERS, "{a} {b}");
    // A second thread spinning beside the regions changes nothing: a
    // region counts only the thread that opened it.
    for name in OPS {
        let (alone, beside) = (op(&records, name), op(&records, &format!("{name}+spinner")));
        assert_eq!(alone["per_op"], beside["per_op"], "{alone} {beside}");
        assert_eq!(regions(alone), regions(beside), "{alone} {beside}");
    }
    // Every op's count is an exact integer per op and at least one insn,
    // and so is each instruction's share, which sum to it.
    for r in &records {
        let per_op = r["per_op"].as_f64().unwrap();
        assert!(per_op >= 1.0 && per_op.fract() == 0.0, "{r}");
        let executed = executed(r);
        assert!(executed.values().all(|n| n.fract() == 0.0), "{r}");
        assert_eq!(executed.values().sum::<f64>(), per_op, "{r}");
    }
    let nops = |r: &Value| {
        executed(r)
            .iter()
            .filter(|(text, _)| text.trim() == "nop")
            .map(|(_, n)| n)
            .sum::<f64>()
    };
    // A `nop` is padding: neither counted nor listed.
    let with_nop = op(&records, "plain_nop");
    assert_eq!(with_nop["per_op"], a["per_op"], "{a} {with_nop}");
    assert_eq!(nops(with_nop), 0.0, "{with_nop}");
    for name in OPS {
        let (alone, beside) = (op(&records, name), op(&records, &format!("{name}+spinner")));
        assert_eq!(alone["executed"], beside["executed"], "{alone} {beside}");
    }

    // The out= file holds the same counts: the probe, then four per op.
    let file = std::fs::read_to_string(&out).unwrap();
    std::fs::remove_file(&out).ok();
    let lines = parse(&file);
    let counts: Vec<u64> = lines.iter().map(|l| l["insns"].as_u64().unwrap()).collect();
    let printed: Vec<u64> = records.iter().flat_map(regions).collect();
    assert_eq!(counts[1..], printed[..], "{file}");
    assert!(lines.iter().all(|l| l["vcpu"] == 0), "{file}");
    // The probe region is not traced; every op's four regions are, and a
    // histogram accounts for every instruction of its region.
    assert!(lines[0].get("executed").is_none(), "{}", lines[0]);
    for l in &lines[1..] {
        let sum: u64 = l["executed"]
            .as_object()
            .unwrap_or_else(|| panic!("no histogram: {l}"))
            .values()
            .map(|n| n.as_u64().unwrap())
            .sum();
        assert_eq!(sum, l["insns"].as_u64().unwrap(), "{l}");
    }
    for (r, four) in records.iter().zip(lines[1..].chunks(4)) {
        assert_eq!(per_op_from_file(four), executed(r), "{}", r["op"]);
    }

    // A different environment moves the stack, not the per-op counts.
    let moved = parse(&run(
        t,
        &guest,
        Some(&plain),
        &[("LOCKMATRIX_PAD", &"x".repeat(3000))],
    ));
    for (r, m) in records.iter().zip(&moved) {
        assert_eq!(r["per_op"], m["per_op"], "{r} {m}");
    }

    // Without the plugin nothing is counted, and nothing breaks.
    let bare = parse(&run(t, &guest, None, &[]));
    assert!(bare.iter().all(|r| r["counted"] == false), "{bare:?}");
}

#[test]
fn host_x86_64_counts_are_deterministic_and_exact() {
    check(&Target {
        triple: "x86_64-unknown-linux-gnu",
        linker: "cc",
        linker_package: "gcc",
        emulator: "qemu-x86_64",
        host: true,
    });
}

#[test]
fn aarch64_counts_are_deterministic_and_exact() {
    check(&Target {
        triple: "aarch64-unknown-linux-gnu",
        linker: "aarch64-linux-gnu-gcc",
        linker_package: "gcc-aarch64-linux-gnu",
        emulator: "qemu-aarch64",
        host: false,
    });
}

#[test]
fn powerpc64_counts_are_deterministic_and_exact() {
    check(&Target {
        triple: "powerpc64-unknown-linux-gnu",
        linker: "powerpc64-linux-gnu-gcc",
        linker_package: "gcc-powerpc64-linux-gnu",
        emulator: "qemu-ppc64",
        host: false,
    });
}

#[test]
fn mips_counts_are_deterministic_and_exact() {
    check(&Target {
        triple: "mips-unknown-linux-gnu",
        linker: "mips-linux-gnu-gcc",
        linker_package: "gcc-mips-linux-gnu",
        emulator: "qemu-mips",
        host: false,
    });
}
