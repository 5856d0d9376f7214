//! The model every reader-writer lock of this suite is checked with:
//! threads taking either side around a critical section, and what the
//! critical section checks.
//!
//! The protected data is in loom's `UnsafeCell`: a writer holds it mutably
//! and a reader immutably for its whole critical section, so a reader and
//! a writer (or two writers) inside at once, or one critical section with
//! no happens-before edge to an earlier one it conflicts with, are a
//! causality violation in any interleaving. A state word, changed on entry
//! and exit, says so in plain words and gives loom points to switch
//! threads inside the critical section. It is Relaxed: it must not order
//! anything the lock does not.

use crate::events;
use crate::locks::RawRwLock;
use harness::model::note;
use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use loom::thread;
use std::sync::Arc;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    Read,
    Write,
}

/// In the state word: a writer inside; each reader inside adds `READER`.
const WRITER: usize = 1;
const READER: usize = 2;

pub struct Guarded<L> {
    pub lock: L,
    state: AtomicUsize,
    /// Writes so far: written by writers, read by readers.
    writes: UnsafeCell<usize>,
}

impl<L: RawRwLock> Guarded<L> {
    fn read(&self, t: usize) {
        note(t, "read_lock");
        self.lock.read_lock();
        note(t, "read locked");
        let data = self.writes.get();
        let was = self.state.fetch_add(READER, Relaxed);
        assert!(
            was & WRITER == 0,
            "reader/writer exclusion violated: thread {t} read while a writer was inside"
        );
        // SAFETY: loom checks that no write overlaps this read.
        let _seen = unsafe { *data.deref() };
        self.state.fetch_sub(READER, Relaxed);
        drop(data);
        note(t, "read_unlock");
        self.lock.read_unlock();
    }

    fn write(&self, t: usize) {
        note(t, "write_lock");
        self.lock.write_lock();
        note(t, "write locked");
        let data = self.writes.get_mut();
        let was = self.state.fetch_or(WRITER, Relaxed);
        assert!(
            was == 0,
            "reader/writer exclusion violated: thread {t} wrote while {} inside",
            if was & WRITER != 0 {
                "a writer was"
            } else {
                "readers were"
            }
        );
        // SAFETY: loom checks that no other access overlaps this one.
        unsafe { *data.deref() += 1 };
        self.state.fetch_and(!WRITER, Relaxed);
        drop(data);
        note(t, "write_unlock");
        self.lock.write_unlock();
    }
}

/// Thread `t` (the model's main thread is thread 0) takes the sides in
/// `roles[t]`, in order; afterwards every write is counted once, the
/// lock's events keep its invariants ([`RawRwLock::check_events`]) and
/// `after` sees the lock.
pub fn model<L: RawRwLock + Send + 'static>(roles: &'static [&'static [Side]], after: fn(&L)) {
    // This OS thread's counters count every thread of the execution.
    let before = events::counts();
    let g = Arc::new(Guarded {
        lock: L::new(),
        state: AtomicUsize::new(0),
        writes: UnsafeCell::new(0),
    });
    let run = |g: &Guarded<L>, t: usize| {
        for &side in roles[t] {
            match side {
                Side::Read => g.read(t),
                Side::Write => g.write(t),
            }
        }
    };
    let spawned: Vec<_> = (1..roles.len())
        .map(|t| {
            let g = Arc::clone(&g);
            thread::spawn(move || run(&g, t))
        })
        .collect();
    run(&g, 0);
    for h in spawned {
        h.join().expect("a model thread panicked");
    }
    let of = |side| {
        roles
            .iter()
            .flat_map(|r| r.iter())
            .filter(|&&s| s == side)
            .count()
    };
    let writes = of(Side::Write);
    // SAFETY: every thread was joined.
    assert_eq!(g.writes.with(|w| unsafe { *w }), writes, "writes lost");
    let took = events::counts().since(before);
    if let Err(broken) = g
        .lock
        .check_events(&took, of(Side::Read) as u64, writes as u64)
    {
        panic!("lock events: {broken}");
    }
    after(&g.lock);
}
