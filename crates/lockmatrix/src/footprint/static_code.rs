//! The static footprint: each probe's code in the disassembled binary,
//! following its calls (see the module doc of `footprint` for how a
//! function is attributed, and `symbols` for which calls are followed).

use super::classify::{classify, classify_call, Classified, Isa};
use super::entry::{entries, Entry, Key};
use super::error::FootprintError;
use super::objdump::{self, transfer, Disassembly, Transfer};
use super::symbols::{self, Callee};
use crate::config::Target;
use crate::protocol::Probes;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet, VecDeque};
use std::path::{Path, PathBuf};

/// One operation's whole code, by ordering instruction.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct StaticFootprint {
    /// Classified instructions and outlined calls, each static occurrence
    /// once, in class and name order.
    pub entries: Vec<Entry<u32>>,
    /// The functions whose code counted, demangled, in the order reached:
    /// the probe first.
    pub followed: Vec<String>,
    /// Functions called but not followed (std, the harness, libc), sorted.
    pub stopped: Vec<String>,
    /// Calls through a register (not followed).
    pub indirect_calls: u32,
    /// Instructions in the followed functions.
    pub insns: u32,
}

/// Every probe's static footprint, from `binary`'s disassembly by
/// `objdump` and the suite's `probes` record.
pub fn static_footprint(
    isa: Isa,
    objdump: &Path,
    binary: &Path,
    probes: &Probes,
) -> Result<BTreeMap<Key, StaticFootprint>, FootprintError> {
    let d = Disassembly::of(objdump, binary)?;
    of_disassembly(isa, &d, probes, binary)
}

/// [`static_footprint`] for one of the matrix's targets: its instruction
/// set from its triple, its objdump beside its linker (`objdump::program`).
pub fn for_target(
    target: &Target,
    binary: &Path,
    probes: &Probes,
) -> Result<BTreeMap<Key, StaticFootprint>, FootprintError> {
    let (isa, objdump) = isa_and_objdump(target)?;
    static_footprint(isa, &objdump, binary, probes)
}

fn isa_and_objdump(target: &Target) -> Result<(Isa, PathBuf), FootprintError> {
    let isa = Isa::from_triple(&target.triple).ok_or_else(|| FootprintError::UnknownArch {
        triple: target.triple.clone(),
    })?;
    let (objdump, _) = objdump::program(target.linker.as_deref().unwrap_or("cc"));
    Ok((isa, objdump))
}

/// One binary to footprint, for [`static_footprints`].
#[derive(Clone, Debug)]
pub struct StaticJob {
    pub isa: Isa,
    pub objdump: PathBuf,
    pub binary: PathBuf,
    pub probes: Probes,
}

impl StaticJob {
    pub fn for_target(
        target: &Target,
        binary: &Path,
        probes: &Probes,
    ) -> Result<StaticJob, FootprintError> {
        let (isa, objdump) = isa_and_objdump(target)?;
        Ok(StaticJob {
            isa,
            objdump,
            binary: binary.to_path_buf(),
            probes: probes.clone(),
        })
    }
}

/// Several binaries' footprints, `parallel` objdumps at a time (each is
/// one process over one binary, most of the cost); results in job order.
pub fn static_footprints(
    jobs: &[StaticJob],
    parallel: usize,
) -> Vec<Result<BTreeMap<Key, StaticFootprint>, FootprintError>> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: std::sync::Mutex<Vec<Option<_>>> =
        std::sync::Mutex::new((0..jobs.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..parallel.max(1) {
            s.spawn(|| loop {
                // Relaxed: the counter only hands out indices.
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(j) = jobs.get(i) else { break };
                let r = static_footprint(j.isa, &j.objdump, &j.binary, &j.probes);
                results.lock().unwrap_or_else(|e| e.into_inner())[i] = Some(r);
            });
        }
    });
    results
        .into_inner()
        .unwrap_or_else(|e| e.into_inner())
        .into_iter()
        .map(|r| r.expect("every job ran"))
        .collect()
}

/// The footprints from a parsed disassembly (`binary` names it in errors).
pub fn of_disassembly(
    isa: Isa,
    d: &Disassembly,
    probes: &Probes,
    binary: &Path,
) -> Result<BTreeMap<Key, StaticFootprint>, FootprintError> {
    let anchor = d
        .by_name(&probes.anchor)
        .ok_or_else(|| FootprintError::NoAnchor {
            anchor: probes.anchor.clone(),
            binary: binary.to_path_buf(),
        })?;
    let anchor = d.functions[anchor].start;
    let mut out = BTreeMap::new();
    for p in &probes.probes {
        let addr = anchor.wrapping_add_signed(p.offset);
        let start = d
            .containing(addr)
            .filter(|&i| d.functions[i].start == addr)
            .ok_or_else(|| FootprintError::NoProbe {
                unit: p.unit.clone(),
                op: p.op.clone(),
                addr,
                binary: binary.to_path_buf(),
            })?;
        let key = (probes.suite.clone(), p.unit.clone(), p.op.clone());
        out.insert(key, walk(isa, d, start));
    }
    Ok(out)
}

/// One operation's footprint: the function at `start` and every lock
/// function it reaches, each once.
fn walk(isa: Isa, d: &Disassembly, start: usize) -> StaticFootprint {
    let mut counts: BTreeMap<Classified, u32> = BTreeMap::new();
    let mut seen: BTreeSet<usize> = BTreeSet::from([start]);
    let mut queue = VecDeque::from([start]);
    let mut followed = Vec::new();
    let mut stopped = BTreeSet::new();
    let (mut indirect_calls, mut insns) = (0, 0);
    while let Some(f) = queue.pop_front() {
        let function = &d.functions[f];
        followed.push(symbols::display(isa, &function.name));
        for insn in &function.insns {
            insns += 1;
            if let Some(c) = classify(isa, &insn.text) {
                *counts.entry(c).or_default() += 1;
            }
            let target = match transfer(isa.arch, &insn.text) {
                Some(Transfer::Direct(t)) => t,
                Some(Transfer::Slot(s)) if d.slots.contains_key(&s) => d.slots[&s],
                Some(Transfer::Slot(_) | Transfer::IndirectCall) => {
                    indirect_calls += 1;
                    continue;
                }
                None => continue,
            };
            let Some(g) = d.containing(target).filter(|&g| g != f) else {
                continue;
            };
            let callee = &d.functions[g].name;
            if let Some(c) = classify_call(isa, isa.symbol(callee)) {
                *counts.entry(c).or_default() += 1;
            }
            match symbols::callee(isa, callee) {
                Callee::Follow => {
                    if seen.insert(g) {
                        queue.push_back(g);
                    }
                }
                Callee::Stop => {
                    stopped.insert(symbols::display(isa, callee));
                }
            }
        }
    }
    StaticFootprint {
        entries: entries(counts),
        followed,
        stopped: stopped.into_iter().collect(),
        indirect_calls,
        insns,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::footprint::Class;
    use crate::protocol::Probe;

    /// A disassembly shaped like objdump's for aarch64: a probe calling a
    /// slow path (twice), an outlined helper and std; the slow path tail-
    /// jumps back into the helper.
    const DIS: &str = "
0000000000400000 <lockmatrix_probe_anchor>:
  400000:\tmov\tw0, #0x5052                \t// #20562
  400004:\tret

0000000000400010 <_ZN8spinlock6probes4lock17h0000000000000001E>:
  400010:\tldaxr\tw8, [x0]
  400014:\tbl\t400100 <__aarch64_cas4_acq>
  400018:\tcbz\tw0, 400010 <_ZN8spinlock6probes4lock17h0000000000000001E>
  40001c:\tbl\t400040 <_ZN8spinlock5locks4Slow4slow17h0000000000000002E>
  400020:\tbl\t400040 <_ZN8spinlock5locks4Slow4slow17h0000000000000002E>
  400024:\tbl\t400200 <_ZN3std6thread9yield_now17h0000000000000003E>
  400028:\tblr\tx8
  40002c:\tret

0000000000400040 <_ZN8spinlock5locks4Slow4slow17h0000000000000002E>:
  400040:\tdmb\tishld
  400044:\tb\t400100 <__aarch64_cas4_acq>

0000000000400100 <__aarch64_cas4_acq>:
  400100:\tcasa\tw0, w1, [x2]
  400104:\tret

0000000000400200 <_ZN3std6thread9yield_now17h0000000000000003E>:
  400200:\tdmb\tish
  400204:\tret
";

    /// From the x86_64 spinlock binary (static-pie): `yield_now` reaches
    /// std through a GOT slot, which `objdump -R` says holds 0xae200.
    const X86_DIS: &str = "
0000000000077440 <lockmatrix_probe_anchor>:
   77440:\tmov    $0x4c4d5052,%eax
   77445:\tret

0000000000077470 <_ZN8spinlock5locks9yield_now17h6a14d68928213db0E>:
   77470:\tjmp    *0xfc0ca(%rip)        # 173540 <_DYNAMIC+0x3a8>
   77476:\tint3

00000000000ae200 <_ZN3std6thread9yield_now17h0000000000000003E>:
   ae200:\tmov    $0x18,%eax
   ae205:\tsyscall
";

    const X86_RELOCS: &str = "
DYNAMIC RELOCATION RECORDS
OFFSET           TYPE              VALUE
0000000000173540 R_X86_64_RELATIVE  *ABS*+0x00000000000ae200
0000000000173548 R_X86_64_IRELATIVE  *ABS*+0x0000000000012340
";

    #[test]
    fn a_call_through_a_relocated_slot_is_a_call() {
        let x86 = Isa::from_triple("x86_64-unknown-linux-gnu").unwrap();
        let mut d = Disassembly::parse(X86_DIS);
        d.slots = objdump::relative_slots(X86_RELOCS);
        assert_eq!(d.slots.len(), 1, "IRELATIVE slots are unknown");
        let probes = Probes {
            suite: "spinlock".into(),
            anchor: "lockmatrix_probe_anchor".into(),
            probes: vec![Probe {
                unit: "x".into(),
                op: "yield".into(),
                offset: 0x30,
            }],
        };
        let all = of_disassembly(x86, &d, &probes, Path::new("spinlock")).unwrap();
        let f = &all[&("spinlock".into(), "x".into(), "yield".into())];
        assert_eq!(f.stopped, ["std::thread::yield_now"]);
        assert_eq!(f.indirect_calls, 0);
        // Without the relocations the slot is unknown: an indirect call.
        d.slots.clear();
        let all = of_disassembly(x86, &d, &probes, Path::new("spinlock")).unwrap();
        let f = &all[&("spinlock".into(), "x".into(), "yield".into())];
        assert_eq!((f.stopped.len(), f.indirect_calls), (0, 1));
    }

    #[test]
    fn a_probe_counts_its_callees_once_and_stops_at_std() {
        let a64 = Isa::from_triple("aarch64-unknown-linux-gnu").unwrap();
        let d = Disassembly::parse(DIS);
        let probes = Probes {
            suite: "spinlock".into(),
            anchor: "lockmatrix_probe_anchor".into(),
            probes: vec![Probe {
                unit: "ticket".into(),
                op: "lock".into(),
                offset: 0x10,
            }],
        };
        let all = of_disassembly(a64, &d, &probes, Path::new("spinlock")).unwrap();
        let f = &all[&("spinlock".into(), "ticket".into(), "lock".into())];
        let got: Vec<(Class, &str, u32)> = f
            .entries
            .iter()
            .map(|e| (e.class, e.insn.as_str(), e.count))
            .collect();
        assert_eq!(
            got,
            [
                (Class::FullBarrier, "dmb ishld", 1),
                // Two call sites (the probe's call, the slow path's tail
                // jump), one body.
                (Class::OneWay, "call __aarch64_cas4_acq", 2),
                (Class::OneWay, "casa", 1),
                (Class::OneWay, "ldaxr", 1),
            ]
        );
        assert_eq!(
            f.followed,
            [
                "spinlock::probes::lock",
                "__aarch64_cas4_acq",
                "spinlock::locks::Slow::slow"
            ]
        );
        assert_eq!(f.stopped, ["std::thread::yield_now"]);
        assert_eq!((f.indirect_calls, f.insns), (1, 12));

        let mut wrong = probes.clone();
        wrong.probes[0].offset = 0x14;
        assert!(matches!(
            of_disassembly(a64, &d, &wrong, Path::new("spinlock")),
            Err(FootprintError::NoProbe { addr: 0x400014, .. })
        ));
        wrong.anchor = "nothing".into();
        assert!(matches!(
            of_disassembly(a64, &d, &wrong, Path::new("spinlock")),
            Err(FootprintError::NoAnchor { .. })
        ));
    }
}
