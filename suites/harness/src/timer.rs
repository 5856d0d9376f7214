//! The cycle-level timer of each architecture.
//!
//! Seed 000 reads the time-stamp counter; on arm64 the virtual counter is the
//! portable equivalent. Elsewhere there is no user-readable counter every
//! kernel allows, so the monotonic clock (vDSO, nanoseconds) is used.
//! Values are in ticks; [`hz`] says how many ticks make a second.

use std::sync::OnceLock;
use std::time::Instant;

/// The timer's name as recorded in the `env` record.
pub const NAME: &str = if cfg!(any(target_arch = "x86_64", target_arch = "x86")) {
    "rdtsc"
} else if cfg!(target_arch = "aarch64") {
    "cntvct_el0"
} else {
    "clock_monotonic"
};

/// Unit of the tick-based metrics.
pub const UNIT: &str = if cfg!(any(target_arch = "x86_64", target_arch = "x86")) {
    "tsc_ticks"
} else if cfg!(target_arch = "aarch64") {
    "cntvct_ticks"
} else {
    "ns"
};

#[cfg(target_arch = "x86_64")]
#[inline(always)]
pub fn now() -> u64 {
    // SAFETY: rdtsc has no preconditions on x86_64.
    unsafe { core::arch::x86_64::_rdtsc() }
}

#[cfg(target_arch = "x86")]
#[inline(always)]
pub fn now() -> u64 {
    // SAFETY: every i686 CPU has rdtsc.
    unsafe { core::arch::x86::_rdtsc() }
}

#[cfg(target_arch = "aarch64")]
#[inline(always)]
pub fn now() -> u64 {
    let t: u64;
    // The isb keeps the counter read from being hoisted above the timed code.
    // SAFETY: cntvct_el0 is readable at EL0 on Linux.
    unsafe { core::arch::asm!("isb", "mrs {t}, cntvct_el0", t = out(reg) t, options(nostack)) };
    t
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "x86", target_arch = "aarch64")))]
#[inline(always)]
pub fn now() -> u64 {
    epoch().elapsed().as_nanos() as u64
}

#[allow(dead_code)]
fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// Ticks per second of [`now`].
pub fn hz() -> f64 {
    static HZ: OnceLock<f64> = OnceLock::new();
    *HZ.get_or_init(measure_hz)
}

#[cfg(target_arch = "aarch64")]
fn measure_hz() -> f64 {
    let f: u64;
    // SAFETY: cntfrq_el0 is readable at EL0 on Linux.
    unsafe { core::arch::asm!("mrs {f}, cntfrq_el0", f = out(reg) f, options(nostack, nomem)) };
    f as f64
}

#[cfg(any(target_arch = "x86_64", target_arch = "x86"))]
fn measure_hz() -> f64 {
    // The TSC frequency is not exposed to user space portably: calibrate it
    // against the monotonic clock over 20 ms, keeping the best of three.
    (0..3)
        .map(|_| {
            let (i0, t0) = (Instant::now(), now());
            while i0.elapsed() < std::time::Duration::from_millis(20) {}
            let (t1, dt) = (now(), i0.elapsed());
            (t1 - t0) as f64 / dt.as_secs_f64()
        })
        .fold(0.0, f64::max)
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "x86", target_arch = "aarch64")))]
fn measure_hz() -> f64 {
    1e9
}

/// Converts a tick count to seconds.
pub fn secs(ticks: f64) -> f64 {
    ticks / hz()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn counts_forward_at_the_stated_rate() {
        let (i0, t0) = (Instant::now(), now());
        std::thread::sleep(Duration::from_millis(30));
        let (t1, dt) = (now(), i0.elapsed());
        assert!(t1 > t0);
        let ratio = secs((t1 - t0) as f64) / dt.as_secs_f64();
        assert!((0.8..1.25).contains(&ratio), "timer rate off by {ratio}");
    }
}
