//! The models every lock of this suite is checked with: threads taking the
//! lock around a critical section, and what the critical section checks.
//!
//! The protected data is in loom's `UnsafeCell`, held for the whole
//! critical section: two critical sections with no happens-before edge
//! between them (a missing Acquire or Release) are a causality violation
//! in any interleaving, and one critical section overlapping another is
//! an access while the other's guard is live. An owner word, swapped on
//! entry and exit, says so in plain words and gives loom a point to switch
//! threads inside the critical section. It is Relaxed: it must not order
//! anything the lock does not.

use crate::events;
use crate::locks::RawLock;
use harness::model::note;
use loom::cell::UnsafeCell;
use loom::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use loom::thread;
use std::sync::Arc;

/// A lock and what it protects.
pub struct Guarded<L> {
    pub lock: L,
    /// The model thread inside + 1, 0 when nobody is.
    owner: AtomicUsize,
    /// The threads, in the order they entered.
    entries: UnsafeCell<Vec<usize>>,
}

impl<L: RawLock> Guarded<L> {
    pub fn new() -> Arc<Guarded<L>> {
        Arc::new(Guarded {
            lock: L::new(),
            owner: AtomicUsize::new(0),
            entries: UnsafeCell::new(Vec::new()),
        })
    }

    /// Thread `t` takes the lock with `node`.
    pub fn lock(&self, t: usize, node: &L::Node) {
        note(t, "lock");
        // SAFETY: `node` is this thread's, kept until the matching unlock.
        unsafe { self.lock.lock(node) };
        note(t, "locked");
    }

    pub fn unlock(&self, t: usize, node: &L::Node) {
        note(t, "unlock");
        // SAFETY: thread `t` holds the lock through `node`.
        unsafe { self.lock.unlock(node) };
    }

    /// Thread `t`'s critical section, with the lock held; `inside` runs in
    /// it.
    pub fn critical(&self, t: usize, inside: impl FnOnce()) {
        let entries = self.entries.get_mut();
        let was = self.owner.swap(t + 1, Relaxed);
        assert!(
            was == 0,
            "mutual exclusion violated: thread {t} entered while thread {} was inside",
            was.wrapping_sub(1)
        );
        // SAFETY: loom checks that no other access overlaps this one.
        unsafe { entries.deref().push(t) };
        inside();
        let was = self.owner.swap(0, Relaxed);
        assert!(
            was == t + 1,
            "mutual exclusion violated: thread {t} left while thread {} was inside",
            was.wrapping_sub(1)
        );
        drop(entries);
    }

    /// Once every thread is done: the order they entered in.
    pub fn entries(&self) -> Vec<usize> {
        // SAFETY: called after every thread was joined.
        self.entries.with(|e| unsafe { (*e).clone() })
    }
}

/// `threads` threads (the model's main thread is thread 0) take the lock
/// `rounds` times each; returns the lock, every thread done. The lock's
/// event counts must then keep its invariants ([`RawLock::check_events`]),
/// in every execution.
pub fn exclusion<L: RawLock + 'static>(threads: usize, rounds: usize) -> Arc<Guarded<L>> {
    // This OS thread's counters count every thread of the execution.
    let before = events::counts();
    let g = Guarded::<L>::new();
    let worker = move |g: Arc<Guarded<L>>, t: usize| {
        let node = L::Node::default();
        for _ in 0..rounds {
            g.lock(t, &node);
            g.critical(t, || {});
            g.unlock(t, &node);
        }
    };
    let spawned: Vec<_> = (1..threads)
        .map(|t| {
            let g = Arc::clone(&g);
            thread::spawn(move || worker(g, t))
        })
        .collect();
    worker(Arc::clone(&g), 0);
    for h in spawned {
        h.join().expect("a model thread panicked");
    }
    assert_eq!(g.entries().len(), threads * rounds, "acquisitions lost");
    let took = events::counts().since(before);
    if let Err(broken) = L::check_events(&took, (threads * rounds) as u64, threads) {
        panic!("lock events: {broken}");
    }
    g
}

/// FIFO hand-over: thread 0 holds the lock (through its node) until
/// `queued` says thread 1 has
/// taken its place in line, then unlocks and locks again at once. A FIFO
/// lock must let thread 1 in first; an unfair one may let thread 0 back in.
pub fn fifo<L: RawLock + 'static>(queued: fn(&L, &L::Node) -> bool) {
    let g = Guarded::<L>::new();
    let node = L::Node::default();
    g.lock(0, &node);
    let g1 = Arc::clone(&g);
    let t1 = thread::spawn(move || {
        let node = L::Node::default();
        g1.lock(1, &node);
        g1.critical(1, || {});
        g1.unlock(1, &node);
    });
    g.critical(0, || {
        while !queued(&g.lock, &node) {
            thread::yield_now();
        }
        note(0, "saw thread 1 queued");
    });
    g.unlock(0, &node);
    g.lock(0, &node);
    g.critical(0, || {});
    g.unlock(0, &node);
    t1.join().expect("a model thread panicked");
    assert_eq!(
        g.entries(),
        [0, 1, 0],
        "not FIFO: thread 0 re-took the lock ahead of thread 1, which was queued"
    );
}
