//! What is wrong with a lock crate to measure: its spec on the command
//! line, the locks its metadata declares, the code generated for them.

/// Each says what was expected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SubjectError {
    /// `--crate`'s value is not a spec.
    Spec(String),
    /// `[package.metadata.lockmatrix]` is not what lockmatrix reads.
    Metadata(String),
    /// A declared lock type is not a plain path, or two share a name.
    LockType(String),
}

impl std::fmt::Display for SubjectError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SubjectError::Spec(why) | SubjectError::Metadata(why) | SubjectError::LockType(why) => {
                f.write_str(why)
            }
        }
    }
}

impl std::error::Error for SubjectError {}
