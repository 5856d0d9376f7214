//! Every flag and file of a `matrix` command checked, before anything is
//! installed or built: bad input is exit 2, naming what was expected.

use super::error::JobError;
use crate::config::Config;
use crate::family::GateOptions;
use crate::matrix::{Crates, Options};
use crate::results::Profile;
use crate::select::{self, Selected, Suite};
use crate::subject::Subject;
use crate::{config, toolchain};
use std::path::PathBuf;

/// A `matrix` command as asked: the flags, with paths resolved from where
/// the user typed them.
pub struct Request {
    /// The checkout: targets.yaml's default, the suites, the baselines.
    pub root: PathBuf,
    /// Where `--crate NAME@path:DIR` is taken from.
    pub cwd: PathBuf,
    pub config: PathBuf,
    pub targets: Option<String>,
    pub suites: Option<String>,
    pub profile: Profile,
    pub rounds: Option<u32>,
    pub timeout: Option<u64>,
    pub results: PathBuf,
    pub features: Vec<String>,
    pub against: Option<String>,
    pub krate: Option<String>,
    pub against_crate: Option<String>,
    pub require_build: bool,
    pub no_insns: bool,
    pub no_install: bool,
    pub toolchain: Option<String>,
    pub gate: GateOptions,
    /// `--baselines`, or the checkout's `baselines/`.
    pub baselines: PathBuf,
    pub baselines_given: bool,
    /// `--require-gate`: a baseline commit this clone lacks is bad input.
    pub require_gate: bool,
}

/// A `matrix` command, checked.
pub struct Job {
    pub(super) request: Request,
    pub(super) config: Config,
    pub(super) selected: Vec<Selected>,
    pub(super) suites: Vec<Suite>,
    pub(super) opts: Options,
    pub(super) need: toolchain::Version,
}

impl Job {
    /// Checks every flag and file: the gate's options, feature names,
    /// `LOCKMATRIX_TESTBED`, targets.yaml, the selection, the crates, the
    /// toolchain, the stored baselines (readable, and a real-hardware
    /// target's timings decided look by look against them).
    pub fn check(request: Request) -> Result<Job, JobError> {
        let r = &request;
        r.gate.check()?;
        for f in &r.features {
            let ok = !f.is_empty()
                && f.len() <= 64
                && f.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_-/".contains(c));
            if !ok {
                return Err(JobError::Feature {
                    shown: crate::escape::terminal(&f.chars().take(80).collect::<String>())
                        .replace('\n', "\\n"),
                });
            }
        }
        crate::host::declared()?;
        let config = config::load(&r.config)?;
        let selected = select::targets(&config, r.targets.as_deref())?;
        let crates = crates(r)?;
        let only = match &r.toolchain {
            Some(t) => toolchain::Only::parse(t)?,
            None => toolchain::Only::Any,
        };
        // A crate's locks are in the spinlock (mutexes) and rwsem (rwlocks)
        // suites; which of them runs is known once cargo resolved it.
        let suites = select::suites(r.suites.as_deref())?;
        let need = toolchain::rust_version(&r.root.join("Cargo.toml"));
        let mut opts = Options {
            profile: r.profile,
            rounds: r.rounds,
            timeout_secs: r.timeout,
            results_dir: r.results.clone(),
            features: r.features.clone(),
            against: (r.against.clone())
                .or_else(|| crates.as_ref()?.base.as_ref().map(|b| b.to_string())),
            no_insns: r.no_insns,
            counts_only: false,
            tree: None,
            crates,
            stop_when_decided: Some(r.gate),
            toolchain: only,
            stored: None,
        };
        // A corrupt baseline is bad input: said before anything is built.
        if opts.against.is_none() && opts.crates.is_none() {
            let names: Vec<&crate::name::Name> = selected.iter().map(|s| &s.target.name).collect();
            let suite_names: Vec<&str> = suites.iter().map(|s| s.name).collect();
            crate::baseline::check_readable(&r.baselines, &names, &suite_names)?;
            // A real-hardware target whose stored baselines compare takes
            // the rounds its timing cells need to decide, look by look.
            opts.stored = Some(r.baselines.clone());
        }
        Ok(Job {
            config,
            selected,
            suites,
            opts,
            need,
            request,
        })
    }
}

/// `--crate` and `--against-crate`, read: one crate, two versions.
fn crates(r: &Request) -> Result<Option<Crates>, JobError> {
    let Some(head) = &r.krate else {
        return Ok(None);
    };
    // In the container, a git URL's credentials come from a mounted file.
    let restore = crate::subject::credentials::restore;
    let head = restore(crate::subject::parse(head, &r.cwd)?);
    let base = r
        .against_crate
        .as_deref()
        .map(|b| crate::subject::parse(b, &r.cwd).map_err(JobError::AgainstCrate))
        .transpose()?
        .map(restore);
    if let Some(b) = &base {
        if b.name != head.name {
            return Err(JobError::OtherCrate {
                base: b.to_string(),
                head: head.to_string(),
            });
        }
    }
    Ok(Some(Crates {
        head,
        base,
        require_build: r.require_build,
    }))
}

/// The suites that measure a crate's locks: of `asked` (all when
/// `--suites` was not given), those with a lock of the crate on either
/// side. None is bad input.
pub(super) fn crate_suites(
    head: &Subject,
    base: Option<&Subject>,
    asked: Vec<Suite>,
    explicit: bool,
) -> Result<Vec<Suite>, JobError> {
    let has: Vec<&str> = std::iter::once(head)
        .chain(base)
        .flat_map(|s| s.suites())
        .collect();
    let chosen: Vec<Suite> = asked
        .into_iter()
        .filter(|s| has.contains(&s.name))
        .collect();
    if chosen.is_empty() {
        return Err(JobError::NoCrateSuites {
            label: head.label(),
            which: if explicit { "selected" } else { "" },
        });
    }
    Ok(chosen)
}
