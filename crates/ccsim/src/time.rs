//! The clock in the simulated machine: the reading vCPU's virtual time,
//! in nanoseconds at the machine's frequency. rwsem's hand-off timeout
//! reads it, so a waiter times out after as many simulated cycles as the
//! real timeout has nanoseconds at that clock rate.

use std::ops::{Add, Sub};
pub use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Instant {
    nanos: u64,
}

impl Instant {
    pub fn now() -> Instant {
        let ghz = crate::world::with_machine(|m| m.ghz).unwrap_or(1.0);
        let cost = crate::world::with_machine(|m| u64::from(m.costs.clock_read)).unwrap_or(0);
        crate::world::advance(cost, |s| &mut s.works);
        Instant {
            nanos: (crate::world::clock() as f64 / ghz) as u64,
        }
    }

    pub fn elapsed(&self) -> Duration {
        Instant::now() - *self
    }

    pub fn duration_since(&self, earlier: Instant) -> Duration {
        *self - earlier
    }
}

impl Add<Duration> for Instant {
    type Output = Instant;
    fn add(self, d: Duration) -> Instant {
        Instant {
            nanos: self.nanos + d.as_nanos() as u64,
        }
    }
}

impl Sub<Instant> for Instant {
    type Output = Duration;
    fn sub(self, earlier: Instant) -> Duration {
        Duration::from_nanos(self.nanos.saturating_sub(earlier.nanos))
    }
}
