//! What a simulation counted: per vCPU and per cache line.

use crate::world::Sites;
use std::panic::Location;

/// One vCPU's counts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CpuStats {
    /// Shared accesses, and those that were coherence misses (RMRs).
    pub accesses: u64,
    pub misses: u64,
    /// Cycles spent waiting for a line busy with another transaction.
    pub queued_cycles: u64,
    /// Spin hints, and spin-waits slept through to the next write.
    pub pauses: u64,
    pub spin_sleeps: u64,
    /// Cycles of spinning skipped that way.
    pub spin_cycles: u64,
    pub yields: u64,
    pub futex_waits: u64,
    pub futex_wakes: u64,
    /// Store-conditionals that failed (LL/SC machines).
    pub sc_failures: u64,
    /// Calls of [`crate::work`].
    pub works: u64,
}

/// One cache line's counts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LineStats {
    /// A named region (`lock`, `cpu 3 node`) and the offset of the line
    /// in it, or where it was first touched.
    pub label: String,
    pub misses: u64,
    pub writes: u64,
    pub invalidations: u64,
    pub sc_failures: u64,
    /// Misses by the source location of the access.
    pub sites: Sites,
}

impl LineStats {
    /// Its sites, most misses first (ties in source order).
    pub fn top_sites(&self) -> Vec<(String, u64)> {
        let mut v: Vec<(String, u64)> = self.sites.iter().map(|(l, n)| (site(l), *n)).collect();
        v.sort_by_key(|s| std::cmp::Reverse(s.1));
        v
    }
}

/// A simulation's counts.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    pub machine: String,
    /// Each vCPU's final clock and counts.
    pub cpus: Vec<(u64, CpuStats)>,
    /// Every line touched, in the order first touched.
    pub lines: Vec<LineStats>,
}

impl Report {
    pub fn misses(&self) -> u64 {
        self.cpus.iter().map(|(_, s)| s.misses).sum()
    }

    pub fn total(&self, f: impl Fn(&CpuStats) -> u64) -> u64 {
        self.cpus.iter().map(|(_, s)| f(s)).sum()
    }
}

/// `spinlock/src/locks/qspinlock.rs:312`: a source location without the
/// column, and without the path above the suite, or for this crate's own
/// (`crates/ccsim/src/mutex.rs:74`) above the workspace: some compilers
/// name a path dependency's files by their absolute path (rustc 1.85
/// wrote `/work/main/crates/...` where 1.95 writes `crates/...`), and a
/// record must not name the checkout it was made in.
pub fn site(l: &Location<'_>) -> String {
    format!("{}:{}", relative(l.file()), l.line())
}

fn relative(file: &str) -> &str {
    if let Some(i) = file.rfind("suites/") {
        return &file[i + "suites/".len()..];
    }
    match (file.starts_with('/'), file.rfind("/crates/")) {
        (true, Some(i)) => &file[i + 1..],
        _ => file,
    }
}

#[cfg(test)]
mod tests {
    use super::relative;

    #[test]
    fn a_site_names_no_checkout() {
        let cases = [
            (
                "suites/rwsem/src/locks/linux_rwsem.rs",
                "rwsem/src/locks/linux_rwsem.rs",
            ),
            ("/home/u/lm/suites/rwsem/src/x.rs", "rwsem/src/x.rs"),
            ("crates/ccsim/src/mutex.rs", "crates/ccsim/src/mutex.rs"),
            (
                "/work/main/crates/ccsim/src/mutex.rs",
                "crates/ccsim/src/mutex.rs",
            ),
            (
                "/rustc/abc/library/core/src/x.rs",
                "/rustc/abc/library/core/src/x.rs",
            ),
        ];
        for (file, want) in cases {
            assert_eq!(relative(file), want, "{file}");
        }
    }
}
