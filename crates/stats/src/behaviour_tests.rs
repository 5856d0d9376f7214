//! How the pieces behave together on simulated cells: no alarms without a
//! change, alarms with one, and a family-wise false-alarm rate that holds
//! across hundreds of cells.

use crate::{bh_reject, compare, holm_reject, mann_whitney_slowdown, Comparison};

/// xorshift64* with Box-Muller: deterministic normal deviates, no dependency.
pub(crate) struct Rng(u64);

impl Rng {
    /// Seeds through splitmix64's finalizer, so that nearby seeds give
    /// unrelated streams (the runs of a seed sweep must be independent).
    pub(crate) fn new(seed: u64) -> Self {
        let mut z = seed.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        Rng((z ^ (z >> 31)) | 1)
    }

    fn uniform(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        let bits = self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) >> 11;
        (bits as f64 + 0.5) / (1u64 << 53) as f64 // in (0, 1)
    }

    pub(crate) fn normal(&mut self) -> f64 {
        let (u, v) = (self.uniform(), self.uniform());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }

    /// `rounds` timings around `scale` with log-normal noise of `sd`.
    fn rounds(&mut self, rounds: usize, scale: f64, sd: f64) -> Vec<f64> {
        (0..rounds)
            .map(|_| scale * (sd * self.normal()).exp())
            .collect()
    }

    /// Like [`Rng::rounds`], but each round lands on a 3x slower level with
    /// probability 0.3: the contended cells whose vCPUs the host moves.
    fn bimodal(&mut self, rounds: usize, scale: f64, sd: f64) -> Vec<f64> {
        (0..rounds)
            .map(|_| {
                let level = if self.uniform() < 0.3 { 3.0 } else { 1.0 };
                level * scale * (sd * self.normal()).exp()
            })
            .collect()
    }
}

fn cells(seed: u64, count: usize, mut cell: impl FnMut(&mut Rng) -> Comparison) -> Vec<Comparison> {
    let mut rng = Rng::new(seed);
    (0..count).map(|_| cell(&mut rng)).collect()
}

fn any(rejected: Vec<bool>) -> bool {
    rejected.into_iter().any(|r| r)
}

#[test]
fn identical_inputs_are_not_significant() {
    let mut rng = Rng::new(1);
    let base = rng.rounds(10, 1000.0, 0.03);
    for delta in [0.0, 0.05] {
        let c = compare(&base, &base, delta, 0.05).unwrap();
        assert_eq!(c.ratio, 1.0);
        assert!(c.ratio_lo < 1.0 && c.ratio_hi > 1.0, "{c:?}");
        assert!(c.p_t >= 0.5 && c.p_rank >= 0.5, "{c:?}");
    }
    // Deterministic metrics: no spread, no change.
    let c = compare(&[500.0; 8], &[500.0; 8], 0.0, 0.05).unwrap();
    assert_eq!((c.ratio, c.p_t, c.p_rank), (1.0, 1.0, 1.0));
}

#[test]
fn twenty_percent_slowdown_with_low_noise_is_significant() {
    let mut rng = Rng::new(2);
    let base = rng.rounds(10, 1000.0, 0.01);
    let head = rng.rounds(10, 1200.0, 0.01);
    let c = compare(&base, &head, 0.05, 0.05).unwrap();
    assert!(c.p_t < 1e-6, "{c:?}");
    // Complete separation of 10 vs 10: 1 / C(20, 10).
    assert!((c.p_rank - 1.0 / 184_756.0).abs() < 1e-15, "{c:?}");
    assert!(
        (c.ratio - 1.2).abs() < 0.02 && c.ratio_lo > 1.05 && c.ratio_hi > 1.2,
        "{c:?}"
    );
    assert!(!c.underpowered, "{c:?}");
    // But not "slower by more than 30%".
    let c = compare(&base, &head, 0.30, 0.05).unwrap();
    assert!(c.p_t > 0.99 && c.p_rank > 0.99, "{c:?}");
}

/// 300 cells, all without change, 10 rounds a side, tested at the boundary
/// (delta = 0). Holm at 0.05 must keep "any false alarm in the run" near 5%:
/// over 40 seeds about 2 runs with a false alarm are expected; allow 5.
#[test]
fn null_cells_rarely_fail_holm() {
    let (mut welch_runs, mut mw_runs, mut bh_runs) = (0, 0, 0);
    for seed in 0..40 {
        let cs = cells(seed, 300, |rng| {
            let base = rng.rounds(10, 1000.0, 0.02);
            let head = rng.rounds(10, 1000.0, 0.02);
            compare(&base, &head, 0.0, 0.05).unwrap()
        });
        let welch: Vec<f64> = cs.iter().map(|c| c.p_t).collect();
        let mw: Vec<f64> = cs.iter().map(|c| c.p_rank).collect();
        welch_runs += any(holm_reject(&welch, 0.05)) as usize;
        mw_runs += any(holm_reject(&mw, 0.05)) as usize;
        // Under the global null, BH's FDR is its family-wise rate too.
        bh_runs += any(bh_reject(&mw, 0.05)) as usize;
    }
    assert!(
        welch_runs <= 5,
        "Welch: {welch_runs} of 40 runs had a false alarm"
    );
    assert!(
        mw_runs <= 5,
        "Mann-Whitney: {mw_runs} of 40 runs had a false alarm"
    );
    assert!(bh_runs <= 5, "BH: {bh_runs} of 40 runs had a false alarm");
}

/// The same with rounds jumping between two levels (the noise measured on
/// 2-vCPU CI machines): the rank test still holds its level.
#[test]
fn bimodal_null_cells_rarely_fail_holm() {
    let mut runs = 0;
    for seed in 100..140 {
        let cs = cells(seed, 300, |rng| {
            let base = rng.bimodal(10, 1000.0, 0.02);
            let head = rng.bimodal(10, 1000.0, 0.02);
            compare(&base, &head, 0.0, 0.05).unwrap()
        });
        let mw: Vec<f64> = cs.iter().map(|c| c.p_rank).collect();
        runs += any(holm_reject(&mw, 0.05)) as usize;
    }
    assert!(runs <= 5, "{runs} of 40 runs had a false alarm");
}

/// 300 cells of which 10 are 20% slower: Holm finds exactly those in most runs.
#[test]
fn injected_slowdowns_are_found() {
    let mut exact_runs = 0;
    for seed in 200..220 {
        let cs = cells(seed, 300, |rng| {
            let slower = rng.uniform() < 1.0 / 30.0;
            let base = rng.rounds(10, 1000.0, 0.02);
            let head = rng.rounds(10, if slower { 1200.0 } else { 1000.0 }, 0.02);
            compare(&base, &head, 0.05, 0.05).unwrap()
        });
        let truth: Vec<bool> = cs.iter().map(|c| c.ratio > 1.1).collect();
        let mw: Vec<f64> = cs.iter().map(|c| c.p_rank).collect();
        exact_runs += (holm_reject(&mw, 0.05) == truth) as usize;
    }
    assert!(
        exact_runs >= 18,
        "only {exact_runs} of 20 runs found exactly the slow cells"
    );
}

/// The reported interval is the test inverted: its lower bound exceeds
/// `1 + delta` exactly when Mann-Whitney rejects at `alpha`.
#[test]
fn interval_agrees_with_the_rank_test() {
    let mut rng = Rng::new(3);
    let (mut rejected, mut kept) = (0, 0);
    for i in 0..200 {
        let base = rng.rounds(8, 1000.0, 0.05);
        let head = rng.rounds(7, 1000.0 * (1.0 + 0.002 * i as f64), 0.05);
        let c = compare(&base, &head, 0.05, 0.05).unwrap();
        let p = mann_whitney_slowdown(&base, &head, 0.05).unwrap().p;
        assert_eq!(c.ratio_lo > 1.05, p <= 0.05, "{c:?}");
        if p <= 0.05 {
            rejected += 1;
        } else {
            kept += 1;
        }
    }
    assert!(rejected > 20 && kept > 20, "{rejected} {kept}");
}

#[test]
fn tiny_cells_are_underpowered_not_silent() {
    let c = compare(&[100.0, 101.0], &[150.0, 151.0], 0.05, 0.05).unwrap();
    // Even 50% slower in both rounds cannot reach p = 0.05 with 2 vs 2.
    assert!(c.p_rank > 0.05 && c.underpowered, "{c:?}");
    assert_eq!(c.rounds_needed, Some(3));
    // One round a side: no Welch test, no variance, need unknown.
    let c = compare(&[100.0], &[150.0], 0.05, 0.05).unwrap();
    assert_eq!((c.p_t, c.underpowered, c.rounds_needed), (1.0, true, None));
    assert_eq!((c.ratio_lo, c.ratio_hi), (0.0, f64::INFINITY));
}

#[test]
fn bad_input_is_an_error() {
    assert!(compare(&[], &[1.0], 0.05, 0.05).is_err());
    assert!(compare(&[1.0, f64::NAN], &[1.0], 0.05, 0.05).is_err());
    assert!(compare(&[1.0], &[0.0], 0.05, 0.05).is_err());
    assert!(compare(&[1.0], &[1.0], 0.05, 0.5).is_err());
    let e = compare(&[1.0, 2.0], &[1.0, -3.0], 0.05, 0.05).unwrap_err();
    assert_eq!(
        e.to_string(),
        "sample `head` value #1 is -3, expected a finite number > 0"
    );
}
