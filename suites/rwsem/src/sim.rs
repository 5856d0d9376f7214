//! The contention model of this suite's own reader-writer locks
//! (`--cfg lockmatrix_sim` builds): each lock's source, unchanged, on the
//! simulated machine of the `ccsim` crate (`crate::sync` swaps in its
//! atomics, spin hint, yield, futex, clock and mutex), at 1 to 64 virtual
//! CPUs, with the same numbers on every host.
//!
//! Workloads (seed 002), each for a fixed virtual time
//! ([`harness::sim::window`]), every acquisition 40 cycles of work inside
//! and 40 outside:
//! - `half_writers`: odd vCPUs write, even ones read;
//! - `all_writers`: every vCPU writes.

use crate::locks::{FairRwSpin, LinuxRwsem, RawRwLock};
use harness::sim::{self, Machine, Opts, Run};

pub const WORKLOADS: &[&str] = &["half_writers", "all_writers"];

/// Work inside and outside the lock, in cycles.
const INSIDE: u64 = 40;
const OUTSIDE: u64 = 40;

#[repr(align(128))]
struct Padded<T>(T);

fn simulate<L: RawRwLock>(machine: &Machine, cpus: usize, workload: &str) -> bool {
    let lock = Box::new(Padded(L::new()));
    let regions = [(
        &lock.0 as *const L as usize,
        std::mem::size_of::<L>(),
        "lock".to_string(),
    )];
    let all = workload == "all_writers";
    let deadline = sim::window(cpus);
    let run = Run {
        suite: "rwsem",
        lock: L::NAME,
        workload,
        machine,
        cpus,
        readers: !all,
    };
    run.go(&regions, |cpu, tally| {
        let write = all || cpu % 2 == 1;
        while ccsim::now() < deadline {
            ccsim::work(OUTSIDE);
            let called = ccsim::now();
            if write {
                lock.0.write_lock();
            } else {
                lock.0.read_lock();
            }
            tally.acquired(cpu, write, called, ccsim::now());
            ccsim::work(INSIDE);
            let t = ccsim::now();
            tally.releasing(write, t);
            if write {
                lock.0.write_unlock();
            } else {
                lock.0.read_unlock();
            }
            tally.released(write, ccsim::now() - t);
        }
    })
}

type Entry = (&'static str, fn(&Machine, usize, &str) -> bool);

/// The locks the model runs: those made of `crate::sync`.
const COVERED: [Entry; 2] = [
    (LinuxRwsem::NAME, simulate::<LinuxRwsem>),
    (FairRwSpin::NAME, simulate::<FairRwSpin>),
];

/// The suite's other locks, and why the model cannot run them.
const UNCOVERED: [(&str, &str); 3] = [
    ("std_rwlock", "std"),
    ("parking_lot_rwlock", "parking_lot"),
    ("spin_rwlock", "spin"),
];

pub fn main() -> std::process::ExitCode {
    let opts = match Opts::from_env() {
        Ok(o) => o,
        Err(why) => return sim::bad_flags(&why),
    };
    if opts.list {
        COVERED.iter().for_each(|(l, _)| println!("{l}"));
        return sim::exit(true);
    }
    for (lock, krate) in UNCOVERED {
        sim::uncovered(
            "rwsem",
            lock,
            &format!("not made of the suite's sync layer ({krate}'s own atomics): out of the contention model's reach, gated on real hardware"),
        );
    }
    let mut ok = true;
    for machine in &opts.machines {
        for (lock, run) in COVERED.iter().filter(|(l, _)| opts.wants_lock(l)) {
            let _ = lock;
            for &workload in WORKLOADS.iter().filter(|w| opts.wants_workload(w)) {
                for &cpus in &opts.cpus {
                    ok &= run(machine, cpus, workload);
                }
            }
        }
    }
    sim::exit(ok)
}
