//! Lock events and fairness in the seeds' tables: the suites print each
//! lock's slow-path events as a rate per acquisition (unit
//! `events_per_acquire`, or `waiters_per_acquire` for a queue's depth) and
//! lockhammer's lasom as `fairness_cv`; here they become columns, in the
//! order the suite printed them, so a lock or event added to a suite shows
//! with nothing to change here.

use super::cells;
use crate::protocol::Sample;
use crate::results::SuiteRun;
use serde_json::Value;

/// The units of a lock event's rate.
pub const UNITS: [&str; 2] = ["events_per_acquire", "waiters_per_acquire"];

/// Whether `x` is a lock event's rate.
pub fn is_event(x: &Sample) -> bool {
    UNITS.contains(&x.unit.as_str())
}

/// Whether `x` is a lasom (`fairness_cv`, or a side's `<side>_fairness_cv`).
pub fn is_lasom(x: &Sample) -> bool {
    x.metric.as_str().ends_with("fairness_cv")
}

/// A column's heading: `pending_per_acquire` reads "pending",
/// `reader_fairness_cv` "reader lasom".
pub fn label(metric: &str) -> String {
    let words = if let Some(rate) = metric.strip_suffix("_per_acquire") {
        rate.to_string()
    } else if let Some(side) = metric.strip_suffix("fairness_cv") {
        format!("{side}lasom")
    } else {
        metric.to_string()
    };
    words.replace('_', " ")
}

/// The `(lock, metric)` of every sample of `bench` that `keep` keeps, in
/// the order the suite printed them.
pub fn columns(s: &SuiteRun, bench: &str, keep: impl Fn(&Sample) -> bool) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = Vec::new();
    for x in s.samples.iter().filter(|x| x.bench == bench && keep(x)) {
        let Some(lock) = x.case.get("lock").and_then(Value::as_str) else {
            continue;
        };
        if !out.iter().any(|(l, m)| l == lock && m == x.metric.as_str()) {
            out.push((lock.to_string(), x.metric.to_string()));
        }
    }
    out
}

/// A rate or a lasom as the tables show it: three decimals, and a rate
/// too small for them (a hand-off in ten thousand acquisitions) in
/// scientific notation rather than as 0.000; 0 is 0.
pub fn fmt(v: Option<f64>) -> String {
    match v {
        Some(0.0) => "0".into(),
        Some(x) if x.abs() < 0.0005 => format!("{x:.1e}"),
        _ => cells::fmt(v, 3),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels_are_the_metric_in_words() {
        assert_eq!(label("pending_per_acquire"), "pending");
        assert_eq!(label("waiters_ahead_per_acquire"), "waiters ahead");
        assert_eq!(label("reader_steals_per_acquire"), "reader steals");
        assert_eq!(label("fairness_cv"), "lasom");
        assert_eq!(label("writer_fairness_cv"), "writer lasom");
        assert_eq!(label("total_ticks"), "total ticks");
    }

    #[test]
    fn small_rates_keep_their_digits() {
        assert_eq!(fmt(None), "-");
        assert_eq!(fmt(Some(0.0)), "0");
        assert_eq!(fmt(Some(0.00012)), "1.2e-4");
        assert_eq!(fmt(Some(0.0005)), "0.001");
        assert_eq!(fmt(Some(26.0625)), "26.062");
    }
}
