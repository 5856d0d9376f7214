//! The Linux-style rwsem's models: its count-word protocol with the sleeps
//! and the clock modelled (see the lock's module doc).

use super::rw::{model, Side::*};
use crate::locks::{LinuxRwsem, RawRwLock};
use harness::model::{reached, Model};

pub const MODELS: &[Model] = &[
    Model {
        lock: LinuxRwsem::NAME,
        name: "reader x 2 + writer x 2",
        covers: "reader/writer exclusion and happens-before through the fast paths, the reader's slow path (stealing, queueing, being granted the lock by the waker), the writer's optimistic spin, queueing and sleep, and the hand-off bit; no wake-up is lost (a thread parked for ever is a deadlock); the threads' lock events add up to the lock's own counts",
        preemption_bound: 3,
        body: || model::<LinuxRwsem>(&[&[Read, Read], &[Write, Write]], paths),
        reaches: &["reader slow path", "writer slow path", "sleep", "hand-off"],
    },
    Model {
        lock: LinuxRwsem::NAME,
        name: "2 writers x 2",
        covers: "writer/writer exclusion and happens-before through the compare-exchange fast path, the optimistic spin, the wait queue, the wake-up of the head writer and the hand-off bit; no wake-up is lost; the threads' lock events add up to the lock's own counts",
        preemption_bound: 3,
        body: || model::<LinuxRwsem>(&[&[Write, Write], &[Write, Write]], paths),
        reaches: &["writer slow path", "sleep"],
    },
];

fn paths(l: &LinuxRwsem) {
    if let Some(slow) = l.slowpaths() {
        if slow.reader > 0 {
            reached("reader slow path");
        }
        if slow.writer > 0 {
            reached("writer slow path");
        }
    }
    if l.sleeps() > 0 {
        reached("sleep");
    }
    if l.handoffs() > 0 {
        reached("hand-off");
    }
}
