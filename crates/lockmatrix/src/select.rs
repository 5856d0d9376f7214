//! Turning `--targets` and `--suites` names into what runs.

use crate::config::{Config, Target};
use anyhow::bail;
use anyhow::Result;

/// A suite crate under `suites/`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Suite {
    pub name: &'static str,
    /// Test-only suites are never selected by default nor listed as valid.
    pub test_only: bool,
}

pub const SUITES: &[Suite] = &[
    Suite {
        name: "atomic",
        test_only: false,
    },
    Suite {
        name: "spinlock",
        test_only: false,
    },
    Suite {
        name: "rwsem",
        test_only: false,
    },
    Suite {
        name: "faulty",
        test_only: true,
    },
];

/// One target of the selection, and why it will not run if it will not.
#[derive(Debug, Clone)]
pub struct Selected {
    pub target: Target,
    pub skip: Option<String>,
}

/// Resolves `--targets`: full triples, short names, classes, or `all`,
/// comma-separated. `None` selects the enabled targets and lists the
/// disabled ones as not run. Order follows `targets.yaml`.
pub fn targets(config: &Config, names: Option<&str>) -> Result<Vec<Selected>> {
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
            bail!(
                "unknown target '{name}' in --targets. Valid names: {}; classes: {}",
                valid.join(", "),
                classes.join(", ")
            );
        }
    }
    if all {
        wanted.fill(true);
    }
    if !wanted.contains(&true) {
        bail!("--targets selected nothing");
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
pub fn suites(names: Option<&str>) -> Result<Vec<Suite>> {
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
            bail!(
                "unknown suite '{name}' in --suites. Valid suites: all, {}",
                valid.join(", ")
            );
        }
        for s in found {
            if !out.contains(&s) {
                out.push(s);
            }
        }
    }
    if out.is_empty() {
        bail!("--suites selected nothing");
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
        assert_eq!(all, ["atomic", "spinlock", "rwsem"]);
        assert_eq!(suites(Some("faulty")).unwrap()[0].name, "faulty");
        let msg = suites(Some("atomic,locks")).unwrap_err().to_string();
        assert_eq!(
            msg,
            "unknown suite 'locks' in --suites. Valid suites: all, atomic, spinlock, rwsem"
        );
    }
}
