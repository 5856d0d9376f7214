//! Memory ordering: the loom model check of the run's locks, the Miri
//! check of the locks loom cannot see (one row per lock, as the terminal's
//! table, with the gate's verdict against a base), and every lock
//! operation's ordering footprint per target (the terminal's `full
//! barriers/one-way/atomic RMW` table, each cell titled with the
//! instructions, those the gate found changed highlighted).

use super::svg::esc;
use crate::gate::evaluate::GateReport;
use crate::gate::miri::MiriGate;
use crate::gate::ordering::View;
use crate::results::Run;
use std::collections::BTreeSet;
use std::fmt::Write;

pub fn section(run: &Run, gate: Option<&GateReport>) -> Option<String> {
    let models = models(run);
    let miri = miri(run, gate);
    let footprints = footprints(run, gate);
    if models.is_none() && miri.is_none() && footprints.is_none() {
        return None;
    }
    Some(format!(
        "<p>Under QEMU on an x86 host a weakly ordered guest runs in the host's strong order, so a lost barrier never fails a check there: it only lowers the count. These checks see it: loom's model of each lock written here under the C11 memory model, Miri on the locks loom cannot see (other crates' and std's) under the Rust memory model, and each operation's ordering instructions on every target, compared exactly by the gate.</p>{}{}{}",
        models.unwrap_or_default(),
        miri.unwrap_or_default(),
        footprints.unwrap_or_default()
    ))
}

fn models(run: &Run) -> Option<String> {
    let m = run.models.as_ref()?;
    let mut out = String::from("<h3>Model check (loom, C11)</h3>");
    if let Some(e) = &m.error {
        let _ = write!(out, "<p class=\"fail\">Not checked: {}</p>", esc(e));
        return Some(out);
    }
    out.push_str("<table class=\"compact\"><tr><th>lock</th><th>suite</th><th>model</th><th>interleavings</th><th>bound</th><th>time</th><th>result</th></tr>");
    for r in &m.results {
        let result = match (&r.failure, r.ok) {
            (_, true) => "ok".to_string(),
            (Some(f), false) => format!("<span class=\"more\">violated</span> {}", esc(f)),
            (None, false) => "<span class=\"more\">violated</span>".into(),
        };
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.2} s</td><td>{result}</td></tr>",
            esc(&r.lock),
            esc(&r.suite),
            esc(&r.model),
            r.interleavings,
            r.preemption_bound,
            r.secs
        );
    }
    out.push_str("</table>");
    if !m.unmodelled.is_empty() {
        out.push_str("<ul class=\"commands\">");
        for u in &m.unmodelled {
            let _ = write!(
                out,
                "<li>{}/{}: {}</li>",
                esc(&u.suite),
                esc(&u.lock),
                esc(&u.why)
            );
        }
        out.push_str("</ul>");
    }
    Some(out)
}

/// One row per lock Miri checked: its clients, seeds, races, time and
/// verdict (against the base, when the gate compared with one), the first
/// race with the flags that reproduce it, or why it was not checked.
fn miri(run: &Run, gate: Option<&GateReport>) -> Option<String> {
    let m = run.miri.as_ref()?;
    let mut out = String::from("<h3>Miri (the Rust memory model, the locks loom cannot see)</h3>");
    if let Some(why) = &m.not_checked {
        let _ = write!(out, "<p class=\"fail\">NOT CHECKED: {}</p>", esc(why));
        return Some(out);
    }
    let view = match gate {
        Some(g) if g.miri.ran => g.miri.clone(),
        _ => MiriGate::of(Some(m), None),
    };
    let setup = match (m.setup_secs, m.build_secs) {
        (Some(s), Some(b)) => format!(", setup {s:.1} s, build {b:.1} s"),
        _ => String::new(),
    };
    let _ = write!(
        out,
        "<p>Each lock's clients run unmodified under Miri ({}) on fixed seeds; a race on any seed fails the gate. {:.1} s in all{setup}.</p>",
        esc(m.toolchain.as_deref().unwrap_or("toolchain not recorded")),
        m.secs
    );
    out.push_str("<table class=\"compact\"><tr><th>lock</th><th>suite</th><th>crate</th><th>clients</th><th>seeds</th><th>races</th><th>time</th><th>result</th></tr>");
    for l in &view.locks {
        let verdict = l.verdict();
        let result = match &l.race {
            Some(r) => format!(
                "<span class=\"more\">{}</span> client \"{}\", seed {}: {}{}<br><code>MIRIFLAGS=\"{}\"</code>",
                esc(verdict),
                esc(&r.client),
                r.seed,
                esc(&r.error),
                r.at
                    .as_deref()
                    .map(|a| format!(" at {}", esc(a)))
                    .unwrap_or_default(),
                esc(&r.miriflags)
            ),
            None if !l.not_checked.is_empty() => format!(
                "<span class=\"more\">{}</span> {}",
                esc(verdict),
                esc(&l.not_checked.join("; "))
            ),
            None => format!(
                "{}{}",
                esc(verdict),
                if l.cached { " (cached)" } else { "" }
            ),
        };
        let _ = write!(
            out,
            "<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{:.1} s</td><td>{result}</td></tr>",
            esc(&l.lock),
            esc(&l.suite),
            esc(&l.krate),
            l.clients,
            l.seeds,
            l.races,
            l.secs
        );
    }
    out.push_str("</table>");
    Some(out)
}

fn footprints(run: &Run, gate: Option<&GateReport>) -> Option<String> {
    // (target, suite, unit, op) whose static footprint the gate found changed.
    let changed: BTreeSet<(&str, &str, &str, &str)> = gate
        .map(|g| {
            g.ordering
                .iter()
                .filter(|c| c.view == View::Static)
                .map(|c| {
                    (
                        c.target.as_str(),
                        c.suite.as_str(),
                        c.unit.as_str(),
                        c.what.as_str(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let tables = crate::report::footprints::tables(run);
    if tables.is_empty() {
        return None;
    }
    let mut out = String::from(
        "<h3>Ordering footprint per operation</h3><p>Each operation's whole code on each target, as full barriers / one-way (acquire, release) / atomic RMW instructions; hover a cell for the instructions. <span class=\"more\">Highlighted</span>: changed against the reference (the gate lists it).</p>",
    );
    for t in tables {
        let _ = write!(
            out,
            "<h4>{}</h4><div class=\"scroll\"><table class=\"counts\"><tr><th>unit</th><th>op</th>",
            esc(t.suite)
        );
        for target in &t.targets {
            let _ = write!(out, "<th>{}</th>", esc(target));
        }
        out.push_str("</tr>");
        for ((unit, op), cells) in &t.rows {
            let _ = write!(out, "<tr><td>{}</td><td>{}</td>", esc(unit), esc(op));
            for target in &t.targets {
                let Some(cell) = cells.get(target) else {
                    out.push_str("<td></td>");
                    continue;
                };
                let class = match changed.contains(&(*target, t.suite, *unit, *op)) {
                    true => " class=\"more\"",
                    false => "",
                };
                let insns = match cell.insns.is_empty() {
                    true => "none".to_string(),
                    false => cell.insns.join(", "),
                };
                let _ = write!(
                    out,
                    "<td><span{class} title=\"{}: {}\">{}</span></td>",
                    esc(target),
                    esc(&insns),
                    cell.counts()
                );
            }
            out.push_str("</tr>");
        }
        out.push_str("</table></div>");
    }
    Some(out)
}
