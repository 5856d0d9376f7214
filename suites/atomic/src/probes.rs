//! The probes of the static ordering footprint: the functions the
//! benchmark calls through its registry (`ops::cas_variants`,
//! `ops::add_return_variants`, and the fence), so a primitive added there
//! is probed with nothing else to do. Each is already a function of its
//! own (the benchmark calls it through a pointer); the `probes` record
//! (`harness::probe`) says where it is, as unit = the op's name, op "op".

use crate::ops;
use harness::probe::Probe;

/// Every primitive's probe, in the benchmark's order.
pub fn all() -> Vec<Probe> {
    let mut probes: Vec<Probe> = Vec::new();
    for (name, cas) in ops::cas_variants() {
        probes.push(Probe::new(name, "op", cas as *const ()));
    }
    for (name, add) in ops::add_return_variants() {
        probes.push(Probe::new(name, "op", add as *const ()));
    }
    let fence = ops::fence_seqcst as fn();
    probes.push(Probe::new("fence", "op", fence as *const ()));
    probes
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_primitive_is_probed_once() {
        let names: Vec<&str> = all().iter().map(|p| p.unit).collect();
        let mut expected: Vec<&str> = ops::cas_variants().iter().map(|v| v.0).collect();
        expected.extend(ops::add_return_variants().iter().map(|v| v.0));
        expected.push("fence");
        assert_eq!(names, expected);
        assert!(all().iter().all(|p| p.op == "op"));
    }
}
