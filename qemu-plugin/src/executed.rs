//! What a traced region executed, instruction by instruction, free of QEMU
//! so that it can be unit tested.
//!
//! At translate time the plugin records each translation block's
//! instructions as QEMU's disassembly text (interned: a text is stored
//! once) and the symbol its first instruction lies in ([`Blocks`]). While a
//! traced region is open on a vCPU, that vCPU counts the executions of each
//! block and each entry into a symbol from another ([`Trace`]). At the
//! region's end the counts are expanded into a histogram of disassembly
//! text -> executions ([`Histogram`]), sent to the guest with the region's
//! instruction count. The plugin carries text and numbers only: what an
//! instruction means is the tool's business (`lockmatrix::footprint`).

use std::collections::{BTreeMap, HashMap};
use std::hash::BuildHasherDefault;

/// A fixed hasher: a trace's maps are created in `static` initialisers
/// (`HashMap::with_hasher` is const) and need no per-map random state.
type Fixed = BuildHasherDefault<std::collections::hash_map::DefaultHasher>;

/// Strings stored once, numbered in order of first sight.
#[derive(Debug, Default)]
struct Interner {
    ids: HashMap<String, u32>,
    texts: Vec<String>,
}

impl Interner {
    fn intern(&mut self, text: String) -> u32 {
        if let Some(&id) = self.ids.get(&text) {
            return id;
        }
        let id = self.texts.len() as u32;
        self.texts.push(text.clone());
        self.ids.insert(text, id);
        id
    }
}

/// One translated block: its instructions' texts. (Its symbol travels in
/// its [`BlockRef`].)
#[derive(Debug)]
struct Block {
    insns: Box<[u32]>,
}

/// Every block translated so far, by the id its execution callback carries.
#[derive(Debug, Default)]
pub struct Blocks {
    texts: Interner,
    symbols: Interner,
    blocks: Vec<Block>,
}

/// A block's id and its symbol's id, as its execution callback needs them.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockRef {
    pub id: u32,
    pub symbol: Option<u32>,
}

impl Blocks {
    pub fn new() -> Blocks {
        Blocks::default()
    }

    /// Records a block of instructions (their disassembly, in order) whose
    /// first instruction lies in `symbol`. A line break in a text (no
    /// disassembler prints one) would break the reply's lines: it becomes a
    /// space.
    pub fn add(
        &mut self,
        insns: impl IntoIterator<Item = String>,
        symbol: Option<String>,
    ) -> BlockRef {
        let insns = insns
            .into_iter()
            .map(|t| self.texts.intern(t.replace(['\n', '\r'], " ")))
            .collect();
        let symbol = symbol.map(|s| self.symbols.intern(s.replace(['\n', '\r'], " ")));
        let id = self.blocks.len() as u32;
        self.blocks.push(Block { insns });
        BlockRef { id, symbol }
    }

    /// The histogram of what `trace` counted beyond `since` (the trace as
    /// it was when the region opened, `None` for an empty one).
    pub fn histogram(&self, trace: &Trace, since: Option<&Trace>) -> Histogram {
        let mut by_text: HashMap<u32, u64> = HashMap::new();
        for (&block, &n) in &trace.blocks {
            let before = since
                .and_then(|s| s.blocks.get(&block))
                .copied()
                .unwrap_or(0);
            let n = n - before;
            if n == 0 {
                continue;
            }
            if let Some(b) = self.blocks.get(block as usize) {
                for &text in b.insns.iter() {
                    *by_text.entry(text).or_default() += n;
                }
            }
        }
        let mut h = Histogram::default();
        for (text, n) in by_text {
            h.insns.insert(self.texts.texts[text as usize].clone(), n);
        }
        for (&symbol, &n) in &trace.entered {
            let before = since
                .and_then(|s| s.entered.get(&symbol))
                .copied()
                .unwrap_or(0);
            if n > before {
                h.entered
                    .insert(self.symbols.texts[symbol as usize].clone(), n - before);
            }
        }
        h
    }
}

/// One vCPU's executions while traced regions are open on it: of each
/// block, and entries into each symbol from another (or from nothing, at
/// the first block after the region opened).
#[derive(Clone, Debug)]
pub struct Trace {
    blocks: HashMap<u32, u64, Fixed>,
    entered: HashMap<u32, u64, Fixed>,
    last_symbol: Option<u32>,
}

impl Default for Trace {
    fn default() -> Trace {
        Trace::new()
    }
}

impl Trace {
    pub const fn new() -> Trace {
        Trace {
            blocks: HashMap::with_hasher(BuildHasherDefault::new()),
            entered: HashMap::with_hasher(BuildHasherDefault::new()),
            last_symbol: None,
        }
    }

    /// One execution of `block`.
    pub fn executed(&mut self, block: BlockRef) {
        *self.blocks.entry(block.id).or_default() += 1;
        if let Some(s) = block.symbol {
            if self.last_symbol != Some(s) {
                *self.entered.entry(s).or_default() += 1;
            }
        }
        self.last_symbol = block.symbol;
    }

    pub fn clear(&mut self) {
        self.blocks.clear();
        self.entered.clear();
        self.last_symbol = None;
    }
}

/// What a region executed: disassembly text -> executions, and symbol ->
/// entries.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Histogram {
    pub insns: BTreeMap<String, u64>,
    pub entered: BTreeMap<String, u64>,
}

impl Histogram {
    /// The reply's payload: one line per entry, `I<tab>COUNT<tab>TEXT` for
    /// an instruction and `S<tab>COUNT<tab>SYMBOL` for a symbol (texts may
    /// hold tabs: everything after the second tab is the text). The guest
    /// parser is `suites/harness/src/marker.rs`'s.
    pub fn payload(&self) -> String {
        let mut s = String::new();
        for (kind, map) in [('I', &self.insns), ('S', &self.entered)] {
            for (text, n) in map {
                s.push_str(&format!("{kind}\t{n}\t{text}\n"));
            }
        }
        s
    }

    /// `"executed":{...},"entered":{...}` for the plugin's `out=` file.
    pub fn json_fields(&self) -> String {
        let map = |m: &BTreeMap<String, u64>| {
            let items: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{}:{v}", json_string(k)))
                .collect();
            format!("{{{}}}", items.join(","))
        };
        format!(
            r#""executed":{},"entered":{}"#,
            map(&self.insns),
            map(&self.entered)
        )
    }
}

/// A JSON string literal (the plugin has no JSON library).
fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// The reply of a traced region: its count (8 bytes, little-endian), the
/// payload's length (4 bytes, little-endian) and the payload. `None` as
/// the payload sends the length [`NO_PAYLOAD`]: the count without a
/// histogram (it did not fit the guest's pipe).
pub fn reply(insns: u64, payload: Option<&str>) -> Vec<u8> {
    let mut bytes = insns.to_le_bytes().to_vec();
    match payload {
        Some(p) => {
            bytes.extend_from_slice(&(p.len() as u32).to_le_bytes());
            bytes.extend_from_slice(p.as_bytes());
        }
        None => bytes.extend_from_slice(&NO_PAYLOAD.to_le_bytes()),
    }
    bytes
}

/// The payload length that says "no histogram".
pub const NO_PAYLOAD: u32 = u32::MAX;

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn expands_block_executions_into_instruction_counts() {
        let mut blocks = Blocks::new();
        let loop_ = blocks.add(
            texts(&["lwsync", "stw r9,0(r3)", "bdnz 0x1000"]),
            Some("f".into()),
        );
        let helper = blocks.add(
            texts(&["lwarx r9,0,r3", "stwcx. r10,0,r3", "blr"]),
            Some("h".into()),
        );
        let mut trace = Trace::new();
        for _ in 0..3 {
            trace.executed(loop_);
            trace.executed(helper);
        }
        let h = blocks.histogram(&trace, None);
        assert_eq!(h.insns["lwsync"], 3);
        assert_eq!(h.insns["blr"], 3);
        assert_eq!(h.insns.len(), 6);
        // f, h, f, h, f, h: three entries each.
        assert_eq!(h.entered["f"], 3);
        assert_eq!(h.entered["h"], 3);
    }

    #[test]
    fn the_same_text_in_two_blocks_is_one_entry_and_a_snapshot_is_subtracted() {
        let mut blocks = Blocks::new();
        let a = blocks.add(texts(&["nop", "ret"]), Some("f".into()));
        let b = blocks.add(texts(&["nop"]), Some("f".into()));
        let mut trace = Trace::new();
        trace.executed(a);
        let since = trace.clone();
        trace.executed(a);
        trace.executed(b);
        trace.executed(b);
        let h = blocks.histogram(&trace, Some(&since));
        assert_eq!(
            h.insns,
            BTreeMap::from([("nop".into(), 3), ("ret".into(), 1)])
        );
        // Staying in f enters nothing new.
        assert!(h.entered.is_empty(), "{h:?}");
    }

    #[test]
    fn payload_and_reply_bytes() {
        let mut h = Histogram::default();
        h.insns.insert("sync\t0x10".into(), 2);
        h.entered.insert("__aarch64_cas4_acq".into(), 1);
        let p = h.payload();
        assert_eq!(p, "I\t2\tsync\t0x10\nS\t1\t__aarch64_cas4_acq\n");
        let r = reply(7, Some(&p));
        assert_eq!(&r[..8], &7u64.to_le_bytes());
        assert_eq!(&r[8..12], &(p.len() as u32).to_le_bytes());
        assert_eq!(&r[12..], p.as_bytes());
        assert_eq!(&reply(7, None)[8..], &NO_PAYLOAD.to_le_bytes());
        assert_eq!(
            h.json_fields(),
            r#""executed":{"sync\t0x10":2},"entered":{"__aarch64_cas4_acq":1}"#
        );
    }

    #[test]
    fn line_breaks_in_a_text_cannot_split_a_line() {
        let mut blocks = Blocks::new();
        let a = blocks.add(texts(&["odd\ntext"]), None);
        let mut trace = Trace::new();
        trace.executed(a);
        assert_eq!(blocks.histogram(&trace, None).payload(), "I\t1\todd text\n");
    }
}
