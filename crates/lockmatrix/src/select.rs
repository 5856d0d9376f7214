//! Turning `--targets` and `--suites` names into what runs.

use crate::config::{Config, Target};

/// Why `--targets` or `--suites` selects nothing that runs (bad input,
/// exit status 2). An unknown name's error lists the valid ones.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum SelectError {
    /// `valid` and `classes` are comma-separated, in `targets.yaml`'s order.
    #[error("unknown target '{name}' in --targets. Valid names: {valid}; classes: {classes}")]
    UnknownTarget {
        name: String,
        valid: String,
        classes: String,
    },
    #[error("--targets selected nothing")]
    NoTargets,
    /// `valid` is comma-separated, after `all`.
    #[error("unknown suite '{name}' in --suites. Valid suites: all, {valid}")]
    UnknownSuite { name: String, valid: String },
    #[error("--suites selected nothing")]
    NoSuites,
}

/// A suite under `suites/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Suite {
    pub name: &'static str,
    /// Test-only suites are never selected by default nor listed as valid.
    pub test_only: bool,
    pub lang: Lang,
}

/// What a suite is written in, and so what builds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Lang {
    /// A workspace crate, built by cargo with the target's Rust toolchain.
    Rust,
    /// C sources in `suites/<name>/`, built by the target's cross gcc
    /// (`build::c`): the one kind a target without a Rust backend runs.
    C,
}

pub const SUITES: &[Suite] = &[
    Suite {
        name: "atomic",
        test_only: false,
        lang: Lang::Rust,
    },
    Suite {
        name: "spinlock",
        test_only: false,
        lang: Lang::Rust,
    },
    Suite {
        name: "rwsem",
        test_only: false,
        lang: Lang::Rust,
    },
    // The atomic suite's C twin: the same cells compiled by GCC, on every
    // target, and the one suite alpha (no Rust backend) runs.
    Suite {
        name: "atomic-c",
        test_only: false,
        lang: Lang::C,
    },
    Suite {
        name: "faulty",
        test_only: true,
        lang: Lang::Rust,
    },
];

/// The language of suite `name`; `None` for no suite of [`SUITES`].
pub fn lang(name: &str) -> Option<Lang> {
    SUITES.iter().find(|s| s.name == name).map(|s| s.lang)
}

/// Of `suites`, the ones target `t` builds and runs, and when it leaves
/// some out, why, in one line for every report.
pub fn for_target<'a>(suites: &[&'a str], t: &Target) -> (Vec<&'a str>, Option<String>) {
    if t.rust {
        return (suites.to_vec(), None);
    }
    let (runs, left): (Vec<&str>, Vec<&str>) =
        suites.iter().partition(|s| lang(s) == Some(Lang::C));
    let why = (!left.is_empty()).then(|| {
        let ran = match runs.as_slice() {
            [] => "no C suite was selected".to_string(),
            ["atomic-c"] => "the C atomic suite runs".to_string(),
            more => format!("the C suites run ({})", more.join(", ")),
        };
        format!(
            "no Rust backend for {}; {ran} ({} not built)",
            t.class,
            left.join(", ")
        )
    });
    (runs, why)
}

/// One target of the selection, and why it will not run if it will not.
#[derive(Debug, Clone)]
pub struct Selected {
    pub target: Target,
    pub skip: Option<String>,
}

/// Resolves `--targets`: full triples, short names, classes, or `all`,
/// comma-separated. `None` selects the enabled targets and lists the
/// disabled ones as not run. Order follows `targets.yaml`.
pub fn targets(config: &Config, names: Option<&str>) -> Result<Vec<Selected>, SelectError> {
    let Some(names) = names else {
        return Ok(config
            .targets
            .iter()
            .map(|t| Selected {
                target: t.clone(),
                skip: (!t.enabled).then(|| "disabled in targets.yaml".to_string()),
            })
            .collect());
    };
    let mut wanted = vec![false; config.targets.len()];
    // The targets each name, triple and class selects, so each word of
    // --targets costs what it selects, not a pass over every target.
    let mut by_word: std::collections::HashMap<&str, Vec<usize>> = Default::default();
    for (i, t) in config.targets.iter().enumerate() {
        for word in [t.name.as_str(), t.triple.as_str(), t.class.as_str()] {
            let hits = by_word.entry(word).or_default();
            if hits.last() != Some(&i) {
                hits.push(i);
            }
        }
    }
    let mut all = false;
    for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let hit = if name == "all" {
            all = true;
            true
        } else if let Some(hits) = by_word.get(name) {
            hits.iter().for_each(|&i| wanted[i] = true);
            true
        } else {
            false
        };
        if !hit {
            // Each name once, in file order, in linear time.
            let mut seen = std::collections::HashSet::new();
            let mut valid: Vec<&str> = vec!["all"];
            for t in &config.targets {
                // A target's variants share its triple.
                for v in [t.name.as_str(), t.triple.as_str()] {
                    if seen.insert(v) {
                        valid.push(v);
                    }
                }
            }
            let mut seen = std::collections::HashSet::new();
            let classes: Vec<&str> = config
                .targets
                .iter()
                .map(|t| t.class.as_str())
                .filter(|c| seen.insert(*c))
                .collect();
            return Err(SelectError::UnknownTarget {
                name: name.into(),
                valid: valid.join(", "),
                classes: classes.join(", "),
            });
        }
    }
    if all {
        wanted.fill(true);
    }
    if !wanted.contains(&true) {
        return Err(SelectError::NoTargets);
    }
    Ok(config
        .targets
        .iter()
        .zip(wanted)
        .filter(|(_, w)| *w)
        .map(|(t, _)| Selected {
            target: t.clone(),
            skip: None,
        })
        .collect())
}

/// Resolves `--suites` (comma-separated names or `all`).
pub fn suites(names: Option<&str>) -> Result<Vec<Suite>, SelectError> {
    let Some(names) = names else {
        return Ok(SUITES.iter().copied().filter(|s| !s.test_only).collect());
    };
    let mut out: Vec<Suite> = Vec::new();
    for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let found: Vec<Suite> = if name == "all" {
            SUITES.iter().copied().filter(|s| !s.test_only).collect()
        } else {
            SUITES.iter().copied().filter(|s| s.name == name).collect()
        };
        if found.is_empty() {
            let valid: Vec<&str> = SUITES
                .iter()
                .filter(|s| !s.test_only)
                .map(|s| s.name)
                .collect();
            return Err(SelectError::UnknownSuite {
                name: name.into(),
                valid: valid.join(", "),
            });
        }
        for s in found {
            if !out.contains(&s) {
                out.push(s);
            }
        }
    }
    if out.is_empty() {
        return Err(SelectError::NoSuites);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn config() -> Config {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        crate::config::load(&root.join("targets.yaml")).unwrap()
    }

    fn names(sel: &[Selected]) -> Vec<&str> {
        sel.iter().map(|s| s.target.name.as_str()).collect()
    }

    #[test]
    fn names_triples_and_classes_select_in_file_order() {
        let c = config();
        let sel = targets(&c, Some("mips,x86_64,powerpc64-unknown-linux-gnu")).unwrap();
        assert_eq!(names(&sel), ["x86_64", "powerpc64", "mips32", "mips64el"]);
        assert_eq!(targets(&c, Some("all")).unwrap().len(), c.targets.len());
        assert_eq!(targets(&c, None).unwrap().len(), c.targets.len());
        // A class takes the variants along; a name is that target alone.
        let sel = targets(&c, Some("arm64")).unwrap();
        assert_eq!(names(&sel), ["aarch64", "aarch64-llsc", "aarch64-lse"]);
        assert_eq!(names(&targets(&c, Some("aarch64")).unwrap()), ["aarch64"]);
    }

    #[test]
    fn unknown_target_lists_the_valid_ones() {
        let e = targets(&config(), Some("aarch64,ia64")).unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("unknown target 'ia64'"), "{msg}");
        assert!(
            msg.contains("aarch64-unknown-linux-gnu") && msg.contains("ia64-class"),
            "{msg}"
        );
    }

    #[test]
    fn suites_resolve_and_hide_test_only_ones() {
        let all: Vec<&str> = suites(None).unwrap().iter().map(|s| s.name).collect();
        assert_eq!(all, ["atomic", "spinlock", "rwsem", "atomic-c"]);
        assert_eq!(suites(Some("faulty")).unwrap()[0].name, "faulty");
        let msg = suites(Some("atomic,locks")).unwrap_err().to_string();
        assert_eq!(
            msg,
            "unknown suite 'locks' in --suites. Valid suites: all, atomic, spinlock, rwsem, atomic-c"
        );
    }

    #[test]
    fn a_target_without_rust_runs_the_c_suites_and_says_why_once() {
        let c = config();
        let alpha = &targets(&c, Some("alpha")).unwrap()[0].target;
        let x86 = &targets(&c, Some("x86_64")).unwrap()[0].target;
        let all = ["atomic", "spinlock", "rwsem", "atomic-c"];
        assert_eq!(for_target(&all, x86), (all.to_vec(), None));
        let (runs, why) = for_target(&all, alpha);
        assert_eq!(runs, ["atomic-c"]);
        assert_eq!(
            why.as_deref(),
            Some("no Rust backend for alpha; the C atomic suite runs (atomic, spinlock, rwsem not built)")
        );
        // Nothing left out, nothing to say.
        assert_eq!(for_target(&["atomic-c"], alpha), (vec!["atomic-c"], None));
        let (runs, why) = for_target(&["spinlock"], alpha);
        assert!(runs.is_empty());
        assert!(why.unwrap().contains("no C suite was selected"));
    }
}
