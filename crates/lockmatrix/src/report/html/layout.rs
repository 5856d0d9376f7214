//! What every section of the HTML report is laid out with: each lock's
//! colour, panels in a grid and their captions, tables, label margins.

use super::svg;
use std::fmt::Write;

/// Each lock's colour, the same in every panel: locks in the order the run
/// first shows them.
pub(crate) struct Locks(Vec<String>);

impl Locks {
    pub fn of(names: impl IntoIterator<Item = String>) -> Locks {
        let mut out: Vec<String> = Vec::new();
        for n in names {
            if !out.contains(&n) {
                out.push(n);
            }
        }
        Locks(out)
    }

    pub fn colour(&self, name: &str) -> &'static str {
        svg::colour(
            self.0
                .iter()
                .position(|n| n == name)
                .unwrap_or(self.0.len()),
        )
    }

    /// The legend, as HTML text (readable without the chart).
    pub fn legend(&self) -> String {
        let mut out = String::from(r#"<ul class="legend">"#);
        for n in &self.0 {
            let _ = write!(
                out,
                r#"<li><span class="swatch" style="background:{}"></span>{}</li>"#,
                self.colour(n),
                svg::esc(n)
            );
        }
        out.push_str("</ul>");
        out
    }
}

/// A grid of panels, one per target: each `(caption, svg)`.
pub fn grid(panels: Vec<(String, String)>) -> String {
    let mut out = String::from(r#"<div class="grid">"#);
    for (caption, svg) in panels {
        let _ = write!(
            out,
            r#"<figure class="panel"><figcaption>{caption}</figcaption>{svg}</figure>"#
        );
    }
    out.push_str("</div>");
    out
}

/// A panel's caption: the target, and "QEMU: emulator time" where the
/// times are the emulator's.
pub(crate) fn caption(target: &str, runner: &str) -> String {
    if runner == "qemu" {
        format!(
            r#"{} <span class="emu" title="times under QEMU measure the emulator, not the guest CPU">QEMU: emulator time</span>"#,
            svg::esc(target)
        )
    } else {
        format!(
            r#"{} <span class="native">{}</span>"#,
            svg::esc(target),
            svg::esc(runner)
        )
    }
}

/// An HTML table: the first row is the header; cells are HTML already.
pub(crate) fn table(class: &str, rows: &[Vec<String>]) -> String {
    let mut out = format!(r#"<table class="{class}">"#);
    for (i, row) in rows.iter().enumerate() {
        out.push_str("<tr>");
        for c in row {
            if i == 0 {
                let _ = write!(out, "<th>{c}</th>");
            } else {
                let _ = write!(out, "<td>{c}</td>");
            }
        }
        out.push_str("</tr>");
    }
    out.push_str("</table>");
    out
}

/// A left margin wide enough for the longest of `labels` at the panels'
/// label size (10.5px: about 6.2px a character), within reason.
pub(crate) fn label_margin<'a>(labels: impl IntoIterator<Item = &'a str>) -> f64 {
    let longest = labels
        .into_iter()
        .map(|l| l.chars().count())
        .max()
        .unwrap_or(0);
    (longest as f64 * 6.2 + 12.0).clamp(48.0, 170.0)
}

/// A value for a title or a table, or a dash.
pub(crate) fn opt(v: Option<f64>) -> String {
    v.map_or("-".into(), svg::num)
}
