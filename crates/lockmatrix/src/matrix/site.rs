//! Running one target's suites where they run: natively, under QEMU, or
//! on an ssh host, one side or both, as [`plan`](super::plan::plan) says.

use super::plan::{plan, Folded, Side, Step};
use super::unit::{units, Narrowing, Unit};
use crate::build::Binary;
use crate::config::Target;
use crate::protocol;
use crate::results::{self, Failure, Profile, Status, TargetResult};
use crate::runner::{self, ssh::Remote, Exit};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// A target's binaries by suite.
type Binaries = BTreeMap<String, Binary>;

/// Where one target's suites run: its binaries (and the base revision's),
/// the ssh session, the plugin and the timeout.
pub struct Site<'a> {
    pub target: &'a Target,
    pub binaries: &'a BTreeMap<String, Binary>,
    pub base_binaries: Option<&'a BTreeMap<String, Binary>>,
    pub remote: Option<&'a Remote>,
    pub plugin: Option<&'a Path>,
    pub timeout: Duration,
    pub profile: Profile,
    pub rounds: Option<u32>,
    /// Only the invocations that count instructions.
    pub counts_only: bool,
    /// Stop a suite's pairs once the gate with these options decided its
    /// timing cells (`Options::stop_when_decided`).
    pub stop_when_decided: Option<crate::family::GateOptions>,
    /// The suites the target runs: the gate splits its level over them.
    pub suites: usize,
    /// Its comparable stored baselines, and the most rounds a timing cell
    /// gets against them: rounds go on, look by look, while a cell is
    /// undecided (not with `--against`, `--rounds` or counts only).
    pub stored: Option<(&'a crate::family::Stored, usize)>,
}

/// One suite's runs on a site: this tree's and, with `--against`, the
/// base revision's.
pub struct SuiteRuns {
    pub head: Folded,
    pub base: Option<Folded>,
}

impl Site<'_> {
    /// Runs one step's binary; returns how it ended and the command that
    /// reproduces it. A counted step runs here under the target's
    /// `counted_under` emulator, whatever the target's runner.
    fn exec(
        &self,
        step: &super::plan::Step,
        binary: &Path,
        suite: &str,
        copied: &mut Vec<PathBuf>,
    ) -> Result<(runner::Outcome, String), Failure> {
        let local = |inv: runner::Invocation| {
            // A fixed working directory: the run's own differs every time.
            runner::execute(&inv, Path::new("/"), self.timeout)
                .map(|o| (o, inv.shell()))
                .map_err(|e| Failure::Start {
                    message: format!("cannot start {}: {e}", inv.program),
                })
        };
        if step.counted {
            let emulator = self.target.counted_under.as_deref().unwrap_or_default();
            return local(runner::under_qemu(
                emulator,
                self.target.qemu_cpu.as_deref(),
                binary,
                &step.args,
                self.plugin,
            ));
        }
        let Some(r) = self.remote else {
            return local(runner::invocation(
                self.target,
                binary,
                &step.args,
                self.plugin,
            ));
        };
        // On an ssh host each binary is copied once, then run per round.
        let name = match step.side {
            Side::Base => format!("{suite}.base"),
            Side::Head => suite.to_string(),
        };
        let ssh = |e: crate::runner::ssh::SshError| Failure::Ssh {
            message: e.to_string(),
        };
        if !copied.iter().any(|c| c == binary) {
            r.copy(binary, &name).map_err(ssh)?;
            copied.push(binary.to_path_buf());
        }
        r.run(&name, &step.args, self.timeout).map_err(ssh)
    }

    /// Runs one suite step by step. Stops at the first crash, hang or
    /// failed exit, which is then reported once.
    pub fn run_suite(&self, suite: &str) -> Result<SuiteRuns, Failure> {
        let (_, base_binaries) = self.verified_binaries(suite)?;
        let schedule = self.schedule(suite, base_binaries);
        let steps = &schedule.steps;
        let mut copied = Vec::new();
        let (mut head, mut base) = (None, None);
        // What the next pair runs (`family::units`): decided at each look
        // from what both sides recorded.
        let mut units = vec![super::unit::Unit::default()];
        let mut i = 0;
        while i < steps.len() {
            // A pair (a round after the first) runs both its steps once per
            // unit, each unit's two invocations back to back.
            let round = steps[i]
                .round
                .filter(|&r| (schedule.paired || schedule.stored.is_some()) && r > 0);
            let n = match round {
                Some(r) => steps[i..].iter().take_while(|s| s.round == Some(r)).count(),
                None => 1,
            };
            let group = &steps[i..i + n];
            i += n;
            let runs: Vec<Step> = match round {
                Some(_) => units
                    .iter()
                    .enumerate()
                    .flat_map(|(k, u)| group.iter().map(move |s| s.narrowed(u, k == 0)))
                    .collect(),
                None => group.to_vec(),
            };
            for step in &runs {
                let (binaries, acc) = match step.side {
                    Side::Head => (self.binaries, &mut head),
                    Side::Base => (
                        base_binaries.expect("a base step has base binaries"),
                        &mut base,
                    ),
                };
                let (o, command) = self.exec(step, &binaries[suite].path, suite, &mut copied)?;
                let parsed = protocol::parse(&o.stdout);
                let ended_badly = o.exit != Exit::Code(0);
                Folded::add(acc, o, parsed, step, command);
                if ended_badly {
                    return finish(head, base);
                }
            }
            if let Some(u) = self.paired_units(&schedule, group[0].round, &head, &base) {
                units = u;
            }
            if let Some(u) = self.stored_units(&schedule, group[0].round, &head) {
                units = u;
            }
        }
        finish(head, base)
    }

    /// The suite's binary and the base revision's binaries when they have
    /// it (a base revision older than a C suite has none: the head runs
    /// alone, and the gate says every cell is new), each hashed again
    /// just before it runs: what runs is what was built.
    fn verified_binaries(&self, suite: &str) -> Result<(&Binary, Option<&Binaries>), Failure> {
        let Some(head_binary) = self.binaries.get(suite) else {
            return Err(Failure::Build {
                error: format!("no {suite} binary was built for {}", self.target.name),
                log: None,
            });
        };
        let base_binaries = self.base_binaries.filter(|b| b.contains_key(suite));
        let base = base_binaries.map(|b| &b[suite]);
        for b in std::iter::once(head_binary).chain(base) {
            b.verify().map_err(|e| Failure::Start {
                message: e.to_string(),
            })?;
        }
        Ok((head_binary, base_binaries))
    }

    /// The suite's steps, and whether its pairs narrow to the undecided
    /// cells: against the base revision on real hardware; against stored
    /// baselines (the rounds going on while a timing cell is undecided).
    /// Narrowing is the harness's `--lock`, which every revision's suites
    /// take.
    fn schedule<'s>(
        &'s self,
        suite: &str,
        base_binaries: Option<&BTreeMap<String, Binary>>,
    ) -> Schedule<'s> {
        let counted = self.plugin.is_some() && self.target.counted_under.is_some();
        let against = base_binaries.is_some();
        let real = self.target.runner != crate::config::RunnerKind::Qemu;
        let stored = self
            .stored
            .filter(|_| real && !against && !self.counts_only && self.rounds.is_none())
            .and_then(|(s, max)| Some((s.suites.get(suite)?, max)))
            .filter(|(cells, _)| !cells.is_empty());
        let rounds = match stored {
            Some((_, max)) => Some(max as u32),
            None => self.rounds,
        };
        let steps = match self.counts_only {
            true => super::plan::counting(self.target, self.profile, counted),
            false => plan(
                self.target,
                self.profile,
                rounds,
                (
                    against,
                    crate::select::lang(suite) == Some(crate::select::Lang::Rust),
                ),
                counted,
            ),
        };
        Schedule {
            steps,
            paired: against && real,
            stored: stored.map(|(cells, max)| (cells.as_slice(), max)),
            max_pairs: super::plan::rounds(self.profile, self.rounds, true) as usize,
        }
    }

    /// Against the base revision, after round `round` ran on both sides
    /// at a look: the units the next family pairs run, the cells still
    /// undecided. `None` between looks (the units stay), or past them.
    fn paired_units(
        &self,
        schedule: &Schedule,
        round: Option<u32>,
        head: &Option<Folded>,
        base: &Option<Folded>,
    ) -> Option<Vec<Unit>> {
        let (true, Some(r), Some(h), Some(b)) = (schedule.paired, round, head, base) else {
            return None;
        };
        // Decisions change only at looks: between them the units
        // stay, and nothing is computed between a round's runs.
        let pairs = r as usize + 1;
        let look = r == 0 || pairs % crate::family::LOOK_EVERY == 0;
        let both_ran = |f: &Folded| f.parsed.samples.iter().any(|s| s.round == r);
        if !(look && pairs < schedule.max_pairs && both_ran(h) && both_ran(b)) {
            return None;
        }
        let undecided = crate::family::pending(
            &h.parsed.samples,
            &b.parsed.samples,
            self.target.runner,
            self.stop_when_decided.as_ref(),
            (
                schedule.max_pairs,
                crate::policy::affordable_pairs(self.profile == Profile::Full),
            ),
            self.suites,
        );
        Some(units(&undecided, narrowing(h).min(narrowing(b))))
    }

    /// Against stored baselines, after round `round` ran at a look: the
    /// units the next rounds run, the timing cells still undecided.
    /// `None` between looks, or past them.
    fn stored_units(
        &self,
        schedule: &Schedule,
        round: Option<u32>,
        head: &Option<Folded>,
    ) -> Option<Vec<Unit>> {
        let (Some((cells, max)), Some(opts), Some(r), Some(h)) = (
            schedule.stored,
            self.stop_when_decided.as_ref(),
            round,
            head,
        ) else {
            return None;
        };
        let rounds = r as usize + 1;
        let ran = h.parsed.samples.iter().any(|s| s.round == r);
        if !(rounds % crate::family::STORED_LOOK_EVERY == 0 && rounds < max && ran) {
            return None;
        }
        let undecided = crate::family::pending_stored(
            &h.parsed.samples,
            cells,
            self.target.runner,
            opts,
            max,
            self.suites,
        );
        Some(units(&undecided, narrowing(h)))
    }
}

/// How one suite's steps run: the steps planned, and how its pairs after
/// the first round narrow to the cells still undecided.
struct Schedule<'s> {
    steps: Vec<Step>,
    /// Paired with the base revision on real hardware.
    paired: bool,
    /// Against stored baselines: the suite's stored cells and the most
    /// rounds a timing cell gets.
    stored: Option<(&'s [crate::family::StoredCell], usize)>,
    /// The most pairs a timing cell gets against the base revision.
    max_pairs: usize,
}

/// How finely a side's suite can be narrowed (its env record says; an
/// older build or the C suite runs whole locks).
fn narrowing(side: &Folded) -> Narrowing {
    Narrowing::of(side.parsed.env.as_ref())
}

/// One suite's runs, once its steps are over or one ended badly.
fn finish(head: Option<Folded>, base: Option<Folded>) -> Result<SuiteRuns, Failure> {
    Ok(SuiteRuns {
        head: head.ok_or(Failure::Silent {
            missing: "invocation".into(),
        })?,
        base,
    })
}

/// Records one side's suite run in its target and in the run directory
/// `dir` (`<target>/<suite>.jsonl` and `.stderr`); returns its status.
pub fn record(
    dir: &Path,
    target: &mut TargetResult,
    suite: &str,
    folded: Folded,
    timeout_secs: u64,
) -> std::io::Result<Status> {
    let out_dir = dir.join(&target.name);
    std::fs::create_dir_all(&out_dir)?;
    let Folded {
        outcome,
        parsed,
        command,
        counted_command,
    } = folded;
    std::fs::write(out_dir.join(format!("{suite}.jsonl")), &outcome.stdout)?;
    std::fs::write(out_dir.join(format!("{suite}.stderr")), &outcome.stderr)?;
    let mut status = results::judge(&outcome, &parsed, timeout_secs);
    // Only a counting invocation ran (a baseline's recount on a native
    // target): a suite without counted cells has no samples to keep, and
    // that is all; its checks and probes were still read.
    let counting_only = command.is_empty();
    if counting_only
        && matches!(&status, Status::Failed(Failure::Silent { missing }) if missing == "samples")
    {
        status = Status::Ok;
    }
    let mut run = results::suite_run(
        &crate::name::known(suite),
        command,
        &outcome,
        parsed,
        status.clone(),
    );
    run.counted_command = counted_command;
    target.suites.push(run);
    target.run_secs = Some(target.run_secs.unwrap_or(0.0) + outcome.secs);
    Ok(status)
}
