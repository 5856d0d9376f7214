//! `cargo xtask report --html`: one self-contained HTML file per run, with
//! inline SVG charts, no JavaScript, no network, no external fonts or CSS.
//!
//! The SVG is written directly ([`svg`]) rather than with a plotting crate:
//! the charts are bars, ranges, lines and dots on one or two axes; every
//! mark must carry a `<title>` with its numbers and every panel must fit a
//! CSS grid of small multiples, which plotters' SVG backend does not do
//! (it writes no titles and lays out text from system fonts through its
//! font stack). Writing the elements ourselves is a few hundred lines with
//! no dependency, and the output stays deterministic text that tests can
//! read.
//!
//! One file per section, named as `report::seeds` names the seeds:
//! [`seed000`] (grouped bars per architecture), [`seed001`] (ns per
//! acquisition vs threads), [`seed002`] (ops per thread min/avg/max),
//! [`seed003`] (S1/S2 mean ± std), [`fairness`] (per-thread acquisition spread), [`gate`]
//! (forest plot, instruction counts, advisory list), [`ordering`] (the
//! model check and each operation's ordering footprint), [`meta`] (run
//! metadata and reproduce commands); [`layout`] is what they share and
//! [`page`] puts them together. Each
//! section takes its numbers from `report::seeds`, which also prints the
//! terminal tables, so the two never disagree.

mod contention;
mod fairness;
mod gate;
mod layout;
mod meta;
mod ordering;
mod page;
mod seed000;
mod seed001;
mod seed002;
mod seed003;
pub mod svg;

pub use gate::verdict_colour;
pub use layout::grid;
pub use page::{render, GENERATOR, SECTIONS, STYLE};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::{evaluate, GateOptions, Reference};
    use crate::report::tests::{run_with, sample_run};

    /// Every `<tag ...>` that is not self-closed has its `</tag>`.
    fn balanced(html: &str, tag: &str) -> bool {
        let open =
            html.matches(&format!("<{tag} ")).count() + html.matches(&format!("<{tag}>")).count();
        let selfclosed = html
            .split(&format!("<{tag} "))
            .skip(1)
            .filter(|rest| rest.split('>').next().is_some_and(|a| a.ends_with('/')))
            .count();
        open - selfclosed == html.matches(&format!("</{tag}>")).count()
    }

    #[test]
    fn every_section_and_target_is_on_the_page_without_scripts_or_network() {
        let html = render(&sample_run(), None);
        for (id, heading) in SECTIONS {
            assert!(
                html.contains(&format!(
                    "<section id=\"{id}\"><h2>{}</h2>",
                    svg::esc(heading)
                )),
                "{id}"
            );
        }
        for target in ["x86_64", "aarch64"] {
            assert!(html.contains(&format!("<figcaption>{target} ")), "{target}");
        }
        // Self-contained: the only URL is SVG's namespace name, never fetched.
        assert!(!html.contains("<script"));
        assert_eq!(
            html.matches("http").count(),
            html.matches("xmlns=\"http://www.w3.org/2000/svg\"").count()
        );
        for tag in ["svg", "section", "table", "figure", "title", "text", "ul"] {
            assert!(balanced(&html, tag), "<{tag}> not balanced");
        }
        // No gate reference: said plainly, and no forest plot drawn.
        assert!(html.contains("<strong>Not compared.</strong>"));
        assert!(!html.contains("forest plot"));
        // QEMU panels are marked, native ones are not.
        assert!(html.contains("aarch64 <span class=\"emu\""));
        assert!(html.contains("x86_64 <span class=\"native\">native</span>"));
    }

    #[test]
    fn marks_carry_their_numbers() {
        let html = render(&sample_run(), None);
        // Every circle (a data point) has a title; seed 001's ticket lock at 2
        // threads on x86_64 took 10 ns (20 ticks at 2 GHz).
        let points = html
            .split("<circle ")
            .skip(1)
            .filter(|r| !r.split('>').next().unwrap().ends_with('/'))
            .count();
        assert_eq!(
            points,
            html.matches("<circle ").count(),
            "a circle without a title"
        );
        std::fs::write(
            std::env::temp_dir().join("lockmatrix-html-test.html"),
            &html,
        )
        .unwrap();
        assert!(html.contains("<title>x86_64 ticket, 2 threads: 10 ns per acquisition</title>"));
        // Seed 000: QEMU times say they are the emulator's; counts are beside.
        assert!(html.contains("<title>aarch64 CAS sync: 6 ns (emulator time), 10 insns/op</title>"));
        // Seed 003: mcs takes 59% longer than the ticket lock on S2.
        assert!(html.contains("vs ticket</title>") && html.contains(">-58.8%<"));
        // Seed 002: half vs all writers, +25%.
        assert!(html.contains(">+25.0%</span>"));
        // Lock events and lasom, as the terminal's tables show them.
        assert!(
            html.contains("<th>ticket waiters ahead</th><th>mcs queued</th></tr><tr><td>1</td>")
        );
        assert!(html.contains("<td>2</td><td>0.500</td><td>0.500</td><td>0.250</td>"));
        assert!(html.contains("<td>x86_64</td><td>mcs</td><td>0.020</td><td>queued 0.750</td>"));
        assert!(html.contains("<th>writer sleeps</th><th>writer lasom</th>"));
        assert!(html
            .contains("<td>all writers</td><td>1us sleep</td><td>-</td><td>-</td><td>0.125</td>"));
    }

    #[test]
    fn the_gate_section_draws_ratios_and_highlights_changed_counts() {
        let (base, head) = (run_with(1.0, 21.0), run_with(1.3, 22.0));
        let mut head = head;
        head.against = Some(crate::results::Against {
            rev: "HEAD~1".into(),
            commit: Some(crate::commit::test_id("abc")),
            acknowledged: Vec::new(),
            pairs: None,
        });
        let g = evaluate(&head, &Reference::Base(&base), &GateOptions::default()).unwrap();
        let html = render(&head, Some(&g));
        assert!(!html.contains("Not compared."));
        assert!(
            html.contains("gate: <strong>FAIL</strong>"),
            "a count went up"
        );
        // The ticket lock's count: 21 -> 22 on both targets, highlighted.
        assert_eq!(html.matches("<span class=\"more\" title=").count(), 2);
        assert!(html.contains(">21 → 22</span>"));
        // The forest plot: x86_64's timing cells (native), not aarch64's (QEMU).
        assert!(html.contains("forest plot x86_64"));
        assert!(!html.contains("forest plot aarch64"));
        assert!(
            html.contains(
                "<title>x86_64/spinlock stress_s2 [lock=mcs threads=2] total_ticks: ratio 1.300"
            ),
            "{html}"
        );
    }

    /// The ordering section: one row per operation with its counts by
    /// class, the instructions (escaped) in the cell's title, the one the
    /// gate found changed highlighted, and a violated model shown as such.
    #[test]
    fn the_ordering_section_shows_footprints_and_models() {
        use crate::footprint::{Class, Entry, StaticFootprint};
        let mut run = sample_run();
        let s = &mut run.targets[1].suites[0];
        s.static_footprint.push(crate::results::StaticOp {
            unit: "ticket".into(),
            op: "unlock".into(),
            footprint: StaticFootprint {
                entries: vec![Entry {
                    class: Class::OneWay,
                    insn: "stlr <w8>".into(),
                    count: 1,
                }],
                followed: vec![],
                stopped: vec![],
                indirect_calls: 0,
                insns: 3,
            },
        });
        run.models = Some(crate::results::violated_ticket(
            "Causality violation <here>",
        ));
        let html = render(&run, None);
        let section = html
            .split("<section id=\"ordering\">")
            .nth(1)
            .unwrap()
            .split("</section>")
            .next()
            .unwrap();
        assert!(
            section.contains("<td><span title=\"aarch64: 1 stlr &lt;w8&gt;\">0/1/0</span></td>"),
            "{section}"
        );
        assert!(section
            .contains("<span class=\"more\">violated</span> Causality violation &lt;here&gt;"));
        assert!(!section.contains("<here>") && !section.contains("<w8>"));
        assert!(balanced(section, "table"));
    }

    /// A run's Miri check of `(lock, failing seeds, not checked)`, the
    /// strings a stranger's run could carry markup in.
    fn miri_run(locks: &[(&str, &[u32], Option<&str>)]) -> crate::results::MiriRun {
        let results = locks
            .iter()
            .map(|&(lock, failing, not_checked)| crate::miri::MiriResult {
                suite: "rwsem".into(),
                lock: lock.into(),
                krate: "parking_lot".into(),
                client: "a writer \"waits\" <b>".into(),
                covers: "exclusion".into(),
                seeds: 8,
                preemption_rate: 0.01,
                failing_seeds: failing.to_vec(),
                first: failing.first().map(|&seed| crate::miri::Failure {
                    seed,
                    error: "error: Data race <img src=x>".into(),
                    at: Some("src/lib.rs:3:1 & <here>".into()),
                }),
                not_checked: not_checked.map(str::to_string),
                secs: 1.5,
                cached: false,
            })
            .collect();
        crate::results::MiriRun {
            results,
            not_checked: None,
            toolchain: Some("miri 0.1.0 <nightly>".into()),
            setup_secs: Some(0.5),
            build_secs: Some(9.0),
            secs: 12.0,
        }
    }

    fn ordering_section(html: &str) -> &str {
        html.split("<section id=\"ordering\">")
            .nth(1)
            .unwrap()
            .split("</section>")
            .next()
            .unwrap()
    }

    /// The Miri rows beside the loom rows: one per lock, a race with its
    /// client, seed, error and flags, a lock out of time NOT CHECKED, the
    /// gate's verdict against the base, and every string escaped.
    #[test]
    fn the_ordering_section_shows_miri_rows_escaped_with_the_gates_verdict() {
        let mut run = sample_run();
        run.miri = Some(miri_run(&[
            ("parking_lot.RawRwLock", &[3, 5], None),
            ("std_rwlock", &[], Some("timed out <60 s>")),
            ("spin_rwlock", &[], None),
        ]));
        let html = render(&run, None);
        let section = ordering_section(&html);
        assert!(
            section.contains("<h3>Miri (the Rust memory model"),
            "{section}"
        );
        assert!(section.contains(
            "<tr><td>parking_lot.RawRwLock</td><td>rwsem</td><td>parking_lot</td><td>1</td><td>8</td><td>2</td><td>1.5 s</td><td><span class=\"more\">RACE</span> client \"a writer &quot;waits&quot; &lt;b&gt;\", seed 3: error: Data race &lt;img src=x&gt; at src/lib.rs:3:1 &amp; &lt;here&gt;<br><code>MIRIFLAGS=\"-Zmiri-seed=3 -Zmiri-preemption-rate=0.01 -Zmiri-ignore-leaks\"</code></td></tr>"
        ), "{section}");
        assert!(section.contains(
            "<span class=\"more\">NOT CHECKED</span> client &quot;a writer &quot;waits&quot; &lt;b&gt;&quot;: timed out &lt;60 s&gt;"
        ), "{section}");
        assert!(section.contains("<td>spin_rwlock</td>") && section.contains("<td>clean</td>"));
        assert!(section.contains("miri 0.1.0 &lt;nightly&gt;"));
        for raw in ["<b>", "<img", "<here>", "<60 s>", "<nightly>"] {
            assert!(!section.contains(raw), "{raw} unescaped");
        }
        assert!(balanced(section, "table"));

        // Against a base that raced on the same lock: present in the base too.
        let mut base = sample_run();
        base.miri = Some(miri_run(&[("parking_lot.RawRwLock", &[1], None)]));
        let g = evaluate(&run, &Reference::Base(&base), &GateOptions::default()).unwrap();
        let html = render(&run, Some(&g));
        assert!(ordering_section(&html)
            .contains("<span class=\"more\">RACE (present in the base too)</span>"));

        // Nothing checked: said, with why.
        let mut none = miri_run(&[]);
        none.not_checked = Some(format!("no Miri: `{}`", crate::miri::INSTALL));
        run.miri = Some(none);
        let html = render(&run, None);
        assert!(ordering_section(&html).contains(
            "<p class=\"fail\">NOT CHECKED: no Miri: `rustup component add miri rust-src --toolchain nightly`</p>"
        ));
    }
}
