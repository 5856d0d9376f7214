//! Command-line flags shared by every suite binary.
//!
//! Parsed by hand: the suites are cross-built with build-std and every crate
//! they pull in is compiled once per target.

use std::process::exit;

/// How much work a run does: `quick` fits the whole matrix in CI, `full`
/// is seed-sized.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Profile {
    Quick,
    Full,
}

impl Profile {
    pub fn name(self) -> &'static str {
        match self {
            Profile::Quick => "quick",
            Profile::Full => "full",
        }
    }

    /// Picks the quick or the full value.
    pub fn pick<T>(self, quick: T, full: T) -> T {
        match self {
            Profile::Quick => quick,
            Profile::Full => full,
        }
    }
}

#[derive(Clone, Debug)]
pub struct Args {
    pub list: bool,
    /// Benchmarks to run; empty means all.
    pub bench: Vec<String>,
    /// Lock implementations to run (spinlock, rwsem); empty means all.
    pub locks: Vec<String>,
    pub threads: Option<Vec<usize>>,
    pub rounds: Option<usize>,
    pub iters: Option<u64>,
    pub duration_ms: Option<u64>,
    pub profile: Profile,
    pub oversubscribe: bool,
    pub seed: u64,
    /// Measure the canary after the env record (`--canary`): the
    /// machine's state, beside the cells ([`crate::canary`]).
    pub canary: bool,
    /// `--case KEY=V[,V..]`, repeatable: run only the cases whose `KEY`
    /// is one of the values (a case without `KEY` is not narrowed by it).
    /// The tool narrows a pull request's later pairs to the cells still
    /// undecided with it, so a cell costs its own time, not its lock's.
    pub cases: Vec<(String, Vec<String>)>,
    /// `--cell BENCH:KEY=V[,KEY=V..]`, repeatable: run only the cells
    /// named, each exactly (its bench, and each key it names holding that
    /// value). `--case` filters are a cross product, so two undecided
    /// cells ran the cases between them too; these run no other cell.
    pub cells: Vec<(String, Vec<(String, String)>)>,
}

const USAGE: &str = "\
usage: SUITE [--list] [--bench NAME[,NAME..]] [--lock NAME[,NAME..]] [--threads N[,N..]] [--rounds N]
             [--iters N] [--duration-ms N] [--profile quick|full] [--oversubscribe] [--seed N]
             [--canary] [--case KEY=V[,V..]].. [--cell BENCH:KEY=V[,KEY=V..]]..
Prints JSON-lines records (env, sample, check) on stdout; diagnostics on stderr.";

fn fail(msg: &str) -> ! {
    eprintln!("error: {msg}\n{USAGE}");
    exit(2)
}

fn number<T: std::str::FromStr>(flag: &str, v: &str) -> T {
    v.parse()
        .unwrap_or_else(|_| fail(&format!("{flag} expects a number, got '{v}'")))
}

impl Args {
    /// Parses `std::env::args()`, checking benchmark names against `benches`.
    pub fn from_env(benches: &[&str]) -> Args {
        Args::parse(std::env::args().skip(1), benches)
    }

    pub fn parse(argv: impl IntoIterator<Item = String>, benches: &[&str]) -> Args {
        let mut a = Args {
            list: false,
            bench: Vec::new(),
            locks: Vec::new(),
            threads: None,
            rounds: None,
            iters: None,
            duration_ms: None,
            profile: Profile::Quick,
            oversubscribe: false,
            seed: 1,
            canary: false,
            cases: Vec::new(),
            cells: Vec::new(),
        };
        let mut it = argv.into_iter();
        while let Some(flag) = it.next() {
            let mut value = || {
                it.next()
                    .unwrap_or_else(|| fail(&format!("{flag} needs a value")))
            };
            match flag.as_str() {
                "--list" => a.list = true,
                "--oversubscribe" => a.oversubscribe = true,
                "--canary" => a.canary = true,
                "--bench" => a.bench.extend(value().split(',').map(str::to_string)),
                "--lock" => a.locks.extend(value().split(',').map(str::to_string)),
                "--threads" => {
                    let v = value();
                    let t: Vec<usize> = v.split(',').map(|n| number("--threads", n)).collect();
                    if t.contains(&0) {
                        fail("--threads counts start at 1");
                    }
                    a.threads = Some(t);
                }
                "--case" => {
                    let v = value();
                    let Some((key, values)) = v.split_once('=').filter(|(k, _)| !k.is_empty())
                    else {
                        fail(&format!("--case expects KEY=V[,V..], got '{v}'"))
                    };
                    a.cases
                        .push((key.into(), values.split(',').map(str::to_string).collect()));
                }
                "--cell" => {
                    let v = value();
                    let cell = v.split_once(':').and_then(|(bench, keys)| {
                        let keys: Option<Vec<(String, String)>> = keys
                            .split(',')
                            .map(|kv| kv.split_once('=').filter(|(k, _)| !k.is_empty()))
                            .map(|kv| kv.map(|(k, v)| (k.to_string(), v.to_string())))
                            .collect();
                        Some((bench.to_string(), keys?))
                    });
                    match cell {
                        Some(c) if !c.0.is_empty() => a.cells.push(c),
                        _ => fail(&format!("--cell expects BENCH:KEY=V[,KEY=V..], got '{v}'")),
                    }
                }
                "--rounds" => a.rounds = Some(number("--rounds", &value())),
                "--iters" => a.iters = Some(number("--iters", &value())),
                "--duration-ms" => a.duration_ms = Some(number("--duration-ms", &value())),
                "--seed" => a.seed = number("--seed", &value()),
                "--profile" => {
                    a.profile = match value().as_str() {
                        "quick" => Profile::Quick,
                        "full" => Profile::Full,
                        other => fail(&format!("unknown profile '{other}' (quick, full)")),
                    }
                }
                "-h" | "--help" => {
                    println!("{USAGE}");
                    exit(0)
                }
                other => fail(&format!("unknown flag '{other}'")),
            }
        }
        if let Some(bad) = a.bench.iter().find(|b| !benches.contains(&b.as_str())) {
            fail(&format!(
                "unknown benchmark '{bad}'; this suite has: {}",
                benches.join(", ")
            ));
        }
        if a.rounds == Some(0) {
            fail("--rounds must be at least 1");
        }
        a
    }

    /// True when `bench` was selected (or nothing was).
    pub fn wants(&self, bench: &str) -> bool {
        self.bench.is_empty() || self.bench.iter().any(|b| b == bench)
    }

    /// True when the cell of `bench` and `case` (an object) passes every
    /// `--case` filter (each filter's key absent from it, or its value, a
    /// string or a number as printed, one of the filter's) and, if any
    /// `--cell` was given, is one of them.
    pub fn wants_case(&self, bench: &str, case: &crate::json::J) -> bool {
        let crate::json::J::Obj(pairs) = case else {
            return true;
        };
        let shown = |key: &str| {
            pairs.iter().find(|(k, _)| k == key).map(|(_, v)| match v {
                crate::json::J::Str(s) => s.clone(),
                other => other.to_string(),
            })
        };
        let cases = self
            .cases
            .iter()
            .all(|(key, values)| shown(key).is_none_or(|v| values.contains(&v)));
        let cells = self.cells.is_empty()
            || self.cells.iter().any(|(b, keys)| {
                b == bench && keys.iter().all(|(k, v)| shown(k).as_ref() == Some(v))
            });
        cases && cells
    }

    /// True when lock implementation `name` was selected (or none was).
    /// Suites check the names themselves with [`Args::check_locks`].
    pub fn wants_lock(&self, name: &str) -> bool {
        self.locks.is_empty() || self.locks.iter().any(|l| l == name)
    }

    /// Exits 2 naming the valid locks when `--lock` named an unknown one.
    pub fn check_locks(&self, known: &[&str]) {
        if let Some(bad) = self.locks.iter().find(|l| !known.contains(&l.as_str())) {
            fail(&format!(
                "unknown lock '{bad}'; this suite has: {}",
                known.join(", ")
            ));
        }
    }

    pub fn rounds(&self, quick: usize, full: usize) -> usize {
        self.rounds.unwrap_or(self.profile.pick(quick, full))
    }

    pub fn iters(&self, quick: u64, full: u64) -> u64 {
        self.iters.unwrap_or(self.profile.pick(quick, full))
    }

    pub fn duration_ms(&self, quick: u64, full: u64) -> u64 {
        self.duration_ms.unwrap_or(self.profile.pick(quick, full))
    }

    /// Thread counts to sweep: `--threads` as given, else seed 001's ladder
    /// 1, 2, 3, 4, 6, 8, 12, 16, ... capped at the CPU count (twice it with
    /// `--oversubscribe`: more threads than CPUs measures the scheduler, not
    /// the lock, so it must be asked for).
    pub fn thread_counts(&self) -> Vec<usize> {
        if let Some(t) = &self.threads {
            return t.clone();
        }
        let cpus = crate::threads::cpus();
        let cap = if self.oversubscribe { 2 * cpus } else { cpus };
        ladder(cap)
    }
}

/// 1, 2, 3, 4, 6, 8, 12, 16, 24, ... up to and including `cap`.
pub fn ladder(cap: usize) -> Vec<usize> {
    let mut out: Vec<usize> = [1, 2, 3].into_iter().filter(|&n| n <= cap).collect();
    let mut n = 4;
    while n <= cap {
        out.push(n);
        if n * 3 / 2 <= cap {
            out.push(n * 3 / 2);
        }
        n *= 2;
    }
    if out.last() != Some(&cap) && cap > 0 {
        out.push(cap);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(args: &[&str]) -> Args {
        Args::parse(args.iter().map(|s| s.to_string()), &["a", "b"])
    }

    #[test]
    fn reads_flags() {
        let a = parse(&[
            "--bench",
            "a",
            "--threads",
            "1,4",
            "--rounds",
            "3",
            "--profile",
            "full",
        ]);
        assert_eq!(a.bench, ["a"]);
        assert!(a.wants("a") && !a.wants("b"));
        assert_eq!(a.threads, Some(vec![1, 4]));
        assert_eq!(a.rounds(5, 9), 3);
        assert_eq!(a.iters(10, 20), 20);
    }

    #[test]
    fn case_filters_keep_only_the_cases_named() {
        use crate::json::obj;
        let a = parse(&["--case", "mix=half", "--case", "cs_load=10,sleep1us"]);
        let case = |mix: &str, load: &str| {
            obj([
                ("lock", "l".into()),
                ("mix", mix.into()),
                ("cs_load", load.into()),
            ])
        };
        assert!(a.wants_case("b", &case("half", "sleep1us")));
        assert!(a.wants_case("b", &case("half", "10")));
        assert!(!a.wants_case("b", &case("half", "1")));
        assert!(!a.wants_case("b", &case("all_writers", "10")));
        // Numbers match as printed; a key the case lacks does not narrow it.
        let t = parse(&["--case", "threads=2", "--case", "mix=half"]);
        assert!(t.wants_case(
            "b",
            &obj([("lock", "l".into()), ("threads", 2usize.into())])
        ));
        assert!(!t.wants_case(
            "b",
            &obj([("lock", "l".into()), ("threads", 1usize.into())])
        ));
        assert!(parse(&[]).wants_case("b", &case("x", "y")));
    }

    #[test]
    fn cell_filters_run_exactly_the_cells_named() {
        use crate::json::obj;
        let case = |load: &str, mix: &str, writers: usize| {
            obj([
                ("lock", "l".into()),
                ("cs_load", load.into()),
                ("mix", mix.into()),
                ("writers", writers.into()),
            ])
        };
        let a = parse(&[
            "--cell",
            "rw_mix:cs_load=1,mix=half,writers=1",
            "--cell",
            "rw_mix:cs_load=10,mix=all_writers,writers=2",
        ]);
        assert!(a.wants_case("rw_mix", &case("1", "half", 1)));
        assert!(a.wants_case("rw_mix", &case("10", "all_writers", 2)));
        // What `--case cs_load=1,10 --case mix=half,all_writers` would run
        // too: the cases between the two.
        assert!(!a.wants_case("rw_mix", &case("1", "all_writers", 2)));
        assert!(!a.wants_case("rw_mix", &case("10", "half", 1)));
        // Another bench's case of the same values; a case lacking a key.
        assert!(!a.wants_case("other", &case("1", "half", 1)));
        assert!(!a.wants_case(
            "rw_mix",
            &obj([("cs_load", "1".into()), ("mix", "half".into())])
        ));
        for bad in ["rw_mix", ":a=1", "rw_mix:a", "rw_mix:=1", "rw_mix:a=1,b"] {
            let out = std::process::Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "args::tests::parse_one_cell", "--nocapture"])
                .env("HARNESS_CELL", bad)
                .output()
                .unwrap();
            assert!(
                String::from_utf8_lossy(&out.stderr).contains("--cell expects BENCH:KEY=V"),
                "{bad}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }

    /// Parses `--cell $HARNESS_CELL` (run by the test above: a bad one
    /// exits the process).
    #[test]
    fn parse_one_cell() {
        if let Ok(v) = std::env::var("HARNESS_CELL") {
            parse(&["--cell", &v]);
        }
    }

    #[test]
    fn ladder_matches_seed_001() {
        assert_eq!(ladder(1), [1]);
        assert_eq!(ladder(2), [1, 2]);
        assert_eq!(ladder(8), [1, 2, 3, 4, 6, 8]);
        assert_eq!(ladder(16), [1, 2, 3, 4, 6, 8, 12, 16]);
        assert_eq!(ladder(10), [1, 2, 3, 4, 6, 8, 10]);
    }
}
