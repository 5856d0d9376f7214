//! The model check for real: the suites built with `--cfg loom` for this
//! host and their models run with loom, through `lockmatrix::model`.

use lockmatrix::model::{self, mutate, ModelResult, Request};
use lockmatrix::toolchain::Toolchain;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn toolchain() -> Toolchain {
    model::host_toolchain(&root()).expect("a host toolchain")
}

fn request<'a>(root: &'a Path, tc: &'a Toolchain) -> Request<'a> {
    Request {
        use_cache: false,
        timeout: Duration::from_secs(600),
        ..Request::all(root, tc)
    }
}

fn of<'a>(results: &'a [ModelResult], lock: &str) -> Vec<&'a ModelResult> {
    results.iter().filter(|r| r.lock == lock).collect()
}

/// A scratch copy of the workspace with `edit` applied to one file.
fn edited(name: &str, file: &str, edit: impl FnOnce(&str) -> String) -> PathBuf {
    let scratch = mutate::scratch_copy(&root(), name).unwrap();
    let path = scratch.join(file);
    let text = std::fs::read_to_string(&path).unwrap();
    let changed = edit(&text);
    assert_ne!(changed, text, "the edit changed nothing");
    std::fs::write(&path, changed).unwrap();
    scratch
}

#[test]
fn every_modelled_lock_passes_and_the_broken_control_fails_with_a_trace() {
    let (root, tc) = (root(), toolchain());
    let features = ["spinlock/broken-lock".to_string()];
    let checked = model::check(&Request {
        features: &features,
        ..request(&root, &tc)
    })
    .unwrap();
    assert!(checked.build_secs.is_some(), "nothing was built");
    let spinlock = model::modelled_locks(&root, "spinlock").unwrap();
    assert_eq!(
        spinlock,
        ["broken", "mcs", "qspinlock", "tas", "ticket", "ttas"]
    );
    let rwsem = model::modelled_locks(&root, "rwsem").unwrap();
    assert_eq!(rwsem, ["fair_rwspin", "linux_rwsem"]);
    for suite in model::SUITES {
        for lock in model::modelled_locks(&root, suite).unwrap() {
            let results = of(&checked.results, &lock);
            assert!(!results.is_empty(), "{lock} was not checked");
            for r in results {
                assert!(!r.cached && r.interleavings > 0 && r.secs >= 0.0);
                assert_eq!(r.suite, *suite);
                if lock == "broken" {
                    continue;
                }
                assert!(r.ok, "{lock}: {}: {:?}\n{:#?}", r.model, r.failure, r.trace);
                assert!(r.failure.is_none() && r.trace.is_empty());
                assert!(
                    r.reached.values().all(|&n| n > 0),
                    "{lock}: {:?}",
                    r.reached
                );
            }
        }
    }
    let broken = of(&checked.results, "broken");
    assert_eq!(broken.len(), 1);
    let b = broken[0];
    assert!(!b.ok, "the broken lock passed its model");
    let failure = b.failure.as_deref().unwrap();
    assert!(failure.contains("Causality violation"), "{failure}");
    // The failing execution's steps, then loom's message with where.
    assert!(
        b.trace.iter().any(|l| l.starts_with("thread 1: ")),
        "{:?}",
        b.trace
    );
    assert!(
        b.trace.iter().any(|l| l.contains("src/model/mutex.rs:")),
        "{:?}",
        b.trace
    );
    // The 3-thread qspinlock model reaches the queue hand-over.
    let q = of(&checked.results, "qspinlock");
    assert!(
        q.iter()
            .any(|r| r.reached.get("handed on").is_some_and(|&n| n > 0)),
        "{q:?}"
    );
    let mut unmodelled: Vec<&str> = checked.unmodelled.iter().map(|u| u.lock.as_str()).collect();
    let elsewhere = lockmatrix::model::unmodelled_elsewhere();
    unmodelled.extend(elsewhere.iter().map(|u| u.lock.as_str()));
    for lock in [
        "std_mutex",
        "parking_lot_mutex",
        "spin_ticket_mutex",
        "std_rwlock",
        "parking_lot_rwlock",
        "primitives",
    ] {
        assert!(
            unmodelled.contains(&lock),
            "{lock} not listed: {unmodelled:?}"
        );
    }
    assert!(checked.unmodelled.iter().all(|u| !u.why.is_empty()));
}

#[test]
fn a_ticket_unlock_weakened_to_relaxed_is_reported_violated_naming_ticket() {
    let scratch = edited(
        "ticket-relaxed",
        "suites/spinlock/src/locks/ticket.rs",
        |t| {
            t.replace(
                "self.owner.store(served.wrapping_add(1), Release);",
                "self.owner.store(served.wrapping_add(1), Relaxed);",
            )
        },
    );
    let tc = toolchain();
    let checked = model::check(&Request {
        suites: &["spinlock"],
        ..request(&scratch, &tc)
    });
    std::fs::remove_dir_all(&scratch).unwrap();
    let checked = checked.unwrap();
    let failed: Vec<&ModelResult> = checked.failed().collect();
    assert!(!failed.is_empty(), "the weakened ticket lock passed");
    assert!(failed.iter().all(|r| r.lock == "ticket"), "{failed:?}");
    let failure = failed[0].failure.as_deref().unwrap();
    assert!(failure.contains("Causality violation"), "{failure}");
    assert!(!failed[0].trace.is_empty());
    // The other locks of the suite still pass.
    assert!(of(&checked.results, "mcs").iter().all(|r| r.ok));
}

#[test]
fn an_unchanged_lock_comes_from_the_cache_and_a_changed_one_is_checked_again() {
    // A tree of its own content, so no earlier run has cached its keys.
    let nonce = format!("// cache test {}\n", std::process::id());
    let scratch = edited("cache", "suites/rwsem/src/sync.rs", |t| {
        format!("{t}{nonce}")
    });
    let tc = toolchain();
    let check = |root: &Path| {
        model::check(&Request {
            suites: &["rwsem"],
            use_cache: true,
            ..request(root, &tc)
        })
        .unwrap()
    };
    let first = check(&scratch);
    assert!(first.build_secs.is_some());
    assert!(first.results.iter().all(|r| !r.cached && r.ok));
    let again = check(&scratch);
    assert_eq!(again.build_secs, None, "built again with nothing changed");
    assert!(again.results.iter().all(|r| r.cached));
    let strip = |rs: &[ModelResult]| {
        rs.iter()
            .map(|r| (r.lock.clone(), r.model.clone(), r.ok, r.interleavings))
            .collect::<Vec<_>>()
    };
    assert_eq!(strip(&again.results), strip(&first.results));
    assert_eq!(again.unmodelled, first.unmodelled);
    // One lock's file changes: that lock alone is checked again.
    let file = scratch.join("suites/rwsem/src/locks/fair_rwspin.rs");
    let text = std::fs::read_to_string(&file).unwrap();
    std::fs::write(&file, format!("{text}{nonce}")).unwrap();
    let third = check(&scratch);
    std::fs::remove_dir_all(&scratch).unwrap();
    assert!(third.build_secs.is_some());
    for r in &third.results {
        assert_eq!(r.cached, r.lock != "fair_rwspin", "{} {}", r.lock, r.model);
    }
}
