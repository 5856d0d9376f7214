//! The records a model binary prints (`suites/harness/src/model.rs` writes
//! them), read into types. A line that is not one of them, or a record
//! that contradicts itself, is reported, never guessed at.

use super::error::ModelError;
use crate::name::Name;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One model of one lock, checked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelResult {
    pub suite: Name,
    pub lock: Name,
    /// The model's name, e.g. "2 threads x 2 acquisitions".
    pub model: String,
    /// What a pass shows.
    pub covers: String,
    pub ok: bool,
    /// Executions loom explored.
    pub interleavings: u64,
    /// Loom's preemption bound: a pass shows no bug within it.
    pub preemption_bound: u32,
    /// Time loom took.
    pub secs: f64,
    /// Executions that took each path the model claims to reach.
    #[serde(default)]
    pub reached: BTreeMap<String, u64>,
    /// Loom's panic message, or the model's failed assertion.
    #[serde(default)]
    pub failure: Option<String>,
    /// The failing execution's last steps, then the message's lines.
    #[serde(default)]
    pub trace: Vec<String>,
    /// Taken from the cache (the lock's sources unchanged since it was
    /// checked), not checked by this call.
    #[serde(default, skip_serializing)]
    pub cached: bool,
}

/// A lock that is deliberately not model-checked, and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Unmodelled {
    pub suite: Name,
    pub lock: Name,
    pub why: String,
}

#[derive(Deserialize)]
#[serde(tag = "type", rename_all = "lowercase")]
enum Line {
    Model(ModelResult),
    Unmodelled(Unmodelled),
}

/// What one model binary printed.
#[derive(Debug, Default, PartialEq)]
pub struct Printed {
    pub results: Vec<ModelResult>,
    pub unmodelled: Vec<Unmodelled>,
}

/// Reads the stdout of `suite`'s model binary: every line a record of that
/// suite.
pub fn parse(suite: &str, stdout: &str) -> Result<Printed, ModelError> {
    let mut printed = Printed::default();
    for line in stdout.lines().filter(|l| !l.trim().is_empty()) {
        let bad = |why: String| ModelError::BadOutput {
            suite: suite.to_string(),
            line: line.to_string(),
            why,
        };
        let record: Line = serde_json::from_str(line).map_err(|e| bad(e.to_string()))?;
        let of = match &record {
            Line::Model(m) => &m.suite,
            Line::Unmodelled(u) => &u.suite,
        };
        if of != suite {
            return Err(bad(format!("a record of suite {of:?}")));
        }
        match record {
            Line::Model(m) => {
                check(&m).map_err(|why| bad(why.to_string()))?;
                printed.results.push(m);
            }
            Line::Unmodelled(u) => printed.unmodelled.push(u),
        }
    }
    Ok(printed)
}

/// What a model record must be to be believed.
fn check(m: &ModelResult) -> Result<(), Unbelievable> {
    if m.cached {
        return Err(Unbelievable::Cached);
    }
    if m.ok == m.failure.is_some() {
        return Err(match m.ok {
            true => Unbelievable::OkWithFailure,
            false => Unbelievable::FailedWithoutFailure,
        });
    }
    if m.ok && m.interleavings == 0 {
        return Err(Unbelievable::NothingExplored);
    }
    if !m.secs.is_finite() || m.secs < 0.0 {
        return Err(Unbelievable::Secs);
    }
    if m.ok && m.reached.values().any(|&n| n == 0) {
        return Err(Unbelievable::Unreached);
    }
    Ok(())
}

/// Why a model record is not believed ([`check`]).
#[derive(Debug, thiserror::Error)]
enum Unbelievable {
    #[error("a binary's record cannot come from the cache")]
    Cached,
    #[error("ok with a failure")]
    OkWithFailure,
    #[error("not ok, without a failure")]
    FailedWithoutFailure,
    #[error("ok without exploring any execution")]
    NothingExplored,
    #[error("secs is not a duration")]
    Secs,
    #[error("ok with a path it claims that no execution reached")]
    Unreached,
}

#[cfg(test)]
mod tests {
    use super::*;

    const PASS: &str = r#"{"type":"model","suite":"spinlock","lock":"ticket","model":"2 threads x 2 acquisitions","covers":"mutual exclusion","ok":true,"interleavings":361,"preemption_bound":3,"secs":0.1,"reached":{}}"#;
    const FAIL: &str = r#"{"type":"model","suite":"spinlock","lock":"broken","model":"2 threads x 2 acquisitions","covers":"the control","ok":false,"interleavings":1,"preemption_bound":3,"secs":0.0001,"reached":{},"failure":"Causality violation: Concurrent write accesses to `UnsafeCell`.","trace":["thread 0: lock","thread 1: locked","Causality violation: Concurrent write accesses to `UnsafeCell`."]}"#;
    const UNMODELLED: &str =
        r#"{"type":"unmodelled","suite":"spinlock","lock":"std_mutex","why":"std's"}"#;

    #[test]
    fn reads_passes_failures_and_unmodelled_locks() {
        let p = parse("spinlock", &format!("{PASS}\n{FAIL}\n\n{UNMODELLED}\n")).unwrap();
        assert_eq!(p.results.len(), 2);
        let (pass, fail) = (&p.results[0], &p.results[1]);
        assert!(pass.ok && pass.failure.is_none() && !pass.cached);
        assert_eq!(
            (
                pass.lock.as_str(),
                pass.interleavings,
                pass.preemption_bound
            ),
            ("ticket", 361, 3)
        );
        assert!(!fail.ok);
        assert!(fail
            .failure
            .as_deref()
            .unwrap()
            .starts_with("Causality violation"));
        assert_eq!(fail.trace.len(), 3);
        assert_eq!(
            p.unmodelled,
            [Unmodelled {
                suite: "spinlock".into(),
                lock: "std_mutex".into(),
                why: "std's".into()
            }]
        );
    }

    fn why(stdout: &str) -> String {
        match parse("spinlock", stdout) {
            Err(ModelError::BadOutput { why, .. }) => why,
            other => panic!("not refused: {other:?}"),
        }
    }

    #[test]
    fn refuses_what_is_not_a_believable_record() {
        // Not JSON, another record type, an unknown field, a missing one.
        assert!(why("thread 'main' panicked").contains("expected"));
        assert!(why(r#"{"type":"sample","suite":"spinlock"}"#).contains("unknown variant"));
        assert!(why(&PASS.replace(r#""reached":{}"#, r#""extra":1"#)).contains("unknown field"));
        assert!(why(&PASS.replace(r#""ok":true,"#, "")).contains("missing field"));
        // Records that contradict themselves.
        assert_eq!(
            why(&PASS.replace(r#""ok":true"#, r#""ok":false"#)),
            "not ok, without a failure"
        );
        assert_eq!(
            why(&PASS.replace(r#""reached":{}"#, r#""reached":{},"failure":"x""#)),
            "ok with a failure"
        );
        assert_eq!(
            why(&PASS.replace(r#""interleavings":361"#, r#""interleavings":0"#)),
            "ok without exploring any execution"
        );
        assert_eq!(
            why(&PASS.replace(r#""reached":{}"#, r#""reached":{"queue":0}"#)),
            "ok with a path it claims that no execution reached"
        );
        assert_eq!(
            why(&PASS.replace(r#""reached":{}"#, r#""reached":{},"cached":true"#)),
            "a binary's record cannot come from the cache"
        );
        // Another suite's record.
        assert!(why(&PASS.replace("spinlock", "rwsem")).contains("suite \"rwsem\""));
    }

    #[test]
    fn nothing_printed_is_nothing_checked() {
        assert_eq!(parse("rwsem", "").unwrap(), Printed::default());
    }
}
