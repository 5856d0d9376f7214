//! lockmatrix's orchestrator, run as `cargo xtask <command>`.
//!
//! Exit status: 0 all good; 1 a target failed (or, later, regressed);
//! 2 bad input or missing set-up, with a message saying what to fix.

mod build;
mod config;
mod doctor;
mod error;
#[allow(dead_code)] // wired into the CLI once the gate lands
mod gate;
mod host;
mod matrix;
mod packages;
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
        #[arg(long)]
        rounds: Option<u32>,
        /// Seconds before a suite run is killed, overriding targets.yaml
        #[arg(long)]
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

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("xtask lives in the workspace")
        .to_path_buf()
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match run(cli) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(e) => {
            eprintln!("error: {e:#}");
            if e.downcast_ref::<error::Exit2>().is_some() {
                ExitCode::from(2)
            } else {
                ExitCode::from(1)
            }
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

fn run(cli: Cli) -> anyhow::Result<bool> {
    let root = root();
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
        } => {
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
            };
            matrix::run(&root, &config, targets, &suites, &opts)
        }
        Command::Doctor { selection } => {
            let config = config::load(&resolve(&root, &selection.config))?;
            let targets = select::targets(&config, selection.targets.as_deref())?;
            if doctor::run(&config, &targets) {
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
            let dir = match run {
                Some(dir) => resolve(&root, &dir),
                None => results::newest(&resolve(&root, &results))?,
            };
            let run = results::read(&dir)?;
            if tables {
                print!("{}", seed_tables::render(&run));
                return Ok(true);
            }
            print!("{}", table::timings(&run));
            println!("\n{}", table::status(&run));
            println!("{}", table::summary(&run));
            Ok(true)
        }
        Command::Test => test_cmd::run(&root),
    }
}
