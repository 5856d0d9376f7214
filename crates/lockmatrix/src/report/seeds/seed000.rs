//! Seed 000 (Desnoyers, "cli/sti vs local_cmpxchg"): per architecture, the
//! speedup of a local CAS over disabling and re-enabling interrupts, with
//! the CAS and interrupt costs. Here "interrupts" are all signals, blocked
//! and unblocked with pthread_sigmask.
//!
//! Each row's times come from the Rust atomic suite where it ran, else
//! from its C twin (`atomic-c`: alpha, which rustc cannot build for); and
//! where both ran, the CAS's instructions and full barriers per op as
//! rustc and as GCC compiled it, side by side.

use super::cells::{cell, fmt};
use crate::footprint::{executed, Class, Isa};
use crate::report::table::render as columns;
use crate::results::{Run, SuiteRun, TargetResult};
use serde_json::Value;

/// The operations of the seed's table, in its column order.
pub const OPS: [&str; 4] = ["cas_local", "cas_sync", "irq_enable", "irq_disable"];

/// The suites that answer the seed: the Rust one and its C twin.
pub const SUITES: [&str; 2] = ["atomic", "atomic-c"];

/// Seed 000's fourth machine, and why no column has it.
pub const IA64: &str = "ia64: not run: Debian 12 has no ia64 cross compiler and QEMU no ia64 emulator (Linux dropped ia64 in 6.7); sparc64 and s390x stand in (class ia64-class), the legacy 64-bit big-endian server ISAs still built and run here";

/// One compiler's CAS, in [`OPS`]' first two (local, sync): instructions
/// and full barriers executed per op, counted under QEMU.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Cas {
    pub insns: [Option<f64>; 2],
    pub barriers: [Option<f64>; 2],
}

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
    /// The compiler of the times and counts above: "rustc" or "gcc".
    pub compiler: &'static str,
    /// The CAS as rustc compiled it (the atomic suite) ...
    pub rustc: Option<Cas>,
    /// ... and as GCC did (atomic-c).
    pub gcc: Option<Cas>,
}

fn cas_of(t: &TargetResult, s: &SuiteRun) -> Cas {
    let isa = Isa::from_triple(&t.triple);
    let op = |name: &str| {
        let insns = cell(
            s,
            "single_thread",
            &[("op", Value::from(name))],
            crate::protocol::INSNS_PER_OP,
        );
        let record = s
            .executed
            .iter()
            .find(|x| x.bench == "single_thread" && x.case.get("op") == Some(&Value::from(name)));
        let barriers = isa.zip(record).map(|(isa, r)| {
            (executed(isa, r).entries.iter())
                .filter(|e| e.class == Class::FullBarrier)
                // From +0: an empty f64 sum is -0, shown "-0".
                .fold(0.0, |n, e| n + e.count)
        });
        (insns, barriers)
    };
    let (local, sync) = (op("cas_local"), op("cas_sync"));
    Cas {
        insns: [local.0, sync.0],
        barriers: [local.1, sync.1],
    }
}

/// The rows of every target that ran the atomic suite or its C twin, in
/// run order.
pub fn rows(run: &Run) -> Vec<Row> {
    let mut out = Vec::new();
    for t in &run.targets {
        let suite = |name: &str| t.suites.iter().find(|s| s.suite == name);
        let (rust, c) = (suite(SUITES[0]), suite(SUITES[1]));
        let Some((s, compiler)) = rust.map(|s| (s, "rustc")).or(c.map(|s| (s, "gcc"))) else {
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
            compiler,
            rustc: rust.map(|s| cas_of(t, s)),
            gcc: c.map(|s| cas_of(t, s)),
        });
    }
    out
}

/// "25 / 24": rustc's value and gcc's, `-` where one is missing; empty
/// when neither compiler's suite ran.
pub fn versus(row: &Row, pick: impl Fn(&Cas) -> Option<f64>) -> String {
    if row.rustc.is_none() && row.gcc.is_none() {
        return String::new();
    }
    let one = |c: Option<&Cas>| fmt(c.and_then(&pick), 0);
    format!("{} / {}", one(row.rustc.as_ref()), one(row.gcc.as_ref()))
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
        "CAS local insns rustc/gcc",
        "CAS sync insns rustc/gcc",
        "CAS sync barriers rustc/gcc",
    ]
    .map(String::from)
    .to_vec()];
    for r in self::rows(run) {
        let [local, sync, enable, disable] = r.ns;
        let runner = if r.qemu { "qemu" } else { "native" };
        let by = if r.compiler == "gcc" { ", gcc" } else { "" };
        rows.push(vec![
            format!("{} ({runner}{by})", r.target),
            fmt(r.speedup, 2),
            fmt(local, 1),
            fmt(sync, 1),
            fmt(enable, 1),
            fmt(disable, 1),
            r.variant.clone(),
            versus(&r, |c| c.insns[0]),
            versus(&r, |c| c.insns[1]),
            versus(&r, |c| c.barriers[1]),
        ]);
    }
    if rows.len() == 1 {
        return String::new();
    }
    format!(
        "Seed 000: CAS vs interrupt disable (ns per op, empty loop subtracted; Speedup = (irq off + irq on) / local CAS; \
         rustc/gcc: the atomic suite and its C twin, counted under QEMU)\n{}{IA64}\n\n",
        columns(&rows)
    )
}

/// The table in Markdown, as a `(summary, table)` section of the gate's
/// Markdown report (a pull request's comment); `None` when no target ran
/// either suite.
pub fn markdown(run: &Run) -> Option<(String, String)> {
    let md = crate::escape::markdown;
    let rows = self::rows(run);
    if rows.is_empty() {
        return None;
    }
    let mut body = String::from(
        "| Architecture | Speedup | CAS local | CAS sync | Enable | Disable | CAS local insns rustc/gcc | CAS sync insns rustc/gcc | CAS sync barriers rustc/gcc |\n|---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
    );
    for r in &rows {
        let [local, sync, enable, disable] = r.ns;
        let by = if r.compiler == "gcc" { ", gcc" } else { "" };
        let runner = if r.qemu { "qemu" } else { "native" };
        body.push_str(&format!(
            "| {} ({runner}{by}) | {} | {} | {} | {} | {} | {} | {} | {} |\n",
            md(&r.target),
            fmt(r.speedup, 2),
            fmt(local, 1),
            fmt(sync, 1),
            fmt(enable, 1),
            fmt(disable, 1),
            versus(r, |c| c.insns[0]),
            versus(r, |c| c.insns[1]),
            versus(r, |c| c.barriers[1]),
        ));
    }
    body.push_str(&format!("\n{IA64}\n"));
    Some((
        "Seed 000: CAS vs interrupt disable (ns per op; QEMU times are the emulator's; rustc/gcc counted under QEMU)".into(),
        body,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cas(insns: f64, barriers: f64) -> Cas {
        Cas {
            insns: [Some(insns - 2.0), Some(insns)],
            barriers: [Some(0.0), Some(barriers)],
        }
    }

    #[test]
    fn the_two_compilers_side_by_side() {
        let row = |rustc: Option<Cas>, gcc: Option<Cas>| Row {
            target: "alpha64".into(),
            qemu: true,
            ns: [None; 4],
            insns: [None; 4],
            speedup: None,
            variant: "-".into(),
            compiler: "gcc",
            rustc,
            gcc,
        };
        let both = row(Some(cas(25.0, 1.0)), Some(cas(24.0, 2.0)));
        assert_eq!(versus(&both, |c| c.insns[1]), "25 / 24");
        assert_eq!(versus(&both, |c| c.barriers[1]), "1 / 2");
        let alpha = row(None, Some(cas(20.0, 2.0)));
        assert_eq!(versus(&alpha, |c| c.insns[1]), "- / 20");
        assert_eq!(versus(&row(None, None), |c| c.insns[1]), "");
    }
}
