//! `cargo xtask report --html` as a person looks at it: a real quick run
//! (a native and a QEMU target, one round) rendered, opened in headless
//! Chromium (Debian's `chromium`, which `cargo xtask test` installs), a
//! full-page screenshot taken, no console errors, and every section and
//! target in the page Chromium parsed. Then `--bmf`, `--history`, and the
//! bad inputs of `report`.

use crate::common::*;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const TARGETS: [&str; 2] = ["x86_64", "aarch64"];
const SECTIONS: [&str; 9] = [
    "Run",
    "Seed 000: local vs fully ordered CAS, and interrupts off/on",
    "Seed 001: ns per acquisition vs threads",
    "Seed 003: S1/S2 stress, mean ± std",
    "Seed 002: readers and writers",
    "Fairness: per-thread acquisition spread",
    "Memory ordering: model check and footprint",
    "The gate",
    "Run metadata",
];

/// Chromium, headless, with a profile of its own (tests run side by side),
/// killed if it has not finished in two minutes (a loaded machine).
fn chromium(profile: &Path, args: &[&str]) -> Output {
    let bin = ["chromium", "chromium-browser"]
        .into_iter()
        .find(|b| {
            Command::new(b)
                .arg("--version")
                .output()
                .is_ok_and(|o| o.status.success())
        })
        .expect("chromium is not installed: `cargo xtask test` installs Debian's chromium");
    // Output to files, not pipes: a page's DOM outgrows a pipe's buffer, and
    // chromium would wait for a reader while this waits for chromium.
    let (stdout, stderr) = (
        profile.with_extension("stdout"),
        profile.with_extension("stderr"),
    );
    let mut child = Command::new(bin)
        .args([
            "--headless",
            "--no-sandbox",
            "--disable-gpu",
            "--hide-scrollbars",
            "--no-first-run",
            "--disable-extensions",
            "--enable-logging=stderr",
            "--v=0",
        ])
        .arg(format!("--user-data-dir={}", profile.display()))
        .args(args)
        .stdout(std::fs::File::create(&stdout).unwrap())
        .stderr(std::fs::File::create(&stderr).unwrap())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if start.elapsed() > Duration::from_secs(120) {
            let _ = child.kill();
            panic!("chromium {args:?} did not finish in 120 s");
        }
        std::thread::sleep(Duration::from_millis(100));
    };
    Output {
        status,
        stdout: std::fs::read(&stdout).unwrap(),
        stderr: std::fs::read(&stderr).unwrap(),
    }
}

/// The page's console messages, as `--enable-logging=stderr` reports them.
fn console(out: &Output) -> Vec<String> {
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.contains("CONSOLE"))
        .map(str::to_string)
        .collect()
}

fn url(p: &Path) -> String {
    format!("file://{}", p.display())
}

/// Width and height from a PNG's IHDR chunk.
fn png_size(bytes: &[u8]) -> (u32, u32) {
    assert!(
        bytes.starts_with(b"\x89PNG\r\n\x1a\n") && &bytes[12..16] == b"IHDR",
        "not a PNG"
    );
    let be = |i: usize| u32::from_be_bytes(bytes[i..i + 4].try_into().unwrap());
    (be(16), be(20))
}

/// The page's height and rendered text at 1400 px wide, read by a copy
/// of it with a script (the report itself has none) that writes both into
/// the DOM Chromium dumps.
fn layout(dir: &Path, page: &Path) -> (u32, String) {
    let probe = dir.join("probe.html");
    let script = "<script>const p = document.createElement('pre'); p.id = 'lm-probe'; \
        p.textContent = document.documentElement.scrollHeight + '\\n' + document.body.innerText; \
        document.body.appendChild(p);</script>";
    std::fs::write(&probe, std::fs::read_to_string(page).unwrap() + script).unwrap();
    let out = chromium(
        &dir.join("profile"),
        &["--window-size=1400,900", "--dump-dom", &url(&probe)],
    );
    let dom = String::from_utf8_lossy(&out.stdout);
    let start = dom.find("<pre id=\"lm-probe\">").unwrap_or_else(|| {
        panic!(
            "the probe did not run: {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    let text = &dom[start + "<pre id=\"lm-probe\">".len()..];
    let text = &text[..text.find("</pre>").unwrap()];
    let text = text
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&");
    let (height, rendered) = text.split_once('\n').unwrap();
    (height.parse().unwrap(), rendered.to_string())
}

fn quick_run(results: &Path) -> PathBuf {
    let targets = TARGETS.join(",");
    let out = xtask(&[
        "matrix",
        "--no-install",
        "--no-gate",
        "--targets",
        &targets,
        "--rounds",
        "1",
        "--results",
        s(results),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    newest(results)
}

#[test]
fn the_report_renders_in_chromium_with_every_section_and_target() {
    let _cpus = shared_cpus();
    let dir = scratch_dir("html");
    let run = quick_run(&dir.join("results"));
    let page = dir.join("report.html");
    let bmf = dir.join("run.bmf.json");
    let out = xtask(&[
        "report",
        "--html",
        s(&run),
        "-o",
        s(&page),
        "--bmf",
        s(&bmf),
    ]);
    assert!(out.status.success(), "{}", text(&out));
    let html = std::fs::read_to_string(&page).unwrap();
    assert!(!html.contains("<script"), "the report needs no JavaScript");

    // The check below must be able to fail: a page that logs an error is caught.
    let bad = dir.join("bad.html");
    std::fs::write(
        &bad,
        "<!DOCTYPE html><p>x</p><script>console.error('boom')</script>",
    )
    .unwrap();
    let control = chromium(&dir.join("profile"), &["--dump-dom", &url(&bad)]);
    assert!(
        console(&control).iter().any(|l| l.contains("boom")),
        "chromium's console log is not where this test looks: {}",
        String::from_utf8_lossy(&control.stderr)
    );

    let dom = chromium(&dir.join("profile"), &["--dump-dom", &url(&page)]);
    assert!(
        dom.status.success(),
        "{}",
        String::from_utf8_lossy(&dom.stderr)
    );
    assert_eq!(console(&dom), Vec::<String>::new(), "console messages");
    let parsed = String::from_utf8_lossy(&dom.stdout);
    // The QEMU target's times are marked as the emulator's.
    assert!(parsed.contains("aarch64 <span class=\"emu\""));

    // What a person sees: the page laid out 1400 px wide, its text as
    // rendered (innerText: nothing hidden), and its full height.
    let (height, rendered) = layout(&dir, &page);
    for section in SECTIONS {
        assert!(
            rendered.lines().any(|l| l.trim() == section),
            "no section {section} in the rendered text"
        );
    }
    for target in TARGETS {
        assert!(
            rendered
                .lines()
                .any(|l| l.starts_with(&format!("{target} "))),
            "no panel of {target} in the rendered text"
        );
    }
    // The Miri check's rows beside loom's: a row per lock the quick run
    // checked, or NOT CHECKED where this machine has no Miri.
    let miri = read_json(&run.join("run.json"))["miri"].clone();
    let heading = "Miri (the Rust memory model, the locks loom cannot see)";
    let shown = rendered
        .split_once(&format!("\n{heading}\n"))
        .map(|(_, after)| {
            after
                .split("Ordering footprint per operation")
                .next()
                .unwrap()
        })
        .expect("no Miri heading in the rendered text");
    match miri["not_checked"].as_str() {
        Some(why) => assert!(shown.starts_with(&format!("NOT CHECKED: {why}")), "{shown}"),
        None => {
            let results = miri["results"].as_array().unwrap();
            assert!(!results.is_empty(), "{miri}");
            for r in results {
                let lock = r["lock"].as_str().unwrap();
                assert!(
                    shown.lines().any(|l| l.starts_with(&format!("{lock}\t"))),
                    "no Miri row of {lock}: {shown}"
                );
            }
        }
    }
    assert!(
        (2_000..30_000).contains(&height),
        "a page {height} px high: nothing laid out, or unbounded"
    );

    let png = dir.join("report.png");
    let shot = chromium(
        &dir.join("profile"),
        &[
            &format!("--screenshot={}", png.display()),
            &format!("--window-size=1400,{height}"),
            &url(&page),
        ],
    );
    assert!(
        shot.status.success(),
        "{}",
        String::from_utf8_lossy(&shot.stderr)
    );
    assert_eq!(console(&shot), Vec::<String>::new(), "console messages");
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(png_size(&bytes), (1400, height), "not the full page");
    // A blank page compresses to a few kB; charts and tables do not.
    assert!(
        bytes.len() > 100_000,
        "screenshot of {} bytes: blank?",
        bytes.len()
    );

    let doc = read_json(&bmf);
    let cell = &doc["x86_64/spinlock/lock_unlock/lock=ticket,threads=1"];
    assert!(
        cell["ns_per_acquire"]["value"].as_f64().unwrap() > 0.0,
        "{cell}"
    );
    assert!(
        cell["insns_per_op"]["value"].as_f64().unwrap() > 0.0,
        "{cell}"
    );

    let out = xtask(&["report", "--history", s(&dir.join("results"))]);
    assert!(out.status.success(), "{}", text(&out));
    let history = String::from_utf8_lossy(&out.stdout);
    assert!(
        history.starts_with("history of 1 runs, oldest first:"),
        "{history}"
    );
    assert!(
        history
            .lines()
            .any(|l| l.starts_with("x86_64/spinlock") && l.contains("lock=ticket threads=1")),
        "{history}"
    );
    std::fs::remove_dir_all(&dir).unwrap();
}

/// Bad input: exit status 2, the file named, nothing overwritten.
#[test]
fn report_refuses_bad_runs_and_outputs_and_overwrites_nothing() {
    let _cpus = shared_cpus();
    let dir = scratch_dir("html-bad");
    let expect = |args: &[&str], names: &str| {
        let out = xtask(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", text(&out));
        assert!(
            text(&out).contains(names),
            "{args:?} should name {names}: {}",
            text(&out)
        );
    };
    let missing = dir.join("no-such-run");
    expect(&["report", "--html", s(&missing)], s(&missing));
    let damaged = dir.join("damaged");
    std::fs::create_dir_all(&damaged).unwrap();
    std::fs::write(damaged.join("run.json"), "{\"format\": 4, \"run_id\": ").unwrap();
    expect(
        &["report", "--html", s(&damaged)],
        &format!("{}/run.json", damaged.display()),
    );
    assert!(!damaged.join("report.html").exists());

    let run = native_atomic_run(&dir.join("results"), &["--rounds", "1"]);
    let unwritable = dir.join("no-such-dir/report.html");
    expect(
        &["report", "--html", s(&run), "-o", s(&unwritable)],
        s(&unwritable),
    );
    expect(
        &["report", "--bmf", s(&unwritable), s(&run)],
        s(&unwritable),
    );
    expect(&["report", "--html", s(&run), "-o", s(&dir)], s(&dir));
    let foreign = dir.join("notes.html");
    std::fs::write(&foreign, "my notes").unwrap();
    expect(
        &["report", "--html", s(&run), "-o", s(&foreign)],
        s(&foreign),
    );
    assert_eq!(std::fs::read_to_string(&foreign).unwrap(), "my notes");
    expect(&["report", "--history", s(&missing)], s(&missing));

    // A report lockmatrix wrote is replaced.
    let ours = dir.join("ours.html");
    for _ in 0..2 {
        let out = xtask(&["report", "--html", s(&run), "-o", s(&ours)]);
        assert!(out.status.success(), "{}", text(&out));
    }
    std::fs::remove_dir_all(&dir).unwrap();
}
