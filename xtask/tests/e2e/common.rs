//! What the end-to-end tests share: running the xtask binary as a user
//! would, reading what it wrote, and taking turns on the CPUs.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Held by every test: shared by those that can run side by side, taken
/// whole by the one whose timing gate must not share the two CPUs with
/// other tests' builds.
static CPUS: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// Lets other shared tests run beside this one.
pub fn shared_cpus() -> std::sync::RwLockReadGuard<'static, ()> {
    CPUS.read().unwrap_or_else(|e| e.into_inner())
}

/// Waits until no other test runs, and keeps them out until dropped.
pub fn exclusive_cpus() -> std::sync::RwLockWriteGuard<'static, ()> {
    CPUS.write().unwrap_or_else(|e| e.into_inner())
}

/// The repository these tests belong to.
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Runs `cargo xtask ARGS` (the built binary) from the repository root.
pub fn xtask(args: &[&str]) -> Output {
    xtask_in(&repo_root(), args)
}

/// Runs `cargo xtask ARGS` from the repository root with `env` set.
pub fn xtask_env(args: &[&str], env: &[(&str, &str)]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .envs(env.iter().copied())
        .current_dir(repo_root())
        .output()
        .expect("xtask runs")
}

/// Runs `cargo xtask ARGS` from `dir`, as a user in another checkout would.
pub fn xtask_in(dir: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .current_dir(dir)
        .output()
        .expect("xtask runs")
}

/// Lower-case hex SHA-256, as run.json records binaries.
pub fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// stdout and stderr together, for assertion messages.
pub fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

pub fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

pub fn read_json(p: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
}

/// The newest run directory under `results`.
pub fn newest(results: &Path) -> PathBuf {
    let mut runs: Vec<PathBuf> = std::fs::read_dir(results)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    runs.sort();
    runs.pop().expect("a run directory")
}

/// A fresh, empty temporary directory for one test.
pub fn scratch_dir(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("lockmatrix-test-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// `cargo xtask matrix` of x86_64's atomic suite into `results`, without
/// the gate or instruction counts, with `args` added; asserts it passed
/// and returns the run directory.
pub fn native_atomic_run(results: &Path, args: &[&str]) -> PathBuf {
    let mut all = vec![
        "matrix",
        "--no-install",
        "--no-gate",
        "--no-insns",
        "--targets",
        "x86_64",
        "--suites",
        "atomic",
        "--results",
        s(results),
    ];
    all.extend_from_slice(args);
    let out = xtask(&all);
    assert!(out.status.success(), "{}", text(&out));
    newest(results)
}

/// `cargo xtask baseline update` from `run` into `baselines`; asserts it
/// passed.
pub fn record_baselines(run: &Path, baselines: &Path) {
    let out = xtask(&[
        "baseline",
        "update",
        "--from",
        s(run),
        "--baselines",
        s(baselines),
    ]);
    assert!(out.status.success(), "{}", text(&out));
}

/// `cargo xtask gate RUN FLAGS --json` from `dir` on the run a matrix made
/// (its output `matrix` and its `--json` report `report`): the same run
/// gets the same verdict, exit status and last line, whichever command
/// gave it. Returns the gate's output.
pub fn assert_gate_agrees(
    dir: &Path,
    run: &Path,
    matrix: &Output,
    report: &Value,
    flags: &[&str],
) -> Output {
    let json = run.join("gate-again.json");
    let mut args = vec!["gate", s(run), "--json", s(&json)];
    args.extend_from_slice(flags);
    let out = xtask_in(dir, &args);
    assert!(
        json.is_file(),
        "gate {} wrote no report:\n{}",
        run.display(),
        text(&out)
    );
    let again = read_json(&json);
    assert_eq!(
        (out.status.code(), &again["result"], &again["verdict"]),
        (matrix.status.code(), &report["result"], &report["verdict"]),
        "gate {} {flags:?} disagrees with the matrix that made it:\n{}\n---\n{}",
        run.display(),
        text(&out),
        text(matrix)
    );
    out
}

/// CPU hogs: `n` shell loops that spin until dropped, a busier machine
/// than the one a baseline was recorded on.
pub struct Hog(Vec<std::process::Child>);

impl Hog {
    pub fn start(n: usize) -> Hog {
        Hog((0..n)
            .map(|_| {
                Command::new("sh")
                    .args(["-c", "while :; do :; done"])
                    .spawn()
                    .expect("sh runs")
            })
            .collect())
    }
}

impl Drop for Hog {
    fn drop(&mut self) {
        for c in &mut self.0 {
            let _ = c.kill();
            let _ = c.wait();
        }
    }
}
