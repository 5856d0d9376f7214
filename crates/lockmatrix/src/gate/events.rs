//! Lock events per acquisition (a qspinlock's pending and queued paths, a
//! ticket lock's waits, an rwsem's sleeps, hand-offs and reader steals:
//! `docs/lock-events.md`) are counts, not times: often 0, bounded, and
//! steady where the lock's protocol is, so a change in what a lock does
//! shows there even where its time is too noisy to gate. They are judged
//! by a robust rule after Linux's kernel test robot's: a rate is a
//! finding when it moved by [`FACTOR`] or more and each side's median
//! lies outside the other side's whole range (min to max), in the
//! direction its `better` calls worse; zeros are counted as [`FLOOR`], so
//! a lock that stops taking its pending path is a factor, not a division
//! by zero. Ten values a side, drawn from one distribution, clear each
//! other's range about once in ten thousand.

use super::report::{CellReport, Effect, Verdict};
use crate::cells::{RunCell, Summary};
use crate::protocol::Better;

/// The factor a rate must move by to be a finding.
pub const FACTOR: f64 = 2.0;

/// Below this many events per acquisition a rate counts as this: the
/// difference between none and a few in ten thousand is noise.
pub const FLOOR: f64 = 0.02;

/// The fewest values a side needs.
pub const LEAST_VALUES: usize = 3;

/// Judges an events cell against its reference values (`base`): its
/// verdict, effect and note. `differs`: why the two are not comparable
/// (another testbed, another unit), or the canary's move.
pub(super) fn judge(
    r: &mut CellReport,
    cell: &RunCell,
    base: &[Option<f64>],
    differs: Vec<String>,
) {
    let values = |v: &[Option<f64>]| -> Option<Vec<f64>> {
        v.iter()
            .map(|x| x.filter(|x| x.is_finite() && *x >= 0.0))
            .collect()
    };
    let (Some(b), Some(h)) = (values(base), values(&cell.samples)) else {
        r.verdict = Verdict::NotComparable;
        r.note = Some("events: a value missing on one side".into());
        return;
    };
    if !differs.is_empty() {
        r.verdict = Verdict::Incomparable;
        r.note = Some(differs.join("; "));
        return;
    }
    if b.len() < LEAST_VALUES || h.len() < LEAST_VALUES {
        r.verdict = Verdict::NotComparable;
        r.note = Some(format!(
            "events: {} and {} values, at least {LEAST_VALUES} a side",
            b.len(),
            h.len()
        ));
        return;
    }
    let (sb, sh) = (Summary::of(&to_some(&b)), Summary::of(&to_some(&h)));
    let [mb, minb, maxb, mh, minh, maxh] = [sb.median, sb.min, sb.max, sh.median, sh.min, sh.max]
        .map(|x| x.expect("values on both sides"));
    let ratio = mh.max(FLOOR) / mb.max(FLOOR);
    let up = mh > maxb && mb < minh;
    let down = mh < minb && mb > maxh;
    let factor = ratio >= FACTOR || ratio <= 1.0 / FACTOR;
    // As a cost (higher is worse), as every effect is shown.
    let cost = match cell.better {
        Better::Lower => ratio,
        Better::Higher => 1.0 / ratio,
    };
    r.effect = Some(Effect {
        ratio: cost,
        lo: cost,
        hi: cost,
        confidence: 1.0,
        p: if factor && (up || down) { 0.0 } else { 1.0 },
    });
    let moved = format!("{mb:.3} -> {mh:.3} per acquisition (x{ratio:.2})");
    (r.verdict, r.note) = match (factor && (up || down), cost > 1.0) {
        (true, true) => (
            Verdict::Regression,
            Some(format!(
                "events {moved}: moved by {FACTOR}x or more, each median outside the other side's range"
            )),
        ),
        (true, false) => (
            Verdict::Improvement,
            Some(format!("events {moved}: fewer of what costs, by {FACTOR}x or more")),
        ),
        (false, _) => (
            Verdict::Unchanged,
            Some(format!(
                "events {moved}: within {FACTOR}x, or the sides' ranges overlap"
            )),
        ),
    };
}

fn to_some(v: &[f64]) -> Vec<Option<f64>> {
    v.iter().copied().map(Some).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::name::known;
    use serde_json::json;

    fn judged(better: Better, base: &[f64], head: &[f64]) -> CellReport {
        let case = json!({"lock": "qspinlock", "threads": 2})
            .as_object()
            .unwrap()
            .clone();
        let some = |v: &[f64]| v.iter().copied().map(Some).collect::<Vec<_>>();
        let cell = RunCell {
            key: crate::cells::CellKey::new(
                &known("lock_unlock"),
                &case,
                &known("pending_per_acquire"),
            ),
            case: case.clone(),
            unit: known("events_per_acquire"),
            better,
            contention: crate::strictness::Contention::of(&case),
            samples: some(head),
            rounds: (0..head.len() as u32).collect(),
        };
        let mut r = CellReport {
            target: known("x86_64"),
            suite: known("spinlock"),
            bench: known("lock_unlock"),
            case,
            metric: known("pending_per_acquire"),
            unit: known("events_per_acquire"),
            better,
            family: false,
            strictness: None,
            verdict: Verdict::NoBaseline,
            head: Summary::of(&some(head)),
            base: Some(Summary::of(&some(base))),
            effect: None,
            look: None,
            rounds_needed: None,
            note: None,
            gated: false,
        };
        judge(&mut r, &cell, &some(base), Vec::new());
        r
    }

    #[test]
    fn a_lock_that_stops_taking_its_pending_path_is_a_regression() {
        let base = [0.31, 0.28, 0.35, 0.30, 0.33];
        let r = judged(Better::Higher, &base, &[0.0, 0.0, 0.001, 0.0, 0.0]);
        assert_eq!(r.verdict, Verdict::Regression, "{:?}", r.note);
        assert!(r.note.unwrap().contains("per acquisition"));
        // The other way round it is an improvement; unchanged is unchanged.
        let back = judged(Better::Higher, &[0.0, 0.0, 0.001, 0.0, 0.0], &base);
        assert_eq!(back.verdict, Verdict::Improvement);
        assert_eq!(
            judged(Better::Higher, &base, &base).verdict,
            Verdict::Unchanged
        );
    }

    #[test]
    fn a_factor_needs_the_ranges_apart_and_apart_needs_the_factor() {
        // Twice as many, but one base round as high as the head's median.
        let r = judged(
            Better::Lower,
            &[0.1, 0.1, 0.1, 0.1, 0.5],
            &[0.2, 0.2, 0.21, 0.19, 0.2],
        );
        assert_eq!(r.verdict, Verdict::Unchanged, "{:?}", r.note);
        // Apart, but by less than the factor.
        let r = judged(Better::Lower, &[0.10, 0.10, 0.11], &[0.15, 0.15, 0.16]);
        assert_eq!(r.verdict, Verdict::Unchanged, "{:?}", r.note);
        // Both: slow-path entries doubled.
        let r = judged(Better::Lower, &[0.10, 0.11, 0.12], &[0.30, 0.31, 0.29]);
        assert_eq!(r.verdict, Verdict::Regression, "{:?}", r.note);
        // Two values a side say nothing.
        let r = judged(Better::Lower, &[0.1, 0.1], &[0.9, 0.9]);
        assert_eq!(r.verdict, Verdict::NotComparable);
        // Nothing and a few in ten thousand are the same.
        let r = judged(Better::Lower, &[0.0, 0.0, 0.0], &[0.003, 0.004, 0.002]);
        assert_eq!(r.verdict, Verdict::Unchanged, "{:?}", r.note);
    }
}
