//! lockmatrix's orchestrator, run as `cargo xtask <command>`.
//!
//! Exit status: 0 all good; 1 a target failed, a check failed or a cell
//! regressed; 2 bad input, missing set-up or an internal error, with a
//! message saying what to fix. Commands return `Ok(false)` for 1 and an
//! error for 2; `main` alone turns them into the status.

mod build;
mod ci;
mod config;
mod doctor;
mod error;
mod gate;
mod host;
mod matrix;
mod packages;
mod plugin;
mod progress;
mod protocol;
mod results;
mod runner;
mod seed_tables;
mod select;
mod ssh;
mod table;
mod test_cmd;
mod toolchain;

use anyhow::Context;
use clap::{Args, Parser, Subcommand};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "cargo xtask",
    about = "Cross-architecture test matrix and regression gate for locks and atomics"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Args)]
struct Selection {
    /// Targets: names, triples or classes, comma-separated, or `all`
    /// [default: the enabled targets of targets.yaml]
    #[arg(long)]
    targets: Option<String>,
    /// The matrix file
    #[arg(long, default_value = "targets.yaml")]
    config: PathBuf,
}

#[derive(Args)]
struct GateArgs {
    /// Directory of the committed baselines [default: the base revision
    /// for a run made with --against, else `baselines`]
    #[arg(long)]
    baselines: Option<PathBuf>,
    /// Slowdown that counts as a regression (0.05 = 5%)
    #[arg(long, default_value_t = 0.05)]
    delta: f64,
    /// Family-wise false-alarm rate of the gate (Holm across all cells)
    #[arg(long, default_value_t = 0.05)]
    alpha: f64,
    /// False discovery rate of the advisory list (Benjamini-Hochberg)
    #[arg(long, default_value_t = 0.10)]
    fdr_q: f64,
    /// Also write the gate report as JSON
    #[arg(long)]
    json: Option<PathBuf>,
    /// Also write a Markdown report for $GITHUB_STEP_SUMMARY (at most 1 MiB)
    #[arg(long)]
    markdown: Option<PathBuf>,
    /// Also write a pull-request comment (Markdown, at most 64 KB, details collapsed)
    #[arg(long)]
    pr_comment: Option<PathBuf>,
}

impl From<&GateArgs> for gate::GateOptions {
    fn from(args: &GateArgs) -> Self {
        gate::GateOptions {
            delta: args.delta,
            alpha: args.alpha,
            fdr_q: args.fdr_q,
        }
    }
}

#[derive(Subcommand)]
enum BaselineCommand {
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
    },
}

#[derive(Subcommand)]
enum CiCommand {
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
}

#[derive(Subcommand)]
enum Command {
    /// Build, run and report every selected suite on every selected target
    Matrix {
        #[command(flatten)]
        selection: Selection,
        /// Suites, comma-separated, or `all`: atomic, spinlock, rwsem
        #[arg(long)]
        suites: Option<String>,
        /// quick (CI-sized) or full (seed-sized)
        #[arg(long, default_value = "quick", value_parser = ["quick", "full"])]
        profile: String,
        /// Rounds per cell, overriding the profile's
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..=10_000))]
        rounds: Option<u32>,
        /// Seconds before a suite run is killed, overriding targets.yaml
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..=86_400))]
        timeout: Option<u64>,
        /// Where runs are written
        #[arg(long, default_value = "results")]
        results: PathBuf,
        /// Cargo features for the suites (e.g. spinlock/broken-lock, for tests)
        #[arg(long, value_delimiter = ',')]
        features: Vec<String>,
        /// Do not install missing Debian packages
        #[arg(long)]
        no_install: bool,
        /// Report the comparison with the baselines but never fail on it
        #[arg(long)]
        no_gate: bool,
        /// Do not count instructions under QEMU (no insns_per_op)
        #[arg(long)]
        no_insns: bool,
        /// Also build this git revision and gate on interleaved base/head
        /// rounds run now on this machine, instead of the committed baselines
        #[arg(long, value_name = "REV")]
        against: Option<String>,
        #[command(flatten)]
        gate: GateArgs,
    },
    /// Compare a run with the baselines (default: the newest run)
    Gate {
        /// A run directory, e.g. results/20261130T020000Z
        run: Option<PathBuf>,
        /// Where runs are written
        #[arg(long, default_value = "results")]
        results: PathBuf,
        #[command(flatten)]
        gate: GateArgs,
    },
    /// Measure the gate's false-alarm rate and power on this machine's native target
    ValidateGate {
        /// A/A recordings: runs made with `matrix --against HEAD` (each
        /// keeps its base in `base/`), resampled together; each also gated
        /// end to end [default: record --runs of them now]
        #[arg(long)]
        from: Vec<PathBuf>,
        /// Recordings to make when --from is not given
        #[arg(long, default_value_t = 2)]
        runs: usize,
        /// Suites to record
        #[arg(long, default_value = "all")]
        suites: String,
        /// Rounds (base/head pairs) per recording
        #[arg(long, default_value_t = 60, value_parser = clap::value_parser!(u32).range(2..=10_000))]
        rounds: u32,
        /// Pairs per side in each resampled evaluation [default: what a
        /// pull request's native job runs]
        #[arg(long, default_value_t = matrix::AB_ROUNDS.0 as usize)]
        pairs: usize,
        /// A/A evaluations (and injected slowdowns) by resampling
        #[arg(long, default_value_t = 100)]
        evaluations: usize,
        /// The gate's delta to validate
        #[arg(long, default_value_t = gate::GateOptions::default().delta)]
        delta: f64,
        /// The gate's family-wise alpha to validate
        #[arg(long, default_value_t = gate::GateOptions::default().alpha)]
        alpha: f64,
        /// Seed of the resampling
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Also write the result as JSON
        #[arg(long)]
        json: Option<PathBuf>,
        /// Where recorded runs are written
        #[arg(long, default_value = "results")]
        results: PathBuf,
    },
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
    Doctor {
        #[command(flatten)]
        selection: Selection,
    },
    /// Print the tables of a run (default: the newest under results/)
    Report {
        /// A run directory, e.g. results/20261130T020000Z
        run: Option<PathBuf>,
        /// Where runs are written
        #[arg(long, default_value = "results")]
        results: PathBuf,
        /// Print the seeds' tables (seed 000 CAS/irq, 001 threads x locks, 002 rwsem, 003 stress)
        #[arg(long)]
        tables: bool,
    },
    /// Install what the tests need, then run fmt, clippy and every test
    Test,
}

/// The lockmatrix checkout the command works on: the nearest directory at
/// or above the current one that holds `targets.yaml`, `Cargo.toml` and
/// `suites/`, as cargo finds its workspace. Every command uses this one
/// root for targets.yaml, the suites and the baselines, whichever checkout
/// the xtask binary was built from.
fn root() -> anyhow::Result<PathBuf> {
    let cwd = std::env::current_dir().context("reading the current directory")?;
    match cwd.ancestors().find(|d| {
        d.join("targets.yaml").is_file() && d.join("Cargo.toml").is_file() && d.join("suites").is_dir()
    }) {
        Some(root) => Ok(root.to_path_buf()),
        None => error::exit2!(
            "{}: not inside a lockmatrix checkout (no targets.yaml, Cargo.toml and suites/ here or above)",
            cwd.display()
        ),
    }
}

fn main() -> ExitCode {
    // Like any Unix filter: end quietly when the reader goes away
    // (`cargo xtask doctor | head`) instead of panicking on a broken pipe.
    // SAFETY: restoring the default disposition before any thread starts.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    let cli = Cli::parse();
    match run(cli) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::from(2)
        }
    }
}

fn resolve(root: &Path, p: &Path) -> PathBuf {
    if p.is_absolute() {
        p.to_path_buf()
    } else {
        std::env::current_dir().map_or_else(|_| root.join(p), |d| d.join(p))
    }
}

/// Records `count` A/A runs (`--against HEAD`) of the host's native
/// target for `validate-gate`.
fn record_native_runs(
    root: &Path,
    count: usize,
    suites: &str,
    rounds: u32,
    results: &Path,
) -> anyhow::Result<Vec<gate::validate::Recording>> {
    let config = config::load(&root.join("targets.yaml"))?;
    let host = format!("{}-unknown-linux-gnu", std::env::consts::ARCH);
    let Some(native) = config
        .targets
        .iter()
        .find(|t| t.runner == config::RunnerKind::Native && t.triple == host)
    else {
        error::exit2!("targets.yaml has no native target for this host ({host})");
    };
    let selected = select::targets(&config, Some(&native.name))?;
    let suites = select::suites(Some(suites))?;
    let opts = matrix::Options {
        profile: "quick".into(),
        rounds: Some(rounds),
        timeout_secs: None,
        results_dir: results.to_path_buf(),
        features: Vec::new(),
        install: true,
        against: Some("HEAD".into()),
        no_insns: true,
    };
    (0..count.max(1))
        .map(|i| {
            eprintln!("validate-gate: recording A/A run {} of {count}", i + 1);
            let o = matrix::run(root, &config, selected.clone(), &suites, &opts)?;
            Ok((o.run, o.base.expect("an --against run has a base")))
        })
        .collect()
}

/// The run named on the command line, or the newest complete one, read
/// and checked. `what` says what it is for; only a report may show an
/// incomplete run (with a warning), never the gate or a baseline update.
fn read_run(
    root: &Path,
    run: Option<PathBuf>,
    results: &Path,
    what: &str,
) -> anyhow::Result<(PathBuf, results::Run)> {
    let dir = match run {
        Some(dir) => {
            let dir = resolve(root, &dir);
            eprintln!("using run {}", dir.display());
            dir
        }
        None => results::newest(&resolve(root, results))?,
    };
    let run = results::read(&dir)?;
    if !run.complete() {
        if what == "report" {
            eprintln!(
                "warning: run {} is incomplete (interrupted, or still running): showing what it holds",
                dir.display()
            );
        } else {
            error::exit2!(
                "run {} is incomplete (interrupted, or still running): {what} needs a complete run",
                dir.display()
            );
        }
    }
    Ok((dir, run))
}

/// Why no selected target ran, when none did: a matrix of only
/// "not run" targets has tested nothing and must not pass.
fn nothing_ran(run: &results::Run) -> Option<String> {
    let reasons: Vec<String> = run
        .targets
        .iter()
        .map(|t| match &t.status {
            results::Status::NotRun(why) => Some(format!("{}: {why}", t.name)),
            _ => None,
        })
        .collect::<Option<_>>()?;
    Some(reasons.join("; "))
}

/// Compares `run` with its reference, prints and writes the reports;
/// returns whether the gate passed. The reference is `--baselines` when
/// given, else the base revision of an `--against` run (`base`, or read
/// from `<dir>/base`), else the committed `baselines/`.
fn run_gate(
    root: &Path,
    run: &results::Run,
    dir: &Path,
    base: Option<&results::Run>,
    args: &GateArgs,
) -> anyhow::Result<bool> {
    let opts = gate::GateOptions::from(args);
    opts.check()?;
    let read_base;
    let reference = match (&args.baselines, base, &run.against) {
        (Some(b), _, _) => gate::Reference::stored(run, &resolve(root, b))?,
        (None, Some(base), _) => gate::Reference::Base(base),
        (None, None, Some(_)) => {
            read_base = results::read(&dir.join("base"))?;
            gate::Reference::Base(&read_base)
        }
        (None, None, None) => gate::Reference::stored(run, &root.join("baselines"))?,
    };
    let report = gate::evaluate(run, &reference, &opts)?;
    print!("\n{}", report.terminal());
    let write = |path: &Option<PathBuf>, text: String| -> anyhow::Result<()> {
        if let Some(p) = path {
            std::fs::write(resolve(root, p), text)
                .with_context(|| format!("writing {}", p.display()))?;
        }
        Ok(())
    };
    write(&args.json, serde_json::to_string_pretty(&report.json())?)?;
    write(&args.markdown, report.markdown(1 << 20))?;
    write(&args.pr_comment, report.markdown(64_000))?;
    Ok(!report.failed())
}

fn run(cli: Cli) -> anyhow::Result<bool> {
    let root = root()?;
    match cli.command {
        Command::Matrix {
            selection,
            suites,
            profile,
            rounds,
            timeout,
            results,
            features,
            no_install,
            no_gate,
            no_insns,
            against,
            gate,
        } => {
            // Every option is checked before anything is installed or built.
            gate::GateOptions::from(&gate).check()?;
            let config = config::load(&resolve(&root, &selection.config))?;
            let targets = select::targets(&config, selection.targets.as_deref())?;
            let suites = select::suites(suites.as_deref())?;
            let opts = matrix::Options {
                profile,
                rounds,
                timeout_secs: timeout,
                results_dir: resolve(&root, &results),
                features,
                install: !no_install,
                against,
                no_insns,
            };
            let matrix::Outcome { run, dir, base } =
                matrix::run(&root, &config, targets, &suites, &opts)?;
            if let Some(why) = nothing_ran(&run) {
                error::exit2!("nothing ran: {why}");
            }
            let targets_ok = run
                .targets
                .iter()
                .all(|t| !matches!(t.status, results::Status::Failed(_)));
            let gate_ok = run_gate(&root, &run, &dir, base.as_ref(), &gate)?;
            if no_gate && !gate_ok {
                println!("--no-gate: the comparison above does not change the exit status");
            }
            Ok(targets_ok && (no_gate || gate_ok))
        }
        Command::Gate { run, results, gate } => {
            gate::GateOptions::from(&gate).check()?;
            let (dir, run) = read_run(&root, run, &results, "the gate")?;
            run_gate(&root, &run, &dir, None, &gate)
        }
        Command::Baseline {
            command:
                BaselineCommand::Update {
                    targets,
                    suites,
                    from,
                    results,
                    baselines,
                },
        } => {
            let (_, run) = read_run(&root, from, &results, "baseline update")?;
            if run.host.lockmatrix_dirty {
                eprintln!(
                    "warning: run {} was made from a tree with uncommitted changes",
                    run.run_id
                );
            }
            let lines = gate::update_baselines(
                &run,
                &resolve(&root, &baselines),
                targets.as_deref(),
                suites.as_deref(),
                &run.host.lockmatrix_commit,
            )?;
            for line in lines {
                println!("{line}");
            }
            Ok(true)
        }
        Command::Doctor { selection } => {
            let config = config::load(&resolve(&root, &selection.config))?;
            let targets = select::targets(&config, selection.targets.as_deref())?;
            let need = toolchain::rust_version(&root.join("Cargo.toml"));
            if doctor::run(&config, &targets, need) {
                Ok(true)
            } else {
                error::exit2!("some targets are not ready: see above")
            }
        }
        Command::Report {
            run,
            results,
            tables,
        } => {
            let (_, run) = read_run(&root, run, &results, "report")?;
            if tables {
                print!("{}", seed_tables::render(&run));
                return Ok(true);
            }
            print!("{}", table::timings(&run));
            println!("\n{}", table::status(&run));
            println!("{}", table::summary(&run));
            Ok(true)
        }
        Command::Ci {
            command: CiCommand::Generate { config },
        } => {
            let config = config::load(&resolve(&root, &config))?;
            for path in ci::generate(&root, &config)? {
                println!("wrote {}", path.display());
            }
            Ok(true)
        }
        Command::Ci {
            command: CiCommand::Check { config },
        } => {
            let config = config::load(&resolve(&root, &config))?;
            let drift = ci::check(&root, &config)?;
            for line in &drift {
                println!("{line}");
            }
            if drift.is_empty() {
                println!("workflows match targets.yaml");
            }
            Ok(drift.is_empty())
        }
        Command::Ci {
            command: CiCommand::Merge { runs, out },
        } => {
            let runs: Vec<PathBuf> = runs.iter().map(|r| resolve(&root, r)).collect();
            ci::merge_runs(&runs, &resolve(&root, &out))?;
            println!("merged {} runs into {}", runs.len(), out.display());
            Ok(true)
        }
        Command::ValidateGate {
            from,
            runs,
            suites,
            rounds,
            pairs,
            evaluations,
            delta,
            alpha,
            seed,
            json,
            results,
        } => {
            let opts = gate::validate::ValidateOptions {
                evaluations,
                rounds: pairs,
                seed,
                gate: gate::GateOptions {
                    delta,
                    alpha,
                    ..gate::GateOptions::default()
                },
            };
            opts.check()?;
            let recordings: Vec<gate::validate::Recording> = if from.is_empty() {
                record_native_runs(&root, runs, &suites, rounds, &resolve(&root, &results))?
            } else {
                from.iter()
                    .map(|d| {
                        let dir = resolve(&root, d);
                        let head = results::read(&dir)?;
                        if head.against.is_none() {
                            error::exit2!(
                                "{}: not an A/A recording: make one with `cargo xtask matrix --against HEAD --rounds 60`",
                                dir.display()
                            );
                        }
                        Ok((head, results::read(&dir.join("base"))?))
                    })
                    .collect::<anyhow::Result<_>>()?
            };
            let resampled = gate::validate::resample(&recordings, &opts)?;
            print!("{}", resampled.terminal());
            let e2e = gate::validate::end_to_end(&recordings, &opts)?;
            print!("\n{}", e2e.terminal());
            if let Some(path) = json {
                let report = gate::validate::report_json(&resampled, Some(&e2e));
                std::fs::write(
                    resolve(&root, &path),
                    serde_json::to_string_pretty(&report)?,
                )?;
            }
            Ok(true)
        }
        Command::Test => test_cmd::run(&root),
    }
}
