//! The JSON-lines result protocol: one record per line on stdout.
//!
//! - `env`: what ran and how (arch, CPUs, timer and its rate, variants);
//! - `sample`: one round's value of one metric of one cell;
//! - `check`: a correctness invariant, `ok` or not, with what was seen;
//! - `executed`: under the QEMU plugin, what one operation of a counted
//!   cell executed, instruction by instruction (QEMU's disassembly text ->
//!   executions per op; `marker::Executed`);
//! - `probes`: where each lock operation's (or primitive's) out-of-line
//!   probe function is, relative to the anchor function (`probe`), so the
//!   tool can find them in the binary's disassembly.
//!
//! Each line is flushed as it is written so that a suite that crashes later
//! still leaves every earlier record for the xtask to report.

use crate::json::{obj, J};
use crate::marker::Executed;
use crate::probe::{Probe, ANCHOR};
use crate::{threads, timer, Args};
use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Version 2: samples say whether their cell is in the suite's timing
/// family (`gating`), and a time is positive or `null`. Version 3: the
/// `executed` and `probes` records. Version 4: no `gating`: which cells
/// gate, and how strictly, is the tool's to decide from what each
/// measures and its measured noise, not a suite's to declare.
pub const PROTOCOL_VERSION: i64 = 4;

/// Which direction of a metric is an improvement.
#[derive(Clone, Copy, Debug)]
pub enum Better {
    Lower,
    Higher,
}

/// What a sample measures: its name, unit and better direction.
#[derive(Clone, Copy, Debug)]
pub struct Metric<'a> {
    pub name: &'a str,
    pub unit: &'a str,
    pub better: Better,
}

impl<'a> Metric<'a> {
    pub const fn new(name: &'a str, unit: &'a str, better: Better) -> Metric<'a> {
        Metric { name, unit, better }
    }

    fn is_time(&self) -> bool {
        self.unit == "ns" || self.unit.ends_with("_ticks")
    }
}

pub struct Out {
    suite: &'static str,
    failed: AtomicUsize,
}

/// The spin-wait hint `core::hint::spin_loop` compiles to on this target.
pub const RELAX_HINT: &str = if cfg!(any(target_arch = "x86_64", target_arch = "x86")) {
    "pause"
} else if cfg!(target_arch = "aarch64") {
    "isb"
} else if cfg!(target_arch = "riscv64") {
    "pause (zihintpause)"
} else {
    "none"
};

impl Out {
    pub fn new(suite: &'static str) -> Out {
        Out {
            suite,
            failed: AtomicUsize::new(0),
        }
    }

    fn emit(&self, record: J) {
        let mut stdout = std::io::stdout().lock();
        // A closed stdout means the reader is gone; nothing useful is left to do.
        if writeln!(stdout, "{record}")
            .and_then(|_| stdout.flush())
            .is_err()
        {
            std::process::exit(1);
        }
    }

    /// The `env` record, first on every run. `variants` names the code paths
    /// this build and CPU chose (e.g. LSE or LL/SC atomics).
    pub fn env(&self, args: &Args, variants: J) {
        let mut record = obj([
            ("type", "env".into()),
            ("protocol", PROTOCOL_VERSION.into()),
            ("suite", self.suite.into()),
            ("arch", std::env::consts::ARCH.into()),
            (
                "endian",
                if cfg!(target_endian = "big") {
                    "big"
                } else {
                    "little"
                }
                .into(),
            ),
            ("pointer_width", (usize::BITS as i64).into()),
            ("cpus", threads::cpus().into()),
            ("timer", timer::NAME.into()),
            ("timer_unit", timer::UNIT.into()),
            ("timer_hz", timer::hz().into()),
            ("relax", RELAX_HINT.into()),
            ("profile", args.profile.name().into()),
            ("seed", args.seed.into()),
            ("pinned", threads::can_pin().into()),
            // This build takes `--case`: the tool may narrow its later
            // pairs to single cells (an older build runs whole locks).
            ("narrows_cases", true.into()),
            // And `--cell`: exactly the cells named, not a cross product.
            ("narrows_cells", true.into()),
        ]);
        record.set("variants", variants);
        self.emit(record);
        // The machine's state, measured before the suite's own cells
        // (`--canary`): the tool assigns the invocation's round.
        if args.canary {
            crate::canary::emit(self, 0);
        }
    }

    /// One round's value of `metric` for the cell `(bench, case)`. A value
    /// that is not finite, or a time that is not positive (a cost the
    /// empty-loop subtraction cannot tell from zero), is printed as `null`:
    /// the xtask then shows the cell and never compares it.
    pub fn sample(&self, bench: &str, case: &J, metric: &Metric, round: usize, value: f64) {
        let better = match metric.better {
            Better::Lower => "lower",
            Better::Higher => "higher",
        };
        let valid = value.is_finite() && (value > 0.0 || !metric.is_time() && value >= 0.0);
        self.emit(obj([
            ("type", "sample".into()),
            ("suite", self.suite.into()),
            ("bench", bench.into()),
            ("case", case.clone()),
            ("metric", metric.name.into()),
            ("unit", metric.unit.into()),
            ("better", better.into()),
            ("round", round.into()),
            ("value", if valid { value.into() } else { J::Null }),
        ]));
    }

    /// What one operation of the counted cell `(bench, case)` executed:
    /// disassembly text -> executions per op, and symbol -> entries per op.
    pub fn executed(&self, bench: &str, case: &J, round: usize, executed: &Executed) {
        let map = |m: &std::collections::BTreeMap<String, f64>| {
            J::Obj(m.iter().map(|(k, &v)| (k.clone(), J::Num(v))).collect())
        };
        self.emit(obj([
            ("type", "executed".into()),
            ("suite", self.suite.into()),
            ("bench", bench.into()),
            ("case", case.clone()),
            ("round", round.into()),
            ("per_op", map(&executed.per_op)),
            ("entered", map(&executed.entered)),
        ]));
    }

    /// The suite's probes: each lock operation's (or primitive's) function,
    /// as an offset from the anchor function's code.
    pub fn probes(&self, probes: &[Probe]) {
        let list = probes
            .iter()
            .map(|p| {
                obj([
                    ("unit", p.unit.into()),
                    ("op", p.op.into()),
                    ("offset", J::Int(p.offset())),
                ])
            })
            .collect();
        self.emit(obj([
            ("type", "probes".into()),
            ("suite", self.suite.into()),
            ("anchor", ANCHOR.into()),
            ("probes", J::Arr(list)),
        ]));
    }

    /// A correctness invariant. A failed check makes the suite exit 1 at
    /// [`Out::finish`] and fails the matrix.
    pub fn check(&self, bench: &str, case: &J, name: &str, ok: bool, details: J) {
        if !ok {
            self.failed.fetch_add(1, Ordering::Relaxed);
            eprintln!(
                "{}: check {name} of {bench} {case} FAILED: {details}",
                self.suite
            );
        }
        self.emit(obj([
            ("type", "check".into()),
            ("suite", self.suite.into()),
            ("bench", bench.into()),
            ("case", case.clone()),
            ("name", name.into()),
            ("ok", ok.into()),
            ("details", details),
        ]));
    }

    /// Shorthand for a check that an observed count equals the expected one.
    pub fn check_eq(&self, bench: &str, case: &J, name: &str, expected: u64, seen: u64) {
        let details = obj([("expected", expected.into()), ("seen", seen.into())]);
        self.check(bench, case, name, expected == seen, details);
    }

    /// Ends the run: exit status 1 when any check failed, 0 otherwise.
    pub fn finish(&self) -> std::process::ExitCode {
        match self.failed.load(Ordering::Relaxed) {
            0 => std::process::ExitCode::SUCCESS,
            _ => std::process::ExitCode::FAILURE,
        }
    }
}
