//! The gate's reports: a terminal listing, Markdown for
//! `$GITHUB_STEP_SUMMARY` and PR comments (cut to a byte budget), and JSON.

use super::evaluate::{CellReport, GateReport, Verdict};
use crate::protocol::case_label;
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Longest list of cells the terminal shows per advisory section.
const TERMINAL_LIST: usize = 20;

impl GateReport {
    /// The closing line: `gate: N cells compared, R regressions, ... => FAIL`.
    pub fn count_line(&self) -> String {
        let n = |v| self.count(v);
        format!(
            "gate: {} timing cells ({} cleared, {} inconclusive, {} regressions, {} improvements), \
             {} instruction counts and {} ordering footprints compared, \
             {} ordering changes ({} acknowledged), {} violated models, {} count regressions, \
             {} advisory, {} incomparable, {} new, {} not comparable, \
             {} failed checks, {} problems => {}",
            self.family,
            n(Verdict::Cleared),
            n(Verdict::Inconclusive),
            self.family_with(Verdict::Regression),
            self.family_with(Verdict::Improvement),
            self.counts_compared,
            self.footprints_compared,
            self.ordering.len(),
            self.ordering.len() - self.unacknowledged().count(),
            self.models.violated.len(),
            n(Verdict::Regression) - self.family_with(Verdict::Regression),
            n(Verdict::Advisory),
            n(Verdict::Incomparable),
            n(Verdict::NoBaseline),
            n(Verdict::NotComparable),
            self.failed_checks.len(),
            self.problems.len(),
            self.outcome().word()
        )
    }

    /// Per target and suite, its timing cells by kind and threshold:
    /// `x86_64/spinlock: 1-thread 5%: 3, 10%: 2; contended 25%: 4, 2x: 9,
    /// too noisy: 12`.
    pub fn strictness_lines(&self) -> Vec<String> {
        use crate::strictness::{pct, Budget};
        let mut by: BTreeMap<String, BTreeMap<(Budget, u64, bool), usize>> = BTreeMap::new();
        for c in &self.cells {
            let Some(st) = &c.strictness else { continue };
            let key = (
                st.budget,
                (st.threshold * 1000.0).round() as u64,
                st.too_noisy(),
            );
            *by.entry(format!("{}/{}", c.target, c.suite))
                .or_default()
                .entry(key)
                .or_default() += 1;
        }
        by.into_iter()
            .map(|(place, counts)| {
                let mut parts = Vec::new();
                for budget in Budget::ALL {
                    let rungs: Vec<String> = counts
                        .iter()
                        .filter(|((b, _, _), _)| *b == budget)
                        .map(|((_, t, noisy), n)| match noisy {
                            true => format!("too noisy: {n}"),
                            false => format!("{}: {n}", pct(*t as f64 / 1000.0)),
                        })
                        .collect();
                    if !rungs.is_empty() {
                        parts.push(format!("{} {}", budget.cells(), rungs.join(", ")));
                    }
                }
                format!("{place}: {}", parts.join("; "))
            })
            .collect()
    }

    /// Family cells with `verdict`.
    fn family_with(&self, verdict: Verdict) -> usize {
        self.with(verdict).filter(|c| c.family).count()
    }

    /// What the thresholds are, for the reports' explanations.
    fn thresholds(&self) -> String {
        let contended = match self.options.threshold {
            Some(t) => pct(t),
            None => "25%, 50% or 2x by its measured noise".into(),
        };
        format!(
            "from {} (1-thread cells) or {contended} (contended), each cell's shown with it",
            pct(self.options.quiet_threshold),
        )
    }

    /// Sections that list cells, in report order: (title, explanation, cells).
    pub(crate) fn cell_sections(&self) -> Vec<(String, String, Vec<&CellReport>)> {
        let mut regressions: Vec<&CellReport> = self.with(Verdict::Regression).collect();
        regressions.sort_by(|a, b| ratio(b).total_cmp(&ratio(a)));
        let mut improvements: Vec<&CellReport> = self.with(Verdict::Improvement).collect();
        improvements.sort_by(|a, b| ratio(a).total_cmp(&ratio(b)));
        let mut inconclusive: Vec<&CellReport> = self.with(Verdict::Inconclusive).collect();
        inconclusive.sort_by(|a, b| ratio(b).total_cmp(&ratio(a)));
        // Advisory cells are listed where they moved by as much as a
        // contended cell is asked to catch.
        let shown = self
            .options
            .threshold
            .unwrap_or(crate::strictness::CONTENDED_LADDER[0]);
        let mut advisory: Vec<&CellReport> = self
            .with(Verdict::Advisory)
            .filter(|c| c.clearly_slower(shown) || c.clearly_faster(shown))
            .collect();
        advisory.sort_by(|a, b| ratio(b).total_cmp(&ratio(a)));
        let too_noisy: Vec<&CellReport> = self.with(Verdict::TooNoisy).collect();
        vec![
            (
                format!("Regressions ({})", regressions.len()),
                format!(
                    "instruction counts above the reference, and timing cells slower than \
                     half their threshold ({}) with confidence, at the look shown \
                     (alpha {} per target, half for 1-thread cells and half for contended ones, \
                     each split over its suites and cells)",
                    self.thresholds(),
                    self.options.alpha
                ),
                regressions,
            ),
            (
                format!("Improvements ({})", improvements.len()),
                "fewer instructions, or a timing cell faster by more than its threshold".into(),
                improvements,
            ),
            (
                format!("Inconclusive ({})", inconclusive.len()),
                "timing cells that reached neither boundary by the last look: never fail; \
                 the estimate is shown with its interval. If one matters, run again with more \
                 pairs or rounds (`--rounds`, up to the number shown as needed) or look at \
                 its instruction count and ordering footprint, which gate exactly"
                    .into(),
                inconclusive,
            ),
            (
                format!(
                    "Advisory cells: QEMU timings and metrics shown, not gated ({} of {} outside ±{})",
                    advisory.len(),
                    self.count(Verdict::Advisory),
                    pct(shown)
                ),
                "emulator time, or a metric with no better direction (a per-thread maximum, a \
                 ratio near 0): shown, never fails"
                    .into(),
                advisory,
            ),
            (
                format!("Too noisy to gate here ({})", too_noisy.len()),
                "timing cells whose measured spread cannot resolve even 2x in the pairs or rounds \
                 this run affords: shown with the spread and what would let them gate, never fail"
                    .into(),
                too_noisy,
            ),
        ]
    }

    /// The ordering findings, in report order: (title, explanation, lines,
    /// whether they fail the gate). Violated models first (each with its
    /// trace), then unacknowledged and acknowledged ordering changes, sorted
    /// by lock so that one change reads across the targets.
    fn ordering_sections(&self) -> Vec<(String, String, Vec<String>, bool)> {
        let mut out = Vec::new();
        let mut models: Vec<String> = Vec::new();
        if let Some(e) = &self.models.error {
            models.push(format!("the model check could not run: {e}"));
        }
        for v in &self.models.violated {
            models.push(format!(
                "{}/{} `{}`: {}",
                v.suite, v.lock, v.model, v.failure
            ));
            models.extend(v.trace.iter().map(|l| format!("    {l}")));
        }
        out.push((
            format!("Model check violated ({})", self.models.violated.len()),
            "a lock broke its promise in some interleaving under the C11 memory model (loom): \
             a bug on weakly ordered machines that no run under QEMU on an x86 host can show"
                .into(),
            models,
            true,
        ));
        let raced: Vec<String> = self
            .miri
            .locks
            .iter()
            .filter(|l| l.race.is_some())
            .map(|l| l.line())
            .collect();
        out.push((
            format!("Raced under Miri ({})", raced.len()),
            "Miri found two critical sections of a lock loom cannot see (another crate's, std's) \
             with no happens-before between them, under the Rust memory model: the seed and the \
             flags reproduce it (`cargo +nightly miri run -p <suite> -- --lock <lock> --client <client>`)"
                .into(),
            raced,
            true,
        ));
        let mut changes: Vec<&super::ordering::OrderingChange> = self.ordering.iter().collect();
        changes.sort_by(|a, b| {
            (&a.unit, &a.suite, a.view, &a.what, &a.target)
                .cmp(&(&b.unit, &b.suite, b.view, &b.what, &b.target))
        });
        let (acked, unacked): (Vec<_>, Vec<_>) =
            changes.into_iter().partition(|c| c.acknowledged.is_some());
        out.push((
            format!("Ordering changed ({})", unacked.len()),
            format!(
                "the memory-ordering instructions of a lock operation differ from the reference's \
                 (fewer or weaker barriers are never an improvement); if the change is meant, say so \
                 with a `{}: <lock> <why>` trailer on a commit, or record it with `cargo xtask baseline update`",
                crate::acknowledge::TRAILER
            ),
            unacked.iter().map(|c| c.line()).collect(),
            true,
        ));
        out.push((
            format!("Ordering changed, acknowledged ({})", acked.len()),
            "intended by a trailer in the compared range: shown, never fails".into(),
            acked
                .iter()
                .map(|c| {
                    let ack = c
                        .acknowledged
                        .as_ref()
                        .map(|a| a.describe())
                        .unwrap_or_default();
                    format!("{} [{ack}]", c.line())
                })
                .collect(),
            false,
        ));
        out
    }

    /// Grouped sections: (title, explanation, lines).
    fn grouped_sections(&self) -> Vec<(String, String, Vec<String>)> {
        let mut out = Vec::new();
        // Cleared, per target/suite, with the look they stopped at.
        let mut cleared: BTreeMap<String, (usize, usize, &str)> = BTreeMap::new();
        for c in self.with(Verdict::Cleared) {
            let e = cleared
                .entry(format!("{}/{}", c.target, c.suite))
                .or_insert((0, 0, "pairs"));
            e.0 += 1;
            e.1 = e.1.max(c.look.map_or(0, |l| l.pairs));
            e.2 = c.look.map_or("pairs", |l| l.unit);
        }
        out.push((
            format!("Cleared ({})", self.count(Verdict::Cleared)),
            format!(
                "timing cells slower by less than their threshold ({}), with confidence",
                self.thresholds()
            ),
            cleared
                .into_iter()
                .map(|(place, (n, pairs, unit))| format!("{place}: {n} cells, by {pairs} {unit}"))
                .collect(),
        ));
        // Incomparable, one line per cause: counts and timings apart, with
        // how many cells on how many targets.
        let mut incomparable: BTreeMap<(&str, String), (usize, std::collections::BTreeSet<&str>)> =
            BTreeMap::new();
        for c in self.with(Verdict::Incomparable) {
            let kind = if c.kind().exact() { "count" } else { "timing" };
            let e = incomparable
                .entry((kind, c.note.clone().unwrap_or_default()))
                .or_default();
            e.0 += 1;
            e.1.insert(&c.target);
        }
        out.push((
            format!("Incomparable ({})", self.count(Verdict::Incomparable)),
            "the baseline was recorded on another testbed (the difference below): shown, never \
             fails; to compare here, run `cargo xtask matrix --against <base revision>` (both \
             sides on this machine), or record this machine's baseline with \
             `cargo xtask baseline update`"
                .into(),
            incomparable
                .into_iter()
                .map(|((kind, why), (n, targets))| {
                    let on = match targets.len() {
                        1 => targets.into_iter().next().unwrap_or_default().to_string(),
                        t => format!("{t} targets"),
                    };
                    format!("{why}: {n} {kind} cells on {on}")
                })
                .collect(),
        ));
        let mut new: BTreeMap<String, usize> = BTreeMap::new();
        for c in self.with(Verdict::NoBaseline) {
            *new.entry(format!("{}/{}", c.target, c.suite)).or_default() += 1;
        }
        out.push((
            format!("New cells ({})", self.count(Verdict::NoBaseline)),
            "no baseline: shown, never fails".into(),
            new.into_iter()
                .map(|(place, n)| format!("{place}: {n} cells without a baseline"))
                .collect(),
        ));
        out.push((
            format!("Not comparable ({})", self.count(Verdict::NotComparable)),
            "missing or non-positive values cannot be compared as ratios: never fails".into(),
            self.with(Verdict::NotComparable)
                .map(|c| {
                    format!(
                        "{}: {}",
                        cell_name(c),
                        c.note.as_deref().unwrap_or("not comparable")
                    )
                })
                .collect(),
        ));
        out
    }

    /// The terminal report: failed checks and problems, regressions,
    /// improvements, advisory lists, inconclusive, incomparable and new
    /// cells, notes, and the count line.
    pub fn terminal(&self) -> String {
        let mut out = String::new();
        if !self.failed_checks.is_empty() {
            let _ = writeln!(out, "FAILED CHECKS ({})", self.failed_checks.len());
            for c in &self.failed_checks {
                let _ = writeln!(
                    out,
                    "  {}/{}  {} [{}]  {}: {}",
                    c.target,
                    c.suite,
                    c.bench,
                    case_label(&c.case),
                    c.name,
                    c.details
                );
            }
            out.push('\n');
        }
        if !self.problems.is_empty() {
            let _ = writeln!(out, "PROBLEMS ({})", self.problems.len());
            for p in &self.problems {
                let what = crate::escape::one_line(&p.what);
                let _ = writeln!(out, "  {}: {what}", p.place());
            }
            out.push('\n');
        }
        for (title, why, lines, _) in self.ordering_sections() {
            listed(&mut out, &title, &why, &lines);
        }
        for (i, (title, why, cells)) in self.cell_sections().into_iter().enumerate() {
            if cells.is_empty() {
                continue;
            }
            let _ = writeln!(out, "{}: {why}", shout(&title));
            // Regressions are never cut short.
            let limit = if i == 0 { usize::MAX } else { TERMINAL_LIST };
            let mut rows = vec![header()];
            rows.extend(cells.iter().take(limit).map(|c| row(c)));
            out.push_str(&indent(&columns(&rows)));
            if cells.len() > limit {
                let _ = writeln!(out, "  ... and {} more (see --json)", cells.len() - limit);
            }
            out.push('\n');
        }
        for (title, why, lines) in self.grouped_sections() {
            listed(&mut out, &title, &why, &lines);
        }
        listed(
            &mut out,
            "Strictness",
            "what each suite's timing cells were asked to catch here, from their measured \
             noise (each cell's own, with its spread: --json's `strictness`)",
            &self.strictness_lines(),
        );
        if !self.notes.is_empty() {
            out.push_str("NOTES\n");
            for n in &self.notes {
                // A note may quote a run's text (a status's reason): on
                // its own line, never starting another.
                let what = crate::escape::one_line(&n.what);
                let _ = writeln!(out, "  {}: {what}", n.place());
            }
            out.push('\n');
        }
        let _ = writeln!(out, "{}", self.timing.line());
        for r in &self.recounted {
            let _ = writeln!(out, "{}", r.line());
        }
        let _ = writeln!(out, "{}", self.models.line());
        let _ = writeln!(out, "{}", self.miri.line());
        if self.contention.ran {
            let _ = writeln!(out, "{}", self.contention.line());
            for c in &self.contention.worse {
                let _ = writeln!(out, "  WORSE   {}", c.line());
            }
            for c in &self.contention.better {
                let _ = writeln!(out, "  better  {}", c.line());
            }
            for c in &self.contention.moved {
                let _ = writeln!(out, "  moved   {}", c.line());
            }
        }
        out.push_str(&self.count_line());
        out.push('\n');
        out.push_str(&self.verdict_line());
        out.push('\n');
        out
    }

    /// Markdown for `$GITHUB_STEP_SUMMARY` (1 MiB) or a PR comment (64 KB):
    /// the verdict and a count table first, failed checks, problems and
    /// regressions in the open, everything else in `<details>` blocks. Cut to
    /// at most `max_bytes` bytes, with a note saying so.
    pub fn markdown(&self, max_bytes: usize) -> String {
        self.markdown_with(max_bytes, &[])
    }

    /// [`GateReport::markdown`] with more collapsed sections before the
    /// closing lines, each `(summary, Markdown body)`, within the budget
    /// (the run's ordering footprint table, `report::footprints`).
    pub fn markdown_with(&self, max_bytes: usize, extra: &[(String, String)]) -> String {
        let mut b = Budget::new(max_bytes);
        b.push(&self.markdown_head());
        for r in &self.recounted {
            b.push(&format!("{}\n\n", md(&r.line())));
        }
        b.push(&self.markdown_counts());
        self.markdown_failures(&mut b);
        self.markdown_ordering(&mut b);
        self.markdown_cells(&mut b);
        self.markdown_collapsed(&mut b);
        for (summary, body) in extra {
            b.section(
                &format!("<details><summary>{summary}</summary>\n\n"),
                body.lines().map(|l| format!("{l}\n")),
                "\n</details>\n\n",
            );
        }
        b.push(&format!("`{}`\n\n", self.count_line()));
        for line in self.verdict_line().lines() {
            b.push(&format!("{}\n\n", md(line)));
        }
        b.finish()
    }

    /// The Markdown title with the verdict, what was compared with what
    /// under which thresholds, and the timing, models and Miri lines.
    fn markdown_head(&self) -> String {
        format!(
            "## lockmatrix gate: **{}**\n\nrun `{}` against {}: thresholds {}, alpha {} per target over {} timing cells, clearing alpha {}\n\n{}\n\n{}\n\n{}\n\n",
            self.outcome().word(),
            md(&self.run_id),
            md(&self.reference),
            self.thresholds(),
            self.options.alpha,
            self.family,
            self.options.clear_alpha,
            self.timing.line(),
            md(&self.models.line()),
            md(&self.miri.line())
        )
    }

    /// The count table: failed checks, problems, unacknowledged ordering
    /// changes, violated models, raced locks, then each verdict's cells.
    fn markdown_counts(&self) -> String {
        let mut counts = String::from("| | cells |\n|---|---:|\n");
        let _ = writeln!(counts, "| failed checks | {} |", self.failed_checks.len());
        let _ = writeln!(counts, "| problems | {} |", self.problems.len());
        let _ = writeln!(
            counts,
            "| ordering changes (unacknowledged) | {} |",
            self.unacknowledged().count()
        );
        let _ = writeln!(
            counts,
            "| violated models | {} |",
            self.models.violated.len()
        );
        let _ = writeln!(
            counts,
            "| locks raced under Miri | {} |",
            self.miri.locks.iter().filter(|l| l.race.is_some()).count()
        );
        for v in Verdict::ALL {
            let _ = writeln!(
                counts,
                "| {} | {} |",
                v.name().replace('_', " "),
                self.count(v)
            );
        }
        counts.push('\n');
        counts
    }

    /// The failed checks as a table and the problems as a list, in the
    /// open: each fails the gate.
    fn markdown_failures(&self, b: &mut Budget) {
        if !self.failed_checks.is_empty() {
            let rows = self.failed_checks.iter().map(|c| {
                format!(
                    "| {}/{} | {} | {} | {} | {} |\n",
                    md(&c.target),
                    md(&c.suite),
                    md(&c.bench),
                    md(&case_label(&c.case)),
                    md(&c.name),
                    md(&c.details.to_string())
                )
            });
            b.section(
                &format!("### Failed checks ({})\n\n| where | bench | case | check | details |\n|---|---|---|---|---|\n", self.failed_checks.len()),
                rows,
                "\n",
            );
        }
        if !self.problems.is_empty() {
            let rows = self
                .problems
                .iter()
                .map(|p| format!("- **{}**: {}\n", md(&p.place()), md(&p.what)));
            b.section(
                &format!("### Problems ({})\n\n", self.problems.len()),
                rows,
                "\n",
            );
        }
    }

    /// The ordering sections that have lines: in the open where they fail
    /// the gate, collapsed where they do not.
    fn markdown_ordering(&self, b: &mut Budget) {
        for (title, why, lines, fails) in self.ordering_sections() {
            if lines.is_empty() {
                continue;
            }
            let rows = lines.into_iter().map(|l| format!("- {}\n", md(&l)));
            if fails {
                b.section(&format!("### {title}\n\n{why}\n\n"), rows, "\n");
            } else {
                b.section(
                    &format!("<details><summary>{title}</summary>\n\n{why}\n\n"),
                    rows,
                    "\n</details>\n\n",
                );
            }
        }
    }

    /// The cell tables that have cells: the first (the regressions) in the
    /// open, the others collapsed.
    fn markdown_cells(&self, b: &mut Budget) {
        let table_head = format!(
            "| {} |\n|{}\n",
            header().join(" | "),
            "---|".repeat(header().len())
        );
        for (i, (title, why, cells)) in self.cell_sections().into_iter().enumerate() {
            if cells.is_empty() {
                continue;
            }
            let rows = cells.into_iter().map(|c| {
                format!(
                    "| {} |\n",
                    row(c).iter().map(|s| md(s)).collect::<Vec<_>>().join(" | ")
                )
            });
            if i == 0 {
                b.section(&format!("### {title}\n\n{why}\n\n{table_head}"), rows, "\n");
            } else {
                b.section(
                    &format!(
                        "<details><summary>{title}</summary>\n\n{}\n\n{table_head}",
                        why
                    ),
                    rows,
                    "\n</details>\n\n",
                );
            }
        }
    }

    /// The grouped sections and the notes, collapsed: none of them fails
    /// the gate.
    fn markdown_collapsed(&self, b: &mut Budget) {
        for (title, why, lines) in self.grouped_sections() {
            if lines.is_empty() {
                continue;
            }
            b.section(
                &format!("<details><summary>{title}</summary>\n\n{why}\n\n"),
                lines.into_iter().map(|l| format!("- {}\n", md(&l))),
                "\n</details>\n\n",
            );
        }
        if !self.notes.is_empty() {
            b.section(
                &format!(
                    "<details><summary>Notes ({})</summary>\n\n",
                    self.notes.len()
                ),
                self.notes
                    .iter()
                    .map(|n| format!("- {}: {}\n", md(&n.place()), md(&n.what))),
                "\n</details>\n\n",
            );
        }
    }

    /// The whole report as JSON (`--json`).
    pub fn json(&self) -> Value {
        let counts: serde_json::Map<String, Value> = Verdict::ALL
            .iter()
            .map(|v| (v.name().to_string(), json!(self.count(*v))))
            .chain([
                ("failed_checks".to_string(), json!(self.failed_checks.len())),
                ("problems".to_string(), json!(self.problems.len())),
                (
                    "ordering_unacknowledged".to_string(),
                    json!(self.unacknowledged().count()),
                ),
                (
                    "models_violated".to_string(),
                    json!(self.models.violated.len()),
                ),
                (
                    "miri_raced".to_string(),
                    json!(self.miri.locks.iter().filter(|l| l.race.is_some()).count()),
                ),
                (
                    "contention_worse".to_string(),
                    json!(self.contention.worse.len()),
                ),
            ])
            .collect();
        json!({
            "result": self.outcome().name(),
            "failed": self.failed(),
            "verdict": self.verdict_line(),
            "not_gated": self.not_gated(),
            "waived": self.waived(),
            "unreferenced": self.unreferenced,
            "counts_with_reference": self.counts_with_reference,
            "family_present": self.family_present,
            "run_id": self.run_id,
            "reference": self.reference,
            "paired": self.paired,
            "timing": self.timing,
            "counts_compared": self.counts_compared,
            "footprints_compared": self.footprints_compared,
            "recounted": self.recounted,
            "ordering": self.ordering,
            "acknowledgements": self.acknowledgements,
            "models": self.models,
            "miri": self.miri,
            "contention": self.contention,
            "options": self.options,
            "family": self.family,
            "counts": counts,
            "failed_checks": self.failed_checks,
            "problems": self.problems,
            "notes": self.notes,
            "cells": self.cells,
        })
    }
}

/// A terminal section of lines under its shouted title, when it has any.
fn listed(out: &mut String, title: &str, why: &str, lines: &[String]) {
    if lines.is_empty() {
        return;
    }
    let _ = writeln!(out, "{}: {why}", shout(title));
    for l in lines {
        let _ = writeln!(out, "  {}", crate::escape::one_line(l));
    }
    out.push('\n');
}

fn ratio(c: &CellReport) -> f64 {
    c.effect.map_or(1.0, |e| e.ratio)
}

/// `target/suite bench [case] metric`: how reports name a cell.
pub(crate) fn cell_name(c: &CellReport) -> String {
    format!(
        "{}/{} {} [{}] {}",
        c.target,
        c.suite,
        c.bench,
        c.case_label(),
        c.metric
    )
}

pub(crate) fn header() -> Vec<String> {
    [
        "where",
        "bench",
        "case",
        "metric",
        "base -> head (median)",
        "cost ratio [interval]",
        "change",
        "p",
        "decided",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect()
}

pub(crate) fn row(c: &CellReport) -> Vec<String> {
    let median = |s: Option<f64>| s.map_or("-".into(), num);
    let (ratio, change, p) = match c.effect {
        Some(e) => (
            format!(
                "{:.3} [{}, {}] {:.0}%",
                e.ratio,
                bound(e.lo),
                bound(e.hi),
                e.confidence * 100.0
            ),
            format!("{:+.1}%", (e.ratio - 1.0) * 100.0),
            pval(e.p),
        ),
        None => ("-".into(), "-".into(), "-".into()),
    };
    let decided = match (c.look, c.verdict) {
        (Some(l), Verdict::Inconclusive) => format!(
            "{} {}; needs {}",
            l.pairs,
            l.unit,
            c.rounds_needed
                .map_or("more (unknown)".into(), |n| format!("about {n}"))
        ),
        (Some(l), _) => format!("look {}/{}, {} {}", l.look, l.looks, l.pairs, l.unit),
        (None, _) => "-".into(),
    };
    vec![
        format!("{}/{}", c.target, c.suite),
        c.bench.to_string(),
        c.case_label(),
        c.metric.to_string(),
        format!(
            "{} -> {} {}",
            median(c.base.as_ref().and_then(|b| b.median)),
            median(c.head.median),
            c.unit
        ),
        ratio,
        change,
        p,
        decided,
    ]
}

/// Four significant digits.
fn num(x: f64) -> String {
    let a = x.abs();
    if a == 0.0 || !a.is_finite() {
        format!("{x}")
    } else if !(1e-3..1e6).contains(&a) {
        format!("{x:.3e}")
    } else {
        let decimals = (3 - a.log10().floor() as i32).max(0) as usize;
        format!("{x:.decimals$}")
    }
}

fn bound(x: f64) -> String {
    if x.is_finite() {
        format!("{x:.3}")
    } else {
        "inf".into()
    }
}

fn pval(p: f64) -> String {
    if p < 1e-3 {
        format!("{p:.1e}")
    } else {
        format!("{p:.3}")
    }
}

fn pct(x: f64) -> String {
    format!("{}%", (x * 1000.0).round() / 10.0)
}

/// Left-aligned columns, two spaces apart, with a rule under the header.
fn columns(rows: &[Vec<String>]) -> String {
    let widths: Vec<usize> = (0..rows.first().map_or(0, Vec::len))
        .map(|c| rows.iter().map(|r| r[c].chars().count()).max().unwrap_or(0))
        .collect();
    let mut out = String::new();
    for (i, r) in rows.iter().enumerate() {
        let line: Vec<String> = r
            .iter()
            .zip(&widths)
            .map(|(s, w)| format!("{s:<w$}"))
            .collect();
        out.push_str(line.join("  ").trim_end());
        out.push('\n');
        if i == 0 {
            out.push_str(
                &"-".repeat(widths.iter().sum::<usize>() + 2 * widths.len().saturating_sub(1)),
            );
            out.push('\n');
        }
    }
    out
}

/// Upper-cases a section title up to its count: `REGRESSIONS (1)`.
fn shout(title: &str) -> String {
    match title.split_once(" (") {
        Some((name, rest)) => format!("{} ({rest}", name.to_uppercase()),
        None => title.to_uppercase(),
    }
}

fn indent(text: &str) -> String {
    text.lines().map(|l| format!("  {l}\n")).collect()
}

/// Data in Markdown: a code span ([`crate::escape::markdown`]). The
/// report's own words and numbers go in as they are.
fn md(s: &str) -> String {
    crate::escape::markdown(s)
}

/// Markdown cut to a byte budget: once something does not fit, nothing more
/// is added but the open block's closer and a note saying the report was cut.
struct Budget {
    out: String,
    max: usize,
    truncated: bool,
}

/// Bytes kept free for a closer and the truncation note.
const RESERVE: usize = 300;

impl Budget {
    fn new(max: usize) -> Budget {
        Budget {
            out: String::new(),
            max,
            truncated: false,
        }
    }

    fn push(&mut self, s: &str) -> bool {
        if self.truncated {
            return false;
        }
        if self.out.len() + s.len() + RESERVE <= self.max {
            self.out.push_str(s);
            true
        } else {
            self.truncated = true;
            false
        }
    }

    /// A header, its rows while they fit, and its closer if the header fit.
    fn section(&mut self, head: &str, rows: impl Iterator<Item = String>, close: &str) {
        if !self.push(head) {
            return;
        }
        for r in rows {
            if !self.push(&r) {
                break;
            }
        }
        self.out.push_str(close);
    }

    fn finish(mut self) -> String {
        if self.truncated {
            let _ = write!(
                self.out,
                "\n**Report cut to {} bytes**: run `cargo xtask gate --json` for every cell.\n",
                self.max
            );
        }
        if self.out.len() > self.max {
            let mut end = self.max;
            while !self.out.is_char_boundary(end) {
                end -= 1;
            }
            self.out.truncate(end);
        }
        self.out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gate_number_formats() {
        assert_eq!(num(12.3456), "12.35");
        assert_eq!(num(1234.5), "1234");
        assert_eq!(num(0.012345), "0.01235");
        assert_eq!(num(2.5e7), "2.500e7");
        assert_eq!(pval(0.0000123), "1.2e-5");
        assert_eq!(pval(0.5), "0.500");
        assert_eq!(pct(0.05), "5%");
        assert_eq!(bound(f64::INFINITY), "inf");
        assert_eq!(md("a|b<c>\nd"), "`a\\|b<c> d`");
    }

    #[test]
    fn gate_budget_never_exceeds_and_says_it_cut() {
        let mut b = Budget::new(RESERVE + 100);
        b.section(
            "<details>\n",
            (0..100).map(|i| format!("- line {i}\n")),
            "</details>\n",
        );
        let out = b.finish();
        assert!(out.len() <= RESERVE + 100, "{}", out.len());
        assert!(
            out.contains("</details>") && out.contains("Report cut"),
            "{out}"
        );
        let tiny = Budget::new(10);
        let mut tiny = tiny;
        tiny.push("0123456789abcdef");
        assert!(tiny.finish().len() <= 10);
    }
}
