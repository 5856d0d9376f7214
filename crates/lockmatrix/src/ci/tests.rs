use super::jobs::{yaml_scalar, DEBIAN_IMAGE, FORK_GUARD, NOT_ANOTHER_LABEL, RUST_TOOLCHAIN};
use super::*;
use crate::config::parse;
use serde_norway::Value;
use std::sync::atomic::{AtomicUsize, Ordering};

fn committed() -> Config {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    crate::config::load(&root.join("targets.yaml")).unwrap()
}

/// x86_64 native on a hosted runner, aarch64 under QEMU, a self-hosted
/// ppc64le machine, an ssh host and a disabled target.
const MIXED: &str = "\
defaults:
  timeout_secs: 60
targets:
  - name: x86_64
    class: x86
    triple: x86_64-unknown-linux-gnu
    runner: native
    packages: [gcc]
    enabled: true
    labels: [ubuntu-24.04]
  - name: aarch64
    class: arm64
    triple: aarch64-unknown-linux-gnu
    runner: qemu
    emulator: qemu-aarch64
    packages: [qemu-user]
    enabled: true
  - name: power9
    class: ppc64
    triple: powerpc64le-unknown-linux-gnu
    runner: native
    packages: []
    enabled: true
    labels: [self-hosted, linux, ppc64le]
  - name: mips-board
    class: mips
    triple: mips-unknown-linux-gnu
    runner: ssh
    packages: [gcc-mips-linux-gnu]
    enabled: true
    ssh: {host: board.example.org, port: 2222, user: ci}
  - name: sparc64
    class: ia64-class
    triple: sparc64-unknown-linux-gnu
    runner: qemu
    emulator: qemu-sparc64
    packages: []
    enabled: false
";

fn mixed() -> Config {
    parse(Path::new("targets.yaml"), MIXED).unwrap()
}

fn file<'a>(files: &'a [(PathBuf, String)], name: &str) -> &'a str {
    let path = Path::new(".github/workflows").join(name);
    &files
        .iter()
        .find(|(p, _)| *p == path)
        .unwrap_or_else(|| panic!("{name} not rendered"))
        .1
}

fn yaml(text: &str) -> Value {
    serde_norway::from_str(text).unwrap_or_else(|e| panic!("not YAML: {e}\n{text}"))
}

fn jobs_of(workflow: &Value) -> &serde_norway::Mapping {
    workflow["jobs"].as_mapping().expect("a jobs mapping")
}

fn job_ids(workflow: &Value) -> Vec<String> {
    jobs_of(workflow)
        .keys()
        .map(|k| k.as_str().unwrap().to_string())
        .collect()
}

fn steps_text(job: &Value) -> String {
    serde_norway::to_string(&job["steps"]).unwrap()
}

#[test]
fn committed_targets_get_one_job_each_then_the_gate() {
    let config = committed();
    let files = render(&config).unwrap();
    let main = yaml(file(&files, "lockmatrix.yml"));
    let mut expected: Vec<String> = config
        .targets
        .iter()
        .filter(|t| t.enabled)
        .map(|t| format!("target-{}", t.name))
        .collect();
    expected.push("gate".into());
    assert_eq!(job_ids(&main), expected);

    let jobs = jobs_of(&main);
    for t in config.targets.iter().filter(|t| t.enabled) {
        let job = &jobs[format!("target-{}", t.name).as_str()];
        let steps = steps_text(job);
        assert!(
            steps.contains(&format!(
                "cargo xtask matrix --targets {} --no-gate --results results",
                t.name
            )),
            "{steps}"
        );
        assert!(
            steps.contains(&format!("name: results-{}", t.name)),
            "{steps}"
        );
        assert!(
            steps.contains(&{
                let checkout = super::actions::ACTIONS[0].1;
                format!("uses: {}@{}", checkout.name, checkout.commit)
            }),
            "{steps}"
        );
        // The cross-built std is cached per target and toolchain.
        assert!(
            steps.contains(&format!("key: lockmatrix-{}-{RUST_TOOLCHAIN}-", t.name))
                && steps.contains("path: ~/.cache/lockmatrix"),
            "{steps}"
        );
        let arm = t.runner == crate::config::RunnerKind::Native
            && t.triple.as_str().starts_with("aarch64-");
        let runner = if arm {
            "ubuntu-24.04-arm"
        } else {
            "ubuntu-24.04"
        };
        assert_eq!(job["runs-on"].as_str(), Some(runner), "{}", t.name);
        match t.runner {
            crate::config::RunnerKind::Qemu => {
                assert_eq!(job["container"].as_str(), Some(DEBIAN_IMAGE))
            }
            _ => assert!(job.get("container").is_none(), "{}", t.name),
        }
        // Unguarded: it runs for every event but another label's.
        assert!(job.get("environment").is_none());
        assert_eq!(job["if"].as_str(), Some(NOT_ANOTHER_LABEL), "{}", t.name);
    }
    let gate = &jobs["gate"];
    assert_eq!(
        gate["if"].as_str(),
        Some(format!("always() && ({NOT_ANOTHER_LABEL})").as_str())
    );
    let needs: Vec<&str> = gate["needs"]
        .as_sequence()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(needs, expected[..expected.len() - 1]);
    assert_eq!(main["permissions"]["contents"].as_str(), Some("read"));
    assert_eq!(DEBIAN_IMAGE.matches("debian:12").count(), 1);
}

#[test]
fn self_hosted_ssh_native_and_disabled_targets() {
    let files = render(&mixed()).unwrap();
    let text = file(&files, "lockmatrix.yml");
    let main = yaml(text);
    assert_eq!(
        job_ids(&main),
        [
            "target-x86_64",
            "target-aarch64",
            "target-power9",
            "target-mips-board",
            "gate"
        ]
    );
    let jobs = jobs_of(&main);

    let power9 = &jobs["target-power9"];
    let labels: Vec<&str> = power9["runs-on"]
        .as_sequence()
        .expect("a label list")
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(labels, ["self-hosted", "linux", "ppc64le"]);
    assert_eq!(power9["environment"].as_str(), Some("self-hosted-approval"));
    assert_eq!(power9["if"].as_str(), Some(FORK_GUARD));
    assert!(power9.get("container").is_none());

    let ssh = &jobs["target-mips-board"];
    assert_eq!(ssh["runs-on"].as_str(), Some("ubuntu-24.04"));
    assert_eq!(ssh["environment"].as_str(), Some("ssh-approval"));
    assert_eq!(ssh["if"].as_str(), Some(FORK_GUARD));
    assert_eq!(ssh["container"].as_str(), Some(DEBIAN_IMAGE));
    let steps = steps_text(ssh);
    assert!(
        steps.contains("${{ secrets.LOCKMATRIX_SSH_KEY_MIPS_BOARD }}"),
        "{steps}"
    );
    assert!(steps.contains("chmod 600") && steps.contains("LOCKMATRIX_SSH_KEY="));

    for quiet in ["target-x86_64", "target-aarch64"] {
        assert_eq!(
            jobs[quiet]["if"].as_str(),
            Some(NOT_ANOTHER_LABEL),
            "{quiet}"
        );
        assert!(jobs[quiet].get("environment").is_none(), "{quiet}");
    }
    assert!(!text.contains("sparc64:") && !text.contains("target-sparc64"));
    assert!(text.contains("# Disabled in targets.yaml, so no job: sparc64\n"));

    let baselines = yaml(file(&files, "lockmatrix-baselines.yml"));
    assert_eq!(
        job_ids(&baselines),
        [
            "select",
            "target-x86_64",
            "target-aarch64",
            "target-power9",
            "target-mips-board",
            "update"
        ]
    );
    let b = jobs_of(&baselines);
    assert_eq!(
        b["target-power9"]["environment"].as_str(),
        Some("self-hosted-approval")
    );
    assert_eq!(
        b["target-aarch64"]["if"].as_str(),
        Some("contains(fromJSON(needs.select.outputs.targets), 'aarch64')")
    );
    assert_eq!(
        b["update"]["permissions"]["contents"].as_str(),
        Some("write")
    );
    assert_eq!(
        b["update"]["permissions"]["pull-requests"].as_str(),
        Some("write")
    );
}

#[test]
fn native_targets_pick_a_runner_by_architecture_or_need_labels() {
    let arm = MIXED.replace(
        "  - name: aarch64\n    class: arm64\n    triple: aarch64-unknown-linux-gnu\n    runner: qemu\n    emulator: qemu-aarch64\n",
        "  - name: aarch64\n    class: arm64\n    triple: aarch64-unknown-linux-gnu\n    runner: native\n",
    );
    let files = render(&parse(Path::new("t.yaml"), &arm).unwrap()).unwrap();
    let main = yaml(file(&files, "lockmatrix.yml"));
    let job = &jobs_of(&main)["target-aarch64"];
    assert_eq!(job["runs-on"].as_str(), Some("ubuntu-24.04-arm"));
    assert!(job.get("container").is_none());

    let riscv = MIXED.replace("    labels: [self-hosted, linux, ppc64le]\n", "");
    let e = render(&parse(Path::new("t.yaml"), &riscv).unwrap()).unwrap_err();
    let e = e.to_string();
    assert!(
        e.starts_with("t.yaml: target 'power9' runs natively on powerpc64le-unknown-linux-gnu but has no `labels`"),
        "{e}"
    );
}

#[test]
fn github_expressions_survive_and_no_template_syntax_is_left() {
    let files = render(&mixed()).unwrap();
    let all: String = files.iter().map(|(_, t)| t.as_str()).collect();
    for expr in [
        "${{ toJSON(needs) }}",
        "${{ github.event.pull_request.number }}",
        "${{ github.event.workflow_run.id }}",
        "${{ github.token }}",
        "${{ needs.select.outputs.targets }}",
        "${{ inputs.targets }}",
        "${{ github.event_name == 'pull_request' }}",
    ] {
        assert!(all.contains(expr), "{expr} missing");
    }
    // Every ${{ }} of the templates reaches the output unchanged.
    for (_, source) in super::render::TEMPLATES {
        for expr in source.match_indices("${{").map(|(i, _)| {
            let end = source[i..].find("}}").unwrap() + i + 2;
            &source[i..end]
        }) {
            if !expr.contains("[[") {
                assert!(all.contains(expr), "{expr} lost");
            }
        }
    }
    for leftover in ["[%", "%]", "[[", "]]", "[#", "#]"] {
        assert!(!all.contains(leftover), "{leftover} left in the output");
    }
}

#[test]
fn rendering_is_deterministic_and_every_file_is_yaml_with_the_header() {
    for config in [committed(), mixed()] {
        let a = render(&config).unwrap();
        let b = render(&config).unwrap();
        assert_eq!(a, b);
        let names: Vec<String> = a.iter().map(|(p, _)| p.display().to_string()).collect();
        assert_eq!(
            names,
            [
                ".github/workflows/lockmatrix.yml",
                ".github/workflows/lockmatrix-baselines.yml",
                ".github/workflows/lockmatrix-comment.yml"
            ]
        );
        for (path, text) in &a {
            assert!(
                text.starts_with(
                    "# Generated by cargo xtask ci generate from targets.yaml; do not edit.\n"
                ),
                "{}",
                path.display()
            );
            assert!(text.ends_with("\n") && !text.ends_with("\n\n"));
            assert!(
                !text.contains(" \n"),
                "trailing space in {}",
                path.display()
            );
            let v = yaml(text);
            assert!(v["jobs"].is_mapping(), "{}", path.display());
        }
    }
}

#[test]
fn comment_workflow_reads_the_artifact_of_the_triggering_run() {
    let files = render(&committed()).unwrap();
    let v = yaml(file(&files, "lockmatrix-comment.yml"));
    let on = &v["on"]["workflow_run"];
    assert_eq!(on["workflows"][0].as_str(), Some("lockmatrix"));
    assert_eq!(on["types"][0].as_str(), Some("completed"));
    assert_eq!(v["permissions"]["pull-requests"].as_str(), Some("write"));
    let steps = steps_text(&v["jobs"]["comment"]);
    assert!(steps.contains("run-id: ${{ github.event.workflow_run.id }}"));
    assert!(steps.contains("<!-- lockmatrix -->"));
    let main = yaml(file(&files, "lockmatrix.yml"));
    assert_eq!(main["name"].as_str(), Some("lockmatrix"));
    assert!(steps_text(&main["jobs"]["gate"]).contains("name: pr-comment"));
    assert!(steps_text(&main["jobs"]["gate"]).contains("name: lockmatrix-report"));
}

static UNIQUE: AtomicUsize = AtomicUsize::new(0);

fn scratch(what: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!(
        "lockmatrix-ci-{what}-{}-{}",
        std::process::id(),
        UNIQUE.fetch_add(1, Ordering::Relaxed)
    ));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn check_is_quiet_when_identical_and_names_drifted_missing_and_extra_files() {
    let root = scratch("check");
    let config = committed();
    let missing = check(&root, &config).unwrap();
    assert_eq!(missing.len(), 3, "{missing:?}");
    assert!(missing[0].starts_with(".github/workflows/lockmatrix.yml: missing"));

    let written = generate(&root, &config).unwrap();
    assert_eq!(written.len(), 3);
    assert!(written.iter().all(|p| p.is_file()));
    assert_eq!(check(&root, &config).unwrap(), Vec::<String>::new());

    let text = std::fs::read_to_string(&config.path).unwrap();
    let edited = text.replacen(
        "    linker: aarch64-linux-gnu-gcc\n    packages: [qemu-user, gcc-aarch64-linux-gnu, libc6-dev-arm64-cross]\n    enabled: true",
        "    linker: aarch64-linux-gnu-gcc\n    packages: [qemu-user, gcc-aarch64-linux-gnu, libc6-dev-arm64-cross]\n    enabled: false",
        1,
    );
    assert_ne!(edited, text);
    let edited = parse(Path::new("targets.yaml"), &edited).unwrap();
    let drift = check(&root, &edited).unwrap();
    assert_eq!(drift.len(), 2, "{drift:?}");
    assert!(
        drift[0].starts_with(
            ".github/workflows/lockmatrix.yml: differs from targets.yaml's rendering at line "
        ),
        "{drift:?}"
    );
    assert!(drift[0].contains("committed `") && drift[0].contains("rendered `"));
    assert!(drift[0].ends_with("run `cargo xtask ci generate`"));
    assert!(drift[1].starts_with(".github/workflows/lockmatrix-baselines.yml: differs"));

    let extra = root.join(".github/workflows/lockmatrix-old.yml");
    std::fs::write(&extra, format!("{}\nname: old\n", super::render::HEADER)).unwrap();
    std::fs::write(root.join(".github/workflows/other.yml"), "name: other\n").unwrap();
    assert_eq!(
        check(&root, &config).unwrap(),
        [".github/workflows/lockmatrix-old.yml: generated, but targets.yaml no longer renders it; delete it"]
    );
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn difference_names_the_first_differing_line() {
    let p = Path::new("w.yml");
    assert_eq!(check::difference(p, "a\nb\n", "a\nb\n"), None);
    assert_eq!(
        check::difference(p, "a\nb\nc\n", "a\nB\nc\n").unwrap(),
        "w.yml: differs from targets.yaml's rendering at line 2: committed `b`, rendered `B`; run `cargo xtask ci generate`"
    );
    assert!(check::difference(p, "a\n", "a\nb\n")
        .unwrap()
        .contains("line 2: committed ``, rendered `b`"));
    assert!(check::difference(p, "a", "a\n")
        .unwrap()
        .contains("line 2: committed (end of file), rendered ``"));
}

#[test]
fn yaml_scalars_are_plain_only_when_that_reads_back_as_the_string() {
    assert_eq!(yaml_scalar("ubuntu-24.04"), "ubuntu-24.04");
    assert_eq!(yaml_scalar("self-hosted"), "self-hosted");
    assert_eq!(yaml_scalar("on"), "\"on\"");
    assert_eq!(yaml_scalar("24"), "\"24\"");
    assert_eq!(yaml_scalar("a: b"), "\"a: b\"");
    for s in ["on", "24", "a: b", "x#y", "[x]", "it's"] {
        let v: Value = serde_norway::from_str(&format!("k: {}", yaml_scalar(s))).unwrap();
        assert_eq!(v["k"].as_str(), Some(s));
    }
}

#[test]
fn names_ci_cannot_carry_are_refused() {
    // targets.yaml itself only takes names CI can carry.
    let bad = MIXED.replace("name: aarch64", "name: \"arm:64\"");
    let e = parse(Path::new("t.yaml"), &bad).unwrap_err().to_string();
    assert!(
        e.starts_with(
            "t.yaml:11:11: targets[1].name: name `arm:64`: has a character outside the alphabet"
        ),
        "{e}"
    );
    let clash = MIXED.replace("name: aarch64", "name: x86.64");
    let e = render(&parse(Path::new("t.yaml"), &clash).unwrap()).unwrap_err();
    assert!(
        e.to_string()
            .contains("targets 'x86_64' and 'x86.64' would both be CI job 'target-x86_64'"),
        "{e}"
    );
    let none = MIXED.replace("enabled: true", "enabled: false");
    let e = render(&parse(Path::new("t.yaml"), &none).unwrap()).unwrap_err();
    assert!(e.to_string().contains("every target is disabled"), "{e}");
}

fn write_run(dir: &Path, run_id: &str, started: &str, commit: &str, targets: &[&str]) {
    let targets: Vec<serde_json::Value> = targets
        .iter()
        .map(|name| {
            serde_json::json!({
                "name": name, "triple": format!("{name}-unknown-linux-gnu"), "class": "c",
                "runner": "qemu", "status": {"state": "ok"}, "toolchain": null,
                "build_std": true, "linker": null, "emulator": null,
                "build_secs": 1.0, "run_secs": 2.0, "suites": []
            })
        })
        .collect();
    let run = serde_json::json!({
        "format": 1, "run_id": run_id, "started": started,
        "finished": "2030-01-01T00:10:00Z", "command": ["matrix"], "profile": "quick",
        "host": {"cpu_model": format!("cpu of {run_id}"), "cpus": 4, "kernel": "6.1",
                 "os": "Debian", "lockmatrix_commit": crate::commit::test_id(commit).as_str(), "lockmatrix_dirty": run_id == "b"},
        "targets": targets,
    });
    std::fs::create_dir_all(dir.join("logs")).unwrap();
    std::fs::write(dir.join("run.json"), run.to_string()).unwrap();
    for t in run["targets"].as_array().unwrap() {
        let name = t["name"].as_str().unwrap();
        std::fs::create_dir_all(dir.join(name)).unwrap();
        std::fs::write(dir.join(name).join("atomic.jsonl"), name).unwrap();
        std::fs::write(dir.join("logs").join(format!("build-{name}.log")), name).unwrap();
    }
}

#[test]
fn merge_runs_combines_targets_and_files() {
    let root = scratch("merge");
    let (a, b) = (root.join("a"), root.join("b"));
    write_run(&a, "a", "2030-01-01T00:02:00Z", "abc", &["aarch64"]);
    write_run(&b, "b", "2030-01-01T00:01:00Z", "abc", &["mips32", "s390x"]);
    let out = root.join("merged");
    merge_runs(&[a.clone(), b.clone()], &out).unwrap();
    let run = crate::results::read(&out).unwrap();
    let names: Vec<&str> = run.targets.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["aarch64", "mips32", "s390x"]);
    assert_eq!(run.run_id, "merged");
    assert_eq!(run.started, "2030-01-01T00:01:00Z");
    assert_eq!(run.host.cpu_model, "cpu of a");
    // Each target keeps the CPU of the job that ran it.
    let cpus: Vec<Option<&str>> = run.targets.iter().map(|t| t.cpu_model.as_deref()).collect();
    assert_eq!(cpus, [Some("cpu of a"), Some("cpu of b"), Some("cpu of b")]);
    assert!(run.host.lockmatrix_dirty);
    assert_eq!(run.command[..2], ["ci", "merge"]);
    for f in [
        "aarch64/atomic.jsonl",
        "s390x/atomic.jsonl",
        "logs/build-mips32.log",
    ] {
        assert!(out.join(f).is_file(), "{f}");
    }
    // The merged run reads back like any run, so the gate can take it.
    assert!(crate::results::newest(&root).is_ok());

    let e = merge_runs(&[a.clone(), b.clone()], &out).unwrap_err();
    assert!(e.to_string().contains("already holds a run"), "{e}");
    let e = merge_runs(&[a.clone(), a.clone()], &root.join("twice")).unwrap_err();
    assert!(e.to_string().contains("target 'aarch64' is in both"), "{e}");
    let c = root.join("c");
    write_run(&c, "c", "2030-01-01T00:01:00Z", "def", &["riscv64"]);
    let e = merge_runs(&[a, c], &root.join("mixed")).unwrap_err();
    let def = crate::commit::test_id("def");
    assert!(
        e.to_string()
            .contains(&format!("lockmatrix commit is `{}`", def.short())),
        "{e}"
    );
    let e = merge_runs(&[], &root.join("none")).unwrap_err();
    assert!(e.to_string().contains("nothing to merge"), "{e}");
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn merge_runs_made_against_a_base_merges_the_bases_too() {
    let root = scratch("merge-against");
    let against = |dir: &Path, commit: &str| {
        let path = dir.join("run.json");
        let mut run: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        run["against"] = serde_json::json!({"rev": "origin/main", "commit": crate::commit::test_id(commit).as_str()});
        std::fs::write(path, run.to_string()).unwrap();
    };
    let (a, b) = (root.join("a"), root.join("b"));
    write_run(&a, "a", "2030-01-01T00:02:00Z", "abc", &["aarch64"]);
    write_run(
        &a.join("base"),
        "a/base",
        "2030-01-01T00:02:00Z",
        "0ld",
        &["aarch64"],
    );
    write_run(&b, "b", "2030-01-01T00:01:00Z", "abc", &["mips32"]);
    write_run(
        &b.join("base"),
        "b/base",
        "2030-01-01T00:01:00Z",
        "0ld",
        &["mips32"],
    );
    against(&a, "0ld");
    against(&b, "0ld");
    let out = root.join("merged");
    merge_runs(&[a.clone(), b.clone()], &out).unwrap();
    let run = crate::results::read(&out).unwrap();
    assert_eq!(
        run.against.as_ref().unwrap().commit,
        Some(crate::commit::test_id("0ld"))
    );
    let base = crate::results::read(&out.join("base")).unwrap();
    let names: Vec<&str> = base.targets.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["aarch64", "mips32"]);
    assert!(out.join("base/mips32/atomic.jsonl").is_file());
    // Runs against different bases cannot be gated together.
    against(&b, "other");
    let e = merge_runs(&[a, b], &root.join("mixed")).unwrap_err();
    let other = crate::commit::test_id("other");
    assert!(
        e.to_string()
            .contains(&format!("base revision (--against) is `{}`", other.short())),
        "{e}"
    );
    std::fs::remove_dir_all(&root).unwrap();
}

#[test]
fn pull_requests_run_against_their_base_with_the_whole_history() {
    let files = render(&committed()).unwrap();
    let workflow = yaml(file(&files, "lockmatrix.yml"));
    let steps = steps_text(&jobs_of(&workflow)[&Value::from("target-aarch64")]);
    assert!(
        steps.contains("BASE: ${{ github.event.pull_request.base.sha || github.event.before }}")
            && steps.contains("cargo xtask matrix --targets aarch64 --against \"$BASE\" --no-gate --results results"),
        "{steps}"
    );
    assert!(steps.contains("fetch-depth: 0"), "{steps}");
}

/// Every `run:` script of every rendered file, with where it is.
fn scripts(files: &[(PathBuf, String)]) -> Vec<(String, String)> {
    let mut out = Vec::new();
    for (path, text) in files {
        let v = yaml(text);
        for (id, job) in jobs_of(&v) {
            for step in job["steps"].as_sequence().unwrap() {
                if let Some(run) = step.get("run").and_then(Value::as_str) {
                    let name = step.get("name").and_then(Value::as_str).unwrap_or("?");
                    let place = format!("{}: {}: {name}", path.display(), id.as_str().unwrap());
                    out.push((place, run.to_string()));
                }
            }
        }
    }
    out
}

#[test]
fn every_script_is_valid_bash() {
    for config in [committed(), mixed()] {
        for (place, script) in scripts(&render(&config).unwrap()) {
            let out = std::process::Command::new("bash")
                .args(["-n", "-c", &script])
                .output()
                .unwrap();
            assert!(
                out.status.success(),
                "{place}: {}\n{script}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}

/// Runs a step of a rendered workflow as GitHub would (`bash -eo pipefail`)
/// in `dir`, with the step's `env` (GitHub expressions replaced from
/// `exprs`), `extra` variables, and `dir/bin` first on PATH.
fn run_step(
    workflow: &str,
    job: &str,
    step: &str,
    dir: &Path,
    exprs: &[(&str, &str)],
    extra: &[(&str, &str)],
) -> std::process::Output {
    let v = yaml(workflow);
    let step = v["jobs"][job]["steps"]
        .as_sequence()
        .unwrap()
        .iter()
        .find(|s| s.get("name").and_then(Value::as_str) == Some(step))
        .unwrap_or_else(|| panic!("no step {step} in {job}"));
    let mut cmd = std::process::Command::new("bash");
    cmd.args(["--noprofile", "--norc", "-eo", "pipefail", "-c"])
        .arg(step["run"].as_str().unwrap())
        .current_dir(dir);
    if let Some(env) = step.get("env").and_then(Value::as_mapping) {
        for (k, v) in env {
            let mut v = v.as_str().unwrap().to_string();
            for (expr, value) in exprs {
                v = v.replace(expr, value);
            }
            assert!(!v.contains("${{"), "unreplaced expression in {v}");
            cmd.env(k.as_str().unwrap(), v);
        }
    }
    let path = format!(
        "{}:{}",
        dir.join("bin").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    cmd.env("PATH", path).envs(extra.iter().copied());
    cmd.output().unwrap()
}

fn fake(dir: &Path, name: &str, script: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::create_dir_all(dir.join("bin")).unwrap();
    let path = dir.join("bin").join(name);
    std::fs::write(&path, format!("#!/bin/bash\n{script}")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn read(path: PathBuf) -> String {
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

#[test]
fn gate_step_merges_the_runs_in_target_order_and_notes_the_missing_ones() {
    let files = render(&mixed()).unwrap();
    let dir = scratch("gate-step");
    for name in ["aarch64", "x86_64"] {
        let run = dir.join(format!("downloads/results-{name}/20300101T000000Z"));
        std::fs::create_dir_all(&run).unwrap();
        std::fs::write(run.join("run.json"), "{}").unwrap();
    }
    fake(
        &dir,
        "cargo",
        "echo \"$*\" >> cargo.log\n\
         if [ \"$3\" = merge ]; then mkdir merged; fi\n\
         if [ \"$2\" = gate ]; then echo '## lockmatrix gate: **PASS**' > gate-comment.md; echo summary > \"$GITHUB_STEP_SUMMARY\"; fi\n\
         if [ \"$2\" = report ]; then echo '<html>' > \"$6\"; fi\n",
    );
    let needs = r#"{"target-x86_64":{"result":"success"},"target-aarch64":{"result":"failure"},
        "target-power9":{"result":"skipped"},"target-mips-board":{"result":"cancelled"}}"#;
    let (output, summary) = (dir.join("output"), dir.join("summary"));
    let out = run_step(
        file(&files, "lockmatrix.yml"),
        "gate",
        "Merge the targets' runs and gate them",
        &dir,
        &[
            ("${{ toJSON(needs) }}", needs),
            ("${{ github.event.pull_request.number }}", "42"),
        ],
        &[
            ("GITHUB_OUTPUT", output.to_str().unwrap()),
            ("GITHUB_STEP_SUMMARY", summary.to_str().unwrap()),
        ],
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        read(dir.join("cargo.log")),
        "xtask ci merge downloads/results-x86_64/20300101T000000Z downloads/results-aarch64/20300101T000000Z --out merged\n\
         xtask gate merged --require-gate --markdown ".to_string()
            + summary.to_str().unwrap()
            + " --pr-comment gate-comment.md --json gate.json\n\
               xtask report --html merged -o lockmatrix-report.html\n"
    );
    // The HTML report is written, for the next step to upload.
    assert_eq!(read(dir.join("lockmatrix-report.html")), "<html>\n");
    assert!(stdout.contains("::error::mips-board: its job (cancelled) left no results"));
    // The missing ssh target fails the step's status; the skipped one is a note.
    assert_eq!(read(output), "status=1\n");
    let comment = read(dir.join("pr-comment/comment.md"));
    assert!(comment.starts_with("<!-- lockmatrix -->\n## lockmatrix gate: **PASS**\n"));
    assert!(comment.contains("- `power9`: not run: its job was skipped"));
    assert!(comment.contains("- `mips-board`: **no results**: its job ended `cancelled`"));
    assert!(read(summary.clone()).contains("### Targets without results"));
    assert_eq!(read(dir.join("pr-comment/pr-number")), "42\n");

    // Once uploaded, the summary and the comment link to the artifact
    // itself, before the comment is uploaded.
    let url = "https://github.com/o/r/actions/runs/7/artifacts/99";
    let out = run_step(
        file(&files, "lockmatrix.yml"),
        "gate",
        "Link the HTML report",
        &dir,
        &[("${{ steps.report.outputs.artifact-url }}", url)],
        &[("GITHUB_STEP_SUMMARY", summary.to_str().unwrap())],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let link = format!("**[HTML report]({url})** (artifact `lockmatrix-report`");
    let comment = read(dir.join("pr-comment/comment.md"));
    assert!(comment.contains(&link), "{comment}");
    assert!(read(summary).contains(&link));
    let gate = yaml(file(&files, "lockmatrix.yml"));
    let names: Vec<&str> = gate["jobs"]["gate"]["steps"]
        .as_sequence()
        .unwrap()
        .iter()
        .filter_map(|s| s.get("name").and_then(Value::as_str))
        .collect();
    let at = |n: &str| names.iter().position(|&m| m == n).unwrap();
    assert!(at("Upload the HTML report") < at("Link the HTML report"));
    assert!(at("Link the HTML report") < at("Upload the pull-request comment"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn gate_step_fails_when_the_gate_fails_or_nothing_ran() {
    let files = render(&mixed()).unwrap();
    let dir = scratch("gate-fails");
    fake(&dir, "cargo", "echo \"$*\" >> cargo.log; exit 1\n");
    let output = dir.join("output");
    let needs = r#"{"target-x86_64":{"result":"failure"},"target-aarch64":{"result":"failure"},
        "target-power9":{"result":"failure"},"target-mips-board":{"result":"failure"}}"#;
    let out = run_step(
        file(&files, "lockmatrix.yml"),
        "gate",
        "Merge the targets' runs and gate them",
        &dir,
        &[
            ("${{ toJSON(needs) }}", needs),
            ("${{ github.event.pull_request.number }}", ""),
        ],
        &[
            ("GITHUB_OUTPUT", output.to_str().unwrap()),
            ("GITHUB_STEP_SUMMARY", dir.join("summary").to_str().unwrap()),
        ],
    );
    assert!(out.status.success());
    assert!(!dir.join("cargo.log").exists(), "cargo ran with no runs");
    assert_eq!(read(output), "status=1\n");
    let comment = read(dir.join("pr-comment/comment.md"));
    assert!(comment.contains("**could not run**") && !comment.contains("HTML report"));
    assert!(String::from_utf8_lossy(&out.stdout).contains("::warning::no HTML report"));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn baselines_select_step_resolves_names_classes_and_refuses_unknown_ones() {
    let files = render(&mixed()).unwrap();
    let text = file(&files, "lockmatrix-baselines.yml");
    let dir = scratch("select");
    let select = |wanted: &str| {
        let output = dir.join("output");
        let _ = std::fs::remove_file(&output);
        let out = run_step(
            text,
            "select",
            "Resolve the targets input",
            &dir,
            &[("${{ inputs.targets }}", wanted)],
            &[("GITHUB_OUTPUT", output.to_str().unwrap())],
        );
        let said = String::from_utf8_lossy(&out.stdout).into_owned();
        (
            out.status.success(),
            std::fs::read_to_string(&output).unwrap_or(said),
        )
    };
    assert_eq!(
        select("all"),
        (
            true,
            "targets=[\"aarch64\",\"mips-board\",\"power9\",\"x86_64\"]\n".into()
        )
    );
    assert_eq!(
        select("ppc64, aarch64-unknown-linux-gnu"),
        (true, "targets=[\"aarch64\",\"power9\"]\n".into())
    );
    let (ok, said) = select("sparc64");
    assert!(
        !ok && said.contains("'sparc64' is disabled in targets.yaml"),
        "{said}"
    );
    let (ok, said) = select("vax");
    assert!(!ok && said.contains("unknown target 'vax'"), "{said}");
    let (ok, said) = select(" , ");
    assert!(!ok && said.contains("no targets selected"), "{said}");
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn comment_step_updates_its_own_comment_only_on_the_tested_head() {
    let files = render(&mixed()).unwrap();
    let text = file(&files, "lockmatrix-comment.yml");
    let dir = scratch("comment");
    std::fs::create_dir_all(dir.join("pr-comment")).unwrap();
    // The fork's own Markdown, which is never posted, and its data, whose
    // every value is hostile.
    std::fs::write(
        dir.join("pr-comment/comment.md"),
        "<!-- lockmatrix -->\n## lockmatrix gate: **PASS** @org/admins [click](http://evil)\n",
    )
    .unwrap();
    let gate = serde_json::json!({
        "result": "fail",
        "verdict": "FAIL: 1 regression\n## FAKE PASS",
        "cells": [{"target": "x86_64", "suite": "spinlock",
                   "bench": "b` @org/admins [x](http://evil)", "case": {"lock": "<img src=x>"},
                   "metric": "ticks", "verdict": "regression", "effect": {"ratio": 1.5}}],
        "problems": [{"what": "x\n## FAKE PASS ![i](http://e/i.png)"}],
        "failed_checks": []
    });
    std::fs::write(dir.join("pr-comment/gate.json"), gate.to_string()).unwrap();
    fake(
        &dir,
        "gh",
        "echo \"$*\" >> gh.log\n\
         case \"$*\" in\n\
         'api repos/o/r/pulls/7 --jq .head.sha') echo abc ;;\n\
         'api --paginate repos/o/r/issues/7/comments'*) if [ -f existing ]; then cat existing; fi ;;\n\
         *'labels/safe-to-test') ;;\n\
         *) cat body.md > posted.md ;;\n\
         esac\n",
    );
    let exprs = [
        ("${{ github.token }}", "t"),
        ("${{ github.repository }}", "o/r"),
        ("${{ github.event.workflow_run.head_sha }}", "abc"),
        (
            "${{ github.event.workflow_run.html_url }}",
            "https://github.com/o/r/actions/runs/1",
        ),
        (
            "${{ github.event.workflow_run.head_repository.full_name != github.repository }}",
            "true",
        ),
    ];
    let step = |pr: &str| {
        std::fs::write(dir.join("pr-comment/pr-number"), pr).unwrap();
        let _ = std::fs::remove_file(dir.join("gh.log"));
        run_step(
            text,
            "comment",
            "Post or update the comment",
            &dir,
            &exprs,
            &[],
        )
    };
    let out = step("7\n");
    assert!(
        out.status.success(),
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let log = read(dir.join("gh.log"));
    assert!(
        log.ends_with("api -X POST repos/o/r/issues/7/comments -F body=@body.md\n"),
        "{log}"
    );
    // A fork's approval is removed once its run is done.
    assert!(
        log.contains("api -X DELETE repos/o/r/issues/7/labels/safe-to-test\n"),
        "{log}"
    );
    let posted = read(dir.join("posted.md"));
    assert!(
        posted.starts_with("<!-- lockmatrix -->\n## lockmatrix gate: **FAIL**\n"),
        "{posted}"
    );
    assert!(
        !posted.contains("click") && !posted.contains("**PASS**"),
        "{posted}"
    );
    // Every value of the data is inside a code span, on its own line.
    for line in posted.lines() {
        assert!(!line.starts_with("## FAKE"), "{posted}");
        for hostile in ["@org/admins", "](http://evil)", "<img", "![i]"] {
            if let Some(at) = line.find(hostile) {
                let before = line[..at].matches('`').count();
                assert!(before % 2 == 1, "`{hostile}` outside a code span: {line}");
            }
        }
    }
    assert!(
        posted.contains("[the run](https://github.com/o/r/actions/runs/1)"),
        "{posted}"
    );
    std::fs::write(dir.join("existing"), "99\n").unwrap();
    step("7");
    assert!(read(dir.join("gh.log"))
        .ends_with("api -X PATCH repos/o/r/issues/comments/99 -F body=@body.md\n"));
    // No data: a comment that says so, not the fork's Markdown.
    std::fs::remove_file(dir.join("pr-comment/gate.json")).unwrap();
    step("7");
    assert!(read(dir.join("posted.md")).contains("## lockmatrix gate: **could not run**"));
    // Another pull request's head: no comment.
    let out = step("8");
    assert!(out.status.success());
    assert!(!read(dir.join("gh.log")).contains("-X"));
    // Not a number: refused before any API call.
    let out = step("7; rm -rf /");
    assert!(!out.status.success());
    assert!(!dir.join("gh.log").exists());
    std::fs::remove_dir_all(&dir).unwrap();
}

/// The native aarch64 target of targets.yaml: its own job on GitHub's
/// hosted arm64 runners, natively (no container, no QEMU), paired with the
/// pull request's base, its testbed declared so its stored baselines are
/// named by it; on no other job.
#[test]
fn the_native_aarch64_target_runs_paired_on_the_hosted_arm_runners() {
    let config = committed();
    let t = config
        .targets
        .iter()
        .find(|t| t.name.as_str() == "aarch64-native")
        .expect("targets.yaml declares aarch64-native");
    assert!(t.enabled && t.runner == crate::config::RunnerKind::Native);
    assert!(t.triple.as_str().starts_with("aarch64-"));
    let files = render(&config).unwrap();
    let main = yaml(file(&files, "lockmatrix.yml"));
    let jobs = jobs_of(&main);
    let job = &jobs["target-aarch64-native"];
    assert_eq!(job["runs-on"].as_str(), Some("ubuntu-24.04-arm"));
    assert!(job.get("container").is_none() && job.get("environment").is_none());
    assert_eq!(job["if"].as_str(), Some(NOT_ANOTHER_LABEL));
    let run = job["steps"]
        .as_sequence()
        .unwrap()
        .iter()
        .find(|s| s["name"].as_str() == Some("Run the matrix on aarch64-native"))
        .unwrap();
    let script = run["run"].as_str().unwrap();
    assert!(
        script.contains("cargo xtask matrix --targets aarch64-native --against \"$BASE\" --no-gate --results results"),
        "{script}"
    );
    assert_eq!(
        run["env"]["LOCKMATRIX_TESTBED"].as_str(),
        Some(super::jobs::HOSTED_ARM_TESTBED)
    );
    // Its results reach the gate like every target's.
    let needs: Vec<&str> = jobs["gate"]["needs"]
        .as_sequence()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    assert!(needs.contains(&"target-aarch64-native"), "{needs:?}");
    // No other job declares a testbed.
    for (id, other) in jobs
        .iter()
        .filter(|(id, _)| **id != "target-aarch64-native")
    {
        assert!(!steps_text(other).contains("LOCKMATRIX_TESTBED:"), "{id:?}");
    }
}

#[test]
fn the_workflow_and_the_ssh_runner_read_one_key_variable() {
    // `rpi4.lab` maps '.' like '-': the secret CI writes is the variable the
    // runner reads.
    let text = MIXED.replace("name: mips-board", "name: rpi4.lab");
    let config = parse(Path::new("t.yaml"), &text).unwrap();
    let job = crate::ci::jobs::jobs(&config)
        .unwrap()
        .into_iter()
        .find(|j| j.target == "rpi4.lab")
        .unwrap();
    assert_eq!(
        job.ssh_secret.as_deref(),
        Some("LOCKMATRIX_SSH_KEY_RPI4_LAB")
    );
    let target = config
        .targets
        .iter()
        .find(|t| t.name == "rpi4.lab")
        .unwrap();
    std::env::set_var("LOCKMATRIX_SSH_KEY_RPI4_LAB", "/keys/rpi4");
    let key = crate::runner::ssh::key_for(target);
    std::env::remove_var("LOCKMATRIX_SSH_KEY_RPI4_LAB");
    assert_eq!(key, Some(std::path::PathBuf::from("/keys/rpi4")));
}
