//! Bad input, one case per way a user has broken lockmatrix: each gets
//! the exit status the README promises (2 for bad input or set-up), a
//! message naming the file, line or flag, and leaves the results and the
//! baselines byte for byte as they were. Nothing hangs or panics.

use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::time::{Duration, Instant};

use crate::common::*;

/// Every file under `dir` with the hash of its bytes.
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, String> {
    let mut out = BTreeMap::new();
    let mut dirs = vec![dir.to_path_buf()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else {
                out.insert(
                    p.clone(),
                    sha256_hex(&std::fs::read(&p).unwrap_or_default()),
                );
            }
        }
    }
    out
}

/// The place all cases share: a real run, its baselines, a results dir.
struct Lab {
    dir: PathBuf,
    results: PathBuf,
    baselines: PathBuf,
    run: PathBuf,
}

impl Lab {
    fn new() -> Lab {
        let dir = std::env::temp_dir().join(format!("lockmatrix-bad-input-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (results, baselines) = (dir.join("results"), dir.join("baselines"));
        let run = native_atomic_run(&results, &["--rounds", "3"]);
        record_baselines(&run, &baselines);
        Lab {
            dir,
            results,
            baselines,
            run,
        }
    }

    /// Runs `args`; asserts the exit status, that stderr/stdout contains
    /// every `expect`, and that results and baselines are unchanged.
    fn case(&self, name: &str, args: &[&str], status: i32, expect: &[&str]) -> Output {
        let before = (snapshot(&self.results), snapshot(&self.baselines));
        let start = Instant::now();
        let out = xtask(args);
        let took = start.elapsed();
        let all = text(&out);
        assert_eq!(out.status.code(), Some(status), "{name}: {all}");
        for e in expect {
            assert!(all.contains(e), "{name}: expected `{e}` in:\n{all}");
        }
        assert!(!all.contains("panicked"), "{name}: {all}");
        assert_eq!(
            (snapshot(&self.results), snapshot(&self.baselines)),
            before,
            "{name} changed files"
        );
        eprintln!("{name}: exit {status} in {took:.1?}: {}", first_line(&out));
        out
    }

    /// A copy of the run under results/, changed by `edit`.
    fn edited_run(&self, name: &str, edit: impl FnOnce(&Path)) -> PathBuf {
        let copy = self.results.join(name);
        copy_dir(&self.run, &copy);
        edit(&copy);
        copy
    }
}

/// The first timing cell of a baseline file.
fn first_timing_cell(v: &mut Value) -> &mut Value {
    v["cells"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|c| c["metric"] == "ticks_per_op")
        .unwrap()
}

fn first_line(out: &Output) -> String {
    let err = String::from_utf8_lossy(&out.stderr);
    err.lines()
        .find(|l| l.starts_with("error"))
        .or_else(|| err.lines().next())
        .unwrap_or("")
        .to_string()
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap() {
        let p = e.unwrap().path();
        let dest = to.join(p.file_name().unwrap());
        if p.is_dir() {
            copy_dir(&p, &dest);
        } else {
            std::fs::copy(&p, &dest).unwrap();
        }
    }
}

fn edit_json(path: &Path, edit: impl FnOnce(&mut Value)) {
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    edit(&mut v);
    std::fs::write(path, serde_json::to_string_pretty(&v).unwrap()).unwrap();
}

/// A targets file with one target whose `key: value` line is replaced.
fn targets_with(lab: &Lab, name: &str, text: &str) -> PathBuf {
    let path = lab.dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

const SSH_TARGETS: &str = "defaults:\n  timeout_secs: 60\ntargets:\n  - name: box\n    class: arm64\n    triple: aarch64-unknown-linux-gnu\n    runner: ssh\n    linker: aarch64-linux-gnu-gcc\n    packages: []\n    enabled: true\n    ssh: {host: HOST, port: 22, user: USER}\n";

#[test]
fn every_bad_input_gets_exit_2_a_clear_message_and_loses_nothing() {
    let _cpus = shared_cpus();
    let lab = Lab::new();
    let (r, b) = (s(&lab.results).to_string(), s(&lab.baselines).to_string());
    let run = s(&lab.run).to_string();

    // Options are checked before anything is built.
    for (name, flag, expect) in [
        ("negative delta", "--delta=-1", "gate delta is -1"),
        ("alpha 2", "--alpha=2", "gate alpha is 2"),
        ("rounds 0", "--rounds=0", "--rounds"),
        ("timeout 0", "--timeout=0", "--timeout"),
    ] {
        let out = lab.case(
            name,
            &[
                "matrix",
                "--no-install",
                "--targets",
                "x86_64",
                flag,
                "--results",
                &r,
            ],
            2,
            &[expect],
        );
        assert!(
            !text(&out).contains("built in"),
            "{name}: built before refusing"
        );
    }
    // --results that cannot hold a run: on a read-only file system, a
    // directory of one, a file.
    let a_file = lab.dir.join("a-file");
    std::fs::write(&a_file, "x").unwrap();
    for (name, dir) in [
        ("results on procfs", "/proc/lockmatrix-x".to_string()),
        ("results read-only dir", "/proc/self".to_string()),
        ("results is a file", s(&a_file).to_string()),
    ] {
        lab.case(
            name,
            &[
                "matrix",
                "--no-install",
                "--targets",
                "x86_64",
                "--results",
                &dir,
            ],
            2,
            &["--results", "expected a writable directory"],
        );
    }

    // Runs that are not there, not whole, or damaged.
    let nosuch = lab.results.join("nosuch");
    lab.case(
        "gate nosuch",
        &["gate", s(&nosuch), "--baselines", &b],
        2,
        &["no such run directory"],
    );
    lab.case(
        "report nosuch",
        &["report", s(&nosuch)],
        2,
        &["no such run directory"],
    );
    let truncated = lab.edited_run("truncated", |d| {
        let text = std::fs::read_to_string(d.join("run.json")).unwrap();
        std::fs::write(d.join("run.json"), &text[..text.len() / 2]).unwrap();
    });
    lab.case(
        "truncated run.json",
        &["gate", s(&truncated), "--baselines", &b],
        2,
        &["run.json: not a lockmatrix run", "cut short"],
    );
    for (name, edit) in [
        ("garbage jsonl", "garbage"),
        ("truncated jsonl", "truncate"),
        ("deleted jsonl", "delete"),
    ] {
        let damaged = lab.edited_run(&name.replace(' ', "-"), |d| {
            let f = d.join("x86_64/atomic.jsonl");
            match edit {
                "garbage" => std::fs::write(&f, "not json\n").unwrap(),
                "truncate" => {
                    let bytes = std::fs::read(&f).unwrap();
                    std::fs::write(&f, &bytes[..bytes.len() / 2]).unwrap()
                }
                _ => std::fs::remove_file(&f).unwrap(),
            }
        });
        for cmd in [
            vec!["gate", s(&damaged), "--baselines", &b],
            vec!["report", s(&damaged)],
            vec![
                "baseline",
                "update",
                "--from",
                s(&damaged),
                "--baselines",
                &b,
            ],
        ] {
            lab.case(name, &cmd, 2, &["x86_64/atomic.jsonl"]);
        }
        std::fs::remove_dir_all(&damaged).unwrap();
    }
    std::fs::remove_dir_all(&truncated).unwrap();

    // An interrupted run (Ctrl-C) is marked, skipped by name, refused.
    let mut matrix = std::process::Command::new(env!("CARGO_BIN_EXE_xtask"));
    // Ctrl-C reaches a foreground process whose SIGINT is the default; a
    // test run started in the background (`cmd &` in a script) inherits it
    // ignored, so restore it.
    // SAFETY: signal() is async-signal-safe, as pre_exec requires.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut matrix, || {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            Ok(())
        });
    }
    let mut child = matrix
        .args([
            "matrix",
            "--no-install",
            "--no-insns",
            "--targets",
            "x86_64",
            "--suites",
            "rwsem",
            "--rounds",
            "20",
            "--results",
            &r,
        ])
        .current_dir(repo_root())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let interrupted = loop {
        let newer: Vec<PathBuf> = std::fs::read_dir(&lab.results)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| *p > lab.run && p.join("run.json").is_file() && p.join("bin").is_dir())
            .collect();
        if let Some(p) = newer.first() {
            // Built, and now running its rounds.
            std::thread::sleep(Duration::from_secs(2));
            break p.clone();
        }
        assert!(
            started.elapsed() < Duration::from_secs(300),
            "the run never started"
        );
        std::thread::sleep(Duration::from_millis(100));
    };
    // SAFETY: a signal to the child this test started.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let _ = child.wait();
    let run_json = read_json(&interrupted.join("run.json"));
    assert_eq!(run_json["finished"], Value::Null, "{run_json}");
    lab.case(
        "report after Ctrl-C",
        &["report", "--results", &r],
        0,
        &[
            &format!("skipping run {}: incomplete", interrupted.display()),
            &format!("using run {run}"),
        ],
    );
    lab.case(
        "gate an interrupted run",
        &["gate", s(&interrupted), "--baselines", &b],
        2,
        &["is incomplete", "the gate needs a complete run"],
    );
    lab.case(
        "update from an interrupted run",
        &[
            "baseline",
            "update",
            "--from",
            s(&interrupted),
            "--baselines",
            &b,
        ],
        2,
        &["is incomplete"],
    );
    std::fs::remove_dir_all(&interrupted).unwrap();

    // targets.yaml values that could become options or flood a report.
    let bad_user = targets_with(
        &lab,
        "user.yaml",
        &SSH_TARGETS
            .replace("HOST", "example.org")
            .replace("USER", "\"-oProxyCommand=touch /tmp/pwned\""),
    );
    lab.case(
        "ssh user as option",
        &["doctor", "--config", s(&bad_user)],
        2,
        &["user.yaml:4: target 'box': `ssh.user` is `-oProxyCommand=touch /tmp/pwned`"],
    );
    let bad_host = targets_with(
        &lab,
        "host.yaml",
        &SSH_TARGETS
            .replace("HOST", "\"a;reboot\"")
            .replace("USER", "pi"),
    );
    lab.case(
        "ssh host with ;",
        &["doctor", "--config", s(&bad_host)],
        2,
        &["`ssh.host` is `a;reboot`: expected a host name"],
    );
    let huge = targets_with(
        &lab,
        "class.yaml",
        &SSH_TARGETS
            .replace(
                "class: arm64",
                &format!("class: {}", "a".repeat(10_000_000)),
            )
            .replace("HOST", "h")
            .replace("USER", "u"),
    );
    lab.case(
        "10 MB class",
        &[
            "matrix",
            "--no-install",
            "--config",
            s(&huge),
            "--results",
            &r,
        ],
        2,
        &["class.yaml:4: target 'box': `class` is 10000000 characters long"],
    );
    let unknown = targets_with(&lab, "triple.yaml", "defaults:\n  timeout_secs: 60\ntargets:\n  - name: odd\n    class: oddity\n    triple: nonsense-unknown-linux-gnu\n    runner: qemu\n    emulator: qemu-aarch64\n    linker: cc\n    packages: []\n    enabled: true\n");
    lab.case(
        "unknown triple",
        &["doctor", "--config", s(&unknown)],
        2,
        &["NOT READY", "nonsense-unknown-linux-gnu"],
    );
    // A matrix of nothing but targets that cannot run tested nothing.
    let keyless = targets_with(
        &lab,
        "keyless.yaml",
        &SSH_TARGETS
            .replace("HOST", "192.0.2.1")
            .replace("USER", "pi"),
    );
    let out = xtask(&[
        "matrix",
        "--no-install",
        "--config",
        s(&keyless),
        "--results",
        s(&lab.dir.join("keyless-results")),
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(
        text(&out).contains("nothing ran: box: no runner"),
        "{}",
        text(&out)
    );

    // Baselines: a huge value is a value (and nothing hangs); negative,
    // zero and empty samples are corrupt, named, and never overwritten.
    let file = lab.baselines.join("x86_64/atomic.json");
    let original = std::fs::read_to_string(&file).unwrap();

    edit_json(&file, |v| {
        let c = first_timing_cell(v);
        c["samples"][0] = Value::from(1e100);
        let mut s: Vec<f64> = c["samples"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect();
        s.sort_by(f64::total_cmp);
        c["summary"]["max"] = Value::from(*s.last().unwrap());
        c["summary"]["min"] = Value::from(s[0]);
        c["summary"]["median"] = Value::from(s[s.len() / 2]);
    });
    lab.case(
        "1e100 in a baseline",
        &["gate", &run, "--baselines", &b],
        0,
        &["=> PASS"],
    );
    for (name, samples, why) in [
        ("negative sample", "[-3.0]", "expected a positive time"),
        ("zero sample", "[0.0]", "expected a positive time"),
        ("empty samples", "[]", "has no samples"),
    ] {
        std::fs::write(&file, &original).unwrap();
        edit_json(&file, |v| {
            let c = first_timing_cell(v);
            c["samples"] = serde_json::from_str(samples).unwrap();
        });
        lab.case(
            name,
            &["gate", &run, "--baselines", &b],
            1,
            &["corrupt baseline", why],
        );
        lab.case(
            name,
            &["baseline", "update", "--from", &run, "--baselines", &b],
            2,
            &["refusing to overwrite", why],
        );
    }
    std::fs::write(&file, &original).unwrap();

    // baseline update: all or nothing across files, and stale temp files
    // from an interrupted update are removed and named.
    let two = lab.dir.join("two-targets");
    copy_dir(&lab.run, &two);
    edit_json(&two.join("run.json"), |v| {
        // One value changed, so x86_64's file would be rewritten too.
        let x = &mut v["targets"][0]["suites"][0]["samples"][0]["value"];
        *x = Value::from(x.as_f64().unwrap() * 1.01);
        let mut t = v["targets"][0].clone();
        t["name"] = Value::from("x86_64-copy");
        v["targets"].as_array_mut().unwrap().push(t);
    });
    copy_dir(&two.join("x86_64"), &two.join("x86_64-copy"));
    std::fs::write(
        lab.baselines.join("x86_64-copy"),
        "a file where a directory must go",
    )
    .unwrap();
    let before = snapshot(&lab.baselines);
    let out = xtask(&["baseline", "update", "--from", s(&two), "--baselines", &b]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("nothing written"), "{}", text(&out));
    assert_eq!(
        snapshot(&lab.baselines),
        before,
        "a failed update changed a file"
    );
    std::fs::remove_file(lab.baselines.join("x86_64-copy")).unwrap();
    let stale = lab.baselines.join("x86_64/.atomic.json.tmp-99999");
    std::fs::write(&stale, "half an update").unwrap();
    let out = xtask(&["baseline", "update", "--from", s(&two), "--baselines", &b]);
    assert!(out.status.success(), "{}", text(&out));
    assert!(
        text(&out).contains(&format!(
            "removed {}, left by an interrupted update",
            stale.display()
        )),
        "{}",
        text(&out)
    );
    assert!(!stale.exists());
    assert!(lab.baselines.join("x86_64-copy/atomic.json").is_file());
    std::fs::remove_dir_all(&lab.dir).unwrap();
}
