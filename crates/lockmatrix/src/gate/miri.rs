//! The Miri check's part of the gate: one row per lock loom cannot see.
//!
//! A race on any seed of any client fails the gate, with Miri's first
//! error, the seed and the client. Against a base (`--against`,
//! `--against-crate`) a race only in the head is a regression, one in
//! both is named as present in the base too, and one only in the base is
//! shown as fixed. What was not checked (no Miri here, a lock out of
//! time) never passes silently: it makes the gate NOT GATED, which
//! `--require-gate` fails.

use crate::name::Name;
use crate::results::MiriRun;
use serde::Serialize;

/// The Miri check's part of the gate.
#[derive(Debug, Clone, Default, Serialize)]
pub struct MiriGate {
    /// Whether the run had locks for Miri (a selected suite has clients).
    pub ran: bool,
    /// Why nothing was checked, with what would make it.
    pub not_checked: Option<String>,
    /// One row per lock, in run order.
    pub locks: Vec<MiriLock>,
}

/// One lock's clients under Miri.
#[derive(Debug, Clone, Serialize)]
pub struct MiriLock {
    pub suite: Name,
    pub lock: Name,
    #[serde(rename = "crate")]
    pub krate: Name,
    pub clients: usize,
    /// Seeds run over all its clients, and those that raced.
    pub seeds: u32,
    pub races: usize,
    pub secs: f64,
    /// Every client's result came from the cache.
    pub cached: bool,
    /// The first race: client, seed, Miri's error and where.
    pub race: Option<Race>,
    /// Clients not (wholly) checked, and why.
    pub not_checked: Vec<String>,
    /// With a base: whether the base raced on this lock too (`None`: no
    /// base, or the base did not check it).
    pub in_base: Option<bool>,
}

/// A race Miri reported.
#[derive(Debug, Clone, Serialize)]
pub struct Race {
    pub client: String,
    pub seed: u32,
    pub error: String,
    pub at: Option<String>,
    /// The Miri flags that run this seed alone, reproducing it.
    pub miriflags: String,
}

impl MiriLock {
    /// `regression`, `present in the base too`, `race`, `fixed`, `clean`,
    /// `NOT CHECKED`.
    pub fn verdict(&self) -> &'static str {
        match (&self.race, self.in_base) {
            (Some(_), Some(false)) => "RACE (regression)",
            (Some(_), Some(true)) => "RACE (present in the base too)",
            (Some(_), None) => "RACE",
            (None, _) if !self.not_checked.is_empty() => "NOT CHECKED",
            (None, Some(true)) => "clean (fixed: the base raced)",
            (None, _) => "clean",
        }
    }

    /// `spinlock/spin.RwLock: RACE (regression): client "2 writers x 10",
    /// seed 3 of 24: error: ... at src/lib.rs:9:5; reproduce: ...`.
    pub fn line(&self) -> String {
        match self.reproduce() {
            Some(r) => format!("{}; reproduce: {r}", self.finding()),
            None => self.finding(),
        }
    }

    /// [`MiriLock::line`] without the command that reproduces it.
    pub fn finding(&self) -> String {
        let head = format!("{}/{}: {}", self.suite, self.lock, self.verdict());
        match &self.race {
            Some(r) => format!(
                "{head}: client \"{}\", seed {} ({} of {} seeds raced): {}{}",
                r.client,
                r.seed,
                self.races,
                self.seeds,
                r.error,
                r.at.as_deref()
                    .map(|a| format!(" at {a}"))
                    .unwrap_or_default(),
            ),
            None if !self.not_checked.is_empty() => {
                format!("{head}: {}", self.not_checked.join("; "))
            }
            None => format!(
                "{head}: {} seeds of {} clients{}",
                self.seeds,
                self.clients,
                if self.cached { " (cached)" } else { "" }
            ),
        }
    }

    /// The command that runs the race's seed alone, in the tree the
    /// suites were built in.
    pub fn reproduce(&self) -> Option<String> {
        let r = self.race.as_ref()?;
        Some(format!(
            "MIRIFLAGS=\"{}\" cargo +nightly miri run -p {} -- --lock {} --client \"{}\"",
            r.miriflags, self.suite, self.lock, r.client
        ))
    }
}

fn rows(m: &MiriRun) -> Vec<MiriLock> {
    let mut out: Vec<MiriLock> = Vec::new();
    for r in &m.results {
        let i = match out
            .iter()
            .position(|l| l.suite == r.suite && l.lock == r.lock)
        {
            Some(i) => i,
            None => {
                out.push(MiriLock {
                    suite: r.suite.clone(),
                    lock: r.lock.clone(),
                    krate: r.krate.clone(),
                    clients: 0,
                    seeds: 0,
                    races: 0,
                    secs: 0.0,
                    cached: true,
                    race: None,
                    not_checked: Vec::new(),
                    in_base: None,
                });
                out.len() - 1
            }
        };
        let l = &mut out[i];
        l.clients += 1;
        l.seeds += r.seeds;
        l.races += r.failing_seeds.len();
        l.secs += r.secs;
        l.cached &= r.cached;
        if let Some(why) = &r.not_checked {
            l.not_checked
                .push(format!("client \"{}\": {why}", r.client));
        }
        if let (None, Some(f)) = (&l.race, &r.first) {
            l.race = Some(Race {
                client: r.client.clone(),
                seed: f.seed,
                error: f.error.clone(),
                at: f.at.clone(),
                miriflags: crate::miri::seed_miriflags(f.seed, r.preemption_rate),
            });
        }
    }
    out
}

impl MiriGate {
    /// The gate's view of the head's check and, with a base, the base's.
    pub fn of(head: Option<&MiriRun>, base: Option<&MiriRun>) -> MiriGate {
        let Some(m) = head else {
            return MiriGate::default();
        };
        let mut locks = rows(m);
        if let Some(b) = base.filter(|b| b.not_checked.is_none()) {
            let base_rows = rows(b);
            for l in &mut locks {
                if let Some(bl) = base_rows
                    .iter()
                    .find(|b| b.lock == l.lock && b.suite == l.suite)
                {
                    l.in_base = Some(bl.race.is_some());
                }
            }
        }
        MiriGate {
            ran: true,
            not_checked: m.not_checked.clone(),
            locks,
        }
    }

    /// A race in the head fails the gate.
    pub fn failed(&self) -> bool {
        self.locks.iter().any(|l| l.race.is_some())
    }

    /// What was not checked: nothing, a lock's clients, or everything.
    pub fn unchecked(&self) -> Option<String> {
        if let Some(why) = &self.not_checked {
            return Some(format!("the Miri check did not run ({why})"));
        }
        let n = self
            .locks
            .iter()
            .filter(|l| l.race.is_none() && !l.not_checked.is_empty())
            .count();
        (n > 0).then(|| format!("{n} locks not wholly checked under Miri"))
    }

    /// `miri: 8 locks clean on 320 seeds ...`, or what raced.
    pub fn line(&self) -> String {
        if !self.ran {
            return "miri: not checked in this run (no selected suite has Miri clients)".into();
        }
        if let Some(e) = &self.not_checked {
            return format!("miri: NOT CHECKED: {e}");
        }
        let seeds: u32 = self.locks.iter().map(|l| l.seeds).sum();
        let raced: Vec<String> = self
            .locks
            .iter()
            .filter(|l| l.race.is_some())
            .map(|l| format!("{}/{}", l.suite, l.lock))
            .collect();
        if raced.is_empty() {
            let unchecked = self
                .unchecked()
                .map(|u| format!("; {u}"))
                .unwrap_or_default();
            format!(
                "miri: {} locks race-free on {seeds} seeds under the Rust memory model{unchecked}",
                self.locks.len()
            )
        } else {
            format!(
                "miri: {} of {} locks RACED: {}",
                raced.len(),
                self.locks.len(),
                raced.join(", ")
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::miri::{Failure, MiriResult};

    fn result(lock: &str, client: &str, failing: &[u32]) -> MiriResult {
        MiriResult {
            suite: "spinlock".into(),
            lock: lock.into(),
            krate: "ticketlock".into(),
            client: client.into(),
            covers: "exclusion".into(),
            seeds: 24,
            preemption_rate: 0.0,
            failing_seeds: failing.to_vec(),
            first: failing.first().map(|&seed| Failure {
                seed,
                error: "error: Undefined Behavior: Data race detected".into(),
                at: Some("suites/harness/src/miri.rs:58:17".into()),
            }),
            not_checked: None,
            secs: 2.0,
            cached: false,
        }
    }

    fn run(results: Vec<MiriResult>) -> MiriRun {
        MiriRun {
            results,
            not_checked: None,
            toolchain: Some("miri 0.1.0".into()),
            setup_secs: None,
            build_secs: None,
            secs: 4.0,
        }
    }

    #[test]
    fn a_race_fails_with_its_client_seed_and_error() {
        let head = run(vec![
            result("ticketlock.RawTicketLock", "2 threads x 10", &[]),
            result("ticketlock.RawTicketLock", "3 threads x 4", &[5, 1]),
        ]);
        let g = MiriGate::of(Some(&head), None);
        assert!(g.failed());
        assert_eq!(g.locks.len(), 1);
        let l = &g.locks[0];
        assert_eq!((l.clients, l.seeds, l.races), (2, 48, 2));
        assert_eq!(
            l.line(),
            "spinlock/ticketlock.RawTicketLock: RACE: client \"3 threads x 4\", seed 5 (2 of 48 seeds raced): error: Undefined Behavior: Data race detected at suites/harness/src/miri.rs:58:17; reproduce: MIRIFLAGS=\"-Zmiri-seed=5 -Zmiri-preemption-rate=0 -Zmiri-ignore-leaks\" cargo +nightly miri run -p spinlock -- --lock ticketlock.RawTicketLock --client \"3 threads x 4\""
        );
        assert!(g.line().contains("1 of 1 locks RACED"));
    }

    #[test]
    fn against_a_base_a_race_is_a_regression_present_in_the_base_or_fixed() {
        let clean = run(vec![result("a", "c", &[]), result("b", "c", &[])]);
        let raced = run(vec![result("a", "c", &[2]), result("b", "c", &[])]);
        let g = MiriGate::of(Some(&raced), Some(&clean));
        assert_eq!(g.locks[0].verdict(), "RACE (regression)");
        assert_eq!(g.locks[1].verdict(), "clean");
        let g = MiriGate::of(Some(&raced), Some(&raced));
        assert_eq!(g.locks[0].verdict(), "RACE (present in the base too)");
        assert!(g.failed());
        let g = MiriGate::of(Some(&clean), Some(&raced));
        assert_eq!(g.locks[0].verdict(), "clean (fixed: the base raced)");
        assert!(!g.failed() && g.unchecked().is_none());
    }

    #[test]
    fn nothing_unchecked_passes_silently() {
        let mut none = run(Vec::new());
        none.not_checked = Some(format!("no Miri: `{}`", crate::miri::INSTALL));
        let g = MiriGate::of(Some(&none), None);
        assert!(!g.failed());
        assert!(g
            .unchecked()
            .unwrap()
            .contains("rustup component add miri rust-src"));
        assert!(g.line().starts_with("miri: NOT CHECKED"));
        let mut slow = result("a", "c", &[]);
        slow.not_checked = Some("timed out".into());
        let g = MiriGate::of(Some(&run(vec![slow])), None);
        assert_eq!(g.locks[0].verdict(), "NOT CHECKED");
        assert_eq!(
            g.unchecked().as_deref(),
            Some("1 locks not wholly checked under Miri")
        );
        assert!(!MiriGate::of(None, None).ran);
    }
}
