//! A throw-away QEMU TCG plugin that measures the two costs of building
//! the contention model inside QEMU instead of behind the sync layer
//! (`docs/contention-model.md`, "Why behind the sync layer"):
//!
//! - `mode=count`: a callback on every guest memory access, counting them
//!   (the least any pricing plugin must do);
//! - `mode=serialize`: the same, and each vCPU waits in its callback until
//!   it has the smallest virtual time (one cycle per access) of the vCPUs
//!   not in a system call: the serialization a deterministic model needs.
//!   A wait longer than 200 ms is given up and counted as a stall (a vCPU
//!   the others wait for that is blocked where no callback sees it).
//!
//! At exit it prints the accesses and stalls to stderr.

use qemu_plugin::install::{Args, Info};
use qemu_plugin::plugin::{HasCallbacks, Register};
use qemu_plugin::{register, MemRW, PluginId, Result, TranslationBlock, VCPUIndex};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering::Relaxed};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

static ACCESSES: AtomicU64 = AtomicU64::new(0);
static STALLS: AtomicU64 = AtomicU64::new(0);
static SERIALIZE: AtomicBool = AtomicBool::new(false);

#[derive(Default)]
struct Clocks {
    /// Per vCPU: virtual time, and whether it takes part (not in a syscall).
    vcpus: Vec<(u64, bool)>,
}

static CLOCKS: Mutex<Clocks> = Mutex::new(Clocks { vcpus: Vec::new() });
static TURN: Condvar = Condvar::new();

fn slot(c: &mut Clocks, v: usize) -> &mut (u64, bool) {
    if c.vcpus.len() <= v {
        c.vcpus.resize(v + 1, (0, false));
    }
    &mut c.vcpus[v]
}

fn set_active(v: VCPUIndex, active: bool) {
    let mut c = CLOCKS.lock().unwrap();
    let min = c.vcpus.iter().filter(|x| x.1).map(|x| x.0).min().unwrap_or(0);
    let s = slot(&mut c, v as usize);
    if active && !s.1 {
        // Back from a system call: no earlier than the others.
        s.0 = s.0.max(min);
    }
    s.1 = active;
    TURN.notify_all();
}

fn access(v: VCPUIndex) {
    ACCESSES.fetch_add(1, Relaxed);
    if !SERIALIZE.load(Relaxed) {
        return;
    }
    let v = v as usize;
    let mut c = CLOCKS.lock().unwrap();
    slot(&mut c, v).0 += 1;
    TURN.notify_all();
    loop {
        let me = c.vcpus[v].0;
        let first = c
            .vcpus
            .iter()
            .enumerate()
            .filter(|(_, x)| x.1)
            .all(|(u, x)| (x.0, u) >= (me, v) || u == v);
        if first {
            return;
        }
        let (g, timeout) = TURN.wait_timeout(c, Duration::from_millis(200)).unwrap();
        c = g;
        if timeout.timed_out() {
            STALLS.fetch_add(1, Relaxed);
            return;
        }
    }
}

struct Probe;

impl Register for Probe {
    fn register(&mut self, id: PluginId, args: &Args, _: &Info) -> Result<()> {
        SERIALIZE.store(args.raw.iter().any(|a| a == "mode=serialize"), Relaxed);
        qemu_plugin::qemu_plugin_register_atexit_cb(id, |_| {
            eprintln!(
                "qemu-probe: {} accesses, {} stalls",
                ACCESSES.load(Relaxed),
                STALLS.load(Relaxed)
            );
        })
    }
}

impl HasCallbacks for Probe {
    fn on_translation_block_translate(&mut self, _: PluginId, tb: TranslationBlock) -> Result<()> {
        for insn in tb.instructions() {
            insn.register_memory_access_callback(|v, _, _| access(v), MemRW::QEMU_PLUGIN_MEM_RW);
        }
        Ok(())
    }

    fn on_vcpu_init(&mut self, _: PluginId, v: VCPUIndex) -> Result<()> {
        set_active(v, true);
        Ok(())
    }

    fn on_vcpu_exit(&mut self, _: PluginId, v: VCPUIndex) -> Result<()> {
        set_active(v, false);
        Ok(())
    }

    #[allow(clippy::too_many_arguments)]
    fn on_syscall(
        &mut self,
        _: PluginId,
        v: VCPUIndex,
        _: i64,
        _: u64,
        _: u64,
        _: u64,
        _: u64,
        _: u64,
        _: u64,
        _: u64,
        _: u64,
    ) -> Result<()> {
        set_active(v, false);
        Ok(())
    }

    fn on_syscall_return(&mut self, _: PluginId, v: VCPUIndex, _: i64, _: i64) -> Result<()> {
        set_active(v, true);
        Ok(())
    }
}

register!(Probe);
