//! Cross-building the suites for each target: one cargo invocation per
//! target, two targets at a time.

use crate::config::Target;
use crate::observe::{Event, Observer};
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
    /// [`sources_hash`] of what was built.
    pub sources: String,
}

/// A hash of everything that decides what the suites compile to, from one
/// checkout: the workspace manifest and lock file, every file under
/// `suites/` (paths and contents), and the features.
pub fn sources_hash(root: &Path, features: &[String]) -> std::io::Result<String> {
    let mut files: Vec<PathBuf> = vec![root.join("Cargo.toml"), root.join("Cargo.lock")];
    let mut dirs = vec![root.join("suites")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir)? {
            let path = entry?.path();
            if path.is_dir() {
                dirs.push(path);
            } else {
                files.push(path);
            }
        }
    }
    files.sort();
    let mut all = Vec::new();
    for f in &files {
        let rel = f.strip_prefix(root).unwrap_or(f);
        all.extend_from_slice(rel.to_string_lossy().as_bytes());
        all.push(0);
        all.extend_from_slice(crate::results::sha256(&std::fs::read(f)?).as_bytes());
        all.push(0);
    }
    all.extend_from_slice(features.join(",").as_bytes());
    Ok(crate::results::sha256(&all))
}

/// The workspace packages built for the targets, suites and harness.
fn packages() -> impl Iterator<Item = &'static str> {
    crate::select::SUITES
        .iter()
        .map(|s| s.name)
        .chain(std::iter::once("harness"))
}

/// Makes sure cargo rebuilds the suites when `sources` differ from the
/// ones last built into this target dir. Cargo decides freshness by file
/// times and treats a package at the same place in two checkouts (this
/// tree and an `--against` worktree, or two clones sharing the cache) as
/// one unit, so older files from another tree would pass for built.
/// Cleaning the suite packages (std stays) settles it by content.
fn forget_other_sources(root: &Path, job: &Job, sources: &str) -> Result<(), String> {
    let stamp = target_dir(job).join("lockmatrix-sources");
    if std::fs::read_to_string(&stamp).is_ok_and(|s| s == sources) {
        return Ok(());
    }
    let mut clean = cargo_for(root, job);
    clean.args(["clean", "--release", "--target", &job.target.triple]);
    for p in packages() {
        clean.args(["-p", p]);
    }
    // The result does not matter: a target dir that never built a package
    // has nothing stale in it (and `clean -p` may say so).
    clean
        .output()
        .map_err(|e| format!("cannot run {}: {e}", job.toolchain.cargo.display()))?;
    Ok(())
}

/// An exclusive lock on `dir` (a `lockmatrix.lock` file in it), held
/// until the file is dropped.
pub(crate) fn lock_dir(dir: &Path) -> Result<std::fs::File, String> {
    use std::os::fd::AsRawFd;
    std::fs::create_dir_all(dir).map_err(|e| format!("creating {}: {e}", dir.display()))?;
    let path = dir.join("lockmatrix.lock");
    let file =
        std::fs::File::create(&path).map_err(|e| format!("creating {}: {e}", path.display()))?;
    // SAFETY: flock on a file descriptor this function owns.
    if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX) } != 0 {
        return Err(format!(
            "locking {}: {}",
            path.display(),
            std::io::Error::last_os_error()
        ));
    }
    Ok(file)
}

/// One dir per triple, and per variant with its own CPU or features (they
/// build their own std, kept beside).
fn target_dir(job: &Job) -> PathBuf {
    let t = job.target;
    let dir = match (&t.target_cpu, &t.target_features) {
        (None, None) => t.triple.clone(),
        _ => format!("{}-{}", t.triple, t.name),
    };
    cache_dir().join("target").join(dir)
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

/// Cargo with the environment every build (and clean) for `job` uses.
fn cargo_for(root: &Path, job: &Job) -> Command {
    let triple = &job.target.triple;
    let mut cmd = cargo(&job.toolchain.cargo);
    cmd.current_dir(root)
        // One directory per triple: two targets build at once without
        // waiting on each other's cargo lock. A toolchain change shows in
        // cargo's fingerprints.
        .env("CARGO_TARGET_DIR", target_dir(job))
        .env("RUSTC", &job.toolchain.rustc)
        .env(target_env(triple, "LINKER"), &job.linker)
        // Static binaries run under qemu-user without a sysroot and can be
        // copied to a remote box as they are.
        // (and a variant's CPU and features).
        .env(
            target_env(triple, "RUSTFLAGS"),
            job.target.codegen_flags().join(" "),
        );
    if job.toolchain.build_std {
        // build-std is unstable, and the toolchain is a stable one.
        cmd.env("RUSTC_BOOTSTRAP", "1");
    }
    cmd
}

/// The cargo command that builds `suites` for `job`.
pub fn command(root: &Path, job: &Job, suites: &[&str], features: &[String]) -> (Command, PathBuf) {
    let triple = &job.target.triple;
    let mut cmd = cargo_for(root, job);
    cmd.args(["build", "--release", "--locked", "--target", triple]);
    if job.toolchain.build_std {
        // The std sources come with the toolchain.
        cmd.arg("-Zbuild-std=std,panic_abort");
    }
    for s in suites {
        cmd.args(["-p", s]);
    }
    if !features.is_empty() {
        cmd.args(["--features", &features.join(",")]);
    }
    (cmd, target_dir(job).join(triple).join("release"))
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
    sources: &str,
    log: &Path,
    bins: &Path,
) -> Built {
    let start = Instant::now();
    // One build at a time per target dir, across processes: another
    // checkout's build would clean and replace the binaries between this
    // one's build and its copy of them.
    let _lock = match lock_dir(&target_dir(job)) {
        Ok(lock) => lock,
        Err(why) => {
            return Built {
                secs: start.elapsed().as_secs_f64(),
                binaries: Err(why),
                sources: sources.to_string(),
            }
        }
    };
    if let Err(why) = forget_other_sources(root, job, sources) {
        return Built {
            secs: start.elapsed().as_secs_f64(),
            binaries: Err(why),
            sources: sources.to_string(),
        };
    }
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
    if result.is_ok() {
        let _ = std::fs::write(target_dir(job).join("lockmatrix-sources"), sources);
    }
    Built {
        secs: start.elapsed().as_secs_f64(),
        binaries: result,
        sources: sources.to_string(),
    }
}

/// Targets built at once: both cores stay busy through the single-crate
/// stretches of a std build (core, std) and the links.
const PARALLEL: usize = 2;

/// A tree to build from, and where its build logs and binaries go.
pub struct Tree<'a> {
    pub root: &'a Path,
    /// `build-<target>.log` for each target.
    pub logs: PathBuf,
    /// `<target>/<suite>` for each binary.
    pub bins: PathBuf,
}

/// Builds every job from `tree`, [`PARALLEL`] at a time; results in job
/// order.
pub fn build_all(
    tree: &Tree,
    jobs: &[Job],
    suites: &[&str],
    features: &[String],
    observer: &dyn Observer,
) -> Vec<Built> {
    let root = tree.root;
    let sources = match sources_hash(root, features) {
        Ok(h) => h,
        Err(e) => {
            let why = format!("reading the suite sources under {}: {e}", root.display());
            return jobs
                .iter()
                .map(|_| Built {
                    secs: 0.0,
                    binaries: Err(why.clone()),
                    sources: String::new(),
                })
                .collect();
        }
    };
    let queue: Mutex<VecDeque<usize>> = Mutex::new((0..jobs.len()).collect());
    let results: Mutex<Vec<Option<Built>>> = Mutex::new((0..jobs.len()).map(|_| None).collect());
    observer.event(Event::Phase {
        name: "build",
        steps: jobs.len(),
    });
    std::thread::scope(|s| {
        for _ in 0..PARALLEL {
            s.spawn(|| loop {
                let Some(i) = queue.lock().unwrap().pop_front() else {
                    break;
                };
                let name = &jobs[i].target.name;
                observer.event(Event::StepStarted(name));
                let built = build_one(
                    root,
                    &jobs[i],
                    suites,
                    features,
                    &sources,
                    &tree.logs.join(format!("build-{name}.log")),
                    &tree.bins,
                );
                let outcome = match &built.binaries {
                    Ok(_) => format!("built in {:.1}s", built.secs),
                    Err(e) => e.clone(),
                };
                observer.event(Event::StepDone {
                    step: name,
                    outcome: &outcome,
                });
                results.lock().unwrap()[i] = Some(built);
            });
        }
    });
    observer.event(Event::PhaseDone);
    results
        .into_inner()
        .unwrap()
        .into_iter()
        .map(|b| b.expect("every job built"))
        .collect()
}
