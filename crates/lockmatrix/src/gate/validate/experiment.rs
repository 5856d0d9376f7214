//! The experiment: A/A evaluations of the recordings (resampled, or each
//! recording as it was made), with injected slowdowns for the power.

use super::cells::{is_count, suite_mut, suite_of, timing};
use super::measure::*;
use super::rng::SplitMix64;
use super::tally::Tally;
use crate::name::Name;
use crate::results::{Run, Status};
use std::collections::BTreeMap;

/// Resampling: A/A draws of `opts.rounds` pairs from the recordings, and
/// the same draws with one cell slowed by each of [`SLOWDOWNS`].
pub fn resample(
    recordings: &[Recording],
    opts: &ValidateOptions,
) -> Result<Validation, ValidateError> {
    opts.check()?;
    let (parts, notes) = gating_parts(recordings)?;
    // Per (target, suite) of the first recording: the pool of recorded
    // pairs, as (recording, round), over every recording that has it.
    let mut pools: BTreeMap<(Name, Name), Vec<(usize, u32)>> = BTreeMap::new();
    for t in &parts[0].0.targets {
        for s in &t.suites {
            let pool = pools.entry((t.name.clone(), s.suite.clone())).or_default();
            for (j, (head, base)) in parts.iter().enumerate() {
                let rounds = |run: &Run| -> std::collections::BTreeSet<u32> {
                    suite_of(run, &t.name, &s.suite)
                        .map(|s| timing(&s.samples).map(|x| x.round).collect())
                        .unwrap_or_default()
                };
                let both = rounds(head);
                pool.extend(rounds(base).intersection(&both).map(|&r| (j, r)));
            }
        }
    }
    let smallest = pools.values().map(Vec::len).min().unwrap_or(0);
    if smallest < opts.rounds {
        return Err(ValidateError::TooFewPairsRecorded {
            smallest,
            wanted: opts.rounds,
        });
    }
    let mut rng = SplitMix64::new(opts.seed);
    let mut tally = Tally::default();
    for _ in 0..opts.evaluations {
        let (mut head, mut base) = (parts[0].0.clone(), parts[0].1.clone());
        // The draw is what the gate's plan gives a cell: its last look.
        if let Some(a) = head.against.as_mut() {
            a.pairs = Some(opts.rounds as u32);
        }
        for ((target, suite), pool) in &pools {
            let mut order: Vec<usize> = (0..pool.len()).collect();
            rng.shuffle(&mut order);
            let draw: Vec<(usize, u32)> = order[..opts.rounds].iter().map(|&i| pool[i]).collect();
            for (side, run) in [(0, &mut head), (1, &mut base)] {
                let picked = draw
                    .iter()
                    .enumerate()
                    .flat_map(|(k, &(j, r))| {
                        let from = if side == 0 { &parts[j].0 } else { &parts[j].1 };
                        let samples = suite_of(from, target, suite)
                            .map(|s| s.samples.clone())
                            .unwrap_or_default();
                        samples
                            .into_iter()
                            .filter(move |x| x.round == r && !is_count(x))
                            .map(move |mut x| {
                                x.round = k as u32;
                                x
                            })
                    })
                    .collect::<Vec<_>>();
                if let Some(s) = suite_mut(run, target, suite) {
                    let counts: Vec<_> =
                        s.samples.iter().filter(|x| is_count(x)).cloned().collect();
                    s.samples = picked;
                    s.samples.extend(counts);
                }
            }
        }
        tally.evaluate(&head, &base, opts, &mut rng)?;
    }
    let ids = recordings.iter().map(|(h, _)| h.run_id.clone()).collect();
    let mut v = tally.finish(Method::Resample, ids, &parts[0].0, opts, notes);
    v.order_effect = super::order::order_effect(&parts, opts.seed);
    Ok(v)
}

/// End to end: every recording gated as it was made (A/A), and
/// `opts.evaluations` injections per slowdown spread over them.
pub fn end_to_end(
    recordings: &[Recording],
    opts: &ValidateOptions,
) -> Result<Validation, ValidateError> {
    opts.check()?;
    let (parts, notes) = gating_parts(recordings)?;
    let mut rng = SplitMix64::new(opts.seed);
    let mut tally = Tally::default();
    let mut gating = Vec::new();
    for (head, base) in &parts {
        gating.push(tally.aa(head, base, opts)?);
    }
    for j in 0..opts.evaluations.max(parts.len()) {
        let (head, base) = &parts[j % parts.len()];
        tally.inject(head, base, &gating[j % parts.len()], opts, &mut rng)?;
    }
    let ids = recordings.iter().map(|(h, _)| h.run_id.clone()).collect();
    let mut v = tally.finish(Method::EndToEnd, ids, &parts[0].0, opts, notes);
    v.order_effect = super::order::order_effect(&parts, opts.seed);
    Ok(v)
}

/// Every cell, end to end: each gating cell of each recording, as it was
/// made, slowed by each of [`SLOWDOWNS`] at or above the threshold the
/// gate chose for it there (below it a slowdown is not meant to fail), one
/// gate apiece: each cell's own power, one injection per recording, where
/// [`end_to_end`]'s random cell gives a cell one to three.
pub fn every_cell(
    recordings: &[Recording],
    opts: &ValidateOptions,
) -> Result<Validation, ValidateError> {
    opts.check()?;
    let (parts, notes) = gating_parts(recordings)?;
    let mut tally = Tally::default();
    for (head, base) in &parts {
        for cell in tally.aa(head, base, opts)? {
            let least = cell.threshold.unwrap_or(0.0);
            tally.inject_cell(head, base, &cell, opts, least)?;
        }
    }
    let ids = recordings.iter().map(|(h, _)| h.run_id.clone()).collect();
    Ok(tally.finish(Method::EveryCell, ids, &parts[0].0, opts, notes))
}

/// The parts of the recordings whose timings gate: targets that are not
/// run under QEMU, and of them the suites that ran ok with every check
/// passed on both sides. The notes name what was left out.
fn gating_parts(recordings: &[Recording]) -> Result<(Vec<Recording>, Vec<String>), ValidateError> {
    if recordings.is_empty() {
        return Err(ValidateError::NoRecordings);
    }
    let mut notes = Vec::new();
    let mut parts = Vec::new();
    for (head, base) in recordings {
        let keep = |run: &Run, notes: &mut Vec<String>| {
            let mut part = run.clone();
            part.targets.retain(|t| {
                if crate::policy::times_are_advisory(t.runner) {
                    notes.push(format!(
                        "{}: QEMU timings are advisory: not validated",
                        t.name
                    ));
                    return false;
                }
                if let Status::NotRun(why) = &t.status {
                    notes.push(format!("{}: not run: {why}", t.name));
                    return false;
                }
                true
            });
            for t in &mut part.targets {
                let name = t.name.clone();
                t.suites.retain(|s| {
                    let ok = s.status == Status::Ok && s.checks.iter().all(|c| c.ok);
                    if !ok {
                        notes.push(format!(
                            "{name}/{}: {}: left out",
                            s.suite,
                            s.status.label()
                        ));
                    }
                    ok
                });
                t.status = Status::Ok;
            }
            part.targets.retain(|t| !t.suites.is_empty());
            part
        };
        let h = keep(head, &mut notes);
        let b = keep(base, &mut notes);
        if h.targets.is_empty() || b.targets.is_empty() {
            let left_out = if notes.is_empty() {
                String::new()
            } else {
                format!(" ({})", notes.join("; "))
            };
            return Err(ValidateError::NothingGates {
                run: head.run_id.clone(),
                left_out,
            });
        }
        parts.push((h, b));
    }
    notes.sort();
    notes.dedup();
    Ok((parts, notes))
}
