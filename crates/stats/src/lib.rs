//! Statistics of the regression gate.
//!
//! The gate compares, per cell (one benchmark case's metric), the head rounds
//! with the baseline rounds, one value per round, lower is better (callers
//! pass `1 / x` for higher-is-better metrics). [`compare`] answers, for one
//! cell, "is head slower than base by more than `delta`?" with two one-sided
//! tests on log values, an effect ratio with its interval, and whether the
//! cell has enough rounds to tell. Against a base revision run beside it,
//! the gate decides each cell group-sequentially ([`SequentialPlan`]:
//! looks, O'Brien-Fleming and Pocock boundaries, three outcomes);
//! [`holm_adjust`] and [`bh_adjust`] remain for callers with a fixed set of
//! p-values; [`clopper_pearson()`] bounds the gate's measured false-alarm
//! rate.
//!
//! All inputs are checked: an empty sample, a value that is not positive and
//! finite, or a parameter out of range is a [`StatsError`], never a NaN.

mod clopper_pearson;
mod hodges_lehmann;
mod input;
mod mann_whitney;
mod multiplicity;
mod power;
mod sequential;
mod signed_rank;
mod welch;

#[cfg(test)]
mod behaviour_tests;

pub use clopper_pearson::{clopper_pearson, clopper_pearson_upper, Interval};
pub use hodges_lehmann::{hodges_lehmann_ratio, hodges_lehmann_shift, HodgesLehmann};
pub use input::StatsError;
pub use mann_whitney::{
    mann_whitney_greater, mann_whitney_slowdown, min_p_value, MannWhitney, EXACT_MAX,
};
pub use multiplicity::{bh_adjust, bh_reject, holm_adjust, holm_reject};
pub use power::{assess_power, min_rounds_rank, rounds_needed, Power, POWER};
pub use sequential::{
    boundaries, boundaries_at, robust_spread, Decision, Plan as SequentialPlan, Sequential,
    Spending,
};
pub use signed_rank::{
    assess_paired_power, min_p_value as min_p_value_paired, min_pairs, paired_ratio, pairs_needed,
    signed_rank_slowdown, SignedRank,
};
pub use welch::{welch_greater, welch_slowdown, Welch};

/// One cell's comparison of head with base.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Comparison {
    /// Hodges-Lehmann estimate of `head / base` (1.10 = 10% slower).
    pub ratio: f64,
    /// Lower bound of the ratio's interval (0 when the samples are too small).
    pub ratio_lo: f64,
    /// Upper bound of the ratio's interval (`inf` when the samples are too small).
    pub ratio_hi: f64,
    /// Two-sided level of `[ratio_lo, ratio_hi]`: `1 - 2 alpha`, so that
    /// `ratio_lo > 1 + delta` exactly when the rank test rejects at
    /// `alpha` (exact case).
    pub confidence: f64,
    /// One-sided t-test p-value on logs (Welch's, or the paired t); 1 (no
    /// evidence) with fewer than two rounds on a side.
    pub p_t: f64,
    /// One-sided rank test p-value on logs (Mann-Whitney, or the paired
    /// signed-rank test): the one the gate uses. It holds its level when
    /// rounds jump between levels (vCPU migrations) or have outliers.
    pub p_rank: f64,
    /// Too few rounds to detect a slowdown of `delta` (see [`assess_power`]):
    /// a pass from this cell is not evidence of no regression.
    pub underpowered: bool,
    /// Rounds per side the cell would need; `None` when unknown.
    pub rounds_needed: Option<usize>,
}

/// Compares one cell whose rounds are pairs (`base[i]` and `head[i]` ran
/// back to back, as `--against` runs them): is `head` slower than `base`
/// by more than `delta` at one-sided level `alpha`? The signed-rank test
/// on the per-pair log ratios; the ratio is their Hodges-Lehmann estimate.
/// `p_t` holds the paired t-test's p-value (a one-sample t on the log
/// ratios) for reference.
pub fn compare_paired(
    base: &[f64],
    head: &[f64],
    delta: f64,
    alpha: f64,
) -> Result<Comparison, StatsError> {
    input::in_open("alpha", alpha, 0.0, 0.5, "0 < alpha < 0.5")?;
    let confidence = 1.0 - 2.0 * alpha;
    let hl = paired_ratio(base, head, confidence)?;
    let sr = signed_rank_slowdown(base, head, delta)?;
    let p_t = if base.len() >= 2 {
        let d = signed_rank::log_ratios(base, head)?;
        welch::one_sample_greater(&d, input::log_margin(delta)?).map_or(1.0, |w| w.p)
    } else {
        1.0
    };
    let power = assess_paired_power(base, head, delta, alpha)?;
    Ok(Comparison::of(hl, p_t, sr.p, power))
}

/// Compares one cell: is `head` slower than `base` by more than `delta`
/// (0.05 = 5%) at one-sided level `alpha`?
///
/// Samples are one value per round, positive, lower is better. The p-values
/// are per cell: correct them across cells before deciding. `alpha` sizes
/// the interval and the power check; pass the level a cell must actually
/// reach (e.g. `alpha / m` for Holm across `m` cells) to flag cells that could
/// never fail the gate.
pub fn compare(
    base: &[f64],
    head: &[f64],
    delta: f64,
    alpha: f64,
) -> Result<Comparison, StatsError> {
    input::in_open("alpha", alpha, 0.0, 0.5, "0 < alpha < 0.5")?;
    let confidence = 1.0 - 2.0 * alpha;
    let hl = hodges_lehmann_ratio(base, head, confidence)?;
    let mw = mann_whitney_slowdown(base, head, delta)?;
    let p_t = if base.len() >= 2 && head.len() >= 2 {
        welch_slowdown(base, head, delta)?.p
    } else {
        1.0
    };
    let power = assess_power(base, head, delta, alpha)?;
    Ok(Comparison::of(hl, p_t, mw.p, power))
}

impl Comparison {
    fn of(hl: HodgesLehmann, p_t: f64, p_rank: f64, power: Power) -> Comparison {
        Comparison {
            ratio: hl.estimate,
            ratio_lo: hl.lo,
            ratio_hi: hl.hi,
            confidence: hl.confidence,
            p_t,
            p_rank,
            underpowered: power.underpowered,
            rounds_needed: power.rounds_needed,
        }
    }
}
