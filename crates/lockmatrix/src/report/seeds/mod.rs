//! `cargo xtask report --tables`: the seeds' tables, in the shapes users
//! know from the mailing-list threads of `docs/seeds.md`, one block per target.

mod cells;
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
