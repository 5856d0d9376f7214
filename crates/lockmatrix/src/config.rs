//! `targets.yaml`: the matrix of targets, parsed into typed structs that
//! reject unknown keys. Every error names the file, line and column. Every
//! number has a range, checked as it is read ([`numbers`]).

use crate::name::Name;
use serde::Deserialize;
use std::path::{Path, PathBuf};

mod bounds;
mod error;
mod numbers;

pub use error::{BadValue, ConfigError};

pub use bounds::{InputError, MAX_BYTES, MAX_DEPTH};
pub use numbers::{Range, INSNS_TOLERANCE, MAX_TIMEOUT_SECS, PORT, TIMEOUT_SECS};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum RunnerKind {
    Native,
    Qemu,
    Ssh,
}

impl std::fmt::Display for RunnerKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl RunnerKind {
    pub fn name(self) -> &'static str {
        match self {
            RunnerKind::Native => "native",
            RunnerKind::Qemu => "qemu",
            RunnerKind::Ssh => "ssh",
        }
    }
}

#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct SshHost {
    pub host: String,
    #[serde(default = "default_ssh_port", deserialize_with = "numbers::port")]
    pub port: u16,
    pub user: String,
}

fn default_ssh_port() -> u16 {
    22
}

#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Target {
    pub name: Name,
    pub class: Name,
    pub triple: Name,
    pub runner: RunnerKind,
    #[serde(default)]
    pub emulator: Option<String>,
    /// A native or ssh target's emulator for counting instructions: its
    /// suites also run once under `qemu-<arch>` with the plugin, on this
    /// host, so its `insns_per_op` gate exactly as QEMU targets' do.
    #[serde(default)]
    pub counted_under: Option<String>,
    #[serde(default)]
    pub linker: Option<String>,
    pub packages: Vec<String>,
    pub enabled: bool,
    #[serde(default)]
    pub labels: Vec<Name>,
    #[serde(default, deserialize_with = "numbers::timeout_secs_some")]
    pub timeout_secs: Option<u64>,
    /// How far `insns_per_op` may move (0.01 = 1%) before the gate fails.
    #[serde(default, deserialize_with = "numbers::insns_tolerance")]
    pub insns_tolerance: f64,
    #[serde(default)]
    pub ssh: Option<SshHost>,
    /// The CPU the emulator models (`qemu-<arch> -cpu`), when not its default.
    #[serde(default)]
    pub qemu_cpu: Option<String>,
    /// `-C target-cpu` for the suites and their crates.io dependencies
    /// (not std: see [`Target::std_codegen_flags`]).
    #[serde(default)]
    pub target_cpu: Option<String>,
    /// `-C target-feature`, e.g. `+lse`, as `target_cpu` (not for std).
    #[serde(default)]
    pub target_features: Option<String>,
    /// CPU-feature variants: each also runs as a target of its own, named
    /// `<name>-<variant>`, with its CPU and features (see [`Variant`]).
    #[serde(default)]
    pub variants: Vec<Variant>,
    /// The variant a target was expanded from (not in targets.yaml).
    #[serde(skip_deserializing, default)]
    pub variant: Option<Name>,
    /// `false`: rustc has no backend for this target (alpha), so only the
    /// C suites are built, by `linker`, and every report says why the
    /// others are not (`select::for_target`).
    #[serde(default = "yes")]
    pub rust: bool,
    /// A qemu target whose C suites link dynamically against this sysroot
    /// (given to the emulator as `-L`), where its static binaries do not
    /// run under Debian's QEMU (alpha's crash in glibc's start-up).
    #[serde(default)]
    pub qemu_ld_prefix: Option<String>,
}

fn yes() -> bool {
    true
}

/// A CPU or feature choice a target also runs with, as its own column:
/// arm64 with and without LSE atomics, POWER8 against POWER10, ...
#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    pub name: Name,
    #[serde(default)]
    pub qemu_cpu: Option<String>,
    #[serde(default)]
    pub target_cpu: Option<String>,
    #[serde(default)]
    pub target_features: Option<String>,
}

impl Target {
    /// Whether targets.yaml chose this target's CPU or features (it is a
    /// variant, or sets them itself), so results should record the choice.
    pub fn chooses_cpu(&self) -> bool {
        self.variant.is_some()
            || self.qemu_cpu.is_some()
            || self.target_cpu.is_some()
            || self.target_features.is_some()
    }

    /// The `-C` flags a build-std toolchain builds this target's std
    /// with: `+crt-static` alone (the `libc` crate's cfg depends on it),
    /// never a CPU or features, so one std serves every variant of the
    /// triple (`build::sysroot_dir`).
    pub fn std_codegen_flags(&self) -> Vec<String> {
        vec!["-C target-feature=+crt-static".to_string()]
    }

    /// The `-C` flags that set this target's CPU and features beside
    /// `+crt-static`, e.g. `-C target-cpu=pwr10`: the suites' and their
    /// dependencies' (std's are [`Target::std_codegen_flags`]).
    pub fn codegen_flags(&self) -> Vec<String> {
        let mut flags = Vec::new();
        if let Some(cpu) = &self.target_cpu {
            flags.push(format!("-C target-cpu={cpu}"));
        }
        let features: Vec<&str> = std::iter::once("+crt-static")
            .chain(self.target_features.as_deref())
            .collect();
        flags.push(format!("-C target-feature={}", features.join(",")));
        flags
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Defaults {
    #[serde(deserialize_with = "numbers::timeout_secs")]
    pub timeout_secs: u64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct File {
    defaults: Defaults,
    targets: Vec<Target>,
}

#[derive(Debug, Clone)]
pub struct Config {
    pub path: PathBuf,
    pub defaults: Defaults,
    pub targets: Vec<Target>,
}

impl Config {
    pub fn timeout_secs(&self, t: &Target) -> u64 {
        t.timeout_secs.unwrap_or(self.defaults.timeout_secs)
    }
}

/// Reads and parses a targets file, within the bounds of [`bounds`]
/// (its size, encoding and nesting).
pub fn load(path: &Path) -> Result<Config, ConfigError> {
    let text = bounds::read(path)?;
    parse(path, &text)
}

/// Parses the text of a targets file; `path` is only used in messages. A
/// leading byte-order mark is skipped; size and nesting are checked
/// ([`bounds`]) before serde_norway reads it.
pub fn parse(path: &Path, text: &str) -> Result<Config, ConfigError> {
    let text = bounds::strip_bom(text);
    bounds::check(path, text)?;
    let file: File = serde_norway::from_str(text).map_err(|e| {
        let msg = e.to_string();
        let place = e.location().map(|l| (l.line(), l.column()));
        let why = match place {
            Some((line, column)) => {
                let suffix = format!(" at line {line} column {column}");
                msg.strip_suffix(&suffix).unwrap_or(&msg).to_string()
            }
            None => msg,
        };
        ConfigError::Syntax {
            path: path.to_path_buf(),
            place,
            why: crate::escape::without_values(&why),
        }
    })?;
    let mut config = Config {
        path: path.to_path_buf(),
        defaults: file.defaults,
        targets: file.targets,
    };
    validate(&config, text)?;
    config.targets =
        expand(std::mem::take(&mut config.targets)).map_err(|(i, why)| ConfigError::Target {
            path: path.to_path_buf(),
            line: line_of(text, i),
            target: config.targets[i].name.clone(),
            why,
        })?;
    Ok(config)
}

/// Each target, then each of its variants as a target of its own named
/// `<target>-<variant>`, with the variant's CPU and features.
/// An error is the index of the target whose variant's name is no name.
fn expand(targets: Vec<Target>) -> Result<Vec<Target>, (usize, String)> {
    let mut out = Vec::new();
    for (i, mut base) in targets.into_iter().enumerate() {
        let variants = std::mem::take(&mut base.variants);
        let expanded = variants
            .into_iter()
            .map(|v| {
                let name = Name::parse(&format!("{}-{}", base.name, v.name))
                    .map_err(|e| (i, format!("variant `{}`: {e}", v.name)))?;
                Ok(Target {
                    name,
                    variant: Some(v.name),
                    qemu_cpu: v.qemu_cpu.or_else(|| base.qemu_cpu.clone()),
                    target_cpu: v.target_cpu.or_else(|| base.target_cpu.clone()),
                    target_features: v.target_features.or_else(|| base.target_features.clone()),
                    ..base.clone()
                })
            })
            .collect::<Result<Vec<Target>, _>>()?;
        out.push(base);
        out.extend(expanded);
    }
    Ok(out)
}

/// The 1-based line where target `index` starts, for errors serde cannot
/// place because they concern values, not syntax. Entries are found as
/// list items (`- key: ...`) under `targets:`.
fn line_of(text: &str, index: usize) -> usize {
    let start = text
        .lines()
        .position(|l| l.starts_with("targets:"))
        .unwrap_or(0);
    // Items at the first item's indentation: a target's own lists
    // (`variants:`) are deeper.
    let items = || {
        text.lines()
            .enumerate()
            .skip(start)
            .filter(|(_, l)| l.trim_start().starts_with("- "))
    };
    let indent = |l: &str| l.len() - l.trim_start().len();
    let Some(depth) = items().next().map(|(_, l)| indent(l)) else {
        return 1;
    };
    items()
        .filter(|(_, l)| indent(l) == depth)
        .nth(index)
        .map_or(1, |(i, _)| i + 1)
}

fn validate(config: &Config, text: &str) -> Result<(), ConfigError> {
    let err = |i: usize, why: String| ConfigError::Target {
        path: config.path.clone(),
        line: line_of(text, i),
        target: config.targets[i].name.clone(),
        why,
    };
    if config.targets.is_empty() {
        return Err(ConfigError::File {
            path: config.path.clone(),
            why: "`targets` is empty; expected at least one target".into(),
        });
    }
    // Every name and class once, so each target's checks take constant
    // time: a file of thousands of targets is checked in linear time.
    let mut taken = Taken {
        names: config.targets.iter().map(|t| t.name.as_str()).collect(),
        class_of: Default::default(),
        // Variants' target names, which must differ across targets too.
        expanded: Default::default(),
    };
    for t in &config.targets {
        taken
            .class_of
            .entry(t.class.as_str())
            .or_insert(t.name.as_str());
    }
    let mut seen = std::collections::HashSet::new();
    for (i, t) in config.targets.iter().enumerate() {
        if !seen.insert(t.name.as_str()) {
            return Err(err(
                i,
                format!("duplicates target '{}' (names must be unique)", t.name),
            ));
        }
        if let Some(c) = taken.class_of.get(t.name.as_str()) {
            return Err(err(
                i,
                format!("name is also the class of '{c}'; --targets could not tell them apart"),
            ));
        }
        for (key, value, rule) in fields(t) {
            if let Err(why) = rule.check(value) {
                return Err(err(i, format!("`{key}` {why}")));
            }
        }
        check_runner(t, i, &err)?;
        check_variants(t, i, &err, &mut taken)?;
    }
    Ok(())
}

/// Target `t` (the `i`th) sets the fields its runner needs and none it
/// cannot use.
fn check_runner(
    t: &Target,
    i: usize,
    err: &dyn Fn(usize, String) -> ConfigError,
) -> Result<(), ConfigError> {
    match t.runner {
        RunnerKind::Qemu if t.emulator.is_none() => {
            return Err(err(
                i,
                "runner qemu needs `emulator` (e.g. qemu-aarch64)".into(),
            ))
        }
        RunnerKind::Ssh if t.ssh.is_none() => {
            return Err(err(i, "runner ssh needs `ssh: {host, port, user}`".into()))
        }
        RunnerKind::Native | RunnerKind::Ssh if t.emulator.is_some() => {
            return Err(err(
                i,
                format!(
                    "`emulator` is only for runner qemu, not {}",
                    t.runner.name()
                ),
            ))
        }
        _ => {}
    }
    if t.counted_under.is_some() && t.runner == RunnerKind::Qemu {
        return Err(err(
            i,
            "`counted_under` is for native and ssh targets; a qemu target counts under its `emulator`".into(),
        ));
    }
    if t.qemu_ld_prefix.is_some() && t.runner != RunnerKind::Qemu {
        return Err(err(
            i,
            format!(
                "`qemu_ld_prefix` is only for runner qemu, not {}",
                t.runner.name()
            ),
        ));
    }
    if !t.rust && t.linker.is_none() {
        return Err(err(
            i,
            "`rust: false` needs `linker`: the cross gcc that builds its C suites".into(),
        ));
    }
    if t.ssh.is_some() && t.runner != RunnerKind::Ssh {
        return Err(err(
            i,
            format!("`ssh` is only for runner ssh, not {}", t.runner.name()),
        ));
    }
    let emulated = t.runner == RunnerKind::Qemu || t.counted_under.is_some();
    let qemu_cpu = t.qemu_cpu.is_some() || t.variants.iter().any(|v| v.qemu_cpu.is_some());
    if qemu_cpu && !emulated {
        return Err(err(
            i,
            "`qemu_cpu` is for runner qemu or a target `counted_under` an emulator".into(),
        ));
    }
    Ok(())
}

/// Target `t`'s variants (`i`th target) become names no other target,
/// class or variant has.
fn check_variants<'a>(
    t: &'a Target,
    i: usize,
    err: &dyn Fn(usize, String) -> ConfigError,
    taken: &mut Taken<'a>,
) -> Result<(), ConfigError> {
    let (names, class_of, expanded) = (&taken.names, &taken.class_of, &mut taken.expanded);
    for v in &t.variants {
        let name = format!("{}-{}", t.name, v.name);
        if names.contains(name.as_str()) || class_of.contains_key(name.as_str()) {
            return Err(err(
                i,
                format!(
                    "variant '{}' would be target '{name}', which is already a name or class",
                    v.name
                ),
            ));
        }
        match expanded.get(&name) {
            Some(&other) if other == t.name => {
                return Err(err(
                    i,
                    format!(
                        "variant '{}' would be target '{name}', which is already a name or class",
                        v.name
                    ),
                ))
            }
            Some(&other) => {
                return Err(err(
                    i,
                    format!(
                        "variant '{}' would be target '{name}', which a variant of '{other}' already is",
                        v.name
                    ),
                ))
            }
            None => {
                expanded.insert(name, t.name.as_str());
            }
        }
    }
    Ok(())
}

/// The names already given in a targets file: targets', classes' (with
/// the first target of each) and variants' (with their target).
struct Taken<'a> {
    names: std::collections::HashSet<&'a str>,
    class_of: std::collections::HashMap<&'a str, &'a str>,
    expanded: std::collections::HashMap<String, &'a str>,
}

/// What a value of targets.yaml may look like. Values become command-line
/// words (ssh's user and host, the emulator), job ids and table cells, so
/// each is held to a short, plain form: nothing can turn into an option or
/// flood a report.
#[derive(Clone, Copy, PartialEq)]
enum Rule {
    /// A CPU name: a [`Name`].
    Name,
    /// A target triple: lower-case words joined by `-`.
    Triple,
    /// A program, on PATH or as a path.
    Program,
    /// A Debian package name.
    Package,
    /// An ssh host name or IP address.
    Host,
    /// Target features: `+lse,-outline-atomics`.
    Features,
    /// A user name on an ssh host.
    User,
}

/// The form of a [`Rule`]: its longest length, what may come first and
/// what after, and the words that say so in an error.
struct Form {
    max: usize,
    first: fn(char) -> bool,
    rest: fn(char) -> bool,
    expected: &'static str,
}

impl Rule {
    fn check(self, v: &str) -> Result<(), BadValue> {
        let Form {
            max,
            first,
            rest,
            expected,
        } = match self {
            Rule::Name => return Name::parse(v).map(|_| ()).map_err(BadValue::Name),
            Rule::Triple => Form {
                max: 64,
                first: |c| c.is_ascii_lowercase() || c.is_ascii_digit(),
                rest: |c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-".contains(c),
                expected: "a Rust target triple such as aarch64-unknown-linux-gnu",
            },
            Rule::Program => Form {
                max: 256,
                first: |c| c.is_ascii_alphanumeric() || "/._".contains(c),
                rest: |c| c.is_ascii_graphic(),
                expected: "a program name or path without spaces",
            },
            Rule::Package => Form {
                max: 100,
                first: |c| c.is_ascii_lowercase() || c.is_ascii_digit(),
                rest: |c| c.is_ascii_lowercase() || c.is_ascii_digit() || "+.-".contains(c),
                expected: "a Debian package name such as gcc-aarch64-linux-gnu",
            },
            Rule::Host => Form {
                max: 253,
                first: |c| c.is_ascii_alphanumeric() || c == ':',
                rest: |c| c.is_ascii_alphanumeric() || ".-:".contains(c),
                expected: "a host name or IP address (letters, digits, '.', '-', ':')",
            },
            Rule::Features => Form {
                max: 200,
                first: |c| c == '+' || c == '-',
                rest: |c| c.is_ascii_alphanumeric() || "+-,._".contains(c),
                expected: "target features such as +lse or +lse,-outline-atomics",
            },
            Rule::User => Form {
                max: 32,
                first: |c| c.is_ascii_alphanumeric() || c == '_',
                rest: |c| c.is_ascii_alphanumeric() || "._-".contains(c),
                expected: "a user name of letters, digits, '.', '_' and '-', not starting with '-'",
            },
        };
        let count = v.chars().count();
        if count == 0 {
            return Err(BadValue::Empty { expected });
        }
        if count > max {
            return Err(BadValue::TooLong {
                count,
                max,
                expected,
            });
        }
        let mut chars = v.chars();
        let ok = chars.next().is_some_and(first) && chars.all(rest);
        if ok && !(self == Rule::Triple && v.split('-').count() < 2) {
            return Ok(());
        }
        Err(BadValue::Form {
            shown: crate::escape::echo(v),
            expected,
        })
    }
}

/// Every string value of a target with the rule it must follow.
fn fields(t: &Target) -> Vec<(&'static str, &str, Rule)> {
    // Names, classes, labels and variant names are `Name`s, checked as
    // they are read.
    let mut out = vec![("triple", t.triple.as_str(), Rule::Triple)];
    out.extend(
        t.emulator
            .as_deref()
            .map(|e| ("emulator", e, Rule::Program)),
    );
    out.extend(
        t.counted_under
            .as_deref()
            .map(|e| ("counted_under", e, Rule::Program)),
    );
    out.extend(t.linker.as_deref().map(|l| ("linker", l, Rule::Program)));
    out.extend(
        t.qemu_ld_prefix
            .as_deref()
            .map(|p| ("qemu_ld_prefix", p, Rule::Program)),
    );
    out.extend(
        t.packages
            .iter()
            .map(|p| ("packages", p.as_str(), Rule::Package)),
    );
    if let Some(h) = &t.ssh {
        out.push(("ssh.host", h.host.as_str(), Rule::Host));
        out.push(("ssh.user", h.user.as_str(), Rule::User));
    }
    for (key, v) in [("qemu_cpu", &t.qemu_cpu), ("target_cpu", &t.target_cpu)] {
        out.extend(v.as_deref().map(|v| (key, v, Rule::Name)));
    }
    out.extend(
        t.target_features
            .as_deref()
            .map(|v| ("target_features", v, Rule::Features)),
    );
    for v in &t.variants {
        for (key, val) in [
            ("variants.qemu_cpu", &v.qemu_cpu),
            ("variants.target_cpu", &v.target_cpu),
        ] {
            out.extend(val.as_deref().map(|x| (key, x, Rule::Name)));
        }
        out.extend(
            v.target_features
                .as_deref()
                .map(|x| ("variants.target_features", x, Rule::Features)),
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_that_is_not_a_targets_file_is_named_not_echoed() {
        let passwd =
            "root:x:0:0:root:/root:/bin/bash\ndaemon:x:1:1:daemon:/usr/sbin:/usr/sbin/nologin\n";
        let e = parse(Path::new("/etc/passwd"), passwd)
            .unwrap_err()
            .to_string();
        assert!(!e.contains("root:x"), "{e}");
        assert!(
            e.starts_with("/etc/passwd:1:1: invalid type: string of 79 characters, expected"),
            "{e}"
        );
        // What was found is named by its length, whatever its length: a
        // 40-character token is no more shown than a longer line.
        let token = format!("ghp_{}", "a1".repeat(18));
        for text in [
            format!("https://alice:{token}@github.com\n"),
            format!("{token}\n"),
            format!("{token}: 1\n"),
        ] {
            let e = parse(Path::new("creds"), &text).unwrap_err().to_string();
            assert!(!e.contains("ghp_"), "{e}");
            assert!(e.starts_with("creds:1:1: "), "{e}");
        }
        // A typo of a field is still named, as it says what is wrong.
        let e = parse(
            Path::new("t.yaml"),
            &GOOD.replace("runner: qemu", "runer: qemu"),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("unknown field `runer`, expected one of"), "{e}");
    }

    const GOOD: &str = "\
defaults:
  timeout_secs: 60
targets:
  - name: aarch64
    class: arm64
    triple: aarch64-unknown-linux-gnu
    runner: qemu
    emulator: qemu-aarch64
    linker: aarch64-linux-gnu-gcc
    packages: [qemu-user]
    enabled: true
  - name: x86_64
    class: x86
    triple: x86_64-unknown-linux-gnu
    runner: native
    packages: []
    enabled: false
    timeout_secs: 5
";

    fn parse_err(text: &str) -> String {
        parse(Path::new("targets.yaml"), text)
            .unwrap_err()
            .to_string()
    }

    #[test]
    fn parses_the_committed_targets_file() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let c = load(&root.join("targets.yaml")).unwrap();
        // 12 targets (aarch64-native among them), and the CPU variants of
        // aarch64, powerpc64le and s390x.
        let bases = c.targets.iter().filter(|t| t.variant.is_none()).count();
        assert_eq!((bases, c.targets.len()), (12, 18));
        // alpha alone has no Rust backend.
        let no_rust: Vec<&str> = c
            .targets
            .iter()
            .filter(|t| !t.rust)
            .map(|t| t.name.as_str())
            .collect();
        assert_eq!(no_rust, ["alpha64"]);
        assert!(c.targets.iter().all(|t| t.enabled));
        let mips = c.targets.iter().find(|t| t.name == "mips32").unwrap();
        assert_eq!(mips.triple, "mips-unknown-linux-gnu");
        assert_eq!(mips.emulator.as_deref(), Some("qemu-mips"));
    }

    #[test]
    fn reads_fields_and_defaults() {
        let c = parse(Path::new("t.yaml"), GOOD).unwrap();
        assert_eq!(c.targets[0].runner, RunnerKind::Qemu);
        assert_eq!(c.timeout_secs(&c.targets[0]), 60);
        assert_eq!(c.timeout_secs(&c.targets[1]), 5);
        assert!(!c.targets[1].enabled);
    }

    #[test]
    fn syntax_error_names_file_line_and_column() {
        let bad = GOOD.replace("    runner: native", "    runner: [native");
        let e = parse_err(&bad);
        assert!(e.starts_with("targets.yaml:"), "{e}");
        let line: usize = e.split(':').nth(1).unwrap().parse().unwrap();
        assert!((14..=17).contains(&line), "{e}");
    }

    #[test]
    fn unknown_key_is_rejected_with_its_line() {
        let bad = GOOD.replace("    enabled: true", "    enabled: true\n    colour: blue");
        let e = parse_err(&bad);
        assert!(e.starts_with("targets.yaml:12:5:"), "{e}");
        assert!(
            e.contains("unknown field `colour`") && e.contains("expected one of"),
            "{e}"
        );
    }

    #[test]
    fn missing_field_is_named() {
        let bad = GOOD.replace("    triple: aarch64-unknown-linux-gnu\n", "");
        let e = parse_err(&bad);
        assert!(e.starts_with("targets.yaml:4:"), "{e}");
        assert!(e.contains("missing field `triple`"), "{e}");
    }

    #[test]
    fn wrong_type_says_what_was_expected() {
        let bad = GOOD.replace("    enabled: true", "    enabled: maybe");
        let e = parse_err(&bad);
        assert!(e.starts_with("targets.yaml:11:14:"), "{e}");
        assert!(e.contains("expected a boolean"), "{e}");
        let bad = GOOD.replace("runner: qemu", "runner: vm");
        let e = parse_err(&bad);
        assert!(
            e.starts_with("targets.yaml:7:13:") && e.contains("unknown variant `vm`"),
            "{e}"
        );
    }

    #[test]
    fn numbers_out_of_range_name_file_line_column_field_and_range() {
        let timeout =
            |v: &str| parse_err(&GOOD.replace("timeout_secs: 5", &format!("timeout_secs: {v}")));
        let e = timeout("18446744073709551615");
        assert_eq!(e, "targets.yaml:18:19: targets[1].timeout_secs: invalid value: integer `18446744073709551615`, expected seconds (the range of --timeout) from 1 to 86400");
        for v in ["0", "86401", "-1", "1.5", "18446744073709551616", "\"300\""] {
            let e = timeout(v);
            assert!(
                e.starts_with("targets.yaml:18:19: targets[1].timeout_secs: ")
                    && e.ends_with("expected seconds (the range of --timeout) from 1 to 86400"),
                "{v}: {e}"
            );
        }
        let c = parse(
            Path::new("t.yaml"),
            &GOOD.replace("timeout_secs: 5", "timeout_secs: 86400"),
        )
        .unwrap();
        assert_eq!(c.timeout_secs(&c.targets[1]), MAX_TIMEOUT_SECS);
        // `null` is no timeout of its own: the default.
        let c = parse(
            Path::new("t.yaml"),
            &GOOD.replace("timeout_secs: 5", "timeout_secs: ~"),
        )
        .unwrap();
        assert_eq!(c.timeout_secs(&c.targets[1]), 60);
        let e = parse_err(&GOOD.replace("timeout_secs: 60", "timeout_secs: 0"));
        assert!(
            e.starts_with("targets.yaml:2:17: defaults.timeout_secs: invalid value: integer `0`"),
            "{e}"
        );

        let tolerance =
            |v: &str| parse_err(&GOOD.replace("timeout_secs: 5", &format!("insns_tolerance: {v}")));
        for v in [".nan", ".inf", "-.inf", "1", "1.0", "-0.01", "1e400"] {
            let e = tolerance(v);
            assert!(
                e.starts_with("targets.yaml:18:22: targets[1].insns_tolerance: ")
                    && e.ends_with(
                        "expected a fraction (0.01 = 1%) from 0 up to but not including 1"
                    ),
                "{v}: {e}"
            );
        }
        let c = parse(
            Path::new("t.yaml"),
            &GOOD.replace("timeout_secs: 5", "insns_tolerance: 0.02"),
        )
        .unwrap();
        assert_eq!(c.targets[1].insns_tolerance, 0.02);

        let ssh = |port: &str| {
            GOOD.replace("runner: native", "runner: ssh").replace(
                "timeout_secs: 5",
                &format!("ssh: {{host: h, user: u{port}}}"),
            )
        };
        assert_eq!(
            parse(Path::new("t.yaml"), &ssh("")).unwrap().targets[1]
                .ssh
                .as_ref()
                .unwrap()
                .port,
            22
        );
        for v in ["0", "65536", "-22", "99999999999999999999"] {
            let e = parse_err(&ssh(&format!(", port: {v}")));
            assert!(
                e.starts_with("targets.yaml:18:")
                    && e.contains("targets[1].ssh.port: ")
                    && e.ends_with("expected a TCP port from 1 to 65535"),
                "{v}: {e}"
            );
        }
    }

    #[test]
    fn a_byte_order_mark_is_skipped_and_nesting_is_bounded_before_parsing() {
        let c = parse(Path::new("t.yaml"), &format!("\u{feff}{GOOD}")).unwrap();
        assert_eq!(c.targets.len(), 2);
        let bomb = GOOD.replace(
            "packages: []",
            &format!("packages: {}", "[".repeat(100_000)),
        );
        assert_eq!(
            parse_err(&bomb),
            "targets.yaml:16:28: nested deeper than 16 levels, the limit for a targets file (its own structure is 5 deep)"
        );
    }

    #[test]
    fn value_errors_name_the_target_line() {
        let bad = GOOD.replace("    emulator: qemu-aarch64\n", "");
        let e = parse_err(&bad);
        assert_eq!(
            e,
            "targets.yaml:4: target 'aarch64': runner qemu needs `emulator` (e.g. qemu-aarch64)"
        );
        let bad = GOOD.replace("name: x86_64", "name: aarch64");
        let e = parse_err(&bad);
        assert!(
            e.starts_with("targets.yaml:12: target 'aarch64': duplicates"),
            "{e}"
        );
    }

    #[test]
    fn a_target_without_rust_needs_a_linker_and_only_qemu_takes_a_sysroot() {
        let c = parse(
            Path::new("t.yaml"),
            &GOOD.replace("    packages: [qemu-user]\n", "    packages: [qemu-user]\n    rust: false\n    qemu_ld_prefix: /usr/aarch64-linux-gnu\n"),
        )
        .unwrap();
        assert!(!c.targets[0].rust && c.targets[1].rust);
        assert_eq!(
            c.targets[0].qemu_ld_prefix.as_deref(),
            Some("/usr/aarch64-linux-gnu")
        );
        let no_linker = GOOD
            .replace("    linker: aarch64-linux-gnu-gcc\n", "")
            .replace(
                "    packages: [qemu-user]\n",
                "    packages: [qemu-user]\n    rust: false\n",
            );
        assert_eq!(
            parse_err(&no_linker),
            "targets.yaml:4: target 'aarch64': `rust: false` needs `linker`: the cross gcc that builds its C suites"
        );
        let native = GOOD.replace(
            "    timeout_secs: 5",
            "    timeout_secs: 5\n    qemu_ld_prefix: /usr",
        );
        assert_eq!(
            parse_err(&native),
            "targets.yaml:12: target 'x86_64': `qemu_ld_prefix` is only for runner qemu, not native"
        );
    }

    const VARIANTS: &str = "    variants:
      - name: llsc
        qemu_cpu: cortex-a53
      - name: lse
        qemu_cpu: neoverse-n1
        target_features: +lse
";

    #[test]
    fn variants_become_targets_of_their_own_after_theirs() {
        let text = GOOD.replace(
            "    enabled: true\n",
            &format!("    enabled: true\n{VARIANTS}"),
        );
        let c = parse(Path::new("t.yaml"), &text).unwrap();
        let names: Vec<&str> = c.targets.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["aarch64", "aarch64-llsc", "aarch64-lse", "x86_64"]);
        let (base, llsc, lse) = (&c.targets[0], &c.targets[1], &c.targets[2]);
        assert!(!base.chooses_cpu() && base.variants.is_empty());
        assert_eq!(llsc.variant.as_deref(), Some("llsc"));
        assert_eq!(
            (llsc.triple.as_str(), llsc.class.as_str()),
            (base.triple.as_str(), "arm64")
        );
        // Only a qemu CPU: the target's own binaries; a feature: its own.
        assert_eq!(llsc.codegen_flags(), base.codegen_flags());
        assert_eq!(base.codegen_flags(), ["-C target-feature=+crt-static"]);
        assert_eq!(lse.codegen_flags(), ["-C target-feature=+crt-static,+lse"]);
        assert_eq!(lse.std_codegen_flags(), base.codegen_flags());
        assert_eq!(lse.qemu_cpu.as_deref(), Some("neoverse-n1"));
        // The x86_64 entry's line is still found past the nested list.
        let bad = text.replace("    packages: []", "    packages: [Gcc]");
        assert!(
            parse_err(&bad).starts_with("targets.yaml:18: target 'x86_64'"),
            "{}",
            parse_err(&bad)
        );
    }

    #[test]
    fn bad_variants_are_named_with_their_target_line() {
        let with =
            |v: &str| GOOD.replace("    enabled: true\n", &format!("    enabled: true\n{v}"));
        let e = parse_err(&with(&VARIANTS.replace("name: lse", "name: llsc")));
        assert_eq!(e, "targets.yaml:4: target 'aarch64': variant 'llsc' would be target 'aarch64-llsc', which is already a name or class");
        let e = parse_err(&with(&VARIANTS.replace("+lse", "lse; rm -rf /")));
        assert!(
            e.starts_with("targets.yaml:4: target 'aarch64': `variants.target_features`"),
            "{e}"
        );
        let e = parse_err(&with(
            &VARIANTS.replace("qemu_cpu: cortex-a53", "cpu: cortex-a53"),
        ));
        assert!(e.contains("unknown field `cpu`"), "{e}");
        // Two targets' variants that would be one target.
        let text = with("    variants:\n      - name: b-c\n")
            .replace("name: aarch64", "name: a")
            .replace("name: x86_64", "name: a-b")
            .replace("runner: native", "runner: qemu\n    emulator: qemu-x86_64")
            .replace(
                "enabled: false",
                "enabled: false\n    variants:\n      - name: c",
            );
        assert_eq!(parse_err(&text), "targets.yaml:14: target 'a-b': variant 'c' would be target 'a-b-c', which a variant of 'a' already is");
        // A native target has no emulator to model a CPU.
        let native = GOOD.replace(
            "    timeout_secs: 5",
            "    timeout_secs: 5\n    qemu_cpu: max",
        );
        assert_eq!(parse_err(&native), "targets.yaml:12: target 'x86_64': `qemu_cpu` is for runner qemu or a target `counted_under` an emulator");
    }
}
