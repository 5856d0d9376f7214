//! The atomic suite: seed 000's cost of atomic primitives, fully ordered vs
//! local, against the cost of "disabling interrupts"; plus a contended
//! fetch-add on one cache line vs per-thread padded counters.
//!
//! Benchmarks:
//! - `single_thread`: case `{op}`, metric `ticks_per_op`, one sample per
//!   round; ops `cas_local`, `cas_sync`, `add_return_local`,
//!   `add_return_sync`, `fence`, `irq_disable`, `irq_enable`,
//!   `irq_disable_enable` (and on arm64 `cas_{local,sync}_{llsc,lse}`).
//!   Checks: every CAS succeeded and the word holds the count of updates;
//!   the signal mask really is all-blocked after disable and empty after
//!   enable.
//! - `contended_add`: case `{layout: shared|padded, threads}`, metric
//!   `ticks_per_op` (mean over threads). Check: the counters' total.

mod contended;
mod ops;
#[cfg(not(loom))]
mod probes;
mod sigmask;
mod single;

use harness::json::{obj, J};
use harness::{Args, Out};

const BENCHES: &[&str] = &["single_thread", "contended_add"];

fn variants() -> J {
    let (_, cas_local) = ops::cas_local();
    let (_, add_local) = ops::add_return_local();
    #[cfg(target_arch = "aarch64")]
    let lse = J::from(ops::aarch64::has_lse());
    #[cfg(not(target_arch = "aarch64"))]
    let lse = J::Null;
    obj([
        ("cas_local", cas_local.into()),
        ("add_return_local", add_local.into()),
        ("lse", lse),
        ("atomic_64bit", cfg!(target_has_atomic = "64").into()),
        ("word_bits", (usize::BITS as i64).into()),
        ("irq_analogue", "pthread_sigmask(all signals)".into()),
    ])
}

fn main() -> std::process::ExitCode {
    let args = Args::from_env(BENCHES);
    if args.list {
        BENCHES.iter().for_each(|b| println!("{b}"));
        return std::process::ExitCode::SUCCESS;
    }
    let out = Out::new("atomic");
    out.env(&args, variants());
    out.probes(&probes::all());
    if args.wants("single_thread") {
        single::run(&args, &out);
    }
    if args.wants("contended_add") {
        contended::run(&args, &out);
    }
    out.finish()
}
