//! The C twin of the atomic suite (`suites/atomic-c`) speaks the result
//! protocol as the Rust suites do: built for this host by the matrix's own
//! build (`build::c`, the host's gcc), run once under `qemu-x86_64` with
//! the counting plugin (so every record kind appears: env, probes,
//! samples of both metrics, checks, executed), its output is read by
//! `protocol::parse` without a bad line, and each cell kind's records,
//! their values normalized, equal a golden file in `tests/golden/atomic-c/`
//! (`LOCKMATRIX_BLESS=1` rewrites them). The same cells of the Rust atomic
//! suite have the same records, field for field, but for the suite's name.
//!
//! Needs what `cargo xtask matrix --targets x86_64` installs: gcc,
//! qemu-user, and a host toolchain for the plugin.

use lockmatrix::build::{self, Job, Tree};
use lockmatrix::config::{self, Target};
use lockmatrix::observe::Quiet;
use lockmatrix::{plugin, protocol, runner, toolchain};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;
use std::time::Duration;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn x86_64() -> Target {
    let config = config::load(&root().join("targets.yaml")).unwrap();
    config
        .targets
        .into_iter()
        .find(|t| t.name == "x86_64")
        .expect("x86_64 in targets.yaml")
}

/// Builds `suite` for the host as the matrix does, runs it once under
/// qemu-x86_64 with the plugin, and returns its stdout.
fn run_counted(suite: &str) -> String {
    let t = x86_64();
    let out = std::env::temp_dir().join(format!(
        "lockmatrix-atomic-c-protocol-{suite}-{}",
        std::process::id()
    ));
    std::fs::create_dir_all(&out).unwrap();
    let need = toolchain::rust_version(&root().join("Cargo.toml"));
    let rust = (suite != "atomic-c")
        .then(|| toolchain::discover(&t.triple, need).unwrap_or_else(|e| panic!("{e}")));
    let job = Job {
        target: &t,
        toolchain: rust,
        linker: toolchain::which("cc").expect("cc (Debian package gcc)"),
        cache: lockmatrix::cache::check().unwrap(),
    };
    let root = root();
    let tree = Tree {
        root: &root,
        logs: out.clone(),
        bins: out.clone(),
    };
    let built = build::TreeBuilder::new(&tree, &[suite], &[])
        .build(&job, &Quiet)
        .binaries
        .unwrap_or_else(|e| panic!("building {suite}: {e}"));
    let plugin = plugin::build(&root).unwrap_or_else(|e| panic!("the plugin: {e}"));
    let args: Vec<String> = ["--rounds", "2", "--iters", "200", "--threads", "1,2"]
        .map(String::from)
        .to_vec();
    let inv = runner::under_qemu(
        "qemu-x86_64",
        None,
        &built[suite].path,
        &args,
        Some(&plugin),
    );
    let o = runner::execute(&inv, Path::new("/"), Duration::from_secs(300))
        .unwrap_or_else(|e| panic!("{}: {e}", inv.shell()));
    let _ = std::fs::remove_dir_all(&out);
    assert_eq!(
        o.exit,
        runner::Exit::Code(0),
        "{}\n{}",
        inv.shell(),
        o.stderr
    );
    o.stdout
}

fn c_output() -> &'static str {
    static OUT: OnceLock<String> = OnceLock::new();
    OUT.get_or_init(|| run_counted("atomic-c"))
}

/// A record with what varies from run to run or machine to machine
/// replaced by its kind: numbers, the timer's unit and rate, offsets, the
/// executed instruction texts.
fn normalize(mut v: Value) -> Value {
    let number = |v: &mut Value| {
        if v.is_number() {
            *v = Value::from("<number>");
        }
    };
    let o = v.as_object_mut().expect("a record is an object");
    for key in ["value", "timer_hz", "cpus", "seed"] {
        o.get_mut(key).map(number);
    }
    if let Some(Value::String(u)) = o.get_mut("unit") {
        if u == "ns" || u.ends_with("_ticks") {
            *u = "<timer unit>".into();
        }
    }
    if let Some(Value::Object(d)) = o.get_mut("details") {
        d.values_mut().for_each(number);
    }
    for key in ["per_op", "entered"] {
        if let Some(map) = o.get_mut(key) {
            *map = Value::from("<instructions>");
        }
    }
    for key in ["timer_unit", "timer", "relax", "variants"] {
        if let Some(x) = o.get_mut(key) {
            *x = Value::from("<host>");
        }
    }
    if let Some(Value::Array(ps)) = o.get_mut("probes") {
        for p in ps {
            p.get_mut("offset").map(number);
        }
    }
    v
}

/// The records of `stdout` that belong to `kind`, normalized, one a line.
fn records(stdout: &str, kind: &str) -> String {
    let ops = |v: &Value| v["case"]["op"].as_str().unwrap_or("").to_string();
    stdout
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .filter(|v| {
            let (t, bench, op) = (v["type"].as_str().unwrap(), v["bench"].as_str(), ops(v));
            match kind {
                "env" | "probes" => t == kind,
                "cas" | "add_return" | "fence" | "irq" => {
                    bench == Some("single_thread") && op.starts_with(kind)
                }
                "contended_add" => bench == Some("contended_add"),
                _ => unreachable!("{kind}"),
            }
        })
        .map(|v| format!("{}\n", normalize(v)))
        .collect()
}

/// The golden file of `kind` equals what the C suite printed.
fn golden(kind: &str) {
    let got = records(c_output(), kind);
    let path = root().join(format!(
        "crates/lockmatrix/tests/golden/atomic-c/{kind}.jsonl"
    ));
    if std::env::var_os("LOCKMATRIX_BLESS").is_some() {
        std::fs::write(&path, &got).unwrap();
    }
    let want = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e} (LOCKMATRIX_BLESS=1 writes it)", path.display()));
    assert_eq!(
        got,
        want,
        "{} differs from the suite's records",
        path.display()
    );
}

#[test]
fn every_line_is_a_protocol_record() {
    let p = protocol::parse(c_output());
    assert!(p.bad_lines.is_empty(), "{:?}", p.bad_lines);
    let env = p.env.expect("an env record");
    assert_eq!(
        (env.suite.as_str(), env.protocol),
        ("atomic-c", protocol::PROTOCOL_VERSION)
    );
    assert!(p.checks.iter().all(|c| c.ok), "{:?}", p.checks);
    // Counted under QEMU: an executed record per counted cell, and the
    // fully ordered CAS is x86's locked cmpxchg, the local one is not.
    let isa = lockmatrix::footprint::Isa::from_triple("x86_64-unknown-linux-gnu").unwrap();
    let insns = |op: &str| {
        let r = p
            .executed
            .iter()
            .find(|x| x.case.get("op") == Some(&Value::from(op)));
        let f = lockmatrix::footprint::executed(isa, r.unwrap_or_else(|| panic!("{op}")));
        f.entries.iter().map(|e| e.insn.clone()).collect::<Vec<_>>()
    };
    assert_eq!(insns("cas_sync"), ["lock cmpxchg"]);
    assert_eq!(insns("cas_local"), Vec::<String>::new());
    assert_eq!(insns("add_return_sync"), ["lock xadd"]);
    assert_eq!(p.probes.expect("a probes record").probes.len(), 5);
}

#[test]
fn env_record() {
    golden("env");
}

#[test]
fn probes_record() {
    golden("probes");
}

#[test]
fn cas_cells() {
    golden("cas");
}

#[test]
fn add_return_cells() {
    golden("add_return");
}

#[test]
fn fence_cell() {
    golden("fence");
}

#[test]
fn irq_cells() {
    golden("irq");
}

#[test]
fn contended_add_cells() {
    golden("contended_add");
}

/// The Rust suite, built and run the same way, prints the same records
/// for the cells both have, but for the suite's name (and the variants
/// its env describes). Neither declares which of its cells gate: protocol
/// 4 leaves that to the tool.
#[test]
fn the_rust_suite_prints_the_same_records() {
    let rust = run_counted("atomic").replace("\"suite\":\"atomic\"", "\"suite\":\"atomic-c\"");
    for kind in ["cas", "add_return", "irq", "contended_add", "fence"] {
        assert_eq!(records(&rust, kind), records(c_output(), kind), "{kind}");
    }
    assert!(
        !rust.contains("\"gating\""),
        "no sample says whether it gates"
    );
}
