//! The QEMU side: per-vCPU instruction counters bumped by a callback on
//! every executed translation block, and the marker system calls that open
//! and close regions.

use crate::protocol::{decode, Config, Event, Marker, Regions};
use qemu_plugin::install::{Args, Info};
use qemu_plugin::plugin::{HasCallbacks, Register};
use qemu_plugin::{register, PluginId, Result, TranslationBlock, VCPUIndex};
use std::fs::File;
use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;

/// vCPUs (guest threads, in user mode) with a counter. qemu-user gives a new
/// thread the lowest free index, so this bounds live threads, not created
/// ones. A region opened on a higher index is reported as an error.
const MAX_VCPUS: usize = 1024;

/// Guest instructions executed so far, per vCPU. Each slot is written only
/// by its own vCPU's thread, so a load and a store suffice (no locked
/// read-modify-write on the hot path).
static INSNS: [AtomicU64; MAX_VCPUS] = [const { AtomicU64::new(0) }; MAX_VCPUS];

struct State {
    regions: Regions,
    out: Option<File>,
}

static STATE: Mutex<State> = Mutex::new(State {
    regions: Regions::new(),
    out: None,
});

fn executed(vcpu: VCPUIndex) -> Option<u64> {
    INSNS.get(vcpu as usize).map(|c| c.load(Ordering::Relaxed))
}

/// Counting is per translation block: a block's instructions are added when
/// it starts executing. In user mode a block runs to its end (system calls
/// and branches end blocks; signals are taken between blocks), so the sum
/// is the number of guest instructions executed. The exceptions are a fault
/// inside a block (a crash) and, once the guest has started a second
/// thread, an instruction QEMU must replay exclusively (EXCP_ATOMIC: its
/// block is counted and the instruction again) — neither happens in a
/// single-threaded measurement, and both repeat identically run to run.
fn count(vcpu: VCPUIndex, n: u64) {
    if let Some(c) = INSNS.get(vcpu as usize) {
        c.store(c.load(Ordering::Relaxed) + n, Ordering::Relaxed);
    }
}

/// Writes the count to the guest's reply pipe (see `Marker::End`). Only a
/// pipe is written to, so a stray number cannot scribble on QEMU's files.
fn reply(fd: i32, insns: u64) -> std::result::Result<(), String> {
    // SAFETY: fstat and write on a plain descriptor number; a closed or
    // foreign number fails with EBADF or is refused below.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(fd, &mut st) != 0 {
            return Err(format!(
                "reply descriptor {fd}: {}",
                std::io::Error::last_os_error()
            ));
        }
        if st.st_mode & libc::S_IFMT != libc::S_IFIFO {
            return Err(format!("reply descriptor {fd} is not a pipe"));
        }
        let bytes = insns.to_le_bytes();
        let n = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        if n != bytes.len() as isize {
            return Err(format!(
                "reply descriptor {fd}: {}",
                std::io::Error::last_os_error()
            ));
        }
    }
    Ok(())
}

impl State {
    fn log(&mut self, event: &Event) {
        if let Event::Error { .. } = event {
            eprintln!("insns-plugin: {}", event.json());
        }
        if let Some(out) = &mut self.out {
            // One write per line, unbuffered: a guest that crashes later
            // still leaves every region it closed.
            if let Err(e) = out.write_all(format!("{}\n", event.json()).as_bytes()) {
                eprintln!("insns-plugin: writing the output file: {e}");
                self.out = None;
            }
        }
    }

    fn marker(&mut self, vcpu: VCPUIndex, marker: Marker) {
        let Some(now) = executed(vcpu) else {
            let region = match marker {
                Marker::Begin { region } | Marker::End { region, .. } => region,
            };
            return self.log(&Event::Error {
                region,
                vcpu,
                error: "thread index beyond the plugin's counters",
            });
        };
        match marker {
            Marker::Begin { region } => {
                if let Some(e) = self.regions.begin(vcpu, region, now) {
                    self.log(&e);
                }
            }
            Marker::End { region, reply_fd } => {
                let event = self.regions.end(vcpu, region, now);
                if let (Event::Closed { insns, .. }, Some(fd)) = (&event, reply_fd) {
                    if let Err(e) = reply(fd, *insns) {
                        eprintln!("insns-plugin: region {region}: {e}");
                    }
                }
                self.log(&event);
            }
        }
    }
}

fn state() -> std::sync::MutexGuard<'static, State> {
    // A panic cannot leave State half-updated in a way that matters more
    // than losing the measurement; keep going rather than abort QEMU.
    STATE.lock().unwrap_or_else(|e| e.into_inner())
}

struct InsnsPlugin;

impl Register for InsnsPlugin {
    fn register(&mut self, id: PluginId, args: &Args, _info: &Info) -> Result<()> {
        let config = match Config::parse(&args.raw) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("insns-plugin: {e}");
                std::process::exit(2);
            }
        };
        if let Some(path) = &config.out {
            match File::create(path) {
                Ok(f) => state().out = Some(f),
                Err(e) => {
                    eprintln!("insns-plugin: cannot create {}: {e}", path.display());
                    std::process::exit(2);
                }
            }
        }
        qemu_plugin::qemu_plugin_register_atexit_cb(id, |_| {
            let mut state = state();
            for event in state.regions.unclosed() {
                state.log(&event);
            }
            state.out = None;
        })
    }
}

impl HasCallbacks for InsnsPlugin {
    fn on_translation_block_translate(
        &mut self,
        _id: PluginId,
        tb: TranslationBlock,
    ) -> Result<()> {
        let n = tb.size() as u64;
        tb.register_execute_callback(move |vcpu| count(vcpu, n));
        Ok(())
    }

    fn on_syscall(
        &mut self,
        _id: PluginId,
        vcpu: VCPUIndex,
        num: i64,
        a1: u64,
        a2: u64,
        a3: u64,
        a4: u64,
        _a5: u64,
        _a6: u64,
        _a7: u64,
        _a8: u64,
    ) -> Result<()> {
        if let Some(marker) = decode(num, a1, a2, a3, a4) {
            state().marker(vcpu, marker);
        }
        Ok(())
    }
}

register!(InsnsPlugin);
