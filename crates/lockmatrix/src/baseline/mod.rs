//! Baseline files: `baselines/<target>/<suite>.json`, one per target and
//! suite, written only by `baseline update`.
//!
//! ```json
//! {
//!   "format": 1,
//!   "target": "aarch64",
//!   "suite": "atomic",
//!   "testbed": {
//!     "runner": "qemu",
//!     "cpu_model": "AMD EPYC 7763 64-Core Processor",
//!     "emulator_version": "qemu-aarch64 version 7.2.15",
//!     "compiler_version": "rustc 1.96.0",
//!     "triple": "aarch64-unknown-linux-gnu",
//!     "counter_version": "qemu-aarch64 version 7.2.15"
//!   },
//!   "commit": "0123abcd...",
//!   "date": "2026-11-30T02:00:00Z",
//!   "cells": [
//!     {
//!       "bench": "single_thread",
//!       "case": {"op":"cas_sync"},
//!       "metric": "ticks_per_op",
//!       "unit": "ns",
//!       "better": "lower",
//!       "samples": [12.5, 12.4, 12.6],
//!       "summary": {"n":3,"median":12.5,"min":12.4,"max":12.6}
//!     }
//!   ]
//! }
//! ```
//!
//! Cells are sorted by (bench, canonical case, metric) and each is one block
//! with its samples on one line, so an update reads well in a diff. Samples
//! are `null` where the suite could not compute a value.

pub mod footprints;

use crate::cells::{CellKey, RunCell, Summary};
use crate::config::RunnerKind;
use crate::file::FileError;
use crate::name::Name;
use crate::protocol::Better;
use crate::results::{Run, TargetResult};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// Version 2 added the testbed's `triple` and `counter_version`, which
/// decide whether instruction counts compare; version 1 files are read,
/// and their counts are incomparable until re-recorded. Version 3 added
/// the ordering `footprint` (each operation's static footprint and each
/// counted cell's executed one), which compares where counts do.
pub const FORMAT: u32 = 3;
const OLDEST_FORMAT: u32 = 1;

/// Why a baseline file could not be read, checked or written: each names
/// the file or directory. All are bad input or a machine's problem (exit
/// status 2), never a regression.
#[derive(Debug, thiserror::Error)]
pub enum BaselineError {
    /// A path [`path`] did not make (it has no directory).
    #[error("a baseline path has a directory")]
    NoDirectory,
    /// A path that is not `<baselines>/<target>/<suite>.json`.
    #[error("{}: not a file of {} (baselines/<target>/<suite>.json)", path.display(), baselines.display())]
    NotInside { path: PathBuf, baselines: PathBuf },
    /// A target directory or baseline file that is something else on disk
    /// (a symbolic link, a FIFO): never read or written through.
    #[error("{}: is {kind}, expected {expected}: refused (baselines are only read and written in place)", path.display())]
    Refused {
        path: PathBuf,
        kind: &'static str,
        expected: &'static str,
    },
    /// The file could not be read, or a staged copy written.
    #[error(transparent)]
    File(#[from] FileError),
    /// The file was read but is not a baseline of its target and suite.
    #[error("{}: corrupt baseline (fix it, or delete it and run `cargo xtask baseline update`)", path.display())]
    Corrupt {
        path: PathBuf,
        #[source]
        why: Corrupt,
    },
    /// A directory could not be created.
    #[error("creating {}", path.display())]
    CreateDir {
        path: PathBuf,
        #[source]
        error: std::io::Error,
    },
    /// The baselines directory could not be opened to be locked.
    #[error("{}: cannot open", path.display())]
    Open {
        path: PathBuf,
        #[source]
        error: std::io::Error,
    },
    /// Locking the baselines directory failed (not because it is held).
    #[error("{}: cannot lock: {error}", path.display())]
    Lock {
        path: PathBuf,
        error: std::io::Error,
    },
    /// Another update holds the lock.
    #[error(transparent)]
    Busy(#[from] Busy),
    /// A file to write has no directory.
    #[error("{}: no parent directory", path.display())]
    NoParent { path: PathBuf },
    /// A file could not be staged: nothing was renamed into place.
    #[error("nothing was written")]
    NothingWritten(#[source] Box<BaselineError>),
    /// A staged file could not be renamed into place; `done` lists the
    /// paths already replaced (or says "none").
    #[error("renaming {} to {}: {error}; already replaced: {done}", tmp.display(), path.display())]
    Rename {
        tmp: PathBuf,
        path: PathBuf,
        error: std::io::Error,
        done: String,
    },
}

/// What is wrong inside a baseline file ([`BaselineError::Corrupt`]).
#[derive(Debug, thiserror::Error)]
pub enum Corrupt {
    #[error("not UTF-8 text")]
    NotUtf8,
    /// serde's words, without the values it quotes
    /// ([`crate::escape::without_values`]).
    #[error("not JSON: {0}")]
    NotJson(String),
    /// A `format` this xtask does not read, as [`crate::escape::echo`]
    /// shows it.
    #[error("format {0}: this xtask reads formats {oldest} to {newest}", oldest = OLDEST_FORMAT, newest = FORMAT)]
    Format(String),
    #[error("no `format` field: not a lockmatrix baseline")]
    NoFormat,
    /// JSON, but not of a baseline: serde's words, without the values
    /// it quotes.
    #[error("not a lockmatrix baseline: {0}")]
    NotABaseline(String),
    /// The baseline of another target or suite.
    #[error("it holds target `{target}` suite `{suite}`, expected target `{want_target}` suite `{want_suite}`")]
    Elsewhere {
        target: String,
        suite: String,
        want_target: String,
        want_suite: String,
    },
    /// A one-line field holds a character that acts on a terminal or a page.
    #[error(transparent)]
    ActingChar(#[from] crate::escape::ActingChar),
    /// `cell` is `cell <bench> [<case>] <metric>`.
    #[error("{cell} is listed twice")]
    Twice { cell: String },
    #[error("{cell} has no samples: expected one value (or null) per round")]
    NoSamples { cell: String },
    /// A sample its metric's kind cannot have.
    #[error("{cell}: sample {index} is {value}: {why}")]
    BadSample {
        cell: String,
        index: usize,
        value: f64,
        why: crate::protocol::BadValue,
    },
    #[error("{cell}: its summary does not match its samples (edited by hand?)")]
    Summary { cell: String },
}

/// What the cells were measured on. Timings compare only on the same
/// testbed; instruction counts compare wherever the same code runs under
/// the same emulator release.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Testbed {
    pub runner: RunnerKind,
    pub cpu_model: String,
    /// `None` when the target runs natively.
    pub emulator_version: Option<String>,
    pub compiler_version: Option<String>,
    /// The target triple the binaries were built for.
    #[serde(default)]
    pub triple: Option<String>,
    /// The emulator that counted instructions (a QEMU target's own, or a
    /// native target's `counted_under`), if any.
    #[serde(default)]
    pub counter_version: Option<String>,
    /// The CPU the emulator modelled and the codegen flags, when the
    /// target chose them (a variant): `-cpu neoverse-n1; -C ...`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_choice: Option<String>,
    /// The machine the timings were measured on (`host::machine`) and its
    /// kernel: two VMs of one CPU model differ by more than a delta, so
    /// timings compare only on the same machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    /// Its virtualisation and the testbed its operator declared: a
    /// container's machine id is its image's, so timings compare only
    /// where `host::timing_identity` holds on both sides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub virtualization: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub declared_testbed: Option<String>,
    /// The compiler the timing cells were measured with, when a
    /// `baseline update --counts-only` recorded the counts with another
    /// (`compiler_version`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timings_compiler: Option<String>,
}

/// `7.2` from `qemu-aarch64 version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b2)`:
/// the release that decides how TCG translates guest code. Debian's
/// build suffix and QEMU's patch number do not change what a guest executes.
pub fn qemu_release(version: &str) -> Option<String> {
    let mut words = version.split_whitespace();
    words.find(|w| *w == "version")?;
    let v = words.next()?;
    let mut parts = v.split('.');
    Some(format!("{}.{}", parts.next()?, parts.next()?))
}

impl Testbed {
    /// The testbed of suite `suite` of `target`: the target's, with the
    /// compiler that built that suite's binary (a C suite's gcc).
    pub fn of_suite(run: &Run, target: &TargetResult, suite: &str) -> Testbed {
        Testbed {
            compiler_version: target.compiler_of(suite),
            ..Testbed::of(run, target)
        }
    }

    pub fn of(run: &Run, target: &TargetResult) -> Testbed {
        Testbed::on(&run.host, target)
    }

    /// [`Testbed::of`] a target on `host`, before its run is whole.
    pub fn on(host: &crate::host::Host, target: &TargetResult) -> Testbed {
        let emulator_version = target.emulator.as_ref().map(|e| e.version.clone());
        // The machine the suites ran on: an ssh host, or a merged CI job's
        // runner, records its own (a kernel at least); else the run's host.
        let own = target.runner == RunnerKind::Ssh || target.kernel.is_some();
        let (machine, kernel, virtualization, declared_testbed) = if own {
            (
                target.machine.clone(),
                target.kernel.clone(),
                target.virtualization.clone(),
                target.declared_testbed.clone(),
            )
        } else {
            let h = host;
            (
                h.machine.clone(),
                Some(h.kernel.clone()),
                h.virtualization.clone(),
                h.declared_testbed.clone(),
            )
        };
        Testbed {
            runner: target.runner,
            cpu_model: target
                .cpu_model
                .clone()
                .unwrap_or_else(|| host.cpu_model.clone()),
            compiler_version: target.toolchain.as_ref().map(|t| t.version.clone()),
            triple: Some(target.triple.to_string()),
            counter_version: target
                .counter
                .as_ref()
                .map(|c| c.version.clone())
                .or_else(|| emulator_version.clone()),
            emulator_version,
            cpu_choice: target.cpu.as_ref().map(|c| c.describe()),
            machine,
            kernel,
            virtualization,
            declared_testbed,
            timings_compiler: None,
        }
    }

    /// Whether this testbed's timings can be told apart from another
    /// machine's at all (`host::timing_identity`).
    pub fn timing_identity(&self) -> std::result::Result<(), crate::host::NoIdentity> {
        crate::host::timing_identity(
            self.machine.as_deref(),
            self.virtualization.as_deref(),
            self.declared_testbed.as_deref(),
        )
    }

    /// Why instruction counts from `run` do not compare with this
    /// testbed's: another target, compiler or emulator release (the host
    /// CPU and the emulator's build number do not matter), one entry per
    /// field; empty when they compare.
    pub fn count_differences(&self, run: &Testbed) -> Vec<String> {
        let show = |v: Option<String>| v.unwrap_or_else(|| "none".into());
        let release = |v: &Option<String>| v.as_deref().and_then(qemu_release);
        let fields = [
            (
                "triple",
                show(self.triple.clone()),
                show(run.triple.clone()),
            ),
            (
                "compiler",
                show(self.compiler_version.clone()),
                show(run.compiler_version.clone()),
            ),
            (
                "counting emulator release",
                show(release(&self.counter_version)),
                show(release(&run.counter_version)),
            ),
            (
                "cpu choice",
                show(self.cpu_choice.clone()),
                show(run.cpu_choice.clone()),
            ),
        ];
        fields
            .into_iter()
            .filter(|(_, a, b)| a != b)
            .map(|(name, a, b)| format!("{name}: baseline `{a}`, run `{b}`"))
            .collect()
    }

    /// Why timings from `run` do not compare with this testbed's, one
    /// entry per field: ``cpu_model: baseline `A`, run `B` ``.
    pub fn differences(&self, run: &Testbed) -> Vec<String> {
        let show = |v: &Option<String>| v.as_deref().unwrap_or("none").to_string();
        let recorded = |v: &Option<String>| v.as_deref().unwrap_or("not recorded").to_string();
        let fields = [
            (
                "runner",
                self.runner.name().into(),
                run.runner.name().into(),
            ),
            ("cpu_model", self.cpu_model.clone(), run.cpu_model.clone()),
            (
                "emulator",
                show(&self.emulator_version),
                show(&run.emulator_version),
            ),
            (
                "compiler",
                // The timings' own, where only the counts were re-recorded.
                show(
                    &self
                        .timings_compiler
                        .clone()
                        .or(self.compiler_version.clone()),
                ),
                show(&run.compiler_version),
            ),
            ("cpu choice", show(&self.cpu_choice), show(&run.cpu_choice)),
            ("machine", recorded(&self.machine), recorded(&run.machine)),
            ("kernel", recorded(&self.kernel), recorded(&run.kernel)),
            (
                "virtualization",
                recorded(&self.virtualization),
                recorded(&run.virtualization),
            ),
            (
                "declared testbed",
                show(&self.declared_testbed),
                show(&run.declared_testbed),
            ),
        ];
        let mut out: Vec<String> = fields
            .into_iter()
            .filter(|(_, a, b)| a != b)
            .map(|(name, a, b)| format!("{name}: baseline `{a}`, run `{b}`"))
            .collect();
        // Equal fields prove nothing where neither side could be told
        // from another machine (two containers of one image).
        if self.runner != RunnerKind::Qemu {
            for (side, t) in [("baseline", self), ("run", run)] {
                if let Err(why) = t.timing_identity() {
                    out.push(format!(
                        "the {side}'s testbed is unknown: {why} (name a dedicated machine with {}=<name>)",
                        crate::host::TESTBED_VARIABLE
                    ));
                }
            }
        }
        out
    }
}

/// The stored baselines of `target`'s `suites` in `dir` whose testbed is
/// the target's on `host` (the same machine, compiler and runner): their
/// timing cells, which a real-hardware run compares its rounds with look
/// by look. A file that cannot be read, or another testbed's, is left
/// out here; the gate says why.
pub fn stored_timings(
    dir: &Path,
    host: &crate::host::Host,
    target: &TargetResult,
    suites: &[&str],
) -> crate::family::Stored {
    let mut stored = crate::family::Stored::default();
    for suite in suites {
        let Ok(Some(b)) = read(dir, &target.name, &crate::name::known(suite)) else {
            continue;
        };
        let testbed = Testbed {
            compiler_version: target.compiler_of(suite),
            ..Testbed::on(host, target)
        };
        if !b.testbed.differences(&testbed).is_empty() {
            continue;
        }
        let rounds = crate::cells::timing_rounds(
            (b.cells.iter()).map(|c| (c.unit.as_str(), c.samples.len())),
        );
        let cells = b
            .cells
            .iter()
            .filter(|c| !c.kind().exact())
            .filter_map(|c| {
                Some(crate::family::StoredCell {
                    key: c.key(),
                    values: crate::cells::lower_is_better(&c.samples, c.better)?,
                    rounds,
                })
            })
            .collect();
        stored.suites.insert(suite.to_string(), cells);
    }
    stored
}

/// One cell of a baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BaselineCell {
    pub bench: Name,
    #[serde(deserialize_with = "crate::protocol::checked_case")]
    pub case: Map<String, Value>,
    pub metric: Name,
    pub unit: Name,
    pub better: Better,
    pub samples: Vec<Option<f64>>,
    pub summary: Summary,
}

impl BaselineCell {
    pub fn kind(&self) -> crate::protocol::Kind {
        crate::protocol::Kind::of(&self.unit)
    }

    pub fn key(&self) -> CellKey {
        CellKey::new(&self.bench, &self.case, &self.metric)
    }

    pub fn from_run(cell: &RunCell) -> BaselineCell {
        BaselineCell {
            bench: cell.key.bench.clone(),
            case: cell.case.clone(),
            metric: cell.key.metric.clone(),
            unit: cell.unit.clone(),
            better: cell.better,
            samples: cell.samples.clone(),
            summary: Summary::of(&cell.samples),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Baseline {
    pub format: u32,
    pub target: Name,
    pub suite: Name,
    pub testbed: Testbed,
    /// The lockmatrix commit the samples were measured at: a commit id,
    /// checked as it is read (it reaches git: the trailer range, a recount).
    pub commit: crate::commit::CommitId,
    /// When the samples were measured (the run's start, UTC).
    pub date: String,
    pub cells: Vec<BaselineCell>,
    /// The ordering footprints (format 3; `None`: not recorded).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub footprint: Option<footprints::Footprints>,
    /// SHA-256 of the suite binary that ran: a run of the same binary has
    /// the same counts, whatever compiler label either records.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub binary: Option<String>,
}

/// `<baselines>/<target>/<suite>.json`. Target and suite are [`Name`]s, so
/// the path stays inside `baselines`; [`inside`] checks what is on disk.
pub fn path(baselines: &Path, target: &Name, suite: &Name) -> PathBuf {
    baselines.join(target).join(format!("{suite}.json"))
}

/// Checks that `path` ([`path`]'s) is inside `baselines` on disk too: its
/// target directory, where it exists, is a directory and not a symbolic
/// link (to somewhere else), and the file, where it exists, is a regular
/// file. A checkout or artifact that plants a link is refused, never
/// read or written through.
pub fn inside(baselines: &Path, path: &Path) -> Result<(), BaselineError> {
    let dir = path.parent().ok_or(BaselineError::NoDirectory)?;
    if dir.parent() != Some(baselines) {
        return Err(BaselineError::NotInside {
            path: path.into(),
            baselines: baselines.into(),
        });
    }
    for p in [dir, path] {
        match p.symlink_metadata() {
            Ok(m) if p == dir && m.is_dir() => {}
            Ok(m) if p == path && m.is_file() => {}
            Ok(m) => {
                return Err(BaselineError::Refused {
                    path: p.into(),
                    kind: crate::file::kind_of(m.file_type()),
                    expected: if p == dir {
                        "a directory"
                    } else {
                        "a regular file"
                    },
                })
            }
            Err(_) => {}
        }
    }
    Ok(())
}

/// Reads a baseline file: `Ok(None)` when there is none. Any other problem
/// (unreadable, not a regular file, too large, not JSON, another format,
/// duplicate cells, the wrong target or suite) is an error naming the
/// file. Never modifies the file.
pub fn read(
    baselines: &Path,
    target: &Name,
    suite: &Name,
) -> Result<Option<Baseline>, BaselineError> {
    let path = path(baselines, target, suite);
    let path = path.as_path();
    inside(baselines, path)?;
    let text = match crate::file::read_text(path, crate::file::BASELINE_LIMIT) {
        Ok(text) => text,
        Err(crate::file::FileError::Missing { .. }) => return Ok(None),
        Err(e) => return Err(e.into()),
    };
    text.ok_or(Corrupt::NotUtf8)
        .and_then(|text| parse(&text, target, suite))
        .map(Some)
        .map_err(|why| BaselineError::Corrupt {
            path: path.into(),
            why,
        })
}

/// Reads the baseline of every `(target, suite)`, for its errors only: a
/// run that will be gated against a corrupt file is refused before it
/// builds anything.
pub fn check_readable(
    baselines: &Path,
    targets: &[&Name],
    suites: &[&str],
) -> Result<(), BaselineError> {
    for t in targets {
        for s in suites {
            read(baselines, t, &crate::name::known(s))?;
        }
    }
    Ok(())
}

fn parse(text: &str, target: &str, suite: &str) -> Result<Baseline, Corrupt> {
    let named = |e: serde_json::Error| crate::escape::without_values(&e.to_string());
    let value: Value = serde_json::from_str(text).map_err(|e| Corrupt::NotJson(named(e)))?;
    match value.get("format") {
        Some(Value::Number(n))
            if n.as_u64()
                .is_some_and(|f| (OLDEST_FORMAT as u64..=FORMAT as u64).contains(&f)) => {}
        Some(Value::Number(n)) => return Err(Corrupt::Format(n.to_string())),
        Some(other) => return Err(Corrupt::Format(crate::escape::echo(&other.to_string()))),
        None => return Err(Corrupt::NoFormat),
    }
    let mut b: Baseline =
        serde_json::from_str(text).map_err(|e| Corrupt::NotABaseline(named(e)))?;
    if b.target != target || b.suite != suite {
        return Err(Corrupt::Elsewhere {
            target: b.target.to_string(),
            suite: b.suite.to_string(),
            want_target: target.into(),
            want_suite: suite.into(),
        });
    }
    let t = &b.testbed;
    let texts = [
        ("testbed.cpu_model", Some(&t.cpu_model)),
        ("testbed.emulator_version", t.emulator_version.as_ref()),
        ("testbed.compiler_version", t.compiler_version.as_ref()),
        ("testbed.triple", t.triple.as_ref()),
        ("testbed.counter_version", t.counter_version.as_ref()),
        ("testbed.cpu_choice", t.cpu_choice.as_ref()),
        ("testbed.machine", t.machine.as_ref()),
        ("testbed.kernel", t.kernel.as_ref()),
        ("testbed.virtualization", t.virtualization.as_ref()),
        ("testbed.declared_testbed", t.declared_testbed.as_ref()),
        ("testbed.timings_compiler", t.timings_compiler.as_ref()),
        ("date", Some(&b.date)),
    ];
    for (field, value) in texts {
        if let Some(v) = value {
            crate::escape::check_line(field, v)?;
        }
    }
    let old_format = b.format < 2;
    let mut seen = BTreeSet::new();
    for c in &mut b.cells {
        let name = || {
            format!(
                "cell {} [{}] {}",
                c.bench,
                crate::protocol::case_label(&c.case),
                c.metric
            )
        };
        if !seen.insert(c.key()) {
            return Err(Corrupt::Twice { cell: name() });
        }
        if c.samples.is_empty() {
            return Err(Corrupt::NoSamples { cell: name() });
        }
        for (i, v) in c.samples.iter().enumerate() {
            if let Some(Err(why)) = v.map(|v| c.kind().check(v)) {
                if !old_format {
                    return Err(Corrupt::BadSample {
                        cell: name(),
                        index: i,
                        value: v.unwrap_or_default(),
                        why,
                    });
                }
            }
        }
        if c.summary != Summary::of(&c.samples) {
            return Err(Corrupt::Summary { cell: name() });
        }
        if old_format {
            // Format 1 came from protocol 1 suites, which printed a cost
            // they could not tell from zero as a zero or negative time:
            // read as null, as protocol 2 prints it.
            let kind = c.kind();
            for v in &mut c.samples {
                if v.is_some_and(|x| kind.check(x).is_err()) {
                    *v = None;
                }
            }
        }
    }
    Ok(b)
}

/// The file's text: stable key order, cells sorted, one block per cell.
pub fn to_text(b: &Baseline) -> String {
    let mut cells = b.cells.clone();
    cells.sort_by_key(BaselineCell::key);
    let mut out = String::new();
    out.push_str("{\n");
    out.push_str(&format!("  \"format\": {},\n", b.format));
    out.push_str(&format!("  \"target\": {},\n", j(&b.target)));
    out.push_str(&format!("  \"suite\": {},\n", j(&b.suite)));
    // serde writes every field of the testbed, in declaration order.
    let testbed = serde_json::to_string_pretty(&b.testbed).expect("a testbed serializes");
    out.push_str(&format!(
        "  \"testbed\": {},\n",
        testbed.replace('\n', "\n  ")
    ));
    out.push_str(&format!("  \"commit\": {},\n", j(&b.commit)));
    out.push_str(&format!("  \"date\": {},\n", j(&b.date)));
    if let Some(binary) = &b.binary {
        out.push_str(&format!("  \"binary\": {},\n", j(binary)));
    }
    if let Some(f) = &b.footprint {
        footprint_text(f, &mut out);
    }
    if cells.is_empty() {
        out.push_str("  \"cells\": []\n}\n");
        return out;
    }
    out.push_str("  \"cells\": [\n");
    for (i, c) in cells.iter().enumerate() {
        let samples: Vec<String> = c.samples.iter().map(j).collect();
        out.push_str("    {\n");
        out.push_str(&format!("      \"bench\": {},\n", j(&c.bench)));
        out.push_str(&format!(
            "      \"case\": {},\n",
            crate::cells::canonical_case(&c.case)
        ));
        out.push_str(&format!("      \"metric\": {},\n", j(&c.metric)));
        out.push_str(&format!("      \"unit\": {},\n", j(&c.unit)));
        out.push_str(&format!("      \"better\": {},\n", j(&c.better)));
        out.push_str(&format!("      \"samples\": [{}],\n", samples.join(", ")));
        out.push_str(&format!("      \"summary\": {}\n", j(&c.summary)));
        out.push_str(if i + 1 == cells.len() {
            "    }\n"
        } else {
            "    },\n"
        });
    }
    out.push_str("  ]\n}\n");
    out
}

/// The footprint block: one operation or counted cell per line, so that
/// an ordering change reads as one changed line in a diff.
fn footprint_text(f: &footprints::Footprints, out: &mut String) {
    fn list<T: Serialize>(name: &str, items: &[T], last: bool, out: &mut String) {
        out.push_str(&format!("    \"{name}\": ["));
        for (i, item) in items.iter().enumerate() {
            out.push_str(if i == 0 { "\n" } else { ",\n" });
            out.push_str(&format!("      {}", j(item)));
        }
        out.push_str(if items.is_empty() { "]" } else { "\n    ]" });
        out.push_str(if last { "\n" } else { ",\n" });
    }
    out.push_str("  \"footprint\": {\n");
    list("static", &f.ops, false, out);
    list("executed", &f.executed, true, out);
    out.push_str("  },\n");
}

/// Compact JSON of one field's value.
fn j<T: Serialize + ?Sized>(v: &T) -> String {
    serde_json::to_string(v).expect("baseline fields serialize")
}

/// Removes the temporary files an interrupted [`write_all`] left under
/// `baselines/<target>/` (`.atomic.json.tmp-<pid>`) by a process that is
/// gone; a live process's are its update in progress. Returns their paths.
pub fn remove_stale_temps(baselines: &Path) -> Vec<PathBuf> {
    let mut removed = Vec::new();
    for dir in std::fs::read_dir(baselines).into_iter().flatten().flatten() {
        if !dir.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        for f in std::fs::read_dir(dir.path())
            .into_iter()
            .flatten()
            .flatten()
        {
            let name = f.file_name().to_string_lossy().into_owned();
            let stale =
                crate::file::staged_by(&name).is_some_and(|pid| !crate::file::process_alive(pid));
            if stale && std::fs::remove_file(f.path()).is_ok() {
                removed.push(f.path());
            }
        }
    }
    removed
}

/// One `baseline update` at a time per baselines directory, across
/// processes: an exclusive advisory lock on the directory itself, held
/// until dropped. A second update waits [`LOCK_WAIT`] for it, then gets
/// [`Busy`].
pub struct UpdateLock(#[allow(dead_code)] std::fs::File);

/// How long a second `baseline update` waits for the first before it is
/// refused.
const LOCK_WAIT: std::time::Duration = std::time::Duration::from_secs(5);

/// Another process holds the [`UpdateLock`].
#[derive(Debug)]
pub struct Busy(pub PathBuf);

impl std::fmt::Display for Busy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: another `baseline update` is writing these baselines (waited {} s); run this one when it has finished",
            self.0.display(),
            LOCK_WAIT.as_secs()
        )
    }
}

impl std::error::Error for Busy {}

impl UpdateLock {
    pub fn take(baselines: &Path) -> Result<UpdateLock, BaselineError> {
        use std::os::fd::AsRawFd;
        std::fs::create_dir_all(baselines).map_err(|error| BaselineError::CreateDir {
            path: baselines.into(),
            error,
        })?;
        let dir = std::fs::File::open(baselines).map_err(|error| BaselineError::Open {
            path: baselines.into(),
            error,
        })?;
        // A short wait first: an update takes well under a second, and a
        // child process forked by this one may hold a copy of a descriptor
        // just dropped until it executes its program.
        let deadline = std::time::Instant::now() + LOCK_WAIT;
        loop {
            // SAFETY: flock on a descriptor this function owns.
            if unsafe { libc::flock(dir.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) } == 0 {
                return Ok(UpdateLock(dir));
            }
            let e = std::io::Error::last_os_error();
            if e.raw_os_error() != Some(libc::EWOULDBLOCK) {
                return Err(BaselineError::Lock {
                    path: baselines.into(),
                    error: e,
                });
            }
            if std::time::Instant::now() >= deadline {
                return Err(Busy(baselines.to_path_buf()).into());
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
    }
}

/// Blocks the signals a user or CI sends to stop a command (INT, TERM,
/// HUP, QUIT) until dropped, when they are delivered; where the command
/// line takes them on a thread of its own, holds [`crate::scratch::hold`],
/// which that thread waits for before the process dies.
struct HoldSignals {
    old: libc::sigset_t,
    _held: std::sync::RwLockReadGuard<'static, ()>,
}

impl HoldSignals {
    fn new() -> HoldSignals {
        let held = crate::scratch::hold();
        // SAFETY: plain libc calls on a local, zero-initialised signal set.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP, libc::SIGQUIT] {
                libc::sigaddset(&mut set, sig);
            }
            let mut old: libc::sigset_t = std::mem::zeroed();
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, &mut old);
            HoldSignals { old, _held: held }
        }
    }
}

impl Drop for HoldSignals {
    fn drop(&mut self) {
        // SAFETY: restores the mask saved in `new`.
        unsafe { libc::pthread_sigmask(libc::SIG_SETMASK, &self.old, std::ptr::null_mut()) };
    }
}

/// Writes every `(path, text)` or none: each text goes to a temporary file
/// beside its path, flushed to disk; only when all are staged are they
/// renamed into place, one after another, with Ctrl-C and kill held off so
/// nothing short of a crash or power loss can stop the renames half way.
/// On any error, the staged files are removed and the error says which
/// paths were already replaced (renames cannot be undone).
pub fn write_all(files: &[(PathBuf, String)]) -> Result<(), BaselineError> {
    let mut staged: Vec<(PathBuf, &Path)> = Vec::new();
    let unstage = |staged: &[(PathBuf, &Path)]| {
        for (tmp, _) in staged {
            let _ = std::fs::remove_file(tmp);
        }
    };
    for (path, text) in files {
        match stage(path, text) {
            Ok(tmp) => staged.push((tmp, path)),
            Err(e) => {
                unstage(&staged);
                return Err(BaselineError::NothingWritten(Box::new(e)));
            }
        }
    }
    let _held = HoldSignals::new();
    for (i, (tmp, path)) in staged.iter().enumerate() {
        if let Err(e) = std::fs::rename(tmp, path) {
            unstage(&staged[i..]);
            let done: Vec<String> = staged[..i]
                .iter()
                .map(|(_, p)| p.display().to_string())
                .collect();
            return Err(BaselineError::Rename {
                tmp: tmp.clone(),
                path: path.to_path_buf(),
                error: e,
                done: if done.is_empty() {
                    "none".into()
                } else {
                    done.join(", ")
                },
            });
        }
    }
    Ok(())
}

/// Stages `path` (see [`crate::file::stage`]), creating its directory.
fn stage(path: &Path, text: &str) -> Result<PathBuf, BaselineError> {
    let dir = path
        .parent()
        .ok_or_else(|| BaselineError::NoParent { path: path.into() })?;
    std::fs::create_dir_all(dir).map_err(|error| BaselineError::CreateDir {
        path: dir.into(),
        error,
    })?;
    Ok(crate::file::stage(path, text)?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    pub fn sample_baseline() -> Baseline {
        Baseline {
            format: FORMAT,
            target: "x86_64".into(),
            suite: "atomic".into(),
            testbed: Testbed {
                runner: RunnerKind::Native,
                cpu_model: "Some \"quoted\" CPU".into(),
                emulator_version: None,
                compiler_version: Some("rustc 1.96.0".into()),
                triple: Some("x86_64-unknown-linux-gnu".into()),
                counter_version: Some(
                    "qemu-x86_64 version 7.2.22 (Debian 1:7.2+dfsg-7+deb12u18+b2)".into(),
                ),
                cpu_choice: None,
                machine: Some("0123456789abcdef".into()),
                kernel: Some("6.1.0-41-cloud-amd64".into()),
                virtualization: Some("kvm".into()),
                declared_testbed: None,
                timings_compiler: None,
            },
            commit: crate::commit::test_id("abc"),
            date: "2026-11-30T02:00:00Z".into(),
            footprint: None,
            binary: None,
            cells: vec![
                BaselineCell {
                    bench: "z".into(),
                    case: json!({"threads": 2, "lock": "tas"})
                        .as_object()
                        .unwrap()
                        .clone(),
                    metric: "m".into(),
                    unit: "ns".into(),
                    better: Better::Higher,
                    samples: vec![Some(1.5), None, Some(1e-9)],
                    summary: Summary::of(&[Some(1.5), None, Some(1e-9)]),
                },
                BaselineCell {
                    bench: "a".into(),
                    case: Map::new(),
                    metric: "m".into(),
                    unit: "ns".into(),
                    better: Better::Lower,
                    samples: vec![Some(0.1 + 0.2)],
                    summary: Summary::of(&[Some(0.1 + 0.2)]),
                },
            ],
        }
    }

    #[test]
    fn gate_baseline_text_round_trips_sorted_and_one_block_per_cell() {
        let b = sample_baseline();
        let text = to_text(&b);
        let back: Baseline = serde_json::from_str(&text).unwrap();
        let mut sorted = b.clone();
        sorted.cells.reverse();
        assert_eq!(back, sorted);
        assert!(
            text.contains("      \"samples\": [1.5, null, 1e-9],\n"),
            "{text}"
        );
        assert!(text.contains("      \"case\": {\"lock\":\"tas\",\"threads\":2},\n"));
        assert!(text.find("\"bench\": \"a\"").unwrap() < text.find("\"bench\": \"z\"").unwrap());
        assert_eq!(to_text(&back), text);
        assert!(
            text.contains("  \"testbed\": {\n    \"runner\": \"native\",\n"),
            "{text}"
        );
        let empty = Baseline { cells: vec![], ..b };
        assert_eq!(
            serde_json::from_str::<Baseline>(&to_text(&empty)).unwrap(),
            empty
        );
        // A variant's CPU choice is kept: without it its counts would
        // compare with the plain target's.
        let mut variant = sample_baseline();
        variant.testbed.cpu_choice = Some("-cpu cortex-a53; -C target-feature=+crt-static".into());
        let back: Baseline = serde_json::from_str(&to_text(&variant)).unwrap();
        assert_eq!(back.testbed, variant.testbed);
    }

    /// Format 3's footprint block reads back as written, one operation or
    /// counted cell per line (a changed barrier is one changed line).
    #[test]
    fn gate_baseline_footprints_round_trip_one_per_line() {
        use crate::footprint::{Class, Entry};
        use crate::gate::ordering::{CellFootprint, Footprints, OpFootprint};
        let mut b = sample_baseline();
        fn entry<N>(class: Class, insn: &str, count: N) -> Entry<N> {
            Entry {
                class,
                insn: insn.into(),
                count,
            }
        }
        b.footprint = Some(Footprints {
            ops: vec![
                OpFootprint {
                    unit: "ticket".into(),
                    op: "unlock".into(),
                    entries: vec![entry(Class::FullBarrier, "lwsync", 1)],
                },
                OpFootprint {
                    unit: "ticket".into(),
                    op: "lock".into(),
                    entries: vec![],
                },
            ],
            executed: vec![CellFootprint {
                bench: "lock_unlock".into(),
                case: json!({"lock": "ticket", "threads": 1})
                    .as_object()
                    .unwrap()
                    .clone(),
                entries: vec![entry(Class::OneWay, "stlr", 1.0)],
            }],
        });
        let text = to_text(&b);
        assert_eq!(
            parse(&text, "x86_64", "atomic").unwrap().footprint,
            b.footprint
        );
        let line = text.lines().find(|l| l.contains("\"unlock\"")).unwrap();
        assert!(
            line.contains("lwsync") && line.trim_end().ends_with("},"),
            "{line}"
        );
        let empty = Baseline {
            footprint: Some(Footprints::default()),
            ..b
        };
        let back = parse(&to_text(&empty), "x86_64", "atomic").unwrap();
        assert_eq!(back.footprint, empty.footprint);
    }

    #[test]
    fn gate_baseline_read_errors_name_what_is_wrong() {
        let b = sample_baseline();
        let good = to_text(&b);
        assert!(parse(&good, "x86_64", "atomic").is_ok());
        let err = |text: &str| crate::error::chain(&parse(text, "x86_64", "atomic").unwrap_err());
        assert!(
            err("{\"format\": 1,").starts_with("not JSON: EOF"),
            "{}",
            err("{")
        );
        assert_eq!(
            err(&good.replace(&format!("\"format\": {FORMAT}"), "\"format\": 99")),
            format!("format 99: this xtask reads formats 1 to {FORMAT}")
        );
        assert!(err(&good.replace("\"commit\"", "\"comit\"")).contains("unknown field `comit`"));
        assert!(parse(&good, "x86_64", "spinlock").is_err());
        let mut twice = b.clone();
        twice.cells.push(b.cells[0].clone());
        assert_eq!(
            err(&to_text(&twice)),
            "cell z [lock=tas threads=2] m is listed twice"
        );
    }

    #[test]
    fn gate_testbed_differences() {
        let a = sample_baseline().testbed;
        let mut b = a.clone();
        assert!(a.differences(&b).is_empty());
        b.cpu_model = "Other".into();
        b.emulator_version = Some("qemu 8".into());
        assert_eq!(
            a.differences(&b),
            [
                "cpu_model: baseline `Some \"quoted\" CPU`, run `Other`",
                "emulator: baseline `none`, run `qemu 8`"
            ]
        );
        // Another VM of the same CPU model, kernel and compiler is another
        // testbed for timings, and the same one for counts; a baseline
        // that never recorded its machine compares with no machine.
        let mut vm = a.clone();
        vm.machine = Some("fedcba9876543210".into());
        assert_eq!(
            a.differences(&vm),
            ["machine: baseline `0123456789abcdef`, run `fedcba9876543210`"]
        );
        assert!(a.count_differences(&vm).is_empty());
        let old = Testbed {
            machine: None,
            ..a.clone()
        };
        assert_eq!(
            old.differences(&a),
            [
                "machine: baseline `not recorded`, run `0123456789abcdef`",
                "the baseline's testbed is unknown: no machine id (/etc/machine-id) recorded (name a dedicated machine with LOCKMATRIX_TESTBED=<name>)"
            ]
        );
    }

    #[test]
    fn gate_counts_compare_across_hosts_and_emulator_builds_not_releases() {
        let a = sample_baseline().testbed;
        // Another host CPU, and the same QEMU 7.2 from another Debian build
        // (+b3 vs +b2, another patch release): counts still compare.
        let mut b = a.clone();
        b.cpu_model = "Intel(R) Xeon(R) Processor".into();
        b.counter_version =
            Some("qemu-x86_64 version 7.2.15 (Debian 1:7.2+dfsg-7+deb12u12+b3)".into());
        assert!(a.count_differences(&b).is_empty());
        assert!(!a.differences(&b).is_empty(), "timings do not compare");
        // Another QEMU release, compiler or target: they do not.
        let mut c = b.clone();
        c.counter_version = Some("qemu-x86_64 version 8.0.0".into());
        assert_eq!(
            a.count_differences(&c),
            ["counting emulator release: baseline `7.2`, run `8.0`"]
        );
        c.compiler_version = Some("rustc 1.85.0".into());
        c.triple = Some("i686-unknown-linux-gnu".into());
        assert_eq!(a.count_differences(&c).len(), 3);
        // Another CPU choice (LSE atomics or not) runs other code.
        let mut d = b.clone();
        d.cpu_choice = Some("-cpu neoverse-n1; -C target-feature=+crt-static,+lse".into());
        assert_eq!(
            a.count_differences(&d),
            ["cpu choice: baseline `none`, run `-cpu neoverse-n1; -C target-feature=+crt-static,+lse`"]
        );
        assert_eq!(
            qemu_release("qemu-aarch64 version 10.0.2 (Debian 1:10.0.2+ds-2)"),
            Some("10.0".into())
        );
        assert_eq!(qemu_release("no version here"), None);
    }

    #[test]
    fn gate_baseline_values_must_be_what_a_suite_can_print() {
        let b = sample_baseline();
        let good = to_text(&b);
        let err = |text: &str| crate::error::chain(&parse(text, "x86_64", "atomic").unwrap_err());
        // A negative or zero time, an empty cell, a hand-edited summary.
        let negative = good.replace("\"samples\": [0.30000000000000004]", "\"samples\": [-0.3]");
        assert!(
            err(&negative).contains("sample 0 is -0.3: expected a positive time"),
            "{}",
            err(&negative)
        );
        let empty = good.replace("\"samples\": [0.30000000000000004]", "\"samples\": []");
        assert!(err(&empty).contains("has no samples"), "{}", err(&empty));
        let edited = good.replace("\"samples\": [0.30000000000000004]", "\"samples\": [0.4]");
        assert!(
            err(&edited).contains("summary does not match its samples"),
            "{}",
            err(&edited)
        );
        // Format 1 files came from protocol 1 suites, which printed a cost
        // they could not tell from zero as a negative time: read as null.
        let v1 = negative
            .replace(&format!("\"format\": {FORMAT}"), "\"format\": 1")
            .replace("\"median\":0.30000000000000004,\"min\":0.30000000000000004,\"max\":0.30000000000000004", "\"median\":-0.3,\"min\":-0.3,\"max\":-0.3");
        let read = parse(&v1, "x86_64", "atomic").unwrap();
        assert_eq!(read.cells[0].samples, [None]);
        // A huge but finite value is a value.
        let huge = good.replace("0.30000000000000004", "1e100");
        assert!(parse(&huge, "x86_64", "atomic").is_ok());
    }

    #[test]
    fn gate_write_all_replaces_every_file_and_leaves_no_temp_file() {
        let dir =
            std::env::temp_dir().join(format!("lockmatrix-gate-atomic-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let (a, b) = (dir.join("t/a.json"), dir.join("u/b.json"));
        write_all(&[(a.clone(), "one".into()), (b.clone(), "one".into())]).unwrap();
        write_all(&[(a.clone(), "two".into()), (b.clone(), "two".into())]).unwrap();
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "two");
        assert_eq!(std::fs::read_to_string(&b).unwrap(), "two");
        assert_eq!(std::fs::read_dir(dir.join("t")).unwrap().count(), 1);
        // A file that cannot be staged (its directory is a file) stops
        // everything before any rename: the others keep their old text.
        std::fs::write(dir.join("v"), "a file").unwrap();
        let err = write_all(&[
            (a.clone(), "three".into()),
            (dir.join("v/c.json"), "x".into()),
        ])
        .unwrap_err();
        let err = crate::error::chain(&err);
        assert!(err.contains("nothing was written"), "{err}");
        assert_eq!(std::fs::read_to_string(&a).unwrap(), "two");
        assert_eq!(std::fs::read_dir(dir.join("t")).unwrap().count(), 1);
        // An interrupted update's temp file is found and removed.
        std::fs::write(dir.join("t/.a.json.tmp-99999"), "half").unwrap();
        assert_eq!(remove_stale_temps(&dir), [dir.join("t/.a.json.tmp-99999")]);
        assert_eq!(std::fs::read_dir(dir.join("t")).unwrap().count(), 1);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
