//! A suite run's ordering footprints as a baseline stores them and the
//! gate compares them: each operation's whole code and each counted
//! cell's executed path.

use crate::cells::CellKey;
use crate::footprint::{self, Entry, Isa};
use crate::name::Name;
use crate::protocol::INSNS_PER_OP;
use crate::results::SuiteRun;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// One operation's static footprint, as baselines store it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpFootprint {
    pub unit: Name,
    pub op: Name,
    pub entries: Vec<Entry<u32>>,
}

/// One counted cell's executed footprint, per op.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CellFootprint {
    pub bench: Name,
    #[serde(deserialize_with = "crate::protocol::checked_case")]
    pub case: Map<String, Value>,
    pub entries: Vec<Entry<f64>>,
}

impl CellFootprint {
    /// The count cell (`insns_per_op`) it belongs to.
    pub fn key(&self) -> CellKey {
        CellKey::new(&self.bench, &self.case, &crate::name::known(INSNS_PER_OP))
    }

    /// The lock or primitive the cell measures: its case's `lock` or `op`,
    /// else its bench (`contended_add`).
    pub fn unit(&self) -> String {
        ["lock", "op"]
            .iter()
            .find_map(|k| self.case.get(*k).and_then(Value::as_str))
            .map_or_else(|| self.bench.to_string(), str::to_string)
    }
}

/// One suite run's ordering footprints, as a baseline stores them and the
/// gate compares them.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Footprints {
    /// Each operation's whole code, sorted by (unit, op).
    #[serde(rename = "static")]
    pub ops: Vec<OpFootprint>,
    /// Each counted cell's executed path, sorted by cell.
    pub executed: Vec<CellFootprint>,
}

impl Footprints {
    /// What `run` recorded on `triple`: `None` when it has neither view
    /// (an older run, a suite without probes, a target without counts
    /// whose objdump failed).
    pub fn of(triple: &str, run: &SuiteRun) -> Option<Footprints> {
        let mut ops: Vec<OpFootprint> = run
            .static_footprint
            .iter()
            .map(|s| OpFootprint {
                unit: s.unit.clone(),
                op: s.op.clone(),
                entries: s.footprint.entries.clone(),
            })
            .collect();
        ops.sort_by(|a, b| (&a.unit, &a.op).cmp(&(&b.unit, &b.op)));
        // Every round executes the same path (counts are exact): the
        // first round's record stands for the cell.
        let mut executed: BTreeMap<CellKey, CellFootprint> = BTreeMap::new();
        if let Some(isa) = Isa::from_triple(triple) {
            let mut records: Vec<_> = run.executed.iter().collect();
            records.sort_by_key(|e| e.round);
            for e in records {
                let cell = CellFootprint {
                    bench: e.bench.clone(),
                    case: e.case.clone(),
                    entries: footprint::executed(isa, e).entries,
                };
                executed.entry(cell.key()).or_insert(cell);
            }
        }
        if ops.is_empty() && executed.is_empty() {
            return None;
        }
        Some(Footprints {
            ops,
            executed: executed.into_values().collect(),
        })
    }
}
