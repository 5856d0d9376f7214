//! The probes of the static ordering footprint: one `#[inline(never)]`
//! function per lock and operation, made for each lock of `LOCKS` by
//! [`of`], so a lock added there gets its probes with nothing else to do.
//! Their addresses go out in the `probes` record (`harness::probe`); the
//! tool finds them in the binary's disassembly and follows their calls.

use crate::locks::RawRwLock;
use harness::probe::Probe;

#[inline(never)]
pub fn read_lock<L: RawRwLock>(l: &L) {
    l.read_lock();
}

#[inline(never)]
pub fn read_unlock<L: RawRwLock>(l: &L) {
    l.read_unlock();
}

#[inline(never)]
pub fn write_lock<L: RawRwLock>(l: &L) {
    l.write_lock();
}

#[inline(never)]
pub fn write_unlock<L: RawRwLock>(l: &L) {
    l.write_unlock();
}

/// `L`'s four probes.
pub fn of<L: RawRwLock>() -> [Probe; 4] {
    let probe = |op, f: fn(&L)| Probe::new(L::NAME, op, f as *const ());
    [
        probe("read_lock", read_lock::<L>),
        probe("read_unlock", read_unlock::<L>),
        probe("write_lock", write_lock::<L>),
        probe("write_unlock", write_unlock::<L>),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_lock_has_four_probes_that_work() {
        for (name, _, _, probes) in crate::LOCKS {
            let probes = probes();
            let ops: Vec<_> = probes.iter().map(|p| (p.unit, p.op)).collect();
            assert_eq!(
                ops,
                [
                    (name, "read_lock"),
                    (name, "read_unlock"),
                    (name, "write_lock"),
                    (name, "write_unlock")
                ]
            );
        }
        fn exercise<L: RawRwLock>() {
            let l = L::new();
            read_lock(&l);
            read_lock(&l);
            read_unlock(&l);
            read_unlock(&l);
            write_lock(&l);
            write_unlock(&l);
        }
        exercise::<crate::locks::LinuxRwsem>();
        exercise::<crate::locks::StdRwLock>();
        exercise::<crate::locks::FairRwSpin>();
        exercise::<crate::locks::ParkingLotRwLock>();
        exercise::<crate::locks::SpinRwLock>();
    }
}
