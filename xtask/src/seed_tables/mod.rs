//! `cargo xtask report --tables`: the seeds' tables, in the shapes users
//! know from the mailing-list threads in `seeds/`, one block per target.

mod seed000;
mod seed001;
mod seed002;
mod seed003;

use crate::protocol::Sample;
use crate::results::{Run, SuiteRun};
use crate::table::median;
use serde_json::Value;

/// The median over rounds of `metric` in the cell whose case has all of
/// `case`'s key/value pairs, converted to nanoseconds when it is in ticks.
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
        .filter_map(|x| to_ns(x, hz))
        .collect();
    median(&mut values)
}

fn to_ns(s: &Sample, hz: f64) -> Option<f64> {
    let v = s.value?;
    Some(if s.unit.ends_with("_ticks") && hz > 0.0 {
        v * 1e9 / hz
    } else {
        v
    })
}

pub fn fmt(v: Option<f64>, decimals: usize) -> String {
    v.map_or("-".into(), |v| format!("{v:.decimals$}"))
}

/// Every seed table the run has data for.
pub fn render(run: &Run) -> String {
    let mut out = String::new();
    out.push_str(&seed000::render(run));
    out.push_str(&seed001::render(run));
    out.push_str(&seed003::render(run));
    out.push_str(&seed002::render(run));
    out
}
