//! The gate's report sized for a person at a terminal: what `matrix`
//! prints by default. Only the findings (failed checks, problems,
//! regressions, unacknowledged ordering changes, violated models, races,
//! inconclusive timing cells), one line each; what could not be compared,
//! one line per cause naming only the fields that differ; then what the
//! verdict rests on and the verdict. Every line fits [`WIDTH`]
//! characters; the full report is `cargo xtask gate` (and the HTML page).

use super::evaluate::{CellReport, GateReport, Verdict};
use super::verdict::Outcome;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// The widest line the brief report prints.
pub const WIDTH: usize = 160;

/// Marks a line that belongs to the finding before it (what reproduces
/// it), shown under it without the kind's name.
const AFTER: &str = "\u{0}";

/// Findings of one kind shown before "and N more".
const SHOWN: usize = 12;

impl GateReport {
    /// The report for a terminal, each line at most [`WIDTH`] characters.
    pub fn brief(&self) -> String {
        let mut lines: Vec<String> = Vec::new();
        let findings = self.findings();
        if findings.is_empty() {
            lines.push("findings: none".into());
        } else {
            lines.push(format!("FINDINGS ({})", findings.len()));
            lines.extend(findings.into_iter().map(|f| format!("  {f}")));
        }
        let incomparable = self.incomparable_causes();
        if !incomparable.is_empty() {
            lines.push("INCOMPARABLE (shown in full by `cargo xtask gate`, never fails)".into());
            lines.extend(incomparable.into_iter().map(|c| format!("  {c}")));
        }
        for r in &self.recounted {
            lines.push(format!(
                "counts: baseline {} recounted with {}: {} counts and {} footprints compared",
                crate::escape::prefix(&r.commit, 12),
                r.counted_with,
                r.counts,
                r.footprints
            ));
        }
        lines.push(self.timing.line());
        lines.push(self.models.line());
        if self.miri.ran {
            lines.push(self.miri.line());
        }
        if self.contention.ran {
            lines.push(self.contention.line());
        }
        // The verdict as the full report says it (the crate's changes
        // first), wrapped; what was not gated with its causes cut to the
        // fields that differ, and what would gate it.
        lines.extend(self.verdict_head().lines().flat_map(wrap));
        if self.outcome() == Outcome::NotGated {
            let reasons: Vec<String> = self.not_gated().iter().map(|w| shorten_causes(w)).collect();
            lines.extend(wrap(&format!("  not gated: {}", reasons.join("; "))));
            let advice = self.advice();
            if !advice.is_empty() {
                lines.extend(wrap(&format!("  to gate here, {}", advice.join("; "))));
            }
            lines.push("  (--require-gate makes this exit 1)".into());
        }
        let mut out = String::new();
        for l in lines {
            let _ = writeln!(out, "{}", fit(&l));
        }
        out
    }

    /// Every finding, one short line each, most serious first.
    fn findings(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut kind = |name: &str, items: Vec<String>| {
            let more = items.len().saturating_sub(SHOWN);
            out.extend(
                items
                    .into_iter()
                    .take(SHOWN)
                    // An item may quote a run's text: one line each.
                    .map(|i| match i.strip_prefix(AFTER) {
                        // A finding's second line (what reproduces it) under it.
                        Some(rest) => format!("{:<12} {}", "", crate::escape::one_line(rest)),
                        None => format!("{name:<12} {}", crate::escape::one_line(&i)),
                    }),
            );
            if more > 0 {
                out.push(format!("{name:<12} and {more} more"));
            }
        };
        kind(
            "CHECK FAILED",
            (self.failed_checks.iter())
                .flat_map(|c| {
                    [
                        format!(
                            "{}/{} {} [{}]: {} failed: {}",
                            c.target,
                            c.suite,
                            c.bench,
                            crate::protocol::case_label(&c.case),
                            c.name,
                            c.details
                        ),
                        format!("{AFTER}  reproduce: {}", c.command),
                    ]
                })
                .collect(),
        );
        kind(
            "PROBLEM",
            (self.problems.iter())
                .map(|p| format!("{}: {}", p.place(), p.what))
                .collect(),
        );
        kind(
            "REGRESSION",
            self.with(Verdict::Regression).map(cell_change).collect(),
        );
        kind(
            "ORDERING CHANGED",
            self.unacknowledged().map(|c| c.line()).collect(),
        );
        kind(
            "MODEL CHECK VIOLATED",
            (self.models.violated.iter())
                .map(|v| format!("{}/{} `{}`: {}", v.suite, v.lock, v.model, v.failure))
                .chain(
                    self.models
                        .error
                        .iter()
                        .map(|e| format!("could not run: {e}")),
                )
                .collect(),
        );
        kind("CONTENTION", self.contention.findings());
        kind(
            "RACE",
            (self.miri.locks.iter())
                .filter_map(|l| {
                    // A command cut at the width is no command: the flags
                    // on one line, the command on the next, as a shell
                    // reads them.
                    let whole = l.reproduce()?;
                    let (flags, command) = whole.split_once("\" cargo ")?;
                    let flags = format!("{AFTER}  reproduce: {flags}\" \\");
                    Some([l.finding(), flags, format!("{AFTER}    cargo {command}")])
                })
                .flatten()
                .collect(),
        );
        kind(
            "INCONCLUSIVE",
            self.with(Verdict::Inconclusive)
                .filter(|c| c.family)
                .map(cell_change)
                .collect(),
        );
        // Never failing, but what a reviewer reads the trailer for.
        kind(
            "ORDERING CHANGED, ACKNOWLEDGED",
            (self.ordering.iter())
                .filter_map(|c| {
                    let ack = c.acknowledged.as_ref()?;
                    Some(format!("{} [{}]", c.line(), ack.describe()))
                })
                .collect(),
        );
        out
    }

    /// The incomparable cells, one line per cause: the first target and
    /// how many more, the fields that differ, how many cells of each kind.
    fn incomparable_causes(&self) -> Vec<String> {
        let mut by: BTreeMap<String, (BTreeSet<&str>, usize, usize)> = BTreeMap::new();
        for c in self.with(Verdict::Incomparable) {
            let e = by
                .entry(differing_fields(c.note.as_deref().unwrap_or("")))
                .or_default();
            e.0.insert(&c.target);
            match c.kind().exact() {
                true => e.1 += 1,
                false => e.2 += 1,
            }
        }
        by.into_iter()
            .map(|(fields, (targets, counts, timings))| {
                let first = targets.iter().next().copied().unwrap_or("?");
                let on = match targets.len() {
                    1 => first.to_string(),
                    n => format!("{first} and {} more targets", n - 1),
                };
                let mut cells = Vec::new();
                if counts > 0 {
                    cells.push(format!("{counts} count cells"));
                }
                if timings > 0 {
                    cells.push(format!("{timings} timing cells"));
                }
                format!("{on}: {fields}; {}", cells.join(", "))
            })
            .collect()
    }
}

/// `aarch64/spinlock lock_unlock [lock=ticket threads=1] insns_per_op:
/// 6 -> 7 (+16.7%)`. A timing cell's change is the gate's estimate with
/// its interval, `(+5.8% [-2.0%, +14.1%])`, and its look: the two medians
/// may move otherwise (a bimodal cell's do), and the estimate is what
/// was judged.
fn cell_change(c: &CellReport) -> String {
    let median = |v: Option<f64>| v.map_or("-".to_string(), short_number);
    let base = c.base.as_ref().and_then(|b| b.median);
    let pct = |r: f64| format!("{:+.1}%", (r - 1.0) * 100.0);
    let interval = |lo: f64, hi: f64| lo < hi && lo.is_finite() && hi.is_finite();
    let change = c
        .effect
        .map(|e| match interval(e.lo, e.hi) {
            true => format!(" ({} [{}, {}])", pct(e.ratio), pct(e.lo), pct(e.hi)),
            false => format!(" ({})", pct(e.ratio)),
        })
        .unwrap_or_default();
    let look = c
        .look
        .map(|l| format!(", look {}/{} at {} {}", l.look, l.looks, l.pairs, l.unit))
        .unwrap_or_default();
    format!(
        "{}/{} {} [{}] {}: {} -> {}{change}{look}",
        c.target,
        c.suite,
        c.bench,
        c.case_label(),
        c.metric,
        median(base),
        median(c.head.median)
    )
}

fn short_number(x: f64) -> String {
    if (x.fract() == 0.0 && x.abs() < 1e9) || x.abs() >= 100.0 {
        format!("{x:.0}")
    } else {
        format!("{x:.2}")
    }
}

/// The fields a testbed difference names (`compiler: baseline `a`, run
/// `b`; machine: ...` gives `compiler, machine`), as `testbed differs
/// (...)`; other notes as they are.
fn differing_fields(note: &str) -> String {
    let mut fields: Vec<String> = Vec::new();
    for part in note.split("; ") {
        if part.starts_with("not comparable") {
            // The cell's values too: said by its own verdict elsewhere.
            continue;
        }
        let field = if let Some((name, _)) = part.split_once(": baseline `") {
            name.to_string()
        } else if part.starts_with("the baseline's testbed is unknown") {
            "the baseline's testbed unknown".into()
        } else if part.starts_with("the run's testbed is unknown") {
            "this machine's testbed unknown".into()
        } else {
            part.chars().take(60).collect()
        };
        if !fields.contains(&field) {
            fields.push(field);
        }
    }
    format!("testbed differs ({})", fields.join(", "))
}

/// A not-gated reason with its causes' testbed details cut to field
/// names.
fn shorten_causes(why: &str) -> String {
    match why.split_once(" (") {
        Some((head, rest)) => {
            let inner = rest.strip_suffix(')').unwrap_or(rest);
            match inner.split_once(": ") {
                Some((count, note)) if note.contains(": baseline `") => {
                    format!("{head} ({count}: {})", differing_fields(note))
                }
                _ => why.to_string(),
            }
        }
        None => why.to_string(),
    }
}

/// `line` in lines of at most [`WIDTH`] characters, broken after a `, `
/// or `; ` where it can be (the rest indented), cut where it cannot.
fn wrap(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = line.to_string();
    while rest.chars().count() > WIDTH {
        let head: String = rest.chars().take(WIDTH).collect();
        let Some(at) = head
            .rfind(", ")
            .or_else(|| head.rfind("; "))
            .filter(|&i| i > 20)
        else {
            break;
        };
        out.push(rest[..at + 1].to_string());
        rest = format!("    {}", &rest[at + 2..]);
    }
    out.push(fit(&rest));
    out
}

/// `line` cut to [`WIDTH`] characters, with `…` where it was cut.
fn fit(line: &str) -> String {
    match line.chars().count() <= WIDTH {
        true => line.to_string(),
        false => {
            let cut: String = line.chars().take(WIDTH - 1).collect();
            format!("{cut}…")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_testbed_difference_is_said_by_its_fields() {
        let note = "compiler: baseline `rustc 1.85.0 (4d91de4e4 2025-02-17)`, run `rustc 1.95.0`; machine: baseline `not recorded`, run `5279e2bd2ddcb36a`; the run's testbed is unknown: it ran in a container (kvm, container podman), whose machine id is its image's (name a dedicated machine with LOCKMATRIX_TESTBED=<name>)";
        assert_eq!(
            differing_fields(note),
            "testbed differs (compiler, machine, this machine's testbed unknown)"
        );
        let long = "x".repeat(400);
        assert_eq!(fit(&long).chars().count(), WIDTH);
        assert!(fit(&long).ends_with('…'));
        assert_eq!(fit("short"), "short");
        let parts: Vec<String> = (0..40).map(|i| format!("part {i}")).collect();
        let wrapped = wrap(&parts.join(", "));
        assert!(wrapped.len() > 1 && wrapped.iter().all(|l| l.chars().count() <= WIDTH));
        assert_eq!(
            wrapped
                .concat()
                .replace("    ", " ")
                .matches("part")
                .count(),
            40
        );
        let why = "none of the 9 timing cells gated (9 incomparable: machine: baseline `not recorded`, run `5279e2`)";
        assert_eq!(
            shorten_causes(why),
            "none of the 9 timing cells gated (9 incomparable: testbed differs (machine))"
        );
    }
}
