//! The rules the library keeps, as tests that read its sources (as
//! rust-analyzer's tidy does): each module uses only the layers below it,
//! no two files import each other round a circle, and errors are typed,
//! never `Result<_, String>` nor `anyhow` (outside the files not yet
//! converted, a list that only shrinks). The module list is read from
//! `lib.rs`, the files from the tree: a new module or file is checked
//! without anyone remembering to add it, and a new module without a layer
//! fails here.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// The layers, lowest first: a module may use the modules of lower
/// layers only (not its own layer's, not a higher one's). `matrix` and
/// `gate` share a layer: the run never reads a verdict, the gate never
/// runs anything.
const LAYERS: &[&[&str]] = &[
    &[
        "name", "file", "observe", "cache", "escape", "error", "scratch",
    ],
    &["commit", "config", "protocol", "toolchain"],
    &["strictness"],
    &[
        "container",
        "select",
        "cpu",
        "cells",
        "acknowledge",
        "policy",
        "footprint",
    ],
    &["host", "readiness", "family"],
    &["runner", "build"],
    &["plugin", "model", "subject", "contention"],
    &["miri"],
    &["results"],
    &["baseline"],
    &["matrix", "gate"],
    &["report", "ci", "job"],
];

/// Files that are tests themselves.
fn is_test_file(p: &Path) -> bool {
    p.file_name()
        .is_some_and(|n| n == "tests.rs" || n == "tidy.rs")
}

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`, relative to `src()`.
fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            files(&p, out);
        } else if p.extension().is_some_and(|e| e == "rs") && !is_test_file(&p) {
            out.push(p.strip_prefix(src()).unwrap().to_path_buf());
        }
    }
}

/// The module path of a file: `gate/evaluate.rs` is `[gate, evaluate]`,
/// `gate/mod.rs` is `[gate]`, `lib.rs` is `[]`.
fn module_of(file: &Path) -> Vec<String> {
    let mut parts: Vec<String> = file
        .with_extension("")
        .iter()
        .map(|c| c.to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|l| l == "mod" || l == "lib") {
        parts.pop();
    }
    parts
}

/// A file's code as the rules read it: without its unit tests, comments
/// and string literals.
fn code(file: &Path) -> String {
    strip(&std::fs::read_to_string(src().join(file)).unwrap())
}

/// [`code`] of a file's text.
fn strip(text: &str) -> String {
    let text = match text.find("#[cfg(test)]\nmod tests") {
        Some(i) => &text[..i],
        None => text,
    };
    blank(text)
}

/// `text` without its comments and string literals' text, line for line
/// (a string keeps its line breaks, so a line number still points there).
fn blank(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '/' if chars.peek() == Some(&'/') => {
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                        break;
                    }
                }
            }
            '"' => {
                // A string's text never counts; a char literal '"' is
                // written '\"' in this code base.
                let mut escaped = false;
                out.push('"');
                for c in chars.by_ref() {
                    if c == '\n' {
                        out.push('\n');
                    }
                    match (escaped, c) {
                        (true, _) => escaped = false,
                        (false, '\\') => escaped = true,
                        (false, '"') => break,
                        _ => {}
                    }
                }
                out.push('"');
            }
            _ => out.push(c),
        }
    }
    out
}

/// The module paths `code` refers to from module `me` (a file's own
/// module): `crate::a::b`, `super::x`, `self::y`, each item of a
/// `{...}` group, and a child module named at the start of a path.
fn references(code: &str, me: &[String], children: &BTreeSet<String>) -> Vec<Vec<String>> {
    let chars: Vec<char> = code.chars().collect();
    let is_id = |c: char| c.is_alphanumeric() || c == '_';
    let ident_at = |mut k: usize| -> (String, usize) {
        let from = k;
        while k < chars.len() && is_id(chars[k]) {
            k += 1;
        }
        (chars[from..k].iter().collect(), k)
    };
    let colons = |k: usize| chars.get(k) == Some(&':') && chars.get(k + 1) == Some(&':');
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let starts =
            is_id(chars[i]) && (i == 0 || !is_id(chars[i - 1])) && !(i >= 2 && colons(i - 2));
        if !starts {
            i += 1;
            continue;
        }
        // One path: its segments, and the items of a closing `{...}`
        // (`pub(super)` names no path: a path has a `::`).
        let (mut segs, mut k) = (Vec::new(), i);
        let mut group = Vec::new();
        let mut is_path = false;
        loop {
            let (name, end) = ident_at(k);
            segs.push(name);
            k = end;
            if !colons(k) {
                break;
            }
            is_path = true;
            k += 2;
            if chars.get(k) == Some(&'{') {
                let mut depth = 0;
                let mut item = String::new();
                while k < chars.len() {
                    let c = chars[k];
                    k += 1;
                    match c {
                        '{' => depth += 1,
                        '}' => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        ',' if depth == 1 => group.push(std::mem::take(&mut item)),
                        _ if depth == 1 => item.push(c),
                        _ => {}
                    }
                }
                group.push(item);
                break;
            }
            if !chars.get(k).is_some_and(|c| is_id(*c)) {
                break;
            }
        }
        i = k.max(i + 1);
        if !is_path {
            continue;
        }
        let mut base = match segs[0].as_str() {
            "crate" => Vec::new(),
            "self" => me.to_vec(),
            "super" => me[..me.len().saturating_sub(1)].to_vec(),
            h if children.contains(h) && segs.len() + group.len() > 1 => {
                let mut m = me.to_vec();
                m.push(h.to_string());
                m
            }
            _ => continue,
        };
        let mut rest = &segs[1..];
        while rest.first().is_some_and(|s| s == "super") {
            base.pop();
            rest = &rest[1..];
        }
        base.extend(rest.iter().cloned());
        let items: Vec<String> = group
            .iter()
            .map(|g| g.trim().split("::").next().unwrap_or("").trim().to_string())
            .filter(|g| !g.is_empty() && g != "self" && g != "*")
            .collect();
        if items.is_empty() {
            out.push(base);
        } else {
            for item in items {
                let mut p = base.clone();
                p.push(item);
                out.push(p);
            }
        }
    }
    out
}

/// The library's files and, for each, the files it imports from.
fn graph() -> BTreeMap<PathBuf, BTreeSet<PathBuf>> {
    let mut all = Vec::new();
    files(&src(), &mut all);
    let by_module: BTreeMap<Vec<String>, PathBuf> =
        all.iter().map(|f| (module_of(f), f.clone())).collect();
    let mut out = BTreeMap::new();
    for f in &all {
        let me = module_of(f);
        let children: BTreeSet<String> = by_module
            .keys()
            .filter(|k| k.len() == me.len() + 1 && k[..me.len()] == me[..])
            .map(|k| k[me.len()].clone())
            .collect();
        let mut deps = BTreeSet::new();
        for r in references(&code(f), &me, &children) {
            // The deepest module the path names.
            let found = (1..=r.len())
                .rev()
                .find_map(|n| by_module.get(&r[..n]))
                .filter(|to| *to != f);
            if let Some(to) = found {
                deps.insert(to.clone());
            }
        }
        out.insert(f.clone(), deps);
    }
    out
}

#[test]
fn every_module_has_a_layer_and_uses_only_lower_ones() {
    let lib = std::fs::read_to_string(src().join("lib.rs")).unwrap();
    let modules: Vec<&str> = lib
        .lines()
        .filter_map(|l| {
            l.strip_prefix("pub mod ")
                .or_else(|| l.strip_prefix("mod "))
        })
        .filter_map(|l| l.strip_suffix(';'))
        .filter(|m| *m != "tidy")
        .collect();
    let layer = |m: &str| LAYERS.iter().position(|l| l.contains(&m));
    let unranked: Vec<&&str> = modules.iter().filter(|m| layer(m).is_none()).collect();
    assert!(
        unranked.is_empty(),
        "modules without a layer in tidy.rs's LAYERS: {unranked:?}"
    );
    let mut climbing = Vec::new();
    for (file, deps) in graph() {
        let Some(own) = module_of(&file).first().cloned() else {
            continue;
        };
        for d in deps {
            let Some(other) = module_of(&d).first().cloned() else {
                continue;
            };
            if other != own && layer(&other) >= layer(&own) {
                climbing.push(format!(
                    "{} uses {} ({other} is not below {own})",
                    file.display(),
                    d.display()
                ));
            }
        }
    }
    assert!(
        climbing.is_empty(),
        "imports that climb:\n{}",
        climbing.join("\n")
    );
}

#[test]
fn no_two_files_import_each_other_round_a_circle() {
    let g = graph();
    // Tarjan's strongly connected components.
    struct State<'a> {
        g: &'a BTreeMap<PathBuf, BTreeSet<PathBuf>>,
        index: BTreeMap<&'a PathBuf, usize>,
        low: BTreeMap<&'a PathBuf, usize>,
        stack: Vec<&'a PathBuf>,
        on: BTreeSet<&'a PathBuf>,
        circles: Vec<Vec<String>>,
    }
    fn visit<'a>(s: &mut State<'a>, v: &'a PathBuf) {
        let n = s.index.len();
        s.index.insert(v, n);
        s.low.insert(v, n);
        s.stack.push(v);
        s.on.insert(v);
        for w in &s.g[v] {
            if !s.index.contains_key(w) {
                visit(s, w);
                let lw = s.low[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(lw);
            } else if s.on.contains(w) {
                let iw = s.index[w];
                let lv = s.low.get_mut(v).unwrap();
                *lv = (*lv).min(iw);
            }
        }
        if s.low[v] == s.index[v] {
            let mut component = Vec::new();
            while let Some(w) = s.stack.pop() {
                s.on.remove(w);
                component.push(w.display().to_string());
                if w == v {
                    break;
                }
            }
            if component.len() > 1 {
                component.sort();
                s.circles.push(component);
            }
        }
    }
    let mut s = State {
        g: &g,
        index: BTreeMap::new(),
        low: BTreeMap::new(),
        stack: Vec::new(),
        on: BTreeSet::new(),
        circles: Vec::new(),
    };
    for v in g.keys() {
        if !s.index.contains_key(v) {
            visit(&mut s, v);
        }
    }
    let said: Vec<String> = s
        .circles
        .iter()
        .map(|c| {
            let edges: Vec<String> = g
                .iter()
                .filter(|(f, _)| c.contains(&f.display().to_string()))
                .flat_map(|(f, deps)| {
                    deps.iter()
                        .filter(|d| c.contains(&d.display().to_string()))
                        .map(move |d| format!("  {} -> {}", f.display(), d.display()))
                })
                .collect();
            format!("{}\n{}", c.join(" <-> "), edges.join("\n"))
        })
        .collect();
    assert!(
        said.is_empty(),
        "files that import each other round a circle (move what both need into a file of its own):\n{}",
        said.join("\n")
    );
}

#[test]
fn errors_are_typed_never_a_string() {
    let mut all = Vec::new();
    files(&src(), &mut all);
    let mut found = Vec::new();
    for f in all {
        let code = code(&f);
        for (i, _) in code.match_indices("Result<") {
            // The type arguments, to the `>` that closes them.
            let mut depth = 0;
            let mut args = String::new();
            for c in code[i + "Result<".len()..].chars() {
                match c {
                    '<' | '(' => depth += 1,
                    '>' | ')' if depth == 0 => break,
                    '>' | ')' => depth -= 1,
                    _ => {}
                }
                args.push(c);
            }
            let mut top = Vec::new();
            let (mut d, mut from) = (0, 0);
            for (j, c) in args.char_indices() {
                match c {
                    '<' | '(' => d += 1,
                    '>' | ')' => d -= 1,
                    ',' if d == 0 => {
                        top.push(&args[from..j]);
                        from = j + 1;
                    }
                    _ => {}
                }
            }
            top.push(&args[from..]);
            let untyped = |e: &str| matches!(e.trim(), "String" | "&str" | "&'static str");
            if top.get(1).is_some_and(|e| untyped(e)) {
                let line = code[..i].lines().count();
                found.push(format!("{}:{line}: Result<{args}>", f.display()));
            }
        }
    }
    assert!(
        found.is_empty(),
        "Result<_, String> (or &str) in the library (errors there are typed enums):\n{}",
        found.join("\n")
    );
}

/// The lines (from 1) of `code` ([`blank`]'s) that name `anyhow` as a word.
fn anyhow_lines(code: &str) -> Vec<usize> {
    let word = |c: char| c.is_alphanumeric() || c == '_';
    code.match_indices("anyhow")
        .filter(|&(i, w)| {
            !code[..i].chars().next_back().is_some_and(word)
                && !code[i + w.len()..].chars().next().is_some_and(word)
        })
        .map(|(i, _)| code[..i].matches('\n').count() + 1)
        .collect()
}

#[test]
fn errors_are_typed_never_anyhow() {
    // Every file, its unit tests and the `tests.rs` files too.
    fn every(dir: &Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                every(&p, out);
            } else if p.extension().is_some_and(|e| e == "rs") && !p.ends_with("tidy.rs") {
                out.push(p.strip_prefix(src()).unwrap().to_path_buf());
            }
        }
    }
    let mut all = Vec::new();
    every(&src(), &mut all);
    all.sort();
    let mut found = Vec::new();
    for f in &all {
        let text = std::fs::read_to_string(src().join(f)).unwrap();
        for line in anyhow_lines(&blank(&text)) {
            let shown = text.lines().nth(line - 1).unwrap_or("").trim();
            found.push(format!("{}:{line}: {shown}", f.display()));
        }
    }
    assert!(
        found.is_empty(),
        "anyhow in the library (its errors are typed enums deriving thiserror::Error; anyhow is for xtask):\n{}",
        found.join("\n")
    );
    let manifest = std::fs::read_to_string(src().join("../Cargo.toml")).unwrap();
    assert!(
        !manifest.lines().any(|l| l.starts_with("anyhow")),
        "the library depends on anyhow again: its errors are typed"
    );
}

/// The rules read what they should: a circle, a climbing import and a
/// string error planted in text are found.
#[test]
fn the_readers_find_what_they_look_for() {
    let me = vec!["gate".to_string(), "evaluate".to_string()];
    let children = BTreeSet::from(["inner".to_string()]);
    let refs = references(
        &strip("use crate::results::{Run, Status};\nuse super::baseline::Testbed;\nlet x = inner::f(); // crate::ci::x\nlet s = \"crate::report::x\";"),
        &me,
        &children,
    );
    let has = |p: &[&str]| {
        refs.iter()
            .any(|r| r == &p.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    };
    assert!(
        has(&["results", "Run"]) && has(&["results", "Status"]),
        "{refs:?}"
    );
    assert!(has(&["gate", "baseline", "Testbed"]), "{refs:?}");
    assert!(has(&["gate", "evaluate", "inner", "f"]), "{refs:?}");
    assert!(
        !refs.iter().any(|r| r[0] == "report"),
        "a string is not code: {refs:?}"
    );
    assert_eq!(
        anyhow_lines(&blank(
            "// anyhow\nlet s = \"anyhow\nno\";\nuse anyhow::Result;\nfn f() -> anyhow_free {}\nanyhow::bail!(\"x\")"
        )),
        [4, 6]
    );
    assert_eq!(module_of(Path::new("gate/mod.rs")), ["gate"]);
    assert_eq!(
        module_of(Path::new("gate/evaluate.rs")),
        ["gate", "evaluate"]
    );
}

/// The gate's judgement touches no file and runs nothing: what it judges
/// is read before ([`crate::gate::load`]), what it says is written after.
#[test]
fn the_gates_judgement_does_no_io() {
    let pure = [
        "gate/evaluate.rs",
        "gate/judge.rs",
        "gate/reference.rs",
        "gate/report.rs",
        "gate/verdict.rs",
        "gate/ordering.rs",
        "gate/miri.rs",
        "gate/render.rs",
    ];
    let io = [
        "std::fs",
        "fs::",
        "File::",
        "Command",
        "read_to_string",
        "baseline::read",
        "results::read",
        "in_range(",
        ".exists()",
        ".is_dir()",
        ".is_file()",
        "env::var",
    ];
    let mut found = Vec::new();
    for f in pure {
        let code = code(Path::new(f));
        for word in io {
            if code.contains(word) {
                found.push(format!("{f}: {word}"));
            }
        }
    }
    assert!(
        found.is_empty(),
        "I/O in the gate's judgement (read it in gate/load.rs):\n{}",
        found.join("\n")
    );
}
