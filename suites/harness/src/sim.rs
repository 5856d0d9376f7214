//! The contention model's runner (`--cfg lockmatrix_sim` builds, never a
//! matrix build): a suite binary built so runs its own locks on the
//! simulated machine of the `ccsim` crate instead of its benchmarks, and
//! prints one JSON line per lock, workload, machine and vCPU count:
//!
//! - `contention`: `suite`, `lock`, `workload`, `machine`, `cpus`,
//!   `metrics` (each a number, the same on every run and host: see
//!   [`Metrics`]), `lines` (the lines with the most coherence misses: a
//!   label, misses per acquisition and the source sites that missed
//!   most), and `secs` (host time, the only field that varies);
//! - `contention_error`: the same keys and `error` instead of numbers
//!   (a deadlock, a broken invariant);
//! - `uncovered`: `suite`, `lock`, `why`: a lock the model cannot run
//!   (std's and other crates' locks are not made of the sync layer).
//!
//! Flags: `--list` (the covered locks), `--lock A,B`, `--workload W,..`,
//! `--cpus 1,2,..` (default 1 to 64 in powers of two), `--machine M,..`
//! (default `x86`; `all`), `--spread` (vCPUs round robin over the nodes),
//! `--line-bytes N`. Exit status 0, 1 when a run failed, 2 for bad flags.

use crate::json::{obj, J};
pub use ccsim::{simulate, Machine, Report, SimError};
use std::process::ExitCode;
use std::sync::Mutex;
use std::time::Instant;

/// Seed 001's ladder, to the model's 64 vCPUs.
pub const LADDER: &[usize] = &[1, 2, 4, 8, 16, 32, 64];

pub struct Opts {
    pub list: bool,
    pub locks: Option<Vec<String>>,
    pub workloads: Option<Vec<String>>,
    pub cpus: Vec<usize>,
    pub machines: Vec<Machine>,
}

/// Why a model runner refused its flags (exit status 2).
#[derive(Debug)]
pub enum FlagError {
    /// A flag that takes a value was last.
    NoValue(&'static str),
    /// A `--cpus` entry outside 1 to 64.
    Cpus(String),
    /// A `--machine` name the model does not have.
    Machine(String),
    /// `--line-bytes` other than 64 or 128.
    LineBytes(String),
    Unknown(String),
}

impl std::fmt::Display for FlagError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            FlagError::NoValue(flag) => write!(f, "{flag} needs a value"),
            FlagError::Cpus(c) => write!(f, "--cpus {c}: expected 1 to 64"),
            FlagError::Machine(n) => {
                let known: Vec<&str> = ccsim::machine::all().iter().map(|m| m.name).collect();
                write!(f, "--machine {n}: expected one of {}", known.join(", "))
            }
            FlagError::LineBytes(v) => write!(f, "--line-bytes {v}: expected 64 or 128"),
            FlagError::Unknown(flag) => write!(f, "unknown flag {flag}"),
        }
    }
}

impl Opts {
    pub fn from_env() -> Result<Opts, FlagError> {
        let mut o = Opts {
            list: false,
            locks: None,
            workloads: None,
            cpus: LADDER.to_vec(),
            machines: vec![Machine::named("x86").expect("the default machine")],
        };
        let mut spread = false;
        let mut line_bytes = None;
        let mut args = std::env::args().skip(1);
        let list = |v: Option<String>, flag: &'static str| {
            v.map(|v| v.split(',').map(str::to_string).collect::<Vec<_>>())
                .ok_or(FlagError::NoValue(flag))
        };
        while let Some(a) = args.next() {
            match a.as_str() {
                "--list" => o.list = true,
                "--lock" => o.locks = Some(list(args.next(), "--lock")?),
                "--workload" => o.workloads = Some(list(args.next(), "--workload")?),
                "--cpus" => {
                    o.cpus = list(args.next(), "--cpus")?
                        .into_iter()
                        .map(|c| match c.parse::<usize>() {
                            Ok(n @ 1..=64) => Ok(n),
                            _ => Err(FlagError::Cpus(c)),
                        })
                        .collect::<Result<_, _>>()?
                }
                "--machine" => {
                    let names = list(args.next(), "--machine")?;
                    o.machines = if names == ["all"] {
                        ccsim::machine::all()
                    } else {
                        names
                            .into_iter()
                            .map(|n| Machine::named(&n).ok_or(FlagError::Machine(n)))
                            .collect::<Result<_, _>>()?
                    };
                }
                "--spread" => spread = true,
                "--line-bytes" => match args.next().ok_or(FlagError::NoValue("--line-bytes"))? {
                    v if v == "64" => line_bytes = Some(64),
                    v if v == "128" => line_bytes = Some(128),
                    v => return Err(FlagError::LineBytes(v)),
                },
                _ => return Err(FlagError::Unknown(a)),
            }
        }
        for m in &mut o.machines {
            if spread {
                *m = m.clone().spread();
            }
            if let Some(b) = line_bytes {
                *m = m.clone().with_line_bytes(b);
            }
        }
        Ok(o)
    }

    pub fn wants_lock(&self, lock: &str) -> bool {
        self.locks
            .as_ref()
            .is_none_or(|l| l.iter().any(|x| x == lock))
    }

    pub fn wants_workload(&self, w: &str) -> bool {
        self.workloads
            .as_ref()
            .is_none_or(|l| l.iter().any(|x| x == w))
    }

    /// Whether `--workload` names `w` (a validation workload runs only then).
    pub fn names_workload(&self, w: &str) -> bool {
        self.workloads
            .as_ref()
            .is_some_and(|l| l.iter().any(|x| x == w))
    }
}

/// What one vCPU did to the lock, as the workloads report it: a per-run
/// tally in std's memory (bookkeeping, not simulated).
#[derive(Default)]
pub struct Tally {
    inner: Mutex<Inner>,
}

#[derive(Default)]
struct Inner {
    /// Acquisitions per vCPU, by role (0: the only one, or reader; 1: writer).
    acquisitions: Vec<[u64; 2]>,
    /// Cycles inside lock() and unlock(), by role.
    cycles: [u64; 2],
    /// When the last unlock() was called.
    last_release: Option<u64>,
    handovers: u64,
    handover_cycles: u64,
    /// Who is inside: writers (or mutex holders) and readers.
    writers_in: u32,
    readers_in: u32,
    violation: Option<String>,
}

impl Tally {
    pub fn new(cpus: usize) -> Tally {
        Tally {
            inner: Mutex::new(Inner {
                acquisitions: vec![[0; 2]; cpus],
                ..Inner::default()
            }),
        }
    }

    fn with<R>(&self, f: impl FnOnce(&mut Inner) -> R) -> R {
        f(&mut self.inner.lock().unwrap_or_else(|e| e.into_inner()))
    }

    /// `cpu` called lock() at `called` and got the lock at `now`,
    /// exclusively (`write`) or shared.
    pub fn acquired(&self, cpu: usize, write: bool, called: u64, now: u64) {
        self.with(|t| {
            if t.writers_in > 0 || (write && t.readers_in > 0) {
                t.violation.get_or_insert(format!(
                    "cpu {cpu} got the lock ({}) with {} writers and {} readers inside",
                    if write { "exclusive" } else { "shared" },
                    t.writers_in,
                    t.readers_in
                ));
            }
            if write {
                t.writers_in += 1;
            } else {
                t.readers_in += 1;
            }
            t.acquisitions[cpu][usize::from(write)] += 1;
            t.cycles[usize::from(write)] += now - called;
            if let Some(rel) = t.last_release.filter(|&rel| called <= rel) {
                t.handovers += 1;
                t.handover_cycles += now.saturating_sub(rel);
            }
        })
    }

    /// `cpu` is about to call unlock() at `now`.
    pub fn releasing(&self, write: bool, now: u64) {
        self.with(|t| {
            if write {
                t.writers_in -= 1;
            } else {
                t.readers_in -= 1;
            }
            t.last_release = Some(now);
        })
    }

    /// unlock() took `cycles`.
    pub fn released(&self, write: bool, cycles: u64) {
        self.with(|t| t.cycles[usize::from(write)] += cycles);
    }
}

/// `n/d` to `places` decimals, from integers (the same on every host).
fn ratio(n: u64, d: u64, places: u32) -> J {
    if d == 0 {
        return J::Null;
    }
    let scale = 10u128.pow(places);
    let v = (u128::from(n) * scale + u128::from(d) / 2) / u128::from(d);
    J::Num(v as f64 / scale as f64)
}

/// The numbers of one run. For a mutex (every acquisition "write"):
/// `acquisitions` (in the run's fixed virtual time), `cycles_per_acq`
/// (inside lock() and unlock(), seed 001's measure), `rmr_per_acq`
/// (coherence misses of all vCPUs per acquisition), `handover_cycles`
/// (from an unlock() call to a waiter's return from lock()), `acq_min`,
/// `acq_max` (per vCPU: fairness). With readers, per side: `read_*` and
/// `write_*` acquisitions (min, avg, max per vCPU of the side) and cycles.
fn metrics(report: &Report, tally: &Inner, readers: bool) -> Vec<(String, J)> {
    let per = |role: usize| -> Vec<u64> {
        tally
            .acquisitions
            .iter()
            .filter(|a| !readers || a[1 - role] == 0 || a[role] > 0)
            .map(|a| a[role])
            .collect()
    };
    let total: u64 = tally.acquisitions.iter().map(|a| a[0] + a[1]).sum();
    let mut m: Vec<(String, J)> = vec![
        ("acquisitions".into(), J::Int(total as i64)),
        ("rmr_per_acq".into(), ratio(report.misses(), total, 3)),
        (
            "handover_cycles".into(),
            ratio(tally.handover_cycles, tally.handovers, 1),
        ),
    ];
    if !readers {
        let a = per(1);
        m.push(("cycles_per_acq".into(), ratio(tally.cycles[1], total, 1)));
        m.push((
            "acq_min".into(),
            J::Int(*a.iter().min().unwrap_or(&0) as i64),
        ));
        m.push((
            "acq_max".into(),
            J::Int(*a.iter().max().unwrap_or(&0) as i64),
        ));
        return m;
    }
    for (role, side) in [(0, "read"), (1, "write")] {
        let a: Vec<u64> = tally
            .acquisitions
            .iter()
            .zip(0..)
            .filter(|(_, cpu)| (cpu % 2 == 1) == (role == 1) || !readers)
            .map(|(a, _)| a[role])
            .collect();
        let n: u64 = a.iter().sum();
        if a.is_empty() {
            continue;
        }
        m.push((
            format!("{side}_cycles_per_acq"),
            ratio(tally.cycles[role], n, 1),
        ));
        m.push((
            format!("{side}_acq_min"),
            J::Int(*a.iter().min().unwrap() as i64),
        ));
        m.push((format!("{side}_acq_avg"), ratio(n, a.len() as u64, 1)));
        m.push((
            format!("{side}_acq_max"),
            J::Int(*a.iter().max().unwrap() as i64),
        ));
    }
    m
}

/// The lines with the most misses, same labels merged (a queue node per
/// vCPU is one entry), at most four.
fn lines(report: &Report, total: u64) -> J {
    // (label, misses, (site, misses) by site)
    type Merged = (String, u64, Vec<(String, u64)>);
    let mut merged: Vec<Merged> = Vec::new();
    for l in &report.lines {
        let sites = l.top_sites();
        match merged.iter_mut().find(|m| m.0 == l.label) {
            Some(m) => {
                m.1 += l.misses;
                for (s, n) in sites {
                    match m.2.iter_mut().find(|x| x.0 == s) {
                        Some(x) => x.1 += n,
                        None => m.2.push((s, n)),
                    }
                }
            }
            None => merged.push((l.label.clone(), l.misses, sites)),
        }
    }
    // Most misses first; ties in first-touch order (the sort is stable).
    merged.sort_by_key(|m| std::cmp::Reverse(m.1));
    J::Arr(
        merged
            .into_iter()
            .filter(|m| m.1 > 0)
            .take(4)
            .map(|(label, misses, mut sites)| {
                sites.sort_by_key(|s| std::cmp::Reverse(s.1));
                obj([
                    ("line", label.into()),
                    ("misses_per_acq", ratio(misses, total, 3)),
                    (
                        "sites",
                        J::Arr(
                            sites
                                .into_iter()
                                .take(3)
                                .map(|(s, n)| J::Arr(vec![s.into(), ratio(n, total, 3)]))
                                .collect(),
                        ),
                    ),
                ])
            })
            .collect(),
    )
}

/// One run to print.
pub struct Run<'a> {
    pub suite: &'a str,
    pub lock: &'a str,
    pub workload: &'a str,
    pub machine: &'a Machine,
    pub cpus: usize,
    /// Whether the workload has readers (per-side metrics).
    pub readers: bool,
}

impl Run<'_> {
    /// Runs `body(cpu, &tally)` on the machine and prints its record;
    /// whether it succeeded.
    pub fn go(
        &self,
        regions: &[(usize, usize, String)],
        body: impl Fn(usize, &Tally) + Sync,
    ) -> bool {
        let tally = Tally::new(self.cpus);
        let start = Instant::now();
        let result = simulate(self.machine, self.cpus, regions, |cpu| body(cpu, &tally));
        let secs = (start.elapsed().as_secs_f64() * 1000.0).round() / 1000.0;
        let mut inner = tally.inner.into_inner().unwrap_or_else(|e| e.into_inner());
        let result = match (result, inner.violation.take()) {
            (Ok(_), Some(v)) => Err(RunError::Exclusion(v)),
            (Ok(r), None) => Ok(r),
            (Err(e), _) => Err(RunError::Sim(e)),
        };
        let mut rec = obj([
            ("type", "contention".into()),
            ("suite", self.suite.into()),
            ("lock", self.lock.into()),
            ("workload", self.workload.into()),
            ("machine", self.machine.name.into()),
            ("cpus", self.cpus.into()),
        ]);
        if self.machine.placement == ccsim::machine::Placement::Spread {
            rec.set("placement", "spread");
        }
        if self.machine.line_bytes != 64 {
            rec.set("line_bytes", self.machine.line_bytes);
        }
        let ok = result.is_ok();
        match result {
            Ok(report) => {
                let total: u64 = inner.acquisitions.iter().map(|a| a[0] + a[1]).sum();
                rec.set("metrics", J::Obj(metrics(&report, &inner, self.readers)));
                rec.set("lines", lines(&report, total));
            }
            Err(e) => {
                rec.set("type", "contention_error");
                rec.set("error", e.to_string());
            }
        }
        rec.set("secs", secs);
        println!("{rec}");
        ok
    }
}

/// Why a run has no numbers: its record's `error`.
enum RunError {
    /// Two holders inside at once (what the workload saw).
    Exclusion(String),
    /// The machine stopped it: a deadlock, a vCPU's panic, a bad vCPU count.
    Sim(SimError),
}

impl std::fmt::Display for RunError {
    fn fmt(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        match self {
            RunError::Exclusion(v) => write!(f, "exclusion broken: {v}"),
            RunError::Sim(e) => write!(f, "{e}"),
        }
    }
}

/// Prints that `lock` of `suite` is out of the model's reach.
pub fn uncovered(suite: &str, lock: &str, why: &str) {
    println!(
        "{}",
        obj([
            ("type", "uncovered".into()),
            ("suite", suite.into()),
            ("lock", lock.into()),
            ("why", why.into()),
        ])
    );
}

/// The virtual time a run lasts: long enough for every vCPU to take the
/// lock several times at 64 (a ticket hand-over then costs thousands of
/// cycles), short enough that every lock's ladder runs in seconds.
pub fn window(cpus: usize) -> u64 {
    200_000 + 40_000 * cpus as u64
}

/// Exit status of a runner: 0 all ran, 1 one failed.
pub fn exit(all_ok: bool) -> ExitCode {
    if all_ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// Exit status 2 with the flag error.
pub fn bad_flags(why: &FlagError) -> ExitCode {
    eprintln!("error: {why}");
    ExitCode::from(2)
}

/// Every heap allocation of a model binary on 128-byte lines of its own.
/// Where the system allocator puts two small objects (two threads'
/// parkers in rwsem) depends on which arena each thread got and what was
/// freed before, so whether they shared a line would vary from run to
/// run; the model's numbers must not. False sharing between separate heap
/// objects is therefore not modelled (a lock's own struct is laid out as
/// the compiler lays it out).
struct LineAligned;

const LINE: usize = 128;

fn on_lines(layout: std::alloc::Layout) -> std::alloc::Layout {
    let size = layout.size().div_ceil(LINE).max(1) * LINE;
    std::alloc::Layout::from_size_align(size, layout.align().max(LINE))
        .expect("a line-aligned layout of a valid one")
}

// SAFETY: every call is the system allocator's with the same adjusted
// layout for an allocation and its release.
unsafe impl std::alloc::GlobalAlloc for LineAligned {
    unsafe fn alloc(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: a non-zero size (at least one line), as System needs.
        unsafe { std::alloc::System.alloc(on_lines(layout)) }
    }

    unsafe fn alloc_zeroed(&self, layout: std::alloc::Layout) -> *mut u8 {
        // SAFETY: as in alloc.
        unsafe { std::alloc::System.alloc_zeroed(on_lines(layout)) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: std::alloc::Layout) {
        // SAFETY: `ptr` came from alloc with this layout, adjusted alike.
        unsafe { std::alloc::System.dealloc(ptr, on_lines(layout)) }
    }
}

#[global_allocator]
static ALLOCATOR: LineAligned = LineAligned;
