//! A scratch directory per hostile-input case: a results directory, a
//! baselines directory and a cache of its own, and the assertion every such
//! case makes: the exit status, the first line a user sees, no panic, and
//! the same bytes in the lab (and nothing new beside it) afterwards.

use crate::common::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Every file and directory under `dir` with the hash of its bytes (a
/// link as what it points to, never followed).
pub fn snapshot(dir: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            let kind = e.file_type().unwrap();
            if kind.is_symlink() {
                let to = std::fs::read_link(&p).unwrap();
                out.insert(p, format!("link to {}", to.display()));
            } else if kind.is_dir() {
                out.insert(p.clone(), "dir".to_string());
                dirs.push(p);
            } else if kind.is_file() {
                let bytes = std::fs::read(&p).unwrap_or_default();
                out.insert(p, sha256_hex(&bytes));
            } else {
                out.insert(p, "special".to_string());
            }
        }
    }
    out
}

/// A real run of x86_64's atomic suite and the baselines recorded from it,
/// made once for every case that needs one (each works on its own copy).
/// Sixty rounds: `baseline update` refuses a real-hardware timing cells
/// too short to be decided against, and never asks for more than that.
fn fixture() -> &'static (PathBuf, PathBuf) {
    static FIXTURE: OnceLock<(PathBuf, PathBuf)> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let dir = scratch_dir("fixture");
        let run = native_atomic_run(&dir.join("results"), &["--rounds", "60"]);
        let baselines = dir.join("baselines");
        record_baselines(&run, &baselines);
        (run, baselines)
    })
}

/// A scratch directory with a results directory, baselines and a cache
/// with one file, and the files a case writes.
pub struct Lab {
    pub dir: PathBuf,
    pub results: PathBuf,
    pub baselines: PathBuf,
    pub cache: PathBuf,
    /// With [`Lab::with_run`]: the run under `results`.
    pub run: PathBuf,
}

impl Lab {
    /// A lab whose results hold an earlier run's file and whose baselines
    /// are a copy of the committed x86_64 ones.
    pub fn new(name: &str) -> Lab {
        let lab = Lab::empty(name);
        std::fs::create_dir_all(lab.results.join("20250101T000000Z")).unwrap();
        std::fs::write(lab.results.join("20250101T000000Z/run.json"), "{}").unwrap();
        copy_dir(
            &repo_root().join("baselines/x86_64"),
            &lab.baselines.join("x86_64"),
        );
        lab
    }

    /// A lab whose results hold a real run (x86_64, atomic, 60 rounds) and
    /// whose baselines were recorded from it.
    pub fn with_run(name: &str) -> Lab {
        let (run, baselines) = fixture();
        let mut lab = Lab::empty(name);
        lab.run = lab.results.join(run.file_name().unwrap());
        copy_dir(run, &lab.run);
        copy_dir(baselines, &lab.baselines);
        lab
    }

    fn empty(name: &str) -> Lab {
        let dir = scratch_dir(&format!("lab-{name}"));
        let lab = Lab {
            results: dir.join("results"),
            baselines: dir.join("baselines"),
            cache: dir.join("cache"),
            run: PathBuf::new(),
            dir,
        };
        std::fs::create_dir_all(&lab.results).unwrap();
        std::fs::create_dir_all(&lab.baselines).unwrap();
        std::fs::create_dir_all(&lab.cache).unwrap();
        std::fs::write(lab.cache.join("marker"), "the cache before").unwrap();
        lab
    }

    /// Writes a file into the lab.
    pub fn file(&self, name: &str, text: &str) -> PathBuf {
        let path = self.dir.join(name);
        std::fs::write(&path, text).unwrap();
        path
    }

    /// A copy of the lab's run beside it under `results`, changed by `edit`.
    pub fn edited_run(&self, name: &str, edit: impl FnOnce(&Path)) -> PathBuf {
        let copy = self.results.join(name);
        copy_dir(&self.run, &copy);
        edit(&copy);
        copy
    }

    /// The xtask command of ARGS from the repository root with the lab's
    /// cache; `{results}`, `{baselines}` and `{run}` in ARGS are the lab's.
    pub fn command(&self, args: &[&str]) -> Command {
        let args: Vec<String> = args
            .iter()
            .map(|a| {
                a.replace("{results}", s(&self.results))
                    .replace("{baselines}", s(&self.baselines))
                    .replace("{run}", s(&self.run))
            })
            .collect();
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_xtask"));
        cmd.args(&args)
            .current_dir(repo_root())
            .env("LOCKMATRIX_CACHE", &self.cache);
        cmd
    }

    pub fn run(&self, args: &[&str]) -> Output {
        self.command(args).output().expect("xtask runs")
    }

    /// Runs ARGS; asserts the exit status, that the first line of output
    /// starts with `first`, that nothing panicked, and that the lab (its
    /// results, baselines and cache, and anything beside them) and the
    /// repository's own results/ are unchanged. Returns the output and
    /// how long it took.
    pub fn case(&self, args: &[&str], status: i32, first: &str) -> (Output, Duration) {
        self.case_of(self.command(args), status, first)
    }

    /// [`Lab::case`] of a command made by [`Lab::command`] and changed.
    pub fn case_of(&self, mut cmd: Command, status: i32, first: &str) -> (Output, Duration) {
        let repo_results = repo_root().join("results");
        let before = (snapshot(&self.dir), repo_results.exists());
        let start = Instant::now();
        let out = cmd.output().expect("xtask runs");
        let took = start.elapsed();
        let all = text(&out);
        assert_eq!(out.status.code(), Some(status), "{all}");
        let line = first_line(&out);
        assert!(
            line.starts_with(first),
            "expected the first line to start with\n  {first}\nbut it is\n  {}",
            shorten(&line)
        );
        assert!(!all.contains("panicked"), "{all}");
        assert_eq!(
            (snapshot(&self.dir), repo_results.exists()),
            before,
            "files changed"
        );
        eprintln!("exit {status} in {took:.2?}: {}", shorten(&line));
        (out, took)
    }
}

impl Drop for Lab {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The first line a user sees: stderr's (errors), else stdout's.
pub fn first_line(out: &Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr);
    let out = String::from_utf8_lossy(&out.stdout);
    err.lines()
        .next()
        .or_else(|| out.lines().next())
        .unwrap_or("")
        .to_string()
}

pub fn shorten(line: &str) -> String {
    let s: String = line.chars().take(200).collect();
    if s.len() < line.len() {
        format!("{s}...")
    } else {
        s
    }
}

/// Copies a directory tree (files and directories; links as links).
pub fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let e = e.unwrap();
        let (p, kind) = (e.path(), e.file_type().unwrap());
        let dest = to.join(p.file_name().unwrap());
        if kind.is_symlink() {
            std::os::unix::fs::symlink(std::fs::read_link(&p).unwrap(), &dest).unwrap();
        } else if kind.is_dir() {
            copy_dir(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).unwrap();
        }
    }
}

/// Rewrites a JSON file through `edit`.
pub fn edit_json(path: &Path, edit: impl FnOnce(&mut serde_json::Value)) {
    let mut v = read_json(path);
    edit(&mut v);
    std::fs::write(path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}
