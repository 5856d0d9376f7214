//! The command line: every command and flag of `cargo xtask`, as clap
//! reads them. `main` dispatches each command to its `commands::*::run`.

use clap::{Args, Parser, Subcommand};
use lockmatrix::gate::GateOptions;
use lockmatrix::report::output::{Destination, Replaces};
use lockmatrix::results::Profile;
use std::path::{Path, PathBuf};

#[derive(Parser)]
#[command(
    name = "cargo xtask",
    about = "Cross-architecture test matrix and regression gate for locks and atomics"
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Args)]
pub struct Selection {
    /// Targets: names, triples or classes, comma-separated, or `all`
    /// [default: the enabled targets of targets.yaml]
    #[arg(long)]
    pub targets: Option<String>,
    /// The matrix file
    #[arg(long, default_value = "targets.yaml")]
    pub config: PathBuf,
}

#[derive(Args)]
pub struct GateArgs {
    /// Directory of the committed baselines [default: the base revision
    /// for a run made with --against, else `baselines`]
    #[arg(long)]
    pub baselines: Option<PathBuf>,
    /// Slowdown every contended timing cell must catch (0.25 = 25%);
    /// a regression is slower than half of it, with confidence [default:
    /// each cell's own, 25%, 50% or 2x, the finest its measured noise
    /// resolves]
    #[arg(long)]
    pub threshold: Option<f64>,
    /// The finest slowdown a 1-thread timing cell is asked to catch; a
    /// noisier one gets the next of 10%, 25%, 50%, 2x its noise resolves
    #[arg(long, default_value_t = GateOptions::default().quiet_threshold)]
    pub quiet_threshold: f64,
    /// False-alarm rate of a target's timing cells, over all looks
    #[arg(long, default_value_t = GateOptions::default().alpha)]
    pub alpha: f64,
    /// Per cell: how often a slowdown of its threshold may be cleared
    #[arg(long, default_value_t = GateOptions::default().clear_alpha)]
    pub clear_alpha: f64,
    /// Also write the gate report as JSON (`-`: standard output)
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Also write a Markdown report for $GITHUB_STEP_SUMMARY (at most 1 MiB; `-`: standard output)
    #[arg(long)]
    pub markdown: Option<PathBuf>,
    /// Also write a pull-request comment (Markdown, at most 64 KB, details collapsed; `-`: standard output)
    #[arg(long)]
    pub pr_comment: Option<PathBuf>,
    /// Exit 1 when the verdict is NOT GATED (some count or timing
    /// cell could not be compared here), not only on a regression
    #[arg(long)]
    pub require_gate: bool,
    /// Show what the comparison found but never fail on it (failed
    /// checks, broken targets, violated models and races still fail)
    #[arg(long)]
    pub no_gate: bool,
    /// Show races under Miri but never fail on them
    #[arg(long)]
    pub allow_races: bool,
}

impl GateArgs {
    pub fn options(&self) -> GateOptions {
        GateOptions {
            threshold: self.threshold,
            quiet_threshold: self.quiet_threshold,
            alpha: self.alpha,
            clear_alpha: self.clear_alpha,
            no_gate: self.no_gate,
            allow_races: self.allow_races,
        }
    }

    /// The report destinations, checked (`-` is standard output, for one
    /// of them at most).
    pub fn outputs(&self, resolve: impl Fn(&Path) -> PathBuf) -> anyhow::Result<GateOutputs> {
        let dest = |p: &Option<PathBuf>| -> anyhow::Result<Option<Destination>> {
            let Some(p) = p else { return Ok(None) };
            let d = Destination::new(p, &resolve);
            d.check(Replaces::AnyFile)?;
            Ok(Some(d))
        };
        let out = GateOutputs {
            json: dest(&self.json)?,
            markdown: dest(&self.markdown)?,
            pr_comment: dest(&self.pr_comment)?,
        };
        let stdout = [&out.json, &out.markdown, &out.pr_comment]
            .iter()
            .filter(|d| d.as_ref() == Some(&Destination::Stdout))
            .count();
        if stdout > 1 {
            anyhow::bail!(
                "--json, --markdown and --pr-comment: only one of them can be - (standard output)"
            );
        }
        Ok(out)
    }
}

/// Where the gate's reports go, checked before any work.
pub struct GateOutputs {
    pub json: Option<Destination>,
    pub markdown: Option<Destination>,
    pub pr_comment: Option<Destination>,
}

#[derive(Subcommand)]
pub enum BaselineCommand {
    /// Record a run's results as the new baselines (refused if a check failed)
    Update {
        /// Targets to update, comma-separated [default: every target of the run]
        #[arg(long, value_delimiter = ',')]
        targets: Option<Vec<String>>,
        /// Suites to update, comma-separated [default: every suite of the run]
        #[arg(long, value_delimiter = ',')]
        suites: Option<Vec<String>>,
        /// The run to record [default: the newest under results/]
        #[arg(long)]
        from: Option<PathBuf>,
        /// Where runs are written
        #[arg(long, default_value = "results")]
        results: PathBuf,
        /// Directory of the baselines
        #[arg(long, default_value = "baselines")]
        baselines: PathBuf,
        /// Record only the instruction counts and ordering footprints (after
        /// a compiler update); every timing cell stays as it was
        #[arg(long)]
        counts_only: bool,
    },
}

#[derive(Subcommand)]
pub enum CiCommand {
    /// Render .github/workflows/ from targets.yaml
    Generate {
        #[arg(long, default_value = "targets.yaml")]
        config: PathBuf,
    },
    /// Fail when the committed workflows differ from targets.yaml's rendering
    Check {
        #[arg(long, default_value = "targets.yaml")]
        config: PathBuf,
    },
    /// Merge the runs of several CI jobs into one run directory
    Merge {
        /// Run directories (each with a run.json)
        #[arg(required = true)]
        runs: Vec<PathBuf>,
        /// The merged run directory to create
        #[arg(long)]
        out: PathBuf,
    },
    /// Render the workflow a lock crate's own repository runs on its pull
    /// requests, and the comment workflow beside it (docs/crates.md)
    CrateWorkflow {
        /// The crate's name on crates.io
        #[arg(long = "crate", value_name = "NAME")]
        krate: String,
        /// The lockmatrix repository the workflow checks out, owner/name
        /// [default: lockmatrix/lockmatrix]
        #[arg(long, value_name = "OWNER/NAME")]
        lockmatrix_repo: Option<String>,
        /// The lockmatrix commit it checks out (40 hex digits) [default:
        /// this checkout's HEAD]
        #[arg(long, value_name = "COMMIT")]
        lockmatrix_rev: Option<String>,
        /// The workflow file to write, e.g. .github/workflows/lockmatrix.yml;
        /// the comment workflow goes beside it as <name>-comment.yml
        /// [default: both to standard output]
        #[arg(short, long, value_name = "FILE")]
        output: Option<PathBuf>,
        /// The matrix file whose enabled targets get a job each
        #[arg(long, default_value = "targets.yaml")]
        config: PathBuf,
    },
}

#[derive(Subcommand)]
pub enum Command {
    /// Build, run and report every selected suite on every selected target
    Matrix(MatrixArgs),
    /// Compare a run with the baselines (default: the newest run)
    Gate(GateRunArgs),
    /// Measure the gate's false-alarm rate and power on this machine's native target
    ValidateGate(ValidateGateArgs),
    /// GitHub Actions workflows: generate, drift check, merge job results
    Ci {
        #[command(subcommand)]
        command: CiCommand,
    },
    /// Manage the committed baselines
    Baseline {
        #[command(subcommand)]
        command: BaselineCommand,
    },
    /// Show the toolchain, linker and emulator each target will use
    Doctor(Selection),
    /// Print the tables of a run (default: the newest under results/)
    Report(ReportArgs),
    /// Install what the tests need, then run fmt, clippy and every test
    Test,
    /// Weaken each Acquire/Release/AcqRel/SeqCst of each modelled lock to
    /// Relaxed in turn and say whether its loom models catch it
    MutateOrderings(MutateOrderingsArgs),
}

/// `cargo xtask mutate-orderings`.
#[derive(Args)]
pub struct MutateOrderingsArgs {
    /// Seconds before one round's model run is killed
    #[arg(long, default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..=86_400))]
    pub timeout: u64,
}

/// `cargo xtask matrix`.
#[derive(Args)]
pub struct MatrixArgs {
    #[command(flatten)]
    pub selection: Selection,
    /// Suites, comma-separated, or `all`: atomic, spinlock, rwsem
    #[arg(long)]
    pub suites: Option<String>,
    /// quick (CI-sized) or full (seed-sized)
    #[arg(long, default_value = "quick")]
    pub profile: Profile,
    /// Rounds per cell, overriding the profile's
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..=lockmatrix::family::MAX_PAIRS as i64))]
    pub rounds: Option<u32>,
    /// Seconds before a suite run is killed, overriding targets.yaml
    /// (the range of its `timeout_secs`)
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=lockmatrix::config::MAX_TIMEOUT_SECS))]
    pub timeout: Option<u64>,
    /// Where runs are written
    #[arg(long, default_value = "results")]
    pub results: PathBuf,
    /// Cargo features for the suites (e.g. spinlock/broken-lock, for tests)
    #[arg(long, value_delimiter = ',')]
    pub features: Vec<String>,
    /// Do not install missing Debian packages, nor Miri with rustup
    #[arg(long)]
    pub no_install: bool,
    /// Build every target with this toolchain only: `debian` (Debian's
    /// rustc-web) or a rustup toolchain (`stable`, `nightly`, `1.85.0`)
    /// [default: the first that builds the target]
    #[arg(long, value_name = "NAME")]
    pub toolchain: Option<String>,
    /// Where to build and run: auto (the container where apt-get cannot
    /// install what is missing: not Debian or Ubuntu, or not root), apt
    /// (this host's toolchains), container or cross (the matrix inside a
    /// Podman or Docker image with Debian's toolchain; docs/containers.md)
    #[arg(long, default_value = "auto", value_name = "BACKEND")]
    pub backend: lockmatrix::container::Backend,
    /// Print every table of the run and the gate's full report, not the
    /// findings alone
    #[arg(long)]
    pub tables: bool,
    /// Do not write the run's HTML report (results/<run>/report.html)
    #[arg(long)]
    pub no_html: bool,
    /// Do not count instructions under QEMU (no insns_per_op)
    #[arg(long)]
    pub no_insns: bool,
    /// Also build this git revision and gate on interleaved base/head
    /// rounds run now on this machine, instead of the committed baselines
    #[arg(long, value_name = "REV")]
    pub against: Option<String>,
    /// Measure this lock crate's locks instead of the suites' own:
    /// NAME@VERSION (crates.io), NAME@path:DIR or NAME@git:URL#REV
    #[arg(long = "crate", value_name = "SPEC", conflicts_with = "against")]
    pub krate: Option<String>,
    /// Compare --crate with this version of the same crate, run beside it
    /// as --against runs a base revision (a gated A/B)
    #[arg(long, value_name = "SPEC", requires = "krate")]
    pub against_crate: Option<String>,
    /// With --crate: a target the crate does not build for fails the run
    /// (exit 1) instead of being not run, with the reason
    #[arg(long, requires = "krate")]
    pub require_build: bool,
    #[command(flatten)]
    pub gate: GateArgs,
}

/// `cargo xtask gate`.
#[derive(Args)]
pub struct GateRunArgs {
    /// A run directory, e.g. results/20261130T020000Z
    pub run: Option<PathBuf>,
    /// Where runs are written
    #[arg(long, default_value = "results")]
    pub results: PathBuf,
    #[command(flatten)]
    pub gate: GateArgs,
}

/// `cargo xtask validate-gate`.
#[derive(Args)]
pub struct ValidateGateArgs {
    /// A/A recordings: runs made with `matrix --against HEAD` (each
    /// keeps its base in `base/`), resampled together; each also gated
    /// end to end; `--from validation/2026-12-03-80pairs/*` takes them all
    /// [default: record --runs of them now]
    #[arg(long, num_args = 1..)]
    pub from: Vec<PathBuf>,
    /// Recordings to make when --from is not given
    #[arg(long, default_value_t = 2)]
    pub runs: usize,
    /// Suites to record
    #[arg(long, default_value = "all")]
    pub suites: String,
    /// Rounds (base/head pairs) per recording [default: what a pull
    /// request's native job runs at most, so each recording is gated end
    /// to end as a pull request would be]
    #[arg(long, default_value_t = lockmatrix::policy::AB_ROUNDS.0, value_parser = clap::value_parser!(u32).range(2..=10_000))]
    pub rounds: u32,
    /// Pairs per side in each resampled evaluation [default: what a
    /// pull request's native job runs]
    #[arg(long, default_value_t = lockmatrix::policy::AB_ROUNDS.0 as usize)]
    pub pairs: usize,
    /// A/A evaluations (and injected slowdowns) by resampling
    #[arg(long, default_value_t = 100)]
    pub evaluations: usize,
    /// The gate's threshold of contended cells to validate [default:
    /// each cell's own, from its measured noise, as the gate chooses it]
    #[arg(long)]
    pub threshold: Option<f64>,
    /// The gate's threshold of 1-thread cells to validate
    #[arg(long, default_value_t = GateOptions::default().quiet_threshold)]
    pub quiet_threshold: f64,
    /// The gate's family-wise alpha to validate
    #[arg(long, default_value_t = GateOptions::default().alpha)]
    pub alpha: f64,
    /// Seed of the resampling
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Also inject every gating cell of every recording alone, at each
    /// slowdown from its threshold up: each cell's own power (about 0.15 s
    /// per cell and slowdown in a release build; about 10 minutes for 10
    /// recordings of every suite)
    #[arg(long)]
    pub every_cell: bool,
    /// Also write the result as JSON (`-`: standard output)
    #[arg(long)]
    pub json: Option<PathBuf>,
    /// Where recorded runs are written
    #[arg(long, default_value = "results")]
    pub results: PathBuf,
    /// Also write each recording's summary here (`<run id>/run.json`,
    /// `base/run.json`: its timing values and failed checks only,
    /// about 300 kB), which
    /// `--from` reads to re-run the validation
    #[arg(long)]
    pub keep_summaries: Option<PathBuf>,
}

/// `cargo xtask report`.
#[derive(Args)]
pub struct ReportArgs {
    /// A run directory, e.g. results/20261130T020000Z [default: the newest
    /// under --results]; with --history, run directories or directories
    /// holding runs (results/, downloaded CI artifacts) [default: --results]
    pub runs: Vec<PathBuf>,
    /// Where runs are written
    #[arg(long, default_value = "results")]
    pub results: PathBuf,
    /// Print the seeds' tables (seed 000 CAS/irq, 001 threads x locks, 002 rwsem, 003 stress)
    #[arg(long, conflicts_with_all = ["html", "history"])]
    pub tables: bool,
    /// Print every lock operation's ordering footprint by instruction, per
    /// target (the whole code of each operation, from its binary)
    #[arg(long, conflicts_with_all = ["html", "history", "tables"])]
    pub footprint: bool,
    /// Write the run's HTML report (inline SVG, no JavaScript) [default
    /// file: <run>/report.html]
    #[arg(long)]
    pub html: bool,
    /// The file --html writes, or --history's HTML page of trends (`-`: standard output)
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Trends of the gating cells across runs, with the changes each run's
    /// gate flagged
    #[arg(long, conflicts_with_all = ["html", "bmf"])]
    pub history: bool,
    /// Also export the run in Bencher Metric Format (JSON) to FILE (`-`: standard output)
    #[arg(long, value_name = "FILE")]
    pub bmf: Option<PathBuf>,
    /// Baselines the HTML report and --history compare with [default: the
    /// run's --against base, else `baselines`]
    #[arg(long)]
    pub baselines: Option<PathBuf>,
}
