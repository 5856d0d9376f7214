//! The contention model's panel in seed 001's chart: cycles per
//! lock+unlock against the vCPU count to 64, one line per lock, captioned
//! and titled as a model so that no one reads it as a measurement.

use super::layout::Locks;
use super::svg::{num, Scale, Svg};
use crate::report::contention::Ladder;

/// The model's panel: (caption, svg), or none when it has no value.
/// `width`: seed 001's panels' (the grid's cells are one size).
pub fn panel(m: &Ladder, locks: &Locks, width: f64) -> Option<(String, String)> {
    let (left, right, top, bottom, height) = (52.0, 16.0, 10.0, 34.0, 220.0);
    let y = Scale::fit(
        m.values.iter().flatten().flatten().copied(),
        height - bottom,
        top,
        true,
    )?;
    let machine = crate::escape::html(&m.machine);
    let mut s = Svg::new(width, height);
    s.y_axis(&y, left, width - right, "simulated cycles (log)");
    let n = m.cpus.len().max(2) as f64;
    let step = (width - left - right - 30.0) / (n - 1.0);
    let x = |i: usize| left + 15.0 + step * i as f64;
    s.line(
        (left, height - bottom),
        (width - right, height - bottom),
        "#888",
        1.0,
        "",
    );
    for (i, c) in m.cpus.iter().enumerate() {
        s.text(
            x(i),
            height - bottom + 12.0,
            "middle",
            "tick",
            &c.to_string(),
        );
    }
    s.text(
        (left + width - right) / 2.0,
        height - 6.0,
        "middle",
        "axis",
        "virtual CPUs (model)",
    );
    for (j, lock) in m.locks.iter().enumerate() {
        let colour = locks.colour(lock);
        let points: Vec<(usize, f64)> = (m.values.iter().enumerate())
            .filter_map(|(i, row)| Some((i, row[j]?)))
            .collect();
        let line: Vec<(f64, f64)> = points.iter().map(|(i, v)| (x(*i), y.at(*v))).collect();
        s.polyline(&line, colour, &format!("model: {lock}"));
        for (i, v) in &points {
            s.circle(
                x(*i),
                y.at(*v),
                3.0,
                colour,
                &format!(
                    "MODEL ({}), {lock}, {} vCPUs: {} simulated cycles per acquisition",
                    m.machine,
                    m.cpus[*i],
                    num(*v)
                ),
            );
        }
    }
    Some((
        format!("MODEL: simulated <code>{machine}</code> machine, not a measurement"),
        s.finish("seed 001 contention model"),
    ))
}
