//! Miri on a `--crate`'s locks, end to end: a path crate's ticket lock
//! (`xtask/tests/fixtures/ticketlock`) weakened to `Relaxed` in a scratch
//! commit races under Miri, and `--crate HEAD --against-crate BASE` fails
//! the gate naming the lock, the client and the seed; the sound version,
//! run beside it as the base, is clean on every seed of every client.

use serde_json::Value;
use std::path::Path;

use crate::common::*;
use crate::scratch::*;

/// The fixture, copied to `dir`.
fn ticketlock(dir: &Path) {
    let from = repo_root().join("xtask/tests/fixtures/ticketlock");
    std::fs::create_dir_all(dir.join("src")).unwrap();
    for f in ["Cargo.toml", "src/lib.rs"] {
        std::fs::copy(from.join(f), dir.join(f)).unwrap();
    }
}

/// Each client's (seeds, failing seeds) of one side's `miri` record.
fn clients(run: &Value) -> Vec<(String, u64, usize)> {
    assert!(run["miri"]["not_checked"].is_null(), "{}", run["miri"]);
    run["miri"]["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            assert_eq!(r["lock"], "ticketlock.RawTicketLock");
            assert!(r["not_checked"].is_null(), "{r}");
            (
                r["client"].as_str().unwrap().to_string(),
                r["seeds"].as_u64().unwrap(),
                r["failing_seeds"].as_array().unwrap().len(),
            )
        })
        .collect()
}

#[test]
fn a_ticket_lock_weakened_in_a_scratch_commit_races_under_miri_and_fails_the_gate_by_name() {
    let _cpus = shared_cpus();
    let work = scratch_dir("miri-ticket");
    let (base, head) = (work.join("base"), work.join("head"));
    ticketlock(&base);
    ticketlock(&head);
    git(&head, &["init", "-q", "-b", "main"]);
    git(&head, &["add", "-A"]);
    git(&head, &["commit", "-q", "-m", "sound"]);
    let lib = "src/lib.rs";
    commit_edit(
        &head,
        lib,
        "serving.load(Acquire) != ticket",
        "serving.load(Relaxed) != ticket",
        "lock: Relaxed",
    );
    commit_edit(
        &head,
        lib,
        "wrapping_add(1), Release)",
        "wrapping_add(1), Relaxed)",
        "unlock: Relaxed",
    );

    let results = work.join("results");
    let json = work.join("gate.json");
    let (h, b) = (
        format!("ticketlock@path:{}", head.display()),
        format!("ticketlock@path:{}", base.display()),
    );
    let (out, report) = matrix_report(
        &repo_root(),
        &results,
        &json,
        &[
            "--crate",
            &h,
            "--against-crate",
            &b,
            "--targets",
            "aarch64",
            "--suites",
            "spinlock",
            "--no-insns",
        ],
    );
    let shown = text(&out);
    if let Err(why) = lockmatrix::miri::find() {
        // No Miri here: the run says so, with the command, and goes on.
        assert!(
            shown.contains("NOT CHECKED") && shown.contains(lockmatrix::miri::INSTALL),
            "{why}: {shown}"
        );
        eprintln!("miri: NOT CHECKED here ({why}): the race itself was not tested");
        return;
    }
    assert_eq!(out.status.code(), Some(1), "{shown}");

    // The two sides are two versions: the copies hash differently.
    let dir = newest(&results);
    let (run, base_run) = (
        read_json(&dir.join("run.json")),
        read_json(&dir.join("base/run.json")),
    );
    assert_ne!(run["subject"]["source"], base_run["subject"]["source"]);

    // The sound lock is clean on every seed of every client; the weakened
    // one races on some seed of each.
    let (sound, weak) = (clients(&base_run), clients(&run));
    assert!(sound.len() >= 3, "{sound:?}");
    assert_eq!(
        sound.iter().map(|c| &c.0).collect::<Vec<_>>(),
        weak.iter().map(|c| &c.0).collect::<Vec<_>>()
    );
    assert!(
        sound
            .iter()
            .all(|&(_, seeds, failed)| seeds > 0 && failed == 0),
        "{sound:?}"
    );
    assert!(weak.iter().all(|&(_, _, failed)| failed > 0), "{weak:?}");

    // The gate fails by name: the lock, a regression (the base was clean),
    // the client, the seed and Miri's data race.
    let lock = &report["miri"]["locks"][0];
    assert_eq!(lock["lock"], "ticketlock.RawTicketLock", "{report}");
    assert_eq!(lock["in_base"], false);
    assert!(
        lock["race"]["error"]
            .as_str()
            .unwrap()
            .contains("Data race"),
        "{lock}"
    );
    let line = format!(
        "spinlock/ticketlock.RawTicketLock: RACE (regression): client \"{}\", seed {}",
        lock["race"]["client"].as_str().unwrap(),
        lock["race"]["seed"]
    );
    assert!(shown.contains(&line), "{shown}");
    assert!(shown.contains("0/1 locks race-free under Miri"), "{shown}");
}
