//! Why a static footprint could not be computed.

use crate::name::Name;
use std::fmt;
use std::path::PathBuf;

/// Why a static footprint could not be computed.
#[derive(Debug)]
pub enum FootprintError {
    /// The classification table has no rules for this target.
    UnknownArch { triple: Name },
    /// objdump could not be started (`package` provides it).
    Objdump {
        program: PathBuf,
        package: String,
        source: std::io::Error,
    },
    ObjdumpFailed {
        program: PathBuf,
        binary: PathBuf,
        stderr: String,
    },
    /// The binary has no function labelled as the probes' anchor.
    NoAnchor { anchor: String, binary: PathBuf },
    /// No function starts where a probe's offset leads.
    NoProbe {
        unit: Name,
        op: Name,
        addr: u64,
        binary: PathBuf,
    },
}

impl fmt::Display for FootprintError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FootprintError::UnknownArch { triple } => {
                write!(f, "no ordering classification for {triple}")
            }
            FootprintError::Objdump {
                program,
                package,
                source,
            } => write!(
                f,
                "cannot run {}: {source} (package {package})",
                program.display()
            ),
            FootprintError::ObjdumpFailed {
                program,
                binary,
                stderr,
            } => write!(
                f,
                "{} -d {} failed: {stderr}",
                program.display(),
                binary.display()
            ),
            FootprintError::NoAnchor { anchor, binary } => write!(
                f,
                "{}: no function {anchor} (a suite from before protocol 3?)",
                binary.display()
            ),
            FootprintError::NoProbe {
                unit,
                op,
                addr,
                binary,
            } => write!(
                f,
                "{}: the probe of {unit} {op} leads to {addr:#x}, where no function starts",
                binary.display()
            ),
        }
    }
}

impl std::error::Error for FootprintError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            FootprintError::Objdump { source, .. } => Some(source),
            _ => None,
        }
    }
}
