//! How a target or a suite run ended: ok, not run (and why), or failed,
//! with a typed [`Failure`] that says exactly how.

use crate::name::Name;
use crate::protocol::{case_label, Check, Parsed};
use crate::runner::{signal_name, Exit, Outcome};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt;

/// The status of a target or suite run. In run.json it is
/// `{"state": "pending"}`, `{"state": "ok"}`, `{"state": "not_run",
/// "reason": ...}` or `{"state": "failed", "reason": ..., "failure":
/// {"kind": ..., ...}}`, where `reason` is the failure as one line of text.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "StatusJson", into = "StatusJson")]
pub enum Status {
    /// Not finished yet: a target is pending until every suite of it has
    /// run, so a run cut short never shows a target as ok.
    Pending,
    Ok,
    Failed(Failure),
    NotRun(String),
}

/// Why a target or one of its suites failed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Failure {
    /// A toolchain, linker or emulator is missing.
    SetUp { missing: String },
    /// The suites did not build (the first error, and cargo's log).
    Build { error: String, log: Option<String> },
    /// The ssh host could not be reached, or refused a step.
    Ssh { message: String },
    /// The suite binary could not be started here.
    Start { message: String },
    /// Killed by a signal.
    Crashed { signal: i32 },
    /// Killed after the timeout.
    Hung { timeout_secs: u64 },
    /// Killed for printing more than `limit_mib` MiB.
    Flooded { limit_mib: u64 },
    /// A line of its output is not the protocol.
    Protocol {
        line: usize,
        text: String,
        why: String,
    },
    /// A correctness check failed (the first, and how many more).
    Check {
        name: Name,
        bench: Name,
        case: String,
        details: Value,
        more: usize,
    },
    /// A non-zero exit without a failed check, with stderr's last line.
    Exit { code: i32, stderr: String },
    /// It printed no `env` record, or no sample.
    Silent { missing: String },
    /// Some of a target's suites failed.
    Suites { suites: Vec<SuiteFailure> },
    /// A failure recorded by a lockmatrix older than typed failures (run
    /// format 1), as its text.
    Other { reason: String },
}

/// One suite's failure within a target's.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SuiteFailure {
    pub suite: Name,
    pub failure: Failure,
}

impl From<&crate::build::BuildError> for Failure {
    fn from(e: &crate::build::BuildError) -> Failure {
        let (error, log) = e.error_and_log();
        Failure::Build { error, log }
    }
}

impl fmt::Display for Failure {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Failure::SetUp { missing } => write!(f, "set-up: {missing}"),
            Failure::Build {
                error,
                log: Some(log),
            } => write!(f, "build failed: {error} (log: {log})"),
            Failure::Build { error, log: None } => write!(f, "build failed: {error}"),
            Failure::Ssh { message } => write!(f, "ssh: {message}"),
            Failure::Start { message } => write!(f, "{message}"),
            Failure::Crashed { signal } => {
                write!(f, "crashed: signal {signal} ({})", signal_name(*signal))
            }
            Failure::Hung { timeout_secs } => {
                write!(f, "hung: killed after the {timeout_secs}s timeout")
            }
            Failure::Flooded { limit_mib } => {
                write!(f, "killed for printing more than {limit_mib} MiB")
            }
            Failure::Protocol { line, text, why } => {
                write!(f, "bad output on line {line}: `{text}`: {why}")
            }
            Failure::Check {
                name,
                bench,
                case,
                details,
                more,
            } => {
                write!(f, "check {name} failed in {bench} [{case}]: {details}")?;
                if *more > 0 {
                    write!(f, " (+{more} more)")?;
                }
                Ok(())
            }
            Failure::Exit { code, stderr } => write!(f, "exit status {code}: {stderr}"),
            Failure::Silent { missing } => write!(f, "no {missing} in the output"),
            Failure::Suites { suites } => {
                let parts: Vec<String> = suites
                    .iter()
                    .map(|s| format!("{}: {}", s.suite, s.failure))
                    .collect();
                f.write_str(&parts.join("; "))
            }
            Failure::Other { reason } => f.write_str(reason),
        }
    }
}

impl Status {
    /// The status as one line, whatever its reason holds: a reason read
    /// from a run (`"x\n## FAKE PASS"`) never starts a line of its own
    /// ([`crate::escape::one_line`]).
    pub fn label(&self) -> String {
        let line = |s: String| crate::escape::one_line(&s).into_owned();
        match self {
            Status::Pending => "not finished".into(),
            Status::Ok => "ok".into(),
            Status::Failed(why) => line(format!("failed: {why}")),
            Status::NotRun(why) => line(format!("not run: {why}")),
        }
    }
}

/// Status as run.json spells it.
#[derive(Serialize, Deserialize)]
struct StatusJson {
    state: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    failure: Option<Failure>,
}

impl From<Status> for StatusJson {
    fn from(s: Status) -> StatusJson {
        let (state, reason, failure) = match s {
            Status::Pending => ("pending", None, None),
            Status::Ok => ("ok", None, None),
            Status::NotRun(why) => ("not_run", Some(why), None),
            Status::Failed(f) => ("failed", Some(f.to_string()), Some(f)),
        };
        StatusJson {
            state: state.into(),
            reason,
            failure,
        }
    }
}

/// A status whose `state` is none of the four.
#[derive(Debug)]
pub struct UnknownState(String);

impl fmt::Display for UnknownState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "status `{}`: expected `pending`, `ok`, `failed` or `not_run`",
            self.0
        )
    }
}

impl TryFrom<StatusJson> for Status {
    type Error = UnknownState;

    fn try_from(j: StatusJson) -> Result<Status, UnknownState> {
        let reason = || j.reason.clone().unwrap_or_default();
        match j.state.as_str() {
            "pending" => Ok(Status::Pending),
            "ok" => Ok(Status::Ok),
            "not_run" => Ok(Status::NotRun(reason())),
            "failed" => Ok(Status::Failed(
                j.failure
                    .clone()
                    .unwrap_or(Failure::Other { reason: reason() }),
            )),
            other => Err(UnknownState(other.to_string())),
        }
    }
}

/// Decides a suite run's status from how it ended and what it printed.
pub fn judge(outcome: &Outcome, parsed: &Parsed, timeout_secs: u64) -> Status {
    let failed = |f| Status::Failed(f);
    match outcome.exit {
        Exit::TimedOut => return failed(Failure::Hung { timeout_secs }),
        Exit::Flooded => {
            return failed(Failure::Flooded {
                limit_mib: crate::file::OUTPUT_LIMIT >> 20,
            })
        }
        Exit::Signal(signal) => return failed(Failure::Crashed { signal }),
        Exit::Code(_) => {}
    }
    if let Some((line, text, why)) = parsed.bad_lines.first() {
        return failed(Failure::Protocol {
            line: *line,
            text: text.chars().take(120).collect(),
            why: why.clone(),
        });
    }
    let checks: Vec<&Check> = parsed.checks.iter().filter(|c| !c.ok).collect();
    if let Some(c) = checks.first() {
        return failed(Failure::Check {
            name: c.name.clone(),
            bench: c.bench.clone(),
            case: case_label(&c.case),
            details: c.details.clone(),
            more: checks.len() - 1,
        });
    }
    if let Exit::Code(code) = outcome.exit {
        if code != 0 {
            let last = outcome.stderr.lines().rev().find(|l| !l.trim().is_empty());
            return failed(Failure::Exit {
                code,
                stderr: last.unwrap_or("").trim().to_string(),
            });
        }
    }
    if parsed.env.is_none() {
        return failed(Failure::Silent {
            missing: "env record".into(),
        });
    }
    if parsed.samples.is_empty() {
        return failed(Failure::Silent {
            missing: "samples".into(),
        });
    }
    Status::Ok
}
