//! Which invocations of a suite a target gets, and how their output is
//! folded into one suite run per side.

use crate::config::{RunnerKind, Target};
use crate::protocol::Parsed;
use crate::results::Profile;
use crate::runner::{Exit, Outcome};

use crate::policy::AB_ROUNDS;

/// Which build a step runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Side {
    Head,
    Base,
}

/// One invocation of a suite.
#[derive(Debug, Clone, PartialEq)]
pub struct Step {
    pub side: Side,
    pub args: Vec<String>,
    /// The round number its samples get (one-round invocations).
    pub round: Option<u32>,
    /// Under the target's `counted_under` emulator, for `insns_per_op` only.
    pub counted: bool,
}

impl Step {
    /// This step narrowed to one unit's cells (`--lock`, and `--bench`,
    /// `--case` where both sides take them), or as it is. The canary is
    /// the round's, not the lock's: only the round's first unit (`first`)
    /// measures it, so a round holds one canary sample.
    pub fn narrowed(&self, unit: &super::unit::Unit, first: bool) -> Step {
        let mut step = self.clone();
        step.args.extend(unit.args());
        if !first {
            step.args.retain(|a| a != "--canary");
        }
        step
    }
}

/// Rounds per side: the profile's, or with `--against` on real hardware
/// the paired test's ([`AB_ROUNDS`]); `rounds` (`--rounds`) overrides both.
pub fn rounds(profile: Profile, rounds: Option<u32>, paired: bool) -> u32 {
    let full = profile == Profile::Full;
    rounds.unwrap_or(match (paired, full) {
        (false, false) => 5,
        (false, true) => 15,
        (true, false) => AB_ROUNDS.0,
        (true, true) => AB_ROUNDS.1,
    })
}

/// The most rounds a real-hardware target's timing cells get against
/// comparable stored baselines ([`crate::family::STORED_ROUNDS`]).
pub fn stored_max(profile: Profile) -> usize {
    let (quick, full) = crate::family::STORED_ROUNDS;
    match profile {
        Profile::Quick => quick as usize,
        Profile::Full => full as usize,
    }
}

/// The invocations of one suite on `t`. Under QEMU (timing advisory, slow
/// start-up) one invocation per side does all rounds. Elsewhere each round
/// is its own invocation: contended cells jump between levels from one
/// process to the next (the host moves the vCPUs), so rounds from one
/// process understate the noise a later run sees. With `against` the sides
/// alternate, base first in even rounds, head first in odd ones, so neither
/// always runs warm. The run loop narrows a round after the first to the
/// cells still undecided, one lock at a time (`family::units`). With
/// `canary` (real hardware, no base beside it: a suite that knows the
/// flag) each round measures the machine's state too (`--canary`), which
/// stored baselines record and a later run is compared on. Last, with
/// `counted`, one counting invocation per side.
pub fn plan(
    t: &Target,
    profile: Profile,
    rounds_flag: Option<u32>,
    (against, canary): (bool, bool),
    counted: bool,
) -> Vec<Step> {
    let sides: &[Side] = if against {
        &[Side::Base, Side::Head]
    } else {
        &[Side::Head]
    };
    let base_args = || vec!["--profile".to_string(), profile.name().to_string()];
    let once = |args: Vec<String>, counted: bool| {
        sides.iter().map(move |&side| Step {
            side,
            args: args.clone(),
            round: None,
            counted,
        })
    };
    let mut steps: Vec<Step> = Vec::new();
    if t.runner == RunnerKind::Qemu {
        let mut args = base_args();
        // The emulator's times never gate: the quick profile takes one
        // round of them (every cell shown, every invariant checked) and
        // spends its time on the counts instead; full keeps the suites'.
        let qemu_rounds = (profile == Profile::Quick).then_some(1);
        if let Some(r) = rounds_flag.or(qemu_rounds) {
            args.extend(["--rounds".to_string(), r.to_string()]);
        }
        steps.extend(once(args, false));
    } else {
        for r in 0..rounds(profile, rounds_flag, against) {
            let mut order = sides.to_vec();
            if r % 2 == 1 {
                order.reverse();
            }
            let mut args = base_args();
            args.extend(["--rounds", "1", "--seed"].map(String::from));
            args.push((r + 1).to_string());
            if canary && !against {
                args.push("--canary".into());
            }
            steps.extend(order.into_iter().map(|side| Step {
                side,
                args: args.clone(),
                round: Some(r),
                counted: false,
            }));
        }
    }
    if counted {
        let mut args = base_args();
        args.extend(["--rounds", "1"].map(String::from));
        steps.extend(once(args, true));
    }
    steps
}

/// The invocations that count instructions, and only those: under QEMU
/// one round with the plugin, elsewhere the counted invocation under the
/// target's `counted_under` emulator (none when `counted` is false).
pub fn counting(t: &Target, profile: Profile, counted: bool) -> Vec<Step> {
    let mut args = vec!["--profile".to_string(), profile.name().to_string()];
    args.extend(["--rounds", "1"].map(String::from));
    let counted = counted && t.runner != RunnerKind::Qemu;
    let emulated = t.runner == RunnerKind::Qemu;
    (emulated || counted)
        .then_some(Step {
            side: Side::Head,
            args,
            round: None,
            counted,
        })
        .into_iter()
        .collect()
}

/// One side's invocations of a suite, folded into one outcome and its
/// records, with the commands that reproduce them.
pub struct Folded {
    pub outcome: Outcome,
    pub parsed: Parsed,
    pub command: String,
    pub counted_command: Option<String>,
}

impl Folded {
    /// Adds one invocation: an invocation of one round gets that round's
    /// number, a counted one keeps only its counts.
    pub fn add(acc: &mut Option<Folded>, o: Outcome, mut p: Parsed, step: &Step, command: String) {
        if let Some(round) = step.round {
            for s in &mut p.samples {
                s.round = round;
            }
        }
        if step.counted {
            // Emulated time means nothing here: only the counts are kept.
            p.samples.retain(|s| s.kind().exact());
        }
        let Some(f) = acc else {
            *acc = Some(Folded {
                outcome: o,
                parsed: p,
                command: if step.counted {
                    String::new()
                } else {
                    command.clone()
                },
                counted_command: step.counted.then_some(command),
            });
            return;
        };
        if step.counted {
            f.counted_command = Some(command);
        } else if f.command.is_empty() {
            f.command = command;
        }
        if f.outcome.exit == Exit::Code(0) {
            f.outcome.exit = o.exit;
        }
        f.outcome.stdout.push_str(&o.stdout);
        f.outcome.stderr.push_str(&o.stderr);
        f.outcome.secs += o.secs;
        f.parsed.env = f.parsed.env.take().or(p.env);
        f.parsed.samples.extend(p.samples);
        f.parsed.checks.extend(p.checks);
        f.parsed.executed.extend(p.executed);
        f.parsed.probes = f.parsed.probes.take().or(p.probes);
        f.parsed.bad_lines.extend(p.bad_lines);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(runner: RunnerKind) -> Target {
        let text = format!(
            "name: t\nclass: c\ntriple: x86_64-unknown-linux-gnu\nrunner: {}\n{}packages: []\nenabled: true\n",
            runner.name(),
            if runner == RunnerKind::Qemu { "emulator: qemu-x86_64\n" } else { "" }
        );
        serde_norway::from_str(&text).unwrap()
    }

    #[test]
    fn a_round_narrowed_to_several_locks_measures_its_canary_once() {
        let steps = plan(
            &target(RunnerKind::Native),
            Profile::Quick,
            Some(2),
            (false, true),
            false,
        );
        let round = steps.iter().find(|s| s.round == Some(1)).unwrap();
        assert!(
            round.args.contains(&"--canary".to_string()),
            "{:?}",
            round.args
        );
        let (mcs, ticket) = (
            crate::name::Name::parse("mcs").unwrap(),
            crate::name::Name::parse("ticket").unwrap(),
        );
        let unit = |lock: &crate::name::Name| super::super::unit::Unit {
            lock: Some(lock.clone()),
            ..Default::default()
        };
        let first = round.narrowed(&unit(&mcs), true);
        let second = round.narrowed(&unit(&ticket), false);
        let canaries = |s: &Step| s.args.iter().filter(|a| *a == "--canary").count();
        assert_eq!((canaries(&first), canaries(&second)), (1, 0));
        assert!(second
            .args
            .ends_with(&["--lock".to_string(), "ticket".to_string()]));
    }

    fn shape(steps: &[Step]) -> Vec<(Side, Option<u32>, bool)> {
        steps.iter().map(|s| (s.side, s.round, s.counted)).collect()
    }

    #[test]
    fn native_rounds_are_invocations_and_against_alternates_which_side_goes_first() {
        let t = target(RunnerKind::Native);
        let alone = plan(&t, Profile::Quick, Some(3), (false, false), false);
        assert_eq!(
            shape(&alone),
            [
                (Side::Head, Some(0), false),
                (Side::Head, Some(1), false),
                (Side::Head, Some(2), false)
            ]
        );
        assert!(alone[1].args.ends_with(&[
            "--rounds".into(),
            "1".into(),
            "--seed".into(),
            "2".into()
        ]));
        let ab = plan(&t, Profile::Quick, Some(2), (true, false), true);
        assert_eq!(
            shape(&ab),
            [
                (Side::Base, Some(0), false),
                (Side::Head, Some(0), false),
                (Side::Head, Some(1), false),
                (Side::Base, Some(1), false),
                (Side::Base, None, true),
                (Side::Head, None, true),
            ]
        );
        // Both sides of a pair run the same arguments (the run loop
        // narrows both to the same lock); no round asks for a family.
        assert_eq!(ab[0].args, ab[1].args);
        assert_eq!(ab[2].args, ab[3].args);
        assert!(ab
            .iter()
            .chain(&alone)
            .all(|s| !s.args.contains(&"--family".to_string())));
        assert_eq!(
            plan(&t, Profile::Quick, None, (true, false), false).len(),
            2 * AB_ROUNDS.0 as usize
        );
    }

    #[test]
    fn counting_is_one_invocation_where_counts_are_made() {
        let qemu = counting(&target(RunnerKind::Qemu), Profile::Quick, false);
        assert_eq!(shape(&qemu), [(Side::Head, None, false)]);
        assert!(qemu[0].args.ends_with(&["--rounds".into(), "1".into()]));
        let native = target(RunnerKind::Native);
        assert_eq!(
            shape(&counting(&native, Profile::Quick, true)),
            [(Side::Head, None, true)]
        );
        assert!(counting(&native, Profile::Quick, false).is_empty());
    }

    #[test]
    fn qemu_runs_each_side_once_with_all_its_rounds() {
        let t = target(RunnerKind::Qemu);
        let ab = plan(&t, Profile::Quick, Some(4), (true, false), false);
        assert_eq!(
            shape(&ab),
            [(Side::Base, None, false), (Side::Head, None, false)]
        );
        assert!(ab[0].args.ends_with(&["--rounds".into(), "4".into()]));
        // Without --rounds: one round of the emulator's times (quick), the
        // suites' own rounds (full).
        let quick = plan(&t, Profile::Quick, None, (false, false), false);
        assert!(quick[0].args.ends_with(&["--rounds".into(), "1".into()]));
        let full = plan(&t, Profile::Full, None, (false, false), false);
        assert!(!full[0].args.contains(&"--rounds".to_string()));
    }

    fn outcome(stdout: &str) -> Outcome {
        Outcome {
            exit: Exit::Code(0),
            stdout: stdout.into(),
            stderr: String::new(),
            secs: 1.0,
        }
    }

    const ENV: &str = r#"{"type":"env","protocol":2,"suite":"s","arch":"x","endian":"little","pointer_width":64,"cpus":2,"timer":"t","timer_unit":"ns","timer_hz":1e9,"relax":"none","profile":"quick","seed":1,"pinned":true,"variants":{}}"#;

    fn sample(metric: &str, value: f64) -> String {
        let unit = if metric == "insns_per_op" {
            "insns"
        } else {
            "ns"
        };
        format!(
            r#"{{"type":"sample","suite":"s","bench":"b","case":{{}},"metric":"{metric}","unit":"{unit}","better":"lower","gating":true,"round":0,"value":{value}}}"#
        )
    }

    #[test]
    fn folding_numbers_rounds_and_keeps_only_counts_from_a_counted_run() {
        let t = target(RunnerKind::Native);
        let steps = plan(&t, Profile::Quick, Some(2), (false, false), true);
        let mut acc = None;
        for (i, step) in steps.iter().enumerate() {
            let text = format!(
                "{ENV}\n{}\n{}\n",
                sample("ticks_per_op", 10.0 + i as f64),
                sample("insns_per_op", 7.0)
            );
            let o = outcome(&text);
            let p = crate::protocol::parse(&o.stdout);
            Folded::add(&mut acc, o, p, step, format!("cmd{i}"));
        }
        let f = acc.unwrap();
        let ticks: Vec<(u32, Option<f64>)> = f
            .parsed
            .samples
            .iter()
            .filter(|s| s.metric == "ticks_per_op")
            .map(|s| (s.round, s.value))
            .collect();
        // The counted run's emulated time is dropped; its count kept.
        assert_eq!(ticks, [(0, Some(10.0)), (1, Some(11.0))]);
        let insns = f
            .parsed
            .samples
            .iter()
            .filter(|s| s.metric == "insns_per_op")
            .count();
        assert_eq!(insns, 3);
        assert_eq!(
            (f.command.as_str(), f.counted_command.as_deref()),
            ("cmd0", Some("cmd2"))
        );
        assert_eq!(f.outcome.secs, 3.0);
        assert!(f.parsed.bad_lines.is_empty());
    }
}
