//! Why a targets file was refused: each error names the file, the place
//! (line and column, or the target's line and name) and what was expected.

use super::bounds::InputError;
use crate::name::Name;
use std::fmt;
use std::path::PathBuf;

#[derive(Debug, Clone, PartialEq)]
pub enum ConfigError {
    /// Too large, not UTF-8, nested too deep: refused before parsing.
    Input(InputError),
    /// Not targets.yaml's shape (serde's words), at a place when known.
    Syntax {
        path: PathBuf,
        place: Option<(usize, usize)>,
        why: String,
    },
    /// A value of one target is wrong.
    Target {
        path: PathBuf,
        line: usize,
        target: Name,
        why: String,
    },
    /// The file as a whole is wrong (no targets at all).
    File { path: PathBuf, why: String },
}

impl fmt::Display for ConfigError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConfigError::Input(e) => e.fmt(f),
            ConfigError::Syntax {
                path,
                place: Some((line, column)),
                why,
            } => write!(f, "{}:{line}:{column}: {why}", path.display()),
            ConfigError::Syntax {
                path,
                place: None,
                why,
            } => write!(f, "{}: {why}", path.display()),
            ConfigError::Target {
                path,
                line,
                target,
                why,
            } => write!(f, "{}:{line}: target '{target}': {why}", path.display()),
            ConfigError::File { path, why } => write!(f, "{}: {why}", path.display()),
        }
    }
}

impl std::error::Error for ConfigError {}

impl From<InputError> for ConfigError {
    fn from(e: InputError) -> ConfigError {
        ConfigError::Input(e)
    }
}

/// Why one value does not have the form its rule asks.
#[derive(Debug, Clone, PartialEq)]
pub enum BadValue {
    Empty {
        expected: &'static str,
    },
    TooLong {
        count: usize,
        max: usize,
        expected: &'static str,
    },
    /// The value as [`crate::escape::echo`] shows it.
    Form {
        shown: String,
        expected: &'static str,
    },
    Name(crate::name::BadName),
}

impl fmt::Display for BadValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BadValue::Empty { expected } => write!(f, "is empty: expected {expected}"),
            BadValue::TooLong {
                count,
                max,
                expected,
            } => write!(
                f,
                "is {count} characters long: expected at most {max} ({expected})"
            ),
            BadValue::Form { shown, expected } => write!(f, "is {shown}: expected {expected}"),
            BadValue::Name(e) => e.fmt(f),
        }
    }
}
