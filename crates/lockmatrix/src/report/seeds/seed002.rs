//! Seed 002 (Longman, rwsem on arm64): per-thread locking ops min/avg/max
//! for readers and writers at each critical-section load, slowpath counts,
//! and all-writers vs half-writers.

use super::cells::{cell, fmt};
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
            let loads = LOADS
                .iter()
                .map(|load| Load {
                    load: load_name(load),
                    reader: mmm(load, "reader"),
                    writer: mmm(load, "writer"),
                    reader_slowpath: get("half", load, "reader_slowpath"),
                    writer_slowpath: get("half", load, "writer_slowpath"),
                    all_writers: get("all_writers", load, "writer_ops_avg"),
                    half_writers: get("half", load, "writer_ops_avg"),
                })
                .collect();
            out.push(Table {
                target: t.name.to_string(),
                runner: t.runner.to_string(),
                lock,
                loads,
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
        let mut slow = vec![["CS Load", "Reader Slowpath", "Writer Slowpath"]
            .map(String::from)
            .to_vec()];
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
            ]);
            mix.push(vec![
                l.load.clone(),
                fmt(l.all_writers, 0),
                fmt(l.half_writers, 0),
                l.change().map_or("-".into(), |c| format!("{c:+.1}")),
            ]);
        }
        out.push_str(&format!(
            "Seed 002: {}, {} ({})\n{}\n{}\n{}\n",
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
