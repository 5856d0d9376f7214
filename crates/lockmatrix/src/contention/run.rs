//! Building the suites' contention binaries for the host and running
//! them; their records kept by the hash of what they were built from.
//!
//! One cargo invocation builds every suite asked for, with
//! `--cfg lockmatrix_sim`, in the release profile with unwinding (a vCPU
//! that panics must fail its run, not the process), into the cache's own
//! `contention-target`, one process at a time; then each covered lock
//! runs in a process of its own, as many at once as the host has cores,
//! each worker's processes on a core of their own. A suite's key hashes the
//! workspace manifest and lock file, the `ccsim` crate, the harness, the
//! suite's whole directory and the compiler: the numbers are a function
//! of exactly these, so a result holds as long as its key.

use super::error::ContentionError;
use super::record::{self, Printed, Record, Uncovered};
use crate::runner::{self, Exit, Invocation};
use crate::toolchain::Toolchain;
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// The machine the matrix gates on (ccsim's default: generic x86, one
/// socket), and the vCPU counts (seed 001's ladder to 64).
pub const MACHINE: &str = "x86";
pub const CPUS: &[u32] = &[1, 2, 4, 8, 16, 32, 64];

/// Bumped when what a key covers or an entry holds changes.
const FORMAT: u32 = 2;

/// Longest one lock's runs may take (every lock's together take about
/// two minutes on a 2-vCPU VM; this only catches a hang).
const TIMEOUT: Duration = Duration::from_secs(900);

pub struct Built {
    _lock: std::fs::File,
    dir: PathBuf,
}

fn every_file(dir: &Path, out: &mut Vec<PathBuf>) -> Result<(), ContentionError> {
    let mut entries: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| ContentionError::io(dir, e))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .collect();
    entries.sort();
    for p in entries {
        if p.file_name().is_some_and(|n| n == "target") {
            continue;
        }
        if p.is_dir() {
            every_file(&p, out)?;
        } else {
            out.push(p);
        }
    }
    Ok(())
}

pub fn key(root: &Path, suite: &str, compiler: &str) -> Result<String, ContentionError> {
    let mut files = vec![root.join("Cargo.toml"), root.join("Cargo.lock")];
    for d in ["crates/ccsim", "suites/harness"] {
        every_file(&root.join(d), &mut files)?;
    }
    every_file(&root.join("suites").join(suite), &mut files)?;
    let head = format!("lockmatrix contention {FORMAT}\0{compiler}\0{suite}\0");
    crate::file::files_hash(&head, root, &files)
        .map_err(|e| ContentionError::io(root, std::io::Error::other(e.to_string())))
}

#[derive(Serialize, Deserialize)]
struct Entry {
    format: u32,
    records: Vec<Record>,
    uncovered: Vec<Uncovered>,
}

fn dir() -> Option<PathBuf> {
    Some(crate::cache::dir().ok()?.join("contention-results"))
}

pub fn load(key: &str) -> Option<Printed> {
    let e: Entry = crate::file::load_json(&dir()?, key)?;
    (e.format == FORMAT).then_some(Printed {
        records: e.records,
        uncovered: e.uncovered,
    })
}

pub fn store(key: &str, p: &Printed) -> Result<(), ContentionError> {
    let dir = crate::cache::dir()?.join("contention-results");
    let entry = Entry {
        format: FORMAT,
        records: p.records.clone(),
        uncovered: p.uncovered.clone(),
    };
    crate::file::store_json(&dir, key, &entry)
        .map_err(|e| ContentionError::io(&dir, std::io::Error::other(e.to_string())))
}

pub fn build(tc: &Toolchain, root: &Path, suites: &[&str]) -> Result<Built, ContentionError> {
    let dir = crate::cache::dir()?.join("contention-target");
    let failed = |log: String| ContentionError::Build {
        suites: suites.join(", "),
        log,
    };
    std::fs::create_dir_all(&dir).map_err(|e| ContentionError::io(&dir, e))?;
    let lock = crate::build::lock_dir(&dir).map_err(|e| failed(format!("error: {e}")))?;
    let cargo = || {
        let mut cmd = crate::build::cargo(&tc.cargo);
        cmd.current_dir(root)
            .env("CARGO_TARGET_DIR", &dir)
            .env("RUSTC", &tc.rustc)
            .env("RUSTFLAGS", "--cfg lockmatrix_sim");
        cmd
    };
    // Cargo judges a path crate fresh by its files' times: a base
    // worktree checked out after the head was built looks older than the
    // head's binaries and would be run as is. A tree other than the one
    // built last here has its own crates cleaned first (as `model/run.rs`
    // does for loom).
    // Each suite's key covers the manifests, ccsim, the harness and it.
    let sources = suites
        .iter()
        .map(|s| key(root, s, ""))
        .collect::<Result<Vec<_>, _>>()?
        .join("\n");
    let stamp = crate::build::SourcesStamp::new(&dir, sources);
    if !stamp.holds() {
        let mut clean = cargo();
        clean.args(["clean", "--release", "-p", "ccsim"]);
        let _ = crate::build::clean_packages(clean);
    }
    let mut cmd = cargo();
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
    let out = cmd
        .output()
        .map_err(|e| failed(format!("error: cannot run {}: {e}", tc.cargo.display())))?;
    let built = Built { _lock: lock, dir };
    if !out.status.success() {
        return Err(failed(String::from_utf8_lossy(&out.stderr).into_owned()));
    }
    if let Some(s) = suites.iter().find(|s| !built.binary(s).is_file()) {
        return Err(failed(format!("error: the build made no binary {s}")));
    }
    stamp
        .write()
        .map_err(|e| ContentionError::io(stamp.path(), e))?;
    Ok(built)
}

impl Built {
    fn binary(&self, suite: &str) -> PathBuf {
        self.dir.join("release").join(suite)
    }
}

/// Runs every covered lock of `suites` on the gating machine and ladder:
/// one process per lock (`--lock`), as many at once as the host has
/// cores. A lock's runs share nothing with another's, and in a process of
/// its own not even the allocator's history (which decides what shares a
/// line), so each lock's records depend on its own source alone. Each
/// suite's records come back in the order one process would print them.
pub fn run(built: &Built, suites: &[&str]) -> Result<Vec<Printed>, ContentionError> {
    let mut jobs = Vec::new();
    for &suite in suites {
        for lock in covered(built, suite)? {
            jobs.push((suite, lock));
        }
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let outputs: Vec<std::sync::Mutex<Option<Result<String, ContentionError>>>> =
        jobs.iter().map(|_| std::sync::Mutex::new(None)).collect();
    let workers = std::thread::available_parallelism()
        .map_or(1, |n| n.get())
        .min(jobs.len().max(1));
    std::thread::scope(|s| {
        for w in 0..workers {
            let (next, outputs, jobs) = (&next, &outputs, &jobs);
            s.spawn(move || {
                // Its lock processes inherit this thread's CPU.
                pin_to_own_cpu(w);
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    let Some((suite, lock)) = jobs.get(i) else {
                        break;
                    };
                    let out = run_lock(built, suite, lock);
                    *outputs[i].lock().expect("no worker panics holding it") = Some(out);
                }
            });
        }
    });
    let mut printed: Vec<Printed> = suites.iter().map(|_| Printed::default()).collect();
    for ((suite, _), out) in jobs.iter().zip(outputs) {
        let stdout = out
            .into_inner()
            .expect("no worker panics holding it")
            .expect("every job ran")?;
        let p = record::parse(suite, &stdout)?;
        let into = &mut printed[suites.iter().position(|s| s == suite).expect("asked for")];
        into.records.extend(p.records);
        // Every process names the suite's uncovered locks: once is enough.
        if into.uncovered.is_empty() {
            into.uncovered = p.uncovered;
        }
    }
    Ok(printed)
}

/// Pins the calling thread, and so the processes it starts, to the
/// `w`-th CPU it may run on. A simulation runs its vCPUs as threads of
/// which one runs at a time, handing a baton on at every shared access:
/// on one CPU each hand-over is a switch on that core, where across two
/// it is a wake-up on the other core and a lock both contend for. Same
/// results (the schedule is virtual time's), about half the wall time
/// (linux_rwsem at 16 and 32 vCPUs: 2.1-2.2 s pinned, 4.0-4.1 s not).
/// Where pinning is refused the worker runs unpinned.
fn pin_to_own_cpu(w: usize) {
    // SAFETY: cpu_set_t is plain data, read and written through libc's
    // own macros within its size; 0 is the calling thread.
    unsafe {
        let mut allowed: libc::cpu_set_t = std::mem::zeroed();
        let size = std::mem::size_of::<libc::cpu_set_t>();
        if libc::sched_getaffinity(0, size, &mut allowed) != 0 {
            return;
        }
        let cpus: Vec<usize> = (0..libc::CPU_SETSIZE as usize)
            .filter(|&c| libc::CPU_ISSET(c, &allowed))
            .collect();
        let Some(&cpu) = cpus.get(w % cpus.len().max(1)) else {
            return;
        };
        let mut one: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu, &mut one);
        libc::sched_setaffinity(0, size, &one);
    }
}

/// The locks `suite`'s binary runs on the model (`--list`).
fn covered(built: &Built, suite: &str) -> Result<Vec<String>, ContentionError> {
    let out = execute(built, suite, vec!["--list".into()])?;
    let locks: Vec<String> = out
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect();
    match locks.is_empty() {
        true => Err(ContentionError::Run {
            suite: suite.to_string(),
            why: "`--list` named no lock".into(),
        }),
        false => Ok(locks),
    }
}

fn run_lock(built: &Built, suite: &str, lock: &str) -> Result<String, ContentionError> {
    let cpus: Vec<String> = CPUS.iter().map(u32::to_string).collect();
    execute(
        built,
        suite,
        vec![
            "--machine".into(),
            MACHINE.into(),
            "--cpus".into(),
            cpus.join(","),
            "--lock".into(),
            lock.into(),
        ],
    )
}

/// `suite`'s binary with `args`: its stdout, or why it gave none.
fn execute(built: &Built, suite: &str, args: Vec<String>) -> Result<String, ContentionError> {
    let inv = Invocation {
        program: built.binary(suite).display().to_string(),
        args,
    };
    let err = |why: String| ContentionError::Run {
        suite: suite.to_string(),
        why,
    };
    let out = runner::execute(&inv, &built.dir, TIMEOUT)
        .map_err(|e| err(format!("cannot run {}: {e}", inv.program)))?;
    let last = out.stderr.lines().last().unwrap_or("").to_string();
    match out.exit {
        // 1: a run failed, which its record says.
        Exit::Code(0 | 1) => Ok(out.stdout),
        Exit::Code(c) => Err(err(format!("exit status {c}: {last}"))),
        Exit::Signal(s) => Err(err(format!(
            "killed by {} ({s}): {last}",
            runner::signal_name(s)
        ))),
        Exit::TimedOut => Err(err(format!(
            "still running after {} s, killed",
            TIMEOUT.as_secs()
        ))),
        Exit::Flooded => Err(err("killed for printing too much".into())),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_suites_key_moves_with_what_its_numbers_are_made_of_only() {
        let root = std::env::temp_dir().join(format!("lm-contention-key-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for (file, text) in [
            ("Cargo.toml", "[workspace]"),
            ("Cargo.lock", "# lock"),
            ("crates/ccsim/src/world.rs", "scheduler"),
            ("suites/harness/src/sim.rs", "runner"),
            ("suites/spinlock/src/locks/ticket.rs", "ticket"),
            ("suites/rwsem/src/locks/fair_rwspin.rs", "pf-t"),
        ] {
            let p = root.join(file);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let k = || key(&root, "spinlock", "rustc 1.85.0").unwrap();
        let first = k();
        assert_eq!(k(), first, "a key is a function of the files");
        std::fs::write(
            root.join("suites/rwsem/src/locks/fair_rwspin.rs"),
            "changed",
        )
        .unwrap();
        assert_eq!(k(), first, "another suite moved spinlock's key");
        // A build's own output never moves it.
        std::fs::create_dir_all(root.join("suites/spinlock/target")).unwrap();
        std::fs::write(root.join("suites/spinlock/target/x"), "built").unwrap();
        assert_eq!(k(), first);
        for file in [
            "suites/spinlock/src/locks/ticket.rs",
            "crates/ccsim/src/world.rs",
            "suites/harness/src/sim.rs",
            "Cargo.lock",
        ] {
            let before = k();
            std::fs::write(root.join(file), "changed again").unwrap();
            assert_ne!(k(), before, "{file} did not move the key");
        }
        assert_ne!(key(&root, "spinlock", "rustc 1.95.0").unwrap(), k());
        std::fs::remove_dir_all(&root).unwrap();
    }
}
