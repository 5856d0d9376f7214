//! The gate, drawn: a forest plot of the timing cells's head/base cost
//! ratios with their intervals, coloured by verdict; every instruction
//! count across the targets with the changed ones highlighted; the
//! advisory lists the terminal report prints. A run that was compared with
//! nothing says so instead of drawing empty charts.

use super::layout::table;
use super::svg::{self, esc, num, Scale, Svg};
use crate::gate::evaluate::{CellReport, GateReport, Verdict};
use crate::gate::render;
use crate::name::Name;
use crate::protocol::case_label;
use crate::results::Run;
use std::collections::BTreeMap;

/// Most rows per advisory table; the JSON report has them all.
const LIST: usize = 40;

pub fn verdict_colour(v: Verdict) -> &'static str {
    match v {
        Verdict::Regression => "#c0392b",
        Verdict::Inconclusive => "#e67e22",
        Verdict::Improvement => "#27ae60",
        Verdict::Cleared => "#34495e",
        Verdict::Unchanged => "#34495e",
        _ => "#95a5a6",
    }
}

/// Whether the gate compared anything at all.
fn compared(g: &GateReport) -> bool {
    g.counts_compared > 0 || g.cells.iter().any(|c| c.effect.is_some())
}

pub fn section(run: &Run, gate: Option<&GateReport>) -> String {
    let mut out = String::new();
    let Some(g) = gate.filter(|g| compared(g)) else {
        out.push_str(
            "<p class=\"plain\"><strong>Not compared.</strong> This run has no <code>--against</code> \
             base and no stored baseline it could be compared with, so there are no ratios or \
             changed counts to show. Run <code>cargo xtask matrix --against REV</code>, or \
             <code>cargo xtask report --html --baselines DIR</code> with baselines recorded on \
             this testbed.</p>",
        );
        out.push_str("<h3>Instruction counts</h3>");
        out.push_str(&counts(run, None));
        return out;
    };
    let verdict = g.outcome().word();
    out.push_str(&format!(
        "<p class=\"verdict {}\">gate: <strong>{verdict}</strong> against {}{}</p><p>{}</p><p>{}</p><p>{}</p>",
        if g.failed() { "fail" } else { "pass" },
        esc(&g.reference),
        if g.paired { " (paired, rounds interleaved)" } else { "" },
        esc(&g.timing.line()),
        esc(&g.models.line()),
        esc(&g.count_line())
    ));
    for line in g.verdict_line().lines() {
        out.push_str(&format!("<p><strong>{}</strong></p>", esc(line)));
    }
    for r in &g.recounted {
        out.push_str(&format!("<p>{}</p>", esc(&r.line())));
    }
    for v in &g.models.violated {
        out.push_str(&format!(
            "<p class=\"fail\">model violated: {}/{} <code>{}</code>: {}</p>",
            esc(&v.suite),
            esc(&v.lock),
            esc(&v.model),
            esc(&v.failure)
        ));
    }
    for c in &g.ordering {
        let (class, ack) = match &c.acknowledged {
            Some(a) => ("", format!(" (acknowledged: {})", a.describe())),
            None => ("fail", String::new()),
        };
        out.push_str(&format!(
            "<p class=\"{class}\">ordering changed: {}{}</p>",
            esc(&c.line()),
            esc(&ack)
        ));
    }
    for c in &g.failed_checks {
        out.push_str(&format!(
            "<p class=\"fail\">failed check {}/{} {} [{}] {}: {}</p>",
            esc(&c.target),
            esc(&c.suite),
            esc(&c.bench),
            esc(&case_label(&c.case)),
            esc(&c.name),
            esc(&c.details.to_string())
        ));
    }
    for p in &g.problems {
        out.push_str(&format!(
            "<p class=\"fail\">{}: {}</p>",
            esc(&p.place()),
            esc(&p.what)
        ));
    }
    out.push_str("<h3>Timing family: head / base cost ratio</h3>");
    out.push_str(&forest(g));
    out.push_str("<h3>Instruction counts</h3>");
    out.push_str(&counts(run, Some(g)));
    out.push_str("<h3>Advisory and listed cells</h3>");
    for (title, why, cells) in g.cell_sections() {
        out.push_str(&format!("<h4>{}</h4><p>{}</p>", esc(&title), esc(&why)));
        if cells.is_empty() {
            out.push_str("<p>none</p>");
            continue;
        }
        let mut rows = vec![render::header().iter().map(|h| esc(h)).collect::<Vec<_>>()];
        rows.extend(
            cells
                .iter()
                .take(LIST)
                .map(|c| render::row(c).iter().map(|x| esc(x)).collect()),
        );
        out.push_str(&table("data compact", &rows));
        if cells.len() > LIST {
            out.push_str(&format!(
                "<p>... and {} more (see the gate's --json)</p>",
                cells.len() - LIST
            ));
        }
    }
    out
}

/// One panel per target with timing cells: a row per cell, the ratio's
/// point and interval on a log axis, the 1 and 1 + delta lines.
fn forest(g: &GateReport) -> String {
    let family: Vec<&CellReport> = g
        .cells
        .iter()
        .filter(|c| c.family && c.effect.is_some() && c.verdict != Verdict::TooNoisy)
        .collect();
    if family.is_empty() {
        return format!(
            "<p class=\"plain\">No timing cell was compared here ({}): only \
             instruction counts and checks gated this run.</p>",
            esc(&g.timing.line())
        );
    }
    let mut targets: Vec<&str> = Vec::new();
    for c in &family {
        if !targets.contains(&c.target.as_str()) {
            targets.push(&c.target);
        }
    }
    let panels: String = targets
        .into_iter()
        .map(|target| {
            let cells: Vec<&CellReport> =
                family.iter().copied().filter(|c| c.target == target).collect();
            format!(
                "<figure class=\"panel\"><figcaption>{} <span class=\"native\">{} timing cells</span></figcaption>{}</figure>",
                esc(target),
                cells.len(),
                forest_panel(target, &cells, contended_threshold(g))
            )
        })
        .collect();
    format!(
        "{}<div class=\"grid wide-panels\">{panels}</div>",
        forest_legend(g)
    )
}

/// One target's forest: a row per cell, its ratio and interval.
fn forest_panel(target: &str, cells: &[&CellReport], delta: f64) -> String {
    let labels: Vec<String> = cells
        .iter()
        .map(|c| format!("{} {} {}", c.suite, c.bench, short_case(c)))
        .collect();
    let longest = labels.iter().map(|l| l.chars().count()).max().unwrap_or(0);
    let left = (longest as f64 * 6.2 + 14.0).clamp(120.0, 400.0);
    let (right, top, row, width) = (16.0, 8.0, 15.0, 700.0);
    let axis_y = top + row * cells.len() as f64 + 4.0;
    let finite = |v: f64| v.is_finite() && v > 0.0;
    // Ratios sit near 1: the axis spans the data and +-2 delta, not decades.
    let (lo, hi) = cells
        .iter()
        .filter_map(|c| c.effect)
        .flat_map(|e| [e.ratio, e.lo, e.hi])
        .filter(|v| finite(*v))
        .fold(
            (1.0 / (1.0 + 2.0 * delta), 1.0 + 2.0 * delta),
            |(a, b), v| (a.min(v), b.max(v)),
        );
    let x = Scale {
        lo: lo / 1.02,
        hi: hi * 1.02,
        from: left,
        to: width - right,
        log: true,
    };
    let mut s = Svg::new(width, axis_y + 30.0);
    let label = "head / base cost ratio (log; right is slower)";
    s.x_axis_at(&x, &svg::ratio_ticks(x.lo, x.hi), axis_y, top, label);
    s.rule(x.at(1.0), top, axis_y, "#333", Some("no change"));
    s.rule(x.at(1.0 + delta), top, axis_y, "#c0392b", None);
    s.rule(x.at(1.0 / (1.0 + delta)), top, axis_y, "#27ae60", None);
    // An unbounded end of an interval runs to the panel's edge.
    let at = |v: f64| match (finite(v), v <= 0.0) {
        (true, _) => x.at(v.clamp(x.lo, x.hi)),
        (false, true) => x.from,
        (false, false) => x.to,
    };
    for (i, (c, label)) in cells.iter().zip(&labels).enumerate() {
        let e = c.effect.expect("timing cells have an effect");
        let yc = top + row * i as f64 + row / 2.0;
        let colour = verdict_colour(c.verdict);
        let title = format!(
            "{}: ratio {:.3} [{}, {}] at {:.0}%, p {:.2e}{}; {}",
            render::cell_name(c),
            e.ratio,
            bound(e.lo),
            bound(e.hi),
            e.confidence * 100.0,
            e.p,
            c.look.map_or(String::new(), |l| format!(
                " (look {}/{}, {} {})",
                l.look, l.looks, l.pairs, l.unit
            )),
            c.verdict.name()
        ) + &c
            .strictness
            .as_ref()
            .map_or(String::new(), |st| format!("; {}", st.line()));
        s.text(left - 6.0, yc + 3.5, "end", "label", label);
        s.line((at(e.lo), yc), (at(e.hi), yc), colour, 2.0, &title);
        s.circle(at(e.ratio), yc, 3.5, colour, &title);
    }
    s.finish(&format!("forest plot {target}"))
}

/// The verdicts' colours and counts, and the dashed lines.
fn forest_legend(g: &GateReport) -> String {
    let mut legend = String::from(r#"<ul class="legend">"#);
    for v in [
        Verdict::Regression,
        Verdict::Inconclusive,
        Verdict::Improvement,
        Verdict::Cleared,
    ] {
        legend.push_str(&format!(
            r#"<li><span class="swatch" style="background:{}"></span>{} ({})</li>"#,
            verdict_colour(v),
            v.name(),
            g.count(v)
        ));
    }
    legend.push_str(&format!(
        "<li>dashed: 1 + {} and its inverse, the finest threshold of a contended cell (1-thread cells from {}; each cell's own, and the noise it came from, in its row's title)</li></ul>",
        crate::strictness::pct(contended_threshold(g)),
        crate::strictness::pct(g.options.quiet_threshold)
    ));
    legend
}

/// The contended cells' threshold: fixed by `--threshold`, else the
/// finest of their ladder.
fn contended_threshold(g: &GateReport) -> f64 {
    g.options
        .threshold
        .unwrap_or(crate::strictness::CONTENDED_LADDER[0])
}

fn bound(v: f64) -> String {
    if v.is_finite() && v > 0.0 {
        format!("{v:.3}")
    } else {
        "unbounded".into()
    }
}

/// The case's values without their keys: `ticket 1` for `lock=ticket threads=1`.
fn short_case(c: &CellReport) -> String {
    c.case
        .values()
        .map(|v| v.as_str().map_or(v.to_string(), str::to_string))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Every `insns_per_op` cell: a row per (suite, bench, case), a column
/// per target; a count that changed against the reference is highlighted
/// with both values.
fn counts(run: &Run, gate: Option<&GateReport>) -> String {
    // (suite, bench, case) -> target -> (head, base, verdict)
    type Entry = (Option<f64>, Option<f64>, Option<Verdict>);
    let mut rows: BTreeMap<(Name, Name, String), BTreeMap<Name, Entry>> = BTreeMap::new();
    let mut targets: Vec<Name> = Vec::new();
    match gate {
        Some(g) => {
            for c in g.cells.iter().filter(|c| c.kind().exact()) {
                if !targets.contains(&c.target) {
                    targets.push(c.target.clone());
                }
                rows.entry((c.suite.clone(), c.bench.clone(), c.case_label()))
                    .or_default()
                    .insert(
                        c.target.clone(),
                        (
                            c.head.median,
                            c.base.as_ref().and_then(|b| b.median),
                            Some(c.verdict),
                        ),
                    );
            }
        }
        None => {
            for t in &run.targets {
                for s in &t.suites {
                    for x in s.samples.iter().filter(|x| x.kind().exact()) {
                        if !targets.contains(&t.name) {
                            targets.push(t.name.clone());
                        }
                        rows.entry((s.suite.clone(), x.bench.clone(), case_label(&x.case)))
                            .or_default()
                            .insert(t.name.clone(), (x.value, None, None));
                    }
                }
            }
        }
    }
    if rows.is_empty() {
        return "<p class=\"plain\">No instruction counts in this run (run without <code>--no-insns</code>, with the QEMU plugin).</p>".into();
    }
    let mut changed = 0;
    let mut t = vec![["suite", "bench", "case"]
        .iter()
        .map(|s| s.to_string())
        // Headers may break after a `-`: 16 columns fit a 1400px window.
        .chain(targets.iter().map(|t| esc(t).replace('-', "-<wbr>")))
        .collect::<Vec<_>>()];
    for ((suite, bench, case), per) in &rows {
        let mut row = vec![esc(suite), esc(bench), esc(case)];
        for target in &targets {
            // Names pass `Name`'s pattern; escaped all the same, as every
            // datum in an attribute is.
            let shown = esc(target);
            row.push(match per.get(target) {
                None => "".into(),
                Some((head, base, verdict)) => {
                    let h = head.map_or("-".into(), num);
                    match (head, base) {
                        (Some(h2), Some(b)) if h2 != b => {
                            changed += 1;
                            let class = if verdict == &Some(Verdict::Regression) || h2 > b {
                                "more"
                            } else {
                                "fewer"
                            };
                            format!(
                                r#"<span class="{class}" title="{shown}: {} -> {} insns/op ({})">{} → {h}</span>"#,
                                num(*b),
                                h,
                                verdict.map_or("-", |v| v.name()),
                                num(*b)
                            )
                        }
                        _ => format!(
                            r#"<span title="{shown}: {h} insns/op{}">{h}</span>"#,
                            verdict.map_or(String::new(), |v| format!(" ({})", v.name()))
                        ),
                    }
                }
            });
        }
        t.push(row);
    }
    let note = match gate {
        Some(_) if changed == 0 => "No count changed against the reference.".to_string(),
        Some(_) => format!(
            "{changed} counts changed against the reference: <span class=\"more\">more</span> instructions fail the gate, <span class=\"fewer\">fewer</span> do not."
        ),
        None => "Counts of this run alone (no reference).".into(),
    };
    format!("<p>Instructions per operation, exact (QEMU's plugin). {note}</p><div class=\"scroll\">{}</div>", table("data counts", &t))
}
