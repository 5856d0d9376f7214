//! Group-sequential decisions for a paired cell: the pairs are tested at
//! planned looks (every few rounds), and the cell stops at the first look
//! where it is clearly a regression or clearly cleared.
//!
//! Two one-sided signed-rank tests on the per-pair log ratios `d` run at
//! every look `k` (the first `n_k` pairs):
//!
//! - **regression**: H0 "slower by at most `margin`" is rejected, i.e. the
//!   z-score of its p-value reaches the regression boundary `c_k`;
//! - **cleared**: H0 "slower by `threshold` or more" is rejected, i.e. the
//!   z-score of its p-value reaches the clearing boundary `f_k`.
//!
//! A cell that reaches neither by the last look is **inconclusive**.
//!
//! The regression boundary spends its level with the Lan-DeMets
//! O'Brien-Fleming function `α(t) = 2 − 2Φ(z_{1−α/2} / √t)`: a false
//! alarm costs a maintainer a bisect, so almost nothing is spent at the
//! early looks (only a huge slowdown stops there) and the last look keeps
//! nearly the fixed design's level, hence its power. The clearing boundary
//! spends its level with the Pocock-type function `α ln(1 + (e − 1) t)`:
//! most pull requests change nothing, and clearing them early is where the
//! time is saved; a wrongly cleared cell is a missed regression, whose rate
//! this level bounds. Clearing is non-binding: the regression boundary is
//! computed as if no cell ever stopped for clearing, so stopping early
//! only lowers the false-alarm rate.
//!
//! Each boundary is exact for the joint normal law of the looks' z-scores
//! (independent increments, information proportional to pairs), computed
//! by numerical integration of the continuation density (Armitage,
//! McPherson and Rowe's recursion). The z-score of a look is
//! `Φ⁻¹(1 − p)` of the exact signed-rank p-value, so a look with few pairs
//! cannot cross a boundary its discrete p-values cannot reach.

use statrs::distribution::{Continuous, ContinuousCDF, Normal};

use crate::input::{in_open, logs, StatsError};
use crate::mann_whitney::{mann_whitney_greater, mann_whitney_slowdown};
use crate::signed_rank::{log_ratios, signed_rank_on};

/// How a boundary spends its one-sided level over the looks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Spending {
    /// Lan-DeMets O'Brien-Fleming: little early, nearly all at the end.
    OBrienFleming,
    /// Lan-DeMets Pocock: about evenly over the looks.
    Pocock,
}

impl Spending {
    /// The level spent by information fraction `t` (0 < t <= 1).
    fn spent(self, alpha: f64, t: f64) -> f64 {
        let t = t.clamp(1e-12, 1.0);
        let z = Normal::standard();
        match self {
            Spending::OBrienFleming => {
                2.0 * (1.0 - z.cdf(z.inverse_cdf(1.0 - alpha / 2.0) / t.sqrt()))
            }
            Spending::Pocock => alpha * (1.0 + (std::f64::consts::E - 1.0) * t).ln(),
        }
    }
}

/// Grid points per unit of standard deviation in the integration.
const GRID_PER_SD: f64 = 40.0;
/// The continuation region's lower end, in standard deviations: the mass
/// below it is under 1e-15.
const LOW_SD: f64 = 8.0;

/// The z boundaries of a one-sided group-sequential test at looks with
/// `pairs` (increasing), spending `alpha` with `spending`. Crossing look
/// `k`'s boundary with no earlier crossing has probability
/// `α(t_k) − α(t_{k−1})` under H0, `t_k = pairs[k] / pairs[last]`.
pub fn boundaries(pairs: &[usize], alpha: f64, spending: Spending) -> Result<Vec<f64>, StatsError> {
    if pairs.is_empty() || pairs[0] == 0 || pairs.windows(2).any(|w| w[0] >= w[1]) {
        return Err(StatsError::BadParameter {
            name: "looks",
            value: pairs.len() as f64,
            expected: "increasing pair counts, the first at least 1",
        });
    }
    let information: Vec<f64> = pairs.iter().map(|&n| n as f64).collect();
    boundaries_at(&information, alpha, spending)
}

/// [`boundaries`] at looks with any statistical information (increasing,
/// positive; only their ratios matter): the looks' z-scores are jointly
/// normal with `corr(Z_j, Z_k) = √(I_j / I_k)`, which holds for pairs
/// (information proportional to pairs) and for a growing sample compared
/// with a fixed one ([`Plan::against_fixed`]).
pub fn boundaries_at(
    information: &[f64],
    alpha: f64,
    spending: Spending,
) -> Result<Vec<f64>, StatsError> {
    in_open("alpha", alpha, 0.0, 0.5, "0 < alpha < 0.5")?;
    let positive = information.iter().all(|i| i.is_finite() && *i > 0.0);
    if information.is_empty() || !positive || information.windows(2).any(|w| w[0] >= w[1]) {
        return Err(StatsError::BadParameter {
            name: "looks",
            value: information.len() as f64,
            expected: "increasing positive information at each look",
        });
    }
    let z = Normal::standard();
    let last = *information.last().unwrap();
    let info: Vec<f64> = information.iter().map(|&i| i / last).collect();
    let mut bounds = Vec::with_capacity(info.len());
    // The density of the score S = Z √I on the continuation region so far,
    // on an even grid `xs` (empty before the first look).
    let (mut xs, mut density): (Vec<f64>, Vec<f64>) = (Vec::new(), Vec::new());
    let mut spent_before = 0.0;
    for (k, &i_k) in info.iter().enumerate() {
        let target = (spending.spent(alpha, i_k) - spent_before).max(1e-300);
        let prev = if k == 0 { 0.0 } else { info[k - 1] };
        let step_sd = (i_k - prev).sqrt();
        // P(S_k >= c √I_k, no earlier crossing).
        let crossing = |c: f64| -> f64 {
            let at = c * i_k.sqrt();
            if k == 0 {
                return 1.0 - z.cdf(at / step_sd);
            }
            integrate(&xs, |j| density[j] * (1.0 - z.cdf((at - xs[j]) / step_sd)))
        };
        let c = bisect(|c| crossing(c) - target, -10.0, 40.0);
        bounds.push(c);
        spent_before += target;
        // The continuation density at look k, for the next look.
        let hi = c * i_k.sqrt();
        let lo = -LOW_SD * i_k.sqrt();
        let points = (((hi - lo) * GRID_PER_SD).ceil() as usize).max(50) | 1;
        let grid: Vec<f64> = (0..points)
            .map(|j| lo + (hi - lo) * j as f64 / (points - 1) as f64)
            .collect();
        let next: Vec<f64> = grid
            .iter()
            .map(|&s| {
                if k == 0 {
                    z.pdf(s / step_sd) / step_sd
                } else {
                    integrate(&xs, |j| density[j] * z.pdf((s - xs[j]) / step_sd) / step_sd)
                }
            })
            .collect();
        xs = grid;
        density = next;
    }
    Ok(bounds)
}

/// Simpson's rule over the even grid `xs` (an odd number of points).
fn integrate(xs: &[f64], f: impl Fn(usize) -> f64) -> f64 {
    let n = xs.len();
    if n < 3 {
        return 0.0;
    }
    let h = (xs[n - 1] - xs[0]) / (n - 1) as f64;
    let mut sum = f(0) + f(n - 1);
    for j in 1..n - 1 {
        sum += f(j) * if j % 2 == 1 { 4.0 } else { 2.0 };
    }
    sum * h / 3.0
}

/// The root of a decreasing `f` on `[lo, hi]`.
fn bisect(f: impl Fn(f64) -> f64, mut lo: f64, mut hi: f64) -> f64 {
    for _ in 0..60 {
        let mid = (lo + hi) / 2.0;
        if f(mid) > 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    (lo + hi) / 2.0
}

/// The spread of positive `values` on the log scale, taken robustly: the
/// rank tests shrug off the odd slow round, so it must not count. `None`
/// when a value is not positive and finite.
pub fn robust_spread(values: &[f64]) -> Option<f64> {
    logs("values", values).ok().map(|l| spread(&l))
}

/// A standard deviation of `logs` that a few outliers do not move: the
/// median absolute deviation scaled to a normal's (1.4826 MAD), or the
/// sample standard deviation where over half the values are equal.
fn spread(logs: &[f64]) -> f64 {
    if logs.len() < 2 {
        return 0.0;
    }
    let median = |v: &mut Vec<f64>| {
        v.sort_by(f64::total_cmp);
        let m = v.len() / 2;
        match v.len() % 2 {
            1 => v[m],
            _ => (v[m - 1] + v[m]) / 2.0,
        }
    };
    let centre = median(&mut logs.to_vec());
    let mad = median(&mut logs.iter().map(|x| (x - centre).abs()).collect());
    match mad > 0.0 {
        true => 1.4826 * mad,
        false => crate::welch::mean_var(logs).1.sqrt(),
    }
}

/// A sequential plan: where the looks are, at which levels, and the
/// boundaries those give ([`Plan::new`]); one plan serves every cell that
/// shares its looks and levels, whatever each cell's threshold.
#[derive(Debug, Clone, PartialEq)]
pub struct Plan {
    /// Pairs at each look, increasing; the last is the most a cell gets.
    pub looks: Vec<usize>,
    /// One-sided level of a false regression for a cell, over all looks.
    pub alpha: f64,
    /// One-sided level of a wrong clearing (a missed slowdown of the
    /// threshold), over all looks.
    pub clear_alpha: f64,
    /// The z boundaries of each look: regression (O'Brien-Fleming) and
    /// clearing (Pocock).
    pub regression_bounds: Vec<f64>,
    pub clearing_bounds: Vec<f64>,
}

/// Boundaries computed before, by looks, level and spending: a gate
/// evaluates the same few plans again and again (`validate-gate` runs it
/// thousands of times), and one computation takes milliseconds.
type Memo = Vec<((Vec<u64>, u64, Spending), Vec<f64>)>;
static MEMO: std::sync::Mutex<Memo> = std::sync::Mutex::new(Vec::new());

fn memoized(information: &[f64], alpha: f64, spending: Spending) -> Result<Vec<f64>, StatsError> {
    let bits = information.iter().map(|i| i.to_bits()).collect();
    let key = (bits, alpha.to_bits(), spending);
    if let Some((_, b)) = MEMO.lock().unwrap().iter().find(|(k, _)| *k == key) {
        return Ok(b.clone());
    }
    let b = boundaries_at(information, alpha, spending)?;
    let mut memo = MEMO.lock().unwrap();
    if memo.len() > 256 {
        memo.clear();
    }
    memo.push((key, b.clone()));
    Ok(b)
}

/// What the looks decided.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    Regression,
    Cleared,
    /// The last look came and neither boundary was crossed.
    Inconclusive,
    /// Fewer pairs than the last look and no crossing yet: keep going.
    Continue,
}

/// One cell's sequential outcome.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sequential {
    pub decision: Decision,
    /// The look (0-based) that decided, or the last look reached.
    pub look: usize,
    /// Pairs used by that look.
    pub pairs: usize,
    /// That look's z-scores of the regression and the clearing test, and
    /// their boundaries.
    pub z_regression: f64,
    pub bound_regression: f64,
    pub z_cleared: f64,
    pub bound_cleared: f64,
    /// The regression test's p-value at that look (exact signed-rank).
    pub p: f64,
}

impl Plan {
    /// The plan of a paired cell (information proportional to the pairs)
    /// and its boundaries.
    pub fn new(looks: Vec<usize>, alpha: f64, clear_alpha: f64) -> Result<Plan, StatsError> {
        let information: Vec<f64> = looks.iter().map(|&n| n as f64).collect();
        Plan::at(looks, &information, alpha, clear_alpha)
    }

    /// The plan of a cell whose rounds at each look are compared with a
    /// fixed sample of `fixed` values (a stored baseline): the
    /// information at `m` rounds is `1 / (1/m + 1/fixed)`, so the later
    /// looks add less than the first (the baseline's own noise stays).
    pub fn against_fixed(
        looks: Vec<usize>,
        fixed: usize,
        alpha: f64,
        clear_alpha: f64,
    ) -> Result<Plan, StatsError> {
        if fixed == 0 {
            return Err(StatsError::TooFewSamples {
                sample: "base",
                got: 0,
                need: 1,
            });
        }
        let information: Vec<f64> = looks
            .iter()
            .map(|&m| 1.0 / (1.0 / m.max(1) as f64 + 1.0 / fixed as f64))
            .collect();
        Plan::at(looks, &information, alpha, clear_alpha)
    }

    fn at(
        looks: Vec<usize>,
        information: &[f64],
        alpha: f64,
        clear_alpha: f64,
    ) -> Result<Plan, StatsError> {
        if looks.is_empty() || looks[0] == 0 || looks.windows(2).any(|w| w[0] >= w[1]) {
            return Err(StatsError::BadParameter {
                name: "looks",
                value: looks.len() as f64,
                expected: "increasing counts, the first at least 1",
            });
        }
        Ok(Plan {
            regression_bounds: memoized(information, alpha, Spending::OBrienFleming)?,
            clearing_bounds: memoized(information, clear_alpha, Spending::Pocock)?,
            looks,
            alpha,
            clear_alpha,
        })
    }

    /// Whether this plan, made [`Plan::against_fixed`] a sample of
    /// `fixed` values whose logs spread by `sd` ([`robust_spread`]), can
    /// decide a cell like it at its last look: the rank test's smallest p
    /// reaches the regression level there at all, and an unchanged cell
    /// is cleared at the threshold with power [`crate::POWER`] (normal
    /// approximation on the logs).
    pub fn decidable_against_fixed(&self, fixed: usize, sd: f64, threshold: f64) -> bool {
        let Some(&m) = self.looks.last() else {
            return false;
        };
        if fixed == 0 || !sd.is_finite() {
            return false;
        }
        let reach = crate::mann_whitney::min_p_value(fixed, m) <= self.last_level();
        let z = Normal::standard();
        let se = sd * (1.0 / fixed as f64 + 1.0 / m as f64).sqrt();
        let bound = *self.clearing_bounds.last().expect("a plan has looks");
        let clears = se == 0.0 || threshold.ln_1p() / se >= bound + z.inverse_cdf(crate::POWER);
        reach && clears
    }

    /// The p-value the last look's regression boundary asks for: a cell
    /// whose smallest attainable p is above it can never end a regression.
    pub fn last_level(&self) -> f64 {
        let c = *self.regression_bounds.last().expect("a plan has looks");
        1.0 - Normal::standard().cdf(c)
    }

    /// Looks every `every` pairs up to `max` (the last look at `max`).
    pub fn looks_every(every: usize, max: usize) -> Vec<usize> {
        let every = every.max(1);
        let mut looks: Vec<usize> = (1..).map(|k| k * every).take_while(|&n| n < max).collect();
        looks.push(max.max(1));
        looks
    }

    /// Replays the looks over the pairs there are (`base[i]` with
    /// `head[i]`; positive values, lower is better) and stops at the first
    /// crossing: a regression is slower than `margin` with confidence, a
    /// cleared cell slower by less than `threshold` (0.10 = 10%). Pairs
    /// beyond the deciding look are not used.
    pub fn decide(
        &self,
        base: &[f64],
        head: &[f64],
        threshold: f64,
        margin: f64,
    ) -> Result<Sequential, StatsError> {
        in_open("threshold", threshold, 0.0, 10.0, "0 < threshold")?;
        in_open("margin", margin, -1.0, threshold, "margin < threshold")?;
        let d = log_ratios(base, head)?;
        let (up, down) = (margin.ln_1p(), threshold.ln_1p());
        self.walk(d.len(), "pairs", |n| {
            let p = signed_rank_on(d[..n].iter().map(|x| x - up)).p;
            let p_clear = signed_rank_on(d[..n].iter().map(|x| down - x)).p;
            Ok((p, p_clear))
        })
    }

    /// [`Plan::decide`] for a plan [`Plan::against_fixed`]: the first
    /// `looks[k]` values of `head` against all of `base`, with the
    /// Mann-Whitney test at each look (regression: head slower than
    /// `margin`; cleared: head faster than base slowed by `threshold`).
    pub fn decide_against_fixed(
        &self,
        base: &[f64],
        head: &[f64],
        threshold: f64,
        margin: f64,
    ) -> Result<Sequential, StatsError> {
        in_open("threshold", threshold, 0.0, 10.0, "0 < threshold")?;
        in_open("margin", margin, -1.0, threshold, "margin < threshold")?;
        logs("base", base)?;
        logs("head", head)?;
        let slowed: Vec<f64> = base.iter().map(|b| b * (1.0 + threshold)).collect();
        self.walk(head.len(), "rounds", |m| {
            let p = mann_whitney_slowdown(base, &head[..m], margin)?.p;
            let p_clear = mann_whitney_greater(&slowed, &head[..m])?.p;
            Ok((p, p_clear))
        })
    }

    /// The looks over `available` values, each look's regression and
    /// clearing p-values from `tests(n)`, stopping at the first crossing.
    fn walk(
        &self,
        available: usize,
        what: &'static str,
        tests: impl Fn(usize) -> Result<(f64, f64), StatsError>,
    ) -> Result<Sequential, StatsError> {
        let (reg, clr) = (&self.regression_bounds, &self.clearing_bounds);
        let z = Normal::standard();
        let score = |p: f64| z.inverse_cdf((1.0 - p).clamp(1e-300, 1.0 - 1e-16));
        let mut out = None;
        for (k, &n) in self.looks.iter().enumerate() {
            if n > available {
                break;
            }
            let (p, p_clear) = tests(n)?;
            let last = k + 1 == self.looks.len();
            let s = Sequential {
                decision: if score(p) >= reg[k] {
                    Decision::Regression
                } else if score(p_clear) >= clr[k] {
                    Decision::Cleared
                } else if last {
                    Decision::Inconclusive
                } else {
                    Decision::Continue
                },
                look: k,
                pairs: n,
                z_regression: score(p),
                bound_regression: reg[k],
                z_cleared: score(p_clear),
                bound_cleared: clr[k],
                p,
            };
            out = Some(s);
            if s.decision != Decision::Continue {
                break;
            }
        }
        out.ok_or(StatsError::TooFewSamples {
            sample: what,
            got: available,
            need: self.looks[0],
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn obrien_fleming_matches_published_boundaries() {
        // gsDesign's sfLDOF, four equally spaced looks, one-sided 0.025:
        // 4.3326, 2.9631, 2.3590, 2.0141.
        let b = boundaries(&[10, 20, 30, 40], 0.025, Spending::OBrienFleming).unwrap();
        for (got, want) in b.iter().zip([4.3326, 2.9631, 2.3590, 2.0141]) {
            assert!((got - want).abs() < 2e-3, "{b:?}");
        }
    }

    /// Both spending functions, checked by simulating the looks'
    /// z-scores (a random walk observed every ten steps): each look's
    /// first crossings happen at the rate the function spends there.
    #[test]
    fn crossings_follow_the_spending_function() {
        let looks = [10, 20, 30, 40];
        let mut rng = crate::behaviour_tests::Rng::new(3);
        let paths = 100_000;
        for spending in [Spending::Pocock, Spending::OBrienFleming] {
            let alpha = 0.05;
            let b = boundaries(&looks, alpha, spending).unwrap();
            let mut first = [0usize; 4];
            for _ in 0..paths {
                let mut sum = 0.0;
                let mut steps = 0;
                for (k, &n) in looks.iter().enumerate() {
                    while steps < n {
                        sum += rng.normal();
                        steps += 1;
                    }
                    if sum / (n as f64).sqrt() >= b[k] {
                        first[k] += 1;
                        break;
                    }
                }
            }
            let mut before = 0.0;
            for (k, &n) in looks.iter().enumerate() {
                let spent = spending.spent(alpha, n as f64 / 40.0);
                let want = spent - before;
                let got = first[k] as f64 / paths as f64;
                // Four binomial standard errors, and a floor for the
                // near-zero first look of O'Brien-Fleming.
                let se = (want * (1.0 - want) / paths as f64).sqrt();
                assert!(
                    (got - want).abs() <= 4.0 * se + 2e-4,
                    "{spending:?} look {k}: {got} vs {want} ({b:?})"
                );
                before = spent;
            }
        }
    }

    #[test]
    fn one_look_is_the_fixed_design() {
        let b = boundaries(&[40], 0.01, Spending::OBrienFleming).unwrap();
        let want = Normal::standard().inverse_cdf(0.99);
        assert!((b[0] - want).abs() < 1e-6, "{b:?} vs {want}");
    }

    #[test]
    fn bad_looks_are_errors() {
        assert!(boundaries(&[], 0.05, Spending::Pocock).is_err());
        assert!(boundaries(&[20, 10], 0.05, Spending::Pocock).is_err());
        assert!(boundaries(&[10, 20], 0.7, Spending::Pocock).is_err());
    }

    #[test]
    fn looks_every_ends_at_the_maximum() {
        assert_eq!(Plan::looks_every(10, 40), vec![10, 20, 30, 40]);
        assert_eq!(Plan::looks_every(10, 35), vec![10, 20, 30, 35]);
        assert_eq!(Plan::looks_every(10, 5), vec![5]);
    }

    fn plan() -> Plan {
        Plan::new(Plan::looks_every(10, 40), 0.001, 0.05).unwrap()
    }

    /// Pairs whose head is `ratio` times base, with a spread of about
    /// `sd` in the log ratio (deterministic).
    fn pairs(n: usize, ratio: f64, sd: f64) -> (Vec<f64>, Vec<f64>) {
        let base: Vec<f64> = (0..n).map(|i| 100.0 + (i % 7) as f64).collect();
        let head = base
            .iter()
            .enumerate()
            .map(|(i, b)| {
                let u = ((i * 37 + 11) % 41) as f64 / 40.0 - 0.5;
                b * ratio * (sd * 3.4 * u).exp()
            })
            .collect();
        (base, head)
    }

    #[test]
    fn an_unchanged_quiet_cell_clears_at_the_first_look() {
        let (b, h) = pairs(40, 1.0, 0.01);
        let s = plan().decide(&b, &h, 0.10, 0.05).unwrap();
        assert_eq!((s.decision, s.look, s.pairs), (Decision::Cleared, 0, 10));
    }

    #[test]
    fn a_large_slowdown_stops_early_as_a_regression() {
        let (b, h) = pairs(40, 1.5, 0.01);
        let s = plan().decide(&b, &h, 0.10, 0.05).unwrap();
        assert_eq!(s.decision, Decision::Regression);
        assert!(s.look < 3, "{s:?}");
    }

    #[test]
    fn a_noisy_cell_in_between_is_inconclusive_at_the_last_look() {
        let (b, h) = pairs(40, 1.07, 0.30);
        let s = plan().decide(&b, &h, 0.10, 0.05).unwrap();
        assert_eq!((s.decision, s.pairs), (Decision::Inconclusive, 40), "{s:?}");
    }

    #[test]
    fn too_few_pairs_for_the_last_look_continue() {
        let (b, h) = pairs(25, 1.07, 0.30);
        let s = plan().decide(&b, &h, 0.10, 0.05).unwrap();
        assert_eq!((s.decision, s.pairs), (Decision::Continue, 20), "{s:?}");
        assert!(plan().decide(&b[..5], &h[..5], 0.10, 0.05).is_err());
    }

    /// The promise of the regression boundary: under H0 (log ratios
    /// centred on the margin) a cell ends a regression at most `alpha` of
    /// the time over all looks; and the clearing boundary's: with a true
    /// slowdown of the threshold a cell is cleared at most `clear_alpha`
    /// of the time.
    #[test]
    fn the_levels_hold_over_all_looks() {
        let mut rng = crate::behaviour_tests::Rng::new(7);
        let p = Plan::new(Plan::looks_every(10, 40), 0.05, 0.05).unwrap();
        let trials = 4000;
        let (mut false_alarms, mut wrongly_cleared) = (0, 0);
        for _ in 0..trials {
            let run = |centre: f64, rng: &mut crate::behaviour_tests::Rng| {
                let base = vec![1.0; 40];
                let head: Vec<f64> = (0..40)
                    .map(|_| (centre + 0.03 * rng.normal()).exp())
                    .collect();
                p.decide(&base, &head, 0.10, 0.05).unwrap().decision
            };
            false_alarms += usize::from(run(0.05f64.ln_1p(), &mut rng) == Decision::Regression);
            wrongly_cleared += usize::from(run(0.10f64.ln_1p(), &mut rng) == Decision::Cleared);
        }
        // Binomial(4000, 0.05) stays below 0.062 with probability > 0.999.
        assert!(
            false_alarms as f64 / (trials as f64) < 0.062,
            "{false_alarms}"
        );
        assert!(
            wrongly_cleared as f64 / (trials as f64) < 0.062,
            "{wrongly_cleared}"
        );
        // And the test is not vacuous: it does reject sometimes.
        assert!(false_alarms > 0 && wrongly_cleared > 0);
    }

    #[test]
    fn information_proportional_to_pairs_is_the_paired_plan() {
        let by_pairs = boundaries(&[10, 20, 40], 0.01, Spending::Pocock).unwrap();
        let by_info = boundaries_at(&[0.25, 0.5, 1.0], 0.01, Spending::Pocock).unwrap();
        assert_eq!(by_pairs, by_info);
        // Against a fixed sample the later looks add less information,
        // so the boundaries differ from the paired plan's.
        let fixed = Plan::against_fixed(vec![10, 20, 40], 10, 0.01, 0.05).unwrap();
        let paired = Plan::new(vec![10, 20, 40], 0.01, 0.05).unwrap();
        assert_ne!(fixed.regression_bounds, paired.regression_bounds);
        assert!(Plan::against_fixed(vec![10], 0, 0.01, 0.05).is_err());
    }

    /// The promise against a stored baseline: over fresh baselines and
    /// runs, a cell centred on the margin ends a regression at most
    /// `alpha` of the time over all looks, one slowed by the threshold is
    /// cleared at most `clear_alpha` of the time; and both happen.
    #[test]
    fn the_levels_hold_over_all_looks_against_a_fixed_sample() {
        let mut rng = crate::behaviour_tests::Rng::new(11);
        let p = Plan::against_fixed(Plan::looks_every(5, 30), 20, 0.05, 0.05).unwrap();
        let trials = 3000;
        let (mut false_alarms, mut wrongly_cleared) = (0, 0);
        let draw = |centre: f64, n: usize, rng: &mut crate::behaviour_tests::Rng| -> Vec<f64> {
            (0..n)
                .map(|_| (centre + 0.03 * rng.normal()).exp())
                .collect()
        };
        for _ in 0..trials {
            let base = draw(0.0, 20, &mut rng);
            let at_margin = draw(0.05f64.ln_1p(), 30, &mut rng);
            let at_threshold = draw(0.10f64.ln_1p(), 30, &mut rng);
            let decide = |head: &[f64]| {
                p.decide_against_fixed(&base, head, 0.10, 0.05)
                    .unwrap()
                    .decision
            };
            false_alarms += usize::from(decide(&at_margin) == Decision::Regression);
            wrongly_cleared += usize::from(decide(&at_threshold) == Decision::Cleared);
        }
        // Binomial(3000, 0.05) stays below 0.064 with probability > 0.999.
        let rate = |n: usize| n as f64 / trials as f64;
        assert!(rate(false_alarms) < 0.064, "{false_alarms}");
        assert!(rate(wrongly_cleared) < 0.064, "{wrongly_cleared}");
        assert!(false_alarms > 0 && wrongly_cleared > 0);
    }

    #[test]
    fn against_a_fixed_sample_a_large_slowdown_stops_early_and_a_quiet_cell_clears() {
        let base: Vec<f64> = (0..20).map(|i| 100.0 + (i % 7) as f64 * 0.1).collect();
        let p = Plan::against_fixed(Plan::looks_every(5, 30), 20, 0.001, 0.05).unwrap();
        let slow: Vec<f64> = base.iter().map(|b| b * 1.5).collect();
        let s = p.decide_against_fixed(&base, &slow, 0.05, 0.025).unwrap();
        assert_eq!(s.decision, Decision::Regression);
        assert!(s.look < 3, "{s:?}");
        let same: Vec<f64> = base.iter().rev().copied().collect();
        let s = p.decide_against_fixed(&base, &same, 0.05, 0.025).unwrap();
        assert_eq!((s.decision, s.look, s.pairs), (Decision::Cleared, 0, 5));
        // Five rounds, the first look not reached: keep going.
        let s = p.decide_against_fixed(&base, &slow[..3], 0.05, 0.025);
        assert!(s.is_err());
        // The last look's level: what a cell's smallest p must reach.
        assert!(
            p.last_level() < 0.001 && p.last_level() > 1e-5,
            "{}",
            p.last_level()
        );
    }
}
