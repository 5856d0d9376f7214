//! What each cell of a run is compared with: the base revision's run
//! beside it, or the committed baselines (and, where another compiler
//! counted them, a recount of their commit standing in for their counts).

use super::ordering::Footprints;
use super::report::*;
use crate::acknowledge::Acknowledgement;
use crate::baseline::{self, Baseline, Testbed};
use crate::cells::{self, CellKey, RunCell};
use crate::commit::CommitId;
use crate::name::Name;
use crate::protocol::Better;
use crate::results::{Run, Status, SuiteRun, TargetResult};
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// What a run is compared with.
pub enum Reference<'a> {
    /// The committed baselines: per `(target, suite)` of the run, the file's
    /// content (`None`: no file).
    Stored {
        dir: String,
        files: BTreeMap<(Name, Name), Option<Baseline>>,
        /// The `Lockmatrix-Ordering:` trailers between the baselines'
        /// commits and the run's ([`Reference::acknowledge`]).
        acknowledged: Vec<Acknowledgement>,
        /// The baselines' commits counted again with this run's toolchain
        /// (`matrix::Options::recount`), where the baselines' counts came
        /// from another compiler: their counts and footprints stand in
        /// for the stored ones ([`Reference::recounted`]).
        recounts: Vec<&'a Run>,
    },
    /// The base revision's run, made in the same session with its rounds
    /// interleaved with the head's (`--against`): round `i` of a cell on
    /// both sides forms a pair.
    Base(&'a Run),
    /// Nothing to compare with, by request: `--crate` without
    /// `--against-crate` (the baselines hold the suites' own locks, not
    /// the crate's). Only what needs no reference is judged: checks,
    /// broken targets, models, Miri.
    Nothing { why: String },
}

impl<'a> Reference<'a> {
    /// Stored baselines whose counts are taken from `recounts` wherever a
    /// recount of the baseline's commit ran the target and suite.
    pub fn recounted<'b>(self, with: &'b [Run]) -> Reference<'b>
    where
        'a: 'b,
    {
        match self {
            Reference::Stored {
                dir,
                files,
                acknowledged,
                mut recounts,
            } => {
                recounts.extend(with);
                Reference::Stored {
                    dir,
                    files,
                    acknowledged,
                    recounts,
                }
            }
            base => base,
        }
    }
}

impl Reference<'_> {
    /// The `(commit, targets)` whose stored counts do not compare with
    /// `run`'s (another compiler, emulator release or CPU choice built or
    /// counted them) and are worth counting again with this run's
    /// toolchain: each commit's targets with such a suite.
    pub fn to_recount(&self, run: &Run) -> BTreeMap<CommitId, Vec<Name>> {
        let mut out: BTreeMap<CommitId, Vec<Name>> = BTreeMap::new();
        let Reference::Stored { files, .. } = self else {
            return out;
        };
        for t in run.targets.iter().filter(|t| t.status == Status::Ok) {
            for s in &t.suites {
                let testbed = Testbed::of_suite(run, t, &s.suite);
                let Some(Some(b)) = files.get(&(t.name.clone(), s.suite.clone())) else {
                    continue;
                };
                // Counts, or ordering footprints: both come from the binary.
                let counted =
                    s.samples.iter().any(|x| x.kind().exact()) || !s.static_footprint.is_empty();
                let same = same_binary(b.binary.as_ref(), t, s);
                if counted && !same && !b.testbed.count_differences(&testbed).is_empty() {
                    let targets = out.entry(b.commit.clone()).or_default();
                    if !targets.contains(&t.name) {
                        targets.push(t.name.clone());
                    }
                }
            }
        }
        out
    }

    /// The commits the stored baselines were recorded at, for reading the
    /// trailers between them and the run's commit.
    pub fn baseline_commits(&self) -> Vec<CommitId> {
        let Reference::Stored { files, .. } = self else {
            return Vec::new();
        };
        let commits: std::collections::BTreeSet<CommitId> =
            files.values().flatten().map(|b| b.commit.clone()).collect();
        commits.into_iter().collect()
    }

    /// The baseline files recorded at `commit`, for errors that name them.
    pub fn files_at(&self, commit: &CommitId) -> Vec<std::path::PathBuf> {
        let Reference::Stored { dir, files, .. } = self else {
            return Vec::new();
        };
        files
            .iter()
            .filter(|(_, b)| b.as_ref().is_some_and(|b| b.commit == *commit))
            .map(|((t, s), _)| baseline::path(Path::new(dir), t, s))
            .collect()
    }

    /// Adds trailers read for stored baselines (an `--against` run carries
    /// its own in `run.against`).
    pub fn acknowledge(&mut self, acks: Vec<Acknowledgement>) {
        if let Reference::Stored { acknowledged, .. } = self {
            acknowledged.extend(acks);
        }
    }

    /// The trailers that acknowledge ordering changes against it.
    pub(super) fn acknowledgements<'r>(&'r self, run: &'r Run) -> &'r [Acknowledgement] {
        match self {
            Reference::Stored { acknowledged, .. } => acknowledged,
            Reference::Base(_) => run.against.as_ref().map_or(&[], |a| &a.acknowledged),
            Reference::Nothing { .. } => &[],
        }
    }

    /// How reports name the reference.
    pub fn describe(&self) -> String {
        match self {
            Reference::Stored { dir, .. } => format!("the baselines in {dir}"),
            Reference::Nothing { why } => format!("nothing ({why})"),
            Reference::Base(base) if base.subject.is_some() => {
                let b = base.subject.as_ref().expect("matched");
                format!("{} ({})", b.label(), b.source)
            }
            Reference::Base(base) => match &base.against {
                Some(a) => format!(
                    "the base revision {} ({})",
                    a.rev,
                    crate::commit::shown(a.commit.as_ref())
                ),
                None => format!("the base run {}", base.run_id),
            },
        }
    }
}

/// The reference cells of one suite run, and what makes them comparable.
pub(super) struct SuiteReference {
    pub(super) cells: BTreeMap<CellKey, RefCell>,
    /// What the timings and the counts were measured on: the same but
    /// where a recount of the baseline's commit stands in for its counts.
    pub(super) testbed: Option<Testbed>,
    pub(super) count_testbed: Option<Testbed>,
    pub(super) paired: bool,
    /// The recount whose counts stand in for the stored ones.
    pub(super) recount: Option<(String, String)>,
    /// Why the recount made for this suite could not stand in.
    pub(super) recount_failed: Option<String>,
    /// SHA-256 of the suite binary the stored counts came from.
    pub(super) binary: Option<String>,
    /// Its ordering footprints, when it recorded them.
    pub(super) footprints: Option<Footprints>,
}

impl SuiteReference {
    /// No reference cells: every cell of the suite is new.
    fn none() -> SuiteReference {
        SuiteReference {
            cells: BTreeMap::new(),
            testbed: None,
            count_testbed: None,
            paired: false,
            footprints: None,
            recount: None,
            recount_failed: None,
            binary: None,
        }
    }
}

/// One reference cell: its values (in round order) and how to show it.
pub(super) struct RefCell {
    pub(super) case: Map<String, Value>,
    pub(super) unit: Name,
    pub(super) better: Better,
    pub(super) samples: Vec<Option<f64>>,
    /// The round of each value (a stored baseline's: their order).
    pub(super) rounds: Vec<u32>,
}

/// The reference of one suite run, or `None` after reporting why there is
/// none to use (an unreadable baseline is a problem: the gate fails).
pub(super) fn reference_of(
    reference: &Reference,
    t: &TargetResult,
    s: &SuiteRun,
    report: &mut GateReport,
) -> Option<SuiteReference> {
    match reference {
        Reference::Base(base) => base_reference(base, t, s, report),
        Reference::Nothing { .. } => Some(SuiteReference::none()),
        Reference::Stored {
            files, recounts, ..
        } => match files.get(&(t.name.clone(), s.suite.clone())) {
            Some(Some(b)) => Some(stored_reference(b, recounts, t, s)),
            _ => Some(SuiteReference::none()),
        },
    }
}

/// A run's cells as reference cells, by key.
fn ref_cells(cells: Vec<RunCell>) -> BTreeMap<CellKey, RefCell> {
    cells
        .into_iter()
        .map(|c| {
            let r = RefCell {
                case: c.case,
                unit: c.unit,
                better: c.better,
                samples: c.samples,
                rounds: c.rounds,
            };
            (c.key, r)
        })
        .collect()
}

/// The base revision's run of the suite as its reference, paired round by
/// round; where the base broke or did not run it, a problem in `report`
/// (a base that broke compares nothing: never a pass with every cell
/// "new"), or a note when it has no such suite.
fn base_reference(
    base: &Run,
    t: &TargetResult,
    s: &SuiteRun,
    report: &mut GateReport,
) -> Option<SuiteReference> {
    let bt = base.targets.iter().find(|b| b.name == t.name);
    let bs = bt.and_then(|b| b.suites.iter().find(|b| b.suite == s.suite));
    let cells = bs
        .map(|b| ref_cells(cells::collect(&b.samples)))
        .unwrap_or_default();
    let rev = crate::commit::shown(base.host.lockmatrix_commit.as_ref());
    match (bt.map(|b| &b.status), bs) {
        (Some(Status::Failed(why)), None) => report.problems.push(reference_item(
            t,
            Some(s),
            format!("the base revision {rev} failed: {why}; nothing was compared"),
        )),
        (_, Some(b)) if matches!(b.status, Status::Failed(_)) => {
            report.problems.push(reference_item(
                t,
                Some(s),
                format!(
                    "the base revision {rev} failed: {}; its cells are not a reference",
                    b.status.label()
                ),
            ));
            return None;
        }
        (None | Some(Status::Pending | Status::NotRun(_)), None) => {
            report.problems.push(reference_item(
                t,
                Some(s),
                format!("the base revision {rev} did not run it; nothing was compared"),
            ))
        }
        (_, None) => report.notes.push(item(
            t,
            Some(s),
            format!("the base revision {rev} has no such suite: every cell is new"),
        )),
        _ => {}
    }
    let testbed = bt.map(|b| Testbed::of_suite(base, b, &s.suite));
    Some(SuiteReference {
        cells,
        count_testbed: testbed.clone(),
        testbed,
        paired: true,
        recount: None,
        recount_failed: None,
        binary: None,
        footprints: bt
            .zip(bs)
            .and_then(|(bt, bs)| Footprints::of(&bt.triple, bs)),
    })
}

/// The stored baseline `b` of the suite as its reference, its counts and
/// footprints taken from a recount of its commit where one stands in (or
/// why the recount made could not).
fn stored_reference(
    b: &Baseline,
    recounts: &[&Run],
    t: &TargetResult,
    s: &SuiteRun,
) -> SuiteReference {
    let mut found = SuiteReference {
        cells: b
            .cells
            .iter()
            .map(|c| {
                let r = RefCell {
                    case: c.case.clone(),
                    unit: c.unit.clone(),
                    better: c.better,
                    samples: c.samples.clone(),
                    rounds: (0..c.samples.len() as u32).collect(),
                };
                (c.key(), r)
            })
            .collect(),
        testbed: Some(b.testbed.clone()),
        count_testbed: Some(b.testbed.clone()),
        paired: false,
        footprints: b.footprint.clone(),
        recount: None,
        recount_failed: None,
        binary: b.binary.clone(),
    };
    // The baseline's commit counted again here: its counts and
    // footprints for the stored ones.
    let recounted = match stand_in(recounts, &b.commit, t, s) {
        Ok(found) => found,
        Err(why) => {
            found.recount_failed = Some(why.to_string());
            None
        }
    };
    if let Some((r, rt, rs)) = recounted {
        found
            .cells
            .retain(|_, c| !crate::protocol::Kind::of(&c.unit).exact());
        found.cells.extend(ref_cells(
            cells::collect(&rs.samples)
                .into_iter()
                .filter(|c| c.kind().exact())
                .collect(),
        ));
        found.count_testbed = Some(Testbed::of_suite(r, rt, &rs.suite));
        found.footprints = Footprints::of(&rt.triple, rs);
        found.binary = rt.binaries.get(&rs.suite).cloned();
        found.recount = Some((
            b.commit.to_string(),
            b.testbed.compiler_version.clone().unwrap_or_default(),
        ));
    }
    found
}

/// The recount of `commit` that stands in for target `t`'s suite `s`:
/// `None` when no recount was made at all (the compilers agreed, or it
/// could not be), an error saying why when one was made and cannot serve.
pub(super) fn stand_in<'r>(
    recounts: &[&'r Run],
    commit: &CommitId,
    t: &TargetResult,
    s: &SuiteRun,
) -> std::result::Result<Option<(&'r Run, &'r TargetResult, &'r SuiteRun)>, NoStandIn> {
    if recounts.is_empty() {
        return Ok(None);
    }
    let Some(r) = recounts
        .iter()
        .find(|r| r.host.lockmatrix_commit.as_ref() == Some(commit))
    else {
        return Err(NoStandIn::OtherCommits {
            commit: commit.clone(),
            made: recounts
                .iter()
                .map(|r| {
                    r.host
                        .lockmatrix_commit
                        .as_ref()
                        .map_or("unknown", |c| c.short())
                        .to_string()
                })
                .collect(),
        });
    };
    let Some(rt) = r.targets.iter().find(|x| x.name == t.name) else {
        return Ok(None);
    };
    let place = format!("{}/{}", t.name, s.suite);
    let Some(rs) = rt.suites.iter().find(|x| x.suite == s.suite) else {
        return Err(NoStandIn::NotRun {
            commit: commit.clone(),
            place,
            why: rt.status.label(),
        });
    };
    if rs.status != Status::Ok {
        return Err(NoStandIn::Failed {
            commit: commit.clone(),
            place,
            why: rs.status.label(),
        });
    }
    Ok(Some((r, rt, rs)))
}

/// Why the recount made for a suite cannot stand in for its baseline.
#[derive(Debug, Clone)]
pub(super) enum NoStandIn {
    /// No recount is of the baselines' commit (`made`: those there are).
    OtherCommits { commit: CommitId, made: Vec<String> },
    NotRun {
        commit: CommitId,
        place: String,
        why: String,
    },
    Failed {
        commit: CommitId,
        place: String,
        why: String,
    },
}

impl std::fmt::Display for NoStandIn {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            NoStandIn::OtherCommits { commit, made } => write!(
                f,
                "no recount of the baselines' commit {} stands in (the recounts made are of {})",
                commit.short(),
                made.join(", ")
            ),
            NoStandIn::NotRun { commit, place, why } => write!(
                f,
                "the recount of {} did not run {place}: {why}",
                commit.short()
            ),
            NoStandIn::Failed { commit, place, why } => write!(
                f,
                "the recount of {} failed on {place}: {why}",
                commit.short()
            ),
        }
    }
}

/// Whether `recorded` is the hash of the binary that ran suite `s` on `t`.
pub(super) fn same_binary(recorded: Option<&String>, t: &TargetResult, s: &SuiteRun) -> bool {
    recorded.is_some() && recorded == t.binaries.get(&s.suite)
}
