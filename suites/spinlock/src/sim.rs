//! The contention model of this suite's own locks (`--cfg lockmatrix_sim`
//! builds): each lock's source, unchanged, on the simulated machine of the
//! `ccsim` crate (`crate::sync` swaps in its atomics, spin hint and yield),
//! at 1 to 64 virtual CPUs, with the same numbers on every host.
//!
//! Workloads, each for a fixed virtual time ([`harness::sim::window`]):
//! - `lock_unlock` (seed 001): lock and unlock, nothing between;
//! - `stress_s1` (seed 003's S1): lock, a counter += 1, unlock;
//! - `stress_s2` (seed 003's S2): work outside (0 to 1600 cycles), lock,
//!   counter += 1 and work inside (0 to 400 cycles), unlock; the amounts
//!   from each vCPU's own seeded generator.
//!
//! The lock, the counter and each vCPU's queue node sit on 128-byte
//! aligned lines of their own (named `lock`, `counter`, `queue node`);
//! a lock's own static data (qspinlock's per-CPU nodes) is laid out as
//! the lock lays it out.

use crate::locks::{self, LockVisitor, RawLock};
use harness::sim::{self, Machine, Opts, Run};
use harness::work::Rng;

pub const WORKLOADS: &[&str] = &["lock_unlock", "stress_s1", "stress_s2"];

#[repr(align(128))]
struct Padded<T>(T);

struct Simulate<'a> {
    machine: &'a Machine,
    cpus: usize,
    workload: &'a str,
}

impl LockVisitor for Simulate<'_> {
    type Output = bool;

    fn visit<L: RawLock>(self) -> bool {
        let lock = Box::new(Padded(L::new()));
        let counter = Box::new(Padded(ccsim::atomic::AtomicU64::new(0)));
        let regions = [region(&lock.0, "lock"), region(&counter.0, "counter")];
        let (s1, s2) = (self.workload == "stress_s1", self.workload == "stress_s2");
        let deadline = sim::window(self.cpus);
        let run = Run {
            suite: "spinlock",
            lock: L::NAME,
            workload: self.workload,
            machine: self.machine,
            cpus: self.cpus,
            readers: false,
        };
        run.go(&regions, |cpu, tally| {
            let node = Padded(L::Node::default());
            if std::mem::size_of::<L::Node>() > 0 {
                let (start, len, _) = region(&node.0, "");
                ccsim::name(start as *const u8, len, "queue node");
            }
            let mut rng = Rng::new(cpu as u64 + 1);
            while ccsim::now() < deadline {
                if s2 {
                    ccsim::work(rng.below(1600));
                }
                let called = ccsim::now();
                // SAFETY: `node` stays on this vCPU's stack, used by this
                // acquisition alone, until unlock.
                unsafe { lock.0.lock(&node.0) };
                tally.acquired(cpu, true, called, ccsim::now());
                if s1 || s2 {
                    let v = counter.0.load(std::sync::atomic::Ordering::Relaxed);
                    counter.0.store(v + 1, std::sync::atomic::Ordering::Relaxed);
                }
                if s2 {
                    ccsim::work(rng.below(400));
                }
                let t = ccsim::now();
                tally.releasing(true, t);
                // SAFETY: we hold the lock, taken with `node`.
                unsafe { lock.0.unlock(&node.0) };
                tally.released(true, ccsim::now() - t);
            }
        })
    }
}

fn region<T>(x: &T, label: &str) -> (usize, usize, String) {
    (
        x as *const T as usize,
        std::mem::size_of::<T>().max(1),
        label.to_string(),
    )
}

/// The locks the model runs: those made of `crate::sync`.
fn covered() -> Vec<&'static str> {
    locks::OWN_NAMES
        .iter()
        .copied()
        .filter(|&l| locks::crate_of(l) == "lockmatrix")
        .collect()
}

pub fn main() -> std::process::ExitCode {
    let opts = match Opts::from_env() {
        Ok(o) => o,
        Err(why) => return sim::bad_flags(&why),
    };
    if opts.list {
        covered().iter().for_each(|l| println!("{l}"));
        return sim::exit(true);
    }
    for &lock in locks::OWN_NAMES.iter().filter(|l| !covered().contains(l)) {
        sim::uncovered(
            "spinlock",
            lock,
            &format!(
                "not made of the suite's sync layer ({}'s own atomics): out of the contention model's reach, gated on real hardware",
                locks::crate_of(lock)
            ),
        );
    }
    let mut ok = true;
    for machine in &opts.machines {
        for lock in covered().into_iter().filter(|l| opts.wants_lock(l)) {
            for &workload in WORKLOADS.iter().filter(|w| opts.wants_workload(w)) {
                for &cpus in &opts.cpus {
                    let s = Simulate {
                        machine,
                        cpus,
                        workload,
                    };
                    ok &= locks::visit(lock, s).unwrap_or(false);
                }
            }
        }
    }
    sim::exit(ok)
}
