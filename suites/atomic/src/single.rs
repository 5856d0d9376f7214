//! Seed 000: single-threaded cost per operation, empty loop subtracted.

use crate::ops;
use crate::sigmask::{is_blocked, SigSets};
use harness::json::obj;
use harness::measure::{insns_sample, per_op};
use harness::out::{Better, Metric};
use harness::{timer, Args, Out};
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};

const BENCH: &str = "single_thread";

fn emit(out: &Out, op: &str, round: usize, per_op: f64) {
    let case = obj([("op", op.into())]);
    let metric = Metric::new("ticks_per_op", timer::UNIT, Better::Lower);
    out.sample(BENCH, &case, &metric, round, per_op);
}

pub fn run(args: &Args, out: &Out) {
    let rounds = args.rounds(5, 15);
    // 20000 loops is seed 000's count; syscalls are ~100x dearer than atomics.
    let iters = args.iters(20_000, 200_000);
    let sys_iters = (iters / 10).max(1);
    let reps = 5;

    for (name, cas) in ops::cas_variants() {
        let word = AtomicUsize::new(0);
        let (mut next, mut misses) = (0usize, 0u64);
        let mut op = |_| {
            if cas(&word, next, next.wrapping_add(1)) != next {
                misses += 1;
            }
            next = next.wrapping_add(1);
        };
        for round in 0..rounds {
            let b = per_op(iters, reps, &mut op);
            emit(out, name, round, b.per_op);
        }
        let case = obj([("op", name.into())]);
        insns_sample(out, BENCH, &case, &mut op);
        out.check_eq(BENCH, &case, "every_cas_succeeded", 0, misses);
        out.check_eq(
            BENCH,
            &case,
            "final_value",
            next as u64,
            word.load(Ordering::Relaxed) as u64,
        );
    }

    for (name, add) in ops::add_return_variants() {
        let word = AtomicUsize::new(0);
        let (mut calls, mut wrong) = (0usize, 0u64);
        let mut op = |_| {
            calls = calls.wrapping_add(1);
            if add(&word, 1) != calls {
                wrong += 1;
            }
        };
        for round in 0..rounds {
            let b = per_op(iters, reps, &mut op);
            emit(out, name, round, b.per_op);
        }
        let case = obj([("op", name.into())]);
        insns_sample(out, BENCH, &case, &mut op);
        out.check_eq(BENCH, &case, "returned_new_value", 0, wrong);
        out.check_eq(
            BENCH,
            &case,
            "final_value",
            calls as u64,
            word.load(Ordering::Relaxed) as u64,
        );
    }

    for round in 0..rounds {
        let b = per_op(iters, reps, |_| ops::fence_seqcst());
        emit(out, "fence", round, b.per_op);
    }
    insns_sample(out, BENCH, &obj([("op", "fence".into())]), |_| {
        ops::fence_seqcst()
    });

    let sets = SigSets::new();
    let mut blocked_after_disable = true;
    let mut unblocked_after_enable = true;
    // The first error pthread_sigmask returned, and how many calls failed.
    let (mut first_error, mut errors) = (0, 0u64);
    let mut note = |rc: libc::c_int| {
        if rc != 0 {
            first_error = if first_error == 0 { rc } else { first_error };
            errors += 1;
        }
    };
    for round in 0..rounds {
        let b = per_op(sys_iters, reps, |_| note(sets.disable()));
        blocked_after_disable &= is_blocked(libc::SIGUSR1) && is_blocked(libc::SIGTERM);
        emit(out, "irq_disable", round, b.per_op);
        let b = per_op(sys_iters, reps, |_| note(sets.enable()));
        unblocked_after_enable &= !is_blocked(libc::SIGUSR1) && !is_blocked(libc::SIGTERM);
        emit(out, "irq_enable", round, b.per_op);
        let b = per_op(sys_iters, reps, |i| {
            note(sets.disable());
            black_box(i);
            note(sets.enable());
        });
        emit(out, "irq_disable_enable", round, b.per_op);
    }
    let op_case = |op: &str| obj([("op", op.into())]);
    insns_sample(out, BENCH, &op_case("irq_disable"), |_| {
        note(sets.disable())
    });
    insns_sample(out, BENCH, &op_case("irq_enable"), |_| note(sets.enable()));
    insns_sample(out, BENCH, &op_case("irq_disable_enable"), |i| {
        note(sets.disable());
        black_box(i);
        note(sets.enable());
    });
    let case = obj([("op", "irq_disable_enable".into())]);
    let detail = |ok: bool| obj([("seen", ok.into())]);
    out.check(
        BENCH,
        &case,
        "disable_blocks_signals",
        blocked_after_disable,
        detail(blocked_after_disable),
    );
    out.check(
        BENCH,
        &case,
        "enable_unblocks_signals",
        unblocked_after_enable,
        detail(unblocked_after_enable),
    );
    let details = obj([
        ("failed_calls", errors.into()),
        ("first_errno", first_error.into()),
    ]);
    out.check(
        BENCH,
        &case,
        "sigmask_calls_succeeded",
        errors == 0,
        details,
    );
}
