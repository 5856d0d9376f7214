//! Seed 002 (Longman, rwsem on arm64): per-thread locking ops min/avg/max
//! for readers and writers at each critical-section load, slowpath counts
//! (with all writers too, which Longman found "exceedingly small" on
//! arm64), and all-writers vs half-writers; then each mix's lock events
//! per acquisition (slow paths, steals, sleeps, hand-offs) and each side's
//! lasom.

use super::cells::{cell, fmt};
use super::events;
use crate::report::table::render as columns;
use crate::results::{Run, SuiteRun};
use serde_json::Value;

pub const LOADS: &[&str] = &["1", "10", "50", "100", "sleep1us"];

/// One critical-section load of one lock: ops per thread (median over
/// rounds) as `[min, avg, max]`, with the half-readers/half-writers mix.
pub struct Load {
    pub load: String,
    pub reader: [Option<f64>; 3],
    pub writer: [Option<f64>; 3],
    pub reader_slowpath: Option<f64>,
    pub writer_slowpath: Option<f64>,
    /// `writer_slowpath` with every thread a writer.
    pub all_writers_slowpath: Option<f64>,
    /// The median of each of the table's [`Table::events`] per
    /// acquisition, half readers and half writers, then all writers.
    pub events_half: Vec<Option<f64>>,
    pub events_all: Vec<Option<f64>>,
    /// `writer_ops_avg` with every thread a writer.
    pub all_writers: Option<f64>,
    /// `writer_ops_avg` with half the threads writers.
    pub half_writers: Option<f64>,
}

impl Load {
    /// Half writers vs all writers, in % of all writers.
    pub fn change(&self) -> Option<f64> {
        match (self.all_writers, self.half_writers) {
            (Some(a), Some(h)) if a > 0.0 => Some((h - a) / a * 100.0),
            _ => None,
        }
    }
}

/// One lock on one target.
pub struct Table {
    pub target: String,
    pub runner: String,
    pub lock: String,
    pub loads: Vec<Load>,
    /// The lock's events and lasoms, as metrics, in the order the suite
    /// printed them.
    pub events: Vec<String>,
}

fn locks(s: &SuiteRun) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for x in s.samples.iter().filter(|x| x.bench == "rw_mix") {
        if let Some(l) = x.case.get("lock").and_then(Value::as_str) {
            if !out.iter().any(|k| k == l) {
                out.push(l.to_string());
            }
        }
    }
    out
}

pub fn load_name(load: &str) -> String {
    if load == "sleep1us" {
        "1us sleep".into()
    } else {
        load.into()
    }
}

/// Per target, per lock, in run order.
pub fn tables(run: &Run) -> Vec<Table> {
    let mut out = Vec::new();
    for t in &run.targets {
        let Some(s) = t.suites.iter().find(|s| s.suite == "rwsem") else {
            continue;
        };
        for lock in locks(s) {
            let get = |mix: &str, load: &str, metric: &str| {
                let case = [
                    ("lock", Value::from(lock.as_str())),
                    ("mix", Value::from(mix)),
                    ("cs_load", Value::from(load)),
                ];
                cell(s, "rw_mix", &case, metric)
            };
            let mmm = |load: &str, side: &str| {
                ["min", "avg", "max"].map(|k| get("half", load, &format!("{side}_ops_{k}")))
            };
            let events: Vec<String> =
                events::columns(s, "rw_mix", |x| events::is_event(x) || events::is_lasom(x))
                    .into_iter()
                    .filter(|(l, _)| *l == lock)
                    .map(|(_, m)| m)
                    .collect();
            let each = |mix: &str, load: &str| events.iter().map(|m| get(mix, load, m)).collect();
            let loads = LOADS
                .iter()
                .map(|load| Load {
                    load: load_name(load),
                    reader: mmm(load, "reader"),
                    writer: mmm(load, "writer"),
                    reader_slowpath: get("half", load, "reader_slowpath"),
                    writer_slowpath: get("half", load, "writer_slowpath"),
                    all_writers_slowpath: get("all_writers", load, "writer_slowpath"),
                    events_half: each("half", load),
                    events_all: each("all_writers", load),
                    all_writers: get("all_writers", load, "writer_ops_avg"),
                    half_writers: get("half", load, "writer_ops_avg"),
                })
                .collect();
            out.push(Table {
                target: t.name.to_string(),
                runner: t.runner.to_string(),
                lock,
                loads,
                events,
            });
        }
    }
    out
}

pub fn render(run: &Run) -> String {
    let mut out = String::new();
    for t in tables(run) {
        let mut ops = vec![[
            "CS Load",
            "Reader Ops/Thread min/avg/max",
            "Writer Ops/Thread min/avg/max",
        ]
        .map(String::from)
        .to_vec()];
        let mut slow = vec![[
            "CS Load",
            "Reader Slowpath",
            "Writer Slowpath",
            "All Writers Slowpath",
        ]
        .map(String::from)
        .to_vec()];
        let mut ev = vec![["Mix", "CS Load"]
            .map(String::from)
            .into_iter()
            .chain(t.events.iter().map(|m| events::label(m)))
            .collect::<Vec<_>>()];
        let mut mix = vec![[
            "CS Load",
            "All Writers Ops/Thread",
            "Half Writers Ops/Thread",
            "% Change",
        ]
        .map(String::from)
        .to_vec()];
        let mmm = |v: &[Option<f64>; 3]| v.map(|x| fmt(x, 0)).join("/");
        for l in &t.loads {
            ops.push(vec![l.load.clone(), mmm(&l.reader), mmm(&l.writer)]);
            slow.push(vec![
                l.load.clone(),
                fmt(l.reader_slowpath, 0),
                fmt(l.writer_slowpath, 0),
                fmt(l.all_writers_slowpath, 0),
            ]);
            mix.push(vec![
                l.load.clone(),
                fmt(l.all_writers, 0),
                fmt(l.half_writers, 0),
                l.change().map_or("-".into(), |c| format!("{c:+.1}")),
            ]);
        }
        for (mix, pick) in [
            (
                "half",
                (|l: &Load| &l.events_half) as fn(&Load) -> &Vec<Option<f64>>,
            ),
            ("all writers", |l: &Load| &l.events_all),
        ] {
            for l in &t.loads {
                let values = pick(l);
                if values.iter().any(Option::is_some) {
                    let row = [mix.to_string(), l.load.clone()];
                    ev.push(
                        row.into_iter()
                            .chain(values.iter().map(|v| events::fmt(*v)))
                            .collect(),
                    );
                }
            }
        }
        let events = if ev.len() > 1 {
            format!("Lock events per acquisition, lasom\n{}\n", columns(&ev))
        } else {
            String::new()
        };
        out.push_str(&format!(
            "Seed 002: {}, {} ({})\n{}\n{}\n{}\n{events}",
            t.lock,
            t.target,
            t.runner,
            columns(&ops),
            columns(&slow),
            columns(&mix)
        ));
    }
    out
}
