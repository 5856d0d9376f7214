//! What the Miri check reads and keeps: the clients a suite lists under
//! Miri (`suites/harness/src/miri.rs` prints them) and, per lock and
//! client, what Miri said on its seeds (read from its stderr).

use super::error::MiriError;
use crate::name::Name;
use serde::{Deserialize, Serialize};

/// One client of one lock, as the suite lists it.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Listed {
    #[serde(rename = "type")]
    _type: ListedType,
    pub suite: Name,
    pub lock: Name,
    #[serde(rename = "crate")]
    pub krate: Name,
    pub client: String,
    pub covers: String,
    pub seeds: u32,
    pub preemption_rate: f64,
}

#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(rename_all = "snake_case")]
enum ListedType {
    MiriClient,
}

/// Most seeds a client may ask for: a listed number is read from a
/// binary, and a run must stay bounded.
pub const MAX_SEEDS: u32 = 1024;

/// Reads the `--list` output of `suite` under Miri.
pub fn parse_list(suite: &str, stdout: &str) -> Result<Vec<Listed>, MiriError> {
    let mut out = Vec::new();
    for line in stdout.lines().filter(|l| !l.trim().is_empty()) {
        let bad = |why: String| MiriError::BadOutput {
            suite: suite.to_string(),
            line: line.chars().take(200).collect(),
            why,
        };
        let l: Listed = serde_json::from_str(line).map_err(|e| bad(e.to_string()))?;
        if l.suite != suite {
            return Err(bad(format!("a client of suite {:?}", l.suite.as_str())));
        }
        if l.seeds == 0 || l.seeds > MAX_SEEDS {
            return Err(bad(format!("seeds must be 1 to {MAX_SEEDS}")));
        }
        if !(0.0..=1.0).contains(&l.preemption_rate) {
            return Err(bad("preemption_rate must be 0 to 1".into()));
        }
        if l.client.is_empty() || l.client.len() > 100 || l.client.chars().any(char::is_control) {
            return Err(bad(
                "a client's name is 1 to 100 printable characters".into()
            ));
        }
        out.push(l);
    }
    Ok(out)
}

/// One client of one lock, checked under Miri on its seeds.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MiriResult {
    pub suite: Name,
    pub lock: Name,
    #[serde(rename = "crate")]
    pub krate: Name,
    pub client: String,
    pub covers: String,
    /// Seeds asked for (0..seeds), and the preemption rate.
    pub seeds: u32,
    pub preemption_rate: f64,
    /// Seeds on which Miri reported an error (a race, a deadlock, a
    /// wrong total), lowest first.
    #[serde(default)]
    pub failing_seeds: Vec<u32>,
    /// The lowest of them: its seed, and Miri's message with where it was.
    #[serde(default)]
    pub first: Option<Failure>,
    /// Why this client was not (wholly) checked: its time ran out, or
    /// Miri could not run it. Fails nothing; `--require-gate`
    /// fails on it.
    #[serde(default)]
    pub not_checked: Option<String>,
    pub secs: f64,
    /// From the cache (nothing it is built from changed), not run now.
    #[serde(default, skip_serializing)]
    pub cached: bool,
}

impl MiriResult {
    /// Whether Miri reported an error on some seed.
    pub fn raced(&self) -> bool {
        !self.failing_seeds.is_empty()
    }
}

/// Miri's first error on a seed.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Failure {
    pub seed: u32,
    /// `error: Undefined Behavior: Data race detected between ...`.
    pub error: String,
    /// `src/lib.rs:30:9`, where Miri stopped.
    #[serde(default)]
    pub at: Option<String>,
}

/// What one `-Zmiri-many-seeds` run said on stderr. Miri runs the seeds
/// on parallel threads, so a seed's error can print after another seed's
/// `FAILING SEED:` line, or between another's `Trying seed:` and its
/// error: which error is whose cannot be told from the stream. What can be
/// is which seeds failed (each `FAILING SEED: N` line is whole) and which
/// errors were printed; a failing seed's own error comes from running it
/// alone ([`parse_seed`]).
#[derive(Debug, Default, PartialEq)]
pub struct Seeds {
    /// The seeds that failed, lowest first.
    pub failing: Vec<u32>,
    /// The first line of every error and panic printed, in print order,
    /// whoever's it was.
    pub errors: Vec<String>,
    /// Where the run failed without any seed failing (the program did
    /// not build, a flag was refused): the exit status and first error.
    pub other: Option<String>,
}

/// Reads Miri's stderr of a many-seeds run that exited with `code`.
pub fn parse_seeds(stderr: &str, code: i32) -> Seeds {
    let mut seeds = Seeds::default();
    for line in stderr.lines() {
        if let Some(n) = line.strip_prefix("FAILING SEED:") {
            if let Ok(seed) = n.trim().parse() {
                seeds.failing.push(seed);
            }
        } else if line.contains(" panicked at ") || is_error(line) {
            seeds.errors.push(line.to_string());
        }
    }
    seeds.failing.sort_unstable();
    seeds.failing.dedup();
    if code != 0 && seeds.failing.is_empty() {
        let first = stderr
            .lines()
            .find(|l| l.starts_with("error"))
            .or_else(|| stderr.lines().rfind(|l| !l.trim().is_empty()))
            .unwrap_or("no output");
        seeds.other = Some(format!("exit status {code}: {first}"));
    }
    seeds
}

/// A line that starts one of Miri's errors, not its closing count
/// (`error: aborting due to 3 previous errors`).
fn is_error(line: &str) -> bool {
    line.starts_with("error") && !line.starts_with("error: aborting due to")
}

/// One seed run alone (`-Zmiri-seed=N`) that exited with `code`: its
/// first error (or panic) and where, all of it this seed's own. `None`
/// when it did not fail. A failure whose output names no error is
/// `known: false`.
pub fn parse_seed(stderr: &str, seed: u32, code: i32) -> Option<Solo> {
    if code == 0 {
        return None;
    }
    let lines: Vec<&str> = stderr.lines().collect();
    let error = lines.iter().position(|l| is_error(l));
    let (error, at, known) = match (panicked(&lines), error) {
        (Some((p, at)), _) => (p, at, true),
        (None, Some(i)) => (
            lines[i].to_string(),
            lines[i + 1..]
                .iter()
                .find_map(|l| l.trim_start().strip_prefix("--> "))
                .map(str::to_string),
            true,
        ),
        (None, None) => (
            format!(
                "error: exit status {code}: {}",
                lines
                    .iter()
                    .rfind(|l| !l.trim().is_empty())
                    .unwrap_or(&"no output")
            ),
            None,
            false,
        ),
    };
    Some(Solo {
        failure: Failure { seed, error, at },
        known,
    })
}

/// A seed run alone: what it failed with, and whether Miri said what.
#[derive(Debug, PartialEq)]
pub struct Solo {
    pub failure: Failure,
    pub known: bool,
}

/// A seed's panic (the harness aborts on it: a wrong total, an assertion
/// in the lock), said by its message rather than by Miri's "abnormal
/// termination": `panic: assertion failed; left: 4; right: 0`, with the
/// place it panicked.
fn panicked(block: &[&str]) -> Option<(String, Option<String>)> {
    let i = block.iter().position(|l| l.contains(" panicked at "))?;
    let at = block[i]
        .split_once(" panicked at ")
        .map(|(_, at)| at.trim_end().trim_end_matches(':').to_string());
    let message: Vec<&str> = block[i + 1..]
        .iter()
        .map(|l| l.trim())
        .take_while(|l| !l.is_empty() && !l.starts_with("note:") && !l.starts_with("error"))
        .collect();
    Some((format!("panic: {}", message.join("; ")), at))
}

/// Whether Miri's error says it could not run the code (a foreign
/// function or syscall it does not support), rather than that the code
/// is wrong.
pub fn unsupported(error: &str) -> bool {
    error.starts_with("error: unsupported operation")
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A real `-Zmiri-many-seeds=0..16` run of a ticket lock with every
    /// ordering `Relaxed`, on 2 vCPUs: two seeds at a time, so errors and
    /// `FAILING SEED:` lines interleave (seed 0's line comes after seed
    /// 14's error, seed 7's after seed 8's).
    const INTERLEAVED: &str = include_str!("testdata/many-seeds-interleaved.stderr");
    /// Seed 0 of the same program run alone.
    const ONE_SEED: &str = include_str!("testdata/one-seed.stderr");

    #[test]
    fn every_failing_seed_is_read_whatever_order_they_print_in() {
        let s = parse_seeds(INTERLEAVED, 1);
        assert_eq!(s.failing, (0..16).collect::<Vec<u32>>());
        assert_eq!(s.errors.len(), 16);
        assert!(s
            .errors
            .iter()
            .all(|e| e.starts_with("error: Undefined Behavior: Data race")));
        assert_eq!(s.other, None);
        // The printed order is not the seeds' order: the proof that an
        // error cannot be given to the seed whose line follows it.
        let order: Vec<u32> = INTERLEAVED
            .lines()
            .filter_map(|l| l.strip_prefix("FAILING SEED: ")?.parse().ok())
            .collect();
        assert_ne!(order, s.failing, "{order:?}");
        // Reordered whole (blocks shuffled, lines of two seeds swapped),
        // the same seeds and errors are read.
        let mut lines: Vec<&str> = INTERLEAVED.lines().collect();
        lines.reverse();
        let r = parse_seeds(&lines.join("\n"), 1);
        assert_eq!(r.failing, s.failing);
        assert_eq!(r.errors.len(), s.errors.len());
    }

    #[test]
    fn a_seed_run_alone_gives_its_own_error_and_where() {
        let solo = parse_seed(ONE_SEED, 0, 1).expect("it failed");
        assert!(solo.known);
        assert_eq!(solo.failure.seed, 0);
        assert!(
            solo.failure
                .error
                .starts_with("error: Undefined Behavior: Data race detected between"),
            "{solo:?}"
        );
        assert_eq!(solo.failure.at.as_deref(), Some("src/main.rs:11:22"));
        assert_eq!(parse_seed("", 3, 0), None);
        // A failure that prints no error is said by its exit status, and
        // known to be unexplained.
        let bare = parse_seed("something\n", 3, 134).unwrap();
        assert!(!bare.known);
        assert_eq!(bare.failure.error, "error: exit status 134: something");
    }

    #[test]
    fn a_panicking_seed_is_said_by_its_message_and_where_it_panicked() {
        let stderr = "thread '<unnamed>' (1001) panicked at /r/spin-0.5.2/src/rw_lock.rs:235:9:\nassertion `left == right` failed\n  left: 4\n right: 0\nnote: run with `RUST_BACKTRACE=1`\nerror: abnormal termination: the program aborted execution\n   --> suites/harness/src/miri.rs:133:9\n";
        let s = parse_seed(stderr, 1, 1).unwrap();
        assert_eq!(
            s.failure.error,
            "panic: assertion `left == right` failed; left: 4; right: 0"
        );
        assert_eq!(
            s.failure.at.as_deref(),
            Some("/r/spin-0.5.2/src/rw_lock.rs:235:9")
        );
    }

    #[test]
    fn a_clean_run_fails_nothing_and_a_broken_one_says_why() {
        assert_eq!(
            parse_seeds("Trying seed: 0\nTrying seed: 1\n", 0),
            Seeds::default()
        );
        let s = parse_seeds("error[E0432]: unresolved import `x`\n", 101);
        assert!(s.failing.is_empty());
        assert_eq!(
            s.other.as_deref(),
            Some("exit status 101: error[E0432]: unresolved import `x`")
        );
        assert!(unsupported(
            "error: unsupported operation: can't call foreign function `x`"
        ));
        assert!(!unsupported(
            "error: Undefined Behavior: Data race detected"
        ));
    }

    const LISTED: &str = r#"{"type":"miri_client","suite":"spinlock","lock":"spin_mutex","crate":"spin","client":"2 threads x 10","covers":"exclusion","seeds":24,"preemption_rate":0.0}"#;

    #[test]
    fn a_listing_is_read_and_checked() {
        let l = parse_list("spinlock", &format!("{LISTED}\n\n{LISTED}\n")).unwrap();
        assert_eq!(l.len(), 2);
        assert_eq!((l[0].lock.as_str(), l[0].seeds), ("spin_mutex", 24));
        let why = |text: &str| match parse_list("spinlock", text) {
            Err(MiriError::BadOutput { why, .. }) => why,
            other => panic!("not refused: {other:?}"),
        };
        assert!(why("warning: unused").contains("expected"));
        assert!(why(&LISTED.replace("24", "0")).contains("seeds"));
        assert!(why(&LISTED.replace("24", "100000")).contains("seeds"));
        assert!(why(&LISTED.replace(":0.0}", ":2.5}")).contains("preemption_rate"));
        // A name that is not a name, as everywhere a name is read.
        assert!(!why(&LISTED.replace("spin_mutex", "../x")).is_empty());
        assert!(
            why(&LISTED.replace("\"suite\":\"spinlock\"", "\"suite\":\"rwsem\"")).contains("rwsem")
        );
        assert!(why(&LISTED.replace("miri_client", "model")).contains("unknown variant"));
    }
}
