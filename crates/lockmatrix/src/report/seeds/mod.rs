//! `cargo xtask report --tables`: the seeds' tables, in the shapes users
//! know from the mailing-list threads of `docs/seeds.md`, one block per target.

mod cells;
pub mod events;
pub mod seed000;
pub mod seed001;
pub mod seed002;
pub mod seed003;

use crate::results::Run;
pub use cells::{cell, fmt};
use serde_json::Value;

/// What ran on each target: the timer and its rate, the spin-wait hint,
/// the atomics variant, as the suites' env records say. The first row is
/// the header; only the header when no suite left an env record.
pub fn variant_rows(run: &Run) -> Vec<Vec<String>> {
    let mut rows = vec![[
        "target",
        "timer",
        "ticks/s",
        "relax",
        "local CAS",
        "arm64 LSE",
        "64-bit atomics",
    ]
    .map(String::from)
    .to_vec()];
    for t in &run.targets {
        let Some(env) = t
            .suites
            .iter()
            .find_map(|s| s.env.as_ref().filter(|_| s.suite == "atomic"))
            .or_else(|| t.suites.iter().find_map(|s| s.env.as_ref()))
        else {
            continue;
        };
        let v = |k: &str| match env.variants.get(k) {
            Some(Value::String(s)) => s.clone(),
            Some(Value::Bool(b)) => {
                if *b {
                    "yes".into()
                } else {
                    "no".into()
                }
            }
            _ => "-".into(),
        };
        rows.push(vec![
            t.name.to_string(),
            env.timer.clone(),
            format!("{:.3e}", env.timer_hz),
            env.relax.clone(),
            v("cas_local"),
            v("lse"),
            v("atomic_64bit"),
        ]);
    }
    rows
}

fn variants(run: &Run) -> String {
    let rows = variant_rows(run);
    if rows.len() == 1 {
        return String::new();
    }
    format!(
        "Variants that ran\n{}\n",
        crate::report::table::render(&rows)
    )
}

/// Every seed table the run has data for.
pub fn render(run: &Run) -> String {
    let mut out = variants(run);
    out.push_str(&seed000::render(run));
    out.push_str(&seed001::render(run));
    out.push_str(&seed003::render(run));
    out.push_str(&seed002::render(run));
    out
}

#[cfg(test)]
mod tests {
    use crate::report::tests::sample_run;

    #[test]
    fn the_tables_show_lock_events_and_lasom() {
        let text = super::render(&sample_run());
        std::fs::write(
            std::env::temp_dir().join("lockmatrix-seeds-test.txt"),
            &text,
        )
        .unwrap();
        // Seed 001: the events of every lock that counts them, by thread
        // count, none on one thread; then lasom.
        assert!(text.contains("Seed 001: lock events per acquisition, x86_64 (native)"));
        assert!(text.contains("threads  ticket waits  ticket waiters ahead  mcs queued"));
        assert!(text.contains("1:       0             0                     0"));
        assert!(text.contains("2:       0.500         0.500                 0.250"));
        assert!(text.contains("Seed 001: lasom (per-thread acquisitions' stddev / mean), x86_64"));
        assert!(text.contains("2:       0.100   0.100"));
        // Seed 003: lasom and each lock's events beside its time.
        assert!(text.contains("0.020  queued 0.750"), "{text}");
        // Seed 002: the all-writers slow paths and the events table.
        assert!(text.contains("CS Load    Reader Slowpath  Writer Slowpath  All Writers Slowpath"));
        assert!(text.contains("Lock events per acquisition, lasom"));
        assert!(text.contains(
            "Mix          CS Load    reader sleeps  reader lasom  writer sleeps  writer lasom"
        ));
        assert!(text
            .contains("half         1          0.125          0.500         0.125          0.500"));
        assert!(text
            .contains("all writers  1us sleep  -              -             0.125          0.500"));
    }
}
