//! `cargo xtask test`: the README's test command and what CI runs. It
//! installs what the integration tests need (cross compilers, qemu-user,
//! the build-std toolchain, OpenSSH), then runs the format check, clippy and every
//! test of the workspace.

use crate::{config, packages, toolchain};
use anyhow::Result;
use std::path::Path;
use xshell::{cmd, Shell};

pub fn run(root: &Path) -> Result<bool> {
    let config = config::load(&root.join("targets.yaml"))?;
    let mut wanted: Vec<String> = config
        .targets
        .iter()
        .flat_map(|t| t.packages.clone())
        .collect();
    wanted.extend(toolchain::DEBIAN_RUST.iter().map(|s| s.to_string()));
    // The ssh runner's test starts a real sshd on 127.0.0.1.
    wanted.extend(["openssh-server", "openssh-client"].map(String::from));
    packages::ensure(&wanted)?;

    let sh = Shell::new()?;
    sh.change_dir(root);
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    cmd!(sh, "{cargo} fmt --all -- --check").run()?;
    cmd!(
        sh,
        "{cargo} clippy --workspace --all-targets --locked -- -D warnings"
    )
    .run()?;
    cmd!(
        sh,
        "{cargo} clippy -p spinlock --all-targets --locked --features broken-lock -- -D warnings"
    )
    .run()?;
    cmd!(sh, "{cargo} test --workspace --locked").run()?;
    cmd!(
        sh,
        "{cargo} test -p spinlock --locked --features broken-lock"
    )
    .run()?;
    Ok(true)
}
