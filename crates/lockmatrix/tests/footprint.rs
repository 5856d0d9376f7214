//! The ordering footprint on real binaries: the spinlock suite is built for
//! aarch64 and powerpc64le with the matrix's own build, run once under
//! `qemu-<arch>` with the counting plugin (for its `executed` and `probes`
//! records), and its footprints computed with the target's objdump:
//!
//! - powerpc64le: ticket's unlock has one `lwsync` (statically), and its
//!   uncontended lock+unlock executes exactly one per op;
//! - aarch64: ticket's lock has an acquire (an `ldar`/`ldapr`, or a call to
//!   an outlined `_acq` helper);
//! - a scratch copy of the tree whose ticket unlock stores `Relaxed`
//!   instead of `Release` has another footprint on powerpc64le: `lwsync
//!   1 -> 0`, statically and executed, and nothing else changes.
//!
//! Needs what `cargo xtask matrix` installs: the cross gcc and binutils of
//! both targets, `qemu-user`, a build-std toolchain (Debian's `rustc-web`,
//! `rust-web-src`) and a host toolchain for the plugin (1.88 or newer). A
//! missing tool fails the test, named.

use lockmatrix::build::{self, Job, Tree};
use lockmatrix::config::{self, Target};
use lockmatrix::footprint::{self, Class, Entry, ExecutedFootprint, StaticFootprint};
use lockmatrix::observe::Quiet;
use lockmatrix::protocol::{self, Parsed};
use lockmatrix::{plugin, runner, toolchain};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn target(name: &str) -> Target {
    let config = config::load(&root().join("targets.yaml")).unwrap();
    config
        .targets
        .into_iter()
        .find(|t| t.name == name)
        .unwrap_or_else(|| panic!("no target {name} in targets.yaml"))
}

/// A directory of this test's own, removed when dropped.
struct Scratch(PathBuf);

impl Scratch {
    fn new(what: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!(
            "lockmatrix-footprint-{what}-{}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Builds the spinlock suite of the tree at `tree` for `t`, as the matrix
/// does (same cache, same flags); returns the binary, copied into `out`.
fn build_spinlock(tree: &Path, t: &Target, out: &Path) -> PathBuf {
    let need = toolchain::rust_version(&tree.join("Cargo.toml"));
    let toolchain = toolchain::discover(&t.triple, need).unwrap_or_else(|e| panic!("{e}"));
    let linker_name = t.linker.clone().unwrap_or_else(|| "cc".into());
    let linker = toolchain::which(&linker_name).unwrap_or_else(|| {
        panic!(
            "linker {linker_name} not found: install {}",
            t.packages.join(" ")
        )
    });
    let job = Job {
        target: t,
        toolchain: Some(toolchain),
        linker,
        cache: lockmatrix::cache::check().unwrap(),
    };
    let tree = Tree {
        root: tree,
        logs: out.to_path_buf(),
        bins: out.to_path_buf(),
    };
    let binaries = build::TreeBuilder::new(&tree, &["spinlock"], &[])
        .build(&job, &Quiet)
        .binaries
        .unwrap_or_else(|e| panic!("building spinlock for {}: {e}", t.name));
    binaries["spinlock"].path.clone()
}

/// One counted run of the ticket lock's uncontended cell under the
/// target's emulator with the plugin.
fn run_ticket(t: &Target, binary: &Path, plugin: &Path) -> Parsed {
    let args: Vec<String> = [
        "--bench",
        "lock_unlock",
        "--lock",
        "ticket",
        "--threads",
        "1",
        "--rounds",
        "1",
        "--duration-ms",
        "5",
    ]
    .map(String::from)
    .to_vec();
    let inv = runner::invocation(t, binary, &args, Some(plugin));
    let o = runner::execute(&inv, Path::new("/"), Duration::from_secs(300))
        .unwrap_or_else(|e| panic!("{}: {e}", inv.shell()));
    assert_eq!(
        o.exit,
        runner::Exit::Code(0),
        "{}\n{}",
        inv.shell(),
        o.stderr
    );
    let parsed = protocol::parse(&o.stdout);
    assert!(parsed.bad_lines.is_empty(), "{:?}", parsed.bad_lines);
    parsed
}

struct Footprints {
    statics: BTreeMap<footprint::Key, StaticFootprint>,
    executed: ExecutedFootprint,
    insns_per_op: f64,
}

fn footprints(t: &Target, tree: &Path, out: &Path, plugin: &Path) -> Footprints {
    let binary = build_spinlock(tree, t, out);
    let parsed = run_ticket(t, &binary, plugin);
    let probes = parsed.probes.as_ref().expect("a probes record");
    let statics = footprint::for_target(t, &binary, probes).unwrap_or_else(|e| panic!("{e}"));
    let isa = footprint::Isa::from_triple(&t.triple).unwrap();
    let [record] = &parsed.executed[..] else {
        panic!("one executed record expected: {:?}", parsed.executed);
    };
    let insns_per_op = parsed
        .samples
        .iter()
        .find(|s| s.metric == "insns_per_op")
        .and_then(|s| s.value)
        .expect("an insns_per_op sample");
    Footprints {
        statics,
        executed: footprint::executed(isa, record),
        insns_per_op,
    }
}

fn key(op: &str) -> footprint::Key {
    let n = |s: &str| lockmatrix::name::Name::parse(s).unwrap();
    (n("spinlock"), n("ticket"), n(op))
}

fn count<N: Copy + Default>(entries: &[Entry<N>], class: Class, insn: &str) -> N {
    entries
        .iter()
        .find(|e| e.class == class && e.insn == insn)
        .map_or(N::default(), |e| e.count)
}

fn plugin_so() -> PathBuf {
    plugin::build(&root()).unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn ticket_footprints_on_powerpc64le_and_aarch64() {
    let plugin = plugin_so();

    let out = Scratch::new("ppc64le");
    let ppc = footprints(&target("powerpc64le"), &root(), &out.0, &plugin);
    let unlock = &ppc.statics[&key("unlock")];
    assert_eq!(
        count(&unlock.entries, Class::FullBarrier, "lwsync"),
        1,
        "{unlock:?}"
    );
    assert_eq!(unlock.followed, ["spinlock::probes::unlock"]);
    // Executed: exactly one lwsync per lock+unlock (unlock's release), and
    // the per-instruction counts add up to the cell's count.
    assert_eq!(
        count(&ppc.executed.entries, Class::FullBarrier, "lwsync"),
        1.0,
        "{:?}",
        ppc.executed
    );
    assert_eq!(ppc.executed.insns, ppc.insns_per_op);
    assert!(ppc
        .executed
        .entries
        .iter()
        .all(|e| e.count.fract() == 0.0 && e.count > 0.0));

    let out = Scratch::new("aarch64");
    let a64 = footprints(&target("aarch64"), &root(), &out.0, &plugin);
    let lock = &a64.statics[&key("lock")];
    let acquires = lock.entries.iter().any(|e| {
        e.class == Class::OneWay
            && (e.insn.starts_with("ldar")
                || e.insn.starts_with("ldapr")
                || e.insn.starts_with("call __aarch64_") && e.insn.ends_with("_acq"))
    });
    assert!(acquires, "{lock:?}");
    assert!(
        lock.followed
            .iter()
            .any(|f| f == "spinlock::locks::ticket::Ticket::wait"),
        "the slow path kept out of line counts for lock: {:?}",
        lock.followed
    );
    assert_eq!(a64.executed.insns, a64.insns_per_op);
}

#[test]
fn a_relaxed_ticket_unlock_loses_its_lwsync_on_powerpc64le() {
    let plugin = plugin_so();
    let t = target("powerpc64le");

    // A copy of the tree with the weaker unlock: a real code change, as a
    // pull request would make it.
    let copy = Scratch::new("relaxed-tree");
    copy_tree(&root(), &copy.0);
    let ticket = copy.0.join("suites/spinlock/src/locks/ticket.rs");
    let release = "self.owner.store(served.wrapping_add(1), Release);";
    let text = std::fs::read_to_string(&ticket).unwrap();
    assert_eq!(
        text.matches(release).count(),
        1,
        "ticket.rs no longer stores with `{release}`: update this test"
    );
    std::fs::write(
        &ticket,
        text.replace(release, &release.replace("Release", "Relaxed")),
    )
    .unwrap();

    let (out_a, out_b) = (Scratch::new("release"), Scratch::new("relaxed"));
    let release = footprints(&t, &root(), &out_a.0, &plugin);
    let relaxed = footprints(&t, &copy.0, &out_b.0, &plugin);

    // The two sides differ, and only by unlock's lwsync.
    let unlock = footprint::changes(
        &release.statics[&key("unlock")].entries,
        &relaxed.statics[&key("unlock")].entries,
    );
    let shown: Vec<String> = unlock.iter().map(|c| format!("{} {c}", c.class)).collect();
    assert_eq!(shown, ["full barrier lwsync 1 -> 0"]);
    let lock = footprint::changes(
        &release.statics[&key("lock")].entries,
        &relaxed.statics[&key("lock")].entries,
    );
    assert!(lock.is_empty(), "{lock:?}");
    let executed = footprint::changes(&release.executed.entries, &relaxed.executed.entries);
    let shown: Vec<String> = executed.iter().map(|c| c.to_string()).collect();
    assert_eq!(shown, ["lwsync 1 -> 0"]);
    // And what the gate sees today: one instruction fewer.
    assert_eq!(relaxed.insns_per_op, release.insns_per_op - 1.0);
}

/// Copies what a build of the suites reads: the workspace manifests and
/// every member's sources (no `target/`, no `results/`).
fn copy_tree(from: &Path, to: &Path) {
    for file in ["Cargo.toml", "Cargo.lock", "targets.yaml"] {
        std::fs::copy(from.join(file), to.join(file)).unwrap();
    }
    for dir in ["suites", "crates", "xtask", "qemu-plugin", ".cargo"] {
        copy_dir(&from.join(dir), &to.join(dir));
    }
}

fn copy_dir(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name == "target" {
            continue;
        }
        let path = entry.path();
        if path.is_dir() {
            copy_dir(&path, &to.join(&name));
        } else {
            std::fs::copy(&path, to.join(&name)).unwrap();
        }
    }
}
