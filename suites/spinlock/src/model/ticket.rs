//! The ticket lock's models: mutual exclusion and happens-before, and FIFO
//! hand-over (a waiter in line goes before the holder's next acquisition).

use super::mutex::{exclusion, fifo};
use crate::locks::{ticket::Ticket, RawLock};
use harness::model::Model;

pub const MODELS: &[Model] = &[
    Model {
        lock: Ticket::NAME,
        name: "2 threads x 2 acquisitions",
        covers: "mutual exclusion; each critical section happens before the next (owner store Release, load Acquire); a wait sees at least the holder's ticket ahead",
        preemption_bound: 3,
        body: || drop(exclusion::<Ticket>(2, 2)),
        reaches: &[],
    },
    Model {
        lock: Ticket::NAME,
        name: "FIFO hand-over",
        covers: "a waiter holding the next ticket enters before the holder, unlocking and locking again, does",
        preemption_bound: 3,
        body: || fifo::<Ticket>(|l, ()| l.in_line() >= 2),
        reaches: &[],
    },
];
