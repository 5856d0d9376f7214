//! A suite run's cells: the per-round values of one `(bench, case, metric)`,
//! keyed the same way in a run and in a baseline file.

use crate::name::Name;
use crate::protocol::{Better, Kind, Sample};
use crate::strictness::Contention;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

/// A cell within one target and suite. Orders as baseline files list cells:
/// by bench, canonical case, metric.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct CellKey {
    pub bench: Name,
    /// [`canonical_case`] of the case.
    pub case: String,
    pub metric: Name,
}

impl CellKey {
    pub fn new(bench: &Name, case: &Map<String, Value>, metric: &Name) -> CellKey {
        CellKey {
            bench: bench.clone(),
            case: canonical_case(case),
            metric: metric.clone(),
        }
    }
}

/// One cell of a suite run.
#[derive(Debug, Clone, PartialEq)]
pub struct RunCell {
    pub key: CellKey,
    pub case: Map<String, Value>,
    pub unit: Name,
    pub better: Better,
    /// What its case says about contention, typed once.
    pub contention: Contention,
    /// One value per round, in round order; `None` where the suite could not
    /// compute a finite value.
    pub samples: Vec<Option<f64>>,
    /// The round number of each value.
    pub rounds: Vec<u32>,
}

/// The canonical text of a case: compact JSON with the keys of every map
/// sorted, whatever order the suite printed them in. Written from the
/// borrowed value: every evaluation of the gate keys every sample by it,
/// and cloning each case into a sorted copy first was a third of
/// `validate-gate --every-cell`'s time.
pub fn canonical_case(case: &Map<String, Value>) -> String {
    let mut out = String::new();
    write_object(case, &mut out);
    out
}

fn write_object(m: &Map<String, Value>, out: &mut String) {
    let mut keys: Vec<&String> = m.keys().collect();
    keys.sort();
    out.push('{');
    for (i, k) in keys.into_iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        out.push_str(&Value::String(k.clone()).to_string());
        out.push(':');
        write_canonical(&m[k], out);
    }
    out.push('}');
}

fn write_canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => write_object(m, out),
        Value::Array(a) => {
            out.push('[');
            for (i, x) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_canonical(x, out);
            }
            out.push(']');
        }
        scalar => out.push_str(&scalar.to_string()),
    }
}

impl RunCell {
    pub fn kind(&self) -> Kind {
        Kind::of(&self.unit)
    }
}

/// The rounds a suite's timings were recorded over, from each cell's unit
/// and number of values: the most values any timing cell has (a cell may
/// have fewer, where a round gave it none).
pub fn timing_rounds<'a>(cells: impl IntoIterator<Item = (&'a str, usize)>) -> usize {
    (cells.into_iter())
        .filter(|(unit, _)| !Kind::of(unit).exact())
        .map(|(_, values)| values)
        .max()
        .unwrap_or(0)
}

/// Groups a suite run's samples into cells, sorted by [`CellKey`], each
/// cell's values in round order.
pub fn collect(samples: &[Sample]) -> Vec<RunCell> {
    /// A cell, and its values with their round numbers.
    type Gathering = (RunCell, Vec<(u32, Option<f64>)>);
    let mut cells: BTreeMap<CellKey, Gathering> = BTreeMap::new();
    for s in samples {
        let key = CellKey::new(&s.bench, &s.case, &s.metric);
        let entry = cells.entry(key.clone()).or_insert_with(|| {
            let cell = RunCell {
                key,
                case: s.case.clone(),
                unit: s.unit.clone(),
                better: s.better,
                contention: Contention::of(&s.case),
                samples: Vec::new(),
                rounds: Vec::new(),
            };
            (cell, Vec::new())
        });
        entry.1.push((s.round, s.value));
    }
    cells
        .into_values()
        .map(|(mut cell, mut rounds)| {
            rounds.sort_by_key(|(round, _)| *round);
            cell.rounds = rounds.iter().map(|(r, _)| *r).collect();
            cell.samples = rounds.into_iter().map(|(_, v)| v).collect();
            cell
        })
        .collect()
}

/// The values as the statistics compare them: positive, finite, lower is
/// better (`1 / value` for higher-is-better metrics). `None` when a value is
/// missing, not positive or not finite: such a cell cannot be compared on a
/// log scale.
pub fn lower_is_better(samples: &[Option<f64>], better: Better) -> Option<Vec<f64>> {
    if samples.is_empty() {
        return None;
    }
    samples.iter().map(|&v| cost(v, better)).collect()
}

/// One value as a cost: `None` when missing, not positive or not finite.
fn cost(value: Option<f64>, better: Better) -> Option<f64> {
    match value {
        Some(x) if x.is_finite() && x > 0.0 => Some(better.as_cost(x)),
        _ => None,
    }
}

/// The pairs of two sides measured round for round (`--against`): the
/// values of the rounds both have, matched by round number, as costs
/// ([`lower_is_better`]). A round where either value is missing or not
/// positive drops that pair, not the cell. Returns `(base, head, dropped)`.
pub fn pairs(
    base: (&[u32], &[Option<f64>], Better),
    head: (&[u32], &[Option<f64>], Better),
) -> (Vec<f64>, Vec<f64>, usize) {
    let by_round: BTreeMap<u32, Option<f64>> =
        base.0.iter().copied().zip(base.1.iter().copied()).collect();
    let (mut b, mut h, mut dropped) = (Vec::new(), Vec::new(), 0);
    for (round, hv) in head.0.iter().zip(head.1) {
        let Some(&bv) = by_round.get(round) else {
            continue;
        };
        match (cost(bv, base.2), cost(*hv, head.2)) {
            (Some(x), Some(y)) => {
                b.push(x);
                h.push(y);
            }
            _ => dropped += 1,
        }
    }
    (b, h, dropped)
}

/// Count, median, min and max of a cell's values (missing values skipped).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Summary {
    pub n: usize,
    pub median: Option<f64>,
    pub min: Option<f64>,
    pub max: Option<f64>,
}

impl Summary {
    pub fn of(samples: &[Option<f64>]) -> Summary {
        let mut v: Vec<f64> = samples
            .iter()
            .flatten()
            .copied()
            .filter(|x| x.is_finite())
            .collect();
        v.sort_by(f64::total_cmp);
        let n = v.len();
        let median = match n {
            0 => None,
            _ if n % 2 == 1 => Some(v[n / 2]),
            _ => Some((v[n / 2 - 1] + v[n / 2]) / 2.0),
        };
        Summary {
            n,
            median,
            min: v.first().copied(),
            max: v.last().copied(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairs_match_by_round_and_a_bad_value_drops_only_its_pair() {
        let base = ([0, 1, 2, 3], [Some(10.0), Some(11.0), None, Some(12.0)]);
        // Head lacks round 1 and has a round base never ran.
        let head = (
            [0, 2, 3, 4],
            [Some(20.0), Some(21.0), Some(22.0), Some(23.0)],
        );
        let (b, h, dropped) = pairs(
            (&base.0, &base.1, Better::Lower),
            (&head.0, &head.1, Better::Lower),
        );
        assert_eq!((b, h, dropped), (vec![10.0, 12.0], vec![20.0, 22.0], 1));
        // Higher is better: compared as costs.
        let (b, _, _) = pairs(
            (&[0], &[Some(4.0)], Better::Higher),
            (&[0], &[Some(2.0)], Better::Higher),
        );
        assert_eq!(b, vec![0.25]);
    }
    use serde_json::json;

    fn sample(bench: &str, case: Value, metric: &str, round: u32, value: Option<f64>) -> Sample {
        Sample {
            suite: "s".into(),
            bench: bench.into(),
            case: case.as_object().unwrap().clone(),
            metric: metric.into(),
            unit: "ns".into(),
            better: Better::Lower,
            gating: true,
            round,
            value,
        }
    }

    #[test]
    fn gate_cells_group_by_bench_case_metric_in_round_order() {
        let samples = vec![
            sample("b", json!({"threads": 2, "lock": "x"}), "m", 1, Some(2.0)),
            sample("a", json!({}), "m", 0, Some(5.0)),
            sample("b", json!({"lock": "x", "threads": 2}), "m", 0, Some(1.0)),
            sample("b", json!({"lock": "x", "threads": 2}), "m", 2, None),
        ];
        let cells = collect(&samples);
        assert_eq!(cells.len(), 2);
        assert_eq!(cells[0].key.bench, "a");
        assert_eq!(cells[1].key.case, r#"{"lock":"x","threads":2}"#);
        assert_eq!(cells[1].samples, [Some(1.0), Some(2.0), None]);
    }

    #[test]
    fn gate_canonical_case_sorts_nested_keys() {
        let a = json!({"z": {"b": 1, "a": [ {"y": 1, "x": 2} ]}, "a": "q"});
        assert_eq!(
            canonical_case(a.as_object().unwrap()),
            r#"{"a":"q","z":{"a":[{"x":2,"y":1}],"b":1}}"#
        );
        // Keys and strings escaped as JSON escapes them; numbers as
        // serde_json prints them.
        let b = json!({"k\"ey": "a\nb", "n": 1.5, "t": true, "u": null, "e": []});
        assert_eq!(
            canonical_case(b.as_object().unwrap()),
            r#"{"e":[],"k\"ey":"a\nb","n":1.5,"t":true,"u":null}"#
        );
    }

    #[test]
    fn gate_values_for_the_statistics() {
        assert_eq!(
            lower_is_better(&[Some(2.0), Some(4.0)], Better::Higher),
            Some(vec![0.5, 0.25])
        );
        assert_eq!(
            lower_is_better(&[Some(2.0), Some(0.0)], Better::Lower),
            None
        );
        assert_eq!(lower_is_better(&[Some(2.0), None], Better::Lower), None);
        assert_eq!(lower_is_better(&[Some(-1.0)], Better::Lower), None);
        assert_eq!(lower_is_better(&[], Better::Lower), None);
    }

    #[test]
    fn gate_summary() {
        let s = Summary::of(&[Some(3.0), None, Some(1.0), Some(2.0), Some(10.0)]);
        assert_eq!(
            s,
            Summary {
                n: 4,
                median: Some(2.5),
                min: Some(1.0),
                max: Some(10.0)
            }
        );
        assert_eq!(Summary::of(&[None]).median, None);
    }
}
