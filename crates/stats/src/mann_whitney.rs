//! One-sided Mann-Whitney U test: is head slower than base by more than `delta`?
//!
//! Rank-based, so it holds its level when round timings are not normal: the
//! bimodal "the host moved the vCPUs" samples of contended cells, or outliers.
//! The margin is applied by shifting: `ln head - ln(1 + delta)` is tested for
//! being stochastically greater than `ln base`.
//!
//! statrs 0.18 has no Mann-Whitney test (its `stats_tests` holds only Fisher's
//! exact test), so it is written here: the exact null distribution of U (the
//! Mann-Whitney recursion, via its generating function) for samples of up to
//! [`EXACT_MAX`] without ties, the normal approximation with tie and
//! continuity corrections otherwise, as R's `wilcox.test` does. (statrs 0.19
//! adds `mannwhitneyu`, but its exact method enumerates all `C(n + m, n)`
//! orderings and its automatic mode uses the normal approximation above 8
//! values per side.)

use statrs::distribution::{ContinuousCDF, Normal};

use crate::input::{finite, log_margin, logs, StatsError};

/// Largest sample size (per side) for which the exact distribution is used.
/// The counts of arrangements then stay below `C(60, 30) ≈ 1.2e17 < 2^64`.
pub const EXACT_MAX: usize = 30;

/// Result of a one-sided Mann-Whitney U test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MannWhitney {
    /// `U = #(x_i > y_j) + #(x_i == y_j) / 2`; large when x is larger.
    pub u: f64,
    /// One-sided p-value, `P(U >= u)` under H0.
    pub p: f64,
    /// Whether `p` is exact (no ties, both samples at most [`EXACT_MAX`]).
    pub exact: bool,
}

/// Tests H0 "x and y have the same distribution" against H1 "x is
/// stochastically greater than y", like R's
/// `wilcox.test(x, y, alternative = "greater")`.
pub fn mann_whitney_greater(x: &[f64], y: &[f64]) -> Result<MannWhitney, StatsError> {
    finite("x", x, 1)?;
    finite("y", y, 1)?;
    Ok(test(x, y))
}

/// Tests whether `head` is slower than `base` by more than `delta`:
/// `ln head - ln(1 + delta)` against `ln base`. Values must be positive.
pub fn mann_whitney_slowdown(
    base: &[f64],
    head: &[f64],
    delta: f64,
) -> Result<MannWhitney, StatsError> {
    let margin = log_margin(delta)?;
    let base = logs("base", base)?;
    let head: Vec<f64> = logs("head", head)?.iter().map(|h| h - margin).collect();
    Ok(test(&head, &base))
}

/// The smallest p-value the test can give with `n` and `m` values (no ties):
/// complete separation. Above `alpha`, no data can make the cell significant.
pub fn min_p_value(n: usize, m: usize) -> f64 {
    if n <= EXACT_MAX && m <= EXACT_MAX {
        // One arrangement of C(n + m, n) has U = n m.
        1.0 / (1..=n).fold(1.0, |c, i| c * (m + i) as f64 / i as f64)
    } else {
        normal_sf((n * m) as f64, n, m, 0.0, 0.5)
    }
}

fn test(x: &[f64], y: &[f64]) -> MannWhitney {
    let (n, m) = (x.len(), y.len());
    let u = u_statistic(x, y);
    let ties = tie_term(x, y);
    if ties == 0.0 && n <= EXACT_MAX && m <= EXACT_MAX {
        // Without ties U is a whole number.
        let counts = u_counts(n, m);
        let at_least: u64 = counts[u as usize..].iter().sum();
        let total: u64 = counts.iter().sum();
        let p = at_least as f64 / total as f64;
        MannWhitney { u, p, exact: true }
    } else {
        let p = normal_sf(u, n, m, ties, 0.5);
        MannWhitney { u, p, exact: false }
    }
}

/// `#(x_i > y_j) + #(x_i == y_j) / 2`, the count form of U (equal to the
/// rank-sum form `R_x - n(n+1)/2` with mid-ranks for ties).
pub(crate) fn u_statistic(x: &[f64], y: &[f64]) -> f64 {
    let mut u = 0.0;
    for a in x {
        for b in y {
            if a > b {
                u += 1.0;
            } else if a == b {
                u += 0.5;
            }
        }
    }
    u
}

/// `Σ (t³ - t)` over the groups of `t` tied values in the pooled sample.
fn tie_term(x: &[f64], y: &[f64]) -> f64 {
    let mut all: Vec<f64> = x.iter().chain(y).copied().collect();
    all.sort_by(f64::total_cmp);
    all.chunk_by(|a, b| a == b)
        .map(|g| {
            let t = g.len() as f64;
            t * t * t - t
        })
        .sum()
}

/// `counts[u]`: how many of the `C(n + m, n)` equally likely orderings of `n`
/// x's and `m` y's (no ties) have `U = u`, for `u` in `0..=n m`.
///
/// Mann and Whitney's (1947) recursion on the largest value (an x beating all
/// `m` y's, or a y adding nothing), `f(n, m, u) = f(n - 1, m, u - m) + f(n, m - 1, u)`,
/// has the Gaussian binomial coefficient `[n + m choose n]_q = Π_{i=1..n}
/// (1 - q^(m+i)) / (1 - q^i)` as generating function. Building it factor by
/// factor gives the same counts in O(n · n m) with one vector; after each
/// factor the polynomial is `[m + i choose i]_q`, whose coefficients are
/// counts, so they stay within `C(n + m, n)`.
pub(crate) fn u_counts(n: usize, m: usize) -> Vec<u64> {
    let mut c: Vec<i64> = vec![0; n * m + n + 1];
    c[0] = 1;
    for i in 1..=n {
        // Times (1 - q^(m+i)), from the top so each term uses an old coefficient.
        for k in (m + i..=i * m + i).rev() {
            c[k] -= c[k - m - i];
        }
        // Divided by (1 - q^i): c'[k] = c[k] + c'[k - i].
        for k in i..=i * m + i {
            c[k] += c[k - i];
        }
    }
    c.truncate(n * m + 1);
    c.into_iter().map(|x| x as u64).collect()
}

/// `P(U >= u)` by the normal approximation: mean `n m / 2`, variance
/// `n m / 12 · ((N + 1) - Σ(t³ - t) / (N (N - 1)))` (tie-corrected), with
/// `continuity` subtracted from `U - n m / 2` (0.5 for the usual correction).
pub(crate) fn normal_sf(u: f64, n: usize, m: usize, ties: f64, continuity: f64) -> f64 {
    let nm = (n * m) as f64;
    let big_n = (n + m) as f64;
    let var = nm / 12.0 * ((big_n + 1.0) - ties / (big_n * (big_n - 1.0)));
    if var <= 0.0 {
        // Every value tied: U = n m / 2 exactly, no evidence either way.
        return 1.0;
    }
    Normal::standard().sf((u - nm / 2.0 - continuity) / var.sqrt())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn binomial(n: usize, k: usize) -> u64 {
        (1..=k as u64).fold(1, |c, i| c * (n as u64 - k as u64 + i) / i)
    }

    #[test]
    fn counts_are_the_u_distribution() {
        // n = m = 2: orderings xxyy..yyxx give U = 0, 1, 2, 2, 3, 4.
        assert_eq!(u_counts(2, 2), vec![1, 1, 2, 1, 1]);
        for (n, m) in [(1, 1), (3, 5), (7, 4), (30, 30)] {
            let c = u_counts(n, m);
            assert_eq!(c.len(), n * m + 1);
            assert_eq!(c.iter().sum::<u64>(), binomial(n + m, n));
            assert!(c.iter().eq(c.iter().rev()), "symmetric about n m / 2");
        }
    }

    #[test]
    fn counts_match_enumeration() {
        // Every way to pick which of the N ranks are x's, U counted directly.
        for (n, m) in [(1, 4), (4, 3), (5, 5), (3, 8)] {
            let mut hist = vec![0u64; n * m + 1];
            for mask in 0u32..1 << (n + m) {
                if mask.count_ones() as usize != n {
                    continue;
                }
                let ranks = |want: u32| (0..n + m).filter(move |r| (mask >> r) & 1 == want);
                let u = ranks(1)
                    .map(|x| ranks(0).filter(|y| *y < x).count())
                    .sum::<usize>();
                hist[u] += 1;
            }
            assert_eq!(u_counts(n, m), hist, "n = {n}, m = {m}");
        }
    }

    #[test]
    fn exact_p_for_complete_separation() {
        // All x above all y: P(U = n m) = 1 / C(n + m, n).
        let p = mann_whitney_greater(&[4.0, 5.0, 6.0], &[1.0, 2.0, 3.0]).unwrap();
        assert_eq!((p.u, p.exact), (9.0, true));
        assert!((p.p - 1.0 / 20.0).abs() < 1e-15);
        let p =
            mann_whitney_greater(&[6.0, 7.0, 8.0, 9.0, 10.0], &[1.0, 2.0, 3.0, 4.0, 5.0]).unwrap();
        assert!((p.p - 1.0 / 252.0).abs() < 1e-15);
        assert!((min_p_value(5, 5) - 1.0 / 252.0).abs() < 1e-15);
        assert!((min_p_value(3, 3) - 0.05).abs() < 1e-15);
    }

    // Hollander & Wolfe (1973), p. 69f (R's `?wilcox.test` example): permeability
    // constants of the human chorioamnion at term (x) and at 12-26 weeks (y).
    // R documents `wilcox.test(x, y, alternative = "g")`: W = 35, p-value = 0.1272
    // (exactly 382/3003, by enumerating the 3003 orderings), and the H&W large
    // sample approximation `exact = FALSE, correct = FALSE`: p-value = 0.1103.
    pub(crate) const HW_X: [f64; 10] = [0.80, 0.83, 1.89, 1.04, 1.45, 1.38, 1.91, 1.64, 0.73, 1.46];
    pub(crate) const HW_Y: [f64; 5] = [1.15, 0.88, 0.90, 0.74, 1.21];

    #[test]
    fn matches_hollander_wolfe_example() {
        let r = mann_whitney_greater(&HW_X, &HW_Y).unwrap();
        assert_eq!((r.u, r.exact), (35.0, true));
        assert!((r.p - 382.0 / 3003.0).abs() < 1e-15);
        assert!((r.p - 0.1272).abs() < 5e-5);
        assert!((normal_sf(35.0, 10, 5, 0.0, 0.0) - 0.1103).abs() < 5e-5);
    }

    // R's `wilcox.test(x, y)` on data with ties, as printed on
    // https://endmemo.com/r/wilcoxon.php: "Wilcoxon rank sum test with continuity
    // correction ... W = 51.5, p-value = 0.5966" (two-sided). The one-sided test
    // of y greater than x has U = 120 - 51.5 and half that p-value.
    #[test]
    fn tie_corrected_normal_matches_r() {
        let x = [1.0, 5.0, 9.0, 24.0, 56.0, 21.0, 3.0, 7.0, 21.0, 4.0];
        let y = [
            12.0, 15.0, 5.0, 9.0, 9.0, 14.0, 56.0, 22.0, 3.0, 7.0, 32.0, 5.0,
        ];
        assert_eq!(u_statistic(&x, &y), 51.5);
        let r = mann_whitney_greater(&y, &x).unwrap();
        assert_eq!((r.u, r.exact), (68.5, false));
        assert!((2.0 * r.p - 0.5966).abs() < 5e-5, "{r:?}");
    }

    #[test]
    fn normal_approximation_agrees_for_large_samples() {
        // n = m = 30: the exact tail and the continuity-corrected normal tail
        // differ by well under 0.005 anywhere.
        let counts = u_counts(30, 30);
        let total: u64 = counts.iter().sum();
        let mut worst: f64 = 0.0;
        for u in 0..=900 {
            let exact = counts[u..].iter().sum::<u64>() as f64 / total as f64;
            worst = worst.max((exact - normal_sf(u as f64, 30, 30, 0.0, 0.5)).abs());
        }
        assert!(worst < 0.002, "worst {worst}");
        // And past EXACT_MAX the test switches to the approximation.
        let x: Vec<f64> = (0..31).map(|i| i as f64 + 0.5).collect();
        let y: Vec<f64> = (0..31).map(|i| i as f64).collect();
        let r = mann_whitney_greater(&x, &y).unwrap();
        assert!(!r.exact && r.p > 0.3 && r.p < 0.6, "{r:?}");
    }

    #[test]
    fn all_tied_gives_p_one() {
        let r = mann_whitney_greater(&[2.0; 3], &[2.0; 4]).unwrap();
        assert_eq!((r.u, r.p, r.exact), (6.0, 1.0, false));
        let r = mann_whitney_slowdown(&[100.0; 5], &[100.0; 5], 0.0).unwrap();
        assert_eq!(r.p, 1.0);
    }

    #[test]
    fn slowdown_applies_the_margin() {
        let base = [100.0, 101.0, 102.0, 103.0, 104.0];
        let head: Vec<f64> = base.iter().map(|b| b * 1.10).collect();
        // 10% slower: significant against "no slowdown"...
        let r = mann_whitney_slowdown(&base, &head, 0.0).unwrap();
        assert!((r.p - 1.0 / 252.0).abs() < 1e-15);
        // ...not against "more than 20% slower".
        assert!(mann_whitney_slowdown(&base, &head, 0.20).unwrap().p > 0.99);
    }
}
