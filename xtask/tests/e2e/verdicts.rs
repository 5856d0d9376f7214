//! Verdicts that need no reference hold in every mode, and `matrix` and
//! `gate RUN` give one verdict on one run: a lock crate measured alone
//! (`--crate` without `--against-crate`) whose ticket lock is all
//! `Relaxed` races under Miri, and the command that found it fails with
//! the race and its reproduction; only `--allow-races` lets it pass, and
//! says so. A run with no baselines at all agrees with its gate too. The
//! other modes (`--against`, `--crate` with `--against-crate`, stored
//! baselines) are held to the same agreement where their own tests run
//! them (`against.rs`, `miri.rs`, `stored.rs`).

use std::path::Path;

use crate::common::*;
use crate::scratch::*;

/// The `ticketlock` fixture with every ordering `Relaxed`, committed.
fn relaxed_lock(dir: &Path) {
    let from = repo_root().join("xtask/tests/fixtures/ticketlock");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    std::fs::copy(from.join("Cargo.toml"), dir.join("Cargo.toml")).unwrap();
    let lib = std::fs::read_to_string(from.join("src/lib.rs")).unwrap();
    let relaxed = lib
        .replace("load(Acquire)", "load(Relaxed)")
        .replace(", Release)", ", Relaxed)");
    assert_ne!(relaxed, lib, "the fixture's orderings were weakened");
    std::fs::write(dir.join("src/lib.rs"), relaxed).unwrap();
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["add", "-A"]);
    git(dir, &["commit", "-q", "-m", "relaxed"]);
}

#[test]
fn a_race_found_in_a_crate_measured_alone_fails_the_matrix_and_the_gate_alike() {
    let _cpus = shared_cpus();
    let work = scratch_dir("verdict-crate");
    let (krate, results, json) = (
        work.join("relaxed"),
        work.join("results"),
        work.join("gate.json"),
    );
    relaxed_lock(&krate);
    let spec = format!("ticketlock@path:{}", krate.display());
    let (out, report) = matrix_report(
        &repo_root(),
        &results,
        &json,
        &[
            "--crate",
            &spec,
            "--targets",
            "x86_64",
            "--suites",
            "spinlock",
            "--no-insns",
        ],
    );
    let shown = text(&out);
    if let Err(why) = lockmatrix::miri::find() {
        assert!(shown.contains("NOT CHECKED"), "{why}: {shown}");
        eprintln!("miri: NOT CHECKED here ({why}): the race itself was not tested");
        return;
    }
    // The race is a finding, with the command that runs its seed alone,
    // and the run fails: no comparison was asked for, none was needed.
    assert_eq!(out.status.code(), Some(1), "{shown}");
    assert_eq!(report["result"], "fail", "{shown}");
    assert!(
        shown.contains("RACE         spinlock/ticketlock.RawTicketLock"),
        "{shown}"
    );
    assert!(
        shown.contains("reproduce: MIRIFLAGS=\"-Zmiri-seed=")
            && shown
                .contains("cargo +nightly miri run -p spinlock -- --lock ticketlock.RawTicketLock"),
        "{shown}"
    );
    assert!(
        shown.contains("FAIL: measured, not compared (--crate without --against-crate"),
        "{shown}"
    );
    let run = newest(&results);
    assert_gate_agrees(&repo_root(), &run, &out, &report, &[]);
    // --no-gate is about comparisons: the race still fails.
    let no_gate = xtask(&["gate", s(&run), "--no-gate"]);
    assert_eq!(no_gate.status.code(), Some(1), "{}", text(&no_gate));
    // Only the flag named for it passes it, and the report says so.
    let allowed = xtask(&["gate", s(&run), "--allow-races"]);
    assert_eq!(allowed.status.code(), Some(0), "{}", text(&allowed));
    assert!(
        text(&allowed).contains("--allow-races: races under Miri in 1 locks shown, not failing"),
        "{}",
        text(&allowed)
    );
    // Measured alone, nothing gated: --require-gate fails it, race allowed
    // or not, and says why.
    let required = xtask(&["gate", s(&run), "--allow-races", "--require-gate"]);
    assert_eq!(required.status.code(), Some(1), "{}", text(&required));
    assert!(
        text(&required).contains(
            "--require-gate: nothing was compared, so nothing gated; give --against-crate SPEC"
        ),
        "{}",
        text(&required)
    );
    let _ = std::fs::remove_dir_all(&work);
}

#[test]
fn a_run_with_no_baselines_gets_the_same_verdict_from_the_gate() {
    let _cpus = shared_cpus();
    let work = scratch_dir("verdict-none");
    let (results, json, empty) = (
        work.join("results"),
        work.join("gate.json"),
        work.join("none"),
    );
    std::fs::create_dir_all(&empty).unwrap();
    let (out, report) = matrix_report(
        &repo_root(),
        &results,
        &json,
        &[
            "--targets",
            "x86_64",
            "--suites",
            "atomic",
            "--baselines",
            s(&empty),
            "--require-gate",
        ],
    );
    // Nothing to compare with: NOT GATED, which --require-gate fails.
    assert_eq!(report["result"], "not_gated", "{}", text(&out));
    assert_eq!(out.status.code(), Some(1), "{}", text(&out));
    assert_gate_agrees(
        &repo_root(),
        &newest(&results),
        &out,
        &report,
        &["--baselines", s(&empty), "--require-gate"],
    );
    let _ = std::fs::remove_dir_all(&work);
}
