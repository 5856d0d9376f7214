//! Region markers for counting guest instructions under QEMU.
//!
//! Under qemu-user with the `insns-plugin` TCG plugin (`qemu-plugin/`), the
//! plugin counts the instructions a thread executes between [`begin`] and
//! [`end`] of a region. A marker is a system call that Linux rejects with
//! ENOSYS on every architecture, natively and under QEMU, so a marked binary
//! runs unchanged without the plugin (and on real hardware): markers then
//! cost two failing system calls and [`insns_per_op`] returns `None` at once.
//!
//! At an `end` that names a reply pipe the plugin writes the region's count
//! into it, so the suite learns its own counts and reports `insns_per_op`
//! samples like any other metric. (qemu-user does not renumber file
//! descriptors: the guest's pipe is the same descriptor in QEMU's process.)
//!
//! A *traced* region ([`begin_traced`]) also has the plugin keep what it
//! executed, instruction by instruction: at its end the reply carries,
//! after the count, a histogram of QEMU's disassembly text -> executions
//! and symbol -> entries ([`Histogram`]). [`insns_per_op`] traces its
//! regions and turns their histograms into per-op counts per instruction
//! ([`Executed`]), the executed ordering footprint's raw material. The
//! harness only carries the text: what an instruction means is decided by
//! the tool (`lockmatrix::footprint`).
//!
//! Counts are exact and repeat from run to run for single-threaded code.
//! Never count a region whose result depends on other threads (spinning,
//! contention): the count is then as noisy as time. A region counts only
//! the thread that opened it; other threads' instructions never enter it.
//!
//! The constants here must equal `qemu-plugin/src/protocol.rs`'s: the
//! plugin's test `marker_constants_match_the_harness` compares them (the
//! harness links only libc, so the plugin reads them from here in its
//! tests, never the other way round).

use libc::c_long;
use std::collections::BTreeMap;
use std::hint::black_box;
use std::sync::OnceLock;

/// The marker's system call number: the mips o32 slot `reserved221`
/// (o32 numbers are 4000 + n, and qemu-mips shows plugins only numbers of
/// its o32 table), ENOSYS on every ABI. See `qemu-plugin/src/protocol.rs`.
pub const SYSCALL: c_long = 4221;
/// The first argument of a marker, "LMKR".
pub const MAGIC: c_long = 0x4c4d_4b52;
/// The third argument: the marker opens a region ...
pub const PHASE_BEGIN: c_long = 0;
/// ... or closes it.
pub const PHASE_END: c_long = 1;
/// The third argument of a marker that opens a traced region.
pub const PHASE_BEGIN_TRACED: c_long = 2;
/// The payload length of a traced region's reply that says "no
/// histogram" (it did not fit the pipe): the count alone is valid.
pub const NO_HISTOGRAM: u32 = u32::MAX;
const NO_REPLY: c_long = -1;

#[inline(always)]
fn marker(region: u32, phase: c_long, reply_fd: c_long) {
    // `region as c_long` wraps on 32-bit targets; the plugin reads 32 bits.
    // SAFETY: a system call every kernel and QEMU reject with ENOSYS; it
    // reads and writes no memory.
    unsafe {
        libc::syscall(SYSCALL, MAGIC, region as c_long, phase, reply_fd);
    }
}

/// Opens region `region` on this thread.
#[inline(never)]
pub fn begin(region: u32) {
    marker(region, PHASE_BEGIN, NO_REPLY);
}

/// Opens traced region `region` on this thread: [`end_and_read_traced`]
/// reads its histogram with its count.
#[inline(never)]
pub fn begin_traced(region: u32) {
    marker(region, PHASE_BEGIN_TRACED, NO_REPLY);
}

/// Closes region `region` on this thread; the plugin writes its count to
/// its `out=` file only.
#[inline(never)]
pub fn end(region: u32) {
    marker(region, PHASE_END, NO_REPLY);
}

/// The reply pipe: (read end, write end), non-blocking, or `None` when
/// this process cannot make one.
fn pipe() -> Option<(c_long, c_long)> {
    static PIPE: OnceLock<Option<(c_long, c_long)>> = OnceLock::new();
    *PIPE.get_or_init(|| {
        let mut fds = [0 as libc::c_int; 2];
        // SAFETY: pipe2 writes two descriptors into `fds`.
        let ok = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_NONBLOCK | libc::O_CLOEXEC) };
        (ok == 0).then_some((fds[0] as c_long, fds[1] as c_long))
    })
}

/// Closes region `region` and returns its count, or `None` without the
/// plugin.
#[inline(never)]
fn end_and_read(region: u32, (read_fd, write_fd): (c_long, c_long)) -> Option<u64> {
    marker(region, PHASE_END, write_fd);
    let mut bytes = [0u8; 8];
    // SAFETY: reads at most 8 bytes into `bytes` from our own pipe.
    let n = unsafe { libc::read(read_fd as libc::c_int, bytes.as_mut_ptr().cast(), 8) };
    // Non-blocking: without the plugin nothing was written and read fails
    // with EAGAIN. The plugin writes 8 bytes at once (atomic on a pipe).
    (n == 8).then(|| u64::from_le_bytes(bytes))
}

/// What a traced region executed: QEMU's disassembly text of each
/// instruction -> executions, and each symbol -> entries into it from
/// another (a call, a return, a jump). Raw text, as the plugin got it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Histogram {
    pub insns: BTreeMap<String, u64>,
    pub entered: BTreeMap<String, u64>,
}

impl Histogram {
    /// Reads the plugin's payload: lines `I<tab>COUNT<tab>TEXT` and
    /// `S<tab>COUNT<tab>SYMBOL` (`qemu-plugin/src/executed.rs`). `None` for
    /// anything else: a histogram is exact or absent.
    pub fn parse(payload: &str) -> Option<Histogram> {
        let mut h = Histogram::default();
        for line in payload.lines() {
            let (kind, rest) = line.split_once('\t')?;
            let (count, text) = rest.split_once('\t')?;
            let count: u64 = count.parse().ok()?;
            let map = match kind {
                "I" => &mut h.insns,
                "S" => &mut h.entered,
                _ => return None,
            };
            *map.entry(text.to_string()).or_default() += count;
        }
        Some(h)
    }
}

/// Reads exactly `buf.len()` bytes from the non-blocking pipe, or fails:
/// the plugin has written its whole reply before the marker returns.
fn read_exact(fd: c_long, buf: &mut [u8]) -> bool {
    let mut done = 0;
    while done < buf.len() {
        // SAFETY: reads at most the rest of `buf` from our own pipe.
        let n = unsafe {
            libc::read(
                fd as libc::c_int,
                buf[done..].as_mut_ptr().cast(),
                buf.len() - done,
            )
        };
        if n <= 0 {
            return false;
        }
        done += n as usize;
    }
    true
}

thread_local! {
    /// The histogram of the traced region this thread closed last, until
    /// taken ([`take_histogram`]). Kept aside so that the counted loops
    /// keep the signature and body they had before regions were traced:
    /// their machine code, and so the counts, must not move.
    static LAST_HISTOGRAM: std::cell::RefCell<Option<Histogram>> = const { std::cell::RefCell::new(None) };
}

/// Closes traced region `region`; returns its count, or `None` without the
/// plugin. Its histogram, when the plugin sent one, is kept for
/// [`take_histogram`].
#[inline(never)]
fn end_and_read_traced(region: u32, (read_fd, write_fd): (c_long, c_long)) -> Option<u64> {
    marker(region, PHASE_END, write_fd);
    let mut head = [0u8; 12];
    if !read_exact(read_fd, &mut head) {
        return None;
    }
    let insns = u64::from_le_bytes(head[..8].try_into().expect("8 bytes"));
    let len = u32::from_le_bytes(head[8..].try_into().expect("4 bytes"));
    let histogram = (len != NO_HISTOGRAM)
        .then(|| {
            let mut payload = vec![0u8; len as usize];
            read_exact(read_fd, &mut payload)
                .then(|| String::from_utf8(payload).ok())
                .flatten()
                .and_then(|p| Histogram::parse(&p))
        })
        .flatten();
    LAST_HISTOGRAM.with(|h| *h.borrow_mut() = histogram);
    Some(insns)
}

/// The histogram of the traced region this thread closed last, once.
fn take_histogram() -> Option<Histogram> {
    LAST_HISTOGRAM.with(|h| h.borrow_mut().take())
}

/// Runs `f` inside region `region` and returns its result and the number of
/// guest instructions the region took, or `None` when nothing counts them.
/// The count includes the markers' own fixed overhead (the tail of the
/// `begin` system call wrapper, the head of `end`'s), so compare counts by
/// difference, as [`insns_per_op`] does.
#[inline(always)]
pub fn count<R>(region: u32, f: impl FnOnce() -> R) -> (R, Option<u64>) {
    let Some(pipe) = pipe() else {
        return (f(), None);
    };
    begin(region);
    let r = f();
    (r, end_and_read(region, pipe))
}

/// The region id of the probe of [`counting`] (an empty region, written
/// to the plugin's `out=` file like any other).
pub const PROBE_REGION: u32 = u32::MAX;

/// Whether instructions are being counted: true under qemu-user with the
/// plugin loaded. Probed once (an empty region) and remembered.
pub fn counting() -> bool {
    static COUNTING: OnceLock<bool> = OnceLock::new();
    *COUNTING.get_or_init(|| count(PROBE_REGION, || ()).1.is_some())
}

/// Per-op executions of each instruction and entries into each symbol:
/// the op loop's per iteration minus the empty loop's, as for
/// [`InsnsPerOp::per_op`] but text by text. Integers for an op whose path
/// does not vary. The loops' own instructions cancel where the two loops
/// print them alike; where they do not (other registers, another branch
/// target) they show as +1 and -1 entries. The values sum to `per_op`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Executed {
    pub per_op: BTreeMap<String, f64>,
    pub entered: BTreeMap<String, f64>,
}

impl Executed {
    /// From the four regions' histograms, in [`InsnsPerOp::regions`] order.
    fn from_regions(h: [&Histogram; 4], iters: u64) -> Executed {
        fn per_op(maps: [&BTreeMap<String, u64>; 4], iters: u64) -> BTreeMap<String, f64> {
            let mut diff: BTreeMap<String, i128> = BTreeMap::new();
            for (map, sign) in maps.into_iter().zip([-1i128, 1, 1, -1]) {
                for (text, &n) in map {
                    *diff.entry(text.clone()).or_default() += sign * n as i128;
                }
            }
            diff.into_iter()
                .filter(|&(_, d)| d != 0)
                .map(|(text, d)| (text, d as f64 / iters as f64))
                .collect()
        }
        Executed {
            per_op: per_op(h.map(|h| &h.insns), iters),
            entered: per_op(h.map(|h| &h.entered), iters),
        }
    }
}

/// Instructions per operation, from four counted regions.
#[derive(Clone, Debug, PartialEq)]
pub struct InsnsPerOp {
    /// Instructions of one operation: the op loop's per-iteration count
    /// minus the empty loop's. The metric `insns_per_op`.
    pub per_op: f64,
    /// Per iteration of the op loop, loop counter and branch included.
    pub op_loop: f64,
    /// Per iteration of the empty loop.
    pub empty_loop: f64,
    /// Raw counts: op loop of `iters` and `2 * iters` iterations, empty
    /// loop of `iters` and `2 * iters`.
    pub regions: [u64; 4],
    /// What one operation executed, instruction by instruction; `None`
    /// when the plugin sent no histogram for some region.
    pub executed: Option<Executed>,
}

/// The loop of [`crate::measure`], without the timer, counted as one
/// traced region. One instance per `op`, called with different `iters`:
/// both regions of an op run the very same machine code, so everything but
/// the iterations cancels in their difference. (Its histogram is taken
/// with [`take_histogram`]: returning it would change this function's code
/// and the counts with it.)
#[inline(never)]
fn counted_op_loop<F: FnMut(u64)>(
    region: u32,
    iters: u64,
    op: &mut F,
    pipe: (c_long, c_long),
) -> Option<u64> {
    begin_traced(region);
    for i in 0..iters {
        op(black_box(i));
    }
    end_and_read_traced(region, pipe)
}

#[inline(never)]
fn counted_empty_loop(region: u32, iters: u64, pipe: (c_long, c_long)) -> Option<u64> {
    begin_traced(region);
    for i in 0..iters {
        black_box(i);
    }
    end_and_read_traced(region, pipe)
}

/// Counts the instructions of `op`, or returns `None` when not counting
/// (natively, or under QEMU without the plugin) after one cheap probe.
///
/// Method. The op loop is counted over `iters` and over `2 * iters`
/// iterations, by one function called twice, and the first count
/// subtracted from the second: what the two regions share (the markers,
/// the loop's set-up and exit) cancels exactly, leaving `iters` iterations
/// of the loop. The empty loop is counted the same way and its
/// per-iteration count (loop counter, compare and branch, the `black_box`)
/// subtracted, as the timed measurements subtract the empty-loop baseline,
/// leaving the operation's own instructions. Differencing rather than
/// subtracting a single empty region keeps the result an exact integer for
/// an op whose path does not vary: one instruction more in `op` adds
/// exactly 1.0 to `per_op` (and `iters` to each op region).
///
/// A warm-up pass first runs lazy initialisation (feature detection, first
/// use of a lock) outside the regions, as `measure::per_op` does. `region`
/// names the four regions in the plugin's `out=` file (same id, in the
/// order of [`InsnsPerOp::regions`]). The regions are traced, and their
/// histograms differenced the same way into [`InsnsPerOp::executed`].
/// Call it on one thread only, with no other thread running code that `op`
/// waits for.
pub fn insns_per_op(region: u32, iters: u64, mut op: impl FnMut(u64)) -> Option<InsnsPerOp> {
    assert!(iters > 0);
    let pipe = pipe().filter(|_| counting())?;
    for i in 0..iters.min(1000) {
        op(black_box(i));
    }
    let op1 = counted_op_loop(region, iters, &mut op, pipe)?;
    let h_op1 = take_histogram();
    let op2 = counted_op_loop(region, 2 * iters, &mut op, pipe)?;
    let h_op2 = take_histogram();
    let empty1 = counted_empty_loop(region, iters, pipe)?;
    let h_empty1 = take_histogram();
    let empty2 = counted_empty_loop(region, 2 * iters, pipe)?;
    let h_empty2 = take_histogram();
    let per_iter = |a: u64, b: u64| (b as f64 - a as f64) / iters as f64;
    let (op_loop, empty_loop) = (per_iter(op1, op2), per_iter(empty1, empty2));
    let executed = match (&h_op1, &h_op2, &h_empty1, &h_empty2) {
        (Some(a), Some(b), Some(c), Some(d)) => Some(Executed::from_regions([a, b, c, d], iters)),
        _ => None,
    };
    Some(InsnsPerOp {
        per_op: op_loop - empty_loop,
        op_loop,
        empty_loop,
        regions: [op1, op2, empty1, empty2],
        executed,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_are_harmless_without_the_plugin() {
        // Natively (the unit tests run on the host) the marker is ENOSYS.
        begin(1);
        end(1);
        // SAFETY: the marker system call itself, to see the kernel's answer.
        let ret = unsafe { libc::syscall(SYSCALL, MAGIC, 1 as c_long, PHASE_BEGIN, NO_REPLY) };
        let errno = std::io::Error::last_os_error().raw_os_error();
        // ENOSYS natively; EPERM where a seccomp filter denies unknown calls.
        assert!(
            ret == -1 && matches!(errno, Some(libc::ENOSYS | libc::EPERM)),
            "{ret} {errno:?}"
        );
        assert_eq!(count(2, || 7), (7, None));
        assert!(!counting());
        assert_eq!(
            insns_per_op(3, 100, |i| {
                black_box(i);
            }),
            None
        );
    }

    #[test]
    fn reads_the_plugins_payload_or_nothing() {
        let h = Histogram::parse("I\t2000\tsync\t0x10\nI\t5\tnop \nS\t1000\t__aarch64_cas4_acq\n")
            .unwrap();
        assert_eq!(h.insns["sync\t0x10"], 2000);
        assert_eq!(h.insns["nop "], 5);
        assert_eq!(h.entered["__aarch64_cas4_acq"], 1000);
        assert_eq!(Histogram::parse(""), Some(Histogram::default()));
        for bad in ["I\t2\n", "X\t1\tnop\n", "I\tmany\tnop\n"] {
            assert_eq!(Histogram::parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn per_op_executions_difference_the_four_regions() {
        let h = |pairs: &[(&str, u64)], entered: &[(&str, u64)]| Histogram {
            insns: pairs.iter().map(|&(t, n)| (t.to_string(), n)).collect(),
            entered: entered.iter().map(|&(t, n)| (t.to_string(), n)).collect(),
        };
        // 10 iterations: the op loop runs lwsync and a 2-insn loop (add,
        // bdnz 0x100) per iteration, the empty loop a 2-insn loop printed
        // with another branch target; both have 3 fixed instructions.
        let op1 = h(
            &[("lwsync", 10), ("add", 13), ("bdnz 0x100", 10)],
            &[("h", 10)],
        );
        let op2 = h(
            &[("lwsync", 20), ("add", 23), ("bdnz 0x100", 20)],
            &[("h", 20)],
        );
        let e1 = h(&[("add", 13), ("bdnz 0x200", 10)], &[]);
        let e2 = h(&[("add", 23), ("bdnz 0x200", 20)], &[]);
        let x = Executed::from_regions([&op1, &op2, &e1, &e2], 10);
        assert_eq!(
            x.per_op,
            BTreeMap::from([
                ("lwsync".to_string(), 1.0),
                ("bdnz 0x100".to_string(), 1.0),
                ("bdnz 0x200".to_string(), -1.0),
            ])
        );
        assert_eq!(x.per_op.values().sum::<f64>(), 1.0);
        assert_eq!(x.entered, BTreeMap::from([("h".to_string(), 1.0)]));
    }
}

/// The C suites' harness (`suites/atomic-c/harness.h`) speaks to the same
/// plugin with the same markers: its constants are these.
#[cfg(test)]
mod c_harness {
    #[test]
    fn the_c_harness_defines_the_same_constants() {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../atomic-c/harness.h");
        let h = std::fs::read_to_string(path).unwrap();
        let define = |name: &str| -> i128 {
            let line = h
                .lines()
                .find(|l| l.starts_with(&format!("#define {name} ")))
                .unwrap_or_else(|| panic!("{path}: no #define {name}"));
            let v = line.split_whitespace().nth(2).unwrap();
            let v = v.trim_end_matches(['L', 'u']);
            match v.strip_prefix("0x") {
                Some(hex) => i128::from_str_radix(hex, 16).unwrap(),
                None => v.parse().unwrap(),
            }
        };
        assert_eq!(define("LM_MARKER_SYSCALL"), i128::from(super::SYSCALL));
        assert_eq!(define("LM_MARKER_MAGIC"), i128::from(super::MAGIC));
        assert_eq!(define("LM_PHASE_BEGIN"), i128::from(super::PHASE_BEGIN));
        assert_eq!(define("LM_PHASE_END"), i128::from(super::PHASE_END));
        assert_eq!(
            define("LM_PHASE_BEGIN_TRACED"),
            i128::from(super::PHASE_BEGIN_TRACED)
        );
        assert_eq!(define("LM_NO_HISTOGRAM"), i128::from(super::NO_HISTOGRAM));
        assert_eq!(define("LM_PROBE_REGION"), i128::from(super::PROBE_REGION));
        assert_eq!(
            define("LM_INSNS_ITERS"),
            i128::from(crate::measure::INSNS_ITERS)
        );
        assert_eq!(
            define("LM_PROTOCOL_VERSION"),
            i128::from(crate::out::PROTOCOL_VERSION)
        );
    }
}
