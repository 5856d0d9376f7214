//! Running one target's suites, both sides where there is a base, and
//! recording them: what the run as a whole gives each target ([`Runs`]).

use super::options::Options;
use super::plan;
use super::prepare::Prepared;
use super::setup::{cannot_build, crate_build_failure};
use super::site::{record, Site, SuiteRuns};
use crate::build::{self, Built};
use crate::config::{Config, RunnerKind, Target};
use crate::host;
use crate::name;
use crate::observe::{Event, Observer};
use crate::results::{Failure, Status, SuiteFailure, TargetResult};
use crate::runner::ssh;
use crate::select::Selected;
use std::collections::BTreeMap;
use std::path::Path;
use std::time::Duration;

/// Both sides of one target's run, and where each is recorded.
struct Sides<'a> {
    head: (&'a Path, &'a mut TargetResult),
    base: Option<(&'a Path, &'a mut TargetResult)>,
}

/// Runs every suite of one target on `site`, recording both sides; a
/// suite's failure is recorded and the next suite still runs.
fn run_target(
    site: &Site,
    suites: &[&str],
    sides: Sides,
    observer: &dyn Observer,
) -> std::io::Result<()> {
    let Sides { head, base } = sides;
    let (dir, result) = head;
    let timeout = site.timeout.as_secs();
    let mut base = base;
    let mut failures: Vec<SuiteFailure> = Vec::new();
    let mut base_failures: Vec<SuiteFailure> = Vec::new();
    for suite in suites {
        let step = format!("{}/{suite}", site.target.name);
        observer.event(Event::StepStarted(&step));
        let started = std::time::Instant::now();
        let SuiteRuns {
            head,
            base: base_run,
        } = match site.run_suite(suite) {
            Ok(ran) => ran,
            Err(failure) => {
                observer.event(Event::StepDone {
                    step: &step,
                    outcome: &format!("failed: {failure}"),
                });
                failures.push(SuiteFailure {
                    suite: name::known(suite),
                    failure,
                });
                continue;
            }
        };
        // The step's wall time, and what each side's invocations took of
        // it: a paired suite runs both revisions, so its wall time is
        // about twice one side's.
        let mut took = format!("{:.1}s", started.elapsed().as_secs_f64());
        if let Some(b) = &base_run {
            let (h, b) = (head.outcome.secs, b.outcome.secs);
            took = format!("{took} (invocations: head {h:.1}s, base {b:.1}s)");
        }
        if let (Some(b), Some((base_dir, base_result))) = (base_run, base.as_mut()) {
            if let Status::Failed(failure) = record(base_dir, base_result, suite, b, timeout)? {
                base_failures.push(SuiteFailure {
                    suite: name::known(suite),
                    failure,
                });
            }
        }
        let status = record(dir, result, suite, head, timeout)?;
        observer.event(Event::StepDone {
            step: &step,
            outcome: &format!("{} in {took}", status.label()),
        });
        if let Status::Failed(failure) = status {
            failures.push(SuiteFailure {
                suite: name::known(suite),
                failure,
            });
        }
    }
    result.run_secs.get_or_insert(0.0);
    result.status = match failures.is_empty() {
        true => Status::Ok,
        false => Status::Failed(Failure::Suites { suites: failures }),
    };
    if let Some((_, b)) = base {
        b.status = match base_failures.is_empty() {
            true => Status::Ok,
            false => Status::Failed(Failure::Suites {
                suites: base_failures,
            }),
        };
    }
    Ok(())
}

/// The binaries of one build, with their hashes recorded in `target`.
fn built_binaries<'a>(
    built: &'a Built,
    target: &mut TargetResult,
) -> Result<&'a BTreeMap<String, build::Binary>, Failure> {
    let bins = built.binaries.as_ref().map_err(Failure::from)?;
    target.sources_sha256 = Some(built.sources.clone());
    for (suite, b) in bins {
        target.binaries.insert(name::known(suite), b.sha256.clone());
        if let Some(c) = &b.compiler {
            target.compilers.insert(name::known(suite), c.clone());
        }
    }
    Ok(bins)
}

/// The binaries built for a target, and with `--against` the base's.
type BuiltBinaries<'b> = (
    &'b BTreeMap<String, build::Binary>,
    Option<&'b BTreeMap<String, build::Binary>>,
);

/// What running one target's suites needs of the whole run.
pub(super) struct Runs<'a> {
    pub(super) config: &'a Config,
    pub(super) opts: &'a Options,
    pub(super) prepared: &'a Prepared,
    pub(super) plugin: Option<&'a Path>,
    pub(super) dir: &'a Path,
    pub(super) base_dir: &'a Path,
    pub(super) names: &'a [&'a str],
    pub(super) observer: &'a dyn Observer,
    /// The machine the run happens on: with a target's own facts, the
    /// testbed its stored baselines must match.
    pub(super) host: &'a host::Host,
}

impl Runs<'_> {
    /// Runs `s`'s suites with the binaries `built` (and with `--against`
    /// the base's, `base_built`), recording them in `result` (and `base`).
    pub(super) fn target(
        &self,
        s: &Selected,
        (built, base_built): (&Built, Option<&Built>),
        result: &mut TargetResult,
        base: Option<&mut TargetResult>,
    ) -> std::io::Result<()> {
        let t = &s.target;
        // A target without a Rust backend runs only the C suites.
        let (names, _) = crate::select::for_target(self.names, t);
        let mut base = base;
        let (binaries, base_binaries) =
            match self.binaries(t, (built, base_built), result, base.as_deref_mut()) {
                Ok(both) => both,
                Err(status) => {
                    result.status = status.clone();
                    if let Some(br) = base {
                        br.status = status;
                    }
                    return Ok(());
                }
            };
        let remote = match open_remote(t, result) {
            Ok(remote) => remote,
            Err(failure) => {
                result.status = Status::Failed(failure);
                return Ok(());
            }
        };
        let stored = self.stored(t, result);
        let stored_max = plan::stored_max(self.opts.profile);
        let site = Site {
            target: t,
            binaries,
            base_binaries,
            remote: remote.as_ref(),
            plugin: self.plugin,
            timeout: Duration::from_secs(
                self.opts
                    .timeout_secs
                    .unwrap_or(self.config.timeout_secs(t)),
            ),
            profile: self.opts.profile,
            rounds: self.opts.rounds,
            counts_only: self.opts.counts_only,
            stop_when_decided: self.opts.stop_when_decided,
            suites: names.len(),
            stored: stored.as_ref().map(|s| (s, stored_max)),
        };
        let sides = Sides {
            head: (self.dir, result),
            base: base.map(|b| (self.base_dir, b)),
        };
        run_target(&site, &names, sides, self.observer)
    }

    /// The binaries built for target `t` and, with `--against`, the base
    /// revision's, with their build times and hashes recorded in `result`
    /// and `base`; or the status of both when either build failed (the
    /// lock crate's own failure said as such).
    fn binaries<'b>(
        &self,
        t: &Target,
        (built, base_built): (&'b Built, Option<&'b Built>),
        result: &mut TargetResult,
        base: Option<&mut TargetResult>,
    ) -> Result<BuiltBinaries<'b>, Status> {
        result.build_secs = Some(built.secs);
        let binaries = built_binaries(built, result);
        let base_binaries = match (base_built, base) {
            (Some(b), Some(br)) => {
                br.build_secs = Some(b.secs);
                Some(built_binaries(b, br).map_err(|f| Failure::Build {
                    error: format!(
                        "base {}: {f}",
                        self.opts.against.as_deref().unwrap_or_default()
                    ),
                    log: None,
                }))
            }
            _ => None,
        };
        match (binaries, base_binaries.transpose()) {
            (Ok(b), Ok(bb)) => Ok((b, bb)),
            (Err(f), _) | (_, Err(f)) => Err(
                match self
                    .prepared
                    .subject
                    .as_ref()
                    .and_then(|s| crate_build_failure(s, &t.name, &f))
                {
                    Some((why, log)) => cannot_build(self.prepared, why, log),
                    None => Status::Failed(f),
                },
            ),
        }
    }

    /// Comparable stored baselines of a real-hardware target, when the
    /// run gates against them: its rounds go on while a timing cell is
    /// undecided, to the planned last look (recorded in `result`).
    fn stored(&self, t: &Target, result: &mut TargetResult) -> Option<crate::family::Stored> {
        let stored = match (&self.opts.stored, t.runner) {
            (Some(_), RunnerKind::Qemu) | (None, _) => None,
            (Some(dir), _) if self.opts.against.is_none() && self.opts.rounds.is_none() => Some(
                crate::baseline::stored_timings(dir, self.host, result, self.names),
            ),
            _ => None,
        };
        if stored
            .as_ref()
            .is_some_and(|s| s.suites.values().any(|c| !c.is_empty()))
        {
            result.stored_rounds = Some(plan::stored_max(self.opts.profile) as u32);
        }
        stored
    }
}

/// A target's ssh session, when it runs on an ssh host with a key, its
/// machine's facts recorded in `result`; the failure to open it.
fn open_remote(t: &Target, result: &mut TargetResult) -> Result<Option<ssh::Remote>, Failure> {
    let (Some(host), Some(key), RunnerKind::Ssh) = (&t.ssh, ssh::key_for(t), t.runner) else {
        return Ok(None);
    };
    let r = ssh::Remote::open(host, &key).map_err(|message| Failure::Ssh {
        message: message.to_string(),
    })?;
    result.cpu_model = r.cpu_model();
    result.machine = r.machine();
    result.kernel = r.kernel();
    result.virtualization = r.virtualization();
    Ok(Some(r))
}
