//! The suites' JSON-lines result protocol, as the xtask reads it. The
//! writer is `suites/harness/src/out.rs`; field sets must match exactly, so
//! a suite that prints anything else is reported, not half-understood.

use crate::name::Name;
use serde::{Deserialize, Deserializer, Serialize};
use serde_json::{Map, Value};
use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
pub enum Record {
    Env(Env),
    Sample(Sample),
    Check(Check),
    Executed(Executed),
    Probes(Probes),
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Env {
    pub protocol: u32,
    pub suite: Name,
    pub arch: Name,
    pub endian: String,
    pub pointer_width: u32,
    pub cpus: u32,
    pub timer: String,
    pub timer_unit: Name,
    pub timer_hz: f64,
    pub relax: String,
    pub profile: String,
    pub seed: u64,
    pub pinned: bool,
    pub variants: Value,
    /// The suite takes `--case KEY=V,..` (narrowing a pair to single
    /// cells); absent from older builds and the C suite.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub narrows_cases: bool,
    /// The suite takes `--cell BENCH:KEY=V,..` (exactly the cells named).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub narrows_cells: bool,
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Sample {
    pub suite: Name,
    pub bench: Name,
    #[serde(deserialize_with = "checked_case")]
    pub case: Map<String, Value>,
    pub metric: Name,
    pub unit: Name,
    pub better: Better,
    /// Protocols 2 and 3: the suite's own say whether the cell was in its
    /// timing family. Read so their output and runs still parse, never
    /// written, and asked by nothing: every cell's role is
    /// `policy::role`'s, from what it measures.
    #[serde(default, skip_serializing)]
    pub gating: bool,
    pub round: u32,
    /// `None` when the suite could not compute a finite value.
    pub value: Option<f64>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Better {
    Lower,
    Higher,
}

/// The metric of instruction counts: executed guest instructions per
/// operation under QEMU's plugin (unit `insns`).
pub const INSNS_PER_OP: &str = "insns_per_op";

/// What a metric's values are, decided by its unit, for every reader (suite
/// output, run.json, baselines, the gate, the reports): the one place that
/// says whether a value is a time, a count or something else, what values
/// it may take, and how two of them compare.
///
/// | kind | unit | values | compared |
/// |---|---|---|---|
/// | `Time` | `ns`, `<timer>_ticks` | positive (`null` when the suite could not tell it from zero) | statistically, on a log scale |
/// | `Instructions` | `insns` | not negative | exactly |
/// | `Events` | `*_per_acquire` (a lock's slow-path events per acquisition) | not negative | by a robust rule, zeros included (`gate::events`) |
/// | `Quantity` | anything else (`ops`, `count`, `ratio`) | not negative | statistically, on a log scale |
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Time,
    Instructions,
    Events,
    Quantity,
}

/// Why a value cannot be one of its [`Kind`] ([`Kind::check`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum BadValue {
    #[error("expected a finite number")]
    NotFinite,
    #[error("expected a positive time (or null)")]
    NotPositiveTime,
    #[error("expected a count or ratio, not negative (or null)")]
    Negative,
}

impl Kind {
    pub fn of(unit: &str) -> Kind {
        if unit == "ns" || unit.ends_with("_ticks") {
            Kind::Time
        } else if unit == "insns" {
            Kind::Instructions
        } else if unit.ends_with("_per_acquire") {
            Kind::Events
        } else {
            Kind::Quantity
        }
    }

    /// Whether `value` can be a value of this kind: finite, a time positive,
    /// anything else not negative.
    pub fn check(self, value: f64) -> Result<(), BadValue> {
        if !value.is_finite() {
            Err(BadValue::NotFinite)
        } else if self == Kind::Time && value <= 0.0 {
            Err(BadValue::NotPositiveTime)
        } else if value < 0.0 {
            Err(BadValue::Negative)
        } else {
            Ok(())
        }
    }

    /// Values repeat run to run (same binary, same emulator): compared
    /// exactly, never with statistics.
    pub fn exact(self) -> bool {
        self == Kind::Instructions
    }
}

impl Better {
    /// `value` as a cost, lower is better: `1 / value` for a metric whose
    /// higher values are better.
    pub fn as_cost(self, value: f64) -> f64 {
        match self {
            Better::Lower => value,
            Better::Higher => 1.0 / value,
        }
    }
}

impl Sample {
    pub fn kind(&self) -> Kind {
        Kind::of(&self.unit)
    }
}

#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Check {
    pub suite: Name,
    pub bench: Name,
    #[serde(deserialize_with = "checked_case")]
    pub case: Map<String, Value>,
    pub name: Name,
    pub ok: bool,
    pub details: Value,
}

/// A case as the protocol allows it, for every reader (suite output,
/// run.json, baselines): each key a [`Name`], each value a [`Name`], a
/// finite number or a boolean, no key twice. A case's words reach paths
/// of no file, but they reach every report; nothing else can be in them.
pub fn checked_case<'de, D: Deserializer<'de>>(d: D) -> Result<Map<String, Value>, D::Error> {
    use serde::de::{Error, MapAccess, Visitor};
    struct CaseVisitor;
    impl<'de> Visitor<'de> for CaseVisitor {
        type Value = Map<String, Value>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a case: an object of names to names, numbers or booleans")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut m: A) -> Result<Self::Value, A::Error> {
            let mut case = Map::new();
            while let Some(key) = m.next_key::<Name>()? {
                let value: Value = m.next_value()?;
                match &value {
                    Value::String(s) => {
                        Name::parse(s)
                            .map_err(|e| A::Error::custom(format!("case `{key}`: {e}")))?;
                    }
                    Value::Bool(_) | Value::Number(_) => {}
                    _ => {
                        return Err(A::Error::custom(format!(
                            "case `{key}`: expected a name, a number or a boolean"
                        )))
                    }
                }
                if case.insert(key.to_string(), value).is_some() {
                    return Err(A::Error::custom(format!("case `{key}` is given twice")));
                }
            }
            Ok(case)
        }
    }
    d.deserialize_map(CaseVisitor)
}

/// What one operation of a counted cell executed under the QEMU plugin
/// (protocol 3): each instruction's disassembly text as QEMU's plugin API
/// gives it -> executions per op, and each symbol -> entries into it per
/// op. Per op means the op loop's per iteration minus the empty loop's, as
/// `insns_per_op`: the values sum to the cell's `insns_per_op`, are
/// integers for an op whose path does not vary, and a loop instruction
/// printed differently in the two loops shows as +1 and -1 entries.
/// `footprint::executed` classifies it.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Executed {
    pub suite: Name,
    pub bench: Name,
    #[serde(deserialize_with = "checked_case")]
    pub case: Map<String, Value>,
    pub round: u32,
    pub per_op: BTreeMap<String, f64>,
    pub entered: BTreeMap<String, f64>,
}

/// Where each lock operation's (or atomic primitive's) probe function is
/// (protocol 3): its code's offset from the `anchor` function's, both in
/// the binary that printed it. `footprint::static_footprint` reads them.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Probes {
    pub suite: Name,
    pub anchor: String,
    pub probes: Vec<Probe>,
}

#[derive(Debug, Clone, PartialEq, Eq, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct Probe {
    /// A lock, or an atomic primitive.
    pub unit: Name,
    /// `lock`, `unlock`, `read_lock`, ... (`op` for a primitive).
    pub op: Name,
    pub offset: i64,
}

/// Renders a case as `key=value key=value` in key order.
pub fn case_label(case: &Map<String, Value>) -> String {
    case.iter()
        .map(|(k, v)| match v {
            Value::String(s) => format!("{k}={s}"),
            v => format!("{k}={v}"),
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Everything read from one suite run's stdout.
#[derive(Debug, Default, Clone, Serialize)]
pub struct Parsed {
    pub env: Option<Env>,
    pub samples: Vec<Sample>,
    pub checks: Vec<Check>,
    /// One per counted cell, under the QEMU plugin (protocol 3).
    pub executed: Vec<Executed>,
    /// The suite's probes (protocol 3; printed once per invocation, kept
    /// once).
    pub probes: Option<Probes>,
    /// Lines that are not protocol records: (1-based line number, line, why).
    pub bad_lines: Vec<(usize, String, String)>,
}

/// The protocol the harness speaks (`suites/harness/src/out.rs`). Version 1
/// (no `gating`, and times that could be zero or negative) is still read,
/// so `--against` can build a base revision from before version 2; its
/// non-positive times are read as `null`, as version 2 prints them.
/// Version 2 is version 3 without the `executed` and `probes` records: a
/// base revision from before them has no ordering footprint. Version 4
/// drops the samples' `gating` (and the suites' `--family`): what gates is
/// the tool's to decide; older samples' flag is read and ignored.
pub const PROTOCOL_VERSION: u32 = 4;
const OLDEST_PROTOCOL: u32 = 1;

pub fn parse(stdout: &str) -> Parsed {
    let mut p = Parsed::default();
    for (i, line) in stdout.lines().enumerate() {
        if line.trim().is_empty() {
            continue;
        }
        match serde_json::from_str::<Record>(line) {
            Ok(Record::Env(e)) if !(OLDEST_PROTOCOL..=PROTOCOL_VERSION).contains(&e.protocol) => {
                p.bad_lines.push((
                    i + 1,
                    line.to_string(),
                    format!(
                        "protocol version {} (this xtask reads {OLDEST_PROTOCOL} to {PROTOCOL_VERSION})",
                        e.protocol
                    ),
                ))
            }
            Ok(Record::Env(e)) if p.env.is_some() => {
                p.bad_lines
                    .push((i + 1, line.to_string(), "a second env record".into()));
                p.env.get_or_insert(e);
            }
            Ok(Record::Env(e)) => p.env = Some(e),
            Ok(Record::Sample(mut s)) => {
                let old = p.env.as_ref().is_some_and(|e| e.protocol < 2);
                match s.value.map(|v| s.kind().check(v)) {
                    Some(Err(_)) if old => {
                        s.value = None;
                        p.samples.push(s);
                    }
                    Some(Err(why)) => p.bad_lines.push((
                        i + 1,
                        line.to_string(),
                        format!("value {}: {why}", s.value.unwrap_or_default()),
                    )),
                    _ => p.samples.push(s),
                }
            }
            Ok(Record::Check(c)) => p.checks.push(c),
            Ok(Record::Executed(x)) => match x.per_op.values().chain(x.entered.values()).find(|v| !v.is_finite()) {
                Some(v) => p.bad_lines.push((
                    i + 1,
                    line.to_string(),
                    format!("executions per op {v}: not a number"),
                )),
                None => p.executed.push(x),
            },
            Ok(Record::Probes(x)) => {
                p.probes.get_or_insert(x);
            }
            Err(e) => p.bad_lines.push((
                i + 1,
                line.to_string(),
                format!("not a protocol record: {e}"),
            )),
        }
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    const ENV: &str = r#"{"type":"env","protocol":1,"suite":"atomic","arch":"mips","endian":"big","pointer_width":32,"cpus":2,"timer":"clock_monotonic","timer_unit":"ns","timer_hz":1e9,"relax":"none","profile":"quick","seed":1,"pinned":true,"variants":{}}"#;

    #[test]
    fn reads_every_record_kind() {
        let text = format!(
            "{ENV}\n{}\n{}\n",
            r#"{"type":"sample","suite":"atomic","bench":"single_thread","case":{"op":"cas_sync"},"metric":"ticks_per_op","unit":"ns","better":"lower","round":0,"value":12.5}"#,
            r#"{"type":"check","suite":"atomic","bench":"single_thread","case":{"op":"cas_sync"},"name":"final_value","ok":false,"details":{"expected":3,"seen":2}}"#
        );
        let p = parse(&text);
        assert_eq!(p.env.unwrap().pointer_width, 32);
        assert_eq!(p.samples[0].value, Some(12.5));
        assert!(!p.checks[0].ok);
        assert!(p.bad_lines.is_empty());
        assert_eq!(case_label(&p.samples[0].case), "op=cas_sync");
    }

    #[test]
    fn reads_protocol_3_records_and_older_protocols_have_none() {
        let env3 = ENV.replace(r#""protocol":1"#, r#""protocol":3"#);
        let text = format!(
            "{env3}\n{}\n{}\n{}\n",
            r#"{"type":"executed","suite":"spinlock","bench":"lock_unlock","case":{"lock":"ticket","threads":1},"round":0,"per_op":{"lwsync ":1.0,"bne 0x1000":-1.0},"entered":{}}"#,
            r#"{"type":"probes","suite":"spinlock","anchor":"lockmatrix_probe_anchor","probes":[{"unit":"ticket","op":"unlock","offset":-4096}]}"#,
            r#"{"type":"probes","suite":"spinlock","anchor":"lockmatrix_probe_anchor","probes":[]}"#,
        );
        let p = parse(&text);
        assert!(p.bad_lines.is_empty(), "{:?}", p.bad_lines);
        assert_eq!(p.executed[0].per_op["lwsync "], 1.0);
        assert_eq!(case_label(&p.executed[0].case), "lock=ticket threads=1");
        // The first invocation's probes are kept.
        let probes = p.probes.unwrap();
        assert_eq!(probes.probes[0].offset, -4096);
        assert_eq!(probes.probes[0].unit, "ticket");
        let old = parse(&format!("{ENV}\n"));
        assert!(old.bad_lines.is_empty() && old.executed.is_empty() && old.probes.is_none());
        let future = parse(&ENV.replace(r#""protocol":1"#, r#""protocol":5"#));
        assert!(
            future.bad_lines[0].2.contains("reads 1 to 4"),
            "{:?}",
            future.bad_lines
        );
    }

    #[test]
    fn a_unit_decides_the_kind() {
        assert_eq!(Kind::of("ns"), Kind::Time);
        assert_eq!(Kind::of("cntvct_ticks"), Kind::Time);
        assert_eq!(Kind::of("insns"), Kind::Instructions);
        for unit in ["ops", "count", "ratio"] {
            assert_eq!(Kind::of(unit), Kind::Quantity, "{unit}");
        }
        assert_eq!(Kind::of("events_per_acquire"), Kind::Events);
        assert!(Kind::Instructions.exact());
        assert!(!Kind::Time.exact() && !Kind::Quantity.exact());
    }

    #[test]
    fn a_time_is_positive_and_finite_a_count_or_quantity_not_negative_and_finite() {
        // Zero is a time a suite cannot tell from no time at all: it prints null.
        for bad in [0.0, -0.0, -0.24, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
            assert!(Kind::Time.check(bad).is_err(), "time {bad}");
        }
        assert_eq!(Kind::Time.check(1e-9), Ok(()));
        for kind in [Kind::Instructions, Kind::Quantity] {
            assert_eq!(kind.check(0.0), Ok(()), "{kind:?}");
            assert_eq!(kind.check(1e100), Ok(()), "{kind:?}");
            for bad in [-1.0, f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
                assert!(kind.check(bad).is_err(), "{kind:?} {bad}");
            }
        }
    }

    #[test]
    fn a_zero_time_is_a_bad_line_from_protocol_2_on_and_null_from_protocol_1() {
        let zero = r#"{"type":"sample","suite":"atomic","bench":"single_thread","case":{"op":"fence"},"metric":"ticks_per_op","unit":"ns","better":"lower","round":0,"value":0.0}"#;
        let old = parse(&format!("{ENV}\n{zero}\n"));
        assert!(old.bad_lines.is_empty(), "{:?}", old.bad_lines);
        assert_eq!(old.samples[0].value, None);
        let env3 = ENV.replace(r#""protocol":1"#, r#""protocol":3"#);
        let new = parse(&format!("{env3}\n{zero}\n"));
        assert!(new.samples.is_empty());
        assert_eq!(new.bad_lines[0].0, 2);
        assert!(
            new.bad_lines[0].2.contains("expected a positive time"),
            "{:?}",
            new.bad_lines
        );
        // A count may be zero.
        let count = zero.replace(r#""unit":"ns""#, r#""unit":"insns""#);
        let counted = parse(&format!("{env3}\n{count}\n"));
        assert!(counted.bad_lines.is_empty(), "{:?}", counted.bad_lines);
        assert_eq!(counted.samples[0].value, Some(0.0));
    }

    #[test]
    fn garbage_and_unknown_fields_are_reported_with_their_line() {
        let text = format!(
            "{ENV}\nhello world\n{}\n",
            r#"{"type":"check","suite":"a","bench":"b","case":{},"name":"n","ok":true,"details":{},"extra":1}"#
        );
        let p = parse(&text);
        assert_eq!(p.bad_lines.len(), 2);
        assert_eq!(p.bad_lines[0].0, 2);
        assert_eq!(p.bad_lines[0].1, "hello world");
        assert_eq!(p.bad_lines[1].0, 3);
        assert!(
            p.bad_lines[1].2.contains("unknown field `extra`"),
            "{:?}",
            p.bad_lines[1]
        );
    }
}
