//! The loom models of the reader-writer locks written here. A `--cfg loom`
//! build of this suite runs them instead of its benchmarks
//! (`harness::model` prints a record per model); `cargo test` under
//! `--cfg loom` checks them too.
//!
//! One file per lock, named as the lock, with that lock's models; what
//! each checks is its `covers`. `rw.rs` holds the model they share.

mod fair_rwspin;
mod linux_rwsem;
mod rw;

use harness::model::{Model, Unmodelled};
use std::process::ExitCode;

/// Every model, lock by lock in the suite's order.
pub fn models() -> Vec<&'static Model> {
    [linux_rwsem::MODELS, fair_rwspin::MODELS]
        .into_iter()
        .flatten()
        .collect()
}

/// The suite's locks that are deliberately not modelled (and not built
/// under loom).
pub const UNMODELLED: &[Unmodelled] = &[
    Unmodelled {
        lock: "std_rwlock",
        why: "not model-checked: std's lock, not built from this suite's atomics, so loom cannot see inside it, and checking loom's own RwLock in its place would check loom; Miri runs it instead (`miri.rs`)",
    },
    Unmodelled {
        lock: "parking_lot_rwlock",
        why: SHIPPED,
    },
    Unmodelled {
        lock: "spin_rwlock",
        why: SHIPPED,
    },
];

const SHIPPED: &str = "not model-checked: another crate's lock through lock_api, not built from this suite's atomics, so loom cannot see inside it; Miri runs it instead (`miri.rs`)";

pub fn main() -> ExitCode {
    harness::model::main("rwsem", &models(), UNMODELLED)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Checks every model of `lock`; panics with the failure unless each
    /// one passed.
    fn passes(lock: &str) {
        let mut checked = 0;
        for m in models().into_iter().filter(|m| m.lock == lock) {
            let o = harness::model::check(m);
            assert!(o.ok, "{lock}: {}: {:?}", m.name, o.failure);
            assert!(o.interleavings > 0);
            checked += 1;
        }
        assert!(checked > 0, "{lock} has no model");
    }

    #[test]
    fn linux_rwsem() {
        passes("linux_rwsem");
    }

    #[test]
    fn fair_rwspin() {
        passes("fair_rwspin");
    }
}
