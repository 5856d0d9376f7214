//! Thread start-up for contended benchmarks: pinning, a start barrier so
//! every thread begins together, and a stop flag for fixed-duration runs.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Barrier;
use std::time::Duration;

/// CPUs this process may run on.
pub fn cpus() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
}

/// Pins the calling thread to `cpu` (modulo the CPU count). Returns false
/// where the kernel or emulator refuses; the run goes on unpinned.
pub fn pin(cpu: usize) -> bool {
    // SAFETY: cpu_set_t is plain data; CPU_SET stays within it for
    // cpu < CPU_SETSIZE, which the modulo guarantees.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::CPU_SET(cpu % cpus().min(libc::CPU_SETSIZE as usize), &mut set);
        libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) == 0
    }
}

/// Whether pinning works here (recorded in the `env` record).
pub fn can_pin() -> bool {
    // SAFETY: as in `pin`; reading our own mask changes nothing.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) == 0
    }
}

/// Runs `f(thread_index)` on `n` threads, thread `i` pinned to CPU `i`, all
/// released together by a barrier. Returns each thread's result in order.
pub fn run<T: Send>(n: usize, f: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let barrier = Barrier::new(n);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|i| {
                let (barrier, f) = (&barrier, &f);
                s.spawn(move || {
                    pin(i);
                    barrier.wait();
                    f(i)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| std::process::abort()))
            .collect()
    })
}

/// Like [`run`], for fixed-duration work: each thread loops until `stop`
/// reads true, which happens `duration` after all threads were released.
pub fn run_for<T: Send>(
    n: usize,
    duration: Duration,
    f: impl Fn(usize, &AtomicBool) -> T + Sync,
) -> Vec<T> {
    let stop = AtomicBool::new(false);
    let barrier = Barrier::new(n + 1);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|i| {
                let (barrier, f, stop) = (&barrier, &f, &stop);
                s.spawn(move || {
                    pin(i);
                    barrier.wait();
                    f(i, stop)
                })
            })
            .collect();
        barrier.wait();
        std::thread::sleep(duration);
        stop.store(true, Ordering::Relaxed);
        handles
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| std::process::abort()))
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;

    #[test]
    fn runs_every_thread_once_in_order() {
        assert_eq!(run(3, |i| i * 10), [0, 10, 20]);
    }

    #[test]
    fn run_for_stops_every_thread() {
        let total = AtomicUsize::new(0);
        let per = run_for(2, Duration::from_millis(20), |_, stop| {
            let mut n = 0u64;
            while !stop.load(Ordering::Relaxed) {
                n += 1;
                std::hint::spin_loop();
            }
            total.fetch_add(1, Ordering::Relaxed);
            n
        });
        assert_eq!(total.load(Ordering::Relaxed), 2);
        assert!(per.iter().all(|&n| n > 0));
    }
}
