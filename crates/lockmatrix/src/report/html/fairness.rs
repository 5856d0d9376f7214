//! Fairness: how evenly the threads shared the lock. Per lock, at the
//! largest thread count of `lock_unlock`, the acquisitions of the least and
//! the most served thread relative to the average (1 = a fair share), with
//! the coefficient of variation across threads.

use super::layout::{caption, grid, Locks};
use super::svg::{num, Scale, Svg};
use crate::name::Name;
use crate::report::seeds::cell;
use crate::results::{Run, TargetResult};
use serde_json::Value;

/// One lock's share: the least, average and most acquisitions per thread,
/// and their coefficient of variation.
struct Row {
    lock: String,
    min: f64,
    avg: f64,
    max: f64,
    cv: Option<f64>,
}

/// One target's panel: its locks' shares at its largest thread count.
struct Panel {
    target: Name,
    runner: String,
    threads: u64,
    rows: Vec<Row>,
}

/// The fairness section: one panel per target with spinlock shares, or
/// `None` when no target has any.
pub fn section(run: &Run) -> Option<String> {
    let per_target: Vec<Panel> = run.targets.iter().filter_map(panel).collect();
    if per_target.is_empty() {
        return None;
    }
    let locks = Locks::of(
        per_target
            .iter()
            .flat_map(|p| p.rows.iter().map(|r| r.lock.clone())),
    );
    let mut panels = Vec::new();
    for p in &per_target {
        panels.push((caption(&p.target, &p.runner), chart(p, &locks)?));
    }
    Some(format!(
        "<p>Per lock at the largest thread count: the bar spans the least to the most served \
         thread's acquisitions, relative to the average (the dashed line, 1 = a fair share); \
         <em>cv</em> is the coefficient of variation across threads (median over rounds). \
         A wide bar is an unfair lock.</p>{}{}",
        locks.legend(),
        grid(panels)
    ))
}

/// A target's spinlock shares in `lock_unlock` at its largest thread
/// count, per lock in the order they first appear; `None` without any.
fn panel(t: &TargetResult) -> Option<Panel> {
    let s = t.suites.iter().find(|s| s.suite == "spinlock")?;
    let lock_unlock = || s.samples.iter().filter(|x| x.bench == "lock_unlock");
    let threads = lock_unlock()
        .filter_map(|x| x.case.get("threads").and_then(Value::as_u64))
        .max()?;
    let mut names: Vec<String> = Vec::new();
    for x in lock_unlock() {
        if let Some(l) = x.case.get("lock").and_then(Value::as_str) {
            if !names.iter().any(|n| n == l) {
                names.push(l.to_string());
            }
        }
    }
    let rows: Vec<Row> = names
        .into_iter()
        .filter_map(|lock| {
            let case = [
                ("lock", Value::from(lock.as_str())),
                ("threads", Value::from(threads)),
            ];
            let get = |m: &str| cell(s, "lock_unlock", &case, m);
            let avg = get("acquisitions_avg").filter(|a| *a > 0.0)?;
            Some(Row {
                min: get("acquisitions_min")?,
                max: get("acquisitions_max")?,
                cv: get("fairness_cv"),
                avg,
                lock,
            })
        })
        .collect();
    (!rows.is_empty()).then(|| Panel {
        target: t.name.clone(),
        runner: t.runner.to_string(),
        threads,
        rows,
    })
}

/// A target's chart: per lock a bar from the least to the most served
/// thread relative to the average, with its cv beside it; `None` when
/// there is nothing to scale.
fn chart(p: &Panel, locks: &Locks) -> Option<String> {
    let Panel {
        target,
        threads,
        rows,
        ..
    } = p;
    let left = super::layout::label_margin(rows.iter().map(|r| r.lock.as_str()));
    let (right, top, row) = (54.0, 8.0, 16.0);
    let width = super::seed001::WIDTH;
    let height = top + row * rows.len() as f64 + 34.0;
    let x = Scale::fit(
        rows.iter().map(|r| r.max / r.avg).chain([0.0, 2.0]),
        left,
        width - right,
        false,
    )?;
    let mut s = Svg::new(width, height);
    let axis_y = top + row * rows.len() as f64 + 4.0;
    s.x_axis(
        &x,
        axis_y,
        top,
        &format!("acquisitions / average, {threads} threads"),
    );
    s.dashed(x.at(1.0), top, x.at(1.0), axis_y, "#555");
    for (i, r) in rows.iter().enumerate() {
        let yc = top + row * i as f64 + row / 2.0;
        let title = format!(
            "{target} {} at {threads} threads: acquisitions per thread min {} / avg {} / max {}; cv {}",
            r.lock,
            num(r.min),
            num(r.avg),
            num(r.max),
            r.cv.map_or("-".into(), |c| format!("{c:.3}"))
        );
        s.text(left - 4.0, yc + 3.5, "end", "label", &r.lock);
        let (lo, hi) = (x.at(r.min / r.avg), x.at(r.max / r.avg));
        s.rect(
            lo,
            yc - 4.0,
            (hi - lo).max(2.0),
            8.0,
            locks.colour(&r.lock),
            &title,
        );
        s.text(
            width - right + 4.0,
            yc + 3.5,
            "start",
            "label",
            &r.cv.map_or("-".into(), |c| format!("cv {c:.2}")),
        );
    }
    Some(s.finish(&format!("fairness {target}")))
}
