//! Run metadata: where and how the run happened, what each target ran with,
//! and the command that reproduces each suite run.

use super::layout::table;
use super::svg::esc;
use crate::report::seeds;
use crate::results::{Run, TargetResult, ToolInfo};

/// A tool's version with what it is in a note, or `-` when none was used.
fn tool(t: &Option<ToolInfo>) -> String {
    t.as_ref().map_or("-".into(), |t| {
        format!(
            "{} <span class=\"note\">{}</span>",
            esc(&t.version),
            esc(&t.what)
        )
    })
}

/// The run's metadata section: the run itself, its targets, the variants
/// that ran, and the command that reproduces each suite run.
pub fn section(run: &Run) -> String {
    let mut kv = run_rows(run);
    kv.extend(optional_rows(run));
    let mut out = String::from("<table class=\"kv\">");
    for r in &kv {
        out.push_str(&format!("<tr><th>{}</th><td>{}</td></tr>", r[0], r[1]));
    }
    out.push_str("</table>");
    out.push_str(&targets(run));
    out.push_str(&variants(run));
    out.push_str(&reproduce(run));
    out
}

/// What every run says of itself: its id, when it ran, its profile and
/// command, the commit it ran at, and the host.
fn run_rows(run: &Run) -> Vec<Vec<String>> {
    let h = &run.host;
    vec![
        vec!["run".into(), esc(&run.run_id)],
        vec![
            "started / finished".into(),
            format!(
                "{} / {}",
                esc(&run.started),
                run.finished
                    .as_deref()
                    .map_or("<strong>incomplete</strong>".into(), esc)
            ),
        ],
        vec!["profile".into(), run.profile.to_string()],
        vec![
            "command".into(),
            format!("<code>{}</code>", esc(&run.command.join(" "))),
        ],
        vec![
            "commit".into(),
            format!(
                "<code>{}</code>{}",
                esc(h
                    .lockmatrix_commit
                    .as_ref()
                    .map_or(crate::commit::UNKNOWN, |c| c.as_str())),
                if h.lockmatrix_dirty {
                    " (with uncommitted changes)"
                } else {
                    ""
                }
            ),
        ],
        vec![
            "host".into(),
            format!(
                "{}, {} CPUs; {}; Linux {}",
                esc(&h.cpu_model),
                h.cpus,
                esc(&h.os),
                esc(&h.kernel)
            ),
        ],
    ]
}

/// What only some runs have: the base revision run beside it, the
/// instruction counter, the lock crate under test, the lock crates.
fn optional_rows(run: &Run) -> Vec<Vec<String>> {
    let mut kv = Vec::new();
    if let Some(a) = &run.against {
        kv.push(vec![
            "against".into(),
            format!(
                "{} (<code>{}</code>), run beside it",
                esc(&a.rev),
                esc(crate::commit::shown(a.commit.as_ref()))
            ),
        ]);
    }
    if let Some(p) = &run.insns_plugin {
        kv.push(vec!["instruction counter".into(), tool(&Some(p.clone()))]);
    }
    if let Some(c) = &run.subject {
        kv.push(vec![
            "lock crate under test".into(),
            format!(
                "{} (<code>{}</code>): {}; lock_api {}",
                esc(&c.label()),
                esc(&c.spec),
                esc(&c.source),
                esc(&c.lock_api)
            ),
        ]);
    }
    if !run.lock_crates.is_empty() {
        let crates: Vec<String> = run
            .lock_crates
            .iter()
            .map(|(k, v)| format!("{} {}", esc(k), esc(v)))
            .collect();
        kv.push(vec!["lock crates".into(), crates.join("; ")]);
    }
    kv
}

/// The targets table: what each target ran on and with, and how long it
/// took to build and run.
fn targets(run: &Run) -> String {
    let mut t = vec![[
        "target",
        "triple",
        "runner",
        "status",
        "compiler",
        "linker",
        "emulator",
        "counted under",
        "CPU",
        "build",
        "run",
    ]
    .map(String::from)
    .to_vec()];
    t.extend(run.targets.iter().map(target_row));
    format!(
        "<h3>Targets</h3><div class=\"scroll\">{}</div>",
        table("data compact", &t)
    )
}

/// One target's row of the targets table.
fn target_row(r: &TargetResult) -> Vec<String> {
    vec![
        esc(&r.name),
        esc(&r.triple),
        r.runner.to_string(),
        // A target without a Rust backend says which suites it left out.
        match &r.not_built {
            Some(why) => format!("{}: {}", esc(&r.status.label()), esc(why)),
            None => esc(&r.status.label()),
        },
        // The C suites' compilers after the Rust toolchain.
        std::iter::once(r.toolchain.as_ref().map(|_| tool(&r.toolchain)))
            .flatten()
            .chain(
                (r.compilers.iter())
                    .map(|(suite, c)| format!("{}: {}", esc(suite), tool(&Some(c.clone())))),
            )
            .collect::<Vec<_>>()
            .join("<br>"),
        tool(&r.linker),
        tool(&r.emulator),
        tool(&r.counter),
        r.cpu.as_ref().map_or("-".into(), |c| esc(&c.describe())),
        r.build_secs.map_or("-".into(), |s| format!("{s:.1}s")),
        r.run_secs.map_or("-".into(), |s| format!("{s:.1}s")),
    ]
}

/// The variants that ran, as a table, when more than one did.
fn variants(run: &Run) -> String {
    let variants = seeds::variant_rows(run);
    if variants.len() <= 1 {
        return String::new();
    }
    let rows: Vec<Vec<String>> = variants
        .iter()
        .map(|r| r.iter().map(|c| esc(c)).collect())
        .collect();
    format!("<h3>Variants that ran</h3>{}", table("data compact", &rows))
}

/// Each suite run's command, collapsed (and a native or ssh target's
/// counted command).
fn reproduce(run: &Run) -> String {
    let mut out = String::from("<h3>Reproduce</h3><p>Each suite run's command (a native or ssh target's instruction counts: the counted command).</p><details><summary>commands</summary><ul class=\"commands\">");
    for r in &run.targets {
        for s in &r.suites {
            out.push_str(&format!(
                "<li>{}/{}: <code>{}</code>{}</li>",
                esc(&r.name),
                esc(&s.suite),
                esc(&s.command),
                s.counted_command
                    .as_ref()
                    .map_or(String::new(), |c| format!(
                        "<br>counted: <code>{}</code>",
                        esc(c)
                    ))
            ));
        }
    }
    out.push_str("</ul></details>");
    out
}
