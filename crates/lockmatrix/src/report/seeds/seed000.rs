//! Seed 000 (Desnoyers, "cli/sti vs local_cmpxchg"): per architecture, the
//! speedup of a local CAS over disabling and re-enabling interrupts, with
//! the CAS and interrupt costs. Here "interrupts" are all signals, blocked
//! and unblocked with pthread_sigmask.

use super::{cell, fmt};
use crate::report::table::render as columns;
use crate::results::Run;
use serde_json::Value;

/// The operations of the seed's table, in its column order.
pub const OPS: [&str; 4] = ["cas_local", "cas_sync", "irq_enable", "irq_disable"];

/// One architecture's row: ns per op (empty loop subtracted) and, where
/// QEMU counted them, instructions per op, both in [`OPS`] order.
pub struct Row {
    pub target: String,
    /// The times are the emulator's, not the guest CPU's.
    pub qemu: bool,
    pub ns: [Option<f64>; 4],
    pub insns: [Option<f64>; 4],
    /// (irq off + irq on) / local CAS.
    pub speedup: Option<f64>,
    /// What "local CAS" compiled to on this target (the suite's env).
    pub variant: String,
}

/// The rows of every target that ran the atomic suite, in run order.
pub fn rows(run: &Run) -> Vec<Row> {
    let mut out = Vec::new();
    for t in &run.targets {
        let Some(s) = t.suites.iter().find(|s| s.suite == "atomic") else {
            continue;
        };
        let op = |name: &str, metric: &str| {
            cell(s, "single_thread", &[("op", Value::from(name))], metric)
        };
        let ns = OPS.map(|o| op(o, "ticks_per_op"));
        let [local, _, enable, disable] = ns;
        let speedup = match (enable, disable, local) {
            (Some(e), Some(d), Some(l)) if l > 0.0 => Some((e + d) / l),
            _ => None,
        };
        out.push(Row {
            target: t.name.to_string(),
            qemu: crate::policy::times_are_advisory(t.runner),
            ns,
            insns: OPS.map(|o| op(o, crate::protocol::INSNS_PER_OP)),
            speedup,
            variant: s
                .env
                .as_ref()
                .and_then(|e| e.variants.get("cas_local"))
                .and_then(Value::as_str)
                .unwrap_or("-")
                .to_string(),
        });
    }
    out
}

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
    for r in self::rows(run) {
        let [local, sync, enable, disable] = r.ns;
        rows.push(vec![
            format!("{} ({})", r.target, if r.qemu { "qemu" } else { "native" }),
            fmt(r.speedup, 2),
            fmt(local, 1),
            fmt(sync, 1),
            fmt(enable, 1),
            fmt(disable, 1),
            r.variant,
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
