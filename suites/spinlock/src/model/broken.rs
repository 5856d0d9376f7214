//! The control: the broken lock (test, then set) must fail its model, or
//! the models gate nothing.

use super::mutex::exclusion;
use crate::locks::{broken::Broken, RawLock};
use harness::model::Model;

pub const MODELS: &[Model] = &[Model {
    lock: Broken::NAME,
    name: "2 threads x 2 acquisitions",
    covers: "the control: two threads that both see the lock free both enter, which the model must report",
    preemption_bound: 3,
    body: || drop(exclusion::<Broken>(2, 2)),
    reaches: &[],
}];
