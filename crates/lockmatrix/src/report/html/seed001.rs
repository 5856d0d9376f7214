//! Seed 001: ns in lock()+unlock() per acquisition against the thread
//! count, one line per lock, one panel per target (each with its own log
//! axis: a QEMU target's times are the emulator's, in another range); then
//! per target the locks' events per acquisition and their lasom, by
//! thread count, as the terminal's tables.

use super::layout::{caption, grid, table, Locks};
use super::svg::{esc, num, Scale, Svg};
use crate::report::seeds::{events, seed001};
use crate::results::Run;

/// Width of a small-multiple panel: four fit across a 1400px window.
pub const WIDTH: f64 = 320.0;

pub fn section(run: &Run) -> Option<String> {
    let tables = seed001::tables(run);
    let model =
        crate::report::contention::ladder_of(run, "spinlock", "lock_unlock", "cycles_per_acq");
    if tables.is_empty() && model.is_none() {
        return None;
    }
    let locks = Locks::of(
        (tables.iter().flat_map(|t| t.locks.iter().cloned()))
            .chain(model.iter().flat_map(|m| m.locks.iter().cloned())),
    );
    let mut panels = Vec::new();
    for t in &tables {
        let (left, right, top, bottom, height) = (52.0, 16.0, 10.0, 34.0, 220.0);
        let Some(y) = Scale::fit(
            t.ns.iter().flatten().flatten().copied(),
            height - bottom,
            top,
            true,
        ) else {
            continue;
        };
        let mut s = Svg::new(WIDTH, height);
        s.y_axis(&y, left, WIDTH - right, "ns per acquisition (log)");
        // Thread counts are evenly spaced: they are a ladder, not a measure.
        let n = t.threads.len().max(1) as f64;
        let step = (WIDTH - left - right - 30.0) / (n - 1.0).max(1.0);
        let x = |i: usize| {
            if t.threads.len() == 1 {
                (left + WIDTH - right) / 2.0
            } else {
                left + 15.0 + step * i as f64
            }
        };
        s.line(
            (left, height - bottom),
            (WIDTH - right, height - bottom),
            "#888",
            1.0,
            "",
        );
        for (i, threads) in t.threads.iter().enumerate() {
            s.text(
                x(i),
                height - bottom + 12.0,
                "middle",
                "tick",
                &threads.to_string(),
            );
        }
        s.text(
            (left + WIDTH - right) / 2.0,
            height - 6.0,
            "middle",
            "axis",
            "threads",
        );
        for (j, lock) in t.locks.iter().enumerate() {
            let colour = locks.colour(lock);
            let points: Vec<(usize, f64)> =
                t.ns.iter()
                    .enumerate()
                    .filter_map(|(i, row)| Some((i, row[j]?)))
                    .collect();
            let line: Vec<(f64, f64)> = points.iter().map(|(i, v)| (x(*i), y.at(*v))).collect();
            s.polyline(&line, colour, lock);
            for (i, v) in &points {
                s.circle(
                    x(*i),
                    y.at(*v),
                    3.0,
                    colour,
                    &format!(
                        "{} {lock}, {} threads: {} ns per acquisition",
                        t.target,
                        t.threads[*i],
                        num(*v)
                    ),
                );
            }
        }
        panels.push((
            caption(&t.target, &t.runner),
            s.finish(&format!("seed 001 {}", t.target)),
        ));
    }
    let mut note = String::new();
    if let Some(m) = &model {
        panels.extend(super::contention::panel(m, &locks, WIDTH));
        note = format!(
            " The last panel is <strong>a model</strong>, not a measurement: the locks written \
             here on a simulated {} machine of up to 64 vCPUs, in simulated cycles \
             (<code>docs/contention-model.md</code> says what it leaves out and how far it \
             matches real machines).",
            crate::escape::html(&m.machine)
        );
    }
    Some(format!(
        "<p>Median ns in lock()+unlock() per acquisition over the rounds, by thread count; each \
         panel has its own log axis. Hover a point for its value; the terminal's \
         <code>cargo xtask report --tables</code> prints the same numbers.{note}</p>{}{}{}",
        locks.legend(),
        grid(panels),
        events_and_lasom(&tables)
    ))
}

/// Per target: what the acquisitions did (each lock's events per
/// acquisition: qspinlock's pending and queued paths, the ticket lock's
/// waits, ...) and lasom, rows by thread count.
fn events_and_lasom(tables: &[seed001::Scaling]) -> String {
    let mut out = String::new();
    let rows = |heads: Vec<String>, t: &seed001::Scaling, values: &[Vec<Option<f64>>]| {
        let mut rows = vec![std::iter::once("threads".to_string())
            .chain(heads)
            .collect::<Vec<_>>()];
        for (n, v) in t.threads.iter().zip(values) {
            let mut row = vec![n.to_string()];
            row.extend(v.iter().map(|x| events::fmt(*x)));
            rows.push(row);
        }
        format!(
            r#"<div class="scroll">{}</div>"#,
            table("data compact", &rows)
        )
    };
    for t in tables.iter().filter(|t| !t.events.is_empty()) {
        let heads = t
            .events
            .iter()
            .map(|(l, m)| format!("{} {}", esc(l), esc(&events::label(m))))
            .collect();
        out.push_str(&format!(
            "<h4>{}</h4>{}",
            caption(&t.target, &t.runner),
            rows(heads, t, &t.events_at)
        ));
    }
    if !out.is_empty() {
        out = format!(
            "<h3>Lock events per acquisition</h3><p>Median over the rounds of each event a lock \
             counts on its slow paths, per acquisition: tas and ttas failed swaps, the ticket \
             lock's waits and the tickets ahead when it waited, mcs's queued acquisitions and \
             unlocks that waited for a successor, qspinlock's pending and queued acquisitions \
             and queue heads that handed on. One thread counts none.</p>{out}"
        );
    }
    let mut lasom = String::new();
    for t in tables
        .iter()
        .filter(|t| t.lasom.iter().flatten().any(Option::is_some))
    {
        let heads = t.locks.iter().map(|l| esc(l)).collect();
        lasom.push_str(&format!(
            "<h4>{}</h4>{}",
            caption(&t.target, &t.runner),
            rows(heads, t, &t.lasom)
        ));
    }
    if !lasom.is_empty() {
        out.push_str(&format!(
            "<h3>lasom</h3><p>lockhammer's lasom: the per-thread acquisitions' standard \
             deviation over their mean (0: every thread got the same share).</p>{lasom}"
        ));
    }
    out
}
