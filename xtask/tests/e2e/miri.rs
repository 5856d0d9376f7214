//! Miri on a `--crate`'s locks, end to end: a path crate's ticket lock
//! (`xtask/tests/fixtures/ticketlock`) weakened to `Relaxed` in a scratch
//! commit races under Miri, and `--crate HEAD --against-crate BASE` fails
//! the gate naming the lock, the client and the seed; the sound version,
//! run beside it as the base, is clean on every seed of every client.
//! And where Miri cannot be had (a rustup whose nightly has no Miri and
//! cannot fetch it), the run says NOT CHECKED with the command, the rest
//! of the matrix runs, and `--require-gate` fails.

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

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
    assert_gate_agrees(&repo_root(), &dir, &out, &report, &[]);
}

/// A rustup home at `dir` made from this machine's: every toolchain as it
/// is (symlinked), except the nightly, whose Miri is left out (its binaries,
/// its manifest, and its lines in the lists of installed components), so
/// rustup sees a nightly without Miri and would have to fetch it.
fn rustup_home_without_miri(dir: &Path) -> PathBuf {
    use std::os::unix::fs::symlink;
    let real = std::env::var_os("RUSTUP_HOME")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(std::env::var_os("HOME").unwrap()).join(".rustup"));
    let _ = std::fs::remove_dir_all(dir);
    std::fs::create_dir_all(dir.join("toolchains")).unwrap();
    for f in ["settings.toml", "update-hashes"] {
        let from = real.join(f);
        if from.is_file() {
            std::fs::copy(&from, dir.join(f)).unwrap();
        } else if from.is_dir() {
            std::fs::create_dir_all(dir.join(f)).unwrap();
            for e in std::fs::read_dir(&from).unwrap() {
                let e = e.unwrap();
                std::fs::copy(e.path(), dir.join(f).join(e.file_name())).unwrap();
            }
        }
    }
    // `dir/to` holding a symlink to every entry of `from` but those `keep`
    // refuses.
    let link_all = |from: &Path, to: &Path, keep: &dyn Fn(&str) -> bool| {
        std::fs::create_dir_all(to).unwrap();
        for e in std::fs::read_dir(from).unwrap() {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy().into_owned();
            if keep(&name) {
                symlink(e.path(), to.join(&name)).unwrap();
            }
        }
    };
    for e in std::fs::read_dir(real.join("toolchains")).unwrap() {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        let to = dir.join("toolchains").join(&name);
        if !name.starts_with("nightly") {
            symlink(e.path(), &to).unwrap();
            continue;
        }
        let from = e.path();
        link_all(&from, &to, &|n| n != "bin" && n != "lib");
        link_all(&from.join("bin"), &to.join("bin"), &|n| {
            n != "miri" && n != "cargo-miri"
        });
        link_all(&from.join("lib"), &to.join("lib"), &|n| n != "rustlib");
        let rustlib = (from.join("lib/rustlib"), to.join("lib/rustlib"));
        link_all(&rustlib.0, &rustlib.1, &|n| {
            !n.starts_with("manifest-miri") && n != "components" && n != "multirust-config.toml"
        });
        let components = std::fs::read_to_string(rustlib.0.join("components")).unwrap();
        let without: Vec<&str> = components.lines().filter(|l| !l.contains("miri")).collect();
        std::fs::write(rustlib.1.join("components"), without.join("\n") + "\n").unwrap();
        let config = std::fs::read_to_string(rustlib.0.join("multirust-config.toml")).unwrap();
        let blocks: Vec<&str> = config
            .split("[[components]]")
            .filter(|b| !b.contains("miri"))
            .collect();
        std::fs::write(
            rustlib.1.join("multirust-config.toml"),
            blocks.join("[[components]]"),
        )
        .unwrap();
    }
    dir.to_path_buf()
}

#[test]
fn where_miri_cannot_be_had_the_run_says_not_checked_the_rest_runs_and_require_gate_fails() {
    let _cpus = shared_cpus();
    let work = scratch_dir("miri-absent");
    let home = rustup_home_without_miri(&work.join("rustup"));
    let krate = work.join("ticketlock");
    ticketlock(&krate);
    let spec = format!("ticketlock@path:{}", krate.display());
    let (results, json) = (work.join("results"), work.join("gate.json"));
    // No --no-install: the matrix tries to install Miri itself, from a
    // rustup distribution server that is not there.
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(["matrix", "--crate", &spec, "--against-crate", &spec])
        .args(["--targets", "aarch64", "--suites", "spinlock", "--no-insns"])
        .args([
            "--tables",
            "--require-gate",
            "--results",
            s(&results),
            "--json",
            s(&json),
        ])
        .env("RUSTUP_HOME", &home)
        .env("RUSTUP_DIST_SERVER", "http://127.0.0.1:9")
        .current_dir(repo_root())
        .output()
        .unwrap();
    let shown = text(&out);
    let install = lockmatrix::miri::INSTALL;

    // It tried, as docs/ordering.md says, and said why it could not.
    assert!(
        shown.contains(&format!("installing Miri: {install}"))
            || shown.contains("installing Miri: rustup toolchain install nightly"),
        "{shown}"
    );
    assert!(shown.contains("miri: NOT CHECKED: `rustup "), "{shown}");
    // The Miri check says NOT CHECKED with the command, on both sides.
    let dir = newest(&results);
    for side in [dir.join("run.json"), dir.join("base/run.json")] {
        let run = read_json(&side);
        let why = run["miri"]["not_checked"]
            .as_str()
            .unwrap_or_else(|| panic!("{}", run["miri"]));
        assert!(why.contains(install), "{why}");
        assert_eq!(run["miri"]["results"], serde_json::json!([]));
        // The rest of the matrix ran: the target, with the crate's lock measured.
        let target = &run["targets"][0];
        assert_eq!(target["status"]["state"], "ok", "{target}");
        assert!(
            target["suites"][0]["samples"]
                .as_array()
                .is_some_and(|s| !s.is_empty()),
            "{target}"
        );
    }
    assert!(shown.contains("Miri check: NOT CHECKED: "), "{shown}");
    // NOT GATED on that alone, which --require-gate fails (exit 1, not 2).
    let report = read_json(&json);
    assert_eq!(report["result"], "not_gated", "{report}");
    let not_gated: Vec<&str> = report["not_gated"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap())
        .collect();
    assert_eq!(not_gated.len(), 1, "{not_gated:?}");
    assert!(
        not_gated[0].starts_with("the Miri check did not run") && not_gated[0].contains(install),
        "{not_gated:?}"
    );
    assert_eq!(out.status.code(), Some(1), "{shown}");
}

/// Two trees built under Miri one after the other share its target dir,
/// and cargo judges a package fresh by its files' times: a tree whose
/// files are older than the other's build ran the other's binary (an
/// `--against` base after its head; here a checkout beside a CI clone,
/// whose harness no longer matched its own suite and failed to build),
/// and cargo-miri's binary runs Miri from the tree it was built in (a
/// deleted copy of the same sources left it nothing to run). Each tree
/// runs its own sources, from its own place.
#[test]
fn a_tree_checked_under_miri_after_another_runs_its_own_sources() {
    let miri = match lockmatrix::miri::find() {
        Ok(m) => m,
        Err(why) => {
            eprintln!("miri: NOT CHECKED here ({why}): the trees were not built");
            return;
        }
    };
    let _cpus = shared_cpus();
    let work = scratch_dir("miri-trees");
    let (a, b) = (work.join("a"), work.join("b"));
    scratch_repo(&a);
    scratch_repo(&b);
    // Tree b's clients say which tree they are, and b is edited before a
    // is built: its files are older than a's binaries.
    let file = b.join("suites/spinlock/src/miri.rs");
    let text = std::fs::read_to_string(&file).unwrap();
    let marked = text.replace("covers: \"", "covers: \"[tree b] ");
    assert_ne!(marked, text);
    std::fs::write(&file, marked).unwrap();
    let check = |tree: &Path| {
        let req = lockmatrix::miri::Request {
            tree,
            suites: &["spinlock"],
            use_cache: false,
            // Each client's listing is what is compared, not its seeds.
            client_timeout: std::time::Duration::from_secs(1),
        };
        let checked = lockmatrix::miri::check(&req, &miri).unwrap();
        assert!(!checked.results.is_empty(), "{tree:?}: no clients");
        checked
            .results
            .iter()
            .filter(|r| r.covers.starts_with("[tree b] "))
            .count()
    };
    assert_eq!(check(&a), 0, "tree a ran tree b's sources");
    let listed = check(&b);
    assert!(listed > 0, "tree b ran tree a's binary");
    // And back: a again runs a's.
    assert_eq!(check(&a), 0, "tree a ran tree b's binary");
    // A copy of a (the same sources elsewhere), with a gone: cargo-miri's
    // binary says how to run it from its tree, so c builds its own.
    let c = work.join("c");
    scratch_repo(&c);
    std::fs::remove_dir_all(&a).unwrap();
    assert_eq!(check(&c), 0, "tree c ran tree b's sources");
    std::fs::remove_dir_all(&work).unwrap();
}
