//! Seed 003: S1 and S2 total time per lock, mean ± standard deviation over
//! the runs, with the % improvement against the ticket lock beside each bar;
//! then each lock's lasom and lock events per acquisition, as the
//! terminal's table.

use super::layout::{caption, grid, table, Locks};
use super::svg::{esc, Scale, Svg};
use crate::report::seeds::seed003::{self, REFERENCE, SCENARIOS};
use crate::results::Run;

pub fn section(run: &Run) -> Option<String> {
    let tables = seed003::tables(run);
    if tables.is_empty() {
        return None;
    }
    let locks = Locks::of(
        tables
            .iter()
            .flat_map(|t| t.rows.iter().map(|r| r.lock.clone())),
    );
    let mut out = format!(
        "<p>Total time of one run in ms, mean ± std over the runs (bars and whiskers); the label is \
         the % less time than <code>{REFERENCE}</code> (positive: faster).</p>{}",
        locks.legend()
    );
    for (bench, title) in SCENARIOS {
        let mut panels = Vec::new();
        for t in tables.iter().filter(|t| t.bench == bench) {
            let left = super::layout::label_margin(t.rows.iter().map(|r| r.lock.as_str()));
            let (right, top, row) = (58.0, 8.0, 16.0);
            let width = super::seed001::WIDTH;
            let height = top + row * t.rows.len() as f64 + 34.0;
            let Some(x) = Scale::fit(
                t.rows.iter().map(|r| r.mean_ms + r.std_ms),
                left,
                width - right,
                false,
            ) else {
                continue;
            };
            let mut s = Svg::new(width, height);
            let axis_y = top + row * t.rows.len() as f64 + 4.0;
            s.x_axis(&x, axis_y, top, "ms per run");
            for (i, r) in t.rows.iter().enumerate() {
                let yc = top + row * i as f64 + row / 2.0;
                s.text(left - 4.0, yc + 3.5, "end", "label", &r.lock);
                let gain = r.gain.map_or("-".into(), |g| format!("{g:+.1}%"));
                let title = format!(
                    "{} {} {}: {:.3} ms ± {:.3} (std); {} vs {REFERENCE}",
                    t.target, bench, r.lock, r.mean_ms, r.std_ms, gain
                );
                s.rect(
                    left,
                    yc - 5.0,
                    x.at(r.mean_ms) - left,
                    10.0,
                    locks.colour(&r.lock),
                    &title,
                );
                let (lo, hi) = (
                    x.at((r.mean_ms - r.std_ms).max(0.0)),
                    x.at(r.mean_ms + r.std_ms),
                );
                s.line((lo, yc), (hi, yc), "#333", 1.2, &title);
                s.line((hi, yc - 3.0), (hi, yc + 3.0), "#333", 1.2, "");
                let label = if r.lock == REFERENCE {
                    "ref".to_string()
                } else {
                    gain
                };
                s.text(width - right + 4.0, yc + 3.5, "start", "label", &label);
            }
            panels.push((
                caption(&t.target, &t.runner),
                s.finish(&format!("seed 003 {bench} {}", t.target)),
            ));
        }
        if !panels.is_empty() {
            out.push_str(&format!("<h3>{title}</h3>{}", grid(panels)));
        }
        let mut rows = vec![["target", "lock", "lasom", "lock events per acquisition"]
            .map(String::from)
            .to_vec()];
        for t in tables.iter().filter(|t| t.bench == bench) {
            for r in t
                .rows
                .iter()
                .filter(|r| r.lasom.is_some() || !r.events.is_empty())
            {
                rows.push(vec![
                    esc(&t.target),
                    esc(&r.lock),
                    crate::report::seeds::events::fmt(r.lasom),
                    esc(&seed003::events_text(&r.events)),
                ]);
            }
        }
        if rows.len() > 1 {
            out.push_str(&format!(
                "<p>Fairness and lock events of the same runs: lasom of the per-thread \
                 acquisitions while every thread ran, and each event the lock counts, per \
                 acquisition (medians over the runs).</p><div class=\"scroll\">{}</div>",
                table("data compact", &rows)
            ));
        }
    }
    Some(out)
}
