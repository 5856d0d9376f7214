//! The terminal tables printed at the end of a matrix run.

use crate::name::Name;
use crate::protocol::{case_label, Sample};
use crate::results::{Run, Status};
use std::collections::BTreeMap;

/// Widest a column other than the last may be; longer cells are cut with
/// `...`. The last column is free text (a status, a reason) and is never
/// padded, so its length cannot widen the table.
const MAX_COLUMN: usize = 48;

/// Left-aligns `rows` (the first is the header) into columns.
pub fn render(rows: &[Vec<String>]) -> String {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    let cell = |r: &[String], c: usize| -> String {
        let s = r.get(c).map_or("", String::as_str);
        if c + 1 < cols && s.chars().count() > MAX_COLUMN {
            let cut: String = s.chars().take(MAX_COLUMN - 3).collect();
            format!("{cut}...")
        } else {
            s.to_string()
        }
    };
    let widths: Vec<usize> = (0..cols)
        .map(|c| {
            rows.iter()
                .take(if c + 1 == cols { 1 } else { rows.len() })
                .map(|r| cell(r, c).chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for (i, row) in rows.iter().enumerate() {
        let mut line = String::new();
        for (c, width) in widths.iter().enumerate().take(row.len()) {
            let text = cell(row, c);
            line.push_str(&text);
            if c + 1 < row.len() {
                let pad = width.saturating_sub(text.chars().count()) + 2;
                line.extend(std::iter::repeat_n(' ', pad));
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
        if i == 0 {
            out.push_str(&"-".repeat(widths.iter().sum::<usize>() + 2 * cols.saturating_sub(1)));
            out.push('\n');
        }
    }
    out
}

pub fn median(values: &mut [f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    values.sort_by(f64::total_cmp);
    let n = values.len();
    Some(if n % 2 == 1 {
        values[n / 2]
    } else {
        (values[n / 2 - 1] + values[n / 2]) / 2.0
    })
}

fn secs(v: Option<f64>) -> String {
    v.map_or("-".into(), |s| format!("{s:.1}s"))
}

/// One row per target: status, build and run time.
pub fn status(run: &Run) -> String {
    let mut rows = vec![vec![
        "target".into(),
        "class".into(),
        "runner".into(),
        "build".into(),
        "run".into(),
        "status".into(),
    ]];
    for t in &run.targets {
        rows.push(vec![
            t.name.to_string(),
            t.class.to_string(),
            t.runner.to_string(),
            secs(t.build_secs),
            secs(t.run_secs),
            t.status.label(),
        ]);
    }
    // A target that builds only some suites says why, once.
    let not_built: String = run
        .targets
        .iter()
        .filter_map(|t| Some(format!("{}: {}\n", t.name, t.not_built.as_ref()?)))
        .collect();
    format!("{}{not_built}", render(&rows))
}

/// Converts a sample to nanoseconds when its unit is a timer's ticks.
pub fn to_ns(s: &Sample, timer_hz: f64) -> Option<f64> {
    value_ns(&s.unit, s.value?, timer_hz)
}

/// A value in `unit` in nanoseconds, when `unit` is `ns` or a timer's
/// ticks (at `timer_hz`).
pub fn value_ns(unit: &str, v: f64, timer_hz: f64) -> Option<f64> {
    match unit {
        "ns" => Some(v),
        u if u.ends_with("_ticks") && timer_hz > 0.0 => Some(v * 1e9 / timer_hz),
        _ => None,
    }
}

/// Instructions per operation, counted exactly under QEMU.
fn to_insns(s: &Sample, _timer_hz: f64) -> Option<f64> {
    s.kind().exact().then_some(s.value?)
}

/// The targets that ran `suite`, in run order: a table's columns.
fn targets_with<'a>(run: &'a Run, suite: &str) -> Vec<&'a str> {
    run.targets
        .iter()
        .filter(|t| t.suites.iter().any(|s| s.suite == suite))
        .map(|t| t.name.as_str())
        .collect()
}

/// One table per suite: a row per cell (bench, case, metric), a column per
/// target, the median over rounds of what `pick` takes from each sample.
fn per_target(
    run: &Run,
    suite: &str,
    pick: fn(&Sample, f64) -> Option<f64>,
    decimals: usize,
) -> Option<String> {
    let columns = targets_with(run, suite);
    // (bench, case, metric) -> target -> values
    let mut cells: BTreeMap<(Name, String, Name), BTreeMap<&str, Vec<f64>>> = BTreeMap::new();
    for t in &run.targets {
        for s in t.suites.iter().filter(|s| s.suite == suite) {
            let hz = s.env.as_ref().map_or(0.0, |e| e.timer_hz);
            for sample in &s.samples {
                if let Some(v) = pick(sample, hz) {
                    let key = (
                        sample.bench.clone(),
                        case_label(&sample.case),
                        sample.metric.clone(),
                    );
                    cells
                        .entry(key)
                        .or_default()
                        .entry(t.name.as_str())
                        .or_default()
                        .push(v);
                }
            }
        }
    }
    if cells.is_empty() {
        return None;
    }
    let header = ["bench", "case", "metric"]
        .iter()
        .map(|s| s.to_string())
        .chain(columns.iter().map(|c| c.to_string()));
    let mut rows = vec![header.collect::<Vec<_>>()];
    for ((bench, case, metric), mut per_target) in cells {
        let mut row = vec![bench.to_string(), case, metric.to_string()];
        for c in &columns {
            row.push(
                per_target
                    .get_mut(c)
                    .and_then(|v| median(v))
                    .map_or("-".into(), |v| format!("{v:.decimals$}")),
            );
        }
        rows.push(row);
    }
    Some(render(&rows))
}

/// Per suite, the median time of every timed cell on every target, in
/// nanoseconds, and the instructions per operation where QEMU counted them.
pub fn timings(run: &Run) -> String {
    let mut suites: Vec<&str> = Vec::new();
    for s in run.targets.iter().flat_map(|t| &t.suites) {
        if !suites.contains(&s.suite.as_str()) {
            suites.push(&s.suite);
        }
    }
    let mut out = String::new();
    for suite in suites {
        if let Some(table) = per_target(run, suite, to_ns, 1) {
            out.push_str(&format!(
                "\n{suite}: median time in ns, ticks converted (QEMU columns time the emulator: advisory)\n{table}"
            ));
        }
        if let Some(table) = per_target(run, suite, to_insns, 1) {
            out.push_str(&format!(
                "\n{suite}: instructions per op under QEMU (exact; gated)\n{table}"
            ));
        }
    }
    out
}

/// Per suite, each operation's static ordering footprint on every target
/// as `full barriers/one-way/atomic RMW` instructions in its whole code:
/// a column that differs from its neighbours is an ordering difference
/// between architectures, a number that moves between runs is an ordering
/// change (the gate names the instructions).
pub fn footprints(run: &Run) -> String {
    let mut out = String::new();
    for t in super::footprints::tables(run) {
        let header = ["unit", "op"]
            .iter()
            .map(|s| s.to_string())
            .chain(t.targets.iter().map(|c| c.to_string()));
        let mut rows = vec![header.collect::<Vec<_>>()];
        for ((unit, op), per_target) in &t.rows {
            let mut row = vec![unit.to_string(), op.to_string()];
            row.extend(
                t.targets
                    .iter()
                    .map(|c| per_target.get(c).map_or_else(|| "-".into(), |x| x.counts())),
            );
            rows.push(row);
        }
        out.push_str(&format!(
            "\n{}: ordering footprint per operation, whole code (full barriers/one-way/atomic RMW; exact, gated; `report --footprint` names them)\n{}",
            t.suite,
            render(&rows)
        ));
    }
    out
}

/// Every operation's static ordering footprint by instruction, per target:
/// `report --footprint`. One block per operation, one line per target,
/// each ordering instruction with its class and count, and the functions
/// whose code counted.
pub fn footprint_detail(run: &Run) -> String {
    let mut blocks: BTreeMap<(&str, &str, &str), Vec<Vec<String>>> = BTreeMap::new();
    for t in &run.targets {
        for s in &t.suites {
            if let Some(e) = &s.footprint_error {
                blocks
                    .entry((&s.suite, "-", "-"))
                    .or_default()
                    .push(vec![t.name.to_string(), format!("no footprint: {e}")]);
            }
            for op in &s.static_footprint {
                let insns: Vec<String> = op
                    .footprint
                    .entries
                    .iter()
                    .map(|e| format!("{} {} ({})", e.count, e.insn, e.class))
                    .collect();
                blocks
                    .entry((&s.suite, &op.unit, &op.op))
                    .or_default()
                    .push(vec![
                        t.name.to_string(),
                        if insns.is_empty() {
                            "none".into()
                        } else {
                            insns.join(", ")
                        },
                        op.footprint.followed.join(" "),
                    ]);
            }
        }
    }
    let mut out = String::new();
    for ((suite, unit, op), mut rows) in blocks {
        rows.insert(
            0,
            ["target", "ordering instructions", "functions counted"]
                .map(String::from)
                .to_vec(),
        );
        out.push_str(&format!("\n{suite} {unit} {op}\n{}", render(&rows)));
    }
    if out.is_empty() {
        out.push_str("this run has no static ordering footprint (a run from before format 6, or no suite printed probes)\n");
    }
    out
}

/// The loom model check: one row per lock, with the models run, the
/// interleavings explored, the preemption bound and the time, or what
/// was violated.
pub fn models(run: &Run) -> String {
    let Some(m) = &run.models else {
        return String::new();
    };
    if let Some(e) = &m.error {
        return format!("\nmodel check (loom): NOT CHECKED: {e}\n");
    }
    let mut locks: BTreeMap<(&str, &str), Vec<&crate::model::ModelResult>> = BTreeMap::new();
    for r in &m.results {
        locks.entry((&r.suite, &r.lock)).or_default().push(r);
    }
    let mut rows = vec![[
        "model",
        "suite",
        "models",
        "interleavings",
        "bound",
        "time",
        "result",
    ]
    .map(String::from)
    .to_vec()];
    for ((suite, lock), results) in &locks {
        let bad: Vec<&str> = results
            .iter()
            .filter(|r| !r.ok)
            .map(|r| r.model.as_str())
            .collect();
        let bounds: std::collections::BTreeSet<u32> =
            results.iter().map(|r| r.preemption_bound).collect();
        let bounds: Vec<String> = bounds.iter().map(u32::to_string).collect();
        let cached = results.iter().all(|r| r.cached);
        rows.push(vec![
            lock.to_string(),
            suite.to_string(),
            results.len().to_string(),
            results
                .iter()
                .map(|r| r.interleavings)
                .sum::<u64>()
                .to_string(),
            bounds.join(","),
            format!("{:.1}s", results.iter().map(|r| r.secs).sum::<f64>()),
            match (bad.is_empty(), cached) {
                (true, true) => "ok (cached: sources unchanged)".into(),
                (true, false) => "ok".into(),
                (false, _) => format!("VIOLATED: {}", bad.join("; ")),
            },
        ]);
    }
    let mut out = format!(
        "\nmodel check under the C11 memory model (loom), on the host, {:.1}s:\n{}",
        m.secs,
        render(&rows)
    );
    for u in &m.unmodelled {
        out.push_str(&format!(
            "not model-checked: {}/{}: {}\n",
            u.suite, u.lock, u.why
        ));
    }
    out
}

/// The Miri check: one row per lock loom cannot see, with its clients,
/// seeds, races and time, or why it was not checked.
pub fn miri(run: &Run) -> String {
    let Some(m) = &run.miri else {
        return String::new();
    };
    if let Some(why) = &m.not_checked {
        return format!("\nMiri check: NOT CHECKED: {why}\n");
    }
    let gate = crate::gate::miri::MiriGate::of(Some(m), None);
    let mut rows = vec![[
        "miri", "suite", "crate", "clients", "seeds", "races", "time", "result",
    ]
    .map(String::from)
    .to_vec()];
    for l in &gate.locks {
        rows.push(vec![
            l.lock.to_string(),
            l.suite.to_string(),
            l.krate.to_string(),
            l.clients.to_string(),
            l.seeds.to_string(),
            l.races.to_string(),
            format!("{:.1}s", l.secs),
            match (&l.race, l.cached) {
                (Some(r), _) => format!(
                    "RACE: client \"{}\", seed {}: {}",
                    r.client, r.seed, r.error
                ),
                (None, _) if !l.not_checked.is_empty() => {
                    format!("NOT CHECKED: {}", l.not_checked.join("; "))
                }
                (None, true) => "clean (cached: nothing it is built from changed)".into(),
                (None, false) => "clean".into(),
            },
        ]);
    }
    let setup = match (m.setup_secs, m.build_secs) {
        (Some(s), Some(b)) => format!(", setup {s:.1}s, build {b:.1}s"),
        _ => String::new(),
    };
    format!(
        "\nMiri check under the Rust memory model (the locks loom cannot see), on the host, {:.1}s{setup}:\n{}",
        m.secs,
        render(&rows)
    )
}

/// Which crate and version each lock from outside this repository came
/// from, e.g. `locks from other crates: parking_lot 0.12.5 (parking_lot_mutex,
/// ...)`; empty when the run has none.
pub fn lock_crates(run: &Run) -> String {
    let mut locks: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for env in run
        .targets
        .iter()
        .flat_map(|t| &t.suites)
        .filter_map(|s| s.env.as_ref())
    {
        let Some(map) = env.variants.get("lock_crates").and_then(|v| v.as_object()) else {
            continue;
        };
        for (lock, krate) in map {
            let entry = locks.entry(krate.as_str().unwrap_or("?")).or_default();
            if !entry.contains(&lock.as_str()) {
                entry.push(lock);
            }
        }
    }
    let parts: Vec<String> = run
        .lock_crates
        .iter()
        .map(|(krate, version)| {
            let names = locks
                .get(krate.as_str())
                .map_or(String::new(), |l| l.join(", "));
            format!("{krate} {version} ({names})")
        })
        .collect();
    let under_test = run.subject.as_ref().map_or(String::new(), |c| {
        format!(
            "lock crate under test: {} ({}): {}; lock_api {}\n",
            c.label(),
            c.spec,
            c.source,
            c.lock_api
        )
    });
    if parts.is_empty() {
        under_test
    } else {
        format!(
            "{under_test}locks from other crates: {}\n",
            parts.join("; ")
        )
    }
}

/// Counts for the closing line.
pub fn summary(run: &Run) -> String {
    let count = |f: fn(&Status) -> bool| run.targets.iter().filter(|t| f(&t.status)).count();
    let checks: usize = run
        .targets
        .iter()
        .flat_map(|t| &t.suites)
        .map(|s| s.checks.len())
        .sum();
    let failed: usize = run
        .targets
        .iter()
        .flat_map(|t| &t.suites)
        .flat_map(|s| &s.checks)
        .filter(|c| !c.ok)
        .count();
    let line = format!(
        "{} ok, {} failed, {} not run; {checks} checks, {failed} failed",
        count(|s| matches!(s, Status::Ok)),
        count(|s| matches!(s, Status::Failed(_))),
        count(|s| matches!(s, Status::NotRun(_)))
    );
    let pending = count(|s| matches!(s, Status::Pending));
    match run.complete() {
        true => line,
        false => format!("incomplete: {pending} not finished; {line}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_aligned_columns() {
        let rows = vec![
            vec!["a".to_string(), "bb".into()],
            vec!["ccc".into(), "d".into()],
        ];
        assert_eq!(render(&rows), "a    bb\n-------\nccc  d\n");
    }

    #[test]
    fn long_cells_neither_widen_nor_break_the_table() {
        let long = "x".repeat(10_000_000);
        let rows = vec![
            vec!["name".to_string(), "status".into()],
            vec![long.clone(), long],
        ];
        let text = render(&rows);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[1].len(), MAX_COLUMN + 2 + "status".len());
        assert!(lines[2].starts_with(&format!("{}...  x", "x".repeat(MAX_COLUMN - 3))));
    }

    #[test]
    fn median_of_even_and_odd() {
        assert_eq!(median(&mut [3.0, 1.0, 2.0]), Some(2.0));
        assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), Some(2.5));
        assert_eq!(median(&mut []), None);
    }
}
