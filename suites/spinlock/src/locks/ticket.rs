//! Ticket lock: take a number, wait until it is served.
//!
//! Provenance: the ticket spinlock x86 Linux used from v2.6.25 until v4.2
//! (`arch/x86/include/asm/spinlock.h`), `next` and `owner` as two 32-bit
//! words rather than two halves of one; no paravirt slow path.
//!
//! One fetch-add hands out tickets, so waiters are served strictly in FIFO
//! order (fair, no starvation) and unlock is a plain store by the owner. The
//! price is that every waiter spins on the same `owner` word: each unlock
//! invalidates all their copies and they all re-read it, so the hand-over
//! cost grows with the number of waiters, and a preempted next-in-line
//! stalls everyone behind it. This is the pre-qspinlock Linux lock that
//! seed 001 compares against (`next` and `owner` in one cache line, as its
//! two halves were in one word).
//!
//! Model-checked under `--cfg loom` (`model/ticket.rs`) as it is: loom's
//! atomics and spin-wait step come in through `crate::sync`.

use super::{RawLock, Spin};
use crate::sync::atomic::{AtomicU32, Ordering::*};

pub struct Ticket {
    /// The next ticket to hand out.
    next: AtomicU32,
    /// The ticket being served; written only by the holder.
    owner: AtomicU32,
}

impl Ticket {
    #[cold]
    #[inline(never)]
    fn wait(&self, ticket: u32) {
        // Acquire: pairs with the Release in unlock(), as in lock().
        let mut spin = Spin::new();
        while self.owner.load(Acquire) != ticket {
            spin.relax();
        }
    }
}

impl RawLock for Ticket {
    const NAME: &'static str = "ticket";
    type Node = ();

    fn new() -> Ticket {
        Ticket {
            next: AtomicU32::new(0),
            owner: AtomicU32::new(0),
        }
    }

    #[inline]
    unsafe fn lock(&self, _: &()) {
        // The wrapping counters stay correct with fewer than 2^32 waiters.
        // Relaxed: a ticket is only a place in line; the Acquire below
        // orders us after the previous holder.
        let ticket = self.next.fetch_add(1, Relaxed);
        // Acquire: pairs with the Release in unlock() that served our
        // ticket, so the previous holder's critical section happens before
        // ours.
        if self.owner.load(Acquire) != ticket {
            self.wait(ticket);
        }
    }

    #[inline]
    unsafe fn unlock(&self, _: &()) {
        // Relaxed: only the holder writes `owner`, and we are it.
        let served = self.owner.load(Relaxed);
        // Release: pairs with the Acquire load of `owner` by the holder of
        // the next ticket, so our critical section happens before its.
        self.owner.store(served.wrapping_add(1), Release);
    }
}

/// For the FIFO model (`model/ticket.rs`), which must see a waiter in line.
#[cfg(loom)]
impl Ticket {
    /// Tickets drawn and not yet served: the holder and its waiters.
    pub(crate) fn in_line(&self) -> u32 {
        self.next
            .load(Relaxed)
            .wrapping_sub(self.owner.load(Relaxed))
    }
}
