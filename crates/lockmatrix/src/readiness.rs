//! What each target will build and run with, or exactly what is missing and
//! which Debian package provides it: `doctor` shows it, `matrix` uses it.

use crate::config::{RunnerKind, Target};
use crate::cpu::{self, ChoiceError};
use crate::toolchain::{self, command_version, which, Toolchain};
use std::path::PathBuf;
use std::process::Command;

/// A tool a target needs that this machine lacks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Missing {
    Toolchain(toolchain::NoToolchain),
    /// The linker, and the Debian packages the target lists.
    Linker {
        name: String,
        packages: Vec<String>,
    },
    /// An emulator (Debian's qemu-user has them all).
    Emulator {
        name: String,
    },
}

impl std::fmt::Display for Missing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Missing::Toolchain(e) => e.fmt(f),
            Missing::Linker { name, packages } if packages.is_empty() => {
                write!(f, "linker {name} not found")
            }
            Missing::Linker { name, packages } => write!(
                f,
                "linker {name} not found (Debian packages for this target: {})",
                packages.join(" ")
            ),
            Missing::Emulator { name } => {
                write!(f, "emulator {name} not found (Debian package qemu-user)")
            }
        }
    }
}

/// The tools one target needs, each found or with the reason it is not.
pub struct Readiness {
    /// `Ok(None)` for a target without a Rust backend (`rust: false`):
    /// its C suites need only the linker, its cross gcc.
    pub toolchain: Result<Option<Toolchain>, Missing>,
    pub linker: Result<PathBuf, Missing>,
    /// `None` for runners without an emulator.
    pub emulator: Option<Result<PathBuf, Missing>>,
    /// The emulator that counts a native or ssh target's instructions
    /// (`counted_under`); `None` when it has none.
    pub counter: Option<Result<PathBuf, Missing>>,
    /// The CPU choices (`target_features`, `target_cpu`, `qemu_cpu`) that
    /// the toolchain or emulator above does not know: bad input, not a
    /// missing tool, so never in [`Readiness::missing`]. Those of a missing
    /// tool are not checked.
    pub choices: Vec<ChoiceError>,
}

impl Readiness {
    /// The first missing piece, if any.
    pub fn missing(&self) -> Option<Missing> {
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

/// What `t` needs and whether this machine has it; `need` is the suites'
/// `rust-version`, `only` the toolchains that may build them.
pub fn check(t: &Target, need: toolchain::Version, only: &toolchain::Only) -> Readiness {
    let linker_name = t.linker.clone().unwrap_or_else(|| "cc".into());
    let linker = which(&linker_name).ok_or_else(|| Missing::Linker {
        name: linker_name.clone(),
        packages: t.packages.clone(),
    });
    let find = |name: &str| {
        which(name).ok_or_else(|| Missing::Emulator {
            name: name.to_string(),
        })
    };
    let emulator =
        (t.runner == RunnerKind::Qemu).then(|| find(t.emulator.as_deref().unwrap_or_default()));
    let counter = t.counted_under.as_deref().map(find);
    let toolchain = match t.rust {
        true => toolchain::discover_only(&t.triple, need, only)
            .map(Some)
            .map_err(Missing::Toolchain),
        false => Ok(None),
    };
    let label = toolchain.as_ref().map(|tc| {
        tc.as_ref()
            .map(|tc| format!("{} [{}]", tc.label, tc.version()))
    });
    // The emulator that models `qemu_cpu`: the runner's, or the counter's.
    let modeller = emulator
        .as_ref()
        .or(counter.as_ref())
        .and_then(|e| e.as_ref().ok());
    let tools = cpu::Tools {
        rustc: toolchain
            .as_ref()
            .ok()
            .and_then(Option::as_ref)
            .zip(label.as_ref().ok().and_then(|l| l.as_ref()))
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
