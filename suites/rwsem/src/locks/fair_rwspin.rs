//! A phase-fair ticket reader-writer spinlock (Brandenburg and Anderson's
//! PF-T, "Spin-based reader-writer synchronization for multiprocessor
//! real-time systems", 2010).
//!
//! Provenance: the paper's PF-T pseudo-code, with 32-bit counters and
//! the spin-wait step of `crate::sync`.
//!
//! Why it is shaped so: it is the opposite design point to the kernel rwsem.
//! It never sleeps and never lets anyone jump the queue: reader and writer
//! phases alternate, so a reader waits for at most one writer and a writer
//! for the readers already in plus the writers ahead of it. Seed 002 asks
//! whether readers or writers are preferred; this lock prefers neither,
//! which gives the rwsem's numbers a fair reference.
//!
//! Four 32-bit counters (32-bit atomics exist on every target):
//! - `rin`: readers that entered, in units of `RINC`, plus in its low two
//!   bits the present writer: `PRES` and the writer's phase bit `PHID`;
//! - `rout`: readers that left, in units of `RINC`;
//! - `win`/`wout`: the writers' ticket dispenser and the ticket served.
//!
//! A reader adds `RINC` to `rin`; if a writer is present it spins until the
//! writer bits change (that writer left). A writer takes a ticket, waits its
//! turn, publishes itself in `rin`'s low bits (from then on new readers
//! wait), and waits until `rout` catches up with the readers counted before
//! it. Counters wrap; only equality is ever tested.
//!
//! The slow path counted is "had to wait": a reader that found a writer
//! present, a writer that found a writer ahead or readers still inside.
//!
//! Model-checked under `--cfg loom` (`model/fair_rwspin.rs`) as it is:
//! loom's atomics and spin-wait step come in through `crate::sync`.

use super::{relax, RawRwLock, Slowpaths};
use crate::sync::atomic::AtomicU32;
use crate::sync::atomic::AtomicUsize;
use crate::sync::atomic::Ordering::{Acquire, Relaxed, Release};

const RINC: u32 = 0x100;
const WBITS: u32 = 0x3;
const PRES: u32 = 0x2;
const PHID: u32 = 0x1;

/// Keeps the readers' and the writers' counters apart, on separate cache
/// lines, as the paper lays them out.
#[repr(align(128))]
struct Padded<T>(T);

pub struct FairRwSpin {
    rin: Padded<AtomicU32>,
    rout: Padded<AtomicU32>,
    win: Padded<AtomicU32>,
    wout: Padded<AtomicU32>,
    reader_waits: AtomicUsize,
    writer_waits: AtomicUsize,
}

impl RawRwLock for FairRwSpin {
    const NAME: &'static str = "fair_rwspin";

    fn new() -> Self {
        FairRwSpin {
            rin: Padded(AtomicU32::new(0)),
            rout: Padded(AtomicU32::new(0)),
            win: Padded(AtomicU32::new(0)),
            wout: Padded(AtomicU32::new(0)),
            reader_waits: AtomicUsize::new(0),
            writer_waits: AtomicUsize::new(0),
        }
    }

    #[inline]
    fn read_lock(&self) {
        // Acquire pairs with the Release of the writer that cleared its bits.
        let w = self.rin.0.fetch_add(RINC, Acquire) & WBITS;
        if w != 0 {
            self.reader_waits.fetch_add(1, Relaxed);
            // Acquire: pairs with the Release fetch_and in write_unlock()
            // (a later writer's RMW on `rin` continues its release
            // sequence), so the writer we waited for finished before us.
            let mut spins = 0;
            while self.rin.0.load(Acquire) & WBITS == w {
                relax(&mut spins);
            }
        }
    }

    #[inline]
    fn read_unlock(&self) {
        // Release: pairs with the Acquire load of `rout` in write_lock(),
        // so our reads happen before the writer's writes.
        self.rout.0.fetch_add(RINC, Release);
    }

    #[inline]
    fn write_lock(&self) {
        let ticket = self.win.0.fetch_add(1, Relaxed);
        let mut waited = false;
        let mut spins = 0;
        // Acquire: pairs with the Release fetch_add of `wout` in the
        // previous writer's write_unlock(), so its critical section, and its
        // clearing of the writer bits in `rin`, happen before what follows.
        // While the fetch_add on `rin` below is Acquire it orders the
        // previous writer too, so this Acquire alone is more than needed
        // (one of the two must stay; the model check shows either does).
        while self.wout.0.load(Acquire) != ticket {
            waited = true;
            relax(&mut spins);
        }
        // The writer bits are clear here (the previous writer cleared them),
        // so the old value counts exactly the readers that came first.
        // Acquire is more than needed here: the previous writer was
        // acquired through `wout` above, and the readers counted here are
        // acquired through `rout` below.
        let readers = self.rin.0.fetch_add(PRES | (ticket & PHID), Acquire);
        // Acquire: pairs with the Release in read_unlock(), so the critical
        // sections of the readers that came first happen before ours.
        while self.rout.0.load(Acquire) != readers {
            waited = true;
            relax(&mut spins);
        }
        if waited {
            self.writer_waits.fetch_add(1, Relaxed);
        }
    }

    #[inline]
    fn write_unlock(&self) {
        // Release: pairs with the readers' Acquire on `rin` in read_lock(),
        // so our critical section happens before theirs.
        self.rin.0.fetch_and(!WBITS, Release);
        // Release: pairs with the Acquire load of `wout` in the next
        // writer's write_lock(), so our critical section happens before its.
        // The Release fetch_and on `rin` above, acquired by that writer's
        // fetch_add on `rin`, orders it too, so this Release alone is more
        // than needed (one of the two pairs must stay).
        self.wout.0.fetch_add(1, Release);
    }

    fn slowpaths(&self) -> Option<Slowpaths> {
        Some(Slowpaths {
            reader: self.reader_waits.load(Relaxed) as u64,
            writer: self.writer_waits.load(Relaxed) as u64,
        })
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;

    #[test]
    fn counters_wrap_without_losing_the_lock() {
        let l = FairRwSpin::new();
        // Start just below the wrap of every counter.
        let near = u32::MAX - 2 * RINC + 1;
        l.rin.0.store(near & !WBITS, Relaxed);
        l.rout.0.store(near & !WBITS, Relaxed);
        l.win.0.store(u32::MAX - 1, Relaxed);
        l.wout.0.store(u32::MAX - 1, Relaxed);
        for _ in 0..4 {
            l.read_lock();
            l.read_lock();
            l.read_unlock();
            l.read_unlock();
            l.write_lock();
            l.write_unlock();
        }
        assert_eq!(l.slowpaths(), Some(Slowpaths::default()));
    }

    #[test]
    fn a_reader_waits_for_the_writer_present() {
        let l = FairRwSpin::new();
        let inside = AtomicBool::new(false);
        l.write_lock();
        std::thread::scope(|s| {
            s.spawn(|| {
                l.read_lock();
                inside.store(true, Relaxed);
                l.read_unlock();
            });
            while l.slowpaths().unwrap().reader == 0 {
                std::thread::yield_now();
            }
            assert!(!inside.load(Relaxed));
            l.write_unlock();
        });
        assert!(inside.load(Relaxed));
    }
}
