//! A simulated cache-coherent machine of 1 to 64 virtual CPUs, for
//! running a lock's own source under contention on any host, and getting
//! the same numbers on every run and every host.
//!
//! The suites' `sync` layers take their atomics, spin hint, yield, futex,
//! clock and mutex from here under `--cfg lockmatrix_sim`, as they take
//! loom's under `--cfg loom`. [`simulate`] runs a closure on N vCPUs (real
//! threads, one running at a time) under a deterministic discrete-event
//! scheduler: each vCPU has a clock, and each shared access happens in
//! clock order and is priced by a per-line coherence model (MESI or
//! MOESI, [`coherence`]) with the cost table of a published machine
//! ([`machine`]). What it leaves out: store buffers and the memory model
//! (accesses are sequentially consistent), prefetchers, capacity misses,
//! frequency changes, SMT, interrupts and the OS scheduler (one thread
//! per CPU, never preempted).
//!
//! - [`world`]: the scheduler, the pricing of each access, sleeping
//!   spinners and futex sleepers;
//! - [`atomic`], [`futex`], [`mutex`], [`time`]: what the locks use;
//! - [`report`]: what a simulation counted.

pub mod atomic;
pub mod coherence;
pub mod futex;
pub mod machine;
pub mod mutex;
pub mod report;
pub mod time;
mod world;

pub use machine::Machine;
pub use mutex::{Mutex, MutexGuard};
pub use report::{CpuStats, LineStats, Report};
pub use world::{simulate, SimError};

pub mod hint {
    /// The spin-wait hint: the machine's pause; a spin that only re-reads
    /// valid lines sleeps until one of them is written.
    pub fn spin_loop() {
        crate::world::spin_loop();
    }
}

pub mod thread {
    /// `sched_yield()` on a CPU with nothing else to run: its cost.
    pub fn yield_now() {
        let cost = crate::world::with_machine(|m| u64::from(m.costs.yield_syscall));
        match cost {
            Some(c) => crate::world::advance(c, |s| &mut s.yields),
            None => std::thread::yield_now(),
        }
    }
}

/// `cycles` of the calling vCPU's own work (no shared access).
pub fn work(cycles: u64) {
    crate::world::advance(cycles, |s| &mut s.works);
}

/// The calling vCPU's clock, in cycles (0 outside a simulation).
pub fn now() -> u64 {
    world::clock()
}

/// The architecture of the machine simulated, as `target_arch` names it
/// (the host's outside a simulation): what a lock that picks a constant by
/// architecture reads under the model.
pub fn target_arch() -> &'static str {
    world::with_machine(|m| m.arch).unwrap_or(std::env::consts::ARCH)
}

/// The calling thread's vCPU number, if it is one.
pub fn cpu() -> Option<usize> {
    world::me()
}

/// Names `len` bytes at `ptr` for the report: the lines they hold are
/// called `label` (`label+OFFSET` past the first).
pub fn name<T: ?Sized>(ptr: *const T, len: usize, label: impl Into<String>) {
    world::name(ptr.cast::<u8>() as usize, len, label.into());
}
