//! Seed 002: reader and writer locking ops per thread, min to max with the
//! average marked, per critical-section load and lock, one panel per
//! target and side; then the all-writers vs half-writers change, and the
//! slow paths and lock events per acquisition of each lock, as the
//! terminal's tables.

use super::layout::{caption, grid, table, Locks};
use super::svg::{esc, Scale, Svg};
use crate::report::seeds::events as seed_events;
use crate::report::seeds::seed002::{self, Table};
use crate::results::Run;

pub fn section(run: &Run) -> Option<String> {
    let tables = seed002::tables(run);
    if tables.is_empty() {
        return None;
    }
    let locks = Locks::of(tables.iter().map(|t| t.lock.clone()));
    let mut targets: Vec<(&str, &str)> = Vec::new();
    for t in &tables {
        if !targets.iter().any(|(n, _)| *n == t.target) {
            targets.push((&t.target, &t.runner));
        }
    }
    let mut out = format!(
        "<p>Locking operations per thread in a fixed time, half readers and half writers: \
         the line spans the slowest to the fastest thread (median over rounds), the dot is the \
         average. Rows are critical-section loads (units of work, or a 1 us sleep), one line per lock; \
         each panel has its own log axis.</p>{}",
        locks.legend()
    );
    for (side, pick) in [
        (
            "Readers",
            (|l: &seed002::Load| l.reader) as fn(&seed002::Load) -> [Option<f64>; 3],
        ),
        ("Writers", |l: &seed002::Load| l.writer),
    ] {
        let mut panels = Vec::new();
        for (target, runner) in &targets {
            let of: Vec<&Table> = tables.iter().filter(|t| t.target == *target).collect();
            if let Some(svg) = panel(target, side, &of, pick, &locks) {
                panels.push((caption(target, runner), svg));
            }
        }
        out.push_str(&format!(
            "<h3>{side}: ops per thread, min / avg / max</h3>{}",
            grid(panels)
        ));
    }
    out.push_str("<h3>All writers vs half writers: writer ops per thread, % change</h3>");
    let mut rows = vec![std::iter::once("target / lock".to_string())
        .chain(
            seed002::LOADS
                .iter()
                .map(|l| format!("CS load {}", seed002::load_name(l))),
        )
        .collect::<Vec<_>>()];
    for t in &tables {
        let mut row = vec![format!("{} / {}", esc(&t.target), esc(&t.lock))];
        for l in &t.loads {
            row.push(match l.change() {
                Some(c) => format!(
                    r#"<span title="all writers {} → half writers {}">{c:+.1}%</span>"#,
                    super::layout::opt(l.all_writers),
                    super::layout::opt(l.half_writers)
                ),
                None => "-".into(),
            });
        }
        rows.push(row);
    }
    out.push_str(&table("data compact", &rows));
    out.push_str(&events(&tables));
    Some(out)
}

/// Per target and lock: slow-path entries, steals, sleeps and hand-offs
/// per acquisition of their side, and each side's lasom, rows by mix and
/// load.
fn events(tables: &[Table]) -> String {
    let mut out = String::new();
    for t in tables.iter().filter(|t| !t.events.is_empty()) {
        let mut rows = vec![["mix", "CS load"]
            .map(String::from)
            .into_iter()
            .chain(t.events.iter().map(|m| esc(&seed_events::label(m))))
            .collect::<Vec<_>>()];
        for (mix, all) in [("half", false), ("all writers", true)] {
            for l in &t.loads {
                let values = if all { &l.events_all } else { &l.events_half };
                if values.iter().any(Option::is_some) {
                    let row = [mix.to_string(), esc(&l.load)];
                    rows.push(
                        row.into_iter()
                            .chain(values.iter().map(|v| seed_events::fmt(*v)))
                            .collect(),
                    );
                }
            }
        }
        out.push_str(&format!(
            "<h4>{} / {}</h4><div class=\"scroll\">{}</div>",
            esc(&t.target),
            esc(&t.lock),
            table("data compact", &rows)
        ));
    }
    if out.is_empty() {
        return out;
    }
    format!(
        "<h3>Slow paths and lock events per acquisition</h3><p>Median over the rounds, per \
         locking operation of the event's side: slow-path entries (every lock that counts \
         them), and the Linux-style rwsem's reader steals, sleeps (futex waits) and hand-offs, \
         as Linux's lock event counts name them; lasom is the side's per-thread ops' standard \
         deviation over their mean.</p>{out}"
    )
}

fn panel(
    target: &str,
    side: &str,
    tables: &[&Table],
    pick: fn(&seed002::Load) -> [Option<f64>; 3],
    locks: &Locks,
) -> Option<String> {
    let loads = tables.first()?.loads.len();
    let (left, right, top) = (64.0, 20.0, 6.0);
    let (line, gap) = (6.0, 8.0);
    let group = line * tables.len() as f64 + gap;
    let width = super::seed001::WIDTH;
    let height = top + group * loads as f64 + 32.0;
    let x = Scale::fit(
        tables
            .iter()
            .flat_map(|t| t.loads.iter().flat_map(|l| pick(l).into_iter().flatten())),
        left,
        width - right,
        true,
    )?;
    let mut s = Svg::new(width, height);
    let axis_y = top + group * loads as f64;
    s.x_axis(&x, axis_y, top, "ops per thread (log)");
    for li in 0..loads {
        let y0 = top + group * li as f64 + gap / 2.0;
        let name = &tables[0].loads[li].load;
        s.text(
            left - 4.0,
            y0 + line * tables.len() as f64 / 2.0 + 3.5,
            "end",
            "label",
            name,
        );
        for (k, t) in tables.iter().enumerate() {
            let [min, avg, max] = pick(&t.loads[li]);
            let y = y0 + line * k as f64 + line / 2.0;
            let colour = locks.colour(&t.lock);
            let title = format!(
                "{target} {} {side}, CS load {name}: min {} / avg {} / max {} ops per thread",
                t.lock,
                super::layout::opt(min),
                super::layout::opt(avg),
                super::layout::opt(max)
            );
            if let (Some(lo), Some(hi)) = (min, max) {
                // Caps at both ends keep a range visible when min = max.
                let (lo, hi) = (x.at(lo), x.at(hi));
                s.line((lo, y), (hi, y), colour, 2.0, &title);
                s.line((lo, y - 2.5), (lo, y + 2.5), colour, 1.5, "");
                s.line((hi, y - 2.5), (hi, y + 2.5), colour, 1.5, "");
            }
            if let Some(a) = avg {
                s.circle(x.at(a), y, 2.6, colour, &title);
            }
        }
    }
    Some(s.finish(&format!("seed 002 {side} {target}")))
}
