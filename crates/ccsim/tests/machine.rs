//! The simulated machine end to end: small locks on it, and what any
//! model of contention must show.

use ccsim::atomic::{AtomicU16, AtomicU32, Ordering::*};
use ccsim::{simulate, Machine, Report, SimError};

struct Ticket {
    next: AtomicU32,
    owner: AtomicU32,
}

impl Ticket {
    fn lock(&self) {
        let t = self.next.fetch_add(1, Relaxed);
        while self.owner.load(Acquire) != t {
            ccsim::hint::spin_loop();
        }
    }
    fn unlock(&self) {
        let o = self.owner.load(Relaxed);
        self.owner.store(o + 1, Release);
    }
}

/// `n` vCPUs each take the ticket lock `iters` times, counting in the
/// critical section with a plain read and write.
fn ticket(machine: &Machine, n: usize, iters: u32) -> (Report, u32) {
    let lock = Box::new(Ticket {
        next: AtomicU32::new(0),
        owner: AtomicU32::new(0),
    });
    let counter = Box::new(AtomicU32::new(0));
    let report = simulate(machine, n, &[], |_| {
        for _ in 0..iters {
            lock.lock();
            let v = counter.load(Relaxed);
            ccsim::work(50);
            counter.store(v + 1, Relaxed);
            lock.unlock();
        }
    })
    .unwrap();
    (report, counter.load(Relaxed))
}

fn x86() -> Machine {
    Machine::named("x86").unwrap()
}

#[test]
fn mutual_exclusion_holds_and_runs_repeat_exactly() {
    let (a, count) = ticket(&x86(), 8, 20);
    assert_eq!(
        count, 160,
        "a lost update: exclusion or the scheduler is broken"
    );
    let (b, _) = ticket(&x86(), 8, 20);
    assert_eq!(a, b, "two runs differ");
}

#[test]
fn ticket_handover_traffic_grows_with_the_waiters() {
    let per_acq = |n: usize| {
        let (r, _) = ticket(&x86(), n, 20);
        r.misses() as f64 / (n * 20) as f64
    };
    let (two, eight, sixteen) = (per_acq(2), per_acq(8), per_acq(16));
    assert!(two < eight && eight < sixteen, "{two} {eight} {sixteen}");
    // Every waiter re-reads the owner word at each hand-over.
    assert!(sixteen > 10.0, "{sixteen}");
}

#[test]
fn spinners_sleep_instead_of_spinning() {
    let (r, _) = ticket(&x86(), 16, 20);
    let sleeps = r.total(|s| s.spin_sleeps);
    let pauses = r.total(|s| s.pauses);
    assert!(
        sleeps > 0 && pauses < 4 * sleeps,
        "{pauses} pauses, {sleeps} sleeps"
    );
    assert!(r.total(|s| s.spin_cycles) > 0);
}

#[test]
fn a_lock_nobody_releases_is_a_deadlock_naming_the_line() {
    let lock = Box::new(AtomicU32::new(1));
    let err = simulate(
        &x86(),
        2,
        &[(&*lock as *const _ as usize, 4, "the lock".into())],
        |_| {
            while lock.load(Acquire) != 0 {
                ccsim::hint::spin_loop();
            }
        },
    )
    .unwrap_err();
    match err {
        SimError::Deadlock(why) => assert!(why.contains("spins on the lock"), "{why}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_panic_in_a_vcpu_fails_the_simulation() {
    let err = simulate(&x86(), 3, &[], |cpu| {
        ccsim::work(10);
        assert!(cpu != 1, "boom");
    })
    .unwrap_err();
    assert!(
        matches!(err, SimError::Panicked(ref s) if s.contains("boom")),
        "{err:?}"
    );
}

#[test]
fn sub_word_views_share_the_word_and_its_line() {
    let word = Box::new(AtomicU32::new(0));
    let r = simulate(
        &x86(),
        2,
        &[(&*word as *const _ as usize, 4, "word".into())],
        |cpu| {
            // SAFETY: the upper half of an aligned u32 we own.
            let half = unsafe { AtomicU16::from_ptr(word.as_ptr().cast::<u16>().add(1)) };
            if cpu == 0 {
                word.fetch_or(1, AcqRel);
            } else {
                half.swap(7, AcqRel);
            }
        },
    )
    .unwrap();
    let v = word.load(Relaxed);
    assert_eq!(v & 0xffff, 1);
    assert_eq!(
        v >> 16,
        if cfg!(target_endian = "little") {
            7
        } else {
            v >> 16
        }
    );
    assert_eq!(r.lines.len(), 1, "two views of one word made two lines");
    assert_eq!(r.lines[0].label, "word");
}

#[test]
fn llsc_rmws_fail_and_retry_under_contention_and_locked_ones_do_not() {
    let count = |name: &str| {
        let c = Box::new(AtomicU32::new(0));
        let r = simulate(&Machine::named(name).unwrap(), 8, &[], |_| {
            for _ in 0..50 {
                c.fetch_add(1, Relaxed);
            }
        })
        .unwrap();
        assert_eq!(c.load(Relaxed), 400);
        r.total(|s| s.sc_failures)
    };
    assert_eq!(count("arm64-lse"), 0);
    assert!(count("arm64-llsc") > 0);
}

#[test]
fn more_vcpus_than_cores_is_refused() {
    assert_eq!(
        simulate(&x86(), 65, &[], |_| {}).unwrap_err(),
        SimError::Cpus(65)
    );
    assert_eq!(
        simulate(&x86(), 0, &[], |_| {}).unwrap_err(),
        SimError::Cpus(0)
    );
}

#[test]
fn a_line_shared_by_two_vcpus_nodes_is_false_sharing_and_padding_cures_it() {
    #[repr(C, align(64))]
    struct Pair {
        a: AtomicU32,
        b: AtomicU32,
    }
    #[repr(C, align(64))]
    struct Padded(AtomicU32);
    let shared = Box::new(Pair {
        a: AtomicU32::new(0),
        b: AtomicU32::new(0),
    });
    let padded = Box::new([Padded(AtomicU32::new(0)), Padded(AtomicU32::new(0))]);
    let misses = |f: &(dyn Fn(usize) + Sync)| simulate(&x86(), 2, &[], f).unwrap().misses();
    let same = misses(&|cpu| {
        let x = if cpu == 0 { &shared.a } else { &shared.b };
        for _ in 0..100 {
            x.fetch_add(1, Relaxed);
        }
    });
    let apart = misses(&|cpu| {
        for _ in 0..100 {
            padded[cpu].0.fetch_add(1, Relaxed);
        }
    });
    assert_eq!(apart, 2, "each counter's first touch only");
    assert!(same > 50, "{same}");
}

#[test]
fn the_clock_is_virtual_time_at_the_machines_rate() {
    simulate(&x86(), 1, &[], |_| {
        let t0 = ccsim::time::Instant::now();
        ccsim::work(2_130_000);
        let waited = t0.elapsed();
        assert!(
            (999_000..1_001_000).contains(&(waited.as_nanos() as u64)),
            "{waited:?}"
        );
    })
    .unwrap();
}

#[test]
fn with_128_byte_lines_neighbours_64_bytes_apart_share_a_line() {
    #[repr(C, align(128))]
    struct TwoHalves {
        a: AtomicU32,
        _pad: [u8; 60],
        b: AtomicU32,
    }
    let x = Box::new(TwoHalves {
        a: AtomicU32::new(0),
        _pad: [0; 60],
        b: AtomicU32::new(0),
    });
    let run = |m: Machine| {
        simulate(&m, 2, &[], |cpu| {
            let c = if cpu == 0 { &x.a } else { &x.b };
            for _ in 0..50 {
                c.fetch_add(1, Relaxed);
            }
        })
        .unwrap()
    };
    let apart = run(x86());
    let shared = run(x86().with_line_bytes(128));
    assert_eq!((apart.lines.len(), shared.lines.len()), (2, 1));
    assert!(
        shared.misses() > 10 * apart.misses(),
        "{} vs {}",
        shared.misses(),
        apart.misses()
    );
}

/// A lock that picks a constant by architecture (qspinlock's pending
/// spins) reads the simulated machine's, not the host's it was built for.
#[test]
fn the_simulated_machines_architecture_is_what_the_lock_reads() {
    for (name, arch) in [("x86", "x86_64"), ("arm64-lse", "aarch64")] {
        let seen = std::sync::Mutex::new(Vec::new());
        simulate(&Machine::named(name).unwrap(), 2, &[], |_| {
            seen.lock().unwrap().push(ccsim::target_arch());
        })
        .unwrap();
        assert_eq!(*seen.lock().unwrap(), [arch, arch], "{name}");
    }
    assert_eq!(
        ccsim::target_arch(),
        std::env::consts::ARCH,
        "outside a simulation"
    );
}
