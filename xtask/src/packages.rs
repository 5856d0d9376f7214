//! Installing the Debian packages a run needs: apt-get as root or with
//! passwordless sudo, else the exact command to run and exit status 2.

use anyhow::bail;
use anyhow::{Context, Result};
use std::process::Command;

/// Packages from `wanted` that dpkg does not report as installed, each
/// once, in the order first wanted. dpkg is asked once per package, not
/// once per target that wants it.
pub fn missing(wanted: &[String]) -> Vec<String> {
    let mut seen = std::collections::HashSet::new();
    wanted
        .iter()
        .filter(|p| seen.insert(p.as_str()))
        .filter(|p| {
            !Command::new("dpkg-query")
                .args(["-W", "-f=${Status}", p])
                .output()
                .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).contains("install ok installed"))
        })
        .cloned()
        .collect()
}

/// Whether [`ensure`] can install packages here: a Debian-like system,
/// as root or with passwordless sudo.
pub fn can_install() -> bool {
    let has = |p: &str| Command::new(p).arg("--version").output().is_ok();
    has("dpkg-query")
        && has("apt-get")
        && (is_root()
            || Command::new("sudo")
                .args(["-n", "true"])
                .output()
                .is_ok_and(|o| o.status.success()))
}

fn is_root() -> bool {
    std::fs::read_to_string("/proc/self/status").is_ok_and(|s| {
        s.lines()
            .find(|l| l.starts_with("Uid:"))
            .and_then(|l| l.split_whitespace().nth(1))
            == Some("0")
    })
}

fn apt_get(sudo: bool, args: &[&str], packages: &[String]) -> Result<bool> {
    let mut cmd = if sudo {
        let mut c = Command::new("sudo");
        c.args(["-n", "apt-get"]);
        c
    } else {
        Command::new("apt-get")
    };
    cmd.args(args)
        .args(packages)
        .env("DEBIAN_FRONTEND", "noninteractive");
    // apt's chatter goes to stderr so stdout stays the report.
    let out = cmd.output().context("running apt-get")?;
    if !out.status.success() {
        errln!("{}", String::from_utf8_lossy(&out.stderr));
    }
    Ok(out.status.success())
}

/// Makes sure every package in `wanted` is installed.
pub fn ensure(wanted: &[String]) -> Result<()> {
    let missing = missing(wanted);
    if missing.is_empty() {
        return Ok(());
    }
    let line = format!(
        "apt-get install -y --no-install-recommends {}",
        missing.join(" ")
    );
    if Command::new("dpkg-query")
        .arg("--version")
        .output()
        .is_err()
    {
        bail!("missing packages {} and this is not a Debian-like system (no dpkg-query); install their equivalents", missing.join(" "));
    }
    let sudo = if is_root() {
        false
    } else if Command::new("sudo")
        .args(["-n", "true"])
        .output()
        .is_ok_and(|o| o.status.success())
    {
        true
    } else {
        bail!(
            "missing Debian packages: {}\nrun as root:\n  sudo apt-get update && sudo {line}",
            missing.join(" ")
        );
    };
    errln!("installing missing Debian packages: {}", missing.join(" "));
    let install = ["install", "-y", "--no-install-recommends"];
    // An install fails on a machine whose package lists were never fetched:
    // fetch them once and try again.
    let installed = apt_get(sudo, &install, &missing)?
        || (apt_get(sudo, &["update"], &[])? && apt_get(sudo, &install, &missing)?);
    if !installed {
        bail!(
            "could not install {}: see apt-get's output above; the command was:\n  {line}",
            missing.join(" ")
        );
    }
    Ok(())
}
