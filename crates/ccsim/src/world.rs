//! The simulated machine while it runs: one OS thread per virtual CPU and
//! a baton that only one of them holds at a time.
//!
//! Each vCPU has a clock in cycles. Code between two shared accesses is
//! the vCPU's own (it costs only what [`work`](crate::work) and the spin
//! hint say), so a vCPU runs on until its next shared access; that access
//! happens only once every other ready vCPU's clock has passed it (the
//! smallest clock goes first, ties to the lower CPU id), so accesses reach
//! memory in virtual-time order. Nothing here reads the host's clock,
//! thread ids or addresses' values (lines are numbered in the order they
//! are first touched): given the same program, every run and every host
//! take the same steps.
//!
//! A spin-wait iteration that only re-read lines still valid in its cache
//! would re-read the same values until another core writes one of them,
//! so at the spin hint such a vCPU sleeps until that write (it is woken at
//! the write's time, and its next read is the miss that write caused): its
//! spinning costs no host time. A bounded loop that must give up on its
//! own should not take the spin hint from the sync layer (the locks' do
//! not: their bounded polls use `core::hint::spin_loop`).

use crate::coherence::{Kind, Line};
use crate::machine::{Machine, Rmw};
use crate::report::{CpuStats, LineStats, Report};
use std::collections::{BTreeMap, HashMap, VecDeque};
use std::panic::Location;
use std::sync::{Mutex, MutexGuard};
use std::thread::Thread;

/// Why a simulation stopped without finishing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SimError {
    /// Every vCPU left waits for something no one will do.
    Deadlock(String),
    /// A vCPU panicked.
    Panicked(String),
    /// More vCPUs than the machine has cores, or none.
    Cpus(usize),
}

impl std::fmt::Display for SimError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SimError::Deadlock(why) => write!(f, "deadlock: {why}"),
            SimError::Panicked(why) => write!(f, "a vCPU panicked: {why}"),
            SimError::Cpus(n) => write!(f, "{n} vCPUs: expected 1 to 64"),
        }
    }
}

impl std::error::Error for SimError {}

#[derive(Debug, Clone, PartialEq)]
enum State {
    Ready,
    /// Spinning on these lines (indices) until one is written.
    Watching(Vec<usize>),
    /// Asleep in `FUTEX_WAIT` on this address.
    Futex(usize),
    Done,
}

struct Cpu {
    clock: u64,
    state: State,
    thread: Option<Thread>,
    /// Lines read as hits since the last spin hint, and whether anything
    /// else happened (a miss, a write) since.
    window: Vec<usize>,
    window_clean: bool,
    stats: CpuStats,
}

struct LineRec {
    line: Line,
    /// When the transaction in flight on it ends: transactions on one
    /// line are served one at a time.
    busy_until: u64,
    /// Bumped by every exclusive access (breaks an LL/SC reservation).
    version: u64,
    label: String,
    stats: LineStats,
}

/// The baton holder that means "stop": the simulation failed.
const ABORT: usize = usize::MAX;

struct World {
    machine: Machine,
    nodes: Vec<u32>,
    cpus: Vec<Cpu>,
    running: usize,
    started: bool,
    line_of: HashMap<u64, usize>,
    lines: Vec<LineRec>,
    futexes: HashMap<usize, VecDeque<usize>>,
    regions: Vec<(usize, usize, String)>,
    failed: Option<SimError>,
}

static WORLD: Mutex<Option<World>> = Mutex::new(None);
/// One simulation at a time in a process.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

thread_local! {
    static ME: std::cell::Cell<Option<usize>> = const { std::cell::Cell::new(None) };
}

/// The payload a vCPU unwinds with when the simulation is aborted.
struct Aborted;

fn world() -> MutexGuard<'static, Option<World>> {
    WORLD.lock().unwrap_or_else(|e| e.into_inner())
}

/// The calling thread's vCPU, if it is one.
pub(crate) fn me() -> Option<usize> {
    ME.with(|m| m.get())
}

impl World {
    /// The ready vCPU with the smallest (clock, id).
    fn next(&self) -> Option<usize> {
        (0..self.cpus.len())
            .filter(|&i| self.cpus[i].state == State::Ready)
            .min_by_key(|&i| (self.cpus[i].clock, i))
    }

    fn give(&mut self, to: usize) {
        self.running = to;
        if let Some(t) = &self.cpus[to].thread {
            t.unpark();
        }
    }

    /// Hands the baton to whoever is next; if no one can go, the
    /// simulation is over (all done) or deadlocked.
    fn pass(&mut self) {
        match self.next() {
            Some(next) => self.give(next),
            None if self.cpus.iter().all(|c| c.state == State::Done) => {}
            None => {
                let why = (self.cpus.iter().enumerate())
                    .filter(|(_, c)| c.state != State::Done)
                    .map(|(i, c)| match &c.state {
                        State::Watching(lines) => format!(
                            "cpu {i} spins on {}",
                            lines
                                .iter()
                                .map(|&l| self.lines[l].label.clone())
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                        State::Futex(_) => format!("cpu {i} sleeps on a futex no one wakes"),
                        _ => format!("cpu {i}"),
                    })
                    .collect::<Vec<_>>()
                    .join("; ");
                self.abort(SimError::Deadlock(why));
            }
        }
    }

    fn abort(&mut self, why: SimError) {
        if self.failed.is_none() {
            self.failed = Some(why);
        }
        self.running = ABORT;
        for c in &self.cpus {
            if let Some(t) = &c.thread {
                t.unpark();
            }
        }
    }

    fn line(&mut self, addr: usize, site: &'static Location<'static>, me: usize) -> usize {
        let key = addr as u64 / self.machine.line_bytes;
        if let Some(&i) = self.line_of.get(&key) {
            return i;
        }
        let i = self.lines.len();
        let label = self
            .regions
            .iter()
            .find(|(start, len, _)| addr >= *start && addr < start + len)
            .map(|(start, _, name)| {
                let line_start = (key * self.machine.line_bytes) as usize;
                let first = line_start.max(*start) - start;
                if first == 0 {
                    name.clone()
                } else {
                    format!("{name}+{first}")
                }
            })
            .unwrap_or_else(|| format!("line first touched at {}", crate::report::site(site)));
        self.line_of.insert(key, i);
        self.lines.push(LineRec {
            line: Line::new(self.nodes[me]),
            busy_until: 0,
            version: 0,
            label,
            stats: LineStats::default(),
        });
        i
    }
}

/// Waits (parked) until `me` holds the baton again; unwinds if aborted.
fn wait_for_baton<'a>(
    mut w: MutexGuard<'a, Option<World>>,
    me: usize,
) -> MutexGuard<'a, Option<World>> {
    loop {
        let state = w.as_ref().expect("a simulation is running");
        if state.running == ABORT {
            drop(w);
            std::panic::resume_unwind(Box::new(Aborted));
        }
        if state.running == me && state.started {
            return w;
        }
        drop(w);
        std::thread::park();
        w = world();
    }
}

/// Makes `me` the vCPU with the smallest clock before it touches memory.
fn turn<'a>(mut w: MutexGuard<'a, Option<World>>, me: usize) -> MutexGuard<'a, Option<World>> {
    let world = w.as_mut().expect("a simulation is running");
    let next = world.next().expect("the running vCPU is ready");
    if next == me {
        return w;
    }
    world.give(next);
    wait_for_baton(w, me)
}

/// Blocks `me` in `state` and waits until someone makes it ready and it
/// is its turn.
fn block<'a>(
    mut w: MutexGuard<'a, Option<World>>,
    me: usize,
    state: State,
) -> MutexGuard<'a, Option<World>> {
    let world = w.as_mut().expect("a simulation is running");
    world.cpus[me].state = state;
    world.pass();
    wait_for_baton(w, me)
}

/// A shared access of `kind` at `addr` by the calling vCPU: priced, then
/// `op` done on memory. `op` says whether it wrote (a failed
/// compare-exchange does not). Outside a simulation, `op` alone.
pub(crate) fn access<R>(
    addr: usize,
    kind: Kind,
    site: &'static Location<'static>,
    op: impl FnOnce() -> (R, bool),
) -> R {
    let Some(me) = me() else {
        return op().0;
    };
    let mut w = turn(world(), me);
    let llsc = kind == Kind::Rmw && w.as_ref().expect("running").machine.rmw == Rmw::LlSc;
    if !llsc {
        let i = w.as_mut().expect("running").line(addr, site, me);
        let (mut w, requested) = request(w, me, i, kind);
        let world = w.as_mut().expect("running");
        let (r, wrote) = op();
        price(world, me, i, kind, wrote, requested, site);
        return r;
    }
    // Load-linked, then (after whoever comes between) store-conditional.
    // The store-conditional's upgrade is priced whole when it writes: its
    // request is not split from its effect (the write is done by then).
    loop {
        let i = w.as_mut().expect("running").line(addr, site, me);
        let (w2, requested) = request(w, me, i, Kind::Load);
        w = w2;
        let world = w.as_mut().expect("running");
        price(world, me, i, Kind::Load, false, requested, site);
        let version = world.lines[i].version;
        w = turn(w, me);
        let world = w.as_mut().expect("running");
        if world.lines[i].version != version || !world.lines[i].line.valid_in(me) {
            // The reservation is lost: the store-conditional fails.
            world.cpus[me].stats.sc_failures += 1;
            world.lines[i].stats.sc_failures += 1;
            continue;
        }
        let (r, wrote) = op();
        if wrote {
            price(world, me, i, Kind::Store, true, false, site);
        }
        return r;
    }
}

/// The first half of a miss: the request travels to the line's holder
/// (half the transaction's cost, after any transaction in flight on the
/// line), and only when it arrives does the line change hands. Meanwhile
/// the holder goes on using its copy: that is the window in which a CPU
/// that just released a lock takes it again before a waiter's request
/// arrives. Whether a request was made (the access is then priced from
/// its arrival).
fn request(
    mut w: MutexGuard<'_, Option<World>>,
    me: usize,
    i: usize,
    kind: Kind,
) -> (MutexGuard<'_, Option<World>>, bool) {
    let world = w.as_mut().expect("running");
    let mut probe = world.lines[i].line.clone();
    let p = probe.access(&world.machine, &world.nodes, me, kind);
    if !p.miss {
        return (w, false);
    }
    let busy = world.lines[i].busy_until;
    let cpu = &mut world.cpus[me];
    let start = cpu.clock.max(busy);
    cpu.stats.queued_cycles += start - cpu.clock;
    cpu.clock = start + u64::from(p.cycles / 2);
    (turn(w, me), true)
}

/// Prices an access of `me` to line `i` and does its side effects: the
/// clock, the line's queue, invalidations, the spinners it wakes.
#[allow(clippy::too_many_arguments)]
fn price(
    world: &mut World,
    me: usize,
    i: usize,
    kind: Kind,
    wrote: bool,
    requested: bool,
    site: &'static Location<'static>,
) {
    let World {
        machine,
        nodes,
        cpus,
        lines,
        ..
    } = world;
    let rec = &mut lines[i];
    let p = rec.line.access(machine, nodes, me, kind);
    let cpu = &mut cpus[me];
    let start = if p.miss {
        cpu.clock.max(rec.busy_until)
    } else {
        cpu.clock
    };
    // A requested miss pays the rest: the response.
    let cost = if requested && p.miss {
        p.cycles - p.cycles / 2
    } else {
        p.cycles
    };
    let end = start + u64::from(cost);
    cpu.stats.accesses += 1;
    if p.miss {
        rec.busy_until = end;
        cpu.stats.misses += 1;
        cpu.stats.queued_cycles += start - cpu.clock;
        rec.stats.misses += 1;
        *rec.stats.sites.entry(site).or_default() += 1;
        cpu.window_clean = false;
    } else if kind == Kind::Load {
        cpu.window.push(i);
    } else {
        cpu.window_clean = false;
    }
    cpu.clock = end;
    let exclusive = kind != Kind::Load;
    if exclusive {
        rec.version += 1;
        if wrote {
            rec.stats.writes += 1;
        }
        rec.stats.invalidations += u64::from(p.invalidated.count_ones());
        // Spinners on this line see the write: woken at its time.
        for (j, c) in cpus.iter_mut().enumerate() {
            if j != me {
                if let State::Watching(watched) = &c.state {
                    if watched.contains(&i) {
                        c.stats.spin_cycles += start.saturating_sub(c.clock);
                        c.clock = c.clock.max(start);
                        c.state = State::Ready;
                    }
                }
            }
        }
    }
}

/// The spin-wait hint: costs the machine's pause, and sleeps through
/// iterations that would only re-read the same valid lines.
pub(crate) fn spin_loop() {
    let Some(me) = me() else {
        core::hint::spin_loop();
        return;
    };
    let mut w = world();
    let world = w.as_mut().expect("running");
    let pause = u64::from(world.machine.costs.pause);
    let cpu = &mut world.cpus[me];
    cpu.clock += pause;
    cpu.stats.pauses += 1;
    let mut watch = std::mem::take(&mut cpu.window);
    let clean = std::mem::replace(&mut cpu.window_clean, true);
    watch.sort_unstable();
    watch.dedup();
    let still_valid = watch.iter().all(|&l| world.lines[l].line.valid_in(me));
    if clean && !watch.is_empty() && still_valid {
        world.cpus[me].stats.spin_sleeps += 1;
        drop(block(w, me, State::Watching(watch)));
    }
}

/// Advances the calling vCPU's clock by `cycles` of its own work.
pub(crate) fn advance(cycles: u64, what: fn(&mut CpuStats) -> &mut u64) {
    let Some(me) = me() else { return };
    let mut w = world();
    let cpu = &mut w.as_mut().expect("running").cpus[me];
    cpu.clock += cycles;
    *what(&mut cpu.stats) += 1;
}

/// The calling vCPU's clock (0 outside a simulation).
pub(crate) fn clock() -> u64 {
    let Some(me) = me() else { return 0 };
    let w = world();
    w.as_ref().expect("running").cpus[me].clock
}

/// The machine being simulated (`None` outside a simulation).
pub(crate) fn with_machine<R>(f: impl FnOnce(&Machine) -> R) -> Option<R> {
    me()?;
    let w = world();
    w.as_ref().map(|world| f(&world.machine))
}

/// `FUTEX_WAIT`: sleeps if the word at `addr` still reads `expected`
/// (`read` reads it, priced as a load).
pub(crate) fn futex_wait(
    addr: usize,
    read: impl FnOnce() -> bool,
    site: &'static Location<'static>,
) {
    let Some(me) = me() else { return };
    let still = access(addr, Kind::Load, site, || (read(), false));
    if !still {
        return;
    }
    let mut w = world();
    let world = w.as_mut().expect("running");
    world.cpus[me].clock += u64::from(world.machine.costs.futex_syscall);
    world.cpus[me].stats.futex_waits += 1;
    world.futexes.entry(addr).or_default().push_back(me);
    drop(block(w, me, State::Futex(addr)));
}

/// `FUTEX_WAKE` of at most one sleeper on `addr`, in the order they slept.
pub(crate) fn futex_wake(addr: usize) {
    let Some(me) = me() else { return };
    let mut w = turn(world(), me);
    let world = w.as_mut().expect("running");
    let costs = world.machine.costs.clone();
    world.cpus[me].clock += u64::from(costs.futex_syscall);
    world.cpus[me].stats.futex_wakes += 1;
    let now = world.cpus[me].clock;
    if let Some(sleeper) = world.futexes.get_mut(&addr).and_then(VecDeque::pop_front) {
        let c = &mut world.cpus[sleeper];
        c.clock = c.clock.max(now + u64::from(costs.futex_wakeup));
        c.state = State::Ready;
    }
}

/// Names the memory `[start, start + len)` for the lines' labels.
pub(crate) fn name(start: usize, len: usize, label: String) {
    if let Some(world) = world().as_mut() {
        world.regions.push((start, len, label));
    }
}

/// Runs `body(cpu)` on `n` vCPUs of `machine`; regions named with
/// [`crate::name`] before label the lines they hold.
pub fn simulate<F>(
    machine: &Machine,
    n: usize,
    regions: &[(usize, usize, String)],
    body: F,
) -> Result<Report, SimError>
where
    F: Fn(usize) + Sync,
{
    if n == 0 || n > 64 || n > machine.cores() as usize {
        return Err(SimError::Cpus(n));
    }
    let _one = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let nodes: Vec<u32> = (0..n).map(|c| machine.node_of(c, n)).collect();
    *world() = Some(World {
        machine: machine.clone(),
        nodes,
        cpus: (0..n)
            .map(|_| Cpu {
                clock: 0,
                state: State::Ready,
                thread: None,
                window: Vec::new(),
                window_clean: true,
                stats: CpuStats::default(),
            })
            .collect(),
        running: 0,
        started: false,
        line_of: HashMap::new(),
        lines: Vec::new(),
        futexes: HashMap::new(),
        regions: regions.to_vec(),
        failed: None,
    });
    let body = &body;
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|cpu| {
                std::thread::Builder::new()
                    .name(format!("vcpu{cpu}"))
                    .spawn_scoped(s, move || run_cpu(cpu, body))
                    .expect("spawning a vCPU thread")
            })
            .collect();
        {
            let mut w = world();
            let world = w.as_mut().expect("running");
            for (cpu, h) in handles.iter().enumerate() {
                world.cpus[cpu].thread = Some(h.thread().clone());
            }
            world.started = true;
            world.give(0);
        }
        for h in handles {
            let _ = h.join();
        }
    });
    let world = world().take().expect("the simulation's world");
    if let Some(e) = world.failed {
        return Err(e);
    }
    let mut lines: Vec<LineStats> = Vec::with_capacity(world.lines.len());
    for rec in world.lines {
        let mut s = rec.stats;
        s.label = rec.label;
        lines.push(s);
    }
    Ok(Report {
        machine: machine.name.to_string(),
        cpus: world
            .cpus
            .iter()
            .map(|c| (c.clock, c.stats.clone()))
            .collect(),
        lines,
    })
}

/// Whether some vCPU is still running (not done, not aborted).
fn still_running(w: &World) -> bool {
    w.running != ABORT && w.cpus.iter().any(|c| c.state != State::Done)
}

fn run_cpu<F: Fn(usize) + Sync>(cpu: usize, body: &F) {
    ME.with(|m| m.set(Some(cpu)));
    let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        drop(wait_for_baton(world(), cpu));
        body(cpu);
    }));
    let mut w = world();
    let state = w.as_mut().expect("running");
    match outcome {
        Ok(()) => {
            state.cpus[cpu].state = State::Done;
            if state.running != ABORT {
                state.pass();
            }
        }
        Err(payload) if payload.is::<Aborted>() => {}
        Err(payload) => {
            let why = payload
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| payload.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "a panic".into());
            state.abort(SimError::Panicked(format!("cpu {cpu}: {why}")));
        }
    }
    if !still_running(state) {
        for c in &state.cpus {
            if let Some(t) = &c.thread {
                t.unpark();
            }
        }
    }
    // The thread stays until every vCPU is done: its exit runs thread-local
    // destructors (a lock's per-thread slot freed), which must not change
    // what a vCPU still running finds.
    while w.as_ref().is_some_and(still_running) {
        drop(w);
        std::thread::park();
        w = world();
    }
    drop(w);
    ME.with(|m| m.set(None));
}

/// Sites by count, for a line's report.
pub(crate) type Sites = BTreeMap<&'static Location<'static>, u64>;
