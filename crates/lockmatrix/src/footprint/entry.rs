//! A footprint's lines (one canonical instruction and its count) and the
//! changes between two footprints.

use super::classify::{Class, Classified};
use crate::name::Name;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;

/// (suite, unit, op): `("spinlock", "ticket", "unlock")`,
/// `("atomic", "cas_sync", "op")`.
pub type Key = (Name, Name, Name);

/// One line of a footprint: how many of one canonical instruction (or
/// outlined call) an operation has, statically (`u32`) or per op as
/// executed (`f64`).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Entry<N> {
    pub class: Class,
    pub insn: String,
    pub count: N,
}

/// Entries sorted by class and name, from counts by classified instruction.
pub(super) fn entries<N>(counts: BTreeMap<Classified, N>) -> Vec<Entry<N>> {
    counts
        .into_iter()
        .map(|(c, count)| Entry {
            class: c.class,
            insn: c.insn,
            count,
        })
        .collect()
}

/// One instruction whose count differs between two footprints.
#[derive(Clone, Debug, PartialEq)]
pub struct Change<N> {
    pub class: Class,
    pub insn: String,
    pub before: N,
    pub after: N,
}

impl<N: fmt::Display> fmt::Display for Change<N> {
    /// `lwsync 1 -> 0` (the class is the caller's to show).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} {} -> {}", self.insn, self.before, self.after)
    }
}

/// Every instruction whose count differs, in class and name order: one
/// footprint absent from the other counts as zero.
pub fn changes<N: Copy + PartialEq + Default>(
    before: &[Entry<N>],
    after: &[Entry<N>],
) -> Vec<Change<N>> {
    let mut both: BTreeMap<(Class, &str), (N, N)> = BTreeMap::new();
    for e in before {
        both.entry((e.class, &e.insn)).or_default().0 = e.count;
    }
    for e in after {
        both.entry((e.class, &e.insn)).or_default().1 = e.count;
    }
    both.into_iter()
        .filter(|(_, (b, a))| b != a)
        .map(|((class, insn), (before, after))| Change {
            class,
            insn: insn.to_string(),
            before,
            after,
        })
        .collect()
}
