//! One-sided Welch t-test: is head slower than base by more than `delta`?
//!
//! Works on log values, so the tested quantity is the ratio of geometric
//! means: H0 `mean(ln head) - mean(ln base) <= ln(1 + delta)` against H1 `>`.
//! Welch (unequal variances, Welch-Satterthwaite degrees of freedom) because
//! base and head rounds are often taken on different days with different noise.

use statrs::distribution::{ContinuousCDF, StudentsT};

use crate::input::{at_least, finite, log_margin, logs, StatsError};

/// Result of a one-sided Welch t-test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Welch {
    /// The t statistic (`±inf` when both samples have zero variance).
    pub t: f64,
    /// Welch-Satterthwaite degrees of freedom (`n + m - 2` when both variances are zero).
    pub df: f64,
    /// One-sided p-value, `P(T >= t)` under H0.
    pub p: f64,
}

/// Tests H0 `mean(x) - mean(y) <= mu` against H1 `mean(x) - mean(y) > mu`,
/// like R's `t.test(x, y, alternative = "greater", mu = mu, var.equal = FALSE)`.
///
/// Needs at least two values per sample (a variance). When both samples have
/// no spread (deterministic metrics), the answer is deterministic: p = 0 if the
/// difference exceeds `mu` beyond rounding, else p = 1.
pub fn welch_greater(x: &[f64], y: &[f64], mu: f64) -> Result<Welch, StatsError> {
    finite("x", x, 2)?;
    finite("y", y, 2)?;
    if !mu.is_finite() {
        return Err(StatsError::BadParameter {
            name: "mu",
            value: mu,
            expected: "a finite number",
        });
    }
    let (mx, vx) = mean_var(x);
    let (my, vy) = mean_var(y);
    let (n, m) = (x.len() as f64, y.len() as f64);
    let (sx, sy) = (vx / n, vy / m);
    let se = (sx + sy).sqrt();
    let d = mx - my - mu;
    // Identical values can leave a variance of ~1e-32 from rounding the mean;
    // below this the spread is rounding, not measurement.
    let rounding = 1e-12 * (1.0 + mx.abs() + my.abs() + mu.abs());
    if se <= rounding {
        let df = n + m - 2.0;
        return Ok(if d > rounding {
            Welch {
                t: f64::INFINITY,
                df,
                p: 0.0,
            }
        } else {
            Welch {
                t: if d < -rounding {
                    f64::NEG_INFINITY
                } else {
                    0.0
                },
                df,
                p: 1.0,
            }
        });
    }
    if !se.is_finite() || !d.is_finite() {
        return Err(StatsError::BadValue {
            sample: "x, y",
            index: 0,
            value: se,
            expected: "values close enough for a finite variance",
        });
    }
    let t = d / se;
    // Welch-Satterthwaite's df lies between min(n, m) - 1 and n + m - 2;
    // clamping keeps it there when the squares under- or overflow.
    let df = (sx + sy).powi(2) / (sx * sx / (n - 1.0) + sy * sy / (m - 1.0));
    let (lo, hi) = (n.min(m) - 1.0, n + m - 2.0);
    let df = if df.is_nan() { hi } else { df.clamp(lo, hi) };
    let dist = StudentsT::new(0.0, 1.0, df).expect("1 <= df <= n + m - 2");
    Ok(Welch {
        t,
        df,
        p: dist.sf(t),
    })
}

/// One-sample t-test of H0 "the mean of `d` is at most `mu`" against
/// "above": the paired t-test, given the per-pair differences. Needs two
/// values; without spread the answer is deterministic, as in
/// [`welch_greater`].
pub fn one_sample_greater(d: &[f64], mu: f64) -> Result<Welch, StatsError> {
    finite("d", d, 2)?;
    let (mean, var) = mean_var(d);
    let n = d.len() as f64;
    let se = (var / n).sqrt();
    let diff = mean - mu;
    let rounding = 1e-12 * (1.0 + mean.abs() + mu.abs());
    let df = n - 1.0;
    if se <= rounding || !se.is_finite() {
        let p = if diff > rounding { 0.0 } else { 1.0 };
        return Ok(Welch {
            t: diff.signum() * f64::INFINITY,
            df,
            p,
        });
    }
    let t = diff / se;
    let dist = StudentsT::new(0.0, 1.0, df).expect("df >= 1");
    Ok(Welch {
        t,
        df,
        p: dist.sf(t),
    })
}

/// Tests whether `head` is slower than `base` by more than `delta` (e.g. 0.05
/// for 5%): Welch on `ln head` vs `ln base` with `mu = ln(1 + delta)`.
/// Values must be positive; lower is better.
pub fn welch_slowdown(base: &[f64], head: &[f64], delta: f64) -> Result<Welch, StatsError> {
    let mu = log_margin(delta)?;
    let (base, head) = (logs("base", base)?, logs("head", head)?);
    at_least("base", base.len(), 2)?;
    at_least("head", head.len(), 2)?;
    welch_greater(&head, &base, mu)
}

/// Mean and unbiased sample variance (two-pass, for accuracy).
pub(crate) fn mean_var(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let ss: f64 = xs.iter().map(|x| (x - mean).powi(2)).sum();
    (mean, ss / (n - 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    // R's `sleep` data set (Cushny & Peebles 1905, as in Student 1908): extra
    // hours of sleep for two drugs. R's documented example
    // `t.test(extra ~ group, data = sleep)` prints
    // "t = -1.8608, df = 17.776, p-value = 0.07939" (two-sided Welch, group 1 - group 2).
    // The one-sided "greater" test of group 2 vs group 1 has t = +1.8608 and half
    // that p-value: 0.03970 (0.0396970700936791 to 15 digits, checked with mpmath).
    const SLEEP_1: [f64; 10] = [0.7, -1.6, -0.2, -1.2, -0.1, 3.4, 3.7, 0.8, 0.0, 2.0];
    const SLEEP_2: [f64; 10] = [1.9, 0.8, 1.1, 0.1, -0.1, 4.4, 5.5, 1.6, 4.6, 3.4];

    #[test]
    fn matches_r_sleep_example() {
        let w = welch_greater(&SLEEP_2, &SLEEP_1, 0.0).unwrap();
        assert!((w.t - 1.8608).abs() < 5e-5, "{w:?}");
        assert!((w.df - 17.776).abs() < 5e-4, "{w:?}");
        assert!((2.0 * w.p - 0.07939).abs() < 5e-6, "{w:?}");
        assert!((w.p - 0.039_697_070_093_679).abs() < 1e-9, "{w:?}");
    }

    #[test]
    fn mu_shifts_the_null() {
        // Shifting x by +1 and testing mu = 1 is the same test.
        let shifted: Vec<f64> = SLEEP_2.iter().map(|v| v + 1.0).collect();
        let a = welch_greater(&SLEEP_2, &SLEEP_1, 0.0).unwrap();
        let b = welch_greater(&shifted, &SLEEP_1, 1.0).unwrap();
        assert!((a.t - b.t).abs() < 1e-12 && (a.p - b.p).abs() < 1e-12);
    }

    #[test]
    fn zero_variance_is_deterministic() {
        let base = [1000.0; 5];
        let same = welch_slowdown(&base, &[1000.0; 5], 0.0).unwrap();
        assert_eq!((same.p, same.t, same.df), (1.0, 0.0, 8.0));
        let slower = welch_slowdown(&base, &[1001.0; 5], 0.0).unwrap();
        assert_eq!((slower.p, slower.t), (0.0, f64::INFINITY));
        // 0.1% slower is within a 5% tolerance.
        let within = welch_slowdown(&base, &[1001.0; 5], 0.05).unwrap();
        assert_eq!(within.p, 1.0);
        // Values that are equal but whose log mean rounds differently.
        let odd = [0.1 + 0.2; 7];
        assert_eq!(welch_slowdown(&odd, &odd, 0.0).unwrap().p, 1.0);
    }

    #[test]
    fn one_side_without_spread_uses_the_other_sides_df() {
        let w = welch_greater(&[1.0, 2.0, 3.0, 4.0], &[0.0; 3], 0.0).unwrap();
        assert!((w.df - 3.0).abs() < 1e-12);
        assert!(w.p > 0.0 && w.p < 0.05);
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(matches!(
            welch_slowdown(&[1.0], &[1.0, 2.0], 0.0),
            Err(StatsError::TooFewSamples { sample: "base", .. })
        ));
        assert!(matches!(
            welch_slowdown(&[1.0, 2.0], &[1.0, -2.0], 0.0),
            Err(StatsError::BadValue {
                sample: "head",
                index: 1,
                ..
            })
        ));
        assert!(welch_slowdown(&[1.0, 2.0], &[1.0, 2.0], -1.0).is_err());
    }
}
