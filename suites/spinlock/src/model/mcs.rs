//! The MCS lock's models: mutual exclusion and happens-before, through the
//! tail swap, the successor link and the flag hand-over, and FIFO
//! hand-over.

use super::mutex::{exclusion, fifo};
use crate::locks::{mcs::Mcs, RawLock};
use harness::model::Model;

pub const MODELS: &[Model] = &[
    Model {
        lock: Mcs::NAME,
        name: "2 threads x 2 acquisitions",
        covers: "mutual exclusion; each critical section happens before the next, whether the lock is handed over through the successor's flag or freed by the tail compare-exchange; a node is initialised before its predecessor writes it; an unlock waits only for a queued successor",
        preemption_bound: 3,
        body: || drop(exclusion::<Mcs>(2, 2)),
        reaches: &[],
    },
    Model {
        lock: Mcs::NAME,
        name: "FIFO hand-over",
        covers: "a waiter queued behind the holder enters before the holder, unlocking and locking again, does (including the unlock that waits for the successor to link in)",
        preemption_bound: 3,
        body: || fifo::<Mcs>(|l, node| l.queued_after(node)),
        reaches: &[],
    },
];
