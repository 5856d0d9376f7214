//! Where a report may be written: never over a file lockmatrix did not
//! write.

use super::{bmf, html};
use anyhow::{bail, Result};
use std::path::Path;

/// `path` may receive a report: it is not a directory, and it is either
/// absent or a report lockmatrix wrote (an HTML page with lockmatrix's
/// generator tag, or a Bencher Metric Format file). Anything else is never
/// overwritten.
pub fn check(path: &Path) -> Result<()> {
    if path.is_dir() {
        bail!(
            "{}: is a directory; expected a file to write",
            path.display()
        );
    }
    let Ok(old) = std::fs::read_to_string(path) else {
        if path.exists() {
            bail!(
                "{}: exists and cannot be read: not overwritten",
                path.display()
            );
        }
        return Ok(());
    };
    let ours = old.contains(html::GENERATOR)
        || serde_json::from_str(&old).is_ok_and(|v| bmf::check(&v).is_ok());
    if !ours {
        bail!(
            "{}: exists and is not a report lockmatrix wrote: not overwritten (remove it, or choose another file)",
            path.display()
        );
    }
    Ok(())
}
