//! Building the suites' models for the host and running them.
//!
//! One cargo invocation builds every suite asked for, with `--cfg loom`
//! (so loom and the models are in, the benchmarks' `main` out) in the
//! release profile with unwinding: the model runner catches loom's panic
//! to report a failed model and go on with the next, which the profile's
//! `panic = "abort"` would not let it. The target dir is the cache's own
//! `model-target`, shared by every tree on the machine (the main checkout,
//! scratch copies of the mutation check); as in `build.rs`, a tree that
//! differs from the one built last there has its suite packages cleaned
//! first (loom stays built), and one process at a time builds and runs
//! there.

use super::error::ModelError;
use super::record::{self, Printed};
use crate::runner::{self, Exit, Invocation};
use crate::toolchain::Toolchain;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The target dir of the model builds.
pub fn target_dir() -> Result<PathBuf, ModelError> {
    Ok(crate::cache::dir()?.join("model-target"))
}

/// Holds the model target dir for one build and its runs.
pub struct Built {
    _lock: std::fs::File,
    dir: PathBuf,
}

impl Built {
    /// The model binary of `suite`.
    pub fn binary(&self, suite: &str) -> PathBuf {
        self.dir.join("release").join(suite)
    }
}

fn cargo(tc: &Toolchain, root: &Path, target_dir: &Path) -> std::process::Command {
    let mut cmd = crate::build::cargo(&tc.cargo);
    cmd.current_dir(root)
        .env("CARGO_TARGET_DIR", target_dir)
        .env("RUSTC", &tc.rustc)
        .env("RUSTFLAGS", "--cfg loom");
    cmd
}

/// Builds the models of `suites` from the tree at `root`.
pub fn build(
    tc: &Toolchain,
    root: &Path,
    suites: &[&str],
    features: &[String],
) -> Result<Built, ModelError> {
    let dir = target_dir()?;
    let lock = crate::build::lock_dir(&dir).map_err(|why| ModelError::Build {
        suites: suites.join(", "),
        log: format!("error: {why}"),
    })?;
    let sources =
        crate::build::sources_hash(root, features).map_err(|e| ModelError::io(root, e))?;
    let stamp = crate::build::SourcesStamp::new(&dir, sources);
    if !stamp.holds() {
        let mut clean = cargo(tc, root, &dir);
        clean.args(["clean", "--release"]);
        let _ = crate::build::clean_packages(clean);
    }
    let mut cmd = cargo(tc, root, &dir);
    cmd.args([
        "build",
        "--release",
        "--locked",
        "--config",
        "profile.release.panic=\"unwind\"",
    ]);
    for s in suites {
        cmd.args(["-p", s]);
    }
    if !features.is_empty() {
        cmd.args(["--features", &features.join(",")]);
    }
    let out = cmd.output().map_err(|e| ModelError::Build {
        suites: suites.join(", "),
        log: format!("error: cannot run {}: {e}", tc.cargo.display()),
    })?;
    let built = Built { _lock: lock, dir };
    let missing = suites.iter().find(|s| !built.binary(s).is_file());
    if !out.status.success() || missing.is_some() {
        let mut log = String::from_utf8_lossy(&out.stderr).into_owned();
        if let (true, Some(s)) = (out.status.success(), missing) {
            log.push_str(&format!("error: the build made no binary {s}\n"));
        }
        return Err(ModelError::Build {
            suites: suites.join(", "),
            log,
        });
    }
    stamp.write().map_err(|e| ModelError::io(stamp.path(), e))?;
    Ok(built)
}

/// The modelled locks the binary of `suite` has.
pub fn list(built: &Built, suite: &str) -> Result<Vec<String>, ModelError> {
    let out = execute(
        built,
        suite,
        &["--list".to_string()],
        Duration::from_secs(60),
    )?;
    Ok(out.lines().map(str::to_string).collect())
}

/// Runs the models of `locks` (none: all) of `suite`.
pub fn run(
    built: &Built,
    suite: &str,
    locks: &[String],
    timeout: Duration,
) -> Result<Printed, ModelError> {
    let mut args = Vec::new();
    if !locks.is_empty() {
        args = vec!["--lock".to_string(), locks.join(",")];
    }
    record::parse(suite, &execute(built, suite, &args, timeout)?)
}

/// Runs the binary of `suite` (clean environment: loom's defaults read
/// `LOOM_*` variables); its stdout. Exit 1 is a model that failed, which
/// the records say.
fn execute(
    built: &Built,
    suite: &str,
    args: &[String],
    timeout: Duration,
) -> Result<String, ModelError> {
    let inv = Invocation {
        program: built.binary(suite).display().to_string(),
        args: args.to_vec(),
    };
    let run_err = |why: String| ModelError::Run {
        suite: suite.to_string(),
        why,
    };
    let out = runner::execute(&inv, &built.dir, timeout)
        .map_err(|e| run_err(format!("cannot run {}: {e}", inv.program)))?;
    let stderr = out.stderr.lines().last().unwrap_or("").to_string();
    match out.exit {
        Exit::Code(0 | 1) => Ok(out.stdout),
        Exit::Code(c) => Err(run_err(format!("exit status {c}: {stderr}"))),
        Exit::Signal(s) => Err(run_err(format!(
            "killed by {} ({s}): {stderr}",
            runner::signal_name(s)
        ))),
        Exit::TimedOut => Err(run_err(format!(
            "still running after {} s, killed",
            timeout.as_secs()
        ))),
        Exit::Flooded => Err(run_err("killed for printing too much".into())),
    }
}
