//! `cargo xtask report --bmf FILE`: a run in Bencher Metric Format, the
//! JSON `bencher run --adapter json --file FILE` reads:
//! `{"<benchmark>": {"<measure>": {"value": x, "lower_value": lo,
//! "upper_value": hi}}}`.
//!
//! A benchmark is one `target/suite/bench/case` (the case as `key=value`
//! pairs joined by `,`), a measure one metric of it. Times are converted to
//! nanoseconds and their measure renamed to say so (`ticks_per_acquire` ->
//! `ns_per_acquire`, `total_ticks` -> `total_ns`), since Bencher compares
//! a measure's values across reports and timer ticks differ per target.
//! `value` is the median over the rounds, `lower_value` and `upper_value`
//! the smallest and largest round: the spread, not a confidence interval.

use crate::cells;
use crate::protocol::Kind;
use crate::report::table::value_ns;
use crate::results::Run;
use serde_json::{Map, Value};

/// Bencher's limits: a benchmark name up to 1024 characters, a measure
/// name or slug up to 64.
pub const MAX_BENCHMARK: usize = 1024;
pub const MAX_MEASURE: usize = 64;

/// The measure's name: `ticks` becomes `ns` for converted times.
fn measure(metric: &str, converted: bool) -> String {
    if converted {
        metric.replace("ticks", "ns")
    } else {
        metric.to_string()
    }
}

/// Whether `head`, the first bytes of a file, is a Bencher Metric Format
/// file as [`export`] writes it (pretty JSON whose first key is a
/// `target/suite/bench/case` benchmark): the test that lets a report
/// replace it, made without reading the whole file.
pub fn looks_written(head: &str) -> bool {
    let Some(rest) = head.strip_prefix("{\n  \"") else {
        return head.trim() == "{}";
    };
    let Some(end) = rest.find('"') else {
        return false;
    };
    rest[..end].matches('/').count() >= 3 && rest[end..].starts_with("\": {\n    \"")
}

/// The run's every cell with at least one finite value, as BMF.
pub fn export(run: &Run) -> Value {
    let mut out = Map::new();
    for t in &run.targets {
        for s in &t.suites {
            let hz = s.env.as_ref().map_or(0.0, |e| e.timer_hz);
            for c in cells::collect(&s.samples) {
                let converted = c.kind() == Kind::Time;
                let mut v: Vec<f64> = c
                    .samples
                    .iter()
                    .flatten()
                    .filter_map(|x| {
                        if converted {
                            value_ns(&c.unit, *x, hz)
                        } else {
                            Some(*x)
                        }
                    })
                    .filter(|v| v.is_finite())
                    .collect();
                let Some(median) = crate::report::table::median(&mut v) else {
                    continue;
                };
                let case: Vec<String> = c
                    .case
                    .iter()
                    .map(|(k, v)| match v {
                        Value::String(s) => format!("{k}={s}"),
                        v => format!("{k}={v}"),
                    })
                    .collect();
                let mut name = format!("{}/{}/{}", t.name, s.suite, c.key.bench);
                if !case.is_empty() {
                    name.push('/');
                    name.push_str(&case.join(","));
                }
                let name: String = name.chars().take(MAX_BENCHMARK).collect();
                let mut metric = Map::new();
                metric.insert("value".into(), median.into());
                metric.insert("lower_value".into(), v[0].into());
                metric.insert("upper_value".into(), v[v.len() - 1].into());
                let m: String = measure(&c.key.metric, converted)
                    .chars()
                    .take(MAX_MEASURE)
                    .collect();
                out.entry(name)
                    .or_insert_with(|| Value::Object(Map::new()))
                    .as_object_mut()
                    .expect("benchmarks are objects")
                    .insert(m, Value::Object(metric));
            }
        }
    }
    Value::Object(out)
}

/// Checks `doc` against Bencher's published BMF JSON schema, written out
/// here (no network): an object whose keys (benchmarks, `.+`) map to
/// objects whose keys (measures, `.+`) map to objects with a required
/// numeric `value` and optional numeric `lower_value` and `upper_value`.
/// Also the documented name lengths, and what Bencher needs to plot a
/// metric: finite numbers, with `lower_value <= value <= upper_value`.
pub fn check(doc: &Value) -> Result<(), NotBmf> {
    let bad = |what: String| NotBmf { what };
    let benchmarks = doc
        .as_object()
        .ok_or_else(|| bad("the document is not a JSON object".into()))?;
    for (b, measures) in benchmarks {
        if b.is_empty() || b.chars().count() > MAX_BENCHMARK {
            return Err(bad(format!(
                "benchmark name `{b}`: expected 1 to {MAX_BENCHMARK} characters"
            )));
        }
        let measures = measures
            .as_object()
            .ok_or_else(|| bad(format!("{b}: expected an object of measures")))?;
        for (m, metric) in measures {
            if m.is_empty() || m.chars().count() > MAX_MEASURE {
                return Err(bad(format!(
                    "{b}: measure `{m}`: expected 1 to {MAX_MEASURE} characters"
                )));
            }
            let metric = metric
                .as_object()
                .ok_or_else(|| bad(format!("{b} {m}: expected an object with `value`")))?;
            let num = |k: &str| -> Result<Option<f64>, NotBmf> {
                match metric.get(k) {
                    None => Ok(None),
                    Some(Value::Number(n)) => n
                        .as_f64()
                        .filter(|x| x.is_finite())
                        .map(Some)
                        .ok_or_else(|| bad(format!("{b} {m}: `{k}` is not a finite number"))),
                    Some(other) => Err(bad(format!("{b} {m}: `{k}` is {other}, not a number"))),
                }
            };
            let value =
                num("value")?.ok_or_else(|| bad(format!("{b} {m}: `value` is required")))?;
            let (lo, hi) = (num("lower_value")?, num("upper_value")?);
            if lo.is_some_and(|l| l > value) || hi.is_some_and(|h| h < value) {
                return Err(bad(format!(
                    "{b} {m}: expected lower_value <= value <= upper_value"
                )));
            }
        }
    }
    Ok(())
}

/// Where a document breaks Bencher's BMF schema, and how.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotBmf {
    pub what: String,
}

impl std::fmt::Display for NotBmf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.what)
    }
}

impl std::error::Error for NotBmf {}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_documented_example_passes_and_each_broken_shape_fails() {
        // The shape of the example on Bencher's BMF reference page.
        let example = json!({
            "benchmark_name": {
                "latency": {"value": 88.0, "lower_value": 87.42, "upper_value": 88.88},
                "throughput": {"value": 5.55, "lower_value": 3.15, "upper_value": 6.30}
            },
            "/bin/sh -c ./my_build_script.sh": {"build-time": {"value": 87.0}},
            "my_binary": {"file-size": {"value": 42.0}}
        });
        assert!(check(&example).is_ok());
        for (bad, why) in [
            (json!([]), "not a JSON object"),
            (json!({"b": 1}), "expected an object of measures"),
            (json!({"b": {"m": 3}}), "expected an object with `value`"),
            (
                json!({"b": {"m": {"lower_value": 1}}}),
                "`value` is required",
            ),
            (json!({"b": {"m": {"value": "3"}}}), "not a number"),
            (
                json!({"b": {"m": {"value": 1, "upper_value": 0.5}}}),
                "lower_value <= value",
            ),
            (json!({"": {"m": {"value": 1}}}), "benchmark name"),
            (json!({"b": {"x".repeat(65): {"value": 1}}}), "measure"),
        ] {
            let err = check(&bad).unwrap_err().to_string();
            assert!(err.contains(why), "{bad}: {err}");
        }
    }

    #[test]
    fn its_own_files_are_told_from_their_first_bytes() {
        let text =
            serde_json::to_string_pretty(&export(&crate::report::tests::sample_run())).unwrap();
        assert!(looks_written(&text[..text.len().min(4096)]));
        assert!(looks_written(&text[..40]) || text.find("\": {").unwrap() > 40);
        assert!(!looks_written("{\n  \"name\": {\n    \"x\": 1}}"));
        assert!(!looks_written("my notes"));
        assert!(!looks_written(""));
    }

    #[test]
    fn a_run_exports_medians_with_their_spread_in_ns() {
        let run = crate::report::tests::sample_run();
        let doc = export(&run);
        assert_eq!(check(&doc), Ok(()));
        // ticks at 1 GHz... the sample run's timer is 2e9 Hz: 10 ticks = 5 ns.
        let m = &doc["x86_64/spinlock/lock_unlock/lock=ticket,threads=1"]["ns_per_acquire"];
        assert_eq!(m["value"], json!(5.0));
        assert_eq!(m["lower_value"], json!(4.0));
        assert_eq!(m["upper_value"], json!(6.0));
        let i = &doc["x86_64/spinlock/lock_unlock/lock=ticket,threads=1"]["insns_per_op"];
        assert_eq!(i["value"], json!(21.0));
        assert!(doc
            .as_object()
            .unwrap()
            .keys()
            .all(|k| !k.contains("ticks")));
    }
}
