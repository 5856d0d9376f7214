//! Test-and-set's model: mutual exclusion and happens-before between
//! critical sections. It promises nothing about order.

use super::mutex::exclusion;
use crate::locks::{tas::Tas, RawLock};
use harness::model::Model;

pub const MODELS: &[Model] = &[Model {
    lock: Tas::NAME,
    name: "2 threads x 2 acquisitions",
    covers: "mutual exclusion; each critical section happens before the next (swap Acquire, store Release)",
    preemption_bound: 3,
    body: || drop(exclusion::<Tas>(2, 2)),
    reaches: &[],
}];
