//! How many rounds a cell needs, and whether it has them.
//!
//! A cell that cannot detect the slowdown the gate cares about must not pass
//! silently: "no significant slowdown" from 3 noisy rounds is no evidence.
//! Such a cell is "underpowered": shown with the rounds it would need.

use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

use crate::input::{in_open, log_margin, logs, StatsError};
use crate::mann_whitney::min_p_value;
use crate::welch::mean_var;

/// The power the rounds are sized for: a real effect is found 4 times in 5.
pub const POWER: f64 = 0.8;

/// Rounds per side above which [`rounds_needed`] keeps the normal answer.
const T_EXACT_MAX: usize = 10_000;

/// Rounds per side for a one-sided two-sample test at level `alpha` to have
/// power `power` when the true mean (log) difference exceeds the null boundary
/// by `effect`, with per-round standard deviation `sd`.
///
/// Starts from the normal approximation `n = 2 sd² (z_{1-α} + z_power)² / effect²`,
/// then raises `n` until the Student t version holds (the shifted central t
/// approximation of the noncentral t, at `2n - 2` degrees of freedom):
/// `effect / (sd √(2/n)) >= t_{1-α} + t_power`. The pure normal answer is
/// too small for the few rounds cells have (it ignores that the variance is
/// estimated). `None` when `effect <= 0` (no number of rounds can separate a
/// boundary effect), `sd` is not a finite non-negative number, or `alpha`
/// or `power` is not within 1e-9 of the open interval (0, 1).
pub fn rounds_needed(sd: f64, effect: f64, alpha: f64, power: f64) -> Option<usize> {
    // Quantiles of levels closer to 0 or 1 than this mean nothing and make
    // statrs panic.
    let level = |p: f64| (1e-9..=1.0 - 1e-9).contains(&p);
    if effect.is_nan() || effect <= 0.0 || !sd.is_finite() || sd < 0.0 {
        return None;
    }
    if !level(alpha) || !level(power) {
        return None;
    }
    if sd == 0.0 {
        // No noise: the fewest rounds that give a variance at all.
        return Some(2);
    }
    let z = Normal::standard();
    let n0 = 2.0 * (sd / effect * (z.inverse_cdf(1.0 - alpha) + z.inverse_cdf(power))).powi(2);
    if !n0.is_finite() || n0 > T_EXACT_MAX as f64 {
        // t and normal quantiles agree to 0.1% there, and such a count is
        // beyond any run anyway. (statrs' t quantile at 10^8 degrees of
        // freedom spins for minutes: never ask it.)
        return Some(n0.ceil().min(usize::MAX as f64) as usize);
    }
    // The t answer is at most a few rounds above the normal one; the bound
    // only guards against a quantile that never converges.
    let start = (n0.ceil() as usize).max(2);
    (start..=2 * T_EXACT_MAX)
        .find(|&n| {
            let t = StudentsT::new(0.0, 1.0, (2 * n - 2) as f64).expect("df >= 2");
            let reach = effect / (sd * (2.0 / n as f64).sqrt());
            reach >= t.inverse_cdf(1.0 - alpha) + t.inverse_cdf(power)
        })
        .or(Some(2 * T_EXACT_MAX))
}

/// The fewest rounds per side with which the Mann-Whitney test can reach
/// `p <= alpha` at all: `1 / C(2n, n) <= alpha` (complete separation, no ties).
/// E.g. 3 for alpha = 0.05, 8 for 0.05 / 300.
pub fn min_rounds_rank(alpha: f64) -> usize {
    (1..10_000)
        .find(|&n| min_p_value(n, n) <= alpha)
        .unwrap_or(10_000)
}

/// Whether a cell can detect a slowdown, and what it would need.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Power {
    /// Rounds per side needed (both tests: the t-based size at [`POWER`],
    /// and at least [`min_rounds_rank`]). `None` when unknown: no variance
    /// estimate (fewer than 3 values in all) or `delta <= 0`.
    pub rounds_needed: Option<usize>,
    /// Fewer rounds than needed on either side (or unknown need).
    pub underpowered: bool,
}

/// Assesses a cell tested for "slower by more than `delta`" at level `alpha`.
///
/// The effect sized for is `ln(1 + delta)` beyond the null boundary on the
/// log scale, at the pooled standard deviation of the observed log values:
/// with the margin test, a true slowdown of `(1 + delta)²` is found with power
/// 0.8. The Mann-Whitney side is exact: with too few rounds, no data at all can
/// reach `alpha` (e.g. 2 vs 2 rounds: p >= 1/6).
///
/// Pass the level the cell must actually reach: under Holm across `m` cells,
/// the smallest p-value is compared with `alpha / m`.
///
/// `underpowered` qualifies a pass (no significant slowdown is not evidence
/// of none); a cell whose p-value is significant anyway found its slowdown.
pub fn assess_power(
    base: &[f64],
    head: &[f64],
    delta: f64,
    alpha: f64,
) -> Result<Power, StatsError> {
    let (base, head) = (logs("base", base)?, logs("head", head)?);
    let effect = log_margin(delta)?;
    in_open("alpha", alpha, 0.0, 1.0, "0 < alpha < 1")?;
    let rounds_needed = pooled_sd(&base, &head)
        .and_then(|sd| rounds_needed(sd, effect, alpha, POWER))
        .map(|n| n.max(min_rounds_rank(alpha)));
    let have = base.len().min(head.len());
    Ok(Power {
        rounds_needed,
        underpowered: rounds_needed.is_none_or(|need| need > have),
    })
}

/// `√(((n-1) s_x² + (m-1) s_y²) / (n + m - 2))`; `None` with fewer than 3 values.
fn pooled_sd(x: &[f64], y: &[f64]) -> Option<f64> {
    let df = (x.len() + y.len()).checked_sub(2).filter(|&df| df > 0)?;
    let ss = |s: &[f64]| {
        if s.len() < 2 {
            0.0
        } else {
            mean_var(s).1 * (s.len() - 1) as f64
        }
    };
    Some(((ss(x) + ss(y)) / df as f64).sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_exact_noncentral_t_sample_sizes() {
        // Power of the one-sided two-sample t-test at alpha = 0.05, computed
        // exactly from the noncentral t (numerical integration with mpmath):
        // effect size d = 0.5: n = 50 gives 0.7989, n = 51 gives 0.8059;
        // d = 1: n = 13 gives 0.7972, n = 14 gives 0.8241.
        // (Cohen's classic one-tailed table and G*Power give the same 51 for d = 0.5.)
        assert_eq!(rounds_needed(1.0, 0.5, 0.05, 0.8), Some(51));
        assert_eq!(rounds_needed(1.0, 1.0, 0.05, 0.8), Some(14));
        // Scale-free: only sd / effect matters.
        assert_eq!(rounds_needed(0.02, 0.02, 0.05, 0.8), Some(14));
    }

    #[test]
    fn degenerate_inputs() {
        assert_eq!(rounds_needed(0.0, 0.05, 0.05, 0.8), Some(2));
        assert_eq!(rounds_needed(0.1, 0.0, 0.05, 0.8), None);
        assert_eq!(rounds_needed(f64::NAN, 0.1, 0.05, 0.8), None);
        assert!(rounds_needed(1.0, 1e-6, 0.05, 0.8).unwrap() > 1_000_000_000);
    }

    #[test]
    fn rank_test_minimum_rounds() {
        // 1/C(6,3) = 0.05; 1/C(8,4) = 0.0143 > 0.01 >= 1/C(10,5);
        // 1/C(14,7) = 2.9e-4 > 0.05/300 = 1.7e-4 >= 1/C(16,8) = 7.8e-5.
        assert_eq!(min_rounds_rank(0.05), 3);
        assert_eq!(min_rounds_rank(0.01), 5);
        assert_eq!(min_rounds_rank(0.05 / 300.0), 8);
    }

    #[test]
    fn assess() {
        // Two rounds a side: Mann-Whitney cannot go below 1/6.
        let p = assess_power(&[100.0, 101.0], &[100.5, 99.0], 0.05, 0.05).unwrap();
        assert!(p.underpowered && p.rounds_needed == Some(3), "{p:?}");
        // Ten quiet rounds a side against a 5% margin: plenty.
        let base: Vec<f64> = (0..10).map(|i| 100.0 + 0.1 * i as f64).collect();
        let p = assess_power(&base, &base, 0.05, 0.05).unwrap();
        assert!(!p.underpowered && p.rounds_needed == Some(3), "{p:?}");
        // Ten rounds with ±30% spread: far from enough for 5%.
        let noisy: Vec<f64> = (0..10)
            .map(|i| if i % 2 == 0 { 70.0 } else { 130.0 })
            .collect();
        let p = assess_power(&noisy, &noisy, 0.05, 0.05).unwrap();
        assert!(p.underpowered && p.rounds_needed.unwrap() > 200, "{p:?}");
        // A single value per side: no variance estimate, need unknown.
        let p = assess_power(&[1.0], &[1.0], 0.05, 0.05).unwrap();
        assert_eq!((p.rounds_needed, p.underpowered), (None, true));
    }
}
