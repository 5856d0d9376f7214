//! The static footprint's cost, measured on a real run: every suite binary
//! of every target of a complete run (the newest under `results/`, or
//! `LOCKMATRIX_FOOTPRINT_RUN=<run dir>`), two objdumps at a time as on the
//! 2-core machines the matrix runs on. The issue allows 30 s on top of a
//! warm matrix. Ignored by default: it needs a full matrix run first
//! (`cargo xtask matrix --targets all --suites all`), then
//! `cargo test -p lockmatrix --release --test footprint_speed -- --ignored --nocapture`.

use lockmatrix::config;
use lockmatrix::footprint::StaticJob;
use lockmatrix::results;
use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::time::Instant;

const BUDGET_SECS: f64 = 30.0;

#[test]
#[ignore = "needs a complete matrix run of every target and suite"]
fn static_footprint_of_a_whole_matrix_fits_its_budget() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
    let dir = match std::env::var_os("LOCKMATRIX_FOOTPRINT_RUN") {
        Some(d) => PathBuf::from(d),
        None => results::newest(&root.join("results")).unwrap().dir,
    };
    let run = results::read(&dir).unwrap();
    let config = config::load(&root.join("targets.yaml")).unwrap();
    // A variant that changes only the emulated CPU runs its target's
    // binaries, kept under that target's name: found by their hash.
    let mut by_hash: BTreeMap<&str, PathBuf> = BTreeMap::new();
    for t in &run.targets {
        for (suite, hash) in &t.binaries {
            let path = dir.join("bin").join(&t.name).join(suite);
            if path.is_file() {
                by_hash.entry(hash).or_insert(path);
            }
        }
    }
    let mut jobs = Vec::new();
    let mut distinct = BTreeSet::new();
    for t in &run.targets {
        let target = config.targets.iter().find(|c| c.name == t.name).unwrap();
        for s in &t.suites {
            let Some(probes) = &s.probes else {
                panic!(
                    "{}/{}: no probes record (a run from before protocol 3?)",
                    t.name, s.suite
                );
            };
            let hash = &t.binaries[&s.suite];
            let binary = &by_hash[hash.as_str()];
            distinct.insert(hash);
            jobs.push(StaticJob::for_target(target, binary, probes).unwrap());
        }
    }
    let start = Instant::now();
    let results = lockmatrix::footprint::static_footprints(&jobs, 2);
    let secs = start.elapsed().as_secs_f64();
    let mut ops = 0;
    for (job, r) in jobs.iter().zip(&results) {
        let r = r
            .as_ref()
            .unwrap_or_else(|e| panic!("{}: {e}", job.binary.display()));
        ops += r.len();
    }
    eprintln!(
        "static footprint of {} binaries ({} distinct), {ops} operations, {} targets: {secs:.1} s",
        jobs.len(),
        distinct.len(),
        run.targets.len()
    );
    assert!(ops > 0);
    assert!(
        secs < BUDGET_SECS,
        "{secs:.1} s, over the {BUDGET_SECS} s budget"
    );
}
