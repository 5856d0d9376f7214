//! Bad and hostile input, one test per case, each named after what it
//! proves: a run directory, a baseline or an artifact from a stranger's CI
//! job, an option out of range, a destination that is not a file. Each gets
//! the exit status the README promises (2 for bad input or set-up, 1 for a
//! failed gate), a first line that names what is wrong, and leaves the
//! lab's results, baselines and cache byte for byte as they were, with
//! nothing created beside them ([`Lab::case`]). Nothing hangs or panics.

use crate::common::*;
use crate::lab::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

/// Asserts that the output says `what` somewhere.
fn says(out: &Output, what: &str) {
    let all = text(out);
    assert!(all.contains(what), "expected `{what}` in:\n{all}");
}

/// `matrix` of x86_64 with `flag`, refused before anything is built.
fn refused_matrix_option(name: &str, flag: &str, first: &str) {
    let lab = Lab::new(name);
    let (out, _) = lab.case(
        &[
            "matrix",
            "--no-install",
            "--targets",
            "x86_64",
            flag,
            "--results",
            "{results}",
        ],
        2,
        first,
    );
    assert!(!text(&out).contains("built in"), "built before refusing");
}

#[test]
fn a_negative_threshold_is_refused_before_any_build() {
    refused_matrix_option("threshold", "--threshold=-1", "error: gate threshold is -1");
}

#[test]
fn an_alpha_of_two_is_refused_before_any_build() {
    refused_matrix_option("alpha", "--alpha=2", "error: gate alpha is 2");
}

#[test]
fn zero_rounds_are_refused_before_any_build() {
    refused_matrix_option(
        "rounds",
        "--rounds=0",
        "error: invalid value '0' for '--rounds",
    );
}

#[test]
fn a_crate_spec_that_is_not_one_is_refused_before_any_build() {
    refused_matrix_option(
        "crate-spec",
        "--crate=spin@latest",
        "error: --crate spin@latest: `latest` is not a version; expected NAME@VERSION",
    );
    refused_matrix_option(
        "crate-path",
        "--crate=spin@path:/nonexistent-lockmatrix",
        "error: --crate spin@path:/nonexistent-lockmatrix: /nonexistent-lockmatrix holds no Cargo.toml",
    );
}

#[test]
fn two_different_crates_are_refused_before_any_build() {
    let lab = Lab::new("crate-two");
    lab.case(
        &[
            "matrix",
            "--no-install",
            "--targets",
            "x86_64",
            "--crate",
            "spin@0.12.3",
            "--against-crate",
            "parking_lot@0.12.5",
            "--results",
            "{results}",
        ],
        2,
        "error: --against-crate parking_lot@0.12.5: a different crate than --crate spin@0.12.3",
    );
}

#[test]
fn a_path_crate_that_declares_no_locks_is_told_what_to_add() {
    let lab = Lab::new("crate-undeclared");
    let dir = scratch_dir("crate-undeclared-src");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    let manifest =
        std::fs::read_to_string(repo_root().join("xtask/tests/fixtures/tinylock/Cargo.toml"))
            .unwrap();
    let manifest = manifest.replace("mutex = [\"RawTinyLock\"]", "");
    let manifest = manifest.replace("[package.metadata.lockmatrix]", "");
    std::fs::write(dir.join("Cargo.toml"), manifest).unwrap();
    std::fs::write(dir.join("src/lib.rs"), "").unwrap();
    let spec = format!("tinylock@path:{}", dir.display());
    let (out, _) = lab.case(
        &[
            "matrix",
            "--no-install",
            "--targets",
            "x86_64",
            "--crate",
            &spec,
            "--results",
            "{results}",
        ],
        2,
        "error: tinylock@path:",
    );
    says(
        &out,
        "declares no locks for lockmatrix: add `[package.metadata.lockmatrix]`",
    );
}

#[test]
fn a_zero_timeout_is_refused_before_any_build() {
    refused_matrix_option(
        "timeout",
        "--timeout=0",
        "error: invalid value '0' for '--timeout",
    );
}

#[test]
fn a_gate_report_to_a_device_is_refused_before_any_build() {
    refused_matrix_option(
        "markdown-dev",
        "--markdown=/dev/full",
        "error: /dev/full: is a device; expected a regular file to write",
    );
}

#[test]
fn results_on_a_read_only_file_system_are_refused() {
    let lab = Lab::new("results-procfs");
    for dir in ["/proc/lockmatrix-x", "/proc/self"] {
        let (out, _) = lab.case(
            &[
                "matrix",
                "--no-install",
                "--targets",
                "x86_64",
                "--results",
                dir,
            ],
            2,
            &format!("error: --results {dir}: "),
        );
        says(&out, "expected a writable directory");
    }
}

#[test]
fn results_that_are_a_file_are_refused() {
    let lab = Lab::new("results-file");
    let file = lab.file("a-file", "x");
    lab.case(
        &[
            "matrix",
            "--no-install",
            "--targets",
            "x86_64",
            "--results",
            s(&file),
        ],
        2,
        &format!("error: --results {}: cannot create it", s(&file)),
    );
}

#[test]
fn a_run_that_is_not_there_is_named_by_gate_and_report() {
    let lab = Lab::new("nosuch");
    let nosuch = lab.results.join("nosuch");
    for cmd in [vec!["gate", s(&nosuch)], vec!["report", s(&nosuch)]] {
        let (out, _) = lab.case(&cmd, 2, "using run");
        says(
            &out,
            &format!("error: {}: no such run directory", s(&nosuch)),
        );
    }
}

#[test]
fn a_truncated_run_json_is_named_as_cut_short() {
    let _cpus = shared_cpus();
    let lab = Lab::with_run("truncated");
    let run = lab.edited_run("20300101T000000Z", |d| {
        let text = std::fs::read_to_string(d.join("run.json")).unwrap();
        std::fs::write(d.join("run.json"), &text[..text.len() / 2]).unwrap();
    });
    let (out, _) = lab.case(
        &["gate", s(&run), "--baselines", "{baselines}"],
        2,
        "using run",
    );
    says(&out, "run.json: not a lockmatrix run");
    says(&out, "cut short");
}

/// A copy of the lab's run whose suite output is changed by `edit`; gate,
/// report and baseline update each refuse it, naming the file.
fn damaged_output(name: &str, edit: impl FnOnce(&Path)) {
    let _cpus = shared_cpus();
    let lab = Lab::with_run(name);
    let run = lab.edited_run("20300101T000000Z", |d| edit(&d.join("x86_64/atomic.jsonl")));
    for cmd in [
        vec!["gate", s(&run), "--baselines", "{baselines}"],
        vec!["report", s(&run)],
        vec![
            "baseline",
            "update",
            "--from",
            s(&run),
            "--baselines",
            "{baselines}",
        ],
    ] {
        let (out, _) = lab.case(&cmd, 2, "using run");
        says(&out, "x86_64/atomic.jsonl");
    }
}

#[test]
fn garbage_in_a_suites_output_is_named() {
    damaged_output("garbage-jsonl", |f| {
        std::fs::write(f, "not json\n").unwrap()
    });
}

#[test]
fn a_truncated_suite_output_is_named() {
    damaged_output("truncated-jsonl", |f| {
        let bytes = std::fs::read(f).unwrap();
        std::fs::write(f, &bytes[..bytes.len() / 2]).unwrap()
    });
}

#[test]
fn a_deleted_suite_output_is_named() {
    damaged_output("deleted-jsonl", |f| std::fs::remove_file(f).unwrap());
}

#[test]
fn a_suite_output_linked_to_dev_zero_is_refused_not_read() {
    damaged_output("linked-jsonl", |f| {
        std::fs::remove_file(f).unwrap();
        std::os::unix::fs::symlink("/dev/zero", f).unwrap();
    });
}

/// Starts `matrix` of x86_64's rwsem suite into the lab's results with the
/// real cache, waits until it is running its rounds, and stops it with
/// `signal`; returns the interrupted run's directory.
fn interrupted_run(lab: &Lab, signal: i32) -> PathBuf {
    let mut matrix = lab.command(&[
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
        "{results}",
    ]);
    matrix.env_remove("LOCKMATRIX_CACHE");
    // A signal reaches a process whose disposition is the default; a test
    // run started in the background (`cmd &` in a script) inherits SIGINT
    // ignored, so restore it.
    // SAFETY: signal() is async-signal-safe, as pre_exec requires.
    unsafe {
        std::os::unix::process::CommandExt::pre_exec(&mut matrix, || {
            libc::signal(libc::SIGINT, libc::SIG_DFL);
            Ok(())
        });
    }
    let mut child = matrix
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let started = Instant::now();
    let dir = loop {
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
    unsafe { libc::kill(child.id() as i32, signal) };
    let _ = child.wait();
    assert_eq!(read_json(&dir.join("run.json"))["finished"], Value::Null);
    dir
}

#[test]
fn an_interrupted_run_is_skipped_by_report_and_refused_by_gate_and_update() {
    let _cpus = shared_cpus();
    let lab = Lab::with_run("ctrl-c");
    let interrupted = interrupted_run(&lab, libc::SIGINT);
    let (out, _) = lab.case(
        &["report", "--results", "{results}"],
        0,
        &format!(
            "warning: skipping run {}: incomplete",
            interrupted.display()
        ),
    );
    says(&out, &format!("using run {}", lab.run.display()));
    let (out, _) = lab.case(
        &["gate", s(&interrupted), "--baselines", "{baselines}"],
        2,
        "using run",
    );
    says(&out, "the gate needs a complete run");
    let (out, _) = lab.case(
        &[
            "baseline",
            "update",
            "--from",
            s(&interrupted),
            "--baselines",
            "{baselines}",
        ],
        2,
        "using run",
    );
    says(&out, "is incomplete");
}

#[test]
fn a_killed_run_shows_its_targets_not_finished_never_ok() {
    let _cpus = shared_cpus();
    let lab = Lab::with_run("sigterm");
    let killed = interrupted_run(&lab, libc::SIGTERM);
    let run = read_json(&killed.join("run.json"));
    assert_eq!(run["targets"][0]["status"]["state"], "pending", "{run}");
    let (out, _) = lab.case(&["report", s(&killed)], 0, "using run");
    says(
        &out,
        "incomplete: 1 not finished; 0 ok, 0 failed, 0 not run",
    );
    says(&out, "not finished");
}

#[test]
fn an_ssh_user_that_is_an_option_is_refused() {
    let lab = Lab::new("ssh-user");
    let config = lab.file(
        "user.yaml",
        &ssh_targets("example.org", "\"-oProxyCommand=touch /tmp/pwned\""),
    );
    lab.case(
        &["doctor", "--config", s(&config)],
        2,
        &format!(
            // Named by its length, not echoed (docs/trust.md, "Errors name,
            // never echo"); what was expected says why.
            "error: {}:4: target 'box': `ssh.user` is a value of 31 characters: expected a user name of letters, digits, '.', '_' and '-', not starting with '-'",
            s(&config)
        ),
    );
}

#[test]
fn an_ssh_host_with_a_semicolon_is_refused() {
    let lab = Lab::new("ssh-host");
    let config = lab.file("host.yaml", &ssh_targets("\"a;reboot\"", "pi"));
    let (out, _) = lab.case(&["doctor", "--config", s(&config)], 2, "error: ");
    says(&out, "`ssh.host` is `a;reboot`: expected a host name");
}

const SSH_TARGETS: &str = "defaults:\n  timeout_secs: 60\ntargets:\n  - name: box\n    class: arm64\n    triple: aarch64-unknown-linux-gnu\n    runner: ssh\n    linker: aarch64-linux-gnu-gcc\n    packages: []\n    enabled: true\n    ssh: {host: HOST, port: 22, user: USER}\n";

fn ssh_targets(host: &str, user: &str) -> String {
    SSH_TARGETS.replace("HOST", host).replace("USER", user)
}

#[test]
fn a_ten_megabyte_class_is_refused_with_a_short_message() {
    let lab = Lab::new("class");
    let config = lab.file(
        "class.yaml",
        &ssh_targets("h", "u").replace(
            "class: arm64",
            &format!("class: {}", "a".repeat(10_000_000)),
        ),
    );
    let (out, _) = lab.case(
        &[
            "matrix",
            "--no-install",
            "--config",
            s(&config),
            "--results",
            "{results}",
        ],
        2,
        &format!("error: {}:5:12: targets[0].class: name `aaaa", s(&config)),
    );
    says(&out, "…`: too long");
    assert!(
        text(&out).len() < 2000,
        "the message carries the whole name"
    );
}

#[test]
fn an_unknown_triple_is_not_ready_in_doctor() {
    let lab = Lab::new("triple");
    let config = lab.file("triple.yaml", "defaults:\n  timeout_secs: 60\ntargets:\n  - name: odd\n    class: oddity\n    triple: nonsense-unknown-linux-gnu\n    runner: qemu\n    emulator: qemu-aarch64\n    linker: cc\n    packages: []\n    enabled: true\n");
    let (out, _) = lab.case(
        &["doctor", "--config", s(&config)],
        2,
        "error: some targets are not ready: see above",
    );
    says(&out, "NOT READY");
    says(&out, "nonsense-unknown-linux-gnu");
}

#[test]
fn a_matrix_of_only_unrunnable_targets_tested_nothing_and_is_exit_2() {
    let lab = Lab::new("keyless");
    let config = lab.file("keyless.yaml", &ssh_targets("192.0.2.1", "pi"));
    let out = lab.run(&[
        "matrix",
        "--no-install",
        "--config",
        s(&config),
        "--results",
        "{results}",
    ]);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    says(&out, "nothing ran: box: no runner");
}

/// The lab's x86_64 atomic baseline with its first timing cell's samples
/// set to `samples` (and the summary left as it was).
fn baseline_with_samples(lab: &Lab, samples: &str) {
    edit_json(&lab.baselines.join("x86_64/atomic.json"), |v| {
        let c = first_timing_cell(v);
        c["samples"] = serde_json::from_str(samples).unwrap();
    });
}

fn first_timing_cell(v: &mut Value) -> &mut Value {
    v["cells"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|c| c["metric"] == "ticks_per_op")
        .unwrap()
}

#[test]
fn a_huge_value_in_a_baseline_is_a_value() {
    let _cpus = shared_cpus();
    let lab = Lab::with_run("huge-value");
    edit_json(&lab.baselines.join("x86_64/atomic.json"), |v| {
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
        let n = s.len();
        let median = match n % 2 {
            1 => s[n / 2],
            _ => (s[n / 2 - 1] + s[n / 2]) / 2.0,
        };
        c["summary"]["median"] = Value::from(median);
    });
    let (out, _) = lab.case(
        &["gate", "{run}", "--baselines", "{baselines}"],
        0,
        "using run",
    );
    says(&out, "failed checks, 0 problems => ");
    assert!(!text(&out).contains("=> FAIL"), "{}", text(&out));
}

/// A baseline whose samples are `samples` is corrupt: the gate and an
/// update refuse it as bad input, naming it and why, and never overwrite it.
fn corrupt_baseline(name: &str, samples: &str, why: &str) {
    let _cpus = shared_cpus();
    let lab = Lab::with_run(name);
    baseline_with_samples(&lab, samples);
    let file = lab.baselines.join("x86_64/atomic.json");
    let (out, _) = lab.case(
        &["gate", "{run}", "--baselines", "{baselines}"],
        2,
        "using run",
    );
    says(
        &out,
        &format!("error: {}: corrupt baseline", file.display()),
    );
    says(&out, why);
    let (out, _) = lab.case(
        &[
            "baseline",
            "update",
            "--from",
            "{run}",
            "--baselines",
            "{baselines}",
        ],
        2,
        "using run",
    );
    says(&out, "refusing to overwrite");
    says(&out, why);
}

#[test]
fn a_negative_baseline_sample_is_corrupt_and_exit_2() {
    corrupt_baseline("negative-sample", "[-3.0]", "expected a positive time");
}

#[test]
fn a_zero_baseline_sample_is_corrupt_and_exit_2() {
    corrupt_baseline("zero-sample", "[0.0]", "expected a positive time");
}

#[test]
fn a_baseline_cell_without_samples_is_corrupt_and_exit_2() {
    corrupt_baseline("empty-samples", "[]", "has no samples");
}

/// The lab's run with a second target, `x86_64-copy`, whose one value
/// differs, so that an update rewrites both targets' files.
fn two_target_run(lab: &Lab) -> PathBuf {
    lab.edited_run("20300101T000000Z", |d| {
        edit_json(&d.join("run.json"), |v| {
            let x = &mut v["targets"][0]["suites"][0]["samples"][0]["value"];
            *x = Value::from(x.as_f64().unwrap() * 1.01);
            let mut t = v["targets"][0].clone();
            t["name"] = Value::from("x86_64-copy");
            v["targets"].as_array_mut().unwrap().push(t);
        });
        copy_dir(&d.join("x86_64"), &d.join("x86_64-copy"));
    })
}

#[test]
fn a_baseline_update_that_cannot_write_one_file_writes_none() {
    let _cpus = shared_cpus();
    let lab = Lab::with_run("all-or-nothing");
    let two = two_target_run(&lab);
    lab.file("baselines/x86_64-copy", "a file where a directory must go");
    let (out, _) = lab.case(
        &[
            "baseline",
            "update",
            "--from",
            s(&two),
            "--baselines",
            "{baselines}",
        ],
        2,
        "using run",
    );
    says(&out, "baseline update refused, nothing written");
    says(
        &out,
        "x86_64-copy: is a regular file, expected a directory: refused",
    );
}

#[test]
fn a_dead_updates_temporary_files_are_removed_and_named() {
    let _cpus = shared_cpus();
    let lab = Lab::with_run("stale");
    let two = two_target_run(&lab);
    // No process has this pid (pid_max is at most 2^22).
    let stale = lab.baselines.join("x86_64/.atomic.json.tmp-99999999");
    std::fs::write(&stale, "half an update").unwrap();
    let out = lab.run(&[
        "baseline",
        "update",
        "--from",
        s(&two),
        "--baselines",
        "{baselines}",
    ]);
    assert!(out.status.success(), "{}", text(&out));
    says(
        &out,
        &format!("removed {}, left by an interrupted update", stale.display()),
    );
    assert!(!stale.exists());
    assert!(lab.baselines.join("x86_64-copy/atomic.json").is_file());
}

/// The lab's run with its target renamed to `name` in run.json and on disk.
fn run_with_target_named(lab: &Lab, name: &str) -> PathBuf {
    lab.edited_run("20300101T000000Z", |d| {
        edit_json(&d.join("run.json"), |v| {
            v["targets"][0]["name"] = Value::from(name)
        });
        // As a crafted artifact would have it, where the file system allows.
        if !name.contains('/') && name.len() < 255 {
            std::fs::rename(d.join("x86_64"), d.join(name)).unwrap();
        }
    })
}

#[test]
fn markup_in_a_target_name_never_reaches_the_html_report() {
    let _cpus = shared_cpus();
    let lab = Lab::with_run("markup");
    let run = run_with_target_named(&lab, "x86_64\"><img src=x onerror=alert(1)>");
    let page = lab.dir.join("report.html");
    let (out, _) = lab.case(
        &["report", s(&run), "--html", "-o", s(&page)],
        2,
        "using run",
    );
    says(&out, "run.json: not a lockmatrix run: name `x86_64\"><img src=x onerror=alert(1)>`: has a character outside the alphabet");
    says(&out, "at line ");
    assert!(!page.exists());
}

#[test]
fn the_newest_run_when_none_is_complete_names_each_skipped_and_why() {
    let _cpus = shared_cpus();
    let lab = Lab::with_run("only-damaged");
    let run = run_with_target_named(&lab, "x86_64\"><img src=x onerror=alert(1)>");
    std::fs::remove_dir_all(&lab.run).unwrap();
    for cmd in [
        vec!["report", "--results", "{results}"],
        vec![
            "gate",
            "--results",
            "{results}",
            "--baselines",
            "{baselines}",
        ],
        vec![
            "baseline",
            "update",
            "--results",
            "{results}",
            "--baselines",
            "{baselines}",
        ],
    ] {
        let (out, _) = lab.case(
            &cmd,
            2,
            &format!("error: no complete run in {}", lab.results.display()),
        );
        says(
            &out,
            &format!(
                "skipped {}: {}: not a lockmatrix run: name `x86_64\"><img",
                run.display(),
                run.join("run.json").display()
            ),
        );
    }
}

#[test]
fn a_target_name_that_climbs_out_never_becomes_a_path() {
    let _cpus = shared_cpus();
    let lab = Lab::with_run("climb");
    let outside = lab
        .dir
        .parent()
        .unwrap()
        .join(format!("lockmatrix-climbed-{}", std::process::id()));
    let name = format!("../../../..{}", outside.display());
    let run = run_with_target_named(&lab, &name);
    let (out, _) = lab.case(
        &[
            "baseline",
            "update",
            "--from",
            s(&run),
            "--baselines",
            "{baselines}",
        ],
        2,
        "using run",
    );
    says(&out, "does not start with a letter or digit");
    assert!(!outside.exists(), "{} was created", outside.display());
}

#[test]
fn a_ten_thousand_character_name_gets_a_short_message() {
    let _cpus = shared_cpus();
    let lab = Lab::with_run("long-name");
    let run = run_with_target_named(&lab, &"x".repeat(10_000));
    let (out, _) = lab.case(&["report", s(&run)], 2, "using run");
    says(&out, "too long");
    assert!(text(&out).len() < 2000, "{}", text(&out).len());
}

#[test]
fn a_report_to_a_device_is_refused_at_once_not_read() {
    let _cpus = shared_cpus();
    let lab = Lab::with_run("dev-full");
    for (args, dev) in [
        (vec!["report", "{run}", "--bmf", "/dev/full"], "/dev/full"),
        (
            vec!["report", "{run}", "--html", "-o", "/dev/zero"],
            "/dev/zero",
        ),
        (
            vec!["report", "{run}", "--history", "-o", "/dev/urandom"],
            "/dev/urandom",
        ),
    ] {
        let (out, took) = lab.case(&args, 2, "");
        says(&out, &format!("error: {dev}: is a device; expected a regular file to write (or - for standard output)"));
        assert!(took < Duration::from_secs(10), "{took:?}");
    }
}

#[test]
fn a_report_to_a_fifo_is_refused_without_hanging() {
    let _cpus = shared_cpus();
    let lab = Lab::with_run("fifo");
    let fifo = lab.dir.join("fifo");
    let c = std::ffi::CString::new(s(&fifo)).unwrap();
    // SAFETY: mkfifo on a path in the lab.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let (out, took) = lab.case(&["report", "{run}", "--bmf", s(&fifo)], 2, "using run");
    says(&out, "is a FIFO; expected a regular file");
    assert!(took < Duration::from_secs(10), "{took:?}");
}

#[test]
fn a_report_to_dash_goes_to_standard_output() {
    let _cpus = shared_cpus();
    let lab = Lab::with_run("dash");
    let out = lab.run(&["report", "{run}", "--bmf", "-"]);
    assert!(out.status.success(), "{}", text(&out));
    let doc: Value = serde_json::from_slice(&out.stdout).expect("BMF on stdout");
    assert!(doc
        .as_object()
        .unwrap()
        .keys()
        .any(|k| k.starts_with("x86_64/atomic/")));
    assert!(!lab.dir.join("-").exists());
}

#[test]
fn a_report_never_replaces_a_file_lockmatrix_did_not_write() {
    let _cpus = shared_cpus();
    let lab = Lab::with_run("not-ours");
    let notes = lab.file("notes.json", "{\"mine\": true}");
    let (out, _) = lab.case(&["report", "{run}", "--bmf", s(&notes)], 2, "using run");
    says(
        &out,
        "exists and is not a report lockmatrix wrote: not overwritten",
    );
}

#[test]
fn control_characters_from_a_run_never_reach_the_terminal() {
    let _cpus = shared_cpus();
    let lab = Lab::with_run("ansi");
    let run = lab.edited_run("20300101T000000Z", |d| {
        edit_json(&d.join("run.json"), |v| {
            v["host"]["cpu_model"] = Value::from("\u{1b}[2J\u{1b}]8;;http://evil\u{7}CPU");
            v["targets"][0]["toolchain"]["version"] = Value::from("rustc \u{1b}[31m1.0\u{9b}");
        })
    });
    // One-line fields are refused as they are read (round four: a line
    // break there forged report lines); the refusal itself sends nothing.
    for args in [
        vec!["report", s(&run)],
        vec!["gate", s(&run), "--baselines", "{baselines}"],
    ] {
        let (out, _) = lab.case(&args, 2, "using run");
        for stream in [&out.stdout, &out.stderr] {
            let t = String::from_utf8_lossy(stream);
            assert!(!t.contains(['\u{1b}', '\u{7}', '\u{9b}']), "{t}");
        }
        says(&out, "host.cpu_model: holds U+001B");
    }
}

#[test]
fn a_cache_without_home_is_exit_2_never_a_shared_tmp_directory() {
    let lab = Lab::new("no-home");
    let mut cmd = lab.command(&[
        "matrix",
        "--no-install",
        "--targets",
        "x86_64",
        "--results",
        "{results}",
    ]);
    cmd.env_remove("LOCKMATRIX_CACHE")
        .env_remove("XDG_CACHE_HOME")
        .env_remove("HOME");
    lab.case_of(
        cmd,
        2,
        "error: no cache directory: set HOME, XDG_CACHE_HOME or LOCKMATRIX_CACHE",
    );
}

#[test]
fn a_read_only_cache_is_exit_2_naming_it() {
    let lab = Lab::new("ro-cache");
    let mut cmd = lab.command(&[
        "matrix",
        "--no-install",
        "--targets",
        "x86_64",
        "--results",
        "{results}",
    ]);
    cmd.env("LOCKMATRIX_CACHE", "/proc/lockmatrix-cache");
    lab.case_of(
        cmd,
        2,
        "error: /proc/lockmatrix-cache: cannot write the cache there",
    );
}

#[test]
fn a_shallow_clone_says_how_to_fetch_the_base() {
    let lab = Lab::new("shallow");
    let clone = lab.dir.join("clone");
    let src = format!("file://{}", repo_root().canonicalize().unwrap().display());
    let ok = Command::new("git")
        .args(["clone", "-q", "--depth", "1", &src, s(&clone)])
        .status()
        .unwrap();
    assert!(ok.success());
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args([
            "matrix",
            "--no-install",
            "--targets",
            "x86_64",
            "--against",
            "HEAD~1",
        ])
        .current_dir(&clone)
        .env("LOCKMATRIX_CACHE", &lab.cache)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert_eq!(
        first_line(&out),
        "error: --against HEAD~1: not in this clone's history, which is shallow: fetch it with `git fetch --unshallow` (or `git fetch --deepen=<commits>`)"
    );
}

#[test]
fn a_base_revision_that_does_not_build_fails_the_gate_by_name() {
    let _cpus = shared_cpus();
    let lab = Lab::new("base-fails");
    let root = String::from_utf8(
        Command::new("git")
            .args(["rev-list", "--max-parents=0", "HEAD"])
            .current_dir(repo_root())
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let root = root.trim();
    let mut cmd = lab.command(&[
        "matrix",
        "--no-install",
        "--no-insns",
        "--targets",
        "x86_64",
        "--suites",
        "atomic",
        "--rounds",
        "2",
        "--against",
        root,
        "--results",
        "{results}",
    ]);
    cmd.env_remove("LOCKMATRIX_CACHE");
    let out = cmd.output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    says(&out, &format!("the base revision {} failed", &root[..12]));
    says(&out, "\nFAIL: ");
}

#[test]
fn a_symlinked_baselines_entry_is_refused_never_followed() {
    let _cpus = shared_cpus();
    let lab = Lab::with_run("baseline-link");
    let outside = lab.dir.join("outside");
    std::fs::rename(lab.baselines.join("x86_64"), &outside).unwrap();
    std::os::unix::fs::symlink(&outside, lab.baselines.join("x86_64")).unwrap();
    let (out, _) = lab.case(
        &["gate", "{run}", "--baselines", "{baselines}"],
        2,
        "using run",
    );
    says(
        &out,
        "x86_64: is a symbolic link, expected a directory: refused",
    );
    let (out, _) = lab.case(
        &[
            "baseline",
            "update",
            "--from",
            "{run}",
            "--baselines",
            "{baselines}",
        ],
        2,
        "using run",
    );
    says(&out, "is a symbolic link");
}

/// A copy of the lab's run whose run.json is `text`.
fn run_json_of(lab: &Lab, edit: impl FnOnce(&str) -> String) -> PathBuf {
    lab.edited_run("20300101T000000Z", |d| {
        let text = std::fs::read_to_string(d.join("run.json")).unwrap();
        std::fs::write(d.join("run.json"), edit(&text)).unwrap();
    })
}

#[test]
fn a_one_gigabyte_run_json_is_refused_unread() {
    let _cpus = shared_cpus();
    let lab = Lab::with_run("gigabyte");
    let run = lab.edited_run("20300101T000000Z", |d| {
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(d.join("run.json"))
            .unwrap();
        f.set_len(1 << 30).unwrap();
    });
    let (out, took) = lab.case(&["report", s(&run)], 2, "using run");
    says(
        &out,
        "run.json: larger than 64 MiB, the most a file of its kind can honestly be: refused",
    );
    assert!(took < Duration::from_secs(10), "{took:?}");
}

#[test]
fn a_run_json_linked_to_dev_zero_is_refused() {
    let _cpus = shared_cpus();
    let lab = Lab::with_run("run-dev-zero");
    let run = lab.edited_run("20300101T000000Z", |d| {
        std::fs::remove_file(d.join("run.json")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", d.join("run.json")).unwrap();
    });
    let (out, _) = lab.case(&["report", s(&run)], 2, "using run");
    says(
        &out,
        "run.json: is a symbolic link, not a regular file: refused",
    );
}

#[test]
fn deeply_nested_json_in_a_run_is_refused() {
    let _cpus = shared_cpus();
    let lab = Lab::with_run("nested");
    let run = run_json_of(&lab, |t| {
        t.replacen(
            "\"variants\": {",
            &format!("\"variants\": {{\"deep\": {}", "[".repeat(100_000)),
            1,
        )
    });
    let (out, _) = lab.case(&["report", s(&run)], 2, "using run");
    says(
        &out,
        "run.json: not a lockmatrix run: recursion limit exceeded",
    );
}

#[test]
fn nan_and_infinity_in_a_run_are_refused() {
    let _cpus = shared_cpus();
    let lab = Lab::with_run("nan");
    for bad in ["NaN", "Infinity", "1e999"] {
        let run = lab.edited_run(&format!("20300101T00000{}Z", bad.len()), |d| {
            let text = std::fs::read_to_string(d.join("run.json")).unwrap();
            let i = text.find("\"value\": ").unwrap() + 9;
            let j = i + text[i..].find([',', '\n']).unwrap();
            std::fs::write(
                d.join("run.json"),
                format!("{}{bad}{}", &text[..i], &text[j..]),
            )
            .unwrap();
        });
        let (out, _) = lab.case(&["report", s(&run)], 2, "using run");
        says(&out, "run.json: not a lockmatrix run");
    }
}

#[test]
fn duplicate_keys_in_a_run_are_refused() {
    let _cpus = shared_cpus();
    let lab = Lab::with_run("dup-key");
    let run = run_json_of(&lab, |t| t.replacen("{", "{\n  \"run_id\": \"other\",", 1));
    let (out, _) = lab.case(&["report", s(&run)], 2, "using run");
    says(&out, "duplicate field `run_id`");
}

#[test]
fn duplicate_samples_in_a_run_are_refused() {
    let _cpus = shared_cpus();
    let lab = Lab::with_run("dup-sample");
    let run = lab.edited_run("20300101T000000Z", |d| {
        edit_json(&d.join("run.json"), |v| {
            let samples = v["targets"][0]["suites"][0]["samples"]
                .as_array_mut()
                .unwrap();
            let first = samples[0].clone();
            samples.push(first);
        })
    });
    let (out, _) = lab.case(
        &["gate", s(&run), "--baselines", "{baselines}"],
        2,
        "using run",
    );
    says(&out, "has two samples of round 0 (edited by hand?)");
}

#[test]
fn a_byte_order_mark_in_a_run_json_is_read() {
    let _cpus = shared_cpus();
    let lab = Lab::with_run("bom-run");
    let run = run_json_of(&lab, |t| format!("\u{feff}{t}"));
    lab.case(&["report", s(&run)], 0, "using run");
}

#[test]
fn a_non_utf8_entry_in_results_is_passed_over_not_a_crash() {
    use std::os::unix::ffi::OsStrExt;
    let _cpus = shared_cpus();
    let lab = Lab::with_run("non-utf8");
    let odd = lab
        .results
        .join(std::ffi::OsStr::from_bytes(b"9999\xff\xfe"));
    std::fs::create_dir_all(&odd).unwrap();
    std::fs::write(odd.join("run.json"), b"\xff\xfe not json").unwrap();
    let (out, _) = lab.case(
        &["report", "--results", "{results}"],
        0,
        "warning: skipping run ",
    );
    says(&out, "not UTF-8 text");
    says(&out, &format!("using run {}", lab.run.display()));
}

/// Merges the lab's run and `other` (a copy with another target) into
/// `out` with `SECRET_TOKEN` in the environment.
fn merge_case(lab: &Lab, edit: impl FnOnce(&Path), first: &str) -> Output {
    let other = lab.edited_run("20300101T000000Z", |d| {
        edit_json(&d.join("run.json"), |v| {
            v["targets"][0]["name"] = Value::from("aarch64")
        });
        std::fs::rename(d.join("x86_64"), d.join("aarch64")).unwrap();
        std::fs::rename(d.join("bin/x86_64"), d.join("bin/aarch64")).unwrap();
        edit(d);
    });
    let merged = lab.dir.join("merged");
    let mut cmd = lab.command(&["ci", "merge", "{run}", s(&other), "--out", s(&merged)]);
    cmd.env("SECRET_TOKEN", "hunter2");
    let (out, _) = lab.case_of(cmd, 2, first);
    assert!(
        !merged.exists(),
        "a refused merge left {}",
        merged.display()
    );
    for (p, kind) in snapshot(&lab.dir) {
        if kind == "special" || kind == "dir" || kind.starts_with("link") {
            continue;
        }
        if let Ok(bytes) = std::fs::read(&p) {
            assert!(
                !String::from_utf8_lossy(&bytes).contains("hunter2"),
                "{}",
                p.display()
            );
        }
    }
    out
}

#[test]
fn ci_merge_never_copies_the_environment_a_link_points_to() {
    let _cpus = shared_cpus();
    let lab = Lab::with_run("merge-environ");
    let out = merge_case(
        &lab,
        |d| {
            std::fs::create_dir_all(d.join("logs")).unwrap();
            std::os::unix::fs::symlink("/proc/self/environ", d.join("logs/env")).unwrap();
        },
        "error: ",
    );
    says(&out, "logs/env: is a symbolic link: refused");
}

#[test]
fn ci_merge_never_copies_etc_shadow_through_a_link() {
    let _cpus = shared_cpus();
    let lab = Lab::with_run("merge-shadow");
    let out = merge_case(
        &lab,
        |d| std::os::unix::fs::symlink("/etc/shadow", d.join("aarch64/shadow")).unwrap(),
        "error: ",
    );
    says(&out, "aarch64/shadow: is a symbolic link: refused");
}

#[test]
fn ci_merge_refuses_a_link_to_a_directory_and_leaves_no_partial_output() {
    let _cpus = shared_cpus();
    let lab = Lab::with_run("merge-dir-link");
    let out = merge_case(
        &lab,
        |d| std::os::unix::fs::symlink("/etc", d.join("logs-etc")).unwrap(),
        "error: ",
    );
    says(&out, "logs-etc: is a symbolic link: refused");
}

#[test]
fn ci_merge_refuses_a_fifo_in_an_artifact() {
    let _cpus = shared_cpus();
    let lab = Lab::with_run("merge-fifo");
    let out = merge_case(
        &lab,
        |d| {
            let c = std::ffi::CString::new(s(&d.join("aarch64/fifo"))).unwrap();
            // SAFETY: mkfifo on a path in the lab.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        },
        "error: ",
    );
    says(&out, "aarch64/fifo: is a FIFO: refused");
}

#[test]
fn writing_into_an_old_runs_binary_never_changes_what_the_next_run_executes() {
    let _cpus = shared_cpus();
    let lab = Lab::with_run("poison-bin");
    let kept = lab.run.join("bin/x86_64/atomic");
    let recorded = read_json(&lab.run.join("run.json"))["targets"][0]["binaries"]["atomic"].clone();
    assert_eq!(
        Value::from(sha256_hex(&std::fs::read(&kept).unwrap())),
        recorded
    );
    // In place, as an attacker with the results directory would: the kept
    // copy is read-only, so make it writable first.
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&kept, std::fs::Permissions::from_mode(0o755)).unwrap();
    let mut f = std::fs::OpenOptions::new().write(true).open(&kept).unwrap();
    std::io::Write::write_all(&mut f, b"#!/bin/sh\necho poisoned\n").unwrap();
    drop(f);
    let next = native_atomic_run(&lab.results, &["--rounds", "2"]);
    let ran = read_json(&next.join("run.json"))["targets"][0]["binaries"]["atomic"].clone();
    assert_eq!(ran, recorded, "the next run executed another binary");
    assert_ne!(
        Value::from(sha256_hex(&std::fs::read(&kept).unwrap())),
        recorded
    );
}

#[test]
fn a_changed_cached_binary_is_rebuilt_and_named_never_run() {
    let _cpus = shared_cpus();
    let lab = Lab::new("cache-changed");
    let run = |lab: &Lab| {
        lab.run(&[
            "matrix",
            "--no-install",
            "--no-gate",
            "--no-insns",
            "--targets",
            "x86_64",
            "--suites",
            "atomic",
            "--rounds",
            "2",
            "--results",
            "{results}",
        ])
    };
    let first = run(&lab);
    assert!(first.status.success(), "{}", text(&first));
    // Cargo's output, and the store entry that runs (read-only: made
    // writable first, as someone with the cache would).
    let built = lab
        .cache
        .join("target/x86_64-unknown-linux-gnu/x86_64-unknown-linux-gnu/release/atomic");
    let sha = read_json(&newest(&lab.results).join("run.json"))["targets"][0]["binaries"]["atomic"]
        .as_str()
        .unwrap()
        .to_string();
    let stored = lab.cache.join("bin").join(&sha).join("atomic");
    for f in [&built, &stored] {
        use std::os::unix::fs::PermissionsExt;
        let bytes = std::fs::read(f).unwrap();
        std::fs::set_permissions(f, std::fs::Permissions::from_mode(0o755)).unwrap();
        std::fs::write(f, &bytes[..bytes.len() / 2]).unwrap();
    }
    let second = run(&lab);
    assert!(second.status.success(), "{}", text(&second));
    for f in [&built, &stored] {
        says(
            &second,
            &format!("warning: {}: changed since it was built", f.display()),
        );
    }
    let ran = read_json(&newest(&lab.results).join("run.json"))["targets"][0]["binaries"]["atomic"]
        .clone();
    assert_eq!(
        ran,
        Value::from(sha.as_str()),
        "the rebuilt binary is the recorded one"
    );
    assert_eq!(sha256_hex(&std::fs::read(&stored).unwrap()), sha);
}

#[test]
fn an_against_base_with_other_sources_is_rebuilt_without_a_tamper_warning() {
    let _cpus = shared_cpus();
    let lab = Lab::new("against-sources");
    let repo = lab.dir.join("repo");
    let base = crate::scratch::scratch_repo(&repo);
    let main = "suites/atomic/src/main.rs";
    let first = "//! The atomic suite";
    crate::scratch::commit_edit(
        &repo,
        main,
        first,
        &format!("//! (a head commit)\n{first}"),
        "atomic: another comment",
    );
    // Base and head take turns in one target dir, each cleaning the
    // other's build: nothing there was changed behind the build's back.
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args([
            "matrix",
            "--no-install",
            "--no-insns",
            "--targets",
            "x86_64",
            "--suites",
            "atomic",
            "--rounds",
            "2",
            "--against",
            &base,
            "--results",
            s(&lab.results),
        ])
        .current_dir(&repo)
        .env("LOCKMATRIX_CACHE", &lab.cache)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    assert!(
        !text(&out).contains("changed since it was built"),
        "{}",
        text(&out)
    );
}

#[test]
fn two_baseline_updates_at_once_never_tear_the_baselines() {
    let _cpus = shared_cpus();
    let lab = Lab::with_run("concurrent");
    let two = two_target_run(&lab);
    let update = || {
        lab.command(&[
            "baseline",
            "update",
            "--from",
            s(&two),
            "--baselines",
            "{baselines}",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
    };
    let (mut torn, mut refused) = (0, 0);
    for i in 0..20 {
        let _ = std::fs::remove_dir_all(lab.baselines.join("x86_64-copy"));
        let a = update();
        std::thread::sleep(Duration::from_millis(i * 5));
        let b = update();
        for out in [a.wait_with_output().unwrap(), b.wait_with_output().unwrap()] {
            match out.status.code() {
                Some(0) => {}
                Some(2)
                    if text(&out)
                        .contains("another `baseline update` is writing these baselines") =>
                {
                    refused += 1
                }
                _ => torn += 1,
            }
        }
        // Whole files only: both targets' files, each a baseline.
        for t in ["x86_64", "x86_64-copy"] {
            let v = read_json(&lab.baselines.join(t).join("atomic.json"));
            assert_eq!(v["target"], t);
        }
        let leftovers: Vec<_> = std::fs::read_dir(lab.baselines.join("x86_64"))
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .filter(|n| n.to_string_lossy().contains(".tmp-"))
            .collect();
        assert!(leftovers.is_empty(), "{leftovers:?}");
    }
    eprintln!("20 tries: torn {torn}, refused {refused}");
    assert_eq!(torn, 0);
}
