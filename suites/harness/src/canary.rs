//! The canary: a fixed workload whose time says how busy the machine is,
//! not how fast a lock is. Run with every round on real hardware when the
//! tool asks (`--canary`), and recorded with stored baselines, so that a
//! later run against them can tell a busier testbed from a slower lock: a
//! stored comparison is unpaired, and whatever moved the machine between
//! recording and checking moves every cell, contended ones most.
//!
//! Two cells, each a 50 ms window: one thread's dependent integer chain
//! (a neighbour taking the core, or a lower clock, stretches it), and two
//! threads adding to one shared line (what a lock's contended cells feel
//! most: a vCPU descheduled mid-bounce, another tenant's traffic). Each
//! counts the operations done in its window, as the locks' cells do, so a
//! share of the window spent descheduled shows in it as it shows in
//! theirs: a fixed count of a few milliseconds would often fit between
//! two preemptions and never see a busier machine. Their code never
//! changes with a lock's, so their move is the machine's.

use crate::json::obj;
use crate::out::{Better, Metric, Out};
use crate::{threads, timer};
// A word every target has: mips and powerpc (32-bit) have no 64-bit atomics.
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The bench of the canary's samples.
pub const BENCH: &str = "canary";

/// Its metric: what the tool shows and compares, never gates.
pub const METRIC: &str = "canary_ticks_per_op";

/// Each cell's window, and the operations between two looks at the clock.
const WINDOW: Duration = Duration::from_millis(50);
const BLOCK: usize = 10_000;

/// Emits the canary's two samples as round `round`.
pub fn emit(out: &Out, round: usize) {
    let metric = Metric::new(METRIC, timer::UNIT, Better::Lower);
    out.sample(
        BENCH,
        &obj([("threads", 1.into())]),
        &metric,
        round,
        chain(),
    );
    if threads::cpus() >= 2 {
        out.sample(
            BENCH,
            &obj([("threads", 2.into())]),
            &metric,
            round,
            shared(),
        );
    }
}

/// Ticks per step of a dependent xorshift chain, over a window.
fn chain() -> f64 {
    let (start, began) = (timer::now(), Instant::now());
    let mut x = 0x9e37_79b9_7f4a_7c15u64;
    let mut steps = 0;
    while began.elapsed() < WINDOW {
        for _ in 0..BLOCK {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
        }
        steps += BLOCK;
    }
    std::hint::black_box(x);
    (timer::now() - start) as f64 / steps as f64
}

/// Ticks per `fetch_add` of two threads on one line, over a window each.
fn shared() -> f64 {
    let line = AtomicUsize::new(0);
    let done = threads::run(2, |_| {
        let (start, began) = (timer::now(), Instant::now());
        let mut adds = 0;
        while began.elapsed() < WINDOW {
            for _ in 0..BLOCK {
                line.fetch_add(1, Ordering::Relaxed);
            }
            adds += BLOCK;
        }
        (timer::now() - start, adds)
    });
    let adds: usize = done.iter().map(|d| d.1).sum();
    assert_eq!(line.load(Ordering::Relaxed), adds, "the canary lost an add");
    done.iter().map(|d| d.0).sum::<u64>() as f64 / adds as f64
}

#[cfg(test)]
mod tests {
    #[test]
    fn both_cells_take_a_positive_time() {
        assert!(super::chain() > 0.0);
        assert!(super::shared() > 0.0);
    }
}
