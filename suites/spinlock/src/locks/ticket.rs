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
//!
//! Events: each acquisition that waits (`Wait`), and how many tickets were
//! ahead of its own when it drew it (`WaitersAhead`: the holder's and the
//! waiters', as far as its load of `owner` saw), the queue's depth, which
//! the two counters of a ticket lock show for free.

use super::{RawLock, Spin};
use crate::events::{self, Event, Events};
use crate::sync::atomic::{AtomicU32, Ordering::*};

pub struct Ticket {
    /// The next ticket to hand out.
    next: AtomicU32,
    /// The ticket being served; written only by the holder.
    owner: AtomicU32,
}

impl Ticket {
    /// Waits for `ticket` to be served; the fast path saw `owner` served.
    #[cold]
    #[inline(never)]
    fn wait(&self, ticket: u32, owner: u32) {
        events::count(Event::Wait);
        events::add(Event::WaitersAhead, u64::from(ticket.wrapping_sub(owner)));
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
    const EVENTS: &'static [Event] = &[Event::Wait, Event::WaitersAhead];

    /// A wait saw at least one ticket ahead, the holder's: `owner` only
    /// grows and has not reached our ticket. Not at most one per other
    /// thread, though each holds one ticket at a time: the fast path's load
    /// of `owner` may read a value older than the latest (nothing orders it
    /// after the last unlock the `next` we drew followed), as the model
    /// check finds with two threads and a wait that saw two ahead.
    fn check_events(e: &Events, acquisitions: u64, _threads: usize) -> Result<(), String> {
        let (waits, ahead) = (Event::Wait.of(e), Event::WaitersAhead.of(e));
        if waits > acquisitions || ahead < waits {
            return Err(format!(
                "{waits} waits of {acquisitions} acquisitions saw {ahead} tickets ahead; \
                 each wait sees 1 or more"
            ));
        }
        Ok(())
    }

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
        let owner = self.owner.load(Acquire);
        if owner != ticket {
            self.wait(ticket, owner);
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

/// For the FIFO model (`model/ticket.rs`) and the tests, which must see a
/// waiter in line.
#[cfg(any(test, loom))]
impl Ticket {
    /// Tickets drawn and not yet served: the holder and its waiters.
    pub(crate) fn in_line(&self) -> u32 {
        self.next
            .load(Relaxed)
            .wrapping_sub(self.owner.load(Relaxed))
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::time::Duration;

    /// The holder of ticket 0 lets three threads draw tickets 1 to 3 and
    /// wait, then leaves: their own counts, and so their sum.
    fn three_behind_the_holder() -> Vec<Events> {
        let l = Ticket::new();
        // SAFETY: this thread locks, and unlocks below; no node.
        unsafe { l.lock(&()) };
        std::thread::scope(|s| {
            let waiters: Vec<_> = (0..3)
                .map(|_| {
                    s.spawn(|| {
                        let before = events::counts();
                        // SAFETY: lock then unlock on this thread.
                        unsafe {
                            l.lock(&());
                            l.unlock(&());
                        }
                        events::counts().since(before)
                    })
                })
                .collect();
            while l.in_line() < 4 {
                std::thread::yield_now();
            }
            // Time to look at `owner` before it moves.
            std::thread::sleep(Duration::from_millis(20));
            // SAFETY: this thread holds ticket 0.
            unsafe { l.unlock(&()) };
            waiters.into_iter().map(|w| w.join().unwrap()).collect()
        })
    }

    #[test]
    fn each_waiter_counts_the_tickets_ahead_of_its_own() {
        // A waiter slower than the sleep to look at `owner` sees fewer
        // ahead, or none: that run proves less, so it is tried again.
        for _ in 0..10 {
            let per = three_behind_the_holder();
            let total: Events = per.iter().copied().sum();
            assert_eq!(Ticket::check_events(&total, 4, 4), Ok(()), "{per:?}");
            let mut ahead: Vec<u64> = per.iter().map(|e| Event::WaitersAhead.of(e)).collect();
            ahead.sort_unstable();
            if ahead == [1, 2, 3] {
                assert_eq!(Event::Wait.of(&total), 3);
                assert_eq!(Event::WaitersAhead.of(&total), 6);
                return;
            }
        }
        panic!("no run of 10 had three waiters in line");
    }

    #[test]
    fn a_wait_must_see_the_holder_ahead() {
        let mut e = Events::default();
        e.0[Event::Wait as usize] = 2;
        e.0[Event::WaitersAhead as usize] = 1;
        assert!(Ticket::check_events(&e, 10, 4).is_err());
        e.0[Event::WaitersAhead as usize] = 2;
        assert_eq!(Ticket::check_events(&e, 10, 4), Ok(()));
        assert!(
            Ticket::check_events(&e, 1, 4).is_err(),
            "more waits than acquisitions"
        );
    }
}
