//! The documentation held to the code: every flag of every command's
//! `--help` is documented, every relative link in README.md and docs/
//! resolves, and every number the code defines that a page states is the
//! code's. Fast: it reads files and runs the built xtask's `--help`.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the workspace")
        .to_path_buf()
}

/// README.md, ARCHITECTURE.md and docs/*.md, with their text.
fn pages() -> Vec<(PathBuf, String)> {
    let root = root();
    let mut paths = vec![root.join("README.md"), root.join("ARCHITECTURE.md")];
    let mut docs: Vec<PathBuf> = std::fs::read_dir(root.join("docs"))
        .expect("docs/")
        .map(|e| e.expect("docs/ entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    docs.sort();
    paths.extend(docs);
    paths
        .into_iter()
        .map(|p| {
            let text =
                std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
            (p, text)
        })
        .collect()
}

/// Every page's text as one, runs of white space made one space (a phrase
/// wrapped over two lines is still the phrase).
fn all_text() -> String {
    let joined: Vec<String> = pages().into_iter().map(|(_, t)| t).collect();
    joined
        .join(" ")
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

// --- every flag of every command ---------------------------------------

/// `xtask ARGS --help`.
fn help(args: &[String]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
        .args(args)
        .arg("--help")
        .output()
        .expect("xtask runs");
    assert!(out.status.success(), "xtask {args:?} --help failed");
    String::from_utf8(out.stdout).expect("UTF-8 help")
}

/// The lines of a help text's section (`Commands:`, `Options:`).
fn section<'h>(help: &'h str, title: &str) -> Vec<&'h str> {
    help.lines()
        .skip_while(|l| l.trim() != title)
        .skip(1)
        .take_while(|l| l.is_empty() || l.starts_with(' '))
        .collect()
}

/// The subcommands a help text lists, clap's `help` aside.
fn subcommands(help: &str) -> Vec<String> {
    section(help, "Commands:")
        .iter()
        // A command's line is indented two spaces; a wrapped description more.
        .filter(|l| l.starts_with("  ") && !l.starts_with("   "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(String::from)
        .collect()
}

/// The long flags a help text lists, `--help` aside: the first long flag
/// of each option's line (`-o, --output <FILE>  ...`), never one its
/// description names.
fn flags(help: &str) -> Vec<String> {
    section(help, "Options:")
        .iter()
        .filter(|l| l.trim_start().starts_with('-'))
        .filter_map(|l| {
            l.split(|c: char| c.is_whitespace() || c == ',')
                .find(|w| w.starts_with("--") && w.len() > 2)
        })
        .map(|w| w.split(['=', '<', '[']).next().unwrap_or(w).to_string())
        .filter(|f| f != "--help")
        .collect()
}

/// Every command path under `prefix` (`["ci", "merge"]`), found from the
/// help texts themselves, with its help.
fn commands(prefix: Vec<String>, out: &mut Vec<(Vec<String>, String)>) {
    let text = help(&prefix);
    for sub in subcommands(&text) {
        let mut path = prefix.clone();
        path.push(sub);
        commands(path, out);
    }
    out.push((prefix, text));
}

/// Whether `text` holds `flag` as a whole word (`--json` is not in
/// `--json-file`).
fn mentions_flag(text: &str, flag: &str) -> bool {
    text.match_indices(flag).any(|(i, _)| {
        !text[i + flag.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
    })
}

#[test]
fn every_command_and_every_flag_of_its_help_is_documented() {
    let mut all = Vec::new();
    commands(Vec::new(), &mut all);
    let names: Vec<String> = all.iter().map(|(p, _)| p.join(" ")).collect();
    // The walk itself must work, or the check below checks nothing.
    for expected in ["matrix", "baseline update", "ci merge", "report"] {
        assert!(
            names.iter().any(|n| n == expected),
            "{expected} not found in the help texts: {names:?}"
        );
    }
    let text = all_text();
    assert!(
        !mentions_flag(&text, "--no-such-flag"),
        "the check must be able to fail"
    );
    let mut missing = BTreeSet::new();
    for (path, help) in &all {
        if path.is_empty() {
            continue;
        }
        let leaf = subcommands(help).is_empty();
        let command = format!("cargo xtask {}", path.join(" "));
        if leaf && !text.contains(&command) {
            missing.insert(format!("`{command}` is not in README.md or docs/"));
        }
        let flags = flags(help);
        if path == &["matrix"] {
            assert!(flags.contains(&"--against".to_string()), "{flags:?}");
        }
        for flag in flags {
            if !mentions_flag(&text, &flag) {
                missing.insert(format!("`{command} {flag}` is not in README.md or docs/"));
            }
        }
    }
    assert!(
        missing.is_empty(),
        "undocumented:\n{}",
        Vec::from_iter(missing).join("\n")
    );
}

// --- every relative link ----------------------------------------------

/// `text` without fenced code blocks and code spans, where `](` is not a link.
fn prose(text: &str) -> String {
    let mut out = String::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
            out.push('\n');
            continue;
        }
        if !fenced {
            out.push_str(line);
        }
        out.push('\n');
    }
    // Code spans may wrap over lines within a paragraph.
    out.split('`')
        .enumerate()
        .filter(|(i, _)| i % 2 == 0)
        .map(|(_, s)| s)
        .collect()
}

/// The targets of the inline links and images in `text`.
fn links(text: &str) -> Vec<String> {
    prose(text)
        .split("](")
        .skip(1)
        .filter_map(|rest| rest.split(')').next())
        .map(|t| t.split_whitespace().next().unwrap_or("").to_string())
        .collect()
}

/// GitHub's anchor of a heading: lower case, punctuation dropped (code
/// marks too, their text kept), spaces made hyphens.
fn slug(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter(|c| c.is_alphanumeric() || matches!(c, ' ' | '-' | '_'))
        .map(|c| if c == ' ' { '-' } else { c })
        .collect()
}

/// The anchors of a page's headings, a repeated one numbered as GitHub does.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut fenced = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            fenced = !fenced;
        }
        let Some(heading) = line.strip_prefix('#').filter(|_| !fenced) else {
            continue;
        };
        let base = slug(heading.trim_start_matches('#'));
        let mut anchor = base.clone();
        let mut n = 0;
        while seen.contains(&anchor) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
        seen.insert(anchor);
    }
    seen
}

/// What is wrong with link `target` on page `page`, if anything.
fn broken(page: &Path, target: &str) -> Option<String> {
    if target.contains("://") || target.starts_with("mailto:") {
        return None;
    }
    let (path, anchor) = match target.split_once('#') {
        Some((p, a)) => (p, Some(a)),
        None => (target, None),
    };
    let file = match path {
        "" => page.to_path_buf(),
        p => page.parent().expect("a page's folder").join(p),
    };
    if !file.exists() {
        return Some(format!("{target}: no such file"));
    }
    let anchor = anchor?;
    let text = std::fs::read_to_string(&file).ok()?;
    (!anchors(&text).contains(anchor)).then(|| format!("{target}: no heading #{anchor}"))
}

#[test]
fn every_relative_link_resolves_to_a_file_and_heading() {
    // The checks must be able to fail.
    let here = root().join("README.md");
    assert!(broken(&here, "docs/no-such-page.md").is_some());
    assert!(broken(&here, "docs/gate.md#no-such-heading").is_some());
    assert_eq!(
        slug(" Pull requests: `--against`, paired"),
        "pull-requests---against-paired"
    );
    assert_eq!(
        links("[a](x.md) `[b](y.md)` [c](z.md#h \"title\")\n```\n[d](w.md)\n```"),
        ["x.md", "z.md#h"]
    );

    let mut bad = Vec::new();
    let mut checked = 0;
    for (page, text) in pages() {
        for target in links(&text) {
            checked += 1;
            if let Some(why) = broken(&page, &target) {
                bad.push(format!("{}: {why}", page.display()));
            }
        }
    }
    assert!(checked > 20, "only {checked} links found");
    assert!(bad.is_empty(), "broken links:\n{}", bad.join("\n"));
}

// --- every number the code defines ---------------------------------------

/// A number the code defines, as the docs state it: `template` with `{}`
/// for each value.
struct Claim {
    template: &'static str,
    values: Vec<String>,
}

fn claim(template: &'static str, values: &[&dyn ToString]) -> Claim {
    Claim {
        template,
        values: values.iter().map(|v| v.to_string()).collect(),
    }
}

/// A fraction as the percentage the docs write (0.1 -> "10").
fn percent(f: f64) -> String {
    let p = (f * 100.0).round();
    assert!(
        (f * 100.0 - p).abs() < 1e-9,
        "{f} is not a whole percentage"
    );
    p.to_string()
}

/// The numbers of every place `text` states `template`, read as the docs
/// write them (`10,000` is 10000); a place where something else than a
/// number stands for a `{}` is not the template.
fn stated(text: &str, template: &str) -> Vec<Vec<String>> {
    let pieces: Vec<&str> = template.split("{}").collect();
    assert!(
        !pieces[0].is_empty(),
        "a template starts with words: {template}"
    );
    let mut found = Vec::new();
    'places: for (start, _) in text.match_indices(pieces[0]) {
        let mut at = start + pieces[0].len();
        let mut numbers = Vec::new();
        for piece in &pieces[1..] {
            let rest = &text[at..];
            let len = rest
                .find(|c: char| !(c.is_ascii_digit() || c == ',' || c == '.'))
                .unwrap_or(rest.len());
            let number = rest[..len].trim_end_matches([',', '.']);
            if number.is_empty() || !rest[number.len()..].starts_with(piece) {
                continue 'places;
            }
            numbers.push(number.replace(',', ""));
            at += number.len() + piece.len();
        }
        found.push(numbers);
    }
    found
}

#[test]
fn every_number_the_docs_state_is_the_codes() {
    use lockmatrix::family;
    use lockmatrix::results::Profile;
    let (ab_quick, ab_full) = lockmatrix::policy::AB_ROUNDS;
    let (stored_quick, stored_full) = family::STORED_ROUNDS;
    let rounds = |p| lockmatrix::matrix::rounds(p, None, false);
    let (quick, full) = (rounds(Profile::Quick), rounds(Profile::Full));
    assert_eq!(
        lockmatrix::matrix::rounds(Profile::Full, None, true),
        ab_full,
        "--against's rounds are AB_ROUNDS"
    );
    let opts = lockmatrix::gate::GateOptions::default();
    let ladder = lockmatrix::strictness::CONTENDED_LADDER;
    let (least, most) = (family::STORED_BASELINE_LEAST, family::STORED_BASELINE_MOST);
    let summary = lockmatrix::gate::SUMMARY_BYTES;
    assert_eq!(
        summary % (1 << 20),
        0,
        "the summary limit is written in MiB"
    );
    let claims = [
        claim("| `policy::AB_ROUNDS` | {} (`full`: {}) |", &[&ab_quick, &ab_full]),
        claim("up to {} pairs (`full`: {})", &[&ab_quick, &ab_full]),
        claim("| `matrix::rounds` | {} (`full`: {}) |", &[&quick, &full]),
        claim("on real hardware {} (`full`: {})", &[&quick, &full]),
        claim("| `family::LOOK_EVERY` | {} |", &[&family::LOOK_EVERY]),
        claim("a look every {} pairs", &[&family::LOOK_EVERY]),
        claim("| `family::MAX_PAIRS` | {} |", &[&family::MAX_PAIRS]),
        claim("rounds per cell (1 to {})", &[&family::MAX_PAIRS]),
        claim("| `family::STORED_LOOK_EVERY` | {} |", &[&family::STORED_LOOK_EVERY]),
        claim("a look every {} rounds", &[&family::STORED_LOOK_EVERY]),
        claim("| `family::STORED_ROUNDS` | {} (`full`: {}) |", &[&stored_quick, &stored_full]),
        claim("at most {} rounds (`full`: {})", &[&stored_quick, &stored_full]),
        claim("a later run of at most {} rounds", &[&stored_quick]),
        claim("| `family::STORED_BASELINE_LEAST` | {} |", &[&least]),
        claim("| `family::STORED_BASELINE_MOST` | {} |", &[&most]),
        claim("between {} and {}, from the recorded spread", &[&least, &most]),
        claim("any count up to {}", &[&most]),
        claim(
            "| `strictness::CONTENDED_LADDER` | {}%, {}%, {}% |",
            &[&percent(ladder[0]), &percent(ladder[1]), &percent(ladder[2])],
        ),
        claim("| `strictness::PILOT` | {} |", &[&lockmatrix::strictness::PILOT]),
        claim("| `GateOptions::quiet_threshold` | {}% |", &[&percent(opts.quiet_threshold)]),
        claim(
            "must catch: from {}% for 1-thread cells (`--quiet-threshold`), {}%, {}% or {}% for contended ones",
            &[
                &percent(opts.quiet_threshold),
                &percent(ladder[0]),
                &percent(ladder[1]),
                &percent(ladder[2]),
            ],
        ),
        claim("| `GateOptions::alpha` | {} |", &[&opts.alpha]),
        claim("spends `--alpha` ({})", &[&opts.alpha]),
        claim("| `GateOptions::clear_alpha` | {} |", &[&opts.clear_alpha]),
        claim("spends `--clear-alpha` ({} per cell", &[&opts.clear_alpha]),
        claim("| `gate::SUMMARY_BYTES` | {} |", &[&summary]),
        claim("`$GITHUB_STEP_SUMMARY`, at most {} MiB", &[&(summary >> 20)]),
        claim("| `gate::COMMENT_BYTES` | {} |", &[&lockmatrix::gate::COMMENT_BYTES]),
        claim("pull-request comment, at most {} bytes", &[&lockmatrix::gate::COMMENT_BYTES]),
    ];

    // The check must be able to fail: the drift this test exists for.
    let drifted = "with `--against` up to 40 pairs (`full`: 50)";
    assert_eq!(
        stated(drifted, "up to {} pairs (`full`: {})"),
        [["40", "50"]]
    );
    assert_eq!(
        stated("a look every 10,000 pairs.", "a look every {} pairs"),
        [["10000"]]
    );

    let text = all_text();
    let mut wrong = Vec::new();
    for c in &claims {
        let found = stated(&text, c.template);
        if found.is_empty() {
            wrong.push(format!(
                "no page states `{}` (the code: {:?})",
                c.template, c.values
            ));
        }
        for numbers in found.iter().filter(|n| **n != c.values) {
            wrong.push(format!(
                "a page states `{}` with {numbers:?}; the code says {:?}",
                c.template, c.values
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn the_readme_is_a_front_page_under_250_lines() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let lines = readme.lines().count();
    assert!(
        lines < 250,
        "README.md has {lines} lines: move the detail to docs/"
    );
    // Its first commands are the two a newcomer runs.
    let first = readme
        .find("cargo xtask matrix")
        .expect("cargo xtask matrix");
    let test = readme.find("cargo xtask test").expect("cargo xtask test");
    assert!(
        first < test && test < readme.len() / 4,
        "the two commands come first"
    );
}
