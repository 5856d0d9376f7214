//! Round five of hostile input (issue 48), one test per probe, kept: a
//! path crate's untracked secret and what an interrupted run leaves in the
//! cache, a file that is not a targets file, values echoed in errors,
//! oversized run.json, baselines and targets.yaml, a password the URL
//! grammar hides, a reason that forges a line, and the container's mounts
//! and command line. Each first shows the hostile input is there, then
//! that it is absent where it must not reach.

use crate::common::*;
use crate::lab::*;
use crate::scratch::git;
use serde_json::Value;
use std::io::BufRead;
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};
use std::time::{Duration, Instant};

/// Asserts that the output says `what` somewhere.
fn says(out: &Output, what: &str) {
    let all = text(out);
    assert!(all.contains(what), "expected `{what}` in:\n{all}");
}

/// Asserts that no file under `dir` (and no name) holds `secret`.
fn nowhere(dir: &Path, secret: &str) {
    for (p, kind) in snapshot(dir) {
        assert!(!p.to_string_lossy().contains(secret), "{}", p.display());
        if kind == "dir" || kind == "special" || kind.starts_with("link") {
            continue;
        }
        let bytes = std::fs::read(&p).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&bytes).contains(secret),
            "{} holds the secret",
            p.display()
        );
    }
}

/// A copy of the tinylock fixture committed in a git repository at `dir`,
/// with an untracked, un-ignored `.env` holding `secret`.
fn tinylock_with_secret(dir: &Path, secret: &str) -> PathBuf {
    let from = repo_root().join("xtask/tests/fixtures/tinylock");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    for f in ["Cargo.toml", "src/lib.rs"] {
        std::fs::copy(from.join(f), dir.join(f)).unwrap();
    }
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "tinylock"]);
    std::fs::write(dir.join(".env"), format!("TOKEN={secret}\n")).unwrap();
    // The secret is really there, and git sees it as untracked, not ignored.
    let status = git(dir, &["status", "--porcelain"]);
    assert!(status.contains("?? .env"), "{status}");
    dir.to_path_buf()
}

/// The path crates' copies (and cargo's scratch beside them) under
/// `cache`.
fn copies(cache: &Path) -> Vec<PathBuf> {
    std::fs::read_dir(cache.join("crate-trees"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            let n = p.to_string_lossy();
            n.ends_with(".crate") || n.ends_with(".package-target")
        })
        .collect()
}

fn crate_matrix(results: &Path, spec: &str) -> Vec<String> {
    [
        "matrix",
        "--no-install",
        "--no-insns",
        "--targets",
        "x86_64",
        "--suites",
        "spinlock",
        "--rounds",
        "1",
        "--crate",
        spec,
        "--results",
        s(results),
    ]
    .map(String::from)
    .to_vec()
}

#[test]
fn a_path_crates_untracked_file_is_left_out_named_and_kept_nowhere() {
    let _cpus = shared_cpus();
    let lab = Lab::new("r5-untracked");
    let secret = format!("hunter2-r5-{}", std::process::id());
    let krate = tinylock_with_secret(&lab.dir.join("tinylock"), &secret);
    let spec = format!("tinylock@path:{}", krate.display());
    let args = crate_matrix(&lab.results, &spec);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let out = lab.run(&args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    // Named in one line, the file's name and not its contents.
    let named: Vec<String> = text(&out)
        .lines()
        .filter(|l| l.contains("left out"))
        .map(String::from)
        .collect();
    assert_eq!(named.len(), 1, "{}", text(&out));
    assert!(
        named[0].contains("left out 1 untracked file(s)")
            && named[0].ends_with(": .env (commit them or name them in `include` to measure them)"),
        "{}",
        named[0]
    );
    assert!(!text(&out).contains(&secret));
    nowhere(&lab.cache, &secret);
    nowhere(&lab.results, &secret);
    assert!(copies(&lab.cache).is_empty(), "{:?}", copies(&lab.cache));
}

/// How far a run got, seen from outside.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Phase {
    /// `cargo package --list` of the crate runs (its scratch target dir).
    Packaging,
    /// The copy is made; cargo resolves the tree.
    Resolving,
    /// The suites build (`start  build`).
    Building,
    /// A suite runs (`start  x86_64/spinlock`).
    Running,
}

/// Starts `args` with `cache` in a process group of its own (as a shell
/// starts a job), waits until it reaches `phase`, then sends `signal` to
/// the process alone; returns how it ended and what it printed. Asserts
/// that while it ran its copy held the crate's source and not `.env`.
fn interrupted(
    cache: &Path,
    args: &[&str],
    phase: Phase,
    signal: i32,
) -> (std::process::ExitStatus, String) {
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .current_dir(repo_root())
        .env("LOCKMATRIX_CACHE", cache)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .process_group(0)
        .spawn()
        .unwrap();
    let (tx, rx) = std::sync::mpsc::channel::<String>();
    let stderr = child.stderr.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut all = String::new();
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            let _ = tx.send(line.clone());
            all.push_str(&line);
            all.push('\n');
        }
        all
    });
    let deadline = Instant::now() + Duration::from_secs(600);
    let mut seen = Vec::new();
    let reached = loop {
        while let Ok(l) = rx.try_recv() {
            seen.push(l);
        }
        let c = copies(cache);
        let at = match phase {
            Phase::Packaging => c
                .iter()
                .any(|p| p.to_string_lossy().ends_with(".package-target")),
            Phase::Resolving => {
                c.iter().any(|p| p.to_string_lossy().ends_with(".crate"))
                    && !c
                        .iter()
                        .any(|p| p.to_string_lossy().ends_with(".package-target"))
            }
            Phase::Building => seen.iter().any(|l| l.starts_with("  start  build")),
            Phase::Running => seen.iter().any(|l| l.starts_with("  start  x86_64/")),
        };
        if at {
            break true;
        }
        if Instant::now() > deadline || child.try_wait().unwrap().is_some() {
            break false;
        }
        std::thread::sleep(Duration::from_millis(2));
    };
    assert!(reached, "{phase:?} never reached: {seen:?}");
    if phase != Phase::Packaging {
        // The copy, as it is while the run uses it: the source, no secret.
        let copy = copies(cache)
            .into_iter()
            .find(|p| p.to_string_lossy().ends_with(".crate"))
            .expect("a copy while the run is on");
        assert!(copy.join("src/lib.rs").is_file(), "{}", copy.display());
        assert!(!copy.join(".env").exists(), "{}", copy.display());
    }
    // SAFETY: a signal to the child this test started.
    unsafe { libc::kill(child.id() as i32, signal) };
    let status = child.wait().unwrap();
    (status, reader.join().unwrap())
}

#[test]
fn an_interrupted_run_leaves_no_copy_at_any_phase_and_a_killed_ones_is_pruned() {
    let _cpus = shared_cpus();
    let lab = Lab::new("r5-interrupt");
    let secret = format!("hunter2-r5i-{}", std::process::id());
    let krate = tinylock_with_secret(&lab.dir.join("tinylock"), &secret);
    let spec = format!("tinylock@path:{}", krate.display());
    let args = crate_matrix(&lab.results, &spec);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    for (phase, signal) in [
        (Phase::Packaging, libc::SIGINT),
        (Phase::Resolving, libc::SIGTERM),
        (Phase::Building, libc::SIGINT),
        (Phase::Building, libc::SIGTERM),
        (Phase::Running, libc::SIGINT),
        (Phase::Running, libc::SIGTERM),
    ] {
        let start = Instant::now();
        let (status, said) = interrupted(&lab.cache, &args, phase, signal);
        // Ended by the signal, as without the clean-up.
        assert_eq!(
            status.signal(),
            Some(signal),
            "{phase:?}: {status:?}: {said}"
        );
        assert!(
            copies(&lab.cache).is_empty(),
            "{phase:?} {signal}: {:?}",
            copies(&lab.cache)
        );
        nowhere(&lab.cache, &secret);
        assert!(!said.contains("panicked"), "{said}");
        eprintln!(
            "{phase:?}, signal {signal}: no copy left ({:.1?})",
            start.elapsed()
        );
    }
    // SIGKILL cannot be caught: the copy stays, until the next run, of
    // another crate or of none, prunes it.
    let (status, _) = interrupted(&lab.cache, &args, Phase::Building, libc::SIGKILL);
    assert_eq!(status.signal(), Some(libc::SIGKILL));
    let left = copies(&lab.cache);
    assert!(!left.is_empty(), "a SIGKILL left nothing to prune");
    let out = lab.run(&[
        "matrix",
        "--no-install",
        "--targets",
        "x86_64",
        "--against",
        "no-such-revision",
        "--results",
        "{results}",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(copies(&lab.cache).is_empty(), "not pruned: {left:?}");
    nowhere(&lab.cache, &secret);
}

#[test]
fn a_file_that_is_no_targets_file_is_named_never_echoed() {
    let lab = Lab::new("r5-config");
    // Made here, so that no copy of this source holds them.
    let token = format!("ghp_{:0>36}", std::process::id());
    assert_eq!(token.len(), 40);
    let hash = format!(
        "$y$j9T$salt{}$hashhashhashhashhashhashhashhashhashhashhash",
        std::process::id()
    );
    let files = [
        (
            "git-credentials",
            format!("https://alice:{token}@github.com\n"),
            token.clone(),
        ),
        (
            "shadow",
            format!("root:{hash}:19000:0:99999:7:::\ndaemon:*:19000:0:99999:7:::\n"),
            hash.clone(),
        ),
        ("token", format!("{token}\n"), token.clone()),
        ("netrc-like", format!("{token}: x\n"), token.clone()),
    ];
    for (name, contents, secret) in &files {
        let file = lab.file(name, contents);
        assert!(std::fs::read_to_string(&file)
            .unwrap()
            .contains(secret.as_str()));
        for args in [
            vec!["doctor", "--config", s(&file)],
            vec![
                "matrix",
                "--no-install",
                "--config",
                s(&file),
                "--results",
                "{results}",
            ],
        ] {
            let (out, _) = lab.case(&args, 2, &format!("error: {}:1:1: ", file.display()));
            says(&out, "expected");
            assert!(
                !text(&out).contains(secret.as_str()),
                "{name}: {}",
                text(&out)
            );
            assert!(!text(&out).contains("alice"), "{}", text(&out));
        }
    }
}

#[test]
fn a_value_echoed_in_an_error_is_bounded_and_never_starts_a_line() {
    let _cpus = shared_cpus();
    let lab = Lab::with_run("r5-echo");
    // A 5 MB string where a bench's `better` belongs, and a line break.
    for (value, hidden) in [
        (
            format!("lower{}", "x".repeat(5 << 20)),
            "xxxxxxxxxxxxxxxxxxxx",
        ),
        ("lower\n## FAKE PASS".to_string(), "## FAKE PASS"),
    ] {
        let run = lab.edited_run("20300101T000000Z", |d| {
            edit_json(&d.join("run.json"), |v| {
                v["targets"][0]["suites"][0]["samples"][0]["better"] = Value::from(value.as_str())
            })
        });
        assert!(std::fs::read_to_string(run.join("run.json"))
            .unwrap()
            .contains(&hidden.replace('\n', "\\n")));
        let (out, took) = lab.case(&["gate", s(&run)], 2, "using run");
        says(&out, "run.json: not a lockmatrix run: unknown variant of ");
        assert!(!text(&out).contains(hidden), "{}", shorten(&text(&out)));
        let longest = text(&out).lines().map(str::len).max().unwrap_or(0);
        assert!(longest < 1000, "a line of {longest} bytes");
        assert!(took < Duration::from_secs(20), "{took:?}");
        std::fs::remove_dir_all(&run).unwrap();
    }
}

#[test]
fn a_reason_with_a_line_break_never_forges_a_line() {
    let _cpus = shared_cpus();
    let lab = Lab::with_run("r5-reason");
    let forged = "## FAKE PASS";
    for status in [
        serde_json::json!({"state": "not_run", "reason": format!("x\n{forged}\nPASS: all good")}),
        serde_json::json!({"state": "failed", "reason": format!("x\r\n{forged}"), "failure": {"kind": "other", "reason": format!("x\n{forged}")}}),
    ] {
        let run = lab.edited_run("20300101T000000Z", |d| {
            edit_json(&d.join("run.json"), |v| {
                v["targets"][0]["status"] = status.clone()
            })
        });
        assert!(std::fs::read_to_string(run.join("run.json"))
            .unwrap()
            .contains(forged));
        for args in [
            vec!["gate", s(&run), "--baselines", "{baselines}"],
            vec!["report", s(&run)],
            vec!["report", s(&run), "--tables"],
            vec![
                "gate",
                s(&run),
                "--baselines",
                "{baselines}",
                "--markdown",
                "-",
            ],
            vec![
                "gate",
                s(&run),
                "--baselines",
                "{baselines}",
                "--pr-comment",
                "-",
            ],
        ] {
            let mut cmd = lab.command(&args);
            let out = cmd.output().unwrap();
            let all = text(&out);
            // Shown, on the line of the status it belongs to (the seeds'
            // tables show no status).
            assert!(
                all.contains(forged) || args.contains(&"--tables"),
                "{args:?}: {all}"
            );
            for line in all.lines() {
                assert!(
                    !line.trim_start().starts_with(forged) && !line.starts_with("PASS: all good"),
                    "{args:?}: a forged line: {line}"
                );
            }
        }
        std::fs::remove_dir_all(&run).unwrap();
    }
}

/// The peak memory of `cmd`'s process, and how it ended. Measured by a
/// python3 parent: a child's peak counts its parent's memory at the fork,
/// and this test process holds hundreds of megabytes of test files.
fn peak_rss(cmd: std::process::Command) -> (u64, Output) {
    let script = "import resource,subprocess,sys\n\
                  p=subprocess.run(sys.argv[1:])\n\
                  print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss,file=sys.stderr)\n\
                  sys.exit(p.returncode)\n";
    let mut py = std::process::Command::new("python3");
    py.args(["-c", script])
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .envs(cmd.get_envs().filter_map(|(k, v)| v.map(|v| (k, v))));
    if let Some(d) = cmd.get_current_dir() {
        py.current_dir(d);
    }
    let out = py.output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let kib: u64 = err
        .lines()
        .last()
        .and_then(|l| l.trim().parse().ok())
        .unwrap_or(u64::MAX / 1024);
    (kib * 1024, out)
}

#[test]
fn oversized_inputs_are_refused_by_their_size_before_parsing() {
    let _cpus = shared_cpus();
    let lab = Lab::with_run("r5-size");
    // A 150 MB run.json, real bytes: valid JSON padded with white space.
    let run = lab.edited_run("20300101T000000Z", |d| {
        let path = d.join("run.json");
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str(&" ".repeat(150 << 20));
        std::fs::write(&path, text).unwrap();
    });
    let (rss, out) = peak_rss(lab.command(&["gate", s(&run)]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    says(&out, "larger than 64 MiB");
    assert!(
        rss < 100 << 20,
        "{} MB of memory for a refused file",
        rss >> 20
    );
    std::fs::remove_dir_all(&run).unwrap();
    // A baseline past 16 MiB, and a targets file past 16 MiB.
    let baseline = lab.baselines.join("x86_64/atomic.json");
    let mut text = std::fs::read_to_string(&baseline).unwrap();
    text.push_str(&" ".repeat(17 << 20));
    std::fs::write(&baseline, text).unwrap();
    let (out, _) = lab.case(
        &["gate", "{run}", "--baselines", "{baselines}"],
        2,
        "using run",
    );
    says(&out, "larger than 16 MiB");
    let config = lab.file(
        "big.yaml",
        &format!("targets: []\n{}", " ".repeat(17 << 20)),
    );
    lab.case(
        &["doctor", "--config", s(&config)],
        2,
        &format!("error: {}: larger than 16 MiB", config.display()),
    );
}

#[test]
fn a_password_with_a_slash_hash_or_question_mark_is_kept_nowhere() {
    let lab = Lab::new("r5-password");
    let secret = format!("s3cr3t{}", std::process::id());
    for password in [
        format!("{secret}/x"),
        format!("a/{secret}"),
        format!("{secret}#x"),
        format!("{secret}?x"),
    ] {
        let spec = format!("tinylock@git:http://user:{password}@127.0.0.1:9/tinylock.git#main");
        assert!(spec.contains(&secret));
        let mut cmd = lab.command(&[
            "matrix",
            "--no-install",
            "--targets",
            "x86_64",
            "--crate",
            &spec,
            "--results",
            "{results}",
        ]);
        cmd.env("GIT_TERMINAL_PROMPT", "0");
        let (out, _) = lab.case_of(
            cmd,
            2,
            "error: tinylock@git:http://127.0.0.1:9/tinylock.git#main: cargo cannot resolve it",
        );
        assert!(!text(&out).contains(&secret), "{}", text(&out));
        assert!(!text(&out).contains("user:"), "{}", text(&out));
        nowhere(&lab.dir, &secret);
    }
}

/// `matrix --backend container` for aarch64 with `args` and `env`, into
/// a results directory that does not exist yet; asserts exit 2, `fix` in
/// the output, and that the results directory was not created.
fn container_refused(args: &[&str], env: &[(&str, &str)], fix: &str) {
    let work = scratch_dir("r5-container");
    let results = work.join("not:made");
    let results = if args.contains(&"{colon}") {
        results
    } else {
        work.join("not-made")
    };
    let mut all = vec![
        "matrix",
        "--backend",
        "container",
        "--targets",
        "aarch64",
        "--results",
        s(&results),
    ];
    all.extend(args.iter().filter(|a| **a != "{colon}"));
    let out = xtask_env(&all, env);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    says(&out, fix);
    assert!(!results.exists(), "--results was created: {}", text(&out));
    std::fs::remove_dir_all(&work).unwrap();
}

#[test]
fn container_paths_are_checked_before_anything_is_created() {
    // A `:` in --results would make an invalid --volume: refused first.
    container_refused(
        &["{colon}"],
        &[],
        "holds `:`, which the engine's --volume takes for its separator",
    );
    // --results is not created before the engine is found.
    container_refused(&[], &[("PATH", "/nonexistent")], "no container engine");
    container_refused(
        &[],
        &[("LOCKMATRIX_ENGINE", "nerdctl")],
        "set it to podman or docker",
    );
}

/// Whether Podman runs containers here; when it does not, says why the
/// test did not run.
fn podman_runs() -> bool {
    let ok = std::process::Command::new("podman")
        .arg("info")
        .output()
        .is_ok_and(|o| o.status.success());
    if !ok {
        eprintln!("container: not run here: podman does not answer");
    }
    ok
}

/// Every place the engine and the system show a container: the process
/// table, and `podman inspect` of each running container (its command
/// line, its environment, its mounts: the configuration it keeps on disk).
fn shown_by_the_system() -> String {
    let mut all = String::new();
    let ps = std::process::Command::new("ps")
        .args(["-eo", "args"])
        .output()
        .unwrap();
    // Every process but the one the user started, whose own arguments
    // hold what the user typed.
    for line in String::from_utf8_lossy(&ps.stdout).lines() {
        if !line.starts_with(env!("CARGO_BIN_EXE_xtask")) {
            all.push_str(line);
            all.push('\n');
        }
    }
    let ids = std::process::Command::new("podman")
        .args(["ps", "-q", "--no-trunc"])
        .output()
        .unwrap();
    for id in String::from_utf8_lossy(&ids.stdout).lines() {
        let inspect = std::process::Command::new("podman")
            .args(["inspect", id])
            .output()
            .unwrap();
        all.push_str(&String::from_utf8_lossy(&inspect.stdout));
    }
    all
}

#[test]
fn a_crates_credentials_reach_no_command_line_in_the_container() {
    if !podman_runs() {
        return;
    }
    let _cpus = shared_cpus();
    let work = scratch_dir("r5-container-credentials");
    let served = work.join("served");
    let secret = format!("s3cr3t{}", std::process::id());
    let krate = tinylock_with_secret(&served.join("work"), &secret);
    git(
        &served,
        &["clone", "-q", "--bare", s(&krate), "tinylock.git"],
    );
    git(&served.join("tinylock.git"), &["update-server-info"]);
    let password = format!("pw-{secret}");
    let (port, mut server) = crate::hostile_round4::git_server_with_password(&served, &password);
    let spec = format!("tinylock@git:http://user:{password}@127.0.0.1:{port}/tinylock.git#main");
    let results = work.join("results");
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args([
            "matrix",
            "--backend",
            "container",
            "--no-insns",
            "--targets",
            "aarch64",
            "--suites",
            "spinlock",
            "--rounds",
            "1",
            "--crate",
            &spec,
            "--results",
            s(&results),
        ])
        .current_dir(repo_root())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Looked at while the container runs (the matrix inside takes minutes).
    let mut looks = 0;
    let mut inside = 0;
    while child.try_wait().unwrap().is_none() {
        let shown = shown_by_the_system();
        if let Some(line) = shown.lines().find(|l| l.contains(&password)) {
            panic!(
                "the password is on a command line or in a container's configuration: {}",
                line.replace(&password, "<PASSWORD>")
            );
        }
        if shown.contains("localhost/lockmatrix:") {
            inside += 1;
        }
        looks += 1;
        std::thread::sleep(Duration::from_millis(500));
    }
    let out = child.wait_with_output().unwrap();
    let _ = server.kill();
    let _ = server.wait();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(inside > 0, "never saw the container run ({looks} looks)");
    says(
        &out,
        &format!("git http://127.0.0.1:{port}/tinylock.git commit "),
    );
    assert!(!text(&out).contains(&password), "{}", text(&out));
    nowhere(&results, &password);
    // The private file that carried it is gone.
    let cache = std::env::var_os("LOCKMATRIX_CACHE")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var("HOME").unwrap()).join(".cache/lockmatrix"));
    let left: Vec<_> = std::fs::read_dir(cache.join("container"))
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("credentials-"))
        .map(|e| e.path())
        .collect();
    assert!(left.is_empty(), "{left:?}");
    eprintln!("container: {looks} looks at ps and podman inspect, {inside} with the container up: no password");
    std::fs::remove_dir_all(&work).unwrap();
}

/// A targets file of this host's x86_64 and the committed aarch64-native.
fn x86_and_arm_native(lab: &Lab) -> PathBuf {
    let committed = std::fs::read_to_string(repo_root().join("targets.yaml")).unwrap();
    let block = |name: &str| -> String {
        let start = committed
            .find(&format!("  - name: {name}\n"))
            .unwrap_or_else(|| panic!("targets.yaml has no {name}"));
        let rest = &committed[start..];
        let end = rest[4..].find("\n  - name: ").map_or(rest.len(), |e| e + 5);
        rest[..end].to_string()
    };
    lab.file(
        "two.yaml",
        &format!(
            "defaults:\n  timeout_secs: 300\n\ntargets:\n{}\n{}",
            block("x86_64"),
            block("aarch64-native")
        ),
    )
}

#[test]
fn a_native_target_of_another_architecture_is_one_line_never_a_failure() {
    if std::env::consts::ARCH != "x86_64" {
        eprintln!("not an x86_64 host: this test is for one");
        return;
    }
    let _cpus = shared_cpus();
    let lab = Lab::new("r5-arm-native");
    let config = x86_and_arm_native(&lab);
    assert!(std::fs::read_to_string(&config)
        .unwrap()
        .contains("name: aarch64-native"));
    // The default selection: x86_64 runs; aarch64-native is one line.
    let out = lab.run(&[
        "matrix",
        "--no-install",
        "--no-insns",
        "--no-gate",
        "--config",
        s(&config),
        "--suites",
        "atomic",
        "--rounds",
        "1",
        "--results",
        "{results}",
    ]);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let all = text(&out);
    let lines: Vec<&str> = all
        .lines()
        .filter(|l| l.contains("aarch64-native"))
        .collect();
    assert_eq!(lines.len(), 1, "{all}");
    assert!(
        lines[0]
            .starts_with("left out here: aarch64-native (native targets of another architecture"),
        "{}",
        lines[0]
    );
    let run = read_json(&newest(&lab.results).join("run.json"));
    let names: Vec<&str> = run["targets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["x86_64"]);
    assert_eq!(run["targets"][0]["status"]["state"], "ok");
    // Named alone, it cannot run here: said before anything is made.
    let (out, _) = lab.case(
        &[
            "matrix",
            "--no-install",
            "--config",
            s(&config),
            "--targets",
            "aarch64-native",
            "--results",
            "{results}",
        ],
        2,
        "error: --targets aarch64-native: a native aarch64 target, and this host is x86_64",
    );
    says(&out, "nothing would run here");
}
