//! The loom models of the locks written here. A `--cfg loom` build of this
//! suite runs them instead of its benchmarks (`harness::model` prints a
//! record per model); `cargo test` under `--cfg loom` checks them too.
//!
//! One file per lock, named as the lock, with that lock's models; what
//! each checks is its `covers`. `mutex.rs` holds the models they share.

#[cfg(feature = "broken-lock")]
mod broken;
mod mcs;
mod mutex;
mod qspinlock;
mod tas;
mod ticket;
mod ttas;

use harness::model::{Model, Unmodelled};
use std::process::ExitCode;

/// Every model, lock by lock in the suite's order.
pub fn models() -> Vec<&'static Model> {
    [
        tas::MODELS,
        ttas::MODELS,
        ticket::MODELS,
        mcs::MODELS,
        qspinlock::MODELS,
        BROKEN,
    ]
    .into_iter()
    .flatten()
    .collect()
}

#[cfg(feature = "broken-lock")]
const BROKEN: &[Model] = broken::MODELS;
#[cfg(not(feature = "broken-lock"))]
const BROKEN: &[Model] = &[];

const NOT_OURS: &str = "not model-checked: std's lock, not built from this suite's atomics, so loom cannot see inside it, and checking loom's own Mutex in its place would check loom; Miri runs it instead (`miri.rs`)";
const SHIPPED: &str = "not model-checked: another crate's lock through lock_api, not built from this suite's atomics, so loom cannot see inside it; Miri runs it instead (`miri.rs`)";

/// The suite's locks that are deliberately not modelled (and not built
/// under loom).
pub const UNMODELLED: &[Unmodelled] = &[
    Unmodelled {
        lock: "std_mutex",
        why: NOT_OURS,
    },
    Unmodelled {
        lock: "parking_lot_mutex",
        why: SHIPPED,
    },
    Unmodelled {
        lock: "parking_lot_fair_mutex",
        why: SHIPPED,
    },
    Unmodelled {
        lock: "spin_mutex",
        why: SHIPPED,
    },
    Unmodelled {
        lock: "spin_ticket_mutex",
        why: SHIPPED,
    },
];

pub fn main() -> ExitCode {
    harness::model::main("spinlock", &models(), UNMODELLED)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::locks::OWN_NAMES as NAMES;

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
    fn tas() {
        passes("tas");
    }

    #[test]
    fn ttas() {
        passes("ttas");
    }

    #[test]
    fn ticket() {
        passes("ticket");
    }

    #[test]
    fn mcs() {
        passes("mcs");
    }

    #[test]
    fn qspinlock() {
        passes("qspinlock");
    }

    #[cfg(feature = "broken-lock")]
    #[test]
    fn the_broken_control_fails_with_a_trace() {
        let m = models().into_iter().find(|m| m.lock == "broken").unwrap();
        let o = harness::model::check(m);
        assert!(!o.ok, "the broken lock passed its model");
        let failure = o.failure.unwrap_or_default();
        assert!(
            failure.contains("Causality violation") || failure.contains("mutual exclusion"),
            "{failure}"
        );
        assert!(
            o.trace.iter().any(|l| l.starts_with("thread ")),
            "{:?}",
            o.trace
        );
    }

    #[test]
    fn every_lock_built_under_loom_has_a_model_and_the_rest_say_why() {
        for &name in NAMES {
            assert!(
                models().iter().any(|m| m.lock == name),
                "{name} has no model"
            );
        }
        for u in UNMODELLED {
            assert!(!NAMES.contains(&u.lock), "{} is built under loom", u.lock);
            assert!(!u.why.is_empty());
        }
    }
}
