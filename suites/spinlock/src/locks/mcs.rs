//! MCS queue lock (Mellor-Crummey and Scott).
//!
//! Each waiter enqueues its own node with one swap on the tail and then
//! spins on a flag in that node, which only its predecessor writes: every
//! waiter spins on its own cache line, so a hand-over touches one remote
//! line however many threads wait, and the queue is FIFO. The price is a
//! node per acquisition that must live until unlock, an unlock that may
//! have to wait for a successor to finish linking in, and a fast path
//! (swap to lock, compare-exchange to unlock) costlier than a ticket lock's.
//!
//! Nodes: [`Mcs::lock_with`] / [`Mcs::unlock_with`] take the caller's node.
//! The [`RawLock`] impl uses a per-thread pool of [`MAX_NODES`] nodes (as
//! Linux keeps per-CPU nodes for nesting) and records the holder's node in
//! the lock, so unlock finds it without the caller passing it around.

use super::{RawLock, Spin};
use std::cell::Cell;
use std::ptr;
use std::sync::atomic::{AtomicPtr, AtomicU32, Ordering::*};

/// MCS locks one thread may hold at once through [`RawLock`].
pub const MAX_NODES: usize = 4;

/// A queue node: the waiter's flag and the link to its successor.
pub struct McsNode {
    next: AtomicPtr<McsNode>,
    locked: AtomicU32,
}

impl McsNode {
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
    /// The holder's node, written by the holder after it acquired the lock
    /// and read by it in unlock (the lock's own ordering protects it).
    holder: AtomicPtr<McsNode>,
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

/// This thread's nodes for [`RawLock`] use, and which are in use.
struct Pool {
    nodes: [McsNode; MAX_NODES],
    used: Cell<u32>,
}

thread_local! {
    static POOL: Pool = const {
        Pool {
            nodes: [const { McsNode::new() }; MAX_NODES],
            used: Cell::new(0),
        }
    };
}

impl Pool {
    fn take(&self) -> *const McsNode {
        let used = self.used.get();
        let idx = used.trailing_ones() as usize;
        assert!(
            idx < MAX_NODES,
            "a thread may hold at most {MAX_NODES} MCS locks at once"
        );
        self.used.set(used | 1 << idx);
        &self.nodes[idx]
    }

    fn give(&self, node: *const McsNode) {
        let idx = (node as usize - self.nodes.as_ptr() as usize) / size_of::<McsNode>();
        debug_assert!(idx < MAX_NODES, "MCS unlock on another thread than lock");
        self.used.set(self.used.get() & !(1 << idx));
    }
}

impl RawLock for Mcs {
    const NAME: &'static str = "mcs";

    fn new() -> Mcs {
        Mcs {
            tail: AtomicPtr::new(ptr::null_mut()),
            holder: AtomicPtr::new(ptr::null_mut()),
        }
    }

    #[inline]
    fn lock(&self) {
        let node = POOL.with(Pool::take);
        // SAFETY: the pool keeps the node reserved, and the thread (so its
        // thread-local pool) alive, until `unlock` gives it back.
        unsafe { self.lock_with(&*node) };
        self.holder.store(node as *mut McsNode, Relaxed);
    }

    #[inline]
    fn unlock(&self) {
        let node = self.holder.load(Relaxed);
        // SAFETY: we hold the lock through `node` (see `RawLock`: unlock is
        // called by the thread that locked).
        unsafe { self.unlock_with(&*node) };
        POOL.with(|pool| pool.give(node));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn explicit_nodes_and_nesting() {
        let (a, b) = (Mcs::new(), Mcs::new());
        let node = McsNode::new();
        unsafe {
            a.lock_with(&node);
            a.unlock_with(&node);
        }
        assert!(a.tail.load(Relaxed).is_null());
        // Nested RawLock use takes two pool nodes and returns both.
        a.lock();
        b.lock();
        b.unlock();
        a.unlock();
        assert!(a.tail.load(Relaxed).is_null() && b.tail.load(Relaxed).is_null());
        POOL.with(|p| assert_eq!(p.used.get(), 0));
    }
}
