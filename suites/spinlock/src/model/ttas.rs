//! Test-and-test-and-set's model: mutual exclusion and happens-before,
//! through the Relaxed test, the Acquire swap and the backoff.

use super::mutex::exclusion;
use crate::locks::{ttas::Ttas, RawLock};
use harness::model::Model;

pub const MODELS: &[Model] = &[Model {
    lock: Ttas::NAME,
    name: "2 threads x 2 acquisitions",
    covers: "mutual exclusion; each critical section happens before the next, through the fast and the backoff path",
    preemption_bound: 3,
    body: || drop(exclusion::<Ttas>(2, 2)),
    reaches: &[],
}];
