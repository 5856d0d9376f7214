//! Hodges-Lehmann shift estimate with its distribution-free confidence interval.
//!
//! The effect reported for a cell: the median of all pairwise differences
//! `ln head_i - ln base_j`, as a ratio `exp(shift)`. The interval (Moses;
//! Hollander & Wolfe, section 4.3) cuts `k - 1` differences from each end of
//! the sorted differences, with `k` from the null distribution of
//! Mann-Whitney's U. It is the set of shifts the two-sided U test does not
//! reject, so it agrees with the test and needs no normality.

use statrs::distribution::{ContinuousCDF, Normal};

use crate::input::{finite, in_open, logs, StatsError};
use crate::mann_whitney::{u_counts, EXACT_MAX};

/// A location-shift estimate with a two-sided confidence interval.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct HodgesLehmann {
    /// The point estimate (a shift, or a ratio for [`hodges_lehmann_ratio`]).
    pub estimate: f64,
    /// Lower bound; `-inf` (ratio: 0) when the samples are too small for the level.
    pub lo: f64,
    /// Upper bound; `+inf` when the samples are too small for the level.
    pub hi: f64,
    /// The interval's two-sided confidence level.
    pub confidence: f64,
}

/// Estimates the shift `x - y` as the median of the `n m` differences
/// `x_i - y_j`, with a two-sided `confidence` interval. R's
/// `wilcox.test(x, y, conf.int = TRUE)` gives the same estimate and, for
/// small samples, the same interval except when a tail probability equals
/// the level exactly (R then keeps one more difference) or samples are too
/// small for the level (R returns the full range, here it is unbounded).
pub fn hodges_lehmann_shift(
    x: &[f64],
    y: &[f64],
    confidence: f64,
) -> Result<HodgesLehmann, StatsError> {
    finite("x", x, 1)?;
    finite("y", y, 1)?;
    in_open("confidence", confidence, 0.0, 1.0, "0 < confidence < 1")?;
    let mut d: Vec<f64> = x
        .iter()
        .flat_map(|a| y.iter().map(move |b| a - b))
        .collect();
    d.sort_by(f64::total_cmp);
    let len = d.len();
    let estimate = if len % 2 == 1 {
        d[len / 2]
    } else {
        (d[len / 2 - 1] + d[len / 2]) / 2.0
    };
    let k = order_index(x.len(), y.len(), confidence);
    let (lo, hi) = if k == 0 {
        (f64::NEG_INFINITY, f64::INFINITY)
    } else {
        (d[k - 1], d[len - k])
    };
    Ok(HodgesLehmann {
        estimate,
        lo,
        hi,
        confidence,
    })
}

/// Estimates the ratio `head / base` as `exp` of the Hodges-Lehmann shift of
/// the logs, with its two-sided `confidence` interval. Values must be positive.
pub fn hodges_lehmann_ratio(
    base: &[f64],
    head: &[f64],
    confidence: f64,
) -> Result<HodgesLehmann, StatsError> {
    let (base, head) = (logs("base", base)?, logs("head", head)?);
    let s = hodges_lehmann_shift(&head, &base, confidence)?;
    Ok(HodgesLehmann {
        estimate: s.estimate.exp(),
        lo: s.lo.exp(),
        hi: s.hi.exp(),
        confidence,
    })
}

/// `k`, the 1-based rank of the lower bound among the sorted differences (the
/// upper bound has rank `n m + 1 - k`): the largest `k` with
/// `P(U <= k - 1) <= (1 - confidence) / 2`, so the coverage is at least
/// `confidence`. 0 when even `k = 1` misses the level (tiny samples).
///
/// Exact U distribution up to [`EXACT_MAX`] per side (ties are ignored here:
/// the interval is then approximate, as R's is); beyond, the normal
/// approximation with continuity correction, `k = ⌊n m / 2 + 1/2 - z σ⌋`.
fn order_index(n: usize, m: usize, confidence: f64) -> usize {
    let tail = (1.0 - confidence) / 2.0;
    if n <= EXACT_MAX && m <= EXACT_MAX {
        let counts = u_counts(n, m);
        let total = counts.iter().sum::<u64>() as f64;
        // Relative slack so that a tail of exactly e.g. 1/40 counts as within.
        let limit = tail * total * (1.0 + 1e-12);
        let mut cum = 0u64;
        counts
            .iter()
            .take_while(|&&c| {
                cum += c;
                cum as f64 <= limit
            })
            .count()
    } else {
        let (nm, big_n) = ((n * m) as f64, (n + m) as f64);
        let sigma = (nm * (big_n + 1.0) / 12.0).sqrt();
        let z = Normal::standard().inverse_cdf(1.0 - tail);
        (nm / 2.0 + 0.5 - z * sigma).floor().max(0.0) as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hand_computed_small_case() {
        // Differences of [1, 2, 3] - [0] are 1, 2, 3: median 2. With one y, U
        // is uniform on 0..=3 (P = 1/4 each): an 80% interval has tail 0.1,
        // below P(U = 0), so no finite bound; a 50% interval has tail 1/4 = P(U <= 0),
        // so k = 1: the full range [1, 3].
        let r = hodges_lehmann_shift(&[1.0, 2.0, 3.0], &[0.0], 0.8).unwrap();
        assert_eq!(
            (r.estimate, r.lo, r.hi),
            (2.0, f64::NEG_INFINITY, f64::INFINITY)
        );
        let r = hodges_lehmann_shift(&[1.0, 2.0, 3.0], &[0.0], 0.5).unwrap();
        assert_eq!((r.estimate, r.lo, r.hi), (2.0, 1.0, 3.0));
        // Even count: the mean of the middle two of 1, 2, 3, 4.
        let r = hodges_lehmann_shift(&[1.0, 2.0], &[0.0, -2.0], 0.5).unwrap();
        assert_eq!(r.estimate, 2.5);
    }

    // Hollander & Wolfe (1999), Table 4.1 (chorioamnion permeability, the same
    // data as R's `?wilcox.test` example, from H&W 1973 p. 69). Published with
    // coin's `wilcox_test(..., distribution = "exact", conf.int = TRUE)` for
    // (12-26 weeks - at term): "95 percent confidence interval: -0.76 0.15,
    // difference in location -0.305". Here x - y, so the signs flip.
    #[test]
    fn matches_hollander_wolfe_example() {
        let x = [0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46];
        let y = [1.15, 0.88, 0.90, 0.74, 1.21];
        let r = hodges_lehmann_shift(&x, &y, 0.95).unwrap();
        assert!((r.estimate - 0.305).abs() < 1e-9, "{r:?}");
        assert!((r.lo - -0.15).abs() < 1e-9, "{r:?}");
        assert!((r.hi - 0.76).abs() < 1e-9, "{r:?}");
        assert_eq!(order_index(10, 5, 0.95), 9);
    }

    #[test]
    fn ratio_is_exp_of_log_shift() {
        let base = [100.0, 102.0, 98.0, 101.0, 99.0, 100.5];
        let head: Vec<f64> = base.iter().map(|b| b * 1.25).collect();
        let r = hodges_lehmann_ratio(&base, &head, 0.9).unwrap();
        assert!((r.estimate - 1.25).abs() < 1e-12);
        assert!(r.lo < 1.25 && r.hi > 1.25 && r.lo > 1.0);
    }

    #[test]
    fn normal_critical_value_is_close_to_exact() {
        // At n = m = 30 both ways of choosing k are available; they agree to a rank.
        let exact = order_index(30, 30, 0.95) as i64;
        let (nm, sigma) = (900.0_f64, (900.0_f64 * 61.0 / 12.0).sqrt());
        let approx = (nm / 2.0 + 0.5 - 1.959_963_984_540_054 * sigma).floor() as i64;
        assert!((exact - approx).abs() <= 1, "{exact} vs {approx}");
        // Past EXACT_MAX the approximation is used; one more round per side
        // cuts a few more differences from each end.
        let k31 = order_index(31, 31, 0.95) as i64;
        assert!(k31 > exact && k31 < 31 * 31 / 2, "{k31}");
    }
}
