//! Bounds on targets.yaml, checked before serde_norway reads it. CI parses
//! whatever a pull request commits, so the file is untrusted input and its
//! cost must be bounded by its size:
//!
//! - **Size: at most [`MAX_BYTES`] (16 MiB).** A target takes 200 to 400
//!   bytes, so the committed matrix is 6 KB and ten thousand targets fit in
//!   4 MB; the limit bounds the memory and time of everything after it.
//!   The file is read through a limit, so `/dev/zero` or a growing file
//!   costs 16 MiB, not all memory.
//! - **Nesting: at most [`MAX_DEPTH`] (16) collections inside each other.**
//!   targets.yaml's own structure is 5 deep (the file, `targets`, a target,
//!   `variants`, a variant). libyaml, under serde_norway, does work for each
//!   token that grows with the flow nesting (`[`, `{`) around it: 20,000
//!   nested `[` took 4.7 s and 100,000 did not finish in two minutes. The
//!   depth is measured with the same libyaml parser serde_norway uses, so
//!   it is the depth serde_norway would see; it stops at the first
//!   collection past the limit, which bounds its own work to the size times
//!   the limit.
//! - **Encoding: UTF-8**, with or without a byte-order mark (stripped).

use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The largest targets.yaml read, in bytes.
pub const MAX_BYTES: usize = 16 << 20;

/// The deepest nesting of collections accepted.
pub const MAX_DEPTH: usize = 16;

/// The UTF-8 byte-order mark some editors write at the start of a file.
const BOM: char = '\u{feff}';

/// Why targets.yaml was refused before it was parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InputError {
    /// It could not be opened or read.
    Unreadable { path: PathBuf, error: String },
    /// It is larger than `limit` bytes.
    TooLarge { path: PathBuf, limit: usize },
    /// It is not UTF-8 from `line`:`column` (1-based; the column in bytes).
    NotUtf8 {
        path: PathBuf,
        line: usize,
        column: usize,
    },
    /// A collection at `line`:`column` (1-based) is nested deeper than `limit`.
    TooDeep {
        path: PathBuf,
        line: u64,
        column: u64,
        limit: usize,
    },
}

impl fmt::Display for InputError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            InputError::Unreadable { path, error } => {
                write!(f, "{}: cannot read: {error}", path.display())
            }
            InputError::TooLarge { path, limit } => write!(
                f,
                "{}: larger than {} MiB, the limit for a targets file (ten thousand targets take 4 MB)",
                path.display(),
                limit >> 20
            ),
            InputError::NotUtf8 { path, line, column } => write!(
                f,
                "{}:{line}:{column}: not UTF-8: expected UTF-8 text",
                path.display()
            ),
            InputError::TooDeep {
                path,
                line,
                column,
                limit,
            } => write!(
                f,
                "{}:{line}:{column}: nested deeper than {limit} levels, the limit for a targets file (its own structure is 5 deep)",
                path.display()
            ),
        }
    }
}

impl std::error::Error for InputError {}

/// Reads `path` whole, at most [`MAX_BYTES`] of it, as UTF-8.
pub fn read(path: &Path) -> Result<String, InputError> {
    let unreadable = |e: std::io::Error| InputError::Unreadable {
        path: path.to_path_buf(),
        error: e.to_string(),
    };
    let file = std::fs::File::open(path).map_err(unreadable)?;
    let mut bytes = Vec::new();
    file.take(MAX_BYTES as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(unreadable)?;
    if bytes.len() > MAX_BYTES {
        return Err(InputError::TooLarge {
            path: path.to_path_buf(),
            limit: MAX_BYTES,
        });
    }
    String::from_utf8(bytes).map_err(|e| {
        let good = &e.as_bytes()[..e.utf8_error().valid_up_to()];
        let line_start = good.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        InputError::NotUtf8 {
            path: path.to_path_buf(),
            line: good.iter().filter(|&&b| b == b'\n').count() + 1,
            column: good.len() - line_start + 1,
        }
    })
}

/// `text` without a leading byte-order mark.
pub fn strip_bom(text: &str) -> &str {
    text.strip_prefix(BOM).unwrap_or(text)
}

/// Checks `text` (the contents of `path`) against [`MAX_BYTES`] and
/// [`MAX_DEPTH`]. A syntax error is left for serde_norway to report: up to
/// it, the nesting was within the limit.
pub fn check(path: &Path, text: &str) -> Result<(), InputError> {
    if text.len() > MAX_BYTES {
        return Err(InputError::TooLarge {
            path: path.to_path_buf(),
            limit: MAX_BYTES,
        });
    }
    match deepest(text.as_bytes(), MAX_DEPTH) {
        Some((line, column)) => Err(InputError::TooDeep {
            path: path.to_path_buf(),
            line,
            column,
            limit: MAX_DEPTH,
        }),
        None => Ok(()),
    }
}

/// Where the first collection nested deeper than `limit` starts (1-based
/// line and column), if one does before the end or the first syntax
/// error. Reads `text` event by event with libyaml, as serde_norway does.
fn deepest(text: &[u8], limit: usize) -> Option<(u64, u64)> {
    use std::mem::MaybeUninit;
    use unsafe_libyaml_norway as unsafe_sys;

    // libyaml points the parser at itself (its read handler's data), so it
    // lives in a box that does not move until it is deleted.
    let mut parser: Box<MaybeUninit<unsafe_sys::yaml_parser_t>> = Box::new(MaybeUninit::uninit());
    let p = parser.as_mut_ptr();
    // SAFETY: `p` points to memory that stays put and is initialized by
    // yaml_parser_initialize before use; `text` outlives the parser, which
    // is deleted before returning; each event is deleted after reading its
    // type and mark, and none is read after a failed parse.
    unsafe {
        if unsafe_sys::yaml_parser_initialize(p).fail {
            // Out of memory: let serde_norway meet (and report) it.
            return None;
        }
        unsafe_sys::yaml_parser_set_encoding(p, unsafe_sys::YAML_UTF8_ENCODING);
        unsafe_sys::yaml_parser_set_input_string(p, text.as_ptr(), text.len() as u64);
        let mut depth = 0usize;
        let mut found = None;
        loop {
            let mut event = MaybeUninit::<unsafe_sys::yaml_event_t>::uninit();
            let e = event.as_mut_ptr();
            if unsafe_sys::yaml_parser_parse(p, e).fail {
                break;
            }
            let (kind, mark) = ((*e).type_, (*e).start_mark);
            unsafe_sys::yaml_event_delete(e);
            match kind {
                unsafe_sys::YAML_SEQUENCE_START_EVENT | unsafe_sys::YAML_MAPPING_START_EVENT => {
                    depth += 1;
                    if depth > limit {
                        found = Some((mark.line + 1, mark.column + 1));
                        break;
                    }
                }
                unsafe_sys::YAML_SEQUENCE_END_EVENT | unsafe_sys::YAML_MAPPING_END_EVENT => {
                    depth = depth.saturating_sub(1)
                }
                unsafe_sys::YAML_STREAM_END_EVENT => break,
                _ => {}
            }
        }
        unsafe_sys::yaml_parser_delete(p);
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Instant;

    fn deep(text: &str) -> Option<(u64, u64)> {
        deepest(text.as_bytes(), MAX_DEPTH)
    }

    #[test]
    fn nesting_is_measured_as_yaml_nests_not_as_brackets_appear() {
        let committed = std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../../targets.yaml"),
        )
        .unwrap();
        assert_eq!(deepest(committed.as_bytes(), 5), None);
        // The fifth level: aarch64's first variant.
        let llsc = committed.lines().position(|l| l == "      - name: llsc");
        assert_eq!(
            deepest(committed.as_bytes(), 4),
            llsc.map(|i| (i as u64 + 1, 9))
        );
        // 16 levels pass, the 17th is named where it starts.
        let at = |n: usize| format!("targets: {}{}\n", "[".repeat(n), "]".repeat(n));
        assert_eq!(deep(&at(MAX_DEPTH - 1)), None);
        assert_eq!(deep(&at(MAX_DEPTH)), Some((1, 25)));
        let blocks: String = (0..20).map(|i| format!("{}- \n", "  ".repeat(i))).collect();
        assert_eq!(deep(&blocks), Some((17, 33)));
        // Brackets in strings, comments and block scalars are text.
        let text = format!(
            "a: \"{b}\"\nb: '{b}'\nc: |\n  {b}\n# {b}\nd: x{b}\ne: [\"{c}\", '{c}']\n",
            b = "[".repeat(100),
            c = "]".repeat(100)
        );
        assert_eq!(deep(&text), None);
        // A syntax error ends the measure; serde_norway reports it.
        assert_eq!(deep("a: [\nb: ]]]"), None);
    }

    #[test]
    fn a_nesting_bomb_is_refused_in_linear_time() {
        for (start, bomb) in [(" ", "["), (" ", "{a: "), (" ", "[a, "), ("\n", "- ")] {
            let text = format!("targets:{start}{}x\n", bomb.repeat(1_000_000));
            let start = Instant::now();
            assert!(deep(&text).is_some(), "{bomb}");
            // 1 MB to 4 MB of input; without the early stop, 100 KB took
            // minutes.
            assert!(
                start.elapsed().as_secs() < 5,
                "{bomb}: {:?}",
                start.elapsed()
            );
        }
    }

    #[test]
    fn size_encoding_and_the_bom_are_checked_with_the_path() {
        let dir = std::env::temp_dir().join(format!("lockmatrix-bounds-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("t.yaml");
        std::fs::write(&file, b"a: 1\nb: caf\xc3\xa9 \xff\n").unwrap();
        assert_eq!(
            read(&file).unwrap_err().to_string(),
            format!("{}:2:10: not UTF-8: expected UTF-8 text", file.display())
        );
        std::fs::write(&file, vec![b'#'; MAX_BYTES + 1]).unwrap();
        assert!(matches!(read(&file), Err(InputError::TooLarge { .. })));
        std::fs::write(&file, vec![b'#'; MAX_BYTES]).unwrap();
        assert_eq!(read(&file).unwrap().len(), MAX_BYTES);
        // A device that never ends costs the limit, not all memory.
        assert!(matches!(
            read(Path::new("/dev/zero")),
            Err(InputError::TooLarge { .. })
        ));
        assert!(matches!(
            read(&dir.join("nosuch")),
            Err(InputError::Unreadable { .. })
        ));
        std::fs::remove_dir_all(&dir).unwrap();
        assert_eq!(strip_bom("\u{feff}defaults:"), "defaults:");
        assert_eq!(strip_bom("defaults:"), "defaults:");
        let big = "#".repeat(MAX_BYTES + 1);
        assert!(matches!(
            check(Path::new("t.yaml"), &big),
            Err(InputError::TooLarge { .. })
        ));
    }
}
