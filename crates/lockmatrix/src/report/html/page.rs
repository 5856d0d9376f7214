//! The page: the sections in order, a contents line, and the style sheet,
//! all in one file (no JavaScript, no fonts or CSS from the network).

use super::svg::esc;
use super::{fairness, gate, meta, ordering, seed000, seed001, seed002, seed003};
use crate::gate::evaluate::GateReport;
use crate::report::table;
use crate::results::Run;

/// The tag that marks a page as lockmatrix's: `report` overwrites only
/// files that carry it.
pub const GENERATOR: &str = "<meta name=\"generator\" content=\"lockmatrix\">";

/// Every section, in page order: (anchor, heading). Every heading is on
/// every page, with a line saying so when the run has no data for it.
pub const SECTIONS: [(&str, &str); 9] = [
    ("run", "Run"),
    (
        "seed000",
        "Seed 000: local vs fully ordered CAS, and interrupts off/on",
    ),
    ("seed001", "Seed 001: ns per acquisition vs threads"),
    ("seed003", "Seed 003: S1/S2 stress, mean ± std"),
    ("seed002", "Seed 002: readers and writers"),
    ("fairness", "Fairness: per-thread acquisition spread"),
    ("ordering", "Memory ordering: model check and footprint"),
    ("gate", "The gate"),
    ("metadata", "Run metadata"),
];

pub const STYLE: &str = "\
body{font-family:system-ui,-apple-system,'Segoe UI',Roboto,'DejaVu Sans',sans-serif;margin:24px;color:#222;max-width:1500px}\
h1{font-size:22px;margin:0 0 4px}h2{font-size:18px;margin:28px 0 6px;border-bottom:1px solid #ccc;padding-bottom:3px}\
h3{font-size:15px;margin:16px 0 6px}h4{font-size:13px;margin:12px 0 4px}p{font-size:13px;margin:4px 0 8px;max-width:1100px}\
nav{font-size:13px}nav a{margin-right:12px}code{font-size:12px}\
.grid{display:grid;grid-template-columns:repeat(auto-fill,minmax(330px,1fr));gap:8px}\
.grid.wide-panels{grid-template-columns:repeat(auto-fill,minmax(704px,1fr))}\
.panel{margin:0;border:1px solid #ddd;border-radius:4px;padding:4px;background:#fff}\
figcaption{font-size:13px;font-weight:600;margin:0 0 2px 4px}\
.emu{color:#8a6d3b;font-style:italic;font-weight:normal;font-size:12px}.native{color:#666;font-weight:normal;font-size:12px}\
.note{color:#777;font-size:11px}.wide,.scroll{overflow-x:auto}\
ul.legend{list-style:none;padding:0;margin:4px 0 8px;font-size:12px;display:flex;flex-wrap:wrap;gap:4px 14px}\
.swatch{display:inline-block;width:11px;height:11px;margin-right:5px;vertical-align:-1px;border:1px solid #0002}\
table{border-collapse:collapse;font-size:12px;margin:6px 0 10px}th,td{border:1px solid #ddd;padding:2px 6px;text-align:left;vertical-align:top}\
th{background:#f4f4f4}table.compact td,table.compact th{padding:1px 5px;font-size:11.5px}table.kv th{width:170px}\
table.counts td,table.counts th{font-size:11px;padding:1px 2px}table.counts td{text-align:right;font-variant-numeric:tabular-nums}table.counts td:nth-child(n+4){white-space:nowrap}table.counts td:nth-child(-n+3){text-align:left}\
.more{background:#f8d7da;color:#842029;padding:0 3px;font-weight:600}.fewer{background:#d1e7dd;color:#0f5132;padding:0 3px;font-weight:600}\
.verdict{font-size:15px}.verdict.fail strong,.fail{color:#c0392b}.verdict.pass strong{color:#27ae60}\
.plain{background:#f6f6f6;border-left:4px solid #999;padding:6px 10px}\
ul.commands{font-size:12px}\
svg text{font-family:inherit}svg .tick{font-size:10px;fill:#555}svg .axis{font-size:11px;fill:#333}\
svg .label{font-size:10.5px;fill:#222}svg .note{font-size:10px;fill:#777}svg .emu-label{font-size:10px;fill:#8a6d3b;font-style:italic}\
";

/// The whole report of `run`, with the gate's findings when it was
/// compared with something.
pub fn render(run: &Run, gate: Option<&GateReport>) -> String {
    let mut body = String::new();
    for (id, heading) in SECTIONS {
        let content = match id {
            "run" => Some(summary(run)),
            "seed000" => seed000::section(run),
            "seed001" => seed001::section(run),
            "seed003" => seed003::section(run),
            "seed002" => seed002::section(run),
            "fairness" => fairness::section(run),
            "ordering" => ordering::section(run, gate),
            "gate" => Some(gate::section(run, gate)),
            _ => Some(meta::section(run)),
        };
        body.push_str(&format!(
            "<section id=\"{id}\"><h2>{}</h2>{}</section>\n",
            esc(heading),
            content.unwrap_or_else(|| "<p class=\"plain\">No data: this run did not run the suite behind this section.</p>".into())
        ));
    }
    let nav: Vec<String> = SECTIONS
        .iter()
        .map(|(id, h)| {
            format!(
                "<a href=\"#{id}\">{}</a>",
                esc(h.split(':').next().unwrap_or(h))
            )
        })
        .collect();
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width\">{GENERATOR}\
         <title>lockmatrix run {id}</title><style>{STYLE}</style></head><body>\
         <h1>lockmatrix run {id}</h1><p>{targets} targets, profile {profile}, commit <code>{commit}</code>, started {started}</p>\
         <nav>{nav}</nav>\n{body}</body></html>\n",
        id = esc(&run.run_id),
        targets = run.targets.len(),
        profile = run.profile,
        commit = esc(crate::commit::shown(run.host.lockmatrix_commit.as_ref())),
        started = esc(&run.started),
        nav = nav.join(""),
    )
}

/// Each target's status, and the closing counts.
fn summary(run: &Run) -> String {
    let mut rows = vec![["target", "class", "runner", "build", "run", "status"]
        .map(String::from)
        .to_vec()];
    for t in &run.targets {
        let status = t.status.label();
        let class = if status == "ok" {
            ""
        } else {
            " class=\"fail\""
        };
        rows.push(vec![
            esc(&t.name),
            esc(&t.class),
            if t.runner.name() == "qemu" {
                "<span class=\"emu\">qemu</span>".into()
            } else {
                t.runner.to_string()
            },
            t.build_secs.map_or("-".into(), |s| format!("{s:.1}s")),
            t.run_secs.map_or("-".into(), |s| format!("{s:.1}s")),
            format!("<span{class}>{}</span>", esc(&status)),
        ]);
    }
    let incomplete = if run.complete() {
        String::new()
    } else {
        "<p class=\"plain\"><strong>Incomplete run</strong> (interrupted, or still running): showing what it holds.</p>".into()
    };
    format!(
        "{incomplete}<p>{}. Under QEMU every time is the emulator's (marked <span class=\"emu\">QEMU: emulator time</span>); \
         instruction counts are exact everywhere. Hover any mark for its numbers.</p>{}",
        esc(&table::summary(run)),
        super::layout::table("data compact", &rows)
    )
}
