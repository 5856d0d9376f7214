//! The QEMU side: per-vCPU instruction counters bumped by a callback on
//! every executed translation block, and the marker system calls that open
//! and close regions. Each block's disassembly is recorded when it is
//! translated; while a traced region is open on a vCPU, that vCPU also
//! counts the executions of each block (`crate::executed`).

use crate::executed::{self, BlockRef, Blocks, Histogram, Trace};
use crate::protocol::{decode, Config, Event, Marker, Regions};
use crate::uncounted::{is_padding, is_partial_copy, Isa};
use qemu_plugin::install::{Args, Info};
use qemu_plugin::plugin::{HasCallbacks, Register};
use qemu_plugin::{register, PluginId, Result, TranslationBlock, VCPUIndex};
use std::fs::File;
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Mutex, MutexGuard};

/// vCPUs (guest threads, in user mode) with a counter. qemu-user gives a new
/// thread the lowest free index, so this bounds live threads, not created
/// ones. A region opened on a higher index is reported as an error.
const MAX_VCPUS: usize = 1024;

/// Guest instructions executed so far, per vCPU. Each slot is written only
/// by its own vCPU's thread, so a load and a store suffice (no locked
/// read-modify-write on the hot path).
static INSNS: [AtomicU64; MAX_VCPUS] = [const { AtomicU64::new(0) }; MAX_VCPUS];

/// Whether a traced region is open on the vCPU: the one load a block's
/// execution pays for tracing when none is.
static TRACING: [AtomicBool; MAX_VCPUS] = [const { AtomicBool::new(false) }; MAX_VCPUS];

/// A vCPU's trace and how many traced regions are open on it. Locked by
/// the vCPU's own thread only (its blocks and its markers), so never
/// contended.
struct VcpuTrace {
    open: u32,
    trace: Trace,
}

static TRACES: [Mutex<VcpuTrace>; MAX_VCPUS] = [const {
    Mutex::new(VcpuTrace {
        open: 0,
        trace: Trace::new(),
    })
}; MAX_VCPUS];

/// Every translated block's disassembly, by block id.
static BLOCKS: Mutex<Option<Blocks>> = Mutex::new(None);

/// The guest's instruction set, which decides what is padding.
static ISA: std::sync::OnceLock<Isa> = std::sync::OnceLock::new();

/// What an open region keeps: `None` untraced; traced, the vCPU's trace
/// when it opened (`None` when no other traced region was open: empty).
type Keep = Option<Option<Trace>>;

struct State {
    regions: Regions<Keep>,
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
fn count(vcpu: VCPUIndex, n: u64, block: BlockRef) {
    let Some(c) = INSNS.get(vcpu as usize) else {
        return;
    };
    c.store(c.load(Ordering::Relaxed) + n, Ordering::Relaxed);
    if TRACING[vcpu as usize].load(Ordering::Relaxed) {
        lock(&TRACES[vcpu as usize]).trace.executed(block);
    }
}

/// A lock whatever a panic left behind: losing a measurement is better
/// than aborting QEMU.
fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

/// Writes the reply (the count, and a traced region's histogram) to the
/// guest's reply pipe (see `Marker::End`). Only a pipe is written to, so a
/// stray number cannot scribble on QEMU's files. A histogram larger than
/// the pipe holds grows the pipe (`F_SETPIPE_SZ`), or is left out (the
/// count alone is sent, with `executed::NO_PAYLOAD`) when it cannot.
fn reply(fd: i32, insns: u64, executed: Option<&Histogram>) -> std::result::Result<(), String> {
    let os_error = |what: &str| {
        format!(
            "reply descriptor {fd}: {what}{}",
            std::io::Error::last_os_error()
        )
    };
    let payload = executed.map(Histogram::payload);
    // SAFETY: fstat, fcntl and write on a plain descriptor number; a closed
    // or foreign number fails with EBADF or is refused below.
    unsafe {
        let mut st: libc::stat = std::mem::zeroed();
        if libc::fstat(fd, &mut st) != 0 {
            return Err(os_error(""));
        }
        if st.st_mode & libc::S_IFMT != libc::S_IFIFO {
            return Err(format!("reply descriptor {fd} is not a pipe"));
        }
        let mut bytes = match &payload {
            None => insns.to_le_bytes().to_vec(),
            Some(p) => executed::reply(insns, Some(p)),
        };
        let mut error = None;
        if bytes.len() > 8 {
            // The guest reads the pipe empty after every reply.
            let size = libc::fcntl(fd, libc::F_GETPIPE_SZ);
            if size >= 0
                && (size as usize) < bytes.len()
                && libc::fcntl(fd, libc::F_SETPIPE_SZ, bytes.len() as libc::c_int) < 0
            {
                error = Some(os_error(&format!("a histogram of {} bytes: ", bytes.len())));
                bytes = executed::reply(insns, None);
            }
        }
        let n = libc::write(fd, bytes.as_ptr().cast(), bytes.len());
        if n != bytes.len() as isize {
            return Err(os_error(""));
        }
        error.map_or(Ok(()), Err)
    }
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
                Marker::Begin { region, .. } | Marker::End { region, .. } => region,
            };
            return self.log(&Event::Error {
                region,
                vcpu,
                error: "thread index beyond the plugin's counters",
            });
        };
        match marker {
            Marker::Begin { region, traced } => {
                let keep = traced.then(|| start_tracing(vcpu));
                if let Some((e, old)) = self.regions.begin(vcpu, region, now, keep) {
                    if old.is_some() {
                        stop_tracing(vcpu);
                    }
                    self.log(&e);
                }
            }
            Marker::End { region, reply_fd } => {
                let event = match self.regions.end(vcpu, region, now) {
                    Ok((insns, keep)) => Event::Closed {
                        region,
                        vcpu,
                        insns,
                        executed: keep.map(|since| {
                            let h = histogram(vcpu, since.as_ref());
                            stop_tracing(vcpu);
                            h
                        }),
                    },
                    Err(e) => e,
                };
                if let (
                    Event::Closed {
                        insns, executed, ..
                    },
                    Some(fd),
                ) = (&event, reply_fd)
                {
                    if let Err(e) = reply(fd, *insns, executed.as_ref()) {
                        eprintln!("insns-plugin: region {region}: {e}");
                    }
                }
                self.log(&event);
            }
        }
    }
}

/// Starts tracing a region on `vcpu` (its index is within the counters);
/// returns the trace so far, `None` when no traced region was open.
fn start_tracing(vcpu: VCPUIndex) -> Option<Trace> {
    let mut t = lock(&TRACES[vcpu as usize]);
    let since = if t.open == 0 {
        t.trace.clear();
        None
    } else {
        Some(t.trace.clone())
    };
    t.open += 1;
    TRACING[vcpu as usize].store(true, Ordering::Relaxed);
    since
}

fn stop_tracing(vcpu: VCPUIndex) {
    let mut t = lock(&TRACES[vcpu as usize]);
    t.open = t.open.saturating_sub(1);
    if t.open == 0 {
        TRACING[vcpu as usize].store(false, Ordering::Relaxed);
        t.trace.clear();
    }
}

fn histogram(vcpu: VCPUIndex, since: Option<&Trace>) -> Histogram {
    let t = lock(&TRACES[vcpu as usize]);
    let blocks = lock(&BLOCKS);
    match &*blocks {
        Some(b) => b.histogram(&t.trace, since),
        None => Histogram::default(),
    }
}

fn state() -> MutexGuard<'static, State> {
    lock(&STATE)
}

struct InsnsPlugin;

impl Register for InsnsPlugin {
    fn register(&mut self, id: PluginId, args: &Args, info: &Info) -> Result<()> {
        let _ = ISA.set(Isa::from_target_name(&info.target_name));
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
        // Padding and a partial copy of a page-crossing instruction are
        // neither counted nor listed: the code's placement decides them.
        let isa = ISA.get().copied().unwrap_or(Isa::Other);
        let mut insns: Vec<(String, Vec<u8>, u64)> = tb
            .instructions()
            .map(|i| (i.disas().unwrap_or_default(), i.data(), i.vaddr()))
            .collect();
        if insns
            .last()
            .is_some_and(|(text, data, at)| is_partial_copy(*at, data.len(), text))
        {
            insns.pop();
        }
        insns.retain(|(_, data, _)| !is_padding(isa, data));
        let n = insns.len() as u64;
        // Every block's text is kept, traced or not: a block translated
        // before a region opened (a warm-up, an earlier cell) runs in it.
        let texts = insns.into_iter().map(|(text, _, _)| text);
        let symbol = tb
            .instruction(0)
            .ok()
            .and_then(|i| i.symbol().ok().flatten());
        let block = lock(&BLOCKS)
            .get_or_insert_with(Blocks::new)
            .add(texts, symbol);
        tb.register_execute_callback(move |vcpu| count(vcpu, n, block));
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
