//! `validate-gate`: the accuracy of the pull-request gate, measured on
//! this machine.
//!
//! Pull requests gate timing with `--against`: base and head alternate
//! round by round on one machine and each timing cell gets the
//! paired signed-rank test, Holm across the family. This module measures
//! that rule on A/A recordings, `matrix --against HEAD` runs (both sides
//! the same code, so every regression is a false alarm), with the real
//! gate ([`evaluate`](super::evaluate())) against the recorded base run:
//!
//! - [`resample`]: each evaluation draws `rounds` of the recorded pairs at
//!   random (the same rounds for every cell of a suite, so a noisy moment
//!   stays one pair), pooled over the recordings, and gates them (A/A).
//!   Power: the same draw with every head value of one randomly chosen
//!   timing cell made slower by each of [`SLOWDOWNS`]; detected when that
//!   cell's verdict is `regression`.
//! - [`end_to_end`]: every recording gated as it was made, all its pairs
//!   (A/A across separate invocations of the matrix), and the injections
//!   spread over them.
//! - [`every_cell`]: end to end too, every gating cell of every recording
//!   injected alone at each slowdown its threshold is meant to catch: each
//!   cell's own power.
//!
//! - [`order::order_effect`]: the AB/BA order effect of the recordings'
//!   pairs, the recording the unit.
//!
//! Only targets whose timings gate count (every runner but `qemu`); suites
//! that failed are left out and named in the notes. Deterministic for a
//! seed. Pure: the gate runs on the runs in memory.

mod cells;
mod experiment;
mod measure;
mod order;
mod render;
mod rng;
mod tally;

pub use experiment::{end_to_end, every_cell, resample};
pub use measure::{
    summary, BudgetPower, CellPower, Detection, Method, Spread, ValidateError, ValidateOptions,
    Validation, GOAL_MAX_RATE, GOAL_MIN_EVALUATIONS, GOAL_POWER, MAX_EVALUATIONS, SLOWDOWNS,
};
pub use measure::{OrderEffect, Recording};
pub use render::report_json;
#[cfg(test)]
pub(crate) use rng::SplitMix64;

#[cfg(test)]
mod tests {
    use super::tally::Tally;
    use super::*;
    use crate::gate::evaluate::{evaluate, Reference};
    use crate::gate::tests::{cell, noisy_cells, one_suite, run, suite_run, target, Rng};
    use crate::gate::GateOptions;
    use crate::results::{Run, Status};
    use crate::strictness::Budget;
    use serde_json::json;

    /// A/A recording: head and base of one native target, `cells` family
    /// cells of `rounds` pairs with log-normal noise `sigma` (and 5% outlier
    /// rounds), both sides from the same distribution.
    fn recording(seed: u64, cells: usize, rounds: usize, sigma: f64) -> Recording {
        let mut rng = Rng::new(seed);
        let mut side = |id: &str| {
            let mut r = one_suite(
                "x86_64",
                "native",
                "atomic",
                &noisy_cells(&mut rng, cells, rounds, sigma, |_| 1.0),
            );
            r.run_id = id.into();
            r
        };
        (side(&format!("aa{seed}")), side(&format!("aa{seed}/base")))
    }

    fn opts(evaluations: usize, rounds: usize, seed: u64) -> ValidateOptions {
        ValidateOptions {
            evaluations,
            rounds,
            seed,
            ..ValidateOptions::default()
        }
    }

    #[test]
    fn validate_null_data_rarely_false_alarms_and_bounds_the_rate() {
        let v = resample(&[recording(1, 12, 40, 0.02)], &opts(100, 20, 7)).unwrap();
        assert_eq!(v.evaluations, 100);
        assert!(v.false_alarms <= 5, "{}", v.terminal());
        let upper = stats::clopper_pearson_upper(v.false_alarms as u64, 100, 0.05).unwrap();
        assert_eq!(v.false_alarm_upper95, upper);
        assert_eq!(
            (v.cells_per_evaluation.min, v.cells_per_evaluation.max),
            (12, 12)
        );
        assert_eq!((v.base_rounds.min, v.head_rounds.max), (20, 20));
        // The gate's own level: half of alpha for the 1-thread cells,
        // over the suite's 12.
        assert_eq!(v.cell_alpha, 0.05 * 0.5 / 12.0);
        let j = v.json();
        assert_eq!(j["evaluations"], 100);
        assert_eq!(j["rounds_per_side"], 20);
        assert_eq!(j["details"]["method"], "resample");
        assert_eq!(j["power"].as_object().unwrap().len(), SLOWDOWNS.len());
        assert!(v.terminal().contains("false alarms in 100 evaluations"));
    }

    #[test]
    fn validate_upper_bound_of_0_in_100_and_the_goal() {
        let (r, _) = recording(2, 3, 8, 0.02);
        let o = opts(100, 4, 1);
        // The goal's power is the 1-thread cells' at 10%: contended cells
        // caught 1 time in 10 there (their thresholds start at 25%) leave
        // it as it is.
        let tally = |evaluations, detected| {
            let mut t = Tally {
                evaluations,
                cells: vec![12; evaluations],
                ..Tally::default()
            };
            t.power[1] = [detected + 10, 0, detected + 10, 0, 200, 0];
            t.per_budget.entry(Budget::Quiet).or_default()[1] = (100, detected);
            t.per_budget.entry(Budget::Contended).or_default()[1] = (100, 10);
            t
        };
        let v = tally(100, 90).finish(Method::Resample, vec![], &r, &o, vec![]);
        // One-sided 95% Clopper-Pearson for 0 of 100: 1 - 0.05^(1/100).
        assert!(
            (v.false_alarm_upper95 - 0.0295).abs() < 1e-4,
            "{}",
            v.false_alarm_upper95
        );
        assert!(v.goal_met());
        assert!(!tally(99, 90)
            .finish(Method::Resample, vec![], &r, &o, vec![])
            .goal_met());
        assert!(
            !tally(100, 70)
                .finish(Method::Resample, vec![], &r, &o, vec![])
                .goal_met(),
            "power 0.7 misses the goal"
        );
        // No 1-thread cell measured: the goal's power is not there to meet.
        let mut t = tally(100, 90);
        t.per_budget.remove(&Budget::Quiet);
        let v = t.finish(Method::Resample, vec![], &r, &o, vec![]);
        assert_eq!(v.goal_power(), None);
        assert!(!v.goal_met());
        assert!(v
            .terminal()
            .contains("1-thread cells' power >= 0.8 at +10%): NOT met"));
    }

    #[test]
    fn validate_injects_one_cell_of_each_family_per_evaluation() {
        // Ten 1-thread cells and two contended ones, 1% noise.
        let mut rng = Rng::new(31);
        let mut side = || {
            let mut cells = noisy_cells(&mut rng, 10, 20, 0.01, |_| 1.0);
            for lock in ["tas", "ticket"] {
                let values = (0..20).map(|_| rng.timing(300.0, 0.01)).collect();
                cells.push(cell(
                    "lock_unlock",
                    json!({"lock": lock, "threads": 2}),
                    values,
                ));
            }
            one_suite("x86_64", "native", "spinlock", &cells)
        };
        let v = resample(&[(side(), side())], &opts(40, 20, 5)).unwrap();
        assert_eq!(v.cells_per_evaluation.max, 12);
        let family = |b: Budget| {
            v.power_per_budget
                .iter()
                .find(|p| p.budget == b)
                .unwrap_or_else(|| panic!("{}", v.terminal()))
        };
        // Every evaluation injected one of each: 40 apiece at each slowdown,
        // where a draw over all twelve cells would give the two contended
        // ones about 7.
        for b in Budget::ALL {
            assert!(
                family(b).at.iter().all(|&(n, _)| n == 40),
                "{:?}",
                family(b)
            );
        }
        assert_eq!(v.power[1].evaluations, 80);
        // 1% noise: a 1-thread cell 10% slower (at its threshold) is
        // mostly caught; a contended cell 10% slower is within its 25%
        // threshold's margin and never is.
        assert!(
            family(Budget::Quiet).rate(1).unwrap() >= 0.5,
            "{}",
            v.terminal()
        );
        assert_eq!(
            family(Budget::Contended).rate(1),
            Some(0.0),
            "{}",
            v.terminal()
        );
        assert_eq!(
            family(Budget::Contended).rate(4),
            Some(1.0),
            "{}",
            v.terminal()
        );
        assert_eq!(v.goal_power(), family(Budget::Quiet).rate(1));
        let text = v.terminal();
        assert!(text.contains("power of the 1-thread cells: +5%"), "{text}");
        assert!(
            text.contains("power of the contended cells: +5% 0/40 = 0.00"),
            "{text}"
        );
        let j = v.json();
        assert_eq!(
            j["details"]["power_per_family"]["contended"]["1.00"]["detected"],
            40
        );
        assert_eq!(j["details"]["goal"]["power_at_10_of"], "1-thread cells");
    }

    #[test]
    fn validate_low_noise_10_percent_slowdown_is_detected() {
        let v = resample(&[recording(3, 12, 60, 0.01)], &opts(40, 30, 3)).unwrap();
        let [five, ten, twenty] = [&v.power[0], &v.power[1], &v.power[2]];
        assert_eq!(
            (five.slowdown, ten.slowdown, twenty.slowdown),
            (0.05, 0.10, 0.25)
        );
        // 50% and 2x, the contended cells' coarser thresholds, too.
        assert_eq!((v.power[3].slowdown, v.power[4].slowdown), (0.5, 1.0));
        assert!(
            ten.rate >= 0.8 && twenty.rate >= ten.rate,
            "{}",
            v.terminal()
        );
        // These are 1-thread cells: their threshold is 5%, and with 1%
        // noise 30 pairs catch it too.
        assert!(five.rate >= 0.8, "{}", v.terminal());
        assert_eq!(v.json()["power"]["0.10"], ten.rate);
        // Each injected cell is reported at every slowdown, and the cells'
        // injections and detections add up to the totals.
        assert!((1..=12).contains(&v.power_per_cell.len()));
        for (i, d) in v.power.iter().enumerate() {
            let injected: usize = v.power_per_cell.iter().map(|c| c.at[i].0).sum();
            let detected: usize = v.power_per_cell.iter().map(|c| c.at[i].1).sum();
            assert_eq!((injected, detected), (d.evaluations, d.detected));
        }
    }

    #[test]
    fn validate_is_deterministic_for_a_seed() {
        let rec = [recording(5, 6, 30, 0.05)];
        let a = resample(&rec, &opts(10, 20, 42)).unwrap();
        let b = resample(&rec, &opts(10, 20, 42)).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.json(), b.json());
    }

    #[test]
    fn validate_counts_only_gating_targets_and_ok_suites() {
        let mut rng = Rng::new(6);
        let mut side = || {
            let mut broken = suite_run(
                "spinlock",
                &noisy_cells(&mut rng, 3, 10, 0.02, |_| 1.0),
                vec![],
            );
            broken.status = Status::Failed(crate::results::Failure::Crashed { signal: 11 });
            run(vec![
                target(
                    "x86_64",
                    "native",
                    vec![
                        suite_run(
                            "atomic",
                            &noisy_cells(&mut rng, 5, 10, 0.02, |_| 1.0),
                            vec![],
                        ),
                        broken,
                    ],
                ),
                target(
                    "aarch64",
                    "qemu",
                    vec![suite_run(
                        "atomic",
                        &noisy_cells(&mut rng, 7, 10, 0.5, |_| 1.0),
                        vec![],
                    )],
                ),
            ])
        };
        let rec = (side(), side());
        let v = resample(std::slice::from_ref(&rec), &opts(5, 8, 6)).unwrap();
        assert_eq!(v.targets, ["x86_64"]);
        assert_eq!(v.cells_per_evaluation.max, 5);
        assert!(
            v.notes.iter().any(|n| n.contains("aarch64: QEMU")),
            "{:?}",
            v.notes
        );
        assert!(
            v.notes.iter().any(|n| n.contains("x86_64/spinlock")),
            "{:?}",
            v.notes
        );
        let qemu_only = {
            let mut r = rec.clone();
            r.0.targets.retain(|t| t.name == "aarch64");
            r.1.targets.retain(|t| t.name == "aarch64");
            r
        };
        let err = format!("{:#}", resample(&[qemu_only], &opts(5, 8, 6)).unwrap_err());
        assert!(err.contains("no suite run ok on both sides"), "{err}");
    }

    #[test]
    fn validate_too_few_pairs_and_bad_options_are_named() {
        let err = resample(&[recording(7, 4, 6, 0.02)], &opts(3, 20, 1)).unwrap_err();
        assert!(
            format!("{err:#}").contains("hold 6 pairs of some suite; drawing 20"),
            "{err:#}"
        );
        let err = resample(&[recording(7, 4, 6, 0.02)], &opts(0, 4, 1)).unwrap_err();
        assert!(format!("{err:#}").contains("--evaluations is 0"), "{err:#}");
    }

    #[test]
    fn validate_pools_pairs_across_recordings_and_gates_each_end_to_end() {
        let recs: Vec<Recording> = (10..13).map(|seed| recording(seed, 6, 12, 0.01)).collect();
        // 3 x 12 pairs in the pool: a draw of 30 needs more than one recording.
        let v = resample(&recs, &opts(20, 30, 9)).unwrap();
        assert_eq!(v.head_rounds.max, 30);
        assert_eq!(v.run_ids.len(), 3);
        let e = end_to_end(&recs, &opts(30, 12, 9)).unwrap();
        assert_eq!(e.method, Method::EndToEnd);
        assert_eq!(e.evaluations, 3);
        assert!(e.false_alarms <= 1, "{}", e.terminal());
        assert_eq!(e.power[1].evaluations, 30);
        let j = report_json(&v, Some(&e), None);
        assert_eq!(j["end_to_end"]["evaluations"], 3);
        assert_eq!(j["end_to_end"]["details"]["method"], "end_to_end");
    }

    #[test]
    fn validate_every_cell_injects_each_cell_of_each_recording_from_its_threshold_up() {
        let recs: Vec<Recording> = (20..23).map(|seed| recording(seed, 5, 30, 0.01)).collect();
        let v = every_cell(&recs, &opts(1, 30, 1)).unwrap();
        assert_eq!(v.method, Method::EveryCell);
        assert_eq!(v.evaluations, 3);
        // Five cells, each injected once per recording from its threshold
        // up: 5% or 10% here, as each recording's pilot chose it.
        assert_eq!(v.power_per_cell.len(), 5);
        for c in &v.power_per_cell {
            assert!(c.at[0].0 <= 3, "{c:?}");
            assert!(c.at[1..].iter().all(|&(n, _)| n == 3), "{c:?}");
            // 1% noise and 30 pairs: 25% and more never escape.
            assert!(c.at[2..].iter().all(|&(n, d)| d == n), "{c:?}");
        }
        let at_5: usize = v.power_per_cell.iter().map(|c| c.at[0].0).sum();
        assert_eq!(v.power[0].evaluations, at_5);
        assert_eq!(v.power[1].evaluations, 15);
        let j = report_json(&v, None, Some(&v));
        assert_eq!(j["every_cell"]["details"]["method"], "every_cell");
        // A coarser threshold is injected from there up only.
        let coarse = ValidateOptions {
            gate: crate::gate::GateOptions {
                quiet_threshold: 0.5,
                ..crate::gate::GateOptions::default()
            },
            ..opts(1, 30, 1)
        };
        let v = every_cell(&recs, &coarse).unwrap();
        let injected: Vec<usize> = v.power.iter().map(|d| d.evaluations).collect();
        assert_eq!(injected, [0, 0, 0, 15, 15]);
    }

    #[test]
    fn validate_a_summary_keeps_the_timing_cells_and_the_failed_checks_only() {
        let mut rng = Rng::new(21);
        let check = |ok: bool| crate::protocol::Check {
            suite: "spinlock".into(),
            bench: "lock_unlock".into(),
            case: json!({"lock": "ticket"}).as_object().unwrap().clone(),
            name: "mutual_exclusion".into(),
            ok,
            details: json!({"violations": u32::from(!ok)}),
        };
        let mut cells = noisy_cells(&mut rng, 2, 5, 0.01, |_| 1.0);
        // A per-thread maximum: shown, never gated.
        let mut outside = cell(
            "stress",
            json!({"lock": "tas", "threads": 2}),
            vec![100.0; 5],
        );
        outside.metric = "acquisitions_max";
        cells.push(outside);
        let mut r = one_suite("x86_64", "native", "spinlock", &cells);
        r.targets[0].suites[0].checks = vec![check(true), check(false), check(true)];
        let kept = summary(&r);
        let s = &kept.targets[0].suites[0];
        assert_eq!(s.checks, vec![check(false)]);
        assert_eq!(s.samples.len(), 2 * 5);
        assert!(s.samples.iter().all(|x| x.metric == "ticks_per_op"));
        // What the gate says of it is what it says of the recording.
        let verdicts = |run: &Run| {
            let report = evaluate(run, &Reference::Base(&r), &GateOptions::default()).unwrap();
            (report.failed_checks.len(), report.failed())
        };
        assert_eq!(verdicts(&kept), verdicts(&r));
        assert_eq!(verdicts(&kept).0, 1);
    }

    #[test]
    fn validate_a_cell_shown_not_gated_is_never_injected() {
        let mut rng = Rng::new(14);
        let mut side = || {
            let mut cells = noisy_cells(&mut rng, 2, 12, 0.01, |_| 1.0);
            let mut outside = cell(
                "stress",
                json!({"lock": "tas", "threads": 2}),
                vec![100.0; 12],
            );
            outside.metric = "acquisitions_max";
            cells.push(outside);
            one_suite("x86_64", "native", "spinlock", &cells)
        };
        let v = resample(&[(side(), side())], &opts(10, 10, 1)).unwrap();
        assert_eq!(v.cells_per_evaluation.max, 2);
        assert!(v.power_per_cell.iter().all(|c| !c.cell.contains("stress")));
    }
}
