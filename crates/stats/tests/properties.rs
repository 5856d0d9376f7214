//! Property test: every public statistic, fed arbitrary numbers (finite,
//! huge, tiny, zero, negative, NaN, infinite) and arbitrary parameters,
//! returns within a time limit with either a finite answer or an error.
//! Never a hang, a panic, or a NaN passed off as a result.

use proptest::prelude::*;
use proptest::strategy::Strategy;
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// Longest any one case may take. The slowest legitimate case (an exact
/// Mann-Whitney distribution at the largest exact size) takes milliseconds.
const LIMIT: Duration = Duration::from_secs(5);

/// Runs `f` on a thread and fails the case when it outlives [`LIMIT`]
/// (the thread is left behind: a hang cannot be cancelled, only caught).
fn within_limit(what: String, f: impl FnOnce() + Send + 'static) -> Duration {
    let (tx, rx) = mpsc::channel();
    let start = Instant::now();
    std::thread::spawn(move || {
        f();
        let _ = tx.send(());
    });
    match rx.recv_timeout(LIMIT) {
        Ok(()) => start.elapsed(),
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("{what}: still running after {LIMIT:?}"),
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("{what}: panicked"),
    }
}

/// Any f64 worth trying: the edges, plus ordinary and extreme magnitudes.
fn number() -> impl Strategy<Value = f64> {
    prop_oneof![
        Just(0.0),
        Just(-0.0),
        Just(f64::NAN),
        Just(f64::INFINITY),
        Just(f64::NEG_INFINITY),
        Just(f64::MAX),
        Just(f64::MIN_POSITIVE),
        Just(5e-324),
        Just(1e100),
        Just(1e300),
        -1e6f64..1e6,
        1e-300f64..1e-290,
        1.0f64..1e308,
        any::<f64>(),
    ]
}

/// A parameter (delta, alpha, power): mostly in its valid range, so the
/// deep code paths run, sometimes any number at all.
fn parameter() -> impl Strategy<Value = f64> {
    prop_oneof![3 => 1e-6f64..0.5, 1 => number()]
}

/// Mostly sane timing samples (so the deep code paths run), sometimes
/// poisoned with an arbitrary number.
fn sample() -> impl Strategy<Value = Vec<f64>> {
    (
        prop::collection::vec(1.0f64..2.0, 0..24),
        prop::collection::vec((0usize..24, number()), 0..3),
        1e-12f64..1e150,
    )
        .prop_map(|(mut xs, poison, scale)| {
            for x in &mut xs {
                *x *= scale;
            }
            for (i, v) in poison {
                if !xs.is_empty() {
                    let n = xs.len();
                    xs[i % n] = v;
                }
            }
            xs
        })
}

fn finite_or_err<T>(r: &Result<T, stats::StatsError>, values: impl Fn(&T) -> Vec<f64>) {
    if let Ok(v) = r {
        for x in values(v) {
            assert!(!x.is_nan(), "a NaN result");
        }
    }
}

/// Cases per property.
const CASES: u32 = 2000;

/// Runs `check` on `CASES` generated inputs and prints the case count and
/// the longest case's time.
fn property<S: Strategy>(name: &str, strategy: S, check: impl Fn(S::Value) -> Duration)
where
    S::Value: std::fmt::Debug,
{
    let config = proptest::test_runner::Config {
        cases: CASES,
        failure_persistence: None,
        ..Default::default()
    };
    let longest = std::cell::Cell::new(Duration::ZERO);
    proptest::test_runner::TestRunner::new(config)
        .run(&strategy, |v| {
            longest.set(longest.get().max(check(v)));
            Ok(())
        })
        .unwrap();
    eprintln!("{name}: {CASES} cases, longest {:?}", longest.get());
}

#[test]
fn comparisons_end_quickly_and_never_return_nan() {
    let inputs = (sample(), sample(), parameter(), parameter());
    property("comparisons", inputs, |(base, head, delta, alpha)| {
        let what = format!("compare({base:?}, {head:?}, {delta:?}, {alpha:?})");
        within_limit(what, move || {
            let c = stats::compare(&base, &head, delta, alpha);
            finite_or_err(&c, |c| vec![c.ratio, c.p_t, c.p_rank, c.confidence]);
            // Paired: as many head values as base values.
            let n = base.len().min(head.len());
            let c = stats::compare_paired(&base[..n], &head[..n], delta, alpha);
            finite_or_err(&c, |c| vec![c.ratio, c.p_t, c.p_rank, c.confidence]);
            let sr = stats::signed_rank_slowdown(&base[..n], &head[..n], delta);
            finite_or_err(&sr, |s| vec![s.p, s.w_plus]);
            let p = stats::assess_power(&base, &head, delta, alpha);
            finite_or_err(&p, |_| vec![]);
            let mw = stats::mann_whitney_greater(&base, &head);
            finite_or_err(&mw, |m| vec![m.p]);
            let w = stats::welch_greater(&base, &head, delta);
            finite_or_err(&w, |w| vec![w.p]);
            let hl = stats::hodges_lehmann_ratio(&base, &head, alpha);
            finite_or_err(&hl, |h| vec![h.estimate]);
        })
    });
}

#[test]
fn sizes_and_corrections_end_quickly() {
    let inputs = (
        (number(), parameter(), parameter(), parameter()),
        prop::collection::vec(number(), 0..50),
        (0u64..1000, 0u64..1000),
    );
    property(
        "sizes and corrections",
        inputs,
        |((sd, effect, alpha, power), ps, (x, n))| {
            let what = format!(
                "rounds_needed({sd:?}, {effect:?}, {alpha:?}, {power:?}), p {ps:?}, {x}/{n}"
            );
            within_limit(what, move || {
                let _ = stats::rounds_needed(sd, effect, alpha, power);
                let _ = stats::pairs_needed(sd, effect, alpha, power);
                if alpha > 0.0 && alpha < 1.0 {
                    let _ = stats::min_rounds_rank(alpha);
                }
                let _ = stats::holm_adjust(&ps);
                let _ = stats::bh_adjust(&ps);
                let ci = stats::clopper_pearson(x, n, alpha);
                finite_or_err(&ci, |i| vec![i.lo, i.hi]);
            })
        },
    );
}
