//! The classification table: which instructions order memory, in which
//! class, per architecture. The only one: the executed footprint (QEMU's
//! disassembly), the static footprint (binutils objdump's) and
//! `docs/ordering-footprint.md` (generated from [`TABLE`], checked by a
//! test) all read it.
//!
//! An instruction is first put in canonical form ([`super::canonical`]:
//! either disassembler's text, or an encoding one of them printed as raw
//! bytes, becomes e.g. `lwsync`, `dmb ishld`, `fence r,rw`, `casal`,
//! `lock cmpxchg`), then matched against its architecture's rules in
//! order; the first match gives the class. An instruction no rule matches
//! is plain.

pub use super::isa::{Arch, Isa};
use serde::{Deserialize, Serialize};
use std::fmt;

/// How an instruction orders memory. A standalone barrier of any strength
/// is a "full barrier" in the words; its canonical name tells
/// `lwsync` from `sync` and `fence r,rw` from `fence rw,rw`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Class {
    /// A barrier instruction: `dmb`, `sync`, `lwsync`, `fence`, `membar`,
    /// `bcr 14,0`, `mfence`.
    FullBarrier,
    /// An access (or read-modify-write) with acquire or release semantics:
    /// `ldar`, `stlr`, `casal`, `amoswap.w.aq`, an `_acq` helper.
    OneWay,
    /// An atomic read-modify-write or LL/SC half without ordering of its
    /// own: `ldxr`, `lwarx`, `cas`, `lock xadd`, a `_relax` helper.
    AtomicRmw,
}

impl Class {
    pub const ALL: [Class; 3] = [Class::FullBarrier, Class::OneWay, Class::AtomicRmw];

    pub fn label(self) -> &'static str {
        match self {
            Class::FullBarrier => "full barrier",
            Class::OneWay => "one-way",
            Class::AtomicRmw => "atomic RMW",
        }
    }
}

impl fmt::Display for Class {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.label())
    }
}

/// A classified instruction: its class and canonical name.
#[derive(Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Classified {
    pub class: Class,
    pub insn: String,
}

/// One rule: canonical instructions matching `pattern` are in `class`.
/// A pattern is literal text with `{a,b,}` alternatives (an alternative
/// may be empty) and `*` for any text.
#[derive(Clone, Copy, Debug)]
pub struct Rule {
    pub pattern: &'static str,
    pub class: Class,
}

/// An architecture's rules, matched in order.
#[derive(Clone, Copy, Debug)]
pub struct ArchRules {
    pub arch: Arch,
    pub rules: &'static [Rule],
}

const fn r(pattern: &'static str, class: Class) -> Rule {
    Rule { pattern, class }
}

use Class::{AtomicRmw as Rmw, FullBarrier as Full, OneWay as One};

/// The classification table.
pub const TABLE: &[ArchRules] = &[
    ArchRules {
        arch: Arch::X86,
        rules: &[
            r("{m,l,s}fence", Full),
            // A locked no-op on the stack, the fence idiom.
            r("lock {or,add} $0,(sp)", Full),
            // Every locked instruction (and `xchg` with memory, locked
            // implicitly) is a full barrier on x86 too, but it is an RMW
            // first: counted as one, as the issue asks.
            r("lock *", Rmw),
            r("xchg", Rmw),
        ],
    },
    ArchRules {
        arch: Arch::Aarch64,
        rules: &[
            r("dmb *", Full),
            r("dsb *", Full),
            r("ld{a,ap,la}r{,b,h}", One),
            r("ldapur{,b,h,sb,sh,sw}", One),
            r("st{l,ll}r{,b,h}", One),
            r("stlur{,b,h}", One),
            r("ldaxr{,b,h}", One),
            r("stlxr{,b,h}", One),
            r("{ldaxp,stlxp}", One),
            r("cas{a,l,al}{,b,h}", One),
            r("casp{a,l,al}", One),
            r("swp{a,l,al}{,b,h}", One),
            r("ld{add,clr,eor,set,smax,smin,umax,umin}{a,l,al}{,b,h}", One),
            r("st{add,clr,eor,set,smax,smin,umax,umin}l{,b,h}", One),
            r("{ldxr,stxr}{,b,h}", Rmw),
            r("{ldxp,stxp}", Rmw),
            r("cas{,b,h}", Rmw),
            r("casp", Rmw),
            r("swp{,b,h}", Rmw),
            r("ld{add,clr,eor,set,smax,smin,umax,umin}{,b,h}", Rmw),
            r("st{add,clr,eor,set,smax,smin,umax,umin}{,b,h}", Rmw),
            // Outlined atomics (`+outline-atomics`): a call names its
            // ordering in its suffix.
            r("call __aarch64_{cas,casp,swp,ldadd,ldclr,ldeor,ldset}{1,2,4,8,16}_sync", Full),
            r("call __aarch64_{cas,casp,swp,ldadd,ldclr,ldeor,ldset}{1,2,4,8,16}_{acq,rel,acq_rel}", One),
            r("call __aarch64_{cas,casp,swp,ldadd,ldclr,ldeor,ldset}{1,2,4,8,16}_relax", Rmw),
        ],
    },
    ArchRules {
        arch: Arch::Power,
        rules: &[
            r("{sync,lwsync,ptesync,isync,eieio}", Full),
            r("sync *", Full),
            r("l{b,h,w,d,q}arx", Rmw),
            r("st{b,h,w,d,q}cx.", Rmw),
        ],
    },
    ArchRules {
        arch: Arch::Mips,
        rules: &[
            r("sync", Full),
            r("sync 0x*", Full),
            r("{ll,sc,lld,scd,llwp,scwp,lldp,scdp}", Rmw),
        ],
    },
    ArchRules {
        arch: Arch::Riscv,
        rules: &[
            r("fence *", Full),
            r("fence.tso", Full),
            r("{lr,sc}.{w,d}.{aq,rl,aqrl}", One),
            r(
                "amo{swap,add,xor,and,or,min,max,minu,maxu,cas}.{w,d,q}.{aq,rl,aqrl}",
                One,
            ),
            r("{lr,sc}.{w,d}", Rmw),
            r("amo{swap,add,xor,and,or,min,max,minu,maxu,cas}.{w,d,q}", Rmw),
        ],
    },
    ArchRules {
        arch: Arch::Sparc,
        rules: &[
            r("membar *", Full),
            r("stbar", Full),
            r("cas{,x}{,a,l}", Rmw),
            r("{swap,ldstub}{,a}", Rmw),
        ],
    },
    ArchRules {
        arch: Arch::S390x,
        rules: &[
            r("bcr {14,15},0", Full),
            r("{cs,csy,csg,cds,cdsy,cdsg,csst}", Rmw),
            r("la{a,al,n,o,x}{,g}", Rmw),
            r("{lpd,lpdg,ts}", Rmw),
        ],
    },
    ArchRules {
        arch: Arch::Alpha,
        rules: &[
            // `mb` orders everything, `wmb` stores against stores: both
            // standalone barriers (Linux's smp_mb() and smp_wmb()).
            r("{mb,wmb}", Full),
            // Load-locked / store-conditional, no ordering of their own.
            r("{ldl_l,ldq_l,stl_c,stq_c}", Rmw),
        ],
    },
];

/// The rules of `arch`.
pub fn rules(arch: Arch) -> &'static [Rule] {
    TABLE
        .iter()
        .find(|t| t.arch == arch)
        .map_or(&[], |t| t.rules)
}

/// The class of a canonical instruction, by the first rule it matches.
pub fn class_of(arch: Arch, canonical: &str) -> Option<Class> {
    rules(arch)
        .iter()
        .find(|rule| matches(rule.pattern, canonical))
        .map(|rule| rule.class)
}

/// Classifies one instruction's disassembly (objdump's or QEMU's, mnemonic
/// and operands, without its address); `None` for a plain instruction.
pub fn classify(isa: Isa, text: &str) -> Option<Classified> {
    let insn = super::canonical::canonical(isa, text)?;
    let class = class_of(isa.arch, &insn)?;
    Some(Classified { class, insn })
}

/// Classifies a call to (or an entry into) `symbol`: an outlined atomic
/// counts as `call <symbol>` in the class its suffix names; `None` for
/// any other function.
pub fn classify_call(isa: Isa, symbol: &str) -> Option<Classified> {
    let insn = format!("call {symbol}");
    let class = class_of(isa.arch, &insn)?;
    Some(Classified { class, insn })
}

/// The table as Markdown, one row per architecture and a column per
/// class: `docs/ordering-footprint.md` holds exactly this (a test checks).
pub fn markdown() -> String {
    let mut out =
        String::from("| architecture | full barrier | one-way | atomic RMW |\n|---|---|---|---|\n");
    for t in TABLE {
        let cell = |class: Class| {
            t.rules
                .iter()
                .filter(|r| r.class == class)
                .map(|r| format!("`{}`", r.pattern))
                .collect::<Vec<_>>()
                .join(", ")
        };
        out.push_str(&format!(
            "| {} | {} | {} | {} |\n",
            t.arch.name(),
            cell(Class::FullBarrier),
            cell(Class::OneWay),
            cell(Class::AtomicRmw)
        ));
    }
    out
}

/// Whether `text` matches `pattern` (see [`Rule`]).
pub fn matches(pattern: &str, text: &str) -> bool {
    let Some(i) = pattern.find(['{', '*']) else {
        return pattern == text;
    };
    let (head, rest) = pattern.split_at(i);
    let Some(text) = text.strip_prefix(head) else {
        return false;
    };
    if let Some(after) = rest.strip_prefix('*') {
        return (0..=text.len())
            .filter(|&k| text.is_char_boundary(k))
            .any(|k| matches(after, &text[k..]));
    }
    let close = rest.find('}').expect("a `{` in a pattern has its `}`");
    let tail = &rest[close + 1..];
    rest[1..close]
        .split(',')
        .any(|alt| text.strip_prefix(alt).is_some_and(|t| matches(tail, t)))
}

/// Every text `pattern` stands for, when it has no `*` (for the docs).
pub fn expand(pattern: &str) -> Vec<String> {
    let Some(open) = pattern.find('{') else {
        return vec![pattern.to_string()];
    };
    let close = open + pattern[open..].find('}').expect("balanced braces");
    let (head, tail) = (&pattern[..open], &pattern[close + 1..]);
    pattern[open + 1..close]
        .split(',')
        .flat_map(|alt| expand(&format!("{head}{alt}{tail}")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn patterns_match_alternatives_empty_ones_and_wildcards() {
        assert!(matches("cas{a,l,al}{,b,h}", "casal"));
        assert!(matches("cas{a,l,al}{,b,h}", "casab"));
        assert!(!matches("cas{a,l,al}{,b,h}", "cas"));
        assert!(matches("cas{,b,h}", "cas"));
        assert!(matches("dmb *", "dmb ishld"));
        assert!(!matches("dmb *", "dmb"));
        assert!(matches("fence *", "fence r,rw"));
        assert!(!matches("fence *", "fence.i"));
        assert!(matches("sync 0x*", "sync 0x10"));
        assert!(!matches("sync", "sync 0x10"));
        assert_eq!(expand("st{b,h}cx."), ["stbcx.", "sthcx."]);
        assert_eq!(expand("ld{a,ap}r{,b}").len(), 4);
    }

    #[test]
    fn every_rule_is_reachable() {
        // A rule shadowed by an earlier one of its architecture would
        // never classify anything: each pattern's first expansion (with
        // `*` standing for "x") must take its own rule's class... and be
        // matched first by that rule or one of the same class.
        for t in TABLE {
            for (i, rule) in t.rules.iter().enumerate() {
                let sample = expand(&rule.pattern.replace('*', "x"))[0].clone();
                let first = t
                    .rules
                    .iter()
                    .position(|r| matches(r.pattern, &sample))
                    .unwrap();
                assert!(
                    first == i || t.rules[first].class == rule.class,
                    "{:?}: {} is taken by {}",
                    t.arch,
                    rule.pattern,
                    t.rules[first].pattern
                );
            }
        }
    }

    #[test]
    fn the_docs_table_is_this_table() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/ordering-footprint.md");
        let doc = std::fs::read_to_string(&path).unwrap();
        let begin = doc.find("<!-- table:begin -->\n").expect("begin marker") + 21;
        let end = doc.find("<!-- table:end -->").expect("end marker");
        assert_eq!(
            &doc[begin..end],
            markdown(),
            "{} is out of date: put the text on the right between its markers",
            path.display()
        );
    }

    #[test]
    fn triples_of_the_matrix_have_their_isa() {
        let isa = |t| Isa::from_triple(t).unwrap();
        assert!(isa("powerpc64-unknown-linux-gnu").big_endian);
        assert!(!isa("powerpc64le-unknown-linux-gnu").big_endian);
        assert_eq!(isa("mips64el-unknown-linux-gnuabi64").arch, Arch::Mips);
        assert_eq!(isa("riscv64gc-unknown-linux-gnu").arch, Arch::Riscv);
        assert_eq!(isa("i686-unknown-linux-gnu").arch, Arch::X86);
        assert_eq!(isa("alpha-linux-gnu").arch, Arch::Alpha);
        assert_eq!(Isa::from_triple("wasm32-unknown-unknown"), None);
    }

    #[test]
    fn outlined_helpers_take_their_suffix_class() {
        let a64 = Isa::from_triple("aarch64-unknown-linux-gnu").unwrap();
        let class = |s| classify_call(a64, s).map(|c| c.class);
        assert_eq!(class("__aarch64_cas4_acq"), Some(Class::OneWay));
        assert_eq!(class("__aarch64_swp4_acq_rel"), Some(Class::OneWay));
        assert_eq!(class("__aarch64_ldadd4_relax"), Some(Class::AtomicRmw));
        assert_eq!(class("__aarch64_cas8_sync"), Some(Class::FullBarrier));
        assert_eq!(class("__aarch64_have_lse_atomics"), None);
        assert_eq!(class("memcpy"), None);
        assert_eq!(
            classify_call(a64, "__aarch64_cas4_acq").unwrap().insn,
            "call __aarch64_cas4_acq"
        );
    }
}
