//! Everything the xtask prints goes through here. A run read from a CI
//! artifact can hold terminal control sequences in any string (a target's
//! stderr, a CPU model, a crafted name in an error message): each is shown
//! as an escape (`\x1b`), never sent to the terminal
//! ([`lockmatrix::escape::terminal`]). `clippy.toml` forbids the standard
//! print macros in this crate so nothing goes around.

use std::io::Write;

/// Writes `text` to standard output, made safe for a terminal.
pub fn stdout(text: &str) {
    // A reader that went away (`| head`) ends the process by SIGPIPE
    // (main.rs); any other write error has nowhere better to go.
    let _ = std::io::stdout()
        .lock()
        .write_all(lockmatrix::escape::terminal(text).as_bytes());
}

/// Writes `text` to standard error, made safe for a terminal.
pub fn stderr(text: &str) {
    let _ = std::io::stderr()
        .lock()
        .write_all(lockmatrix::escape::terminal(text).as_bytes());
}

/// `out!`, through [`stdout`].
macro_rules! out {
    ($($t:tt)*) => { $crate::show::stdout(&format!($($t)*)) };
}

/// `outln!`, through [`stdout`].
macro_rules! outln {
    () => { $crate::show::stdout("\n") };
    ($($t:tt)*) => { $crate::show::stdout(&format!("{}\n", format_args!($($t)*))) };
}

/// `errln!`, through [`stderr`].
macro_rules! errln {
    ($($t:tt)*) => { $crate::show::stderr(&format!("{}\n", format_args!($($t)*))) };
}
