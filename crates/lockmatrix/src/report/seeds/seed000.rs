//! Seed 000 (Desnoyers, "cli/sti vs local_cmpxchg"): per architecture, the
//! speedup of a local CAS over disabling and re-enabling interrupts, with
//! the CAS and interrupt costs. Here "interrupts" are all signals, blocked
//! and unblocked with pthread_sigmask.

use super::{cell, fmt};
use crate::config::RunnerKind;
use crate::report::table::render as columns;
use crate::results::Run;
use serde_json::Value;

pub fn render(run: &Run) -> String {
    let mut rows = vec![[
        "Architecture",
        "Speedup",
        "CAS local",
        "CAS sync",
        "Enable",
        "Disable",
        "local CAS is",
    ]
    .map(String::from)
    .to_vec()];
    for t in &run.targets {
        let Some(s) = t.suites.iter().find(|s| s.suite == "atomic") else {
            continue;
        };
        let op = |name: &str| {
            cell(
                s,
                "single_thread",
                &[("op", Value::from(name))],
                "ticks_per_op",
            )
        };
        let (local, sync, enable, disable) = (
            op("cas_local"),
            op("cas_sync"),
            op("irq_enable"),
            op("irq_disable"),
        );
        let speedup = match (enable, disable, local) {
            (Some(e), Some(d), Some(l)) if l > 0.0 => Some((e + d) / l),
            _ => None,
        };
        let variant = s
            .env
            .as_ref()
            .and_then(|e| e.variants.get("cas_local"))
            .and_then(Value::as_str)
            .unwrap_or("-");
        rows.push(vec![
            format!(
                "{} ({})",
                t.name,
                if t.runner == RunnerKind::Qemu {
                    "qemu"
                } else {
                    "native"
                }
            ),
            fmt(speedup, 2),
            fmt(local, 1),
            fmt(sync, 1),
            fmt(enable, 1),
            fmt(disable, 1),
            variant.to_string(),
        ]);
    }
    if rows.len() == 1 {
        return String::new();
    }
    format!(
        "Seed 000: CAS vs interrupt disable (ns per op, empty loop subtracted; Speedup = (irq off + irq on) / local CAS)\n{}\n",
        columns(&rows)
    )
}
