//! A small run made by hand, for the report modules' tests: two targets
//! (x86_64 native with a 2 GHz tick timer, aarch64 under QEMU in ns), each
//! with the atomic, spinlock and rwsem suites' cells the seeds read.

use crate::results::Run;
use serde_json::{json, Value};

fn sample(
    suite: &str,
    bench: &str,
    case: Value,
    metric: &str,
    unit: &str,
    round: u32,
    value: f64,
) -> Value {
    let better = if unit == "ops" { "higher" } else { "lower" };
    let gating = (bench == "lock_unlock" && metric == "ticks_per_acquire" && case["threads"] == 1)
        || bench == "stress_s2";
    json!({"suite": suite, "bench": bench, "case": case, "metric": metric, "unit": unit,
           "better": better, "gating": gating, "round": round, "value": value})
}

fn env(suite: &str, unit: &str, hz: f64) -> Value {
    json!({"protocol": 2, "suite": suite, "arch": "x", "endian": "little", "pointer_width": 64,
           "cpus": 2, "timer": "t", "timer_unit": unit, "timer_hz": hz, "relax": "pause",
           "profile": "quick", "seed": 1, "pinned": true, "variants": {"cas_local": "plain"}})
}

fn suite(name: &str, unit: &str, hz: f64, samples: Vec<Value>) -> Value {
    json!({"suite": name, "command": format!("./{name} --rounds 3"), "status": {"state": "ok"},
           "exit": {"code": 0}, "secs": 1.0, "env": env(name, unit, hz), "samples": samples,
           "checks": [], "bad_lines": [], "stderr_tail": []})
}

/// `scale` multiplies every time (a slower head, for gate tests);
/// `insns` is the ticket lock's count.
pub fn run_with(scale: f64, insns: f64) -> Run {
    let mut targets = Vec::new();
    for (name, runner, unit, hz) in [
        ("x86_64", "native", "tsc_ticks", 2e9),
        ("aarch64", "qemu", "ns", 1e9),
    ] {
        // Values in the target's unit: ticks on x86_64 (2 per ns).
        let t = |ns: f64| ns * scale * hz / 1e9;
        let mut spin = Vec::new();
        for (lock, base) in [("ticket", 5.0), ("mcs", 8.0)] {
            for threads in [1u64, 2] {
                let case = json!({"lock": lock, "threads": threads});
                for (r, f) in [0.8, 1.0, 1.2].into_iter().enumerate() {
                    let ns = base * threads as f64 * f;
                    spin.push(sample(
                        "spinlock",
                        "lock_unlock",
                        case.clone(),
                        "ticks_per_acquire",
                        unit,
                        r as u32,
                        t(ns),
                    ));
                    for (m, v) in [
                        ("acquisitions_min", 90.0),
                        ("acquisitions_avg", 100.0),
                        ("acquisitions_max", 110.0),
                    ] {
                        spin.push(sample(
                            "spinlock",
                            "lock_unlock",
                            case.clone(),
                            m,
                            "ops",
                            r as u32,
                            v,
                        ));
                    }
                    spin.push(sample(
                        "spinlock",
                        "lock_unlock",
                        case.clone(),
                        "fairness_cv",
                        "ratio",
                        r as u32,
                        0.1,
                    ));
                    // Lock events, none on one thread.
                    let events: &[(&str, &str, f64)] = match lock {
                        "ticket" => &[
                            ("waits_per_acquire", "events_per_acquire", 0.5),
                            ("waiters_ahead_per_acquire", "waiters_per_acquire", 0.5),
                        ],
                        _ => &[("queued_per_acquire", "events_per_acquire", 0.25)],
                    };
                    for (m, unit, v) in events {
                        let v = if threads == 1 { 0.0 } else { v * f };
                        spin.push(sample(
                            "spinlock",
                            "lock_unlock",
                            case.clone(),
                            m,
                            unit,
                            r as u32,
                            v,
                        ));
                    }
                }
                if threads == 1 {
                    let n = if lock == "ticket" { insns } else { 30.0 };
                    spin.push(sample(
                        "spinlock",
                        "lock_unlock",
                        case.clone(),
                        "insns_per_op",
                        "insns",
                        0,
                        n,
                    ));
                }
            }
            for bench in ["stress_s1", "stress_s2"] {
                let case = json!({"lock": lock, "threads": 2});
                for r in 0..3 {
                    spin.push(sample(
                        "spinlock",
                        bench,
                        case.clone(),
                        "total_ticks",
                        unit,
                        r,
                        t(base * 1e6 + r as f64 * 1e5),
                    ));
                    spin.push(sample(
                        "spinlock",
                        bench,
                        case.clone(),
                        "fairness_cv",
                        "ratio",
                        r,
                        0.02,
                    ));
                    if lock == "mcs" {
                        spin.push(sample(
                            "spinlock",
                            bench,
                            case.clone(),
                            "queued_per_acquire",
                            "events_per_acquire",
                            r,
                            0.75,
                        ));
                    }
                }
            }
        }
        let mut atomic = Vec::new();
        for (op, ns) in [
            ("cas_local", 2.0),
            ("cas_sync", 6.0),
            ("irq_enable", 90.0),
            ("irq_disable", 110.0),
        ] {
            let case = json!({"op": op});
            for r in 0..3 {
                atomic.push(sample(
                    "atomic",
                    "single_thread",
                    case.clone(),
                    "ticks_per_op",
                    unit,
                    r,
                    t(ns),
                ));
            }
            atomic.push(sample(
                "atomic",
                "single_thread",
                case,
                "insns_per_op",
                "insns",
                0,
                10.0,
            ));
        }
        let mut rw = Vec::new();
        for load in ["1", "10", "50", "100", "sleep1us"] {
            for mix in ["half", "all_writers"] {
                let case = json!({"lock": "linux_rwsem", "mix": mix, "cs_load": load});
                for side in ["reader", "writer"] {
                    if side == "reader" && mix == "all_writers" {
                        continue;
                    }
                    let avg = if mix == "half" { 1000.0 } else { 800.0 };
                    for (k, v) in [("min", avg * 0.5), ("avg", avg), ("max", avg * 1.5)] {
                        rw.push(sample(
                            "rwsem",
                            "rw_mix",
                            case.clone(),
                            &format!("{side}_ops_{k}"),
                            "ops",
                            0,
                            v,
                        ));
                    }
                    let events = [
                        (format!("{side}_slowpath"), "count", 5000.0),
                        (
                            format!("{side}_sleeps_per_acquire"),
                            "events_per_acquire",
                            0.125,
                        ),
                        (format!("{side}_fairness_cv"), "ratio", 0.5),
                    ];
                    for (m, unit, v) in events {
                        rw.push(sample("rwsem", "rw_mix", case.clone(), &m, unit, 0, v));
                    }
                }
            }
        }
        targets.push(json!({
            "name": name, "triple": format!("{name}-unknown-linux-gnu"), "class": "c",
            "runner": runner, "status": {"state": "ok"}, "toolchain": {"what": "rustup", "version": "rustc 1.90"},
            "build_std": false, "linker": null, "emulator": null, "build_secs": 1.0, "run_secs": 2.0,
            "suites": [suite("atomic", unit, hz, atomic), suite("spinlock", unit, hz, spin), suite("rwsem", unit, hz, rw)]
        }));
    }
    serde_json::from_value(json!({
        "format": 4, "run_id": "20300101T000000Z", "started": "2030-01-01T00:00:00Z",
        "finished": "2030-01-01T00:10:00Z", "command": ["cargo", "xtask", "matrix"], "profile": "quick",
        "host": {"cpu_model": "Test CPU <1>", "cpus": 2, "kernel": "6.1", "os": "Debian",
                 "lockmatrix_commit": "0123456789abcdef0123456789abcdef01234567", "lockmatrix_dirty": false},
        "targets": targets,
    }))
    .expect("the sample run is a run")
}

pub fn sample_run() -> Run {
    run_with(1.0, 21.0)
}

/// What a stranger's CI artifact can put in every free-text field of a run:
/// markup, an attribute breakout, a mention, links, an image, an emoji, a
/// backtick fence, a table-cell break and terminal control sequences.
pub const HOSTILE: &str = "<img src=x onerror=alert(1)>\" onmouseover=\"alert(2)' @org/team [x](http://evil.example) ![i](http://evil.example/i.png) :tada: ```x``` | \u{1b}]8;;http://evil\u{7}\u{1b}[2J";

/// `run` with every free-text string (not a name, a state or a number)
/// replaced by [`HOSTILE`], and a failed check and failed suite whose
/// words are hostile too; it still reads as a run.
pub fn hostile(run: &Run) -> Run {
    // Keys whose values are names or enumerations, checked as they are read.
    const NAMED: &[&str] = &[
        "name",
        "triple",
        "class",
        "suite",
        "bench",
        "metric",
        "unit",
        "state",
        "runner",
        "better",
        "profile",
        "kind",
        "arch",
        "timer_unit",
        "endian",
        // Commit ids, checked as they are read.
        "lockmatrix_commit",
        "commit",
    ];
    fn walk(v: &mut Value, key: &str) {
        match v {
            Value::String(s) if !NAMED.contains(&key) => *s = HOSTILE.to_string(),
            Value::Array(a) => a.iter_mut().for_each(|x| walk(x, key)),
            Value::Object(m) if key != "case" && key != "binaries" => {
                m.iter_mut().for_each(|(k, x)| walk(x, k))
            }
            _ => {}
        }
    }
    let mut v = serde_json::to_value(run).unwrap();
    walk(&mut v, "");
    let t = &mut v["targets"][0];
    t["suites"][1]["checks"] = json!([{"suite": "spinlock", "bench": "lock_unlock",
        "case": {"lock": "ticket", "threads": 2}, "name": "mutual_exclusion", "ok": false,
        "details": {"seen": HOSTILE}}]);
    t["suites"][1]["stderr_tail"] = json!([HOSTILE]);
    t["suites"][2]["status"] = json!({"state": "failed", "reason": HOSTILE,
        "failure": {"kind": "exit", "code": 3, "stderr": HOSTILE}});
    v["lock_crates"] = json!({"parking_lot": HOSTILE});
    serde_json::from_value(v).expect("a hostile run is still a run")
}

/// Removes the code spans of CommonMark text (a run of n backticks up to
/// the next run of exactly n), leaving what GitHub would render as markup.
fn outside_code_spans(md: &str) -> String {
    let b = md.as_bytes();
    let (mut out, mut i) = (String::new(), 0);
    while i < b.len() {
        if b[i] != b'`' {
            let next = md[i..].find('`').map_or(md.len(), |j| i + j);
            out.push_str(&md[i..next]);
            i = next;
            continue;
        }
        let n = b[i..].iter().take_while(|c| **c == b'`').count();
        let mut j = i + n;
        let close = loop {
            let Some(k) = md[j..].find('`') else {
                break None;
            };
            let at = j + k;
            let m = b[at..].iter().take_while(|c| **c == b'`').count();
            if m == n {
                break Some(at);
            }
            j = at + m;
        };
        match close {
            Some(at) => i = at + n,
            None => {
                out.push_str(&md[i..i + n]);
                i += n;
            }
        }
    }
    out
}

#[test]
fn every_output_shows_hostile_text_as_text() {
    use crate::gate::{evaluate, GateOptions, Reference};
    let base = hostile(&sample_run());
    let head = hostile(&run_with(1.3, 25.0));
    let gate = evaluate(&head, &Reference::Base(&base), &GateOptions::default()).unwrap();
    assert!(gate.failed(), "the hostile check and suite fail the gate");

    let page = crate::report::html::render(&head, Some(&gate));
    let history = crate::report::history::html(&crate::report::history::build(vec![
        ("a".into(), base.clone(), None),
        ("b".into(), head.clone(), Some(gate.clone())),
    ]));
    for (what, html) in [("report", &page), ("history", &history)] {
        // The payload reached the page, as text.
        assert!(
            html.contains("&lt;img src=x onerror=alert(1)&gt;"),
            "{what}"
        );
        for live in ["<img", "onmouseover=\"", "onmouseover='", "\u{1b}", "\u{7}"] {
            assert!(!html.contains(live), "{what} carries live {live:?}");
        }
    }

    for md in [gate.markdown(64_000), gate.markdown(1 << 20)] {
        assert!(md.contains("@org/team"), "the payload reached the Markdown");
        let rendered = outside_code_spans(&md);
        for live in [
            "@org",
            "](http",
            "![",
            "<img",
            ":tada:",
            "\u{1b}",
            "onmouseover",
        ] {
            assert!(!rendered.contains(live), "Markdown carries live {live:?}");
        }
        // A `|` in data never breaks a table row: every row keeps its columns.
        for row in md
            .lines()
            .filter(|l| l.starts_with("| ") && l.contains("ticket"))
        {
            let cells = row.replace("\\|", "").matches('|').count();
            assert!((2..=12).contains(&cells), "{row}");
        }
    }
}
