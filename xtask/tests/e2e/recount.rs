//! Stored baselines gate on every machine: when their counts came from
//! another compiler (Debian moves `rustc-web` within a release; a Rust
//! developer's rustup toolchain is another), the matrix counts the
//! baselines' commit again with this machine's toolchain and compares
//! every count exactly, on real commits of a scratch copy of this
//! repository. The other compiler is a fixture (the baselines' recorded
//! compiler and binary hash edited): one machine has one Debian compiler.
//! Each kind of toolchain the matrix can pick is tried where this machine
//! has it.

use serde_json::Value;
use std::path::{Path, PathBuf};

use crate::common::*;
use crate::scratch::*;

const TICKET: &str = "lock_unlock {\"lock\":\"ticket\",\"threads\":1} insns_per_op";

/// A scratch repository whose first commit's baselines of `targets`'
/// spinlock suite say another compiler counted them (its label and binary
/// hash edited, committed), made with `toolchain` (`--toolchain` flags).
struct Recorded {
    work: PathBuf,
    repo: PathBuf,
    results: PathBuf,
    /// The commit the baselines were recorded at.
    base: String,
    targets: String,
    toolchain: Vec<String>,
}

impl Recorded {
    fn new(name: &str, targets: &str, toolchain: &[&str]) -> Recorded {
        let work = scratch_dir(name);
        let (repo, results) = (work.join("repo"), work.join("results"));
        let base = scratch_repo(&repo);
        let r = Recorded {
            work,
            repo,
            results,
            base,
            targets: targets.to_string(),
            toolchain: toolchain.iter().map(|s| s.to_string()).collect(),
        };
        let (out, run) = matrix_in(&r.repo, &r.results, &r.args(&["--no-gate"]));
        assert!(out.status.success(), "{}", text(&out));
        // Counts only: the timings of a one-round run could not gate a
        // later one, and `baseline update` says so.
        let update = xtask_in(
            &r.repo,
            &["baseline", "update", "--counts-only", "--from", s(&run)],
        );
        assert!(update.status.success(), "{}", text(&update));
        for t in targets.split(',') {
            let file = r.repo.join("baselines").join(t).join("spinlock.json");
            let text = std::fs::read_to_string(&file).unwrap();
            let b: Value = serde_json::from_str(&text).unwrap();
            assert_eq!(b["commit"], r.base.as_str());
            let compiler = b["testbed"]["compiler_version"]
                .as_str()
                .unwrap()
                .to_string();
            // Another compiler builds another binary: the one recorded is not
            // this machine's (were it, the counts would compare as they are).
            let binary = b["binary"].as_str().unwrap().to_string();
            let older = text
                .replace(&compiler, "rustc 1.84.0 (a fixture)")
                .replace(&binary, &"0".repeat(64));
            let b: Value = serde_json::from_str(&older).unwrap();
            assert_eq!(b["testbed"]["compiler_version"], "rustc 1.84.0 (a fixture)");
            std::fs::write(&file, older).unwrap();
        }
        git(
            &r.repo,
            &["commit", "-qam", "baselines from an older compiler"],
        );
        r
    }

    fn args<'a>(&'a self, more: &[&'a str]) -> Vec<&'a str> {
        let mut args = vec![
            "--targets",
            &self.targets,
            "--suites",
            "spinlock",
            "--rounds",
            "1",
        ];
        args.extend(self.toolchain.iter().map(String::as_str));
        args.extend_from_slice(more);
        args
    }

    fn matrix(&self, json: &str, more: &[&str]) -> (std::process::Output, Value) {
        let json = self.work.join(json);
        matrix_report(&self.repo, &self.results, &json, &self.args(more))
    }

    /// The unchanged tree compares every count and footprint through the
    /// recount; one more load on the ticket lock's fast path then fails on
    /// every target, through it. Returns the toolchain each target used.
    fn gates_through_the_recount(&self) -> Vec<(String, bool)> {
        let (out, report) = self.matrix("same.json", &[]);
        let shown = text(&out);
        assert_eq!(out.status.code(), Some(0), "{shown}");
        let n = self.targets.split(',').count();
        assert!(
            shown.contains(&format!(
                "counting their commit {} again with this one on {n} targets",
                &self.base[..12]
            )),
            "{shown}"
        );
        let recounted = &report["recounted"][0];
        assert_eq!(
            recounted["recorded_with"], "rustc 1.84.0 (a fixture)",
            "{report}"
        );
        let counts = report["counts_with_reference"].as_u64().unwrap();
        assert!(counts >= 10 * n as u64, "{report}");
        assert_eq!(report["counts_compared"].as_u64(), Some(counts), "{shown}");
        assert_eq!(recounted["counts"].as_u64(), Some(counts));
        let footprints = report["footprints_compared"].as_u64().unwrap();
        assert!(footprints > 0, "{report}");
        assert_eq!(recounted["footprints"].as_u64(), Some(footprints));
        assert!(
            shown.contains(&format!(
                "counts: baseline {} recounted with rustc",
                &self.base[..12]
            )) && shown.contains(&format!(
                "{counts} counts and {footprints} footprints compared"
            )),
            "{shown}"
        );
        assert!(
            shown.contains(&format!(
                "{counts}/{counts} instruction counts compared exactly"
            )),
            "{shown}"
        );
        let run = read_json(&newest(&self.results).join("run.json"));
        let kinds = run["targets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| {
                (
                    t["toolchain"]["what"].as_str().unwrap().to_string(),
                    t["build_std"].as_bool().unwrap(),
                )
            })
            .collect();

        let fast_path = "        let ticket = self.next.fetch_add(1, Relaxed);";
        commit_edit(
            &self.repo,
            "suites/spinlock/src/locks/ticket.rs",
            fast_path,
            &format!("        std::hint::black_box(self.owner.load(Relaxed));\n{fast_path}"),
            "ticket: one more load on the fast path",
        );
        let (out, report) = self.matrix("slower.json", &[]);
        assert_eq!(out.status.code(), Some(1), "{}", text(&out));
        let want: Vec<String> = self
            .targets
            .split(',')
            .map(|t| format!("{t} {TICKET}"))
            .collect();
        assert_eq!(regressions(&report), want, "{}", text(&out));
        kinds
    }
}

/// The rustup toolchains here (name, directory) that have rust-src.
fn rustup_with_rust_src() -> Vec<String> {
    let home = std::env::var_os("RUSTUP_HOME")
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| Path::new(&h).join(".rustup")));
    let Some(dir) = home.map(|h| h.join("toolchains")) else {
        return Vec::new();
    };
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter(|e| {
            e.path()
                .join("lib/rustlib/src/rust/library/std/Cargo.toml")
                .is_file()
        })
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Debian's rustc-web (build-std), chosen with `--toolchain debian`: the
/// toolchain a fresh Debian machine has.
#[test]
fn baselines_from_another_compiler_are_recounted_with_debians_rustc_web() {
    let _cpus = shared_cpus();
    let r = Recorded::new(
        "recount-debian",
        "aarch64,riscv64",
        &["--toolchain", "debian"],
    );
    let kinds = r.gates_through_the_recount();
    assert!(
        kinds
            .iter()
            .all(|(what, std)| what == "debian rustc-web" && *std),
        "{kinds:?}"
    );

    // A clone without the baselines' commit says what to fetch: exit 2
    // under --require-gate, NOT GATED without it.
    let recorded = git(&r.repo, &["rev-parse", "HEAD~1"]);
    git(&r.repo, &["branch", "recorded", &recorded]);
    let shallow = r.work.join("shallow");
    let url = format!("file://{}", r.repo.display());
    git(
        &r.work,
        &[
            "clone",
            "-q",
            "--depth",
            "1",
            "--branch",
            "recorded",
            &url,
            s(&shallow),
        ],
    );
    let json = r.work.join("shallow.json");
    let (out, _) = matrix_report(&shallow, &r.results, &json, &r.args(&["--require-gate"]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("git fetch --unshallow"),
        "{}",
        text(&out)
    );
    let json = r.work.join("shallow2.json");
    let (out, report) = matrix_report(&shallow, &r.results, &json, &r.args(&[]));
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert_eq!(report["result"], "not_gated", "{}", text(&out));
    assert!(text(&out).contains("NOT GATED: "), "{}", text(&out));
    std::fs::remove_dir_all(&r.work).unwrap();
}

/// A rustup toolchain with the target's std (no build-std): x86_64's own,
/// counted under qemu-x86_64. The cached worktree of the baselines'
/// commit is then unregistered and altered (what a stale or planted cache
/// holds): it is not believed, and every count still compares.
#[test]
fn baselines_from_another_compiler_are_recounted_with_a_rustup_toolchains_std() {
    let _cpus = shared_cpus();
    let r = Recorded::new("recount-rustup-std", "x86_64", &[]);
    let (out, _) = r.matrix("first.json", &[]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let list = git(&r.repo, &["worktree", "list", "--porcelain"]);
    let tree = list
        .split("\n\n")
        .find(|w| w.contains(&format!("HEAD {}", r.base)))
        .and_then(|w| w.lines().next()?.strip_prefix("worktree "))
        .map(PathBuf::from)
        .unwrap_or_else(|| panic!("no worktree of {} in {list}", r.base));
    std::fs::remove_dir_all(r.repo.join(".git/worktrees")).unwrap();
    let ticket = tree.join("suites/spinlock/src/locks/ticket.rs");
    let code = std::fs::read_to_string(&ticket).unwrap();
    let fast_path = "        let ticket = self.next.fetch_add(1, Relaxed);";
    std::fs::write(
        &ticket,
        code.replace(
            fast_path,
            &format!("        std::hint::black_box(self.owner.load(Relaxed));\n{fast_path}"),
        ),
    )
    .unwrap();
    let kinds = r.gates_through_the_recount();
    assert!(
        kinds
            .iter()
            .all(|(what, std)| what.starts_with("rustup ") && !*std),
        "{kinds:?}"
    );
    assert!(
        !std::fs::read_to_string(&ticket)
            .unwrap()
            .contains("black_box(self.owner"),
        "the planted worktree was used"
    );
    std::fs::remove_dir_all(&r.work).unwrap();
}

/// A rustup toolchain with rust-src (build-std), where one is installed
/// (a nightly with Miri's rust-src, say); chosen with `--toolchain`.
#[test]
fn baselines_from_another_compiler_are_recounted_with_a_rustup_toolchains_rust_src() {
    let _cpus = shared_cpus();
    let Some(name) = rustup_with_rust_src().into_iter().next() else {
        eprintln!("not run here: no rustup toolchain has rust-src (rustup component add rust-src)");
        return;
    };
    let r = Recorded::new("recount-rustup-src", "riscv64", &["--toolchain", &name]);
    let kinds = r.gates_through_the_recount();
    assert!(
        kinds
            .iter()
            .all(|(what, std)| what == &format!("rustup {name}") && *std),
        "{kinds:?}"
    );
    std::fs::remove_dir_all(&r.work).unwrap();
}
