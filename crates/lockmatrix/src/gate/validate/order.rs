//! The AB/BA order effect: whether the side of a pair that runs second is
//! faster (a warm cache, a CPU that clocked up) or slower than the one
//! that ran first. Base runs first in even rounds and head first in odd
//! ones (`matrix/plan.rs`), so in an A/A recording `ln(second / first)` is
//! `ln(head / base)` in even rounds and `ln(base / head)` in odd ones. The
//! alternation keeps such an effect out of the head/base ratio, but it
//! widens each pair's spread, so it costs power; here its size is
//! measured with the recording as the unit (pairs of one recording share
//! its warm-up, frequency and neighbours): the mean over recordings of
//! each one's mean, with a percentile bootstrap over recordings.

use super::cells::{is_count, suite_of};
use super::measure::*;
use super::rng::SplitMix64;

/// Bootstrap resamples of the recordings.
const RESAMPLES: usize = 2000;

/// The order effect of the gating cells' pairs in `parts`; `None` when no
/// pair has two positive values.
pub fn order_effect(parts: &[Recording], seed: u64) -> Option<OrderEffect> {
    let mut means = Vec::new();
    let mut pairs = 0;
    for (head, base) in parts {
        let mut d = Vec::new();
        for t in &head.targets {
            for s in &t.suites {
                let Some(b) = suite_of(base, &t.name, &s.suite) else {
                    continue;
                };
                for x in s.samples.iter().filter(|x| x.gating && !is_count(x)) {
                    let twin = b.samples.iter().find(|y| {
                        (y.round, &y.bench, &y.metric, &y.case)
                            == (x.round, &x.bench, &x.metric, &x.case)
                    });
                    let (Some(h), Some(v)) = (x.value, twin.and_then(|y| y.value)) else {
                        continue;
                    };
                    if h > 0.0 && v > 0.0 {
                        let l = (h / v).ln();
                        d.push(if x.round % 2 == 0 { l } else { -l });
                    }
                }
            }
        }
        if !d.is_empty() {
            pairs += d.len();
            means.push(mean(&d));
        }
    }
    if means.is_empty() {
        return None;
    }
    let ci95 = (means.len() >= 2).then(|| {
        let mut rng = SplitMix64::new(seed);
        let mut boot: Vec<f64> = (0..RESAMPLES)
            .map(|_| {
                mean(
                    &(0..means.len())
                        .map(|_| means[rng.below(means.len())])
                        .collect::<Vec<_>>(),
                )
            })
            .collect();
        boot.sort_by(f64::total_cmp);
        let at = |q: f64| boot[((RESAMPLES as f64 * q) as usize).min(RESAMPLES - 1)].exp();
        [at(0.025), at(0.975)]
    });
    Some(OrderEffect {
        recordings: means.len(),
        pairs,
        ratio: mean(&means).exp(),
        ci95,
    })
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::tests::{noisy_cells, one_suite, Rng};

    /// A recording whose second-run side is `factor` times the first's.
    fn recording(seed: u64, factor: f64) -> Recording {
        let mut rng = Rng::new(seed);
        let cells = noisy_cells(&mut rng, 4, 20, 0.01, |_| 1.0);
        let head = one_suite("x86_64", "native", "atomic", &cells);
        let mut base = head.clone();
        for t in &mut base.targets {
            for s in &mut t.suites {
                for x in &mut s.samples {
                    // Head ran second in even rounds: base is the first.
                    if let Some(v) = x.value.as_mut() {
                        *v *= if x.round % 2 == 0 {
                            1.0 / factor
                        } else {
                            factor
                        };
                    }
                }
            }
        }
        (head, base)
    }

    #[test]
    fn a_second_side_three_percent_faster_is_measured_and_none_is_not_invented() {
        let faster: Vec<Recording> = (1..=6).map(|s| recording(s, 0.97)).collect();
        let e = order_effect(&faster, 1).unwrap();
        assert!((e.ratio - 0.97).abs() < 1e-9, "{e:?}");
        let [lo, hi] = e.ci95.unwrap();
        assert!(
            lo <= 0.97 + 1e-9 && (0.97 - 1e-9..1.0).contains(&hi),
            "{e:?}"
        );
        assert_eq!(e.recordings, 6);
        let none: Vec<Recording> = (1..=6).map(|s| recording(s, 1.0)).collect();
        let e = order_effect(&none, 1).unwrap();
        assert!((e.ratio - 1.0).abs() < 1e-9, "{e:?}");
        assert!(e.line().contains("6 recordings"));
    }
}
