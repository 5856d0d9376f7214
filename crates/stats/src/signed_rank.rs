//! Paired comparison: one-sided Wilcoxon signed-rank test on the per-pair
//! log ratios, and their Hodges-Lehmann estimate.
//!
//! With `--against`, base and head rounds run interleaved, so round `i` of
//! each was measured moments apart on the same machine. Whatever moved both
//! (a host that migrated the vCPUs, a frequency change, a noisy neighbour)
//! cancels in `ln head_i - ln base_i`; testing those differences is far more
//! powerful than comparing the two sides as unrelated samples. The test is
//! rank-based, so a pair hit by an outlier weighs one rank, not its size.
//!
//! H0: the log ratios are centred at `ln(1 + delta)` or below ("not slower
//! by more than delta"); H1: centred above. The exact null distribution of
//! `W+` (each pair's sign a fair coin) is used up to [`EXACT_MAX`] pairs,
//! with mid-ranks for ties; beyond, the normal approximation with tie and
//! continuity corrections, as R's `wilcox.test(paired = TRUE)` does.

use statrs::distribution::{ContinuousCDF, Normal, StudentsT};

use crate::input::{in_open, log_margin, logs, StatsError};
use crate::power::{Power, POWER};

/// Most pairs for which the exact distribution is used: the counts of sign
/// patterns, up to `2^EXACT_MAX`, stay exact in an `f64`.
pub const EXACT_MAX: usize = 50;

/// Result of a one-sided signed-rank test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SignedRank {
    /// Sum of the ranks of the positive differences.
    pub w_plus: f64,
    /// One-sided p-value, `P(W+ >= w_plus)` under H0.
    pub p: f64,
    /// Pairs left after dropping zero differences.
    pub pairs: usize,
    pub exact: bool,
}

/// The per-pair log ratios `ln head_i - ln base_i`.
pub(crate) fn log_ratios(base: &[f64], head: &[f64]) -> Result<Vec<f64>, StatsError> {
    if base.len() != head.len() {
        return Err(StatsError::BadParameter {
            name: "pairs",
            value: head.len() as f64,
            expected: "as many head values as base values (one pair per round)",
        });
    }
    let (base, head) = (logs("base", base)?, logs("head", head)?);
    Ok(head.iter().zip(&base).map(|(h, b)| h - b).collect())
}

/// Tests whether `head` is slower than `base` by more than `delta`, pair
/// by pair (`base[i]` and `head[i]` measured together). Values positive,
/// lower is better.
pub fn signed_rank_slowdown(
    base: &[f64],
    head: &[f64],
    delta: f64,
) -> Result<SignedRank, StatsError> {
    let margin = log_margin(delta)?;
    Ok(signed_rank_on(
        log_ratios(base, head)?.into_iter().map(|r| r - margin),
    ))
}

/// The one-sided test that differences `d` are centred above 0 (zero
/// differences dropped).
pub(crate) fn signed_rank_on(d: impl Iterator<Item = f64>) -> SignedRank {
    let d: Vec<f64> = d.filter(|r| r.abs() > 1e-12).collect();
    test(&d)
}

/// The smallest p-value `n` pairs can give: every pair slower.
pub fn min_p_value(n: usize) -> f64 {
    0.5f64.powi(n.min(2000) as i32)
}

/// The fewest pairs with which the test can reach `p <= alpha` at all.
pub fn min_pairs(alpha: f64) -> usize {
    (1..2000).find(|&n| min_p_value(n) <= alpha).unwrap_or(2000)
}

/// Mid-ranks of `|d|`, doubled so they are whole numbers.
fn doubled_ranks(d: &[f64]) -> Vec<u64> {
    let mut order: Vec<usize> = (0..d.len()).collect();
    order.sort_by(|&a, &b| d[a].abs().total_cmp(&d[b].abs()));
    let mut ranks = vec![0u64; d.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && d[order[j + 1]].abs() == d[order[i]].abs() {
            j += 1;
        }
        // Positions i..=j share the mean of ranks i+1..=j+1; doubled: i + j + 2.
        for &k in &order[i..=j] {
            ranks[k] = (i + j + 2) as u64;
        }
        i = j + 1;
    }
    ranks
}

/// Number of sign patterns giving each doubled `W+` (index = doubled sum).
fn counts(ranks: &[u64]) -> Vec<f64> {
    let total: u64 = ranks.iter().sum();
    let mut c = vec![0.0f64; total as usize + 1];
    c[0] = 1.0;
    let mut reach = 0usize;
    for &r in ranks {
        let r = r as usize;
        for s in (0..=reach).rev() {
            if c[s] > 0.0 {
                c[s + r] += c[s];
            }
        }
        reach += r;
    }
    c
}

fn test(d: &[f64]) -> SignedRank {
    let n = d.len();
    if n == 0 {
        return SignedRank {
            w_plus: 0.0,
            p: 1.0,
            pairs: 0,
            exact: true,
        };
    }
    let ranks = doubled_ranks(d);
    let w2: u64 = ranks
        .iter()
        .zip(d)
        .filter(|(_, &x)| x > 0.0)
        .map(|(r, _)| r)
        .sum();
    if n <= EXACT_MAX {
        let c = counts(&ranks);
        let total: f64 = c.iter().sum();
        let at_least: f64 = c[w2 as usize..].iter().sum();
        return SignedRank {
            w_plus: w2 as f64 / 2.0,
            p: (at_least / total).min(1.0),
            pairs: n,
            exact: true,
        };
    }
    let nf = n as f64;
    let mean = nf * (nf + 1.0) / 4.0;
    // Tie correction: sum over tie groups of (t^3 - t) / 48.
    let mut sorted = ranks.clone();
    sorted.sort_unstable();
    let ties: f64 = sorted
        .chunk_by(|a, b| a == b)
        .map(|g| {
            let t = g.len() as f64;
            (t * t * t - t) / 48.0
        })
        .sum();
    let var = nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0 - ties;
    let w = w2 as f64 / 2.0;
    let z = (w - mean - 0.5) / var.sqrt();
    SignedRank {
        w_plus: w,
        p: 1.0 - Normal::standard().cdf(z),
        pairs: n,
        exact: false,
    }
}

/// Hodges-Lehmann estimate of the paired ratio `head / base` (the median
/// of the Walsh averages of the log ratios) and its two-sided `confidence`
/// interval from the signed-rank distribution (bounds 0 and infinity when
/// too few pairs reach the level).
pub fn paired_ratio(
    base: &[f64],
    head: &[f64],
    confidence: f64,
) -> Result<crate::HodgesLehmann, StatsError> {
    in_open("confidence", confidence, 0.0, 1.0, "0 < confidence < 1")?;
    let d = log_ratios(base, head)?;
    let n = d.len();
    let mut walsh: Vec<f64> = Vec::with_capacity(n * (n + 1) / 2);
    for i in 0..n {
        for j in i..n {
            walsh.push((d[i] + d[j]) / 2.0);
        }
    }
    let m = walsh.len();
    // Four order statistics of n(n+1)/2 averages, each selected in linear
    // time: sorting them all was a quarter of an every-cell validation.
    let mut at = |i: usize| *walsh.select_nth_unstable_by(i, f64::total_cmp).1;
    let estimate = if m % 2 == 1 {
        at(m / 2)
    } else {
        (at(m / 2 - 1) + at(m / 2)) / 2.0
    };
    let k = order_index(n, confidence);
    let (lo, hi) = if k == 0 || k > m / 2 {
        (f64::NEG_INFINITY, f64::INFINITY)
    } else {
        (at(k - 1), at(m - k))
    };
    Ok(crate::HodgesLehmann {
        estimate: estimate.exp(),
        lo: lo.exp(),
        hi: hi.exp(),
        confidence,
    })
}

/// `k`, the 1-based rank among the sorted Walsh averages of the interval's
/// lower bound: the largest `k` with `P(W+ <= k - 1) <= (1 - confidence) / 2`.
fn order_index(n: usize, confidence: f64) -> usize {
    let tail = (1.0 - confidence) / 2.0;
    if n <= EXACT_MAX {
        let ranks: Vec<u64> = (1..=n as u64).map(|r| 2 * r).collect();
        let c = counts(&ranks);
        let total: f64 = c.iter().sum();
        let limit = tail * total * (1.0 + 1e-12);
        // Doubled sums without ties are even: W+ = w sits at index 2w.
        let mut cum = 0.0;
        (0..=n * (n + 1) / 2)
            .take_while(|&w| {
                cum += c[2 * w];
                cum <= limit
            })
            .count()
    } else {
        let nf = n as f64;
        let sigma = (nf * (nf + 1.0) * (2.0 * nf + 1.0) / 24.0).sqrt();
        let z = Normal::standard().inverse_cdf(1.0 - tail);
        (nf * (nf + 1.0) / 4.0 + 0.5 - z * sigma).floor().max(0.0) as usize
    }
}

/// Pairs needed for a one-sided paired test at level `alpha` to have
/// power `power` when the mean log ratio exceeds the null boundary by
/// `effect`, with per-pair standard deviation `sd`: the one-sample t size
/// (`effect / (sd / √n) >= t_{1-α, n-1} + t_{power, n-1}`), and never fewer
/// than [`min_pairs`]. `None` when it cannot be sized (`effect <= 0`, a
/// bad `sd`, or levels outside (0, 1)).
pub fn pairs_needed(sd: f64, effect: f64, alpha: f64, power: f64) -> Option<usize> {
    let level = |p: f64| (1e-9..=1.0 - 1e-9).contains(&p);
    if effect.is_nan() || effect <= 0.0 || !sd.is_finite() || sd < 0.0 {
        return None;
    }
    if !level(alpha) || !level(power) {
        return None;
    }
    let floor = min_pairs(alpha).max(2);
    if sd == 0.0 {
        return Some(floor);
    }
    let z = Normal::standard();
    let n0 = ((z.inverse_cdf(1.0 - alpha) + z.inverse_cdf(power)) * sd / effect).powi(2);
    if !n0.is_finite() || n0 > 10_000.0 {
        return Some(n0.ceil().min(usize::MAX as f64) as usize);
    }
    let start = (n0.ceil() as usize).max(floor);
    (start..=20_000)
        .find(|&n| {
            let t = StudentsT::new(0.0, 1.0, (n - 1) as f64).expect("n >= 2");
            effect / (sd / (n as f64).sqrt()) >= t.inverse_cdf(1.0 - alpha) + t.inverse_cdf(power)
        })
        .or(Some(20_000))
}

/// Whether a paired cell can detect a slowdown beyond `delta` at level
/// `alpha` (the level it must reach, e.g. Holm's `alpha / m`): sized for a
/// true slowdown of `(1 + delta)²`, at the observed spread of the log ratios.
pub fn assess_paired_power(
    base: &[f64],
    head: &[f64],
    delta: f64,
    alpha: f64,
) -> Result<Power, StatsError> {
    let d = log_ratios(base, head)?;
    let effect = log_margin(delta)?;
    in_open("alpha", alpha, 0.0, 1.0, "0 < alpha < 1")?;
    // The spread the rank test sees: 1.4826 MAD, the standard deviation
    // of normal data, but not inflated by the odd pair an interrupt or a
    // vCPU move hit (the ranks hardly notice those).
    let sd = (d.len() >= 3).then(|| 1.4826 * mad(&d));
    let rounds_needed = sd.and_then(|sd| pairs_needed(sd, effect, alpha, POWER));
    Ok(Power {
        rounds_needed,
        underpowered: rounds_needed.is_none_or(|need| need > d.len()),
    })
}

/// Median absolute deviation from the median.
fn mad(x: &[f64]) -> f64 {
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        let n = v.len();
        if n % 2 == 1 {
            v[n / 2]
        } else {
            (v[n / 2 - 1] + v[n / 2]) / 2.0
        }
    };
    let m = median(&mut x.to_vec());
    median(&mut x.iter().map(|v| (v - m).abs()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_p_values_match_the_signed_rank_table() {
        // Differences 1..=5 all positive: W+ = 15, P = 1/32.
        let r = test(&[1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!((r.w_plus, r.p, r.exact), (15.0, 1.0 / 32.0, true));
        // One negative (rank 1): W+ = 14, P(W+ >= 14) = 2/32.
        let r = test(&[-1.0, 2.0, 3.0, 4.0, 5.0]);
        assert_eq!((r.w_plus, r.p), (14.0, 2.0 / 32.0));
        // Ranks of |d| = 0.5, 1.5, 2, 2.5, 3, 4 are 1..6; the positive ones
        // (1.5, 2.5, 3, 4) sum to W+ = 17. By symmetry P(W+ >= 17) =
        // P(W+ <= 4) = #{sets of 1..6 summing to <= 4} / 64 = 7/64
        // ({}, {1}, {2}, {3}, {1,2}, {4}, {1,3}).
        let r = test(&[1.5, -0.5, 2.5, 3.0, -2.0, 4.0]);
        assert_eq!(r.w_plus, 17.0);
        assert!((r.p - 7.0 / 64.0).abs() < 1e-12, "{r:?}");
        assert_eq!(min_p_value(10), 1.0 / 1024.0);
        assert_eq!(min_pairs(0.05 / 25.0), 9);
    }

    #[test]
    fn ties_use_mid_ranks() {
        // |d| = 1, 1, 2: ranks 1.5, 1.5, 3; all positive: W+ = 6, P = 1/8.
        let r = test(&[1.0, -1.0, 2.0]);
        assert_eq!(r.w_plus, 4.5);
        let r = test(&[1.0, 1.0, 2.0]);
        assert_eq!((r.w_plus, r.p), (6.0, 1.0 / 8.0));
    }

    #[test]
    fn slowdown_beyond_delta_is_found_and_drift_cancels() {
        // Both sides drift by 30% over the rounds; head is 12% slower in
        // every pair. Unpaired, the drift swamps it; paired, it is exact.
        let base: Vec<f64> = (0..12).map(|i| 100.0 * (1.0 + 0.03 * i as f64)).collect();
        let head: Vec<f64> = base.iter().map(|b| b * 1.12).collect();
        let r = signed_rank_slowdown(&base, &head, 0.05).unwrap();
        assert_eq!(r.p, 1.0 / 4096.0);
        let same = signed_rank_slowdown(&base, &base, 0.05).unwrap();
        assert_eq!(same.p, 1.0);
        let hl = paired_ratio(&base, &head, 0.9).unwrap();
        assert!(
            (hl.estimate - 1.12).abs() < 1e-9 && hl.lo <= 1.12 && hl.hi >= 1.12,
            "{hl:?}"
        );
        assert!(signed_rank_slowdown(&base, &head[1..], 0.05).is_err());
    }

    #[test]
    fn paired_ratio_is_the_sorted_walsh_averages_order_statistics() {
        // The estimate and bounds, selected, are those of the fully sorted
        // Walsh averages, for odd and even counts of them and with ties.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            1.0 + (x % 1000) as f64 / 100.0
        };
        for n in [3usize, 4, 7, 10, 11, 40, 80] {
            let base: Vec<f64> = (0..n).map(|_| next()).collect();
            let head: Vec<f64> = (0..n).map(|_| next()).collect();
            let d = log_ratios(&base, &head).unwrap();
            let mut walsh: Vec<f64> = (0..n)
                .flat_map(|i| (i..n).map(move |j| (i, j)))
                .map(|(i, j)| (d[i] + d[j]) / 2.0)
                .collect();
            walsh.sort_by(f64::total_cmp);
            let m = walsh.len();
            let median = match m % 2 {
                1 => walsh[m / 2],
                _ => (walsh[m / 2 - 1] + walsh[m / 2]) / 2.0,
            };
            let k = order_index(n, 0.9);
            let hl = paired_ratio(&base, &head, 0.9).unwrap();
            assert_eq!(hl.estimate, median.exp(), "n = {n}");
            if k > 0 && k <= m / 2 {
                assert_eq!((hl.lo, hl.hi), (walsh[k - 1].exp(), walsh[m - k].exp()));
            } else {
                assert_eq!((hl.lo, hl.hi), (0.0, f64::INFINITY), "n = {n}");
            }
        }
    }

    #[test]
    fn normal_approximation_beyond_exact() {
        let d: Vec<f64> = (1..=60)
            .map(|i| if i % 4 == 0 { -(i as f64) } else { i as f64 })
            .collect();
        let r = test(&d);
        assert!(!r.exact && r.p > 0.0 && r.p < 0.01, "{r:?}");
    }

    #[test]
    fn pairs_needed_for_quiet_and_noisy_cells() {
        let e = 1.10f64.ln() - 1.05f64.ln();
        // 2% spread per pair: a handful of pairs, but never below the
        // rank test's floor for the level.
        assert_eq!(pairs_needed(0.02, e, 0.002, 0.8), Some(9));
        // 8% spread: many more.
        let noisy = pairs_needed(0.08, e, 0.002, 0.8).unwrap();
        assert!(noisy > 40, "{noisy}");
        assert_eq!(pairs_needed(0.02, 0.0, 0.002, 0.8), None);
    }
}
