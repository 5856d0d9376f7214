//! The probes of the static ordering footprint: one `#[inline(never)]`
//! function per lock and operation, made from the `locks!` registry, so a
//! lock added there gets its probes with nothing else to do. Their
//! addresses go out in the `probes` record (`harness::probe`); the tool
//! finds them in the binary's disassembly and follows their calls.

use crate::locks::{self, LockVisitor, RawLock};
use harness::probe::Probe;

/// `L`'s lock as a function of its own (its inlined body is the lock's
/// fast path; what the compiler kept out of line, it calls).
///
/// # Safety
/// As [`RawLock::lock`].
#[inline(never)]
pub unsafe fn lock<L: RawLock>(l: &L, node: &L::Node) {
    // SAFETY: the caller keeps `RawLock::lock`'s contract.
    unsafe { l.lock(node) }
}

/// `L`'s unlock as a function of its own.
///
/// # Safety
/// As [`RawLock::unlock`].
#[inline(never)]
pub unsafe fn unlock<L: RawLock>(l: &L, node: &L::Node) {
    // SAFETY: the caller keeps `RawLock::unlock`'s contract.
    unsafe { l.unlock(node) }
}

struct Collect<'a>(&'a mut Vec<Probe>);

impl LockVisitor for Collect<'_> {
    type Output = ();

    fn visit<L: RawLock>(self) {
        let lock = lock::<L> as unsafe fn(&L, &L::Node);
        let unlock = unlock::<L> as unsafe fn(&L, &L::Node);
        self.0.push(Probe::new(L::NAME, "lock", lock as *const ()));
        self.0
            .push(Probe::new(L::NAME, "unlock", unlock as *const ()));
    }
}

/// Every lock's probes, in the order of `locks::names()`.
pub fn all() -> Vec<Probe> {
    let mut probes = Vec::new();
    for name in locks::names() {
        locks::visit(name, Collect(&mut probes));
    }
    probes
}

#[cfg(test)]
mod tests {
    use super::*;

    struct LockTwice;

    impl LockVisitor for LockTwice {
        type Output = ();

        fn visit<L: RawLock>(self) {
            let (l, node) = (L::new(), L::Node::default());
            for _ in 0..2 {
                // SAFETY: one thread, one node, lock then unlock.
                unsafe {
                    lock(&l, &node);
                    unlock(&l, &node);
                }
            }
        }
    }

    #[test]
    fn every_lock_has_a_lock_and_an_unlock_probe_that_work() {
        let probes = all();
        assert_eq!(probes.len(), 2 * locks::names().len());
        for (pair, name) in probes.chunks(2).zip(locks::names()) {
            assert_eq!((pair[0].unit, pair[0].op), (*name, "lock"));
            assert_eq!((pair[1].unit, pair[1].op), (*name, "unlock"));
            // Two functions (identical code may share one address, but a
            // lock's lock is never its unlock).
            assert_ne!(pair[0].offset(), pair[1].offset(), "{name}");
            locks::visit(name, LockTwice);
        }
    }
}
