//! Running the suites under Miri: `cargo miri setup` (Miri's own std,
//! built once per toolchain into Miri's cache), `--list` (which builds the
//! suite for Miri first) and one `-Zmiri-many-seeds` run per lock and
//! client, each killed with its process group when its time is up.
//!
//! The target dir is the cache's `miri-target`, shared by every tree on
//! the machine (the checkout, `--against` worktrees, `--crate` trees);
//! one process at a time builds and runs there. Cargo takes a workspace
//! package at the same place in two trees for one, fresh by its files'
//! times, so a tree other than the one built there last has its packages
//! cleaned first ([`forget_other_tree`]), as the other builds do.

use super::error::MiriError;
use super::record::{self, Listed, Seeds, Solo};
use super::toolchain::Miri;
use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// Flags every client runs with besides its seeds and preemption rate:
/// std's `RwLock` adapter leaks its lock by design (`std_rwlock.rs`), and
/// a leak is not what is checked.
pub const FLAGS: &str = "-Zmiri-ignore-leaks";

/// The Miri flags of a client.
pub fn miriflags(seeds: u32, preemption_rate: f64) -> String {
    format!(
        "-Zmiri-many-seeds=0..{seeds} -Zmiri-many-seeds-keep-going -Zmiri-preemption-rate={preemption_rate} {FLAGS}"
    )
}

/// The Miri flags that run one seed of a client alone: its own output,
/// and the command that reproduces it.
pub fn seed_miriflags(seed: u32, preemption_rate: f64) -> String {
    format!("-Zmiri-seed={seed} -Zmiri-preemption-rate={preemption_rate} {FLAGS}")
}

/// The target dir of the Miri builds.
pub fn target_dir() -> Result<PathBuf, MiriError> {
    Ok(crate::cache::dir()?.join("miri-target"))
}

/// Holds the Miri target dir while a tree is built and run there.
pub struct Held {
    _lock: std::fs::File,
    dir: PathBuf,
}

pub fn hold() -> Result<Held, MiriError> {
    let dir = target_dir()?;
    let lock = crate::build::lock_dir(&dir)
        .map_err(|e| MiriError::io(&dir, std::io::Error::other(e.to_string())))?;
    Ok(Held { _lock: lock, dir })
}

/// What one command said, or that it was killed at its deadline.
struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
    timed_out: bool,
    secs: f64,
}

/// Runs `cmd` in a process group of its own, killing the whole group
/// (cargo, cargo-miri and the interpreter) after `timeout`.
fn execute(mut cmd: Command, timeout: Duration) -> std::io::Result<Ran> {
    let start = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()?;
    let drain = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut buf = Vec::new();
            let _ = (&mut r)
                .take(crate::file::OUTPUT_LIMIT)
                .read_to_end(&mut buf);
            let _ = std::io::copy(&mut r, &mut std::io::sink());
            String::from_utf8_lossy(&buf).into_owned()
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("piped")));
    let err = drain(Box::new(child.stderr.take().expect("piped")));
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    let waiter = std::thread::spawn(move || {
        let status = child.wait();
        let _ = tx.send(());
        status
    });
    let timed_out = rx.recv_timeout(timeout).is_err();
    if timed_out {
        // SAFETY: a signal to the group this function made, named by its
        // leader's pid; the leader had not exited a moment ago, so the
        // group is still ours (a pid is reused only once it is reaped).
        unsafe { libc::killpg(pid as libc::pid_t, libc::SIGKILL) };
    }
    let status = waiter.join().expect("the waiter does not panic")?;
    Ok(Ran {
        code: status.code(),
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
        timed_out,
        secs: start.elapsed().as_secs_f64(),
    })
}

/// `cargo miri setup`: Miri's std for this toolchain, built once.
pub fn setup(miri: &Miri) -> Result<f64, MiriError> {
    let ran = execute(
        miri.command(&["cargo", "miri", "setup"]),
        Duration::from_secs(1200),
    )
    .map_err(|e| MiriError::Setup { log: e.to_string() })?;
    if ran.code != Some(0) {
        return Err(MiriError::Setup {
            log: format!(
                "{}{}",
                ran.stderr,
                if ran.timed_out {
                    "error: timed out"
                } else {
                    ""
                }
            ),
        });
    }
    Ok(ran.secs)
}

fn cargo_miri_run(miri: &Miri, held: &Held, tree: &Path, suite: &str, args: &[&str]) -> Command {
    let mut cmd = miri.command(&["cargo", "miri", "run", "-q", "--locked", "-p", suite, "--"]);
    cmd.args(args)
        .current_dir(tree)
        .env("CARGO_TARGET_DIR", &held.dir);
    cmd
}

/// Cleans the workspace packages out of the Miri target dir when they
/// were last built from another tree, or other sources: an `--against` base
/// whose files are older than its head's build would otherwise run the
/// head's binary, and a harness changed in one tree would be linked to
/// another tree's suite.
fn forget_other_tree(miri: &Miri, held: &Held, tree: &Path) -> Result<(), MiriError> {
    // The tree's place too, not only its contents: what cargo-miri builds
    // for a binary is how to run it, from that tree (`cd TREE && miri
    // ...`), and a deleted copy of the same sources cannot be run.
    let sources = format!(
        "{}\n{}",
        crate::build::sources_hash(tree, &[]).map_err(|e| MiriError::io(tree, e))?,
        tree.canonicalize()
            .unwrap_or_else(|_| tree.to_path_buf())
            .display()
    );
    let stamp = crate::build::SourcesStamp::new(&held.dir, sources);
    if stamp.holds() {
        return Ok(());
    }
    // Plain `cargo clean -p` of Miri's part of the dir (`cargo miri clean`
    // takes no `-p`: it empties the dir and Miri's std with it).
    let host = format!("{}-unknown-linux-gnu", std::env::consts::ARCH);
    let mut clean = miri.command(&["cargo", "clean", "-q", "--target", &host]);
    clean
        .current_dir(tree)
        .env("CARGO_TARGET_DIR", held.dir.join("miri"));
    let _ = crate::build::clean_packages(clean);
    stamp.write().map_err(|e| MiriError::io(stamp.path(), e))
}

/// Builds `suite` of the tree under Miri and lists its locks' clients;
/// with the seconds that took.
pub fn list(
    miri: &Miri,
    held: &Held,
    tree: &Path,
    suite: &str,
) -> Result<(Vec<Listed>, f64), MiriError> {
    forget_other_tree(miri, held, tree)?;
    let cmd = cargo_miri_run(miri, held, tree, suite, &["--list"]);
    let build = |log: String| MiriError::Build {
        suite: suite.to_string(),
        log,
    };
    let ran = execute(cmd, Duration::from_secs(1200)).map_err(|e| build(e.to_string()))?;
    if ran.code != Some(0) {
        return Err(build(format!(
            "{}{}",
            ran.stderr,
            if ran.timed_out {
                "error: timed out"
            } else {
                ""
            }
        )));
    }
    Ok((record::parse_list(suite, &ran.stdout)?, ran.secs))
}

/// What one client's run found.
pub struct ClientRun {
    pub seeds: Seeds,
    /// Killed at its deadline.
    pub timed_out: bool,
    pub secs: f64,
}

/// Runs one client of one lock on its seeds, for at most `timeout`.
pub fn client(
    miri: &Miri,
    held: &Held,
    tree: &Path,
    c: &Listed,
    timeout: Duration,
) -> Result<ClientRun, MiriError> {
    let mut cmd = cargo_miri_run(
        miri,
        held,
        tree,
        c.suite.as_str(),
        &["--lock", c.lock.as_str(), "--client", &c.client],
    );
    cmd.env("MIRIFLAGS", miriflags(c.seeds, c.preemption_rate));
    let ran = execute(cmd, timeout).map_err(|e| MiriError::Build {
        suite: c.suite.to_string(),
        log: format!("error: cannot run cargo miri: {e}"),
    })?;
    let seeds = match (ran.timed_out, ran.code) {
        (true, _) => record::parse_seeds(&ran.stderr, 0),
        (false, code) => record::parse_seeds(&ran.stderr, code.unwrap_or(-1)),
    };
    Ok(ClientRun {
        seeds,
        timed_out: ran.timed_out,
        secs: ran.secs,
    })
}

/// Runs one seed of one client alone, for at most `timeout`: what it
/// failed with, in its own words (`None`: it did not fail, or its time
/// ran out).
pub fn seed(
    miri: &Miri,
    held: &Held,
    tree: &Path,
    c: &Listed,
    seed: u32,
    timeout: Duration,
) -> Result<Option<Solo>, MiriError> {
    let mut cmd = cargo_miri_run(
        miri,
        held,
        tree,
        c.suite.as_str(),
        &["--lock", c.lock.as_str(), "--client", &c.client],
    );
    cmd.env("MIRIFLAGS", seed_miriflags(seed, c.preemption_rate));
    let ran = execute(cmd, timeout).map_err(|e| MiriError::Build {
        suite: c.suite.to_string(),
        log: format!("error: cannot run cargo miri: {e}"),
    })?;
    Ok(match ran.timed_out {
        true => None,
        false => record::parse_seed(&ran.stderr, seed, ran.code.unwrap_or(-1)),
    })
}
