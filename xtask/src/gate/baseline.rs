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
//!     "compiler_version": "rustc 1.96.0"
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

use super::cells::{CellKey, RunCell, Summary};
use crate::protocol::Better;
use crate::results::{Run, TargetResult};
use anyhow::{bail, Context, Result};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

pub const FORMAT: u32 = 1;

/// What the timings were measured on. Timings from different testbeds are
/// not comparable.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Testbed {
    /// `native`, `qemu` or `ssh`.
    pub runner: String,
    pub cpu_model: String,
    /// `None` when the target runs natively.
    pub emulator_version: Option<String>,
    pub compiler_version: Option<String>,
}

impl Testbed {
    pub fn of(run: &Run, target: &TargetResult) -> Testbed {
        Testbed {
            runner: target.runner.clone(),
            cpu_model: target
                .cpu_model
                .clone()
                .unwrap_or_else(|| run.host.cpu_model.clone()),
            emulator_version: target.emulator.as_ref().map(|e| e.version.clone()),
            compiler_version: target.toolchain.as_ref().map(|t| t.version.clone()),
        }
    }

    /// What differs from `other`, one entry per field:
    /// ``cpu_model: baseline `A`, run `B` ``.
    pub fn differences(&self, run: &Testbed) -> Vec<String> {
        let show = |v: &Option<String>| v.as_deref().unwrap_or("none").to_string();
        let fields = [
            ("runner", self.runner.clone(), run.runner.clone()),
            ("cpu_model", self.cpu_model.clone(), run.cpu_model.clone()),
            (
                "emulator",
                show(&self.emulator_version),
                show(&run.emulator_version),
            ),
            (
                "compiler",
                show(&self.compiler_version),
                show(&run.compiler_version),
            ),
        ];
        fields
            .into_iter()
            .filter(|(_, a, b)| a != b)
            .map(|(name, a, b)| format!("{name}: baseline `{a}`, run `{b}`"))
            .collect()
    }
}

/// One cell of a baseline.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BaselineCell {
    pub bench: String,
    pub case: Map<String, Value>,
    pub metric: String,
    pub unit: String,
    pub better: Better,
    pub samples: Vec<Option<f64>>,
    pub summary: Summary,
}

impl BaselineCell {
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
    pub target: String,
    pub suite: String,
    pub testbed: Testbed,
    /// The lockmatrix commit the samples were measured at.
    pub commit: String,
    /// When the samples were measured (the run's start, UTC).
    pub date: String,
    pub cells: Vec<BaselineCell>,
}

/// `<baselines>/<target>/<suite>.json`.
pub fn path(baselines: &Path, target: &str, suite: &str) -> PathBuf {
    baselines.join(target).join(format!("{suite}.json"))
}

/// Reads a baseline file: `Ok(None)` when there is none. Any other problem
/// (unreadable, not JSON, another format, duplicate cells, the wrong target
/// or suite) is an error naming the file. Never modifies the file.
pub fn read(path: &Path, target: &str, suite: &str) -> Result<Option<Baseline>> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(e).with_context(|| format!("{}: cannot read", path.display())),
    };
    std::str::from_utf8(&bytes)
        .context("not UTF-8 text")
        .and_then(|text| parse(text, target, suite))
        .map(Some)
        .with_context(|| {
            format!(
                "{}: corrupt baseline (fix it, or delete it and run `cargo xtask baseline update`)",
                path.display()
            )
        })
}

fn parse(text: &str, target: &str, suite: &str) -> Result<Baseline> {
    let value: Value = serde_json::from_str(text).context("not JSON")?;
    match value.get("format") {
        Some(Value::Number(n)) if n.as_u64() == Some(FORMAT as u64) => {}
        Some(other) => bail!("format {other}: this xtask reads format {FORMAT}"),
        None => bail!("no `format` field: not a lockmatrix baseline"),
    }
    let b: Baseline = serde_json::from_str(text).context("not a lockmatrix baseline")?;
    if b.target != target || b.suite != suite {
        bail!(
            "it holds target `{}` suite `{}`, expected target `{target}` suite `{suite}`",
            b.target,
            b.suite
        );
    }
    let mut seen = BTreeSet::new();
    for c in &b.cells {
        if !seen.insert(c.key()) {
            bail!(
                "cell {} [{}] {} is listed twice",
                c.bench,
                crate::protocol::case_label(&c.case),
                c.metric
            );
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
    out.push_str("  \"testbed\": {\n");
    out.push_str(&format!("    \"runner\": {},\n", j(&b.testbed.runner)));
    out.push_str(&format!(
        "    \"cpu_model\": {},\n",
        j(&b.testbed.cpu_model)
    ));
    out.push_str(&format!(
        "    \"emulator_version\": {},\n",
        j(&b.testbed.emulator_version)
    ));
    out.push_str(&format!(
        "    \"compiler_version\": {}\n",
        j(&b.testbed.compiler_version)
    ));
    out.push_str("  },\n");
    out.push_str(&format!("  \"commit\": {},\n", j(&b.commit)));
    out.push_str(&format!("  \"date\": {},\n", j(&b.date)));
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
            super::cells::canonical_case(&c.case)
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

/// Compact JSON of one field's value.
fn j<T: Serialize + ?Sized>(v: &T) -> String {
    serde_json::to_string(v).expect("baseline fields serialize")
}

/// Writes `text` to `path` atomically: a temporary file in the same
/// directory, flushed to disk, then renamed over `path`. A reader sees the
/// old file or the new one, never half of one.
pub fn write_atomic(path: &Path, text: &str) -> Result<()> {
    let dir = path
        .parent()
        .with_context(|| format!("{}: no parent directory", path.display()))?;
    std::fs::create_dir_all(dir).with_context(|| format!("creating {}", dir.display()))?;
    let name = path
        .file_name()
        .with_context(|| format!("{}: no file name", path.display()))?
        .to_string_lossy();
    let tmp = dir.join(format!(".{name}.tmp-{}", std::process::id()));
    let result = (|| -> Result<()> {
        let mut f =
            std::fs::File::create(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
        f.write_all(text.as_bytes())
            .and_then(|()| f.sync_all())
            .with_context(|| format!("writing {}", tmp.display()))?;
        std::fs::rename(&tmp, path)
            .with_context(|| format!("renaming {} to {}", tmp.display(), path.display()))
    })();
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
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
                runner: "native".into(),
                cpu_model: "Some \"quoted\" CPU".into(),
                emulator_version: None,
                compiler_version: Some("rustc 1.96.0".into()),
            },
            commit: "abc".into(),
            date: "2026-11-30T02:00:00Z".into(),
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
        let empty = Baseline { cells: vec![], ..b };
        assert_eq!(
            serde_json::from_str::<Baseline>(&to_text(&empty)).unwrap(),
            empty
        );
    }

    #[test]
    fn gate_baseline_read_errors_name_what_is_wrong() {
        let b = sample_baseline();
        let good = to_text(&b);
        assert!(parse(&good, "x86_64", "atomic").is_ok());
        let err = |text: &str| format!("{:#}", parse(text, "x86_64", "atomic").unwrap_err());
        assert!(
            err("{\"format\": 1,").starts_with("not JSON: EOF"),
            "{}",
            err("{")
        );
        assert_eq!(
            err(&good.replace("\"format\": 1", "\"format\": 2")),
            "format 2: this xtask reads format 1"
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
    }

    #[test]
    fn gate_write_atomic_replaces_and_leaves_no_temp_file() {
        let dir =
            std::env::temp_dir().join(format!("lockmatrix-gate-atomic-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let p = dir.join("t").join("s.json");
        write_atomic(&p, "one").unwrap();
        write_atomic(&p, "two").unwrap();
        assert_eq!(std::fs::read_to_string(&p).unwrap(), "two");
        assert_eq!(std::fs::read_dir(dir.join("t")).unwrap().count(), 1);
        std::fs::remove_dir_all(dir).unwrap();
    }
}
