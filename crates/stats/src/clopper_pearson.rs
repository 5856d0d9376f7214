//! Exact (Clopper-Pearson) binomial confidence intervals.
//!
//! Used to state the gate's own measured accuracy: x false alarms in n A/A
//! runs bound the false-alarm rate. Exact rather than normal because x is
//! usually 0 or tiny, where the Wald interval collapses to [0, 0].
//!
//! The bounds are Beta quantiles (the binomial tail equals a Beta CDF):
//! lower `B(α/2; x, n - x + 1)`, upper `B(1 - α/2; x + 1, n - x)`.

use statrs::distribution::{Beta, ContinuousCDF};

use crate::input::{in_open, StatsError};

/// A two-sided confidence interval for a proportion.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Interval {
    pub lo: f64,
    pub hi: f64,
}

/// Two-sided `1 - alpha` interval for the proportion after `x` successes in `n` trials.
pub fn clopper_pearson(x: u64, n: u64, alpha: f64) -> Result<Interval, StatsError> {
    check(x, n, alpha)?;
    let lo = if x == 0 {
        0.0
    } else {
        beta_quantile(x, n - x + 1, alpha / 2.0)
    };
    Ok(Interval {
        lo,
        hi: upper(x, n, alpha / 2.0),
    })
}

/// One-sided `1 - alpha` upper bound: the proportion is below it with
/// confidence `1 - alpha` (for x = 0, `1 - alpha^(1/n)`; "rule of three" ≈ 3/n).
pub fn clopper_pearson_upper(x: u64, n: u64, alpha: f64) -> Result<f64, StatsError> {
    check(x, n, alpha)?;
    Ok(upper(x, n, alpha))
}

fn upper(x: u64, n: u64, tail: f64) -> f64 {
    if x == n {
        1.0
    } else {
        beta_quantile(x + 1, n - x, 1.0 - tail)
    }
}

fn beta_quantile(a: u64, b: u64, p: f64) -> f64 {
    // statrs searches past [0, 1] (and panics) for p within rounding of
    // the ends, where the quantile is the end itself.
    if p <= f64::EPSILON {
        return 0.0;
    }
    if p >= 1.0 - f64::EPSILON {
        return 1.0;
    }
    Beta::new(a as f64, b as f64)
        .expect("shape parameters are >= 1")
        .inverse_cdf(p)
}

fn check(x: u64, n: u64, alpha: f64) -> Result<(), StatsError> {
    if n == 0 || x > n {
        return Err(StatsError::BadParameter {
            name: "x",
            value: x as f64,
            expected: "0 <= x <= n with n >= 1 trials",
        });
    }
    in_open("alpha", alpha, 0.0, 1.0, "0 < alpha < 1").map(|_| ())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_successes_have_closed_forms() {
        // x = 0: P(X = 0) = (1 - p)^n = tail, so the upper bound is 1 - tail^(1/n).
        // n = 60: one-sided 95% is 0.04870 (3/60 = 0.05 by the rule of three);
        // two-sided 95% is 0.05963.
        let one = clopper_pearson_upper(0, 60, 0.05).unwrap();
        assert!(
            (one - (1.0 - 0.05_f64.powf(1.0 / 60.0))).abs() < 1e-10,
            "{one}"
        );
        assert!((one - 0.0487).abs() < 5e-5);
        let two = clopper_pearson(0, 60, 0.05).unwrap();
        assert_eq!(two.lo, 0.0);
        assert!(
            (two.hi - (1.0 - 0.025_f64.powf(1.0 / 60.0))).abs() < 1e-10,
            "{two:?}"
        );
        assert!((two.hi - 0.0596).abs() < 5e-5);
    }

    #[test]
    fn mid_values_match_published_intervals() {
        // x = 5, n = 20, 95%: [0.0866, 0.4910] (0.0865715, 0.4910459 to 7 digits
        // from mpmath's regularized incomplete beta).
        let ci = clopper_pearson(5, 20, 0.05).unwrap();
        assert!((ci.lo - 0.086_571_5).abs() < 1e-7, "{ci:?}");
        assert!((ci.hi - 0.491_045_9).abs() < 1e-7, "{ci:?}");
        // R's `binom.test` (Clopper-Pearson) as printed in an R-help thread
        // ("[R] binom.test", with Ted Harding's pbinom check of both ends):
        // binom.test(12, 50, conf.level = 0.90): "0.1447182 0.3596557"; and in
        // a published tutorial: binom.test(1, 1497, 0.0033, conf.level = 0.9):
        // "3.426347e-05 3.164954e-03". Both re-checked with mpmath.
        for (x, n, alpha, lo, hi) in [
            (12, 50, 0.10, 0.144_718_2, 0.359_655_7),
            (1, 1497, 0.10, 3.426_347e-5, 3.164_954e-3),
        ] {
            let ci = clopper_pearson(x, n, alpha).unwrap();
            assert!((ci.lo / lo - 1.0).abs() < 1e-6, "{ci:?}");
            assert!((ci.hi / hi - 1.0).abs() < 1e-6, "{ci:?}");
        }
    }

    #[test]
    fn all_successes_and_symmetry() {
        let ci = clopper_pearson(60, 60, 0.05).unwrap();
        assert_eq!(ci.hi, 1.0);
        assert!((ci.lo - 0.025_f64.powf(1.0 / 60.0)).abs() < 1e-10);
        let (a, b) = (
            clopper_pearson(3, 17, 0.1).unwrap(),
            clopper_pearson(14, 17, 0.1).unwrap(),
        );
        assert!((a.lo - (1.0 - b.hi)).abs() < 1e-10 && (a.hi - (1.0 - b.lo)).abs() < 1e-10);
    }

    #[test]
    fn bad_input_is_an_error() {
        assert!(clopper_pearson(1, 0, 0.05).is_err());
        assert!(clopper_pearson(5, 4, 0.05).is_err());
        assert!(clopper_pearson_upper(0, 10, 1.0).is_err());
    }
}
