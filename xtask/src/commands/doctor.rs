//! `cargo xtask doctor`: per target, the toolchain, linker and emulator
//! that will be used, or exactly what is missing and which package gives
//! it.

use super::resolve;
use crate::flags::Selection;
use anyhow::{bail, Result};
use lockmatrix::config::{Config, RunnerKind, Target};
use lockmatrix::cpu::{BadChoices, ChoiceError};
use lockmatrix::readiness::{self, Readiness};
use lockmatrix::select::{self, Selected};
use lockmatrix::{config, toolchain};
use std::path::Path;

pub fn run(root: &Path, selection: Selection) -> Result<bool> {
    let config = config::load(&resolve(root, &selection.config))?;
    let targets = select::targets(&config, selection.targets.as_deref())?;
    let need = toolchain::rust_version(&root.join("Cargo.toml"));
    let mut bad = Vec::new();
    let ready = report(&config, &targets, need, &mut bad);
    outln!();
    let (lines, container_serves) = super::container::doctor_lines(root, &config, &targets, need);
    for line in lines {
        outln!("{line}");
    }
    if ready {
        Ok(true)
    } else if container_serves && bad.is_empty() {
        outln!("\nthis host lacks the tools above; `cargo xtask matrix` runs in the container, which has them");
        Ok(true)
    } else if !bad.is_empty() {
        // A CPU choice its tools do not know is bad input: say which.
        Err(BadChoices {
            path: config.path.clone(),
            errors: bad,
        }
        .into())
    } else {
        bail!("some targets are not ready: see above")
    }
}

/// Prints the report; returns whether every selected target is ready, and
/// adds to `bad` the CPU choices their tools do not know. `need` is the
/// suites' `rust-version`.
fn report(
    config: &Config,
    selected: &[Selected],
    need: toolchain::Version,
    bad: &mut Vec<ChoiceError>,
) -> bool {
    outln!(
        "lockmatrix doctor: {} ({} targets); suites need Rust {need} or newer (rust-version)",
        config.path.display(),
        selected.len()
    );
    let mut ready = true;
    for s in selected {
        ready &= report_target(s, need, bad);
    }
    if !ready {
        missing_packages(selected);
    }
    ready
}

/// Prints one target's state and tools; returns whether it is ready (or
/// not run), and adds to `bad` the CPU choices its tools do not know
/// unless it is not run.
fn report_target(s: &Selected, need: toolchain::Version, bad: &mut Vec<ChoiceError>) -> bool {
    let t = &s.target;
    let r = readiness::check(t, need, &Default::default());
    let fine = r.missing().is_none() && r.choices.is_empty();
    let state = match (&s.skip, fine) {
        (Some(why), _) => format!("not run: {why}"),
        (None, false) => "NOT READY".to_string(),
        (None, true) => "ready".to_string(),
    };
    outln!(
        "\n{} ({}, {}, runner {}): {state}",
        t.name,
        t.triple,
        t.class,
        t.runner.name()
    );
    tools(t, &r);
    if t.chooses_cpu() {
        let qemu = t.qemu_cpu.as_deref().unwrap_or("the emulator's default");
        outln!(
            "  cpu        {qemu}; built with {}",
            t.codegen_flags().join(" ")
        );
    }
    for e in &r.choices {
        outln!("  cpu        UNKNOWN: {e}");
    }
    if s.skip.is_none() {
        bad.extend(r.choices);
    }
    s.skip.is_some() || fine
}

/// Prints the tools a target will use, or why each is missing: its
/// toolchain, linker, counting emulator, and emulator or runner.
fn tools(t: &Target, r: &Readiness) {
    match &r.toolchain {
        Ok(None) => outln!("  toolchain  none: no Rust backend, only the C suites build"),
        Ok(Some(tc)) => outln!(
            "  toolchain  {} [{}]{}",
            tc.label,
            tc.version(),
            if tc.build_std {
                ", builds std from source (-Zbuild-std, once per triple)"
            } else {
                ", prebuilt std"
            }
        ),
        Err(e) => outln!("  toolchain  MISSING: {e}"),
    }
    match &r.linker {
        Ok(p) => outln!(
            "  linker     {} [{}]",
            p.display(),
            readiness::linker_version(p)
        ),
        Err(e) => outln!("  linker     MISSING: {e}"),
    }
    match &r.counter {
        Some(Ok(p)) => outln!(
            "  counted    {} [{}], with the insns plugin",
            p.display(),
            readiness::emulator_version(p)
        ),
        Some(Err(e)) => outln!("  counted    MISSING: {e}"),
        None => {}
    }
    match &r.emulator {
        Some(Ok(p)) => outln!(
            "  emulator   {} [{}]",
            p.display(),
            readiness::emulator_version(p)
        ),
        Some(Err(e)) => outln!("  emulator   MISSING: {e}"),
        None if t.runner == RunnerKind::Ssh => {
            let ssh = t
                .ssh
                .as_ref()
                .map_or("?".into(), |h| format!("{}@{}:{}", h.user, h.host, h.port));
            outln!("  runner     ssh {ssh}")
        }
        None => outln!("  runner     native (this host)"),
    }
}

/// Prints the Debian packages the run targets still need and how to
/// install them, when any is missing (else what is wrong is said above).
fn missing_packages(selected: &[Selected]) {
    let mut pkgs: Vec<String> = selected
        .iter()
        .filter(|s| s.skip.is_none())
        .flat_map(|s| s.target.packages.clone())
        .collect();
    pkgs.extend(toolchain::DEBIAN_RUST.iter().map(|s| s.to_string()));
    let missing = crate::packages::missing(&pkgs);
    if missing.is_empty() {
        return;
    }
    outln!("\nmissing Debian packages: {}", missing.join(" "));
    outln!(
        "install with: apt-get install -y --no-install-recommends {}",
        missing.join(" ")
    );
    outln!("(`cargo xtask matrix` and `cargo xtask test` install them themselves when run as root or with passwordless sudo)");
}
