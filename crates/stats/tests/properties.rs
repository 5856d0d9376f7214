//! Property tests. Every public statistic, fed arbitrary numbers (finite,
//! huge, tiny, zero, negative, NaN, infinite) and arbitrary parameters,
//! returns within a time limit with either a finite answer or an error:
//! never a hang, a panic, or a NaN passed off as a result. And on valid
//! inputs each keeps its promise: p-values in [0, 1], adjusted p-values
//! at least the raw ones and in their order, sample sizes monotone in the
//! effect, the noise, the level and the power, intervals that hold their
//! estimate, a ratio that scales with the data.

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
                // Fed anything, they end; what they promise is checked
                // below on the inputs they are for.
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

/// Runs `check` on generated inputs; a failed assertion fails the test
/// with the input that broke it.
fn holds<S: Strategy>(strategy: S, check: impl Fn(S::Value))
where
    S::Value: std::fmt::Debug,
{
    let config = proptest::test_runner::Config {
        cases: 500,
        failure_persistence: None,
        ..Default::default()
    };
    proptest::test_runner::TestRunner::new(config)
        .run(&strategy, |v| {
            check(v);
            Ok(())
        })
        .unwrap();
}

#[test]
fn adjusted_p_values_are_at_least_the_raw_ones_in_order_and_bh_at_most_holm() {
    holds(prop::collection::vec(0.0f64..=1.0, 1..40), |p| {
        let (holm, bh) = (stats::holm_adjust(&p), stats::bh_adjust(&p));
        assert_eq!((holm.len(), bh.len()), (p.len(), p.len()));
        for i in 0..p.len() {
            for (adj, name) in [(&holm, "holm"), (&bh, "bh")] {
                assert!((0.0..=1.0).contains(&adj[i]), "{name} {adj:?}");
                assert!(adj[i] >= p[i] - 1e-12, "{name} below raw: {adj:?} {p:?}");
            }
            assert!(bh[i] <= holm[i] + 1e-12, "BH above Holm: {bh:?} {holm:?}");
            for j in 0..p.len() {
                if p[i] < p[j] {
                    assert!(
                        holm[i] <= holm[j] + 1e-12,
                        "Holm out of order: {p:?} {holm:?}"
                    );
                    assert!(bh[i] <= bh[j] + 1e-12, "BH out of order: {p:?} {bh:?}");
                }
            }
        }
        // Holm never rejects more than its level allows a lone cell.
        let m = p.len() as f64;
        for (i, r) in stats::holm_reject(&p, 0.05).into_iter().enumerate() {
            if r {
                assert!(p[i] <= 0.05, "{p:?}");
            }
            if p[i] <= 0.05 / m {
                assert!(r, "the smallest cells under alpha/m are rejected: {p:?}");
            }
        }
    });
}

#[test]
fn sample_sizes_fall_with_the_effect_and_rise_with_noise_level_and_power() {
    let sane = (0.005f64..0.3, 0.005f64..0.3, 0.001f64..0.1, 0.5f64..0.95);
    holds(sane, |(sd, effect, alpha, power)| {
        for needed in [stats::rounds_needed, stats::pairs_needed] {
            let n = |sd, effect, alpha, power| needed(sd, effect, alpha, power).unwrap();
            let here = n(sd, effect, alpha, power);
            assert!(here >= 2, "{here}");
            assert!(
                n(sd, effect * 2.0, alpha, power) <= here,
                "bigger effect, more rounds"
            );
            assert!(
                n(sd * 2.0, effect, alpha, power) >= here,
                "more noise, fewer rounds"
            );
            assert!(
                n(sd, effect, alpha / 10.0, power) >= here,
                "stricter level, fewer rounds"
            );
            assert!(
                n(sd, effect, alpha, (power + 1.0) / 2.0) >= here,
                "more power, fewer rounds"
            );
            assert_eq!(needed(sd, 0.0, alpha, power), None, "no effect, no size");
        }
    });
}

#[test]
fn clopper_pearson_holds_its_estimate_and_widens_with_confidence() {
    holds((0u64..200, 1u64..200, 0.001f64..0.5), |(x, n, alpha)| {
        let x = x % (n + 1);
        let i = stats::clopper_pearson(x, n, alpha).unwrap();
        let est = x as f64 / n as f64;
        assert!(
            0.0 <= i.lo && i.lo <= est + 1e-12 && est <= i.hi + 1e-12 && i.hi <= 1.0,
            "{i:?} {x}/{n}"
        );
        let wider = stats::clopper_pearson(x, n, alpha / 2.0).unwrap();
        assert!(
            wider.lo <= i.lo + 1e-12 && wider.hi >= i.hi - 1e-12,
            "{wider:?} {i:?}"
        );
        let upper = stats::clopper_pearson_upper(x, n, alpha).unwrap();
        assert!(upper >= est - 1e-12 && upper <= 1.0, "{upper}");
    });
}

#[test]
fn comparisons_give_probabilities_and_a_ratio_that_scales_with_the_data() {
    let side = || prop::collection::vec(1.0f64..2.0, 4..20);
    holds((side(), side(), 1.0f64..3.0), |(base, head, k)| {
        let c = stats::compare(&base, &head, 0.05, 0.05).unwrap();
        for p in [c.p_t, c.p_rank] {
            assert!((0.0..=1.0).contains(&p), "{c:?}");
        }
        assert!(
            c.ratio > 0.0 && c.ratio_lo <= c.ratio && c.ratio <= c.ratio_hi,
            "{c:?}"
        );
        // head k times slower: the ratio is k times larger, and a
        // slowdown can only look more significant.
        let slower: Vec<f64> = head.iter().map(|x| x * k).collect();
        let s = stats::compare(&base, &slower, 0.05, 0.05).unwrap();
        assert!(
            (s.ratio / c.ratio - k).abs() < 1e-9 * k,
            "{} vs {} x {k}",
            s.ratio,
            c.ratio
        );
        assert!(s.p_rank <= c.p_rank + 1e-12, "{} vs {}", s.p_rank, c.p_rank);
        let n = base.len().min(head.len());
        let paired = stats::compare_paired(&base[..n], &head[..n], 0.05, 0.05).unwrap();
        assert!((0.0..=1.0).contains(&paired.p_rank), "{paired:?}");
    });
}
