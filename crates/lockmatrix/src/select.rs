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
    /// Every target `--targets` selected is native to another
    /// architecture: nothing could run here.
    #[error("--targets {names}: {why}; nothing else is selected, so nothing would run here")]
    Elsewhere { names: String, why: String },
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

/// Why this host cannot run `t`: a native target of another architecture
/// (a native aarch64 target is for arm64 hardware, as CI's
/// `ubuntu-24.04-arm` runners; an x86_64 host runs i686 binaries too).
pub fn elsewhere(t: &Target) -> Option<String> {
    elsewhere_on(t, std::env::consts::ARCH)
}

fn elsewhere_on(t: &Target, host: &str) -> Option<String> {
    if t.runner != crate::config::RunnerKind::Native {
        return None;
    }
    let arch = t.triple.split('-').next().unwrap_or("");
    let here = arch == host || (host == "x86_64" && matches!(arch, "i686" | "i586"));
    (!here).then(|| {
        format!(
            "a native {arch} target, and this host is {host}: it runs on {arch} hardware (CI's runners for it)"
        )
    })
}

/// The one line that says which enabled native targets of another
/// architecture a selection left out (`--targets` as given, `None` the
/// default), if any: not run here, never a failure.
pub fn left_out(config: &Config, names: Option<&str>) -> Option<String> {
    left_out_on(config, names, std::env::consts::ARCH)
}

fn left_out_on(config: &Config, names: Option<&str>, host: &str) -> Option<String> {
    let named: Vec<&str> = names.map_or(Vec::new(), |n| n.split(',').map(str::trim).collect());
    let out: Vec<&str> = config
        .targets
        .iter()
        .filter(|t| t.enabled && !named.contains(&t.name.as_str()))
        .filter(|t| elsewhere_on(t, host).is_some())
        .filter(|t| {
            names.is_none()
                || named
                    .iter()
                    .any(|n| *n == "all" || *n == t.class.as_str() || *n == t.triple.as_str())
        })
        .map(|t| t.name.as_str())
        .collect();
    (!out.is_empty()).then(|| {
        format!(
            "left out here: {} (native targets of another architecture; CI runs them on their own hardware, `--targets NAME` on such a host runs them)",
            out.join(", ")
        )
    })
}

/// Resolves `--targets`: full triples, short names, classes, or `all`,
/// comma-separated. `None` selects the enabled targets and lists the
/// disabled ones as not run. Order follows `targets.yaml`. A native target
/// of another architecture than this host's is left out unless named
/// ([`left_out`] says so in one line); named, it is not run, saying why.
pub fn targets(config: &Config, names: Option<&str>) -> Result<Vec<Selected>, SelectError> {
    targets_on(config, names, std::env::consts::ARCH)
}

fn targets_on(
    config: &Config,
    names: Option<&str>,
    host: &str,
) -> Result<Vec<Selected>, SelectError> {
    let Some(names) = names else {
        return Ok(config
            .targets
            .iter()
            .filter(|t| !t.enabled || elsewhere_on(t, host).is_none())
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
    let named: std::collections::HashSet<&str> = names.split(',').map(str::trim).collect();
    for (i, t) in config.targets.iter().enumerate() {
        // Selected by a class, a triple or `all`: left out, in one line.
        if elsewhere_on(t, host).is_some() && !named.contains(t.name.as_str()) {
            wanted[i] = false;
        }
    }
    if !wanted.contains(&true) {
        return Err(SelectError::NoTargets);
    }
    let selected: Vec<Selected> = config
        .targets
        .iter()
        .zip(wanted)
        .filter(|(_, w)| *w)
        .map(|(t, _)| Selected {
            target: t.clone(),
            skip: elsewhere_on(t, host),
        })
        .collect();
    // Only targets this host cannot run: said before anything is made.
    if let Some(why) = selected
        .iter()
        .map(|s| s.skip.clone())
        .collect::<Option<Vec<_>>>()
    {
        return Err(SelectError::Elsewhere {
            names: names.to_string(),
            why: why.join("; "),
        });
    }
    Ok(selected)
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
    fn a_native_target_of_another_architecture_is_left_out_in_one_line() {
        let c = config();
        let native = c
            .targets
            .iter()
            .find(|t| t.name.as_str() == "aarch64-native")
            .unwrap();
        assert!(native.enabled);
        // On an x86_64 host: out of the default selection and of a class,
        // said in one line; named, not run, with why.
        let all = targets_on(&c, None, "x86_64").unwrap();
        assert!(!names(&all).contains(&"aarch64-native"));
        assert!(names(&all).contains(&"aarch64") && names(&all).contains(&"x86_64"));
        let line = left_out_on(&c, None, "x86_64").unwrap();
        assert!(
            line.starts_with("left out here: aarch64-native (native targets"),
            "{line}"
        );
        assert!(!line.contains('\n'));
        let class = targets_on(&c, Some("arm64"), "x86_64").unwrap();
        assert!(!names(&class).contains(&"aarch64-native"));
        assert!(left_out_on(&c, Some("arm64"), "x86_64").is_some());
        assert!(left_out_on(&c, Some("x86_64"), "x86_64").is_none());
        let alone = targets_on(&c, Some("aarch64-native"), "x86_64").unwrap_err();
        assert!(
            alone.to_string().starts_with(
                "--targets aarch64-native: a native aarch64 target, and this host is x86_64"
            ),
            "{alone}"
        );
        let named = targets_on(&c, Some("x86_64,aarch64-native"), "x86_64").unwrap();
        assert_eq!(names(&named), ["x86_64", "aarch64-native"]);
        let why = named[1].skip.as_deref().unwrap();
        assert!(
            why.starts_with("a native aarch64 target, and this host is x86_64"),
            "{why}"
        );
        assert!(left_out_on(&c, Some("aarch64-native"), "x86_64").is_none());
        // On an arm64 host (CI's runner) it runs, and x86_64 is the one
        // left out; i686 runs natively on x86_64.
        let arm = targets_on(&c, None, "aarch64").unwrap();
        assert!(names(&arm).contains(&"aarch64-native"));
        assert!(!names(&arm).contains(&"x86_64"));
        assert!(
            targets_on(&c, Some("aarch64-native"), "aarch64").unwrap()[0]
                .skip
                .is_none()
        );
        let mut i686 = native.clone();
        i686.triple = crate::name::known("i686-unknown-linux-gnu");
        assert!(elsewhere_on(&i686, "x86_64").is_none());
    }

    #[test]
    fn names_triples_and_classes_select_in_file_order() {
        let c = config();
        // On an x86_64 host, which leaves aarch64-native out.
        let targets = |c: &Config, n| targets_on(c, n, "x86_64");
        let sel = targets(&c, Some("mips,x86_64,powerpc64-unknown-linux-gnu")).unwrap();
        assert_eq!(names(&sel), ["x86_64", "powerpc64", "mips32", "mips64el"]);
        assert_eq!(targets(&c, Some("all")).unwrap().len(), c.targets.len() - 1);
        assert_eq!(targets(&c, None).unwrap().len(), c.targets.len() - 1);
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
