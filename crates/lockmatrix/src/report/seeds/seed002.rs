//! Seed 002 (Longman, rwsem on arm64): per-thread locking ops min/avg/max
//! for readers and writers at each critical-section load, slowpath counts,
//! and all-writers vs half-writers.

use super::{cell, fmt};
use crate::report::table::render as columns;
use crate::results::{Run, SuiteRun};
use serde_json::Value;

const LOADS: &[&str] = &["1", "10", "50", "100", "sleep1us"];

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

fn load_name(load: &str) -> String {
    if load == "sleep1us" {
        "1us sleep".into()
    } else {
        load.into()
    }
}

pub fn render(run: &Run) -> String {
    let mut out = String::new();
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
            let mmm = |mix: &str, load: &str, side: &str| {
                ["min", "avg", "max"]
                    .map(|k| fmt(get(mix, load, &format!("{side}_ops_{k}")), 0))
                    .join("/")
            };
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
            for load in LOADS {
                ops.push(vec![
                    load_name(load),
                    mmm("half", load, "reader"),
                    mmm("half", load, "writer"),
                ]);
                slow.push(vec![
                    load_name(load),
                    fmt(get("half", load, "reader_slowpath"), 0),
                    fmt(get("half", load, "writer_slowpath"), 0),
                ]);
                let (all, half) = (
                    get("all_writers", load, "writer_ops_avg"),
                    get("half", load, "writer_ops_avg"),
                );
                let change = match (all, half) {
                    (Some(a), Some(h)) if a > 0.0 => format!("{:+.1}", (h - a) / a * 100.0),
                    _ => "-".into(),
                };
                mix.push(vec![load_name(load), fmt(all, 0), fmt(half, 0), change]);
            }
            out.push_str(&format!(
                "Seed 002: {lock}, {} ({})\n{}\n{}\n{}\n",
                t.name,
                t.runner,
                columns(&ops),
                columns(&slow),
                columns(&mix)
            ));
        }
    }
    out
}
