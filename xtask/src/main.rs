//! `cargo xtask <command>`: lockmatrix's command line. Each command's flags
//! are in `flags.rs`, its work in `commands/<command>.rs`; the pipeline
//! itself is the `lockmatrix` library.
//!
//! Exit status, decided here and nowhere else: 0 all good; 1 a target
//! failed, a check failed or a cell regressed (a command returns
//! `Ok(false)`); 2 bad input, missing set-up or an internal error (a
//! command returns an error, printed with what to fix).

#[macro_use]
mod show;
mod commands;
mod flags;
mod interrupt;
mod miri_setup;
mod packages;
mod progress;

use clap::Parser;
use flags::{Cli, Command};
use std::process::ExitCode;

fn main() -> ExitCode {
    // Like any Unix filter: end quietly when the reader goes away
    // (`cargo xtask doctor | head`) instead of panicking on a broken pipe.
    // SAFETY: restoring the default disposition before any thread starts.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
    // Before any thread: an interrupted run removes what it made.
    interrupt::install();
    let cli = Cli::parse();
    let result = commands::root().and_then(|root| match cli.command {
        Command::Matrix(args) => commands::matrix::run(&root, args),
        Command::Gate(args) => commands::gate::run(&root, args),
        Command::ValidateGate(args) => commands::validate_gate::run(&root, args),
        Command::Ci { command } => commands::ci::run(&root, command),
        Command::Baseline { command } => commands::baseline::run(&root, command),
        Command::Doctor(selection) => commands::doctor::run(&root, selection),
        Command::Report(args) => commands::report::run(&root, args),
        Command::Test => commands::test::run(&root),
        Command::MutateOrderings(args) => commands::mutate_orderings::run(&root, args),
    });
    if let Err(e) = &result {
        errln!("error: {}", bounded(&format!("{e:#}")));
    }
    ExitCode::from(exit_status(&result))
}

/// The longest line of an error shown: every value an error echoes is
/// bounded where it is taken from input; this bounds whatever was missed
/// (a 5 MB value), and leaves whole what lockmatrix lists itself (the
/// valid names of ten thousand targets take 150 kB).
const LINE_LIMIT: usize = 256 << 10;

/// `message` with each line cut at [`LINE_LIMIT`] characters.
fn bounded(message: &str) -> String {
    message
        .lines()
        .map(|l| match l.char_indices().nth(LINE_LIMIT) {
            Some((i, _)) => format!(
                "{}... ({} more characters)",
                &l[..i],
                l[i..].chars().count()
            ),
            None => l.to_string(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// A command's result as the exit status the header above gives it.
fn exit_status(result: &anyhow::Result<bool>) -> u8 {
    match result {
        Ok(true) => 0,
        Ok(false) => 1,
        Err(_) => 2,
    }
}

#[cfg(test)]
mod tests {
    use super::{bounded, exit_status, LINE_LIMIT};

    #[test]
    fn an_error_line_is_bounded() {
        let long = format!("a\n{}\nb", "x".repeat(5 << 20));
        let shown = bounded(&long);
        assert!(
            shown.lines().all(|l| l.len() < LINE_LIMIT + 40),
            "{}",
            shown.len()
        );
        assert!(shown.starts_with("a\n") && shown.ends_with("characters)\nb"));
    }

    #[test]
    fn exit_status_is_0_all_good_1_something_failed_2_an_error() {
        assert_eq!(exit_status(&Ok(true)), 0);
        // A target failed, a check failed or a cell regressed.
        assert_eq!(exit_status(&Ok(false)), 1);
        // Bad input, missing set-up or an internal error: never a failed target.
        let bad_input = anyhow::anyhow!("targets.yaml:3:5: unknown field `runer`");
        assert_eq!(exit_status(&Err(bad_input)), 2);
    }
}
