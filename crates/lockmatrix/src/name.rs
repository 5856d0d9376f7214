//! Names that come from files: targets, triples, classes, CPU variants,
//! suites, benches, metrics, units, locks and the other words of a case.
//!
//! Runs and baselines are read from CI artifacts a stranger's pull request
//! can produce, so a name may be hostile: `../../tmp/x` as a target would
//! make `baseline update` write outside `baselines/`, and
//! `x"><img onerror=…>` would be markup in a report. A [`Name`] can only
//! be built by [`Name::parse`], which admits one small alphabet, so a name
//! that reached a path, a workflow or a report is a plain word. The check
//! runs where a name enters (deserializing targets.yaml, run.json, a
//! baseline, a suite's output), and a name that fails it is bad input
//! naming the file, line and column.

use serde::{Deserialize, Serialize};
use std::borrow::Borrow;
use std::fmt;

/// The longest name: longer than any triple, short enough for a column.
pub const MAX_LEN: usize = 64;

/// A checked name: 1 to [`MAX_LEN`] ASCII letters, digits, `.`, `_` or
/// `-`, starting with a letter or digit (so never `.`, `..` or a hidden
/// file's name, and never an option to a command).
#[derive(Clone, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(into = "String")]
pub struct Name(String);

/// Checked as it is read, the error from the string's own deserializer so
/// that the message carries its place (`targets[0].class`, line and
/// column).
impl<'de> Deserialize<'de> for Name {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Name, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Name;
            fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
                f.write_str("a name")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Name, E> {
                Name::parse(s).map_err(E::custom)
            }
        }
        d.deserialize_str(V)
    }
}

/// Why a string is not a [`Name`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BadName {
    /// The string, shortened and with unprintable characters escaped, so
    /// the message itself is safe to print.
    pub shown: String,
    pub why: &'static str,
}

impl fmt::Display for BadName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "name `{}`: {}; expected 1 to {MAX_LEN} letters, digits, `.`, `_` or `-`, starting with a letter or digit",
            self.shown, self.why
        )
    }
}

impl std::error::Error for BadName {}

impl Name {
    pub fn parse(s: &str) -> Result<Name, BadName> {
        let bad = |why| {
            Err(BadName {
                shown: shown(s),
                why,
            })
        };
        let Some(first) = s.chars().next() else {
            return bad("empty");
        };
        if s.len() > MAX_LEN {
            return bad("too long");
        }
        if !first.is_ascii_alphanumeric() {
            return bad("does not start with a letter or digit");
        }
        if !s
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-'))
        {
            return bad("has a character outside the alphabet");
        }
        Ok(Name(s.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// At most 80 characters of `s`, every character that is not printable
/// ASCII written as an escape (`\u{1b}`).
pub(crate) fn shown(s: &str) -> String {
    let mut out: String = s
        .chars()
        .take(80)
        .flat_map(|c| {
            if c == ' ' || c.is_ascii_graphic() {
                vec![c]
            } else {
                c.escape_unicode().collect()
            }
        })
        .collect();
    if s.chars().count() > 80 {
        out.push('…');
    }
    out
}

impl TryFrom<String> for Name {
    type Error = BadName;
    fn try_from(s: String) -> Result<Name, BadName> {
        Name::parse(&s)
    }
}

impl std::str::FromStr for Name {
    type Err = BadName;
    fn from_str(s: &str) -> Result<Name, BadName> {
        Name::parse(s)
    }
}

impl From<Name> for String {
    fn from(n: Name) -> String {
        n.0
    }
}

impl std::ops::Deref for Name {
    type Target = str;
    fn deref(&self) -> &str {
        &self.0
    }
}

impl AsRef<str> for Name {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

/// A name is a safe path component: nothing in it can climb out of the
/// directory it is joined to.
impl AsRef<std::path::Path> for Name {
    fn as_ref(&self) -> &std::path::Path {
        std::path::Path::new(&self.0)
    }
}

impl AsRef<std::ffi::OsStr> for Name {
    fn as_ref(&self) -> &std::ffi::OsStr {
        std::ffi::OsStr::new(&self.0)
    }
}

impl Borrow<str> for Name {
    fn borrow(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for Name {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl PartialEq<str> for Name {
    fn eq(&self, other: &str) -> bool {
        self.0 == other
    }
}

impl PartialEq<&str> for Name {
    fn eq(&self, other: &&str) -> bool {
        self.0 == *other
    }
}

impl PartialEq<String> for Name {
    fn eq(&self, other: &String) -> bool {
        &self.0 == other
    }
}

impl PartialEq<Name> for str {
    fn eq(&self, other: &Name) -> bool {
        self == other.0
    }
}

impl PartialEq<Name> for &str {
    fn eq(&self, other: &Name) -> bool {
        *self == other.0
    }
}

impl PartialEq<Name> for String {
    fn eq(&self, other: &Name) -> bool {
        *self == other.0
    }
}

/// A name known to be valid when written (a constant of this program):
/// panics otherwise, which a test of each constant catches.
pub fn known(s: &str) -> Name {
    Name::parse(s).unwrap_or_else(|e| panic!("{e}"))
}

/// Unit tests spell names as literals (`"x86_64".into()`); the library
/// itself never converts without the check.
#[cfg(test)]
impl From<&str> for Name {
    fn from(s: &str) -> Name {
        known(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_of_the_matrix_pass() {
        for s in [
            "x86_64",
            "aarch64-llsc",
            "powerpc64le-unknown-linux-gnu",
            "mips64el-unknown-linux-gnuabi64",
            "insns_per_op",
            "1",
            "sleep1us",
            "rustc-1.85.0",
        ] {
            assert_eq!(Name::parse(s).unwrap().as_str(), s);
        }
    }

    #[test]
    fn paths_markup_and_control_characters_do_not() {
        let long = "a".repeat(MAX_LEN + 1);
        for (s, why) in [
            ("", "empty"),
            ("..", "does not start with a letter or digit"),
            (".hidden", "does not start with a letter or digit"),
            ("-rf", "does not start with a letter or digit"),
            ("../../tmp/x", "does not start with a letter or digit"),
            ("a/b", "has a character outside the alphabet"),
            (
                "x\"><img src=x onerror=alert(1)>",
                "has a character outside the alphabet",
            ),
            ("x\u{1b}[31m", "has a character outside the alphabet"),
            ("a b", "has a character outside the alphabet"),
            ("ä", "does not start with a letter or digit"),
            (long.as_str(), "too long"),
        ] {
            assert_eq!(Name::parse(s).unwrap_err().why, why, "{s:?}");
        }
    }

    #[test]
    fn the_error_shows_the_name_without_its_control_characters() {
        let e = Name::parse("x\u{1b}[2J").unwrap_err().to_string();
        assert!(e.starts_with("name `x\\u{1b}[2J`: has a character"), "{e}");
        assert!(!e.contains('\u{1b}'));
        let e = Name::parse(&"é".repeat(10_000)).unwrap_err().to_string();
        assert!(e.len() < 1000, "{}", e.len());
    }

    #[test]
    fn deserializing_checks_and_names_the_place() {
        #[derive(Deserialize, Debug)]
        #[allow(dead_code)]
        struct T {
            name: Name,
        }
        let err = serde_json::from_str::<T>(r#"{"name": "../x"}"#).unwrap_err();
        assert_eq!(
            err.to_string(),
            "name `../x`: does not start with a letter or digit; expected 1 to 64 letters, digits, `.`, `_` or `-`, starting with a letter or digit at line 1 column 15"
        );
        let ok: T = serde_json::from_str(r#"{"name":"ticket"}"#).unwrap();
        assert_eq!(ok.name, "ticket");
        assert_eq!(serde_json::to_string(&ok.name).unwrap(), "\"ticket\"");
    }
}
