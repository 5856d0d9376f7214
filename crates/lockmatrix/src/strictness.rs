//! How strict the gate is with one timing cell on real hardware, decided
//! once, as a value: the slowdown it must catch (its threshold), the one
//! it tolerates (its margin), its share of the target's false-alarm
//! budget (its level), and the noise those were chosen from. The run loop
//! (which cells the next pair runs), the gate (each cell's verdict) and
//! `validate-gate` (which resamples the gate) all take it from here.
//!
//! - What a cell measures is typed from its case once ([`Contention`]):
//!   alone (one thread) or contended. Each kind spends its own half of
//!   the target's false-alarm rate ([`Budget`]), split evenly over the
//!   suites and then over the suite's cells of that kind (Bonferroni:
//!   every suite decides its cells while it runs), so the few quiet
//!   1-thread cells keep their power beside hundreds of contended ones.
//! - The threshold is the finest of its kind's ladder ([`ladder`]: 5%,
//!   10%, 25%, 50%, 2x for a quiet cell; 25%, 50%, 2x contended) that the
//!   cell's measured noise lets the most pairs resolve: a slowdown of the
//!   threshold is caught 4 times in 5 by the last look. A cell that
//!   cannot resolve even 2x is shown as too noisy, with the pairs that
//!   would let it gate, and never fails.
//! - The noise is measured where it will be tested. Against a base
//!   revision (`--against`, unknown testbeds included) it is the spread
//!   of the cell's first look of pairs (the pilot, [`PILOT`] pairs), the
//!   same pairs in the run loop and the gate; against stored baselines it
//!   is the spread of the baseline's own rounds, recorded with them.
//!
//! Why the level holds although the threshold is chosen from the data: a
//! regression is "slower than the margin, with confidence", and the
//! signed-rank statistic of `d - m` only falls as the margin `m` grows,
//! so a test at any margin chosen from the pairs rejects no more often
//! than the test at margin 0, whose level is the cell's. Only the
//! clearing side (how sure "not slower than the threshold" is) leans on
//! the pilot's spread being the cell's.

use serde::Serialize;
use serde_json::{Map, Value};

/// How strict the gate is: what the command line sets.
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct GateOptions {
    /// `--threshold`: the slowdown every contended timing cell must catch
    /// (0.25 = 25%), fixed; `None` (the default): each its own, the
    /// finest of [`CONTENDED_LADDER`] its measured noise resolves.
    pub threshold: Option<f64>,
    /// `--quiet-threshold`: the finest slowdown a 1-thread cell is asked
    /// to catch, the first rung of its [`ladder`].
    pub quiet_threshold: f64,
    /// False-alarm rate of a target's timing cells, over all their
    /// looks: half for the quiet cells, half for the contended.
    pub alpha: f64,
    /// Per cell: how often a slowdown of the threshold may be cleared.
    pub clear_alpha: f64,
    /// `--no-gate`: what a comparison found (regressions, ordering
    /// changes) is shown and fails nothing. What needs no reference (a
    /// failed check, a broken target, a violated model, a race) still
    /// fails: only a flag named for it silences it.
    pub no_gate: bool,
    /// `--allow-races`: races under Miri are shown and fail nothing (a
    /// known race in a crate one cannot fix); the report says so.
    pub allow_races: bool,
}

impl Default for GateOptions {
    fn default() -> Self {
        GateOptions {
            threshold: None,
            quiet_threshold: 0.05,
            alpha: 0.05,
            clear_alpha: 0.05,
            no_gate: false,
            allow_races: false,
        }
    }
}

impl GateOptions {
    /// Checks the ranges, as an exit-status-2 error naming the bad option.
    pub fn check(&self) -> Result<(), BadGateOption> {
        for (name, t) in [
            ("threshold", self.threshold),
            ("quiet threshold", Some(self.quiet_threshold)),
        ] {
            let Some(t) = t else { continue };
            if !(t.is_finite() && t > 0.0 && t < 10.0) {
                return Err(BadGateOption::Threshold { name, value: t });
            }
        }
        for (name, a) in [("alpha", self.alpha), ("clear alpha", self.clear_alpha)] {
            if !(a > 0.0 && a < 0.5) {
                return Err(BadGateOption::Alpha { name, value: a });
            }
        }
        Ok(())
    }
}

/// A gate option out of its range, named as the command line names it.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum BadGateOption {
    /// A threshold that is not a fraction above 0 (below 10).
    #[error("gate {name} is {value}: expected a fraction > 0 (0.25 = 25% slower)")]
    Threshold { name: &'static str, value: f64 },
    /// A false-alarm rate outside (0, 0.5).
    #[error("gate {name} is {value}: expected 0 < alpha < 0.5 (e.g. 0.05)")]
    Alpha { name: &'static str, value: f64 },
}

/// Pairs between two looks against a base revision; the first look's
/// are the pilot ([`PILOT`]).
pub const LOOK_EVERY: usize = 10;

/// The most rounds a stored baseline is asked to hold: a native round of
/// the three suites takes about 10 s on a 2-vCPU VM, so 60 rounds record
/// in about 10 minutes, once per testbed. A cell that needs more is too
/// noisy for stored baselines; `--against` gates it.
pub const STORED_BASELINE_MOST: usize = 60;

/// What a cell's case says about contention: the threads it runs (its
/// `threads`, or its `readers` and `writers`), read once.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Contention {
    /// One thread (or a case that names no thread count: a single op).
    Alone,
    /// Two or more threads on one lock or line.
    Contended { threads: u64 },
}

impl Contention {
    pub fn of(case: &Map<String, Value>) -> Contention {
        let n = |k: &str| case.get(k).and_then(Value::as_u64);
        let threads =
            n("threads").unwrap_or_else(|| n("readers").unwrap_or(0) + n("writers").unwrap_or(0));
        match threads {
            0 | 1 => Contention::Alone,
            threads => Contention::Contended { threads },
        }
    }

    pub fn budget(self) -> Budget {
        match self {
            Contention::Alone => Budget::Quiet,
            Contention::Contended { .. } => Budget::Contended,
        }
    }
}

/// Whose share of the target's false-alarm rate a timing cell spends.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Budget {
    Quiet,
    Contended,
}

impl Budget {
    pub const ALL: [Budget; 2] = [Budget::Quiet, Budget::Contended];

    /// Its share of the target's `alpha`: half each.
    pub fn share(self) -> f64 {
        0.5
    }

    pub fn name(self) -> &'static str {
        match self {
            Budget::Quiet => "quiet",
            Budget::Contended => "contended",
        }
    }

    /// Its cells as a report names them.
    pub fn cells(self) -> &'static str {
        match self {
            Budget::Quiet => "1-thread",
            Budget::Contended => "contended",
        }
    }
}

/// The contended cells' ladder: measured on a 2-vCPU VM, contended
/// timings spread 9-150% from pair to pair, so 25% is the finest any of
/// them resolves in the pairs a pull request affords and 2x the coarsest
/// worth a verdict.
pub const CONTENDED_LADDER: [f64; 3] = [0.25, 0.5, 1.0];

/// Pairs whose spread fixes a cell's threshold against a base revision:
/// the first look's.
pub const PILOT: usize = LOOK_EVERY;

/// The fewest values a spread is measured on.
const LEAST_FOR_SPREAD: usize = 3;

/// The power a threshold is chosen for: a slowdown of it is caught this
/// often by the last look.
pub const POWER: f64 = stats::POWER;

/// The thresholds a cell of `budget` may get, finest first: a fixed one
/// where the options give it (`--threshold` for contended cells), else
/// its kind's ladder from `--quiet-threshold` (quiet) or 25% (contended).
pub fn ladder(opts: &GateOptions, budget: Budget) -> Vec<f64> {
    match (budget, opts.threshold) {
        (Budget::Contended, Some(t)) => vec![t],
        (Budget::Contended, None) => CONTENDED_LADDER.to_vec(),
        (Budget::Quiet, _) => {
            // The quiet threshold, twice it while below the contended
            // ladder, then the contended ladder above it.
            let q = opts.quiet_threshold;
            let mut l = vec![q];
            if 2.0 * q < CONTENDED_LADDER[0] {
                l.push(2.0 * q);
            }
            l.extend(CONTENDED_LADDER.into_iter().filter(|&t| t > q));
            l
        }
    }
}

/// The slowdown tolerated: a regression is slower than this.
pub fn margin(threshold: f64) -> f64 {
    threshold / 2.0
}

/// How many of a suite's timing cells spend each budget.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Counts {
    pub quiet: usize,
    pub contended: usize,
}

impl Counts {
    pub fn add(&mut self, budget: Budget) {
        match budget {
            Budget::Quiet => self.quiet += 1,
            Budget::Contended => self.contended += 1,
        }
    }

    pub fn of(&self, budget: Budget) -> usize {
        match budget {
            Budget::Quiet => self.quiet,
            Budget::Contended => self.contended,
        }
    }
}

/// The level of one timing cell of `budget` in a suite with `counts`, of
/// a target running `suites` suites: its budget's share of `alpha`, split
/// over the suites and then over the suite's cells of that budget. One
/// computation for the run loop, the gate and `validate-gate`.
pub fn level(opts: &GateOptions, budget: Budget, suites: usize, counts: Counts) -> f64 {
    opts.alpha * budget.share() / (suites.max(1) * counts.of(budget).max(1)) as f64
}

/// Where a cell's noise was measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum NoiseSource {
    /// The first look's pairs of this comparison.
    Pilot,
    /// The stored baseline's own rounds, recorded with it.
    Baseline,
}

/// A stored baseline's values of one timing cell, lower is better, and
/// the rounds the baseline recorded. A cell may have values in fewer
/// rounds than were recorded (a stress round whose threads never all ran
/// at once has no per-thread shares): more of its values cost more rounds,
/// at the rate it had them.
#[derive(Debug, Clone, Copy)]
pub struct Recorded<'a> {
    pub values: &'a [f64],
    pub rounds: usize,
}

impl<'a> Recorded<'a> {
    /// A value in every round.
    pub fn full(values: &'a [f64]) -> Recorded<'a> {
        Recorded {
            values,
            rounds: values.len(),
        }
    }

    /// The rounds that give `n` values at the cell's rate.
    pub fn rounds_for(&self, n: usize) -> usize {
        let (values, rounds) = (self.values.len(), self.rounds.max(self.values.len()));
        match values == rounds {
            true => n,
            false => (n * rounds).div_ceil(values.max(1)),
        }
    }

    /// The values `rounds` rounds give at the cell's rate.
    pub fn values_in(&self, rounds: usize) -> usize {
        let (values, recorded) = (self.values.len(), self.rounds.max(self.values.len()));
        match values == recorded {
            true => rounds,
            false => rounds * values / recorded,
        }
    }
}

/// A timing cell's strictness on this testbed.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Strictness {
    pub budget: Budget,
    /// The slowdown it must catch (0.25 = 25%): cleared only when slower
    /// by less, with confidence.
    pub threshold: f64,
    /// The slowdown it tolerates: a regression is slower than this.
    pub margin: f64,
    /// Its level: the false-alarm rate it may spend over all its looks.
    pub alpha: f64,
    /// The spread of its log values (per pair, or per round against
    /// stored baselines), 1.4826 MAD; `None` when too few were measured.
    pub spread: Option<f64>,
    /// The pairs (or rounds) the spread was measured on, and where.
    pub measured: usize,
    /// The rounds those came from: more than `measured` where a stored
    /// baseline's round gave the cell no value ([`Recorded`]).
    pub recorded: usize,
    pub source: NoiseSource,
    /// The most pairs (rounds) the cell gets: its last look.
    pub most: usize,
    /// Whether those resolve its threshold.
    pub resolution: Resolution,
    /// `pairs` or `rounds`.
    pub unit: &'static str,
}

/// Whether a cell's pairs (or its baseline's rounds) resolve its
/// threshold: catch a slowdown of it with [`POWER`], at its level.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "is")]
pub enum Resolution {
    Resolved,
    /// Not with the pairs this run has (or the rounds its baseline
    /// holds), but with `needs` (`None`: too few to measure the noise):
    /// not gated until then, and the verdict says so.
    Short {
        needs: Option<usize>,
    },
    /// Not with any count a run affords here (`needs`, if any, is past
    /// it): too noisy for the coarsest threshold on this testbed. Shown
    /// with its spread, never failing; a quieter testbed would gate it.
    TooNoisy {
        needs: Option<usize>,
    },
}

impl Strictness {
    /// `gated at >= 25% (spread 9.1%, 10 pairs)`, or why it is not.
    pub fn line(&self) -> String {
        let spread = match self.spread {
            Some(s) => format!("spread {}", pct(s.exp_m1())),
            None => "spread unmeasured".into(),
        };
        let from = match self.source {
            NoiseSource::Pilot => format!("{} {}", self.measured, self.unit),
            NoiseSource::Baseline if self.recorded > self.measured => format!(
                "{} values of {} baseline rounds",
                self.measured, self.recorded
            ),
            NoiseSource::Baseline => format!("{} baseline rounds", self.measured),
        };
        let t = pct(self.threshold);
        let more = |needs: Option<usize>| match (needs, self.unit) {
            (Some(n), "pairs") => format!("{n} pairs would (--rounds {n})"),
            (Some(n), _) => format!("a baseline of {n} rounds would"),
            (None, _) => "a quieter testbed (self-hosted or ssh) would".into(),
        };
        match self.resolution {
            Resolution::Resolved => format!("gated at >= {t} ({spread}, {from})"),
            Resolution::Short { needs: None } if self.spread.is_none() => format!(
                "not gated: {} {} are too few to measure its noise (at least {LEAST_FOR_SPREAD})",
                self.measured, self.unit
            ),
            Resolution::Short { needs: None } => format!(
                "not gated at {t} with {} {} ({spread}, {from}): the {unit} a run plans would",
                self.most,
                self.unit,
                unit = self.unit
            ),
            Resolution::Short { needs } => format!(
                "not gated at {t} with {} {} ({spread}, {from}): {}",
                self.most,
                self.unit,
                more(needs)
            ),
            Resolution::TooNoisy { needs } => format!(
                "too noisy to resolve {t} here ({spread}, {from}): {}, or a quieter testbed",
                more(needs)
            ),
        }
    }

    pub fn resolves(&self) -> bool {
        self.resolution == Resolution::Resolved
    }

    pub fn too_noisy(&self) -> bool {
        matches!(self.resolution, Resolution::TooNoisy { .. })
    }
}

/// `25%`, `2x` for 100% and more.
pub fn pct(fraction: f64) -> String {
    if fraction >= 1.0 {
        format!("{}x", trim(1.0 + fraction))
    } else {
        format!("{}%", trim(fraction * 100.0))
    }
}

fn trim(x: f64) -> String {
    let s = format!("{x:.1}");
    s.strip_suffix(".0").map_or(s.clone(), str::to_string)
}

/// The spread of the log ratios of the first [`PILOT`] pairs (fewer when
/// there are fewer): `None` below [`LEAST_FOR_SPREAD`].
pub fn pilot_spread(base: &[f64], head: &[f64]) -> (Option<f64>, usize) {
    let n = base.len().min(head.len()).min(PILOT);
    if n < LEAST_FOR_SPREAD {
        return (None, n);
    }
    let ratios: Vec<f64> = base[..n]
        .iter()
        .zip(&head[..n])
        .map(|(b, h)| h / b)
        .collect();
    (stats::robust_spread(&ratios), n)
}

/// The strictness of a cell compared pair by pair with a base revision,
/// from its pilot pairs' spread: the finest threshold of its ladder whose
/// slowdown `most` pairs catch with [`POWER`] at level `alpha`. One that
/// only more pairs than this run has would resolve is short of them, one
/// that needs more than `affordable` (what a run of its profile plans)
/// too noisy.
pub fn paired(
    opts: &GateOptions,
    budget: Budget,
    alpha: f64,
    (base, head): (&[f64], &[f64]),
    (most, affordable): (usize, usize),
) -> Strictness {
    let (spread, measured) = pilot_spread(base, head);
    let needed = |t: f64| {
        let apart = (1.0 + t).ln() - (1.0 + margin(t)).ln();
        spread.and_then(|s| stats::pairs_needed(s, apart, alpha, POWER))
    };
    choose(
        Strictness {
            budget,
            threshold: 0.0,
            margin: 0.0,
            alpha,
            spread,
            measured,
            recorded: measured,
            source: NoiseSource::Pilot,
            most,
            resolution: Resolution::Resolved,
            unit: "pairs",
        },
        &ladder(opts, budget),
        |t, n| needed(t).is_some_and(|need| need <= n),
        needed,
        affordable.max(most),
    )
}

/// The strictness of a cell compared with a stored baseline of values
/// `base` (costs), the run taking its rounds at `looks`: the finest
/// threshold at which an unchanged cell of the baseline's spread is
/// cleared 4 times in 5 by the last look and a regression can reach the
/// level ([`stats::SequentialPlan::decidable_against_fixed`]). Short of
/// rounds where a baseline of [`STORED_BASELINE_MOST`] rounds and a run
/// planned as its profile plans (`planned`: those looks) would resolve
/// it, too noisy where not even they would. The rounds it names give the
/// values it needs at the rate the baseline had them.
pub fn stored(
    opts: &GateOptions,
    budget: Budget,
    alpha: f64,
    recorded: Recorded,
    (looks, planned): (&[usize], &[usize]),
) -> Strictness {
    let base = recorded.values;
    // The values the most rounds ever asked for would give.
    let most_values = recorded.values_in(STORED_BASELINE_MOST);
    let spread = (base.len() >= LEAST_FOR_SPREAD)
        .then(|| stats::robust_spread(base))
        .flatten();
    let most = looks.last().copied().unwrap_or(base.len());
    let decidable = |rounds: usize, looks: &[usize], t: f64| {
        let (Some(sd), Some(&m)) = (spread, looks.last()) else {
            return false;
        };
        // What no plan can beat, checked before a plan's boundaries are
        // computed (each costs milliseconds, a noisy cell's many): the
        // rank test's smallest p must reach the level, and the threshold
        // must stand a one-look clearing test's distance from the noise.
        let se = sd * (1.0 / rounds.max(1) as f64 + 1.0 / m.max(1) as f64).sqrt();
        let one_look = 1.644_853_6 + 0.841_621_2; // z(0.95) + z(POWER)
        if stats::min_p_value(rounds, m) > alpha || (se > 0.0 && t.ln_1p() / se < one_look) {
            return false;
        }
        let plan =
            stats::SequentialPlan::against_fixed(looks.to_vec(), rounds, alpha, opts.clear_alpha);
        plan.is_ok_and(|p| p.decidable_against_fixed(rounds, sd, t))
    };
    let planned = match planned.last() >= looks.last() {
        true => planned,
        false => looks,
    };
    // The fewest baseline rounds a planned run would need (more never
    // hurt: by bisection, each answer a plan's boundaries); `None` where
    // the baseline has them and only the run's rounds are short.
    let needs = |t: f64| {
        if decidable(base.len(), planned, t) || !decidable(most_values, planned, t) {
            return None;
        }
        let (mut lo, mut hi) = (base.len(), most_values);
        while hi > lo + 1 {
            let mid = (lo + hi) / 2;
            match decidable(mid, planned, t) {
                true => hi = mid,
                false => lo = mid,
            }
        }
        Some(recorded.rounds_for(hi))
    };
    choose(
        Strictness {
            budget,
            threshold: 0.0,
            margin: 0.0,
            alpha,
            spread,
            measured: base.len(),
            recorded: recorded.rounds.max(base.len()),
            source: NoiseSource::Baseline,
            most,
            resolution: Resolution::Resolved,
            unit: "rounds",
        },
        &ladder(opts, budget),
        |t, rounds| match rounds == base.len() {
            true => decidable(rounds, looks, t),
            false => decidable(rounds, planned, t),
        },
        needs,
        most_values.max(base.len() + 1),
    )
}

/// `s` at the finest threshold of `ladder` its count resolves
/// (`resolves(threshold, count)`: the pairs it gets, or its baseline's
/// rounds); else at the finest one `affordable` would, short of what it
/// `needs`; else at the coarsest, too noisy.
fn choose(
    mut s: Strictness,
    ladder: &[f64],
    resolves: impl Fn(f64, usize) -> bool,
    needs: impl Fn(f64) -> Option<usize>,
    affordable: usize,
) -> Strictness {
    let coarsest = *ladder.last().expect("a ladder has a rung");
    let have = match s.source {
        NoiseSource::Pilot => s.most,
        NoiseSource::Baseline => s.measured,
    };
    let (threshold, resolution) = if s.spread.is_none() {
        (coarsest, Resolution::Short { needs: None })
    } else if let Some(t) = ladder.iter().copied().find(|&t| resolves(t, have)) {
        (t, Resolution::Resolved)
    } else if let Some(t) = ladder.iter().copied().find(|&t| resolves(t, affordable)) {
        (t, Resolution::Short { needs: needs(t) })
    } else {
        (
            coarsest,
            Resolution::TooNoisy {
                needs: needs(coarsest),
            },
        )
    };
    s.threshold = threshold;
    s.margin = margin(threshold);
    s.resolution = resolution;
    s
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn case(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn a_case_is_alone_or_contended_by_its_threads_or_readers_and_writers() {
        assert_eq!(
            Contention::of(&case(json!({"op": "fence"}))),
            Contention::Alone
        );
        assert_eq!(
            Contention::of(&case(json!({"lock": "x", "threads": 1}))),
            Contention::Alone
        );
        assert_eq!(
            Contention::of(&case(json!({"lock": "x", "threads": 4}))),
            Contention::Contended { threads: 4 }
        );
        assert_eq!(
            Contention::of(&case(json!({"readers": 1, "writers": 1}))).budget(),
            Budget::Contended
        );
        assert_eq!(
            Contention::of(&case(json!({"readers": 0, "writers": 1}))),
            Contention::Alone
        );
    }

    #[test]
    fn each_budget_spends_its_half_over_its_own_cells() {
        let opts = GateOptions::default();
        let counts = Counts {
            quiet: 8,
            contended: 200,
        };
        let quiet = level(&opts, Budget::Quiet, 3, counts);
        let contended = level(&opts, Budget::Contended, 3, counts);
        assert!((quiet - 0.05 * 0.5 / 24.0).abs() < 1e-15);
        assert!((contended - 0.05 * 0.5 / 600.0).abs() < 1e-15);
        // All cells of all budgets of all suites spend at most alpha.
        let total = 3.0 * (8.0 * quiet + 200.0 * contended);
        assert!(total <= opts.alpha + 1e-12, "{total}");
    }

    #[test]
    fn ladders_start_at_the_quiet_threshold_or_at_25_percent() {
        let opts = GateOptions::default();
        assert_eq!(ladder(&opts, Budget::Quiet), [0.05, 0.10, 0.25, 0.5, 1.0]);
        assert_eq!(ladder(&opts, Budget::Contended), [0.25, 0.5, 1.0]);
        let wide = GateOptions {
            quiet_threshold: 6.0,
            threshold: Some(6.0),
            ..Default::default()
        };
        assert_eq!(ladder(&wide, Budget::Quiet), [6.0]);
        assert_eq!(ladder(&wide, Budget::Contended), [6.0]);
    }

    /// Pairs whose log ratios spread by about `sd` (a fixed pattern).
    fn pairs(sd: f64, n: usize) -> (Vec<f64>, Vec<f64>) {
        let base = vec![100.0; n];
        let head = (0..n)
            .map(|i| 100.0 * (sd * ((i * 7 % 11) as f64 - 5.0) / 3.0).exp())
            .collect();
        (base, head)
    }

    #[test]
    fn a_noisier_cell_gets_a_coarser_threshold_and_past_2x_is_too_noisy() {
        let opts = GateOptions::default();
        let alpha = level(
            &opts,
            Budget::Contended,
            3,
            Counts {
                quiet: 8,
                contended: 60,
            },
        );
        let at = |sd: f64| {
            let (b, h) = pairs(sd, PILOT);
            paired(&opts, Budget::Contended, alpha, (&b, &h), (80, 80))
        };
        let (quiet, mid, loud, wild) = (at(0.05), at(0.2), at(0.3), at(2.0));
        assert_eq!(quiet.threshold, 0.25, "{}", quiet.line());
        assert!(mid.threshold > quiet.threshold, "{}", mid.line());
        assert!(
            loud.threshold >= mid.threshold && loud.resolves(),
            "{}",
            loud.line()
        );
        assert!(wild.too_noisy(), "{}", wild.line());
        assert_eq!(wild.threshold, 1.0);
        let Resolution::TooNoisy { needs: Some(needs) } = wild.resolution else {
            panic!("{:?}", wild.resolution)
        };
        assert!(needs > 80, "{needs}");
        // The same noise with fewer pairs than a run affords is short of
        // them, not too noisy: more pairs would gate it.
        let (b, h) = pairs(0.2, PILOT);
        let short = paired(&opts, Budget::Contended, alpha, (&b, &h), (20, 80));
        assert!(
            matches!(short.resolution, Resolution::Short { needs: Some(n) } if n > 20 && n <= 80),
            "{}",
            short.line()
        );
        assert!(
            short.line().starts_with("not gated at "),
            "{}",
            short.line()
        );
        assert!(
            wild.line()
                .starts_with("too noisy to resolve 2x here (spread"),
            "{}",
            wild.line()
        );
        assert!(
            quiet.line().starts_with("gated at >= 25% (spread "),
            "{}",
            quiet.line()
        );
        assert!(quiet.line().ends_with(", 10 pairs)"), "{}", quiet.line());
        // Two pairs measure no spread: the coarsest rung, not resolved.
        let (b, h) = pairs(0.1, 2);
        let few = paired(&opts, Budget::Contended, alpha, (&b, &h), (80, 80));
        assert_eq!(
            few.resolution,
            Resolution::Short { needs: None },
            "{}",
            few.line()
        );
        assert!(
            few.line().contains("too few to measure its noise"),
            "{}",
            few.line()
        );
    }

    #[test]
    fn against_a_stored_baseline_its_own_rounds_give_the_noise() {
        let opts = GateOptions::default();
        let alpha = level(
            &opts,
            Budget::Quiet,
            3,
            Counts {
                quiet: 8,
                contended: 60,
            },
        );
        let looks = stats::SequentialPlan::looks_every(5, 30);
        let quiet: Vec<f64> = (0..20)
            .map(|i| 100.0 * (1.0 + 0.01 * ((i % 5) as f64 - 2.0)))
            .collect();
        let s = stored(
            &opts,
            Budget::Quiet,
            alpha,
            Recorded::full(&quiet),
            (&looks, &looks),
        );
        assert!(s.resolves() && s.threshold <= 0.10, "{}", s.line());
        assert_eq!(
            (s.source, s.measured, s.unit),
            (NoiseSource::Baseline, 20, "rounds")
        );
        let wild: Vec<f64> = (0..20).map(|i| 100.0 * 10f64.powi(i % 4)).collect();
        let w = stored(
            &opts,
            Budget::Quiet,
            alpha,
            Recorded::full(&wild),
            (&looks, &looks),
        );
        assert!(w.too_noisy(), "{}", w.line());
    }

    /// A stored cell with values in half its baseline's rounds needs
    /// twice the rounds a full one needs for the same values, and says
    /// what it has: values of rounds.
    #[test]
    fn a_sparse_stored_cell_names_the_rounds_that_give_its_values() {
        let opts = GateOptions::default();
        let counts = Counts {
            quiet: 8,
            contended: 30,
        };
        let alpha = level(&opts, Budget::Contended, 3, counts);
        let looks = stats::SequentialPlan::looks_every(5, 30);
        let mut short = 0;
        for step in 1..40 {
            let values: Vec<f64> = (0..12)
                .map(|i| 100.0 * (1.0 + 0.01 * step as f64 * ((i % 5) as f64 - 2.0)))
                .collect();
            let full = stored(
                &opts,
                Budget::Contended,
                alpha,
                Recorded::full(&values),
                (&looks, &looks),
            );
            let Resolution::Short { needs: Some(n) } = full.resolution else {
                continue;
            };
            let half = Recorded {
                values: &values,
                rounds: 24,
            };
            let sparse = stored(&opts, Budget::Contended, alpha, half, (&looks, &looks));
            if n > STORED_BASELINE_MOST / 2 {
                // Past the values 60 rounds give at half the rate: a
                // coarser threshold, or none.
                assert!(
                    sparse.threshold > full.threshold || sparse.too_noisy(),
                    "{}",
                    sparse.line()
                );
                continue;
            }
            short += 1;
            assert_eq!(sparse.threshold, full.threshold, "{}", sparse.line());
            assert_eq!(
                sparse.resolution,
                Resolution::Short { needs: Some(2 * n) },
                "{}",
                sparse.line()
            );
            assert!(
                sparse.line().contains("12 values of 24 baseline rounds")
                    && sparse
                        .line()
                        .contains(&format!("a baseline of {} rounds would", 2 * n)),
                "{}",
                sparse.line()
            );
            assert!(
                full.line().contains("12 baseline rounds"),
                "{}",
                full.line()
            );
        }
        assert!(
            short > 0,
            "no spread left a 12-value baseline short of rounds"
        );
    }

    #[test]
    fn percentages_read_as_people_write_them() {
        assert_eq!(pct(0.25), "25%");
        assert_eq!(pct(0.05), "5%");
        assert_eq!(pct(0.125), "12.5%");
        assert_eq!(pct(1.0), "2x");
        assert_eq!(pct(6.0), "7x");
    }
}
