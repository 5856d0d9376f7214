//! Batch timing with the empty-loop baseline subtracted, as seed 000 does.
//!
//! A single tiny operation is never timed: the timer's own cost and
//! resolution would swamp it. Instead `iters` operations are timed as one
//! batch, the same loop with no operation is timed the same way, and the
//! difference is divided by `iters`. Each is repeated `reps` times and the
//! median kept, which discards batches hit by an interrupt or migration.

use crate::out::{Better, Metric, Out};
use crate::{json::J, marker, timer};
use std::hint::black_box;
use std::sync::atomic::{AtomicU32, Ordering};

/// One measurement: ticks per operation and the medians it came from.
#[derive(Clone, Copy, Debug)]
pub struct Batch {
    pub per_op: f64,
    pub op_ticks: u64,
    pub empty_ticks: u64,
}

/// Ticks for `iters` iterations of the empty loop.
#[inline(never)]
fn empty_loop(iters: u64) -> u64 {
    let t0 = timer::now();
    for i in 0..iters {
        black_box(i);
    }
    timer::now() - t0
}

#[inline(always)]
fn op_loop(iters: u64, op: &mut impl FnMut(u64)) -> u64 {
    let t0 = timer::now();
    for i in 0..iters {
        op(black_box(i));
    }
    timer::now() - t0
}

/// The median of a non-empty list.
pub fn median(values: &mut [u64]) -> u64 {
    values.sort_unstable();
    values[values.len() / 2]
}

/// Times `op` over `iters` iterations, `reps` times, and returns the
/// per-operation cost above the empty loop.
pub fn per_op(iters: u64, reps: usize, mut op: impl FnMut(u64)) -> Batch {
    assert!(iters > 0 && reps > 0);
    // Warm up caches, branch predictors and lazily mapped pages.
    op_loop(iters.min(1000), &mut op);
    let mut ops: Vec<u64> = Vec::with_capacity(reps);
    let mut empties: Vec<u64> = Vec::with_capacity(reps);
    for _ in 0..reps {
        empties.push(empty_loop(iters));
        ops.push(op_loop(iters, &mut op));
    }
    let (op_ticks, empty_ticks) = (median(&mut ops), median(&mut empties));
    Batch {
        per_op: (op_ticks as f64 - empty_ticks as f64) / iters as f64,
        op_ticks,
        empty_ticks,
    }
}

/// Iterations of a counted op loop: counts are exact, so a small batch
/// keeps the plugin's cost low without losing anything.
pub const INSNS_ITERS: u64 = 1000;

/// Under QEMU with the `insns-plugin` loaded, emits the cell's
/// `insns_per_op` (one sample: counts repeat exactly) and its `executed`
/// record (what one op executed, instruction by instruction); elsewhere
/// nothing. Only for single-threaded cells: a count over code that waits
/// for other threads is as noisy as time.
pub fn insns_sample(out: &Out, bench: &str, case: &J, op: impl FnMut(u64)) {
    static NEXT_REGION: AtomicU32 = AtomicU32::new(1);
    let region = NEXT_REGION.fetch_add(1, Ordering::Relaxed);
    if let Some(c) = marker::insns_per_op(region, INSNS_ITERS, op) {
        // Counts gate exactly wherever they exist.
        let metric = Metric::new("insns_per_op", "insns", Better::Lower);
        out.sample(bench, case, &metric, 0, c.per_op);
        if let Some(executed) = &c.executed {
            out.executed(bench, case, 0, executed);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicU64, Ordering};

    #[test]
    fn an_expensive_op_costs_more_than_a_cheap_one() {
        let x = AtomicU64::new(0);
        let cheap = per_op(20_000, 5, |i| {
            black_box(i);
        });
        let dear = per_op(20_000, 5, |_| {
            black_box(crate::work::work(50));
            // SeqCst: a fully ordered RMW is a dear operation to time;
            // nothing relies on its ordering.
            x.fetch_add(1, Ordering::SeqCst);
        });
        assert!(
            dear.per_op > cheap.per_op + 10.0 * timer::hz() / 1e9,
            "{dear:?} vs {cheap:?}"
        );
    }
}
