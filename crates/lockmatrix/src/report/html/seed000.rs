//! Seed 000: local vs fully ordered CAS and "interrupts" off/on, per
//! architecture, as grouped bars on one log axis (the costs span three
//! decades), with instructions per op beside each time in the table.

use super::layout::table;
use super::svg::{self, num, Scale, Svg};
use crate::report::seeds::seed000::{self, Row, OPS};
use crate::results::Run;

const LABELS: [&str; 4] = ["CAS local", "CAS sync", "irq enable", "irq disable"];
const COLOURS: [&str; 4] = ["#56b4e9", "#0072b2", "#e69f00", "#d55e00"];

/// Seed 000's section: the chart of costs per architecture, its legend,
/// and the table of times, instruction counts and barriers; `None` when
/// the run has no seed 000 rows.
pub fn section(run: &Run) -> Option<String> {
    let rows = seed000::rows(run);
    if rows.is_empty() {
        return None;
    }
    let chart = chart(&rows)?;
    debug_assert_eq!(OPS.len(), LABELS.len());
    Some(format!(
        "<p>ns per op with the empty loop subtracted; Speedup = (irq off + irq on) / local CAS. \
         \"Interrupts\" are all signals, blocked and unblocked with pthread_sigmask. \
         Under QEMU the times are the emulator's (shaded); the instruction counts beside them are exact. \
         rustc/gcc: the CAS as the atomic suite (rustc) and its C twin atomic-c (GCC) compiled it, \
         instructions and full barriers executed per op; a row marked gcc has no Rust suite (alpha).</p>\
         {}<div class=\"wide\">{chart}</div>{}<p>{}</p>",
        legend(),
        table("data", &data_table(&rows)),
        svg::esc(seed000::IA64)
    ))
}

/// The grouped bars, one group per architecture on one log axis, QEMU's
/// columns shaded; `None` when there is no time to scale.
fn chart(rows: &[Row]) -> Option<String> {
    let (left, top, bottom) = (64.0, 16.0, 58.0);
    let group = (1240.0 / rows.len() as f64).clamp(64.0, 110.0);
    let width = left + group * rows.len() as f64 + 12.0;
    let height = 300.0;
    let y = Scale::fit(
        rows.iter().flat_map(|r| r.ns.iter().flatten().copied()),
        height - bottom,
        top,
        true,
    )?;
    let mut s = Svg::new(width, height);
    for (i, r) in rows.iter().enumerate() {
        let x0 = left + group * i as f64;
        if r.qemu {
            s.rect(
                x0 + 1.0,
                top,
                group - 2.0,
                height - bottom - top,
                "#f3f0e8",
                "QEMU: these times are the emulator's",
            );
        }
    }
    s.y_axis(&y, left, width - 12.0, "ns per op (log)");
    let bar = ((group - 12.0) / 4.0).min(18.0);
    for (i, r) in rows.iter().enumerate() {
        let x0 = left + group * i as f64 + (group - 4.0 * bar) / 2.0;
        for k in 0..4 {
            let Some(v) = r.ns[k] else { continue };
            let top_y = y.at(v);
            let insns = r.insns[k].map_or(String::new(), |n| format!(", {} insns/op", num(n)));
            let emu = if r.qemu { " (emulator time)" } else { "" };
            s.rect(
                x0 + bar * k as f64,
                top_y,
                bar - 1.0,
                height - bottom - top_y,
                COLOURS[k],
                &format!("{} {}: {} ns{emu}{insns}", r.target, LABELS[k], num(v)),
            );
        }
        let cx = left + group * i as f64 + group / 2.0;
        let (base, variant) = r.target.split_once('-').unwrap_or((&r.target, ""));
        s.text(cx, height - bottom + 14.0, "middle", "label", base);
        if !variant.is_empty() {
            s.text(cx, height - bottom + 27.0, "middle", "label", variant);
        }
        s.text(
            cx,
            height - bottom + 41.0,
            "middle",
            if r.qemu { "emu-label" } else { "note" },
            if r.qemu { "QEMU" } else { "native" },
        );
    }
    Some(s.finish("seed 000: ns per op by architecture"))
}

/// The chart's legend: each operation's colour, and QEMU's shading.
fn legend() -> String {
    let mut legend = String::from(r#"<ul class="legend">"#);
    for k in 0..4 {
        legend.push_str(&format!(
            r#"<li><span class="swatch" style="background:{}"></span>{}</li>"#,
            COLOURS[k], LABELS[k]
        ));
    }
    legend.push_str(r#"<li><span class="swatch" style="background:#f3f0e8"></span>QEMU column: emulator time, not the guest CPU's</li></ul>"#);
    legend
}

/// The table beside the chart: per architecture each operation's time
/// and instructions per op, the speedup, and rustc against gcc.
fn data_table(rows: &[Row]) -> Vec<Vec<String>> {
    let mut header = vec!["Architecture".to_string(), "runner".into()];
    for l in LABELS {
        header.push(format!("{l} ns"));
        header.push(format!("{l} insns/op"));
    }
    header.extend([
        "Speedup".into(),
        "local CAS is".into(),
        "CAS local insns rustc/gcc".into(),
        "CAS sync insns rustc/gcc".into(),
        "CAS sync barriers rustc/gcc".into(),
    ]);
    let mut t = vec![header];
    for r in rows {
        let by = if r.compiler == "gcc" { " (gcc)" } else { "" };
        let mut row = vec![svg::esc(&format!("{}{by}", r.target)), runner(r.qemu)];
        for k in 0..4 {
            let ns = r.ns[k].map_or("-".into(), |v| format!("{v:.1}"));
            row.push(if r.qemu {
                format!(r#"<span class="emu" title="emulator time">{ns}</span>"#)
            } else {
                ns
            });
            row.push(r.insns[k].map_or("-".into(), |v| format!("{v:.0}")));
        }
        row.push(r.speedup.map_or("-".into(), |v| format!("{v:.2}")));
        row.push(svg::esc(&r.variant));
        row.push(seed000::versus(r, |c| c.insns[0]));
        row.push(seed000::versus(r, |c| c.insns[1]));
        row.push(seed000::versus(r, |c| c.barriers[1]));
        t.push(row);
    }
    t
}

/// The runner column: QEMU marked as the emulator's times, or native.
fn runner(qemu: bool) -> String {
    if qemu {
        r#"<span class="emu" title="times are the emulator's">qemu</span>"#.into()
    } else {
        "native".into()
    }
}
