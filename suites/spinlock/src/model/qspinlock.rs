//! qspinlock's models, on its whole-word form under loom (see the lock's
//! module doc): two threads reach the pending path and a short queue,
//! three a queue with a successor to hand on to, four a queue head that
//! takes the lock from a pending waiter with another thread queued behind
//! it, five a waiter with both a predecessor and a successor in the queue;
//! and `trylock()` against `lock()`.

use super::mutex::{exclusion, Guarded};
use crate::events::{self, Event};
use crate::locks::qspinlock::{QSpinLock, TAIL_MASK};
use crate::locks::RawLock;
use harness::model::{note, reached, Model};
use loom::thread;
use std::sync::Arc;

pub const MODELS: &[Model] = &[
    Model {
        lock: QSpinLock::NAME,
        name: "2 threads x 2 acquisitions",
        covers: "mutual exclusion and happens-before through the fast path, the pending path (fetch_or, spin on locked, clear_pending_set_locked) and the queue a second acquisition joins behind a pending waiter; the word ends at 0, and the lock events agree (a queued node behind another is handed on once)",
        preemption_bound: 3,
        body: || {
            paths(4, 2, || {
                let g = exclusion::<QSpinLock>(2, 2);
                assert_eq!(g.lock.value(), 0, "the word is not 0 after every unlock");
            })
        },
        reaches: &["pending", "queue"],
    },
    Model {
        lock: QSpinLock::NAME,
        name: "holder + pending waiter + queued waiters (3 threads)",
        covers: "thread 0 holds the lock until a second thread waits pending and a third is queued; the pending waiter takes over, takes the lock a second time behind the queue head, which takes the lock and hands the head on: mutual exclusion and happens-before along pending, queue and MCS hand-over; the word ends at 0, and the lock events agree (a queued node behind another is handed on once)",
        // Threads switch only where one waits (a spin-wait step, a join):
        // with three threads a bound of 1 did not finish in 10 minutes. The
        // 2-thread model above covers preemption between the steps.
        preemption_bound: 0,
        body: || paths(4, 3, three_roles),
        reaches: &["pending", "queue", "handed on"],
    },
    Model {
        lock: QSpinLock::NAME,
        name: "holder + pending waiter + 2 queued waiters (4 threads)",
        covers: "thread 0 holds the lock until two threads are queued behind a pending waiter: the queue head takes the lock after the pending waiter left, ordered only by its load-acquire of the word, and hands the head on to the waiter behind it; mutual exclusion and happens-before; the word ends at 0, and the lock events agree (a queued node behind another is handed on once)",
        preemption_bound: 0,
        body: || paths(4, 4, || behind_pending(2)),
        reaches: &["pending", "queue", "handed on"],
    },
    Model {
        lock: QSpinLock::NAME,
        name: "holder + pending waiter + 3 queued waiters (5 threads)",
        covers: "as with 4 threads, and the middle waiter of the queue finds its successor already linked in when it becomes head, so it hands on through the link it read while it waited; the lock events agree",
        preemption_bound: 0,
        body: || paths(5, 5, || behind_pending(3)),
        reaches: &["pending", "queue", "handed on"],
    },
    Model {
        lock: QSpinLock::NAME,
        name: "lock() against trylock(), 2 threads x 2 acquisitions",
        covers: "a critical section entered by trylock() happens after the last unlock (its compare-exchange Acquire), one entered by lock() after the last trylock() holder's; mutual exclusion between the two ways in",
        preemption_bound: 3,
        body: lock_against_trylock,
        reaches: &[],
    },
];

/// Counts the paths this execution took, by the lock's events, as
/// reached, and checks the events' invariants over its `acquisitions` of
/// `threads` threads. The counters are this OS thread's, on which loom runs
/// every thread of the execution.
fn paths(acquisitions: u64, threads: usize, body: impl FnOnce()) {
    let before = events::counts();
    body();
    let took = events::counts().since(before);
    if let Err(broken) = QSpinLock::check_events(&took, acquisitions, threads) {
        panic!("lock events: {broken}");
    }
    for (path, event) in [
        ("pending", Event::Pending),
        ("queue", Event::Queued),
        ("handed on", Event::HandedOn),
    ] {
        if event.of(&took) > 0 {
            reached(path);
        }
    }
}

/// Thread 0 holds the lock while threads 1 and 2 (1 twice, 2 once) come:
/// one waits pending, the other queues.
fn three_roles() {
    let g = Guarded::<QSpinLock>::new();
    g.lock(0, &());
    let spawn = |t: usize, rounds: usize| {
        let g = Arc::clone(&g);
        thread::spawn(move || {
            for _ in 0..rounds {
                g.lock(t, &());
                g.critical(t, || {});
                g.unlock(t, &());
            }
        })
    };
    let (t1, t2) = (spawn(1, 2), spawn(2, 1));
    g.critical(0, || {
        // One of them is pending (the lock is held), so the other queues.
        while g.lock.value() & TAIL_MASK == 0 {
            thread::yield_now();
        }
        note(0, "saw a queued waiter");
    });
    g.unlock(0, &());
    t1.join().expect("a model thread panicked");
    t2.join().expect("a model thread panicked");
    assert_eq!(g.entries().len(), 4, "acquisitions lost");
    assert_eq!(g.lock.value(), 0, "the word is not 0 after every unlock");
}

/// Thread 0 holds the lock until `waiting` of threads 1 to `waiting` + 1
/// are queued (the other waits pending), each taking the lock once.
fn behind_pending(waiting: usize) {
    let g = Guarded::<QSpinLock>::new();
    g.lock(0, &());
    let queued = || Event::Queued.of(&events::counts());
    let before = queued();
    let waiters: Vec<_> = (1..waiting + 2)
        .map(|t| {
            let g = Arc::clone(&g);
            thread::spawn(move || {
                g.lock(t, &());
                g.critical(t, || {});
                g.unlock(t, &());
            })
        })
        .collect();
    g.critical(0, || {
        // The counter is this execution's: loom runs all its threads on
        // one OS thread.
        while queued() < before + waiting as u64 {
            thread::yield_now();
        }
        note(0, "saw the waiters queued");
    });
    g.unlock(0, &());
    for w in waiters {
        w.join().expect("a model thread panicked");
    }
    assert_eq!(g.entries().len(), waiting + 2, "acquisitions lost");
    assert_eq!(g.lock.value(), 0, "the word is not 0 after every unlock");
}

/// Thread 0 takes the lock with `lock()`, thread 1 with `trylock()` until
/// it succeeds, twice each.
fn lock_against_trylock() {
    let g = Guarded::<QSpinLock>::new();
    let g1 = Arc::clone(&g);
    let t1 = thread::spawn(move || {
        for _ in 0..2 {
            note(1, "trylock");
            while !g1.lock.trylock() {
                thread::yield_now();
            }
            note(1, "locked");
            g1.critical(1, || {});
            g1.unlock(1, &());
        }
    });
    for _ in 0..2 {
        g.lock(0, &());
        g.critical(0, || {});
        g.unlock(0, &());
    }
    t1.join().expect("a model thread panicked");
    assert_eq!(g.entries().len(), 4, "acquisitions lost");
    assert_eq!(g.lock.value(), 0, "the word is not 0 after every unlock");
}
