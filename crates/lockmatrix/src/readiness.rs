//! What each target will build and run with, or exactly what is missing and
//! which Debian package provides it: `doctor` shows it, `matrix` uses it.

use crate::config::{RunnerKind, Target};
use crate::cpu::{self, ChoiceError};
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
    /// The CPU choices (`target_features`, `target_cpu`, `qemu_cpu`) that
    /// the toolchain or emulator above does not know: bad input, not a
    /// missing tool, so never in [`Readiness::missing`]. Those of a missing
    /// tool are not checked.
    pub choices: Vec<ChoiceError>,
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
    let counter = t.counted_under.as_deref().map(find);
    let toolchain = toolchain::discover(&t.triple, need);
    let label = toolchain
        .as_ref()
        .map(|tc| format!("{} [{}]", tc.label, tc.version()));
    // The emulator that models `qemu_cpu`: the runner's, or the counter's.
    let modeller = emulator
        .as_ref()
        .or(counter.as_ref())
        .and_then(|e| e.as_ref().ok());
    let tools = cpu::Tools {
        rustc: toolchain
            .as_ref()
            .ok()
            .zip(label.as_ref().ok())
            .map(|(tc, label)| (tc.rustc.as_path(), label.as_str())),
        emulator: modeller.map(PathBuf::as_path),
    };
    let choices = cpu::check(t, &tools);
    Readiness {
        toolchain,
        linker,
        emulator,
        counter,
        choices,
    }
}

pub fn emulator_version(path: &PathBuf) -> String {
    command_version(Command::new(path).arg("--version"))
}

pub fn linker_version(path: &PathBuf) -> String {
    command_version(Command::new(path).arg("--version"))
}
