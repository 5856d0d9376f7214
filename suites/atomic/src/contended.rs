//! Fetch-add under contention: every thread hammering one cache line vs
//! each thread on its own padded line. The gap is the price of sharing,
//! which per-CPU counters (and seed 000's "local" atomics) exist to avoid.

use harness::json::obj;
use harness::out::{Better, Metric};
use harness::{threads, timer, Args, Out};
use std::sync::atomic::{AtomicUsize, Ordering};

const BENCH: &str = "contended_add";

/// 128 bytes: two 64-byte lines, since adjacent-line prefetch pairs them.
#[repr(align(128))]
#[derive(Default)]
struct Padded(AtomicUsize);

pub fn run(args: &Args, out: &Out) {
    let rounds = args.rounds(3, 10);
    let iters = args.iters(20_000, 1_000_000) as usize;
    for n in args.thread_counts() {
        for layout in ["shared", "padded"] {
            let case = obj([("layout", layout.into()), ("threads", n.into())]);
            let counters: Vec<Padded> = (0..n).map(|_| Padded::default()).collect();
            for round in 0..rounds {
                let ticks = threads::run(n, |t| {
                    let c = if layout == "shared" {
                        &counters[0].0
                    } else {
                        &counters[t].0
                    };
                    let t0 = timer::now();
                    for _ in 0..iters {
                        c.fetch_add(1, Ordering::Relaxed);
                    }
                    timer::now() - t0
                });
                let mean = ticks.iter().sum::<u64>() as f64 / (n * iters) as f64;
                // Contended: too noisy on shared VMs to gate on timing.
                let metric = Metric::new("ticks_per_op", timer::UNIT, Better::Lower);
                out.sample(BENCH, &case, &metric, round, mean);
            }
            let total: usize = counters.iter().map(|c| c.0.load(Ordering::Relaxed)).sum();
            if n == 1 {
                // Counted on a counter of its own so the total above stays exact.
                let own = Padded::default();
                harness::measure::insns_sample(out, BENCH, &case, |_| {
                    own.0.fetch_add(1, Ordering::Relaxed);
                });
            }
            out.check_eq(
                BENCH,
                &case,
                "counter_total",
                (n * iters * rounds) as u64,
                total as u64,
            );
        }
    }
}
