//! MCS queue lock (Mellor-Crummey and Scott).
//!
//! Provenance: "Algorithms for scalable synchronization on shared-memory
//! multiprocessors" (Mellor-Crummey and Scott, 1991), as Linux's
//! `kernel/locking/mcs_spinlock.h` writes it (v6.6): swap to enqueue,
//! compare-exchange to unlock with no successor; the node is the caller's.
//!
//! Each waiter enqueues its own node with one swap on the tail and then
//! spins on a flag in that node, which only its predecessor writes: every
//! waiter spins on its own cache line, so a hand-over touches one remote
//! line however many threads wait, and the queue is FIFO. The price is a
//! node per acquisition that must live until unlock, an unlock that may
//! have to wait for a successor to finish linking in, and a fast path
//! (swap to lock, compare-exchange to unlock) costlier than a ticket lock's.
//!
//! Nodes: the caller's, as [`RawLock::Node`] (ck's `LOCK_STATE`): the
//! benchmark gives each thread one node for all its acquisitions, so the
//! fast path is the swap and the compare-exchange and nothing else.
//!
//! Under `--cfg loom` (the model check, `model/mcs.rs`) the code is this
//! file's with loom's atomics, and `McsNode::new` is not a `const fn`
//! (loom's atomics are not `const`).
//!
//! Events: each acquisition that queued behind a predecessor (`Queued`;
//! each is handed the lock by one unlock, so it counts the hand-overs too),
//! and each unlock that had to wait for its successor to link in
//! (`SuccessorWait`). How many waited ahead of a node is not counted: the
//! one swap that enqueues it shows only its predecessor, and the queue has
//! no word that counts its waiters (a ticket lock's two counters do), so
//! knowing it would take a shared count the lock does not keep.

use super::{RawLock, Spin};
use crate::events::{self, Event, Events};
use crate::sync::atomic::{AtomicPtr, AtomicU32, Ordering::*};
use std::ptr;

/// A queue node: the waiter's flag and the link to its successor.
pub struct McsNode {
    next: AtomicPtr<McsNode>,
    locked: AtomicU32,
}

impl McsNode {
    #[cfg(not(loom))]
    pub const fn new() -> McsNode {
        McsNode {
            next: AtomicPtr::new(ptr::null_mut()),
            locked: AtomicU32::new(0),
        }
    }
}

impl Default for McsNode {
    fn default() -> McsNode {
        McsNode::new()
    }
}

pub struct Mcs {
    /// The last node in the queue; null when the lock is free.
    tail: AtomicPtr<McsNode>,
}

impl Mcs {
    /// Acquires the lock using `node` as this acquisition's queue node.
    ///
    /// # Safety
    /// `node` must stay alive and unused by anything else until the matching
    /// [`Mcs::unlock_with`] with the same node has returned.
    #[inline]
    pub unsafe fn lock_with(&self, node: &McsNode) {
        let me = node as *const McsNode as *mut McsNode;
        node.next.store(ptr::null_mut(), Relaxed);
        node.locked.store(0, Relaxed);
        // Release publishes the node's initialisation to the successor that
        // will link into it; Acquire pairs with the previous holder's
        // releasing compare-exchange (free lock) or makes the predecessor's
        // node initialisation visible before we write its `next`.
        let prev = self.tail.swap(me, AcqRel);
        if !prev.is_null() {
            // SAFETY: a node in the queue stays alive until its owner has
            // handed the lock on, which needs this link first.
            unsafe { Self::wait_in_queue(&*prev, node) };
        }
    }

    #[cold]
    #[inline(never)]
    fn wait_in_queue(prev: &McsNode, node: &McsNode) {
        events::count(Event::Queued);
        // Release: pairs with the Acquire load of `next` in our
        // predecessor's unlock_with() or wait_for_successor(), so our node's
        // initialisation (locked = 0) happens before it sets our flag.
        prev.next
            .store(node as *const McsNode as *mut McsNode, Release);
        // Acquire: pairs with the Release store of our flag in the
        // predecessor's unlock_with(), so its critical section happens
        // before ours.
        let mut spin = Spin::new();
        while node.locked.load(Acquire) == 0 {
            spin.relax();
        }
    }

    /// Releases the lock taken with [`Mcs::lock_with`] on the same `node`.
    ///
    /// # Safety
    /// The caller holds the lock through `node`.
    #[inline]
    pub unsafe fn unlock_with(&self, node: &McsNode) {
        let me = node as *const McsNode as *mut McsNode;
        // Acquire: pairs with the Release store of `next` in the successor's
        // wait_in_queue(), so its node's initialisation happens before we
        // write its flag.
        let mut next = node.next.load(Acquire);
        if next.is_null() {
            // Release: pairs with the Acquire of the next locker's swap on
            // the tail, so our critical section happens before its.
            if self
                .tail
                .compare_exchange(me, ptr::null_mut(), Release, Relaxed)
                .is_ok()
            {
                return;
            }
            next = Self::wait_for_successor(node);
        }
        // SAFETY: the successor spins on its node until this store.
        // Release: pairs with the Acquire spin in the successor's
        // wait_in_queue(), so our critical section happens before its.
        unsafe { (*next).locked.store(1, Release) };
    }

    /// A successor swapped itself into the tail but has not linked in yet.
    #[cold]
    #[inline(never)]
    fn wait_for_successor(node: &McsNode) -> *mut McsNode {
        events::count(Event::SuccessorWait);
        let mut spin = Spin::new();
        loop {
            // Acquire: as in unlock_with(), pairs with the successor's
            // Release store of `next`.
            let next = node.next.load(Acquire);
            if !next.is_null() {
                return next;
            }
            spin.relax();
        }
    }
}

impl RawLock for Mcs {
    const NAME: &'static str = "mcs";
    type Node = McsNode;
    const EVENTS: &'static [Event] = &[Event::Queued, Event::SuccessorWait];

    /// An unlock waits only for a successor that swapped itself in, which
    /// then queued.
    fn check_events(e: &Events, acquisitions: u64, _threads: usize) -> Result<(), String> {
        let (queued, waits) = (Event::Queued.of(e), Event::SuccessorWait.of(e));
        if queued > acquisitions || waits > queued {
            return Err(format!(
                "{queued} of {acquisitions} acquisitions queued, \
                 and {waits} unlocks waited for a successor"
            ));
        }
        Ok(())
    }

    fn new() -> Mcs {
        Mcs {
            tail: AtomicPtr::new(ptr::null_mut()),
        }
    }

    #[inline]
    unsafe fn lock(&self, node: &McsNode) {
        // SAFETY: the caller keeps `node` in place and to itself until
        // unlock (RawLock's contract is lock_with's).
        unsafe { self.lock_with(node) }
    }

    #[inline]
    unsafe fn unlock(&self, node: &McsNode) {
        // SAFETY: the caller holds the lock through `node`.
        unsafe { self.unlock_with(node) }
    }
}

#[cfg(loom)]
impl McsNode {
    pub fn new() -> McsNode {
        McsNode {
            next: AtomicPtr::new(ptr::null_mut()),
            locked: AtomicU32::new(0),
        }
    }
}

/// For the FIFO model (`model/mcs.rs`), which must see a waiter in line.
#[cfg(loom)]
impl Mcs {
    /// Another node swapped itself in after `node`'s.
    pub(crate) fn queued_after(&self, node: &McsNode) -> bool {
        !ptr::eq(self.tail.load(Relaxed), node)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn caller_nodes_and_nesting() {
        let (a, b) = (Mcs::new(), Mcs::new());
        let (na, nb) = (McsNode::new(), McsNode::new());
        // SAFETY: each node stays put and serves one acquisition at a time.
        unsafe {
            a.lock(&na);
            // Nested: a second lock, a second node.
            b.lock(&nb);
            b.unlock(&nb);
            a.unlock(&na);
            // A node is reused once its acquisition is over.
            a.lock(&na);
            a.unlock(&na);
        }
        assert!(a.tail.load(Relaxed).is_null() && b.tail.load(Relaxed).is_null());
    }
}
