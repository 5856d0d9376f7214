//! Probes: one out-of-line function per lock operation (or atomic
//! primitive), for the static ordering footprint.
//!
//! A lock's `lock` and `unlock` are generic and inlined into the benchmark
//! loops, so no function of the binary is "ticket's unlock". Each suite's
//! `probes.rs` instantiates, from its own registry of locks, one
//! `#[inline(never)]` function per operation, and reports where each is
//! with the `probes` record (`Out::probes`). Generic functions keep no type
//! in their symbol names (`spinlock::probes::unlock::h6c...` for every
//! lock), so a probe is named by its address instead: its offset from
//! [`lockmatrix_probe_anchor`], a function with a fixed name. Offsets are
//! link-time constants, the same in every run and wherever the binary is
//! loaded; the tool adds one to the anchor's address in the disassembly.

/// The anchor's symbol, as the `probes` record names it.
pub const ANCHOR: &str = "lockmatrix_probe_anchor";

/// The anchor: a function with a fixed symbol, distinct from every other
/// so that no identical-code folding gives it another's address.
#[no_mangle]
#[inline(never)]
pub extern "C" fn lockmatrix_probe_anchor() -> u32 {
    0x4c4d_5052
}

/// One probe: the unit (a lock, or an atomic primitive), the operation,
/// and the function.
#[derive(Clone, Copy, Debug)]
pub struct Probe {
    pub unit: &'static str,
    pub op: &'static str,
    function: *const (),
}

impl Probe {
    /// `function` is the probe's function pointer cast to `*const ()`.
    pub fn new(unit: &'static str, op: &'static str, function: *const ()) -> Probe {
        Probe { unit, op, function }
    }

    /// The probe's code address minus the anchor's.
    pub fn offset(&self) -> i64 {
        let anchor = lockmatrix_probe_anchor as extern "C" fn() -> u32 as *const ();
        code(self.function) as i64 - code(anchor) as i64
    }
}

/// Where a function's code is. On 64-bit big-endian POWER (ELFv1) a
/// function pointer points at a descriptor whose first word is the code's
/// address; everywhere else it is the code's address.
fn code(function: *const ()) -> usize {
    if cfg!(all(
        target_arch = "powerpc64",
        target_endian = "big",
        target_env = "gnu"
    )) {
        // SAFETY: an ELFv1 function descriptor starts with the entry
        // point's address.
        unsafe { *(function as *const usize) }
    } else {
        function as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[inline(never)]
    fn probed() -> u32 {
        std::hint::black_box(7)
    }

    #[test]
    fn an_offset_leads_from_the_anchor_to_the_function() {
        let p = Probe::new("u", "op", probed as fn() -> u32 as *const ());
        let anchor = lockmatrix_probe_anchor as extern "C" fn() -> u32 as usize;
        assert_eq!(
            anchor as i64 + p.offset(),
            probed as fn() -> u32 as usize as i64
        );
        assert_eq!(lockmatrix_probe_anchor(), 0x4c4d_5052);
    }
}
