//! Errors that end the xtask with exit status 2: bad input or missing
//! set-up, as opposed to a target that failed (status 1).

use std::fmt;

/// A usage, configuration or set-up error: the message says what to fix.
#[derive(Debug)]
pub struct Exit2(pub String);

impl fmt::Display for Exit2 {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for Exit2 {}

/// Returns early with an [`Exit2`] error.
macro_rules! exit2 {
    ($($arg:tt)*) => {
        return Err(anyhow::Error::new($crate::error::Exit2(format!($($arg)*))))
    };
}
pub(crate) use exit2;
