//! What a matrix run leaves in `results/<run-id>/`: `run.json` (this
//! module's types, documented in docs/protocol.md), each suite's raw stdout and
//! stderr, and the build logs.

use crate::config::RunnerKind;
use crate::host::Host;
use crate::name::Name;
use crate::protocol::{Check, Env, Executed, Parsed, Probes, Sample};
use crate::runner::{Exit, Outcome};
use serde::{Deserialize, Serialize};
use std::path::{Path, PathBuf};

/// The `run.json` format this xtask writes. Version 2 added each suite
/// run's `stdout_sha256` (a damaged `<target>/<suite>.jsonl` is noticed),
/// each target's `binaries` and `sources_sha256` (what ran, hashed), its
/// `counter` and each suite's `counted_command` (instruction counts of
/// native and ssh targets), and the run's `against`. Version 3 added each
/// failed status's typed `failure` beside its `reason`; version 4 the
/// run's `lock_crates` and each target's `cpu`; version 5 the `pending`
/// state, which a target has until its suites have all run. Older runs are
/// still read, without those (an unfinished older run's `ok` targets read
/// as pending: it recorded them ok before they ran). Version 6 added each
/// suite run's `static_footprint` (the ordering footprint of each lock
/// operation's whole code) and the run's `models` (the loom model check).
/// Version 7 added the run's `subject`: the lock crate it measured
/// (`--crate`), exactly as built. Version 8 added `against.pairs`: the
/// most pairs a timing cell was planned to get (the gate's last
/// look; a suite stops earlier once its family is decided). Version 9
/// added the run's `miri`: the Miri check of the locks loom cannot see.
/// Version 10 added a target's `stored_rounds`: the rounds its timing
/// family was planned against stored baselines (the gate's last look).
/// Version 11 added the run's `contention`: the contention model's
/// records (the locks written here on a simulated 64-CPU machine).
pub const FORMAT_VERSION: u32 = 11;
const OLDEST_FORMAT: u32 = 1;

mod error;
mod status;

pub use error::{ResultsError, RunError};
pub use status::{judge, Failure, Status, SuiteFailure};

/// How big a run is: `quick` is CI-sized, `full` is seed-sized.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Profile {
    Quick,
    Full,
}

impl Profile {
    pub fn name(self) -> &'static str {
        match self {
            Profile::Quick => "quick",
            Profile::Full => "full",
        }
    }
}

impl std::fmt::Display for Profile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A profile that is neither `quick` nor `full`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownProfile(pub String);

impl std::fmt::Display for UnknownProfile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "profile `{}`: expected quick or full", self.0)
    }
}

impl std::error::Error for UnknownProfile {}

impl std::str::FromStr for Profile {
    type Err = UnknownProfile;

    fn from_str(s: &str) -> Result<Profile, UnknownProfile> {
        match s {
            "quick" => Ok(Profile::Quick),
            "full" => Ok(Profile::Full),
            _ => Err(UnknownProfile(s.to_string())),
        }
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Run {
    pub format: u32,
    pub run_id: String,
    pub started: String,
    pub finished: Option<String>,
    /// The xtask command line that produced the run.
    pub command: Vec<String>,
    pub profile: Profile,
    pub host: Host,
    /// The QEMU plugin that counted `insns_per_op`, if one was loaded.
    #[serde(default)]
    pub insns_plugin: Option<ToolInfo>,
    /// With `--against`: the base revision, run beside this one, whose run
    /// is `base/run.json` in this run's directory.
    #[serde(default)]
    pub against: Option<Against>,
    /// The crates the suites' locks come from (their env's `lock_crates`,
    /// "lockmatrix" aside), with the version Cargo.lock pinned.
    #[serde(default)]
    pub lock_crates: std::collections::BTreeMap<String, String>,
    /// The loom model check (format 6; `None`: not checked in this run).
    #[serde(default)]
    pub models: Option<ModelRun>,
    /// The Miri check of the locks loom cannot see (format 9; `None`: not
    /// checked in this run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub miri: Option<MiriRun>,
    /// The contention model of the locks written here (format 11; `None`:
    /// not run).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub contention: Option<crate::contention::ContentionRun>,
    /// With `--crate`: the lock crate whose locks the suites measured
    /// (format 7); `base/run.json` holds the `--against-crate` one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subject: Option<crate::subject::Subject>,
    pub targets: Vec<TargetResult>,
}

/// The base revision of an `--against` run.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct Against {
    /// As given on the command line (`HEAD~1`, `origin/main`, a sha).
    pub rev: String,
    /// The commit it named (`"unknown"`: a `--crate` run outside git).
    #[serde(with = "crate::commit::or_unknown")]
    pub commit: Option<crate::commit::CommitId>,
    /// The `Lockmatrix-Ordering:` trailers between it and the head
    /// (format 6): the ordering changes they acknowledge pass the gate.
    #[serde(default)]
    pub acknowledged: Vec<crate::acknowledge::Acknowledgement>,
    /// The most pairs (rounds per side) a timing cell was planned
    /// to get: the gate's last look (before version 8: the most recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pairs: Option<u32>,
}

impl Run {
    /// A run is complete once it recorded when it finished; until then it
    /// is running, or was interrupted.
    pub fn complete(&self) -> bool {
        self.finished.is_some()
    }
}

/// A target's CPU choice, as the run records it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Cpu {
    /// The variant of targets.yaml it came from, if any.
    pub variant: Option<String>,
    /// `qemu-<arch> -cpu`, when not the emulator's default.
    pub qemu_cpu: Option<String>,
    /// The codegen flags the suites were built with.
    pub codegen: String,
}

impl Cpu {
    /// `-cpu cortex-a53; -C target-feature=+crt-static`: what decides the
    /// code that runs, for comparing testbeds.
    pub fn describe(&self) -> String {
        let qemu = self.qemu_cpu.as_ref().map(|c| format!("-cpu {c}; "));
        format!("{}{}", qemu.unwrap_or_default(), self.codegen)
    }
}

pub use crate::toolchain::ToolInfo;

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct TargetResult {
    pub name: Name,
    pub triple: Name,
    pub class: Name,
    pub runner: RunnerKind,
    pub status: Status,
    pub toolchain: Option<ToolInfo>,
    pub build_std: bool,
    pub linker: Option<ToolInfo>,
    pub emulator: Option<ToolInfo>,
    /// The emulator that counted instructions of a native or ssh target's
    /// suites (`counted_under` in targets.yaml), with the plugin.
    #[serde(default)]
    pub counter: Option<ToolInfo>,
    /// The CPU and features chosen for this target (a variant's, or the
    /// target's own `qemu_cpu`/`target_cpu`/`target_features`).
    #[serde(default)]
    pub cpu: Option<Cpu>,
    pub build_secs: Option<f64>,
    pub run_secs: Option<f64>,
    /// How far `insns_per_op` may move before the gate fails (targets.yaml).
    #[serde(default)]
    pub insns_tolerance: f64,
    /// The most rounds its timing cells was planned against comparable
    /// stored baselines (format 10): the gate's last look. `None`: no
    /// stored baseline compared when it ran (or `--rounds` fixed them).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stored_rounds: Option<u32>,
    /// The CPU the suites ran on, where that is not the run's host: an ssh
    /// host's, or a CI job's in a merged run.
    #[serde(default)]
    pub cpu_model: Option<String>,
    /// The machine and kernel the suites ran on, where that is not the
    /// run's host (`host::machine` of an ssh host's `/etc/machine-id`).
    #[serde(default)]
    pub machine: Option<String>,
    #[serde(default)]
    pub kernel: Option<String>,
    /// That machine's virtualisation and declared testbed
    /// (`host::virtualization`, `host::declared`), recorded with them.
    #[serde(default)]
    pub virtualization: Option<String>,
    #[serde(default)]
    pub declared_testbed: Option<String>,
    /// SHA-256 of the suite sources the binaries were built from
    /// (`build::sources_hash`).
    #[serde(default)]
    pub sources_sha256: Option<String>,
    /// Suite name to the SHA-256 of the binary that ran (kept in `bin/`).
    #[serde(default)]
    pub binaries: std::collections::BTreeMap<Name, String>,
    /// Suite name to what built it, for the suites `toolchain` did not
    /// build: a C suite's cross gcc, its flags and version.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub compilers: std::collections::BTreeMap<Name, ToolInfo>,
    /// Why some selected suites are not built for this target, in one
    /// line (`select::for_target`: no Rust backend).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_built: Option<String>,
    pub suites: Vec<SuiteRun>,
}

impl TargetResult {
    /// The compiler version of the binary that ran `suite`: its own
    /// ([`TargetResult::compilers`]) or the target's Rust toolchain's.
    pub fn compiler_of(&self, suite: &str) -> Option<String> {
        match self.compilers.get(suite) {
            Some(c) => Some(c.version.clone()),
            None => self.toolchain.as_ref().map(|t| t.version.clone()),
        }
    }
}

/// One operation's static ordering footprint.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct StaticOp {
    /// The lock, or the atomic primitive.
    pub unit: Name,
    /// `lock`, `unlock`, `read_lock`, ... (`op` for a primitive).
    pub op: Name,
    #[serde(flatten)]
    pub footprint: crate::footprint::StaticFootprint,
}

/// The loom model check of the run's locks, made once per run on the host
/// from this tree's sources.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct ModelRun {
    pub results: Vec<crate::model::ModelResult>,
    pub unmodelled: Vec<crate::model::Unmodelled>,
    /// Why the models could not be checked at all; `None` when they were.
    pub error: Option<String>,
    /// Seconds building them (`None`: every result from the cache).
    pub build_secs: Option<f64>,
    /// Seconds the check took in all.
    pub secs: f64,
}

/// The Miri check of the locks loom cannot see, made once per run (and
/// once for the base) on the host from that side's tree.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct MiriRun {
    /// Every client of every lock checked.
    pub results: Vec<crate::miri::MiriResult>,
    /// Why nothing was checked (no Miri here: with the command that
    /// installs it; a suite that did not build under Miri); `None` when
    /// the locks were checked.
    pub not_checked: Option<String>,
    /// Miri's version, when there was one.
    #[serde(default)]
    pub toolchain: Option<String>,
    /// Seconds of `cargo miri setup` and of building the suites under
    /// Miri (`None`: every result from the cache).
    #[serde(default)]
    pub setup_secs: Option<f64>,
    #[serde(default)]
    pub build_secs: Option<f64>,
    /// Seconds the check took in all.
    pub secs: f64,
}

/// For the gate's and the reports' tests: a run whose ticket model loom
/// found violated, with `failure` as its message.
#[cfg(test)]
pub(crate) fn violated_ticket(failure: &str) -> ModelRun {
    ModelRun {
        results: vec![crate::model::ModelResult {
            suite: "spinlock".into(),
            lock: "ticket".into(),
            model: "2 threads x 2 acquisitions".into(),
            covers: "exclusion".into(),
            ok: false,
            interleavings: 1,
            preemption_bound: 3,
            secs: 0.01,
            reached: Default::default(),
            failure: Some(failure.into()),
            trace: vec!["thread 1 unlock".into()],
            cached: false,
        }],
        unmodelled: vec![],
        error: None,
        build_secs: None,
        secs: 0.01,
    }
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BadLine {
    pub line: usize,
    pub text: String,
    pub why: String,
}

#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct SuiteRun {
    pub suite: Name,
    /// The shell command that reproduces this run.
    pub command: String,
    /// The command that counted its instructions under QEMU, for a native
    /// or ssh target with `counted_under`.
    #[serde(default)]
    pub counted_command: Option<String>,
    pub status: Status,
    pub exit: Exit,
    pub secs: f64,
    pub env: Option<Env>,
    pub samples: Vec<Sample>,
    pub checks: Vec<Check>,
    /// What each counted cell executed per op (protocol 3, under the QEMU
    /// plugin): `footprint::executed` classifies it.
    #[serde(default)]
    pub executed: Vec<Executed>,
    /// Where the suite's probe functions are (protocol 3):
    /// `footprint::static_footprint` reads the binary with them.
    #[serde(default)]
    pub probes: Option<Probes>,
    /// The ordering footprint of each lock operation's (or primitive's)
    /// whole code in the binary that ran (format 6).
    #[serde(default)]
    pub static_footprint: Vec<StaticOp>,
    /// Why there is no static footprint though the suite printed probes
    /// (objdump missing or failing).
    #[serde(default)]
    pub footprint_error: Option<String>,
    pub bad_lines: Vec<BadLine>,
    /// The last lines of stderr (all of it is in `<target>/<suite>.stderr`).
    pub stderr_tail: Vec<String>,
    /// SHA-256 of the suite's stdout, kept as `<target>/<suite>.jsonl`:
    /// reading the run checks the file still holds what was parsed.
    #[serde(default)]
    pub stdout_sha256: Option<String>,
}

pub fn suite_run(
    suite: &Name,
    command: String,
    outcome: &Outcome,
    parsed: Parsed,
    status: Status,
) -> SuiteRun {
    let lines: Vec<String> = outcome.stderr.lines().map(str::to_string).collect();
    SuiteRun {
        suite: suite.clone(),
        command,
        status,
        exit: outcome.exit,
        secs: outcome.secs,
        env: parsed.env,
        samples: parsed.samples,
        checks: parsed.checks,
        executed: parsed.executed,
        probes: parsed.probes,
        static_footprint: Vec::new(),
        footprint_error: None,
        bad_lines: parsed
            .bad_lines
            .into_iter()
            .map(|(line, text, why)| BadLine { line, text, why })
            .collect(),
        stderr_tail: lines[lines.len().saturating_sub(20)..].to_vec(),
        stdout_sha256: Some(sha256(outcome.stdout.as_bytes())),
        counted_command: None,
    }
}

pub use crate::file::sha256;

/// Makes sure runs can be written under `results` before anything is
/// built: it is (or can be made) a directory we can create entries in.
pub fn check_writable(results: &Path) -> Result<(), ResultsError> {
    let not_writable = |doing, error| ResultsError::NotWritable {
        path: results.to_path_buf(),
        doing,
        error,
    };
    if let Err(e) = std::fs::create_dir_all(results) {
        return Err(not_writable("create it", e));
    }
    let probe = results.join(format!(".lockmatrix-probe-{}", std::process::id()));
    match std::fs::create_dir(&probe) {
        Ok(()) => {
            let _ = std::fs::remove_dir(&probe);
            Ok(())
        }
        Err(e) => Err(not_writable("write there", e)),
    }
}

/// A new, unique run directory under `results`: `YYYYMMDDTHHMMSSZ[-N]`.
pub fn new_run_dir(results: &Path, started: &str) -> Result<(String, PathBuf), ResultsError> {
    check_writable(results)?;
    let stamp: String = started
        .chars()
        .filter(|c| !matches!(c, '-' | ':'))
        .collect();
    for n in 1.. {
        let id = if n == 1 {
            stamp.clone()
        } else {
            format!("{stamp}-{n}")
        };
        let dir = results.join(&id);
        // create_dir fails if it exists, so concurrent runs never share one.
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok((id, dir)),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(error) => return Err(ResultsError::RunDir { dir, error }),
        }
    }
    unreachable!()
}

/// Writes `run.json` via a temporary file and a rename, so a reader never
/// sees half a file.
pub fn write(dir: &Path, run: &Run) -> Result<(), WriteError> {
    crate::file::replace(&dir.join("run.json"), &serde_json::to_string_pretty(run)?)?;
    Ok(())
}

/// Why a run.json could not be written.
#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error(transparent)]
    Json(#[from] serde_json::Error),
    #[error(transparent)]
    File(#[from] crate::file::FileError),
}

/// The newest complete run under a results directory, and the newer runs
/// passed over (each with why: incomplete, or damaged).
pub struct Newest {
    pub dir: PathBuf,
    pub run: Run,
    pub skipped: Vec<(PathBuf, Skipped)>,
}

/// Why a run directory was passed over.
#[derive(Debug)]
pub enum Skipped {
    /// It has not recorded its end: interrupted, or still running.
    Incomplete,
    /// It cannot be read: damaged, or not a run.
    Unreadable(RunError),
}

impl std::fmt::Display for Skipped {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Skipped::Incomplete => f.write_str("incomplete (interrupted, or still running)"),
            Skipped::Unreadable(e) => e.fmt(f),
        }
    }
}

/// The newest complete run under `results` (run ids sort by time). Runs
/// that were interrupted, are still running or are damaged are skipped and
/// named in [`Newest::skipped`].
pub fn newest(results: &Path) -> Result<Newest, ResultsError> {
    let entries = match std::fs::read_dir(results) {
        Ok(entries) => entries,
        Err(error) => {
            return Err(ResultsError::NoResults {
                path: results.to_path_buf(),
                error,
            })
        }
    };
    let mut runs: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    runs.sort();
    let mut skipped = Vec::new();
    for dir in runs.into_iter().rev() {
        match read_complete(&dir) {
            Ok(run) => return Ok(Newest { dir, run, skipped }),
            Err(why) => skipped.push((dir, why)),
        }
    }
    // Said here, as no caller gets them: "run matrix first" alone would
    // hide a damaged run's file and field, or a killed run.
    const SHOWN: usize = 3;
    let mut passed_over: String = skipped
        .iter()
        .take(SHOWN)
        .map(|(dir, why)| format!("\n  skipped {}: {why}", dir.display()))
        .collect();
    if skipped.len() > SHOWN {
        passed_over.push_str(&format!("\n  and {} older", skipped.len() - SHOWN));
    }
    Err(ResultsError::NoCompleteRun {
        path: results.to_path_buf(),
        passed_over,
    })
}

/// Every complete run at or under each of `dirs` (a run, a results
/// directory, or merged CI artifacts: down to three levels), in path order,
/// and the runs passed over with why. An `--against` run's `base/` is part
/// of its run, not a run of its own.
pub fn all(dirs: &[PathBuf]) -> Result<All, ResultsError> {
    let mut found = Vec::new();
    for d in dirs {
        if !d.is_dir() {
            return Err(ResultsError::NoSuchDirectory { path: d.clone() });
        }
        find_run_dirs(d, 3, &mut found);
    }
    let mut all = All::default();
    for dir in found {
        match read_complete(&dir) {
            Ok(run) => all.runs.push((dir, run)),
            Err(why) => all.skipped.push((dir, why)),
        }
    }
    Ok(all)
}

/// The run in `dir` if it is complete, else why it is passed over.
fn read_complete(dir: &Path) -> Result<Run, Skipped> {
    match read(dir) {
        Ok(run) if run.complete() => Ok(run),
        Ok(_) => Err(Skipped::Incomplete),
        Err(e) => Err(Skipped::Unreadable(e)),
    }
}

#[derive(Default)]
pub struct All {
    pub runs: Vec<(PathBuf, Run)>,
    pub skipped: Vec<(PathBuf, Skipped)>,
}

/// Directories are entered only where they are directories themselves,
/// never through a symbolic link, so an artifact cannot lead the search
/// out of the directories named.
fn find_run_dirs(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    if dir.join("run.json").symlink_metadata().is_ok() {
        out.push(dir.to_path_buf());
        return;
    }
    if depth == 0 {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut subdirs: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .map(|e| e.path())
        .collect();
    subdirs.sort();
    for d in subdirs {
        find_run_dirs(&d, depth - 1, out);
    }
}

/// Reads a run directory's `run.json` and checks that every suite's
/// `<target>/<suite>.jsonl` still holds what was parsed from it. Any
/// problem is bad input (exit status 2) naming the file. An incomplete run
/// reads fine: callers decide whether they can use one ([`Run::complete`]).
pub fn read(dir: &Path) -> Result<Run, RunError> {
    if !dir.is_dir() {
        return Err(RunError::NoRunDirectory { dir: dir.into() });
    }
    let path = dir.join("run.json");
    let text = match crate::file::read_text(&path, crate::file::RUN_LIMIT) {
        Ok(Some(text)) => text,
        Ok(None) => return Err(RunError::NotUtf8 { path }),
        Err(crate::file::FileError::Missing { .. }) => {
            return Err(RunError::NoRunJson { dir: dir.into() })
        }
        Err(e) => return Err(RunError::File(e)),
    };
    check_format(&path, &text)?;
    let mut run: Run = match serde_json::from_str(&text) {
        Ok(run) => run,
        Err(error) => {
            let why = crate::escape::without_values(&error.to_string());
            return Err(RunError::NotARun { path, why });
        }
    };
    read_as_today(&mut run);
    check_one_line_fields(&run, &path)?;
    let mut names = std::collections::BTreeSet::new();
    for t in &run.targets {
        if !names.insert(&t.name) {
            return Err(RunError::TargetTwice {
                path,
                target: t.name.to_string(),
            });
        }
        check_target(dir, &path, t)?;
    }
    Ok(run)
}

/// A run.json's `format`, where it has one, is one this version reads.
/// Only `format` is kept of the parse: the rest is skipped, not built
/// (a second copy of a large run would double the memory it costs).
fn check_format(path: &Path, text: &str) -> Result<(), RunError> {
    #[derive(Deserialize)]
    struct Format {
        format: Option<serde_json::Value>,
    }
    let format = serde_json::from_str::<Format>(text)
        .ok()
        .and_then(|v| v.format)
        .and_then(|f| f.as_u64());
    match format.filter(|f| !(OLDEST_FORMAT as u64..=FORMAT_VERSION as u64).contains(f)) {
        Some(f) => Err(RunError::Format {
            path: path.into(),
            format: f,
            oldest: OLDEST_FORMAT,
            newest: FORMAT_VERSION,
        }),
        None => Ok(()),
    }
}

/// An older format's run read as this version records one.
fn read_as_today(run: &mut Run) {
    if run.format < 5 && !run.complete() {
        for t in &mut run.targets {
            if t.status == Status::Ok {
                t.status = Status::Pending;
            }
        }
    }
    if run.format < 2 {
        // Format 1 runs hold protocol 1 output, where a cost the empty-loop
        // subtraction could not tell from zero came out as zero or a bit
        // below: read as `null`, as protocol 1 output itself is.
        for x in run
            .targets
            .iter_mut()
            .flat_map(|t| &mut t.suites)
            .flat_map(|s| &mut s.samples)
        {
            if x.kind() == crate::protocol::Kind::Time && x.value.is_some_and(|v| v <= 0.0) {
                x.value = None;
            }
        }
    }
}

/// One-line fields reports show as lines: no line break or text control.
fn check_one_line_fields(run: &Run, path: &Path) -> Result<(), RunError> {
    let h = &run.host;
    let tool = |t: &Option<ToolInfo>| t.as_ref().map(|t| format!("{} {}", t.what, t.version));
    let mut texts: Vec<(String, Option<String>)> = vec![
        ("host.cpu_model".into(), Some(h.cpu_model.clone())),
        ("host.kernel".into(), Some(h.kernel.clone())),
        ("host.os".into(), Some(h.os.clone())),
        ("host.machine".into(), h.machine.clone()),
        ("host.virtualization".into(), h.virtualization.clone()),
        ("host.declared_testbed".into(), h.declared_testbed.clone()),
        ("started".into(), Some(run.started.clone())),
    ];
    for t in &run.targets {
        let field = |f: &str| format!("targets.{}.{f}", t.name);
        texts.extend([
            (field("toolchain"), tool(&t.toolchain)),
            (field("linker"), tool(&t.linker)),
            (field("emulator"), tool(&t.emulator)),
            (field("counter"), tool(&t.counter)),
            (field("cpu_model"), t.cpu_model.clone()),
            (field("machine"), t.machine.clone()),
            (field("kernel"), t.kernel.clone()),
            (field("virtualization"), t.virtualization.clone()),
            (field("declared_testbed"), t.declared_testbed.clone()),
            (field("cpu"), t.cpu.as_ref().map(Cpu::describe)),
        ]);
    }
    for (field, value) in &texts {
        if let Some(Err(why)) = value.as_ref().map(|v| crate::escape::check_line(field, v)) {
            return Err(RunError::ActingChar {
                path: path.into(),
                why,
            });
        }
    }
    Ok(())
}

/// Target `t` of the run at `dir` (read from `path`) has each of its
/// suites once, and every suite's output file unchanged.
fn check_target(dir: &Path, path: &Path, t: &TargetResult) -> Result<(), RunError> {
    let mut suites = std::collections::BTreeSet::new();
    for s in &t.suites {
        if !suites.insert(&s.suite) {
            return Err(RunError::SuiteTwice {
                path: path.into(),
                suite: format!("{}/{}", t.name, s.suite),
            });
        }
        check_samples(path, t, s)?;
        let Some(want) = &s.stdout_sha256 else {
            continue;
        };
        let file = dir.join(&t.name).join(format!("{}.jsonl", s.suite));
        match crate::file::read_limited(&file, crate::file::OUTPUT_LIMIT) {
            Ok(bytes) if sha256(&bytes) == *want => {}
            Ok(_) => {
                return Err(RunError::Damaged {
                    file,
                    path: path.into(),
                })
            }
            Err(error) => {
                return Err(RunError::Output {
                    error,
                    suite: format!("{}/{}", t.name, s.suite),
                })
            }
        }
    }
    Ok(())
}

/// Suite run `s` of `t` has one sample per cell and round, each a value
/// its kind of metric can take.
fn check_samples(path: &Path, t: &TargetResult, s: &SuiteRun) -> Result<(), RunError> {
    let mut seen = std::collections::BTreeSet::new();
    for x in &s.samples {
        let shown = || {
            format!(
                "{}/{} {} [{}] {}",
                t.name,
                s.suite,
                x.bench,
                crate::protocol::case_label(&x.case),
                x.metric
            )
        };
        let cell = crate::cells::CellKey::new(&x.bench, &x.case, &x.metric);
        if !seen.insert((cell, x.round)) {
            return Err(RunError::TwoSamples {
                path: path.into(),
                cell: shown(),
                round: x.round,
            });
        }
        if let Some(Err(why)) = x.value.map(|v| x.kind().check(v)) {
            return Err(RunError::BadSample {
                path: path.into(),
                cell: shown(),
                round: x.round,
                value: x.value.unwrap_or_default(),
                why,
            });
        }
    }
    Ok(())
}

/// The versions Cargo.lock (the one at `lock`) pins for the crates the
/// suites' locks come from, as `lock_crates` in their env records name
/// them; the locks written here ("lockmatrix") are left out. std's come
/// with each target's toolchain (its `toolchain.version`).
pub fn lock_crates(run: &Run, lock: &Path) -> std::collections::BTreeMap<String, String> {
    let text = std::fs::read_to_string(lock).unwrap_or_default();
    let pinned = pinned_versions(&text);
    run.targets
        .iter()
        .flat_map(|t| &t.suites)
        .filter_map(|s| s.env.as_ref()?.variants.get("lock_crates")?.as_object())
        .flat_map(|m| m.values().filter_map(|v| v.as_str()))
        .filter(|k| *k != "lockmatrix")
        .map(|k| {
            (
                k.to_string(),
                match k {
                    "std" => "of each target's toolchain".into(),
                    _ => pinned.get(k).cloned().unwrap_or_else(|| "?".into()),
                },
            )
        })
        .collect()
}

/// `name` to `version` of every `[[package]]` of a Cargo.lock (versions
/// joined with ", " when a crate is there twice).
fn pinned_versions(lock: &str) -> std::collections::BTreeMap<String, String> {
    let mut out: std::collections::BTreeMap<String, String> = Default::default();
    let mut name: Option<&str> = None;
    for line in lock.lines() {
        let value = |key: &str| {
            line.strip_prefix(key)
                .map(|v| v.trim().trim_start_matches('=').trim().trim_matches('"'))
        };
        if line.starts_with("[[package]]") {
            name = None;
        } else if let Some(n) = value("name") {
            name = Some(n);
        } else if let (Some(v), Some(n)) = (value("version"), name) {
            out.entry(n.to_string())
                .and_modify(|e| {
                    e.push_str(", ");
                    e.push_str(v)
                })
                .or_insert_with(|| v.to_string());
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::protocol::parse;

    const ENV: &str = r#"{"type":"env","protocol":1,"suite":"s","arch":"x","endian":"little","pointer_width":64,"cpus":2,"timer":"t","timer_unit":"ns","timer_hz":1e9,"relax":"none","profile":"quick","seed":1,"pinned":true,"variants":{}}"#;
    const SAMPLE: &str = r#"{"type":"sample","suite":"s","bench":"b","case":{},"metric":"m","unit":"ns","better":"lower","round":0,"value":1.0}"#;

    fn outcome(exit: Exit, stdout: String) -> Outcome {
        Outcome {
            exit,
            stdout,
            stderr: "first\nlast words\n".into(),
            secs: 0.1,
        }
    }

    fn judged(exit: Exit, stdout: String) -> String {
        let o = outcome(exit, stdout);
        judge(&o, &parse(&o.stdout), 7).label()
    }

    #[test]
    fn judges_each_way_a_run_can_end() {
        let good = format!("{ENV}\n{SAMPLE}\n");
        assert_eq!(judged(Exit::Code(0), good.clone()), "ok");
        assert_eq!(
            judged(Exit::TimedOut, good.clone()),
            "failed: hung: killed after the 7s timeout"
        );
        assert_eq!(
            judged(Exit::Signal(11), good.clone()),
            "failed: crashed: signal 11 (SIGSEGV)"
        );
        assert_eq!(
            judged(Exit::Code(3), good.clone()),
            "failed: exit status 3: last words"
        );
        assert_eq!(
            judged(Exit::Code(0), format!("{good}oops\n")),
            "failed: bad output on line 3: `oops`: not a protocol record: expected value at line 1 column 1"
        );
        assert_eq!(
            judged(Exit::Code(0), format!("{ENV}\n")),
            "failed: no samples in the output"
        );
        let bad_check = r#"{"type":"check","suite":"s","bench":"b","case":{"lock":"x"},"name":"mutual_exclusion","ok":false,"details":{"violations":2}}"#;
        assert_eq!(
            judged(Exit::Code(1), format!("{good}{bad_check}\n")),
            "failed: check mutual_exclusion failed in b [lock=x]: {\"violations\":2}"
        );
    }

    #[test]
    fn cargo_lock_versions_are_read() {
        let lock = "[[package]]\nname = \"spin\"\nversion = \"0.10.1\"\n\n[[package]]\nname = \"parking_lot\"\nversion = \"0.12.5\"\ndependencies = [\n \"lock_api\",\n]\n";
        let v = pinned_versions(lock);
        assert_eq!(v["spin"], "0.10.1");
        assert_eq!(v["parking_lot"], "0.12.5");
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        let here = pinned_versions(&std::fs::read_to_string(root.join("Cargo.lock")).unwrap());
        assert!(here.contains_key("parking_lot") && here.contains_key("spin"));
    }

    #[test]
    fn run_dirs_never_collide() {
        let tmp = std::env::temp_dir().join(format!("lockmatrix-rundir-{}", std::process::id()));
        let (a, _) = new_run_dir(&tmp, "2026-11-30T02:00:00Z").unwrap();
        let (b, _) = new_run_dir(&tmp, "2026-11-30T02:00:00Z").unwrap();
        assert_eq!(
            (a.as_str(), b.as_str()),
            ("20261130T020000Z", "20261130T020000Z-2")
        );
        std::fs::remove_dir_all(tmp).unwrap();
    }
}
