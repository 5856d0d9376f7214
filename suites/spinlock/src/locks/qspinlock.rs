//! Linux's queued spinlock (kernel/locking/qspinlock.c), in user space.
//!
//! Provenance: the algorithm of Linux's `kernel/locking/qspinlock.c` and
//! `include/asm-generic/qspinlock_types.h` as of v6.6 (Waiman Long and
//! Peter Zijlstra; x86's spinlock since v4.2), with `_Q_PENDING_BITS == 8`.
//! Changed for user space: CPUs are threads with a claimed node slot, four
//! nesting levels are the per-thread node index, no paravirt hooks
//! (`pv_wait`/`pv_kick`); a waiter spinning too long yields
//! ([`super::Spin`]). Lock events are counted as Linux's
//! `CONFIG_LOCK_EVENT_COUNTS` counts `lock_pending` and `lock_slowpath`
//! (`Pending`, `Queued`), with a queue head handing on to its successor
//! (`HandedOn`) and a queued node that found another ahead of it
//! (`QueuedBehind`), in this thread's counters (`crate::events`), on the
//! slow path only.
//!
//! The whole lock is one 32-bit word, as small as a ticket lock, yet waiters
//! queue MCS-style, each spinning on its own node. The word holds
//!
//! ```text
//!  31          18 17 16 15       8 7        0
//! +--------------+-----+----------+----------+
//! | tail cpu + 1 | idx | pending  |  locked  |
//! +--------------+-----+----------+----------+
//! ```
//!
//! Uncontended, lock is one compare-exchange 0 -> locked. The second
//! contender does not queue: it sets `pending` and spins on the `locked`
//! byte until the owner leaves, then turns pending into locked. Only the
//! third contender pays for the MCS queue (a per-thread node, published as
//! the `tail` code = thread slot + 1 and nesting index), and only the queue
//! head spins on the lock word. That pending bit is the two-contender
//! optimization seed 001 measures: queueing costs extra cache misses that a
//! ticket lock does not pay with two threads.
//!
//! As in Linux with `_Q_PENDING_BITS == 8` (`NR_CPUS < 16K`), the word is
//! also Linux's union of sub-words: the `locked` byte (the low-order byte
//! of the `u32`), the `pending` byte above it, the `locked_pending`
//! halfword (the low 16 bits) and the `tail` halfword (the high 16 bits).
//! Unlock is a byte store-release of `locked`, `set_locked` a byte store,
//! `clear_pending` a byte store of `pending`, `clear_pending_set_locked` a
//! 16-bit store of `locked_pending` and `xchg_tail` a 16-bit swap of
//! `tail`, each through an `AtomicU8`/`AtomicU16` view of those bytes
//! (offsets by `target_endian`); everything else is 32-bit on the word.
//!
//! Soundness rests on an assumption, the one Linux makes. Rust's memory
//! model, like C11's, does not define mixed-size atomics (std's
//! `AtomicU8::from_ptr` forbids racing them), and here they race: every
//! sub-word access overlaps the word's compare_exchange, fetch_or and
//! loads, and `locked_pending` overlaps `locked` and `pending` (`tail`
//! overlaps no other view). Every target here (x86, arm64, ppc64, mips,
//! riscv, sparc64, s390x) implements them as Linux relies on: each access
//! is single-copy atomic over its own bytes, an RMW of the word is atomic
//! against a store to part of it (a locked instruction; a CAS compares the
//! whole word; a store breaks an LL/SC reservation), and acquire/release
//! order accesses of any size. LLVM lowers each to one access of its size
//! or, for a 16-bit swap the ISA lacks (mips, sparc64, s390x, riscv without
//! Zabha, ppc64 before POWER8), to a masked LL/SC or CAS loop on the aligned
//! word, as Linux's halfword `xchg` on those architectures does.
//! CPUs become threads: a thread claims one of [`MAX_THREADS`] node slots
//! the first time it queues and frees it when it exits.
//!
//! The word as (queue tail, pending bit, locked byte), drawn as in Linux's
//! comment above `queued_spin_lock_slowpath()` and adapted to this port:
//!
//! ```text
//!              fast     :    slow                                  : unlock
//!                       :                                          :
//! uncontended  (0,0,0) -:--> (0,0,1) ---------------------------+--:-> (*,*,0)
//!                       :       |                               |  :
//!                       :       v                               |  :
//! pending               :    (0,1,1) +--> (*,1,0) ---> (*,0,1) -+  :
//!                       :       | ^--'                          |  :
//!                       :       v                               |  :
//! uncontended           :    (n,x,y) +--> (n,0,0) ---> (0,0,1) -+  :
//!   queue               :       | ^--'                          |  :
//!                       :       v                               |  :
//! contended             :    (*,x,y) +--> (*,0,0) ---> (*,0,1) -'  :
//!   queue               :         ^--'                             :
//! ```
//!
//! `n` is our tail code, `*` any value, `x` and `y` 0 or 1; `+--> ^--'` is
//! a spin until the state on its right. Each transition and its operation
//! (`~>` waits for another thread's transition). The plain stores need no
//! RMW because, as in Linux, only the storing thread may change those bytes
//! then (no lock stealing while pending or a queue head is about to take
//! the lock), while the other bytes may change beside them:
//!
//! ```text
//! (0,0,0) -> (0,0,1)  lock(), trylock(): compare_exchange (Acquire).
//! (*,*,1) -> (*,*,0)  unlock(): byte store-release of `locked`; pending
//!                     and tail, other bytes, are untouched.
//! (0,1,0) ~> (0,0,1)  slow path entry: a bounded wait (pending_loops()) for
//!                     a hand-over in progress; then queue if pending or
//!                     a tail is set.
//! (0,0,y) -> (0,1,y)  fetch_or sets pending (Acquire). From (0,0,0) this
//!                     is a trylock: no wait, straight to the hand-over.
//! (*,1,*) -> (*,0,*)  clear_pending(): byte store of `pending` = 0; the
//!                     fetch_or found a queue and no other pending waiter:
//!                     undo our bit, then queue.
//! (0,1,1) ~> (*,1,0)  the pending waiter spins on the `locked` byte
//!                     (load-acquire) until the owner unlocks (a queue may
//!                     form meanwhile).
//! (*,1,0) -> (*,0,1)  clear_pending_set_locked(): 16-bit store of
//!                     `locked_pending` = locked.
//! (*,x,y) -> (n,x,y)  xchg_tail(): 16-bit swap of `tail`: we queue.
//! (*,x,y) ~> (*,0,0)  the queue head spins until owner and pending leave.
//! (n,0,0) -> (0,0,1)  compare_exchange of the word: we are the last
//!                     queued, so the tail is cleared too.
//! (*,0,0) -> (*,0,1)  set_locked(): byte store of `locked` = 1; others
//!                     queued behind us (or a pending bit in flight failed
//!                     the compare_exchange); then we make our successor
//!                     the head.
//! ```
//!
//! Under `--cfg loom` (the model check, `model/qspinlock.rs`) the algorithm
//! is this file's, with three differences:
//! - the sub-word views `byte()` and `half()` are loom stand-ins that do
//!   each access on the whole word (`crate::sync::subword`: loads mask, a
//!   store of 0 is a `fetch_and`, other stores and `xchg_tail` are
//!   compare-exchange loops), Linux's form when `_Q_PENDING_BITS != 8`.
//!   That checks a stronger program (every sub-word write is an RMW that
//!   reads the latest word) and leaves the sub-word assumption above
//!   unchecked;
//! - the node pool is a loom lazy static (loom's atomics are not `const`)
//!   and the `THIS_CPU` thread-local is loom's, with 32 slots
//!   ([`MAX_THREADS`]) instead of 1024; the slot bitmap is std's atomics
//!   (claiming a slot is bookkeeping, not the lock, and is undone by a
//!   thread-local destructor that loom runs outside its execution);
//! - the lock events are the models' too: loom runs a model's threads on
//!   one OS thread, so its counters count them all, and a model shows from
//!   them that it reached the pending and queue paths.

use super::{RawLock, Spin};
use crate::events::{self, Event, Events};
use crate::sync::atomic::{AtomicPtr, AtomicU16, AtomicU32, AtomicU8, Ordering::*};
use crate::sync::thread_local;
use std::cell::Cell;
use std::ptr;

pub const LOCKED_OFFSET: u32 = 0;
pub const LOCKED_BITS: u32 = 8;
pub const LOCKED_MASK: u32 = ((1 << LOCKED_BITS) - 1) << LOCKED_OFFSET;
pub const LOCKED_VAL: u32 = 1 << LOCKED_OFFSET;

pub const PENDING_OFFSET: u32 = LOCKED_OFFSET + LOCKED_BITS;
pub const PENDING_BITS: u32 = 8;
pub const PENDING_MASK: u32 = ((1 << PENDING_BITS) - 1) << PENDING_OFFSET;
pub const PENDING_VAL: u32 = 1 << PENDING_OFFSET;

pub const TAIL_IDX_OFFSET: u32 = PENDING_OFFSET + PENDING_BITS;
pub const TAIL_IDX_BITS: u32 = 2;
pub const TAIL_IDX_MASK: u32 = ((1 << TAIL_IDX_BITS) - 1) << TAIL_IDX_OFFSET;

pub const TAIL_CPU_OFFSET: u32 = TAIL_IDX_OFFSET + TAIL_IDX_BITS;
pub const TAIL_CPU_BITS: u32 = 32 - TAIL_CPU_OFFSET;
pub const TAIL_CPU_MASK: u32 = ((1 << TAIL_CPU_BITS) - 1) << TAIL_CPU_OFFSET;

pub const TAIL_MASK: u32 = TAIL_CPU_MASK | TAIL_IDX_MASK;
pub const LOCKED_PENDING_MASK: u32 = LOCKED_MASK | PENDING_MASK;

/// Byte offsets in memory of Linux's sub-words of the word: `locked` is its
/// low-order byte, `pending` the next, `locked_pending` the low and `tail`
/// the high 16 bits.
const BIG_ENDIAN: bool = cfg!(target_endian = "big");
const LOCKED_BYTE: usize = if BIG_ENDIAN { 3 } else { 0 };
const PENDING_BYTE: usize = if BIG_ENDIAN { 2 } else { 1 };
const LOCKED_PENDING_HALF: usize = if BIG_ENDIAN { 2 } else { 0 };
const TAIL_HALF: usize = if BIG_ENDIAN { 0 } else { 2 };
const _: () =
    assert!(LOCKED_OFFSET == 0 && LOCKED_BITS == 8 && PENDING_OFFSET == 8 && PENDING_BITS == 8);
const _: () = assert!(TAIL_IDX_OFFSET == 16 && TAIL_MASK == 0xffff_0000);

/// Nodes per thread: nesting depth (Linux: task, softirq, hardirq, NMI).
pub const MAX_NODES: usize = 1 << TAIL_IDX_BITS;
/// Extra spins waiting for a pending -> locked hand-over before queueing:
/// Linux's `_Q_PENDING_LOOPS`, 512 where the architecture defines it (x86,
/// powerpc, riscv: `arch/*/include/asm/qspinlock.h`), else the generic 1
/// (arm64 and the rest). It decides the two-contender case: a releaser
/// that retakes the lock while the pending waiter's hand-over is in
/// flight waits it out and sets pending itself, rather than queueing
/// (measured in the contention model: 253 cycles and 1.25 misses per
/// acquisition at 2 vCPUs with 512, 1038 and 6.44 with 1, both queueing
/// through an MCS node; docs/contention-model.md). The architecture is
/// the sync layer's: the target's (a constant the compiler folds), or
/// under the model the simulated machine's. Under loom the bound is 1:
/// any bound is equally correct, and each spin is a branch to explore.
pub fn pending_loops() -> u32 {
    if cfg!(loom) {
        return 1;
    }
    match crate::sync::arch::target_arch() {
        "x86" | "x86_64" | "powerpc" | "powerpc64" | "riscv64" => 1 << 9,
        _ => 1,
    }
}
/// Threads that can be queued at once; the encoding allows 2^14 - 1. A
/// thread that finds no free slot waits by trylock instead of queueing.
#[cfg(not(loom))]
pub const MAX_THREADS: usize = 1024;
/// Under loom every slot's nodes are created in every explored execution.
#[cfg(loom)]
pub const MAX_THREADS: usize = 32;
const _: () = assert!(MAX_THREADS < 1 << TAIL_CPU_BITS && MAX_THREADS % 32 == 0);

/// The tail code of node `idx` of thread slot `cpu`; never 0.
pub const fn encode_tail(cpu: u32, idx: u32) -> u32 {
    ((cpu + 1) << TAIL_CPU_OFFSET) | (idx << TAIL_IDX_OFFSET)
}

/// `(cpu, idx)` of a non-zero tail code (other bits of the word ignored).
pub const fn decode_tail(val: u32) -> (u32, u32) {
    (
        ((val & TAIL_CPU_MASK) >> TAIL_CPU_OFFSET) - 1,
        (val & TAIL_IDX_MASK) >> TAIL_IDX_OFFSET,
    )
}

/// An MCS node of the wait queue.
struct QNode {
    next: AtomicPtr<QNode>,
    locked: AtomicU32,
}

/// One thread's nodes, a cache line of their own (Linux's per-CPU qnodes).
#[repr(align(64))]
struct Slot {
    nodes: [QNode; MAX_NODES],
}

#[cfg(not(loom))]
static SLOTS: [Slot; MAX_THREADS] = [const {
    Slot {
        nodes: [const {
            QNode {
                next: AtomicPtr::new(ptr::null_mut()),
                locked: AtomicU32::new(0),
            }
        }; MAX_NODES],
    }
}; MAX_THREADS];

/// One bit per slot: claimed by a live thread.
#[cfg(not(loom))]
static SLOT_USED: [AtomicU32; MAX_THREADS / 32] = [const { AtomicU32::new(0) }; MAX_THREADS / 32];

/// This thread's slot ("CPU number") and nesting count.
struct ThisCpu {
    cpu: Option<u32>,
    count: Cell<u32>,
}

impl ThisCpu {
    fn claim() -> ThisCpu {
        for (word, used) in SLOT_USED.iter().enumerate() {
            let mut bits = used.load(Relaxed);
            while bits != u32::MAX {
                let bit = bits.trailing_ones();
                bits = used.fetch_or(1 << bit, Relaxed);
                if bits & 1 << bit == 0 {
                    return ThisCpu {
                        cpu: Some(word as u32 * 32 + bit),
                        count: Cell::new(0),
                    };
                }
            }
        }
        ThisCpu {
            cpu: None,
            count: Cell::new(0),
        }
    }
}

impl Drop for ThisCpu {
    fn drop(&mut self) {
        // A thread exits only outside lock(), when no queue refers to its
        // nodes any more (see `release` in `queue`).
        if let Some(cpu) = self.cpu {
            SLOT_USED[cpu as usize / 32].fetch_and(!(1 << (cpu % 32)), Relaxed);
        }
    }
}

thread_local! {
    static THIS_CPU: ThisCpu = ThisCpu::claim();
}

fn node(cpu: u32, idx: u32) -> &'static QNode {
    &SLOTS[cpu as usize].nodes[idx as usize]
}

pub struct QSpinLock {
    val: AtomicU32,
}

impl QSpinLock {
    /// The current word.
    #[cfg(any(test, loom))]
    pub fn value(&self) -> u32 {
        self.val.load(Relaxed)
    }

    /// The byte at `offset` of the word, as an atomic of its own.
    #[cfg(not(loom))]
    #[inline]
    fn byte(&self, offset: usize) -> &AtomicU8 {
        debug_assert!(offset < 4);
        // SAFETY: a byte of our word: in bounds, aligned (AtomicU8 needs 1)
        // and alive as long as `self`; only ever accessed atomically. The
        // accesses of other sizes that race with it: see the module doc.
        unsafe { AtomicU8::from_ptr(self.val.as_ptr().cast::<u8>().add(offset)) }
    }

    /// The halfword at byte `offset` (0 or 2) of the word.
    #[cfg(not(loom))]
    #[inline]
    fn half(&self, offset: usize) -> &AtomicU16 {
        debug_assert!(offset == 0 || offset == 2);
        // SAFETY: as in byte(); the word is 4-aligned, so offsets 0 and 2
        // are 2-aligned as AtomicU16 needs.
        unsafe { AtomicU16::from_ptr(self.val.as_ptr().cast::<u8>().add(offset).cast()) }
    }

    /// `lock->locked`.
    #[cfg(not(loom))]
    #[inline]
    fn locked(&self) -> &AtomicU8 {
        self.byte(LOCKED_BYTE)
    }

    /// `clear_pending()`: *,1,* -> *,0,*, a byte store of `pending`.
    fn clear_pending(&self) {
        // Relaxed, as Linux's WRITE_ONCE: we give up the pending bit
        // without having owned anything; the queue head's load-acquire
        // needs nothing from us.
        self.byte(PENDING_BYTE).store(0, Relaxed);
    }

    /// `clear_pending_set_locked()`: *,1,0 -> *,0,1, a 16-bit store of
    /// `locked_pending`. Only the pending waiter, once the owner left.
    fn clear_pending_set_locked(&self) {
        // Relaxed, as Linux's WRITE_ONCE: the caller's fetch_or or
        // load-acquire already ordered the last unlock before us.
        self.half(LOCKED_PENDING_HALF)
            .store(LOCKED_VAL as u16, Relaxed);
    }

    /// `set_locked()`: *,*,0 -> *,*,1, a byte store of `locked`. Only the
    /// queue head, once owner and pending left.
    fn set_locked(&self) {
        // Relaxed, as Linux's WRITE_ONCE: the head's load-acquire of the
        // word already ordered the last unlock before us.
        self.locked().store(LOCKED_VAL as u8, Relaxed);
    }

    #[inline]
    pub fn trylock(&self) -> bool {
        // Acquire: pairs with the Release in unlock(), so the previous
        // holder's critical section happens before ours. The Relaxed load
        // is only a guess that the compare_exchange re-validates.
        self.val.load(Relaxed) == 0
            && self
                .val
                .compare_exchange(0, LOCKED_VAL, Acquire, Relaxed)
                .is_ok()
    }

    /// `queued_spin_lock_slowpath()`: `val` is the word the fast path saw.
    #[cold]
    #[inline(never)]
    fn lock_slowpath(&self, mut val: u32) {
        // Wait for an in-progress pending -> locked hand-over, a bounded
        // number of spins so that we guarantee forward progress.
        // 0,1,0 -> 0,0,1
        if val == PENDING_VAL {
            let mut cnt = pending_loops();
            loop {
                val = self.val.load(Relaxed);
                if val != PENDING_VAL || cnt == 0 {
                    break;
                }
                cnt -= 1;
                core::hint::spin_loop();
            }
        }

        // If we observe any contention (pending or a queue), queue.
        if val & !LOCKED_MASK != 0 {
            return self.queue();
        }

        // Trylock or set pending: 0,0,* -> 0,1,* -> 0,0,1 pending,
        // trylock. Acquire: pairs with the Release in unlock(); if the lock
        // was already free we take it below without the load-acquire.
        val = self.val.fetch_or(PENDING_VAL, Acquire);

        // A concurrent locker got there first: undo pending if we set it,
        // and queue. Our pending bit may have made the head's n,0,0 -> 0,0,1
        // transition fail; it then waits for its `next`, which will be us or
        // someone later.
        if val & !LOCKED_MASK != 0 {
            if val & PENDING_MASK == 0 {
                self.clear_pending();
            }
            return self.queue();
        }

        // We are pending: wait for the owner to go away. 0,1,1 -> *,1,0.
        // The load-acquire of the locked byte (Linux's
        // smp_cond_load_acquire(&lock->locked, !VAL)) pairs with the
        // owner's byte store-release in unlock().
        if val & LOCKED_MASK != 0 {
            let mut spin = Spin::new();
            while self.locked().load(Acquire) != 0 {
                spin.relax();
            }
        }

        // Take ownership and clear pending: *,1,0 -> *,0,1.
        self.clear_pending_set_locked();
        events::count(Event::Pending);
    }

    /// The MCS queue part of the slow path.
    fn queue(&self) {
        let queued = THIS_CPU.try_with(|this| match this.cpu {
            Some(cpu) => {
                let idx = this.count.get();
                this.count.set(idx + 1);
                if idx as usize >= MAX_NODES {
                    // Nested deeper than there are nodes (Linux: an NMI
                    // inside an NMI): fall back to spinning on trylock.
                    self.spin_trylock();
                } else {
                    self.queue_on(cpu, idx);
                }
                // release: the node is ours again.
                this.count.set(idx);
                true
            }
            None => false,
        });
        if !matches!(queued, Ok(true)) {
            // No slot left (more than MAX_THREADS threads queueing), or the
            // thread is exiting: wait without a node.
            self.spin_trylock();
        }
    }

    fn spin_trylock(&self) {
        let mut spin = Spin::new();
        while !self.trylock() {
            spin.relax();
        }
    }

    fn queue_on(&self, cpu: u32, idx: u32) {
        let node = node(cpu, idx);
        let tail = encode_tail(cpu, idx);
        node.locked.store(0, Relaxed);
        node.next.store(ptr::null_mut(), Relaxed);

        // We touched a possibly cold node line; try once more in case the
        // lock was freed meanwhile.
        if self.trylock() {
            return;
        }

        // Publish the updated tail (p,*,* -> n,*,*); `old` is the previous
        // tail code, 0 if none. See xchg_tail() for its orderings.
        let old = self.xchg_tail(tail);
        // Counted here, not before the swap: there it changed the code of
        // the queue head's wait on mips64el (one load-acquire fewer).
        events::count(Event::Queued);
        let mut next: *mut QNode = ptr::null_mut();

        // If there was a previous node, link it and wait until we reach the
        // head of the queue.
        if old & TAIL_MASK != 0 {
            events::count(Event::QueuedBehind);
            let (pcpu, pidx) = decode_tail(old);
            let prev = self::node(pcpu, pidx);
            // Release: pairs with our predecessor's Acquire load of `next`,
            // so our node's initialisation (locked = 0) happens before it
            // sets our flag.
            prev.next.store(node as *const QNode as *mut QNode, Release);
            // Acquire: pairs with the Release store of our flag by our
            // predecessor once it holds the lock. Its setting of the locked
            // byte then happens before our loads of the word below, so we
            // cannot see a stale *,0,0 and claim the lock beside it.
            let mut spin = Spin::new();
            while node.locked.load(Acquire) == 0 {
                spin.relax();
            }
            // A successor may have linked in while we waited. Acquire makes
            // its node initialisation visible before we write its flag
            // (Linux: READ_ONCE() and the address dependency of the store to
            // next->locked). In the whole-word form loom checks it is more
            // than needed, as the mutation check shows: there every write of
            // the word is an RMW, so our load-acquire of the word below
            // synchronises with the successor's xchg_tail through its release
            // sequence; here byte stores to the word end that sequence.
            next = node.next.load(Acquire);
        }

        // We are the head: wait for the owner and the pending waiter to go
        // away (*,x,y -> *,0,0). The load-acquire pairs with the releasing
        // unlock, since claiming the lock below is not an acquire.
        let mut spin = Spin::new();
        let val = loop {
            let val = self.val.load(Acquire);
            if val & LOCKED_PENDING_MASK == 0 {
                break val;
            }
            spin.relax();
        };

        // Claim the lock. If we are the only one queued (the tail is ours,
        // nobody pending), clear the tail too: n,0,0 -> 0,0,1. Otherwise
        // just set locked: *,*,0 -> *,*,1. A concurrent pending setter makes
        // the first fail and will itself see the tail and queue behind us.
        // Acquire as in lock() (Linux's atomic_try_cmpxchg_acquire()), though
        // it is more than needed: the load-acquire above has already
        // ordered the last unlock before us.
        if val & TAIL_MASK == tail
            && self
                .val
                .compare_exchange(val, LOCKED_VAL, Acquire, Relaxed)
                .is_ok()
        {
            return;
        }
        self.set_locked();

        // Contended: wait for our successor to link in, then make it head.
        // Acquire, as above: its node initialisation happens before we write
        // its flag.
        if next.is_null() {
            loop {
                next = node.next.load(Acquire);
                if !next.is_null() {
                    break;
                }
                spin.relax();
            }
        }
        // SAFETY: the successor's node is a static slot node; it spins on
        // this flag until we set it.
        // Release: pairs with the successor's Acquire spin on its flag, so
        // our claim of the locked byte above happens before it reads the
        // word as the new head.
        unsafe { (*next).locked.store(1, Release) };
        events::count(Event::HandedOn);
    }

    /// `xchg_tail()`: p,*,* -> n,*,*, a 16-bit swap of `tail` that leaves
    /// locked and pending alone; returns the old tail code (in place, the
    /// other bits 0).
    fn xchg_tail(&self, tail: u32) -> u32 {
        // AcqRel (Linux: smp_wmb() then xchg_relaxed(), and an address
        // dependency on the predecessor's node): Release publishes our
        // node's initialisation with the tail, for the successor's swap;
        // Acquire pairs with the Release of the predecessor's swap, so its
        // node's initialisation happens before we link into it.
        let old = self
            .half(TAIL_HALF)
            .swap((tail >> TAIL_IDX_OFFSET) as u16, AcqRel);
        u32::from(old) << TAIL_IDX_OFFSET
    }
}

impl RawLock for QSpinLock {
    const NAME: &'static str = "qspinlock";
    type Node = ();
    const EVENTS: &'static [Event] = &[Event::Pending, Event::Queued, Event::HandedOn];

    /// An acquisition takes the pending path or the queue, not both; and
    /// every node that queued behind another is made head by exactly that
    /// one's hand-on (a head with nobody behind it clears the tail
    /// instead), so the two counts, taken at either end of the queue,
    /// agree once every thread is done.
    fn check_events(e: &Events, acquisitions: u64, _threads: usize) -> Result<(), String> {
        let [pending, queued, behind, handed_on] = [
            Event::Pending,
            Event::Queued,
            Event::QueuedBehind,
            Event::HandedOn,
        ]
        .map(|k| k.of(e));
        if pending + queued > acquisitions || behind > queued || handed_on != behind {
            return Err(format!(
                "{acquisitions} acquisitions: {pending} pending, {queued} queued, \
                 {behind} of them behind another node, {handed_on} hand-ons"
            ));
        }
        Ok(())
    }

    fn new() -> QSpinLock {
        QSpinLock {
            val: AtomicU32::new(0),
        }
    }

    #[inline]
    unsafe fn lock(&self, _: &()) {
        // Acquire: pairs with the Release in unlock(), so the previous
        // holder's critical section happens before ours.
        if let Err(val) = self.val.compare_exchange(0, LOCKED_VAL, Acquire, Relaxed) {
            self.lock_slowpath(val);
        }
    }

    #[inline]
    unsafe fn unlock(&self, _: &()) {
        // Linux's smp_store_release(&lock->locked, 0): a byte store, which
        // leaves a pending bit or tail set meanwhile as it is. Release:
        // pairs with the Acquire of the next owner (lock(), trylock(), the
        // pending waiter's fetch_or or load of this byte, the queue head's
        // load of the word), so our critical section happens before its.
        self.locked().store(0, Release);
    }
}

/// Under loom: the node pool and sub-word views (see the module doc).
#[cfg(loom)]
mod loom_model {
    use super::*;

    impl QSpinLock {
        pub(super) fn byte(&self, offset: usize) -> AtomicU8<'_> {
            AtomicU8::new(&self.val, offset)
        }

        pub(super) fn half(&self, offset: usize) -> AtomicU16<'_> {
            AtomicU16::new(&self.val, offset)
        }

        pub(super) fn locked(&self) -> AtomicU8<'_> {
            self.byte(LOCKED_BYTE)
        }
    }

    loom::lazy_static! {
        pub(super) static ref SLOTS: Vec<Slot> = (0..MAX_THREADS)
            .map(|_| Slot {
                nodes: std::array::from_fn(|_| QNode {
                    next: AtomicPtr::new(ptr::null_mut()),
                    locked: AtomicU32::new(0),
                }),
            })
            .collect();
    }

    /// std's, not loom's: which slot a thread has is bookkeeping, like
    /// Linux's CPU number, and it is freed by the thread-local's destructor,
    /// which loom runs outside its execution.
    pub(super) static SLOT_USED: [std::sync::atomic::AtomicU32; MAX_THREADS / 32] =
        [const { std::sync::atomic::AtomicU32::new(0) }; MAX_THREADS / 32];
}
#[cfg(loom)]
use loom_model::{SLOTS, SLOT_USED};

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn fields_do_not_overlap_and_fill_the_word() {
        let fields = [LOCKED_MASK, PENDING_MASK, TAIL_IDX_MASK, TAIL_CPU_MASK];
        let mut seen = 0u32;
        for f in fields {
            assert_eq!(seen & f, 0, "{f:#x} overlaps");
            seen |= f;
        }
        assert_eq!(seen, u32::MAX);
        assert_eq!(TAIL_CPU_OFFSET, 18);
    }

    #[test]
    fn tail_encoding_round_trips() {
        for cpu in [0, 1, 2, 31, 1023, (1 << TAIL_CPU_BITS) - 2] {
            for idx in 0..MAX_NODES as u32 {
                let tail = encode_tail(cpu, idx);
                assert_ne!(tail, 0);
                assert_eq!(tail & !TAIL_MASK, 0);
                assert_eq!(decode_tail(tail), (cpu, idx));
                // Locked and pending bits do not disturb decoding.
                assert_eq!(decode_tail(tail | LOCKED_PENDING_MASK), (cpu, idx));
            }
        }
    }

    #[test]
    fn uncontended_lock_is_one_bit() {
        let l = QSpinLock::new();
        // SAFETY: this thread locks, then unlocks; qspinlock needs no node.
        unsafe {
            l.lock(&());
            assert_eq!(l.value(), LOCKED_VAL);
            assert!(!l.trylock());
            l.unlock(&());
            assert_eq!(l.value(), 0);
            assert!(l.trylock());
            l.unlock(&());
        }
    }

    #[test]
    fn sub_word_stores_touch_only_their_field() {
        let l = QSpinLock::new();
        let tail = encode_tail(1023, 3);
        l.val.store(tail | PENDING_VAL, Relaxed);
        l.set_locked();
        assert_eq!(l.value(), tail | PENDING_VAL | LOCKED_VAL);
        l.clear_pending();
        assert_eq!(l.value(), tail | LOCKED_VAL);
        l.val.store(tail | PENDING_VAL, Relaxed);
        l.clear_pending_set_locked();
        assert_eq!(l.value(), tail | LOCKED_VAL);
        // SAFETY: the word says locked; nobody else uses this lock.
        unsafe { l.unlock(&()) };
        assert_eq!(l.value(), tail);
    }

    #[test]
    fn xchg_tail_swaps_only_the_tail() {
        let l = QSpinLock::new();
        let (a, b) = (encode_tail(0, 1), encode_tail((1 << TAIL_CPU_BITS) - 2, 3));
        l.val.store(PENDING_VAL | LOCKED_VAL, Relaxed);
        assert_eq!(l.xchg_tail(a), 0);
        assert_eq!(l.value(), a | PENDING_VAL | LOCKED_VAL);
        assert_eq!(l.xchg_tail(b), a);
        assert_eq!(l.value(), b | PENDING_VAL | LOCKED_VAL);
        assert_eq!(decode_tail(l.xchg_tail(0)), ((1 << TAIL_CPU_BITS) - 2, 3));
        assert_eq!(l.value(), PENDING_VAL | LOCKED_VAL);
    }

    #[test]
    fn the_event_invariants_catch_a_lost_hand_on() {
        let mut e = Events::default();
        let mut set = |k: Event, n| e.0[k as usize] = n;
        set(Event::Pending, 3);
        set(Event::Queued, 4);
        set(Event::QueuedBehind, 2);
        set(Event::HandedOn, 2);
        assert_eq!(QSpinLock::check_events(&e, 7, 3), Ok(()));
        assert!(
            QSpinLock::check_events(&e, 6, 3).is_err(),
            "more slow paths than acquisitions"
        );
        e.0[Event::HandedOn as usize] = 1;
        assert!(
            QSpinLock::check_events(&e, 7, 3).is_err(),
            "a queued node nobody handed on to"
        );
    }

    #[test]
    fn live_threads_get_distinct_slots() {
        let barrier = std::sync::Barrier::new(2);
        let cpus: Vec<Option<u32>> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..2)
                .map(|_| {
                    s.spawn(|| {
                        let cpu = THIS_CPU.with(|c| c.cpu);
                        barrier.wait();
                        cpu
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let (a, b) = (cpus[0].unwrap(), cpus[1].unwrap());
        assert_ne!(a, b);
        assert!((a as usize) < MAX_THREADS && (b as usize) < MAX_THREADS);
    }
}
