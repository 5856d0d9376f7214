//! A hostile or careless targets.yaml, one case per test, kept: numbers
//! past their range, a nesting bomb, ten thousand targets, a byte-order
//! mark, CPU choices the tools do not know, and workflows that use an
//! action by tag. Each asserts the exit status, the first line of output,
//! and that `results/`, `baselines/` and the cache (`$LOCKMATRIX_CACHE`) of
//! its scratch directory hold the same bytes as before: nothing was built,
//! nothing was written, and nothing appeared beside them.

use crate::common::*;
use crate::lab::*;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// One target, `extra` appended to its entry.
fn one_target(triple: &str, runner: &str, extra: &str) -> String {
    format!(
        "defaults:\n  timeout_secs: 60\ntargets:\n  - name: box\n    class: lab\n    triple: {triple}\n    runner: {runner}\n    linker: cc\n    packages: []\n    enabled: true\n{extra}"
    )
}

/// `matrix` of `config`'s targets, as a user would run it here.
fn matrix(config: &Path) -> Vec<String> {
    [
        "matrix",
        "--no-install",
        "--no-insns",
        "--suites",
        "atomic",
        "--config",
        s(config),
        "--results",
        "{results}",
        "--baselines",
        "{baselines}",
    ]
    .map(String::from)
    .to_vec()
}

fn args(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

#[test]
fn an_ssh_timeout_of_u64_max_is_refused_at_load_not_a_panic_after_the_build() {
    let _cpus = shared_cpus();
    let lab = Lab::new("timeout-max");
    let config = lab.file(
        "t.yaml",
        &one_target(
            "aarch64-unknown-linux-gnu",
            "ssh",
            "    ssh: {host: 192.0.2.1, port: 22, user: pi}\n    timeout_secs: 18446744073709551615\n",
        ),
    );
    lab.case(
        &args(&matrix(&config)),
        2,
        &format!(
            "error: {}:12:19: targets[0].timeout_secs: invalid value: integer `18446744073709551615`, expected seconds (the range of --timeout) from 1 to 86400",
            config.display()
        ),
    );
}

#[test]
fn a_default_timeout_of_zero_is_refused_with_its_field() {
    let _cpus = shared_cpus();
    let lab = Lab::new("timeout-zero");
    let text = one_target("x86_64-unknown-linux-gnu", "native", "")
        .replace("timeout_secs: 60", "timeout_secs: 0");
    let config = lab.file("t.yaml", &text);
    lab.case(
        &args(&matrix(&config)),
        2,
        &format!(
            "error: {}:2:17: defaults.timeout_secs: invalid value: integer `0`, expected seconds",
            config.display()
        ),
    );
}

#[test]
fn a_timeout_longer_than_a_day_is_refused_like_the_flag() {
    let _cpus = shared_cpus();
    let lab = Lab::new("timeout-day");
    let config = lab.file(
        "t.yaml",
        &one_target(
            "x86_64-unknown-linux-gnu",
            "native",
            "    timeout_secs: 86401\n",
        ),
    );
    lab.case(
        &args(&matrix(&config)),
        2,
        &format!(
            "error: {}:11:19: targets[0].timeout_secs: invalid value: integer `86401`, expected seconds (the range of --timeout) from 1 to 86400",
            config.display()
        ),
    );
    // The flag says the same range.
    let mut flag = matrix(&repo_root().join("targets.yaml"));
    flag.extend(["--targets", "x86_64", "--timeout", "86401"].map(String::from));
    lab.case(
        &args(&flag),
        2,
        "error: invalid value '86401' for '--timeout <TIMEOUT>': 86401 is not in 1..=86400",
    );
}

#[test]
fn an_ssh_port_of_zero_or_past_65535_is_refused_with_its_field() {
    let _cpus = shared_cpus();
    let lab = Lab::new("port");
    for port in ["0", "65536"] {
        let config = lab.file(
            &format!("port-{port}.yaml"),
            &one_target(
                "aarch64-unknown-linux-gnu",
                "ssh",
                &format!("    ssh: {{host: 192.0.2.1, port: {port}, user: pi}}\n"),
            ),
        );
        lab.case(
            &["doctor", "--config", s(&config)],
            2,
            &format!(
                "error: {}:11:34: targets[0].ssh.port: invalid value: integer `{port}`, expected a TCP port from 1 to 65535",
                config.display()
            ),
        );
    }
}

#[test]
fn an_insns_tolerance_that_is_nan_infinite_or_100_percent_is_refused() {
    let _cpus = shared_cpus();
    let lab = Lab::new("tolerance");
    for (i, value) in [".nan", ".inf", "1.0", "-0.01"].iter().enumerate() {
        let config = lab.file(
            &format!("tolerance-{i}.yaml"),
            &one_target(
                "x86_64-unknown-linux-gnu",
                "native",
                &format!("    insns_tolerance: {value}\n"),
            ),
        );
        lab.case(
            &args(&matrix(&config)),
            2,
            &format!(
                "error: {}:11:22: targets[0].insns_tolerance: invalid value: floating point `",
                config.display()
            ),
        );
    }
}

#[test]
fn a_nesting_bomb_of_100k_brackets_is_refused_within_two_seconds() {
    let _cpus = shared_cpus();
    let lab = Lab::new("bomb");
    // 200 KB; before the bound, 20k of them took 4.7 s and 100k did not
    // finish in two minutes.
    let bomb = one_target("x86_64-unknown-linux-gnu", "native", "").replace(
        "packages: []",
        &format!("packages: {}", "[".repeat(100_000)),
    );
    let config = lab.file("bomb.yaml", &bomb);
    let (_, took) = lab.case(
        &args(&matrix(&config)),
        2,
        &format!(
            "error: {}:9:28: nested deeper than 16 levels, the limit for a targets file",
            config.display()
        ),
    );
    assert!(took < Duration::from_secs(2), "{took:?}");
}

#[test]
fn a_targets_file_of_dev_zero_costs_the_size_limit_not_all_memory() {
    let _cpus = shared_cpus();
    let lab = Lab::new("dev-zero");
    lab.case(
        &["doctor", "--config", "/dev/zero"],
        2,
        "error: /dev/zero: larger than 16 MiB, the limit for a targets file",
    );
}

/// A targets file of `n` QEMU targets (a tenth of them with a variant).
fn many_targets(n: usize) -> String {
    let mut text = String::from("defaults:\n  timeout_secs: 300\ntargets:\n");
    for i in 0..n {
        text.push_str(&format!(
            "  - name: t{i:05}\n    class: c{}\n    triple: aarch64-unknown-linux-gnu\n    runner: qemu\n    emulator: qemu-aarch64\n    linker: aarch64-linux-gnu-gcc\n    packages: [qemu-user, gcc-aarch64-linux-gnu, libc6-dev-arm64-cross]\n    enabled: true\n",
            i % 100
        ));
        if i % 10 == 0 {
            text.push_str("    variants:\n      - name: llsc\n        qemu_cpu: cortex-a53\n");
        }
    }
    text
}

#[test]
fn ten_thousand_targets_are_checked_in_linear_time() {
    let _cpus = shared_cpus();
    let lab = Lab::new("many");
    // Loading checks every target; --targets then finds none and lists
    // the valid names (each once). The timing is a guard against
    // quadratic work (8k targets took 98 s in doctor, 32k 34 s to
    // load), not a benchmark: the report gives the measured times.
    let mut took = Vec::new();
    for n in [1_000, 10_000] {
        let config = lab.file(&format!("many-{n}.yaml"), &many_targets(n));
        let mut cmd = matrix(&config);
        cmd.extend(["--targets", "nosuch"].map(String::from));
        let (out, t) = lab.case(
            &args(&cmd),
            2,
            "error: unknown target 'nosuch' in --targets. Valid names: all, t00000, aarch64-unknown-linux-gnu, t00000-llsc, t00001, t00002,",
        );
        assert!(text(&out).contains(&format!("t{:05}", n - 1)));
        took.push(t);
    }
    eprintln!("1,000 targets: {:.2?}; 10,000: {:.2?}", took[0], took[1]);
    assert!(took[1] < Duration::from_secs(10), "{took:?}");
}

#[test]
fn a_byte_order_mark_is_skipped_not_missing_field_targets() {
    let _cpus = shared_cpus();
    let lab = Lab::new("bom");
    let committed = std::fs::read_to_string(repo_root().join("targets.yaml")).unwrap();
    let config = lab.file("bom.yaml", &format!("\u{feff}{committed}"));
    // The same file, so the same workflows as the committed ones.
    lab.case(
        &["ci", "check", "--config", s(&config)],
        0,
        "workflows match targets.yaml and pin every action by commit",
    );
}

/// Asserts that the case made no run: no run directory (so no build log)
/// beside the earlier one.
fn no_run_made(lab: &Lab) {
    let runs: Vec<PathBuf> = std::fs::read_dir(&lab.results)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    assert_eq!(runs, [lab.results.join("20250101T000000Z")]);
}

#[test]
fn an_unknown_target_feature_is_refused_before_any_build() {
    let _cpus = shared_cpus();
    let lab = Lab::new("feature");
    let config = lab.file(
        "t.yaml",
        &one_target(
            "x86_64-unknown-linux-gnu",
            "native",
            "    target_features: +sse2,+nonsense\n",
        ),
    );
    lab.case(
        &args(&matrix(&config)),
        2,
        &format!(
            "error: {}: target 'box': `target_features` names `nonsense`, which rustup ",
            config.display()
        ),
    );
    no_run_made(&lab);
}

#[test]
fn an_unknown_target_cpu_is_refused_before_any_build() {
    let _cpus = shared_cpus();
    let lab = Lab::new("target-cpu");
    let config = lab.file(
        "t.yaml",
        &one_target(
            "x86_64-unknown-linux-gnu",
            "native",
            "    target_cpu: pentium9\n",
        ),
    );
    let (out, _) = lab.case(
        &args(&matrix(&config)),
        2,
        &format!(
            "error: {}: target 'box': `target_cpu` is `pentium9`, which rustup ",
            config.display()
        ),
    );
    // A long list: the closest names, and how to see them all.
    let all = text(&out);
    assert!(
        all.contains("pentium4")
            && all.contains("`rustc --print target-cpus --target x86_64-unknown-linux-gnu`"),
        "{all}"
    );
    no_run_made(&lab);
}

#[test]
fn an_unknown_qemu_cpu_is_refused_before_any_build_naming_the_models() {
    let _cpus = shared_cpus();
    let lab = Lab::new("qemu-cpu");
    let text = one_target(
        "aarch64-unknown-linux-gnu",
        "qemu",
        "    emulator: qemu-aarch64\n    qemu_cpu: cortex-a99\n",
    )
    .replace("linker: cc", "linker: aarch64-linux-gnu-gcc");
    let config = lab.file("t.yaml", &text);
    lab.case(
        &args(&matrix(&config)),
        2,
        &format!(
            "error: {}: target 'box': `qemu_cpu` is `cortex-a99`, which /usr/bin/qemu-aarch64 does not model; valid: a64fx, cortex-a35, cortex-a53, cortex-a57, cortex-a72, cortex-a76, max, neoverse-n1",
            config.display()
        ),
    );
    no_run_made(&lab);
    // doctor says it too, per target and as its error.
    let (out, _) = lab.case(
        &["doctor", "--config", s(&config)],
        2,
        &format!(
            "error: {}: target 'box': `qemu_cpu` is `cortex-a99`",
            config.display()
        ),
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.contains("box (aarch64-unknown-linux-gnu, lab, runner qemu): NOT READY")
            && stdout.contains("  cpu        UNKNOWN: target 'box': `qemu_cpu` is `cortex-a99`"),
        "{stdout}"
    );
}

#[test]
fn a_workflow_that_uses_an_action_by_tag_fails_ci_check() {
    let _cpus = shared_cpus();
    let lab = Lab::new("tag");
    // A scratch checkout: targets.yaml, a manifest, suites/ and the
    // committed workflows, one step moved back to a tag.
    let repo = lab.dir.join("repo");
    let workflows = repo.join(".github/workflows");
    std::fs::create_dir_all(&workflows).unwrap();
    std::fs::create_dir_all(repo.join("suites")).unwrap();
    for f in ["targets.yaml", "Cargo.toml"] {
        std::fs::copy(repo_root().join(f), repo.join(f)).unwrap();
    }
    for e in std::fs::read_dir(repo_root().join(".github/workflows")).unwrap() {
        let p = e.unwrap().path();
        std::fs::copy(&p, workflows.join(p.file_name().unwrap())).unwrap();
    }
    let file = workflows.join("lockmatrix-comment.yml");
    let workflow = std::fs::read_to_string(&file).unwrap();
    let (at, _) = workflow
        .match_indices("uses: actions/download-artifact@")
        .next()
        .unwrap();
    let end = at + workflow[at..].find('\n').unwrap();
    let line = workflow[..at].matches('\n').count() + 1;
    std::fs::write(
        &file,
        format!(
            "{}uses: actions/download-artifact@v4{}",
            &workflow[..at],
            &workflow[end..]
        ),
    )
    .unwrap();
    let before = snapshot(&lab.dir);
    let out = xtask_in(&repo, &["ci", "check"]);
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_eq!(snapshot(&lab.dir), before, "files changed");
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        stdout.lines().any(|l| l
            == format!("{WORKFLOWS}/lockmatrix-comment.yml:{line}: `uses: actions/download-artifact@v4` is not pinned: expected owner/repo@<40-hex commit> # v<version> (ci/actions.rs)")),
        "{stdout}"
    );
    assert!(
        stdout.starts_with(&format!(
            "{WORKFLOWS}/lockmatrix-comment.yml: differs from targets.yaml's rendering at line {line}"
        )),
        "{stdout}"
    );
}

const WORKFLOWS: &str = ".github/workflows";
