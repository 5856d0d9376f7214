//! Reading one number of a run for a seed's table, and showing it.

use crate::protocol::Sample;
use crate::report::table::{median, to_ns};
use crate::results::SuiteRun;
use serde_json::Value;

/// The median over rounds of `metric` in the cell whose case has all of
/// `case`'s key/value pairs, converted to nanoseconds when it is in ticks
/// (other units, such as ops and counts, as they are).
pub fn cell(s: &SuiteRun, bench: &str, case: &[(&str, Value)], metric: &str) -> Option<f64> {
    let hz = s.env.as_ref().map_or(0.0, |e| e.timer_hz);
    let matches = |x: &Sample| {
        x.bench == bench
            && x.metric == metric
            && case.iter().all(|(k, v)| x.case.get(*k) == Some(v))
    };
    let mut values: Vec<f64> = s
        .samples
        .iter()
        .filter(|x| matches(x))
        .filter_map(|x| to_ns(x, hz).or(x.value))
        .collect();
    median(&mut values)
}

pub fn fmt(v: Option<f64>, decimals: usize) -> String {
    v.map_or("-".into(), |v| format!("{v:.decimals$}"))
}
