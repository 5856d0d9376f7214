//! lockmatrix's core: everything between `targets.yaml` and a verdict,
//! with no terminal output and no package installation (the `xtask` binary
//! does both). The pipeline, in the order a run goes through it:
//!
//! - [`config`]: `targets.yaml`; [`select`]: `--targets` and `--suites`;
//! - [`toolchain`] and [`readiness`]: what builds and runs each target, or
//!   what is missing; [`cpu`]: whether those tools know its CPU choices;
//! - [`build`]: cross-building the suites (and [`plugin`], the QEMU
//!   instruction counter);
//! - [`runner`]: running a suite binary natively, under QEMU or over ssh;
//!   [`protocol`]: reading what it prints;
//! - [`matrix`]: the whole run, every target and suite, with `--against`
//!   the base revision beside it;
//! - [`results`]: what a run leaves in `results/<run-id>/`;
//! - [`model`]: the locks written here model-checked with loom on the
//!   host, which no emulator run can replace; [`miri`]: the locks loom
//!   cannot see (shipped, std's, a `--crate`'s) run under Miri;
//! - [`gate`]: the verdict, against stored baselines or the base revision;
//! - [`footprint`]: the ordering footprint of each lock operation, executed
//!   (the plugin's records) and static (the binaries' disassembly);
//! - [`report`]: the terminal tables, the seeds' tables, the HTML report,
//!   the history across runs and the Bencher export;
//! - [`ci`]: the GitHub Actions workflows rendered from `targets.yaml`;
//! - [`container`]: the whole matrix inside a Podman or Docker image that
//!   carries the apt path's toolchain, for hosts apt-get cannot serve.
//!
//! [`observe`] carries progress out to whoever shows it; [`host`] records
//! the machine a run happened on; [`file`] writes files whole; [`commit`]
//! is a commit id read from a file, and whether it is in HEAD's history.

pub mod acknowledge;
pub mod build;
pub mod cache;
pub mod cells;
pub mod ci;
pub mod commit;
pub mod config;
pub mod container;
pub mod cpu;
pub mod escape;
pub mod family;
pub mod file;
pub mod footprint;
pub mod gate;
pub mod host;
pub mod matrix;
pub mod miri;
pub mod model;
pub mod name;
pub mod observe;
pub mod plugin;
pub mod policy;
pub mod protocol;
pub mod readiness;
pub mod report;
pub mod results;
pub mod runner;
pub mod select;
pub mod subject;
pub mod toolchain;

/// The layers: each module depends only on the ones below it, so the
/// protocol's rules never reach into the gate, nor the gate into the
/// reports. Checked on the sources, so a new `use` that climbs fails here.
#[cfg(test)]
mod layers {
    /// (module file or directory, modules above it it must not use).
    const BELOW: &[(&str, &[&str])] = &[
        (
            "name.rs",
            &["protocol", "cells", "results", "gate", "report", "matrix"],
        ),
        (
            "escape.rs",
            &["protocol", "cells", "results", "gate", "report", "matrix"],
        ),
        (
            "commit.rs",
            &["protocol", "cells", "results", "gate", "report", "matrix"],
        ),
        (
            "file.rs",
            &["protocol", "cells", "results", "gate", "report", "matrix"],
        ),
        (
            "protocol.rs",
            &["cells", "results", "gate", "report", "matrix", "policy"],
        ),
        (
            "cells.rs",
            &["results", "gate", "report", "matrix", "policy"],
        ),
        ("policy.rs", &["results", "gate", "report", "matrix"]),
        ("family.rs", &["results", "gate", "report", "matrix"]),
        ("results", &["gate", "report", "matrix"]),
        ("footprint", &["results", "gate", "report", "matrix"]),
        (
            "acknowledge.rs",
            &["protocol", "cells", "results", "gate", "report", "matrix"],
        ),
        ("model", &["results", "gate", "report", "matrix"]),
        ("miri", &["results", "gate", "report", "matrix"]),
        ("matrix", &["gate", "report"]),
        ("gate", &["report", "matrix"]),
    ];

    fn sources(p: &std::path::Path, out: &mut Vec<std::path::PathBuf>) {
        if p.is_dir() {
            for e in std::fs::read_dir(p).unwrap() {
                sources(&e.unwrap().path(), out);
            }
        } else if p.extension().is_some_and(|e| e == "rs") {
            out.push(p.to_path_buf());
        }
    }

    #[test]
    fn each_layer_uses_only_the_ones_below() {
        let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
        let mut broken = Vec::new();
        for (module, above) in BELOW {
            let mut files = Vec::new();
            sources(&src.join(module), &mut files);
            assert!(!files.is_empty(), "{module}: no sources");
            for f in files {
                let text = std::fs::read_to_string(&f).unwrap();
                for a in *above {
                    if text.contains(&format!("crate::{a}::"))
                        || text.contains(&format!("crate::{a};"))
                    {
                        broken.push(format!("{} uses crate::{a}", f.display()));
                    }
                }
            }
        }
        assert!(broken.is_empty(), "{}", broken.join("\n"));
    }
}
