//! The phase-fair reader-writer spinlock's models.

use super::rw::{model, Side::*};
use crate::locks::{FairRwSpin, RawRwLock};
use harness::model::{reached, Model};

pub const MODELS: &[Model] = &[
    Model {
        lock: FairRwSpin::NAME,
        name: "reader x 2 + writer x 2",
        covers: "reader/writer exclusion; the writer's critical sections happen before the reader's later ones and the reader's before the writer's later ones (rin/rout/wout Release and Acquire); each side waits for the other",
        preemption_bound: 3,
        body: || model::<FairRwSpin>(&[&[Read, Read], &[Write, Write]], waits),
        reaches: &["reader waited", "writer waited"],
    },
    Model {
        lock: FairRwSpin::NAME,
        name: "2 writers x 2",
        covers: "writer/writer exclusion and happens-before through the ticket (win, wout) and the writer bits of rin",
        preemption_bound: 3,
        body: || model::<FairRwSpin>(&[&[Write, Write], &[Write, Write]], waits),
        reaches: &["writer waited"],
    },
];

fn waits(l: &FairRwSpin) {
    let Some(slow) = l.slowpaths() else { return };
    if slow.reader > 0 {
        reached("reader waited");
    }
    if slow.writer > 0 {
        reached("writer waited");
    }
}
