//! A minimal JSON value and writer for the result protocol.
//!
//! Records are flat and few; writing them by hand keeps serde out of the
//! cross-built suites (see the crate comment).

use std::fmt;

/// A JSON value. Objects keep insertion order so records read the same in
/// every run.
#[derive(Clone, Debug, PartialEq)]
pub enum J {
    Null,
    Bool(bool),
    Int(i64),
    Num(f64),
    Str(String),
    Arr(Vec<J>),
    Obj(Vec<(String, J)>),
}

/// Builds an object from `(key, value)` pairs.
pub fn obj<const N: usize>(pairs: [(&str, J); N]) -> J {
    J::Obj(pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

impl J {
    /// Adds or replaces a key of an object; other values are left as they are.
    pub fn set(&mut self, key: &str, value: impl Into<J>) {
        if let J::Obj(pairs) = self {
            let value = value.into();
            match pairs.iter_mut().find(|(k, _)| k == key) {
                Some(slot) => slot.1 = value,
                None => pairs.push((key.to_string(), value)),
            }
        }
    }
}

impl From<bool> for J {
    fn from(v: bool) -> J {
        J::Bool(v)
    }
}
impl From<&str> for J {
    fn from(v: &str) -> J {
        J::Str(v.to_string())
    }
}
impl From<String> for J {
    fn from(v: String) -> J {
        J::Str(v)
    }
}
impl From<f64> for J {
    fn from(v: f64) -> J {
        J::Num(v)
    }
}
macro_rules! from_int {
    ($($t:ty),*) => {$(
        impl From<$t> for J {
            fn from(v: $t) -> J {
                J::Int(v as i64)
            }
        }
    )*};
}
from_int!(i32, i64, u32, u64, usize);
impl<T: Into<J>> From<Vec<T>> for J {
    fn from(v: Vec<T>) -> J {
        J::Arr(v.into_iter().map(Into::into).collect())
    }
}

fn write_str(f: &mut fmt::Formatter<'_>, s: &str) -> fmt::Result {
    f.write_str("\"")?;
    for c in s.chars() {
        match c {
            '"' => f.write_str("\\\"")?,
            '\\' => f.write_str("\\\\")?,
            '\n' => f.write_str("\\n")?,
            '\r' => f.write_str("\\r")?,
            '\t' => f.write_str("\\t")?,
            c if (c as u32) < 0x20 => write!(f, "\\u{:04x}", c as u32)?,
            c => write!(f, "{c}")?,
        }
    }
    f.write_str("\"")
}

impl fmt::Display for J {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            J::Null => f.write_str("null"),
            J::Bool(b) => write!(f, "{b}"),
            J::Int(i) => write!(f, "{i}"),
            // JSON has no NaN or infinity; a value that is not finite is unknown.
            J::Num(x) if !x.is_finite() => f.write_str("null"),
            J::Num(x) => write!(f, "{x:?}"),
            J::Str(s) => write_str(f, s),
            J::Arr(items) => {
                f.write_str("[")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{item}")?;
                }
                f.write_str("]")
            }
            J::Obj(pairs) => {
                f.write_str("{")?;
                for (i, (k, v)) in pairs.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write_str(f, k)?;
                    write!(f, ":{v}")?;
                }
                f.write_str("}")
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn writes_escaped_ordered_json() {
        let mut v = obj([
            ("s", "a\"b\\c\n\u{1}".into()),
            ("i", (-3i64).into()),
            ("x", 1.5.into()),
            ("n", f64::NAN.into()),
            ("a", vec![1u32, 2].into()),
        ]);
        v.set("i", 4u32);
        assert_eq!(
            v.to_string(),
            r#"{"s":"a\"b\\c\n\u0001","i":4,"x":1.5,"n":null,"a":[1,2]}"#
        );
    }

    #[test]
    fn whole_floats_stay_floats() {
        assert_eq!(J::from(2.0).to_string(), "2.0");
    }
}
