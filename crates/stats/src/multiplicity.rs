//! Corrections for testing hundreds of cells at once.
//!
//! With 300 cells at a per-cell alpha of 0.05, some 15 false alarms are
//! expected per run. Holm's step-down method keeps the chance of *any* false
//! alarm at alpha, under any dependence between cells: the hard gate.
//! Benjamini-Hochberg keeps the expected *fraction* of false alarms among the
//! flagged cells at q (for independent or positively dependent tests): the
//! longer advisory list.
//!
//! Both return adjusted p-values in input order, defined as in R's `p.adjust`,
//! so a hypothesis is rejected exactly when its adjusted value is <= the level.
//! NaN p-values count as 1 (no evidence).

/// Holm (1979) adjusted p-values: with `p_(1) <= ... <= p_(m)`,
/// `p̃_(i) = min(1, max_{j <= i} (m - j + 1) p_(j))`.
pub fn holm_adjust(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let order = ascending(p);
    let mut adjusted = vec![0.0; m];
    let mut running: f64 = 0.0;
    for (rank, &i) in order.iter().enumerate() {
        running = running.max((m - rank) as f64 * clean(p[i])).min(1.0);
        adjusted[i] = running;
    }
    adjusted
}

/// Which hypotheses Holm's step-down procedure rejects at family-wise error
/// rate `alpha`: the smallest p-values while `p_(i) <= alpha / (m - i + 1)`.
pub fn holm_reject(p: &[f64], alpha: f64) -> Vec<bool> {
    holm_adjust(p).into_iter().map(|a| a <= alpha).collect()
}

/// Benjamini-Hochberg (1995) adjusted p-values (q-values): with
/// `p_(1) <= ... <= p_(m)`, `q_(i) = min(1, min_{j >= i} m p_(j) / j)`.
pub fn bh_adjust(p: &[f64]) -> Vec<f64> {
    let m = p.len();
    let order = ascending(p);
    let mut adjusted = vec![0.0; m];
    let mut running: f64 = 1.0;
    for (rank, &i) in order.iter().enumerate().rev() {
        running = running.min(m as f64 * clean(p[i]) / (rank + 1) as f64);
        adjusted[i] = running;
    }
    adjusted
}

/// Which hypotheses the Benjamini-Hochberg step-up procedure rejects at false
/// discovery rate `q`: all `p_(i)` with `i <= max { k : p_(k) <= k q / m }`.
pub fn bh_reject(p: &[f64], q: f64) -> Vec<bool> {
    bh_adjust(p).into_iter().map(|a| a <= q).collect()
}

fn clean(p: f64) -> f64 {
    if p.is_nan() {
        1.0
    } else {
        p.clamp(0.0, 1.0)
    }
}

/// Indices of `p` by increasing p-value (NaN last), ties in input order.
fn ascending(p: &[f64]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..p.len()).collect();
    order.sort_by(|&a, &b| clean(p[a]).total_cmp(&clean(p[b])));
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: &[f64], b: &[f64]) -> bool {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| (x - y).abs() < 1e-12)
    }

    // Benjamini & Hochberg (1995), section 4.1: 15 p-values from a study of
    // myocardial infarction treatments. At q = 0.05 the BH procedure rejects the
    // four smallest; Bonferroni (0.05 / 15) only the three smallest, and so does
    // Holm (p_(4) = 0.0095 > 0.05 / 12).
    const BH1995: [f64; 15] = [
        0.0201, 0.7590, 0.0001, 0.0278, 0.3240, 0.0004, 0.0298, 0.4262, 0.0019, 0.0344, 0.5719,
        0.0095, 0.0459, 0.6528, 1.000,
    ];

    #[test]
    fn bh_1995_example() {
        let rejected: Vec<f64> = BH1995
            .iter()
            .zip(bh_reject(&BH1995, 0.05))
            .filter(|(_, r)| *r)
            .map(|(p, _)| *p)
            .collect();
        assert_eq!(rejected, [0.0001, 0.0004, 0.0019, 0.0095]);
        let holm: usize = holm_reject(&BH1995, 0.05).iter().filter(|r| **r).count();
        assert_eq!(holm, 3);
        // Adjusted values worked by hand from the definitions above (those of
        // R's p.adjust), for the sorted p-values:
        // BH: m p_(i) / i, then running minimum from the largest.
        let sorted = [
            0.0001, 0.0004, 0.0019, 0.0095, 0.0201, 0.0278, 0.0298, 0.0344, 0.0459, 0.3240, 0.4262,
            0.5719, 0.6528, 0.7590, 1.000,
        ];
        let bh = [
            0.0015,
            0.003,
            0.0095,
            0.035625,
            0.0603,
            0.447 / 7.0, // 15 * 0.0298 / 7, the running minimum for ranks 6 and 7
            0.447 / 7.0,
            0.0645,
            0.0765,
            0.486,
            6.393 / 11.0,
            0.714875,
            9.792 / 13.0,
            11.385 / 14.0,
            1.0,
        ];
        assert!(close(&bh_adjust(&sorted), &bh), "{:?}", bh_adjust(&sorted));
        // Holm: (15 - i + 1) p_(i), then running maximum, capped at 1:
        // 15 * 0.0001, 14 * 0.0004, 13 * 0.0019, 12 * 0.0095, 11 * 0.0201,
        // 10 * 0.0278, then 0.2682 and 0.2752 are raised to 0.278, 7 * 0.0459,
        // and 6 * 0.3240 = 1.944 is capped at 1.
        let holm = [
            0.0015, 0.0056, 0.0247, 0.114, 0.2211, 0.278, 0.278, 0.278, 0.3213, 1.0, 1.0, 1.0, 1.0,
            1.0, 1.0,
        ];
        assert!(
            close(&holm_adjust(&sorted), &holm),
            "{:?}",
            holm_adjust(&sorted)
        );
        // Input order is kept.
        let shuffled = bh_adjust(&BH1995);
        assert!((shuffled[2] - 0.0015).abs() < 1e-12 && (shuffled[11] - 0.035625).abs() < 1e-12);
    }

    // The worked example of Holm's method on Wikipedia ("Holm-Bonferroni
    // method", Example): four hypotheses with p = 0.01, 0.04, 0.03, 0.005 at
    // alpha = 0.05. H4 (0.005 <= 0.05/4) and H1 (0.01 <= 0.05/3) are rejected;
    // H3 (0.03 > 0.05/2) stops the procedure, so H2 and H3 are retained.
    #[test]
    fn holm_textbook_example() {
        let p = [0.01, 0.04, 0.03, 0.005];
        assert_eq!(holm_reject(&p, 0.05), [true, false, false, true]);
        // 4 * 0.005 = 0.02; 3 * 0.01 = 0.03; 2 * 0.03 = 0.06; max(1 * 0.04, 0.06).
        assert!(close(&holm_adjust(&p), &[0.03, 0.06, 0.06, 0.02]));
    }

    #[test]
    fn edge_cases() {
        assert!(holm_adjust(&[]).is_empty() && bh_adjust(&[]).is_empty());
        assert_eq!(holm_adjust(&[0.2]), [0.2]);
        assert_eq!(bh_adjust(&[f64::NAN, 0.01]), [1.0, 0.02]);
        assert_eq!(holm_adjust(&[f64::NAN, 0.01]), [1.0, 0.02]);
        // BH is never stricter than Holm.
        let bh = bh_adjust(&BH1995);
        assert!(holm_adjust(&BH1995).iter().zip(&bh).all(|(h, b)| b <= h));
    }
}
