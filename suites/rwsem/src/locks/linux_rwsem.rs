//! A reader-writer semaphore shaped like Linux's `kernel/locking/rwsem.c`.
//!
//! Provenance: the count-word protocol, reader stealing, writer optimistic
//! spinning and hand-off of `kernel/locking/rwsem.c` as of v6.6 (the design
//! since v5.3, without reader optimistic spinning since v5.11). What is
//! changed for user space is listed below.
//!
//! Why it is shaped so: seed 002 measures the kernel rwsem's trade-off
//! between readers and writers, and that trade-off comes from four design
//! decisions this file keeps:
//!
//! - One count word holds everything the fast paths need: the writer-locked
//!   bit, the waiters bit, the handoff bit and the reader count (in units of
//!   `READER_BIAS`, above the flag byte). A reader locks with one
//!   `fetch_add`, a writer with one `cmpxchg(0 -> WRITER_LOCKED)`; unlocks are
//!   one `fetch_sub` each. The word is a `usize`: 32-bit targets such as mips
//!   have no 64-bit atomics, and a 24-bit reader count is plenty.
//! - A reader's fast path fails as soon as anyone waits (`FLAG_WAITERS`), so
//!   under mixed load readers go to the slow path, where they may still
//!   "steal" the lock when no writer holds it. A writer that misses the fast
//!   path first spins optimistically, stealing the lock from queued waiters
//!   when it comes free. Both are why the kernel prefers writers in seed 002.
//! - Waiters queue in FIFO order and sleep. The kernel sleeps in the
//!   scheduler; here each thread has a parker word and sleeps in
//!   `FUTEX_WAIT_PRIVATE`. The queue is protected by `wait_lock` (a std
//!   mutex: a user-space spinlock cannot disable preemption the way the
//!   kernel's raw spinlock does). Queued readers are granted the lock by the
//!   waker (their bias is added for them), all readers of the queue at once,
//!   as the kernel's phase-fair adaptation does; a woken writer retries.
//! - Neither side starves: a waiter at the head that has waited longer than
//!   `WAIT_TIMEOUT` sets `FLAG_HANDOFF`, which stops reader fast paths, reader
//!   stealing and writer spinning, so the lock must next go to that waiter.
//!
//! What differs from the kernel, because user space cannot see it: the
//! kernel spins while the owner task is running on a CPU; here a writer
//! spins a bounded number of polls (`SPIN_LIMIT`) and then sleeps. There is
//! no `owner` field, so the "lock is likely reader-owned" test of the reader
//! steal uses the reader count alone. Readers do not spin (the kernel dropped
//! reader optimistic spinning in v5.11).
//!
//! Wake-ups are never lost: a waker marks the parker under `wait_lock` and
//! calls `FUTEX_WAKE` only if the waiter announced it was going to sleep,
//! and every change of the count that could let the head waiter in (the last
//! reader leaving, a writer leaving while waiters exist, a reader backing out
//! of its fast-path bias) is followed by a wake-up pass under `wait_lock`.
//!
//! Under `--cfg loom` (the model check, `model/linux_rwsem.rs`) the count
//! word protocol is this file's, with loom's atomics, and what user space
//! gets from the kernel is modelled (see `crate::sync`): `wait_lock` is
//! loom's `Mutex`, the futex sleep and wake are loom's park and unpark
//! behind a sleepers' list, `Instant` is a counter that every read moves
//! on by the hand-off timeout (so the hand-off path is reached), the
//! thread-local parker is loom's, and a writer's optimistic spin is
//! `SPIN_LIMIT` = 2 polls. What is checked: the fast and slow paths of
//! both sides, reader stealing, queueing, the wake-up passes and grants,
//! the hand-off bit, and that no wake-up is lost (a thread parked for ever
//! is a deadlock to loom).
//!
//! Lock events (`crate::events`), where Linux counts them: a reader's
//! steal (`ReaderSteal`), each `FUTEX_WAIT` per side (`ReaderSleep`,
//! `WriterSleep`), and each hand-off bit set for a queued reader by its
//! waker or by the queued writer itself (`ReaderHandoff`,
//! `WriterHandoff`), in the counters of the thread that took the path. The
//! lock's own counters of slow paths, sleeps and hand-offs (atomics of the
//! lock, from before there were events) count beside them: a round's
//! events must add up to them (`check_events`).

use super::{RawRwLock, Slowpaths};
use crate::events::{self, Event, Events};
use crate::sync::atomic::AtomicU32;
use crate::sync::atomic::AtomicUsize;
use crate::sync::atomic::Ordering::{AcqRel, Acquire, Relaxed, Release};
use crate::sync::time::{Duration, Instant};
use crate::sync::{futex, thread_local, Arc, Mutex, MutexGuard, PoisonError};
use std::collections::VecDeque;

// The count word, laid out as in rwsem.c.
const WRITER_LOCKED: usize = 1 << 0;
const FLAG_WAITERS: usize = 1 << 1;
const FLAG_HANDOFF: usize = 1 << 2;
const READER_SHIFT: u32 = 8;
const READER_BIAS: usize = 1 << READER_SHIFT;
/// The top bit: set only when the reader count overflows into it.
const READ_FAIL: usize = 1 << (usize::BITS - 1);
const READER_MASK: usize = !(READER_BIAS - 1);
const WRITER_MASK: usize = WRITER_LOCKED;
const LOCK_MASK: usize = WRITER_MASK | READER_MASK;
const READ_FAILED_MASK: usize = WRITER_MASK | FLAG_WAITERS | FLAG_HANDOFF | READ_FAIL;

/// How long a waiter at the head of the queue waits before it forces a
/// handoff (the kernel's `RWSEM_WAIT_TIMEOUT`: 4 ms at HZ=1000).
pub const WAIT_TIMEOUT: Duration = Duration::from_millis(4);
/// Polls of the count word a writer makes before it queues and sleeps, and
/// a handoff-holding writer makes before it sleeps again.
#[cfg(not(loom))]
pub const SPIN_LIMIT: u32 = 512;
/// Under loom a spin is a few polls: each is a point where loom switches
/// threads, and what matters is that the spin can win or give up.
#[cfg(loom)]
pub const SPIN_LIMIT: u32 = 2;
/// Readers granted by one wake-up pass (the kernel's `MAX_READERS_WAKEUP`).
const MAX_READERS_WAKEUP: usize = 0x100;

/// Bits of the count word (for the `env` record).
pub const COUNT_WORD_BITS: u32 = usize::BITS;

// Parker states.
/// Waiting, spinning or about to sleep: a waker need not make a syscall.
const PARK_WAITING: u32 = 0;
/// Woken (a writer may now retry) or granted (a reader holds the lock).
const PARK_WOKEN: u32 = 1;
/// Asleep in (or about to enter) `FUTEX_WAIT`: the waker must `FUTEX_WAKE`.
const PARK_SLEEPING: u32 = 2;

/// The futex word a thread sleeps on. Shared through `Arc` so that a waker
/// that still holds it after the waiter left wakes valid memory.
struct Parker {
    state: AtomicU32,
}

thread_local! {
    // A thread waits for at most one lock at a time, so one parker each.
    static PARKER: Arc<Parker> = Arc::new(Parker { state: AtomicU32::new(PARK_WAITING) });
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    Reader,
    Writer,
}

struct Waiter {
    parker: Arc<Parker>,
    kind: Kind,
    /// When this waiter may start asking for a handoff.
    timeout: Instant,
    /// This waiter (at the head) set `FLAG_HANDOFF`.
    handoff_set: bool,
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum WakeType {
    /// Wake the head waiter, reader or writer.
    Any,
    /// Wake readers only, and only if a reader is at the head.
    Readers,
    /// The caller already holds a read lock: grant the queued readers.
    ReadOwned,
}

/// Parkers to `FUTEX_WAKE` once `wait_lock` is released.
#[derive(Default)]
struct Wakes(Vec<Arc<Parker>>);

impl Wakes {
    /// Marks `parker` woken (under `wait_lock`); remembers it if it sleeps.
    fn mark(&mut self, parker: &Arc<Parker>) {
        // Release: pairs with the Acquire load in park(). A reader that sees
        // PARK_WOKEN holds the lock we granted it, so the grant (made after
        // the count was acquired with no writer in it) and with it the last
        // writer's critical section happen before the reader's. No wake-up
        // is lost, by coherence of this one word alone: either the waiter's
        // PARK_SLEEPING comes first and we FUTEX_WAKE (FUTEX_WAIT rechecks
        // the word, so the wake cannot fall before the sleep), or its
        // compare_exchange fails on our PARK_WOKEN.
        if parker.state.swap(PARK_WOKEN, Release) == PARK_SLEEPING {
            self.0.push(Arc::clone(parker));
        }
    }

    fn wake(&mut self) {
        for parker in self.0.drain(..) {
            futex::wake_one(&parker.state);
        }
    }
}

pub struct LinuxRwsem {
    count: AtomicUsize,
    wait_lock: Mutex<VecDeque<Waiter>>,
    reader_slowpath: AtomicUsize,
    writer_slowpath: AtomicUsize,
    sleeps: AtomicUsize,
    handoffs: AtomicUsize,
}

impl LinuxRwsem {
    fn queue(&self) -> MutexGuard<'_, VecDeque<Waiter>> {
        self.wait_lock
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
    }

    /// `FUTEX_WAIT` calls made by waiters so far.
    pub(crate) fn sleeps(&self) -> u64 {
        self.sleeps.load(Relaxed) as u64
    }

    /// Times a waiter set `FLAG_HANDOFF`.
    pub(crate) fn handoffs(&self) -> u64 {
        self.handoffs.load(Relaxed) as u64
    }

    /// Sleeps until a waker marks `parker`, a waiter of `kind`, woken.
    fn park(&self, parker: &Parker, kind: Kind) {
        loop {
            // Acquire: pairs with the Release swap in Wakes::mark(); a
            // granted reader holds the lock from here on. (A woken writer
            // only retries, under wait_lock.)
            match parker.state.load(Acquire) {
                PARK_WOKEN => return,
                PARK_WAITING => {
                    // Announce the sleep; fails if a waker got there first.
                    // Acquire on both outcomes is more than needed: success
                    // reads our own PARK_WAITING, and after a failure the
                    // load above acquires the waker's PARK_WOKEN anyway.
                    let _ = parker.state.compare_exchange(
                        PARK_WAITING,
                        PARK_SLEEPING,
                        Acquire,
                        Acquire,
                    );
                }
                _ => {
                    self.sleeps.fetch_add(1, Relaxed);
                    events::count(match kind {
                        Kind::Reader => Event::ReaderSleep,
                        Kind::Writer => Event::WriterSleep,
                    });
                    futex::wait(&parker.state, PARK_SLEEPING);
                }
            }
        }
    }

    /// `rwsem_mark_wake`: hands the lock to queued readers or wakes the
    /// head writer. Called with `wait_lock` held.
    fn mark_wake(&self, q: &mut VecDeque<Waiter>, wake_type: WakeType, wakes: &mut Wakes) {
        let Some(first) = q.front_mut() else { return };
        if first.kind == Kind::Writer {
            // A writer is woken to retry; until it does, a spinning writer
            // may still steal the lock, while readers queue behind it.
            if wake_type == WakeType::Any {
                wakes.mark(&first.parker);
            }
            return;
        }
        // Relaxed: only the reader-count overflow guard; the grant below
        // acquires for itself.
        if self.count.load(Relaxed) & READ_FAIL != 0 {
            return;
        }
        // Grant the first reader before counting the others, so a writer
        // that stole the lock is noticed early.
        let mut adjustment: usize = 0;
        if wake_type != WakeType::ReadOwned {
            adjustment = READER_BIAS;
            // Acquire: pairs with the Release in write_unlock(). The count
            // only ever changes by read-modify-writes, so each unlock's
            // release sequence reaches the value read here: seeing no
            // writer, the last writer's critical section happens before the
            // readers we grant (passed on to them by Wakes::mark()). The
            // Release half is not needed; AcqRel stands in for the kernel's
            // fully ordered atomic_long_fetch_add().
            let old = self.count.fetch_add(READER_BIAS, AcqRel);
            if old & WRITER_MASK != 0 {
                // Writers keep getting in: after too long, demand a handoff.
                if Instant::now() > first.timeout {
                    if old & FLAG_HANDOFF == 0 {
                        adjustment = adjustment.wrapping_sub(FLAG_HANDOFF);
                        self.handoffs.fetch_add(1, Relaxed);
                        events::count(Event::ReaderHandoff);
                    }
                    first.handoff_set = true;
                }
                // Undo the trial bias (and maybe set FLAG_HANDOFF). AcqRel
                // is more than needed: we entered no critical section, so
                // there is nothing to release or acquire (the kernel uses a
                // plain atomic_long_add() here).
                self.count.fetch_add(adjustment.wrapping_neg(), AcqRel);
                return;
            }
        }
        // Every queued reader may enter now, whatever its place behind
        // queued writers; writers keep their order.
        let mut granted: Vec<Arc<Parker>> = Vec::new();
        let mut i = 0;
        while i < q.len() && granted.len() < MAX_READERS_WAKEUP {
            if q[i].kind == Kind::Writer {
                i += 1;
            } else if let Some(w) = q.remove(i) {
                granted.push(w.parker);
            }
        }
        let mut adjustment = (granted.len() * READER_BIAS).wrapping_sub(adjustment);
        // Relaxed: the flags tested and cleared below change only under
        // wait_lock, which we hold.
        let old = self.count.load(Relaxed);
        if q.is_empty() {
            adjustment = adjustment.wrapping_sub(FLAG_WAITERS);
        }
        // A reader got in, so nobody needs to force writers out any more.
        if old & FLAG_HANDOFF != 0 {
            adjustment = adjustment.wrapping_sub(FLAG_HANDOFF);
        }
        if adjustment != 0 {
            // AcqRel is more than needed (the kernel uses a plain
            // atomic_long_add()): the Acquire above, or for ReadOwned the
            // caller's read_lock(), already ordered the last writer before
            // these readers, and the lock stays read-held in between, so no
            // writer got in. Wakes::mark() publishes this update to them.
            self.count.fetch_add(adjustment, AcqRel);
        }
        for parker in &granted {
            wakes.mark(parker);
        }
    }

    /// `rwsem_cond_wake_waiter`: wake whoever can go now that `count` is
    /// what it is.
    fn cond_wake(&self, q: &mut VecDeque<Waiter>, count: usize, wakes: &mut Wakes) {
        if count & WRITER_MASK != 0 {
            return;
        }
        let wake_type = if count & READER_MASK != 0 {
            WakeType::Readers
        } else {
            WakeType::Any
        };
        self.mark_wake(q, wake_type, wakes);
    }

    /// `rwsem_wake`: after an unlock that saw `FLAG_WAITERS`.
    #[cold]
    fn wake(&self) {
        let mut wakes = Wakes::default();
        let mut q = self.queue();
        self.mark_wake(&mut q, WakeType::Any, &mut wakes);
        drop(q);
        wakes.wake();
    }

    /// `rwsem_down_read_slowpath`. `count` is the value after the fast
    /// path's add: this reader's bias is still in the word.
    #[cold]
    fn down_read_slowpath(&self, count: usize) {
        self.reader_slowpath.fetch_add(1, Relaxed);
        let rcnt = count >> READER_SHIFT;
        let mut wakes = Wakes::default();

        // Reader lock stealing, unless the lock is very likely reader-owned
        // already (then stealing would starve a sleeping writer).
        let likely_reader_owned = rcnt > 1 && count & WRITER_LOCKED == 0;
        if !likely_reader_owned && count & (WRITER_LOCKED | FLAG_HANDOFF) == 0 {
            // The bias added by the fast path is the read lock.
            events::count(Event::ReaderSteal);
            if rcnt == 1 && count & FLAG_WAITERS != 0 {
                // First reader in: let the queued readers in too.
                let mut q = self.queue();
                self.mark_wake(&mut q, WakeType::ReadOwned, &mut wakes);
                drop(q);
                wakes.wake();
            }
            return;
        }

        let parker = PARKER.with(Arc::clone);
        let mut q = self.queue();
        let adjustment = if q.is_empty() {
            // No one queued and no writer: the bias already held is the lock.
            // Acquire: pairs with the Release in write_unlock(). The writer
            // our fast path saw may have left since; its critical section
            // must happen before ours (our bias keeps new writers out).
            if self.count.load(Acquire) & WRITER_MASK == 0 {
                return;
            }
            FLAG_WAITERS.wrapping_sub(READER_BIAS)
        } else {
            READER_BIAS.wrapping_neg()
        };
        // Relaxed: wakers mark a parker only under wait_lock, which we hold.
        parker.state.store(PARK_WAITING, Relaxed);
        q.push_back(Waiter {
            parker: Arc::clone(&parker),
            kind: Kind::Reader,
            timeout: Instant::now() + WAIT_TIMEOUT,
            handoff_set: false,
        });
        // Now waiting, no longer actively locking: give the bias back.
        // AcqRel is more than needed (it mirrors the kernel's fully ordered
        // atomic_long_add_return()): we entered no critical section, so
        // there is nothing to release, and whoever cond_wake() lets in
        // acquires for itself (mark_wake()'s fetch_add, a writer's CAS).
        let count = self
            .count
            .fetch_add(adjustment, AcqRel)
            .wrapping_add(adjustment);
        self.cond_wake(&mut q, count, &mut wakes);
        drop(q);
        wakes.wake();

        // Wait to be given the lock: the waker adds our bias for us.
        self.park(&parker, Kind::Reader);
    }

    /// `rwsem_try_write_lock_unqueued` in a bounded loop: the optimistic
    /// spin of a writer before it queues.
    fn optimistic_spin(&self) -> bool {
        for _ in 0..SPIN_LIMIT {
            // Relaxed: only a guess, re-validated by the compare_exchange.
            let count = self.count.load(Relaxed);
            if count & FLAG_HANDOFF != 0 {
                // Promised to a waiter: spinning cannot win.
                return false;
            }
            // Acquire: pairs with the Release in read_unlock() and
            // write_unlock(); as the count only changes by read-modify-writes,
            // on a free lock every earlier holder's critical section happens
            // before ours.
            if count & LOCK_MASK == 0
                && self
                    .count
                    .compare_exchange(count, count | WRITER_LOCKED, Acquire, Relaxed)
                    .is_ok()
            {
                return true;
            }
            core::hint::spin_loop();
        }
        false
    }

    /// `rwsem_try_write_lock`, with `wait_lock` held and `me` queued.
    fn try_write_lock(&self, q: &mut VecDeque<Waiter>, me: &Arc<Parker>) -> bool {
        let Some(me_at) = q.iter().position(|w| Arc::ptr_eq(&w.parker, me)) else {
            unreachable!("a writer in the slow path is queued")
        };
        let first_handoff = q[0].handoff_set;
        // Relaxed: the compare_exchange below re-validates it. A stale
        // locked value may make us give up without one, but FLAG_WAITERS is
        // set (under wait_lock) while we are queued and this load is not
        // older than its setting, so an unlock we miss here saw the flag and
        // wakes the head waiter.
        let mut count = self.count.load(Relaxed);
        let new = loop {
            let has_handoff = count & FLAG_HANDOFF != 0;
            // Honour the handoff only when the head waiter set it.
            if has_handoff && first_handoff && me_at != 0 {
                return false;
            }
            let mut new = count;
            if count & LOCK_MASK != 0 {
                // Locked: a waiter that waited too long asks for a handoff.
                if has_handoff || Instant::now() <= q[me_at].timeout {
                    return false;
                }
                new |= FLAG_HANDOFF;
            } else {
                new |= WRITER_LOCKED;
                new &= !FLAG_HANDOFF;
                if q.len() == 1 {
                    new &= !FLAG_WAITERS;
                }
            }
            // Acquire: pairs with the Release in read_unlock() and
            // write_unlock(), as in optimistic_spin() (needed only when we
            // take WRITER_LOCKED, not when we only set FLAG_HANDOFF).
            // Relaxed on failure: we retry with the fresh value.
            match self.count.compare_exchange(count, new, Acquire, Relaxed) {
                Ok(_) => break new,
                Err(now) => count = now,
            }
        };
        if new & FLAG_HANDOFF != 0 {
            q[0].handoff_set = true;
            self.handoffs.fetch_add(1, Relaxed);
            events::count(Event::WriterHandoff);
            return false;
        }
        q.remove(me_at);
        true
    }

    /// `rwsem_down_write_slowpath`.
    #[cold]
    fn down_write_slowpath(&self) {
        self.writer_slowpath.fetch_add(1, Relaxed);
        if self.optimistic_spin() {
            return;
        }
        let parker = PARKER.with(Arc::clone);
        let mut wakes = Wakes::default();
        let mut q = self.queue();
        // Relaxed: under wait_lock, as in down_read_slowpath().
        parker.state.store(PARK_WAITING, Relaxed);
        q.push_back(Waiter {
            parker: Arc::clone(&parker),
            kind: Kind::Writer,
            timeout: Instant::now() + WAIT_TIMEOUT,
            handoff_set: false,
        });
        if q.len() > 1 {
            // Not first: readers ahead may be able to go now. Acquire is
            // more than needed (the kernel uses a plain atomic_long_read()):
            // the value only picks whom to wake, and mark_wake() acquires
            // for itself before granting readers.
            self.cond_wake(&mut q, self.count.load(Acquire), &mut wakes);
            if !wakes.0.is_empty() {
                drop(q);
                wakes.wake();
                q = self.queue();
            }
        } else {
            // Relaxed: the flags change only under wait_lock. An unlock
            // before this RMW is seen by try_write_lock() below, one after
            // it sees the flag and wakes us.
            self.count.fetch_or(FLAG_WAITERS, Relaxed);
        }
        loop {
            // Like set_current_state(): a wake-up from here on is not lost.
            // Relaxed: wakers mark us only under wait_lock, which we hold.
            parker.state.store(PARK_WAITING, Relaxed);
            if self.try_write_lock(&mut q, &parker) {
                return;
            }
            let handoff_set = q
                .iter()
                .any(|w| Arc::ptr_eq(&w.parker, &parker) && w.handoff_set);
            drop(q);
            // Holding the handoff, the lock is ours as soon as the owner
            // leaves: poll for a while before sleeping. Relaxed polls are
            // enough: try_write_lock() re-checks and acquires.
            let freed = handoff_set
                && (0..SPIN_LIMIT).any(|_| {
                    core::hint::spin_loop();
                    self.count.load(Relaxed) & LOCK_MASK == 0
                });
            if !freed {
                self.park(&parker, Kind::Writer);
            }
            q = self.queue();
        }
    }
}

impl RawRwLock for LinuxRwsem {
    const NAME: &'static str = "linux_rwsem";

    fn new() -> Self {
        LinuxRwsem {
            count: AtomicUsize::new(0),
            wait_lock: Mutex::new(VecDeque::new()),
            reader_slowpath: AtomicUsize::new(0),
            writer_slowpath: AtomicUsize::new(0),
            sleeps: AtomicUsize::new(0),
            handoffs: AtomicUsize::new(0),
        }
    }

    #[inline]
    fn read_lock(&self) {
        // Acquire: pairs with the Release in write_unlock(), so the last
        // writer's critical section happens before ours (when the result
        // shows no writer; otherwise the slow path acquires again).
        let count = self
            .count
            .fetch_add(READER_BIAS, Acquire)
            .wrapping_add(READER_BIAS);
        if count & READ_FAILED_MASK != 0 {
            self.down_read_slowpath(count);
        }
    }

    #[inline]
    fn read_unlock(&self) {
        // Release: pairs with the Acquire of the next writer's
        // compare_exchange (write_lock(), optimistic_spin(),
        // try_write_lock()), so our reads happen before its writes.
        let count = self
            .count
            .fetch_sub(READER_BIAS, Release)
            .wrapping_sub(READER_BIAS);
        if count & (LOCK_MASK | FLAG_WAITERS) == FLAG_WAITERS {
            self.wake();
        }
    }

    #[inline]
    fn write_lock(&self) {
        // Acquire: pairs with the Release in read_unlock() and
        // write_unlock(), so every earlier holder's critical section happens
        // before ours.
        if self
            .count
            .compare_exchange(0, WRITER_LOCKED, Acquire, Relaxed)
            .is_err()
        {
            self.down_write_slowpath();
        }
    }

    #[inline]
    fn write_unlock(&self) {
        // Release: pairs with the Acquire of the next holder: read_lock(),
        // the acquiring count updates of the slow paths and mark_wake(), or
        // a writer's compare_exchange.
        let count = self.count.fetch_sub(WRITER_LOCKED, Release);
        if count & FLAG_WAITERS != 0 {
            self.wake();
        }
    }

    fn slowpaths(&self) -> Option<Slowpaths> {
        Some(Slowpaths {
            reader: self.reader_slowpath.load(Relaxed) as u64,
            writer: self.writer_slowpath.load(Relaxed) as u64,
        })
    }

    const EVENTS: &'static [Event] = &[
        Event::ReaderSteal,
        Event::ReaderSleep,
        Event::WriterSleep,
        Event::ReaderHandoff,
        Event::WriterHandoff,
    ];

    /// Once the round's threads are done: a steal is one way out of a
    /// reader's slow path, and the threads' sleeps and hand-offs add up to
    /// the lock's own counts of them (a lost or doubly counted thread would
    /// not).
    fn check_events(&self, e: &Events, _reader_ops: u64, _writer_ops: u64) -> Result<(), String> {
        let slow = self.reader_slowpath.load(Relaxed) as u64;
        let steals = Event::ReaderSteal.of(e);
        let sleeps = Event::ReaderSleep.of(e) + Event::WriterSleep.of(e);
        let handoffs = Event::ReaderHandoff.of(e) + Event::WriterHandoff.of(e);
        if steals > slow || sleeps != self.sleeps() || handoffs != self.handoffs() {
            return Err(format!(
                "threads counted {steals} steals of {slow} reader slow paths, {sleeps} sleeps \
                 and {handoffs} hand-offs; the lock counted {} sleeps and {} hand-offs",
                self.sleeps(),
                self.handoffs()
            ));
        }
        Ok(())
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicBool;
    use std::thread;

    fn wait_until(what: &str, cond: impl Fn() -> bool) {
        let t0 = Instant::now();
        while !cond() {
            assert!(
                t0.elapsed() < Duration::from_secs(10),
                "timed out waiting for {what}"
            );
            thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn uncontended_paths_are_fast_and_leave_the_word_clean() {
        let l = LinuxRwsem::new();
        l.read_lock();
        l.read_lock();
        assert_eq!(l.count.load(Relaxed), 2 * READER_BIAS);
        l.read_unlock();
        l.read_unlock();
        l.write_lock();
        assert_eq!(l.count.load(Relaxed), WRITER_LOCKED);
        l.write_unlock();
        assert_eq!(l.count.load(Relaxed), 0);
        assert_eq!(l.slowpaths(), Some(Slowpaths::default()));
    }

    #[test]
    fn a_reader_sleeps_behind_a_writer_and_is_woken() {
        let l = LinuxRwsem::new();
        let inside = AtomicBool::new(false);
        let mine = events::counts();
        l.write_lock();
        let reader = thread::scope(|s| {
            let reader = s.spawn(|| {
                let before = events::counts();
                l.read_lock();
                inside.store(true, Relaxed);
                l.read_unlock();
                events::counts().since(before)
            });
            wait_until("the reader to sleep", || l.sleeps() >= 1);
            assert!(!inside.load(Relaxed), "a reader got in beside a writer");
            assert_eq!(l.count.load(Relaxed), WRITER_LOCKED | FLAG_WAITERS);
            l.write_unlock();
            reader.join().unwrap()
        });
        assert!(inside.load(Relaxed));
        // The reader counted its own sleeps (one, or more after a spurious
        // wake-up), the writer none, and they are all the lock saw.
        let (sleeps, total) = (
            Event::ReaderSleep.of(&reader),
            reader + events::counts().since(mine),
        );
        assert!(
            sleeps >= 1 && Event::WriterSleep.of(&reader) == 0,
            "{reader:?}"
        );
        assert_eq!(Event::ReaderSteal.of(&reader), 0, "it queued");
        assert_eq!(l.check_events(&total, 1, 1), Ok(()));
        assert_eq!(
            l.slowpaths(),
            Some(Slowpaths {
                reader: 1,
                writer: 0
            })
        );
        assert_eq!(l.count.load(Relaxed), 0);
    }

    #[test]
    fn a_writer_sleeps_behind_readers_and_is_woken() {
        let l = LinuxRwsem::new();
        let inside = AtomicBool::new(false);
        l.read_lock();
        l.read_lock();
        thread::scope(|s| {
            s.spawn(|| {
                l.write_lock();
                inside.store(true, Relaxed);
                l.write_unlock();
            });
            wait_until("the writer to sleep", || l.sleeps() >= 1);
            assert!(!inside.load(Relaxed));
            l.read_unlock();
            thread::sleep(Duration::from_millis(5));
            assert!(!inside.load(Relaxed), "a writer got in beside a reader");
            l.read_unlock();
        });
        assert!(inside.load(Relaxed));
        assert_eq!(
            l.slowpaths(),
            Some(Slowpaths {
                reader: 0,
                writer: 1
            })
        );
        assert_eq!(l.count.load(Relaxed), 0);
    }

    #[test]
    fn queued_readers_are_granted_together() {
        let l = LinuxRwsem::new();
        let inside = AtomicUsize::new(0);
        let release = AtomicBool::new(false);
        l.write_lock();
        thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    l.read_lock();
                    inside.fetch_add(1, Relaxed);
                    while !release.load(Relaxed) {
                        thread::yield_now();
                    }
                    l.read_unlock();
                });
            }
            wait_until("three readers to queue", || l.queue().len() == 3);
            l.write_unlock();
            // All three hold the read lock at the same time.
            wait_until("three readers inside", || inside.load(Relaxed) == 3);
            release.store(true, Relaxed);
        });
        assert_eq!(l.count.load(Relaxed), 0);
    }

    /// Runs `hogs` threads taking one side of the lock back to back, then
    /// times how long one acquisition of the other side takes.
    fn latency_against(hog_writes: bool) -> (Duration, u64) {
        let l = LinuxRwsem::new();
        let stop = AtomicBool::new(false);
        let hog_ops = AtomicUsize::new(0);
        let waited = thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    while !stop.load(Relaxed) {
                        if hog_writes {
                            l.write_lock();
                            harness::work::work(200);
                            l.write_unlock();
                        } else {
                            l.read_lock();
                            // Long enough that the three readers overlap and
                            // the lock is never free.
                            harness::work::work(2000);
                            l.read_unlock();
                        }
                        hog_ops.fetch_add(1, Relaxed);
                    }
                });
            }
            wait_until("the hogs to run", || hog_ops.load(Relaxed) > 100);
            let t0 = Instant::now();
            if hog_writes {
                l.read_lock();
                l.read_unlock();
            } else {
                l.write_lock();
                l.write_unlock();
            }
            let waited = t0.elapsed();
            stop.store(true, Relaxed);
            waited
        });
        assert_eq!(l.count.load(Relaxed), 0);
        (waited, l.handoffs())
    }

    #[test]
    fn a_writer_is_not_starved_by_continuous_readers() {
        let (waited, _) = latency_against(false);
        assert!(waited < Duration::from_secs(2), "writer waited {waited:?}");
    }

    #[test]
    fn a_reader_is_not_starved_by_continuous_writers() {
        let (waited, _) = latency_against(true);
        assert!(waited < Duration::from_secs(2), "reader waited {waited:?}");
    }

    #[test]
    fn a_queued_writer_goes_before_later_readers() {
        let l = LinuxRwsem::new();
        let order = Mutex::new(Vec::new());
        l.read_lock();
        thread::scope(|s| {
            s.spawn(|| {
                l.write_lock();
                order.lock().unwrap().push("writer");
                l.write_unlock();
            });
            wait_until("the writer to queue", || l.queue().len() == 1);
            // The lock is read-held, yet a new reader queues behind the
            // writer instead of joining the readers.
            s.spawn(|| {
                l.read_lock();
                order.lock().unwrap().push("reader");
                l.read_unlock();
            });
            wait_until("the reader to queue", || l.queue().len() == 2);
            l.read_unlock();
        });
        assert_eq!(*order.lock().unwrap(), ["writer", "reader"]);
        assert_eq!(l.count.load(Relaxed), 0);
    }

    #[test]
    fn a_reader_steals_a_lock_nobody_holds_past_the_waiters() {
        let l = LinuxRwsem::new();
        // Waiters announced, nobody holding: the fast path fails, and the
        // slow path keeps the bias it added.
        l.count.store(FLAG_WAITERS, Relaxed);
        let before = events::counts();
        l.read_lock();
        assert_eq!(l.count.load(Relaxed), READER_BIAS | FLAG_WAITERS);
        l.read_unlock();
        let took = events::counts().since(before);
        assert_eq!(Event::ReaderSteal.of(&took), 1);
        assert_eq!(l.slowpaths().unwrap().reader, 1);
        assert_eq!(l.check_events(&took, 1, 0), Ok(()));
        // A steal outside any slow path, or a sleep the lock never saw,
        // breaks the invariants.
        assert!(l.check_events(&(took + took), 1, 0).is_err());
        let mut slept = took;
        slept.0[Event::WriterSleep as usize] = 1;
        assert!(l.check_events(&slept, 1, 0).is_err());
    }

    #[test]
    fn a_timed_out_head_writer_sets_handoff_which_stops_stealing() {
        let l = LinuxRwsem::new();
        let me = PARKER.with(Arc::clone);
        let mine = events::counts();
        l.read_lock();
        let mut q = l.queue();
        q.push_back(Waiter {
            parker: Arc::clone(&me),
            kind: Kind::Writer,
            timeout: Instant::now(),
            handoff_set: false,
        });
        l.count.fetch_or(FLAG_WAITERS, Relaxed);
        thread::sleep(Duration::from_millis(2));
        // Still read-held: the timed-out head writer asks for the handoff.
        assert!(!l.try_write_lock(&mut q, &me));
        assert!(q[0].handoff_set);
        assert_eq!(
            l.count.load(Relaxed),
            READER_BIAS | FLAG_WAITERS | FLAG_HANDOFF
        );
        assert_eq!(l.handoffs(), 1);
        assert_eq!(Event::WriterHandoff.of(&events::counts().since(mine)), 1);
        drop(q);
        let reader_in = AtomicBool::new(false);
        thread::scope(|s| {
            s.spawn(|| {
                l.read_lock();
                reader_in.store(true, Relaxed);
                l.read_unlock();
            });
            wait_until("the reader to queue", || l.queue().len() == 2);
            // The last reader leaving wakes the head writer...
            l.read_unlock();
            assert_eq!(me.state.load(Relaxed), PARK_WOKEN);
            // ...and nobody else can take the free lock from it.
            assert!(!l.optimistic_spin());
            assert!(!reader_in.load(Relaxed));
            let mut q = l.queue();
            assert!(l.try_write_lock(&mut q, &me));
            drop(q);
            assert_eq!(l.count.load(Relaxed), WRITER_LOCKED | FLAG_WAITERS);
            l.write_unlock();
        });
        assert!(reader_in.load(Relaxed));
        assert_eq!(l.count.load(Relaxed), 0);
    }
}
