//! What each target will build and run with, or exactly what is missing and
//! which Debian package provides it. `matrix` uses the same checks.

use crate::config::{Config, RunnerKind, Target};
use crate::select::Selected;
use crate::toolchain::{self, command_version, which, Toolchain};
use std::path::PathBuf;
use std::process::Command;

/// The tools one target needs, each found or with the reason it is not.
pub struct Readiness {
    pub toolchain: Result<Toolchain, String>,
    pub linker: Result<PathBuf, String>,
    /// `None` for runners without an emulator.
    pub emulator: Option<Result<PathBuf, String>>,
    /// The emulator that counts a native or ssh target's instructions
    /// (`counted_under`); `None` when it has none.
    pub counter: Option<Result<PathBuf, String>>,
}

impl Readiness {
    /// The first missing piece, if any.
    pub fn missing(&self) -> Option<String> {
        let emulator = self.emulator.as_ref().and_then(|e| e.as_ref().err());
        let counter = self.counter.as_ref().and_then(|e| e.as_ref().err());
        self.toolchain
            .as_ref()
            .err()
            .or(self.linker.as_ref().err())
            .or(emulator)
            .or(counter)
            .cloned()
    }
}

fn packages_hint(t: &Target) -> String {
    if t.packages.is_empty() {
        String::new()
    } else {
        format!(
            " (Debian packages for this target: {})",
            t.packages.join(" ")
        )
    }
}

/// What `t` needs and whether this machine has it; `need` is the suites'
/// `rust-version`.
pub fn check(t: &Target, need: toolchain::Version) -> Readiness {
    let linker_name = t.linker.clone().unwrap_or_else(|| "cc".into());
    let linker = which(&linker_name)
        .ok_or_else(|| format!("linker {linker_name} not found{}", packages_hint(t)));
    let find = |name: &str| {
        which(name).ok_or_else(|| format!("emulator {name} not found (Debian package qemu-user)"))
    };
    let emulator =
        (t.runner == RunnerKind::Qemu).then(|| find(t.emulator.as_deref().unwrap_or_default()));
    Readiness {
        toolchain: toolchain::discover(&t.triple, need),
        linker,
        emulator,
        counter: t.counted_under.as_deref().map(find),
    }
}

pub fn emulator_version(path: &PathBuf) -> String {
    command_version(Command::new(path).arg("--version"))
}

pub fn linker_version(path: &PathBuf) -> String {
    command_version(Command::new(path).arg("--version"))
}

/// Prints the report; returns whether every selected target is ready.
/// `need` is the suites' `rust-version`.
pub fn run(config: &Config, selected: &[Selected], need: toolchain::Version) -> bool {
    println!(
        "lockmatrix doctor: {} ({} targets); suites need Rust {need} or newer (rust-version)",
        config.path.display(),
        selected.len()
    );
    println!("cross: {}", toolchain::cross_status());
    let mut ready = true;
    for s in selected {
        let t = &s.target;
        let r = check(t, need);
        let state = match (&s.skip, r.missing()) {
            (Some(why), _) => format!("not run: {why}"),
            (None, Some(_)) => "NOT READY".to_string(),
            (None, None) => "ready".to_string(),
        };
        ready &= s.skip.is_some() || r.missing().is_none();
        println!(
            "\n{} ({}, {}, runner {}): {state}",
            t.name,
            t.triple,
            t.class,
            t.runner.name()
        );
        match &r.toolchain {
            Ok(tc) => println!(
                "  toolchain  {} [{}]{}",
                tc.label,
                tc.version(),
                if tc.build_std {
                    ", builds std from source (-Zbuild-std)"
                } else {
                    ", prebuilt std"
                }
            ),
            Err(e) => println!("  toolchain  MISSING: {e}"),
        }
        match &r.linker {
            Ok(p) => println!("  linker     {} [{}]", p.display(), linker_version(p)),
            Err(e) => println!("  linker     MISSING: {e}"),
        }
        match &r.counter {
            Some(Ok(p)) => println!(
                "  counted    {} [{}], with the insns plugin",
                p.display(),
                emulator_version(p)
            ),
            Some(Err(e)) => println!("  counted    MISSING: {e}"),
            None => {}
        }
        match &r.emulator {
            Some(Ok(p)) => println!("  emulator   {} [{}]", p.display(), emulator_version(p)),
            Some(Err(e)) => println!("  emulator   MISSING: {e}"),
            None if t.runner == RunnerKind::Ssh => {
                let ssh = t
                    .ssh
                    .as_ref()
                    .map_or("?".into(), |h| format!("{}@{}:{}", h.user, h.host, h.port));
                println!("  runner     ssh {ssh}")
            }
            None => println!("  runner     native (this host)"),
        }
    }
    if !ready {
        let mut pkgs: Vec<String> = selected
            .iter()
            .filter(|s| s.skip.is_none())
            .flat_map(|s| s.target.packages.clone())
            .collect();
        pkgs.extend(toolchain::DEBIAN_RUST.iter().map(|s| s.to_string()));
        let missing = crate::packages::missing(&pkgs);
        println!("\nmissing Debian packages: {}", missing.join(" "));
        println!(
            "install with: apt-get install -y --no-install-recommends {}",
            missing.join(" ")
        );
        println!("(`cargo xtask matrix` and `cargo xtask test` install them themselves when run as root or with passwordless sudo)");
    }
    ready
}
