//! The executed footprint: a counted cell's `executed` record (QEMU's
//! disassembly text -> executions per op, symbol -> entries per op)
//! classified by the table.

use super::classify::{classify, classify_call, Classified, Isa};
use super::entry::{entries, Entry};
use crate::protocol::Executed;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// What one operation executed, by ordering instruction, per op.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ExecutedFootprint {
    /// Classified instructions and outlined calls (entries into an
    /// `__aarch64_*` helper), per op, in class and name order.
    pub entries: Vec<Entry<f64>>,
    /// Instructions per op, all of them: the cell's `insns_per_op`.
    pub insns: f64,
}

/// Classifies `record`, executed on `isa`.
pub fn executed(isa: Isa, record: &Executed) -> ExecutedFootprint {
    let mut counts: BTreeMap<Classified, f64> = BTreeMap::new();
    for (text, &n) in &record.per_op {
        if let Some(c) = classify(isa, text) {
            *counts.entry(c).or_default() += n;
        }
    }
    for (symbol, &n) in &record.entered {
        if let Some(c) = classify_call(isa, symbol) {
            *counts.entry(c).or_default() += n;
        }
    }
    // The loops' own instructions may cancel to zero; ordering ones are
    // never in the empty loop, but a zero says nothing either way.
    counts.retain(|_, n| *n != 0.0);
    ExecutedFootprint {
        entries: entries(counts),
        insns: record.per_op.values().sum(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::footprint::Class;

    /// The executed record of spinlock's `lock_unlock` cell for the ticket
    /// lock under qemu-aarch64 (QEMU's default CPU: LSE), as the suite
    /// printed it in a `cargo xtask matrix --targets aarch64` run of this
    /// branch.
    const TICKET_AARCH64: &str = r#"{"type":"executed","suite":"spinlock","bench":"lock_unlock","case":{"lock":"ticket","threads":1},"round":0,"per_op":{".byte 0x20, 0x00, 0x20, 0xb8":1.0,"add w8, w8, #1":1.0,"add x24, x24, #1":1.0,"add x26, x23, #4":1.0,"add x9, x9, #1":-1.0,"adrp x16, #0x538000":1.0,"b.ne #0x408df8":1.0,"b.ne #0x408e34":1.0,"b.ne #0x428360":-1.0,"bl #0x4cd0b0":1.0,"cbz w16, #0x4cd0c8":1.0,"cmp w8, w0":1.0,"cmp x22, x24":1.0,"cmp x22, x9":-1.0,"hint #0x22":1.0,"ldar w8, [x26]":1.0,"ldr w8, [x23, #4]":1.0,"ldrb w16, [x16, #0x398]":1.0,"mov x1, x23":1.0,"movz w0, #0x1":1.0,"ret ":1.0,"stlr w8, [x26]":1.0,"str x24, [sp, #8]":1.0,"str x9, [sp, #8]":-1.0},"entered":{"_ZN7harness6marker15counted_op_loop17h659df9a9f590f284E":1.0,"__aarch64_ldadd4_relax":1.0}}"#;

    #[test]
    fn a_record_classifies_into_its_footprint() {
        let parsed = crate::protocol::parse(TICKET_AARCH64);
        let a64 = Isa::from_triple("aarch64-unknown-linux-gnu").unwrap();
        let f = executed(a64, &parsed.executed[0]);
        // The cell's insns_per_op.
        assert_eq!(f.insns, 16.0);
        let got: Vec<(Class, &str, f64)> = f
            .entries
            .iter()
            .map(|e| (e.class, e.insn.as_str(), e.count))
            .collect();
        // Lock: a relaxed fetch_add through the outlined helper, whose LSE
        // path ran (`.byte` is capstone 4's `ldadd`), then an acquire
        // load; unlock: a release store. The return into the harness's
        // loop is an entry too, and no ordering.
        assert_eq!(
            got,
            [
                (Class::OneWay, "ldar", 1.0),
                (Class::OneWay, "stlr", 1.0),
                (Class::AtomicRmw, "call __aarch64_ldadd4_relax", 1.0),
                (Class::AtomicRmw, "ldadd", 1.0),
            ]
        );
    }
}
