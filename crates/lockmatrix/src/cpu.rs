//! A target's CPU choices (`target_features`, `target_cpu`, `qemu_cpu`)
//! checked against the tools that will honour them, before anything is
//! built. rustc only warns about a feature it does not know (in the build
//! log) and builds without it; QEMU refuses an unknown model only when the
//! first suite runs. So each choice is looked up in the lists those tools
//! print: `rustc --print target-features --target <triple>` and
//! `--print target-cpus` of the toolchain that builds the target, and
//! `qemu-<arch> -cpu help` of the emulator that runs (or counts) it. Each
//! list is asked for once per tool in a process.
//!
//! `-cpu help` has a format per architecture (QEMU 7.2, Debian 12's):
//!
//! | emulators | a CPU's line |
//! |---|---|
//! | x86_64, i386 | `x86 Haswell  Intel Core Processor (Haswell)` |
//! | s390x | `s390 z13  IBM z13 GA1  (migration-safe)` |
//! | ppc, ppc64, ppc64le | `PowerPC power10  (alias for power10_v2.0)` (any case) |
//! | mips, mips64el, ... | `MIPS '24Kc'` |
//! | sparc, sparc64 | `Sparc Sun UltraSparc IV IU ...` (QEMU takes `Sun-UltraSparc-IV`) |
//! | aarch64, arm, alpha, ... | `  cortex-a53` under `Available CPUs:` |
//! | riscv64, m68k, sh4, ... | `sifive-u54` |
//!
//! The lines are recognized by their shape, not by the emulator's name, and
//! the list ends at the first blank line after it (feature flags follow).

use crate::config::Target;
use std::collections::HashMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Mutex, OnceLock};

/// A CPU choice of targets.yaml that its tools do not know, or a list of
/// choices that could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChoiceError {
    /// A `target_features` item that is not `+feature` or `-feature`.
    MalformedFeature { target: String, item: String },
    /// A feature the toolchain does not know for the triple.
    UnknownFeature {
        target: String,
        feature: String,
        triple: String,
        toolchain: String,
        valid: Vec<String>,
    },
    /// A `target_cpu` the toolchain does not know for the triple.
    UnknownTargetCpu {
        target: String,
        cpu: String,
        triple: String,
        toolchain: String,
        valid: Vec<String>,
    },
    /// A `qemu_cpu` the emulator does not model.
    UnknownQemuCpu {
        target: String,
        cpu: String,
        emulator: PathBuf,
        valid: Vec<String>,
    },
    /// A tool's list of choices could not be read: `command` and why.
    Unlisted {
        target: String,
        field: &'static str,
        command: String,
        why: String,
    },
}

impl ChoiceError {
    /// The target whose choice it is.
    pub fn target(&self) -> &str {
        match self {
            ChoiceError::MalformedFeature { target, .. }
            | ChoiceError::UnknownFeature { target, .. }
            | ChoiceError::UnknownTargetCpu { target, .. }
            | ChoiceError::UnknownQemuCpu { target, .. }
            | ChoiceError::Unlisted { target, .. } => target,
        }
    }
}

/// At most this many choices are listed in full; a longer list shows the
/// closest ones and the command that prints them all.
const SHOWN: usize = 40;

/// `valid`, or when it is long the ten closest to `wanted` and how to see
/// the rest.
fn choices(valid: &[String], wanted: &str, command: &str) -> String {
    if valid.len() <= SHOWN {
        return valid.join(", ");
    }
    let mut near: Vec<&String> = valid.iter().collect();
    near.sort_by_key(|v| (distance(&v.to_lowercase(), &wanted.to_lowercase()), v.len()));
    let near: Vec<&str> = near.iter().take(10).map(|s| s.as_str()).collect();
    format!(
        "{} (the closest of {}; all of them: `{command}`)",
        near.join(", "),
        valid.len()
    )
}

/// Levenshtein distance, for "the closest" choices.
fn distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut prev = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let here = row[j + 1];
            row[j + 1] = (prev + usize::from(ca != *cb))
                .min(row[j] + 1)
                .min(here + 1);
            prev = here;
        }
    }
    row[b.len()]
}

fn print_command(what: &str, triple: &str) -> String {
    format!("rustc --print {what} --target {triple}")
}

impl fmt::Display for ChoiceError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ChoiceError::MalformedFeature { target, item } => write!(
                f,
                "target '{target}': `target_features` item `{item}` is not +feature or -feature"
            ),
            ChoiceError::UnknownFeature {
                target,
                feature,
                triple,
                toolchain,
                valid,
            } => write!(
                f,
                "target '{target}': `target_features` names `{feature}`, which {toolchain} does not know for {triple} (it would build without it); valid: {}",
                choices(valid, feature, &print_command("target-features", triple))
            ),
            ChoiceError::UnknownTargetCpu {
                target,
                cpu,
                triple,
                toolchain,
                valid,
            } => write!(
                f,
                "target '{target}': `target_cpu` is `{cpu}`, which {toolchain} does not know for {triple}; valid: {}",
                choices(valid, cpu, &print_command("target-cpus", triple))
            ),
            ChoiceError::UnknownQemuCpu {
                target,
                cpu,
                emulator,
                valid,
            } => write!(
                f,
                "target '{target}': `qemu_cpu` is `{cpu}`, which {} does not model; valid: {}",
                emulator.display(),
                choices(valid, cpu, &format!("{} -cpu help", emulator.display()))
            ),
            ChoiceError::Unlisted {
                target,
                field,
                command,
                why,
            } => write!(
                f,
                "target '{target}': cannot check `{field}`: `{command}` {why}"
            ),
        }
    }
}

impl std::error::Error for ChoiceError {}

/// The unknown choices of every selected target of one targets file: bad
/// input, refused before anything is built.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadChoices {
    pub path: PathBuf,
    pub errors: Vec<ChoiceError>,
}

impl fmt::Display for BadChoices {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.errors.iter().enumerate() {
            if i > 0 {
                writeln!(f)?;
            }
            write!(f, "{}: {e}", self.path.display())?;
        }
        Ok(())
    }
}

impl std::error::Error for BadChoices {}

/// The tools that will honour a target's choices: the compiler that builds
/// it (with its label for messages) and the emulator that runs or counts
/// it; `None` where there is none or it is missing (that is reported on
/// its own).
pub struct Tools<'a> {
    pub rustc: Option<(&'a Path, &'a str)>,
    pub emulator: Option<&'a Path>,
}

/// Every choice of `t` that its tools do not know, or whose list could not
/// be read. Empty when all are known or `t` chooses nothing.
pub fn check(t: &Target, tools: &Tools) -> Vec<ChoiceError> {
    let mut errors = Vec::new();
    let unlisted = |field, command: String, why: Unlisted| ChoiceError::Unlisted {
        target: t.name.to_string(),
        field,
        command,
        why: why.to_string(),
    };
    if let (Some((rustc, label)), Some(features)) = (tools.rustc, &t.target_features) {
        match rustc_list(rustc, "target-features", &t.triple) {
            Err(why) => errors.push(unlisted(
                "target_features",
                print_command("target-features", &t.triple),
                why,
            )),
            Ok(valid) => {
                for item in features.split(',') {
                    let name = item.strip_prefix(['+', '-']).unwrap_or_default();
                    if name.is_empty() {
                        errors.push(ChoiceError::MalformedFeature {
                            target: t.name.to_string(),
                            item: item.to_string(),
                        });
                    } else if !valid.iter().any(|v| v == name) {
                        errors.push(ChoiceError::UnknownFeature {
                            target: t.name.to_string(),
                            feature: name.to_string(),
                            triple: t.triple.to_string(),
                            toolchain: label.to_string(),
                            valid: valid.to_vec(),
                        });
                    }
                }
            }
        }
    }
    if let (Some((rustc, label)), Some(cpu)) = (tools.rustc, &t.target_cpu) {
        match rustc_list(rustc, "target-cpus", &t.triple) {
            Err(why) => errors.push(unlisted(
                "target_cpu",
                print_command("target-cpus", &t.triple),
                why,
            )),
            Ok(valid) if !valid.iter().any(|v| v == cpu) => {
                errors.push(ChoiceError::UnknownTargetCpu {
                    target: t.name.to_string(),
                    cpu: cpu.clone(),
                    triple: t.triple.to_string(),
                    toolchain: label.to_string(),
                    valid: valid.to_vec(),
                })
            }
            Ok(_) => {}
        }
    }
    if let (Some(emulator), Some(cpu)) = (tools.emulator, &t.qemu_cpu) {
        match qemu_list(emulator) {
            Err(why) => errors.push(unlisted(
                "qemu_cpu",
                format!("{} -cpu help", emulator.display()),
                why,
            )),
            Ok(list) if !list.models(cpu) => errors.push(ChoiceError::UnknownQemuCpu {
                target: t.name.to_string(),
                cpu: cpu.clone(),
                emulator: emulator.to_path_buf(),
                valid: list.names.clone(),
            }),
            Ok(_) => {}
        }
    }
    errors
}

/// Why a tool's list of choices could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Unlisted {
    /// It could not be started.
    NotRun(String),
    /// It failed: its exit status and first line of stderr.
    Failed { status: String, stderr: String },
    /// It printed nothing this version can read as a list.
    Empty(&'static str),
}

impl fmt::Display for Unlisted {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Unlisted::NotRun(e) => write!(f, "could not run: {e}"),
            Unlisted::Failed { status, stderr } => write!(f, "failed ({status}): {stderr}"),
            Unlisted::Empty(what) => write!(f, "printed no {what}"),
        }
    }
}

/// What one command printed, asked once per process.
fn cached<K: std::hash::Hash + Eq + Clone, V: Clone>(
    cache: &'static OnceLock<Mutex<HashMap<K, V>>>,
    key: K,
    ask: impl FnOnce() -> Result<V, Unlisted>,
) -> Result<V, Unlisted> {
    let map = cache.get_or_init(Default::default);
    if let Some(v) = map.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return Ok(v.clone());
    }
    // Failures are not kept: the tool may be installed later in the run.
    let v = ask()?;
    map.lock()
        .unwrap_or_else(|e| e.into_inner())
        .insert(key, v.clone());
    Ok(v)
}

/// The stdout of `cmd`, or why there is none. `any_status`: take what it
/// printed whatever its exit status (qemu-user's `-cpu help` exits 1).
fn output(cmd: &mut Command, any_status: bool) -> Result<String, Unlisted> {
    match cmd.output() {
        Ok(o) if o.status.success() || (any_status && !o.stdout.is_empty()) => {
            Ok(String::from_utf8_lossy(&o.stdout).into_owned())
        }
        Ok(o) => Err(Unlisted::Failed {
            status: o.status.to_string(),
            stderr: String::from_utf8_lossy(&o.stderr)
                .lines()
                .next()
                .unwrap_or("")
                .trim()
                .to_string(),
        }),
        Err(e) => Err(Unlisted::NotRun(e.to_string())),
    }
}

/// `rustc --print <what> --target <triple>` as a list of names.
fn rustc_list(
    rustc: &Path,
    what: &str,
    triple: &str,
) -> Result<std::sync::Arc<[String]>, Unlisted> {
    type Key = (PathBuf, String, String);
    static CACHE: OnceLock<Mutex<HashMap<Key, std::sync::Arc<[String]>>>> = OnceLock::new();
    let key = (rustc.to_path_buf(), what.to_string(), triple.to_string());
    cached(&CACHE, key, || {
        let text = output(
            Command::new(rustc).args(["--print", what, "--target", triple]),
            false,
        )?;
        let names = rustc_names(&text);
        if names.is_empty() {
            return Err(Unlisted::Empty("names"));
        }
        Ok(names.into())
    })
}

/// The names in rustc's `--print target-features` or `target-cpus`: the
/// first word of each indented line (`    lse   - Enable ...`).
pub fn rustc_names(text: &str) -> Vec<String> {
    let mut names: Vec<String> = text
        .lines()
        .filter(|l| l.starts_with(char::is_whitespace))
        .filter_map(|l| l.split_whitespace().next())
        .map(str::to_string)
        .collect();
    names.sort();
    names.dedup();
    names
}

/// The CPU models one emulator lists.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QemuCpus {
    /// As `-cpu` takes them.
    pub names: Vec<String>,
    /// Whether the emulator takes a name in any case (PowerPC does).
    pub any_case: bool,
}

impl QemuCpus {
    /// Whether `-cpu cpu` names one of the models.
    pub fn models(&self, cpu: &str) -> bool {
        self.names
            .iter()
            .any(|n| n == cpu || (self.any_case && n.eq_ignore_ascii_case(cpu)))
    }
}

fn qemu_list(emulator: &Path) -> Result<QemuCpus, Unlisted> {
    static CACHE: OnceLock<Mutex<HashMap<PathBuf, QemuCpus>>> = OnceLock::new();
    cached(&CACHE, emulator.to_path_buf(), || {
        let text = output(Command::new(emulator).args(["-cpu", "help"]), true)?;
        let list = qemu_cpus(&text);
        if list.names.is_empty() {
            return Err(Unlisted::Empty("CPU models this version can read"));
        }
        Ok(list)
    })
}

/// The models in `qemu-<arch> -cpu help`, whatever the architecture (see
/// the module's table).
pub fn qemu_cpus(text: &str) -> QemuCpus {
    let mut list = QemuCpus {
        names: Vec::new(),
        any_case: false,
    };
    for line in text.lines() {
        let word = |prefix: &str| {
            line.strip_prefix(prefix)
                .and_then(|rest| rest.split_whitespace().next())
                .map(str::to_string)
        };
        let name = if line.trim().is_empty() {
            if list.names.is_empty() {
                continue;
            }
            // The models come first; feature flags follow a blank line.
            break;
        } else if line.trim_end() == "Available CPUs:" {
            continue;
        } else if let Some(n) = word("x86 ").or_else(|| word("s390 ")) {
            Some(n)
        } else if let Some(n) = word("PowerPC ") {
            list.any_case = true;
            Some(n)
        } else if let Some(rest) = line.strip_prefix("MIPS '") {
            rest.split('\'').next().map(str::to_string)
        } else if let Some((model, _)) = line
            .strip_prefix("Sparc ")
            .and_then(|rest| rest.split_once(" IU "))
        {
            Some(model.split_whitespace().collect::<Vec<_>>().join("-"))
        } else {
            let trimmed = line.trim();
            (!trimmed.contains(char::is_whitespace)).then(|| trimmed.to_string())
        };
        list.names.extend(name.filter(|n| !n.is_empty()));
    }
    list.names.dedup();
    list
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_format_of_cpu_help_is_read() {
        let x86 = "Available CPUs:\nx86 486                   (alias configured by machine type)\nx86 Haswell-v1            Intel Core Processor (Haswell)\nx86 max                   Enables all features supported by the accelerator in the current host\n\nRecognized CPUID flags:\n  3dnow 3dnowext\n  xtpr\n";
        assert_eq!(qemu_cpus(x86).names, ["486", "Haswell-v1", "max"]);
        let arm = "Available CPUs:\n  a64fx\n  cortex-a53\n  max\n";
        assert_eq!(qemu_cpus(arm).names, ["a64fx", "cortex-a53", "max"]);
        let ppc = "PowerPC 970_v2.2         PVR 00390202\nPowerPC power10          (alias for power10_v2.0)\n";
        let ppc = qemu_cpus(ppc);
        assert!(ppc.any_case && ppc.models("POWER10") && !ppc.models("power11"));
        let mips = "MIPS '4Kc'\nMIPS 'mips32r6-generic'\n";
        assert_eq!(qemu_cpus(mips).names, ["4Kc", "mips32r6-generic"]);
        let riscv = "any\nrv64\nsifive-u54\n";
        assert_eq!(qemu_cpus(riscv).names, ["any", "rv64", "sifive-u54"]);
        let sparc = "Sparc  Fujitsu Sparc64 IU 0004000200000000 FPU 00000000 MMU 00000000 NWINS 4 \nSparc Sun UltraSparc IV IU 003e001831000000 FPU 00000000 MMU 00000002 NWINS 8 \nDefault CPU feature flags (use '-' to remove): float swap mul div flush fsqrt fmul vis1 vis2 fsmuld \nAvailable CPU feature flags (use '+' to add): float128 hypv cmt gl \n";
        assert_eq!(
            qemu_cpus(sparc).names,
            ["Fujitsu-Sparc64", "Sun-UltraSparc-IV"]
        );
        let s390 = "s390 qemu            QEMU Virtual CPU version 2.5+       (migration-safe)\ns390 z13             IBM z13 GA1                         (migration-safe)\n\nRecognized feature flags:\nesan3                Instructions marked as n3\n";
        let s390 = qemu_cpus(s390);
        assert!(!s390.any_case && s390.models("z13") && !s390.models("Z13"));
        assert_eq!(s390.names, ["qemu", "z13"]);
    }

    /// The emulators targets.yaml uses, and others of each format.
    const EMULATORS: &[&str] = &[
        "qemu-x86_64",
        "qemu-i386",
        "qemu-aarch64",
        "qemu-arm",
        "qemu-ppc64",
        "qemu-ppc64le",
        "qemu-mips",
        "qemu-mips64el",
        "qemu-riscv64",
        "qemu-sparc64",
        "qemu-s390x",
        "qemu-m68k",
    ];

    /// Whether `emulator -cpu cpu` finds the model: it looks the model up
    /// before it checks the program (/bin/true: x86's runs it, the others
    /// refuse it as another architecture's).
    fn accepts(emulator: &Path, cpu: &str) -> bool {
        let out = Command::new(emulator)
            .args(["-cpu", cpu, "/bin/true"])
            .output()
            .unwrap();
        !String::from_utf8_lossy(&out.stderr).contains("unable to find CPU model")
    }

    #[test]
    fn every_model_read_from_each_installed_emulator_is_one_it_takes() {
        let mut checked = 0;
        for name in EMULATORS {
            let Some(emulator) = crate::toolchain::which(name) else {
                continue;
            };
            let list = qemu_list(&emulator).unwrap();
            assert!(list.names.len() >= 5, "{name}: {list:?}");
            // All of a short list, a sample of a long one (ppc's has 400).
            let step = (list.names.len() / 25).max(1);
            for cpu in list.names.iter().step_by(step) {
                assert!(accepts(&emulator, cpu), "{name} -cpu {cpu}");
                checked += 1;
            }
            assert!(!accepts(&emulator, "nonsense"), "{name}");
            assert!(!list.models("nonsense"), "{name}");
        }
        eprintln!("{checked} models checked");
    }

    fn target(yaml_extra: &str) -> Target {
        let text = format!(
            "defaults: {{timeout_secs: 60}}\ntargets:\n  - {{name: a, class: arm64, triple: aarch64-unknown-linux-gnu, runner: qemu, emulator: qemu-aarch64, packages: [], enabled: true{yaml_extra}}}\n"
        );
        crate::config::parse(Path::new("t.yaml"), &text)
            .unwrap()
            .targets
            .remove(0)
    }

    #[test]
    fn unknown_features_cpus_and_models_are_named_with_the_valid_choices() {
        let tc = crate::toolchain::discover(
            "aarch64-unknown-linux-gnu",
            crate::toolchain::Version(1, 85, 0),
        );
        let Ok(tc) = tc else { return };
        let emulator = crate::toolchain::which("qemu-aarch64");
        let tools = Tools {
            rustc: Some((&tc.rustc, "rustup test")),
            emulator: emulator.as_deref(),
        };
        let ok = target(", target_features: '+lse,-outline-atomics', target_cpu: neoverse-n1, qemu_cpu: cortex-a53");
        assert_eq!(check(&ok, &tools), []);
        let bad = target(
            ", target_features: '+lse,+nonsense,lse', target_cpu: pentium, qemu_cpu: cortex-a99",
        );
        let errors = check(&bad, &tools);
        let shown: Vec<String> = errors.iter().map(|e| e.to_string()).collect();
        assert!(
            shown[0].starts_with("target 'a': `target_features` names `nonsense`, which rustup test does not know for aarch64-unknown-linux-gnu (it would build without it); valid: ")
                && shown[0].ends_with("all of them: `rustc --print target-features --target aarch64-unknown-linux-gnu`)"),
            "{shown:?}"
        );
        assert_eq!(
            shown[1],
            "target 'a': `target_features` item `lse` is not +feature or -feature"
        );
        assert!(
            shown[2].starts_with("target 'a': `target_cpu` is `pentium`, which rustup test does not know for aarch64-unknown-linux-gnu; valid: "),
            "{shown:?}"
        );
        if emulator.is_some() {
            assert!(
                shown[3].starts_with("target 'a': `qemu_cpu` is `cortex-a99`, which ")
                    && shown[3].contains("does not model; valid: a64fx, cortex-a35, cortex-a53,"),
                "{shown:?}"
            );
        }
        assert!(errors.iter().all(|e| e.target() == "a"));
    }

    #[test]
    fn rustc_lists_are_read_and_long_lists_show_the_closest() {
        let text = "Features supported by rustc for this target:\n    aes    - Enable AES support.\n    lse    - Enable LSE.\n\nCode-generation features supported by LLVM for this target:\n    v8.1a  - Armv8.1-A\n\nUse +feature to enable a feature, or -feature to disable it.\nFor example, rustc -C target-cpu=mycpu -C target-feature=+feature1,-feature2\n";
        assert_eq!(rustc_names(text), ["aes", "lse", "v8.1a"]);
        let many: Vec<String> = (0..100).map(|i| format!("f{i}")).collect();
        let shown = choices(&many, "f7x", "cmd");
        assert!(
            shown.starts_with("f7, ")
                && shown.ends_with("(the closest of 100; all of them: `cmd`)"),
            "{shown}"
        );
        assert_eq!(distance("kitten", "sitting"), 3);
    }
}
