//! Time for loom: an `Instant` that is a counter, so the models are
//! deterministic, as loom needs.
//!
//! Every `now()` moves the clock on by [`TICK`], as long as linux_rwsem's
//! hand-off timeout (`WAIT_TIMEOUT`): a waiter at the head of the queue
//! that reads the clock twice more has waited too long and asks for the
//! hand-off, so the models reach the hand-off path as well as lock
//! stealing before it. The clock is a loom atomic, so loom explores the
//! orders in which threads read it.

use loom::sync::atomic::{AtomicU64, Ordering::Relaxed};
use std::ops::Add;
use std::time::Duration;

pub const TICK: Duration = Duration::from_millis(4);

loom::lazy_static! {
    /// Nanoseconds since the execution started.
    static ref NOW: AtomicU64 = AtomicU64::new(0);
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Instant(Duration);

impl Instant {
    pub fn now() -> Instant {
        let tick = TICK.as_nanos() as u64;
        Instant(Duration::from_nanos(NOW.fetch_add(tick, Relaxed) + tick))
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;

    fn add(self, d: Duration) -> Instant {
        Instant(self.0 + d)
    }
}
