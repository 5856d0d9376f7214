//! Cross-building the suites for each target: one cargo invocation per
//! target, two targets at a time so both cores stay busy through the
//! single-crate stretches of a std build (core, std) and the links.

use crate::config::Target;
use crate::progress::Progress;
use crate::toolchain::Toolchain;
use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;
use std::time::Instant;

/// Where cross-built std and suites are cached: outside the clone, so every
/// checkout on the machine (and every CI run) reuses the same std builds.
pub fn cache_dir() -> PathBuf {
    if let Some(d) = std::env::var_os("LOCKMATRIX_CACHE") {
        return d.into();
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".cache")))
        .unwrap_or_else(std::env::temp_dir);
    base.join("lockmatrix")
}

pub struct Job<'a> {
    pub target: &'a Target,
    pub toolchain: Toolchain,
    pub linker: PathBuf,
}

pub struct Built {
    pub secs: f64,
    /// Suite name to binary.
    pub binaries: Result<BTreeMap<String, PathBuf>, String>,
}

/// `CARGO_TARGET_<TRIPLE>_<KEY>` as cargo spells it.
fn target_env(triple: &str, key: &str) -> String {
    format!(
        "CARGO_TARGET_{}_{key}",
        triple.to_uppercase().replace(['-', '.'], "_")
    )
}

/// A cargo command that nothing from the calling cargo or the user's shell
/// can steer: the suites and the plugin build the same way from any shell.
pub fn cargo(program: &Path) -> Command {
    let mut cmd = Command::new(program);
    for var in [
        "RUSTUP_TOOLCHAIN",
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_BUILD_RUSTFLAGS",
        "RUSTC_WRAPPER",
        "CARGO_BUILD_TARGET",
        "CARGO_BUILD_TARGET_DIR",
        "RUSTC_BOOTSTRAP",
    ] {
        cmd.env_remove(var);
    }
    cmd
}

/// The cargo command that builds `suites` for `job`.
pub fn command(root: &Path, job: &Job, suites: &[&str], features: &[String]) -> (Command, PathBuf) {
    let triple = &job.target.triple;
    // One directory per triple: two targets build at once without waiting on
    // each other's cargo lock. A toolchain change shows in cargo's fingerprints.
    let target_dir = cache_dir().join("target").join(triple);
    let mut cmd = cargo(&job.toolchain.cargo);
    cmd.current_dir(root)
        .args(["build", "--release", "--locked", "--target", triple])
        .env("CARGO_TARGET_DIR", &target_dir)
        .env("RUSTC", &job.toolchain.rustc)
        .env(target_env(triple, "LINKER"), &job.linker)
        // Static binaries run under qemu-user without a sysroot and can be
        // copied to a remote box as they are.
        .env(
            target_env(triple, "RUSTFLAGS"),
            "-C target-feature=+crt-static",
        );
    if job.toolchain.build_std {
        // The std sources come with the toolchain; build-std is unstable, and
        // the toolchain is a stable one.
        cmd.arg("-Zbuild-std=std,panic_abort")
            .env("RUSTC_BOOTSTRAP", "1");
    }
    for s in suites {
        cmd.args(["-p", s]);
    }
    if !features.is_empty() {
        cmd.args(["--features", &features.join(",")]);
    }
    (cmd, target_dir.join(triple).join("release"))
}

/// Links (or copies) a built binary to `to`: the run keeps the exact
/// binaries it ran, whatever a later build leaves in the shared cache, so
/// its reproducer commands stay true.
fn keep(from: &Path, to: &Path) -> Result<(), String> {
    let _ = std::fs::remove_file(to);
    std::fs::hard_link(from, to)
        .or_else(|_| std::fs::copy(from, to).map(|_| ()))
        .map_err(|e| format!("keeping {}: {e}", from.display()))
}

fn build_one(
    root: &Path,
    job: &Job,
    suites: &[&str],
    features: &[String],
    log: &Path,
    bins: &Path,
) -> Built {
    let start = Instant::now();
    let (mut cmd, out_dir) = command(root, job, suites, features);
    let result = match cmd.output() {
        Err(e) => Err(format!("cannot run {}: {e}", job.toolchain.cargo.display())),
        Ok(out) => {
            let _ = std::fs::write(log, &out.stderr);
            let missing = suites.iter().find(|s| !out_dir.join(s).is_file());
            if out.status.success() && missing.is_none() {
                let to = bins.join(&job.target.name);
                std::fs::create_dir_all(&to)
                    .map_err(|e| format!("creating {}: {e}", to.display()))
                    .and_then(|()| {
                        suites
                            .iter()
                            .map(|s| {
                                keep(&out_dir.join(s), &to.join(s))
                                    .map(|()| (s.to_string(), to.join(s)))
                            })
                            .collect()
                    })
            } else if let (true, Some(s)) = (out.status.success(), missing) {
                Err(format!(
                    "build produced no binary {}",
                    out_dir.join(s).display()
                ))
            } else {
                let text = String::from_utf8_lossy(&out.stderr);
                let first = text
                    .lines()
                    .find(|l| l.starts_with("error"))
                    .unwrap_or("cargo failed")
                    .to_string();
                Err(format!("build failed: {first} (log: {})", log.display()))
            }
        }
    };
    Built {
        secs: start.elapsed().as_secs_f64(),
        binaries: result,
    }
}

/// Builds every job, `parallel` at a time; results in job order. The
/// binaries are kept under `bins/<target>/`.
pub fn build_all(
    root: &Path,
    jobs: &[Job],
    suites: &[&str],
    features: &[String],
    logs: &Path,
    bins: &Path,
    parallel: usize,
) -> Vec<Built> {
    let queue: Mutex<VecDeque<usize>> = Mutex::new((0..jobs.len()).collect());
    let results: Mutex<Vec<Option<Built>>> = Mutex::new((0..jobs.len()).map(|_| None).collect());
    let progress = Progress::new("build", jobs.len());
    std::thread::scope(|s| {
        for _ in 0..parallel.max(1) {
            s.spawn(|| loop {
                let Some(i) = queue.lock().unwrap().pop_front() else {
                    break;
                };
                let name = &jobs[i].target.name;
                progress.start(name);
                let built = build_one(
                    root,
                    &jobs[i],
                    suites,
                    features,
                    &logs.join(format!("build-{name}.log")),
                    bins,
                );
                let outcome = match &built.binaries {
                    Ok(_) => format!("built in {:.1}s", built.secs),
                    Err(e) => e.clone(),
                };
                progress.finish(name, &outcome);
                results.lock().unwrap()[i] = Some(built);
            });
        }
    });
    progress.done();
    results
        .into_inner()
        .unwrap()
        .into_iter()
        .map(|b| b.expect("every job built"))
        .collect()
}
